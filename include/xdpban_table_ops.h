/* xdpban_table_ops.h - the algorithms of the ban and counter tables (xdpban_table.h), compiled
 * twice: by clang into the BPF program and by gcc into userspace, which works on the same
 * memory through mmap. Both sides follow this one protocol; nothing may write a slot any other
 * way. The includer defines, before including:
 *   XDPBAN_TABLE_GROUP(tab, index)   struct xdpban_group * of group `index`, or NULL;
 *   XDPBAN_TABLE_BANIDX(tab, index)  __u64 * of a ban table's index word `index`, or NULL;
 * and every call takes `tab` (a BPF map, or userspace's mapping) and the number of groups.
 * Every loop is bounded.
 *
 * What the verifier must walk is kept small and flat: each loop's body is one call of a step
 * (XDPBAN_STEP), which the BPF side makes a global function, checked once on its own, and
 * userspace an inline one like the rest. A step takes at most five arguments, each a scalar or
 * a pointer to a sized type that it checks for NULL; it never dereferences a pointer it did not
 * get as an argument. A loop of inline code around inline code would be walked path by path,
 * once per iteration and per path into it (docs/datapath.md, "Verification cost").
 */
#ifndef XDPBAN_TABLE_OPS_H
#define XDPBAN_TABLE_OPS_H

#if !defined(XDPBAN_TAB) || !defined(XDPBAN_TABLE_GROUP) || !defined(XDPBAN_TABLE_BANIDX)
#error "define XDPBAN_TAB, XDPBAN_TABLE_GROUP and XDPBAN_TABLE_BANIDX before including xdpban_table_ops.h"
#endif

#include "xdpban_table.h"

#ifndef XDPBAN_STEP
#define XDPBAN_STEP XDPBAN_INLINE
#endif

#define XDPBAN_READ64(p) (*(volatile __u64 *)(p))
#define XDPBAN_WRITE64(p, v) (*(volatile __u64 *)(p) = (v))
#define XDPBAN_READ32(p) (*(volatile __u32 *)(p))
#define XDPBAN_WRITE32(p, v) (*(volatile __u32 *)(p) = (v))
#define XDPBAN_CAS64(p, old, new) __sync_val_compare_and_swap((__u64 *)(p), (old), (new))

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
 * when the slot's own bits are no longer `expect` (or kept changing). */
XDPBAN_INLINE int xdpban_ctl_swap(struct xdpban_slot *s, __u64 expect, __u64 next)
{
	for (int i = 0; i < 2; i++) {
		__u64 now = XDPBAN_READ64(&s->ctl);
		__u64 want = (next & ~XDPBAN_G0_BITS) | (now & XDPBAN_G0_BITS);

		if ((now ^ expect) & ~XDPBAN_G0_BITS)
			return -1;
		if (XDPBAN_CAS64(&s->ctl, now, want) == now)
			return 0;
	}
	return -1;
}

/* Reads a live slot: 1 it holds key (*ctl, *val filled), 0 it does not, -1 it changed while
 * it was read (the caller may read it once more). */
XDPBAN_INLINE int xdpban_slot_read(const struct xdpban_slot *s, const struct xdpban_key *key,
				   __u64 *ctl, __u64 *val)
{
	int is;

	*ctl = XDPBAN_READ64(&s->ctl);
	if (xdpban_ctl_state(*ctl) != XDPBAN_SLOT_LIVE)
		return 0;
	is = xdpban_slot_is(s, *ctl, key);
	*val = XDPBAN_READ64(&s->val);
	if (!xdpban_ctl_same(s, *ctl))
		return -1;
	return is;
}

/* Reads slot i of g for key, once more if it changed while read: 1 it holds key (*ctl, *val
 * filled), 0 not. A slot that changed twice is being written right now and counts as not
 * holding key yet (a ban being stored is not in force until it is published). */
XDPBAN_INLINE int xdpban_slot_holds(const struct xdpban_group *g, int i,
				    const struct xdpban_key *key, __u64 *ctl, __u64 *val)
{
	const struct xdpban_slot *s;
	int is;

	if (!g || !key || !ctl || !val)
		return 0;
	s = &g->slot[i & (XDPBAN_GROUP_SLOTS - 1)];
	is = xdpban_slot_read(s, key, ctl, val);

	if (is < 0)
		is = xdpban_slot_read(s, key, ctl, val);
	return is > 0;
}

/* Which slot of g holds key: its index, or -1. */
XDPBAN_INLINE int xdpban_group_find(const struct xdpban_group *g, const struct xdpban_key *key,
				    __u64 *ctl, __u64 *val)
{
	for (int i = 0; i < XDPBAN_GROUP_SLOTS; i++)
		if (xdpban_slot_holds(g, i, key, ctl, val))
			return i;
	return -1;
}

