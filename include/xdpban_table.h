/* xdpban_table.h - the per-source tables: bans and error counters, each an mmapable BPF array
 * of groups of four 32-byte slots, shared by the data path and userspace. One group is 128
 * bytes (two adjacent cache lines), so a lookup costs one miss to memory, where a kernel hash
 * costs a bucket, an element and their locks (docs/datapath.md, "Tables and memory").
 *
 * The algorithms below are compiled twice, by clang for the BPF program and by gcc for
 * userspace, which works on the same memory through mmap; both sides follow one protocol, so
 * neither may write a slot any other way. The includer defines, before including:
 *   XDPBAN_TABLE_GROUP(tab, index)   struct xdpban_group * of group `index`, or NULL;
 * and passes `tab` (a BPF map, or userspace's mapping) and the group count to every call.
 *
 * A slot (all fields host order except addr):
 *   ctl  state (EMPTY, BUSY, LIVE, TOMB), a generation that changes whenever the slot is
 *        claimed, the key's family and prefix length, and 32 bits of table data (aux);
 *   val  bans: expires_ns (CLOCK_BOOTTIME, 0 = never); counters: window start, generation
 *        and count (XDPBAN_CTR_*);
 *   addr the key's address, network byte order, masked to its prefix (struct xdpban_key).
 * A slot is claimed by a compare-and-swap of ctl to BUSY, written, then published as LIVE; a
 * reader reads ctl, then the key and val, then ctl again, and trusts what it read only when
 * ctl did not change (x86 keeps loads in order and stores in order, and every CAS is a full
 * barrier). Slot 0's ctl also holds group data that is not part of slot 0 (XDPBAN_G0_*); a
 * reader ignores those bits when it compares.
 *
 * Bans may live up to XDPBAN_BAN_PROBE groups past their home group. Slot 0 of each group
 * counts the bans living beyond it whose home is at or before it (the overflow count), kept
 * exact the way the data path needs it: raised before such a ban is published, lowered only
 * after it is gone, sticky once saturated. A ban lookup that misses in the home group stops
 * there when its overflow count is zero, which is almost always. Bans are never evicted.
 *
 * Counters live in their home group only. Inserting one takes the group's insert lock (a bit
 * in slot 0), so a key is never in a group twice; updates of a present key are lock-free
 * compare-and-swaps of val, whose generation bits make a reassigned slot fail the swap. A new
 * key takes an empty slot, else evicts the cheapest: an ended window first, then the lowest
 * count, never a source whose hop count was verified recently (docs/datapath.md).
 */
#ifndef XDPBAN_TABLE_H
#define XDPBAN_TABLE_H

#include <linux/types.h>
#include "xdpban_config.h"
#include "xdpban_state.h"

#ifndef XDPBAN_INLINE
#define XDPBAN_INLINE static inline __attribute__((always_inline))
#endif

#define XDPBAN_GROUP_SLOTS 4
#define XDPBAN_SLOT_BYTES 32

struct xdpban_slot {
	__u64 ctl;     /* XDPBAN_CTL_* */
	__u64 val;     /* per table, see above */
	__u32 addr[4]; /* network byte order, as struct xdpban_key's addr */
};

struct xdpban_group {
	struct xdpban_slot slot[XDPBAN_GROUP_SLOTS];
} __attribute__((aligned(128)));

/* ---- ctl ---- */
enum xdpban_slot_state {
	XDPBAN_SLOT_EMPTY = 0, /* never used since the table was made: a ban probe may stop */
	XDPBAN_SLOT_BUSY = 1,  /* claimed, being written */
	XDPBAN_SLOT_LIVE = 2,  /* holds a key */
	XDPBAN_SLOT_TOMB = 3,  /* was used and freed: reusable, a ban probe goes on */
};
#define XDPBAN_CTL_STATE_MASK 0x3ull
#define XDPBAN_CTL_GEN_SHIFT 2
#define XDPBAN_CTL_GEN_MASK (0x3fffull << XDPBAN_CTL_GEN_SHIFT) /* 14 bits */
#define XDPBAN_CTL_V6 (1ull << 16)                             /* family IPv6 */
#define XDPBAN_G0_LOCK (1ull << 17)       /* slot 0 only: the group's counter insert lock */
#define XDPBAN_G0_OVF_SHIFT 18            /* slot 0 only: the ban overflow count */
#define XDPBAN_G0_OVF_MASK (0x3full << XDPBAN_G0_OVF_SHIFT)
#define XDPBAN_G0_OVF_MAX 0x3fu           /* sticky: never lowered once reached */
#define XDPBAN_G0_BITS (XDPBAN_G0_LOCK | XDPBAN_G0_OVF_MASK)
#define XDPBAN_CTL_PLEN_SHIFT 24
#define XDPBAN_CTL_PLEN_MASK (0xffull << XDPBAN_CTL_PLEN_SHIFT)
#define XDPBAN_CTL_AUX_SHIFT 32

XDPBAN_INLINE __u32 xdpban_ctl_state(__u64 ctl)
{
	return ctl & XDPBAN_CTL_STATE_MASK;
}

XDPBAN_INLINE __u32 xdpban_ctl_aux(__u64 ctl)
{
	return (__u32)(ctl >> XDPBAN_CTL_AUX_SHIFT);
}

XDPBAN_INLINE __u64 xdpban_ctl_with_aux(__u64 ctl, __u32 aux)
{
	return (ctl & 0xffffffffull) | ((__u64)aux << XDPBAN_CTL_AUX_SHIFT);
}

