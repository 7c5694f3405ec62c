/* parse.h - reads a frame into struct pkt: addresses, protocol and whether the headers are
 * consistent (docs/datapath.md, section 1). It only reads; it never decides a verdict.
 *
 * A frame may come in several buffers (multi-buffer XDP: a jumbo frame in native mode, or a
 * GSO/GRO aggregate in generic mode): lengths are those of the whole frame, and a header is
 * read by direct access where it lies in the first (linear) buffer, which is always the case
 * for ordinary frames, and copied out with bpf_xdp_load_bytes only where it does not. */
#ifndef XDPBAN_BPF_PARSE_H
#define XDPBAN_BPF_PARSE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include "xdpban_state.h"
#include "xdpban_table.h"

#define ETH_P_8021Q_ 0x8100
#define ETH_P_8021AD_ 0x88A8
#define VLAN_MAX_TAGS 2
#define IPV6_MAX_EXT_HDRS 8
/* The extension header walk cannot get past this (8 headers of at most 2,048 bytes after the
 * fixed header): the bound only gives the verifier a limit for packet offsets. */
#define L3_MAX_OFF (40 + IPV6_MAX_EXT_HDRS * 2048)
/* The largest value of a 16-bit IP length field. A longer IP packet (a GSO or GRO aggregate)
 * carries 0 there (docs/datapath.md, section 1, "Aggregates"). */
#define IP_LEN_FIELD_MAX 65535u

#define NEXTHDR_HOP_ 0
#define NEXTHDR_ROUTING_ 43
#define NEXTHDR_FRAGMENT_ 44
#define NEXTHDR_AUTH_ 51
#define NEXTHDR_NONE_ 59
#define NEXTHDR_DEST_ 60
#define IPPROTO_ICMPV6_ 58

/* Everything the later stages need to know about one frame. The addresses come first and
 * 8-byte aligned: every stage reads them as whole words (an unaligned copy would be a byte at
 * a time, with shifts, at every read). */
struct pkt {
	__u8 saddr[16] __attribute__((aligned(8))); /* network byte order; IPv4 in the first 4 */
	__u8 daddr[16];      /* network byte order, likewise */
	__u32 bytes;         /* frame length */
	__be16 sport, dport; /* of a TCP segment or UDP datagram */
	__be32 seq, ack_seq; /* network byte order */
	__u16 payload_off;   /* a datagram's payload: offset in the frame (<= PAYLOAD_OFF_MAX) */
	__u16 payload_len;   /* and length, from the UDP header */
	__u8 family;     /* 0: not IP; XDPBAN_FAMILY_INET or XDPBAN_FAMILY_INET6 */
	__u8 attributed; /* the source address is known */
	__u8 malformed;  /* inconsistent L3/L4 headers or impossible TCP flags */
	__u8 ndp;        /* ICMPv6 neighbour discovery */
	__u8 hop;        /* hop count from the TTL or hop limit (xdpban_hop_of_ttl) */
	__u8 tcp_flags;  /* of a TCP segment whose header was checked and is in the frame */
	__u8 is_tcp;     /* that segment's fields below are valid */
	__u8 is_udp;     /* a datagram whose header was checked: ports and payload are valid */
	__u8 echo;       /* an ICMP echo request (IPv4 type 8, ICMPv6 type 128) */
};

/* The furthest a datagram's payload can start: Ethernet, two VLAN tags, the deepest IPv6
 * header chain the walk follows, and the UDP header. What reads the payload (bpf/guard.h)
 * needs the bound to give the verifier a packet range. */
#define PAYLOAD_OFF_MAX (14 + VLAN_MAX_TAGS * 4 + L3_MAX_OFF + 8)

/* The furthest frame_at reads: a payload's fields past its start (bpf/guard.h). */
#define FRAME_AT_OFF_MAX (PAYLOAD_OFF_MAX + 128)

/* Where the parser reads a frame from: its first buffer by direct access, and its length. */
struct frame {
	struct xdp_md *ctx;
	void *data, *data_end; /* the first (linear) buffer */
	__u32 len;             /* the whole frame, every buffer (bpf_xdp_get_buff_len) */
};

struct vlan_tag {
	__be16 tci;
	__be16 encap_proto;
};

/* TCP flags that can never appear together on a legitimate segment. */
static __always_inline int tcp_flags_impossible(__u8 flags)
{
	const __u8 fin = 0x01, syn = 0x02, rst = 0x04, psh = 0x08, ack = 0x10, urg = 0x20;

	flags &= 0x3f;
	if ((flags & (syn | fin)) == (syn | fin) || (flags & (syn | rst)) == (syn | rst))
		return 1;
	if (flags == 0)
		return 1;
	return (flags & (fin | psh | urg | ack)) == (fin | psh | urg);
}

