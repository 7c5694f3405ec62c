/* parse.h - reads a frame into struct pkt: addresses, protocol and whether the headers are
 * consistent (docs/datapath.md, section 1). It only reads; it never decides a verdict. */
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
/* XDP frames without frags fit in a page; this bound only reassures the verifier. */
#define L3_MAX_OFF 4096

#define NEXTHDR_HOP_ 0
#define NEXTHDR_ROUTING_ 43
#define NEXTHDR_FRAGMENT_ 44
#define NEXTHDR_AUTH_ 51
#define NEXTHDR_NONE_ 59
#define NEXTHDR_DEST_ 60
#define IPPROTO_ICMPV6_ 58

/* Everything the later stages need to know about one frame. */
struct pkt {
	__u32 bytes;     /* frame length */
	__u8 family;     /* 0: not IP; XDPBAN_FAMILY_INET or XDPBAN_FAMILY_INET6 */
	__u8 attributed; /* the source address is known */
	__u8 malformed;  /* inconsistent L3/L4 headers or impossible TCP flags */
	__u8 ndp;        /* ICMPv6 neighbour discovery */
	__u8 hop;        /* hop count from the TTL or hop limit (xdpban_hop_of_ttl) */
	__u8 tcp_flags;  /* of a TCP segment whose header was checked and is in the frame */
	__u8 is_tcp;     /* that segment's fields below are valid */
	__u8 saddr[16];  /* network byte order; IPv4 in the first 4 bytes */
	__u8 daddr[16];  /* network byte order, likewise */
	__be16 sport, dport;
	__be32 seq, ack_seq; /* network byte order */
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

/* L4 checks against the L4 region [l4, l4 + len) that the IP header declares. */
static __always_inline void parse_l4(struct pkt *p, __u8 proto, void *l4, __u32 len,
				     void *data_end)
{
	switch (proto) {
	case IPPROTO_TCP: {
		struct tcphdr *tcp = l4;

		if (len < sizeof(*tcp) || (void *)(tcp + 1) > data_end) {
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
		struct udphdr *udp = l4;
		__u32 ulen;

		if (len < sizeof(*udp) || (void *)(udp + 1) > data_end) {
			p->malformed = 1;
			return;
		}
		ulen = bpf_ntohs(udp->len);
		if (ulen < sizeof(*udp) || ulen > len)
			p->malformed = 1;
		return;
	}
	case IPPROTO_ICMP:
		if (p->family == XDPBAN_FAMILY_INET && len < 8)
			p->malformed = 1;
		return;
	case IPPROTO_ICMPV6_: {
		__u8 *type = l4;

		if (p->family != XDPBAN_FAMILY_INET6)
			return;
		if (len < 4 || (void *)(type + 4) > data_end) {
			p->malformed = 1;
			return;
		}
		p->ndp = *type >= 133 && *type <= 137;
		return;
	}
	}
}

static __always_inline void parse_ipv4(struct pkt *p, void *l3, void *data_end)
{
	struct iphdr *ip = l3;
	__u32 frame_len, hdr_len, tot_len;

	p->family = XDPBAN_FAMILY_INET;
	if ((void *)(ip + 1) > data_end) {
		p->malformed = 1; /* no trustworthy source */
		return;
	}
	p->attributed = 1;
	__builtin_memcpy(p->saddr, &ip->saddr, 4);
	__builtin_memcpy(p->daddr, &ip->daddr, 4);
	p->hop = xdpban_hop_of_ttl(ip->ttl);

	frame_len = data_end - l3;
	hdr_len = ip->ihl * 4u;
	tot_len = bpf_ntohs(ip->tot_len);
	if (ip->version != 4 || ip->ihl < 5 || hdr_len > frame_len || tot_len < hdr_len ||
	    tot_len > frame_len) {
		p->malformed = 1;
		return;
	}
	if (ip->frag_off & bpf_htons(0x3fff))
		return; /* fragments get L3 checks only */
	parse_l4(p, ip->protocol, l3 + hdr_len, tot_len - hdr_len, data_end);
}

static __always_inline __u32 ipv6_ext_len(__u8 nexthdr, __u8 hdrlen)
{
	return nexthdr == NEXTHDR_AUTH_ ? (hdrlen + 2u) * 4u : (hdrlen + 1u) * 8u;
}

static __always_inline int ipv6_is_ext(__u8 nexthdr)
{
	return nexthdr == NEXTHDR_HOP_ || nexthdr == NEXTHDR_ROUTING_ ||
	       nexthdr == NEXTHDR_DEST_ || nexthdr == NEXTHDR_AUTH_;
}

static __always_inline void parse_ipv6(struct pkt *p, void *l3, void *data_end)
{
	struct ipv6hdr *ip6 = l3;
	__u32 off = sizeof(*ip6), end;
	__u8 nexthdr;
	int i;

	p->family = XDPBAN_FAMILY_INET6;
	if ((void *)(ip6 + 1) > data_end) {
		p->malformed = 1;
		return;
	}
	p->attributed = 1;
	__builtin_memcpy(p->saddr, &ip6->saddr, 16);
	__builtin_memcpy(p->daddr, &ip6->daddr, 16);
	p->hop = xdpban_hop_of_ttl(ip6->hop_limit);

	end = sizeof(*ip6) + bpf_ntohs(ip6->payload_len);
	if (ip6->version != 6 || end > (__u32)(data_end - l3)) {
		p->malformed = 1;
		return;
	}
	nexthdr = ip6->nexthdr;
	for (i = 0; i <= IPV6_MAX_EXT_HDRS; i++) {
		__u8 *ext;

		if (nexthdr == NEXTHDR_NONE_)
			return;
		if (!ipv6_is_ext(nexthdr) && nexthdr != NEXTHDR_FRAGMENT_)
			break;
		if (i == IPV6_MAX_EXT_HDRS || off > L3_MAX_OFF)
			return; /* too deep to follow: no L4 checks */
		if (nexthdr == NEXTHDR_FRAGMENT_) {
			if (off + 8 > end)
				p->malformed = 1;
			return; /* fragments get L3 checks only */
		}
		ext = l3 + off;
		if (off + 2 > end || (void *)(ext + 2) > data_end) {
			p->malformed = 1;
			return;
		}
		off += ipv6_ext_len(nexthdr, ext[1]);
		nexthdr = ext[0];
		if (off > end) {
			p->malformed = 1;
			return;
		}
	}
	if (off > L3_MAX_OFF)
		return;
	parse_l4(p, nexthdr, l3 + off, end - off, data_end);
}

/* Fills *p from the frame. Leaves p->family 0 for anything that is not IP. */
static __always_inline void parse_frame(struct xdp_md *ctx, struct pkt *p)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u32 l3_off = sizeof(*eth);
	__be16 proto;
	int i;

	p->bytes = data_end - data;
	if ((void *)(eth + 1) > data_end)
		return;
	proto = eth->h_proto;
	for (i = 0; i < VLAN_MAX_TAGS; i++) {
		struct vlan_tag *tag = data + l3_off;

		if (proto != bpf_htons(ETH_P_8021Q_) && proto != bpf_htons(ETH_P_8021AD_))
			break;
		if ((void *)(tag + 1) > data_end)
			return;
		proto = tag->encap_proto;
		l3_off += sizeof(*tag);
	}
	if (proto == bpf_htons(ETH_P_IP))
		parse_ipv4(p, data + l3_off, data_end);
	else if (proto == bpf_htons(ETH_P_IPV6))
		parse_ipv6(p, data + l3_off, data_end);
}

#endif /* XDPBAN_BPF_PARSE_H */
