/* test_verdict.c - the verdict of the real XDP program, one packet at a time, against
 * docs/datapath.md: a table of rows {description, frame, policy/ban/config, expected action,
 * expected verdict slot, counted or not}, each run through BPF_PROG_TEST_RUN on a cleared state;
 * then the threshold itself (errors 1..10 leave a source alone, the 11th bans it). Every row
 * checks the action, every stats slot (packets and bytes) and the counter table, once as one
 * buffer and once as a multi-buffer frame split at each of its header boundaries in turn (the
 * data path is loaded with frags, as xdpband loads it).
 *
 * The state is cleared between rows, never reloaded, so the verdict slots of the whole run must
 * add up to the packets sent: the last test checks that. Never pins anything; needs root.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "dp.h"
#include "pkt.h"
#include "xdpban_event.h"
#include "xdpban_time.h"

#define ETH PKT_ETH_LEN
#define TAG PKT_VLAN_LEN
#define V4 PKT_IP4_LEN
#define V6 PKT_IP6_LEN

#define JUMBO 9000 /* an MTU: IP bytes in a jumbo frame */
#define AGG 65600  /* IP bytes in a GSO/GRO aggregate; small enough for every split (DP_FRAME_MAX) */

#define SRC4 "192.0.2.10"
#define SRC6 "2001:db8:1:2::10" /* counted and banned as 2001:db8:1:2::/64 */

/* Frames: the source, the L4 layer, then whatever the row makes wrong. */
#define FROM(addr, l4type, ...) { .src = addr, .l4 = l4type, __VA_ARGS__ }
#define TCP4(...) FROM(SRC4, PKT_L4_TCP, __VA_ARGS__)
#define UDP4(...) FROM(SRC4, PKT_L4_UDP, __VA_ARGS__)
#define ICMP4(...) FROM(SRC4, PKT_L4_ICMP, __VA_ARGS__)
#define RAW4(...) FROM(SRC4, PKT_L4_NONE, __VA_ARGS__)
#define TCP6(...) FROM(SRC6, PKT_L4_TCP, __VA_ARGS__)
#define UDP6(...) FROM(SRC6, PKT_L4_UDP, __VA_ARGS__)
#define ICMP6(...) FROM(SRC6, PKT_L4_ICMP6, __VA_ARGS__)
#define RAW6(...) FROM(SRC6, PKT_L4_NONE, __VA_ARGS__)
#define FLAGS(f) .tcp.flags = PKT_SET(f)
#define SYN_FIN FLAGS(PKT_SYN | PKT_FIN)
#define CUT(n) .cut = PKT_SET(n)
#define NDP(t) ICMP6(.icmp.type = PKT_SET(t), .payload_len = 16)
#define DEST { .type = PKT_EXT_DEST }
#define EIGHT_DEST DEST, DEST, DEST, DEST, DEST, DEST, DEST, DEST

/* Outcomes: the XDP action and the one verdict slot the packet lands in. */
#define PASSED .action = XDP_PASS, .reason = XDPBAN_STAT_PASSED
#define TRUSTED .action = XDP_PASS, .reason = XDPBAN_STAT_PASSED_TRUSTED
#define DENIED .action = XDP_DROP, .reason = XDPBAN_STAT_DROP_DENY
#define NOT_ALLOWED .action = XDP_DROP, .reason = XDPBAN_STAT_DROP_NOT_ALLOWED
#define BANNED .action = XDP_DROP, .reason = XDPBAN_STAT_DROP_BANNED
#define DROP_MALFORMED .action = XDP_DROP, .reason = XDPBAN_STAT_DROP_MALFORMED
#define COUNTED .counted = true /* one error against the source's key */
/* Observe mode: the drop of a list or a ban is counted under its observed row. */
#define OBSERVE .observe = true
#define OBSERVED(row) .action = XDP_PASS, .reason = XDPBAN_STAT_PASSED, .observed = (row)
#define NO_CLASS .classes = PKT_SET(0)
/* An observed deny list (`deny = FILE observe`) holding prefix, in the observed tries. */
#define WATCHED(prefix) .watched = prefix

/* Policy entries. */
#define DENY(prefix) { .cidr = prefix, .verdict = XDPBAN_POLICY_DENY }
#define TRUST(prefix) { .cidr = prefix, .verdict = XDPBAN_POLICY_TRUSTED }
#define DENY_FOR(prefix, s) { .cidr = prefix, .verdict = XDPBAN_POLICY_DENY, .expires_in_s = s }
#define DENY6 DENY("2001:db8:1::/48")
#define ALLOW(prefix) { .cidr = prefix, .verdict = XDPBAN_POLICY_ALLOWED }
#define ALLOW_ONLY .allow_only = true

struct policy_entry {
	const char *cidr;
	__u32 verdict;    /* XDPBAN_POLICY_DENY, _TRUSTED or _ALLOWED */
	int expires_in_s; /* 0: permanent; < 0: ran out that long ago */
};

struct verdict_case {
	const char *name;
	struct pkt_spec pkt;
	struct policy_entry policy[3]; /* up to the first without a cidr */
	const char *banned;            /* an address whose key is under a permanent ban */
	bool allow_only;               /* the default layer (/0 not allowed, both families) and
					* XDPBAN_CFG_ALLOW_ONLY, as xdpband has them with an allow
					* list */
	struct pkt_opt class_mask;     /* default XDPBAN_DEFAULT_CLASS_MASK */
	struct pkt_opt drop_mask;      /* default XDPBAN_DEFAULT_DROP_MASK */
	__u32 action;                  /* XDP_PASS or XDP_DROP */
	enum xdpban_stat reason;       /* the verdict slot that takes the packet */
	bool counted;                  /* an error is counted against the source */
	struct pkt_opt classes;        /* the classes it meets stage 5 with (class_<name> stats);
					* default malformed when dropped as such or counted */
	bool observe;                  /* config mode XDPBAN_MODE_OBSERVE */
	enum xdpban_stat observed;     /* the observed_* row that grows by one; 0: none */
	const char *watched;           /* the one prefix of an observed deny list, or NULL */
};

