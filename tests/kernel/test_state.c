/* test_state.c - per-source state of the real data path over time and under pressure
 * (docs/datapath.md sections 4, 6 and 7): windows and bans that run out (state injected with
 * old times, plus one real second-long window and ban), IPv6 prefix aggregation, config changes
 * at the next packet, manual bans, a full ban table, counter churn that must never evict a ban,
 * every status of the report program, and no increment lost when two CPUs count one source.
 *
 * Each test loads its own copy of the program (unpinned) with the table sizes it needs, so no
 * test sees another's state. Needs root; never pins, never attaches.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "dp.h"
#include "pkt.h"
#include "xdpban_event.h"
#include "xdpban_time.h"

#define V6_64 XDPBAN_DEFAULT_V6_PREFIX

/* --- fixtures --------------------------------------------------------------------------- */

/* Loads a fresh data path with the table sizes in *state (a struct dp_opts, or NULL). */
static int load(void **state)
{
	const struct dp_opts *opts = *state;
	struct dp *dp;
	int err;

	*state = NULL;
	if (!dp_can_load())
		return 0;
	dp = calloc(1, sizeof(*dp));
	if (!dp)
		return -1;
	err = dp_open(dp, opts);
	if (err) {
		fprintf(stderr, "test_state: loading the data path failed: %s\n", strerror(-err));
		free(dp);
		return -1;
	}
	*state = dp;
	return 0;
}

static int unload(void **state)
{
	if (*state) {
		dp_close(*state);
		free(*state);
	}
	*state = NULL;
	return 0;
}

static struct dp *loaded(void **state)
{
	if (!*state)
		skip(); /* dp_can_load() said why */
	return *state;
}

/* --- packets ------------------------------------------------------------------------------ */

static __u32 send_frame(struct dp *dp, const struct pkt_spec *spec)
{
	struct pkt_layout at;
	__u8 frame[256];
	__u32 action = ~0u;

	assert_int_equal(pkt_build(spec, frame, sizeof(frame), &at), 0);
	assert_int_equal(dp_run(dp, frame, at.len, &action), 0);
	return action;
}

/* A TCP segment with SYN and FIN: malformed, so one error against its source. */
static __u32 send_error(struct dp *dp, const char *src)
{
	const struct pkt_spec spec = { .src = src, .l4 = PKT_L4_TCP,
				       .tcp.flags = PKT_SET(PKT_SYN | PKT_FIN) };

	return send_frame(dp, &spec);
}

static __u32 send_valid(struct dp *dp, const char *src)
{
	const struct pkt_spec spec = { .src = src, .l4 = PKT_L4_UDP, .payload_len = 20 };

	return send_frame(dp, &spec);
}

static void send_errors(struct dp *dp, const char *src, int n)
{
	for (int i = 0; i < n; i++)
		send_error(dp, src);
}

/* --- state -------------------------------------------------------------------------------- */

static struct xdpban_key key_of(const char *addr, __u8 v6_prefix)
{
	struct xdpban_key key;

	assert_int_equal(dp_key(addr, v6_prefix, &key), 0);
	return key;
}

/* The source's count; -1 when it has no counter. */
static long count_of(struct dp *dp, const char *addr, __u8 v6_prefix)
{
	struct xdpban_key key = key_of(addr, v6_prefix);
	__u32 start_s, count;
	int err = dp_counter(dp, &key, &start_s, &count);

	if (err == -ENOENT)
		return -1;
	assert_int_equal(err, 0);
	return count;
}

static __u32 window_start_of(struct dp *dp, const char *addr)
{
	struct xdpban_key key = key_of(addr, V6_64);
	__u32 start_s, count;

	assert_int_equal(dp_counter(dp, &key, &start_s, &count), 0);
	return start_s;
}

static bool banned(struct dp *dp, const char *addr, __u8 v6_prefix)
{
	struct xdpban_key key = key_of(addr, v6_prefix);
	struct xdpban_ban ban;
	int err = dp_ban(dp, &key, &ban);

	assert_true(err == 0 || err == -ENOENT);
	return err == 0;
}

static int count_entries(struct dp *dp, struct bpf_map *map)
{
	int n = map == dp->skel->maps.xdpban_bans ? dp_count_bans(dp) : dp_count_counters(dp);

	assert_true(n >= 0);
	return n;
}

static struct xdpban_config config(void)
{
	const struct xdpban_config defaults = XDPBAN_CONFIG_DEFAULTS;

	return defaults;
}

static __u32 now_s(void)
{
	return dp_now_ns() / NS_PER_SEC;
}

static __u64 stat_packets(struct dp *dp, enum xdpban_stat slot)
{
	struct xdpban_stat_value v[XDPBAN_STAT__MAX];

	assert_int_equal(dp_stats(dp, v), 0);
	return v[slot].packets;
}

/* --- windows and bans that run out --------------------------------------------------------- */

/* A counter whose window began 61 s ago: under window 60 it restarts, under the default
 * (a day) the same counter goes on and crosses the limit. */
