// SPDX-License-Identifier: GPL-2.0
/* srcdrv.bpf.c - the bench's source driver. BPF_PROG_TEST_RUN with `repeat` runs one frame
 * again and again; to make every run see a different source, this program writes the next
 * address of a table into the frame and then hands the frame on:
 *   srcdrv_tail     - tail-calls the program under test (slot 0 of srcdrv_target), so one
 *                     test run measures that program over many distinct sources;
 *   srcdrv_redirect - redirects the frame into a device (the wire sender, with
 *                     BPF_F_TEST_XDP_LIVE_FRAMES).
 * With a shape period set, an IPv4 frame also gets the TTL and UDP length of its source's
 * shape (srcdrv_shape), so that one table mixes malformed and valid datagrams and forged
 * TTLs (the flood). Frames are plain Ethernet + IPv4 or IPv6, built by the bench. This program must never decide
 * a verdict of its own: if the tail call fails it returns XDP_ABORTED, which the bench treats
 * as a broken configuration. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/in.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "srcdrv.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct srcdrv_state);
} srcdrv_state SEC(".maps");

/* Both tables are resized by the loader to the number of sources it needs. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} srcdrv_src4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct srcdrv_addr6);
} srcdrv_src6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SRCDRV_SHAPES_MAX);
	__type(key, __u32);
	__type(value, struct srcdrv_shape);
} srcdrv_shape SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} srcdrv_target SEC(".maps");

/* Takes the next table index, wrapping at count. NULL when the state is missing. */
static __always_inline struct srcdrv_state *next_source(__u32 *index)
{
	__u32 zero = 0;
	struct srcdrv_state *st = bpf_map_lookup_elem(&srcdrv_state, &zero);

	if (!st)
		return NULL;
	*index = st->next;
	st->next = st->next + 1 >= st->count ? 0 : st->next + 1;
	st->runs++;
	return st;
}

static __always_inline __u16 csum_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	return (sum & 0xffff) + (sum >> 16);
}

/* Updates the IPv4 header checksum for one 16-bit word of the header going from old to new
 * (RFC 1624, eqn. 3), so that frames which reach the stack pass its checksum check. */
static __always_inline void ipv4_csum_replace(struct iphdr *ip, __u16 old, __u16 new)
{
	__u32 sum = (__u16)~ip->check;

	sum += (__u16)~old + new;
	ip->check = ~csum_fold(sum);
}

static __always_inline void ipv4_set_saddr(struct iphdr *ip, __u32 saddr)
{
	__u32 old = ip->saddr;

	ipv4_csum_replace(ip, old & 0xffff, saddr & 0xffff);
	ipv4_csum_replace(ip, old >> 16, saddr >> 16);
	ip->saddr = saddr;
}

/* Gives an IPv4 UDP frame the TTL and UDP length of shape number `index % period`. 0, or -1
 * if the frame is not one the bench built (IPv4 with a 20-byte header, then UDP). */
static __always_inline int ipv4_set_shape(struct iphdr *ip, void *data_end, __u32 index,
					  __u32 period)
{
	struct udphdr *udp = (void *)(ip + 1);
	struct srcdrv_shape *sh;
	__u32 slot = index % period;
	__u16 old;

	sh = bpf_map_lookup_elem(&srcdrv_shape, &slot);
	if (!sh || (void *)(udp + 1) > data_end || ip->ihl != 5 || ip->protocol != IPPROTO_UDP)
		return -1;
	/* The TTL shares its header word with the protocol: byte 8 of the header, then byte 9. */
	old = *(__u16 *)&ip->ttl;
	ip->ttl = sh->ttl;
	ipv4_csum_replace(ip, old, *(__u16 *)&ip->ttl);
	udp->len = sh->udp_len; /* the bench's UDP checksum is 0: nothing else to update */
	return 0;
}

/* Writes source number `index` into the frame, and its shape when st has a shape period. 0,
 * or -1 if the frame or table is unusable. */
static __always_inline int write_source(struct xdp_md *ctx, const struct srcdrv_state *st,
					__u32 index)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end)
		return -1;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);
		__u32 *src = bpf_map_lookup_elem(&srcdrv_src4, &index);

		if ((void *)(ip + 1) > data_end || !src)
			return -1;
		ipv4_set_saddr(ip, *src);
		return st->shape_period ? ipv4_set_shape(ip, data_end, index, st->shape_period) : 0;
	}
	if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);
		struct srcdrv_addr6 *src = bpf_map_lookup_elem(&srcdrv_src6, &index);

		if ((void *)(ip6 + 1) > data_end || !src)
			return -1;
		__builtin_memcpy(&ip6->saddr, src->addr, sizeof(src->addr));
		return 0;
	}
	return -1;
}

SEC("xdp")
int srcdrv_tail(struct xdp_md *ctx)
{
	struct srcdrv_state *st;
	__u32 index;

	st = next_source(&index);
	if (!st || write_source(ctx, st, index))
		return XDP_ABORTED;
	bpf_tail_call(ctx, &srcdrv_target, 0);
	return XDP_ABORTED; /* no program under test in slot 0 */
}

SEC("xdp")
int srcdrv_redirect(struct xdp_md *ctx)
{
	struct srcdrv_state *st;
	__u32 index;

	st = next_source(&index);
	if (!st || write_source(ctx, st, index))
		return XDP_ABORTED;
	return bpf_redirect(st->ifindex, 0);
}

char LICENSE[] SEC("license") = "GPL";
