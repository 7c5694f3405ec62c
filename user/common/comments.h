/* comments.h - the comments of manual bans (`xdpban ban ADDR --comment TEXT`), which the maps
 * have no room for: kept by the daemon in memory and in its state file, by the prefix banned.
 * A comment belongs to the manual ban in force at its prefix; one whose ban is over is
 * dropped when the comments are next pruned. Texts are checked (xb_ban_comment_check) before
 * they get here. Never reads a map but in xbd_comments_prune. */
#ifndef XDPBAN_COMMENTS_H
#define XDPBAN_COMMENTS_H

#include <stdbool.h>
#include <stddef.h>
#include "libxdpban.h"

struct xbd_comments {
	void *tree; /* tsearch tree of the comments, by prefix */
	size_t n;
};

/* Sets the comment of p (NULL or "": removes it). 0 or -ENOMEM. */
int xbd_comments_set(struct xbd_comments *c, const struct xb_prefix *p, const char *text);
/* The comment of p, or NULL. */
const char *xbd_comments_get(const struct xbd_comments *c, const struct xb_prefix *p);
typedef void (*xbd_comment_cb)(const struct xb_prefix *p, const char *text, void *ctx);
/* Every comment, in prefix order. */
void xbd_comments_foreach(const struct xbd_comments *c, xbd_comment_cb cb, void *ctx);
/* Drops the comments of prefixes where no manual ban is in force now. */
void xbd_comments_prune(struct xbd_comments *c, const struct xb_maps *m);
void xbd_comments_free(struct xbd_comments *c);

#endif /* XDPBAN_COMMENTS_H */