static void old_window_restarts(void **state)
{
	struct dp *dp = loaded(state);
	struct xdpban_config cfg = config();
	struct xdpban_key a = key_of("192.0.2.20", V6_64), b = key_of("192.0.2.21", V6_64);
	__u32 long_ago = now_s() - 61;

	assert_int_equal(dp_put_counter(dp, &a, long_ago, 10), 0);
	assert_int_equal(dp_put_counter(dp, &b, long_ago, 10), 0);

	cfg.window_s = 60;
	assert_int_equal(dp_set_config(dp, &cfg), 0);
	send_error(dp, "192.0.2.20");
	assert_int_equal(count_of(dp, "192.0.2.20", V6_64), 1);
	assert_true(window_start_of(dp, "192.0.2.20") >= long_ago + 61);
	assert_false(banned(dp, "192.0.2.20", V6_64));

	cfg.window_s = XDPBAN_DEFAULT_WINDOW_S;
	assert_int_equal(dp_set_config(dp, &cfg), 0);
	send_error(dp, "192.0.2.21");
	assert_true(banned(dp, "192.0.2.21", V6_64));
}

/* A ban whose expires_ns has passed is lifted by the next packet, which goes on. */
static void old_ban_is_lifted(void **state)
{
	struct dp *dp = loaded(state);
	struct xdpban_key gone = key_of("192.0.2.30", V6_64), live = key_of("192.0.2.31", V6_64);
	__u64 now = dp_now_ns();
	struct xdpban_ban past = { .start_ns = now - 2 * NS_PER_SEC, .expires_ns = now - NS_PER_SEC,
				   .count = 11, .reason = XDPBAN_REASON_ERRORS };
	struct xdpban_ban future = { .start_ns = now, .expires_ns = now + 3600 * NS_PER_SEC,
				     .count = 11, .reason = XDPBAN_REASON_ERRORS };

	assert_int_equal(dp_put_ban(dp, &gone, &past), 0);
	assert_int_equal(dp_put_ban(dp, &live, &future), 0);

	assert_int_equal(send_valid(dp, "192.0.2.30"), XDP_PASS);
	assert_false(banned(dp, "192.0.2.30", V6_64));
	assert_int_equal(stat_packets(dp, XDPBAN_STAT_BANS_EXPIRED), 1);
	assert_int_equal(stat_packets(dp, XDPBAN_STAT_PASSED), 1);

	assert_int_equal(send_valid(dp, "192.0.2.31"), XDP_DROP);
	assert_true(banned(dp, "192.0.2.31", V6_64));
	assert_int_equal(stat_packets(dp, XDPBAN_STAT_BANS_EXPIRED), 1);
	assert_int_equal(stat_packets(dp, XDPBAN_STAT_DROP_BANNED), 1);
}

/* Real time: with window_s = 1, an error 2 s after the first starts a new window. */
static void one_second_window_runs_out(void **state)
{
	struct dp *dp = loaded(state);
	struct xdpban_config cfg = config();
	__u32 first;

	cfg.window_s = 1;
	assert_int_equal(dp_set_config(dp, &cfg), 0);
	send_error(dp, "198.51.100.5");
	assert_int_equal(count_of(dp, "198.51.100.5", V6_64), 1);
	first = window_start_of(dp, "198.51.100.5");
	sleep(2);
	send_error(dp, "198.51.100.5");
	assert_int_equal(count_of(dp, "198.51.100.5", V6_64), 1);
	assert_true(window_start_of(dp, "198.51.100.5") >= first + 2);
}

/* Real time: a ban of 1 s drops, then 2 s later the source passes and starts over at 0. */
static void one_second_ban_runs_out(void **state)
{
	struct dp *dp = loaded(state);
	struct xdpban_config cfg = config();
	struct xdpban_key key = key_of("198.51.100.6", V6_64);
	struct xdpban_ban ban;
	__u64 before, after;
	__u32 action;

	cfg.ban_s = 1;
	assert_int_equal(dp_set_config(dp, &cfg), 0);
	send_errors(dp, "198.51.100.6", 11);
	assert_int_equal(dp_ban(dp, &key, &ban), 0);
	assert_int_equal(ban.expires_ns, ban.start_ns + NS_PER_SEC);

	/* Whether this packet beats the expiry depends on the machine; what it must do in each
	 * case does not (the data path's clock may be up to a tick behind ours). */
	before = dp_now_ns();
	action = send_valid(dp, "198.51.100.6");
	after = dp_now_ns();
	if (after < ban.expires_ns)
		assert_int_equal(action, XDP_DROP);
	else if (before >= ban.expires_ns + XDPBAN_CLOCK_LAG_MAX_NS)
		assert_int_equal(action, XDP_PASS);

	sleep(2);
	assert_int_equal(send_valid(dp, "198.51.100.6"), XDP_PASS);
	assert_false(banned(dp, "198.51.100.6", V6_64));
	assert_int_equal(stat_packets(dp, XDPBAN_STAT_BANS_EXPIRED), 1);
	/* the counter was reset when the ban was made: one error is one again, not 12 */
	send_error(dp, "198.51.100.6");
	assert_int_equal(count_of(dp, "198.51.100.6", V6_64), 1);
	assert_false(banned(dp, "198.51.100.6", V6_64));
}

/* --- IPv6 prefixes ------------------------------------------------------------------------ */

static void set_v6_prefix(struct dp *dp, __u8 prefix)
{
	struct xdpban_config cfg = config();

	cfg.v6_prefix = prefix;
	assert_int_equal(dp_set_config(dp, &cfg), 0);
}

static void v6_counted_per_64_by_default(void **state)
{
	struct dp *dp = loaded(state);

	send_error(dp, "2001:db8:1:2::1");
	send_error(dp, "2001:db8:1:2:ffff:ffff:ffff:ffff");
	send_error(dp, "2001:db8:1:3::1");
	assert_int_equal(count_of(dp, "2001:db8:1:2::", 64), 2);
	assert_int_equal(count_of(dp, "2001:db8:1:3::", 64), 1);
	assert_int_equal(count_entries(dp, dp->skel->maps.xdpban_counts), 2);
}

