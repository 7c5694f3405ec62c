/* test_control_maps.c - the control protocol on the real data path loaded unpinned
 * (tests/harness/dp.h): the JSON of bans (the fast text writer against json-c's), and the
 * request handler's replies, bans, unbans, hooks and `set` errors on real maps. Each test
 * skip()s without root; none touches pinned state or an interface.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
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
				  .reason = XDPBAN_REASON_REPORTED, .classes = XDPBAN_CLASS_ALL,
				  .proto = IPPROTO_UDP, .port = 6969, .rule = XDPBAN_RULE_PORT };
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
		assert_int_equal(json_object_object_length(b), 11);
		assert_false(json_object_get_boolean(get(b, "observed"))); /* enforce mode */
		if (!strcmp(json_object_get_string(get(b, "prefix")), "198.51.100.0/24")) {
			assert_int_equal(json_object_get_int64(get(b, "count")), 0);
			assert_string_equal(json_object_get_string(get(b, "reason")), "manual");
			assert_int_equal(json_object_get_int64(get(b, "seconds_left")), -1);
			assert_true(json_object_is_type(get(b, "started"), json_type_null));
			assert_int_equal(json_object_array_length(get(b, "classes")), 0);
			assert_string_equal(json_object_get_string(get(b, "table")), "policy");
			assert_true(json_object_is_type(get(b, "last_error"), json_type_null));
			assert_true(json_object_is_type(get(b, "ban_rule"), json_type_null));
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
		assert_string_equal(json_object_get_string(get(b, "last_error")), "6969/udp");
		assert_string_equal(json_object_get_string(get(b, "ban_rule")), "6969/udp");
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
	json_object_object_add(obj, "drops",
			       b->has_drops ? json_object_new_int64((int64_t)b->drops) : NULL);
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
	json_object_object_add(obj, "observed", json_object_new_boolean(b->observed));
	xb_json_last_error(obj, &b->last);
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

static void banned_hook(const struct xb_prefix *p, __u32 seconds, const char *comment,
			void *user)
{
	(*(char *)user)++;
}

static char comment_seen[256];

static void comment_hook(const struct xb_prefix *p, __u32 seconds, const char *comment,
			 void *user)
{
	snprintf(comment_seen, sizeof(comment_seen), "%s", comment ? comment : "(none)");
}

/* A comment reaches the daemon's hook; a bad one, or one with no daemon to keep it, bans
 * nothing. */
static void handler_ban_comment(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xb_control_hooks hooks = { .banned = comment_hook };
	struct xb_control_ctx ctx = { .maps = &f->m, .hooks = &hooks };
	struct xb_control_ctx no_daemon = { .maps = &f->m };
	struct json_object *r;

	r = handle(&ctx, "{\"cmd\":\"ban\",\"prefix\":\"192.0.2.8\",\"comment\":\"scan \u00e9t\u00e9\"}");
	assert_true(reply_ok(r));
	assert_string_equal(json_object_get_string(get(r, "comment")), "scan \xc3\xa9t\xc3\xa9");
	assert_string_equal(comment_seen, "scan \xc3\xa9t\xc3\xa9");
	json_object_put(r);
	r = handle(&ctx, "{\"cmd\":\"ban\",\"prefix\":\"192.0.2.9\",\"comment\":\"two\\nlines\"}");
	assert_string_equal(reply_error(r), "comment holds a control character (0x0a at byte 4)");
	json_object_put(r);
	r = handle(&ctx, "{\"cmd\":\"ban\",\"prefix\":\"192.0.2.9\",\"comment\":\"\\u0085\"}");
	assert_string_equal(reply_error(r), "comment is not UTF-8 text (byte 1)");
	json_object_put(r);
	r = handle(&no_daemon, "{\"cmd\":\"ban\",\"prefix\":\"192.0.2.9\",\"comment\":\"x\"}");
	assert_non_null(strstr(reply_error(r), "kept by xdpband"));
	json_object_put(r);
	assert_int_equal(xb_count_banned(&f->m, dp_now_ns()), 1);
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
			   "unknown setting 'limit\\xff': limit, window and ban-time also as KEY.CLASS "
			   "(limit.probe) and KEY.PORT (limit.6969) (known: limit, window, ban-time, "
			   "ipv6-prefix, errors, drop, spoof, hop-tolerance, learn, mode)");
	expect_ascii_error(&ctx, "{\"cmd\":\"set\",\"key\":\"limit.\xff\",\"value\":\"3\"}",
			   "bad setting 'limit.\\xff': after the '.' an error class (one of malformed, "
			   "reported, protocol, probe, or a UDP port 1..65535)");
	expect_ascii_error(&ctx, "{\"cmd\":\"set\",\"key\":\"window\",\"value\":\"1\xc3\xa9\"}",
			   "bad window '1\\xc3\\xa9': a duration is seconds (90) or numbers with units "
			   "w, d, h, m, s, largest first (15m, 2h, 1d12h, 1w)");
	expect_ascii_error(&ctx, "{\"cmd\":\"set\",\"key\":\"errors\",\"value\":\"\xff\"}",
			   "bad errors '\\xff': '\\xff' is not an error class (one of malformed, "
			   "reported, protocol, probe, or none alone)");
	assert_int_equal(xb_config_read(&f->m, &cfg), 0);
	assert_int_equal(cfg.window_s, XDPBAN_DEFAULT_WINDOW_S); /* nothing was set */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		MAPS_TEST(json_bans_fields),
		MAPS_TEST(json_bans_fast_text_matches_json_c),
		MAPS_TEST(handler_on_maps),
		MAPS_TEST(handler_ban_unban_and_hooks),
		MAPS_TEST(handler_ban_comment),
		MAPS_TEST(handler_nul_in_prefix_bans_nothing),
		MAPS_TEST(handler_set_errors_escape_what_they_quote),
	};

	return cmocka_run_group_tests_name("control_maps", tests, NULL, NULL);
}
