/* test_guard.c - the port rules of the real XDP program (docs/datapath.md, section 9), one
 * datagram or segment at a time through BPF_PROG_TEST_RUN: a table of BEP 15 and DNS payloads
 * to guarded ports (valid requests never counted, each invalid case on its own counted as a
 * protocol error), probes to closed ports (and what is never one: open and guarded ports,
 * replies, groups, ports a socket of this process is bound to), each row checking the action,
 * every stats slot and the counter table, and every guarded row again as a multi-buffer frame
 * split inside the payload. Then a junk sender crosses the limit, and the rules of limits of a
 * class and of a port judge their own errors only. Never pins; needs root.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "dp.h"
#include "pkt.h"
#include "xdpban_ports.h"
#include "xdpban_time.h"

#define SRC4 "192.0.2.10"
#define SRC6 "2001:db8:1:2::10"
#define TRACKER 6969 /* guarded bep15 */
#define DNS 53       /* guarded dns */
#define SSH 22       /* open TCP */
#define NTP 123      /* open UDP */
#define CLOSED 9999

/* The payloads a row can carry; payload() writes them. */
enum payload_kind {
	P_ZERO = 0,       /* payload_len zero bytes */
	P_CONNECT,        /* connect, with the protocol_id magic */
	P_CONNECT_BADMAGIC,
	P_ANNOUNCE,       /* event 2 (started), port 6881 */
	P_ANNOUNCE_EVENT4,
	P_ANNOUNCE_PORT0,
	P_SCRAPE,         /* action 2; the length says how many hashes */
	P_ACTION,         /* action = `action`, the rest zero */
	P_DNS_QUERY,      /* flags 0x0100 (RD), one question */
	P_DNS_FLAGS,      /* flags = `action`, one question */
	P_DNS_QDCOUNT2,
	P_DNS_ANSWER,     /* a query carrying an answer count */
};

struct guard_case {
	const char *name;
	const char *src;
	__u32 l4;             /* PKT_L4_UDP (default), _TCP, _ICMP, _ICMP6 */
	const char *dst;      /* default the harness's */
	__u32 dport, sport;   /* sport 0 means 40000; use .sport0 for a real 0 */
	bool sport0;
	__u32 tcp_flags;      /* TCP rows */
	enum payload_kind kind;
	__u32 len;            /* payload bytes */
	__u32 action;         /* P_ACTION, P_DNS_FLAGS */
	__u16 pad;            /* frame bytes after the IP packet (a short announce's fields
			       * then lie in the frame, past the datagram) */
	__u8 ports;           /* config.ports; default GUARD | PROBE */
	__u32 drop_mask;      /* default XDPBAN_DEFAULT_DROP_MASK; ~0u: that */
	__u32 classes;        /* the class it must get: 0, PROTOCOL or PROBE */
	bool dropped;         /* the verdict drops it (drop_mask has its class) */
};

#define UDP_TO(port, ...) .src = SRC4, .l4 = PKT_L4_UDP, .dport = port, __VA_ARGS__
#define UDP6_TO(port, ...) .src = SRC6, .l4 = PKT_L4_UDP, .dport = port, __VA_ARGS__
#define PROTOCOL .classes = XDPBAN_CLASS_PROTOCOL
#define PROBE .classes = XDPBAN_CLASS_PROBE
#define SYN (PKT_SYN)
#define HASHES(n) (XDPBAN_BEP15_HEADER + (n) * XDPBAN_BEP15_HASH)