/* The identity bits of a key: family and prefix length. */
XDPBAN_INLINE __u64 xdpban_ctl_key(const struct xdpban_key *key)
{
	return (key->family == XDPBAN_FAMILY_INET6 ? XDPBAN_CTL_V6 : 0) |
	       ((__u64)key->prefixlen << XDPBAN_CTL_PLEN_SHIFT);
}

/* The ctl of a slot claimed from `old`: BUSY, the next generation, old's group bits. */
XDPBAN_INLINE __u64 xdpban_ctl_claimed(__u64 old)
{
	__u64 gen = (old + (1ull << XDPBAN_CTL_GEN_SHIFT)) & XDPBAN_CTL_GEN_MASK;

	return (old & XDPBAN_G0_BITS) | gen | XDPBAN_SLOT_BUSY;
}

/* The published ctl of a claimed slot holding key with aux. */
XDPBAN_INLINE __u64 xdpban_ctl_live(__u64 claimed, const struct xdpban_key *key, __u32 aux)
{
	return (claimed & (XDPBAN_G0_BITS | XDPBAN_CTL_GEN_MASK)) | xdpban_ctl_key(key) |
	       ((__u64)aux << XDPBAN_CTL_AUX_SHIFT) | XDPBAN_SLOT_LIVE;
}

#define XDPBAN_READ64(p) (*(volatile __u64 *)(p))
#define XDPBAN_WRITE64(p, v) (*(volatile __u64 *)(p) = (v))
#define XDPBAN_READ32(p) (*(volatile __u32 *)(p))
#define XDPBAN_WRITE32(p, v) (*(volatile __u32 *)(p) = (v))
#define XDPBAN_CAS64(p, old, new) __sync_val_compare_and_swap((__u64 *)(p), (old), (new))

/* ---- hashing ---- */

/* The home group of a key: a keyed multiply-xorshift hash of its words (the seed is chosen at
 * random when the tables are made, xdpban_seed, so that sources cannot be aimed at one group),
 * reduced to [0, groups) by a multiply, which needs no power of two. */
XDPBAN_INLINE __u32 xdpban_key_home(__u64 seed, const struct xdpban_key *key, __u32 groups)
{
	const __u32 *w = (const __u32 *)key;
	__u64 h = seed ^ 0x9e3779b97f4a7c15ull;

	for (int i = 0; i < (int)(sizeof(*key) / 4); i++) {
		h = (h ^ w[i]) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 31;
	}
	return (__u32)(((h >> 32) * (__u64)groups) >> 32);
}

/* The slot's key is `key` as of ctl (the caller checks ctl was stable around the read). */
XDPBAN_INLINE int xdpban_slot_is(const struct xdpban_slot *s, __u64 ctl,
				 const struct xdpban_key *key)
{
	const __u32 *a = (const __u32 *)key->addr;

	if ((ctl & (XDPBAN_CTL_V6 | XDPBAN_CTL_PLEN_MASK)) != xdpban_ctl_key(key))
		return 0;
	return XDPBAN_READ32(&s->addr[0]) == a[0] && XDPBAN_READ32(&s->addr[1]) == a[1] &&
	       XDPBAN_READ32(&s->addr[2]) == a[2] && XDPBAN_READ32(&s->addr[3]) == a[3];
}

XDPBAN_INLINE void xdpban_slot_write_key(struct xdpban_slot *s, const struct xdpban_key *key)
{
	const __u32 *a = (const __u32 *)key->addr;

	XDPBAN_WRITE32(&s->addr[0], a[0]);
	XDPBAN_WRITE32(&s->addr[1], a[1]);
	XDPBAN_WRITE32(&s->addr[2], a[2]);
	XDPBAN_WRITE32(&s->addr[3], a[3]);
}

/* The key a slot holds, as of ctl. */
XDPBAN_INLINE void xdpban_slot_read_key(const struct xdpban_slot *s, __u64 ctl,
					struct xdpban_key *key)
{
	__u32 *a = (__u32 *)key->addr;

	key->family = ctl & XDPBAN_CTL_V6 ? XDPBAN_FAMILY_INET6 : XDPBAN_FAMILY_INET;
	key->prefixlen = (__u8)((ctl & XDPBAN_CTL_PLEN_MASK) >> XDPBAN_CTL_PLEN_SHIFT);
	key->pad[0] = key->pad[1] = 0;
	a[0] = XDPBAN_READ32(&s->addr[0]);
	a[1] = XDPBAN_READ32(&s->addr[1]);
	a[2] = XDPBAN_READ32(&s->addr[2]);
	a[3] = XDPBAN_READ32(&s->addr[3]);
}

/* The slot's ctl is unchanged since `ctl` was read, group bits aside. */
XDPBAN_INLINE int xdpban_ctl_same(const struct xdpban_slot *s, __u64 ctl)
{
	return ((XDPBAN_READ64(&s->ctl) ^ ctl) & ~XDPBAN_G0_BITS) == 0;
}

/* Replaces the slot's ctl bits outside the group bits, which may change meanwhile. 0, or -1
 * when the slot's own bits are no longer `expect`. */
XDPBAN_INLINE int xdpban_ctl_swap(struct xdpban_slot *s, __u64 expect, __u64 next)
{
	for (int i = 0; i < 4; i++) {
		__u64 now = XDPBAN_READ64(&s->ctl);
		__u64 want = (next & ~XDPBAN_G0_BITS) | (now & XDPBAN_G0_BITS);

		if ((now ^ expect) & ~XDPBAN_G0_BITS)
			return -1;
		if (XDPBAN_CAS64(&s->ctl, now, want) == now)
			return 0;
	}
	return -1;
}

