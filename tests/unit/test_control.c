/* test_control.c - the control protocol without maps (user/common/control.c,
 * control_client.c): requests refused as malformed, oversized or holding a NUL, error replies
 * that escape what they quote, a read-only peer refused changes, the protocol's other commands
 * handed to the daemon, whose errors are the reply's; and the client reading one line and
 * reporting closed and silent peers. Pure: no root, no maps (the client talks to a socketpair).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "control.h"
#include "dp.h"
#include "maps_fixture.h"
#include "libxdpban.h"
#include "pkt.h"
#include "xdpban_time.h"

#include "lib_checks.h"

/* --- the control handler without maps (no root) -------------------------------------------- */

/* A request and a piece of the error it must get. */
struct refusal {
	const char *request, *says;
};

/* Every request gets an error reply containing its `says`, from a handler without maps. */
static void expect_refusals(const struct refusal *rows, size_t n)
{
	struct xb_maps none = { .report_prog = -1 };
	struct xb_control_ctx ctx = { .maps = &none };

	for (size_t i = 0; i < n; i++) {
		struct json_object *reply = handle(&ctx, rows[i].request);
		const char *error = reply_error(reply);

		if (!strstr(error, rows[i].says))
			fail_msg("%s: error '%s' lacks '%s'", rows[i].request, error, rows[i].says);
		json_object_put(reply);
	}
}

static void control_rejects_bad_requests(void **state)
{
	static const struct refusal rows[] = {
		{ "", "empty request" },
		{ "{\"cmd\":\"bans\"", "not valid JSON" },
		{ "cmd=bans", "not valid JSON" },
		{ "[\"bans\"]", "must be a JSON object" },
		{ "\"bans\"", "must be a JSON object" },
		{ "{\"cmd\":\"bans\"} {}", "trailing data" },
		{ "{}", "missing field \"cmd\"" },
		{ "{\"cmd\":7}", "field \"cmd\" must be a string" },
		{ "{\"cmd\":\"frob\"}", "unknown command \"frob\"" },
		{ "{\"cmd\":\"bans\",\"all\":true}", "unknown field \"all\" for \"bans\"" },
		{ "{\"cmd\":\"query\"}", "missing field \"addr\"" },
		{ "{\"cmd\":\"query\",\"addr\":5}", "field \"addr\" must be a string" },
		{ "{\"cmd\":\"query\",\"addr\":\"host.example\"}", "not an IPv4 or IPv6" },
		{ "{\"cmd\":\"query\",\"addr\":\"192.0.2.0/24\"}", "must be a single address" },
		{ "{\"cmd\":\"ban\",\"prefix\":\"192.0.2.1/24\"}", "host bits set" },
		{ "{\"cmd\":\"ban\",\"prefix\":\"192.0.2.1\",\"seconds\":\"1h\"}",
		  "\"seconds\" must be an integer" },
		{ "{\"cmd\":\"ban\",\"prefix\":\"192.0.2.1\",\"seconds\":-1}", "out of range" },
		{ "{\"cmd\":\"ban\",\"prefix\":\"192.0.2.1\",\"seconds\":315360001}", "out of range" },
		{ "{\"cmd\":\"report\",\"addr\":\"192.0.2.1\",\"count\":0}", "out of range" },
		{ "{\"cmd\":\"set\",\"key\":\"limit\"}", "missing field \"value\"" },
		/* json-c would keep the last: this would be a ban */
		{ "{\"cmd\":\"status\",\"cmd\":\"ban\"}", "field \"cmd\" appears twice" },
		{ "{\"cmd\":\"query\",\"addr\":\"192.0.2.1\",\"addr\":\"192.0.2.2\"}",
		  "field \"addr\" appears twice" },
		{ "{\"c\\u006dd\":\"status\",\"cmd\":\"ban\"}", "field \"cmd\" appears twice" },
	};
	expect_refusals(rows, sizeof(rows) / sizeof(rows[0]));
}