/* ---- bans ---- */

/* The group `step` groups after home, wrapping. */
XDPBAN_INLINE __u32 xdpban_group_next(__u32 home, __u32 step, __u32 groups)
{
	return home + step >= groups ? home + step - groups : home + step;
}

/* 0 when the key's home index word proves it has no ban (no slot of its home group has its
 * tag, and no ban lives past the group): the whole ban check of almost every source, one
 * cached read. 1: xdpban_ban_find must look. */
XDPBAN_INLINE int xdpban_ban_maybe(const XDPBAN_TAB *tab, __u32 groups, __u64 h)
{
	__u64 *w, word;

	if (!groups)
		return 0;
	w = XDPBAN_TABLE_BANIDX(tab, xdpban_hash_home(h, groups));
	if (!w)
		return 0;
	word = XDPBAN_READ64(w);
	return ((word & XDPBAN_IDX_OVF_MASK) != 0) | xdpban_idx_has(word, xdpban_hash_tag(h));
}

/* Which slot of ban group g holds key, whose tag is `tag`, where the group's index word is
 * `word`: the slot (ref's ctl and expires_ns filled), or -1. Only slots with the key's tag are
 * read. */
XDPBAN_STEP int xdpban_ban_group_find(const struct xdpban_group *g, __u64 word, __u32 tag,
				      const struct xdpban_key *key, struct xdpban_ban_ref *ref)
{
	if (!g || !key || !ref || !xdpban_idx_has(word, tag))
		return -1;
	for (int i = 0; i < XDPBAN_GROUP_SLOTS; i++)
		if (XDPBAN_IDX_TAG(word, i) == tag &&
		    xdpban_slot_holds(g, i, key, &ref->ctl, &ref->expires_ns))
			return i;
	return -1;
}

/* Finds the ban of key, whose hash is h: 1 (*ref filled) or 0. The probe reads a group's slots
 * only where the index word has the key's tag, and goes past a group only while its overflow
 * count says a ban of an earlier home lives beyond it. */
XDPBAN_STEP int xdpban_ban_find_hashed(const XDPBAN_TAB *tab, __u32 groups, __u64 h,
					 const struct xdpban_key *key, struct xdpban_ban_ref *ref)
{
	__u32 home, tag;

	if (!groups || !key || !ref)
		return 0;
	home = xdpban_hash_home(h, groups);
	tag = xdpban_hash_tag(h);
	for (__u32 step = 0; step < XDPBAN_BAN_PROBE && step < groups; step++) {
		__u32 gi = xdpban_group_next(home, step, groups);
		__u64 *w = XDPBAN_TABLE_BANIDX(tab, gi), word;
		struct xdpban_group *g = XDPBAN_TABLE_GROUP(tab, gi);
		int slot;

		if (!w || !g)
			return 0;
		word = XDPBAN_READ64(w);
		slot = xdpban_ban_group_find(g, word, tag, key, ref);
		if (slot >= 0) {
			ref->group = gi;
			ref->slot = (__u32)slot;
			ref->tag = tag;
			return 1;
		}
		if (!(word & XDPBAN_IDX_OVF_MASK))
			return 0;
	}
	return 0;
}

/* Finds key's ban: 1 (*ref filled) or 0. */
XDPBAN_INLINE int xdpban_ban_find(const XDPBAN_TAB *tab, __u32 groups, __u64 seed,
				  const struct xdpban_key *key, struct xdpban_ban_ref *ref)
{
	return key ? xdpban_ban_find_hashed(tab, groups, xdpban_key_hash(seed, key), key, ref) : 0;
}

/* Raises (+1) or lowers (-1) the overflow counts of the `steps` groups from home on: raised
 * before a ban beyond them can be seen, lowered only after it is gone. */
XDPBAN_STEP int xdpban_ovf_path(const XDPBAN_TAB *tab, __u32 groups, __u32 home, __u32 steps, int delta)
{
	for (__u32 step = 0; step < XDPBAN_BAN_PROBE - 1; step++) {
		__u64 *w;

		if (step >= steps)
			break;
		w = XDPBAN_TABLE_BANIDX(tab, xdpban_group_next(home, step, groups));
		if (!w)
			continue;
		if (delta > 0)
			__sync_fetch_and_add(w, XDPBAN_IDX_OVF_ONE);
		else
			__sync_fetch_and_sub(w, XDPBAN_IDX_OVF_ONE);
	}
	return 0;
}

