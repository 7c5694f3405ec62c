/* count.h - per-source state: the ban check and error counting with the threshold rule
 * (docs/datapath.md, section 4), for keys made by xdpban_key_make() (xdpban_state.h). Shared
 * by the XDP program and the report program so that both follow one rule. Never decides a
 * packet's verdict. */
#ifndef XDPBAN_BPF_COUNT_H
#define XDPBAN_BPF_COUNT_H

#include <linux/errno.h>
#include "maps.h"
#include "stats.h"
#include "xdpban_report.h"
#include "xdpban_time.h"

#define COUNTER_CAS_TRIES 8
#define READ_ONCE_STATE(c) (*(volatile __u64 *)&(c)->state)

const struct xdpban_config config_defaults = XDPBAN_CONFIG_DEFAULTS;

/* The configuration in force: the map entry if userspace wrote a valid one, else the
 * defaults. Checked on every packet so that no entry written behind userspace's back (bpftool)
 * can, say, key IPv6 bans on a /20. */
static __always_inline const struct xdpban_config *config_get(void)
{
	__u32 zero = 0;
	const struct xdpban_config *cfg = bpf_map_lookup_elem(&xdpban_config, &zero);

	if (!cfg || !xdpban_config_valid(cfg))
		return &config_defaults;
	return cfg;
}

static __always_inline __u64 *banfilter_counter(const struct xdpban_key *key)
{
	__u32 slot = xdpban_banfilter_slot(key);

	return bpf_map_lookup_elem(&xdpban_banfilt, &slot);
}

/* Decrements without ever going below zero (see xdpban_banfilter.h). */
static __always_inline void banfilter_put(const struct xdpban_key *key)
{
	__u64 *c = banfilter_counter(key);
	__u64 old;

	if (!c)
		return;
	for (int i = 0; i < COUNTER_CAS_TRIES; i++) {
		old = *(volatile __u64 *)c;
		if (old == 0 || __sync_val_compare_and_swap(c, old, old - 1) == old)
			return;
	}
}

static __always_inline void banfilter_get(const struct xdpban_key *key)
{
	__u64 *c = banfilter_counter(key);

	if (c)
		__sync_fetch_and_add(c, 1);
}

/* Deletes the key's ban and keeps the ban filter exact. 1 if this call deleted it. */
static __always_inline int ban_delete(const struct xdpban_key *key)
{
	if (bpf_map_delete_elem(&xdpban_bans, key))
		return 0;
	banfilter_put(key);
	return 1;
}

/* 1 if the key is under a ban that has not expired. An expired ban is lifted on the way. */
static __always_inline int ban_active(const struct xdpban_key *key, __u64 bytes)
{
	struct xdpban_ban *ban;
	__u64 *maybe = banfilter_counter(key);
	__u64 now;

	if (maybe && *maybe == 0)
		return 0; /* the common case: no ban can match, skip the hash lookup */
	ban = bpf_map_lookup_elem(&xdpban_bans, key);
	if (!ban)
		return 0;
	now = bpf_ktime_get_boot_ns();
	if (ban->expires_ns == 0 || now < ban->expires_ns)
		return 1;
	if (ban_delete(key))
		stat_add(XDPBAN_STAT_BANS_EXPIRED, 1, bytes);
	return 0;
}

static __always_inline __u64 counter_next(__u64 state, __u32 now_s, __u32 window_s, __u32 n)
{
	__u32 start = XDPBAN_COUNTER_START(state);
	__u32 count = XDPBAN_COUNTER_COUNT(state);

	if (now_s - start >= window_s)
		return XDPBAN_COUNTER_PACK(now_s, n);
	count = count + n < count ? 0xffffffffu : count + n;
	return XDPBAN_COUNTER_PACK(start, count);
}

