// SPDX-License-Identifier: GPL-2.0
/* bare_drop.bpf.c - the bench baseline: drop every frame and do nothing else. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int bare_drop(struct xdp_md *ctx)
{
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "GPL";
