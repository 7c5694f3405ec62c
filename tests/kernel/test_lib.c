/* test_lib.c - unit tests of libxdpban (user/lib): parsing of addresses, durations, classes and
 * `set` keys, JSON rendering, the control request handler and client, and every map operation
 * (bans, prefix bans, query, sweep, stats, reports, listing) against the real data path loaded
 * unpinned by tests/harness/dp.h. Parsing and protocol tests need no root; map tests skip()
 * without it. Never touches pinned state or an interface.
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

/* --- helpers ------------------------------------------------------------------------------ */

static struct xb_prefix P(const char *text)
{
	struct xb_prefix p;
	char err[XB_ERRLEN];

	if (xb_prefix_parse(text, &p, err, sizeof(err)))
		fail_msg("test prefix '%s' does not parse: %s", text, err);
	return p;
}

static int setup(void **state)
{
	return maps_fixture_open(state, NULL);
}

static int teardown(void **state)
{
	return maps_fixture_close(state);
}

/* Runs an Ethernet + IPv4 + TCP frame from src with the given TCP flags (SYN+FIN is
 * malformed), built by the packet builder so that no header is accessed unaligned. */
static __u32 run_tcp4(struct maps_fixture *f, const char *src, __u8 flags)
{
	const struct pkt_spec spec = {
		.src = src,
		.dst = "203.0.113.254",
		.l4 = PKT_L4_TCP,
		.dport = PKT_SET(80),
		.tcp = { .flags = PKT_SET(flags) },
	};
	unsigned char frame[128];
	struct pkt_layout at;
	__u32 action = ~0u;

	assert_int_equal(pkt_build(&spec, frame, sizeof(frame), &at), 0);
	assert_int_equal(dp_run(&f->dp, frame, at.len, &action), 0);
	return action;
}

#define TCP_ACK 0x10
#define TCP_SYNFIN 0x03

static int policy_count(struct maps_fixture *f, __u8 family)
{
	return family == XDPBAN_FAMILY_INET
		       ? dp_map_count(f->m.policy4, sizeof(struct xdpban_lpm4_key))
		       : dp_map_count(f->m.policy6, sizeof(struct xdpban_lpm6_key));
}

static int ban_count(struct maps_fixture *f)
{
	return dp_count_bans(&f->dp);
}

/* A ban of `full` seconds made at or after t0_ns has between full minus the seconds elapsed
 * since t0 (rounded up) and full seconds left: exact bounds, however slow the machine is. */
static void assert_seconds_left(long long got, long long full, __u64 t0_ns)
{
	long long elapsed = (long long)((dp_now_ns() - t0_ns + NS_PER_SEC - 1) / NS_PER_SEC);

	if (got > full || got < full - elapsed)
		fail_msg("seconds_left %lld not in %lld..%lld", got, full - elapsed, full);
}

static struct json_object *handle(const struct xb_control_ctx *ctx, const char *request)
{
	struct json_object *reply;
	char *line = NULL;

	assert_int_equal(xb_control_handle(ctx, request, strlen(request), &line), 0);
	assert_non_null(line);
	assert_null(strchr(line, '\n')); /* one line */
	reply = json_tokener_parse(line);
	if (!reply)
		fail_msg("reply is not JSON: %s", line);
	free(line);
	return reply;
}

static struct json_object *get(struct json_object *obj, const char *name)
{
	struct json_object *v = NULL;

	if (!json_object_object_get_ex(obj, name, &v))
		fail_msg("no \"%s\" in %s", name, json_object_to_json_string(obj));
	return v;
}

static bool reply_ok(struct json_object *reply)
{
	return json_object_get_boolean(get(reply, "ok"));
}

static const char *reply_error(struct json_object *reply)
{
	assert_false(reply_ok(reply));
	return json_object_get_string(get(reply, "error"));
}

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

/* What strftime prints, the reference for xb_time_format's hand-written formatting. */
static void libc_stamp(time_t t, char *buf, size_t len)
{
	struct tm tm;

	assert_non_null(gmtime_r(&t, &tm));
	assert_true(strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) > 0);
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

/* --- the control handler without maps (no root) -------------------------------------------- */

/* A request and a piece of the error it must get. */
struct refusal {
	const char *request, *says;
};

/* Every request gets an error reply containing its `says`, from a handler without maps. */
static void expect_refusals(const struct refusal *rows, size_t n)
{
	struct xb_maps none = { .report_prog = -1 };
	struct xb_control_ctx ctx = { .maps = &none };

	for (size_t i = 0; i < n; i++) {
		struct json_object *reply = handle(&ctx, rows[i].request);
		const char *error = reply_error(reply);

		if (!strstr(error, rows[i].says))
			fail_msg("%s: error '%s' lacks '%s'", rows[i].request, error, rows[i].says);
		json_object_put(reply);
	}
}

static void control_rejects_bad_requests(void **state)
{
	static const struct refusal rows[] = {
		{ "", "empty request" },
		{ "{\"cmd\":\"bans\"", "not valid JSON" },
		{ "cmd=bans", "not valid JSON" },
		{ "[\"bans\"]", "must be a JSON object" },
		{ "\"bans\"", "must be a JSON object" },
		{ "{\"cmd\":\"bans\"} {}", "trailing data" },
		{ "{}", "missing field \"cmd\"" },
		{ "{\"cmd\":7}", "field \"cmd\" must be a string" },
		{ "{\"cmd\":\"frob\"}", "unknown command \"frob\"" },
		{ "{\"cmd\":\"bans\",\"all\":true}", "unknown field \"all\" for \"bans\"" },
		{ "{\"cmd\":\"query\"}", "missing field \"addr\"" },
		{ "{\"cmd\":\"query\",\"addr\":5}", "field \"addr\" must be a string" },
		{ "{\"cmd\":\"query\",\"addr\":\"host.example\"}", "not an IPv4 or IPv6" },
		{ "{\"cmd\":\"query\",\"addr\":\"192.0.2.0/24\"}", "must be a single address" },
		{ "{\"cmd\":\"ban\",\"prefix\":\"192.0.2.1/24\"}", "host bits set" },
		{ "{\"cmd\":\"ban\",\"prefix\":\"192.0.2.1\",\"seconds\":\"1h\"}",
		  "\"seconds\" must be an integer" },
		{ "{\"cmd\":\"ban\",\"prefix\":\"192.0.2.1\",\"seconds\":-1}", "out of range" },
		{ "{\"cmd\":\"ban\",\"prefix\":\"192.0.2.1\",\"seconds\":315360001}", "out of range" },
		{ "{\"cmd\":\"report\",\"addr\":\"192.0.2.1\",\"count\":0}", "out of range" },
		{ "{\"cmd\":\"set\",\"key\":\"limit\"}", "missing field \"value\"" },
		/* json-c would keep the last: this would be a ban */
		{ "{\"cmd\":\"status\",\"cmd\":\"ban\"}", "field \"cmd\" appears twice" },
		{ "{\"cmd\":\"query\",\"addr\":\"192.0.2.1\",\"addr\":\"192.0.2.2\"}",
		  "field \"addr\" appears twice" },
		{ "{\"c\\u006dd\":\"status\",\"cmd\":\"ban\"}", "field \"cmd\" appears twice" },
	};
	expect_refusals(rows, sizeof(rows) / sizeof(rows[0]));
}

