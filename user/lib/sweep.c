/* sweep.c - removes state whose time is over: expired bans, expired timed deny entries (manual
 * prefix bans) and counters whose window has passed. The data path would ignore or restart
 * them anyway; sweeping frees the room. Never removes anything that still has effect: each
 * ban and counter is looked up again right before it is deleted. Timed entries go through
 * policy.h, and once some have gone the flat table is recompiled, so that their regions are
 * answered without the trie again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "banfilter.h"
#include "libxdpban.h"
#include "policy.h"
#include "xdpban_time.h"

/* Keys collected during a walk, deleted after it (deleting while walking a hash skips keys). */
struct doomed {
	__u64 now_ns;
	__u32 window_s;
	size_t key_size;
	char *keys;
	size_t n, cap;
};

static int doom(struct doomed *d, const void *key)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 256;
		char *keys = realloc(d->keys, cap * d->key_size);

		if (!keys)
			return -ENOMEM;
		d->keys = keys;
		d->cap = cap;
	}
	memcpy(d->keys + d->n * d->key_size, key, d->key_size);
	d->n++;
	return 0;
}

static bool ban_expired(const struct xdpban_ban *ban, __u64 now_ns)
{
	return ban->expires_ns && now_ns >= ban->expires_ns;
}

static bool counter_stale(const struct xdpban_counter *c, __u64 now_ns, __u32 window_s)
{
	return (__u32)(now_ns / NS_PER_SEC) - XDPBAN_COUNTER_START(c->state) >= window_s;
}

static int doom_expired_ban(const void *key, const void *value, void *ctx)
{
	struct doomed *d = ctx;

	return ban_expired(value, d->now_ns) ? doom(d, key) : 0;
}

static int doom_stale_counter(const void *key, const void *value, void *ctx)
{
	struct doomed *d = ctx;

	return counter_stale(value, d->now_ns, d->window_s) ? doom(d, key) : 0;
}

static int sweep_bans(const struct xb_maps *m, __u64 now_ns)
{
	struct doomed d = { .now_ns = now_ns, .key_size = sizeof(struct xdpban_key) };
	struct xb_banfilter bf;
	struct xdpban_ban ban;
	int ret, removed = 0;

	ret = xb_map_foreach(m->bans, d.key_size, sizeof(ban), doom_expired_ban, &d);
	if (ret || d.n == 0)
		goto out;
	ret = xb_banfilter_open(&bf, m->banfilt, m->bans);
	if (ret)
		goto out;
	for (size_t i = 0; i < d.n; i++) {
		const struct xdpban_key *key = (const void *)(d.keys + i * d.key_size);

		/* The data path may have made a fresh ban for the key since the walk. */
		if (bpf_map_lookup_elem(m->bans, key, &ban) || !ban_expired(&ban, now_ns))
			continue;
		if (xb_ban_remove(&bf, key) == 0)
			removed++;
	}
	xb_banfilter_close(&bf);
out:
	free(d.keys);
	return ret ? ret : removed;
}

static int sweep_counters(const struct xb_maps *m, __u64 now_ns, __u32 window_s)
{
	struct doomed d = { .now_ns = now_ns, .window_s = window_s,
			    .key_size = sizeof(struct xdpban_key) };
	struct xdpban_counter c;
	int ret, removed = 0;

	ret = xb_map_foreach(m->counts, d.key_size, sizeof(c), doom_stale_counter, &d);
	for (size_t i = 0; !ret && i < d.n; i++) {
		const void *key = d.keys + i * d.key_size;

		/* A counter the data path restarted since the walk has a fresh window. */
		if (bpf_map_lookup_elem(m->counts, key, &c) || !counter_stale(&c, now_ns, window_s))
			continue;
		if (bpf_map_delete_elem(m->counts, key) == 0)
			removed++;
	}
	free(d.keys);
	return ret ? ret : removed;
}

static int doom_expired_entry(const struct xb_policy_entry *e, void *ctx)
{
	struct doomed *d = ctx;

	if (!e->policy.expires_ns || d->now_ns < e->policy.expires_ns)
		return 0;
	return doom(d, &e->prefix);
}

/* Timed entries are manual prefix bans; a re-ban of the same prefix between the walk and the
 * delete is the one race left here, and it only ends that ban early. Each delete only sets
 * LOOKUP; the recompile after them makes the regions pure again where they now can be. */
static int sweep_policy(const struct xb_maps *m, __u64 now_ns)
{
	struct doomed d = { .now_ns = now_ns, .key_size = sizeof(struct xb_prefix) };
	char err[XB_ERRLEN];
	int ret, removed = 0;

	ret = xb_policy_foreach(m, doom_expired_entry, &d);
	for (size_t i = 0; !ret && i < d.n; i++) {
		const struct xb_prefix *p = (const void *)(d.keys + i * d.key_size);

		if (xb_policy_delete(m, p) == 0)
			removed++;
	}
	free(d.keys);
	if (!ret && removed)
		ret = xb_policy_recompile(m, NULL, err, sizeof(err));
	return ret ? ret : removed;
}

int xb_sweep(const struct xb_maps *m, __u64 now_ns)
{
	struct xdpban_config cfg;
	int bans, counters, entries, ret;

	ret = xb_config_read(m, &cfg);
	if (ret)
		return ret;
	bans = sweep_bans(m, now_ns);
	if (bans < 0)
		return bans;
	counters = sweep_counters(m, now_ns, cfg.window_s);
	if (counters < 0)
		return counters;
	entries = sweep_policy(m, now_ns);
	if (entries < 0)
		return entries;
	return bans + counters + entries;
}
