/* test_top.c - the pure model of `xdpban top` (user/common/top_model.c): rates between two
 * snapshots (a counter that went down reads as 0), a source's errors in the interval (the
 * difference within one window; the whole count for a new source, a new window or a counter
 * started over by a ban), the ranking in each order with its ties, the row limit, and the
 * refusal of snapshots out of order; the bans newest first; the reasons table folded to the
 * lines it may take. No maps: the snapshots are made by hand.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "top_model.h"

#define NS 1000000000ull

static struct top_source v4(__u8 last, __u32 count, __u32 start_s)
{
	struct top_source s = { .key = { .family = XDPBAN_FAMILY_INET, .prefixlen = 32,
					 .addr = { 192, 0, 2, last } },
				.count = count, .start_s = start_s, .classes = 1 };
	return s;
}

static struct top_source v6(__u8 last, __u32 count, __u32 start_s)
{
	struct top_source s = { .key = { .family = XDPBAN_FAMILY_INET6, .prefixlen = 64,
					 .addr = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, last } },
				.count = count, .start_s = start_s };
	return s;
}

static void add(struct top_snapshot *s, struct top_source src)
{
	assert_int_equal(top_snapshot_add(s, &src), 0);
}

static void test_rates(void **state)
{
	struct top_snapshot a = { .time_ns = 10 * NS }, b = { .time_ns = 12 * NS };
	struct top_frame f;

	a.stats[XDPBAN_STAT_DROP_MALFORMED] = (struct xdpban_stat_value){ 100, 6400 };
	b.stats[XDPBAN_STAT_DROP_MALFORMED] = (struct xdpban_stat_value){ 160, 10240 };
	a.stats[XDPBAN_STAT_PASSED].packets = 50; /* the maps made anew: lower now */
	b.stats[XDPBAN_STAT_PASSED].packets = 7;
	b.counters_used = 3, b.counters_max = 1024, b.bans_used = 1, b.bans_max = 256;
	assert_int_equal(top_frame_make(&a, &b, TOP_SORT_ERRORS, 10, &f), 0);
	assert_true(f.seconds == 2.0);
	assert_true(f.rates[XDPBAN_STAT_DROP_MALFORMED].packets == 30.0);
	assert_true(f.rates[XDPBAN_STAT_DROP_MALFORMED].bytes == 1920.0);
	assert_true(f.rates[XDPBAN_STAT_PASSED].packets == 0.0);
	assert_int_equal(f.counters_used, 3);
	assert_int_equal(f.bans_max, 256);
	assert_int_equal(f.n_rows, 0);
	top_frame_free(&f);
	assert_int_equal(top_frame_make(&b, &a, TOP_SORT_ERRORS, 10, &f), -EINVAL);
	assert_int_equal(top_frame_make(&a, &a, TOP_SORT_ERRORS, 10, &f), -EINVAL);
}

static void test_errors_since(void **state)
{
	struct top_snapshot prev = { 0 };
	struct top_source same = v4(1, 25, 100), fresh = v4(2, 4, 300), rewound = v4(3, 2, 100),
			  unknown = v4(9, 6, 100);

	add(&prev, v4(3, 40, 100));
	add(&prev, v4(1, 10, 100));
	add(&prev, v4(2, 90, 100));
	top_snapshot_finish(&prev);
	assert_int_equal(top_errors_since(&prev, &same), 15);     /* same window: the difference */
	assert_int_equal(top_errors_since(&prev, &fresh), 4);     /* a new window: all of it */
	assert_int_equal(top_errors_since(&prev, &rewound), 2);   /* started over at a ban */
	assert_int_equal(top_errors_since(&prev, &unknown), 6);   /* no counter then */
	top_snapshot_free(&prev);
	assert_int_equal(top_errors_since(&prev, &same), 25);     /* no previous sources */
}

/* prev and cur of four sources: .1 +5 (count 50), .2 +20 (count 20), .3 +5 (count 8),
 * 2001:db8:0:7::/64 +20 (count 30); and .4, whose window is empty. */
static void two_snapshots(struct top_snapshot *prev, struct top_snapshot *cur)
{
	memset(prev, 0, sizeof(*prev));
	memset(cur, 0, sizeof(*cur));
	prev->time_ns = 1 * NS;
	cur->time_ns = 2 * NS;
	add(prev, v4(1, 45, 10));
	add(prev, v4(3, 3, 10));
	add(prev, v6(7, 10, 10));
	add(cur, v6(7, 30, 10));
	add(cur, v4(3, 8, 10));
	add(cur, v4(2, 20, 11));
	add(cur, v4(4, 0, 11));
	add(cur, v4(1, 50, 10));
	top_snapshot_finish(prev);
	top_snapshot_finish(cur);
}

