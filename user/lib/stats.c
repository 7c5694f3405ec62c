/* stats.c - the per-CPU statistics summed over CPUs, their stable names, and the sizes of the
 * counter and ban tables. Read-only; the names are part of the JSON contract.
 */
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include "libxdpban.h"
#include "table.h"
#include "xdpban_time.h"

#define STAT_NAME(id, name, help) [XDPBAN_STAT_##id] = name,
static const char *const stat_names[XDPBAN_STAT__MAX] = { XDPBAN_STATS(STAT_NAME, STAT_NAME) };
#define STAT_HELP(id, name, help) [XDPBAN_STAT_##id] = help,
static const char *const stat_helps[XDPBAN_STAT__MAX] = { XDPBAN_STATS(STAT_HELP, STAT_HELP) };

const char *xb_stat_help(enum xdpban_stat s)
{
	if ((unsigned int)s >= XDPBAN_STAT__MAX)
		return "?";
	return stat_helps[s];
}

const char *xb_stat_name(enum xdpban_stat s)
{
	if ((unsigned int)s >= XDPBAN_STAT__MAX || !stat_names[s])
		return "?";
	return stat_names[s];
}

int xb_stats_read(const struct xb_maps *m, struct xdpban_stat_value out[XDPBAN_STAT__MAX])
{
	struct xdpban_stat_value *percpu;
	int ret = 0;

	if (m->ncpus <= 0)
		return -EINVAL;
	percpu = calloc(m->ncpus, sizeof(*percpu));
	if (!percpu)
		return -ENOMEM;
	for (__u32 i = 0; i < XDPBAN_STAT__MAX; i++) {
		if (bpf_map_lookup_elem(m->stats, &i, percpu)) {
			ret = -errno;
			break;
		}
		out[i].packets = out[i].bytes = 0;
		for (int cpu = 0; cpu < m->ncpus; cpu++) {
			out[i].packets += percpu[cpu].packets;
			out[i].bytes += percpu[cpu].bytes;
		}
	}
	free(percpu);
	return ret;
}

struct tally {
	__u32 window_s;
	int active, verified;
};

static int tally_counter(const struct xdpban_key *key, const struct xb_counter *ctr, void *ctx)
{
	struct tally *t = ctx;
	__u32 now_s = xb_boot_ns() / NS_PER_SEC;

	if ((ctr->count > 0 || (ctr->flags & XDPBAN_CTR_DISPUTED)) &&
	    now_s - ctr->start_s < t->window_s)
		t->active++;
	if (ctr->flags & XDPBAN_CTR_VERIFIED)
		t->verified++;
	return 0;
}

static int tally_counters(const struct xb_maps *m, struct tally *t)
{
	struct xdpban_config cfg;
	int ret = xb_config_read(m, &cfg);

	if (ret)
		return ret;
	t->window_s = cfg.window_s;
	return xb_counters_walk_in(m, xb_boot_ns() / NS_PER_SEC, tally_counter, t);
}

int xb_count_tracked(const struct xb_maps *m)
{
	struct tally t = { 0 };
	int ret = tally_counters(m, &t);

	return ret ? ret : t.active;
}

int xb_count_verified(const struct xb_maps *m)
{
	struct tally t = { 0 };
	int ret = tally_counters(m, &t);

	return ret ? ret : t.verified;
}

int xb_capacity(const struct xb_maps *m, __u32 *counters_max, __u32 *bans_max)
{
	struct xb_counters c;
	struct xb_bans b;
	char why[XB_ERRLEN];
	int ret = xb_counters_of(&c, m, why, sizeof(why));

	if (ret)
		return ret;
	*counters_max = c.tab.n * XDPBAN_GROUP_SLOTS;
	xb_counters_close(&c);
	ret = xb_bans_of(&b, m, why, sizeof(why));
	if (ret)
		return ret;
	*bans_max = xb_bans_slots(&b) / 2; /* the load the table is sized for */
	xb_bans_close(&b);
	return 0;
}
