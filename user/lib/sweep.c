/* sweep.c - removes state whose time is over: expired bans and expired timed deny entries
 * (manual prefix bans). The data path would ignore them anyway; sweeping frees the room. Never
 * removes anything that still has effect: a ban goes only if it is still the expired one that
 * was seen. Counters are never swept: a slot whose window has ended is the first one a new
 * source takes (include/xdpban_table.h), and userspace never writes the counter table while
 * the data path runs. Timed entries go through policy.h, and once some have gone the flat
 * table is recompiled, so that their regions are answered without the trie again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "libxdpban.h"
#include "policy.h"
#include "table.h"
#include "xdpban_time.h"

/* What a walk found to delete, deleted after it. */
struct doomed {
	__u64 now_ns;
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

/* An expired ban as it was seen, to be removed only if it is still exactly that. */
struct doomed_ban {
	struct xdpban_key key;
	struct xdpban_ban ban;
};

static int doom_expired_ban(const struct xdpban_key *key, const struct xdpban_ban *ban,
			    void *ctx)
{
	struct doomed_ban seen = { .key = *key, .ban = *ban };
	struct doomed *d = ctx;

	return ban_expired(ban, d->now_ns) ? doom(d, &seen) : 0;
}

static int sweep_bans(const struct xb_maps *m, __u64 now_ns)
{
	struct doomed d = { .now_ns = now_ns, .key_size = sizeof(struct doomed_ban) };
	char why[XB_ERRLEN];
	int ret, removed = 0;
	struct xb_bans b;

	ret = xb_bans_of(&b, m, why, sizeof(why));
	if (ret)
		return ret;
	ret = xb_bans_walk(&b, doom_expired_ban, &d);
	for (size_t i = 0; !ret && i < d.n; i++) {
		const struct doomed_ban *x = (const void *)(d.keys + i * d.key_size);

		/* The data path may have lifted it, or the operator renewed it, since the walk. */
		if (xb_bans_remove_if(&b, &x->key, &x->ban) == 0)
			removed++;
	}
	xb_bans_close(&b);
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
	int bans, entries;

	bans = sweep_bans(m, now_ns);
	if (bans < 0)
		return bans;
	entries = sweep_policy(m, now_ns);
	if (entries < 0)
		return entries;
	return bans + entries;
}