/* ---- bans ---- */

/* A ban lives in its home group or in one of the XDPBAN_BAN_PROBE - 1 groups after it. */
#define XDPBAN_BAN_PROBE 16
/* aux of a ban: reason and classes (struct xdpban_ban) */
#define XDPBAN_BAN_AUX(reason, classes) ((__u32)(reason) | ((__u32)(classes) << 8))
#define XDPBAN_BAN_AUX_REASON(aux) ((__u8)(aux))
#define XDPBAN_BAN_AUX_CLASSES(aux) ((__u8)((aux) >> 8))

/* Where a ban was found: group index, slot, and the ctl and expiry read together. */
struct xdpban_ban_ref {
	__u32 group;
	__u32 slot;
	__u64 ctl;
	__u64 expires_ns;
};

XDPBAN_INLINE __u32 xdpban_g0_ovf(__u64 ctl0)
{
	return (__u32)((ctl0 & XDPBAN_G0_OVF_MASK) >> XDPBAN_G0_OVF_SHIFT);
}

/* Looks for key in one group: 1 found (*ref filled), 0 not there. *ovf gets the group's
 * overflow count. A slot that changes while it is read is read again, a few times; a slot
 * being written (BUSY) holds no ban yet. */
XDPBAN_INLINE int xdpban_ban_in_group(struct xdpban_group *g, __u32 gi,
				      const struct xdpban_key *key, struct xdpban_ban_ref *ref,
				      __u32 *ovf)
{
	*ovf = xdpban_g0_ovf(XDPBAN_READ64(&g->slot[0].ctl));
	for (int i = 0; i < XDPBAN_GROUP_SLOTS; i++) {
		struct xdpban_slot *s = &g->slot[i];

		for (int tries = 0; tries < 3; tries++) {
			__u64 ctl = XDPBAN_READ64(&s->ctl), exp;
			int is;

			if (xdpban_ctl_state(ctl) != XDPBAN_SLOT_LIVE)
				break;
			is = xdpban_slot_is(s, ctl, key);
			exp = XDPBAN_READ64(&s->val);
			if (!xdpban_ctl_same(s, ctl))
				continue;
			if (!is)
				break;
			ref->group = gi;
			ref->slot = i;
			ref->ctl = ctl;
			ref->expires_ns = exp;
			return 1;
		}
	}
	return 0;
}

/* Finds key's ban: 1 (*ref filled) or 0. One group read in the common case. */
XDPBAN_INLINE int xdpban_ban_find(void *tab, __u32 groups, __u64 seed,
				  const struct xdpban_key *key, struct xdpban_ban_ref *ref)
{
	__u32 home, ovf = 0;

	if (!groups)
		return 0;
	home = xdpban_key_home(seed, key, groups);
	for (__u32 step = 0; step < XDPBAN_BAN_PROBE; step++) {
		__u32 gi = home + step >= groups ? home + step - groups : home + step;
		struct xdpban_group *g = XDPBAN_TABLE_GROUP(tab, gi);
		__u32 here;

		if (!g)
			return 0;
		if (xdpban_ban_in_group(g, gi, key, ref, &here))
			return 1;
		if (step == 0)
			ovf = here;
		/* The home group's overflow count says whether any ban lives past it; after
		 * that, each group's own count says whether the probe must go on. */
		if ((step == 0 ? ovf : here) == 0)
			return 0;
		if (groups <= step + 1)
			return 0;
	}
	return 0;
}

/* Raises (+1) or lowers (-1) a group's overflow count; a saturated count stays. */
XDPBAN_INLINE void xdpban_ovf_add(struct xdpban_group *g, int delta)
{
	for (int i = 0; i < 8; i++) {
		__u64 now = XDPBAN_READ64(&g->slot[0].ctl);
		__u32 ovf = xdpban_g0_ovf(now);
		__u64 next;

		if (ovf == XDPBAN_G0_OVF_MAX || (delta < 0 && ovf == 0))
			return;
		ovf = delta > 0 ? ovf + 1 : ovf - 1;
		next = (now & ~XDPBAN_G0_OVF_MASK) | ((__u64)ovf << XDPBAN_G0_OVF_SHIFT);
		if (XDPBAN_CAS64(&g->slot[0].ctl, now, next) == now)
			return;
	}
	/* Heavy contention: leaving it raised is always safe; a lost lowering only costs
	 * probes. A lost raise is not: force it with a plain atomic add below saturation. */
	if (delta > 0)
		__sync_fetch_and_add(&g->slot[0].ctl, 1ull << XDPBAN_G0_OVF_SHIFT);
}

/* Raises or lowers the overflow counts of the `steps` groups from home on. */
XDPBAN_INLINE void xdpban_ovf_path(void *tab, __u32 groups, __u32 home, __u32 steps, int delta)
{
	for (__u32 step = 0; step < XDPBAN_BAN_PROBE - 1; step++) {
		__u32 gi = home + step >= groups ? home + step - groups : home + step;
		struct xdpban_group *g;

		if (step >= steps)
			return;
		g = XDPBAN_TABLE_GROUP(tab, gi);
		if (g)
			xdpban_ovf_add(g, delta);
	}
}

