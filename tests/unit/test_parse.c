/* test_parse.c - the library's parsers and formatters (user/lib): addresses and prefixes and
 * their keys, `set` keys and values, ban classes, and times in RFC 3339 and as strftime writes
 * them. Pure: no root, no maps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "control.h"
#include "dp.h"
#include "maps_fixture.h"
#include "libxdpban.h"
#include "pkt.h"
#include "xdpban_time.h"

#include "lib_checks.h"

/* --- addresses and keys (no root) --------------------------------------------------------- */

static void prefix_parse_accepts_and_formats(void **state)
{
	static const struct {
		const char *in, *out;
		__u8 family, plen;
	} rows[] = {
		{ "192.0.2.1", "192.0.2.1", XDPBAN_FAMILY_INET, 32 },
		{ "192.0.2.0/24", "192.0.2.0/24", XDPBAN_FAMILY_INET, 24 },
		{ "198.51.100.7/32", "198.51.100.7", XDPBAN_FAMILY_INET, 32 },
		{ "0.0.0.0/0", "0.0.0.0/0", XDPBAN_FAMILY_INET, 0 },
		{ "2001:db8::1", "2001:db8::1", XDPBAN_FAMILY_INET6, 128 },
		{ "2001:DB8:0:0::/48", "2001:db8::/48", XDPBAN_FAMILY_INET6, 48 },
		{ "2001:db8:1:2::/64", "2001:db8:1:2::/64", XDPBAN_FAMILY_INET6, 64 },
	};
	char err[XB_ERRLEN], out[64];
	struct xb_prefix p;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		assert_int_equal(xb_prefix_parse(rows[i].in, &p, err, sizeof(err)), 0);
		assert_int_equal(p.family, rows[i].family);
		assert_int_equal(p.plen, rows[i].plen);
		assert_int_equal(xb_prefix_format(&p, out, sizeof(out)), 0);
		assert_string_equal(out, rows[i].out);
	}
}

static void prefix_parse_rejects_with_one_line(void **state)
{
	static const struct {
		const char *in, *says;
	} rows[] = {
		{ "", "empty" },
		{ "localhost", "not an IPv4 or IPv6 address" },
		{ "192.0.2", "not an IPv4" },
		{ "192.0.2.256", "not an IPv4" },
		{ "192.0.2.01", "not an IPv4" },
		{ " 192.0.2.1", "not an IPv4" },
		{ "192.0.2.1 ", "not an IPv4" },
		{ "192.0.2.0/33", "bad prefix length" },
		{ "192.0.2.0/-1", "bad prefix length" },
		{ "192.0.2.0/024", "bad prefix length" },
		{ "192.0.2.0/", "bad prefix length" },
		{ "192.0.2.0/2x", "bad prefix length" },
		{ "192.0.2.0/24/1", "bad prefix length" },
		{ "2001:db8::/129", "bad prefix length" },
		{ "2001:db8::1%eth0", "not an IPv4 or IPv6" },
		{ "192.0.2.1/24", "host bits set in '192.0.2.1/24' (the prefix is 192.0.2.0/24)" },
		{ "2001:db8::1/64", "host bits set in '2001:db8::1/64' (the prefix is 2001:db8::/64)" },
		{ "2001:db8:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0/64", "not an IPv4" },
		/* IPv4 traffic is seen as IPv4: a mapped entry could never match it */
		{ "::ffff:192.0.2.1", "'::ffff:192.0.2.1' is an IPv4-mapped IPv6 address" },
		{ "::ffff:c000:201", "never matches IPv4 traffic" },
		{ "::ffff:192.0.2.0/120", "IPv4-mapped IPv6 prefix" },
		{ "::ffff:0:0/96", "IPv4-mapped IPv6 prefix" },
	};
	struct xb_prefix p = { .family = 99, .plen = 77 };
	char err[XB_ERRLEN];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		err[0] = '\0';
		assert_int_equal(xb_prefix_parse(rows[i].in, &p, err, sizeof(err)), -EINVAL);
		if (!strstr(err, rows[i].says))
			fail_msg("'%s': message '%s' lacks '%s'", rows[i].in, err, rows[i].says);
		assert_null(strchr(err, '\n'));
		assert_int_equal(p.family, 99); /* untouched */
		assert_int_equal(p.plen, 77);
	}
	/* what xdpban wrote itself (a ban under ipv6-prefix 128) still reads back */
	assert_int_equal(xb_prefix_parse_saved("::ffff:192.0.2.1", &p, err, sizeof(err)), 0);
	assert_int_equal(p.plen, 128);
	assert_int_equal(xb_prefix_parse("::fffe:c000:201", &p, err, sizeof(err)), 0);
	assert_int_equal(xb_prefix_parse("::/95", &p, err, sizeof(err)), 0);
}

