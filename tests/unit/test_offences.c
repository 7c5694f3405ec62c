/* test_offences.c - the offence history and escalation (user/common/offences.h). The history:
 * put, overwrite, forget and iterate, with its count. Escalation runs on a ban table in plain
 * memory (user/lib/table.h's xb_bans_init, lent through struct xb_maps' mapped tables, as the
 * daemon lends its mapping), so no kernel is needed: a first ban is recorded and left as made;
 * a repeat within the period is lengthened in the table to ban-time x factor^repeats, capped at
 * max-ban-time; a ban after the period, or with escalation off, keeps its length; a permanent
 * ban is never lengthened; a ban table that cannot be mapped leaves the ban as made and says
 * so. xbd_sweep is not tested here: its first step, xb_sweep, walks the policy tries, which
 * only exist as maps (tests/kernel/ has them).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include "history.h"
#include "offences.h"
#include "table.h"
#include "xdpban_time.h"

#define GROUPS 64
#define HOUR 3600ull

static struct xdpban_key key4(__u8 last)
{
	struct xdpban_key k = { .family = XDPBAN_FAMILY_INET, .prefixlen = 32,
				.addr = { 192, 0, 2, last } };
	return k;
}

/* ---- the history ---- */

struct tally {
	size_t n;
	__u64 repeats, last_ban;
};

static void add_up(const struct xbd_offence *o, void *ctx)
{
	struct tally *t = ctx;

	t->n++;
	t->repeats += o->repeats;
	t->last_ban += o->last_ban;
}

static void history_puts_overwrites_forgets_and_iterates(void **state)
{
	struct xbd_history h = {};
	struct tally t = {};

	for (__u8 i = 1; i <= 3; i++) {
		struct xbd_offence o = { .key = key4(i), .last_ban = 1000 * i, .repeats = i };

		assert_int_equal(xbd_history_put(&h, &o), 0);
	}
	assert_int_equal(h.n, 3);
	/* the same key again: updated in place, not added */
	assert_int_equal(xbd_history_put(&h, &(struct xbd_offence){ .key = key4(2),
					 .last_ban = 7, .repeats = 9 }), 0);
	assert_int_equal(h.n, 3);
	xbd_history_foreach(&h, add_up, &t);
	assert_int_equal(t.n, 3);
	assert_int_equal(t.repeats, 1 + 9 + 3);
	assert_int_equal(t.last_ban, 1000 + 7 + 3000);
	/* an IPv6 key of the same bytes is another key */
	assert_int_equal(xbd_history_put(&h, &(struct xbd_offence){ .key = { .family =
					 XDPBAN_FAMILY_INET6, .prefixlen = 64, .addr = { 192, 0, 2, 1 } } }), 0);
	assert_int_equal(h.n, 4);
	xbd_history_forget(&h, &(struct xdpban_key){ .family = XDPBAN_FAMILY_INET6,
						     .prefixlen = 64, .addr = { 192, 0, 2, 1 } });
	xbd_history_forget(&h, &(struct xdpban_key){ .family = XDPBAN_FAMILY_INET,
						     .prefixlen = 32, .addr = { 192, 0, 2, 1 } });
	xbd_history_forget(&h, &(struct xdpban_key){ .family = XDPBAN_FAMILY_INET,
						     .prefixlen = 32, .addr = { 203, 0, 113, 1 } });
	assert_int_equal(h.n, 2);
	memset(&t, 0, sizeof(t));
	xbd_history_foreach(&h, add_up, &t);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.repeats, 9 + 3);
	xbd_history_free(&h);
	assert_int_equal(h.n, 0);
	assert_null(h.root);
	memset(&t, 0, sizeof(t));
	xbd_history_foreach(&h, add_up, &t);
	assert_int_equal(t.n, 0);
}

/* ---- escalation, on a ban table in memory ---- */

struct fixture {
	struct xdpban_group *groups;
	__u64 idx[GROUPS];
	struct xdpban_ban_info info[GROUPS * XDPBAN_GROUP_SLOTS];
	struct xb_mapped mapped;
	struct xb_maps m;
	struct xbd_history h;
	struct xbd_escalation esc;
	__u64 now_ns;     /* boot clock: when each test's ban begins */
	time_t now_wall;  /* the same on the wall clock */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f || !(f->groups = aligned_alloc(128, GROUPS * sizeof(*f->groups))))
		return -1;
	memset(f->groups, 0, GROUPS * sizeof(*f->groups));
	xb_bans_init(&f->mapped.bans, f->groups, GROUPS, f->idx, f->info, 0x5eedull);
	f->m = (struct xb_maps){ XB_MAPS_NONE, .ncpus = 1, .mapped = &f->mapped };
	f->esc = (struct xbd_escalation){ .enabled = true, .factor = 2, .max_ban_s = 10 * HOUR,
					  .period_s = 24 * HOUR };
	f->now_ns = xb_boot_ns();
	f->now_wall = xb_boot_to_wall(f->now_ns);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	xbd_history_free(&f->h);
	free(f->groups);
	free(f);
	return 0;
}

/* The data path's ban of 192.0.2.LAST for base seconds (0: permanent) from now, in the
 * table, and its event. */
