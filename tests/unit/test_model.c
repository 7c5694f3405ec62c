/* test_model.c - unit tests of the reference model alone (no kernel), so that a bug in the
 * oracle shows up here as a model bug and not as a puzzling mismatch in test_diff. Every
 * expectation is worked out by hand from docs/datapath.md. It must never load BPF.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <linux/bpf.h>
#include "fuzz.h"
#include "model.h"
#include "xdpban_time.h"

#define T0 (5000 * NS_PER_SEC) /* a boot time well past every window in these tests */

#define TCP_SYN_FIN 0x03
#define TCP_ACK 0x10

/* ---- Helpers ---- */

static void addr_of(const char *text, __u8 *family, __u8 addr[16])
{
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, text, addr) == 1) {
		*family = XDPBAN_FAMILY_INET;
		return;
	}
	assert_int_equal(inet_pton(AF_INET6, text, addr), 1);
	*family = XDPBAN_FAMILY_INET6;
}

/* A TCP frame from src; flags TCP_SYN_FIN makes it malformed, TCP_ACK clean. */
static void tcp_frame(struct fuzz_frame *f, const char *src, __u8 flags)
{
	struct fuzz_spec s = { .proto = 6, .tcp_flags = flags, .payload_len = 10 };
	__u8 family;

	addr_of(src, &family, s.src);
	s.l3 = family == XDPBAN_FAMILY_INET ? FUZZ_L3_IPV4 : FUZZ_L3_IPV6;
	assert_int_equal(fuzz_build(&s, f), 0);
}

static struct model_verdict run(struct model *m, const struct fuzz_frame *f, __u64 now)
{
	struct model_verdict v;

	assert_int_equal(model_packet(m, f->data, f->len, now, &v), 0);
	return v;
}

static void set_config(struct model *m, __u32 limit, __u32 window_s, __u32 ban_s)
{
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;

	cfg.limit = limit;
	cfg.window_s = window_s;
	cfg.ban_s = ban_s;
	model_set_config(m, &cfg);
}

static void add_policy(struct model *m, const char *addr, __u8 plen, __u32 verdict,
		       __u64 expires_ns)
{
	struct model_prefix p = { .plen = plen, .verdict = verdict, .expires_ns = expires_ns };

	addr_of(addr, &p.family, p.addr);
	assert_int_equal(model_policy_add(m, &p), 0);
}

static struct xdpban_key key_of(const struct model *m, const char *addr)
{
	struct xdpban_key key;
	__u8 family, bytes[16];

	addr_of(addr, &family, bytes);
	model_key(m, family, bytes, &key);
	return key;
}

/* ---- Threshold ---- */

static void threshold_tenth_error_unbanned_eleventh_bans(void **state)
{
	struct xdpban_key key;
	struct model_counter c;
	struct xdpban_ban ban;
	struct model_verdict v;
	struct fuzz_frame bad, good;
	struct model m;

	model_init(&m, 0, 0, 0);
	tcp_frame(&bad, "192.0.2.7", TCP_SYN_FIN);
	tcp_frame(&good, "192.0.2.7", TCP_ACK);
	key = key_of(&m, "192.0.2.7");
	for (__u32 i = 1; i <= 10; i++) {
		v = run(&m, &bad, T0 + i);
		assert_int_equal(v.reason, XDPBAN_STAT_DROP_MALFORMED);
		assert_true(v.counted);
		assert_int_equal(v.new_count, i);
		assert_false(v.ban_created);
	}
	assert_int_equal(model_ban(&m, &key, &ban), -ENOENT);
	v = run(&m, &good, T0 + 20);
	assert_int_equal(v.action, XDP_PASS);

	v = run(&m, &bad, T0 + 30);
	assert_true(v.ban_created);
	assert_int_equal(v.reason, XDPBAN_STAT_DROP_MALFORMED); /* the crossing packet itself */
	assert_int_equal(model_ban(&m, &key, &ban), 0);
	assert_int_equal(ban.count, 11);
	assert_int_equal(ban.start_ns, T0 + 30);
	assert_int_equal(ban.expires_ns, T0 + 30 + 86400 * NS_PER_SEC);
	assert_int_equal(ban.reason, XDPBAN_REASON_ERRORS);
	assert_int_equal(ban.classes, XDPBAN_CLASS_MALFORMED);
	assert_int_equal(model_counter(&m, &key, &c), 0);
	assert_int_equal(c.count, 0); /* starts over when the ban ends */
	assert_int_equal(c.start_s, T0 / NS_PER_SEC);

	v = run(&m, &good, T0 + 40);
	assert_int_equal(v.reason, XDPBAN_STAT_DROP_BANNED);
	assert_int_equal(m.stats[XDPBAN_STAT_ERRORS].packets, 11);
	assert_int_equal(m.stats[XDPBAN_STAT_BANS_CREATED].packets, 1);
	assert_int_equal(m.stats[XDPBAN_STAT_BANS_CREATED].bytes, bad.len);
	assert_int_equal(m.stats[XDPBAN_STAT_DROP_MALFORMED].packets, 11);
	assert_int_equal(m.stats[XDPBAN_STAT_PASSED].packets, 1);
	assert_int_equal(m.stats[XDPBAN_STAT_DROP_BANNED].bytes, good.len);
	model_free(&m);
}