static void key_masks_ipv6_to_the_prefix(void **state)
{
	struct xb_prefix a = P("2001:db8:1:2:3:4:5:6");
	struct xdpban_key key;
	char text[64];

	xb_key_from_addr(NULL, &a, 64, &key);
	assert_int_equal(key.prefixlen, 64);
	assert_int_equal(xb_key_format(&key, text, sizeof(text)), 0);
	assert_string_equal(text, "2001:db8:1:2::/64");
	xb_key_from_addr(NULL, &a, 48, &key);
	xb_key_format(&key, text, sizeof(text));
	assert_string_equal(text, "2001:db8:1::/48");
	xb_key_from_addr(NULL, &a, 128, &key);
	xb_key_format(&key, text, sizeof(text));
	assert_string_equal(text, "2001:db8:1:2:3:4:5:6");

	a = P("192.0.2.9");
	xb_key_from_addr(NULL, &a, 48, &key); /* IPv4 ignores the IPv6 prefix */
	assert_int_equal(key.prefixlen, 32);
	xb_key_format(&key, text, sizeof(text));
	assert_string_equal(text, "192.0.2.9");
	for (int i = 4; i < 16; i++)
		assert_int_equal(key.addr[i], 0);
}

static void prefix_contains(void **state)
{
	struct xb_prefix net = P("198.51.100.0/24"), in = P("198.51.100.128/25"),
			 out = P("198.51.101.0/24"), v6 = P("2001:db8::/32");

	assert_true(xb_prefix_contains(&net, &in));
	assert_false(xb_prefix_contains(&in, &net));
	assert_false(xb_prefix_contains(&net, &out));
	assert_true(xb_prefix_contains(&net, &net));
	assert_false(xb_prefix_contains(&net, &v6));
}

/* --- config (no root) --------------------------------------------------------------------- */