static void v6_counted_per_48(void **state)
{
	struct dp *dp = loaded(state);

	set_v6_prefix(dp, 48);
	send_error(dp, "2001:db8:1:2::1");
	send_error(dp, "2001:db8:1:3::1");
	send_error(dp, "2001:db8:1:ffff::1");
	send_error(dp, "2001:db8:2::1");
	assert_int_equal(count_of(dp, "2001:db8:1::", 48), 3);
	assert_int_equal(count_of(dp, "2001:db8:2::", 48), 1);
	assert_int_equal(count_entries(dp, dp->skel->maps.xdpban_counts), 2);
	send_errors(dp, "2001:db8:1:4::1", 8);
	assert_true(banned(dp, "2001:db8:1::", 48));
	assert_int_equal(send_valid(dp, "2001:db8:1:5::9"), XDP_DROP);
	assert_int_equal(send_valid(dp, "2001:db8:2::9"), XDP_PASS);
}

static void v6_counted_per_128(void **state)
{
	struct dp *dp = loaded(state);

	set_v6_prefix(dp, 128);
	send_error(dp, "2001:db8:1:2::1");
	send_error(dp, "2001:db8:1:2::1");
	send_error(dp, "2001:db8:1:2::2");
	assert_int_equal(count_of(dp, "2001:db8:1:2::1", 128), 2);
	assert_int_equal(count_of(dp, "2001:db8:1:2::2", 128), 1);
	assert_int_equal(count_of(dp, "2001:db8:1:2::", 64), -1);
	send_errors(dp, "2001:db8:1:2::1", 9);
	assert_true(banned(dp, "2001:db8:1:2::1", 128));
	assert_int_equal(send_valid(dp, "2001:db8:1:2::1"), XDP_DROP);
	assert_int_equal(send_valid(dp, "2001:db8:1:2::2"), XDP_PASS);
}

/* Existing counters and bans keep the prefix they were made with. */
static void v6_prefix_change_keeps_old_keys(void **state)
{
	struct dp *dp = loaded(state);
	const char *a = "2001:db8:7:7::1";

	send_errors(dp, a, 3);
	assert_int_equal(count_of(dp, a, 64), 3);
	set_v6_prefix(dp, 48);
	send_error(dp, a);
	assert_int_equal(count_of(dp, a, 48), 1);
	assert_int_equal(count_of(dp, a, 64), 3);

	set_v6_prefix(dp, 64);
	send_errors(dp, a, 8); /* 3 + 8 = 11 at /64 */
	assert_true(banned(dp, a, 64));
	assert_int_equal(send_valid(dp, a), XDP_DROP);
	set_v6_prefix(dp, 128);
	assert_int_equal(send_valid(dp, a), XDP_PASS); /* the /64 ban matches /64 lookups only */
	set_v6_prefix(dp, 64);
	assert_int_equal(send_valid(dp, a), XDP_DROP);
}

/* --- config at the next packet ----------------------------------------------------------- */

static void limit_changes_apply_at_once(void **state)
{
	struct dp *dp = loaded(state);
	struct xdpban_config cfg = config();

	cfg.limit = 3;
	assert_int_equal(dp_set_config(dp, &cfg), 0);
	send_errors(dp, "192.0.2.40", 3);
	assert_false(banned(dp, "192.0.2.40", V6_64));
	send_error(dp, "192.0.2.40");
	assert_true(banned(dp, "192.0.2.40", V6_64));

	cfg.limit = 20;
	assert_int_equal(dp_set_config(dp, &cfg), 0);
	send_errors(dp, "192.0.2.41", 20);
	assert_int_equal(count_of(dp, "192.0.2.41", V6_64), 20);
	assert_false(banned(dp, "192.0.2.41", V6_64));
	send_error(dp, "192.0.2.41");
	assert_true(banned(dp, "192.0.2.41", V6_64));

	/* lowered under a running count: the next error is judged by the new limit */
	send_errors(dp, "192.0.2.42", 5);
	cfg.limit = 3;
	assert_int_equal(dp_set_config(dp, &cfg), 0);
	assert_false(banned(dp, "192.0.2.42", V6_64));
	send_error(dp, "192.0.2.42");
	assert_true(banned(dp, "192.0.2.42", V6_64));
}

static void masks_change_apply_at_once(void **state)
{
	struct dp *dp = loaded(state);
	struct xdpban_config cfg = config();
	const char *src = "192.0.2.50";

	assert_int_equal(send_error(dp, src), XDP_DROP);
	assert_int_equal(count_of(dp, src, V6_64), 1);

	cfg.drop_mask = 0;
	assert_int_equal(dp_set_config(dp, &cfg), 0);
	assert_int_equal(send_error(dp, src), XDP_PASS);
	assert_int_equal(count_of(dp, src, V6_64), 2);

	cfg.class_mask = 0;
	assert_int_equal(dp_set_config(dp, &cfg), 0);
	assert_int_equal(send_error(dp, src), XDP_PASS);
	assert_int_equal(count_of(dp, src, V6_64), 2);

	cfg = config();
	assert_int_equal(dp_set_config(dp, &cfg), 0);
	assert_int_equal(send_error(dp, src), XDP_DROP);
	assert_int_equal(count_of(dp, src, V6_64), 3);
}

/* Runs errors from one IPv6 source under `cfg` and checks the defaults were applied instead:
 * dropped, counted per /64, banned by the 11th error. Leaves no state behind. */