static void control_rejects_oversized_and_nul(void **state)
{
	struct xb_maps none = { .report_prog = -1 };
	struct xb_control_ctx ctx = { .maps = &none };
	size_t len = XB_CONTROL_REQUEST_MAX + 1;
	char *big = malloc(len), *line = NULL;
	struct json_object *reply;

	assert_non_null(big);
	memset(big, ' ', len);
	memcpy(big, "{\"cmd\":\"bans\"}", 14);
	assert_int_equal(xb_control_handle(&ctx, big, len, &line), 0);
	reply = json_tokener_parse(line);
	assert_non_null(strstr(reply_error(reply), "longer than 4096 bytes"));
	json_object_put(reply);
	free(line);
	free(big);

	assert_int_equal(xb_control_handle(&ctx, "{\"cmd\":\0\"bans\"}", 15, &line), 0);
	reply = json_tokener_parse(line);
	assert_non_null(strstr(reply_error(reply), "NUL"));
	json_object_put(reply);
	free(line);
}

/* An escaped NUL would cut a string short where json-c hands it over: "192.0.2.45\u0000/8"
 * would reach the parser as "192.0.2.45", and a member name "cmd\u0000x" as "cmd". */
static void control_refuses_escaped_nul(void **state)
{
	static const struct refusal rows[] = {
		{ "{\"cmd\":\"query\",\"addr\":\"192.0.2.45\\u0000/8\"}",
		  "field \"addr\" contains a NUL character" },
		{ "{\"cmd\":\"ban\",\"prefix\":\"192.0.2.45\\u0000/8\"}",
		  "field \"prefix\" contains a NUL character" },
		{ "{\"cmd\":\"bans\\u0000x\"}", "field \"cmd\" contains a NUL character" },
		{ "{\"cmd\":\"set\",\"key\":\"limit\\u0000\",\"value\":\"3\"}",
		  "field \"key\" contains a NUL character" },
		{ "{\"cmd\":\"set\",\"key\":\"limit\",\"value\":\"3\\u0000x\"}",
		  "field \"value\" contains a NUL character" },
		{ "{\"cmd\":\"bans\",\"cmd\\u0000x\":\"ban\"}", "a field name contains a NUL" },
		{ "{\"cmd\\u0000\" : \"bans\"}", "a field name contains a NUL" },
	};
	expect_refusals(rows, sizeof(rows) / sizeof(rows[0]));
	/* An escaped backslash followed by "u0000" is no NUL: the address is just wrong. */
	struct xb_maps none = { .report_prog = -1 };
	struct xb_control_ctx ctx = { .maps = &none };
	struct json_object *reply = handle(&ctx, "{\"cmd\":\"query\",\"addr\":\"\\\\u0000\"}");

	assert_string_equal(reply_error(reply), "not an IPv4 or IPv6 address: '\\u0000'");
	json_object_put(reply);
}

/* Error replies quote what the client sent; bytes that are not printable ASCII come back as
 * \xNN, so a reply is valid UTF-8 JSON even when the request was not valid UTF-8. */
static void control_error_replies_escape_what_they_quote(void **state)
{
	struct xb_maps none = { .report_prog = -1 };
	struct xb_control_ctx ctx = { .maps = &none };

	expect_ascii_error(&ctx, "{\"cmd\":\"query\",\"addr\":\"\xff\xfe\"}",
			   "not an IPv4 or IPv6 address: '\\xff\\xfe'");
	expect_ascii_error(&ctx, "{\"cmd\":\"ban\",\"prefix\":\"192.0.2.0/2\xd9\xa4\"}",
			   "bad prefix length in '192.0.2.0/2\\xd9\\xa4': must be 0..32");
	expect_ascii_error(&ctx, "{\"cmd\":\"\xc3\"}", "unknown command \"\\xc3\"");
	expect_ascii_error(&ctx, "{\"cmd\":\"bans\",\"\xe2\x82\":1}",
			   "unknown field \"\\xe2\\x82\" for \"bans\"");
	/* a terminal escape, decoded from JSON: the CLI prints errors, so it is escaped too */
	expect_ascii_error(&ctx, "{\"cmd\":\"query\",\"addr\":\"\\u001b[2J\"}",
			   "not an IPv4 or IPv6 address: '\\x1b[2J'");
	/* "%.40s" cuts a two-byte character in half: the half is escaped, not sent raw */
	expect_ascii_error(&ctx, "{\"cmd\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xc3\xa9\"}",
			   "unknown command \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\\xc3\"");
}