/* A pointer to the n bytes at off: into the first buffer when they lie there, else to buf,
 * where bpf_xdp_load_bytes copies them from wherever they are. NULL when the frame ends
 * first, or off is past FRAME_AT_OFF_MAX (which no header or field the stages read can be). n
 * must be a constant. */
static __always_inline void *frame_at(const struct frame *f, __u32 off, __u32 n, void *buf)
{
	void *at;

	/* The bound is checked here, where off meets the packet pointer: one the verifier
	 * learned before can be lost on the way (Linux 6.1 keeps none through a 32-bit spill),
	 * and the barrier keeps clang from dropping the check as already known. */
	asm volatile("" : "+r"(off));
	if (off > FRAME_AT_OFF_MAX)
		return NULL;
	at = f->data + off;

	if (at + n <= f->data_end)
		return at;
	if (bpf_xdp_load_bytes(f->ctx, off, buf, n))
		return NULL;
	return buf;
}

/* L4 checks against the L4 region [l4, l4 + len) that the IP header declares. */
static __always_inline void parse_l4(struct pkt *p, const struct frame *f, __u8 proto, __u32 l4,
				     __u32 len)
{
	switch (proto) {
	case IPPROTO_TCP: {
		struct tcphdr buf, *tcp = len < sizeof(buf) ? NULL : frame_at(f, l4, sizeof(buf), &buf);

		if (!tcp) {
			p->malformed = 1;
			return;
		}
		if (tcp->doff < 5 || tcp->doff * 4u > len ||
		    tcp_flags_impossible(((__u8 *)tcp)[13])) {
			p->malformed = 1;
			return;
		}
		p->is_tcp = 1; /* what the spoof defence's learning needs (verify.h) */
		p->tcp_flags = ((__u8 *)tcp)[13];
		p->sport = tcp->source;
		p->dport = tcp->dest;
		p->seq = tcp->seq;
		p->ack_seq = tcp->ack_seq;
		return;
	}
	case IPPROTO_UDP: {
		struct udphdr buf, *udp = len < sizeof(buf) ? NULL : frame_at(f, l4, sizeof(buf), &buf);
		__u32 ulen;

		if (!udp) {
			p->malformed = 1;
			return;
		}
		ulen = bpf_ntohs(udp->len);
		if (ulen < sizeof(*udp) || ulen > len) {
			p->malformed = 1;
			return;
		}
		p->is_udp = 1; /* what the port rules need (classify.h, guard.h) */
		p->sport = udp->source;
		p->dport = udp->dest;
		p->payload_off = l4 + sizeof(*udp);
		p->payload_len = ulen - sizeof(*udp);
		return;
	}
	case IPPROTO_ICMP: {
		__u8 buf, *type;

		if (p->family != XDPBAN_FAMILY_INET)
			return;
		type = len < 8 ? NULL : frame_at(f, l4, 1, &buf);
		if (!type) {
			p->malformed = 1;
			return;
		}
		p->echo = *type == 8;
		return;
	}
	case IPPROTO_ICMPV6_: {
		__u8 buf, *type;

		if (p->family != XDPBAN_FAMILY_INET6)
			return;
		type = len < 4 ? NULL : frame_at(f, l4, 1, &buf);
		if (!type) {
			p->malformed = 1;
			return;
		}
		p->ndp = *type >= 133 && *type <= 137;
		p->echo = *type == 128;
		return;
	}
	}
}

static __always_inline void parse_ipv4(struct pkt *p, const struct frame *f, __u32 l3)
{
	struct iphdr buf, *ip = frame_at(f, l3, sizeof(buf), &buf);
	__u32 frame_len, hdr_len, tot_len;

	p->family = XDPBAN_FAMILY_INET;
	if (!ip) {
		p->malformed = 1; /* no trustworthy source */
		return;
	}
	p->attributed = 1;
	__builtin_memcpy(p->saddr, &ip->saddr, 4);
	__builtin_memcpy(p->daddr, &ip->daddr, 4);
	p->hop = xdpban_hop_of_ttl(ip->ttl);

	frame_len = f->len - l3;
	hdr_len = ip->ihl * 4u;
	tot_len = bpf_ntohs(ip->tot_len);
	if (tot_len == 0 && frame_len > IP_LEN_FIELD_MAX)
		tot_len = frame_len; /* an aggregate: BIG TCP writes 0 for what 16 bits cannot hold */
	if (ip->version != 4 || ip->ihl < 5 || hdr_len > frame_len || tot_len < hdr_len ||
	    tot_len > frame_len) {
		p->malformed = 1;
		return;
	}
	if (ip->frag_off & bpf_htons(0x3fff))
		return; /* fragments get L3 checks only */
	parse_l4(p, f, ip->protocol, l3 + hdr_len, tot_len - hdr_len);
}

