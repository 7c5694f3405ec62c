/* test_time_parse.c - the times an operator writes (user/lib/clock.c, xb_time_parse, behind
 * `xdpban events --since`): RFC 3339 in UTC or with an offset, with a fraction dropped; a
 * duration ago through the one duration parser; "@" and Unix seconds; what it refuses (a bare
 * number, a bad date, the future, past 9999) with one line naming the option; and that what
 * xb_time_format prints parses back to the same second. Pure functions: no root, no maps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include "libxdpban.h"

#define NOW ((time_t)1796450400) /* 2026-12-05T06:00:00Z */

static time_t parsed(const char *text)
{
	char err[XB_ERRLEN];
	time_t t = -1;

	if (xb_time_parse("--since", text, NOW, &t, err, sizeof(err)))
		fail_msg("'%s' refused: %s", text, err);
	return t;
}

static void rfc3339(void **state)
{
	(void)state;
	assert_int_equal(parsed("2026-12-05T06:00:00Z"), NOW);
	assert_int_equal(parsed("2026-12-05t06:00:00z"), NOW);
	assert_int_equal(parsed("2026-12-05T05:59:59.999Z"), NOW - 1);
	assert_int_equal(parsed("2026-12-05T07:00:00+01:00"), NOW);
	assert_int_equal(parsed("2026-12-04T23:30:00-06:30"), NOW);
	assert_int_equal(parsed("1970-01-01T00:00:00Z"), 0);
	assert_int_equal(parsed("2000-02-29T00:00:00Z"), 951782400);
	assert_int_equal(parsed("2024-12-31T23:59:60Z"), 1735689600); /* a leap second */
}

static void ago_and_unix(void **state)
{
	(void)state;
	assert_int_equal(parsed("10m"), NOW - 600);
	assert_int_equal(parsed("2h"), NOW - 7200);
	assert_int_equal(parsed("1d"), NOW - 86400);
	assert_int_equal(parsed("1d12h"), NOW - 86400 - 43200);
	assert_int_equal(parsed("@1796450000"), 1796450000);
	assert_int_equal(parsed("@0"), 0);
}

static void format_parses_back(void **state)
{
	static const time_t walls[] = { 0, 1, 951782400, 1735689599, NOW };
	char text[32];

	(void)state;
	for (size_t i = 0; i < sizeof(walls) / sizeof(walls[0]); i++) {
		assert_int_equal(xb_time_format(walls[i], text, sizeof(text)), 0);
		assert_int_equal(parsed(text), walls[i]);
	}
}

static const struct bad {
	const char *text;
	int ret;
	const char *why; /* after "bad --since 'TEXT': " */
} bads[] = {
	{ "", -EINVAL, NULL },
	{ "90", -EINVAL, NULL }, /* a bare number: not a time (the CLI takes it as a seq) */
	{ "abc", -EINVAL, NULL },
	{ "10x", -EINVAL, NULL },
	{ "-10m", -EINVAL, NULL },
	{ "@", -EINVAL, NULL },
	{ "@-5", -EINVAL, NULL },
	{ "@12a", -EINVAL, NULL },
	{ "@1234567890123", -EINVAL, NULL },
	{ "2026-12-05", -EINVAL, NULL },
	{ "2026-12-05T06:00:00", -EINVAL, NULL },
	{ "2026-12-05 06:00:00Z", -EINVAL, NULL },
	{ "2026-13-05T06:00:00Z", -EINVAL, NULL },
	{ "2026-02-29T06:00:00Z", -EINVAL, NULL },
	{ "2026-12-05T24:00:00Z", -EINVAL, NULL },
	{ "2026-12-05T06:00:00.Z", -EINVAL, NULL },
	{ "2026-12-05T06:00:00+1:00", -EINVAL, NULL },
	{ "2026-12-05T06:00:00Zjunk", -EINVAL, NULL },
	{ "2026-12-05T06:00:01Z", -ERANGE, "in the future" },
	{ "@1796450401", -ERANGE, "in the future" },
	{ "@999999999999", -ERANGE, "after 9999" },
	{ "1969-12-31T23:59:59Z", -ERANGE, "before 1970" },
};

static void refused_in_one_line(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		char err[XB_ERRLEN] = "", want[XB_ERRLEN];
		time_t t = 12345;

		assert_int_equal(xb_time_parse("--since", bads[i].text, NOW, &t, err, sizeof(err)),
				 bads[i].ret);
		assert_int_equal(t, 12345); /* untouched */
		if (bads[i].why)
			snprintf(want, sizeof(want), "bad --since '%s': %s", bads[i].text, bads[i].why);
		else
			snprintf(want, sizeof(want),
				 "bad --since '%s': expected a time: RFC 3339 (2026-12-05T06:00:00Z), a "
				 "duration ago (10m, 2h, 1d) or @UNIX-SECONDS",
				 bads[i].text);
		assert_string_equal(err, want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rfc3339),
		cmocka_unit_test(ago_and_unix),
		cmocka_unit_test(format_parses_back),
		cmocka_unit_test(refused_in_one_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
