/* test_evring.c - the ring of the event stream's recent lines (user/common/evring.c): events
 * are numbered from 1 and each comes back with its '\n' under its own number; when the ring
 * is full the oldest goes and nothing else, so that a subscriber's number finds its event or
 * nothing, never another's; an empty ring holds nothing. Pure functions: no root, no maps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include "evring.h"

static void push_numbered(struct xbd_evring *r, __u64 seq)
{
	char line[32];

	snprintf(line, sizeof(line), "{\"seq\":%llu}", (unsigned long long)seq);
	assert_int_equal(xbd_evring_push(r, line), 0);
}

static void holds(const struct xbd_evring *r, __u64 seq)
{
	const struct xbd_evline *l = xbd_evring_get(r, seq);
	char want[32];

	assert_non_null(l);
	snprintf(want, sizeof(want), "{\"seq\":%llu}\n", (unsigned long long)seq);
	assert_string_equal(l->text, want);
	assert_int_equal(l->len, strlen(want));
}

static void empty_holds_nothing(void **state)
{
	struct xbd_evring r;

	(void)state;
	assert_int_equal(xbd_evring_init(&r), 0);
	assert_int_equal(r.last, 0);
	assert_int_equal(xbd_evring_oldest(&r), 1);
	assert_null(xbd_evring_get(&r, 0));
	assert_null(xbd_evring_get(&r, 1));
	xbd_evring_free(&r);
}

static void numbered_from_one(void **state)
{
	struct xbd_evring r;

	(void)state;
	assert_int_equal(xbd_evring_init(&r), 0);
	for (__u64 seq = 1; seq <= 3; seq++)
		push_numbered(&r, seq);
	assert_int_equal(r.last, 3);
	assert_int_equal(xbd_evring_oldest(&r), 1);
	for (__u64 seq = 1; seq <= 3; seq++)
		holds(&r, seq);
	assert_null(xbd_evring_get(&r, 0));
	assert_null(xbd_evring_get(&r, 4)); /* not yet */
	xbd_evring_free(&r);
}

/* One more than the ring holds, then as many again: each time exactly the oldest goes. */
static void full_ring_drops_the_oldest(void **state)
{
	const __u64 n = XBD_EVRING_EVENTS;
	struct xbd_evring r;

	(void)state;
	assert_int_equal(xbd_evring_init(&r), 0);
	for (__u64 seq = 1; seq <= n; seq++)
		push_numbered(&r, seq);
	assert_int_equal(xbd_evring_oldest(&r), 1);
	holds(&r, 1);
	holds(&r, n);
	push_numbered(&r, n + 1);
	assert_int_equal(xbd_evring_oldest(&r), 2);
	assert_null(xbd_evring_get(&r, 1)); /* its slot now holds n + 1 */
	holds(&r, 2);
	holds(&r, n + 1);
	for (__u64 seq = n + 2; seq <= 2 * n + 1; seq++)
		push_numbered(&r, seq);
	assert_int_equal(xbd_evring_oldest(&r), n + 2);
	assert_null(xbd_evring_get(&r, n + 1));
	holds(&r, n + 2);
	holds(&r, 2 * n + 1);
	assert_null(xbd_evring_get(&r, 2 * n + 2));
	xbd_evring_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(empty_holds_nothing),
		cmocka_unit_test(numbered_from_one),
		cmocka_unit_test(full_ring_drops_the_oldest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