/* Claims a slot for a new ban of key (which the caller found absent): the first free slot in
 * the probe window; the overflow counts of the groups it passes are raised before anything
 * can see it. The slot stays BUSY until xdpban_ban_publish (write the cold data of struct
 * xdpban_ban_info in between) or xdpban_ban_unclaim. 0 and *ref, or -1: the window is full. */
XDPBAN_INLINE int xdpban_ban_claim(void *tab, __u32 groups, __u64 seed,
				   const struct xdpban_key *key, struct xdpban_ban_ref *ref)
{
	__u32 home;

	if (!groups)
		return -1;
	home = xdpban_key_home(seed, key, groups);
	for (__u32 step = 0; step < XDPBAN_BAN_PROBE; step++) {
		__u32 gi = home + step >= groups ? home + step - groups : home + step;
		struct xdpban_group *g = XDPBAN_TABLE_GROUP(tab, gi);

		if (!g || step >= groups)
			return -1;
		for (int i = 0; i < XDPBAN_GROUP_SLOTS; i++) {
			struct xdpban_slot *s = &g->slot[i];
			__u64 ctl = XDPBAN_READ64(&s->ctl), claimed;
			__u32 st = xdpban_ctl_state(ctl);

			if (st != XDPBAN_SLOT_EMPTY && st != XDPBAN_SLOT_TOMB)
				continue;
			claimed = xdpban_ctl_claimed(ctl);
			if (XDPBAN_CAS64(&s->ctl, ctl, claimed) != ctl)
				continue; /* taken meanwhile, or the group bits moved: next slot */
			xdpban_ovf_path(tab, groups, home, step, +1);
			ref->group = gi;
			ref->slot = i;
			ref->ctl = claimed;
			ref->expires_ns = 0;
			return 0;
		}
	}
	return -1;
}

/* Index of a slot in the parallel array of cold ban data (XDPBAN_MAP_BANINFO). */
XDPBAN_INLINE __u32 xdpban_ban_info_index(const struct xdpban_ban_ref *ref)
{
	return ref->group * XDPBAN_GROUP_SLOTS + ref->slot;
}

/* What a ban holds besides its key, expiry, reason and classes: read only by userspace. */
struct xdpban_ban_info {
	__u64 start_ns; /* CLOCK_BOOTTIME ns when the ban began */
	__u32 count;    /* the error count that caused it (0 for manual bans) */
	__u32 pad;
};

/* Publishes a claimed ban slot. */
XDPBAN_INLINE void xdpban_ban_publish(void *tab, struct xdpban_ban_ref *ref,
				      const struct xdpban_key *key, __u64 expires_ns, __u32 aux)
{
	struct xdpban_group *g = XDPBAN_TABLE_GROUP(tab, ref->group);
	struct xdpban_slot *s;
	__u64 live;

	if (!g || ref->slot >= XDPBAN_GROUP_SLOTS)
		return;
	s = &g->slot[ref->slot & (XDPBAN_GROUP_SLOTS - 1)];
	xdpban_slot_write_key(s, key);
	XDPBAN_WRITE64(&s->val, expires_ns);
	live = xdpban_ctl_live(ref->ctl, key, aux);
	xdpban_ctl_swap(s, ref->ctl, live);
	ref->ctl = live;
	ref->expires_ns = expires_ns;
}

/* Gives a claimed slot back (the caller changed its mind before publishing). */
XDPBAN_INLINE void xdpban_ban_unclaim(void *tab, __u32 groups, __u64 seed,
				      const struct xdpban_key *key, struct xdpban_ban_ref *ref)
{
	struct xdpban_group *g = XDPBAN_TABLE_GROUP(tab, ref->group);
	__u32 home = xdpban_key_home(seed, key, groups);
	__u32 steps = ref->group >= home ? ref->group - home : ref->group + groups - home;

	if (!g || ref->slot >= XDPBAN_GROUP_SLOTS)
		return;
	xdpban_ctl_swap(&g->slot[ref->slot & (XDPBAN_GROUP_SLOTS - 1)], ref->ctl,
			(ref->ctl & ~XDPBAN_CTL_STATE_MASK) | XDPBAN_SLOT_TOMB);
	xdpban_ovf_path(tab, groups, home, steps, -1);
}

/* Deletes the ban found at *ref if it is still the one found. 1 if this call deleted it. */
XDPBAN_INLINE int xdpban_ban_delete(void *tab, __u32 groups, __u64 seed,
				    const struct xdpban_key *key, const struct xdpban_ban_ref *ref)
{
	struct xdpban_group *g = XDPBAN_TABLE_GROUP(tab, ref->group);
	__u32 home, steps;

	if (!g || ref->slot >= XDPBAN_GROUP_SLOTS)
		return 0;
	if (xdpban_ctl_swap(&g->slot[ref->slot & (XDPBAN_GROUP_SLOTS - 1)], ref->ctl,
			    (ref->ctl & ~XDPBAN_CTL_STATE_MASK) | XDPBAN_SLOT_TOMB))
		return 0;
	home = xdpban_key_home(seed, key, groups);
	steps = ref->group >= home ? ref->group - home : ref->group + groups - home;
	xdpban_ovf_path(tab, groups, home, steps, -1); /* after: the ban is gone */
	return 1;
}

/* ---- counters ---- */

/* val of a counter: count (32 bits), the low 2 bits of the slot's generation, and the window
 * start in CLOCK_BOOTTIME seconds modulo 2^30 (34 years; a window is at most ten). */
