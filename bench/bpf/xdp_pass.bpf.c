// SPDX-License-Identifier: GPL-2.0
/* xdp_pass.bpf.c - the wire bench's stand-in receiver programs. xdp_pass counts each frame
 * and passes it to the stack, where nftables, iptables or a socket deal with it (a veth only
 * accepts redirected XDP frames when its peer has an XDP program, so the non-XDP receivers
 * need one); it must never drop anything. xdp_drop counts each frame and drops it: the floor,
 * what receiving a frame at all costs. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} xdp_pass_count SEC(".maps");

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	__u32 zero = 0;
	__u64 *count = bpf_map_lookup_elem(&xdp_pass_count, &zero);

	if (count)
		(*count)++; /* per-CPU slot: no other writer */
	return XDP_PASS;
}

SEC("xdp")
int xdp_drop(struct xdp_md *ctx)
{
	__u32 zero = 0;
	__u64 *count = bpf_map_lookup_elem(&xdp_pass_count, &zero);

	if (count)
		(*count)++; /* per-CPU slot: no other writer */
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "GPL";