/* ---- Window restart ---- */

static void window_restarts_after_window_s(void **state)
{
	struct xdpban_key key;
	struct model_counter c;
	struct fuzz_frame bad;
	struct model_verdict v;
	struct model m;

	model_init(&m, 0, 0, 0);
	set_config(&m, 3, 60, 600);
	tcp_frame(&bad, "192.0.2.8", TCP_SYN_FIN);
	key = key_of(&m, "192.0.2.8");
	for (int i = 0; i < 3; i++)
		run(&m, &bad, T0);
	v = run(&m, &bad, T0 + 60 * NS_PER_SEC - 1); /* still second 59 of the window: 4 > 3 */
	assert_true(v.ban_created);

	model_free(&m);
	model_init(&m, 0, 0, 0);
	set_config(&m, 3, 60, 600);
	for (int i = 0; i < 3; i++)
		run(&m, &bad, T0 + NS_PER_SEC / 2);
	v = run(&m, &bad, T0 + 60 * NS_PER_SEC); /* now_s - start == 60: a new window */
	assert_false(v.ban_created);
	assert_int_equal(v.new_count, 1);
	assert_int_equal(model_counter(&m, &key, &c), 0);
	assert_int_equal(c.start_s, T0 / NS_PER_SEC + 60);
	model_free(&m);
}

/* ---- Ban expiry ---- */

static void ban_expires_at_expires_ns_and_zero_is_forever(void **state)
{
	struct xdpban_ban ban = { .start_ns = T0, .expires_ns = T0 + 100 * NS_PER_SEC, .count = 5,
				  .reason = XDPBAN_REASON_MANUAL };
	struct xdpban_key key, key2;
	struct fuzz_frame good, good2;
	struct model_verdict v;
	struct model m;

	model_init(&m, 0, 0, 0);
	tcp_frame(&good, "192.0.2.9", TCP_ACK);
	tcp_frame(&good2, "2001:db8:1:2::9", TCP_ACK);
	key = key_of(&m, "192.0.2.9");
	key2 = key_of(&m, "2001:db8:1:2::9");
	assert_int_equal(model_put_ban(&m, &key, &ban), 0);
	ban.expires_ns = 0;
	assert_int_equal(model_put_ban(&m, &key2, &ban), 0);

	v = run(&m, &good, T0 + 100 * NS_PER_SEC - 1);
	assert_int_equal(v.reason, XDPBAN_STAT_DROP_BANNED);
	v = run(&m, &good, T0 + 100 * NS_PER_SEC); /* not later than now: expired */
	assert_int_equal(v.reason, XDPBAN_STAT_PASSED);
	assert_int_equal(v.events[XDPBAN_STAT_BANS_EXPIRED], 1);
	assert_int_equal(model_ban(&m, &key, &ban), -ENOENT);
	v = run(&m, &good, T0 + 101 * NS_PER_SEC);
	assert_int_equal(v.events[XDPBAN_STAT_BANS_EXPIRED], 0);
	assert_int_equal(m.stats[XDPBAN_STAT_BANS_EXPIRED].packets, 1);

	v = run(&m, &good2, T0 + 100000 * NS_PER_SEC);
	assert_int_equal(v.reason, XDPBAN_STAT_DROP_BANNED);
	model_free(&m);
}

/* ---- IPv6 keying ---- */