static const struct verdict_case rows[] = {
	/* valid packets of every kind pass and are not counted */
	{ "v4 tcp ack", TCP4(), PASSED },
	{ "v4 udp", UDP4(.payload_len = 12), PASSED },
	{ "v4 icmp echo", ICMP4(.payload_len = 4), PASSED },
	{ "v4 udp with 8 bytes of options", UDP4(.ip4.opts_len = 8), PASSED },
	{ "v4 other protocol (GRE) is not checked", RAW4(.l4_proto = PKT_SET(47), .payload_len = 2),
	  PASSED },
	{ "v4 header alone, no L4 header", RAW4(), PASSED },
	{ "v6 tcp ack", TCP6(), PASSED },
	{ "v6 udp", UDP6(.payload_len = 12), PASSED },
	{ "v6 icmpv6 echo", ICMP6(), PASSED },
	{ "v6 no next header, empty payload", RAW6(), PASSED },
	{ "v6 udp behind hop, routing, dest, ah",
	  UDP6(.ip6 = { PKT_EXTS({ .type = PKT_EXT_HOP }, { .type = PKT_EXT_ROUTING }, DEST,
				 { .type = PKT_EXT_AH }) }),
	  PASSED },
	{ "v6 tcp behind a 64-byte hop-by-hop", TCP6(.ip6 = { PKT_EXTS({ .type = PKT_EXT_HOP,
						  .hdrlen = PKT_SET(7) }) }),
	  PASSED },

	/* jumbo frames (MTU 9000): the first buffer holds 3,520 bytes, the rest is in fragments */
	{ "v4 udp jumbo", UDP4(.payload_len = JUMBO - V4 - 8), PASSED },
	{ "v4 tcp jumbo", TCP4(.payload_len = JUMBO - V4 - 20), PASSED },
	{ "v6 udp jumbo", UDP6(.payload_len = JUMBO - V6 - 8), PASSED },
	{ "v6 tcp jumbo behind hop-by-hop",
	  TCP6(.payload_len = JUMBO - V6 - 8 - 20, .ip6 = { PKT_EXTS({ .type = PKT_EXT_HOP }) }),
	  PASSED },
	{ "v4 tcp jumbo syn+fin", TCP4(.payload_len = JUMBO - V4 - 20, SYN_FIN), DROP_MALFORMED,
	  COUNTED },
	{ "v4 jumbo total length one beyond the frame",
	  UDP4(.payload_len = JUMBO - V4 - 8, .ip4.tot_len = PKT_SET(JUMBO + 1)), DROP_MALFORMED,
	  COUNTED },
	{ "v6 jumbo payload length one beyond the frame",
	  UDP6(.payload_len = JUMBO - V6 - 8, .ip6.payload_len = PKT_SET(JUMBO - V6 + 1)),
	  DROP_MALFORMED, COUNTED },
	{ "v6 udp jumbo length one beyond the region",
	  UDP6(.payload_len = JUMBO - V6 - 8, .udp.len = PKT_SET(JUMBO - V6 + 1)), DROP_MALFORMED,
	  COUNTED },
	{ "v4 jumbo cut inside the payload", UDP4(.payload_len = JUMBO - V4 - 8, CUT(ETH + 5000)),
	  DROP_MALFORMED, COUNTED },
	{ "v6 jumbo from a deny prefix", UDP6(.payload_len = JUMBO - V6 - 8), { DENY6 }, DENIED },
	{ "v4 jumbo from a banned address", UDP4(.payload_len = JUMBO - V4 - 8), .banned = SRC4,
	  BANNED },

	/* GSO/GRO aggregates (BIG TCP): a length field of 0 on more than 65,535 bytes of IP */
	{ "v4 tcp aggregate, total length 0",
	  TCP4(.payload_len = AGG - V4 - 20, .ip4.tot_len = PKT_SET(0)), PASSED },
	{ "v6 tcp aggregate, payload length 0, hop-by-hop (jumbo)",
	  TCP6(.payload_len = AGG - V6 - 8 - 20, .ip6 = { PKT_EXTS({ .type = PKT_EXT_HOP }),
							  .payload_len = PKT_SET(0) }),
	  PASSED },
	{ "v6 tcp aggregate, payload length 0, no hop-by-hop",
	  TCP6(.payload_len = AGG - V6 - 20, .ip6.payload_len = PKT_SET(0)), PASSED },
	{ "v4 tcp aggregate with syn+fin is still malformed",
	  TCP4(.payload_len = AGG - V4 - 20, .ip4.tot_len = PKT_SET(0), SYN_FIN), DROP_MALFORMED,
	  COUNTED },
	{ "v6 tcp aggregate with data offset 4 is still malformed",
	  TCP6(.payload_len = AGG - V6 - 20, .ip6.payload_len = PKT_SET(0), .tcp.doff = PKT_SET(4)),
	  DROP_MALFORMED, COUNTED },
	{ "v6 udp aggregate with udp length 7 is still malformed",
	  UDP6(.payload_len = AGG - V6 - 8, .ip6.payload_len = PKT_SET(0), .udp.len = PKT_SET(7)),
	  DROP_MALFORMED, COUNTED },
	{ "v4 total length 0 on 65,536 bytes of IP", TCP4(.payload_len = 65536 - V4 - 20,
							 .ip4.tot_len = PKT_SET(0)),
	  PASSED },
	{ "v4 total length 0 on 65,535 bytes of IP is malformed",
	  TCP4(.payload_len = 65535 - V4 - 20, .ip4.tot_len = PKT_SET(0)), DROP_MALFORMED,
	  COUNTED },
	{ "v6 payload length 0 on 65,536 bytes of payload",
	  TCP6(.payload_len = 65536 - 20, .ip6.payload_len = PKT_SET(0)), PASSED },
	{ "v6 payload length 0 on 65,535 bytes of payload: tcp is malformed",
	  TCP6(.payload_len = 65535 - 20, .ip6.payload_len = PKT_SET(0)), DROP_MALFORMED,
	  COUNTED },
	{ "v4 aggregate from a deny prefix",
	  TCP4(.payload_len = AGG - V4 - 20, .ip4.tot_len = PKT_SET(0)), { DENY("192.0.2.0/24") },
	  DENIED },

	/* VLAN tags: one or two are read through, a third is not IP */
	{ "v4 udp in one 802.1Q tag", UDP4(.n_vlan = 1, .vlan = { { 0x8100, 10 } }), PASSED },
	{ "v4 syn+fin in one 802.1Q tag", TCP4(.n_vlan = 1, SYN_FIN), DROP_MALFORMED, COUNTED },
	{ "v4 syn+fin in one 802.1ad tag", TCP4(.n_vlan = 1, .vlan = { { 0x88a8, 10 } }, SYN_FIN),
	  DROP_MALFORMED, COUNTED },
	{ "v4 syn+fin in 802.1ad + 802.1Q",
	  TCP4(.n_vlan = 2, .vlan = { { 0x88a8, 10 }, { 0x8100, 20 } }, SYN_FIN), DROP_MALFORMED,
	  COUNTED },
	{ "v6 syn+fin in two 802.1Q tags", TCP6(.n_vlan = 2, SYN_FIN), DROP_MALFORMED, COUNTED },
	{ "v6 tcp in 802.1ad + 802.1Q", TCP6(.n_vlan = 2, .vlan = { { 0x88a8, 1 }, { 0x8100, 2 } }),
	  PASSED },
	{ "v4 syn+fin behind a third tag is not IP", TCP4(.n_vlan = 3, SYN_FIN), PASSED },
	{ "v6 syn+fin behind a third tag is not IP",
	  TCP6(.n_vlan = 3, .vlan = { { 0x88a8, 1 }, { 0x8100, 2 }, { 0x8100, 3 } }, SYN_FIN),
	  PASSED },
	{ "cut IPv4 header behind a third tag is not IP", TCP4(.n_vlan = 3, CUT(ETH + 3 * TAG + 4)),
	  PASSED },

	/* not IP: passes whatever the policy and bans say */
	{ "arp", { .src = SRC4, .l3 = PKT_L3_ARP }, PASSED },
	{ "arp from a deny prefix", { .src = SRC4, .l3 = PKT_L3_ARP }, { DENY("192.0.2.0/24") },
	  PASSED },
	{ "arp from a banned address", { .src = SRC4, .l3 = PKT_L3_ARP }, .banned = SRC4, PASSED },
	{ "arp in a tag", { .src = SRC4, .l3 = PKT_L3_ARP, .n_vlan = 1 }, PASSED },
	{ "other EtherType", { .l3 = PKT_L3_NONE, .ethertype = PKT_SET(0x88b5), .payload_len = 46 },
	  PASSED },
	{ "arp cut to the Ethernet header", { .src = SRC4, .l3 = PKT_L3_ARP, CUT(ETH) }, PASSED },
	{ "LLDP EtherType, Ethernet header only",
	  { .l3 = PKT_L3_NONE, .ethertype = PKT_SET(0x88cc) }, PASSED },

	/* truncation: Ethernet and VLAN tags (not IP), IP fixed headers (unattributed) */
	{ "v4 cut to the Ethernet header", UDP4(CUT(ETH)), DROP_MALFORMED },
	{ "v6 cut to the Ethernet header", UDP6(CUT(ETH)), DROP_MALFORMED },
	{ "tag cut to its first byte", UDP4(.n_vlan = 1, CUT(ETH + 1)), PASSED },
	{ "tag cut inside", UDP4(.n_vlan = 1, CUT(ETH + 3)), PASSED },
	{ "tag missing after its TPID", UDP4(.n_vlan = 1, CUT(ETH)), PASSED },
	{ "v4 cut at the end of one tag", UDP4(.n_vlan = 1, CUT(ETH + TAG)), DROP_MALFORMED },
	{ "v6 cut at the end of one tag", UDP6(.n_vlan = 1, CUT(ETH + TAG)), DROP_MALFORMED },
	{ "second tag cut inside", UDP4(.n_vlan = 2, CUT(ETH + TAG + 2)), PASSED },
	{ "second tag missing", UDP4(.n_vlan = 2, CUT(ETH + TAG)), PASSED },
	{ "v4 cut at the end of two tags", UDP4(.n_vlan = 2, CUT(ETH + 2 * TAG)), DROP_MALFORMED },
	{ "v6 cut inside the header behind two tags", UDP6(.n_vlan = 2, CUT(ETH + 2 * TAG + 39)),
	  DROP_MALFORMED },
	{ "v4 cut to 1 byte of header", UDP4(CUT(ETH + 1)), DROP_MALFORMED },
	{ "v4 cut to 19 bytes of header", UDP4(CUT(ETH + V4 - 1)), DROP_MALFORMED },
	{ "v6 cut to 1 byte of header", UDP6(CUT(ETH + 1)), DROP_MALFORMED },
	{ "v6 cut to 39 bytes of header", UDP6(CUT(ETH + V6 - 1)), DROP_MALFORMED },

	/* truncation past the fixed header: the source is known, the packet is malformed */
	{ "v4 cut at the end of the header", UDP4(CUT(ETH + V4)), DROP_MALFORMED, COUNTED },
	{ "v4 cut inside the options", UDP4(.ip4.opts_len = 8, CUT(ETH + V4 + 4)), DROP_MALFORMED,
	  COUNTED },
	{ "v4 cut at the end of the options", UDP4(.ip4.opts_len = 8, CUT(ETH + V4 + 8)),
	  DROP_MALFORMED, COUNTED },
	{ "v4 cut inside tcp", TCP4(CUT(ETH + V4 + 10)), DROP_MALFORMED, COUNTED },
	{ "v4 cut inside udp", UDP4(CUT(ETH + V4 + 4)), DROP_MALFORMED, COUNTED },
	{ "v4 cut inside icmp", ICMP4(CUT(ETH + V4 + 6)), DROP_MALFORMED, COUNTED },
	{ "v4 cut inside the payload", UDP4(.payload_len = 10, CUT(ETH + V4 + 8 + 5)),
	  DROP_MALFORMED, COUNTED },
	{ "v6 cut at the end of the header", UDP6(CUT(ETH + V6)), DROP_MALFORMED, COUNTED },
	{ "v6 cut inside hop-by-hop", UDP6(.ip6 = { PKT_EXTS({ .type = PKT_EXT_HOP }) },
					   CUT(ETH + V6 + 1)),
	  DROP_MALFORMED, COUNTED },
	{ "v6 cut inside routing", UDP6(.ip6 = { PKT_EXTS({ .type = PKT_EXT_ROUTING }) },
					CUT(ETH + V6 + 5)),
	  DROP_MALFORMED, COUNTED },
	{ "v6 cut inside destination options", UDP6(.ip6 = { PKT_EXTS(DEST) }, CUT(ETH + V6 + 7)),
	  DROP_MALFORMED, COUNTED },
	{ "v6 cut inside ah", UDP6(.ip6 = { PKT_EXTS({ .type = PKT_EXT_AH }) }, CUT(ETH + V6 + 12)),
	  DROP_MALFORMED, COUNTED },
	{ "v6 cut inside the fragment header",
	  UDP6(.ip6 = { PKT_EXTS({ .type = PKT_EXT_FRAG }) }, CUT(ETH + V6 + 4)), DROP_MALFORMED,
	  COUNTED },
	{ "v6 cut inside the second extension header",
	  UDP6(.ip6 = { PKT_EXTS({ .type = PKT_EXT_HOP }, DEST) }, CUT(ETH + V6 + 8 + 1)),
	  DROP_MALFORMED, COUNTED },
	{ "v6 cut inside tcp", TCP6(CUT(ETH + V6 + 19)), DROP_MALFORMED, COUNTED },
	{ "v6 cut inside udp", UDP6(CUT(ETH + V6 + 4)), DROP_MALFORMED, COUNTED },
	{ "v6 cut inside icmpv6", ICMP6(CUT(ETH + V6 + 2)), DROP_MALFORMED, COUNTED },

	/* IPv4 header rules */
	{ "v4 ihl 4", UDP4(.ip4.ihl = PKT_SET(4)), DROP_MALFORMED, COUNTED },
	{ "v4 ihl 0", UDP4(.ip4.ihl = PKT_SET(0)), DROP_MALFORMED, COUNTED },
	{ "v4 version 6", UDP4(.ip4.version = PKT_SET(6)), DROP_MALFORMED, COUNTED },
	{ "v4 version 0", TCP4(.ip4.version = PKT_SET(0)), DROP_MALFORMED, COUNTED },
	{ "v4 ihl 15 beyond the frame", UDP4(.ip4.ihl = PKT_SET(15)), DROP_MALFORMED, COUNTED },
	{ "v4 ihl 6 without options: udp read 4 bytes in, 4 bytes left",
	  UDP4(.ip4.ihl = PKT_SET(6)), DROP_MALFORMED, COUNTED },
	{ "v4 total length 19 < ihl*4", UDP4(.ip4.tot_len = PKT_SET(19)), DROP_MALFORMED, COUNTED },
	{ "v4 total length 0", TCP4(.ip4.tot_len = PKT_SET(0)), DROP_MALFORMED, COUNTED },
	{ "v4 total length 27 < ihl*4 with options",
	  RAW4(.ip4 = { .opts_len = 8, .tot_len = PKT_SET(27) }, .pad = 8), DROP_MALFORMED,
	  COUNTED },
	{ "v4 total length one beyond the frame",
	  UDP4(.payload_len = 4, .ip4.tot_len = PKT_SET(V4 + 8 + 4 + 1)), DROP_MALFORMED,
	  COUNTED },
	{ "v4 total length covering the padding too",
	  UDP4(.payload_len = 4, .pad = 6, .ip4.tot_len = PKT_SET(V4 + 8 + 4 + 6)), PASSED },
	{ "v4 total length equal to ihl*4 with options", RAW4(.ip4.opts_len = 40), PASSED },

	/* Ethernet padding past the IP length is ignored */
	{ "v4 udp with 18 bytes of padding", UDP4(.payload_len = 4, .pad = 18), PASSED },
	{ "v4 tcp with padding", TCP4(.pad = 6), PASSED },
	{ "v4 icmp with padding", ICMP4(.pad = 10), PASSED },
	{ "v4 syn+fin with padding is still malformed", TCP4(SYN_FIN, .pad = 6), DROP_MALFORMED,
	  COUNTED },
	{ "v6 udp with padding", UDP6(.pad = 20), PASSED },

	/* IPv6 header rules */
	{ "v6 version 4", UDP6(.ip6.version = PKT_SET(4)), DROP_MALFORMED, COUNTED },
	{ "v6 version 0", TCP6(.ip6.version = PKT_SET(0)), DROP_MALFORMED, COUNTED },
	{ "v6 payload length one beyond the frame", UDP6(.payload_len = 4,
							 .ip6.payload_len = PKT_SET(8 + 4 + 1)),
	  DROP_MALFORMED, COUNTED },
	{ "v6 payload length 65535", UDP6(.ip6.payload_len = PKT_SET(65535)), DROP_MALFORMED,
	  COUNTED },
	{ "v6 payload length 0 before udp", UDP6(.ip6.payload_len = PKT_SET(0)), DROP_MALFORMED,
	  COUNTED },
	{ "v6 payload length 0, no next header", RAW6(.ip6.payload_len = PKT_SET(0)), PASSED },

	/* IPv6 extension headers: each must fit in the payload length */
	{ "v6 hop-by-hop: first 2 bytes beyond the payload",
	  UDP6(.ip6 = { PKT_EXTS({ .type = PKT_EXT_HOP }), .payload_len = PKT_SET(1) }),
	  DROP_MALFORMED, COUNTED },
	{ "v6 hop-by-hop: 8 bytes, 6 in the payload",
	  UDP6(.ip6 = { PKT_EXTS({ .type = PKT_EXT_HOP }), .payload_len = PKT_SET(6) }),
	  DROP_MALFORMED, COUNTED },
	{ "v6 routing: 24 bytes, 16 in the payload",
	  RAW6(.ip6 = { PKT_EXTS({ .type = PKT_EXT_ROUTING, .hdrlen = PKT_SET(2) }),
			.payload_len = PKT_SET(16) }),
	  DROP_MALFORMED, COUNTED },
	{ "v6 destination options: 16 bytes, 15 in the payload",
	  RAW6(.ip6 = { PKT_EXTS({ .type = PKT_EXT_DEST, .hdrlen = PKT_SET(1) }),
			.payload_len = PKT_SET(15) }),
	  DROP_MALFORMED, COUNTED },
	{ "v6 ah: 24 bytes, 20 in the payload",
	  RAW6(.ip6 = { PKT_EXTS({ .type = PKT_EXT_AH }), .payload_len = PKT_SET(20) }),
	  DROP_MALFORMED, COUNTED },
	{ "v6 ah is counted in 4-byte units: 12 bytes fit in 12",
	  RAW6(.ip6 = { PKT_EXTS({ .type = PKT_EXT_AH, .hdrlen = PKT_SET(1) }) }), PASSED },
	{ "v6 syn+fin found right after a 12-byte ah",
	  TCP6(.ip6 = { PKT_EXTS({ .type = PKT_EXT_AH, .hdrlen = PKT_SET(1) }) }, SYN_FIN),
	  DROP_MALFORMED, COUNTED },
	{ "v6 fragment header: 8 bytes, 4 in the payload",
	  UDP6(.ip6 = { PKT_EXTS({ .type = PKT_EXT_FRAG }), .payload_len = PKT_SET(4) }),
	  DROP_MALFORMED, COUNTED },
	{ "v6 second header beyond the payload",
	  RAW6(.ip6 = { PKT_EXTS(DEST, DEST), .payload_len = PKT_SET(8 + 1) }), DROP_MALFORMED,
	  COUNTED },
	{ "v6 eight headers walked, then udp", UDP6(.ip6 = { PKT_EXTS(EIGHT_DEST) }), PASSED },
	{ "v6 eight headers walked, then syn+fin", TCP6(.ip6 = { PKT_EXTS(EIGHT_DEST) }, SYN_FIN),
	  DROP_MALFORMED, COUNTED },
	{ "v6 eight mixed headers walked, then syn+fin",
	  TCP6(.ip6 = { PKT_EXTS({ .type = PKT_EXT_HOP }, DEST, { .type = PKT_EXT_ROUTING },
				 { .type = PKT_EXT_AH }, DEST, { .type = PKT_EXT_ROUTING },
				 { .type = PKT_EXT_AH }, DEST) },
	       SYN_FIN),
	  DROP_MALFORMED, COUNTED },
	{ "v6 ninth header stops the walk: syn+fin not checked",
	  TCP6(.ip6 = { PKT_EXTS(EIGHT_DEST, DEST) }, SYN_FIN), PASSED },
	{ "v6 ninth header stops the walk: bad udp length not checked",
	  UDP6(.ip6 = { PKT_EXTS(EIGHT_DEST, DEST) }, .udp.len = PKT_SET(3)), PASSED },
	{ "v6 ninth header stops the walk even if it does not fit",
	  RAW6(.ip6 = { PKT_EXTS(EIGHT_DEST, DEST), .payload_len = PKT_SET(8 * 8 + 1) }), PASSED },
	{ "v6 ninth header, a fragment header that does not fit, is not walked",
	  RAW6(.ip6 = { PKT_EXTS(EIGHT_DEST, { .type = PKT_EXT_FRAG }),
			.payload_len = PKT_SET(8 * 8 + 4) }),
	  PASSED },

	/* fragments get L3 checks only */
	{ "v4 first fragment (MF) with syn+fin", TCP4(.ip4.frag = PKT_IP4_MF, SYN_FIN), PASSED },
	{ "v4 later fragment (offset 185) with syn+fin", TCP4(.ip4.frag = 185, SYN_FIN), PASSED },
	{ "v4 fragment with a bad udp length", UDP4(.ip4.frag = PKT_IP4_MF, .udp.len = PKT_SET(3)),
	  PASSED },
	{ "v4 fragment with ihl 4 is malformed", UDP4(.ip4 = { .frag = PKT_IP4_MF,
							       .ihl = PKT_SET(4) }),
	  DROP_MALFORMED, COUNTED },
	{ "v4 DF is not a fragment: syn+fin checked", TCP4(.ip4.frag = PKT_IP4_DF, SYN_FIN),
	  DROP_MALFORMED, COUNTED },
	{ "v6 fragment with syn+fin",
	  TCP6(.ip6 = { PKT_EXTS({ .type = PKT_EXT_FRAG, .more = true }) }, SYN_FIN), PASSED },
	{ "v6 atomic fragment (offset 0, no M) with syn+fin",
	  TCP6(.ip6 = { PKT_EXTS({ .type = PKT_EXT_FRAG }) }, SYN_FIN), PASSED },
	{ "v6 fragment behind hop-by-hop with a bad udp length",
	  UDP6(.ip6 = { PKT_EXTS({ .type = PKT_EXT_HOP },
				 { .type = PKT_EXT_FRAG, .frag_off = 3 }) },
	       .udp.len = PKT_SET(3)),
	  PASSED },
	{ "v6 fragment with the payload length beyond the frame",
	  UDP6(.ip6 = { PKT_EXTS({ .type = PKT_EXT_FRAG, .more = true }),
			.payload_len = PKT_SET(100) }),
	  DROP_MALFORMED, COUNTED },

	/* TCP: header length and data offset against the L4 region */
	{ "v4 tcp data offset 4", TCP4(.tcp.doff = PKT_SET(4)), DROP_MALFORMED, COUNTED },
	{ "v4 tcp data offset 0", TCP4(.tcp.doff = PKT_SET(0)), DROP_MALFORMED, COUNTED },
	{ "v4 tcp data offset 6 in a 20-byte region", TCP4(.tcp.doff = PKT_SET(6)),
	  DROP_MALFORMED, COUNTED },
	{ "v4 tcp data offset 6 with 4 more bytes", TCP4(.tcp.doff = PKT_SET(6), .payload_len = 4),
	  PASSED },
	{ "v4 tcp data offset 15 with 40 more bytes",
	  TCP4(.tcp.doff = PKT_SET(15), .payload_len = 40), PASSED },
	{ "v4 tcp data offset 15 with 39 more bytes",
	  TCP4(.tcp.doff = PKT_SET(15), .payload_len = 39), DROP_MALFORMED, COUNTED },
	{ "v4 tcp header past the total length (region 19)",
	  TCP4(.ip4.tot_len = PKT_SET(V4 + 19), .pad = 6), DROP_MALFORMED, COUNTED },
	{ "v4 tcp data offset past the total length, inside the padding",
	  TCP4(.tcp.doff = PKT_SET(6), .pad = 4), DROP_MALFORMED, COUNTED },
	{ "v6 tcp data offset 4", TCP6(.tcp.doff = PKT_SET(4)), DROP_MALFORMED, COUNTED },
	{ "v6 tcp region 19", TCP6(.ip6.payload_len = PKT_SET(19)), DROP_MALFORMED, COUNTED },
	{ "v6 tcp data offset 8 in 28 bytes", TCP6(.tcp.doff = PKT_SET(8), .payload_len = 8),
	  DROP_MALFORMED, COUNTED },

	/* TCP flags (the low 6 bits of byte 13) */
	{ "v4 syn+fin", TCP4(SYN_FIN), DROP_MALFORMED, COUNTED },
	{ "v4 syn+fin+ack", TCP4(FLAGS(PKT_SYN | PKT_FIN | PKT_ACK)), DROP_MALFORMED, COUNTED },
	{ "v4 syn+rst", TCP4(FLAGS(PKT_SYN | PKT_RST)), DROP_MALFORMED, COUNTED },
	{ "v4 syn+rst+ack", TCP4(FLAGS(PKT_SYN | PKT_RST | PKT_ACK)), DROP_MALFORMED, COUNTED },
	{ "v4 no flags", TCP4(FLAGS(0)), DROP_MALFORMED, COUNTED },
	{ "v4 only ece+cwr: no flag among the low six", TCP4(FLAGS(PKT_ECE | PKT_CWR)),
	  DROP_MALFORMED, COUNTED },
	{ "v4 fin+psh+urg without ack", TCP4(FLAGS(PKT_FIN | PKT_PSH | PKT_URG)), DROP_MALFORMED,
	  COUNTED },
	{ "v4 every flag", TCP4(FLAGS(0xff)), DROP_MALFORMED, COUNTED },
	{ "v4 fin+psh+urg+ack is legal", TCP4(FLAGS(PKT_FIN | PKT_PSH | PKT_URG | PKT_ACK)),
	  PASSED },
	{ "v4 fin+psh without urg", TCP4(FLAGS(PKT_FIN | PKT_PSH)), PASSED },
	{ "v4 fin+urg without psh", TCP4(FLAGS(PKT_FIN | PKT_URG)), PASSED },
	{ "v4 syn", TCP4(FLAGS(PKT_SYN)), PASSED },
	{ "v4 syn+ack", TCP4(FLAGS(PKT_SYN | PKT_ACK)), PASSED },
	{ "v4 syn+ece+cwr", TCP4(FLAGS(PKT_SYN | PKT_ECE | PKT_CWR)), PASSED },
	{ "v4 rst", TCP4(FLAGS(PKT_RST)), PASSED },
	{ "v4 rst+ack", TCP4(FLAGS(PKT_RST | PKT_ACK)), PASSED },
	{ "v4 fin+ack", TCP4(FLAGS(PKT_FIN | PKT_ACK)), PASSED },
	{ "v4 psh only", TCP4(FLAGS(PKT_PSH)), PASSED },
	{ "v4 urg only", TCP4(FLAGS(PKT_URG)), PASSED },
	{ "v6 syn+fin", TCP6(SYN_FIN), DROP_MALFORMED, COUNTED },
	{ "v6 syn+rst", TCP6(FLAGS(PKT_SYN | PKT_RST)), DROP_MALFORMED, COUNTED },
	{ "v6 no flags", TCP6(FLAGS(0)), DROP_MALFORMED, COUNTED },
	{ "v6 fin+psh+urg without ack", TCP6(FLAGS(PKT_FIN | PKT_PSH | PKT_URG)), DROP_MALFORMED,
	  COUNTED },
	{ "v6 fin+psh+urg+ack is legal", TCP6(FLAGS(PKT_FIN | PKT_PSH | PKT_URG | PKT_ACK)),
	  PASSED },

	/* UDP: length field against the L4 region */
	{ "v4 udp length 7", UDP4(.udp.len = PKT_SET(7)), DROP_MALFORMED, COUNTED },
	{ "v4 udp length 0", UDP4(.udp.len = PKT_SET(0)), DROP_MALFORMED, COUNTED },
	{ "v4 udp length one beyond the region", UDP4(.payload_len = 4, .udp.len = PKT_SET(13)),
	  DROP_MALFORMED, COUNTED },
	{ "v4 udp length covering the padding", UDP4(.payload_len = 4, .pad = 8,
						    .udp.len = PKT_SET(8 + 4 + 8)),
	  DROP_MALFORMED, COUNTED },
	{ "v4 udp length shorter than the region", UDP4(.payload_len = 10, .udp.len = PKT_SET(8)),
	  PASSED },
	{ "v4 udp region 7 (total length)", UDP4(.ip4.tot_len = PKT_SET(V4 + 7), .pad = 4),
	  DROP_MALFORMED, COUNTED },
	{ "v6 udp length 7", UDP6(.udp.len = PKT_SET(7)), DROP_MALFORMED, COUNTED },
	{ "v6 udp length one beyond the region", UDP6(.payload_len = 4, .udp.len = PKT_SET(13)),
	  DROP_MALFORMED, COUNTED },
	{ "v6 udp length beyond a region cut by the payload length",
	  UDP6(.payload_len = 4, .ip6.payload_len = PKT_SET(10)), DROP_MALFORMED, COUNTED },
	{ "v6 udp after an extension header, length 7",
	  UDP6(.ip6 = { PKT_EXTS({ .type = PKT_EXT_HOP }) }, .udp.len = PKT_SET(7)), DROP_MALFORMED,
	  COUNTED },

	/* ICMP (IPv4) needs 8 bytes, ICMPv6 needs 4; neither is checked in the other family */
	{ "v4 icmp region 7", ICMP4(.ip4.tot_len = PKT_SET(V4 + 7), .pad = 4), DROP_MALFORMED,
	  COUNTED },
	{ "v4 icmp region 8", ICMP4(.ip4.tot_len = PKT_SET(V4 + 8)), PASSED },
	{ "v6 icmpv6 region 3", ICMP6(.ip6.payload_len = PKT_SET(3)), DROP_MALFORMED, COUNTED },
	{ "v6 icmpv6 region 4", ICMP6(.ip6.payload_len = PKT_SET(4)), PASSED },
	{ "v6 protocol 1 (ICMP) of 2 bytes is not checked",
	  RAW6(.l4_proto = PKT_SET(1), .payload_len = 2), PASSED },
	{ "v4 protocol 58 (ICMPv6) of 2 bytes is not checked",
	  RAW4(.l4_proto = PKT_SET(58), .payload_len = 2), PASSED },

	/* NDP passes before every other stage; other ICMPv6 does not */
	{ "router solicitation from a deny prefix", NDP(133), { DENY6 }, PASSED },
	{ "router advertisement from a deny prefix", NDP(134), { DENY6 }, PASSED },
	{ "neighbor solicitation from a deny prefix", NDP(135), { DENY6 }, PASSED },
	{ "neighbor advertisement from a deny prefix", NDP(136), { DENY6 }, PASSED },
	{ "redirect from a deny prefix", NDP(137), { DENY6 }, PASSED },
	{ "router solicitation from a banned /64", NDP(133), .banned = SRC6, PASSED },
	{ "router advertisement from a banned /64", NDP(134), .banned = "2001:db8:1:2::1", PASSED },
	{ "neighbor solicitation from a banned /64", NDP(135), .banned = SRC6, PASSED },
	{ "neighbor advertisement from a banned /64", NDP(136), .banned = SRC6, PASSED },
	{ "redirect from a banned /64", NDP(137), .banned = SRC6, PASSED },
	{ "neighbor solicitation from a trusted prefix is NDP, not trusted", NDP(135),
	  { TRUST("2001:db8:1::/48") }, PASSED },
	{ "neighbor solicitation behind hop-by-hop from a deny prefix",
	  ICMP6(.icmp.type = PKT_SET(135), .ip6 = { PKT_EXTS({ .type = PKT_EXT_HOP }) }), { DENY6 },
	  PASSED },
	{ "neighbor solicitation in a tag from a deny prefix",
	  ICMP6(.icmp.type = PKT_SET(135), .n_vlan = 1), { DENY6 }, PASSED },
	{ "echo request from a deny prefix", ICMP6(), { DENY6 }, DENIED },
	{ "type 132 from a deny prefix", ICMP6(.icmp.type = PKT_SET(132)), { DENY6 }, DENIED },
	{ "type 138 from a deny prefix", ICMP6(.icmp.type = PKT_SET(138)), { DENY6 }, DENIED },
	{ "echo request from a banned /64", ICMP6(), .banned = SRC6, BANNED },
	{ "neighbor solicitation in a fragment is not NDP",
	  ICMP6(.icmp.type = PKT_SET(135), .ip6 = { PKT_EXTS({ .type = PKT_EXT_FRAG }) }),
	  { DENY6 }, DENIED },
	{ "type 135 in 3 bytes is malformed, not NDP",
	  ICMP6(.icmp.type = PKT_SET(135), .ip6.payload_len = PKT_SET(3)), { DENY6 }, DENIED },
	{ "type 135 in 3 bytes is counted", ICMP6(.icmp.type = PKT_SET(135),
						  .ip6.payload_len = PKT_SET(3)),
	  DROP_MALFORMED, COUNTED },
	{ "type 135 over IPv4 is not NDP",
	  FROM(SRC4, PKT_L4_ICMP6, .icmp.type = PKT_SET(135), .payload_len = 16),
	  { DENY("192.0.2.0/24") }, DENIED },

	/* allow-only mode: the painted layers as the tries hold them (docs/datapath.md) */
	{ "allow-only: v4 source in an allow /24", UDP4(), { ALLOW("192.0.2.0/24") }, ALLOW_ONLY,
	  PASSED },
	{ "allow-only: v4 source in no allow list", UDP4(), { ALLOW("198.51.100.0/24") },
	  ALLOW_ONLY, NOT_ALLOWED },
	{ "allow-only: v6 source in an allow /48", UDP6(), { ALLOW("2001:db8:1::/48") },
	  ALLOW_ONLY, PASSED },
	{ "allow-only: v6 source in no allow list", TCP6(), { ALLOW("2001:db8:2::/48") },
	  ALLOW_ONLY, NOT_ALLOWED },
	{ "allow-only: no allow entry at all", UDP4(), ALLOW_ONLY, NOT_ALLOWED },
	{ "allow-only: deny /29 inside an allow /24", UDP4(),
	  { ALLOW("192.0.2.0/24"), DENY("192.0.2.8/29") }, ALLOW_ONLY, DENIED },
	{ "allow-only: trusted /32 inside a deny /24", UDP4(),
	  { DENY("192.0.2.0/24"), TRUST(SRC4) }, ALLOW_ONLY, TRUSTED },
	{ "allow-only: trusted /32, in no allow list", TCP4(SYN_FIN), { TRUST(SRC4) }, ALLOW_ONLY,
	  TRUSTED },
	{ "allow-only: a not-allowed malformed packet is not counted", TCP4(SYN_FIN), ALLOW_ONLY,
	  NOT_ALLOWED },
	{ "allow-only: an allowed malformed packet is counted", TCP4(SYN_FIN),
	  { ALLOW("192.0.0.0/16") }, ALLOW_ONLY, DROP_MALFORMED, COUNTED },
	{ "allow-only: an allowed source is banned as ever", UDP4(), { ALLOW("192.0.2.0/24") },
	  .banned = SRC4, ALLOW_ONLY, BANNED },
	{ "allow-only: a manual prefix ban inside an allow /24", UDP4(),
	  { ALLOW("192.0.2.0/24"), DENY_FOR("192.0.2.0/28", 3600) }, ALLOW_ONLY, DENIED },
	{ "allow-only: a manual prefix ban that ran out: the default layer answers", UDP4(),
	  { ALLOW("192.0.2.0/24"), DENY_FOR("192.0.2.0/28", -5) }, ALLOW_ONLY, NOT_ALLOWED },
	{ "a manual prefix ban that ran out, no allow list: no entry", UDP4(),
	  { TRUST("192.0.2.0/24"), DENY_FOR("192.0.2.0/28", -5) }, PASSED },
	{ "allow-only: NDP from outside the allow lists", NDP(135), ALLOW_ONLY, PASSED },
	{ "allow-only: arp", { .src = SRC4, .l3 = PKT_L3_ARP }, ALLOW_ONLY, PASSED },
	{ "allow-only: an unspecified source (0.0.0.0) is not allowed", FROM("0.0.0.0", PKT_L4_UDP),
	  ALLOW_ONLY, NOT_ALLOWED },
	{ "allow-only: an unspecified source (::) is not allowed", FROM("::", PKT_L4_UDP),
	  ALLOW_ONLY, NOT_ALLOWED },
	{ "allow-only: a broadcast source is not allowed", FROM("255.255.255.255", PKT_L4_UDP),
	  ALLOW_ONLY, NOT_ALLOWED },
	{ "allow-only: 0.0.0.0 in an allow list (a DHCP server's clients)",
	  FROM("0.0.0.0", PKT_L4_UDP), { ALLOW("0.0.0.0/32") }, ALLOW_ONLY, PASSED },
	{ "allow-only: a cut header has no source: no policy", UDP4(CUT(ETH + 12)), ALLOW_ONLY,
	  DROP_MALFORMED },

	/* policy: longest prefix wins; trusted skips everything, deny drops everything */
	{ "v4 deny /24", UDP4(), { DENY("192.0.2.0/24") }, DENIED },
	{ "v4 deny 0.0.0.0/0", UDP4(), { DENY("0.0.0.0/0") }, DENIED },
	{ "v4 deny /32", UDP4(), { DENY(SRC4) }, DENIED },
	{ "v4 deny elsewhere", UDP4(), { DENY("198.51.100.0/24") }, PASSED },
	{ "v4 trusted /32 inside deny /24", UDP4(),
	  { DENY("192.0.2.0/24"), TRUST("192.0.2.10/32") }, TRUSTED },
	{ "v4 deny /32 inside trusted /24", UDP4(),
	  { TRUST("192.0.2.0/24"), DENY("192.0.2.10/32") }, DENIED },
	{ "v4 deny /25 inside trusted /24, source outside the /25", UDP4(),
	  { TRUST("192.0.2.0/24"), DENY("192.0.2.128/25") }, TRUSTED },
	{ "v4 trusted malformed passes uncounted", TCP4(SYN_FIN), { TRUST("192.0.2.0/24") },
	  TRUSTED },
	{ "v4 trusted ihl 4 passes uncounted", UDP4(.ip4.ihl = PKT_SET(4)),
	  { TRUST("192.0.2.0/24") }, TRUSTED },
	{ "v4 denied malformed is not counted", TCP4(SYN_FIN), { DENY("192.0.2.0/24") },
	  DENIED },
	{ "v4 trusted prefix does not cover a cut header (no source)", UDP4(CUT(ETH + 12)),
	  { TRUST("0.0.0.0/0") }, DROP_MALFORMED },
	{ "v4 deny prefix does not see a cut header (no source)", UDP4(CUT(ETH + 12)),
	  { DENY("0.0.0.0/0") }, DROP_MALFORMED },
	{ "v4 deny that ran out a minute ago", UDP4(), { DENY_FOR("192.0.2.0/24", -60) }, PASSED },
	{ "v4 deny that ran out, malformed is counted", TCP4(SYN_FIN),
	  { DENY_FOR("192.0.2.0/24", -60) }, DROP_MALFORMED, COUNTED },
	{ "v4 deny for another hour", UDP4(), { DENY_FOR("192.0.2.0/24", 3600) }, DENIED },
	{ "v4 run-out /32 hides the deny /24 around it", UDP4(),
	  { DENY("192.0.2.0/24"), DENY_FOR(SRC4, -60) }, PASSED },
	{ "v4 run-out /32 hides the trusted /24 around it", TCP4(SYN_FIN),
	  { TRUST("192.0.2.0/24"), DENY_FOR(SRC4, -60) }, DROP_MALFORMED, COUNTED },
	{ "v6 deny /48", UDP6(), { DENY6 }, DENIED },
	{ "v6 deny ::/0", TCP6(), { DENY("::/0") }, DENIED },
	{ "v6 deny elsewhere", UDP6(), { DENY("2001:db8:2::/48") }, PASSED },
	{ "v6 trusted /64 inside deny /48", UDP6(), { DENY6, TRUST("2001:db8:1:2::/64") },
	  TRUSTED },
	{ "v6 deny /128 inside trusted /48", UDP6(),
	  { TRUST("2001:db8:1::/48"), DENY(SRC6 "/128") }, DENIED },
	{ "v6 deny /128 of a neighbour inside trusted /48", UDP6(),
	  { TRUST("2001:db8:1::/48"), DENY("2001:db8:1:2::11/128") }, TRUSTED },
	{ "v6 trusted malformed passes uncounted", TCP6(SYN_FIN), { TRUST("2001:db8::/32") },
	  TRUSTED },
	{ "v6 deny that ran out", UDP6(), { DENY_FOR("2001:db8:1::/48", -1) }, PASSED },

	/* bans: after policy, before classification */
	{ "v4 banned source, valid udp", UDP4(), .banned = SRC4, BANNED },
	{ "v4 banned source, malformed is not counted again", TCP4(SYN_FIN), .banned = SRC4,
	  BANNED },
	{ "v4 banned neighbour does not matter", UDP4(), .banned = "192.0.2.11", PASSED },
	{ "v4 banned but trusted", UDP4(), { TRUST(SRC4) }, .banned = SRC4, TRUSTED },
	{ "v4 banned and denied", UDP4(), { DENY(SRC4) }, .banned = SRC4, DENIED },
	{ "v4 banned source, cut header has no source", UDP4(CUT(ETH + 16)), .banned = SRC4,
	  DROP_MALFORMED },
	{ "v6 banned /64, same address", UDP6(), .banned = SRC6, BANNED },
	{ "v6 banned /64, another address in it", UDP6(), .banned = "2001:db8:1:2:ffff::1",
	  BANNED },
	{ "v6 banned /64, address in the next /64", UDP6(), .banned = "2001:db8:1:3::10", PASSED },
	{ "v6 banned /64, malformed not counted", TCP6(SYN_FIN), .banned = SRC6, BANNED },

	/* observe mode: a list's or a ban's drop passes, counted under its observed row; the
	 * packet goes no further (not counted); drop_mask still drops errors, but not a probe */
	{ "observe: v4 deny /24 passes", UDP4(), { DENY("192.0.2.0/24") }, OBSERVE,
	  OBSERVED(XDPBAN_STAT_OBSERVED_DENY) },
	{ "observe: v6 deny /48 passes", TCP6(), { DENY6 }, OBSERVE,
	  OBSERVED(XDPBAN_STAT_OBSERVED_DENY) },
	{ "observe: a timed manual prefix ban passes", UDP4(), { DENY_FOR(SRC4, 3600) }, OBSERVE,
	  OBSERVED(XDPBAN_STAT_OBSERVED_DENY) },
	{ "observe: a denied malformed packet is dropped as malformed, not counted", TCP4(SYN_FIN),
	  { DENY("192.0.2.0/24") }, OBSERVE, DROP_MALFORMED, NO_CLASS,
	  .observed = XDPBAN_STAT_OBSERVED_DENY },
	{ "observe: a denied malformed packet passes with drop_mask 0", TCP4(SYN_FIN),
	  { DENY("192.0.2.0/24") }, OBSERVE, .drop_mask = PKT_SET(0),
	  OBSERVED(XDPBAN_STAT_OBSERVED_DENY) },
	{ "observe: v4 banned source passes, not counted", UDP4(), .banned = SRC4, OBSERVE,
	  OBSERVED(XDPBAN_STAT_OBSERVED_BANNED) },
	{ "observe: v6 banned /64 passes", UDP6(), .banned = "2001:db8:1:2:ffff::1", OBSERVE,
	  OBSERVED(XDPBAN_STAT_OBSERVED_BANNED) },
	{ "observe: banned malformed is dropped as malformed, not counted again", TCP4(SYN_FIN),
	  .banned = SRC4, OBSERVE, DROP_MALFORMED, NO_CLASS,
	  .observed = XDPBAN_STAT_OBSERVED_BANNED },
	{ "observe: banned and denied counts the deny", UDP4(), { DENY(SRC4) }, .banned = SRC4,
	  OBSERVE, OBSERVED(XDPBAN_STAT_OBSERVED_DENY) },
	{ "observe: allow-only, in no allow list, passes", UDP4(), ALLOW_ONLY, OBSERVE,
	  OBSERVED(XDPBAN_STAT_OBSERVED_NOT_ALLOWED) },
	{ "observe: allow-only, deny inside an allow list", UDP4(),
	  { ALLOW("192.0.2.0/24"), DENY("192.0.2.8/29") }, ALLOW_ONLY, OBSERVE,
	  OBSERVED(XDPBAN_STAT_OBSERVED_DENY) },
	{ "observe: trusted passes as trusted", UDP4(), { TRUST(SRC4) }, .banned = SRC4, OBSERVE,
	  TRUSTED },
	{ "observe: clean source passes, nothing observed", UDP4(), OBSERVE, PASSED },
	{ "observe: malformed from a clean source is counted and dropped", TCP4(SYN_FIN), OBSERVE,
	  DROP_MALFORMED, COUNTED },

	/* observed deny lists, in enforce mode: a source in one goes on as if it were not
	 * there, each packet counted under observed_deny; an enforced list or trust wins */
	{ "observed list: v4 source passes", UDP4(), WATCHED("192.0.2.0/24"),
	  OBSERVED(XDPBAN_STAT_OBSERVED_DENY) },
	{ "observed list: v6 source passes", UDP6(), WATCHED("2001:db8:1::/48"),
	  OBSERVED(XDPBAN_STAT_OBSERVED_DENY) },
	{ "observed list: malformed is counted and dropped", TCP4(SYN_FIN),
	  WATCHED("192.0.2.0/24"), DROP_MALFORMED, COUNTED, .observed = XDPBAN_STAT_OBSERVED_DENY },
	{ "observed list: a banned source is dropped as banned", UDP4(), WATCHED(SRC4 "/32"),
	  .banned = SRC4, BANNED, .observed = XDPBAN_STAT_OBSERVED_DENY },
	{ "observed list: an enforced deny list wins", UDP4(), { DENY(SRC4) },
	  WATCHED("192.0.2.0/24"), DENIED },
	{ "observed list: trusted passes as trusted", UDP4(), { TRUST(SRC4) },
	  WATCHED("192.0.2.0/24"), TRUSTED },
	{ "observed list: a source outside it passes, nothing observed", UDP4(),
	  WATCHED("198.51.100.0/24"), PASSED },
	{ "observed list: v6 source outside it", UDP6(), WATCHED("192.0.2.0/24"), PASSED },
	{ "observed list: allow-only, in an allow list", UDP4(), { ALLOW("192.0.2.0/24") },
	  ALLOW_ONLY, WATCHED(SRC4 "/32"), OBSERVED(XDPBAN_STAT_OBSERVED_DENY) },
	{ "observed list: allow-only, in no allow list", UDP4(), ALLOW_ONLY,
	  WATCHED("192.0.2.0/24"), NOT_ALLOWED },

	/* class_mask and drop_mask */
	{ "class_mask 0: malformed passes uncounted", TCP4(SYN_FIN), .class_mask = PKT_SET(0),
	  PASSED },
	{ "class_mask reported only: malformed passes uncounted", UDP6(.udp.len = PKT_SET(7)),
	  .class_mask = PKT_SET(XDPBAN_CLASS_REPORTED), PASSED },
	{ "class_mask 0: cut header passes", UDP4(CUT(ETH + 10)), .class_mask = PKT_SET(0),
	  PASSED },
	{ "class_mask reported only: cut v6 header passes", UDP6(CUT(ETH + 10)),
	  .class_mask = PKT_SET(XDPBAN_CLASS_REPORTED),
	  .drop_mask = PKT_SET(XDPBAN_CLASS_ALL), PASSED },
	{ "drop_mask 0: malformed passes but is counted", TCP4(SYN_FIN), .drop_mask = PKT_SET(0),
	  PASSED, COUNTED },
	{ "drop_mask reported only: v6 malformed passes, counted", TCP6(FLAGS(0)),
	  .drop_mask = PKT_SET(XDPBAN_CLASS_REPORTED), PASSED, COUNTED },
	{ "drop_mask 0: cut header passes uncounted", UDP4(CUT(ETH + 10)), .drop_mask = PKT_SET(0),
	  PASSED, .classes = PKT_SET(XDPBAN_CLASS_MALFORMED) },
	{ "drop_mask 0, class_mask 0: malformed passes uncounted", TCP4(SYN_FIN),
	  .class_mask = PKT_SET(0), .drop_mask = PKT_SET(0), PASSED },
	{ "drop_mask 0: a banned source is still dropped", UDP4(), .banned = SRC4,
	  .drop_mask = PKT_SET(0), BANNED },
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

static struct dp g_dp;
static bool g_loaded;
/* Everything run through the data path by this binary, to check that the verdicts add up. */
static struct {
	__u64 packets, bytes;
} g_sent;

/* --- state ------------------------------------------------------------------------------- */

static int clear_map(int fd, size_t key_size)
{
	unsigned char key[64];

	if (key_size > sizeof(key))
		return -EINVAL;
	while (bpf_map_get_next_key(fd, NULL, key) == 0) {
		if (bpf_map_delete_elem(fd, key))
			return -errno;
	}
	return errno == ENOENT ? 0 : -errno;
}

/* Empty tables and the given config; the stats are kept (they add up over the run). */
static void reset_state(const struct xdpban_config *cfg)
{
	struct xdpban *s = g_dp.skel;
	char err[XB_ERRLEN];

	dp_tables_clear(&g_dp);
	assert_int_equal(clear_map(bpf_map__fd(s->maps.xdpban_policy4),
				   sizeof(struct xdpban_lpm4_key)), 0);
	assert_int_equal(clear_map(bpf_map__fd(s->maps.xdpban_policy6),
				   sizeof(struct xdpban_lpm6_key)), 0);
	assert_int_equal(dp_set_config(&g_dp, cfg), 0);
	assert_int_equal(xb_observed_replace(&g_dp.maps, NULL, 0, err, sizeof(err)), 0);
}

/* The observed tries hold prefix alone, as list 2, and the config says so (as xdpband fills
 * them). */
static void watch(const char *prefix)
{
	struct xb_observed_entry e = { .list_id = 2 };
	char err[XB_ERRLEN];

	assert_int_equal(dp_prefix(prefix, &e.prefix), 0);
	assert_int_equal(xb_observed_replace(&g_dp.maps, &e, 1, err, sizeof(err)), 0);
}

/* A policy entry, with an expiry when the row asks for one. */
static void add_policy(const struct policy_entry *p)
{
	struct xdpban_policy val = { .verdict = p->verdict, .list_id = 1 };

	if (p->expires_in_s)
		val.expires_ns = dp_now_ns() + (long long)p->expires_in_s * (long long)NS_PER_SEC;
	assert_int_equal(dp_policy_put(&g_dp, p->cidr, &val), 0);
}

static void ban_forever(const char *addr)
{
	struct xdpban_ban ban = { .start_ns = dp_now_ns(), .reason = XDPBAN_REASON_MANUAL };
	struct xdpban_key key;

	assert_int_equal(dp_key(addr, XDPBAN_DEFAULT_V6_PREFIX, &key), 0);
	assert_int_equal(dp_put_ban(&g_dp, &key, &ban), 0);
}

/* --- running and checking ----------------------------------------------------------------- */

/* Runs a frame with its first `linear` bytes in the first buffer (0: all that fit). */
static __u32 run_split(const void *frame, __u32 len, __u32 linear)
{
	__u32 action = ~0u;

	assert_int_equal(dp_run_split(&g_dp, frame, len, linear, &action), 0);
	g_sent.packets++;
	g_sent.bytes += len;
	return action;
}

static __u32 run(const void *frame, __u32 len)
{
	return run_split(frame, len, 0);
}

struct stats {
	struct xdpban_stat_value v[XDPBAN_STAT__MAX];
};

static void read_stats(struct stats *s)
{
	assert_int_equal(dp_stats(&g_dp, s->v), 0);
}


/* Every slot grew by exactly want[i] packets of `len` bytes each. */
static void expect_stats_grew(const char *what, const struct stats *before,
			      const struct stats *after, const __u64 want[XDPBAN_STAT__MAX],
			      __u32 len)
{
	for (int i = 0; i < XDPBAN_STAT__MAX; i++) {
		__u64 packets = after->v[i].packets - before->v[i].packets;
		__u64 bytes = after->v[i].bytes - before->v[i].bytes;

		if (packets != want[i] || bytes != want[i] * len)
			fail_msg("%s: stats %s grew by %llu packets, %llu bytes; "
				 "expected %llu, %llu",
				 what, xb_stat_name(i), (unsigned long long)packets,
				 (unsigned long long)bytes, (unsigned long long)want[i],
				 (unsigned long long)(want[i] * len));
	}
}

static const char *action_name(__u32 action)
{
	return action == XDP_PASS ? "XDP_PASS" : action == XDP_DROP ? "XDP_DROP" : "other";
}

static void expect_action(const char *what, __u32 got, __u32 want)
{
	if (got != want)
		fail_msg("%s: action %s (%u), expected %s", what, action_name(got), got,
			 action_name(want));
}

static void config_for_row(const struct verdict_case *row, struct xdpban_config *cfg)
{
	const struct xdpban_config defaults = XDPBAN_CONFIG_DEFAULTS;

	*cfg = defaults;
	if (row->class_mask.set)
		cfg->class_mask = row->class_mask.val;
	if (row->drop_mask.set)
		cfg->drop_mask = row->drop_mask.val;
	if (row->allow_only)
		cfg->policy = XDPBAN_CFG_ALLOW_ONLY;
	if (row->observe)
		cfg->mode = XDPBAN_MODE_OBSERVE;
}

static void prepare_row(const struct verdict_case *row)
{
	struct xdpban_config cfg;

	config_for_row(row, &cfg);
	reset_state(&cfg);
	for (int i = 0; i < 3 && row->policy[i].cidr; i++)
		add_policy(&row->policy[i]);
	if (row->allow_only) {
		const struct xdpban_policy dflt = { .verdict = XDPBAN_POLICY_NOT_ALLOWED,
						    .list_id = XDPBAN_LIST_DEFAULT };

		assert_int_equal(dp_policy_put(&g_dp, "0.0.0.0/0", &dflt), 0);
		assert_int_equal(dp_policy_put(&g_dp, "::/0", &dflt), 0);
	}
	if (row->banned)
		ban_forever(row->banned);
	if (row->watched)
		watch(row->watched);
}

/* The counter table holds exactly one counter, at 1, for a counted row, and nothing else. */
static void expect_counter(const struct verdict_case *row, __u32 now_s)
{
	int counters = dp_count_counters(&g_dp);
	struct xdpban_key key;
	__u32 start_s, count;

	if (!row->counted) {
		if (counters != 0)
			fail_msg("%s: %d counters, expected none", row->name, counters);
		return;
	}
	if (counters != 1)
		fail_msg("%s: %d counters, expected 1", row->name, counters);
	assert_int_equal(dp_key(row->pkt.src, XDPBAN_DEFAULT_V6_PREFIX, &key), 0);
	if (dp_counter(&g_dp, &key, &start_s, &count))
		fail_msg("%s: no counter for %s", row->name, row->pkt.src);
	if (count != 1 || start_s > now_s || now_s - start_s > 1)
		fail_msg("%s: counter %u since %u s, expected 1 since %u s", row->name, count,
			 start_s, now_s);
}

static __u32 row_classes(const struct verdict_case *row)
{
	if (row->classes.set)
		return row->classes.val;
	return row->reason == XDPBAN_STAT_DROP_MALFORMED || row->counted ? XDPBAN_CLASS_MALFORMED
									  : 0;
}

/* Runs the row's frame with `linear` bytes in the first buffer and checks everything the row
 * expects: the action, every stats slot (bytes of the whole frame), the counters and bans. */
static void check_row(const struct verdict_case *row, const __u8 *frame, __u32 len,
		      __u32 linear)
{
	struct stats before, after;
	__u64 want[XDPBAN_STAT__MAX] = { 0 };
	char what[256];
	__u32 action;
	int bans;

	snprintf(what, sizeof(what), linear ? "%s (first buffer %u of %u bytes)" : "%s", row->name,
		 linear, len);
	prepare_row(row);
	read_stats(&before);
	action = run_split(frame, len, linear);
	read_stats(&after);

	expect_action(what, action, row->action);
	want[row->reason] = 1;
	want[XDPBAN_STAT_ERRORS] = row->counted;
	if (row->observed)
		want[row->observed] = 1;
	dp_want_classes(want, row_classes(row));
	expect_stats_grew(what, &before, &after, want, len);
	expect_counter(row, dp_now_ns() / NS_PER_SEC);
	bans = dp_count_bans(&g_dp);
	if (bans != (row->banned ? 1 : 0))
		fail_msg("%s: %d bans after the packet, expected %d", what, bans,
			 row->banned ? 1 : 0);
}

static void verdict_row(void **state)
{
	const struct verdict_case *row = *state;
	static __u8 frame[DP_FRAME_MAX];
	struct pkt_layout at;

	if (!g_loaded)
		skip();
	assert_int_equal(pkt_build(&row->pkt, frame, sizeof(frame), &at), 0);
	check_row(row, frame, at.len, 0);
}

/* Where a multi-buffer frame may end its first buffer: at every header boundary of the built
 * frame, and one byte past each (a header split across two buffers), the fields the parser
 * reads in the middle of a header too. Only splits that leave bytes for a second buffer. */
static __u32 split_points(const struct verdict_case *row, const struct pkt_layout *at,
			  __u32 out[64])
{
	__u32 cand[64], n = 0, m = 0;

	for (__u32 i = 0; i <= row->pkt.n_vlan; i++)
		cand[n++] = PKT_ETH_LEN + i * PKT_VLAN_LEN;
	cand[n++] = at->l3 + 1;
	cand[n++] = at->l3 + 9;  /* inside the IPv4 addresses, before the IPv6 source */
	cand[n++] = at->l3 + 20; /* after the IPv4 header, inside the IPv6 source */
	for (__u32 i = 0; i < row->pkt.ip6.n_ext; i++) {
		cand[n++] = at->ext[i];
		cand[n++] = at->ext[i] + 1;
	}
	cand[n++] = at->l4;
	cand[n++] = at->l4 + 1;
	cand[n++] = at->l4 + 13; /* TCP: between the data offset and the flags */
	cand[n++] = at->payload;
	cand[n++] = at->ip_end;
	for (__u32 i = 0; i < n; i++) {
		bool seen = false;

		for (__u32 j = 0; j < m; j++)
			seen |= out[j] == cand[i];
		if (!seen && cand[i] >= DP_LINEAR_MIN && cand[i] < at->len)
			out[m++] = cand[i];
	}
	return m;
}

/* The same row as a multi-buffer frame, split at each of its header boundaries in turn: the
 * verdict and the statistics must not depend on where the first buffer ends. */
static void verdict_row_split(void **state)
{
	const struct verdict_case *row = *state;
	static __u8 frame[DP_FRAME_MAX];
	struct pkt_layout at;
	__u32 points[64], n;

	if (!g_loaded)
		skip();
	assert_int_equal(pkt_build(&row->pkt, frame, sizeof(frame), &at), 0);
	n = split_points(row, &at, points);
	for (__u32 i = 0; i < n; i++)
		check_row(row, frame, at.len, points[i]);
}

/* --- the threshold ---------------------------------------------------------------------- */

struct events {
	struct ring_buffer *rb;
	struct xdpban_event got[4];
	int n;         /* events seen, also past the 4 kept */
	size_t bad_len; /* the size of a record that was not a struct xdpban_event */
};

static struct events g_events;

static int on_event(void *ctx, void *data, size_t len)
{
	struct events *ev = ctx;

	if (len != sizeof(struct xdpban_event))
		ev->bad_len = len;
	else if (ev->n < 4)
		memcpy(&ev->got[ev->n], data, len);
	ev->n++;
	return 0;
}

/* Opens the ring buffer and drops whatever earlier tests left in it. */
static int threshold_setup(void **state)
{
	if (!g_loaded)
		return 0;
	g_events.rb = ring_buffer__new(bpf_map__fd(g_dp.skel->maps.xdpban_events), on_event,
				       &g_events, NULL);
	if (!g_events.rb)
		return -1;
	ring_buffer__consume(g_events.rb);
	g_events.n = 0;
	g_events.bad_len = 0;
	return 0;
}

static int threshold_teardown(void **state)
{
	ring_buffer__free(g_events.rb);
	memset(&g_events, 0, sizeof(g_events));
	return 0;
}

static __u32 build(const struct pkt_spec *spec, __u8 *frame, __u32 cap)
{
	struct pkt_layout at;

	assert_int_equal(pkt_build(spec, frame, cap, &at), 0);
	return at.len;
}

static void expect_unbanned_count(const char *addr, __u32 count)
{
	struct xdpban_key key;
	struct xdpban_ban ban;
	__u32 start_s, got;

	assert_int_equal(dp_key(addr, XDPBAN_DEFAULT_V6_PREFIX, &key), 0);
	assert_int_equal(dp_counter(&g_dp, &key, &start_s, &got), 0);
	if (got != count)
		fail_msg("%s: counter %u, expected %u", addr, got, count);
	assert_int_equal(dp_ban(&g_dp, &key, &ban), -ENOENT);
}

/* The ban the 11th error made, and the one ring buffer event that reports it. */
static void expect_ban_and_event(const char *addr, __u64 t0, __u64 t1, __u32 ban_s,
				 __u8 classes)
{
	struct xdpban_key key;
	struct xdpban_ban ban;
	__u32 start_s, count;

	assert_int_equal(dp_key(addr, XDPBAN_DEFAULT_V6_PREFIX, &key), 0);
	assert_int_equal(dp_ban(&g_dp, &key, &ban), 0);
	assert_int_equal(ban.count, 11);
	assert_int_equal(ban.reason, XDPBAN_REASON_ERRORS);
	assert_int_equal(ban.classes, classes);
	/* the data path's clock may be up to a tick behind ours (docs/datapath.md, "The clock") */
	assert_in_range(ban.start_ns, t0 - XDPBAN_CLOCK_LAG_MAX_NS, t1);
	assert_int_equal(ban.expires_ns, ban.start_ns + (__u64)ban_s * NS_PER_SEC);
	/* the source starts over when the ban ends */
	assert_int_equal(dp_counter(&g_dp, &key, &start_s, &count), 0);
	assert_int_equal(count, 0);

	assert_true(ring_buffer__consume(g_events.rb) >= 0);
	assert_int_equal(g_events.bad_len, 0);
	assert_int_equal(g_events.n, 1);
	assert_memory_equal(&g_events.got[0].key, &key, sizeof(key));
	assert_int_equal(g_events.got[0].time_ns, ban.start_ns);
	assert_int_equal(g_events.got[0].expires_ns, ban.expires_ns);
	assert_int_equal(g_events.got[0].count, 11);
	assert_int_equal(g_events.got[0].reason, XDPBAN_REASON_ERRORS);
	assert_int_equal(g_events.got[0].classes, classes);
}

/* Sends errors from `addrs` in turn (one key), checks 1..10 leave the key unbanned and the
 * 11th bans it, then checks the ban, its event and the stats of the crossing packet. */
static void cross_the_limit(const char *const addrs[], int naddrs, const char *key_addr,
			    __u32 error_action, __u32 ban_s)
{
	struct stats before, after;
	__u64 want[XDPBAN_STAT__MAX] = { 0 }, t0, t1;
	__u8 frame[256];
	__u32 len;

	for (int i = 1; i <= 10; i++) {
		const struct pkt_spec bad = FROM(addrs[i % naddrs], PKT_L4_TCP, SYN_FIN);

		len = build(&bad, frame, sizeof(frame));
		expect_action("error 1..10", run(frame, len), error_action);
		expect_unbanned_count(key_addr, i);
	}
	{
		const struct pkt_spec bad = FROM(addrs[11 % naddrs], PKT_L4_TCP, SYN_FIN);

		len = build(&bad, frame, sizeof(frame));
	}
	read_stats(&before);
	t0 = dp_now_ns();
	expect_action("error 11", run(frame, len), error_action);
	t1 = dp_now_ns();
	read_stats(&after);
	want[error_action == XDP_DROP ? XDPBAN_STAT_DROP_MALFORMED : XDPBAN_STAT_PASSED] = 1;
	want[XDPBAN_STAT_ERRORS] = 1;
	want[XDPBAN_STAT_BANS_CREATED] = 1;
	dp_want_classes(want, XDPBAN_CLASS_MALFORMED);
	expect_stats_grew("error 11", &before, &after, want, len);
	expect_ban_and_event(key_addr, t0, t1, ban_s, XDPBAN_CLASS_MALFORMED);
}

/* One valid UDP datagram from addr: its action, and the slot it landed in. */
static void expect_udp(const char *addr, __u32 action, enum xdpban_stat reason)
{
	const struct pkt_spec udp = FROM(addr, PKT_L4_UDP, .payload_len = 16);
	__u64 want[XDPBAN_STAT__MAX] = { 0 };
	struct stats before, after;
	__u8 frame[256];
	__u32 len = build(&udp, frame, sizeof(frame));

	read_stats(&before);
	expect_action(addr, run(frame, len), action);
	read_stats(&after);
	want[reason] = 1;
	expect_stats_grew(addr, &before, &after, want, len);
}

static void v4_eleventh_error_bans(void **state)
{
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;
	const char *const from[] = { "192.0.2.10" };

	if (!g_loaded)
		skip();
	cfg.ban_s = 3600; /* not the default: expires_ns must come from the config */
	reset_state(&cfg);
	cross_the_limit(from, 1, "192.0.2.10", XDP_DROP, cfg.ban_s);
	expect_udp("192.0.2.10", XDP_DROP, XDPBAN_STAT_DROP_BANNED);
	expect_udp("192.0.2.11", XDP_PASS, XDPBAN_STAT_PASSED);
}

static void v6_one_64_shares_counter_and_ban(void **state)
{
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;
	const char *const from[] = { "2001:db8:1:2::10", "2001:db8:1:2:aaaa::20" };

	if (!g_loaded)
		skip();
	reset_state(&cfg);
	cross_the_limit(from, 2, "2001:db8:1:2::", XDP_DROP, cfg.ban_s);
	expect_udp("2001:db8:1:2::10", XDP_DROP, XDPBAN_STAT_DROP_BANNED);
	expect_udp("2001:db8:1:2:aaaa::20", XDP_DROP, XDPBAN_STAT_DROP_BANNED);
	expect_udp("2001:db8:1:2:ffff:ffff:ffff:ffff", XDP_DROP, XDPBAN_STAT_DROP_BANNED);
	expect_udp("2001:db8:1:3::10", XDP_PASS, XDPBAN_STAT_PASSED);
	expect_udp("2001:db8:1:1:ffff:ffff:ffff:ffff", XDP_PASS, XDPBAN_STAT_PASSED);
}

/* drop_mask without malformed: every error passes, yet the 11th still bans. */
static void errors_that_pass_still_ban(void **state)
{
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;
	const char *const from[] = { "203.0.113.7" };

	if (!g_loaded)
		skip();
	cfg.drop_mask = 0;
	reset_state(&cfg);
	cross_the_limit(from, 1, "203.0.113.7", XDP_PASS, cfg.ban_s);
	expect_udp("203.0.113.7", XDP_DROP, XDPBAN_STAT_DROP_BANNED);
	expect_udp("203.0.113.8", XDP_PASS, XDPBAN_STAT_PASSED);
}

/* class_mask without malformed: twenty errors leave no trace. */
static void errors_outside_class_mask_never_ban(void **state)
{
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;
	const struct pkt_spec bad = FROM("203.0.113.9", PKT_L4_TCP, SYN_FIN);
	__u8 frame[256];
	__u32 len;

	if (!g_loaded)
		skip();
	cfg.class_mask = XDPBAN_CLASS_REPORTED;
	reset_state(&cfg);
	len = build(&bad, frame, sizeof(frame));
	for (int i = 0; i < 20; i++)
		expect_action("error outside class_mask", run(frame, len), XDP_PASS);
	assert_int_equal(dp_count_counters(&g_dp), 0);
	assert_int_equal(dp_count_bans(&g_dp), 0);
	expect_udp("203.0.113.9", XDP_PASS, XDPBAN_STAT_PASSED);
}

/* Runs last: every packet this binary sent landed in exactly one verdict slot. */
static __u64 drops_of(const char *addr)
{
	struct xdpban_key key;
	__u64 drops = ~0ull;

	assert_int_equal(dp_key(addr, XDPBAN_DEFAULT_V6_PREFIX, &key), 0);
	assert_int_equal(xb_bans_drops_in(&g_dp.maps, &key, &drops), 0);
	return drops;
}

/* A ban counts the packets it drops, and in observe mode those it passes; a report is not
 * one; a new ban in the slot starts at 0 (its generation differs), without clearing a word. */
static void ban_counts_its_drops(void **state)
{
	const struct xdpban_config defaults = XDPBAN_CONFIG_DEFAULTS;
	struct xdpban_config cfg = defaults;
	const struct pkt_spec udp = FROM(SRC4, PKT_L4_UDP, .payload_len = 16);
	struct xdpban_report_req report;
	struct xdpban_key key;
	__u8 frame[256], addr[4] = { 192, 0, 2, 10 };
	__u32 len = build(&udp, frame, sizeof(frame));

	if (!g_loaded)
		skip();
	reset_state(&defaults);
	assert_int_equal(dp_drops_clear(&g_dp), 0);
	ban_forever(SRC4);
	assert_int_equal(drops_of(SRC4), 0);
	for (int i = 0; i < 5; i++)
		expect_udp(SRC4, XDP_DROP, XDPBAN_STAT_DROP_BANNED);
	assert_int_equal(drops_of(SRC4), 5);
	assert_int_equal(drops_of("192.0.2.11"), 0); /* not banned */
	cfg.mode = XDPBAN_MODE_OBSERVE;
	assert_int_equal(dp_set_config(&g_dp, &cfg), 0);
	for (int i = 0; i < 3; i++)
		expect_action("observed", run(frame, len), XDP_PASS);
	assert_int_equal(drops_of(SRC4), 8);
	assert_int_equal(dp_report(&g_dp, XDPBAN_FAMILY_INET, addr, 1, &report), 0);
	assert_int_equal(report.status, XDPBAN_REPORT_ALREADY_BANNED);
	assert_int_equal(drops_of(SRC4), 8);
	assert_int_equal(dp_key(SRC4, XDPBAN_DEFAULT_V6_PREFIX, &key), 0);
	assert_int_equal(dp_del_ban(&g_dp, &key), 0);
	ban_forever(SRC4);
	assert_int_equal(drops_of(SRC4), 0);
	expect_action("observed after the new ban", run(frame, len), XDP_PASS);
	assert_int_equal(drops_of(SRC4), 1);
	assert_int_equal(dp_set_config(&g_dp, &defaults), 0);
}

static void verdict_slots_add_up(void **state)
{
	struct stats total;
	__u64 packets = 0, bytes = 0;

	if (!g_loaded)
		skip();
	read_stats(&total);
	for (int i = 0; i < XDPBAN_STAT__VERDICTS; i++) {
		packets += total.v[i].packets;
		bytes += total.v[i].bytes;
	}
	assert_true(g_sent.packets > NROWS);
	assert_int_equal(packets, g_sent.packets);
	assert_int_equal(bytes, g_sent.bytes);
}

static int load(void **state)
{
	return dp_group_open(&g_dp, &g_loaded, "test_verdict");
}

static int unload(void **state)
{
	dp_group_close(&g_dp, &g_loaded);
	return 0;
}

int main(void)
{
	static const struct CMUnitTest tail[] = {
		cmocka_unit_test_setup_teardown(v4_eleventh_error_bans, threshold_setup,
						threshold_teardown),
		cmocka_unit_test_setup_teardown(v6_one_64_shares_counter_and_ban, threshold_setup,
						threshold_teardown),
		cmocka_unit_test_setup_teardown(errors_that_pass_still_ban, threshold_setup,
						threshold_teardown),
		cmocka_unit_test(errors_outside_class_mask_never_ban),
		cmocka_unit_test(ban_counts_its_drops),
		cmocka_unit_test(verdict_slots_add_up),
	};
	const size_t ntail = sizeof(tail) / sizeof(tail[0]);
	struct CMUnitTest *tests = calloc(2 * NROWS + ntail, sizeof(*tests));
	char (*split_names)[160] = calloc(NROWS, sizeof(*split_names));
	int failed;

	if (!tests || !split_names)
		return 1;
	/* One test per row, named by the row, so a failure says which fixture broke; then each
	 * row again as multi-buffer frames. */
	for (size_t i = 0; i < NROWS; i++) {
		tests[i].name = rows[i].name;
		tests[i].test_func = verdict_row;
		tests[i].initial_state = (void *)&rows[i];
		snprintf(split_names[i], sizeof(split_names[i]), "split: %s", rows[i].name);
		tests[NROWS + i].name = split_names[i];
		tests[NROWS + i].test_func = verdict_row_split;
		tests[NROWS + i].initial_state = (void *)&rows[i];
	}
	memcpy(&tests[2 * NROWS], tail, sizeof(tail));
	failed = _cmocka_run_group_tests("verdict", tests, 2 * NROWS + ntail, load, unload);
	free(split_names);
	free(tests);
	return failed;
}