static void control_rejects_oversized_and_nul(void **state)
{
	struct xb_maps none = { .report_prog = -1 };
	struct xb_control_ctx ctx = { .maps = &none };
	size_t len = XB_CONTROL_REQUEST_MAX + 1;
	char *big = malloc(len), *line = NULL;
	struct json_object *reply;

	assert_non_null(big);
	memset(big, ' ', len);
	memcpy(big, "{\"cmd\":\"bans\"}", 14);
	assert_int_equal(xb_control_handle(&ctx, big, len, &line), 0);
	reply = json_tokener_parse(line);
	assert_non_null(strstr(reply_error(reply), "longer than 4096 bytes"));
	json_object_put(reply);
	free(line);
	free(big);

	assert_int_equal(xb_control_handle(&ctx, "{\"cmd\":\0\"bans\"}", 15, &line), 0);
	reply = json_tokener_parse(line);
	assert_non_null(strstr(reply_error(reply), "NUL"));
	json_object_put(reply);
	free(line);
}

/* An escaped NUL would cut a string short where json-c hands it over: "192.0.2.45\u0000/8"
 * would reach the parser as "192.0.2.45", and a member name "cmd\u0000x" as "cmd". */
static void control_refuses_escaped_nul(void **state)
{
	static const struct refusal rows[] = {
		{ "{\"cmd\":\"query\",\"addr\":\"192.0.2.45\\u0000/8\"}",
		  "field \"addr\" contains a NUL character" },
		{ "{\"cmd\":\"ban\",\"prefix\":\"192.0.2.45\\u0000/8\"}",
		  "field \"prefix\" contains a NUL character" },
		{ "{\"cmd\":\"bans\\u0000x\"}", "field \"cmd\" contains a NUL character" },
		{ "{\"cmd\":\"set\",\"key\":\"limit\\u0000\",\"value\":\"3\"}",
		  "field \"key\" contains a NUL character" },
		{ "{\"cmd\":\"set\",\"key\":\"limit\",\"value\":\"3\\u0000x\"}",
		  "field \"value\" contains a NUL character" },
		{ "{\"cmd\":\"bans\",\"cmd\\u0000x\":\"ban\"}", "a field name contains a NUL" },
		{ "{\"cmd\\u0000\" : \"bans\"}", "a field name contains a NUL" },
	};
	expect_refusals(rows, sizeof(rows) / sizeof(rows[0]));
	/* An escaped backslash followed by "u0000" is no NUL: the address is just wrong. */
	struct xb_maps none = { .report_prog = -1 };
	struct xb_control_ctx ctx = { .maps = &none };
	struct json_object *reply = handle(&ctx, "{\"cmd\":\"query\",\"addr\":\"\\\\u0000\"}");

	assert_string_equal(reply_error(reply), "not an IPv4 or IPv6 address: '\\u0000'");
	json_object_put(reply);
}

/* Handles request and checks its error reply: every byte of the line printable ASCII (so
 * valid UTF-8, whatever the request held), and the error exactly as expected. */
static void expect_ascii_error(const struct xb_control_ctx *ctx, const char *request,
			       const char *error)
{
	struct json_object *reply;
	char *line = NULL;

	assert_int_equal(xb_control_handle(ctx, request, strlen(request), &line), 0);
	assert_non_null(line);
	for (const unsigned char *c = (const unsigned char *)line; *c; c++)
		if (*c < 0x20 || *c > 0x7e)
			fail_msg("byte 0x%02x at %zu of the reply to %s: %s", *c,
				 (size_t)((const char *)c - line), request, line);
	reply = json_tokener_parse(line);
	if (!reply)
		fail_msg("reply is not JSON: %s", line);
	assert_string_equal(reply_error(reply), error);
	json_object_put(reply);
	free(line);
}

/* Error replies quote what the client sent; bytes that are not printable ASCII come back as
 * \xNN, so a reply is valid UTF-8 JSON even when the request was not valid UTF-8. */
static void control_error_replies_escape_what_they_quote(void **state)
{
	struct xb_maps none = { .report_prog = -1 };
	struct xb_control_ctx ctx = { .maps = &none };

	expect_ascii_error(&ctx, "{\"cmd\":\"query\",\"addr\":\"\xff\xfe\"}",
			   "not an IPv4 or IPv6 address: '\\xff\\xfe'");
	expect_ascii_error(&ctx, "{\"cmd\":\"ban\",\"prefix\":\"192.0.2.0/2\xd9\xa4\"}",
			   "bad prefix length in '192.0.2.0/2\\xd9\\xa4': must be 0..32");
	expect_ascii_error(&ctx, "{\"cmd\":\"\xc3\"}", "unknown command \"\\xc3\"");
	expect_ascii_error(&ctx, "{\"cmd\":\"bans\",\"\xe2\x82\":1}",
			   "unknown field \"\\xe2\\x82\" for \"bans\"");
	/* a terminal escape, decoded from JSON: the CLI prints errors, so it is escaped too */
	expect_ascii_error(&ctx, "{\"cmd\":\"query\",\"addr\":\"\\u001b[2J\"}",
			   "not an IPv4 or IPv6 address: '\\x1b[2J'");
	/* "%.40s" cuts a two-byte character in half: the half is escaped, not sent raw */
	expect_ascii_error(&ctx, "{\"cmd\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xc3\xa9\"}",
			   "unknown command \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\\xc3\"");
}

static void control_read_only_refuses_changes(void **state)
{
	static const char *const changes[] = {
		"{\"cmd\":\"ban\",\"prefix\":\"192.0.2.1\"}",
		"{\"cmd\":\"unban\",\"prefix\":\"192.0.2.1\"}",
		"{\"cmd\":\"report\",\"addr\":\"192.0.2.1\"}",
		"{\"cmd\":\"set\",\"key\":\"limit\",\"value\":\"3\"}",
	};
	struct xb_maps none = { .report_prog = -1 };
	struct xb_control_ctx ctx = { .maps = &none, .read_only = true };

	for (size_t i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
		struct json_object *reply = handle(&ctx, changes[i]);

		assert_non_null(strstr(reply_error(reply), "read-only"));
		json_object_put(reply);
	}
}

static int hook_command(const char *cmd, struct json_object *request, struct json_object *reply,
			char *err, size_t errlen, void *user)
{
	if (strcmp(cmd, "reload"))
		return -ENOENT;
	(*(int *)user)++;
	json_object_object_add(reply, "reloaded", json_object_new_boolean(true));
	return 0;
}

static void control_unknown_commands_go_to_the_daemon(void **state)
{
	struct xb_control_hooks hooks = { .command = hook_command };
	struct xb_maps none = { .report_prog = -1 };
	int calls = 0;
	struct xb_control_ctx ctx = { .maps = &none, .hooks = &hooks, .user = &calls };
	struct json_object *reply = handle(&ctx, "{\"cmd\":\"reload\"}");

	assert_true(reply_ok(reply));
	assert_true(json_object_get_boolean(get(reply, "reloaded")));
	assert_int_equal(calls, 1);
	json_object_put(reply);
	reply = handle(&ctx, "{\"cmd\":\"frob\"}");
	assert_non_null(strstr(reply_error(reply), "unknown command"));
	json_object_put(reply);
}

/* --- the control client (no root) ---------------------------------------------------------- */

static void client_reads_one_line(void **state)
{
	const char canned[] = "{\"ok\":true,\"n\":1}\n{\"ok\":true,\"n\":2}\n";
	char err[XB_ERRLEN], *reply = NULL, got[64] = "";
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(write(sv[1], canned, strlen(canned)), (ssize_t)strlen(canned));
	assert_int_equal(xb_control_call(sv[0], "{\"cmd\":\"stats\"}", 1000, &reply, err,
					 sizeof(err)),
			 0);
	assert_string_equal(reply, "{\"ok\":true,\"n\":1}");
	free(reply);
	assert_true(read(sv[1], got, sizeof(got) - 1) > 0);
	assert_string_equal(got, "{\"cmd\":\"stats\"}\n"); /* the request, newline-terminated */
	close(sv[0]);
	close(sv[1]);
}