static const struct guard_case rows[] = {
	/* BEP 15: valid requests are never counted */
	{ "bep15 connect", UDP_TO(TRACKER, .kind = P_CONNECT, .len = 16) },
	{ "bep15 connect, longer", UDP_TO(TRACKER, .kind = P_CONNECT, .len = 24) },
	{ "bep15 announce, exactly 98 bytes", UDP_TO(TRACKER, .kind = P_ANNOUNCE, .len = 98) },
	{ "bep15 announce, 109 bytes (BEP 41)", UDP_TO(TRACKER, .kind = P_ANNOUNCE, .len = 109) },
	{ "bep15 announce, 1400 bytes", UDP_TO(TRACKER, .kind = P_ANNOUNCE, .len = 1400) },
	{ "bep15 scrape, 1 hash", UDP_TO(TRACKER, .kind = P_SCRAPE, .len = HASHES(1)) },
	{ "bep15 scrape, 74 hashes", UDP_TO(TRACKER, .kind = P_SCRAPE, .len = HASHES(74)) },
	{ "bep15 v6 announce", UDP6_TO(TRACKER, .kind = P_ANNOUNCE, .len = 98) },
	{ "bep15 v6 connect", UDP6_TO(TRACKER, .kind = P_CONNECT, .len = 16) },
	/* BEP 15: each invalid case on its own */
	{ "bep15 empty datagram", UDP_TO(TRACKER, .len = 0), PROTOCOL },
	{ "bep15 15 bytes", UDP_TO(TRACKER, .kind = P_CONNECT, .len = 15), PROTOCOL },
	{ "bep15 action 3 (a response)", UDP_TO(TRACKER, .kind = P_ACTION, .action = 3, .len = 16),
	  PROTOCOL },
	{ "bep15 action 4", UDP_TO(TRACKER, .kind = P_ACTION, .action = 4, .len = 98), PROTOCOL },
	{ "bep15 action 0xffffffff",
	  UDP_TO(TRACKER, .kind = P_ACTION, .action = 0xffffffffu, .len = 16), PROTOCOL },
	{ "bep15 connect, wrong protocol_id", UDP_TO(TRACKER, .kind = P_CONNECT_BADMAGIC, .len = 16),
	  PROTOCOL },
	{ "bep15 announce, 97 bytes", UDP_TO(TRACKER, .kind = P_ANNOUNCE, .len = 97, .pad = 8),
	  PROTOCOL },
	{ "bep15 announce, event 4", UDP_TO(TRACKER, .kind = P_ANNOUNCE_EVENT4, .len = 98),
	  PROTOCOL },
	{ "bep15 announce, port 0", UDP_TO(TRACKER, .kind = P_ANNOUNCE_PORT0, .len = 98), PROTOCOL },
	{ "bep15 scrape, no hash", UDP_TO(TRACKER, .kind = P_SCRAPE, .len = 16), PROTOCOL },
	{ "bep15 scrape, 1 hash and a byte", UDP_TO(TRACKER, .kind = P_SCRAPE, .len = HASHES(1) + 1),
	  PROTOCOL },
	{ "bep15 scrape, 1 hash less a byte",
	  UDP_TO(TRACKER, .kind = P_SCRAPE, .len = HASHES(1) - 1), PROTOCOL },
	{ "bep15 source port 0", UDP_TO(TRACKER, .kind = P_CONNECT, .len = 16, .sport0 = true),
	  PROTOCOL },
	{ "bep15 v6 announce, event 4", UDP6_TO(TRACKER, .kind = P_ANNOUNCE_EVENT4, .len = 98),
	  PROTOCOL },
	{ "bep15 error dropped when drop has protocol",
	  UDP_TO(TRACKER, .len = 3, .drop_mask = XDPBAN_CLASS_PROTOCOL), PROTOCOL, .dropped = true },
	{ "bep15 junk to an unguarded port, no probes", UDP_TO(6970, .len = 3,
							       .ports = XDPBAN_PORTS_GUARD) },
	{ "bep15 junk to the guarded port, guards off (config.ports 0)",
	  UDP_TO(TRACKER, .len = 3, .ports = XDPBAN_PORTS_PROBE) },

	/* DNS */
	{ "dns query", UDP_TO(DNS, .kind = P_DNS_QUERY, .len = 29) },
	{ "dns query, shortest (the root)", UDP_TO(DNS, .kind = P_DNS_QUERY, .len = 17) },
	{ "dns notify", UDP_TO(DNS, .kind = P_DNS_FLAGS, .action = 4 << 11, .len = 29) },
	{ "dns update", UDP_TO(DNS, .kind = P_DNS_FLAGS, .action = 5 << 11, .len = 29) },
	{ "dns v6 query", UDP6_TO(DNS, .kind = P_DNS_QUERY, .len = 29) },
	{ "dns 11 bytes", UDP_TO(DNS, .kind = P_DNS_QUERY, .len = 11), PROTOCOL },
	{ "dns query of 16 bytes", UDP_TO(DNS, .kind = P_DNS_QUERY, .len = 16), PROTOCOL },
	{ "dns response (QR)", UDP_TO(DNS, .kind = P_DNS_FLAGS, .action = 0x8180, .len = 29),
	  PROTOCOL },
	{ "dns opcode 1 (IQUERY)", UDP_TO(DNS, .kind = P_DNS_FLAGS, .action = 1 << 11, .len = 29),
	  PROTOCOL },
	{ "dns query, two questions", UDP_TO(DNS, .kind = P_DNS_QDCOUNT2, .len = 29), PROTOCOL },
	{ "dns query with an answer", UDP_TO(DNS, .kind = P_DNS_ANSWER, .len = 29), PROTOCOL },
	{ "dns source port 0", UDP_TO(DNS, .kind = P_DNS_QUERY, .len = 29, .sport0 = true),
	  PROTOCOL },

	/* probes */
	{ "probe: SYN to a closed TCP port", .src = SRC4, .l4 = PKT_L4_TCP, .dport = CLOSED,
	  .tcp_flags = SYN, PROBE },
	{ "probe: v6 SYN to a closed TCP port", .src = SRC6, .l4 = PKT_L4_TCP, .dport = CLOSED,
	  .tcp_flags = SYN, PROBE },
	{ "probe: datagram to a closed UDP port", UDP_TO(CLOSED, .len = 8), PROBE },
	{ "probe: v6 datagram to a closed UDP port", UDP6_TO(CLOSED, .len = 8), PROBE },
	{ "probe: datagram to the open TCP port's number", UDP_TO(SSH, .len = 8), PROBE },
	{ "probe dropped when drop has probe", UDP_TO(CLOSED, .len = 8,
						      .drop_mask = XDPBAN_CLASS_PROBE),
	  PROBE, .dropped = true },
	{ "no probe: SYN to the open TCP port", .src = SRC4, .l4 = PKT_L4_TCP, .dport = SSH,
	  .tcp_flags = SYN },
	{ "no probe: SYN-ACK to a closed port (a reply)", .src = SRC4, .l4 = PKT_L4_TCP,
	  .dport = CLOSED, .tcp_flags = SYN | PKT_ACK },
	{ "no probe: ACK to a closed port", .src = SRC4, .l4 = PKT_L4_TCP, .dport = CLOSED,
	  .tcp_flags = PKT_ACK },
	{ "no probe: RST to a closed port", .src = SRC4, .l4 = PKT_L4_TCP, .dport = CLOSED,
	  .tcp_flags = PKT_RST },
	{ "no probe: datagram to the open UDP port", UDP_TO(NTP, .len = 48) },
	{ "no probe: valid datagram to a guarded port", UDP_TO(TRACKER, .kind = P_CONNECT,
							       .len = 16) },
	{ "no probe: datagram to multicast", UDP_TO(5353, .len = 12, .dst = "224.0.0.251") },
	{ "no probe: datagram to broadcast", UDP_TO(68, .len = 12, .dst = "255.255.255.255") },
	{ "no probe: v6 datagram to multicast", UDP6_TO(5353, .len = 12, .dst = "ff02::fb") },
	{ "no probe: closed port, probes off", UDP_TO(CLOSED, .len = 8,
						      .ports = XDPBAN_PORTS_GUARD) },
	{ "no probe: echo request, echoes not counted", .src = SRC4, .l4 = PKT_L4_ICMP, .len = 8 },
	{ "probe: echo request, echoes counted", .src = SRC4, .l4 = PKT_L4_ICMP, .len = 8,
	  .ports = XDPBAN_PORTS_PROBE | XDPBAN_PORTS_PROBE_ICMP, PROBE },
	{ "probe: v6 echo request, echoes counted", .src = SRC6, .l4 = PKT_L4_ICMP6, .len = 8,
	  .ports = XDPBAN_PORTS_PROBE | XDPBAN_PORTS_PROBE_ICMP, PROBE },
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

static struct dp g_dp;
static bool g_loaded;

static void put_be32(__u8 *p, __u32 v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static void put_be16(__u8 *p, __u16 v)
{
	p[0] = v >> 8;
	p[1] = v;
}

/* Writes the row's payload over the zeroes pkt_build left. */
static void payload(const struct guard_case *row, __u8 *p)
{
	__u32 len = row->len;

	if (row->kind >= P_CONNECT && row->kind <= P_ACTION && len >= 12) {
		put_be32(p, 0xdeadbeef); /* a connection_id */
		put_be32(p + 4, 0x01020304);
		put_be32(p + 8, row->kind == P_ACTION ? row->action
			 : row->kind == P_SCRAPE      ? XDPBAN_BEP15_SCRAPE
			 : row->kind >= P_ANNOUNCE    ? XDPBAN_BEP15_ANNOUNCE
						      : XDPBAN_BEP15_CONNECT);
		if (row->kind == P_CONNECT || row->kind == P_CONNECT_BADMAGIC) {
			put_be32(p, (__u32)(XDPBAN_BEP15_MAGIC >> 32));
			put_be32(p + 4, (__u32)XDPBAN_BEP15_MAGIC +
						(row->kind == P_CONNECT_BADMAGIC));
		}
	}
	if (row->kind >= P_ANNOUNCE && row->kind <= P_ANNOUNCE_PORT0 && len + row->pad >= 98) {
		memset(p + 16, 0xab, 40); /* info_hash, peer_id */
		put_be32(p + XDPBAN_BEP15_EVENT_OFF, row->kind == P_ANNOUNCE_EVENT4 ? 4 : 2);
		put_be16(p + XDPBAN_BEP15_PORT_OFF, row->kind == P_ANNOUNCE_PORT0 ? 0 : 6881);
	}
	if (row->kind >= P_DNS_QUERY && len >= 12) {
		put_be16(p, 0x1234);
		put_be16(p + 2, row->kind == P_DNS_FLAGS ? row->action : 0x0100);
		put_be16(p + 4, row->kind == P_DNS_QDCOUNT2 ? 2 : 1);
		put_be16(p + 6, row->kind == P_DNS_ANSWER ? 1 : 0);
	}
}

static __u32 build(const struct guard_case *row, __u8 *frame, __u32 cap)
{
	struct pkt_spec spec = { .src = row->src, .dst = row->dst, .l4 = row->l4,
				 .payload_len = row->len, .pad = row->pad };
	struct pkt_layout at;

	if (row->l4 == PKT_L4_TCP || row->l4 == PKT_L4_UDP) {
		spec.dport = (struct pkt_opt)PKT_SET(row->dport);
		spec.sport = (struct pkt_opt)PKT_SET(row->sport0 ? 0 : row->sport ? row->sport : 40000);
	}
	if (row->l4 == PKT_L4_TCP)
		spec.tcp.flags = (struct pkt_opt)PKT_SET(row->tcp_flags);
	assert_int_equal(pkt_build(&spec, frame, cap, &at), 0);
	payload(row, frame + at.payload);
	return at.len;
}

/* The config and port rules of a row: guards on 6969 (bep15) and 53 (dns), TCP 22 and UDP
 * 123 open; empty tables. */
static void prepare(const struct guard_case *row)
{
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;

	cfg.ports = row->ports ? row->ports : XDPBAN_PORTS_GUARD | XDPBAN_PORTS_PROBE;
	cfg.drop_mask = row->drop_mask ? row->drop_mask : XDPBAN_DEFAULT_DROP_MASK;
	cfg.spoof = XDPBAN_SPOOF_OFF; /* what counts is the port rule, not the hop count */
	dp_tables_clear(&g_dp);
	assert_int_equal(dp_port_rules(&g_dp, TRACKER, XDPBAN_GUARD_BEP15), 0);
	assert_int_equal(dp_port_rules(&g_dp, DNS, XDPBAN_GUARD_DNS), 0);
	assert_int_equal(dp_port_rules(&g_dp, SSH, XDPBAN_PORT_TCP_OPEN), 0);
	assert_int_equal(dp_port_rules(&g_dp, NTP, XDPBAN_PORT_UDP_OPEN), 0);
	assert_int_equal(dp_set_config(&g_dp, &cfg), 0);
}

static __u32 run_split(const __u8 *frame, __u32 len, __u32 linear)
{
	__u32 action = ~0u;

	assert_int_equal(dp_run_split(&g_dp, frame, len, linear, &action), 0);
	return action;
}

/* Every stats slot grew by exactly want (packets; bytes len each). */
static void expect_stats(const char *what, const struct xdpban_stat_value *before,
			 const struct xdpban_stat_value *after, const __u64 *want, __u32 len)
{
	for (int i = 0; i < XDPBAN_STAT__MAX; i++) {
		__u64 packets = after[i].packets - before[i].packets;
		__u64 bytes = after[i].bytes - before[i].bytes;

		if (packets != want[i] || bytes != want[i] * len)
			fail_msg("%s: stats slot %d grew by %llu packets, %llu bytes; expected %llu",
				 what, i, (unsigned long long)packets, (unsigned long long)bytes,
				 (unsigned long long)want[i]);
	}
}

static void check_row(const struct guard_case *row, const __u8 *frame, __u32 len, __u32 linear)
{
	struct xdpban_stat_value before[XDPBAN_STAT__MAX], after[XDPBAN_STAT__MAX];
	__u64 want[XDPBAN_STAT__MAX] = { 0 };
	struct xdpban_key key;
	__u32 start_s, count, action;
	char what[200];
	int found;

	snprintf(what, sizeof(what), linear ? "%s (first buffer %u bytes)" : "%s", row->name,
		 linear);
	prepare(row);
	assert_int_equal(dp_stats(&g_dp, before), 0);
	action = run_split(frame, len, linear);
	assert_int_equal(dp_stats(&g_dp, after), 0);

	if (action != (row->dropped ? XDP_DROP : XDP_PASS))
		fail_msg("%s: action %u, expected %s", what, action,
			 row->dropped ? "XDP_DROP" : "XDP_PASS");
	want[row->dropped ? XDPBAN_STAT_DROP_ERROR : XDPBAN_STAT_PASSED] = 1;
	want[XDPBAN_STAT_ERRORS] = row->classes ? 1 : 0;
	dp_want_classes(want, row->classes);
	expect_stats(what, before, after, want, len);

	assert_int_equal(dp_key(row->src, XDPBAN_DEFAULT_V6_PREFIX, &key), 0);
	found = dp_counter(&g_dp, &key, &start_s, &count) == 0;
	if (row->classes && (!found || count != 1))
		fail_msg("%s: counter %s, expected 1 error", what, found ? "wrong" : "missing");
	if (!row->classes && found)
		fail_msg("%s: a counter of %u, expected none", what, count);
}

static void guard_row(void **state)
{
	const struct guard_case *row = *state;
	static __u8 frame[2048];
	__u32 len;

	if (!g_loaded)
		skip();
	len = build(row, frame, sizeof(frame));
	check_row(row, frame, len, 0);
}

/* The same rows with the payload split across two buffers: in the BEP 15 header, and between
 * the announce's event and port fields. */
static void guard_row_split(void **state)
{
	const struct guard_case *row = *state;
	const __u32 head = PKT_ETH_LEN + (strchr(row->src, ':') ? PKT_IP6_LEN : PKT_IP4_LEN) + 8;
	static __u8 frame[2048];
	__u32 len, cuts[] = { head + 9, head + XDPBAN_BEP15_EVENT_OFF + 2, head + 97 };

	if (!g_loaded)
		skip();
	len = build(row, frame, sizeof(frame));
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++)
		if (cuts[i] < len)
			check_row(row, frame, len, cuts[i]);
}

/* A socket of this host bound to a closed port makes it open: the host's own query awaits
 * its answer there, or a service listens that the config does not list. */
static void bound_ports_are_not_probed(void **state)
{
	const int types[] = { SOCK_DGRAM, SOCK_STREAM };

	if (!g_loaded)
		skip();
	for (size_t i = 0; i < 2; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET };
		socklen_t alen = sizeof(a);
		int fd = socket(AF_INET, types[i], 0);
		struct guard_case row = { .name = types[i] == SOCK_DGRAM ? "datagram to a bound port"
									 : "SYN to a listening port",
					  .src = SRC4,
					  .l4 = types[i] == SOCK_DGRAM ? PKT_L4_UDP : PKT_L4_TCP,
					  .tcp_flags = SYN, .len = 8 };
		__u8 frame[256];
		__u32 len;

		assert_true(fd >= 0);
		assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
		if (types[i] == SOCK_STREAM)
			assert_int_equal(listen(fd, 1), 0);
		assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
		row.dport = ntohs(a.sin_port);
		len = build(&row, frame, sizeof(frame));
		check_row(&row, frame, len, 0);
		close(fd); /* and now the same port is closed: a probe */
		row.classes = XDPBAN_CLASS_PROBE;
		check_row(&row, frame, len, 0);
	}
}

