/* runlists.h - the policy lists loaded at run time (`xdpban lists load|clear`), beside the
 * config's: read with the config's reader (lists.h), painted together with the config's
 * lists into the one plan the maps get (which decides allow-only mode), kept in a file of
 * their own beside the state file (STATE.lists, framed as frame.h says) with every entry's
 * file and line, so that a restart restores exactly what was loaded, and answered for by
 * `lists show` and `query` (which file and line decided). The same code runs in the daemon
 * (through its control socket) and in the CLI on the pinned maps when no daemon runs.
 *
 * Provenance stays in userspace: the trie value carries only the list id (config lists 1..64,
 * runtime lists XBD_RUNTIME_LIST_BASE + n), and the line is found in the entries read.
 *
 * Single entries (`xdpban lists add|del`) of a layer form one more runtime list of it, the
 * pseudo-list XBD_LIST_ENTRIES, whose "line" is an entry's place in the order added and which
 * keeps a comment per entry; it is stored, shown, queried and cleared like a file. The
 * never-ban layer holds only such entries: they go to the exempt tries, which only the daemon
 * writes (xbd_lists_ctx.never_ban), never to the policy. */
#ifndef XDPBAND_RUNLISTS_H
#define XDPBAND_RUNLISTS_H

#include <stdbool.h>
#include <limits.h>
#include <stddef.h>
#include <linux/types.h>
#include "conf.h"
#include "libxdpban.h"
#include "lists.h"
#include "runentries.h"

struct json_object;

#define XBD_RUNTIME_LIST_BASE 0x10000u /* list id of the first runtime list */
#define XBD_RUNTIME_LISTS_MAX 64       /* runtime list files at once */
#define XBD_RUNTIME_SUFFIX ".lists"    /* the file beside the state file */
#define XBD_RUNTIME_MAGIC "xdpban-runtime-lists"
#define XBD_RUNTIME_VERSION 1

/* The name of a list read from standard input (`xdpban lists load -`). */
#define XBD_LIST_STDIN "<stdin>"

struct xbd_runtime {
	struct xbd_rt_list v[XBD_RUNTIME_LISTS_MAX];
	size_t n;
};

/* "allow", "deny", "trusted", "never-ban" and back. 0 or -EINVAL. */
int xbd_layer_parse(const char *name, __u32 *verdict);
/* The name of a layer, and of the config's observed deny lists (XBD_LIST_OBSERVED), which
 * xbd_layer_parse does not take: a list loaded at run time is never observed. */
#define XBD_LAYER_OBSERVED "observed-deny"
const char *xbd_layer_name(__u32 verdict);
/* The i-th layer's name, NULL past the last (for help and completion). */
const char *xbd_layer_nth(size_t i);

/* Everything a list command works on. */
struct xbd_lists_ctx {
	const struct xb_maps *maps;
	const struct xbd_conf *conf;  /* the config's lists ([lists]) */
	const struct xbd_lists *config; /* what they held when read */
	struct xbd_runtime *rt;
	const char *store;            /* STATE.lists; NULL: [state] file = off, kept in memory */
	/* Puts the never-ban entries of rt in force beside the config's, in the exempt tries,
	 * which the daemon alone writes (with the host's addresses): 0 or -errno with one line in
	 * err. NULL in the CLI without a daemon: a change of the never-ban layer is refused. */
	int (*never_ban)(void *user, const struct xbd_runtime *rt, char *err, size_t errlen);
	void *user;
};

/* A name a runtime list may have: an absolute path, or XBD_LIST_STDIN; one line. */
bool xbd_list_name_ok(const char *name);

/* The store's path for a state file (malloc'ed), or NULL when there is no state file. */
char *xbd_runtime_store(const char *state_file);
/* Reads the store (a missing one is empty). 0, or -errno with one line in err; a store that
 * does not parse is moved aside (-EBADMSG, err says where) and rt is left empty. */
int xbd_runtime_load(const char *path, struct xbd_runtime *rt, char *err, size_t errlen);
void xbd_runtime_free(struct xbd_runtime *rt);
void xbd_rt_list_free(struct xbd_rt_list *l);
/* Writes rt to the store (none when rt holds no list). 0 or -errno with one line in err. */
int xbd_runtime_save(const char *path, const struct xbd_runtime *rt, char *err, size_t errlen);

/* The one composition of the policy lists in force: the config's lists painted with the
 * runtime ones into a plan (lists.h; xbd_list_plan_free it), in allow-only mode when an allow
 * list is among them. 0 or -ENOMEM. */
int xbd_lists_compose(const struct xbd_lists *config, const struct xbd_runtime *rt,
		      struct xbd_list_plan *out);
/* Composes what ctx holds and puts the plan in force (xbd_lists_apply: the policy tries and
 * allow-only mode's flag in the config map). 0 or -errno with one line in err; the tries are
 * then as they were. progress and res as for xbd_lists_apply. */
struct xb_progress;
int xbd_lists_ctx_apply(const struct xbd_lists_ctx *c, struct xb_progress *progress,
			struct xb_compile_result *res, char *err, size_t errlen);