/* The walk below tells header types apart without comparing nexthdr with constants: a
 * compare would leave nexthdr a known constant on one side, and the verifier would then walk
 * every later header once for each type it could have been. */

/* 1 for the authentication header, 0 for any other type, without a branch. */
static __always_inline __u32 ipv6_is_auth(__u32 nexthdr)
{
	__u64 auth = ((__u64)(nexthdr ^ NEXTHDR_AUTH_) - 1) >> 63;

	asm volatile("" : "+r"(auth)); /* keeps clang from turning it back into a compare */
	return (__u32)auth;
}

/* An extension header's length: 4-byte units plus 2 for AH, 8-byte units plus 1 for the rest. */
static __always_inline __u32 ipv6_ext_len(__u32 nexthdr, __u8 hdrlen)
{
	__u32 auth = ipv6_is_auth(nexthdr);

	return ((hdrlen + 1u) * 8u) - auth * ((hdrlen + 1u) * 8u - (hdrlen + 2u) * 4u);
}

/* The extension headers the walk follows (hop-by-hop, routing, destination options, AH), as
 * bits of their types, all below 64. */
#define IPV6_EXT_TYPES                                                                           \
	(1ull << NEXTHDR_HOP_ | 1ull << NEXTHDR_ROUTING_ | 1ull << NEXTHDR_DEST_ |               \
	 1ull << NEXTHDR_AUTH_)

static __always_inline int ipv6_is_ext(__u32 nexthdr)
{
	return nexthdr < 64 && ((IPV6_EXT_TYPES >> nexthdr) & 1);
}

/* The end of the IPv6 payload, as an offset from the IPv6 header. */
static __always_inline __u32 ipv6_end(const struct ipv6hdr *ip6, __u32 frame_len)
{
	__u32 payload = bpf_ntohs(ip6->payload_len);

	/* An aggregate (BIG TCP, with or without a Jumbo Payload option): the frame decides. */
	if (payload == 0 && frame_len - sizeof(*ip6) > IP_LEN_FIELD_MAX)
		return frame_len;
	return sizeof(*ip6) + payload;
}

/* What ipv6_ext_walk found after the extension headers, in the top bits of its answer. */
#define EXT_L4 0ull        /* the L4 header: its protocol and offset are in the low bits */
#define EXT_NO_L4 1ull     /* no L4 checks: no next header, a fragment, or too deep to follow */
#define EXT_MALFORMED 2ull /* the chain runs past the payload */
#define EXT_SHIFT 40
#define EXT_ANSWER(what, nexthdr, off) ((what) << EXT_SHIFT | (__u64)(nexthdr) << 32 | (off))

/* Follows the IPv6 extension headers from the one of type nexthdr at offset off of the IPv6
 * header at l3, whose payload ends at end (offsets from l3). A global function: the walk is
 * verified once, and the rest of the parser once after it. EXT_ANSWER(what, nexthdr, off). */
__attribute__((noinline)) __u64 ipv6_ext_walk(struct xdp_md *ctx, __u32 frame_len, __u32 l3,
					      __u32 end, __u32 nexthdr)
{
	struct frame f = { .ctx = ctx, .data = (void *)(long)ctx->data,
			   .data_end = (void *)(long)ctx->data_end, .len = frame_len };
	__u32 off = sizeof(struct ipv6hdr);

	if (l3 > 14 + VLAN_MAX_TAGS * 4)
		return EXT_ANSWER(EXT_NO_L4, 0, 0); /* cannot happen: gives the verifier its bound */
	/* Unrolled: a counter spilled around the helper call would reach the verifier as an
	 * unknown number, and it would walk the loop until off alone ended it. */
#pragma clang loop unroll(full)
	for (int i = 0; i <= IPV6_MAX_EXT_HDRS; i++) {
		__u8 ebuf[2], *ext;

		if (nexthdr == NEXTHDR_NONE_)
			return EXT_ANSWER(EXT_NO_L4, 0, 0);
		if (!ipv6_is_ext(nexthdr) && nexthdr != NEXTHDR_FRAGMENT_)
			break;
		if (i == IPV6_MAX_EXT_HDRS || off > L3_MAX_OFF)
			return EXT_ANSWER(EXT_NO_L4, 0, 0); /* too deep to follow: no L4 checks */
		if (nexthdr == NEXTHDR_FRAGMENT_) /* fragments get L3 checks only */
			return EXT_ANSWER(off + 8 > end ? EXT_MALFORMED : EXT_NO_L4, 0, 0);
		ext = off + 2 > end ? NULL : frame_at(&f, l3 + off, sizeof(ebuf), ebuf);
		if (!ext)
			return EXT_ANSWER(EXT_MALFORMED, 0, 0);
		off += ipv6_ext_len(nexthdr, ext[1]);
		nexthdr = ext[0];
		if (off > end)
			return EXT_ANSWER(EXT_MALFORMED, 0, 0);
	}
	if (off > L3_MAX_OFF)
		return EXT_ANSWER(EXT_NO_L4, 0, 0);
	return EXT_ANSWER(EXT_L4, nexthdr, off);
}