#define XDPBAN_CTR_START_BITS 30
#define XDPBAN_CTR_START_MASK ((1u << XDPBAN_CTR_START_BITS) - 1)
#define XDPBAN_CTR_PACK(start_s, gen, count)                                                   \
	((((__u64)(start_s) & XDPBAN_CTR_START_MASK) << 34) | (((__u64)(gen) & 3) << 32) |     \
	 (__u32)(count))
#define XDPBAN_CTR_COUNT(val) ((__u32)(val))
#define XDPBAN_CTR_GEN(val) ((__u32)((val) >> 32) & 3)
#define XDPBAN_CTR_START(val) ((__u32)((val) >> 34))
/* The generation bits a claimed slot's val must carry. */
#define XDPBAN_CTL_GEN2(ctl) ((__u32)((ctl) >> XDPBAN_CTL_GEN_SHIFT) & 3)

/* Seconds since the window of val began, as of now_s. */
XDPBAN_INLINE __u32 xdpban_ctr_age(__u64 val, __u32 now_s)
{
	return (now_s - XDPBAN_CTR_START(val)) & XDPBAN_CTR_START_MASK;
}

/* aux of a counter: the spoof defence's record of the source (docs/datapath.md, section 8):
 * its reference hop count, flags, and when its hop count was last verified. */
#define XDPBAN_CTR_AUX(hop, flags, stamp)                                                      \
	((__u32)(hop) | ((__u32)(flags) << 8) | ((__u32)(stamp) << 16))
#define XDPBAN_CTR_AUX_HOP(aux) ((__u8)(aux))
#define XDPBAN_CTR_AUX_FLAGS(aux) ((__u8)((aux) >> 8))
#define XDPBAN_CTR_AUX_STAMP(aux) ((__u16)((aux) >> 16))
enum xdpban_ctr_flag {
	XDPBAN_CTR_VERIFIED = 1 << 0, /* hop count learned from a segment of an established TCP
				       * connection (return path proven) */
	XDPBAN_CTR_HOPREF = 1 << 1,   /* hop count of the first error of the current window */
	XDPBAN_CTR_DISPUTED = 1 << 2, /* an error's hop count disagreed: no more counting in
				       * this window */
};
/* A verification stamp counts time in units of 64 s, modulo 2^16 (48 days). */
#define XDPBAN_STAMP_SHIFT 6
/* A verified source stays protected from eviction this long after its last verification. */
#define XDPBAN_VERIFIED_KEEP_S 86400u

XDPBAN_INLINE __u16 xdpban_stamp(__u32 now_s)
{
	return (__u16)(now_s >> XDPBAN_STAMP_SHIFT);
}

XDPBAN_INLINE int xdpban_ctr_protected(__u32 aux, __u32 now_s)
{
	__u16 age = (__u16)(xdpban_stamp(now_s) - XDPBAN_CTR_AUX_STAMP(aux));

	return (XDPBAN_CTR_AUX_FLAGS(aux) & XDPBAN_CTR_VERIFIED) &&
	       age < (XDPBAN_VERIFIED_KEEP_S >> XDPBAN_STAMP_SHIFT);
}

/* A counter has a window while it holds errors or a dispute, until window_s have passed since
 * the window began; a count of 0 without a dispute is no window: the next error starts one. */
XDPBAN_INLINE int xdpban_ctr_active(__u32 aux, __u64 val, __u32 now_s, __u32 window_s)
{
	return (XDPBAN_CTR_COUNT(val) > 0 || (XDPBAN_CTR_AUX_FLAGS(aux) & XDPBAN_CTR_DISPUTED)) &&
	       xdpban_ctr_age(val, now_s) < window_s;
}

/* A counter found in its group: where, and ctl and val read together. */
struct xdpban_ctr_ref {
	struct xdpban_slot *slot;
	__u64 ctl;
	__u64 val;
};

/* Looks for key in its group: 1 (*ref filled) or 0. */
XDPBAN_INLINE int xdpban_ctr_find(struct xdpban_group *g, const struct xdpban_key *key,
				  struct xdpban_ctr_ref *ref)
{
	for (int i = 0; i < XDPBAN_GROUP_SLOTS; i++) {
		struct xdpban_slot *s = &g->slot[i];

		for (int tries = 0; tries < 3; tries++) {
			__u64 ctl = XDPBAN_READ64(&s->ctl), val;
			int is;

			if (xdpban_ctl_state(ctl) != XDPBAN_SLOT_LIVE)
				break;
			is = xdpban_slot_is(s, ctl, key);
			val = XDPBAN_READ64(&s->val);
			if (!xdpban_ctl_same(s, ctl))
				continue;
			if (!is)
				break;
			ref->slot = s;
			ref->ctl = ctl;
			ref->val = val;
			return 1;
		}
	}
	return 0;
}

/* How cheap a slot is to evict for a new counter: 0 free, then ended windows, then by count;
 * ~0 for a slot that must not go (busy, or verified and `verified` is not set). */
XDPBAN_INLINE __u64 xdpban_ctr_cost(__u64 ctl, __u64 val, __u32 now_s, __u32 window_s,
				    int verified)
{
	__u32 st = xdpban_ctl_state(ctl), aux = xdpban_ctl_aux(ctl);

	if (st == XDPBAN_SLOT_EMPTY || st == XDPBAN_SLOT_TOMB)
		return 0;
	if (st == XDPBAN_SLOT_BUSY)
		return ~0ull;
	if (xdpban_ctr_protected(aux, now_s)) {
		if (!verified)
			return ~0ull;
		/* a verified newcomer may take the stalest verified slot */
		return (3ull << 62) - XDPBAN_CTR_AUX_STAMP(aux);
	}
	if (!xdpban_ctr_active(aux, val, now_s, window_s))
		return 1;
	/* lowest count first; of equal counts, the oldest window */
	return (2ull << 32) + ((__u64)XDPBAN_CTR_COUNT(val) << 30) +
	       (XDPBAN_CTR_START_MASK - xdpban_ctr_age(val, now_s));
}