static void client_reports_closed_and_silent_peers(void **state)
{
	char err[XB_ERRLEN], *reply = NULL;
	int sv[2];

	/* No reply at all: the timeout is the outcome asserted, not a measure of speed. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(xb_control_call(sv[0], "{\"cmd\":\"stats\"}", 50, &reply, err,
					 sizeof(err)),
			 -ETIMEDOUT);
	assert_null(reply);
	assert_non_null(strstr(err, "no reply"));
	close(sv[0]);
	close(sv[1]);

	/* Half a line, then the peer stops writing: no reply, and no hang. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(write(sv[1], "{\"ok\":", 6), 6);
	assert_int_equal(shutdown(sv[1], SHUT_WR), 0);
	assert_int_equal(xb_control_call(sv[0], "{\"cmd\":\"stats\"}", 1000, &reply, err,
					 sizeof(err)),
			 -ECONNRESET);
	assert_non_null(strstr(err, "closed the connection"));
	/* The peer is gone altogether: the request cannot be sent, and there is no SIGPIPE. */
	close(sv[1]);
	assert_int_equal(xb_control_call(sv[0], "{\"cmd\":\"stats\"}", 1000, &reply, err,
					 sizeof(err)),
			 -EPIPE);
	assert_null(reply);
	close(sv[0]);

	/* A refusal: the server answers and closes before it reads the request; the send fails,
	 * and the answer is what the caller gets. */
	static const char refusal[] = "{\"ok\":false,\"error\":\"permission denied\"}\n";

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(write(sv[1], refusal, sizeof(refusal) - 1), sizeof(refusal) - 1);
	close(sv[1]);
	assert_int_equal(xb_control_call(sv[0], "{\"cmd\":\"stats\"}", 1000, &reply, err,
					 sizeof(err)),
			 0);
	assert_string_equal(reply, "{\"ok\":false,\"error\":\"permission denied\"}");
	free(reply);
	close(sv[0]);
}

static void client_refuses_bad_requests_and_paths(void **state)
{
	char err[XB_ERRLEN], *reply = NULL, path[200];
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(xb_control_call(sv[0], "{\"cmd\":\n\"stats\"}", 1000, &reply, err,
					 sizeof(err)),
			 -EINVAL);
	close(sv[0]);
	close(sv[1]);
	assert_int_equal(xb_control_connect("/run/xblib-no-such-dir/x.sock", err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "/run/xblib-no-such-dir/x.sock"));
	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	assert_int_equal(xb_control_connect(path, err, sizeof(err)), -ENAMETOOLONG);
}

/* --- config in the map --------------------------------------------------------------------- */

static void config_defaults_then_written(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xdpban_config cfg, bad;
	char err[XB_ERRLEN];
	bool is_default;

	assert_int_equal(xb_config_read(&f->m, &cfg), 0);
	assert_int_equal(cfg.limit, XDPBAN_DEFAULT_LIMIT);
	assert_int_equal(cfg.v6_prefix, XDPBAN_DEFAULT_V6_PREFIX);
	assert_int_equal(xb_config_is_default(&f->m, &is_default), 0);
	assert_true(is_default);

	assert_int_equal(xb_config_set(&cfg, "limit", "3", err, sizeof(err)), 0);
	assert_int_equal(xb_config_write(&f->m, &cfg, err, sizeof(err)), 0);
	memset(&cfg, 0, sizeof(cfg));
	assert_int_equal(xb_config_read(&f->m, &cfg), 0);
	assert_int_equal(cfg.limit, 3);
	assert_int_equal(xb_config_is_default(&f->m, &is_default), 0);
	assert_false(is_default);

	bad = cfg;
	bad.v6_prefix = 20;
	assert_int_equal(xb_config_write(&f->m, &bad, err, sizeof(err)), -EINVAL);
	assert_int_equal(xb_config_read(&f->m, &cfg), 0);
	assert_int_equal(cfg.v6_prefix, XDPBAN_DEFAULT_V6_PREFIX); /* unchanged */
}

/* --- bans ---------------------------------------------------------------------------------- */