/* A junk sender to the tracker: 10 errors leave it alone, the 11th bans it, the 12th datagram
 * (valid or not) is dropped as banned. */
static void junk_sender_banned_after_eleventh(void **state)
{
	const struct guard_case junk = { .src = SRC4, .l4 = PKT_L4_UDP, .dport = TRACKER,
					 .len = 5 };
	const struct guard_case valid = { .src = SRC4, .l4 = PKT_L4_UDP, .dport = TRACKER,
					  .kind = P_CONNECT, .len = 16 };
	struct xdpban_ban ban;
	struct xdpban_key key;
	__u8 frame[256], ok[256];
	__u32 len = build(&junk, frame, sizeof(frame)), ok_len = build(&valid, ok, sizeof(ok));

	if (!g_loaded)
		skip();
	prepare(&junk);
	assert_int_equal(dp_key(SRC4, XDPBAN_DEFAULT_V6_PREFIX, &key), 0);
	for (int i = 1; i <= 10; i++) {
		assert_int_equal(run_split(frame, len, 0), XDP_PASS); /* protocol errors pass */
		assert_int_equal(dp_ban(&g_dp, &key, &ban), -ENOENT);
	}
	assert_int_equal(run_split(frame, len, 0), XDP_PASS); /* the 11th: counted, then banned */
	assert_int_equal(dp_ban(&g_dp, &key, &ban), 0);
	assert_int_equal(ban.classes, XDPBAN_CLASS_PROTOCOL);
	assert_int_equal(ban.count, 11);
	assert_int_equal(run_split(ok, ok_len, 0), XDP_DROP);
	assert_int_equal(run_split(frame, len, 0), XDP_DROP);
}

