/* lib_checks.h - what the tests of the libraries (tests/unit/test_parse.c, test_control.c,
 * tests/kernel/test_bans.c, test_control_maps.c) share: a prefix from text (P), the control
 * handler's reply to a request as JSON and its fields, and on the maps fixture the verdict of
 * a TCP frame, the counts of policy entries and bans, a ban's seconds left; MAPS_TEST, a test
 * on the fixture. Header only, like maps_fixture.h (the benchmarks link the harness without
 * cmocka); include it after <cmocka.h>. Test support only. */
#ifndef XDPBAN_TEST_LIB_CHECKS_H
#define XDPBAN_TEST_LIB_CHECKS_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <json-c/json.h>
#include "control.h"
#include "dp.h"
#include "libxdpban.h"
#include "maps_fixture.h"
#include "pkt.h"
#include "xdpban_time.h"

static inline struct xb_prefix P(const char *text)
{
	struct xb_prefix p;
	char err[XB_ERRLEN];

	if (xb_prefix_parse(text, &p, err, sizeof(err)))
		fail_msg("test prefix '%s' does not parse: %s", text, err);
	return p;
}

static inline int lib_setup(void **state)
{
	return maps_fixture_open(state, NULL);
}

static inline int lib_teardown(void **state)
{
	return maps_fixture_close(state);
}

/* Runs an Ethernet + IPv4 + TCP frame from src with the given TCP flags (SYN+FIN is
 * malformed), built by the packet builder so that no header is accessed unaligned. */
static inline __u32 run_tcp4(struct maps_fixture *f, const char *src, __u8 flags)
{
	const struct pkt_spec spec = {
		.src = src,
		.dst = "203.0.113.254",
		.l4 = PKT_L4_TCP,
		.dport = PKT_SET(80),
		.tcp = { .flags = PKT_SET(flags) },
	};
	unsigned char frame[128];
	struct pkt_layout at;
	__u32 action = ~0u;

	assert_int_equal(pkt_build(&spec, frame, sizeof(frame), &at), 0);
	assert_int_equal(dp_run(&f->dp, frame, at.len, &action), 0);
	return action;
}

#define TCP_ACK 0x10
#define TCP_SYNFIN 0x03

static inline int policy_count(struct maps_fixture *f, __u8 family)
{
	return family == XDPBAN_FAMILY_INET
		       ? dp_map_count(f->m.policy4, sizeof(struct xdpban_lpm4_key))
		       : dp_map_count(f->m.policy6, sizeof(struct xdpban_lpm6_key));
}

static inline int ban_count(struct maps_fixture *f)
{
	return dp_count_bans(&f->dp);
}

/* A ban of `full` seconds made at or after t0_ns has between full minus the seconds elapsed
 * since t0 (rounded up) and full seconds left: exact bounds, however slow the machine is. */
static inline void assert_seconds_left(long long got, long long full, __u64 t0_ns)
{
	long long elapsed = (long long)((dp_now_ns() - t0_ns + NS_PER_SEC - 1) / NS_PER_SEC);

	if (got > full || got < full - elapsed)
		fail_msg("seconds_left %lld not in %lld..%lld", got, full - elapsed, full);
}

static inline struct json_object *handle(const struct xb_control_ctx *ctx, const char *request)
{
	struct json_object *reply;
	char *line = NULL;

	assert_int_equal(xb_control_handle(ctx, request, strlen(request), &line), 0);
	assert_non_null(line);
	assert_null(strchr(line, '\n')); /* one line */
	reply = json_tokener_parse(line);
	if (!reply)
		fail_msg("reply is not JSON: %s", line);
	free(line);
	return reply;
}

static inline struct json_object *get(struct json_object *obj, const char *name)
{
	struct json_object *v = NULL;

	if (!json_object_object_get_ex(obj, name, &v))
		fail_msg("no \"%s\" in %s", name, json_object_to_json_string(obj));
	return v;
}

static inline bool reply_ok(struct json_object *reply)
{
	return json_object_get_boolean(get(reply, "ok"));
}

static inline const char *reply_error(struct json_object *reply)
{
	assert_false(reply_ok(reply));
	return json_object_get_string(get(reply, "error"));
}

/* What strftime prints, the reference for xb_time_format's hand-written formatting. */
static inline void libc_stamp(time_t t, char *buf, size_t len)
{
	struct tm tm;

	assert_non_null(gmtime_r(&t, &tm));
	assert_true(strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) > 0);
}

/* Handles request and checks its error reply: every byte of the line printable ASCII (so
 * valid UTF-8, whatever the request held), and the error exactly as expected. */
static inline void expect_ascii_error(const struct xb_control_ctx *ctx, const char *request,
				      const char *error)
{
	struct json_object *reply;
	char *line = NULL;

	assert_int_equal(xb_control_handle(ctx, request, strlen(request), &line), 0);
	assert_non_null(line);
	for (const unsigned char *c = (const unsigned char *)line; *c; c++)
		if (*c < 0x20 || *c > 0x7e)
			fail_msg("byte 0x%02x at %zu of the reply to %s: %s", *c,
				 (size_t)((const char *)c - line), request, line);
	reply = json_tokener_parse(line);
	if (!reply)
		fail_msg("reply is not JSON: %s", line);
	assert_string_equal(reply_error(reply), error);
	json_object_put(reply);
	free(line);
}

#define MAPS_TEST(fn) cmocka_unit_test_setup_teardown(fn, lib_setup, lib_teardown)

#endif /* XDPBAN_TEST_LIB_CHECKS_H */