#define XDPBAN_LOCK_TRIES 64

/* Takes the group's insert lock: 0, or -1 after XDPBAN_LOCK_TRIES (another CPU kept it). */
XDPBAN_INLINE int xdpban_group_lock(struct xdpban_group *g)
{
	for (int i = 0; i < XDPBAN_LOCK_TRIES; i++) {
		if (XDPBAN_READ64(&g->slot[0].ctl) & XDPBAN_G0_LOCK)
			continue;
		if (!(__sync_fetch_and_or(&g->slot[0].ctl, XDPBAN_G0_LOCK) & XDPBAN_G0_LOCK))
			return 0;
	}
	return -1;
}

XDPBAN_INLINE void xdpban_group_unlock(struct xdpban_group *g)
{
	__sync_fetch_and_and(&g->slot[0].ctl, ~XDPBAN_G0_LOCK);
}

/* Puts a new counter for key into its group, under the group's lock: key (if another CPU
 * inserted it meanwhile, *ref is that one and 1 is returned), else the cheapest slot is
 * claimed and published with val and aux: 0 and *ref. -1: no slot may be taken (every one
 * busy or protected), or the lock could not be had. */
XDPBAN_INLINE int xdpban_ctr_insert(struct xdpban_group *g, const struct xdpban_key *key,
				    __u32 now_s, __u32 window_s, int verified, __u32 count,
				    __u32 aux, struct xdpban_ctr_ref *ref)
{
	__u64 best = ~0ull, ctl, claimed, val;
	int victim = -1, ret = -1;

	if (xdpban_group_lock(g))
		return -1;
	if (xdpban_ctr_find(g, key, ref)) {
		ret = 1;
		goto out;
	}
	for (int i = 0; i < XDPBAN_GROUP_SLOTS; i++) {
		__u64 c = XDPBAN_READ64(&g->slot[i].ctl);
		__u64 cost = xdpban_ctr_cost(c, XDPBAN_READ64(&g->slot[i].val), now_s, window_s,
					     verified);

		if (cost < best) {
			best = cost;
			victim = i;
		}
	}
	if (victim < 0)
		goto out;
	{
		struct xdpban_slot *s = &g->slot[victim & (XDPBAN_GROUP_SLOTS - 1)];

		ctl = XDPBAN_READ64(&s->ctl);
		if (xdpban_ctr_cost(ctl, XDPBAN_READ64(&s->val), now_s, window_s, verified) ==
		    ~0ull)
			goto out;
		claimed = xdpban_ctl_claimed(ctl);
		if (xdpban_ctl_swap(s, ctl, claimed))
			goto out; /* changed under us (an update of its aux): give up this once */
		xdpban_slot_write_key(s, key);
		val = XDPBAN_CTR_PACK(now_s, XDPBAN_CTL_GEN2(claimed), count);
		XDPBAN_WRITE64(&s->val, val);
		ctl = xdpban_ctl_live(claimed, key, aux);
		xdpban_ctl_swap(s, claimed, ctl);
		ref->slot = s;
		ref->ctl = ctl;
		ref->val = val;
		ret = 0;
	}
out:
	xdpban_group_unlock(g);
	return ret;
}

/* Replaces a found counter's val (compare-and-swap with ref->val): 0, or -1 when it changed
 * (counted meanwhile, or the slot went to another key; the generation bits see to that). */
XDPBAN_INLINE int xdpban_ctr_swap(struct xdpban_ctr_ref *ref, __u64 next)
{
	__u64 seen = XDPBAN_CAS64(&ref->slot->val, ref->val, next);

	if (seen != ref->val) {
		ref->val = seen;
		return -1;
	}
	ref->val = next;
	return 0;
}

/* Replaces a found counter's aux if the slot still holds the same key: 0 or -1. */
XDPBAN_INLINE int xdpban_ctr_set_aux(struct xdpban_ctr_ref *ref, __u32 aux)
{
	__u64 next = xdpban_ctl_with_aux(ref->ctl, aux);

	if (xdpban_ctl_swap(ref->slot, ref->ctl, next))
		return -1;
	ref->ctl = next;
	return 0;
}

/* ---- counting, and the spoof defence (docs/datapath.md, sections 4 and 8) ---- */

/* The hop count of a packet from its TTL or hop limit: the distance from the smallest usual
 * initial value (30, 32, 60, 64, 128, 255) at or above it (Jin, Wang and Shin, CCS 2003). */
XDPBAN_INLINE __u8 xdpban_hop_of_ttl(__u8 ttl)
{
	__u32 init = ttl <= 30 ? 30 : ttl <= 32 ? 32 : ttl <= 60 ? 60 : ttl <= 64 ? 64
		   : ttl <= 128 ? 128 : 255;

	return (__u8)(init - ttl);
}

#define XDPBAN_HOP_NONE 0xff /* an error with no packet behind it (a report) */

XDPBAN_INLINE int xdpban_hop_differs(__u8 a, __u8 b, __u8 tolerance)
{
	return (a > b ? a - b : b - a) > tolerance;
}

