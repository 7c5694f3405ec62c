/* socket.h - a packet's socket tuple (what the kernel's socket lookups take, with the packet's
 * source as the remote end and its destination as this host's) and the socket it would reach.
 * Used by the spoof defence's learning (verify.h), the probe class (classify.h) and allow-only
 * mode's exemptions (allow.h); never decides anything itself. */
#ifndef XDPBAN_BPF_SOCKET_H
#define XDPBAN_BPF_SOCKET_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "parse.h"

#define TCP_FLAG_SYN_ 0x02
#define TCP_FLAG_RST_ 0x04
#define TCP_FLAG_ACK_ 0x10

/* Fills *t from a TCP segment or UDP datagram; returns the size to pass to the lookup. */
static __always_inline __u32 pkt_tuple(const struct pkt *p, struct bpf_sock_tuple *t)
{
	if (p->family == XDPBAN_FAMILY_INET) {
		__builtin_memcpy(&t->ipv4.saddr, p->saddr, 4);
		__builtin_memcpy(&t->ipv4.daddr, p->daddr, 4);
		t->ipv4.sport = p->sport;
		t->ipv4.dport = p->dport;
		return sizeof(t->ipv4);
	}
	__builtin_memcpy(t->ipv6.saddr, p->saddr, 16);
	__builtin_memcpy(t->ipv6.daddr, p->daddr, 16);
	t->ipv6.sport = p->sport;
	t->ipv6.dport = p->dport;
	return sizeof(t->ipv6);
}

/* The state of the TCP socket of this host (a listener, or a connection) that would take the
 * segment; -1 when none would.
 * Global functions, one per lookup, so that each tuple has a frame of its own and the verifier
 * never sees one load from two kinds of socket pointer. */
__attribute__((noinline)) int tcp_socket_state(struct xdp_md *ctx, const struct pkt *p)
{
	struct bpf_sock_tuple t = {};
	struct bpf_sock *sk;
	int state;

	if (!ctx || !p)
		return -1;
	sk = bpf_skc_lookup_tcp(ctx, &t, pkt_tuple(p, &t), BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return -1;
	state = sk->state;
	bpf_sk_release(sk);
	return state;
}

/* The same for the UDP socket that would take the datagram: a connected one
 * (BPF_TCP_ESTABLISHED), or one bound to the port. */
__attribute__((noinline)) int udp_socket_state(struct xdp_md *ctx, const struct pkt *p)
{
	struct bpf_sock_tuple t = {};
	struct bpf_sock *sk;
	int state;

	if (!ctx || !p)
		return -1;
	sk = bpf_sk_lookup_udp(ctx, &t, pkt_tuple(p, &t), BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return -1;
	state = sk->state;
	bpf_sk_release(sk);
	return state;
}

/* The state of the socket that would take the TCP segment or UDP datagram, or -1. */
static __always_inline int packet_socket_state(struct xdp_md *ctx, const struct pkt *p)
{
	return p->is_tcp ? tcp_socket_state(ctx, p) : udp_socket_state(ctx, p);
}

#endif /* XDPBAN_BPF_SOCKET_H */
