/* count.h - per-source state: the ban check and error counting with the threshold rule and
 * the spoof defence (docs/datapath.md, sections 4 and 8), for keys made by xdpban_key_make()
 * (xdpban_state.h), on the tables of include/xdpban_table.h. The table algorithms themselves
 * are include/xdpban_table_ops.h, shared with userspace; this file only feeds them. Shared by
 * the XDP program and the report program so that both follow one rule. Never decides a
 * packet's verdict. */
#ifndef XDPBAN_BPF_COUNT_H
#define XDPBAN_BPF_COUNT_H

#include "clock.h"
#include "config.h"
#include "maps.h"
#include "stats.h"
#include "xdpban_report.h"
#include "xdpban_time.h"

static __always_inline struct xdpban_group *bpf_group_at(void *map, __u32 index)
{
	return bpf_map_lookup_elem(map, &index);
}

static __always_inline __u64 *bpf_banidx_at(__u32 index)
{
	return bpf_map_lookup_elem(&xdpban_banidx, &index);
}

/* The wait for a group's insert lock (xdpban_group_lock): up to XDPBAN_LOCK_WAIT tries, about
 * a hundred microseconds, through bpf_loop so that the verifier checks one try, not each. The
 * lock is held for one insert, a few hundred nanoseconds, unless its holder is interrupted. */
#define XDPBAN_LOCK_WAIT 16384

int group_lock(struct xdpban_group *g);
#define XDPBAN_TABLE_LOCK(g) group_lock(g)
/* Only the ban table is reached through `tab` (the counters' group is looked up by the caller),
 * so the BPF side's tab is a placeholder: a step may take a pointer to it, not to a map. */
struct bpf_tab {
	__u32 unused;
};
#define XDPBAN_TAB struct bpf_tab
#define BAN_TAB (&(struct bpf_tab){ 0 }) /* what the ban table's calls take as `tab` */
/* The empty asm keeps clang from leaving the unused `tab` argument unset: the verifier checks
 * every pointer argument of a global function, used or not. */
#define XDPBAN_TABLE_GROUP(tab, index)                                                          \
	({                                                                                     \
		asm volatile("" : : "r"(tab));                                                 \
		bpf_group_at(&xdpban_bans, (index));                                           \
	})
#define XDPBAN_TABLE_BANIDX(tab, index)                                                         \
	({                                                                                     \
		asm volatile("" : : "r"(tab));                                                 \
		bpf_banidx_at(index);                                                          \
	})
/* The table protocol's steps are global functions: each verified once (xdpban_table_ops.h).
 * A build may define it otherwise (inline) to see what the verifier makes of that. */
#ifndef XDPBAN_STEP
#define XDPBAN_STEP __attribute__((noinline))
#endif
#include "xdpban_table_ops.h"

struct lock_wait {
	struct xdpban_group *g;
	long taken;
};

static long lock_try(__u32 i, void *ctx)
{
	struct lock_wait *w = ctx;

	w->taken = w->g && xdpban_group_trylock(w->g) == 0;
	return w->taken; /* 1 stops the loop */
}

/* Takes g's insert lock: 0, or -1 when another CPU held it for the whole wait. A global
 * function of its own, so that the verifier checks the bpf_loop callback from one caller state
 * only (it checks a callback as if called any number of times, once per state that reaches
 * the call). */
__attribute__((noinline)) int group_lock(struct xdpban_group *g)
{
	struct lock_wait w = { .g = g };

	if (!g)
		return -1;
	if (xdpban_group_trylock(g) == 0)
		return 0; /* nearly always: a flood of new sources pays no helper call */
	bpf_loop(XDPBAN_LOCK_WAIT, lock_try, &w, 0);
	return w.taken ? 0 : -1;
}

/* The tables' hash seed. The first reader to find none chooses it (a plain `ip link` load has
 * no loader to do it); every later reader, here or in userspace, gets the same one. */
