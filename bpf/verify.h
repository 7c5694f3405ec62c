/* verify.h - the spoof defence's learning (docs/datapath.md, section 8): a clean TCP segment
 * that belongs to an established connection of this host, in its sequence window, proves that
 * its source hears what is sent to it, so its hop count is recorded as verified. Only 1 in
 * 2^learn_shift segments with ACK is looked at, chosen by their sequence numbers mixed with the
 * table seed, so the cost on clean traffic is a test and a multiply, and a forger, who cannot
 * tell which numbers are looked at, cannot make every forged segment cost a socket lookup.
 * Never decides a verdict. */
#ifndef XDPBAN_BPF_VERIFY_H
#define XDPBAN_BPF_VERIFY_H

#include <linux/bpf.h>
#include "count.h"
#include "parse.h"
#include "socket.h"
#define LEARN_SEQ_SLACK 65536u /* sequence numbers this far outside the window still count */

/* The fields of the kernel's tcp_sock read here (CO-RE: located through the kernel's BTF). */
struct tcp_sock {
	__u32 rcv_nxt;
	__u32 rcv_wnd;
	__u32 snd_una;
	__u32 snd_nxt;
} __attribute__((preserve_access_index));

/* A sampled segment: ACK set, no SYN or RST, and its sequence numbers, keyed with the seed,
 * hash low enough. */
static __always_inline int learn_sampled(const struct pkt *p, __u8 shift, __u64 seed)
{
	__u32 h;

	if (!p->is_tcp || shift == XDPBAN_LEARN_OFF)
		return 0;
	if ((p->tcp_flags & (TCP_FLAG_ACK_ | TCP_FLAG_SYN_ | TCP_FLAG_RST_)) != TCP_FLAG_ACK_)
		return 0;
	if (shift == 0)
		return 1;
	/* Each number is mixed on its own: in a request-response exchange both advance by the
	 * same amount, and seq ^ ack_seq then takes only a few values, which might all miss. */
	h = (p->seq ^ (__u32)(seed >> 32)) * 0x9e3779b1u;
	h = (h ^ p->ack_seq) * 0x85ebca6bu;
	return (h >> (32 - shift)) == 0;
}

/* The segment lies in the connection's windows: a forger must guess both numbers. */
static __always_inline int in_window(const struct tcp_sock *tp, __u32 seq, __u32 ack)
{
	__u32 wnd = tp->rcv_wnd + LEARN_SEQ_SLACK;
	__s32 s = (__s32)(seq - tp->rcv_nxt);

	if (s > (__s32)wnd || s < -(__s32)wnd)
		return 0;
	return (__s32)(ack - tp->snd_nxt) <= 0 &&
	       (__s32)(ack - tp->snd_una) >= -(__s32)LEARN_SEQ_SLACK;
}

/* 1 when the segment belongs to an established connection of this host. */
static __always_inline int segment_established(struct xdp_md *ctx, const struct pkt *p)
{
	struct bpf_sock_tuple t = {};
	struct bpf_sock *sk;
	struct tcp_sock *tp;
	__u32 size;
	int ok = 0;

	size = pkt_tuple(p, &t);
	sk = bpf_skc_lookup_tcp(ctx, &t, size, BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return 0;
	if (sk->state == BPF_TCP_ESTABLISHED) {
		tp = (struct tcp_sock *)bpf_skc_to_tcp_sock(sk);
		ok = tp && in_window(tp, bpf_ntohl(p->seq), bpf_ntohl(p->ack_seq));
	}
	bpf_sk_release(sk);
	return ok;
}

/* Records key as verified at hop count `hop` (a global function, like count.h's). */
__attribute__((noinline)) int hop_verify(const struct xdpban_key *key, __u64 seed, __u32 hop,
					 __u64 bytes)
{
	const struct xdpban_config *cfg = config_get(); /* no read-only argument to a global */
	__u32 groups = map_entries(&xdpban_counts), home, now_s;
	struct xdpban_group *g;

	if (!key || !groups)
		return 0;
	home = xdpban_key_home(seed, key, groups);
	g = bpf_map_lookup_elem(&xdpban_counts, &home);
	if (!g)
		return 0;
	now_s = clock_now_ns() / NS_PER_SEC;
	if (xdpban_ctr_verify(g, key, hop, now_s, cfg->window_s, cfg->hop_tolerance) != 1)
		return 0;
	stat_add(XDPBAN_STAT_SOURCES_VERIFIED, 1, bytes);
	return 1;
}

/* Records the source's hop count when the sampled segment belongs to an established
 * connection. A global function: the socket lookup's branches are verified once. */
__attribute__((noinline)) int learn_verify(struct xdp_md *ctx, const struct pkt *p,
					   const struct xdpban_key *key, __u64 seed)
{
	if (!p || !key || !segment_established(ctx, p))
		return 0;
	return hop_verify(key, seed, p->hop, p->bytes);
}

/* Learns the source's hop count from a clean packet, when it is a sampled segment of an
 * established connection. The sampling is inline: a clean packet that is not sampled pays no
 * call. */
static __always_inline void learn_hop(struct xdp_md *ctx, const struct pkt *p,
				      const struct xdpban_config *cfg,
				      const struct xdpban_key *key, __u64 seed)
{
	if (cfg->spoof != XDPBAN_SPOOF_OFF && learn_sampled(p, cfg->learn_shift, seed))
		learn_verify(ctx, p, key, seed);
}

#endif /* XDPBAN_BPF_VERIFY_H */
