/* lists.h - the list files, in zmap's blocklist format (one address or prefix per line, first
 * token only, '#' comments, no hostnames), which also reads FireHOL .netset files, Spamhaus
 * DROP lines ("1.10.16.0/20 ; SBL256894": ';' starts a comment too) and any of them gzipped
 * (read through zlib when the file starts with gzip's magic): allow, trusted and deny lists,
 * painted (docs/datapath.md) and compiled into the policy tries with one list id per file, and
 * never-ban lists, whose entries the daemon writes into the exempt tries with the host's
 * addresses (xdpband's exemptions.h). Three steps, one way: reading (the one reader of list
 * files, the config's and those loaded at run time), a plan (composed in runlists.h, where
 * allow-only mode is decided) and its apply (the tries through policy.h, and allow-only mode's
 * flag in the config map), so a bad file, or lists that cannot fit, are refused before any map
 * changes. Never touches manual bans (list XDPBAN_LIST_MANUAL_BAN). */
#ifndef XDPBAND_LISTS_H
#define XDPBAND_LISTS_H

#include <stddef.h>
#include <linux/types.h>
#include "conf.h"
#include "libxdpban.h"

/* Documented in xdpban.conf(5), section [lists]. */
#define XBD_LIST_LINE_MAX 1024          /* bytes in a line, not counting its '\n' */
#define XBD_LIST_FILE_MAX (256 << 20)   /* bytes in one list file, decompressed */
/* Bytes of text one reading takes in, across all its files, decompressed: a load of 64 small
 * gzip files of comment lines would otherwise make 16 GiB to read. */
#define XBD_LISTS_READ_MAX ((off_t)1 << 30)

/* Room in each exempt trie that the never-ban lists leave for the host's own addresses. */
#define XBD_EXEMPT_HOST_ROOM 256

struct xbd_list_entry {
	struct xb_prefix prefix;
	__u32 verdict; /* enum xdpban_verdict, or XBD_LIST_NEVER_BAN */
	__u32 list_id; /* struct xbd_list_conf.id of the file it came from */
	__u32 line;
};

/* The entries of the lists of one kind: sorted by family, address, length; no duplicates. */
struct xbd_list_entries {
	struct xbd_list_entry *v;
	size_t n, cap;
};

#define XBD_LIST_ERRORS_SHOWN 3 /* bad lines quoted when [lists] ignore-errors skips them */

struct xbd_lists {
	struct xbd_list_entries policy;    /* allow, deny and trusted lists, painted: the tries */
	struct xbd_list_entries never_ban; /* never-ban lists: the exempt tries */
	struct xbd_list_entries observed;  /* observed deny lists: the observed tries */
	size_t entries[XBD_MAX_LISTS + 1]; /* by list id: entries the file contributed */
	size_t skipped[XBD_MAX_LISTS + 1]; /* by list id: bad lines ignore-errors skipped */
	/* By list id: a digest of the prefixes the file holds, whatever their order, so that a
	 * reload can tell a file whose contents changed from one that only was read again. */
	__u64 digest[XBD_MAX_LISTS + 1];
	char skipped_first[XBD_LIST_ERRORS_SHOWN][XB_ERRLEN]; /* the first of them, FILE:LINE */
	size_t painted; /* entries on or inside an entry of a later layer, which wins there */
	bool allow_list; /* an allow list is among the files read (even an empty one) */
};

/* How many list entries the tries can take, per family: the policy tries, and what the
 * exempt tries leave to the never-ban lists (their size less XBD_EXEMPT_HOST_ROOM). */
struct xbd_list_caps {
	size_t ipv4, ipv6;
	size_t never_ban4, never_ban6;
};
/* The sizes of the tries xdpband creates (for -t and a start). */
void xbd_list_caps_default(struct xbd_list_caps *caps);
/* The sizes of the tries in m (for a reload on maps that exist). 0 or -errno, with err. */
int xbd_list_caps_of(const struct xb_maps *m, struct xbd_list_caps *caps, char *err,
		     size_t errlen);

struct xb_progress;

/* How a reading goes: the room it holds the files to, the files open already (fds[i] for
 * files[i], read from where they stand and left open; NULL: the paths are opened with this
 * process's rights), whether bad lines are skipped and counted instead of refusing the file,
 * and its progress (NULL: none; progress.h, the caller ends it). */
struct xbd_list_read_opts {
	const struct xbd_list_caps *caps;
	const int *fds;
	bool ignore_errors;
	struct xb_progress *progress;
};