/* `lists load`: the files, open already (fds[i] is files[i], named by xbd_list_name_ok;
 * nothing is opened by path), read into the layer, replacing runtime lists of the same names;
 * applied and saved, or refused whole with nothing changed. The fds stay the caller's. Adds
 * "loaded", "entries", "skipped" and "skipped_first" to reply. 0 or -errno with one line in
 * err. The three steps it takes, for the daemon to read beside its loop: */
int xbd_lists_ctx_load(struct xbd_lists_ctx *c, __u32 verdict, const char *const *files,
		       const int *fds, size_t n, bool ignore_errors, struct json_object *reply,
		       char *err, size_t errlen);
/* 1. The limits, before any file is read: 0, -EINVAL or -ENOSPC with one line in err. */
int xbd_lists_ctx_load_check(const struct xbd_lists_ctx *c, __u32 verdict,
			     const char *const *files, size_t n, char *err, size_t errlen);
/* 2. The files (at most XBD_MAX_LISTS) read from fds with the config's reader
 * (xbd_lists_read_files), all of one layer, into out (list i + 1 is files[i]), held to caps.
 * Touches nothing else: safe in a thread of its own. 0 or -errno with one line in err. */
int xbd_runtime_read(const struct xbd_list_caps *caps, const int *fds, __u32 verdict,
		     const char *const *files, size_t n, bool ignore_errors, struct xbd_lists *out,
		     char *err, size_t errlen);
/* 3. What was read, put in force (the limits checked again) and saved. */
int xbd_lists_ctx_load_read(struct xbd_lists_ctx *c, __u32 verdict, const char *const *files,
			    size_t n, const struct xbd_lists *read, struct json_object *reply,
			    char *err, size_t errlen);
/* `lists clear`: drops the runtime lists of a layer, or only the one named file (a name as
 * xbd_list_name_ok says, or XBD_LIST_ENTRIES; -ENOENT when the layer has no such list); the
 * config's stay. Adds "layer" and "cleared". */
int xbd_lists_ctx_clear(struct xbd_lists_ctx *c, __u32 verdict, const char *file,
			struct json_object *reply, char *err, size_t errlen);

/* ---- single entries through the context (runlists_edit.c) ---- */

/* The runtime never-ban entries as exempt entries (origin XDPBAN_EXEMPT_LIST), added to out.
 * 0 or -ENOMEM. */
struct xb_exempt_set;
int xbd_runtime_never_ban(const struct xbd_runtime *rt, struct xb_exempt_set *out);

/* `lists add`: p (checked with xbd_entry_check) with its comment into the layer's entries,
 * put in force and saved, or refused with nothing changed. Adds "layer", "prefix", "comment"
 * and "added" to reply. 0 or -errno with one line in err. */
int xbd_lists_ctx_add(struct xbd_lists_ctx *c, __u32 verdict, const struct xb_prefix *p,
		      const char *comment, struct json_object *reply, char *err, size_t errlen);
/* `lists del`: p out of the layer's entries (-ENOENT, nothing changed, when it holds none).
 * Adds "layer", "prefix" and the entry's "comment" to reply. */
int xbd_lists_ctx_del(struct xbd_lists_ctx *c, __u32 verdict, const struct xb_prefix *p,
		      struct json_object *reply, char *err, size_t errlen);
/* What add, del and clear share: puts next (which may share lists with c->rt) in force and
 * saves it; then it is c->rt, and the lists only the old one held are freed. On failure all
 * is as it was, and the lists only next held are freed. Either way next is left empty. */
int xbd_lists_ctx_replace(struct xbd_lists_ctx *c, struct xbd_runtime *next,
			  struct json_object *reply, char *err, size_t errlen);
/* `lists show`: adds "layers" and "totals" to reply. 0 or -errno with one line in err. */
int xbd_lists_ctx_show(const struct xbd_lists_ctx *c, struct json_object *reply, char *err,
		       size_t errlen);
/* After `query`: adds "policy_layer", "policy_origin", "policy_file", "policy_line" (and
 * "policy_comment" for a single entry) when the reply's policy_list is a list of ctx; and
 * "exempt_file", "exempt_line" (and "exempt_comment") when a never-ban entry of ctx makes the
 * address exempt. */
void xbd_lists_ctx_source(const struct xbd_lists_ctx *c, struct json_object *reply);

/* Addresses, counted exactly: IPv4 fits any integer, IPv6 needs 129 bits (2^128 is "all"). */
struct xbd_count {
	unsigned __int128 n;
	bool all; /* exactly 2^128 (n is 0) */
};
/* Decimal, or "2^128". len >= 48. */
const char *xbd_count_format(const struct xbd_count *c, char *buf, size_t len);
/* For prefix-unique entries of both families in any order: sorts them by start
 * (xbd_list_entry_start_cmp), then own[i] (n slots) gets the addresses entry i decides, its
 * span less the entries inside it (the longest match), and rest[0] (IPv4), rest[1] (IPv6) the
 * addresses no entry holds. 0 or -ENOMEM. */
int xbd_count_own(struct xbd_list_entry *e, size_t n, struct xbd_count *own,
		  struct xbd_count rest[2]);

#endif /* XDPBAND_RUNLISTS_H */