static void config_set_accepts(void **state)
{
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;
	char err[XB_ERRLEN];

	assert_int_equal(xb_config_set(&cfg, "limit", "0", err, sizeof(err)), 0);
	assert_int_equal(cfg.limit, 0);
	assert_int_equal(xb_config_set(&cfg, "limit", "1000000000", err, sizeof(err)), 0);
	assert_int_equal(cfg.limit, 1000000000);
	assert_int_equal(xb_config_set(&cfg, "window", "90", err, sizeof(err)), 0);
	assert_int_equal(cfg.window_s, 90);
	assert_int_equal(xb_config_set(&cfg, "window", "5m", err, sizeof(err)), 0);
	assert_int_equal(cfg.window_s, 300);
	assert_int_equal(xb_config_set(&cfg, "ban-time", "12h", err, sizeof(err)), 0);
	assert_int_equal(cfg.ban_s, 43200);
	assert_int_equal(xb_config_set(&cfg, "ban-time", "3650d", err, sizeof(err)), 0);
	assert_int_equal(cfg.ban_s, XDPBAN_TIME_MAX_S);
	assert_int_equal(xb_config_set(&cfg, "ban-time", "1s", err, sizeof(err)), 0);
	assert_int_equal(cfg.ban_s, 1);
	assert_int_equal(xb_config_set(&cfg, "window", "1w", err, sizeof(err)), 0);
	assert_int_equal(cfg.window_s, 7 * 86400);
	assert_int_equal(xb_config_set(&cfg, "ban-time", "521w", err, sizeof(err)), 0);
	assert_int_equal(cfg.ban_s, 521 * 7 * 86400);
	assert_int_equal(xb_config_set(&cfg, "ipv6-prefix", "48", err, sizeof(err)), 0);
	assert_int_equal(cfg.v6_prefix, 48);
	assert_int_equal(xb_config_set(&cfg, "errors", "reported", err, sizeof(err)), 0);
	assert_int_equal(cfg.class_mask, XDPBAN_CLASS_REPORTED);
	assert_int_equal(xb_config_set(&cfg, "errors", "malformed,reported", err, sizeof(err)),
			 0);
	assert_int_equal(cfg.class_mask, XDPBAN_CLASS_MALFORMED | XDPBAN_CLASS_REPORTED);
	assert_int_equal(xb_config_set(&cfg, "errors", "probe,protocol", err, sizeof(err)), 0);
	assert_int_equal(cfg.class_mask, XDPBAN_CLASS_PROBE | XDPBAN_CLASS_PROTOCOL);
	assert_int_equal(xb_config_set(&cfg, "errors", "malformed,reported,protocol,probe", err,
				       sizeof(err)),
			 0);
	assert_int_equal(cfg.class_mask, XDPBAN_CLASS_ALL);
	assert_int_equal(xb_config_set(&cfg, "drop", "none", err, sizeof(err)), 0);
	assert_int_equal(cfg.drop_mask, 0);
	assert_true(xdpban_config_valid(&cfg));
}

/* The rules of limits through `set`: owned fields, inherit, the ports' entries, their text,
 * and the limits an error gets (docs/datapath.md, "Rules of limits"). */
