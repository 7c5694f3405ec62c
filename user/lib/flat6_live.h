/* flat6_live.h - the IPv6 lines in xdpban_flat6x while the data path reads them (flat6_live.c),
 * by level 3's rules (flat_live.c): read back, deleted before the trie changes, written after.
 * Called from policy.c only, and never calls flat_live.c.
 */
#ifndef XB_FLAT6_LIVE_H
#define XB_FLAT6_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "flat.h"
#include "libxdpban.h"
#include "lines_live.h"
#include "policy_plan.h"

/* Every IPv6 line xdpban_flat6x holds now, in their order, in *lines (free() it). 0 or -errno
 * (-EPROTO: m->flat6x is not an xdpban IPv6 line table). */
int xb_flat6_lines_read(const struct xb_maps *m, struct xb_flat6_line **lines, size_t *n);

struct xb_line6_dump {
	struct xb_flat6_line *v;
	size_t n, cap;
};

struct xb_l6_map {
	struct xdpban_flat6_slot *slots;
	__u32 n;
	struct xb_map_views *views;
};

/* What a compile of IPv6 knows of the lines: the map's fd, or -1 when they are off. */
struct xb_l6_live {
	int fd;
	struct xb_l6_map map;
	struct xb_line6_dump old; /* the lines in the map before the compile, in their order */
	__u32 *slot;              /* the slot of each old line */
	bool *gone;               /* old lines deleted, or doomed to be by the next xb_l6_flush */
	__u64 *doomed;            /* a bit per slot: deleted by the next xb_l6_flush */
	size_t cursor[XDPBAN_FLAT6_DEPTHS]; /* per depth: where xb_l6_forget last began */
	const struct xb_maps *maps;         /* for the IPv6 hosts, which end the walk */
	struct xb_flat *table;              /* whose guard turns the lines off */
};

/* Rule 1 for a single change of the IPv6 trie at p: no line or host entry there, or (a map
 * not usable) no line read at all. 0. */
int xb_l6_touch_live(const struct xb_maps *m, struct xb_flat *t, const struct xb_prefix *p);
/* The level-3 calls above, for the IPv6 lines. */
void xb_l6_live_open(struct xb_l6_live *l, const struct xb_maps *m, struct xb_flat *t);
void xb_l6_live_free(struct xb_l6_live *l);
/* Dooms the old lines in the regions p touches, which xb_l6_flush deletes, and deletes the
 * host entry of p (or turns the lines off, when it cannot); both before the trie changes. */
void xb_l6_forget(struct xb_l6_live *l, const struct xb_prefix *p);
void xb_l6_flush(struct xb_l6_live *l);
bool xb_l6_write(struct xb_l6_live *l, struct xb_flat *t, const struct xb_flat6_line *lines,
		 size_t n, struct xb_compile_result *res);

#endif /* XB_FLAT6_LIVE_H */