/* The rules of limits (docs/datapath.md, "Rules of limits"): the config of prepare() with
 * a rule put in by the caller. */
static void prepare_rules(const struct guard_case *row, const struct xdpban_config *rules)
{
	struct xdpban_config cfg = *rules;

	prepare(row);
	cfg.ports = XDPBAN_PORTS_GUARD | XDPBAN_PORTS_PROBE;
	cfg.spoof = XDPBAN_SPOOF_OFF;
	assert_int_equal(dp_set_config(&g_dp, &cfg), 0);
}

/* Sends `n` copies of a row's frame: each passes (its class is not dropped) and leaves the
 * source unbanned. */
static void send_unbanned(const struct guard_case *row, int n)
{
	struct xdpban_ban ban;
	struct xdpban_key key;
	__u8 frame[256];
	__u32 len = build(row, frame, sizeof(frame));

	assert_int_equal(dp_key(row->src, XDPBAN_DEFAULT_V6_PREFIX, &key), 0);
	for (int i = 0; i < n; i++) {
		assert_int_equal(run_split(frame, len, 0), XDP_PASS);
		assert_int_equal(dp_ban(&g_dp, &key, &ban), -ENOENT);
	}
}

/* One more copy bans the row's source: its ban has the row's class, count `count`, lasts ban_s,
 * and records the datagram's port and protocol and the rule that judged it. */