static __always_inline void parse_ipv6(struct pkt *p, const struct frame *f, __u32 l3)
{
	struct ipv6hdr buf, *ip6 = frame_at(f, l3, sizeof(buf), &buf);
	__u32 end, frame_len, nexthdr, off;
	__u64 walk;

	p->family = XDPBAN_FAMILY_INET6;
	if (!ip6) {
		p->malformed = 1;
		return;
	}
	p->attributed = 1;
	__builtin_memcpy(p->saddr, &ip6->saddr, 16);
	__builtin_memcpy(p->daddr, &ip6->daddr, 16);
	p->hop = xdpban_hop_of_ttl(ip6->hop_limit);

	frame_len = f->len - l3;
	end = ipv6_end(ip6, frame_len);
	if (ip6->version != 6 || end > frame_len) {
		p->malformed = 1;
		return;
	}
	nexthdr = ip6->nexthdr;
	if (ipv6_is_ext(nexthdr) || nexthdr == NEXTHDR_FRAGMENT_ || nexthdr == NEXTHDR_NONE_)
		walk = ipv6_ext_walk(f->ctx, f->len, l3, end, nexthdr);
	else /* the L4 header right after the fixed one: most packets, and no call */
		walk = EXT_ANSWER(EXT_L4, nexthdr, sizeof(*ip6));
	switch (walk >> EXT_SHIFT) {
	case EXT_L4:
		off = (__u32)walk;
		if (off <= end) /* always so: the walk stops past the end */
			parse_l4(p, f, (__u8)(walk >> 32), l3 + off, end - off);
		return;
	case EXT_MALFORMED:
		p->malformed = 1;
	}
}

/* Fills *p from the frame. Leaves p->family 0 for anything that is not IP. */
static __always_inline void parse_frame(struct xdp_md *ctx, struct pkt *p)
{
	struct frame f = { .ctx = ctx, .data = (void *)(long)ctx->data,
			   .data_end = (void *)(long)ctx->data_end,
			   .len = bpf_xdp_get_buff_len(ctx) };
	struct ethhdr ebuf, *eth = frame_at(&f, 0, sizeof(ebuf), &ebuf);
	__u32 l3_off = sizeof(*eth);
	__be16 proto;
	int i;

	p->bytes = f.len;
	if (!eth)
		return;
	proto = eth->h_proto;
	for (i = 0; i < VLAN_MAX_TAGS; i++) {
		struct vlan_tag tbuf, *tag;

		if (proto != bpf_htons(ETH_P_8021Q_) && proto != bpf_htons(ETH_P_8021AD_))
			break;
		tag = frame_at(&f, l3_off, sizeof(tbuf), &tbuf);
		if (!tag)
			return;
		proto = tag->encap_proto;
		l3_off += sizeof(*tag);
	}
	if (proto == bpf_htons(ETH_P_IP))
		parse_ipv4(p, &f, l3_off);
	else if (proto == bpf_htons(ETH_P_IPV6))
		parse_ipv6(p, &f, l3_off);
}

/* The parse stage: fills *p, which the caller zeroed, from the frame. A global function, so
 * that the verifier walks the parser once and every later stage once, with what the parser
 * found unknown; inlined, each later stage would be walked again for every combination of
 * the flags the parser can set. Returns 0. */
__attribute__((noinline)) int parse_packet(struct xdp_md *ctx, struct pkt *p)
{
	if (!p)
		return 0;
	parse_frame(ctx, p);
	return 0;
}

#endif /* XDPBAN_BPF_PARSE_H */
