/* test_evhistory.c - the event history file (user/common/evhistory.c): appended lines come
 * back in order, as the objects they were, and survive a close and an open (a restart); past
 * its bound the oldest quarter goes and the file never holds more; a cut last line (a crash
 * while writing) is skipped by the reader and cut off by the next open, so the next line is
 * whole; lines that are not events are skipped, never the whole file; a time keeps the events
 * at or after it; the file is made mode 0600 beside a missing directory made 0700; what
 * cannot be a history is said in one line. Files in a scratch directory: no root, no maps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "evhistory.h"
#include "tmpdir.h"

static void event_line(char *line, size_t len, int seq, long long t)
{
	snprintf(line, len, "{\"seq\":%d,\"event\":\"ban\",\"time_unix\":%lld,\"source\":\"192.0.2.%d\"}",
		 seq, t, seq % 250);
}

static void append_n(struct xbd_evhistory *h, int from, int n, long long t0)
{
	char line[128];

	for (int i = from; i < from + n; i++) {
		event_line(line, sizeof(line), i, t0 + i);
		assert_int_equal(xbd_evhistory_append(h, line), 0);
	}
}

/* The seq of every event read back, since a time, the last keep of them. */
static struct json_object *read_back(const char *path, time_t since, size_t keep,
				     unsigned int *bad)
{
	struct xbd_evpick pick;
	char err[256];

	assert_int_equal(xbd_evpick_init(&pick, since, keep), 0);
	assert_int_equal(xbd_evhistory_read(path, &pick, err, sizeof(err)), 0);
	if (bad)
		*bad = pick.bad;
	return xbd_evpick_take(&pick);
}

static int seq_at(struct json_object *events, size_t i)
{
	return json_object_get_int(json_object_object_get(json_object_array_get_idx(events, i),
							   "seq"));
}

static void assert_seqs(struct json_object *events, int first, int last)
{
	assert_int_equal(json_object_array_length(events), last - first + 1);
	for (int s = first; s <= last; s++)
		assert_int_equal(seq_at(events, s - first), s);
}

