/* allow.h - what allow-only mode lets through although its source is in no allow list
 * (docs/datapath.md, "Allow-only mode"): a segment or datagram of a connection of this host:
 * one the host opened (the answers to its own queries, updates, backups) or accepted before the
 * mode came on (the operator's SSH session). A source no real host has (the built-in set: ::,
 * 0.0.0.0, broadcast, multicast) is no connection of it and is dropped like any other. Asked
 * only on the not-allowed drop path, so it costs nothing elsewhere. Never writes a map. NDP and
 * non-IP frames never reach the policy at all. */
#ifndef XDPBAN_BPF_ALLOW_H
#define XDPBAN_BPF_ALLOW_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xdpban_policy.h"
#include "socket.h"

/* The state of the TCP socket of this host that would take the segment; -1 when none would.
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

/* The same for the UDP socket that would take the datagram. */
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

/* 1 when the not-allowed packet may go on: a TCP segment that a socket of this host other
 * than a listener takes (a connection in any state, a connect() awaiting its
 * SYN-ACK), or a UDP datagram that a connected UDP socket takes. A listener or an unconnected
 * UDP socket is a service, which the allow lists are for. A SYN without ACK opens a
 * connection, so it is never one of the host's and costs no lookup: a SYN flood from outside
 * the allow lists is dropped for the price of a denied packet. */
static __always_inline int allow_exempt(struct xdp_md *ctx, const struct pkt *p)
{
	int state;

	if (p->is_tcp) {
		if ((p->tcp_flags & (TCP_FLAG_SYN_ | TCP_FLAG_ACK_)) == TCP_FLAG_SYN_)
			return 0;
		state = tcp_socket_state(ctx, p);
		return state >= 0 && state != BPF_TCP_LISTEN;
	}
	if (p->is_udp)
		return udp_socket_state(ctx, p) == BPF_TCP_ESTABLISHED;
	return 0;
}

#endif /* XDPBAN_BPF_ALLOW_H */