static void control_read_only_refuses_changes(void **state)
{
	static const char *const changes[] = {
		"{\"cmd\":\"ban\",\"prefix\":\"192.0.2.1\"}",
		"{\"cmd\":\"unban\",\"prefix\":\"192.0.2.1\"}",
		"{\"cmd\":\"report\",\"addr\":\"192.0.2.1\"}",
		"{\"cmd\":\"set\",\"key\":\"limit\",\"value\":\"3\"}",
	};
	struct xb_maps none = { .report_prog = -1 };
	struct xb_control_ctx ctx = { .maps = &none, .read_only = true };

	for (size_t i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
		struct json_object *reply = handle(&ctx, changes[i]);

		assert_non_null(strstr(reply_error(reply), "read-only"));
		json_object_put(reply);
	}
}

/* The daemon's hook as xdpband's is with no state file: save fails with -ENOENT. */
static int hook_command(const char *cmd, struct json_object *request, struct json_object *reply,
			char *err, size_t errlen, void *user)
{
	(*(int *)user)++;
	if (!strcmp(cmd, "save")) {
		snprintf(err, errlen, "save: no state file is configured");
		return -ENOENT;
	}
	if (strcmp(cmd, "reload"))
		return -EOPNOTSUPP;
	json_object_object_add(reply, "reloaded", json_object_new_boolean(true));
	return 0;
}

static void control_unknown_commands_go_to_the_daemon(void **state)
{
	struct xb_control_hooks hooks = { .command = hook_command };
	struct xb_maps none = { .report_prog = -1 };
	int calls = 0;
	struct xb_control_ctx ctx = { .maps = &none, .hooks = &hooks, .user = &calls };
	struct json_object *reply = handle(&ctx, "{\"cmd\":\"reload\"}");

	assert_true(reply_ok(reply));
	assert_true(json_object_get_boolean(get(reply, "reloaded")));
	assert_int_equal(calls, 1);
	json_object_put(reply);
	reply = handle(&ctx, "{\"cmd\":\"frob\"}");
	assert_string_equal(reply_error(reply), "unknown command \"frob\"");
	assert_int_equal(calls, 1); /* a name outside the protocol never reaches the daemon */
	json_object_put(reply);
}

/* A command of the daemon that fails with -ENOENT (save, with no state file) is answered with
 * its own error, not as an unknown command. */
static void control_daemon_errors_reach_the_client(void **state)
{
	struct xb_control_hooks hooks = { .command = hook_command };
	struct xb_maps none = { .report_prog = -1 };
	int calls = 0;
	struct xb_control_ctx ctx = { .maps = &none, .hooks = &hooks, .user = &calls };
	struct json_object *reply = handle(&ctx, "{\"cmd\":\"save\"}");

	assert_false(reply_ok(reply));
	assert_string_equal(reply_error(reply), "save: no state file is configured");
	assert_int_equal(calls, 1);
	json_object_put(reply);
}

/* --- the control client (no root) ---------------------------------------------------------- */

