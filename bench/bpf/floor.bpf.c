// SPDX-License-Identifier: GPL-2.0
/* floor.bpf.c - the bench's memory floors: what one dependent random load
 * costs behind the same driver as xdpban, so that every pipeline row can be read as "a bare
 * drop plus k loads" (bench/pipeline.c), and what a table of a million IPv6 prefixes costs
 * past the cache (bench/policy6.c). Each program parses Ethernet and the IP source exactly as
 * far as it must, hashes the source into an index of its own array, loads that word and drops.
 * The load decides the return value, so the compiler cannot drop it; the arrays hold zeros, so
 * the verdict is always XDP_DROP (the bench checks it). It must never do any other work. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "floor.h"

/* A multiplicative hash of the source's first 32 bits (IPv4: the address; IPv6: its top
 * word), or -1 when the frame is not IP. */
static __always_inline long source_hash(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u32 word;

	if ((void *)(eth + 1) > data_end)
		return -1;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > data_end)
			return -1;
		word = ip->saddr;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > data_end)
			return -1;
		word = ip6->saddr.in6_u.u6_addr32[0] ^ ip6->saddr.in6_u.u6_addr32[3];
	} else {
		return -1;
	}
	return (__u32)(((__u64)word * 0x9e3779b97f4a7c15ull) >> 32);
}

static __always_inline int load_verdict(void *words, __u32 mask, long hash)
{
	__u32 index = (__u32)hash & mask;
	__u64 *w;

	if (hash < 0)
		return XDP_DROP;
	w = bpf_map_lookup_elem(words, &index);
	return w && *w == 0x666c6f6f72ull ? XDP_PASS : XDP_DROP;
}

/* A floor: an array of `bytes` of words (map name##_words) and the program `name`, which loads
 * one of them at random. The names are floor.h's. */
#define FLOOR(name, bytes)                                                                  \
	struct {                                                                            \
		__uint(type, BPF_MAP_TYPE_ARRAY);                                           \
		__uint(max_entries, (bytes) / 8);                                           \
		__type(key, __u32);                                                         \
		__type(value, __u64);                                                       \
	} name##_words SEC(".maps");                                                        \
                                                                                            \
	SEC("xdp")                                                                          \
	int name(struct xdp_md *ctx)                                                        \
	{                                                                                   \
		return load_verdict(&name##_words, (bytes) / 8 - 1, source_hash(ctx));      \
	}

FLOOR(floor_l2, FLOOR_L2_BYTES)
FLOOR(floor_4m, FLOOR_4M_BYTES)
FLOOR(floor_16m, FLOOR_16M_BYTES)
FLOOR(floor_mem, FLOOR_MEM_BYTES)

char LICENSE[] SEC("license") = "GPL";