/* How many groups past its home a ban at *ref lives. */
XDPBAN_INLINE __u32 xdpban_ban_steps(__u32 groups, __u64 seed, const struct xdpban_key *key,
				     const struct xdpban_ban_ref *ref)
{
	__u32 home = xdpban_key_home(seed, key, groups);

	return ref->group >= home ? ref->group - home : ref->group + groups - home;
}

/* Claims the first free slot of ban group g (BUSY, the next generation): the slot, with
 * *claimed its ctl, or -1 when the group has none. */
XDPBAN_STEP int xdpban_ban_group_claim(struct xdpban_group *g, __u64 *claimed)
{
	if (!g || !claimed)
		return -1;
	for (int i = 0; i < XDPBAN_GROUP_SLOTS; i++) {
		struct xdpban_slot *s = &g->slot[i];
		__u64 ctl = XDPBAN_READ64(&s->ctl);
		__u32 st = xdpban_ctl_state(ctl);

		if (st != XDPBAN_SLOT_EMPTY && st != XDPBAN_SLOT_TOMB)
			continue;
		*claimed = xdpban_ctl_claimed(ctl);
		if (XDPBAN_CAS64(&s->ctl, ctl, *claimed) == ctl)
			return i;
		/* taken meanwhile: the next slot */
	}
	return -1;
}

/* Claims a slot for a new ban of key (which the caller found absent): the first free slot in
 * the probe window; the overflow counts of the groups it passes are raised before anything
 * can see it. The slot stays BUSY until xdpban_ban_publish (write the cold data of struct
 * xdpban_ban_info in between). 0 and *ref, or -1: the window is full. */
XDPBAN_STEP int xdpban_ban_claim(const XDPBAN_TAB *tab, __u32 groups, __u64 seed,
				   const struct xdpban_key *key, struct xdpban_ban_ref *ref)
{
	__u32 home;
	__u64 h;

	if (!groups || !key || !ref)
		return -1;
	h = xdpban_key_hash(seed, key);
	home = xdpban_hash_home(h, groups);
	for (__u32 step = 0; step < XDPBAN_BAN_PROBE && step < groups; step++) {
		__u32 gi = xdpban_group_next(home, step, groups);
		struct xdpban_group *g = XDPBAN_TABLE_GROUP(tab, gi);
		int slot;

		if (!g)
			return -1;
		slot = xdpban_ban_group_claim(g, &ref->ctl);
		if (slot < 0)
			continue;
		xdpban_ovf_path(tab, groups, home, step, +1);
		ref->group = gi;
		ref->slot = (__u32)slot;
		ref->expires_ns = 0;
		ref->tag = xdpban_hash_tag(h);
		return 0;
	}
	return -1;
}

/* Index of a slot in the parallel array of cold ban data (struct xdpban_ban_info). */
XDPBAN_INLINE __u32 xdpban_ban_info_index(const struct xdpban_ban_ref *ref)
{
	return ref->group * XDPBAN_GROUP_SLOTS + ref->slot;
}

/* Publishes a claimed ban slot: key and expiry, then its tag in the index (a free slot's tag
 * is 0, so an OR sets it), then LIVE. */
XDPBAN_INLINE void xdpban_ban_publish(const XDPBAN_TAB *tab, struct xdpban_ban_ref *ref,
				      const struct xdpban_key *key, __u64 expires_ns, __u32 aux)
{
	struct xdpban_group *g = XDPBAN_TABLE_GROUP(tab, ref->group);
	__u64 *w = XDPBAN_TABLE_BANIDX(tab, ref->group);
	__u32 slot = ref->slot & (XDPBAN_GROUP_SLOTS - 1);
	struct xdpban_slot *s;
	__u64 live;

	if (!g || !w)
		return;
	s = &g->slot[slot];
	xdpban_slot_write_key(s, key);
	XDPBAN_WRITE64(&s->val, expires_ns);
	__sync_fetch_and_or(w, ((__u64)ref->tag & XDPBAN_IDX_TAG_MASK)
				       << XDPBAN_IDX_TAG_SHIFT(slot));
	live = xdpban_ctl_live(ref->ctl, key, aux);
	xdpban_ctl_swap(s, ref->ctl, live);
	ref->ctl = live;
	ref->expires_ns = expires_ns;
}

/* Frees the slot at *ref if it is still exactly what *ref says. It is taken back to BUSY
 * first, so that of the calls that race to delete it only one clears its tag; then the tag,
 * then TOMB, then the overflow counts. 1 if this call freed it. */