static __always_inline __u64 table_seed(void)
{
	__u32 zero = 0;
	__u64 *seed = bpf_map_lookup_elem(&xdpban_seed, &zero), fresh;

	if (!seed)
		return 0;
	fresh = *(volatile __u64 *)seed;
	if (fresh)
		return fresh;
	fresh = ((__u64)bpf_get_prandom_u32() << 32 | bpf_get_prandom_u32()) | 1;
	__sync_val_compare_and_swap(seed, 0, fresh);
	return *(volatile __u64 *)seed;
}

/* The table operations are global functions (not inlined): the verifier checks each once, on
 * its own, where inlined into every caller their bounded loops would multiply. Their pointer
 * arguments may be NULL as far as the verifier knows, so each checks. */

/* One more packet of the ban at ref on this CPU's drop count (xdpban_table.h): a per-CPU
 * word, so a flood spread over CPUs shares no cache line. */
static __always_inline void ban_drop_count(const struct xdpban_ban_ref *ref)
{
	__u32 index = xdpban_ban_info_index(ref);
	__u64 *word = bpf_map_lookup_elem(&xdpban_bandrops, &index);

	if (word)
		*word = xdpban_drops_next(*word, ref->ctl);
}

/* 1 if the key, whose hash is h, is under a ban that has not expired; with drop, the packet
 * is counted as one the ban dropped. An expired ban is lifted on the way. Called only when
 * ban_check's index word says the key may have one. */
__attribute__((noinline)) int ban_active(const struct xdpban_key *key, __u64 seed, __u64 h,
					 __u64 bytes, int drop)
{
	__u32 groups = map_entries(&xdpban_bans);
	struct xdpban_ban_ref ref = {};

	if (!key || !xdpban_ban_find_hashed(BAN_TAB, groups, h, key, &ref))
		return 0;
	/* A permanent ban needs no clock. */
	if (ref.expires_ns == 0 || clock_now_ns() < ref.expires_ns) {
		if (drop)
			ban_drop_count(&ref);
		return 1;
	}
	if (xdpban_ban_delete(BAN_TAB, groups, seed, key, &ref))
		stat_add(XDPBAN_STAT_BANS_EXPIRED, 1, bytes);
	return 0;
}

/* The ban check of stage 4: inline, so that a source whose home index word rules out a ban
 * (nearly all) pays one cached read and no call. drop: the packet is one the ban drops (or
 * observes), for its drop count; a report is not. */
static __always_inline int ban_check(const struct xdpban_key *key, __u64 seed, __u64 h,
				     __u64 bytes, int drop)
{
	if (!xdpban_ban_maybe(BAN_TAB, map_entries(&xdpban_bans), h))
		return 0;
	return ban_active(key, seed, h, bytes, drop);
}

/* A new ban, for ban_store and ban_event (global functions take at most five arguments). */
struct ban_new {
	__u64 start_ns, expires_ns;
	__u32 count;
	__u16 port;  /* the crossing error's, as struct xdpban_ban_info */
	__u8 proto, rule;
	__u8 reason, classes;
	__u8 pad[6];
};

static __always_inline void ban_event(const struct xdpban_key *key, const struct ban_new *b,
				      __u64 bytes)
{
	struct xdpban_event *ev = bpf_ringbuf_reserve(&xdpban_events, sizeof(*ev), 0);

	if (!ev) {
		stat_add(XDPBAN_STAT_EVENTS_LOST, 1, bytes);
		return;
	}
	__builtin_memcpy(&ev->key, key, sizeof(*key));
	ev->port = b->port;
	ev->rule = b->rule;
	ev->pad = 0;
	ev->time_ns = b->start_ns;
	ev->expires_ns = b->expires_ns;
	ev->count = b->count;
	ev->reason = b->reason;
	ev->classes = b->classes;
	ev->proto = b->proto;
	ev->flags = config_get()->mode == XDPBAN_MODE_OBSERVE ? XDPBAN_EVENT_OBSERVED : 0;
	bpf_ringbuf_submit(ev, 0);
}