/* Adds n errors to the key's counter and returns the new count. */
static __always_inline __u32 counter_add(const struct xdpban_key *key, __u32 n, __u32 now_s,
					 __u32 window_s)
{
	struct xdpban_counter *c = bpf_map_lookup_elem(&xdpban_counts, key);
	__u64 old, next;
	int i;

	if (!c) {
		struct xdpban_counter fresh = { .state = XDPBAN_COUNTER_PACK(now_s, n) };

		if (bpf_map_update_elem(&xdpban_counts, key, &fresh, BPF_NOEXIST) == 0)
			return n;
		c = bpf_map_lookup_elem(&xdpban_counts, key); /* another CPU made it first */
		if (!c)
			return n;
	}
	for (i = 0; i < COUNTER_CAS_TRIES; i++) {
		old = READ_ONCE_STATE(c);
		next = counter_next(old, now_s, window_s, n);
		if (__sync_val_compare_and_swap(&c->state, old, next) == old)
			return XDPBAN_COUNTER_COUNT(next);
	}
	/* Heavy contention: never lose the increment, even if a window restart is missed. */
	return XDPBAN_COUNTER_COUNT(__sync_fetch_and_add(&c->state, n) + n);
}

/* After a ban the source starts over: when the ban ends it needs limit + 1 new errors. */
static __always_inline void counter_reset(const struct xdpban_key *key, __u32 now_s)
{
	struct xdpban_counter *c = bpf_map_lookup_elem(&xdpban_counts, key);

	if (c)
		READ_ONCE_STATE(c) = XDPBAN_COUNTER_PACK(now_s, 0);
}

static __always_inline void ban_event(const struct xdpban_key *key, const struct xdpban_ban *ban,
				      __u64 bytes)
{
	struct xdpban_event *ev = bpf_ringbuf_reserve(&xdpban_events, sizeof(*ev), 0);

	if (!ev) {
		stat_add(XDPBAN_STAT_EVENTS_LOST, 1, bytes);
		return;
	}
	__builtin_memcpy(&ev->key, key, sizeof(*key));
	ev->time_ns = ban->start_ns;
	ev->expires_ns = ban->expires_ns;
	ev->count = ban->count;
	ev->reason = ban->reason;
	ev->classes = ban->classes;
	ev->pad[0] = ev->pad[1] = 0;
	bpf_ringbuf_submit(ev, 0);
}

/* Counts n errors of the given classes against key and bans it once count > limit.
 * Returns XDPBAN_REPORT_COUNTED, _BANNED or _TABLE_FULL; *count_out gets the new count. */
static __always_inline __u32 count_errors(const struct xdpban_config *cfg,
					  const struct xdpban_key *key, __u32 n, __u32 classes,
					  __u8 reason, __u64 bytes, __u32 *count_out)
{
	__u64 now = bpf_ktime_get_boot_ns();
	__u32 now_s = now / NS_PER_SEC;
	struct xdpban_ban ban = {};
	__u32 count;
	long err;

	stat_add(XDPBAN_STAT_ERRORS, n, bytes);
	count = counter_add(key, n, now_s, cfg->window_s);
	*count_out = count;
	if (count <= cfg->limit)
		return XDPBAN_REPORT_COUNTED;

	ban.start_ns = now;
	ban.expires_ns = now + cfg->ban_s * NS_PER_SEC;
	ban.count = count;
	ban.reason = reason;
	ban.classes = classes;
	banfilter_get(key); /* before the insert: a reader must never miss a ban */
	err = bpf_map_update_elem(&xdpban_bans, key, &ban, BPF_NOEXIST);
	if (err)
		banfilter_put(key);
	if (err == -EEXIST)
		return XDPBAN_REPORT_BANNED; /* another CPU banned it a moment ago */
	if (err) {
		stat_add(XDPBAN_STAT_BAN_TABLE_FULL, 1, bytes);
		return XDPBAN_REPORT_TABLE_FULL;
	}
	stat_add(XDPBAN_STAT_BANS_CREATED, 1, bytes);
	ban_event(key, &ban, bytes);
	counter_reset(key, now_s);
	return XDPBAN_REPORT_BANNED;
}

#endif /* XDPBAN_BPF_COUNT_H */