/* One error event to count. */
struct xdpban_error {
	__u32 n;         /* errors, >= 1 */
	__u32 now_s;     /* CLOCK_BOOTTIME seconds */
	__u32 window_s;
	__u8 hop;        /* the packet's hop count, or XDPBAN_HOP_NONE */
	__u8 spoof;      /* enum xdpban_spoof_mode in force for this error */
	__u8 tolerance;  /* hop counts this far apart still agree */
	__u8 pad;
};

enum xdpban_count_result {
	XDPBAN_COUNT_COUNTED = 0,    /* counted; *count is the source's new count */
	XDPBAN_COUNT_SUSPECT = 1,    /* not counted: its hop count disagrees, or the source is
				      * disputed for this window (errors_suspect) */
	XDPBAN_COUNT_UNVERIFIED = 2, /* not counted: spoof mode `verified` and the source never
				      * proved its return path (errors_unverified) */
	XDPBAN_COUNT_FULL = 3,       /* not counted: no slot of the group could be taken
				      * (counter_full) */
};

/* The count after adding n, saturating. */
XDPBAN_INLINE __u32 xdpban_count_plus(__u32 count, __u32 n)
{
	return count + n < count ? 0xffffffffu : count + n;
}

/* aux after a window (re)starts with an error of hop `hop`: a verified source keeps its
 * record; any other gets this error's hop count as its reference. Disputes end with the
 * window that had them. */
XDPBAN_INLINE __u32 xdpban_aux_new_window(__u32 aux, const struct xdpban_error *e)
{
	__u8 flags = XDPBAN_CTR_AUX_FLAGS(aux) & ~(XDPBAN_CTR_DISPUTED | XDPBAN_CTR_HOPREF);

	if (flags & XDPBAN_CTR_VERIFIED)
		return XDPBAN_CTR_AUX(XDPBAN_CTR_AUX_HOP(aux), flags, XDPBAN_CTR_AUX_STAMP(aux));
	if (e->spoof == XDPBAN_SPOOF_OFF || e->hop == XDPBAN_HOP_NONE)
		return XDPBAN_CTR_AUX(0, flags, 0);
	return XDPBAN_CTR_AUX(e->hop, flags | XDPBAN_CTR_HOPREF, 0);
}

/* Marks a counter disputed for the rest of its window; with no window, one starts now (with
 * no errors), so that the dispute lasts window_s either way. */
XDPBAN_INLINE void xdpban_ctr_dispute(struct xdpban_ctr_ref *ref, __u32 aux, int active,
				      __u32 now_s)
{
	__u8 flags = XDPBAN_CTR_AUX_FLAGS(aux) | XDPBAN_CTR_DISPUTED;

	if (!active) {
		if (xdpban_ctr_swap(ref, XDPBAN_CTR_PACK(now_s, XDPBAN_CTL_GEN2(ref->ctl), 0)))
			return; /* counted meanwhile: the next error decides again */
		flags &= ~XDPBAN_CTR_HOPREF;
	}
	xdpban_ctr_set_aux(ref, XDPBAN_CTR_AUX(XDPBAN_CTR_AUX_HOP(aux), flags,
					       XDPBAN_CTR_AUX_STAMP(aux)));
}

/* The spoof defence's verdict on one error for a counter with aux (window active or not):
 * -1 count it, else the enum xdpban_count_result that stops it. *dispute is set when the
 * error's hop count disagrees with the source's reference, so the source becomes disputed. */
XDPBAN_INLINE int xdpban_spoof_check(__u32 aux, int active, const struct xdpban_error *e,
				     int *dispute)
{
	__u8 flags = XDPBAN_CTR_AUX_FLAGS(aux);
	int ref = (flags & XDPBAN_CTR_VERIFIED) || (active && (flags & XDPBAN_CTR_HOPREF));

	*dispute = 0;
	if (e->spoof == XDPBAN_SPOOF_OFF || e->hop == XDPBAN_HOP_NONE)
		return -1;
	if (e->spoof == XDPBAN_SPOOF_VERIFIED && !(flags & XDPBAN_CTR_VERIFIED))
		return XDPBAN_COUNT_UNVERIFIED;
	if (active && (flags & XDPBAN_CTR_DISPUTED))
		return XDPBAN_COUNT_SUSPECT;
	if (ref && xdpban_hop_differs(e->hop, XDPBAN_CTR_AUX_HOP(aux), e->tolerance)) {
		*dispute = 1;
		return XDPBAN_COUNT_SUSPECT;
	}
	return -1;
}

/* Counts one error event against key in its group g: the threshold rule's counter step with
 * the spoof defence in front of it. enum xdpban_count_result; *count gets the new count when
 * counted, and *ref the counter (for a reset after a ban). No increment is lost between CPUs:
 * every change is a compare-and-swap of val, retried; under extreme contention the last try
 * adds without looking at the window. */