static void expect_defaults_in_force(struct dp *dp, const char *what,
				     const struct xdpban_config *cfg)
{
	struct xdpban_key key = key_of("2001:db8:9:1::", 64);

	assert_int_equal(dp_set_config(dp, cfg), 0);
	if (send_error(dp, "2001:db8:9:1::1") != XDP_DROP)
		fail_msg("%s: the entry's drop_mask 0 was applied", what);
	send_errors(dp, "2001:db8:9:1::1", 9);
	if (count_of(dp, "2001:db8:9:1::", 64) != 10 || count_of(dp, "2001:db8:9::", 48) != -1)
		fail_msg("%s: not counted per /64 up to 10", what);
	send_error(dp, "2001:db8:9:1::1");
	if (!banned(dp, "2001:db8:9:1::", 64))
		fail_msg("%s: the 11th error did not ban", what);
	assert_int_equal(dp_del_ban(dp, &key), 0);
	assert_int_equal(dp_del_counter(dp, &key), 0);
}

/* An entry without the magic (what a plain `ip link ... xdp obj` leaves), or with any field out
 * of range, means the defaults: the data path never acts on a bad entry. Each entry below
 * would otherwise ban at the 2nd error, never drop, and count per /48. */
static void bad_config_means_defaults(void **state)
{
	struct dp *dp = loaded(state);
	const char *const what[] = { "no magic",     "limit too big", "window 0",
				     "ban too long", "v6 prefix 20",  "unknown class bit" };
	struct xdpban_config bad[6];

	for (int i = 0; i < 6; i++) {
		bad[i] = config();
		bad[i].limit = 1;
		bad[i].drop_mask = 0;
		bad[i].v6_prefix = 48;
	}
	bad[0].magic = 0;
	bad[1].limit = XDPBAN_LIMIT_MAX + 1;
	bad[2].window_s = 0;
	bad[3].ban_s = XDPBAN_TIME_MAX_S + 1;
	bad[4].v6_prefix = 20;
	bad[5].class_mask |= 1u << 7;
	for (int i = 0; i < 6; i++)
		expect_defaults_in_force(dp, what[i], &bad[i]);
}

/* --- manual bans, a full table, churn -------------------------------------------------- */

static void manual_ban_never_expires(void **state)
{
	struct dp *dp = loaded(state);
	struct xdpban_key key = key_of("203.0.113.60", V6_64);
	const struct xdpban_ban ban = { .start_ns = 1, .expires_ns = 0,
					.reason = XDPBAN_REASON_MANUAL };
	struct xdpban_report_req rep;
	struct xdpban_ban after;
	const __u8 addr[4] = { 203, 0, 113, 60 };

	assert_int_equal(dp_put_ban(dp, &key, &ban), 0);
	assert_int_equal(send_valid(dp, "203.0.113.60"), XDP_DROP);
	assert_int_equal(send_error(dp, "203.0.113.60"), XDP_DROP);
	assert_int_equal(count_of(dp, "203.0.113.60", V6_64), -1); /* banned: not counted */
	assert_int_equal(dp_report(dp, XDPBAN_FAMILY_INET, addr, 1, &rep), 0);
	assert_int_equal(rep.status, XDPBAN_REPORT_ALREADY_BANNED);
	assert_int_equal(dp_ban(dp, &key, &after), 0);
	assert_memory_equal(&after, &ban, sizeof(ban));
	assert_int_equal(stat_packets(dp, XDPBAN_STAT_BANS_EXPIRED), 0);
	assert_int_equal(stat_packets(dp, XDPBAN_STAT_DROP_BANNED), 2);
}

/* One group of four slots: exactly four bans fit. */
static const struct dp_opts four_bans = { .ban_groups = 1 };

static void full_ban_table_keeps_count_and_retries(void **state)
{
	struct dp *dp = loaded(state);
	const char *const first_four[] = { "192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4" };
	const char *fifth = "192.0.2.5";
	const __u8 sixth[4] = { 192, 0, 2, 6 };
	struct xdpban_key key = key_of(first_four[0], V6_64);
	struct xdpban_report_req rep;

	for (int i = 0; i < 4; i++)
		send_errors(dp, first_four[i], 11);
	assert_int_equal(count_entries(dp, dp->skel->maps.xdpban_bans), 4);
	assert_int_equal(stat_packets(dp, XDPBAN_STAT_BANS_CREATED), 4);

	send_errors(dp, fifth, 11);
	assert_int_equal(stat_packets(dp, XDPBAN_STAT_BAN_TABLE_FULL), 1);
	assert_int_equal(count_of(dp, fifth, V6_64), 11);
	assert_false(banned(dp, fifth, V6_64));
	assert_int_equal(send_valid(dp, fifth), XDP_PASS);
	send_error(dp, fifth);
	assert_int_equal(stat_packets(dp, XDPBAN_STAT_BAN_TABLE_FULL), 2);
	assert_int_equal(count_of(dp, fifth, V6_64), 12);

	assert_int_equal(dp_report(dp, XDPBAN_FAMILY_INET, sixth, 11, &rep), 0);
	assert_int_equal(rep.status, XDPBAN_REPORT_TABLE_FULL);
	assert_int_equal(rep.new_count, 11);
	assert_int_equal(stat_packets(dp, XDPBAN_STAT_BAN_TABLE_FULL), 3);

	assert_int_equal(dp_del_ban(dp, &key), 0);
	send_error(dp, fifth);
	assert_true(banned(dp, fifth, V6_64));
	assert_int_equal(stat_packets(dp, XDPBAN_STAT_BANS_CREATED), 5);
	assert_int_equal(send_valid(dp, fifth), XDP_DROP);
	{
		struct xdpban_key k5 = key_of(fifth, V6_64);
		struct xdpban_ban ban;

		assert_int_equal(dp_ban(dp, &k5, &ban), 0);
		assert_int_equal(ban.count, 13);
	}
	for (int i = 1; i < 4; i++)
		assert_true(banned(dp, first_four[i], V6_64));
}