static void client_reads_one_line(void **state)
{
	const char canned[] = "{\"ok\":true,\"n\":1}\n{\"ok\":true,\"n\":2}\n";
	char err[XB_ERRLEN], *reply = NULL, got[64] = "";
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(write(sv[1], canned, strlen(canned)), (ssize_t)strlen(canned));
	assert_int_equal(xb_control_call(sv[0], "{\"cmd\":\"stats\"}", 1000, &reply, err,
					 sizeof(err)),
			 0);
	assert_string_equal(reply, "{\"ok\":true,\"n\":1}");
	free(reply);
	assert_true(read(sv[1], got, sizeof(got) - 1) > 0);
	assert_string_equal(got, "{\"cmd\":\"stats\"}\n"); /* the request, newline-terminated */
	close(sv[0]);
	close(sv[1]);
}

static void client_reports_closed_and_silent_peers(void **state)
{
	char err[XB_ERRLEN], *reply = NULL;
	int sv[2];

	/* No reply at all: the timeout is the outcome asserted, not a measure of speed. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(xb_control_call(sv[0], "{\"cmd\":\"stats\"}", 50, &reply, err,
					 sizeof(err)),
			 -ETIMEDOUT);
	assert_null(reply);
	assert_non_null(strstr(err, "no reply"));
	close(sv[0]);
	close(sv[1]);

	/* Half a line, then the peer stops writing: no reply, and no hang. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(write(sv[1], "{\"ok\":", 6), 6);
	assert_int_equal(shutdown(sv[1], SHUT_WR), 0);
	assert_int_equal(xb_control_call(sv[0], "{\"cmd\":\"stats\"}", 1000, &reply, err,
					 sizeof(err)),
			 -ECONNRESET);
	assert_non_null(strstr(err, "closed the connection"));
	/* The peer is gone altogether: the request cannot be sent, and there is no SIGPIPE. */
	close(sv[1]);
	assert_int_equal(xb_control_call(sv[0], "{\"cmd\":\"stats\"}", 1000, &reply, err,
					 sizeof(err)),
			 -EPIPE);
	assert_null(reply);
	close(sv[0]);

	/* A refusal: the server answers and closes before it reads the request; the send fails,
	 * and the answer is what the caller gets. */
	static const char refusal[] = "{\"ok\":false,\"error\":\"permission denied\"}\n";

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(write(sv[1], refusal, sizeof(refusal) - 1), sizeof(refusal) - 1);
	close(sv[1]);
	assert_int_equal(xb_control_call(sv[0], "{\"cmd\":\"stats\"}", 1000, &reply, err,
					 sizeof(err)),
			 0);
	assert_string_equal(reply, "{\"ok\":false,\"error\":\"permission denied\"}");
	free(reply);
	close(sv[0]);
}

static void client_refuses_bad_requests_and_paths(void **state)
{
	char err[XB_ERRLEN], *reply = NULL, path[200];
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(xb_control_call(sv[0], "{\"cmd\":\n\"stats\"}", 1000, &reply, err,
					 sizeof(err)),
			 -EINVAL);
	close(sv[0]);
	close(sv[1]);
	assert_int_equal(xb_control_connect("/run/xblib-no-such-dir/x.sock", err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "/run/xblib-no-such-dir/x.sock"));
	memset(path, 'a', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	assert_int_equal(xb_control_connect(path, err, sizeof(err)), -ENAMETOOLONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(control_rejects_bad_requests),
		cmocka_unit_test(control_rejects_oversized_and_nul),
		cmocka_unit_test(control_refuses_escaped_nul),
		cmocka_unit_test(control_error_replies_escape_what_they_quote),
		cmocka_unit_test(control_read_only_refuses_changes),
		cmocka_unit_test(control_unknown_commands_go_to_the_daemon),
		cmocka_unit_test(control_daemon_errors_reach_the_client),
		cmocka_unit_test(client_reads_one_line),
		cmocka_unit_test(client_reports_closed_and_silent_peers),
		cmocka_unit_test(client_refuses_bad_requests_and_paths),
	};

	return cmocka_run_group_tests_name("control", tests, NULL, NULL);
}
