// SPDX-License-Identifier: GPL-2.0
/* lpm_only.bpf.c - the policy-scaling baselines: a plain kernel LPM trie lookup of the IPv4
 * source (lpm_only) or the IPv6 source (lpm_only6) and nothing else. A match drops, a miss passes, and each verdict is counted so the
 * bench can check it. Its trie uses xdpban's own key and value types, so both tries hold nodes
 * of the same size. It must never grow any logic that xdpban's policy stage does not have. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "xdpban_policy.h"
#include "lpm_only.h"

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 1048576);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct xdpban_lpm4_key);
	__type(value, struct xdpban_policy);
} lpm_only_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 1048576);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct xdpban_lpm6_key);
	__type(value, struct xdpban_policy);
} lpm_only_v6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LPM_ONLY_STAT__MAX);
	__type(key, __u32);
	__type(value, __u64);
} lpm_only_stats SEC(".maps");

static __always_inline __u32 classify_source(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct xdpban_lpm4_key key = { .prefixlen = 32 };
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);

	if ((void *)(ip + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP))
		return LPM_ONLY_STAT_PASSED;
	__builtin_memcpy(key.addr, &ip->saddr, sizeof(key.addr));
	return bpf_map_lookup_elem(&lpm_only_v4, &key) ? LPM_ONLY_STAT_DROPPED
						       : LPM_ONLY_STAT_PASSED;
}

static __always_inline __u32 classify_source6(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct xdpban_lpm6_key key = { .prefixlen = 128 };
	struct ethhdr *eth = data;
	struct ipv6hdr *ip6 = (void *)(eth + 1);

	if ((void *)(ip6 + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IPV6))
		return LPM_ONLY_STAT_PASSED;
	__builtin_memcpy(key.addr, &ip6->saddr, sizeof(key.addr));
	return bpf_map_lookup_elem(&lpm_only_v6, &key) ? LPM_ONLY_STAT_DROPPED
						       : LPM_ONLY_STAT_PASSED;
}

static __always_inline int verdict_counted(__u32 verdict)
{
	__u64 *count = bpf_map_lookup_elem(&lpm_only_stats, &verdict);

	if (count)
		(*count)++; /* per-CPU slot: no other writer */
	return verdict == LPM_ONLY_STAT_DROPPED ? XDP_DROP : XDP_PASS;
}

SEC("xdp")
int lpm_only(struct xdp_md *ctx)
{
	return verdict_counted(classify_source(ctx));
}

SEC("xdp")
int lpm_only6(struct xdp_md *ctx)
{
	return verdict_counted(classify_source6(ctx));
}

char LICENSE[] SEC("license") = "GPL";