static void config_rules_set_and_judge(void **state)
{
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;
	struct xdpban_limits l;
	char err[XB_ERRLEN], text[256];

	assert_int_equal(xb_config_set(&cfg, "limit.probe", "2", err, sizeof(err)), 0);
	assert_int_equal(xb_config_set(&cfg, "ban-time.probe", "1w", err, sizeof(err)), 0);
	assert_int_equal(xb_config_set(&cfg, "limit.protocol", "5", err, sizeof(err)), 0);
	assert_int_equal(xb_config_set(&cfg, "window.protocol", "1h", err, sizeof(err)), 0);
	assert_int_equal(xb_config_set(&cfg, "limit.6969", "0", err, sizeof(err)), 0);
	assert_int_equal(xb_config_set(&cfg, "ban-time.53", "2h", err, sizeof(err)), 0);
	assert_true(xb_config_valid(&cfg));
	assert_int_equal(xb_config_rules_format(&cfg, text, sizeof(text)), 0);
	assert_string_equal(text, "limit.protocol 5, window.protocol 1h, limit.probe 2, "
				  "ban-time.probe 7d, ban-time.53 2h, limit.6969 0");
	assert_int_equal(xb_config_rule_text(&cfg, "window.6969", text, sizeof(text)), 0);
	assert_string_equal(text, "inherit");
	assert_int_equal(xb_config_rule_text(&cfg, "ban-time.probe", text, sizeof(text)), 0);
	assert_string_equal(text, "7d");

	/* a probe: its class's limit and ban time, the global window */
	xdpban_limits_of(&cfg, XDPBAN_CLASS_PROBE, 0, &l);
	assert_true(l.limit == 2 && l.window_s == 86400 && l.ban_s == 7 * 86400);
	assert_int_equal(l.rule, XDPBAN_RULE_CLASS + XDPBAN_CLASS_BITNO_PROBE);
	/* a protocol error on 6969: the port's limit, the class's window, the global ban time */
	xdpban_limits_of(&cfg, XDPBAN_CLASS_PROTOCOL, 6969, &l);
	assert_true(l.limit == 0 && l.window_s == 3600 && l.ban_s == 86400);
	assert_int_equal(l.rule, XDPBAN_RULE_PORT);
	/* on 53 the class's limit, the port's ban time; on an unruled port the class's alone */
	xdpban_limits_of(&cfg, XDPBAN_CLASS_PROTOCOL, 53, &l);
	assert_true(l.limit == 5 && l.ban_s == 7200 && l.rule == XDPBAN_RULE_PORT);
	xdpban_limits_of(&cfg, XDPBAN_CLASS_PROTOCOL, 7000, &l);
	assert_true(l.limit == 5 && l.ban_s == 86400);
	assert_int_equal(l.rule, XDPBAN_RULE_CLASS + XDPBAN_CLASS_BITNO_PROTOCOL);
	/* a port's rule is a protocol error's only; a malformed one gets the global values */
	xdpban_limits_of(&cfg, XDPBAN_CLASS_MALFORMED, 6969, &l);
	assert_true(l.limit == 10 && l.rule == XDPBAN_RULE_GLOBAL);
	/* several classes: the strictest (lowest limit) */
	xdpban_limits_of(&cfg, XDPBAN_CLASS_PROBE | XDPBAN_CLASS_PROTOCOL, 7000, &l);
	assert_true(l.limit == 2 && l.ban_s == 7 * 86400);
	xdpban_limits_of(&cfg, XDPBAN_CLASS_PROBE | XDPBAN_CLASS_PROTOCOL, 6969, &l);
	assert_true(l.limit == 0 && l.rule == XDPBAN_RULE_PORT);

	/* inherit gives a field back; a port's entry goes with its last field */
	assert_int_equal(xb_config_set(&cfg, "limit.6969", "inherit", err, sizeof(err)), 0);
	assert_int_equal(cfg.port_rule[0].port, 0);
	assert_int_equal(cfg.port_rule[0].own, 0);
	assert_int_equal(xb_config_set(&cfg, "limit.probe", "inherit", err, sizeof(err)), 0);
	assert_int_equal(cfg.class_rule[XDPBAN_CLASS_BITNO_PROBE].own, XDPBAN_OWN_BAN);
	assert_int_equal(xb_config_set(&cfg, "window.7", "inherit", err, sizeof(err)), 0);
	assert_true(xb_config_valid(&cfg));

	/* eight ports at most; a ninth is refused and nothing changes */
	for (unsigned int port = 1; port <= 7; port++) {
		char key[16];

		snprintf(key, sizeof(key), "limit.%u", port);
		assert_int_equal(xb_config_set(&cfg, key, "1", err, sizeof(err)), 0);
	}
	{
		struct xdpban_config before = cfg;

		assert_int_equal(xb_config_set(&cfg, "limit.9", "1", err, sizeof(err)), -ENOSPC);
		assert_string_equal(err, "limit.9: at most 8 ports have limits of their own");
		assert_memory_equal(&before, &cfg, sizeof(cfg));
	}
	/* a duplicate port or an unowned field with a value is no entry userspace writes */
	cfg.port_rule[1].port = cfg.port_rule[0].port;
	assert_false(xb_config_valid(&cfg));
}

