/* stats.h - recording per-CPU statistics. Never decides anything. */
#ifndef XDPBAN_BPF_STATS_H
#define XDPBAN_BPF_STATS_H

#include "maps.h"

static __always_inline void stat_add(__u32 reason, __u64 packets, __u64 bytes)
{
	struct xdpban_stat_value *v = bpf_map_lookup_elem(&xdpban_stats, &reason);

	if (v) {
		v->packets += packets; /* per-CPU slot: no other writer */
		v->bytes += bytes;
	}
}

/* One packet (or a report's errors) of each class in classes. */
static __always_inline void stat_classes(__u32 classes, __u64 packets, __u64 bytes)
{
	for (__u32 i = 0; i < XDPBAN_CLASS__COUNT; i++)
		if (classes & (1u << i))
			stat_add(XDPBAN_STAT_OF_CLASS_BITNO(i), packets, bytes);
}

#endif /* XDPBAN_BPF_STATS_H */