static void ipv6_counted_per_64_and_prefix_change_rekeys_only_new(void **state)
{
	static const __u8 want[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2 };
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;
	struct fuzz_frame a, b, other;
	struct xdpban_key key;
	struct model_counter c;
	struct model m;

	model_init(&m, 0, 0, 0);
	tcp_frame(&a, "2001:db8:1:2::1", TCP_SYN_FIN);
	tcp_frame(&b, "2001:db8:1:2:ffff:ffff:ffff:ffff", TCP_SYN_FIN);
	tcp_frame(&other, "2001:db8:1:3::1", TCP_SYN_FIN);
	assert_int_equal(run(&m, &a, T0).new_count, 1);
	assert_int_equal(run(&m, &b, T0).new_count, 2);
	assert_int_equal(run(&m, &other, T0).new_count, 1);
	key = key_of(&m, "2001:db8:1:2::1");
	assert_int_equal(key.family, XDPBAN_FAMILY_INET6);
	assert_int_equal(key.prefixlen, 64);
	assert_memory_equal(key.addr, want, 16);
	assert_int_equal(model_counter(&m, &key, &c), 0);
	assert_int_equal(c.count, 2);

	cfg.v6_prefix = 48; /* 1:2 and 1:3 now share 2001:db8:1::/48; the /64 keys stay */
	model_set_config(&m, &cfg);
	assert_int_equal(run(&m, &a, T0).new_count, 1);
	assert_int_equal(run(&m, &other, T0).new_count, 2);
	assert_int_equal(model_counter(&m, &key, &c), 0);
	assert_int_equal(c.count, 2);
	model_free(&m);
}

/* ---- Policy ---- */

static void longest_prefix_wins_between_trusted_and_deny(void **state)
{
	struct fuzz_frame f;
	struct model m;

	model_init(&m, 0, 0, 0);
	add_policy(&m, "198.51.100.0", 24, XDPBAN_POLICY_DENY, 0);
	add_policy(&m, "198.51.100.16", 28, XDPBAN_POLICY_TRUSTED, 0);
	add_policy(&m, "198.51.100.20", 32, XDPBAN_POLICY_DENY, 0);
	add_policy(&m, "2001:db8:5::", 48, XDPBAN_POLICY_TRUSTED, 0);
	add_policy(&m, "2001:db8:5:1::", 64, XDPBAN_POLICY_DENY, T0 + 10); /* timed */

	tcp_frame(&f, "198.51.100.1", TCP_ACK);
	assert_int_equal(run(&m, &f, T0).reason, XDPBAN_STAT_DROP_DENY);
	tcp_frame(&f, "198.51.100.17", TCP_SYN_FIN); /* trusted passes even malformed */
	assert_int_equal(run(&m, &f, T0).reason, XDPBAN_STAT_PASSED_TRUSTED);
	tcp_frame(&f, "198.51.100.20", TCP_ACK);
	assert_int_equal(run(&m, &f, T0).reason, XDPBAN_STAT_DROP_DENY);
	tcp_frame(&f, "2001:db8:5:1::1", TCP_ACK);
	assert_int_equal(run(&m, &f, T0 + 9).reason, XDPBAN_STAT_DROP_DENY);
	/* Run out: counts as no entry, so the packet goes on to counting. */
	tcp_frame(&f, "2001:db8:5:1::1", TCP_SYN_FIN);
	assert_true(run(&m, &f, T0 + 10).counted);
	tcp_frame(&f, "2001:db8:5:2::1", TCP_SYN_FIN);
	assert_int_equal(run(&m, &f, T0).reason, XDPBAN_STAT_PASSED_TRUSTED);
	assert_int_equal(m.stats[XDPBAN_STAT_ERRORS].packets, 1);
	model_free(&m);
}

/* Allow-only mode as the tries hold it: the /0 default not allowed, allow, deny inside it;
 * a timed ban that ran out leaves its prefix to the default; built-in sources are dropped. */