XDPBAN_STEP int xdpban_ban_delete(const XDPBAN_TAB *tab, __u32 groups, __u64 seed,
				    const struct xdpban_key *key, const struct xdpban_ban_ref *ref)
{
	struct xdpban_group *g;
	__u32 slot;
	__u64 busy, *w;

	if (!key || !ref)
		return 0;
	g = XDPBAN_TABLE_GROUP(tab, ref->group);
	w = XDPBAN_TABLE_BANIDX(tab, ref->group);
	slot = ref->slot & (XDPBAN_GROUP_SLOTS - 1);
	busy = (ref->ctl & ~XDPBAN_CTL_STATE_MASK) | XDPBAN_SLOT_BUSY;
	if (!g || !w)
		return 0;
	if (xdpban_ctl_swap(&g->slot[slot], ref->ctl, busy))
		return 0;
	__sync_fetch_and_and(w, ~(XDPBAN_IDX_TAG_MASK << XDPBAN_IDX_TAG_SHIFT(slot)));
	xdpban_ctl_swap(&g->slot[slot], busy, (busy & ~XDPBAN_CTL_STATE_MASK) | XDPBAN_SLOT_TOMB);
	xdpban_ovf_path(tab, groups, xdpban_key_home(seed, key, groups),
			xdpban_ban_steps(groups, seed, key, ref), -1);
	return 1;
}

/* ---- counters ---- */

/* Seconds since the window of val began, as of now_s. */
XDPBAN_INLINE __u32 xdpban_ctr_age(__u64 val, __u32 now_s)
{
	return (now_s - XDPBAN_CTR_START(val)) & XDPBAN_CTR_START_MASK;
}

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

/* The slot a counter ref points at in its group g. */
XDPBAN_INLINE struct xdpban_slot *xdpban_ctr_slot(struct xdpban_group *g,
						  const struct xdpban_ctr_ref *ref)
{
	return &g->slot[ref->slot & (XDPBAN_GROUP_SLOTS - 1)];
}

/* Looks for key in its group: 1 (*ref filled) or 0. */
XDPBAN_STEP int xdpban_ctr_find(struct xdpban_group *g, const struct xdpban_key *key,
				  struct xdpban_ctr_ref *ref)
{
	int i;

	if (!g || !key || !ref)
		return 0;
	i = xdpban_group_find(g, key, &ref->ctl, &ref->val);
	if (i < 0)
		return 0;
	ref->slot = (__u32)i;
	return 1;
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
		return (3ull << 62) + 0xffffu -
		       (__u16)(xdpban_stamp(now_s) - XDPBAN_CTR_AUX_STAMP(aux));
	}
	if (!xdpban_ctr_active(aux, val, now_s, window_s))
		return 1;
	/* lowest count first; of equal counts, the oldest window */
	return (2ull << 32) + ((__u64)XDPBAN_CTR_COUNT(val) << 30) +
	       (XDPBAN_CTR_START_MASK - xdpban_ctr_age(val, now_s));
}

/* One try at the group's insert lock: 0 taken, -1 another holds it. */
XDPBAN_INLINE int xdpban_group_trylock(struct xdpban_group *g)
{
	if (XDPBAN_READ64(&g->slot[0].ctl) & XDPBAN_G0_LOCK)
		return -1;
	return __sync_fetch_and_or(&g->slot[0].ctl, XDPBAN_G0_LOCK) & XDPBAN_G0_LOCK ? -1 : 0;
}

#define XDPBAN_LOCK_TRIES 32

/* Takes the group's insert lock: 0, or -1 after XDPBAN_LOCK_TRIES (another CPU kept it). An
 * includer may define XDPBAN_TABLE_LOCK(g) to wait longer: the BPF program waits through
 * bpf_loop, which the verifier checks once however long the wait, where a loop here is checked
 * once per iteration (a lock holder interrupted mid-insert outlasts 32 tries, and the error
 * that waited would be lost). */
XDPBAN_INLINE int xdpban_group_lock(struct xdpban_group *g)
{
#ifdef XDPBAN_TABLE_LOCK
	return XDPBAN_TABLE_LOCK(g);
#else
	for (int i = 0; i < XDPBAN_LOCK_TRIES; i++)
		if (xdpban_group_trylock(g) == 0)
			return 0;
	return -1;
#endif
}

XDPBAN_INLINE void xdpban_group_unlock(struct xdpban_group *g)
{
	__sync_fetch_and_and(&g->slot[0].ctl, ~XDPBAN_G0_LOCK);
}

/* The slot of g a new counter takes: the cheapest to evict (xdpban_ctr_cost), of equal costs
 * the first from the key's own start slot, so that a flood of fresh sources (all count 1, all
 * this second) spreads its evictions over the whole group; -1 when none may be taken. */