static struct xdpban_event ban(struct fixture *f, __u8 last, __u64 base_s)
{
	struct xdpban_event ev = { .key = key4(last), .time_ns = f->now_ns,
				   .expires_ns = base_s ? f->now_ns + base_s * NS_PER_SEC : 0,
				   .count = 11, .reason = XDPBAN_REASON_ERRORS };
	struct xdpban_ban b = { .start_ns = ev.time_ns, .expires_ns = ev.expires_ns, .count = 11,
				.reason = XDPBAN_REASON_ERRORS };

	assert_int_equal(xb_bans_put(&f->mapped.bans, &ev.key, &b, BPF_ANY), 0);
	return ev;
}

/* The previous offence of 192.0.2.LAST: its ban ended ended_ago seconds ago. */
static void had_offence(struct fixture *f, __u8 last, __u32 repeats, time_t ended_ago)
{
	struct xbd_offence o = { .key = key4(last), .last_ban = f->now_wall - ended_ago - 3600,
				 .last_until = f->now_wall - ended_ago, .repeats = repeats };

	assert_int_equal(xbd_history_put(&f->h, &o), 0);
}

static __u64 table_expiry(struct fixture *f, __u8 last)
{
	struct xdpban_key k = key4(last);
	struct xdpban_ban b;

	assert_int_equal(xb_bans_get(&f->mapped.bans, &k, &b), 0);
	return b.expires_ns;
}

static struct xbd_offence recorded(struct fixture *f, __u8 last)
{
	struct xdpban_key k = key4(last);
	struct xbd_offence o;

	assert_int_equal(history_find(&f->h, &k, &o), 1);
	return o;
}

static void first_ban_is_recorded_and_left_as_made(void **state)
{
	struct fixture *f = *state;
	struct xdpban_event ev = ban(f, 1, HOUR);
	struct xbd_escalated out;

	assert_int_equal(xbd_escalate(&f->h, &f->m, &f->esc, &ev, &out), 0);
	assert_int_equal(out.repeats, 0);
	assert_int_equal(out.ban_ns, HOUR * NS_PER_SEC);
	assert_true(out.multiplier == 1);
	assert_int_equal(table_expiry(f, 1), f->now_ns + HOUR * NS_PER_SEC);
	assert_int_equal(f->h.n, 1);
	assert_int_equal(recorded(f, 1).repeats, 0);
	assert_int_equal(recorded(f, 1).last_ban, f->now_wall);
	assert_int_equal(recorded(f, 1).last_until, f->now_wall + HOUR);
	assert_int_equal(f->h.escalated, 0);
}

/* ban-time 1h, factor 2, max 10h: repeats 1, 2, 3, 4 give 2h, 4h, 8h, then 10h (capped). */
static void repeat_within_period_is_lengthened_up_to_max_ban_time(void **state)
{
	static const struct {
		__u32 prev_repeats;
		__u64 want_s;
		double multiplier;
	} rows[] = { { 0, 2 * HOUR, 2 }, { 1, 4 * HOUR, 4 }, { 2, 8 * HOUR, 8 },
		     { 3, 10 * HOUR, 10 }, { 1000000, 10 * HOUR, 10 } };
	struct fixture *f = *state;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct xdpban_event ev = ban(f, 2, HOUR);
		struct xbd_escalated out;

		had_offence(f, 2, rows[i].prev_repeats, 600); /* ended 10 minutes ago */
		assert_int_equal(xbd_escalate(&f->h, &f->m, &f->esc, &ev, &out), 0);
		assert_int_equal(out.repeats, rows[i].prev_repeats + 1);
		assert_int_equal(out.ban_ns, rows[i].want_s * NS_PER_SEC);
		assert_true(out.multiplier == rows[i].multiplier);
		assert_int_equal(table_expiry(f, 2), f->now_ns + rows[i].want_s * NS_PER_SEC);
		assert_int_equal(recorded(f, 2).repeats, rows[i].prev_repeats + 1);
		assert_int_equal(recorded(f, 2).last_until, f->now_wall + (time_t)rows[i].want_s);
		assert_int_equal(f->h.escalated, i + 1);
	}
	assert_int_equal(f->h.n, 1);
}

static void ban_after_the_period_starts_over(void **state)
{
	struct fixture *f = *state;
	struct xdpban_event ev = ban(f, 3, HOUR);
	struct xbd_escalated out;

	had_offence(f, 3, 5, 24 * HOUR); /* ended a whole period ago: not a repeat */
	assert_int_equal(xbd_escalate(&f->h, &f->m, &f->esc, &ev, &out), 0);
	assert_int_equal(out.repeats, 0);
	assert_int_equal(out.ban_ns, HOUR * NS_PER_SEC);
	assert_int_equal(table_expiry(f, 3), f->now_ns + HOUR * NS_PER_SEC);
	assert_int_equal(recorded(f, 3).repeats, 0);
	/* a second short of the period is a repeat */
	had_offence(f, 3, 0, 24 * HOUR - 1);
	assert_int_equal(xbd_escalate(&f->h, &f->m, &f->esc, &ev, &out), 0);
	assert_int_equal(out.repeats, 1);
	assert_int_equal(table_expiry(f, 3), f->now_ns + 2 * HOUR * NS_PER_SEC);
}