static void allow_only_layers(void **state)
{
	struct fuzz_frame f;
	struct model m;

	model_init(&m, 0, 0, 0);
	add_policy(&m, "0.0.0.0", 0, XDPBAN_POLICY_NOT_ALLOWED, 0);
	add_policy(&m, "::", 0, XDPBAN_POLICY_NOT_ALLOWED, 0);
	add_policy(&m, "198.51.100.0", 24, XDPBAN_POLICY_ALLOWED, 0);
	add_policy(&m, "198.51.100.16", 28, XDPBAN_POLICY_DENY, 0);
	add_policy(&m, "198.51.100.64", 26, XDPBAN_POLICY_DENY, T0 + 10); /* a timed ban */

	tcp_frame(&f, "198.51.100.1", TCP_SYN_FIN); /* allowed: counted as ever */
	assert_true(run(&m, &f, T0).counted);
	tcp_frame(&f, "198.51.100.17", TCP_ACK);
	assert_int_equal(run(&m, &f, T0).reason, XDPBAN_STAT_DROP_DENY);
	tcp_frame(&f, "203.0.113.1", TCP_SYN_FIN); /* not allowed: dropped, not counted */
	assert_int_equal(run(&m, &f, T0).reason, XDPBAN_STAT_DROP_NOT_ALLOWED);
	tcp_frame(&f, "2001:db8::1", TCP_ACK);
	assert_int_equal(run(&m, &f, T0).reason, XDPBAN_STAT_DROP_NOT_ALLOWED);
	tcp_frame(&f, "198.51.100.65", TCP_ACK);
	assert_int_equal(run(&m, &f, T0 + 9).reason, XDPBAN_STAT_DROP_DENY);
	assert_int_equal(run(&m, &f, T0 + 10).reason, XDPBAN_STAT_DROP_NOT_ALLOWED);
	tcp_frame(&f, "0.0.0.1", TCP_ACK); /* built-in: no remote host's, not allowed either */
	assert_int_equal(run(&m, &f, T0).reason, XDPBAN_STAT_DROP_NOT_ALLOWED);
	assert_int_equal(m.stats[XDPBAN_STAT_ERRORS].packets, 1);
	model_free(&m);
}

/* ---- Malformed without a source ---- */

static void unattributed_malformed_is_never_counted(void **state)
{
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;
	struct fuzz_frame f;
	struct model_verdict v;
	struct model m;

	model_init(&m, 0, 0, 0);
	add_policy(&m, "192.0.2.0", 24, XDPBAN_POLICY_TRUSTED, 0); /* no policy applies */
	tcp_frame(&f, "192.0.2.7", TCP_ACK);
	f.len = 14 + 19; /* one byte short of an IPv4 header */
	v = run(&m, &f, T0);
	assert_int_equal(v.parsed.kind, MODEL_FRAME_UNATTRIBUTED);
	assert_int_equal(v.reason, XDPBAN_STAT_DROP_MALFORMED);
	assert_false(v.counted);
	assert_int_equal(m.n_counters, 0);
	assert_int_equal(m.stats[XDPBAN_STAT_ERRORS].packets, 0);

	cfg.drop_mask = 0;
	model_set_config(&m, &cfg);
	assert_int_equal(run(&m, &f, T0).reason, XDPBAN_STAT_PASSED);
	cfg.drop_mask = XDPBAN_CLASS_MALFORMED;
	cfg.class_mask = XDPBAN_CLASS_REPORTED;
	model_set_config(&m, &cfg);
	assert_int_equal(run(&m, &f, T0).reason, XDPBAN_STAT_PASSED);

	tcp_frame(&f, "2001:db8::1", TCP_ACK);
	f.len = 14 + 39;
	model_set_config(&m, &(struct xdpban_config){ 0 }); /* no magic: the defaults */
	assert_int_equal(run(&m, &f, T0).reason, XDPBAN_STAT_DROP_MALFORMED);
	model_free(&m);
}

/* ---- NDP ---- */

static void ndp_passes_even_denied_or_banned(void **state)
{
	struct fuzz_spec s = { .l3 = FUZZ_L3_IPV6, .proto = 58, .icmp_type = 135 };
	struct xdpban_ban ban = { .start_ns = T0, .reason = XDPBAN_REASON_MANUAL };
	struct xdpban_key key;
	struct fuzz_frame f;
	struct model_verdict v;
	struct model m;
	__u8 family;

	model_init(&m, 0, 0, 0);
	add_policy(&m, "2001:db8:6::", 48, XDPBAN_POLICY_DENY, 0);
	addr_of("2001:db8:6::1", &family, s.src);
	assert_int_equal(fuzz_build(&s, &f), 0);
	v = run(&m, &f, T0);
	assert_true(v.parsed.ndp);
	assert_int_equal(v.reason, XDPBAN_STAT_PASSED);

	addr_of("2001:db8:7::1", &family, s.src);
	key = key_of(&m, "2001:db8:7::1");
	assert_int_equal(model_put_ban(&m, &key, &ban), 0);
	s.icmp_type = 137; /* redirect, the last NDP type */
	assert_int_equal(fuzz_build(&s, &f), 0);
	assert_int_equal(run(&m, &f, T0).reason, XDPBAN_STAT_PASSED);
	s.icmp_type = 138; /* not NDP */
	assert_int_equal(fuzz_build(&s, &f), 0);
	assert_int_equal(run(&m, &f, T0).reason, XDPBAN_STAT_DROP_BANNED);

	s.icmp_type = 135; /* too short for ICMPv6 (payload length 3): malformed, not NDP */
	addr_of("2001:db8:8::1", &family, s.src);
	assert_int_equal(fuzz_build(&s, &f), 0);
	f.data[14 + 5] = 3;
	v = run(&m, &f, T0);
	assert_false(v.parsed.ndp);
	assert_int_equal(v.reason, XDPBAN_STAT_DROP_MALFORMED);
	model_free(&m);
}