static void ban_address_drops_then_unban_passes(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xb_prefix p = P("192.0.2.10"), lifted;
	struct xdpban_ban ban;
	struct xdpban_key key;
	char err[XB_ERRLEN];
	__u64 before = dp_now_ns();

	assert_int_equal(run_tcp4(f, "192.0.2.10", TCP_ACK), XDP_PASS);
	assert_int_equal(xb_ban(&f->m, &p, 3600, err, sizeof(err)), 0);
	assert_int_equal(dp_key("192.0.2.10", 64, &key), 0);
	assert_int_equal(dp_ban(&f->dp, &key, &ban), 0);
	assert_int_equal(ban.reason, XDPBAN_REASON_MANUAL);
	assert_int_equal(ban.count, 0);
	assert_true(ban.start_ns >= before && ban.start_ns <= dp_now_ns());
	assert_true(ban.expires_ns == ban.start_ns + 3600 * NS_PER_SEC);
	/* written through the table's protocol: the data path finds the ban */
	assert_int_equal(run_tcp4(f, "192.0.2.10", TCP_ACK), XDP_DROP);
	assert_int_equal(run_tcp4(f, "192.0.2.11", TCP_ACK), XDP_PASS);

	assert_int_equal(xb_unban(&f->m, &p, &lifted, err, sizeof(err)), 0);
	assert_memory_equal(&lifted, &p, sizeof(p));
	assert_int_equal(dp_ban(&f->dp, &key, &ban), -ENOENT);
	assert_int_equal(run_tcp4(f, "192.0.2.10", TCP_ACK), XDP_PASS);
	err[0] = '\0';
	assert_int_equal(xb_unban(&f->m, &p, &lifted, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "no ban on 192.0.2.10");
}

static void ban_permanent_has_no_expiry(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xb_prefix p = P("2001:db8:5:6::/64");
	struct xdpban_ban ban;
	struct xdpban_key key;
	char err[XB_ERRLEN];

	/* /64 is the key granularity: a ban-table entry, not a prefix ban */
	assert_int_equal(xb_ban(&f->m, &p, 0, err, sizeof(err)), 0);
	assert_int_equal(dp_key("2001:db8:5:6::77", 64, &key), 0);
	assert_int_equal(dp_ban(&f->dp, &key, &ban), 0);
	assert_int_equal(ban.expires_ns, 0);
	assert_int_equal(policy_count(f, XDPBAN_FAMILY_INET6), 0);
}

/* An IPv6 address is banned as its /64 key: unbanning the address lifts the key's ban and
 * says which prefix it lifted; the next unban of it finds nothing. */
static void unban_address_lifts_its_key(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xb_prefix net = P("2001:db8:5:6::/64"), addr = P("2001:db8:5:6::77"), lifted;
	struct xdpban_ban ban;
	struct xdpban_key key;
	char err[XB_ERRLEN];

	assert_int_equal(xb_ban(&f->m, &net, 600, err, sizeof(err)), 0);
	assert_int_equal(xb_unban(&f->m, &addr, &lifted, err, sizeof(err)), 0);
	assert_memory_equal(&lifted, &net, sizeof(net));
	assert_int_equal(dp_key("2001:db8:5:6::77", 64, &key), 0);
	assert_int_equal(dp_ban(&f->dp, &key, &ban), -ENOENT);
	assert_int_equal(xb_unban(&f->m, &addr, &lifted, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "no ban on 2001:db8:5:6::77");
}

static void ban_prefix_goes_to_policy_trie(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xb_prefix p = P("198.51.100.0/24"), in = P("198.51.100.77"), lifted;
	struct xb_query_info q;
	char err[XB_ERRLEN];
	__u64 t0 = dp_now_ns();

	assert_int_equal(xb_ban(&f->m, &p, 600, err, sizeof(err)), 0);
	assert_int_equal(ban_count(f), 0);
	assert_int_equal(policy_count(f, XDPBAN_FAMILY_INET), 1);
	assert_int_equal(run_tcp4(f, "198.51.100.77", TCP_ACK), XDP_DROP);
	assert_int_equal(run_tcp4(f, "198.51.101.77", TCP_ACK), XDP_PASS);

	assert_int_equal(xb_query(&f->m, &in, &q), 0);
	assert_true(q.banned);
	assert_string_equal(q.ban_reason, "manual");
	assert_seconds_left(q.seconds_left, 600, t0);
	assert_int_equal(q.policy, XDPBAN_POLICY_DENY);
	assert_string_equal(q.policy_match, "198.51.100.0/24");
	assert_int_equal(q.policy_list, XDPBAN_LIST_MANUAL_BAN);

	/* an address inside the prefix ban: named, not lifted (it covers other sources) */
	assert_int_equal(xb_unban(&f->m, &in, &lifted, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "no ban on 198.51.100.77 itself: it lies in the prefix ban "
				 "198.51.100.0/24 (unban 198.51.100.0/24 to lift it)");
	assert_int_equal(policy_count(f, XDPBAN_FAMILY_INET), 1);
	assert_int_equal(xb_unban(&f->m, &p, &lifted, err, sizeof(err)), 0);
	assert_int_equal(policy_count(f, XDPBAN_FAMILY_INET), 0);
	assert_int_equal(run_tcp4(f, "198.51.100.77", TCP_ACK), XDP_PASS);
}

static void ban_refuses_trusted_overlap_and_changes_nothing(void **state)
{
	static const char *const refused[] = {
		"192.0.2.5",       /* inside trusted, at key granularity */
		"192.0.2.0/25",    /* inside trusted */
		"192.0.2.0/24",    /* the trusted prefix itself */
		"192.0.0.0/16",    /* contains trusted */
		"2001:db8:7::/48", /* contains trusted 2001:db8:7:1::/64 */
		"2001:db8:7:1::/64",
	};
	struct maps_fixture *f = maps_fixture_need(state);
	char err[XB_ERRLEN];

	assert_int_equal(dp_policy_add(&f->dp, "192.0.2.0/24", XDPBAN_POLICY_TRUSTED), 0);
	assert_int_equal(dp_policy_add(&f->dp, "2001:db8:7:1::/64", XDPBAN_POLICY_TRUSTED), 0);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		struct xb_prefix p = P(refused[i]);

		err[0] = '\0';
		assert_int_equal(xb_ban(&f->m, &p, 60, err, sizeof(err)), -EPERM);
		if (!strstr(err, "trusted"))
			fail_msg("%s: message '%s' does not name the trusted entry", refused[i], err);
	}
	assert_int_equal(ban_count(f), 0);
	assert_int_equal(policy_count(f, XDPBAN_FAMILY_INET), 1);
	assert_int_equal(policy_count(f, XDPBAN_FAMILY_INET6), 1);
}

static void ban_refuses_zero_length_and_list_deny(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xb_prefix all = P("0.0.0.0/0"), same = P("203.0.113.0/24"),
			 inner = P("203.0.113.0/25"), lifted;
	char err[XB_ERRLEN];

	assert_int_equal(xb_ban(&f->m, &all, 60, err, sizeof(err)), -EINVAL);
	assert_int_equal(dp_policy_add(&f->dp, "203.0.113.0/24", XDPBAN_POLICY_DENY), 0);
	assert_int_equal(xb_ban(&f->m, &same, 60, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "list 1"));
	assert_int_equal(xb_ban(&f->m, &inner, 0, err, sizeof(err)), -EEXIST);
	assert_int_equal(policy_count(f, XDPBAN_FAMILY_INET), 1);
	/* unban never removes a list's entry */
	assert_int_equal(xb_unban(&f->m, &same, &lifted, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "denied by list 1"));
	assert_int_equal(policy_count(f, XDPBAN_FAMILY_INET), 1);
}

static int collect_prefixes(const struct xb_policy_entry *e, void *ctx)
{
	char text[64];

	xb_prefix_format(&e->prefix, text, sizeof(text));
	strcat(ctx, text);
	strcat(ctx, " ");
	return 0;
}

/* A wider manual ban replaces the narrower ones that would expire first: an expired inner entry
 * would otherwise punch a hole in the outer one (docs/datapath.md: no fallback on expiry). */
static void ban_wider_replaces_inner_that_expire_first(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xb_prefix inner_short = P("198.51.100.0/26"), inner_long = P("198.51.100.64/26"),
			 outer = P("198.51.100.0/24");
	char err[XB_ERRLEN], seen[256] = "";

	assert_int_equal(xb_ban(&f->m, &inner_short, 60, err, sizeof(err)), 0);
	assert_int_equal(xb_ban(&f->m, &inner_long, 0, err, sizeof(err)), 0);
	assert_int_equal(xb_ban(&f->m, &outer, 3600, err, sizeof(err)), 0);
	assert_int_equal(xb_policy_foreach(&f->m, collect_prefixes, seen), 0);
	assert_null(strstr(seen, "198.51.100.0/26"));
	assert_non_null(strstr(seen, "198.51.100.64/26"));
	assert_non_null(strstr(seen, "198.51.100.0/24"));
	/* and a narrower ban inside a longer-lasting one is redundant */
	assert_int_equal(xb_ban(&f->m, &inner_short, 60, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "198.51.100.0/24 (a manual ban)"));
}

struct ban_seen {
	int n;
	struct xb_ban_info last[4];
};

static int collect_bans(const struct xb_ban_info *ban, void *ctx)
{
	struct ban_seen *s = ctx;

	if (s->n < 4)
		s->last[s->n] = *ban;
	s->n++;
	return 0;
}

static const struct xb_ban_info *find_ban(struct ban_seen *s, const char *prefix)
{
	for (int i = 0; i < s->n && i < 4; i++)
		if (!strcmp(s->last[i].prefix, prefix))
			return &s->last[i];
	fail_msg("ban %s not listed", prefix);
	return NULL;
}

static void ban_foreach_lists_both_tables_and_skips_expired(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xb_prefix net = P("2001:db8:9::/48"), addr = P("192.0.2.44");
	struct xdpban_ban expired = { .start_ns = 1, .expires_ns = 2, .reason = XDPBAN_REASON_ERRORS };
	struct xdpban_ban auto_ban;
	struct xdpban_key key;
	struct ban_seen seen = {};
	const struct xb_ban_info *b;
	char err[XB_ERRLEN];
	__u64 now = dp_now_ns();
	time_t wall_now = xb_boot_to_wall(now);

	assert_int_equal(xb_ban(&f->m, &net, 0, err, sizeof(err)), 0);
	assert_int_equal(xb_ban(&f->m, &addr, 120, err, sizeof(err)), 0);
	dp_key("192.0.2.45", 64, &key);
	auto_ban = (struct xdpban_ban){ .start_ns = now - 30 * NS_PER_SEC,
					.expires_ns = now + 90 * NS_PER_SEC, .count = 11,
					.reason = XDPBAN_REASON_ERRORS,
					.classes = XDPBAN_CLASS_MALFORMED };
	assert_int_equal(dp_put_ban(&f->dp, &key, &auto_ban), 0);
	dp_key("192.0.2.46", 64, &key);
	assert_int_equal(dp_put_ban(&f->dp, &key, &expired), 0);

	assert_int_equal(xb_ban_foreach(&f->m, collect_bans, &seen), 0);
	assert_int_equal(seen.n, 3);
	b = find_ban(&seen, "2001:db8:9::/48");
	assert_string_equal(b->reason, "manual");
	assert_int_equal(b->seconds_left, -1);
	assert_int_equal(b->started, 0);
	assert_string_equal(b->table, "policy");
	b = find_ban(&seen, "192.0.2.45");
	assert_string_equal(b->reason, "errors");
	assert_int_equal(b->count, 11);
	assert_int_equal(b->classes, XDPBAN_CLASS_MALFORMED);
	assert_seconds_left(b->seconds_left, 90, now);
	assert_true(llabs((long long)(b->started - (wall_now - 30))) <= 1); /* rounding only */
	assert_string_equal(b->table, "bans");
	b = find_ban(&seen, "192.0.2.44");
	assert_seconds_left(b->seconds_left, 120, now);
	assert_int_equal(xb_count_banned(&f->m, dp_now_ns()), 2);
}

static int stop_at_first(const struct xb_ban_info *ban, void *ctx)
{
	(*(int *)ctx)++;
	return 42;
}

static void ban_foreach_stops_when_asked(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xb_prefix a = P("192.0.2.1"), b = P("192.0.2.2");
	char err[XB_ERRLEN];
	int calls = 0;

	assert_int_equal(xb_ban(&f->m, &a, 0, err, sizeof(err)), 0);
	assert_int_equal(xb_ban(&f->m, &b, 0, err, sizeof(err)), 0);
	assert_int_equal(xb_ban_foreach(&f->m, stop_at_first, &calls), 42);
	assert_int_equal(calls, 1);
}

/* --- a million bans ------------------------------------------------------------------------ */

#define MANY_BANS (1u << 20)

static int setup_many(void **state)
{
	return maps_fixture_open(state, &(struct dp_opts){ .bans_max = MANY_BANS });
}

struct many_seen {
	unsigned char *hit;
	__u32 n, dup, foreign;
};

static int mark_ban(const struct xb_ban_info *ban, void *ctx)
{
	struct many_seen *s = ctx;
	struct in_addr a;
	__u32 i;

	s->n++;
	if (inet_pton(AF_INET, ban->prefix, &a) != 1) {
		s->foreign++;
		return 0;
	}
	i = ntohl(a.s_addr) - 0x0a000000u; /* 10.0.0.0 + i: only in this unpinned test map */
	if (i >= MANY_BANS) {
		s->foreign++;
		return 0;
	}
	s->dup += s->hit[i];
	s->hit[i] = 1;
	return 0;
}

static void ban_foreach_lists_a_million(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct many_seen seen = { .hit = calloc(MANY_BANS, 1) };
	struct timespec t0, t1;
	__u64 now = dp_now_ns();

	assert_non_null(seen.hit);
	for (__u32 i = 0; i < MANY_BANS; i++) {
		__u32 addr = htonl(0x0a000000u + i);
		struct xdpban_key key = { .family = XDPBAN_FAMILY_INET, .prefixlen = 32 };
		struct xdpban_ban ban = { .start_ns = now, .reason = XDPBAN_REASON_ERRORS,
					  .count = 11 };

		memcpy(key.addr, &addr, 4);
		assert_int_equal(dp_put_ban(&f->dp, &key, &ban), 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(xb_ban_foreach(&f->m, mark_ban, &seen), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(seen.n, MANY_BANS);
	assert_int_equal(seen.dup, 0);
	assert_int_equal(seen.foreign, 0);
	/* Reported, not asserted: the machine is shared. */
	print_message("listed %u bans in %.0f ms\n", seen.n,
		      (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
	free(seen.hit);
}

/* --- query, sweep, stats, reports, lists ---------------------------------------------------- */

static void query_counts_only_the_current_window(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xb_prefix a = P("2001:db8:3:4::9"), b = P("192.0.2.99");
	__u32 now_s = dp_now_ns() / NS_PER_SEC;
	struct xdpban_key key;
	struct xb_query_info q;

	dp_key("2001:db8:3:4::1", 64, &key); /* same /64 as a */
	assert_int_equal(dp_put_counter(&f->dp, &key, now_s - 10, 7), 0);
	assert_int_equal(xb_query(&f->m, &a, &q), 0);
	assert_int_equal(q.count, 7);
	assert_string_equal(q.key, "2001:db8:3:4::/64");
	assert_false(q.banned);
	assert_int_equal(q.seconds_left, 0);
	assert_null(q.ban_reason);
	assert_int_equal(q.policy, XDPBAN_POLICY_NONE);
	assert_string_equal(q.policy_match, "");

	dp_key("192.0.2.99", 64, &key);
	assert_int_equal(dp_put_counter(&f->dp, &key, now_s - XDPBAN_DEFAULT_WINDOW_S, 9), 0);
	assert_int_equal(xb_query(&f->m, &b, &q), 0);
	assert_int_equal(q.count, 0); /* the window has passed */

	a = P("192.0.2.0/24");
	assert_int_equal(xb_query(&f->m, &a, &q), -EINVAL);
}

static void query_shows_trusted_match(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xb_prefix a = P("198.51.100.200");
	struct xb_query_info q;

	assert_int_equal(dp_policy_add(&f->dp, "198.51.100.0/24", XDPBAN_POLICY_DENY), 0);
	assert_int_equal(dp_policy_add(&f->dp, "198.51.100.192/26", XDPBAN_POLICY_TRUSTED), 0);
	assert_int_equal(xb_query(&f->m, &a, &q), 0);
	assert_int_equal(q.policy, XDPBAN_POLICY_TRUSTED);
	assert_string_equal(q.policy_match, "198.51.100.192/26");
	assert_int_equal(q.policy_list, 1);
	assert_false(q.banned);
}

static void sweep_removes_only_what_is_over(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	__u64 now = dp_now_ns();
	__u32 now_s = now / NS_PER_SEC;
	struct xdpban_ban old = { .start_ns = now - 100 * NS_PER_SEC,
				  .expires_ns = now - NS_PER_SEC, .reason = XDPBAN_REASON_ERRORS };
	struct xdpban_ban live = { .start_ns = now, .expires_ns = now + 100 * NS_PER_SEC,
				   .reason = XDPBAN_REASON_ERRORS };
	struct xdpban_policy stale_pol = { .verdict = XDPBAN_POLICY_DENY,
					   .list_id = XDPBAN_LIST_MANUAL_BAN,
					   .expires_ns = now - NS_PER_SEC };
	struct xdpban_lpm4_key pk = { .prefixlen = 24, .addr = { 198, 51, 100, 0 } };
	struct xb_prefix live_net = P("203.0.113.0/24");
	struct xdpban_key key;
	char err[XB_ERRLEN];

	dp_key("192.0.2.1", 64, &key);
	assert_int_equal(dp_put_ban(&f->dp, &key, &old), 0);
	dp_key("192.0.2.2", 64, &key);
	assert_int_equal(dp_put_ban(&f->dp, &key, &live), 0);
	dp_key("192.0.2.3", 64, &key);
	assert_int_equal(dp_put_counter(&f->dp, &key, now_s - XDPBAN_DEFAULT_WINDOW_S - 1, 4), 0);
	dp_key("192.0.2.4", 64, &key);
	assert_int_equal(dp_put_counter(&f->dp, &key, now_s - 5, 4), 0);
	assert_int_equal(bpf_map_update_elem(f->m.policy4, &pk, &stale_pol, BPF_ANY), 0);
	assert_int_equal(xb_ban(&f->m, &live_net, 100, err, sizeof(err)), 0);

	/* the expired ban and the expired prefix ban go; counters are never swept (a new
	 * source takes the slot of an ended window first), only not counted as tracked */
	assert_int_equal(xb_sweep(&f->m, now), 2);
	assert_int_equal(ban_count(f), 1);
	assert_int_equal(dp_count_counters(&f->dp), 2);
	assert_int_equal(policy_count(f, XDPBAN_FAMILY_INET), 1);
	assert_int_equal(xb_count_tracked(&f->m), 1);
	dp_key("192.0.2.1", 64, &key);
	assert_int_equal(dp_ban(&f->dp, &key, &old), -ENOENT);
	dp_key("192.0.2.2", 64, &key);
	assert_int_equal(dp_ban(&f->dp, &key, &old), 0);
	assert_int_equal(xb_sweep(&f->m, now), 0);
}

static void stats_sum_and_names(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xdpban_stat_value st[XDPBAN_STAT__MAX];

	assert_int_equal(run_tcp4(f, "192.0.2.7", TCP_SYNFIN), XDP_DROP);
	assert_int_equal(run_tcp4(f, "192.0.2.7", TCP_ACK), XDP_PASS);
	assert_int_equal(xb_stats_read(&f->m, st), 0);
	assert_int_equal(st[XDPBAN_STAT_DROP_MALFORMED].packets, 1);
	assert_int_equal(st[XDPBAN_STAT_DROP_MALFORMED].bytes, 54);
	assert_int_equal(st[XDPBAN_STAT_PASSED].packets, 1);
	assert_int_equal(st[XDPBAN_STAT_ERRORS].packets, 1);
	assert_string_equal(xb_stat_name(XDPBAN_STAT_PASSED), "passed");
	assert_string_equal(xb_stat_name(XDPBAN_STAT_DROP_MALFORMED), "drop_malformed");
	assert_string_equal(xb_stat_name(XDPBAN_STAT_EVENTS_LOST), "events_lost");
	assert_string_equal(xb_stat_name(XDPBAN_STAT__MAX), "?");
	assert_int_equal(xb_count_tracked(&f->m), 1);
}

static void report_bans_past_the_limit(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;
	struct xb_prefix a = P("203.0.113.9"), net = P("203.0.113.0/24");
	__u32 status, count;
	char err[XB_ERRLEN];

	cfg.limit = 3;
	assert_int_equal(xb_config_write(&f->m, &cfg, err, sizeof(err)), 0);
	assert_int_equal(xb_report(&f->m, &a, 2, &status, &count), 0);
	assert_string_equal(xb_report_status_name(status), "counted");
	assert_int_equal(count, 2);
	assert_int_equal(xb_report(&f->m, &a, 2, &status, &count), 0);
	assert_string_equal(xb_report_status_name(status), "banned");
	assert_int_equal(count, 4);
	assert_int_equal(xb_report(&f->m, &a, 1, &status, &count), 0);
	assert_string_equal(xb_report_status_name(status), "already_banned");
	assert_int_equal(run_tcp4(f, "203.0.113.9", TCP_ACK), XDP_DROP);
	assert_int_equal(xb_report(&f->m, &net, 1, &status, &count), -EINVAL);
	assert_int_equal(xb_report(&f->m, &a, 0, &status, &count), -EINVAL);
}

static void lists_count_per_list(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xdpban_policy list2 = { .verdict = XDPBAN_POLICY_TRUSTED, .list_id = 2 };
	struct xdpban_lpm4_key k = { .prefixlen = 24, .addr = { 203, 0, 113, 0 } };
	struct xb_prefix manual = P("198.51.100.0/25");
	struct xb_list_count *rows;
	char err[XB_ERRLEN];
	size_t n;

	assert_int_equal(dp_policy_add(&f->dp, "192.0.2.0/24", XDPBAN_POLICY_DENY), 0);
	assert_int_equal(dp_policy_add(&f->dp, "192.0.2.128/25", XDPBAN_POLICY_DENY), 0);
	assert_int_equal(dp_policy_add(&f->dp, "2001:db8::/32", XDPBAN_POLICY_DENY), 0);
	assert_int_equal(bpf_map_update_elem(f->m.policy4, &k, &list2, BPF_ANY), 0);
	assert_int_equal(xb_ban(&f->m, &manual, 60, err, sizeof(err)), 0);

	assert_int_equal(xb_lists_count(&f->m, &rows, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(rows[0].list_id, 1);
	assert_int_equal(rows[0].verdict, XDPBAN_POLICY_DENY);
	assert_int_equal(rows[0].ipv4, 2);
	assert_int_equal(rows[0].ipv6, 1);
	assert_int_equal(rows[1].list_id, 2);
	assert_int_equal(rows[1].verdict, XDPBAN_POLICY_TRUSTED);
	assert_int_equal(rows[1].ipv4, 1);
	assert_int_equal(rows[2].list_id, XDPBAN_LIST_MANUAL_BAN);
	assert_int_equal(rows[2].ipv4, 1);
	free(rows);
}

/* --- JSON and the handler on real maps ------------------------------------------------------- */

/* xb_json_bans writes its text directly (for speed): parse it back and check every field. */
static void json_bans_fields(void **state)
{
	static const char *const all_classes[] = { "malformed", "reported", "protocol", "probe" };
	struct maps_fixture *f = maps_fixture_need(state);
	struct xb_prefix net = P("198.51.100.0/24");
	__u64 now = dp_now_ns();
	struct xdpban_ban ban = { .start_ns = now - 5 * NS_PER_SEC,
				  .expires_ns = now + 60 * NS_PER_SEC, .count = 4294967295u,
				  .reason = XDPBAN_REASON_REPORTED, .classes = XDPBAN_CLASS_ALL };
	struct json_object *bans, *parsed, *b;
	struct xdpban_key key;
	const char *line;
	char err[XB_ERRLEN], want[32];

	assert_int_equal(xb_ban(&f->m, &net, 0, err, sizeof(err)), 0);
	dp_key("2001:db8::1", 64, &key);
	assert_int_equal(dp_put_ban(&f->dp, &key, &ban), 0);
	assert_int_equal(xb_json_bans(&f->m, &bans), 0);
	line = xb_json_line(bans);
	assert_non_null(strstr(line, "\"198.51.100.0/24\"")); /* '/' not escaped */
	assert_null(strchr(line, '\n'));
	parsed = json_tokener_parse(line);
	assert_non_null(parsed);
	assert_int_equal(json_object_array_length(parsed), 2);
	for (size_t i = 0; i < 2; i++) {
		b = json_object_array_get_idx(parsed, i);
		assert_int_equal(json_object_object_length(b), 7);
		if (!strcmp(json_object_get_string(get(b, "prefix")), "198.51.100.0/24")) {
			assert_int_equal(json_object_get_int64(get(b, "count")), 0);
			assert_string_equal(json_object_get_string(get(b, "reason")), "manual");
			assert_int_equal(json_object_get_int64(get(b, "seconds_left")), -1);
			assert_true(json_object_is_type(get(b, "started"), json_type_null));
			assert_int_equal(json_object_array_length(get(b, "classes")), 0);
			assert_string_equal(json_object_get_string(get(b, "table")), "policy");
			continue;
		}
		assert_string_equal(json_object_get_string(get(b, "prefix")), "2001:db8::/64");
		assert_int_equal(json_object_get_int64(get(b, "count")), 4294967295ll);
		assert_string_equal(json_object_get_string(get(b, "reason")), "reported");
		assert_seconds_left(json_object_get_int64(get(b, "seconds_left")), 60, now);
		xb_time_format(xb_boot_to_wall(ban.start_ns), want, sizeof(want));
		/* the same second, or the next: the listing rounds from its own "now" */
		if (strcmp(json_object_get_string(get(b, "started")), want)) {
			xb_time_format(xb_boot_to_wall(ban.start_ns) + 1, want, sizeof(want));
			assert_string_equal(json_object_get_string(get(b, "started")), want);
		}
		assert_int_equal(json_object_array_length(get(b, "classes")), 4);
		for (size_t c = 0; c < 4; c++) /* every class, in the order of their bits */
			assert_string_equal(json_object_get_string(json_object_array_get_idx(
						    get(b, "classes"), c)),
					    all_classes[c]);
		assert_string_equal(json_object_get_string(get(b, "table")), "bans");
	}
	json_object_put(parsed);
	json_object_put(bans);
}

/* One ban as a straightforward json-c object: what the fast text must read as, byte for byte. */
static struct json_object *reference_ban(const struct xb_ban_info *b)
{
	struct json_object *obj = json_object_new_object(), *classes = json_object_new_array();
	char stamp[40];

	json_object_object_add(obj, "prefix", json_object_new_string(b->prefix));
	json_object_object_add(obj, "count", json_object_new_int64(b->count));
	json_object_object_add(obj, "reason", json_object_new_string(b->reason));
	json_object_object_add(obj, "seconds_left", json_object_new_int64(b->seconds_left));
	if (b->started)
		libc_stamp(b->started, stamp, sizeof(stamp));
	json_object_object_add(obj, "started", b->started ? json_object_new_string(stamp) : NULL);
	for (__u32 bit = 1; bit <= XDPBAN_CLASS_ALL; bit <<= 1)
		if (b->classes & bit)
			json_object_array_add(classes, json_object_new_string(xb_class_name(bit)));
	json_object_object_add(obj, "classes", classes);
	json_object_object_add(obj, "table", json_object_new_string(b->table));
	return obj;
}

static int add_reference_ban(const struct xb_ban_info *b, void *ctx)
{
	return json_object_array_add(ctx, reference_ban(b));
}

/* Bans of every kind in both tables; returns how many are active (listed). */
static size_t fill_every_kind(struct maps_fixture *f)
{
	static const __u8 v6_lens[] = { 128, 64, 80, 48, 96, 127 };
	static const char *const prefix_bans[] = { "203.0.113.0/25", "203.0.113.128/26",
						   "2001:db8:ff00::/40", "2001:db8:fe::/48" };
	static const __u32 counts[] = { 0, 1, 11, 4294967295u };
	__u64 now = dp_now_ns();
	char err[XB_ERRLEN], text[64];
	struct xdpban_key key;
	size_t active = 0;

	for (__u32 i = 0; i < 512 + 30; i++) {
		struct xdpban_ban ban = {
			.count = counts[i % 4],
			.reason = i % 13 == 12 ? 9 /* not a reason: "?" */ : 1 + i % 3,
			.classes = i % (XDPBAN_CLASS_ALL + 1),
			/* permanent, expired (not listed) or timed at a fraction of a second */
			.expires_ns = i % 5 == 0 ? 0 : i % 11 == 0 ? now - 1
						 : now + (i * 7919ull % 900000) * NS_PER_SEC + i * 1237,
		};
		__u64 ago = (i * 104729ull % 4000) * NS_PER_SEC + i * 7;

		ban.start_ns = now > ago ? now - ago : 1;
		if (i < 512)
			snprintf(text, sizeof(text), "%s.%u", i < 256 ? "192.0.2" : "198.51.100", i % 256);
		else /* distinct in the /48; runs of zeros in different places */
			snprintf(text, sizeof(text), "2001:db8:%x:%x:0:%x::%x", i, i % 2 ? 0 : i,
				 i % 3 ? 0 : 0xabcd, i % 4);
		assert_int_equal(dp_key(text, i < 512 ? 32 : v6_lens[i % 6], &key), 0);
		if (i >= 512 && i % 6 == 5)
			key.addr[15] |= 1; /* an odd /127 key: host bits the formatting must keep */
		assert_int_equal(dp_put_ban(&f->dp, &key, &ban), 0);
		active += !(ban.expires_ns && ban.expires_ns <= now);
	}
	for (size_t i = 0; i < sizeof(prefix_bans) / sizeof(prefix_bans[0]); i++) {
		struct xb_prefix p = P(prefix_bans[i]);

		assert_int_equal(xb_ban(&f->m, &p, i % 2 ? 0 : 600, err, sizeof(err)), 0);
		active++;
	}
	return active;
}

/* The text both fast paths write, and the same bans rendered through json-c objects, from
 * walks of their own: a walk sees another "now" than the next, so when a ban's seconds_left
 * ticks between two walks the three are taken again (a tick lasts microseconds). */
static bool bans_texts_agree(struct maps_fixture *f, size_t active)
{
	struct json_object *reference = json_object_new_array(), *fast;
	char *streamed = NULL;
	size_t streamed_len = 0;
	FILE *out = open_memstream(&streamed, &streamed_len);
	bool same;

	assert_non_null(out);
	assert_int_equal(xb_json_bans_write(&f->m, out), 0);
	assert_int_equal(fclose(out), 0);
	assert_int_equal(xb_json_bans(&f->m, &fast), 0);
	assert_int_equal(xb_ban_foreach(&f->m, add_reference_ban, reference), 0);
	assert_int_equal(json_object_array_length(reference), active);
	same = !strcmp(xb_json_line(fast), xb_json_line(reference)) &&
	       !strcmp(streamed, xb_json_line(reference));
	if (!same)
		print_message("texts differ (a tick between walks?):\nfast      %.300s\n"
			      "streamed  %.300s\nreference %.300s\n", xb_json_line(fast), streamed,
			      xb_json_line(reference));
	free(streamed);
	json_object_put(fast);
	json_object_put(reference);
	return same;
}

static void json_bans_fast_text_matches_json_c(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	size_t active = fill_every_kind(f);
	int tries = 0;

	assert_true(active > 400);
	while (!bans_texts_agree(f, active) && ++tries < 3)
		;
	assert_true(tries < 3);
}

static int status_hook(struct json_object *reply, void *user)
{
	json_object_object_add(reply, "config_file", json_object_new_string(user));
	return 0;
}

static void banned_hook(const struct xb_prefix *p, __u32 seconds, void *user)
{
	(*(char *)user)++;
}

static void handler_on_maps(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xb_control_hooks hooks = { .status = status_hook };
	struct xb_control_ctx ctx = { .maps = &f->m, .hooks = &hooks, .user = "/etc/xb.conf" };
	struct json_object *r, *cfg;

	assert_int_equal(run_tcp4(f, "192.0.2.7", TCP_SYNFIN), XDP_DROP);
	r = handle(&ctx, "{\"cmd\":\"status\"}");
	assert_true(reply_ok(r));
	assert_true(json_object_get_boolean(get(r, "daemon")));
	assert_string_equal(json_object_get_string(get(r, "config_file")), "/etc/xb.conf");
	assert_int_equal(json_object_get_int64(get(r, "tracked")), 1);
	assert_int_equal(json_object_get_int64(get(r, "banned")), 0);
	assert_int_equal(json_object_get_int64(get(r, "counters_max")), XDPBAN_DEFAULT_COUNTERS_MAX);
	assert_int_equal(json_object_get_int64(get(r, "bans_max")), XDPBAN_DEFAULT_BANS_MAX);
	cfg = get(r, "config");
	assert_int_equal(json_object_get_int64(get(cfg, "limit")), 10);
	assert_true(json_object_get_boolean(get(cfg, "defaults")));
	assert_int_equal(
		json_object_get_int64(get(get(get(r, "stats"), "drop_malformed"), "packets")), 1);
	json_object_put(r);

	r = handle(&ctx, "{\"cmd\":\"set\",\"key\":\"window\",\"value\":\"2h\"}");
	assert_true(reply_ok(r));
	assert_int_equal(json_object_get_int64(get(get(r, "config"), "window")), 7200);
	assert_false(json_object_get_boolean(get(get(r, "config"), "defaults")));
	json_object_put(r);
	r = handle(&ctx, "{\"cmd\":\"set\",\"key\":\"limit\",\"value\":4}");
	assert_true(reply_ok(r));
	assert_int_equal(json_object_get_int64(get(get(r, "config"), "limit")), 4);
	json_object_put(r);
	r = handle(&ctx, "{\"cmd\":\"set\",\"key\":\"limit\",\"value\":\"-4\"}");
	assert_non_null(strstr(reply_error(r), "bad limit"));
	json_object_put(r);

	r = handle(&ctx, "{\"cmd\":\"query\",\"addr\":\"192.0.2.7\"}");
	assert_int_equal(json_object_get_int64(get(r, "count")), 1);
	assert_string_equal(json_object_get_string(get(r, "policy")), "none");
	assert_true(json_object_is_type(get(r, "policy_match"), json_type_null));
	json_object_put(r);
}

static void handler_ban_unban_and_hooks(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	char banned = 0;
	struct xb_control_hooks hooks = { .banned = banned_hook };
	struct xb_control_ctx ctx = { .maps = &f->m, .hooks = &hooks, .user = &banned };
	struct json_object *r;

	r = handle(&ctx, "{\"cmd\":\"ban\",\"prefix\":\"2001:db8:a::/48\",\"seconds\":60}");
	assert_true(reply_ok(r));
	assert_string_equal(json_object_get_string(get(r, "prefix")), "2001:db8:a::/48");
	json_object_put(r);
	assert_int_equal(banned, 1);
	assert_int_equal(policy_count(f, XDPBAN_FAMILY_INET6), 1);

	r = handle(&ctx, "{\"cmd\":\"bans\"}");
	assert_int_equal(json_object_array_length(get(r, "bans")), 1);
	json_object_put(r);
	r = handle(&ctx, "{\"cmd\":\"lists\"}");
	assert_int_equal(json_object_get_int64(
				 get(json_object_array_get_idx(get(r, "lists"), 0), "ipv6")),
			 1);
	json_object_put(r);

	r = handle(&ctx, "{\"cmd\":\"unban\",\"prefix\":\"2001:db8:a::/48\"}");
	assert_true(reply_ok(r));
	json_object_put(r);
	r = handle(&ctx, "{\"cmd\":\"unban\",\"prefix\":\"2001:db8:a::/48\"}");
	assert_string_equal(reply_error(r), "no ban on 2001:db8:a::/48");
	json_object_put(r);
	assert_int_equal(banned, 1); /* a failed request calls no hook */

	r = handle(&ctx, "{\"cmd\":\"report\",\"addr\":\"192.0.2.1\",\"count\":3}");
	assert_string_equal(json_object_get_string(get(r, "result")), "counted");
	assert_int_equal(json_object_get_int64(get(r, "count")), 3);
	json_object_put(r);
}

/* The audit's request: before the fix it banned 192.0.2.45. Now it changes nothing. */
static void handler_nul_in_prefix_bans_nothing(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	char banned = 0;
	struct xb_control_hooks hooks = { .banned = banned_hook };
	struct xb_control_ctx ctx = { .maps = &f->m, .hooks = &hooks, .user = &banned };
	struct json_object *r;

	r = handle(&ctx, "{\"cmd\":\"ban\",\"prefix\":\"192.0.2.45\\u0000/8\"}");
	assert_string_equal(reply_error(r),
			    "field \"prefix\" contains a NUL character (\\u0000)");
	json_object_put(r);
	assert_int_equal(ban_count(f), 0);
	assert_int_equal(policy_count(f, XDPBAN_FAMILY_INET), 0);
	assert_int_equal(banned, 0);
}

/* `set` reads the config in force before it parses the value, so it needs the maps. */
static void handler_set_errors_escape_what_they_quote(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xb_control_ctx ctx = { .maps = &f->m };
	struct xdpban_config cfg;

	expect_ascii_error(&ctx, "{\"cmd\":\"set\",\"key\":\"limit\xff\",\"value\":\"3\"}",
			   "unknown setting 'limit\\xff' (known: limit, window, ban-time, "
			   "ipv6-prefix, errors, drop, spoof, hop-tolerance, learn)");
	expect_ascii_error(&ctx, "{\"cmd\":\"set\",\"key\":\"window\",\"value\":\"1\xc3\xa9\"}",
			   "bad window '1\\xc3\\xa9': a duration is seconds (90) or numbers with units "
			   "w, d, h, m, s, largest first (15m, 2h, 1d12h, 1w)");
	expect_ascii_error(&ctx, "{\"cmd\":\"set\",\"key\":\"errors\",\"value\":\"\xff\"}",
			   "bad errors '\\xff': '\\xff' is not an error class (one of malformed, "
			   "reported, protocol, probe, or none alone)");
	assert_int_equal(xb_config_read(&f->m, &cfg), 0);
	assert_int_equal(cfg.window_s, XDPBAN_DEFAULT_WINDOW_S); /* nothing was set */
}

#define MAPS_TEST(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* no root needed */
		cmocka_unit_test(prefix_parse_accepts_and_formats),
		cmocka_unit_test(prefix_parse_rejects_with_one_line),
		cmocka_unit_test(key_masks_ipv6_to_the_prefix),
		cmocka_unit_test(prefix_contains),
		cmocka_unit_test(config_set_accepts),
		cmocka_unit_test(config_set_rejects_and_keeps),
		cmocka_unit_test(classes_format_round_trip),
		cmocka_unit_test(time_formats_rfc3339_utc),
		cmocka_unit_test(time_format_matches_strftime),
		cmocka_unit_test(prefix_format_matches_libc),
		cmocka_unit_test(control_rejects_bad_requests),
		cmocka_unit_test(control_rejects_oversized_and_nul),
		cmocka_unit_test(control_refuses_escaped_nul),
		cmocka_unit_test(control_error_replies_escape_what_they_quote),
		cmocka_unit_test(control_read_only_refuses_changes),
		cmocka_unit_test(control_unknown_commands_go_to_the_daemon),
		cmocka_unit_test(client_reads_one_line),
		cmocka_unit_test(client_reports_closed_and_silent_peers),
		cmocka_unit_test(client_refuses_bad_requests_and_paths),
		/* the real data path, loaded unpinned per test */
		MAPS_TEST(config_defaults_then_written),
		MAPS_TEST(ban_address_drops_then_unban_passes),
		MAPS_TEST(ban_permanent_has_no_expiry),
		MAPS_TEST(unban_address_lifts_its_key),
		MAPS_TEST(ban_prefix_goes_to_policy_trie),
		MAPS_TEST(ban_refuses_trusted_overlap_and_changes_nothing),
		MAPS_TEST(ban_refuses_zero_length_and_list_deny),
		MAPS_TEST(ban_wider_replaces_inner_that_expire_first),
		MAPS_TEST(ban_foreach_lists_both_tables_and_skips_expired),
		MAPS_TEST(ban_foreach_stops_when_asked),
		cmocka_unit_test_setup_teardown(ban_foreach_lists_a_million, setup_many, teardown),
		MAPS_TEST(query_counts_only_the_current_window),
		MAPS_TEST(query_shows_trusted_match),
		MAPS_TEST(sweep_removes_only_what_is_over),
		MAPS_TEST(stats_sum_and_names),
		MAPS_TEST(report_bans_past_the_limit),
		MAPS_TEST(lists_count_per_list),
		MAPS_TEST(json_bans_fields),
		MAPS_TEST(json_bans_fast_text_matches_json_c),
		MAPS_TEST(handler_on_maps),
		MAPS_TEST(handler_ban_unban_and_hooks),
		MAPS_TEST(handler_nul_in_prefix_bans_nothing),
		MAPS_TEST(handler_set_errors_escape_what_they_quote),
	};

	return cmocka_run_group_tests_name("lib", tests, NULL, NULL);
}
