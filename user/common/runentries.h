/* runentries.h - a runtime list (runlists.h) in memory, and the single entries of a layer
 * (`xdpban lists add|del`): one more runtime list of it, named XBD_LIST_ENTRIES, sorted by
 * prefix like a file's, whose "line" is an entry's place in the order added and which keeps a
 * comment per entry. Pure functions: what puts them in force is runlists.h's. */
#ifndef XDPBAND_RUNENTRIES_H
#define XDPBAND_RUNENTRIES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "libxdpban.h"
#include "lists.h"

/* The name of a layer's single entries, and what they may hold. */
#define XBD_LIST_ENTRIES "<entries>"
#define XBD_RUNTIME_ENTRIES_MAX 65536 /* single entries of one layer */

struct xbd_rt_list {
	char *path;                /* absolute as the client named it, XBD_LIST_STDIN or
				    * XBD_LIST_ENTRIES */
	__u32 verdict;             /* XDPBAN_POLICY_ALLOWED, _DENY or _TRUSTED; XBD_LIST_NEVER_BAN
				    * for XBD_LIST_ENTRIES only */
	size_t skipped;            /* bad lines --ignore-errors skipped */
	struct xbd_list_entries e; /* sorted by prefix; list_id is the list's id */
	char **comments;           /* XBD_LIST_ENTRIES: the comment of line i + 1 ("": none) */
};

/* Whether l is a layer's XBD_LIST_ENTRIES. */
bool xbd_rt_is_entries(const struct xbd_rt_list *l);
/* A single entry's prefix (not /0) and comment (NULL, or as xb_ban_comment_check takes it). 0, or -EINVAL with one line in err. */
int xbd_entry_check(const struct xb_prefix *p, const char *comment, char *err, size_t errlen);
/* Adds p to l (an XBD_LIST_ENTRIES), or, when l holds it, changes its comment (*added says
 * which). 0, -ENOSPC (XBD_RUNTIME_ENTRIES_MAX) or -ENOMEM; l is unchanged on failure. */
int xbd_rt_entries_put(struct xbd_rt_list *l, const struct xb_prefix *p, const char *comment,
		       bool *added);
/* Removes p from l; the entries added after it move up a line. 0 or -ENOENT. */
int xbd_rt_entries_del(struct xbd_rt_list *l, const struct xb_prefix *p);
/* The entries of l (an XBD_LIST_ENTRIES) in the order added: [i] has line i + 1. Malloc'ed;
 * NULL when out of memory. */
const struct xbd_list_entry **xbd_rt_entries_by_line(const struct xbd_rt_list *l);
/* The comment of e, an entry of l ("" for none, and for the entries of a file). */
const char *xbd_rt_entry_comment(const struct xbd_rt_list *l, const struct xbd_list_entry *e);

#endif /* XDPBAND_RUNENTRIES_H */
