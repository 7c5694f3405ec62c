/* test_control_fds.c - open files passed with a control request (user/common/control_fds.c):
 * descriptors sent with a line arrive with it and read the same file; more than a request
 * holds are closed, not kept, and said; the client's call sends its files with the request.
 * Pure: a socketpair, pipes and memory files, no root. A descriptor is seen closed when the
 * read end of its pipe sees the end of the file. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include "control.h"
#include "libxdpban.h"

static void pair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
}

/* Whether every write end of the pipe whose read end is rd is closed. */
static bool pipe_closed(int rd)
{
	char c;

	assert_int_equal(fcntl(rd, F_SETFL, O_NONBLOCK), 0);
	return read(rd, &c, 1) == 0;
}

static void fds_arrive_with_their_line(void **state)
{
	struct xb_control_fds got = {};
	int sv[2], mem = memfd_create("list", MFD_CLOEXEC), fds[2];
	char buf[64] = "", text[16] = "";

	pair(sv);
	assert_int_equal(write(mem, "192.0.2.1\n", 10), 10);
	fds[0] = mem;
	fds[1] = STDERR_FILENO;
	assert_int_equal(xb_control_send_fds(sv[0], "{\"cmd\":\"x\"}\n", 12, fds, 2), 12);
	assert_int_equal(xb_control_send_fds(sv[0], "more\n", 5, NULL, 0), 5);
	assert_int_equal(xb_control_recv_fds(sv[1], buf, 12, &got), 12);
	assert_memory_equal(buf, "{\"cmd\":\"x\"}\n", 12);
	assert_int_equal(got.n, 2);
	assert_false(got.over);
	assert_int_equal(fcntl(got.v[0], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	/* the same open file: it reads what was written, from its start */
	assert_int_equal(pread(got.v[0], text, sizeof(text) - 1, 0), 10);
	assert_string_equal(text, "192.0.2.1\n");
	xb_control_fds_close(&got);
	assert_int_equal(got.n, 0);
	/* bytes without descriptors bring none */
	assert_int_equal(xb_control_recv_fds(sv[1], buf, sizeof(buf), &got), 5);
	assert_int_equal(got.n, 0);
	close(sv[0]);
	assert_int_equal(xb_control_recv_fds(sv[1], buf, sizeof(buf), &got), 0);
	close(sv[1]);
	close(mem);
}

static void fds_past_the_room_are_closed(void **state)
{
	struct xb_control_fds got = {};
	int sv[2], p[2], many[XB_CONTROL_FDS_MAX];
	char buf[8];

	pair(sv);
	assert_int_equal(pipe(p), 0);
	for (int i = 0; i < XB_CONTROL_FDS_MAX; i++)
		many[i] = STDIN_FILENO;
	assert_int_equal(xb_control_send_fds(sv[0], "a", 1, many, XB_CONTROL_FDS_MAX), 1);
	assert_int_equal(xb_control_send_fds(sv[0], "b", 1, &p[1], 1), 1);
	close(p[1]); /* the only write end left is the one in flight */
	assert_int_equal(xb_control_recv_fds(sv[1], buf, sizeof(buf), &got), 1);
	assert_int_equal(got.n, XB_CONTROL_FDS_MAX);
	assert_false(got.over);
	assert_int_equal(xb_control_recv_fds(sv[1], buf, sizeof(buf), &got), 1);
	assert_int_equal(got.n, XB_CONTROL_FDS_MAX);
	assert_true(got.over);
	assert_true(pipe_closed(p[0])); /* the 65th was closed on arrival */
	xb_control_fds_close(&got);
	assert_false(got.over);
	/* more than a request may carry is not sent at all */
	assert_int_equal(xb_control_send_fds(sv[0], "c", 1, many, XB_CONTROL_FDS_MAX + 1), -EINVAL);
	close(p[0]);
	close(sv[0]);
	close(sv[1]);
}

static void closing_closes_them_all(void **state)
{
	struct xb_control_fds got = {};
	int sv[2], p[2];
	char buf[8];

	pair(sv);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(xb_control_send_fds(sv[0], "a", 1, &p[1], 1), 1);
	close(p[1]);
	assert_int_equal(xb_control_recv_fds(sv[1], buf, sizeof(buf), &got), 1);
	assert_int_equal(got.n, 1);
	assert_false(pipe_closed(p[0]));
	xb_control_fds_close(&got);
	assert_true(pipe_closed(p[0]));
	close(p[0]);
	close(sv[0]);
	close(sv[1]);
}

static void the_call_sends_its_files(void **state)
{
	struct xb_control_fds got = {};
	char err[XB_ERRLEN], *reply = NULL, buf[64] = "";
	int sv[2], fd = memfd_create("list", MFD_CLOEXEC);
	const char canned[] = "{\"ok\":true}\n";

	pair(sv);
	assert_int_equal(write(sv[1], canned, strlen(canned)), (ssize_t)strlen(canned));
	assert_int_equal(xb_control_call_fds(sv[0], "{\"cmd\":\"lists_load\"}", &fd, 1, 1000,
					     &reply, err, sizeof(err)),
			 0);
	assert_string_equal(reply, "{\"ok\":true}");
	free(reply);
	assert_int_equal(xb_control_recv_fds(sv[1], buf, sizeof(buf) - 1, &got), 21);
	assert_string_equal(buf, "{\"cmd\":\"lists_load\"}\n");
	assert_int_equal(got.n, 1);
	xb_control_fds_close(&got);
	assert_int_equal(xb_control_call_fds(sv[0], "{}", NULL, XB_CONTROL_FDS_MAX + 1, 1000,
					     &reply, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "at most 64 files go with one request");
	close(fd);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fds_arrive_with_their_line),
		cmocka_unit_test(fds_past_the_room_are_closed),
		cmocka_unit_test(closing_closes_them_all),
		cmocka_unit_test(the_call_sends_its_files),
	};

	return cmocka_run_group_tests_name("control_fds", tests, NULL, NULL);
}