#define CHURN_COUNTERS 64
#define CHURN_BANS 16
#define CHURN_SOURCES 4096
#define CHURN_CROSSING 8
/* CHURN_BANS slots in groups of four, all within every ban's probe window: exactly that many
 * bans fit. */
static const struct dp_opts churn_tables = { .counters_max = CHURN_COUNTERS,
					     .ban_groups = CHURN_BANS / XDPBAN_GROUP_SLOTS };

static void churn_source(char *buf, size_t len, int i)
{
	snprintf(buf, len, "2001:db8:%x:%x::1", 0x100 + i / 256, i % 256);
}

/* Thousands of spoofed sources cycle through a small counter table, some of them crossing the
 * limit while the ban table is full; every ban survives unchanged and still drops. */
static void counter_churn_never_evicts_a_ban(void **state)
{
	struct dp *dp = loaded(state);
	struct xdpban_ban before[CHURN_BANS], after;
	char src[64];
	int counters;

	for (int i = 0; i < CHURN_BANS; i++) {
		struct xdpban_key key;

		snprintf(src, sizeof(src), "198.51.100.%d", i + 1);
		send_errors(dp, src, 11);
		key = key_of(src, V6_64);
		assert_int_equal(dp_ban(dp, &key, &before[i]), 0);
	}
	assert_int_equal(count_entries(dp, dp->skel->maps.xdpban_bans), CHURN_BANS);

	for (int i = 0; i < CHURN_SOURCES; i++) {
		churn_source(src, sizeof(src), i);
		assert_int_equal(send_error(dp, src), XDP_DROP);
	}
	counters = count_entries(dp, dp->skel->maps.xdpban_counts);
	assert_in_range(counters, 1, CHURN_COUNTERS);
	churn_source(src, sizeof(src), 0);
	assert_int_equal(count_of(dp, src, V6_64), -1); /* the first churned source was evicted */
	churn_source(src, sizeof(src), CHURN_SOURCES - 1);
	assert_int_equal(count_of(dp, src, V6_64), 1);  /* the last one is there */

	/* churned sources that cross the limit find the table full: no ban makes room */
	for (int i = 0; i < CHURN_CROSSING; i++) {
		churn_source(src, sizeof(src), CHURN_SOURCES + i);
		send_errors(dp, src, 11);
		assert_false(banned(dp, src, V6_64));
	}
	assert_int_equal(stat_packets(dp, XDPBAN_STAT_BAN_TABLE_FULL), CHURN_CROSSING);

	assert_int_equal(count_entries(dp, dp->skel->maps.xdpban_bans), CHURN_BANS);
	for (int i = 0; i < CHURN_BANS; i++) {
		struct xdpban_key key;

		snprintf(src, sizeof(src), "198.51.100.%d", i + 1);
		key = key_of(src, V6_64);
		assert_int_equal(dp_ban(dp, &key, &after), 0);
		assert_memory_equal(&after, &before[i], sizeof(after));
		assert_int_equal(send_valid(dp, src), XDP_DROP);
	}
	assert_int_equal(stat_packets(dp, XDPBAN_STAT_DROP_BANNED), CHURN_BANS);
}

/* --- reports ----------------------------------------------------------------------------- */

static struct xdpban_report_req report(struct dp *dp, const char *addr, __u32 count)
{
	struct xdpban_report_req rep;
	__u8 bytes[16] = { 0 };
	__u8 family = strchr(addr, ':') ? XDPBAN_FAMILY_INET6 : XDPBAN_FAMILY_INET;

	assert_int_equal(inet_pton(family == XDPBAN_FAMILY_INET ? AF_INET : AF_INET6, addr, bytes),
			 1);
	assert_int_equal(dp_report(dp, family, bytes, count, &rep), 0);
	return rep;
}

#define expect_report(rep, want_status, want_count)                                            \
	do {                                                                                   \
		struct xdpban_report_req r_ = (rep);                                           \
		assert_int_equal(r_.status, want_status);                                      \
		assert_int_equal(r_.new_count, want_count);                                    \
	} while (0)