XDPBAN_INLINE int xdpban_ctr_count(struct xdpban_group *g, const struct xdpban_key *key,
				   const struct xdpban_error *e, __u32 *count,
				   struct xdpban_ctr_ref *ref)
{
	for (int round = 0; round < 4; round++) {
		if (!xdpban_ctr_find(g, key, ref)) {
			int ret;

			if (e->spoof == XDPBAN_SPOOF_VERIFIED && e->hop != XDPBAN_HOP_NONE)
				return XDPBAN_COUNT_UNVERIFIED;
			ret = xdpban_ctr_insert(g, key, e->now_s, e->window_s, 0, e->n,
						xdpban_aux_new_window(0, e), ref);
			if (ret < 0)
				return XDPBAN_COUNT_FULL;
			if (ret == 0) {
				*count = e->n;
				return XDPBAN_COUNT_COUNTED;
			}
			/* another CPU inserted it meanwhile: count on it below */
		}
		for (int tries = 0; tries < 8; tries++) {
			__u32 aux = xdpban_ctl_aux(ref->ctl), c = XDPBAN_CTR_COUNT(ref->val);
			int active = xdpban_ctr_active(aux, ref->val, e->now_s, e->window_s);
			int dispute, stop = xdpban_spoof_check(aux, active, e, &dispute);
			__u32 gen = XDPBAN_CTL_GEN2(ref->ctl);
			__u64 next;

			if (stop >= 0) {
				if (dispute)
					xdpban_ctr_dispute(ref, aux, active, e->now_s);
				return stop;
			}
			next = active ? XDPBAN_CTR_PACK(XDPBAN_CTR_START(ref->val), gen,
							xdpban_count_plus(c, e->n))
				      : XDPBAN_CTR_PACK(e->now_s, gen, e->n);
			if (xdpban_ctr_swap(ref, next) == 0) {
				if (!active)
					xdpban_ctr_set_aux(ref, xdpban_aux_new_window(aux, e));
				*count = XDPBAN_CTR_COUNT(next);
				return XDPBAN_COUNT_COUNTED;
			}
			if (XDPBAN_CTR_GEN(ref->val) != gen)
				break; /* the slot went to another key: find ours again */
			if (tries == 6 && c < 0x7fffffffu) {
				/* Extreme contention: never lose the error, even if a window
				 * restart is missed. */
				next = __sync_fetch_and_add(&ref->slot->val, e->n);
				if (XDPBAN_CTR_GEN(next) == gen) {
					*count = XDPBAN_CTR_COUNT(next) + e->n;
					return XDPBAN_COUNT_COUNTED;
				}
				__sync_fetch_and_sub(&ref->slot->val, e->n); /* not ours after all */
				break;
			}
		}
	}
	return XDPBAN_COUNT_FULL;
}

/* After a ban the source starts over: count 0 (no window), no dispute, no first-error hop. */
XDPBAN_INLINE void xdpban_ctr_reset(struct xdpban_ctr_ref *ref, __u32 now_s)
{
	__u32 aux = xdpban_ctl_aux(ref->ctl);

	for (int tries = 0; tries < 4; tries++)
		if (xdpban_ctr_swap(ref, XDPBAN_CTR_PACK(now_s, XDPBAN_CTL_GEN2(ref->ctl), 0)) ==
			    0 ||
		    XDPBAN_CTR_GEN(ref->val) != XDPBAN_CTL_GEN2(ref->ctl))
			break;
	xdpban_ctr_set_aux(ref, XDPBAN_CTR_AUX(
		XDPBAN_CTR_AUX_HOP(aux),
		XDPBAN_CTR_AUX_FLAGS(aux) & ~(XDPBAN_CTR_DISPUTED | XDPBAN_CTR_HOPREF),
		XDPBAN_CTR_AUX_STAMP(aux)));
}

/* Records that key proved its return path at hop count `hop` (a segment of an established
 * TCP connection): its verified hop becomes the reference; if errors of this window came at
 * another hop count, they came from somewhere else and the source is disputed. 1 when the
 * record changed, 0 when it already said so this stamp period, -1 when there was no slot. */
XDPBAN_INLINE int xdpban_ctr_verify(struct xdpban_group *g, const struct xdpban_key *key,
				    __u8 hop, __u32 now_s, __u32 window_s, __u8 tolerance)
{
	__u32 want = XDPBAN_CTR_AUX(hop, XDPBAN_CTR_VERIFIED, xdpban_stamp(now_s));
	struct xdpban_ctr_ref ref = { 0 };

	for (int tries = 0; tries < 4; tries++) {
		__u32 aux;
		__u8 flags;
		int ret;

		if (!xdpban_ctr_find(g, key, &ref)) {
			ret = xdpban_ctr_insert(g, key, now_s, window_s, 1, 0, want, &ref);
			if (ret < 0)
				return -1;
			if (ret == 0)
				return 1;
		}
		aux = xdpban_ctl_aux(ref.ctl);
		flags = XDPBAN_CTR_AUX_FLAGS(aux);
		if ((flags & XDPBAN_CTR_VERIFIED) && XDPBAN_CTR_AUX_HOP(aux) == hop &&
		    XDPBAN_CTR_AUX_STAMP(aux) == xdpban_stamp(now_s))
			return 0; /* nothing new: no write */
		flags = (flags | XDPBAN_CTR_VERIFIED) & ~XDPBAN_CTR_HOPREF;
		if ((XDPBAN_CTR_AUX_FLAGS(aux) & XDPBAN_CTR_HOPREF) &&
		    xdpban_ctr_active(aux, ref.val, now_s, window_s) &&
		    xdpban_hop_differs(hop, XDPBAN_CTR_AUX_HOP(aux), tolerance))
			flags |= XDPBAN_CTR_DISPUTED;
		if (xdpban_ctr_set_aux(&ref, XDPBAN_CTR_AUX(hop, flags, xdpban_stamp(now_s))) == 0)
			return 1;
	}
	return -1;
}

#endif /* XDPBAN_TABLE_H */
