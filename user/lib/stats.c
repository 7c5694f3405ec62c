/* stats.c - the per-CPU statistics summed over CPUs, their stable names, and the sizes of the
 * counter and ban tables. Read-only; the names are part of the JSON contract.
 */
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include "libxdpban.h"

static const char *const stat_names[XDPBAN_STAT__MAX] = {
	[XDPBAN_STAT_PASSED] = "passed",
	[XDPBAN_STAT_PASSED_TRUSTED] = "passed_trusted",
	[XDPBAN_STAT_DROP_DENY] = "drop_deny",
	[XDPBAN_STAT_DROP_BANNED] = "drop_banned",
	[XDPBAN_STAT_DROP_MALFORMED] = "drop_malformed",
	[XDPBAN_STAT_DROP_ERROR] = "drop_error",
	[XDPBAN_STAT_ERRORS] = "errors",
	[XDPBAN_STAT_BANS_CREATED] = "bans_created",
	[XDPBAN_STAT_BAN_TABLE_FULL] = "ban_table_full",
	[XDPBAN_STAT_BANS_EXPIRED] = "bans_expired",
	[XDPBAN_STAT_EVENTS_LOST] = "events_lost",
};

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

static int count_one(const void *key, const void *value, void *ctx)
{
	(*(int *)ctx)++;
	return 0;
}

int xb_count_tracked(const struct xb_maps *m)
{
	int n = 0;
	int ret = xb_map_foreach(m->counts, sizeof(struct xdpban_key),
				 sizeof(struct xdpban_counter), count_one, &n);

	return ret ? ret : n;
}