static void report_counts_and_bans_with_reason_reported(void **state)
{
	struct dp *dp = loaded(state);
	struct xdpban_key key = key_of("192.0.2.70", V6_64);
	struct xdpban_stat_value v[XDPBAN_STAT__MAX];
	struct xdpban_ban ban;

	expect_report(report(dp, "192.0.2.70", 1), XDPBAN_REPORT_COUNTED, 1);
	expect_report(report(dp, "192.0.2.70", 9), XDPBAN_REPORT_COUNTED, 10);
	expect_report(report(dp, "192.0.2.70", 1), XDPBAN_REPORT_BANNED, 11);
	assert_int_equal(dp_ban(dp, &key, &ban), 0);
	assert_int_equal(ban.reason, XDPBAN_REASON_REPORTED);
	assert_int_equal(ban.classes, XDPBAN_CLASS_REPORTED);
	assert_int_equal(ban.count, 11);
	assert_int_equal(ban.expires_ns, ban.start_ns + (__u64)XDPBAN_DEFAULT_BAN_S * NS_PER_SEC);
	expect_report(report(dp, "192.0.2.70", 1), XDPBAN_REPORT_ALREADY_BANNED, 0);
	assert_int_equal(send_valid(dp, "192.0.2.70"), XDP_DROP);

	/* reports count their errors as packets with no bytes, and pass no verdict */
	assert_int_equal(dp_stats(dp, v), 0);
	assert_int_equal(v[XDPBAN_STAT_ERRORS].packets, 11);
	assert_int_equal(v[XDPBAN_STAT_ERRORS].bytes, 0);
	assert_int_equal(v[XDPBAN_STAT_BANS_CREATED].packets, 1);
	assert_int_equal(v[XDPBAN_STAT_BANS_CREATED].bytes, 0);
	assert_int_equal(v[XDPBAN_STAT_DROP_BANNED].packets, 1);
	assert_int_equal(v[XDPBAN_STAT_PASSED].packets, 0);
}

/* Wire errors and reports add to one counter; whichever crosses the limit names the reason. */
static void reports_and_wire_errors_share_a_counter(void **state)
{
	struct dp *dp = loaded(state);
	struct xdpban_key a = key_of("192.0.2.71", V6_64), b = key_of("192.0.2.72", V6_64);
	struct xdpban_ban ban;

	send_errors(dp, "192.0.2.71", 5);
	expect_report(report(dp, "192.0.2.71", 3), XDPBAN_REPORT_COUNTED, 8);
	send_error(dp, "192.0.2.71");
	assert_int_equal(count_of(dp, "192.0.2.71", V6_64), 9);
	expect_report(report(dp, "192.0.2.71", 2), XDPBAN_REPORT_BANNED, 11);
	assert_int_equal(dp_ban(dp, &a, &ban), 0);
	assert_int_equal(ban.reason, XDPBAN_REASON_REPORTED);

	expect_report(report(dp, "192.0.2.72", 10), XDPBAN_REPORT_COUNTED, 10);
	send_error(dp, "192.0.2.72");
	assert_int_equal(dp_ban(dp, &b, &ban), 0);
	assert_int_equal(ban.reason, XDPBAN_REASON_ERRORS);
	assert_int_equal(ban.classes, XDPBAN_CLASS_MALFORMED);
	assert_int_equal(ban.count, 11);
}

static void report_v6_is_keyed_by_prefix(void **state)
{
	struct dp *dp = loaded(state);

	expect_report(report(dp, "2001:db8:5:6::1", 4), XDPBAN_REPORT_COUNTED, 4);
	expect_report(report(dp, "2001:db8:5:6:1::2", 4), XDPBAN_REPORT_COUNTED, 8);
	expect_report(report(dp, "2001:db8:5:7::1", 4), XDPBAN_REPORT_COUNTED, 4);
	send_error(dp, "2001:db8:5:6::3");
	assert_int_equal(count_of(dp, "2001:db8:5:6::", 64), 9);
}

static void report_saturates_the_count(void **state)
{
	struct dp *dp = loaded(state);
	struct xdpban_key key = key_of("192.0.2.73", V6_64);
	struct xdpban_ban ban;

	assert_int_equal(dp_put_counter(dp, &key, now_s(), 0xfffffff0u), 0);
	expect_report(report(dp, "192.0.2.73", 0x100), XDPBAN_REPORT_BANNED, 0xffffffffu);
	assert_int_equal(dp_ban(dp, &key, &ban), 0);
	assert_int_equal(ban.count, 0xffffffffu);
}

static void report_statuses_that_count_nothing(void **state)
{
	struct dp *dp = loaded(state);
	struct xdpban_config cfg = config();
	struct xdpban_report_req rep;
	const __u8 addr[16] = { 192, 0, 2, 80 };

	assert_int_equal(dp_policy_add(dp, "192.0.2.80/32", XDPBAN_POLICY_TRUSTED), 0);
	assert_int_equal(dp_policy_add(dp, "2001:db8:dead::/48", XDPBAN_POLICY_DENY), 0);
	expect_report(report(dp, "192.0.2.80", 50), XDPBAN_REPORT_TRUSTED, 0);
	expect_report(report(dp, "2001:db8:dead::1", 50), XDPBAN_REPORT_DENIED, 0);

	assert_int_equal(dp_report(dp, 0, addr, 1, &rep), 0);
	assert_int_equal(rep.status, XDPBAN_REPORT_INVALID);
	assert_int_equal(dp_report(dp, 5, addr, 1, &rep), 0);
	assert_int_equal(rep.status, XDPBAN_REPORT_INVALID);
	assert_int_equal(dp_report(dp, XDPBAN_FAMILY_INET, addr, 0, &rep), 0);
	assert_int_equal(rep.status, XDPBAN_REPORT_INVALID);

	cfg.class_mask = XDPBAN_CLASS_MALFORMED;
	assert_int_equal(dp_set_config(dp, &cfg), 0);
	expect_report(report(dp, "192.0.2.81", 50), XDPBAN_REPORT_DISABLED, 0);
	/* policy first, then the ban, then the class */
	expect_report(report(dp, "192.0.2.80", 50), XDPBAN_REPORT_TRUSTED, 0);
	{
		struct xdpban_key key = key_of("192.0.2.83", V6_64);
		const struct xdpban_ban forever = { .reason = XDPBAN_REASON_MANUAL };

		assert_int_equal(dp_put_ban(dp, &key, &forever), 0);
		expect_report(report(dp, "192.0.2.83", 1), XDPBAN_REPORT_ALREADY_BANNED, 0);
		assert_int_equal(dp_del_ban(dp, &key), 0);
	}

	assert_int_equal(count_entries(dp, dp->skel->maps.xdpban_counts), 0);
	assert_int_equal(count_entries(dp, dp->skel->maps.xdpban_bans), 0);
	assert_int_equal(stat_packets(dp, XDPBAN_STAT_ERRORS), 0);
}

