/* maps.h - the data path's maps, defined from the one list XDPBAN_MAPS in include/xdpban_maps.h
 * (each row there has its purpose comment). Every map is pinned by name so that attachments
 * share one state. Never define a map here by hand: add a row to the list. */
#ifndef XDPBAN_BPF_MAPS_H
#define XDPBAN_BPF_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xdpban_maps.h"

/* The BTF map definition of one row, as libbpf and iproute2 read it. */
#define MAP_DEFINE(name, field, kind, key_type, value_type, max)                                   \
	XDPBAN_KIND(kind, MAP_DEFINE_AS, name, key_type, value_type, max)
#define MAP_DEFINE_AS(map_type, flags, entries, name, key_type, value_type, max)                   \
	struct {                                                                                   \
		__uint(type, map_type);                                                            \
		__uint(max_entries, max);                                                          \
		MAP_FLAGS_##flags                                                                  \
		MAP_ENTRIES_##entries(key_type, value_type)                                        \
		__uint(pinning, LIBBPF_PIN_BY_NAME);                                               \
	} name SEC(".maps");

/* map_flags is left out when it is 0, and key and value for a ring buffer. */
#define MAP_FLAGS_0
#define MAP_FLAGS_BPF_F_MMAPABLE __uint(map_flags, BPF_F_MMAPABLE);
#define MAP_FLAGS_BPF_F_NO_PREALLOC __uint(map_flags, BPF_F_NO_PREALLOC);
#define MAP_ENTRIES_KV(key_type, value_type)                                                       \
	__type(key, key_type);                                                                     \
	__type(value, value_type);
#define MAP_ENTRIES_NO_KV(key_type, value_type)

XDPBAN_MAPS(MAP_DEFINE)

/* A map's size, read through BTF (CO-RE), so that a loader may size the tables. */
struct bpf_map___xdpban {
	__u32 max_entries;
} __attribute__((preserve_access_index));

static __always_inline __u32 map_entries(void *map)
{
	return ((struct bpf_map___xdpban *)map)->max_entries;
}

/* Whether the LPM trie of the family (map4 for IPv4, map6 for IPv6, keyed by
 * struct xdpban_lpm4_key and xdpban_lpm6_key) holds a prefix of saddr (network order). */
static __always_inline int lpm_holds(void *map4, void *map6, __u8 family, const __u8 *saddr)
{
	if (family == XDPBAN_FAMILY_INET) {
		struct xdpban_lpm4_key k = { .prefixlen = 32 };

		__builtin_memcpy(k.addr, saddr, 4);
		return bpf_map_lookup_elem(map4, &k) != NULL;
	} else {
		struct xdpban_lpm6_key k = { .prefixlen = 128 };

		__builtin_memcpy(k.addr, saddr, 16);
		return bpf_map_lookup_elem(map6, &k) != NULL;
	}
}

#endif /* XDPBAN_BPF_MAPS_H */