XDPBAN_INLINE int xdpban_ctr_victim(const struct xdpban_group *g, const struct xdpban_key *key,
				    const struct xdpban_ctr_new *nw)
{
	int victim = -1, start = xdpban_key_spread(key);
	__u64 best = ~0ull;

	for (int j = 0; j < XDPBAN_GROUP_SLOTS; j++) {
		int i = (start + j) & (XDPBAN_GROUP_SLOTS - 1);
		__u64 cost = xdpban_ctr_cost(XDPBAN_READ64(&g->slot[i].ctl),
					     XDPBAN_READ64(&g->slot[i].val), nw->now_s,
					     nw->window_s, nw->verified);

		if (cost < best) {
			best = cost;
			victim = i;
		}
	}
	return victim;
}

/* Writes a new counter into slot i of g, which the caller holds the group's lock for: claimed
 * (if it may still go), key and val written, published. 0 and *ref, or -1. */
XDPBAN_INLINE int xdpban_ctr_take(struct xdpban_group *g, int i, const struct xdpban_key *key,
				  const struct xdpban_ctr_new *nw, struct xdpban_ctr_ref *ref)
{
	struct xdpban_slot *s = &g->slot[i & (XDPBAN_GROUP_SLOTS - 1)];
	__u64 ctl = XDPBAN_READ64(&s->ctl), claimed, val;

	if (xdpban_ctr_cost(ctl, XDPBAN_READ64(&s->val), nw->now_s, nw->window_s,
			    nw->verified) == ~0ull)
		return -1;
	claimed = xdpban_ctl_claimed(ctl);
	/* Inserts are serialised by the lock; only an aux update (a dispute, a verification) of
	 * the victim can race this, and its swap retries. */
	if (xdpban_ctl_swap(s, ctl, claimed))
		return -1;
	xdpban_slot_write_key(s, key);
	val = XDPBAN_CTR_PACK(nw->now_s, XDPBAN_CTL_GEN2(claimed), nw->count);
	XDPBAN_WRITE64(&s->val, val);
	ctl = xdpban_ctl_live(claimed, key, nw->aux);
	xdpban_ctl_swap(s, claimed, ctl);
	ref->slot = (__u32)(i & (XDPBAN_GROUP_SLOTS - 1));
	ref->ctl = ctl;
	ref->val = val;
	return 0;
}

/* Puts a new counter for key into its group, under the group's lock: key (if another CPU
 * inserted it meanwhile, *ref is that one and 1 is returned), else the cheapest slot is
 * claimed and published with nw's val and aux: 0 and *ref. -1: no slot may be taken (every
 * one busy or protected); XDPBAN_CTR_INSERT_BUSY: the lock could not be had (another CPU is
 * inserting, most often this same key: its first errors arriving on several CPUs at once). */
#define XDPBAN_CTR_INSERT_BUSY (-2)
XDPBAN_STEP int xdpban_ctr_insert(struct xdpban_group *g, const struct xdpban_key *key,
				  const struct xdpban_ctr_new *nw, struct xdpban_ctr_ref *ref)
{
	int ret = -1, victim;

	if (!g || !key || !nw || !ref)
		return -1;
	if (xdpban_group_lock(g))
		return XDPBAN_CTR_INSERT_BUSY;
	if (xdpban_ctr_find(g, key, ref)) {
		ret = 1;
	} else {
		victim = xdpban_ctr_victim(g, key, nw);
		if (victim >= 0)
			ret = xdpban_ctr_take(g, victim, key, nw, ref);
	}
	xdpban_group_unlock(g);
	return ret;
}

/* Replaces a found counter's val (compare-and-swap with ref->val): 0, or -1 when it changed
 * (counted meanwhile, or the slot went to another key; the generation bits see to that). */
XDPBAN_INLINE int xdpban_ctr_swap(struct xdpban_group *g, struct xdpban_ctr_ref *ref, __u64 next)
{
	__u64 seen = XDPBAN_CAS64(&xdpban_ctr_slot(g, ref)->val, ref->val, next);

	if (seen != ref->val) {
		ref->val = seen;
		return -1;
	}
	ref->val = next;
	return 0;
}

/* Replaces a found counter's aux if the slot still holds the same key: 0 or -1. */
XDPBAN_INLINE int xdpban_ctr_set_aux(struct xdpban_group *g, struct xdpban_ctr_ref *ref,
				     __u32 aux)
{
	__u64 next = xdpban_ctl_with_aux(ref->ctl, aux);

	if (xdpban_ctl_swap(xdpban_ctr_slot(g, ref), ref->ctl, next))
		return -1;
	ref->ctl = next;
	return 0;
}