static void send_banning(const struct guard_case *row, __u32 count, __u32 ban_s, __u8 rule)
{
	struct xdpban_ban ban;
	struct xdpban_key key;
	__u8 frame[256];
	__u32 len = build(row, frame, sizeof(frame));

	assert_int_equal(dp_key(row->src, XDPBAN_DEFAULT_V6_PREFIX, &key), 0);
	assert_int_equal(run_split(frame, len, 0), XDP_PASS);
	assert_int_equal(dp_ban(&g_dp, &key, &ban), 0);
	assert_int_equal(ban.classes, row->classes);
	assert_int_equal(ban.count, count);
	assert_true(ban.expires_ns - ban.start_ns == (__u64)ban_s * NS_PER_SEC);
	assert_int_equal(ban.proto, IPPROTO_UDP);
	assert_int_equal(ban.port, row->dport);
	assert_int_equal(ban.rule, rule);
	assert_int_equal(run_split(frame, len, 0), XDP_DROP);
}

/* limit.probe 2 (ban-time.probe 1h): a prober is banned at its third probe, for an hour, while
 * a source of protocol errors is judged by the global limit 10 and ban time. */
static void class_limit_applies_to_its_class(void **state)
{
	const struct guard_case prober = { .src = "192.0.2.20", .l4 = PKT_L4_UDP, .dport = CLOSED,
					   .len = 8, PROBE };
	const struct guard_case junk = { .src = "192.0.2.21", .l4 = PKT_L4_UDP, .dport = TRACKER,
					 .len = 5, PROTOCOL };
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;

	if (!g_loaded)
		skip();
	cfg.class_rule[XDPBAN_CLASS_BITNO_PROBE] = (struct xdpban_rule){
		.limit = 2, .ban_s = 3600, .own = XDPBAN_OWN_LIMIT | XDPBAN_OWN_BAN
	};
	prepare_rules(&prober, &cfg);
	send_unbanned(&prober, 2);
	send_unbanned(&junk, 10);
	send_banning(&prober, 3, 3600, XDPBAN_RULE_CLASS + XDPBAN_CLASS_BITNO_PROBE);
	send_banning(&junk, 11, XDPBAN_DEFAULT_BAN_S, XDPBAN_RULE_GLOBAL);
}

