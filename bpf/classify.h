/* classify.h - error classes of a parsed packet (docs/datapath.md, stage 5 and section 9). One
 * function per class; classify() ORs them. A new class is a row of XDPBAN_CLASSES
 * (include/xdpban_config.h) and one function here. Never counts.
 *
 * The probe class is decided in two steps: classify() marks a packet to a port that is not
 * open, cheaply, before the policy; probe_confirm() asks the kernel for a socket bound to it
 * only for a packet that got past the policy and the ban check, so that neither a clean packet
 * nor a banned scanner's pays for the lookup. */
#ifndef XDPBAN_BPF_CLASSIFY_H
#define XDPBAN_BPF_CLASSIFY_H

#include "guard.h"
#include "maps.h"
#include "parse.h"
#include "socket.h"
#include "xdpban_config.h"
#include "xdpban_policy.h"
#include "xdpban_ports.h"

static __always_inline __u32 class_malformed(const struct pkt *p)
{
	return p->malformed ? XDPBAN_CLASS_MALFORMED : 0;
}

/* The port's byte of xdpban_ports (0, no rules, if the map cannot be read). */
static __always_inline __u8 port_rules(__be16 port)
{
	__u32 p = bpf_ntohs(port), word = xdpban_port_word(p);
	__u64 *w = bpf_map_lookup_elem(&xdpban_ports, &word);

	return w ? xdpban_port_byte(*w, p) : 0;
}

/* A datagram to a guarded port breaks its profile; a source port of 0 is never a real
 * client's, whatever the profile. */
static __always_inline int guarded_error(struct xdp_md *ctx, const struct pkt *p, __u8 rules)
{
	return p->sport == 0 || guard_error(ctx, rules & XDPBAN_PORT_GUARD_MASK, p->payload_off,
					    p->payload_len, p->bytes);
}

/* protocol: a datagram to a guarded port that breaks the port's profile. probe (first step):
 * a datagram to a UDP port neither open nor guarded, a SYN without ACK to a TCP port not
 * open, or an echo request when echoes count. */
static __always_inline __u32 class_ports(struct xdp_md *ctx, const struct pkt *p, __u8 ports)
{
	__u8 rules;

	if (p->echo)
		return (ports & XDPBAN_PORTS_PROBE_ICMP) ? XDPBAN_CLASS_PROBE : 0;
	if (p->is_udp) {
		rules = port_rules(p->dport);
		if (rules & XDPBAN_PORT_GUARD_MASK)
			return (ports & XDPBAN_PORTS_GUARD) && guarded_error(ctx, p, rules)
				       ? XDPBAN_CLASS_PROTOCOL
				       : 0;
		return (ports & XDPBAN_PORTS_PROBE) && !(rules & XDPBAN_PORT_UDP_OPEN) &&
				       !xdpban_addr_is_group(p->family, p->daddr)
			       ? XDPBAN_CLASS_PROBE
			       : 0;
	}
	if (p->is_tcp && (ports & XDPBAN_PORTS_PROBE) &&
	    (p->tcp_flags & (TCP_FLAG_SYN_ | TCP_FLAG_ACK_)) == TCP_FLAG_SYN_)
		return (port_rules(p->dport) & XDPBAN_PORT_TCP_OPEN) ? 0 : XDPBAN_CLASS_PROBE;
	return 0;
}

/* The IP protocol of an error packet whose L4 header was read whole (IPPROTO_*), for its ban's
 * record of the error that crossed the limit; 0 for a malformed one, whose ports are not to be
 * trusted. Its destination port is p->dport for TCP and UDP. */
static __always_inline __u8 error_proto(const struct pkt *p)
{
	if (p->malformed)
		return 0;
	if (p->is_tcp)
		return IPPROTO_TCP;
	if (p->is_udp)
		return IPPROTO_UDP;
	if (p->echo)
		return p->family == XDPBAN_FAMILY_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6_;
	return 0;
}

/* The enabled error classes of the packet; 0 means it is not an error. A malformed packet's
 * ports are not to be trusted, so it meets no port rule. */
static __always_inline __u32 classify(struct xdp_md *ctx, const struct pkt *p,
				      const struct xdpban_config *cfg)
{
	__u32 classes = class_malformed(p);

	if (!classes && cfg->ports)
		classes = class_ports(ctx, p, cfg->ports);
	return classes & cfg->class_mask;
}

/* 1 when a socket of this host's network namespace would take the segment or datagram: a TCP
 * listener (or connection), a UDP socket bound to the port (a service not listed as open, or
 * the host's own query awaiting its answer on an ephemeral port). A global function, so that
 * its tuple has a frame of its own. */
__attribute__((noinline)) int port_has_socket(struct xdp_md *ctx, const struct pkt *p)
{
	struct bpf_sock_tuple t = {};
	struct bpf_sock *sk;
	__u32 size;

	if (!ctx || !p)
		return 0;
	size = pkt_tuple(p, &t);
	if (p->is_tcp)
		sk = bpf_skc_lookup_tcp(ctx, &t, size, BPF_F_CURRENT_NETNS, 0);
	else
		sk = bpf_sk_lookup_udp(ctx, &t, size, BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return 0;
	bpf_sk_release(sk);
	return 1;
}

/* The probe class's second step: a packet to a port with a socket is not a probe. */
static __always_inline __u32 probe_confirm(struct xdp_md *ctx, const struct pkt *p,
					   __u32 classes)
{
	if ((classes & XDPBAN_CLASS_PROBE) && !p->echo && port_has_socket(ctx, p))
		classes &= ~XDPBAN_CLASS_PROBE;
	return classes;
}

#endif /* XDPBAN_BPF_CLASSIFY_H */