static void expect_rows(const struct top_frame *f, const char *want)
{
	char got[64] = "";

	for (size_t i = 0; i < f->n_rows; i++) {
		const struct top_row *r = &f->rows[i];
		char one[16];

		snprintf(one, sizeof(one), "%s%c%u:%u", i ? " " : "",
			 r->src.key.family == XDPBAN_FAMILY_INET6 ? 'x' : 'a',
			 r->src.key.family == XDPBAN_FAMILY_INET6 ? r->src.key.addr[7]
								: r->src.key.addr[3],
			 r->errors);
		strcat(got, one);
	}
	assert_string_equal(got, want);
}

static void test_ranking(void **state)
{
	struct top_snapshot prev, cur;
	struct top_frame f;

	two_snapshots(&prev, &cur);
	/* errors, ties by count (x7 has 30, a2 20; a1 50, a3 8) */
	assert_int_equal(top_frame_make(&prev, &cur, TOP_SORT_ERRORS, 10, &f), 0);
	assert_int_equal(f.n_active, 4);
	expect_rows(&f, "x7:20 a2:20 a1:5 a3:5");
	assert_int_equal(f.rows[0].src.count, 30);
	assert_false(f.rows[0].banned);
	top_frame_free(&f);
	assert_int_equal(top_frame_make(&prev, &cur, TOP_SORT_COUNT, 10, &f), 0);
	expect_rows(&f, "a1:5 x7:20 a2:20 a3:5");
	top_frame_free(&f);
	assert_int_equal(top_frame_make(&prev, &cur, TOP_SORT_SOURCE, 10, &f), 0);
	expect_rows(&f, "a1:5 a2:20 a3:5 x7:20");
	top_frame_free(&f);
	/* the first two only; every active source still counted */
	assert_int_equal(top_frame_make(&prev, &cur, TOP_SORT_ERRORS, 2, &f), 0);
	expect_rows(&f, "x7:20 a2:20");
	assert_int_equal(f.n_active, 4);
	top_frame_free(&f);
	assert_int_equal(top_frame_make(&prev, &cur, TOP_SORT__COUNT, 2, &f), -EINVAL);
	top_snapshot_free(&prev);
	top_snapshot_free(&cur);
}

static struct top_ban ban_at(__u8 last, __u64 start_s)
{
	struct top_ban b = { .key = v4(last, 0, 0).key, .start_ns = start_s * NS,
			     .reason = XDPBAN_REASON_MANUAL };
	return b;
}

static void test_bans_newest_first(void **state)
{
	struct top_snapshot prev = { .time_ns = 1 * NS }, cur = { .time_ns = 20 * NS };
	struct top_ban b[] = { ban_at(5, 3), ban_at(6, 9), ban_at(2, 3), ban_at(7, 1) };
	struct top_frame f;

	for (size_t i = 0; i < sizeof(b) / sizeof(b[0]); i++)
		assert_int_equal(top_snapshot_add_ban(&cur, &b[i]), 0);
	assert_int_equal(top_frame_make(&prev, &cur, TOP_SORT_ERRORS, 3, &f), 0);
	assert_int_equal(f.n_bans, 3); /* the count limits the bans as the sources */
	assert_int_equal(f.bans[0].key.addr[3], 6);
	assert_int_equal(f.bans[1].key.addr[3], 2); /* ties by address */
	assert_int_equal(f.bans[2].key.addr[3], 5);
	assert_true(f.time_ns == 20 * NS);
	assert_int_equal(cur.bans[0].key.addr[3], 5); /* the snapshot keeps its order */
	top_frame_free(&f);
	assert_null(f.bans);
	top_snapshot_free(&cur);
	assert_int_equal(cur.n_bans, 0);
}

static struct top_ban ban_dropped(__u8 last, __u64 start_s, __u64 drops)
{
	struct top_ban b = ban_at(last, start_s);

	b.drops = drops;
	return b;
}

/* The rate of a ban is its drops since the same ban's reading in the previous snapshot; a ban
 * new since (or the same key banned again) counts all its drops. Ranked by rate, then newest. */
static void test_bans_by_drop_rate(void **state)
{
	struct top_snapshot prev = { .time_ns = 10 * NS }, cur = { .time_ns = 20 * NS };
	struct top_ban was[] = { ban_dropped(1, 2, 100), ban_dropped(2, 2, 40), ban_dropped(3, 2, 70),
				 ban_dropped(4, 2, 9) };
	struct top_ban now[] = { ban_dropped(4, 2, 9),    /* idle: 0/s */
				 ban_dropped(3, 15, 30),  /* banned again: 30 in 10 s */
				 ban_dropped(1, 2, 300),  /* still sending: 200 in 10 s */
				 ban_dropped(5, 12, 50),  /* new: 50 in 10 s */
				 ban_dropped(2, 2, 40) }; /* idle, older than 4 */
	struct top_frame f;

	for (size_t i = 0; i < sizeof(was) / sizeof(was[0]); i++)
		assert_int_equal(top_snapshot_add_ban(&prev, &was[i]), 0);
	for (size_t i = 0; i < sizeof(now) / sizeof(now[0]); i++)
		assert_int_equal(top_snapshot_add_ban(&cur, &now[i]), 0);
	top_snapshot_finish(&prev);
	top_snapshot_finish(&cur);
	assert_int_equal(top_frame_make(&prev, &cur, TOP_SORT_ERRORS, 10, &f), 0);
	assert_int_equal(f.n_bans, 5);
	assert_int_equal(f.bans[0].key.addr[3], 1);
	assert_true(f.bans[0].drop_rate == 20.0);
	assert_int_equal(f.bans[1].key.addr[3], 5);
	assert_true(f.bans[1].drop_rate == 5.0);
	assert_int_equal(f.bans[2].key.addr[3], 3);
	assert_true(f.bans[2].drop_rate == 3.0);
	assert_int_equal(f.bans[3].key.addr[3], 2); /* ties at 0/s: newest first, then address */
	assert_int_equal(f.bans[4].key.addr[3], 4);
	assert_true(f.bans[4].drop_rate == 0.0);
	top_frame_free(&f);
	top_snapshot_free(&prev);
	top_snapshot_free(&cur);
}

