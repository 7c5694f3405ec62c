/* test_log.c - the daemon's log line by line (user/common/log.c): the RFC 3339 time a line on
 * stderr starts with (UTC, milliseconds cut, not rounded), the three shapes of a line on
 * stderr, and the journal entry of a line: MESSAGE, PRIORITY, SYSLOG_IDENTIFIER, then the
 * fields of a line about a source under the names xdpband(8) documents, in the order of their
 * table, each only when the line has it. The clock is given, nothing is sent or written. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include "log.h"

/* 2026-12-05T02:50:01Z */
#define DEC_5_2026 1796439001

static const char *stamp_of(time_t s, long ns)
{
	static char buf[64];
	struct timespec t = { .tv_sec = s, .tv_nsec = ns };

	assert_int_equal(xbd_format_stamp(&t, buf, sizeof(buf)), 0);
	return buf;
}

static void stamp_is_rfc3339_utc_with_milliseconds(void **state)
{
	assert_string_equal(stamp_of(DEC_5_2026, 123000000), "2026-12-05T02:50:01.123Z");
	assert_string_equal(stamp_of(0, 0), "1970-01-01T00:00:00.000Z");
	assert_string_equal(stamp_of(1709251199, 7000000), "2024-02-29T23:59:59.007Z");
}

/* A line at 59.9996 s is still of that second: rounding would print a time not yet come. */
static void stamp_cuts_milliseconds(void **state)
{
	assert_string_equal(stamp_of(DEC_5_2026, 999999999), "2026-12-05T02:50:01.999Z");
	assert_string_equal(stamp_of(DEC_5_2026, 999999), "2026-12-05T02:50:01.000Z");
}

static const char *line_of(enum xbd_log_route route, enum xbd_log_level level, const char *text)
{
	static char buf[XBD_LOG_LINE_MAX + 64];
	struct timespec now = { .tv_sec = DEC_5_2026, .tv_nsec = 123456789 };

	xbd_log_line(route, &now, level, text, buf, sizeof(buf));
	return buf;
}

static void line_shapes(void **state)
{
	assert_string_equal(line_of(XBD_ROUTE_STAMPED, XBD_LOG_WARN, "state file: disk full"),
			    "2026-12-05T02:50:01.123Z xdpband: warning: state file: disk full\n");
	assert_string_equal(line_of(XBD_ROUTE_STAMPED, XBD_LOG_INFO, "ban 192.0.2.5 for 1h"),
			    "2026-12-05T02:50:01.123Z xdpband: ban 192.0.2.5 for 1h\n");
	assert_string_equal(line_of(XBD_ROUTE_PLAIN, XBD_LOG_ERR, "cannot read config x"),
			    "xdpband: error: cannot read config x\n");
	assert_string_equal(line_of(XBD_ROUTE_STREAM, XBD_LOG_ERR, "cannot read config x"),
			    "<3>error: cannot read config x\n");
	assert_string_equal(line_of(XBD_ROUTE_STREAM, XBD_LOG_DEBUG, "sweep"), "<7>debug: sweep\n");
	assert_string_equal(line_of(XBD_ROUTE_STREAM, XBD_LOG_INFO, "running"), "<6>running\n");
}

/* The items of an entry as one string, "A|B|C", each checked against its iov_len. */
static const char *items_of(const struct xbd_journal_entry *j)
{
	static char buf[4096];
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < j->n; i++) {
		const char *item = j->iov[i].iov_base;

		assert_int_equal(j->iov[i].iov_len, strlen(item));
		used += snprintf(buf + used, sizeof(buf) - used, "%s%s", i ? "|" : "", item);
	}
	return buf;
}

static void entry_of_a_plain_line(void **state)
{
	struct xbd_journal_entry j;

	xbd_journal_entry(&j, XBD_LOG_WARN, "fleet: redis away", NULL);
	assert_int_equal(j.n, 3);
	assert_string_equal(items_of(&j), "MESSAGE=warning: fleet: redis away|PRIORITY=4|"
					  "SYSLOG_IDENTIFIER=xdpband");
	xbd_journal_entry(&j, XBD_LOG_INFO, "running", &(struct xbd_log_about){ 0 });
	assert_string_equal(items_of(&j), "MESSAGE=running|PRIORITY=6|SYSLOG_IDENTIFIER=xdpband");
}

static void entry_of_a_ban(void **state)
{
	struct xbd_log_about a = { 0 };
	struct xbd_journal_entry j;

	xbd_about_who(&a, "192.0.2.5");
	xbd_about_set(&a, XBD_LF_ORIGIN, XBD_ORIGIN_LOCAL);
	xbd_about_set(&a, XBD_LF_COUNT, "%u", 4u);
	xbd_about_set(&a, XBD_LF_REASON, "%s", "errors");
	xbd_about_set(&a, XBD_LF_CLASSES, "%s", "malformed,closed_port");
	xbd_journal_entry(&j, XBD_LOG_INFO, "ban 192.0.2.5 for 1h", &a);
	assert_int_equal(j.n, 8);
	assert_string_equal(items_of(&j),
			    "MESSAGE=ban 192.0.2.5 for 1h|PRIORITY=6|SYSLOG_IDENTIFIER=xdpband|"
			    "SOURCE=192.0.2.5|REASON=errors|COUNT=4|CLASSES=malformed,closed_port|"
			    "ORIGIN=local");
}

/* An address is a SOURCE, anything wider a PREFIX: a line has one of the two. */
static void who_is_source_or_prefix(void **state)
{
	struct xbd_log_about a = { 0 };
	struct xbd_journal_entry j;

	xbd_about_who(&a, "2001:db8:1:2::/64");
	xbd_about_set(&a, XBD_LF_ORIGIN, "node-b");
	xbd_journal_entry(&j, XBD_LOG_INFO, "fleet: unban 2001:db8:1:2::/64 from node-b", &a);
	assert_string_equal(items_of(&j), "MESSAGE=fleet: unban 2001:db8:1:2::/64 from node-b|"
					  "PRIORITY=6|SYSLOG_IDENTIFIER=xdpband|"
					  "PREFIX=2001:db8:1:2::/64|ORIGIN=node-b");
	assert_string_equal(a.value[XBD_LF_SOURCE], "");
	memset(&a, 0, sizeof(a));
	xbd_about_who(&a, "2001:db8::7");
	assert_string_equal(a.value[XBD_LF_SOURCE], "2001:db8::7");
	assert_string_equal(a.value[XBD_LF_PREFIX], "");
}

/* A value or a message too long for its room is cut, never written past it. */
static void long_values_are_cut(void **state)
{
	char big[2 * XBD_LOG_LINE_MAX];
	struct xbd_log_about a = { 0 };
	struct xbd_journal_entry j;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	xbd_about_set(&a, XBD_LF_REASON, "%s", big);
	assert_int_equal(strlen(a.value[XBD_LF_REASON]), XBD_LOG_FIELD_MAX - 1);
	xbd_journal_entry(&j, XBD_LOG_WARN, big, &a);
	assert_int_equal(j.n, 4);
	assert_int_equal(j.iov[0].iov_len, sizeof(j.message) - 1);
	assert_int_equal(j.iov[3].iov_len, strlen("REASON=") + XBD_LOG_FIELD_MAX - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stamp_is_rfc3339_utc_with_milliseconds),
		cmocka_unit_test(stamp_cuts_milliseconds),
		cmocka_unit_test(line_shapes),
		cmocka_unit_test(entry_of_a_plain_line),
		cmocka_unit_test(entry_of_a_ban),
		cmocka_unit_test(who_is_source_or_prefix),
		cmocka_unit_test(long_values_are_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