/* Stores a new ban of key: 0, or -1 when its probe window has no room. */
__attribute__((noinline)) int ban_store(const struct xdpban_key *key, __u64 seed,
					const struct ban_new *b)
{
	__u32 groups = map_entries(&xdpban_bans), index;
	struct xdpban_ban_ref ref = {};
	struct xdpban_ban_info *info;

	if (!key || !b || xdpban_ban_claim(BAN_TAB, groups, seed, key, &ref))
		return -1;
	index = xdpban_ban_info_index(&ref);
	info = bpf_map_lookup_elem(&xdpban_baninfo, &index);
	if (info) {
		info->start_ns = b->start_ns;
		info->count = b->count;
		info->port = b->port;
		info->proto = b->proto;
		info->rule = b->rule;
	}
	xdpban_ban_publish(BAN_TAB, &ref, key, b->expires_ns,
			   XDPBAN_BAN_AUX(b->reason, b->classes));
	return 0;
}

/* Starts reading key's counter group without waiting for it: called for an error packet
 * before the policy and ban check, so that the group's cache miss (a table of a million
 * sources misses on every error) runs beside theirs instead of after them. The value is left
 * unused, so nothing waits on the loads; count_errors finds the lines in the cache. Reads only:
 * no verdict depends on it. */
static __always_inline void counter_warm(__u64 h)
{
	__u32 home = xdpban_hash_home(h, map_entries(&xdpban_counts));
	struct xdpban_group *g = bpf_map_lookup_elem(&xdpban_counts, &home);

	/* A group is two cache lines, and the count reads all four slots: one load in each. */
	if (g)
		asm volatile("" : : "r"(XDPBAN_READ64(&g->slot[0].ctl)),
			     "r"(XDPBAN_READ64(&g->slot[XDPBAN_GROUP_SLOTS / 2].ctl)));
}

/* The statistics slot of an error the spoof defence (or a full group) kept from counting. */
static __always_inline __u32 uncounted_stat(int result)
{
	switch (result) {
	case XDPBAN_COUNT_SUSPECT:
		return XDPBAN_STAT_ERRORS_SUSPECT;
	case XDPBAN_COUNT_UNVERIFIED:
		return XDPBAN_STAT_ERRORS_UNVERIFIED;
	}
	return XDPBAN_STAT_COUNTER_FULL;
}

/* What count_errors counts, and (out) what it found; the ban time of the error's rule is kept
 * for ban_create, which then reads no configuration. (The configuration itself cannot be
 * passed: the verifier takes a pointer argument of a global function as writable, and the
 * entry is read-only. Nor the clock reading: 8 more bytes here pass the verifier's 512 bytes
 * of stack on 6.1, and a ban is rare.) */
struct count_req {
	__u64 bytes;  /* of the packet, for the statistics (0 for a report) */
	__u32 n;      /* errors */
	__u32 count;  /* out: the source's new count */
	__u32 ban_s;  /* out: the ban time of the error's rule */
	__u16 port;   /* the packet's TCP or UDP destination port, host order; 0 for none */
	__u8 proto;   /* its IP protocol, IPPROTO_*; 0 for none (a report, a malformed packet) */
	__u8 classes; /* enum xdpban_class bits */
	__u8 reason;  /* enum xdpban_ban_reason of a ban this creates */
	__u8 hop;     /* the packet's hop count, XDPBAN_HOP_NONE for a report */
	__u8 rule;    /* out: enum xdpban_rule_id of the error's limits */
	__u8 pad;
};

/* Clears a flag of a counter's aux. */
static __always_inline void counter_unflag(struct xdpban_group *g, struct xdpban_ctr_ref *ref,
					  __u8 flag)
{
	__u32 aux = xdpban_ctl_aux(ref->ctl);

	xdpban_ctr_set_aux(g, ref, XDPBAN_CTR_AUX(XDPBAN_CTR_AUX_HOP(aux),
					      XDPBAN_CTR_AUX_FLAGS(aux) & ~flag,
					      XDPBAN_CTR_AUX_STAMP(aux)));
}

/* count_errors' answer when this error crossed the limit: the caller bans with ban_create.
 * (Two calls, not one inside the other: together their stacks would pass the verifier's
 * 512 bytes.) */
#define COUNT_CROSSED 0x100

/* Counts r->n errors against key, under the configuration in force and the limits of the
 * error's rule (xdpban_limits_of). Returns XDPBAN_REPORT_COUNTED, _NOT_COUNTED, _BANNED (over
 * the limit, and another error bans it), or COUNT_CROSSED; r->count gets the new count, and
 * r->ban_s and r->rule what ban_create needs. */