/* Reads and checks list files in full, files[i] with its verdict and list id (ids in
 * 1..XBD_MAX_LISTS, n at most XBD_MAX_LISTS): each must be a regular file of at most
 * XBD_LIST_FILE_MAX bytes with lines of at most XBD_LIST_LINE_MAX bytes of text, and the
 * lists of a kind together may not hold more distinct entries of a family than opts->caps
 * allows (less one for the default layer's /0 when an allow list is among them).
 * 0, or -errno with one line in err ("FILE:LINE: ...", or the file, its count and the
 * capacity). Memory stays bounded by the caps, whatever the files hold. Reads nothing but the
 * files and changes nothing: safe to run while the maps are in use. The one reader of list
 * files: the config's ([lists]) and those `lists load` reads (runlists.h). */
int xbd_lists_read_files(const struct xbd_list_conf *files, size_t n,
			 const struct xbd_list_read_opts *opts, struct xbd_lists *out, char *err,
			 size_t errlen);
/* The config's list files ([lists], with its ignore-errors), read with the daemon's rights. */
int xbd_lists_read(const struct xbd_conf *conf, const struct xbd_list_caps *caps,
		   struct xbd_lists *out, struct xb_progress *progress, char *err, size_t errlen);

/* What the policy lists in force compile to: the config's lists and the runtime ones painted
 * together by their one composition (xbd_lists_compose, runlists.h), which alone decides
 * allow-only mode. */
struct xbd_list_plan {
	struct xbd_list_entries policy; /* painted: what the policy tries hold */
	bool allow_only; /* an allow list is among them: the default layer, /0 not allowed */
	struct xbd_list_entries observed; /* the observed deny lists: the observed tries */
};
void xbd_list_plan_free(struct xbd_list_plan *plan);

struct xb_compile_result;
/* What a compile left to the trie for want of room in the lines (or the IPv6 hosts), as one
 * line naming the key to raise and how far, in buf; "" when nothing was. */
void xbd_lists_left_out(const struct xb_compile_result *res, char *buf, size_t len);
/* Puts a plan in force, all it implies in one place: makes the policy tries hold exactly the
 * set of xbd_lists_policy_set (manual bans stay), or, when that fails at any point, leaves
 * them as they were (policy.h); and allow-only mode's flag in the config map to match (on
 * before the compile, off after it; as it was when the compile fails); then the observed
 * tries hold the observed deny lists (xb_observed_replace). progress (NULL: none) shows the compile's steps; the caller ends it. res (NULL: not wanted)
 * gets what changed. 0 or -errno with one line in err. */
int xbd_lists_apply(const struct xb_maps *m, const struct xbd_list_plan *plan,
		    struct xb_progress *progress, struct xb_compile_result *res, char *err,
		    size_t errlen);
/* Adds more entries (of any layers) to into and paints the whole again, as if all had been
 * read together (painting what was painted already drops nothing more). 0 or -ENOMEM (into
 * unchanged but for its capacity). */
int xbd_list_entries_merge(struct xbd_list_entries *into, const struct xbd_list_entries *more);
/* Appends e, growing the array by doubling, but never past max entries. 0 or -ENOMEM. */
int xbd_list_entries_push(struct xbd_list_entries *l, const struct xbd_list_entry *e, size_t max);
/* Sorts entries as xbd_lists_read leaves them and drops repeats of a prefix (the first kept). */
void xbd_list_entries_sort(struct xbd_list_entries *l);
/* The entries' order (qsort's comparison): by family, then start address, then the shorter
 * prefix first: every prefix comes after the prefixes that hold it. */
int xbd_list_entry_start_cmp(const void *a, const void *b);
/* The entry at exactly p in entries sorted as xbd_lists_read leaves them, or NULL. */
const struct xbd_list_entry *xbd_lists_find(const struct xbd_list_entries *l,
					    const struct xb_prefix *p);
/* The policy set a plan compiles to: its painted entries, and in allow-only mode the default
 * layer, 0.0.0.0/0 and ::/0 not allowed (list XDPBAN_LIST_DEFAULT). Added to set; 0 or
 * -ENOMEM. */
struct xb_policy_set;
int xbd_lists_policy_set(const struct xbd_list_plan *plan, struct xb_policy_set *set);
struct xb_exempt_set;
/* The never-ban entries as exempt entries (origin XDPBAN_EXEMPT_LIST), added to out. 0 or
 * -ENOMEM. */
int xbd_lists_never_ban(const struct xbd_lists *lists, struct xb_exempt_set *out);
void xbd_lists_free(struct xbd_lists *lists);

#endif /* XDPBAND_LISTS_H */
