/* socket.h - a packet's socket tuple: what the kernel's socket lookups take, with the packet's
 * source as the remote end and its destination as this host's. Used by the spoof defence's
 * learning (verify.h) and the probe class (classify.h); never decides anything itself. */
#ifndef XDPBAN_BPF_SOCKET_H
#define XDPBAN_BPF_SOCKET_H

#include <linux/bpf.h>
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

#endif /* XDPBAN_BPF_SOCKET_H */