/* limit.6969 1 over limit.protocol 5: junk to the tracker bans at the second datagram, junk to
 * the DNS port (guarded, no rule of its own) at the sixth; the port's ban time is the
 * class's, which it does not own. */
static void port_limit_applies_to_its_port(void **state)
{
	const struct guard_case tracker = { .src = "192.0.2.30", .l4 = PKT_L4_UDP,
					    .dport = TRACKER, .len = 5, PROTOCOL };
	const struct guard_case dns = { .src = "192.0.2.31", .l4 = PKT_L4_UDP, .dport = DNS,
					.len = 5, PROTOCOL };
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;

	if (!g_loaded)
		skip();
	cfg.class_rule[XDPBAN_CLASS_BITNO_PROTOCOL] = (struct xdpban_rule){
		.limit = 5, .ban_s = 7200, .own = XDPBAN_OWN_LIMIT | XDPBAN_OWN_BAN
	};
	cfg.port_rule[5] = (struct xdpban_rule){ .port = TRACKER, .limit = 1,
						 .own = XDPBAN_OWN_LIMIT };
	prepare_rules(&tracker, &cfg);
	send_unbanned(&tracker, 1);
	send_unbanned(&dns, 5);
	send_banning(&tracker, 2, 7200, XDPBAN_RULE_PORT);
	send_banning(&dns, 6, 7200, XDPBAN_RULE_CLASS + XDPBAN_CLASS_BITNO_PROTOCOL);
}