static void escalation_off_counts_repeats_but_keeps_the_length(void **state)
{
	struct fixture *f = *state;
	struct xdpban_event ev = ban(f, 4, HOUR);
	struct xbd_escalated out;

	f->esc.enabled = false;
	had_offence(f, 4, 2, 60);
	assert_int_equal(xbd_escalate(&f->h, &f->m, &f->esc, &ev, &out), 0);
	assert_int_equal(out.repeats, 3);
	assert_int_equal(out.ban_ns, HOUR * NS_PER_SEC);
	assert_true(out.multiplier == 1);
	assert_int_equal(table_expiry(f, 4), f->now_ns + HOUR * NS_PER_SEC);
	assert_int_equal(f->h.escalated, 0);
}

/* A permanent ban stays permanent; one lifted by hand that comes back is a repeat. */
static void permanent_bans_are_repeats_and_never_lengthened(void **state)
{
	struct fixture *f = *state;
	struct xdpban_event ev = ban(f, 5, 0);
	struct xbd_offence prev = { .key = key4(5), .last_ban = f->now_wall - 86400 * 30 };
	struct xbd_escalated out;

	assert_int_equal(xbd_history_put(&f->h, &prev), 0); /* last_until 0: was permanent */
	assert_int_equal(xbd_escalate(&f->h, &f->m, &f->esc, &ev, &out), 0);
	assert_int_equal(out.repeats, 1);
	assert_int_equal(out.ban_ns, 0);
	assert_int_equal(table_expiry(f, 5), 0);
	assert_int_equal(recorded(f, 5).last_until, 0);
	assert_int_equal(f->h.escalated, 0);
}

/* With no ban table to write, the ban stands as the data path made it, and that is said. */
/* A repeat whose ban is already gone, or was replaced by a newer one, before escalation saw
 * it: nothing is lengthened, so nothing counts as escalated, and the history keeps the length
 * the ban had. */
static void a_ban_gone_or_replaced_is_not_escalated(void **state)
{
	struct fixture *f = *state;
	struct xdpban_event ev = ban(f, 7, HOUR);
	struct xdpban_key k = key4(7);
	struct xbd_escalated out;

	had_offence(f, 7, 0, 60);
	assert_int_equal(xb_bans_remove(&f->mapped.bans, &k), 0);
	assert_int_equal(xbd_escalate(&f->h, &f->m, &f->esc, &ev, &out), 0);
	assert_int_equal(out.repeats, 1);
	assert_int_equal(out.ban_ns, HOUR * NS_PER_SEC);
	assert_true(out.multiplier == 1);
	assert_int_equal(recorded(f, 7).last_until, f->now_wall + HOUR);
	assert_int_equal(f->h.escalated, 0);

	ev = ban(f, 7, HOUR);
	ev.time_ns -= NS_PER_SEC; /* the event of an earlier ban than the one in the table */
	assert_int_equal(xbd_escalate(&f->h, &f->m, &f->esc, &ev, &out), 0);
	assert_int_equal(out.repeats, 2);
	assert_true(out.multiplier == 1);
	assert_int_equal(table_expiry(f, 7), f->now_ns + HOUR * NS_PER_SEC);
	assert_int_equal(f->h.escalated, 0);
}

static void unmappable_ban_table_leaves_the_ban_as_made(void **state)
{
	struct fixture *f = *state;
	struct xdpban_event ev = ban(f, 6, HOUR);
	struct xb_maps none = { XB_MAPS_NONE, .ncpus = 1 };
	struct xbd_escalated out;

	had_offence(f, 6, 0, 60);
	assert_true(xbd_escalate(&f->h, &none, &f->esc, &ev, &out) < 0);
	assert_int_equal(out.repeats, 1);
	assert_int_equal(out.ban_ns, HOUR * NS_PER_SEC);
	assert_true(out.multiplier == 1);
	assert_int_equal(recorded(f, 6).repeats, 1);
	assert_int_equal(recorded(f, 6).last_until, f->now_wall + HOUR);
	assert_int_equal(f->h.escalated, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(history_puts_overwrites_forgets_and_iterates),
		cmocka_unit_test_setup_teardown(first_ban_is_recorded_and_left_as_made, setup,
						teardown),
		cmocka_unit_test_setup_teardown(repeat_within_period_is_lengthened_up_to_max_ban_time,
						setup, teardown),
		cmocka_unit_test_setup_teardown(ban_after_the_period_starts_over, setup, teardown),
		cmocka_unit_test_setup_teardown(escalation_off_counts_repeats_but_keeps_the_length,
						setup, teardown),
		cmocka_unit_test_setup_teardown(permanent_bans_are_repeats_and_never_lengthened,
						setup, teardown),
		cmocka_unit_test_setup_teardown(a_ban_gone_or_replaced_is_not_escalated, setup,
						teardown),
		cmocka_unit_test_setup_teardown(unmappable_ban_table_leaves_the_ban_as_made, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
