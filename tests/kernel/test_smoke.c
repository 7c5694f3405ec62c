/* test_smoke.c - the data path loads, and the report program counts and bans with the
 * default threshold. The first test to fail when the build or the kernel is wrong. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "dp.h"

static int setup(void **state)
{
	static struct dp dp;

	if (!dp_can_load())
		return 0;
	if (dp_open(&dp, NULL))
		return -1;
	*state = &dp;
	return 0;
}

static int teardown(void **state)
{
	if (*state)
		dp_close(*state);
	return 0;
}

static void report_bans_on_eleventh_error(void **state)
{
	const __u8 addr[4] = { 192, 0, 2, 7 };
	struct xdpban_report_req out;

	if (!*state)
		skip();
	for (int i = 1; i <= 10; i++) {
		assert_int_equal(dp_report(*state, XDPBAN_FAMILY_INET, addr, 1, &out), 0);
		assert_int_equal(out.status, XDPBAN_REPORT_COUNTED);
		assert_int_equal(out.new_count, i);
	}
	assert_int_equal(dp_report(*state, XDPBAN_FAMILY_INET, addr, 1, &out), 0);
	assert_int_equal(out.status, XDPBAN_REPORT_BANNED);
	assert_int_equal(out.new_count, 11);
	assert_int_equal(dp_report(*state, XDPBAN_FAMILY_INET, addr, 1, &out), 0);
	assert_int_equal(out.status, XDPBAN_REPORT_ALREADY_BANNED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(report_bans_on_eleventh_error),
	};

	return cmocka_run_group_tests_name("smoke", tests, setup, teardown);
}