/* ---- Parser corners ---- */

static void parse_frame(const struct fuzz_spec *s, struct model_parsed *p, __u32 cut)
{
	struct fuzz_frame f;

	assert_int_equal(fuzz_build(s, &f), 0);
	model_parse(f.data, f.len - cut, p);
}

static void parser_vlans_ext_headers_and_lengths(void **state)
{
	struct fuzz_spec s = { .l3 = FUZZ_L3_IPV4, .proto = 17, .nvlans = 2,
			       .vlan_tpid = { 0x88a8, 0x8100, 0x8100 }, .src = { 192, 0, 2, 1 } };
	struct model_parsed p;
	struct fuzz_frame f;

	parse_frame(&s, &p, 0);
	assert_int_equal(p.kind, MODEL_FRAME_IP);
	assert_false(p.malformed);
	s.nvlans = 3; /* a valid third tag: not walked, so not IP */
	parse_frame(&s, &p, 0);
	assert_int_equal(p.kind, MODEL_FRAME_NOT_IP);
	s.nvlans = 2; /* the second tag cut short */
	parse_frame(&s, &p, 20 + 8 + 3);
	assert_int_equal(p.kind, MODEL_FRAME_NOT_IP);

	/* UDP length 8 in a 0-byte payload is exact; ethernet padding after it is ignored. */
	s.nvlans = 0;
	assert_int_equal(fuzz_build(&s, &f), 0);
	f.len += 20;
	model_parse(f.data, f.len, &p);
	assert_false(p.malformed);
	f.data[14 + 20 + 5] = 9; /* UDP length 9 > L = 8 */
	model_parse(f.data, f.len, &p);
	assert_true(p.malformed);

	/* IPv6: eight extension headers then UDP is checked; a ninth stops the walk. */
	s = (struct fuzz_spec){ .l3 = FUZZ_L3_IPV6, .proto = 6, .tcp_flags = 0, .next = 8 };
	parse_frame(&s, &p, 0);
	assert_true(p.malformed); /* no TCP flag at all */
	s.next = 9;
	parse_frame(&s, &p, 0);
	assert_false(p.malformed);
	/* A fragment header: no L4 checks. An AH that does not fit: malformed. */
	s = (struct fuzz_spec){ .l3 = FUZZ_L3_IPV6, .proto = 6, .next = 1, .ext_type = { 44 } };
	parse_frame(&s, &p, 0);
	assert_false(p.malformed);
	s.ext_type[0] = 51;
	s.ext_units[0] = 4; /* 24 bytes */
	assert_int_equal(fuzz_build(&s, &f), 0);
	f.data[14 + 5] = 23; /* payload length cuts the AH */
	model_parse(f.data, f.len, &p);
	assert_true(p.malformed);

	/* IPv4 fragment: no L4 checks, even for impossible TCP. */
	s = (struct fuzz_spec){ .l3 = FUZZ_L3_IPV4, .proto = 6, .tcp_flags = 0x03,
				.ipv4_frag = 0x2000 };
	parse_frame(&s, &p, 0);
	assert_false(p.malformed);
	s.ipv4_frag = 0x4000; /* DF only: checked */
	parse_frame(&s, &p, 0);
	assert_true(p.malformed);
	/* Total length past the frame: malformed, with a known source. */
	s.tcp_flags = 0x10;
	parse_frame(&s, &p, 1);
	assert_int_equal(p.kind, MODEL_FRAME_IP);
	assert_true(p.malformed);
}