static void set_rate(struct top_frame *f, int stat, double packets)
{
	f->rates[stat].packets = packets;
	f->rates[stat].bytes = packets * 64;
}

static void expect_shown(const struct top_reasons *r, const int *want, size_t n)
{
	assert_int_equal(r->n_shown, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(r->shown[i], want[i]);
}

/* The busy screen of a banned flood: drop_banned, drop_malformed and passed move, the other
 * four verdicts do not; class_malformed and errors (on the summary line) move too. */
static void test_reasons_fold(void **state)
{
	struct top_frame f = { 0 };
	struct top_reasons r;

	set_rate(&f, XDPBAN_STAT_DROP_BANNED, 10);
	set_rate(&f, XDPBAN_STAT_DROP_MALFORMED, 40);
	set_rate(&f, XDPBAN_STAT_PASSED, 0.5);
	set_rate(&f, XDPBAN_STAT_ERRORS, 40);
	set_rate(&f, XDPBAN_STAT_CLASS_MALFORMED, 40);
	/* no limit: the zero verdicts fold, the events that moved follow the verdicts */
	assert_int_equal(top_reasons_fold(&f, 0, &r), 5);
	expect_shown(&r, (const int[]){ XDPBAN_STAT_PASSED, XDPBAN_STAT_DROP_BANNED,
					XDPBAN_STAT_DROP_MALFORMED, XDPBAN_STAT_CLASS_MALFORMED }, 4);
	assert_int_equal(r.n_folded, 4);
	assert_true(r.folded_packets == 0);
	/* four lines: the verdicts and the fold line, no room for the event */
	assert_int_equal(top_reasons_fold(&f, 4, &r), 4);
	expect_shown(&r, (const int[]){ XDPBAN_STAT_PASSED, XDPBAN_STAT_DROP_BANNED,
					XDPBAN_STAT_DROP_MALFORMED }, 3);
	/* three: the busiest two stay, in their order; passed joins the fold with its rate */
	assert_int_equal(top_reasons_fold(&f, 3, &r), 3);
	expect_shown(&r, (const int[]){ XDPBAN_STAT_DROP_BANNED, XDPBAN_STAT_DROP_MALFORMED }, 2);
	assert_int_equal(r.n_folded, 5);
	assert_true(r.folded_packets == 0.5);
	assert_true(r.folded_bytes == 32);
	/* one line, or none asked: the fold line alone, every verdict in it */
	assert_int_equal(top_reasons_fold(&f, 1, &r), 1);
	assert_int_equal(r.n_shown, 0);
	assert_int_equal(r.n_folded, XDPBAN_STAT__VERDICTS);
	assert_true(r.folded_packets == 50.5);
	/* all seven verdicts moving and room for them: no fold line */
	for (int i = 0; i < XDPBAN_STAT__VERDICTS; i++)
		set_rate(&f, i, 1 + i);
	assert_int_equal(top_reasons_fold(&f, XDPBAN_STAT__VERDICTS, &r), XDPBAN_STAT__VERDICTS);
	assert_int_equal(r.n_folded, 0);
	assert_int_equal(r.n_shown, XDPBAN_STAT__VERDICTS);
	/* nothing moved: one fold line */
	memset(&f, 0, sizeof(f));
	assert_int_equal(top_reasons_fold(&f, 0, &r), 1);
	assert_int_equal(r.n_shown, 0);
	assert_int_equal(r.n_folded, XDPBAN_STAT__VERDICTS);
}

static void test_sort_names(void **state)
{
	enum top_sort s;

	for (int i = 0; i < TOP_SORT__COUNT; i++) {
		assert_int_equal(top_sort_parse(top_sort_name(i), &s), 0);
		assert_int_equal(s, i);
	}
	assert_int_equal(top_sort_parse("size", &s), -EINVAL);
	assert_string_equal(top_sort_name(TOP_SORT__COUNT), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rates),
		cmocka_unit_test(test_errors_since),
		cmocka_unit_test(test_ranking),
		cmocka_unit_test(test_bans_newest_first),
		cmocka_unit_test(test_bans_by_drop_rate),
		cmocka_unit_test(test_reasons_fold),
		cmocka_unit_test(test_sort_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