static size_t lines_of(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;
	int c;

	assert_non_null(f);
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static void survives_a_restart(void **state)
{
	struct tmpdir *d = *state;
	struct xbd_evhistory h;
	char path[PATH_MAX], err[256];
	struct json_object *events;
	struct stat st;

	tmpdir_path(d, "lib/events", path); /* its directory does not exist yet */
	assert_int_equal(xbd_evhistory_open(&h, path, 100, err, sizeof(err)), 0);
	append_n(&h, 1, 5, 1000);
	xbd_evhistory_close(&h);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	tmpdir_path(d, "lib", err);
	assert_int_equal(stat(err, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(xbd_evhistory_open(&h, path, 100, err, sizeof(err)), 0);
	assert_int_equal(h.held, 5);
	append_n(&h, 6, 2, 1000);
	events = read_back(path, 0, 0, NULL);
	assert_seqs(events, 1, 7);
	json_object_put(events);
	events = read_back(path, 0, 3, NULL); /* the backlog: the last ones */
	assert_seqs(events, 5, 7);
	json_object_put(events);
	xbd_evhistory_close(&h);
}

static void bounded(void **state)
{
	struct tmpdir *d = *state;
	struct xbd_evhistory h;
	char path[PATH_MAX], err[256];
	struct json_object *events;

	tmpdir_path(d, "events", path);
	assert_int_equal(xbd_evhistory_open(&h, path, 100, err, sizeof(err)), 0);
	append_n(&h, 1, 100, 0);
	assert_int_equal(lines_of(path), 100);
	append_n(&h, 101, 1, 0); /* one past the bound: the oldest quarter goes */
	assert_int_equal(lines_of(path), 75);
	assert_int_equal(h.held, 75);
	append_n(&h, 102, 1000, 0);
	assert_true(lines_of(path) <= 100);
	assert_int_equal(lines_of(path), h.held);
	events = read_back(path, 0, 0, NULL);
	assert_seqs(events, 1101 - (int)h.held + 1, 1101);
	json_object_put(events);
	assert_int_equal(tmpdir_count(d, "events.tmp"), 0);
	xbd_evhistory_close(&h);
	/* a bound made smaller is kept from the next open on */
	assert_int_equal(xbd_evhistory_open(&h, path, 40, err, sizeof(err)), 0);
	assert_int_equal(lines_of(path), 30);
	xbd_evhistory_close(&h);
}

static void torn_last_line(void **state)
{
	struct tmpdir *d = *state;
	char path[PATH_MAX], err[256], line[128], text[512];
	struct xbd_evhistory h;
	struct json_object *events;
	unsigned int bad;

	event_line(line, sizeof(line), 1, 10);
	snprintf(text, sizeof(text), "%s\n%.30s", line, line); /* the second cut by a crash */
	assert_int_equal(tmpdir_write_text(d, "events", text, path), 0);
	events = read_back(path, 0, 0, &bad);
	assert_seqs(events, 1, 1);
	assert_int_equal(bad, 1);
	json_object_put(events);
	assert_int_equal(xbd_evhistory_open(&h, path, 100, err, sizeof(err)), 0);
	assert_int_equal(h.held, 1);
	append_n(&h, 2, 1, 10); /* whole, not glued to the torn one */
	events = read_back(path, 0, 0, &bad);
	assert_seqs(events, 1, 2);
	assert_int_equal(bad, 0);
	json_object_put(events);
	xbd_evhistory_close(&h);
}

static void bad_lines_skipped(void **state)
{
	struct tmpdir *d = *state;
	char path[PATH_MAX];
	struct json_object *events;
	unsigned int bad;

	assert_int_equal(tmpdir_write_text(d, "events",
					   "{\"seq\":1,\"time_unix\":5}\n"
					   "junk\n"
					   "{\"seq\":2,\"time_unix\":\"5\"}\n"
					   "[1,2]\n"
					   "{\"seq\":3,\"time_unix\":6} trailing\n"
					   "\n"
					   "{\"seq\":4,\"time_unix\":7}\n",
					   path),
			 0);
	events = read_back(path, 0, 0, &bad);
	assert_int_equal(bad, 5);
	assert_int_equal(json_object_array_length(events), 2);
	assert_int_equal(seq_at(events, 0), 1);
	assert_int_equal(seq_at(events, 1), 4);
	json_object_put(events);
}

static void since_a_time(void **state)
{
	struct tmpdir *d = *state;
	struct xbd_evhistory h;
	char path[PATH_MAX], err[256];
	struct json_object *events;

	tmpdir_path(d, "events", path);
	assert_int_equal(xbd_evhistory_open(&h, path, 100, err, sizeof(err)), 0);
	append_n(&h, 1, 10, 1000); /* event i at 1000 + i */
	events = read_back(path, 1007, 0, NULL);
	assert_seqs(events, 7, 10);
	json_object_put(events);
	events = read_back(path, 2000, 0, NULL);
	assert_int_equal(json_object_array_length(events), 0);
	json_object_put(events);
	xbd_evhistory_close(&h);
}

static void missing_is_empty(void **state)
{
	struct tmpdir *d = *state;
	char path[PATH_MAX];
	struct json_object *events = read_back(tmpdir_path(d, "none", path), 0, 0, NULL);

	assert_int_equal(json_object_array_length(events), 0);
	json_object_put(events);
}

/* What cannot be a history is said in one line naming it: a directory in its place, a
 * directory that cannot be made (a file in the way). */
static void unusable_said(void **state)
{
	struct tmpdir *d = *state;
	char path[PATH_MAX], err[512], want[PATH_MAX + 128];
	struct xbd_evhistory h;

	tmpdir_path(d, "dir", path);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_not_equal(xbd_evhistory_open(&h, path, 100, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "cannot open the event history %s: Is a directory", path);
	assert_string_equal(err, want);
	assert_int_equal(h.fd, -1);
	assert_null(h.path);
	assert_int_equal(tmpdir_write_text(d, "file", "x", NULL), 0);
	tmpdir_path(d, "file/events", path);
	assert_int_equal(xbd_evhistory_open(&h, path, 100, err, sizeof(err)), -ENOTDIR);
	snprintf(want, sizeof(want), "cannot open the event history %s: Not a directory", path);
	assert_string_equal(err, want);
	xbd_evhistory_close(&h); /* closed already: nothing happens */
}

static void path_beside_the_state_file(void **state)
{
	char *p = xbd_evhistory_path("/var/lib/xdpban/state", "events");

	(void)state;
	assert_string_equal(p, "/var/lib/xdpban/events");
	free(p);
	p = xbd_evhistory_path("state", "events");
	assert_string_equal(p, "events");
	free(p);
	assert_null(xbd_evhistory_path(NULL, "events"));
	assert_null(xbd_evhistory_path("/var/lib/xdpban/state", NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(survives_a_restart, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(bounded, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(torn_last_line, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(bad_lines_skipped, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(since_a_time, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(missing_is_empty, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(unusable_said, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test(path_beside_the_state_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