static void config_set_rejects_and_keeps(void **state)
{
	static const struct {
		const char *key, *value, *says;
	} rows[] = {
		{ "limit", "-1", "bad limit '-1'" },
		{ "limit", "1000000001", "limit 1000000001 out of range" },
		{ "limit", "0x10", "bad limit" },
		{ "limit", "", "bad limit" },
		{ "limit", " 3", "bad limit" },
		{ "limit", "99999999999999999999", "bad limit" },
		{ "window", "0", "window 0 out of range" },
		{ "window", "3651d", "out of range" },
		{ "window", "1y", "bad window" },
		{ "window", "w", "bad window" },
		{ "window", "1ww", "bad window" },
		{ "ban-time", "522w", "ban-time 522w out of range" },
		{ "window", "1.5h", "bad window" },
		{ "window", "h", "bad window" },
		{ "ban-time", "315360001", "out of range" },
		{ "ban-time", "-5", "bad ban-time" },
		{ "ipv6-prefix", "31", "ipv6-prefix 31 out of range" },
		{ "ipv6-prefix", "129", "out of range" },
		{ "ipv6-prefix", "/64", "bad ipv6-prefix" },
		{ "errors", "bogus", "'bogus' is not an error class" },
		{ "errors", "malformed,", "'' is not an error class" },
		{ "errors", "none,malformed", "'none' is not an error class" },
		{ "errors", "", "bad errors" },
		{ "drop", "Malformed", "'Malformed' is not an error class" },
		{ "limit.probe", "-1", "bad limit.probe '-1'" },
		{ "limit.probe", "1000000001", "out of range" },
		{ "window.probe", "0", "window.probe 0 out of range" },
		{ "ban-time.6969", "soon", "bad ban-time.6969" },
		{ "limit.bogus", "3", "after the '.' an error class" },
		{ "limit.0", "3", "a UDP port 1..65535" },
		{ "limit.65536", "3", "a UDP port 1..65535" },
		{ "limit.06969", "3", "a UDP port 1..65535" },
		{ "limit.", "3", "after the '.'" },
		{ "limits.probe", "3", "unknown setting 'limits.probe'" },
		{ "limits", "3", "unknown setting 'limits'" },
		{ "", "3", "unknown setting ''" },
	};
	const struct xdpban_config before = XDPBAN_CONFIG_DEFAULTS;
	struct xdpban_config cfg = before;
	char err[XB_ERRLEN];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		err[0] = '\0';
		assert_true(xb_config_set(&cfg, rows[i].key, rows[i].value, err, sizeof(err)) < 0);
		if (!strstr(err, rows[i].says))
			fail_msg("%s=%s: message '%s' lacks '%s'", rows[i].key, rows[i].value, err,
				 rows[i].says);
		assert_null(strchr(err, '\n'));
		assert_memory_equal(&cfg, &before, sizeof(cfg));
	}
}