/* A rule out of range (written behind userspace's back) owns nothing: the global limit. */
static void invalid_rule_owns_nothing(void **state)
{
	const struct guard_case prober = { .src = "192.0.2.40", .l4 = PKT_L4_UDP, .dport = CLOSED,
					   .len = 8, PROBE };
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;

	if (!g_loaded)
		skip();
	cfg.class_rule[XDPBAN_CLASS_BITNO_PROBE] = (struct xdpban_rule){
		.limit = 1, .window_s = 0, .own = XDPBAN_OWN_LIMIT | XDPBAN_OWN_WINDOW
	};
	prepare_rules(&prober, &cfg);
	send_unbanned(&prober, 10);
	send_banning(&prober, 11, XDPBAN_DEFAULT_BAN_S, XDPBAN_RULE_GLOBAL);
}

static int load(void **state)
{
	return dp_group_open(&g_dp, &g_loaded, "test_guard");
}

static int unload(void **state)
{
	dp_group_close(&g_dp, &g_loaded);
	return 0;
}

int main(void)
{
	static const struct CMUnitTest tail[] = {
		cmocka_unit_test(bound_ports_are_not_probed),
		cmocka_unit_test(junk_sender_banned_after_eleventh),
		cmocka_unit_test(class_limit_applies_to_its_class),
		cmocka_unit_test(port_limit_applies_to_its_port),
		cmocka_unit_test(invalid_rule_owns_nothing),
	};
	const size_t ntail = sizeof(tail) / sizeof(tail[0]);
	struct CMUnitTest *tests = calloc(2 * NROWS + ntail, sizeof(*tests));
	char (*split_names)[160] = calloc(NROWS, sizeof(*split_names));
	size_t n = 0;
	int failed;

	if (!tests || !split_names)
		return 1;
	for (size_t i = 0; i < NROWS; i++) {
		tests[n].name = rows[i].name;
		tests[n].test_func = guard_row;
		tests[n++].initial_state = (void *)&rows[i];
	}
	for (size_t i = 0; i < NROWS; i++) {
		if (rows[i].l4 != PKT_L4_UDP || rows[i].len < 10)
			continue;
		snprintf(split_names[i], sizeof(split_names[i]), "%s, split", rows[i].name);
		tests[n].name = split_names[i];
		tests[n].test_func = guard_row_split;
		tests[n++].initial_state = (void *)&rows[i];
	}
	memcpy(tests + n, tail, sizeof(tail));
	if (!dp_can_load())
		fprintf(stderr, "test_guard: needs root (CAP_BPF and CAP_NET_ADMIN) to load the data "
				"path; every test is skipped\n");
	failed = _cmocka_run_group_tests("guard", tests, n + ntail, load, unload);
	free(tests);
	free(split_names);
	return failed;
}