/* ---- counting, and the spoof defence (docs/datapath.md, sections 4 and 8) ---- */

XDPBAN_INLINE int xdpban_hop_differs(__u8 a, __u8 b, __u8 tolerance)
{
	return (a > b ? a - b : b - a) > tolerance;
}

/* The count after adding n, saturating. */
XDPBAN_INLINE __u32 xdpban_count_plus(__u32 count, __u32 n)
{
	return count + n < count ? 0xffffffffu : count + n;
}

/* aux after a window (re)starts with an error of hop `hop`: a verified source keeps its
 * record; any other gets this error's hop count as its reference. Disputes end with the
 * window that had them; the window's classes are this error's. */
XDPBAN_INLINE __u32 xdpban_aux_new_window(__u32 aux, const struct xdpban_error *e)
{
	__u8 flags = (XDPBAN_CTR_AUX_FLAGS(aux) & ~(XDPBAN_CTR_DISPUTED | XDPBAN_CTR_HOPREF |
						    XDPBAN_CTR_BANNING | XDPBAN_CTR_CLASSES_FLAGS)) |
		     XDPBAN_CTR_CLASSES_FLAG(e->classes);

	if (flags & XDPBAN_CTR_VERIFIED)
		return XDPBAN_CTR_AUX(XDPBAN_CTR_AUX_HOP(aux), flags, XDPBAN_CTR_AUX_STAMP(aux));
	if (e->spoof == XDPBAN_SPOOF_OFF || e->hop == XDPBAN_HOP_NONE)
		return XDPBAN_CTR_AUX(0, flags, 0);
	return XDPBAN_CTR_AUX(e->hop, flags | XDPBAN_CTR_HOPREF, 0);
}

/* Adds the classes of an error counted in the current window, writing only when one is new
 * (a source repeats its kind of error, so nearly never). */
XDPBAN_INLINE void xdpban_ctr_add_classes(struct xdpban_group *g, struct xdpban_ctr_ref *ref,
					  __u32 aux, __u8 classes)
{
	__u8 flags = XDPBAN_CTR_AUX_FLAGS(aux);

	if ((XDPBAN_CTR_FLAGS_CLASSES(flags) & classes) == classes)
		return;
	xdpban_ctr_set_aux(g, ref, XDPBAN_CTR_AUX(XDPBAN_CTR_AUX_HOP(aux),
						  flags | XDPBAN_CTR_CLASSES_FLAG(classes),
						  XDPBAN_CTR_AUX_STAMP(aux)));
}

/* Marks a counter disputed for the rest of its window; with no window, one starts now (with
 * no errors), so that the dispute lasts window_s either way. */