static void classes_format_round_trip(void **state)
{
	char buf[64], err[XB_ERRLEN];
	__u32 mask = 99;

	assert_int_equal(XDPBAN_CLASS_ALL, 0xf);
	assert_string_equal(xb_class_name(XDPBAN_CLASS_MALFORMED), "malformed");
	assert_string_equal(xb_class_name(XDPBAN_CLASS_REPORTED), "reported");
	assert_string_equal(xb_class_name(XDPBAN_CLASS_PROTOCOL), "protocol");
	assert_string_equal(xb_class_name(XDPBAN_CLASS_PROBE), "probe");
	assert_string_equal(xb_class_name(XDPBAN_CLASS_ALL), "?");
	assert_int_equal(xb_classes_format(XDPBAN_CLASS_ALL, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "malformed,reported,protocol,probe");
	assert_true(strlen(buf) < XB_CLASSES_TEXT_MAX);
	assert_int_equal(xb_classes_parse("errors", buf, &mask, err, sizeof(err)), 0);
	assert_int_equal(mask, XDPBAN_CLASS_ALL);
	assert_int_equal(xb_classes_format(XDPBAN_CLASS_PROTOCOL | XDPBAN_CLASS_PROBE, buf,
					   sizeof(buf)),
			 0);
	assert_string_equal(buf, "protocol,probe");
	assert_int_equal(xb_classes_parse("errors", "", &mask, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "bad errors '': expected a comma list of malformed, reported, "
				 "protocol, probe, or none");
	assert_int_equal(xb_classes_format(0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "none");
	assert_int_equal(xb_classes_format(XDPBAN_CLASS_ALL, buf, 5), -ENOSPC);
}

static void time_format_matches_strftime(void **state)
{
	static const time_t edges[] = {
		0, 1, -1, 59, 60, 3599, 3600, 86399, 86400,
		951782400,   /* 2000-02-29, a leap day of a century year */
		951868800,   /* 2000-03-01 */
		4107456000,  /* 2100-02-28: 2100 is not a leap year */
		4107542400,  /* 2100-03-01 */
		-2208988800, /* 1900-01-01 */
		-30610224000, /* 1000-01-01, the first year formatted by hand */
		-30610224001, /* 999-12-31: libc's text */
		253402300799, /* 9999-12-31T23:59:59 */
		253402300800, /* 10000-01-01: libc's text */
	};
	char got[40], want[40];

	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		assert_int_equal(xb_time_format(edges[i], got, sizeof(got)), 0);
		libc_stamp(edges[i], want, sizeof(want));
		assert_string_equal(got, want);
	}
	/* Every day from 1970 to 2400 at a second that walks through the day. */
	for (time_t t = 0; t < 13569465600; t += 86400 + 7919) {
		assert_int_equal(xb_time_format(t, got, sizeof(got)), 0);
		libc_stamp(t, want, sizeof(want));
		if (strcmp(got, want))
			fail_msg("%lld: got %s, strftime says %s", (long long)t, got, want);
	}
	assert_int_equal(xb_time_format(0, got, 20), -ENOSPC); /* no room for the NUL */
}

/* IPv4 text is written by hand: it must be what inet_ntop and "%s/%u" print. */
static void prefix_format_matches_libc(void **state)
{
	static const __u8 bytes[] = { 0, 1, 9, 10, 99, 100, 199, 200, 255 };
	char got[64], want[64], addr[INET_ADDRSTRLEN];
	struct xb_prefix p = { .family = XDPBAN_FAMILY_INET };

	for (size_t i = 0; i < sizeof(bytes) * sizeof(bytes); i++) {
		p.addr[0] = bytes[i % sizeof(bytes)];
		p.addr[1] = bytes[i / sizeof(bytes)];
		p.addr[2] = bytes[(i + 3) % sizeof(bytes)];
		p.addr[3] = bytes[(i + 5) % sizeof(bytes)];
		p.plen = i % 33;
		assert_non_null(inet_ntop(AF_INET, p.addr, addr, sizeof(addr)));
		if (p.plen == 32)
			snprintf(want, sizeof(want), "%s", addr);
		else
			snprintf(want, sizeof(want), "%s/%u", addr, p.plen);
		assert_int_equal(xb_prefix_format(&p, got, sizeof(got)), 0);
		assert_string_equal(got, want);
		assert_int_equal(xb_prefix_format(&p, got, strlen(want)), -ENOSPC);
	}
	p = P("2001:db8:0:1::/64");
	assert_int_equal(xb_prefix_format(&p, got, sizeof(got)), 0);
	assert_string_equal(got, "2001:db8:0:1::/64");
}

static void time_formats_rfc3339_utc(void **state)
{
	char buf[32];
	time_t before = time(NULL);
	__u64 boot = xb_boot_ns();
	time_t after = time(NULL);

	assert_int_equal(xb_time_format(0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "1970-01-01T00:00:00Z");
	assert_int_equal(xb_time_format(1798761600, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "2027-01-01T00:00:00Z");
	/* boot -> wall -> boot lands within the second it started in */
	assert_true(xb_boot_to_wall(boot) >= before - 1 && xb_boot_to_wall(boot) <= after + 1);
	assert_true(llabs((long long)(xb_wall_to_boot(xb_boot_to_wall(boot)) / NS_PER_SEC) -
			  (long long)(boot / NS_PER_SEC)) <= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(prefix_parse_accepts_and_formats),
		cmocka_unit_test(prefix_parse_rejects_with_one_line),
		cmocka_unit_test(key_masks_ipv6_to_the_prefix),
		cmocka_unit_test(prefix_contains),
		cmocka_unit_test(config_set_accepts),
		cmocka_unit_test(config_set_rejects_and_keeps),
		cmocka_unit_test(config_rules_set_and_judge),
		cmocka_unit_test(classes_format_round_trip),
		cmocka_unit_test(time_formats_rfc3339_utc),
		cmocka_unit_test(time_format_matches_strftime),
		cmocka_unit_test(prefix_format_matches_libc),
	};

	return cmocka_run_group_tests_name("parse", tests, NULL, NULL);
}