/* A frame of spec s stretched with zero bytes to `ip_bytes` bytes from its IP header, with its
 * IP length field set to 0 (datapath.md section 1, "Aggregates"), parsed. */
static void parse_stretched(const struct fuzz_spec *s, __u32 ip_bytes, struct model_parsed *p)
{
	static __u8 big[80000];
	struct fuzz_frame f;

	assert_int_equal(fuzz_build(s, &f), 0);
	assert_true(f.l3_off >= 0 && f.l3_len_off >= 0 && f.l3_off + ip_bytes <= sizeof(big));
	memset(big, 0, sizeof(big));
	memcpy(big, f.data, f.len);
	big[f.l3_len_off] = big[f.l3_len_off + 1] = 0;
	model_parse(big, f.l3_off + ip_bytes, p);
}

static void parser_aggregates_length_zero(void **state)
{
	struct fuzz_spec s = { .l3 = FUZZ_L3_IPV4, .proto = 6, .tcp_flags = TCP_ACK,
			       .src = { 192, 0, 2, 1 } };
	struct model_parsed p;

	/* IPv4 total length 0: the frame's length once more than 65,535 bytes of IP follow. */
	parse_stretched(&s, 65536, &p);
	assert_int_equal(p.kind, MODEL_FRAME_IP);
	assert_false(p.malformed);
	parse_stretched(&s, 65535, &p);
	assert_true(p.malformed); /* total length 0 < IHL*4 */
	s.tcp_flags = TCP_SYN_FIN; /* every other rule still holds */
	parse_stretched(&s, 70000, &p);
	assert_true(p.malformed);

	/* IPv6 payload length 0 behind a Hop-by-Hop header: more than 65,535 bytes after the
	 * fixed header make it the rest of the frame; 65,535 leave it empty, and the Hop-by-Hop
	 * header does not fit in an empty payload. */
	s = (struct fuzz_spec){ .l3 = FUZZ_L3_IPV6, .proto = 6, .tcp_flags = TCP_ACK, .next = 1,
				.ext_type = { 0 } };
	parse_stretched(&s, 40 + 65536, &p);
	assert_false(p.malformed);
	parse_stretched(&s, 40 + 65535, &p);
	assert_true(p.malformed);
	s.next = 0; /* no extension header: TCP in an empty payload is malformed too */
	parse_stretched(&s, 40 + 65535, &p);
	assert_true(p.malformed);
	parse_stretched(&s, 40 + 65536, &p);
	assert_false(p.malformed);
}

/* ---- Reports, a full ban table, lost events ---- */

static void reports_and_full_ban_table(void **state)
{
	const __u8 a[4] = { 192, 0, 2, 50 }, b[4] = { 192, 0, 2, 51 }, t[4] = { 192, 0, 2, 52 };
	struct model_report_result r;
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;
	struct model m;

	struct xdpban_ban other = { .expires_ns = 0, .reason = XDPBAN_REASON_MANUAL };
	struct xdpban_key k = { .family = XDPBAN_FAMILY_INET, .prefixlen = 32 };

	model_init(&m, 0, 1, 0); /* one group: four ban slots */
	for (__u8 i = 0; i < 3; i++) { /* three of them taken */
		k.addr[0] = 10;
		k.addr[3] = i;
		assert_int_equal(model_put_ban(&m, &k, &other), 0);
	}
	set_config(&m, 3, 600, 600);
	add_policy(&m, "192.0.2.52", 32, XDPBAN_POLICY_TRUSTED, 0);
	model_events_drained(&m, 0); /* a full ring buffer */

	model_report(&m, XDPBAN_FAMILY_INET, a, 3, T0, &r);
	assert_int_equal(r.status, XDPBAN_REPORT_COUNTED);
	assert_int_equal(r.new_count, 3);
	model_report(&m, XDPBAN_FAMILY_INET, a, 1, T0, &r);
	assert_int_equal(r.status, XDPBAN_REPORT_BANNED);
	assert_int_equal(r.ban.reason, XDPBAN_REASON_REPORTED);
	assert_int_equal(r.ban.classes, XDPBAN_CLASS_REPORTED);
	assert_false(r.event_sent);
	model_report(&m, XDPBAN_FAMILY_INET, a, 1, T0, &r);
	assert_int_equal(r.status, XDPBAN_REPORT_ALREADY_BANNED);

	/* The last ban slot is taken: over the limit, the counter keeps (and saturates). */
	model_report(&m, XDPBAN_FAMILY_INET, b, 0xfffffff0u, T0, &r);
	assert_int_equal(r.status, XDPBAN_REPORT_TABLE_FULL);
	model_report(&m, XDPBAN_FAMILY_INET, b, 0x100, T0, &r);
	assert_int_equal(r.status, XDPBAN_REPORT_TABLE_FULL);
	assert_int_equal(r.new_count, 0xffffffffu);

	model_report(&m, XDPBAN_FAMILY_INET, t, 1, T0, &r);
	assert_int_equal(r.status, XDPBAN_REPORT_TRUSTED);
	model_report(&m, 5, t, 1, T0, &r);
	assert_int_equal(r.status, XDPBAN_REPORT_INVALID);
	model_report(&m, XDPBAN_FAMILY_INET, b, 0, T0, &r);
	assert_int_equal(r.status, XDPBAN_REPORT_INVALID);
	cfg.class_mask = XDPBAN_CLASS_MALFORMED;
	model_set_config(&m, &cfg);
	model_report(&m, XDPBAN_FAMILY_INET, b, 1, T0, &r);
	assert_int_equal(r.status, XDPBAN_REPORT_DISABLED);

	assert_int_equal(m.stats[XDPBAN_STAT_ERRORS].packets, 4 + 0xfffffff0ull + 0x100);
	assert_int_equal(m.stats[XDPBAN_STAT_ERRORS].bytes, 0);
	assert_int_equal(m.stats[XDPBAN_STAT_BANS_CREATED].packets, 1);
	assert_int_equal(m.stats[XDPBAN_STAT_BAN_TABLE_FULL].packets, 2);
	assert_int_equal(m.stats[XDPBAN_STAT_EVENTS_LOST].packets, 1);
	for (int i = 0; i < XDPBAN_STAT__VERDICTS; i++)
		assert_int_equal(m.stats[i].packets, 0);
	model_free(&m);
}

