/* lines_live.h - what the two writers of live lines share (lines_live.c): flat_live.c with the
 * IPv4 level-3 lines in xdpban_flat4x, flat6_live.c with the IPv6 lines in xdpban_flat6x. The
 * rules it serves are written out in flat_live.c; nothing declared here writes a trie, a code
 * or a line.
 */
#ifndef XB_LINES_LIVE_H
#define XB_LINES_LIVE_H

#include <stddef.h>
#include <linux/types.h>
#include "libxdpban.h"

/* A flat map mmapped for writing (xb_flat_open, flat_live.h); its guard says whether the data
 * path reads the family's lines. */
struct xb_flat {
	__u64 *words; /* XDPBAN_FLAT_ENTRIES words shared with the data path: the codes, then the
		       * guard */
	int fd;
	struct xb_map_views *views; /* where words came from (struct xb_maps) */
};

/* Maps an mmapable array of line slots of value_size bytes for writing (from vs when kept): 0,
 * or -errno (-EPROTO: not such an array). */
int xb_slots_map(struct xb_map_views *vs, int fd, size_t value_size, void **slots, __u32 *n);
void xb_slots_unmap(struct xb_map_views *vs, void **slots, __u32 *n, size_t value_size);
/* Rule 3 of flat_live.c, for the lines of t's family: from now on the data path reads none. */
void xb_lines_disable(struct xb_flat *t);
/* Waits for an RCU grace period (rule 4 of flat_live.c). 0 or -errno. */
int xb_rcu_wait(void);

#endif /* XB_LINES_LIVE_H */