XDPBAN_INLINE void xdpban_ctr_dispute(struct xdpban_group *g, struct xdpban_ctr_ref *ref,
				      __u32 aux, int active, __u32 now_s)
{
	__u8 flags = XDPBAN_CTR_AUX_FLAGS(aux) | XDPBAN_CTR_DISPUTED;

	if (!active) {
		if (xdpban_ctr_swap(g, ref, XDPBAN_CTR_PACK(now_s, XDPBAN_CTL_GEN2(ref->ctl), 0)))
			return; /* counted meanwhile: the next error decides again */
		flags &= ~XDPBAN_CTR_HOPREF;
	}
	xdpban_ctr_set_aux(g, ref, XDPBAN_CTR_AUX(XDPBAN_CTR_AUX_HOP(aux), flags,
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

/* xdpban_ctr_try's answers besides enum xdpban_count_result. */
#define XDPBAN_CTR_TRY_AGAIN (-1) /* counted meanwhile by another CPU: ref->val is the new val */
#define XDPBAN_CTR_TRY_LOST (-2)  /* the slot went to another key: find ours again */

/* One try at counting e on the counter at *ref of g (ctl and val read together): the spoof
 * defence, then a compare-and-swap of val. enum xdpban_count_result (*count the new count when
 * counted), or XDPBAN_CTR_TRY_AGAIN or _LOST. `last`: under extreme contention (the third try),
 * add without looking at the window rather than ever lose the error. */
XDPBAN_STEP int xdpban_ctr_try(struct xdpban_group *g, const struct xdpban_error *e, int last,
			       __u32 *count, struct xdpban_ctr_ref *ref)
{
	__u32 aux, c, gen;
	int active, dispute, stop;
	__u64 next;

	if (!g || !e || !count || !ref)
		return XDPBAN_COUNT_FULL;
	aux = xdpban_ctl_aux(ref->ctl);
	c = XDPBAN_CTR_COUNT(ref->val);
	gen = XDPBAN_CTL_GEN2(ref->ctl);
	active = xdpban_ctr_active(aux, ref->val, e->now_s, e->window_s);
	stop = xdpban_spoof_check(aux, active, e, &dispute);
	if (stop >= 0) {
		if (dispute)
			xdpban_ctr_dispute(g, ref, aux, active, e->now_s);
		return stop;
	}
	next = active ? XDPBAN_CTR_PACK(XDPBAN_CTR_START(ref->val), gen, xdpban_count_plus(c, e->n))
		      : XDPBAN_CTR_PACK(e->now_s, gen, e->n);
	if (xdpban_ctr_swap(g, ref, next) == 0) {
		if (!active)
			xdpban_ctr_set_aux(g, ref, xdpban_aux_new_window(aux, e));
		else
			xdpban_ctr_add_classes(g, ref, aux, e->classes);
		*count = XDPBAN_CTR_COUNT(next);
		return XDPBAN_COUNT_COUNTED;
	}
	if (XDPBAN_CTR_GEN(ref->val) != gen)
		return XDPBAN_CTR_TRY_LOST;
	if (!last || c >= 0x7fffffffu)
		return XDPBAN_CTR_TRY_AGAIN;
	next = __sync_fetch_and_add(&xdpban_ctr_slot(g, ref)->val, e->n);
	if (XDPBAN_CTR_GEN(next) == gen) {
		*count = XDPBAN_CTR_COUNT(next) + e->n;
		return XDPBAN_COUNT_COUNTED;
	}
	__sync_fetch_and_sub(&xdpban_ctr_slot(g, ref)->val, e->n); /* not ours after all */
	return XDPBAN_CTR_TRY_LOST;
}

/* Counts one error event against key in its group g: the threshold rule's counter step with
 * the spoof defence in front of it. enum xdpban_count_result; *count gets the new count when
 * counted, and *ref the counter (for a reset after a ban). No increment is lost between CPUs:
 * every change is a compare-and-swap of val, retried; under extreme contention the third try
 * adds without looking at the window. */
XDPBAN_STEP int xdpban_ctr_count(struct xdpban_group *g, const struct xdpban_key *key,
				   const struct xdpban_error *e, __u32 *count,
				   struct xdpban_ctr_ref *ref)
{
	if (!g || !key || !e || !count || !ref)
		return XDPBAN_COUNT_FULL;
	for (int round = 0; round < 2; round++) {
		if (!xdpban_ctr_find(g, key, ref)) {
			struct xdpban_ctr_new nw = { .now_s = e->now_s, .window_s = e->window_s,
						     .count = e->n,
						     .aux = xdpban_aux_new_window(0, e) };
			int ret;

			if (e->spoof == XDPBAN_SPOOF_VERIFIED && e->hop != XDPBAN_HOP_NONE)
				return XDPBAN_COUNT_UNVERIFIED;
			ret = xdpban_ctr_insert(g, key, &nw, ref);
			if (ret == XDPBAN_CTR_INSERT_BUSY)
				continue; /* look again: the other inserter is most likely done */
			if (ret < 0)
				return XDPBAN_COUNT_FULL;
			if (ret == 0) {
				*count = e->n;
				return XDPBAN_COUNT_COUNTED;
			}
			/* another CPU inserted it meanwhile: count on it below */
		}
		for (int tries = 0; tries < 4; tries++) {
			int ret = xdpban_ctr_try(g, e, tries == 2, count, ref);

			if (ret == XDPBAN_CTR_TRY_LOST)
				break;
			if (ret != XDPBAN_CTR_TRY_AGAIN)
				return ret;
		}
	}
	return XDPBAN_COUNT_FULL;
}

/* Claims the right to ban a counter over the limit: 1 this caller bans, 0 another error is
 * banning it already, so that two CPUs over the limit at once store one ban. */
XDPBAN_INLINE int xdpban_ctr_claim_ban(struct xdpban_group *g, struct xdpban_ctr_ref *ref)
{
	for (int tries = 0; tries < 2; tries++) {
		__u32 aux = xdpban_ctl_aux(ref->ctl);
		__u64 ctl;

		if (XDPBAN_CTR_AUX_FLAGS(aux) & XDPBAN_CTR_BANNING)
			return 0;
		if (xdpban_ctr_set_aux(g, ref, XDPBAN_CTR_AUX(XDPBAN_CTR_AUX_HOP(aux),
							     XDPBAN_CTR_AUX_FLAGS(aux) |
								     XDPBAN_CTR_BANNING,
							     XDPBAN_CTR_AUX_STAMP(aux))) == 0)
			return 1;
		ctl = XDPBAN_READ64(&xdpban_ctr_slot(g, ref)->ctl);
		if (((ctl ^ ref->ctl) & ~(XDPBAN_G0_BITS | (0xffffffffull << XDPBAN_CTL_AUX_SHIFT))))
			return 1; /* the slot went to another key: nothing to serialise on */
		ref->ctl = ctl;
	}
	return 1;
}

/* After a ban the source starts over: count 0 (no window), no dispute, no first-error hop, no
 * classes. */
XDPBAN_INLINE void xdpban_ctr_reset(struct xdpban_group *g, struct xdpban_ctr_ref *ref,
				    __u32 now_s)
{
	__u32 aux = xdpban_ctl_aux(ref->ctl);

	for (int tries = 0; tries < 4; tries++)
		if (xdpban_ctr_swap(g, ref, XDPBAN_CTR_PACK(now_s, XDPBAN_CTL_GEN2(ref->ctl), 0)) ==
			    0 ||
		    XDPBAN_CTR_GEN(ref->val) != XDPBAN_CTL_GEN2(ref->ctl))
			break;
	xdpban_ctr_set_aux(g, ref, XDPBAN_CTR_AUX(
		XDPBAN_CTR_AUX_HOP(aux),
		XDPBAN_CTR_AUX_FLAGS(aux) & ~(XDPBAN_CTR_DISPUTED | XDPBAN_CTR_HOPREF |
					      XDPBAN_CTR_BANNING | XDPBAN_CTR_CLASSES_FLAGS),
		XDPBAN_CTR_AUX_STAMP(aux)));
}

/* The aux that records a verification at hop count `hop` on a counter whose aux is `aux`: its
 * verified hop becomes the reference; if errors of its window came at another hop count, they
 * came from somewhere else and the source is disputed. */
XDPBAN_INLINE __u32 xdpban_aux_verified(__u32 aux, __u64 val, __u8 hop, __u32 now_s,
					__u32 window_s, __u8 tolerance)
{
	__u8 flags = (XDPBAN_CTR_AUX_FLAGS(aux) | XDPBAN_CTR_VERIFIED) & ~XDPBAN_CTR_HOPREF;

	if ((XDPBAN_CTR_AUX_FLAGS(aux) & XDPBAN_CTR_HOPREF) &&
	    xdpban_ctr_active(aux, val, now_s, window_s) &&
	    xdpban_hop_differs(hop, XDPBAN_CTR_AUX_HOP(aux), tolerance))
		flags |= XDPBAN_CTR_DISPUTED;
	return XDPBAN_CTR_AUX(hop, flags, xdpban_stamp(now_s));
}

/* Records that key proved its return path at hop count `hop` (a segment of an established
 * TCP connection): its verified hop becomes the reference; if errors of this window came at
 * another hop count, they came from somewhere else and the source is disputed. 1 when the
 * record changed, 0 when it already said so this stamp period, -1 when there was no slot. */
XDPBAN_INLINE int xdpban_ctr_verify(struct xdpban_group *g, const struct xdpban_key *key,
				    __u8 hop, __u32 now_s, __u32 window_s, __u8 tolerance)
{
	struct xdpban_ctr_new nw = { .now_s = now_s, .window_s = window_s, .verified = 1,
				     .aux = XDPBAN_CTR_AUX(hop, XDPBAN_CTR_VERIFIED,
							   xdpban_stamp(now_s)) };
	struct xdpban_ctr_ref ref = { 0 };

	for (int tries = 0; tries < 4; tries++) {
		__u32 aux;
		int ret;

		if (!xdpban_ctr_find(g, key, &ref)) {
			ret = xdpban_ctr_insert(g, key, &nw, &ref);
			if (ret < 0)
				return -1;
			if (ret == 0)
				return 1;
		}
		aux = xdpban_ctl_aux(ref.ctl);
		if ((XDPBAN_CTR_AUX_FLAGS(aux) & XDPBAN_CTR_VERIFIED) &&
		    XDPBAN_CTR_AUX_HOP(aux) == hop &&
		    XDPBAN_CTR_AUX_STAMP(aux) == xdpban_stamp(now_s))
			return 0; /* nothing new: no write */
		if (xdpban_ctr_set_aux(g, &ref, xdpban_aux_verified(aux, ref.val, hop, now_s,
								    window_s, tolerance)) == 0)
			return 1;
	}
	return -1;
}

#endif /* XDPBAN_TABLE_OPS_H */