/* Bans spill past full groups and are found wherever they went; deletions in the middle of a
 * window leave the others found; a window with no free slot refuses. */
static void tables_survive_spill_and_deletion(void **state)
{
	struct xdpban_ban ban = { .expires_ns = 1 };
	struct xdpban_key key = { .family = XDPBAN_FAMILY_INET, .prefixlen = 32 };
	struct model m;

	model_init(&m, 0, 2048, 0);
	for (__u32 i = 0; i < 5000; i++) {
		memcpy(key.addr, &i, 4);
		assert_int_equal(model_put_ban(&m, &key, &ban), 0);
	}
	for (__u32 i = 0; i < 5000; i += 2) {
		struct fuzz_frame f;
		char text[32];

		memcpy(key.addr, &i, 4);
		inet_ntop(AF_INET, key.addr, text, sizeof(text));
		tcp_frame(&f, text, TCP_ACK);
		assert_int_equal(run(&m, &f, T0).events[XDPBAN_STAT_BANS_EXPIRED], 1);
	}
	assert_int_equal(m.n_bans, 2500);
	for (__u32 i = 0; i < 5000; i++) {
		memcpy(key.addr, &i, 4);
		assert_int_equal(model_ban(&m, &key, &ban), i % 2 ? 0 : -ENOENT);
	}
	model_free(&m);

	model_init(&m, 0, 1, 0);
	for (__u32 i = 0; i < 5; i++) {
		memcpy(key.addr, &i, 4);
		assert_int_equal(model_put_ban(&m, &key, &ban), i < 4 ? 0 : -ENOSPC);
	}
	model_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(threshold_tenth_error_unbanned_eleventh_bans),
		cmocka_unit_test(window_restarts_after_window_s),
		cmocka_unit_test(ban_expires_at_expires_ns_and_zero_is_forever),
		cmocka_unit_test(ipv6_counted_per_64_and_prefix_change_rekeys_only_new),
		cmocka_unit_test(longest_prefix_wins_between_trusted_and_deny),
		cmocka_unit_test(allow_only_layers),
		cmocka_unit_test(unattributed_malformed_is_never_counted),
		cmocka_unit_test(ndp_passes_even_denied_or_banned),
		cmocka_unit_test(parser_vlans_ext_headers_and_lengths),
		cmocka_unit_test(parser_aggregates_length_zero),
		cmocka_unit_test(reports_and_full_ban_table),
		cmocka_unit_test(tables_survive_spill_and_deletion),
	};

	return cmocka_run_group_tests_name("model", tests, NULL, NULL);
}