/* A report on a ban that has run out lifts it and counts from zero. */
static void report_lifts_an_expired_ban(void **state)
{
	struct dp *dp = loaded(state);
	struct xdpban_key key = key_of("192.0.2.82", V6_64);
	__u64 now = dp_now_ns();
	const struct xdpban_ban past = { .start_ns = now - 2 * NS_PER_SEC,
					 .expires_ns = now - NS_PER_SEC,
					 .reason = XDPBAN_REASON_MANUAL };

	assert_int_equal(dp_put_ban(dp, &key, &past), 0);
	expect_report(report(dp, "192.0.2.82", 2), XDPBAN_REPORT_COUNTED, 2);
	assert_false(banned(dp, "192.0.2.82", V6_64));
	assert_int_equal(stat_packets(dp, XDPBAN_STAT_BANS_EXPIRED), 1);
}

/* --- no increment lost between CPUs -------------------------------------------------------- */

/* Two threads, pinned to CPU 0 and CPU 1 and released together by a barrier, count errors of
 * one source at the same time, with a limit no count reaches. Every error must be counted
 * exactly once: the counter's compare-and-swap (xdpban_state.h) is what makes that so, and a
 * plain read-add-write would lose increments here. */
#define RACE_CPUS 2
#define RACE_FRAMES 500000  /* per thread, in one BPF_PROG_TEST_RUN with repeat */
#define RACE_REPORTS 100000 /* per thread, one report program run each */

struct racer {
	struct dp *dp;
	pthread_barrier_t *start;
	const __u8 *frame; /* frames: the malformed frame, run RACE_FRAMES times */
	__u32 len;
	const __u8 *addr;  /* reports: the IPv4 source */
	__u32 *counts;     /* reports: the new_count of each report, RACE_REPORTS of them */
	__u32 retval;      /* frames: the XDP action */
	int err;           /* 0, -errno, or -EPROTO for a report that was not just counted */
	__u32 status;      /* that report's status */
};

/* True, after saying why not, when CPU 0 and CPU 1 are online and this process may use them. */
static bool two_cpus_usable(void)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t allowed;

	if (online < RACE_CPUS) {
		printf("test_state: %ld CPU online; the cross-CPU tests need %d\n", online,
		       RACE_CPUS);
		return false;
	}
	if (sched_getaffinity(0, sizeof(allowed), &allowed) || !CPU_ISSET(0, &allowed) ||
	    !CPU_ISSET(1, &allowed)) {
		printf("test_state: this process may not run on both CPU 0 and CPU 1\n");
		return false;
	}
	return true;
}

static void *race_frames(void *arg)
{
	struct racer *r = arg;
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = r->frame, .data_size_in = r->len,
		    .repeat = RACE_FRAMES);

	pthread_barrier_wait(r->start);
	r->err = bpf_prog_test_run_opts(r->dp->prog_fd, &run) ? -errno : 0;
	r->retval = run.retval;
	return NULL;
}

/* A report run that the scheduler preempts while it creates the source's counter makes the
 * other thread's report find neither the counter nor the insert lock: NOT_COUNTED, nothing
 * counted (a packet in softirq is never preempted so). xb_report runs such a report again
 * (user/lib/report.c); so does this, as often, and nothing else than COUNTED passes. */
#define RACE_NOT_COUNTED_RETRIES 8

static void *race_reports(void *arg)
{
	struct racer *r = arg;
	struct xdpban_report_req out;

	pthread_barrier_wait(r->start);
	for (int i = 0; i < RACE_REPORTS && !r->err; i++) {
		int tries = 0;

		do {
			if (tries)
				sched_yield(); /* let the inserter finish */
			r->err = dp_report(r->dp, XDPBAN_FAMILY_INET, r->addr, 1, &out);
		} while (!r->err && out.status == XDPBAN_REPORT_NOT_COUNTED &&
			 tries++ < RACE_NOT_COUNTED_RETRIES);
		if (!r->err && out.status != XDPBAN_REPORT_COUNTED) {
			r->err = -EPROTO;
			r->status = out.status;
		}
		r->counts[i] = out.new_count;
	}
	return NULL;
}

/* Runs fn in one thread per CPU, 0 and 1, started together; returns when both are done. */
static void race(void *(*fn)(void *), struct racer racers[RACE_CPUS])
{
	pthread_barrier_t start;
	pthread_t threads[RACE_CPUS];

	assert_int_equal(pthread_barrier_init(&start, NULL, RACE_CPUS), 0);
	for (int cpu = 0; cpu < RACE_CPUS; cpu++) {
		pthread_attr_t attr;
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		racers[cpu].start = &start;
		assert_int_equal(pthread_attr_init(&attr), 0);
		assert_int_equal(pthread_attr_setaffinity_np(&attr, sizeof(one), &one), 0);
		assert_int_equal(pthread_create(&threads[cpu], &attr, fn, &racers[cpu]), 0);
		pthread_attr_destroy(&attr);
	}
	for (int cpu = 0; cpu < RACE_CPUS; cpu++)
		assert_int_equal(pthread_join(threads[cpu], NULL), 0);
	pthread_barrier_destroy(&start);
}

