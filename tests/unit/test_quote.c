/* test_quote.c - how a message writes what it shows (user/lib/quote.c): what it quotes stays
 * one line of printable ASCII, and a count takes the noun of its number ("1 entry", "2
 * entries", "0 entries"). Pure functions: no root, no maps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include "libxdpban.h"

static void plural_takes_the_noun_of_the_number(void **state)
{
	char line[64];

	(void)state;
	assert_string_equal(xb_plural(1, "entry", "entries"), "entry");
	assert_string_equal(xb_plural(0, "entry", "entries"), "entries");
	assert_string_equal(xb_plural(2, "entry", "entries"), "entries");
	assert_string_equal(xb_plural(11, "offender", "offenders"), "offenders");
	assert_string_equal(xb_plural(~0ull, "ban", "bans"), "bans");
	snprintf(line, sizeof(line), "%d %s", 1, xb_plural(1, "offender", "offenders"));
	assert_string_equal(line, "1 offender");
}

static void quote_keeps_one_printable_line(void **state)
{
	char out[64];

	(void)state;
	assert_string_equal(xb_quote("a b", out, sizeof(out)), "a b");
	assert_string_equal(xb_quote("a\nb\x1b", out, sizeof(out)), "a\\x0ab\\x1b");
	assert_string_equal(xb_quote("\xc3\xa9", out, sizeof(out)), "\\xc3\\xa9");
	/* cut to fit, never half an escape */
	assert_string_equal(xb_quote("\n\n", out, 8), "\\x0a");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plural_takes_the_noun_of_the_number),
		cmocka_unit_test(quote_keeps_one_printable_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
