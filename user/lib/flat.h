/* flat.h - the codes of the flat policy table (include/xdpban_flat.h) in plain memory
 * (flat.c): the exact codes of every level of a set of entries, the IPv4 level-3 lines and the
 * IPv6 lines, the LOOKUP marks a change sets first, the slots' encoding of a line, and the one
 * way a word of a live table is loaded and stored. Part of the policy module (policy.h), above
 * policy_plan.h only: nothing declared here touches a map, a file descriptor or a syscall.
 */
#ifndef XB_FLAT_H
#define XB_FLAT_H

#include <stddef.h>
#include <linux/types.h>
#include "libxdpban.h"
#include "xdpban_flat.h"

#define XB_FLAT_L3_SHIFT (32 - XDPBAN_FLAT_L2_BITS) /* address >> XB_FLAT_L3_SHIFT: its /24 */

/* Every store into a live table is one aligned 8-byte store of a whole word, so the data path
 * reads either the old word or the new one, never a mix. The caller is the only writer. */
static inline __u64 word_load(const __u64 *w)
{
	return __atomic_load_n(w, __ATOMIC_RELAXED);
}

static inline void word_store(__u64 *w, __u64 v)
{
	__atomic_store_n(w, v, __ATOMIC_RELEASE);
}

/* ---- the flat table as plain memory (no kernel needed) ---- */

/* The levels of codes in words[XDPBAN_FLAT_WORDS], coarsest (read first) to finest: level 1
 * (/16), the middle level (/22), level 2 (/24). */
#define XB_FLAT_LEVELS 3
struct xb_flat_level {
	unsigned int bits; /* regions are /bits */
	__u32 base;        /* its first word */
	__u32 words;
};
extern const struct xb_flat_level xb_flat_levels[XB_FLAT_LEVELS];

/* Computes the exact codes of one family's entries (others in the array are skipped) into
 * words[XDPBAN_FLAT_WORDS], every level. Entries need no order. 0, -EINVAL (a prefix of length
 * 32 or less named twice) or -ENOMEM. */
int xb_flat_build(const struct xb_policy_entry *entries, size_t n, __u8 family, __u64 *words);
/* The code of the region holding `top` (an address's top 32 bits, host order) at the level of
 * /bits regions (XDPBAN_FLAT_L1_BITS, _MID_BITS or _L2_BITS); LOOKUP for any other bits. */
__u32 xb_flat_code(const __u64 *words, unsigned int bits, __u32 top);
/* The top 32 bits of a prefix's address, host order, bits past the length cleared. */
__u32 xb_prefix_top(const struct xb_prefix *p);

/* Level 3 (IPv4): the line of /32 codes of one /24 region. */
struct xb_flat_line {
	__u32 region; /* the /24: address >> 8, host order */
	struct xdpban_flat_line line;
};
/* Computes the lines of the IPv4 entries (others skipped): one for each /24 that holds an
 * entry longer than /24 and that no timed entry covers or lies in, sorted by region.
 * *lines is malloc'ed (NULL when there are none). 0, -EINVAL (a prefix twice) or -ENOMEM. */
int xb_flat_lines_build(const struct xb_policy_entry *entries, size_t n,
			struct xb_flat_line **lines, size_t *count);
/* Sorts lines by region; the order of two lines for bsearch and qsort. */
void xb_flat_lines_sort(struct xb_flat_line *lines, size_t n);
int xb_flat_line_cmp(const void *a, const void *b);
/* The level-3 code of an IPv4 address (host order) in sorted lines; LOOKUP when its /24 has
 * no line. */
__u32 xb_flat_lines_code(const struct xb_flat_line *lines, size_t count, __u32 addr);

/* The IPv6 lines (xdpban_flat6x): the line of one region of depth 24, 32, 40, 48 or 56 bits. */
struct xb_flat6_line {
	__u64 key; /* xdpban_flat6_key: the region's first 64 bits, its depth in the low byte */
	struct xdpban_flat_line line;
};
/* Computes the lines of the IPv6 entries (others skipped): one for each region of a line depth
 * that holds an entry longer than the region and that no timed entry covers or lies in, in
 * their order: by depth, coarsest first, then by region (xb_flat6_key_rank). *lines is
 * malloc'ed (NULL when there are none). 0, -EINVAL (a prefix twice) or -ENOMEM. */
int xb_flat6_lines_build(const struct xb_policy_entry *entries, size_t n,
			 struct xb_flat6_line **lines, size_t *count);
/* The line with that key in sorted lines, or NULL. */
const struct xb_flat6_line *xb_flat6_lines_find(const struct xb_flat6_line *lines, size_t n,
						__u64 key);
/* What the data path's walk down sorted lines gives an address whose first 64 bits are hi
 * (host order): a pure code, or LOOKUP (a line missing, or LOOKUP at /64: the trie). */
__u32 xb_flat6_lines_code(const struct xb_flat6_line *lines, size_t n, __u64 hi);

/* ---- for the writers of the live tables (flat_live.c, flat6_live.c) ---- */

/* LOOKUP in every region (levels 1 and 2) whose code a change of the entry at p could make
 * wrong. */
void xb_flat_touch(__u64 *words, const struct xb_prefix *p);
/* Pure codes in a level: a code is pure when either of its two bits is set. */
__u32 xb_flat_count_pure(const __u64 *level, __u32 nwords);
/* A line as the data path's slot holds it (codes only; the key is the writer's): 0, or
 * -EINVAL when a code is LOOKUP, which a slot cannot hold. */
int xb_flat_slot_encode(const struct xdpban_flat_line *line, struct xdpban_flat_slot *slot);
void xb_flat_slot_decode(const struct xdpban_flat_slot *slot, struct xdpban_flat_line *line);
/* An IPv6 line's key as a number in the lines' order: by depth, then by region. */
__u64 xb_flat6_key_rank(__u64 key);
/* Room for one more line at (*v)[*n]. 0 or -ENOMEM. */
int xb_flat_lines_push(struct xb_flat_line **v, size_t *n, size_t *cap);
int xb_flat6_lines_push(struct xb_flat6_line **v, size_t *n, size_t *cap);

#endif /* XB_FLAT_H */
