/* test_bans.c - the library's map operations on the real data path loaded unpinned
 * (tests/harness/dp.h): the config written to its map, manual bans and unbans of addresses
 * and prefixes and what they refuse, the unban of every ban or of one reason, the listing of
 * a million bans, query, sweep, stats, reports and list counts. Each test skip()s without
 * root; none touches pinned state or an interface.
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

/* The prefixes an unban of all told of, joined by spaces in the order told. */
static void note_lifted(const struct xb_prefix *p, void *ctx)
{
	char *out = ctx, text[64];

	xb_prefix_format(p, text, sizeof(text));
	snprintf(out + strlen(out), 256 - strlen(out), "%s%s", *out ? " " : "", text);
}

/* Of one reason first, then the rest: an expired ban is not counted, a prefix ban is manual. */
static void unban_all_lifts_a_reason_then_the_rest(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xb_prefix net = P("198.51.100.0/24"), addr = P("192.0.2.44");
	struct xdpban_ban expired = { .start_ns = 1, .expires_ns = 2, .reason = XDPBAN_REASON_MANUAL };
	struct xdpban_ban errors = { .start_ns = dp_now_ns(), .count = 4,
				     .reason = XDPBAN_REASON_ERRORS };
	struct xdpban_key key;
	char err[XB_ERRLEN], told[256] = "";
	size_t n;

	assert_int_equal(xb_ban(&f->m, &net, 0, err, sizeof(err)), 0);
	assert_int_equal(xb_ban(&f->m, &addr, 120, err, sizeof(err)), 0);
	dp_key("192.0.2.45", 64, &key);
	assert_int_equal(dp_put_ban(&f->dp, &key, &errors), 0);
	dp_key("192.0.2.46", 64, &key);
	assert_int_equal(dp_put_ban(&f->dp, &key, &expired), 0);

	assert_int_equal(xb_unban_all(&f->m, XDPBAN_REASON_MANUAL, note_lifted, told, &n, err,
				      sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_string_equal(told, "192.0.2.44 198.51.100.0/24");
	assert_int_equal(xb_count_prefix_bans(&f->m), 0);
	assert_int_equal(xb_count_banned(&f->m, dp_now_ns()), 1);
	told[0] = '\0';
	assert_int_equal(xb_unban_all(&f->m, -1, note_lifted, told, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_string_equal(told, "192.0.2.45");
	assert_int_equal(xb_count_banned(&f->m, dp_now_ns()), 0);
	assert_int_equal(xb_unban_all(&f->m, -1, NULL, NULL, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 0);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
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
		MAPS_TEST(unban_all_lifts_a_reason_then_the_rest),
		cmocka_unit_test_setup_teardown(ban_foreach_lists_a_million, setup_many, lib_teardown),
		MAPS_TEST(query_counts_only_the_current_window),
		MAPS_TEST(query_shows_trusted_match),
		MAPS_TEST(sweep_removes_only_what_is_over),
		MAPS_TEST(stats_sum_and_names),
		MAPS_TEST(report_bans_past_the_limit),
		MAPS_TEST(lists_count_per_list),
	};

	return cmocka_run_group_tests_name("bans", tests, NULL, NULL);
}
