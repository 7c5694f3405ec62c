/* maps.h - the data path's maps. One purpose comment per map; the contract types and names are
 * in include/. Every map is pinned by name so that attachments share one state. */
#ifndef XDPBAN_BPF_MAPS_H
#define XDPBAN_BPF_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xdpban_banfilter.h"
#include "xdpban_config.h"
#include "xdpban_event.h"
#include "xdpban_flat.h"
#include "xdpban_maps.h"
#include "xdpban_policy.h"
#include "xdpban_state.h"
#include "xdpban_stats.h"

/* Runtime configuration; all-zero (or invalid) means the compiled-in defaults. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xdpban_config);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xdpban_config SEC(".maps");

/* IPv4 policy: longest matching prefix decides trusted or deny. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, XDPBAN_DEFAULT_POLICY4_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct xdpban_lpm4_key);
	__type(value, struct xdpban_policy);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xdpban_policy4 SEC(".maps");

/* IPv6 policy, likewise. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, XDPBAN_DEFAULT_POLICY6_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct xdpban_lpm6_key);
	__type(value, struct xdpban_policy);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xdpban_policy6 SEC(".maps");

/* The policy tries compiled into 2-bit codes per /16 and /24 region (xdpban_flat.h): most
 * sources are answered here with one or two inlined array loads; LOOKUP sends them on to the
 * trie. All zero (LOOKUP) until userspace compiles the policy. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XDPBAN_FLAT_ENTRIES);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xdpban_flat4 SEC(".maps");

/* The same over the top 32 bits of IPv6 sources. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XDPBAN_FLAT_ENTRIES);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xdpban_flat6 SEC(".maps");

/* Level 3 of the IPv4 table: the 256 /32 codes of a /24 whose level-2 code is LOOKUP only
 * because permanent entries longer than /24 lie in it (xdpban_flat.h), so that real
 * blocklists of /25../32 entries are answered without the trie. Preallocated: a lookup never
 * allocates; a full table leaves the remaining regions to the trie. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XDPBAN_DEFAULT_FLAT4X_MAX);
	__type(key, __u32);
	__type(value, struct xdpban_flat_line);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xdpban_flat4x SEC(".maps");

/* Error counters. Bounded: the least recently used source is evicted when full. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, XDPBAN_DEFAULT_COUNTERS_MAX);
	__type(key, struct xdpban_key);
	__type(value, struct xdpban_counter);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xdpban_counts SEC(".maps");

/* Bans. A plain hash, not LRU: counter churn can never evict a ban; a full table is counted. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XDPBAN_DEFAULT_BANS_MAX);
	__type(key, struct xdpban_key);
	__type(value, struct xdpban_ban);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xdpban_bans SEC(".maps");

/* Counts of bans per hash slot: a zero proves a source is not banned (xdpban_banfilter.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XDPBAN_BANFILTER_SLOTS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xdpban_banfilt SEC(".maps");

/* Per-CPU packets and bytes per reason (enum xdpban_stat). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XDPBAN_STAT__MAX);
	__type(key, __u32);
	__type(value, struct xdpban_stat_value);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xdpban_stats SEC(".maps");

/* One struct xdpban_event per ban created, for the controller. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, XDPBAN_DEFAULT_EVENTS_BYTES);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} xdpban_events SEC(".maps");

#endif /* XDPBAN_BPF_MAPS_H */
