/* flat_live.h - the flat table while the data path reads it (flat_live.c): xdpban_flat4/6
 * mapped for writing, and the IPv4 level-3 lines in xdpban_flat4x, read back, deleted before
 * the trie changes and written after, by the rules written out in flat_live.c. Called from
 * policy.c only, and never calls flat6_live.c.
 */
#ifndef XB_FLAT_LIVE_H
#define XB_FLAT_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "flat.h"
#include "libxdpban.h"
#include "lines_live.h"
#include "policy_plan.h"

/* Maps the flat table of a family after checking that fd really is one. 0 or -errno
 * (-EPROTO: not a flat table). */
int xb_flat_open(struct xb_flat *t, const struct xb_maps *m, __u8 family);
void xb_flat_close(struct xb_flat *t);
/* Every line level 3 holds now, decoded, sorted by region, in *lines (free() it). 0 or -errno
 * (-EPROTO: m->flat4x is not an xdpban line table). */
int xb_flat_lines_read(const struct xb_maps *m, struct xb_flat_line **lines, size_t *n);

/* Lines as they are in the map. */
struct xb_line_dump {
	struct xb_flat_line *v;
	size_t n, cap;
};

/* xdpban_flat4x mapped for writing. */
struct xb_l3_map {
	struct xdpban_flat_slot *slots;
	__u32 n;
	struct xb_map_views *views;
};

/* What a compile knows of the lines: the map's fd, or -1 when level 3 is off. */
struct xb_l3_live {
	int fd;
	struct xb_l3_map map;
	struct xb_line_dump old; /* the lines in the map before the compile, sorted */
	bool *gone;              /* old lines deleted by rule 1 */
};

/* Rule 1 for a single change of the IPv4 trie at p: no line in the regions p touches, or (the
 * map not usable) no line read at all. */
void xb_l3_touch_live(const struct xb_maps *m, struct xb_flat *t, const struct xb_prefix *p);
/* Opens level 3 for a compile of IPv4; when it cannot, turns it off (rule 3, flat_live.c). */
void xb_l3_live_open(struct xb_l3_live *l, const struct xb_maps *m, struct xb_flat *t);
void xb_l3_live_free(struct xb_l3_live *l);
/* Rule 1 for a compile: deletes the old lines in the regions a touched prefix covers. */
void xb_l3_forget(struct xb_l3_live *l, const struct xb_prefix *p);
/* Rule 2, after the trie holds the new set: drops the old lines the set no longer has, then
 * writes the new ones (sorted by region) that differ, counting them in res. False when level 3
 * had to be turned off. */
bool xb_l3_write(struct xb_l3_live *l, struct xb_flat *t, const struct xb_flat_line *lines,
		 size_t n, struct xb_compile_result *res);

#endif /* XB_FLAT_LIVE_H */