__attribute__((noinline)) int count_errors(const struct xdpban_key *key, __u64 seed,
					   struct count_req *r)
{
	const struct xdpban_config *cfg = config_get();
	__u32 groups = map_entries(&xdpban_counts), home, count = 0;
	struct xdpban_ctr_ref ref = {};
	struct xdpban_error e = {};
	struct xdpban_limits lim;
	struct xdpban_group *g;
	int result;

	if (!key || !r || !groups)
		return XDPBAN_REPORT_NOT_COUNTED;
	xdpban_limits_of(cfg, r->classes, r->port, &lim);
	r->ban_s = lim.ban_s;
	r->rule = lim.rule;
	e.n = r->n;
	e.now_s = clock_now_ns() / NS_PER_SEC;
	e.window_s = lim.window_s;
	e.hop = r->hop;
	e.spoof = cfg->spoof;
	e.tolerance = cfg->hop_tolerance;
	e.classes = r->classes;
	r->count = 0;
	home = xdpban_key_home(seed, key, groups);
	g = bpf_map_lookup_elem(&xdpban_counts, &home);
	if (!g)
		return XDPBAN_REPORT_NOT_COUNTED;
	result = xdpban_ctr_count(g, key, &e, &count, &ref);
	if (result != XDPBAN_COUNT_COUNTED) {
		stat_add(uncounted_stat(result), r->n, r->bytes);
		return XDPBAN_REPORT_NOT_COUNTED;
	}
	stat_add(XDPBAN_STAT_ERRORS, r->n, r->bytes);
	r->count = count;
	if (count <= lim.limit)
		return XDPBAN_REPORT_COUNTED;
	/* One error bans: a second CPU over the limit at the same moment must not store the ban
	 * twice. */
	return xdpban_ctr_claim_ban(g, &ref) ? COUNT_CROSSED : XDPBAN_REPORT_BANNED;
}

/* Bans key after count_errors said COUNT_CROSSED: stores the ban, sends its event and starts
 * the counter over; if the ban table has no room, gives the claim back so that the next error
 * tries again. XDPBAN_REPORT_BANNED or _TABLE_FULL. */
__attribute__((noinline)) int ban_create(const struct xdpban_key *key, __u64 seed,
					 const struct count_req *r)
{
	__u32 groups = map_entries(&xdpban_counts), home;
	struct xdpban_ctr_ref ref = {};
	struct xdpban_group *g;
	struct ban_new b = {};

	if (!key || !r || !groups)
		return XDPBAN_REPORT_TABLE_FULL;
	b.start_ns = clock_now_ns();
	b.expires_ns = b.start_ns + (__u64)r->ban_s * NS_PER_SEC;
	b.count = r->count;
	b.reason = r->reason;
	b.classes = r->classes;
	b.port = r->port;
	b.proto = r->proto;
	b.rule = r->rule;
	home = xdpban_key_home(seed, key, groups);
	g = bpf_map_lookup_elem(&xdpban_counts, &home);
	if (ban_store(key, seed, &b)) {
		if (g && xdpban_ctr_find(g, key, &ref))
			counter_unflag(g, &ref, XDPBAN_CTR_BANNING);
		stat_add(XDPBAN_STAT_BAN_TABLE_FULL, 1, r->bytes);
		return XDPBAN_REPORT_TABLE_FULL;
	}
	stat_add(XDPBAN_STAT_BANS_CREATED, 1, r->bytes);
	ban_event(key, &b, r->bytes);
	if (g && xdpban_ctr_find(g, key, &ref))
		xdpban_ctr_reset(g, &ref, b.start_ns / NS_PER_SEC);
	return XDPBAN_REPORT_BANNED;
}

/* Counts and, when the limit is crossed, bans: the whole of stage 6 for one key. */
static __always_inline int count_and_ban(const struct xdpban_key *key, __u64 seed,
					 struct count_req *r)
{
	int ret = count_errors(key, seed, r);

	return ret == COUNT_CROSSED ? ban_create(key, seed, r) : ret;
}

#endif /* XDPBAN_BPF_COUNT_H */
