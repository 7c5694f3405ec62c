/* guard.h - the protocol guards of UDP ports (docs/datapath.md, section 9): one function per
 * profile of XDPBAN_GUARDS (include/xdpban_ports.h), each saying whether a datagram breaks
 * its protocol, and guard_error() choosing among them. Only reads the payload; never counts.
 * A new protocol is a row in XDPBAN_GUARDS, a function here and a case in guard_error(). */
#ifndef XDPBAN_BPF_GUARD_H
#define XDPBAN_BPF_GUARD_H

#include "parse.h"
#include "xdpban_ports.h"

static __always_inline __u32 be32_at(const __u8 *b)
{
	return (__u32)b[0] << 24 | (__u32)b[1] << 16 | (__u32)b[2] << 8 | b[3];
}

static __always_inline __u16 be16_at(const __u8 *b)
{
	return (__u16)(b[0] << 8 | b[1]);
}

/* BEP 15 (bittorrent.org, beps/bep_0015.rst): the checks a packet filter can make. Longer announces and
 * connects (BEP 41 extensions) are valid; only the tracker can judge the connection ID. */
static __always_inline int bep15_error(const struct frame *f, __u32 off, __u32 len)
{
	__u8 hbuf[XDPBAN_BEP15_HEADER], tbuf[XDPBAN_BEP15_PORT_OFF + 2 - XDPBAN_BEP15_EVENT_OFF];
	const __u8 *h, *t;

	if (len < XDPBAN_BEP15_HEADER)
		return 1;
	h = frame_at(f, off, sizeof(hbuf), hbuf);
	if (!h)
		return 1;
	switch (be32_at(h + 8)) {
	case XDPBAN_BEP15_CONNECT:
		return ((__u64)be32_at(h) << 32 | be32_at(h + 4)) != XDPBAN_BEP15_MAGIC;
	case XDPBAN_BEP15_ANNOUNCE:
		if (len < XDPBAN_BEP15_ANNOUNCE_MIN)
			return 1;
		t = frame_at(f, off + XDPBAN_BEP15_EVENT_OFF, sizeof(tbuf), tbuf);
		if (!t)
			return 1;
		return be32_at(t) > XDPBAN_BEP15_EVENT_MAX ||
		       be16_at(t + XDPBAN_BEP15_PORT_OFF - XDPBAN_BEP15_EVENT_OFF) == 0;
	case XDPBAN_BEP15_SCRAPE:
		return len == XDPBAN_BEP15_HEADER || (len - XDPBAN_BEP15_HEADER) % XDPBAN_BEP15_HASH;
	}
	return 1; /* an error response (3) only goes to clients; anything else is junk */
}

/* A DNS query header (RFC 1035 section 4.1.1): not a response, an opcode a client sends to a
 * server (QUERY, NOTIFY, UPDATE), and a QUERY asks one question and carries no answers. */
static __always_inline int dns_error(const struct frame *f, __u32 off, __u32 len)
{
	const __u16 qr = 0x8000, opcode_shift = 11, opcode_mask = 0xf;
	const __u16 query = 0, notify = 4, update = 5;
	__u8 hbuf[XDPBAN_DNS_HEADER];
	const __u8 *h;
	__u16 flags, opcode;

	if (len < XDPBAN_DNS_HEADER)
		return 1;
	h = frame_at(f, off, sizeof(hbuf), hbuf);
	if (!h)
		return 1;
	flags = be16_at(h + 2);
	opcode = (flags >> opcode_shift) & opcode_mask;
	if (flags & qr)
		return 1;
	if (opcode == query)
		return len < XDPBAN_DNS_QUERY_MIN || be16_at(h + 4) != 1 || be16_at(h + 6) != 0;
	return opcode != notify && opcode != update;
}

/* 1 when a datagram to a port of profile `guard` breaks its protocol; its payload is the len
 * bytes at off in a frame of frame_len bytes. A global function: verified once, with its
 * buffers in a frame of its own (the caller's stack is near the verifier's limit). */
__attribute__((noinline)) int guard_error(struct xdp_md *ctx, __u32 guard, __u32 off,
					  __u32 len, __u32 frame_len)
{
	struct frame f = { .ctx = ctx, .data = (void *)(long)ctx->data,
			   .data_end = (void *)(long)ctx->data_end, .len = frame_len };

	if (off > PAYLOAD_OFF_MAX)
		return 0; /* cannot happen (parse.h); gives the verifier its bound */
	switch (guard) {
	case XDPBAN_GUARD_BEP15:
		return bep15_error(&f, off, len);
	case XDPBAN_GUARD_DNS:
		return dns_error(&f, off, len);
	}
	return 0; /* a profile this program does not know: no rule */
}

#endif /* XDPBAN_BPF_GUARD_H */
