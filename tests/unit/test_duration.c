/* test_duration.c - the one duration format of xdpban (user/lib/config.c): what
 * xb_duration_parse takes (plain seconds, or numbers with units w, d, h, m, s, largest first),
 * what it refuses and how it says so (naming the option or key it was given), and what
 * xb_duration_format prints everywhere a person reads a duration: days to seconds, zero parts
 * left out, parsed back to the same seconds. Pure functions: no root, no maps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include "libxdpban.h"

static __u32 parsed(const char *text)
{
	char err[XB_ERRLEN];
	__u32 s = 0;

	if (xb_duration_parse("window", text, &s, err, sizeof(err)))
		fail_msg("'%s' refused: %s", text, err);
	return s;
}

static void parse_accepts_seconds_and_units(void **state)
{
	assert_int_equal(parsed("90"), 90);
	assert_int_equal(parsed("45s"), 45);
	assert_int_equal(parsed("15m"), 900);
	assert_int_equal(parsed("2h"), 7200);
	assert_int_equal(parsed("7d"), 604800);
	assert_int_equal(parsed("1w"), 604800);
	assert_int_equal(parsed("1d12h"), 129600);
	assert_int_equal(parsed("2w3d4h5m6s"), 2 * 604800 + 3 * 86400 + 4 * 3600 + 5 * 60 + 6);
	assert_int_equal(parsed("23h59m59s"), 86399);
	assert_int_equal(parsed("3650d"), XDPBAN_TIME_MAX_S);
}

/* Each refusal is one line naming what was given and what a duration looks like. */
static void parse_refuses_with_the_option_named(void **state)
{
	static const char *const bad[] = { "", "1y", "1w2", "1h1h", "30m1h", "h", "1.5h", "-1",
					   " 1", "1 h", "1d 2h", "0x10", "1234567890123" };
	char err[XB_ERRLEN];
	__u32 s = 7;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(xb_duration_parse("--for", bad[i], &s, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "bad --for '"));
		assert_non_null(strstr(err, "a duration is seconds (90) or numbers with units w, d, "
					    "h, m, s, largest first (15m, 2h, 1d12h, 1w)"));
		assert_null(strchr(err, '\n'));
	}
	assert_int_equal(xb_duration_parse("--for", "1y", &s, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "bad --for '1y': a duration is seconds (90) or numbers with units "
				 "w, d, h, m, s, largest first (15m, 2h, 1d12h, 1w)");
	assert_int_equal(xb_duration_parse("ban-time", "0", &s, err, sizeof(err)), -ERANGE);
	assert_string_equal(err, "ban-time 0 out of range: must be 1s..3650d (10 years)");
	assert_int_equal(xb_duration_parse("ban-time", "522w", &s, err, sizeof(err)), -ERANGE);
	assert_int_equal(xb_duration_parse("ban-time", "3650d1s", &s, err, sizeof(err)), -ERANGE);
	assert_int_equal(s, 7); /* untouched by every refusal */
}

static void expect_format(unsigned long long seconds, const char *want)
{
	char buf[XB_DURATION_TEXT_MAX];

	assert_int_equal(xb_duration_format(seconds, buf, sizeof(buf)), 0);
	assert_string_equal(buf, want);
}

/* One format for settings, times left and log lines: never "1d0h", never "604800s". */
static void format_leaves_out_zero_parts(void **state)
{
	char small[XB_DURATION_TEXT_MAX - 1] = "x";

	expect_format(0, "0s");
	expect_format(45, "45s");
	expect_format(60, "1m");
	expect_format(3599, "59m59s");
	expect_format(7200, "2h");
	expect_format(86399, "23h59m59s");
	expect_format(86400, "1d");
	expect_format(90000, "1d1h");
	expect_format(604800, "7d");
	expect_format(604801, "7d1s");
	expect_format(XDPBAN_TIME_MAX_S, "3650d");
	expect_format(18446744073709551615ull, "213503982334601d7h15s");
	assert_int_equal(xb_duration_format(60, small, sizeof(small)), -ENOSPC);
	assert_string_equal(small, "");
}

/* What the formatter prints, the parser takes back to the same seconds. */
static void format_parses_back(void **state)
{
	char buf[XB_DURATION_TEXT_MAX];

	for (__u32 s = 1; s < XDPBAN_TIME_MAX_S; s = s * 3 + 7) {
		assert_int_equal(xb_duration_format(s, buf, sizeof(buf)), 0);
		assert_int_equal(parsed(buf), s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_accepts_seconds_and_units),
		cmocka_unit_test(parse_refuses_with_the_option_named),
		cmocka_unit_test(format_leaves_out_zero_parts),
		cmocka_unit_test(format_parses_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