static void set_unreachable_limit(struct dp *dp)
{
	struct xdpban_config cfg = config();

	cfg.limit = XDPBAN_LIMIT_MAX;
	assert_int_equal(dp_set_config(dp, &cfg), 0);
}

static void frames_on_two_cpus_lose_no_increment(void **state)
{
	struct dp *dp = loaded(state);
	const struct pkt_spec spec = { .src = "192.0.2.90", .l4 = PKT_L4_TCP,
				       .tcp.flags = PKT_SET(PKT_SYN | PKT_FIN) };
	struct racer racers[RACE_CPUS] = { 0 };
	struct pkt_layout at;
	__u8 frame[256];

	if (!two_cpus_usable())
		skip();
	set_unreachable_limit(dp);
	assert_int_equal(pkt_build(&spec, frame, sizeof(frame), &at), 0);
	for (int cpu = 0; cpu < RACE_CPUS; cpu++)
		racers[cpu] = (struct racer){ .dp = dp, .frame = frame, .len = at.len };
	race(race_frames, racers);
	for (int cpu = 0; cpu < RACE_CPUS; cpu++) {
		assert_int_equal(racers[cpu].err, 0);
		assert_int_equal(racers[cpu].retval, XDP_DROP);
	}
	assert_int_equal(count_of(dp, "192.0.2.90", V6_64), RACE_CPUS * RACE_FRAMES);
	assert_int_equal(stat_packets(dp, XDPBAN_STAT_ERRORS), RACE_CPUS * RACE_FRAMES);
	assert_int_equal(stat_packets(dp, XDPBAN_STAT_DROP_MALFORMED), RACE_CPUS * RACE_FRAMES);
	assert_int_equal(stat_packets(dp, XDPBAN_STAT_BANS_CREATED), 0);
}

/* Reports return the count they produced: with no increment lost, the two threads together
 * see every count from 1 to 2 * RACE_REPORTS exactly once. */
static void reports_on_two_cpus_lose_no_increment(void **state)
{
	struct dp *dp = loaded(state);
	const __u8 addr[4] = { 192, 0, 2, 91 };
	const __u32 total = RACE_CPUS * RACE_REPORTS;
	struct racer racers[RACE_CPUS] = { 0 };
	__u32 *counts = calloc(total, sizeof(*counts));
	bool *seen = calloc(total + 1, sizeof(*seen));

	assert_non_null(counts);
	assert_non_null(seen);
	if (!two_cpus_usable()) {
		free(counts);
		free(seen);
		skip();
	}
	set_unreachable_limit(dp);
	for (int cpu = 0; cpu < RACE_CPUS; cpu++)
		racers[cpu] = (struct racer){ .dp = dp, .addr = addr,
					      .counts = counts + cpu * RACE_REPORTS };
	race(race_reports, racers);
	for (int cpu = 0; cpu < RACE_CPUS; cpu++)
		if (racers[cpu].err)
			fail_msg("thread %d: error %d (report status %u)", cpu, racers[cpu].err,
				 racers[cpu].status);
	for (__u32 i = 0; i < total; i++) {
		if (counts[i] < 1 || counts[i] > total || seen[counts[i]])
			fail_msg("report %u got count %u: out of 1..%u, or seen twice", i,
				 counts[i], total);
		seen[counts[i]] = true;
	}
	free(counts);
	free(seen);
	assert_int_equal(count_of(dp, "192.0.2.91", V6_64), total);
	assert_int_equal(stat_packets(dp, XDPBAN_STAT_ERRORS), total);
	assert_int_equal(stat_packets(dp, XDPBAN_STAT_BANS_CREATED), 0);
}

#define STATE_TEST(f) cmocka_unit_test_setup_teardown(f, load, unload)
#define STATE_TEST_WITH(f, opts) cmocka_unit_test_prestate_setup_teardown(f, load, unload, \
									   (void *)&opts)

int main(void)
{
	const struct CMUnitTest tests[] = {
		STATE_TEST(old_window_restarts),
		STATE_TEST(old_ban_is_lifted),
		STATE_TEST(one_second_window_runs_out),
		STATE_TEST(one_second_ban_runs_out),
		STATE_TEST(v6_counted_per_64_by_default),
		STATE_TEST(v6_counted_per_48),
		STATE_TEST(v6_counted_per_128),
		STATE_TEST(v6_prefix_change_keeps_old_keys),
		STATE_TEST(limit_changes_apply_at_once),
		STATE_TEST(masks_change_apply_at_once),
		STATE_TEST(bad_config_means_defaults),
		STATE_TEST(manual_ban_never_expires),
		STATE_TEST_WITH(full_ban_table_keeps_count_and_retries, four_bans),
		STATE_TEST_WITH(counter_churn_never_evicts_a_ban, churn_tables),
		STATE_TEST(report_counts_and_bans_with_reason_reported),
		STATE_TEST(reports_and_wire_errors_share_a_counter),
		STATE_TEST(report_v6_is_keyed_by_prefix),
		STATE_TEST(report_saturates_the_count),
		STATE_TEST(report_statuses_that_count_nothing),
		STATE_TEST(report_lifts_an_expired_ban),
		STATE_TEST(frames_on_two_cpus_lose_no_increment),
		STATE_TEST(reports_on_two_cpus_lose_no_increment),
	};

	return cmocka_run_group_tests_name("state", tests, NULL, NULL);
}
