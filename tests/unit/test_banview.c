/* test_banview.c - the bans an operator asks to see (user/common/banview.h), on a `bans` reply
 * built in memory: each filter (reason, origin, prefix, IPv4 and IPv6) keeps exactly the bans
 * it names; each sort key gives its order, ties broken by prefix; bad sort keys and origins are
 * refused with one line. Pure: no root, no maps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include "banview.h"

/* Five bans: prefix, reason, count, seconds left, started (NULL: not recorded); the origins of
 * the fleet's two. */
static const char reply_text[] =
	"{\"bans\":["
	"{\"prefix\":\"192.0.2.7\",\"reason\":\"errors\",\"count\":5,\"seconds_left\":600,"
	"\"started\":\"2026-12-01T10:00:00Z\"},"
	"{\"prefix\":\"2001:db8:1::/64\",\"reason\":\"reported\",\"count\":9,\"seconds_left\":30,"
	"\"started\":\"2026-12-01T11:00:00Z\"},"
	"{\"prefix\":\"198.51.100.0/24\",\"reason\":\"manual\",\"count\":0,\"seconds_left\":-1,"
	"\"started\":null},"
	"{\"prefix\":\"192.0.2.9\",\"reason\":\"manual\",\"count\":0,\"seconds_left\":600,"
	"\"started\":\"2026-12-01T09:00:00Z\"},"
	"{\"prefix\":\"203.0.113.5\",\"reason\":\"errors\",\"count\":5,\"seconds_left\":3600,"
	"\"started\":\"2026-12-01T12:00:00Z\"}],"
	"\"origins\":{\"203.0.113.5\":\"web-2\",\"192.0.2.9\":\"web-3\"}}";

/* The prefixes the view leaves, in its order, joined by spaces. */
static const char *apply(const struct xb_ban_view *v)
{
	static char out[512];
	struct json_object *reply = json_tokener_parse(reply_text), *bans;
	size_t used = 0;

	assert_non_null(reply);
	assert_int_equal(xb_ban_view_apply(reply, v), 0);
	assert_true(json_object_object_get_ex(reply, "bans", &bans));
	out[0] = '\0';
	for (size_t i = 0; i < json_object_array_length(bans); i++) {
		struct json_object *b = json_object_array_get_idx(bans, i), *p;

		assert_true(json_object_object_get_ex(b, "prefix", &p));
		used += snprintf(out + used, sizeof(out) - used, "%s%s", i ? " " : "",
				 json_object_get_string(p));
	}
	json_object_put(reply);
	return out;
}

static void reason_keeps_only_its_bans(void **state)
{
	struct xb_ban_view v = { .by_reason = true };
	char err[XB_ERRLEN];

	assert_int_equal(xb_reason_parse("manual", &v.reason, err, sizeof(err)), 0);
	assert_string_equal(apply(&v), "198.51.100.0/24 192.0.2.9");
	assert_int_equal(xb_reason_parse("errors", &v.reason, err, sizeof(err)), 0);
	assert_string_equal(apply(&v), "192.0.2.7 203.0.113.5");
	assert_int_equal(xb_reason_parse("banned", &v.reason, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown reason 'banned': expected errors, manual, reported");
}

static void origin_tells_local_manual_and_fleet_apart(void **state)
{
	struct xb_ban_view v = {};
	char err[XB_ERRLEN];

	assert_int_equal(xb_ban_origin_parse("local", &v, err, sizeof(err)), 0);
	assert_string_equal(apply(&v), "192.0.2.7 2001:db8:1::/64");
	assert_int_equal(xb_ban_origin_parse("manual", &v, err, sizeof(err)), 0);
	assert_string_equal(apply(&v), "198.51.100.0/24");
	assert_int_equal(xb_ban_origin_parse("remote", &v, err, sizeof(err)), 0);
	assert_string_equal(apply(&v), "192.0.2.9 203.0.113.5");
	assert_int_equal(xb_ban_origin_parse("web-3", &v, err, sizeof(err)), 0);
	assert_string_equal(apply(&v), "192.0.2.9");
	assert_int_equal(xb_ban_origin_parse("web 3", &v, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad origin 'web 3'"));
}

static void prefix_keeps_the_bans_inside_it(void **state)
{
	struct xb_ban_view v = { .by_prefix = true };
	char err[XB_ERRLEN];

	assert_int_equal(xb_prefix_parse("192.0.2.0/24", &v.within, err, sizeof(err)), 0);
	assert_string_equal(apply(&v), "192.0.2.7 192.0.2.9");
	assert_int_equal(xb_prefix_parse("2001:db8::/32", &v.within, err, sizeof(err)), 0);
	assert_string_equal(apply(&v), "2001:db8:1::/64");
	/* a ban wider than the prefix asked about is not inside it */
	assert_int_equal(xb_prefix_parse("198.51.100.0/25", &v.within, err, sizeof(err)), 0);
	assert_string_equal(apply(&v), "");
	assert_int_equal(xb_prefix_parse("192.0.2.7", &v.within, err, sizeof(err)), 0);
	v.by_reason = true;
	v.reason = XDPBAN_REASON_ERRORS;
	assert_string_equal(apply(&v), "192.0.2.7");
}

static void each_sort_key_gives_its_order(void **state)
{
	struct xb_ban_view v = {};
	char err[XB_ERRLEN];

	assert_int_equal(xb_ban_sort_parse("time", &v.sort, err, sizeof(err)), 0);
	assert_string_equal(apply(&v),
			    "203.0.113.5 2001:db8:1::/64 192.0.2.7 192.0.2.9 198.51.100.0/24");
	assert_int_equal(xb_ban_sort_parse("count", &v.sort, err, sizeof(err)), 0);
	assert_string_equal(apply(&v),
			    "2001:db8:1::/64 192.0.2.7 203.0.113.5 192.0.2.9 198.51.100.0/24");
	assert_int_equal(xb_ban_sort_parse("left", &v.sort, err, sizeof(err)), 0);
	assert_string_equal(apply(&v),
			    "2001:db8:1::/64 192.0.2.7 192.0.2.9 203.0.113.5 198.51.100.0/24");
	assert_int_equal(xb_ban_sort_parse("oldest", &v.sort, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "unknown sort key 'oldest': expected time, count or left");
}

static void no_view_changes_nothing(void **state)
{
	struct xb_ban_view v = {};

	assert_false(xb_ban_view_active(&v));
	assert_string_equal(apply(&v), "192.0.2.7 2001:db8:1::/64 198.51.100.0/24 192.0.2.9 "
				       "203.0.113.5");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reason_keeps_only_its_bans),
		cmocka_unit_test(origin_tells_local_manual_and_fleet_apart),
		cmocka_unit_test(prefix_keeps_the_bans_inside_it),
		cmocka_unit_test(each_sort_key_gives_its_order),
		cmocka_unit_test(no_view_changes_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
