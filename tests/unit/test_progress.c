/* test_progress.c - the progress line (user/lib/progress.c) on a fake terminal with a clock the
 * test moves: nothing in the first second, then one line redrawn in place ("\r", text,
 * clear-to-end-of-line) at most every 100 ms, a new phase drawn at once, the line cut to the
 * terminal's width without splitting a character or letting a control byte through, cleared
 * at the end and around the log's lines, and not one byte when off; which file descriptors
 * count as a terminal (a pty, not a pipe; TERM unset or "dumb" is not); the numbers' text.
 * No root, no maps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "progress.h"

#define CLEAR "\r\033[K"

struct fake_tty {
	__u64 now;
	char out[4096];
	size_t len;
	unsigned int writes;
};

static __u64 fake_now(void *ctx)
{
	return ((struct fake_tty *)ctx)->now;
}

static void fake_write(const char *text, size_t len, void *ctx)
{
	struct fake_tty *t = ctx;

	assert_true(t->len + len < sizeof(t->out));
	memcpy(t->out + t->len, text, len);
	t->len += len;
	t->out[t->len] = '\0';
	t->writes++;
}

static void begin(struct xb_progress *p, struct fake_tty *t, unsigned int columns, bool on)
{
	const struct xb_progress_io io = { .now_ms = fake_now, .write = fake_write, .ctx = t,
					   .columns = columns };

	memset(t, 0, sizeof(*t));
	t->now = 5000; /* any start: only the time since begin counts */
	xb_progress_begin_io(p, &io, on);
}

/* What was written since the last call, and forget it. */
static const char *taken(struct fake_tty *t, char *buf, size_t len)
{
	snprintf(buf, len, "%s", t->out);
	t->len = 0;
	t->out[0] = '\0';
	return buf;
}

static void nothing_in_the_first_second(void **state)
{
	struct xb_progress p;
	struct fake_tty t;

	begin(&p, &t, 80, true);
	for (__u64 ms = 0; ms < XB_PROGRESS_DELAY_MS; ms += 50) {
		t.now = 5000 + ms;
		xb_progress_show(&p, "reading a.list: %llu lines", (unsigned long long)ms);
		xb_progress_phase(&p, "compiling");
	}
	xb_progress_end(&p);
	assert_int_equal(t.writes, 0); /* small work: not even a clear */
}

static void drawn_after_a_second_then_throttled(void **state)
{
	struct xb_progress p;
	struct fake_tty t;
	char got[4096];

	begin(&p, &t, 80, true);
	t.now = 6000;
	xb_progress_show(&p, "trie %d of 10", 1);
	assert_string_equal(taken(&t, got, sizeof(got)), "\rtrie 1 of 10\033[K");
	t.now = 6099; /* within the interval: no draw */
	xb_progress_show(&p, "trie %d of 10", 2);
	assert_int_equal(t.len, 0);
	t.now = 6100;
	xb_progress_show(&p, "trie %d of 10", 3);
	assert_string_equal(taken(&t, got, sizeof(got)), "\rtrie 3 of 10\033[K");
	/* a second of shows every millisecond: at most ten draws */
	t.writes = 0;
	for (int i = 0; i < 1000; i++) {
		t.now++;
		xb_progress_show(&p, "trie %d", i);
	}
	assert_true(t.writes >= 9 && t.writes <= 10);
	taken(&t, got, sizeof(got));
	xb_progress_end(&p);
	assert_string_equal(taken(&t, got, sizeof(got)), CLEAR);
	/* ended: off for good */
	t.now += 5000;
	xb_progress_show(&p, "late");
	xb_progress_end(&p);
	assert_int_equal(t.len, 0);
}

static void a_phase_is_drawn_at_once(void **state)
{
	struct xb_progress p;
	struct fake_tty t;
	char got[4096];

	begin(&p, &t, 80, true);
	t.now = 6500;
	xb_progress_show(&p, "trie 10 of 10");
	t.now = 6510;
	xb_progress_phase(&p, "flat tables");
	assert_string_equal(taken(&t, got, sizeof(got)),
			    "\rtrie 10 of 10\033[K\rflat tables\033[K");
	xb_progress_end(&p);
}

static void cut_to_the_width(void **state)
{
	struct xb_progress p;
	struct fake_tty t;
	char got[4096];

	begin(&p, &t, 12, true);
	t.now = 7000;
	xb_progress_phase(&p, "reading deny.list: 1 line"); /* 11 columns of text at most */
	assert_string_equal(taken(&t, got, sizeof(got)), "\rreading den\033[K");
	/* "é" is two bytes: cut before it rather than inside it */
	xb_progress_phase(&p, "0123456789\xc3\xa9xyz");
	assert_string_equal(taken(&t, got, sizeof(got)), "\r0123456789\033[K");
	xb_progress_phase(&p, "0123456789");
	assert_string_equal(taken(&t, got, sizeof(got)), "\r0123456789\033[K");
	/* a file name with a newline or an escape in it stays on the line */
	xb_progress_phase(&p, "a\nb\033c\rd");
	assert_string_equal(taken(&t, got, sizeof(got)), "\ra?b?c?d\033[K");
	xb_progress_end(&p);
}

static void off_writes_nothing(void **state)
{
	struct xb_progress p;
	struct fake_tty t;

	begin(&p, &t, 80, false);
	for (__u64 ms = 0; ms < 5000; ms += 10) {
		t.now = 5000 + ms;
		xb_progress_show(&p, "x");
		xb_progress_phase(&p, "y");
	}
	xb_progress_hold();
	xb_progress_release();
	xb_progress_end(&p);
	assert_int_equal(t.writes, 0);
	/* and no display at all */
	xb_progress_show(NULL, "x");
	xb_progress_phase(NULL, "y");
	xb_progress_end(NULL);
}

/* The log holds the display around its line: the line is cleared first, and the next show
 * draws it again, whatever the interval. */
static void cleared_around_the_log(void **state)
{
	struct xb_progress p;
	struct fake_tty t;
	char got[4096];

	begin(&p, &t, 80, true);
	xb_progress_hold(); /* nothing on the screen yet: nothing to clear */
	xb_progress_release();
	assert_int_equal(t.writes, 0);
	t.now = 6000;
	xb_progress_show(&p, "trie 1");
	taken(&t, got, sizeof(got));
	xb_progress_hold();
	assert_string_equal(taken(&t, got, sizeof(got)), CLEAR);
	xb_progress_release();
	t.now = 6001;
	xb_progress_show(&p, "trie 2");
	assert_string_equal(taken(&t, got, sizeof(got)), "\rtrie 2\033[K");
	xb_progress_hold();
	xb_progress_release();
	taken(&t, got, sizeof(got));
	xb_progress_end(&p); /* the log cleared it already */
	assert_int_equal(t.len, 0);
}

static void terminal_needs_a_tty_and_a_term(void **state)
{
	const char *saved = getenv("TERM");
	int pipefd[2], pty = posix_openpt(O_RDWR | O_NOCTTY);

	assert_int_equal(pipe(pipefd), 0);
	assert_true(pty >= 0);
	setenv("TERM", "xterm", 1);
	assert_true(xb_progress_terminal(pty));
	assert_false(xb_progress_terminal(pipefd[1]));
	setenv("TERM", "dumb", 1);
	assert_false(xb_progress_terminal(pty));
	setenv("TERM", "", 1);
	assert_false(xb_progress_terminal(pty));
	unsetenv("TERM");
	assert_false(xb_progress_terminal(pty));
	if (saved)
		setenv("TERM", saved, 1);
	close(pty);
	close(pipefd[0]);
	close(pipefd[1]);
}

static void numbers(void **state)
{
	char buf[XB_PROGRESS_NUM_MAX];

	assert_string_equal(xb_progress_count(0, buf), "0");
	assert_string_equal(xb_progress_count(999, buf), "999");
	assert_string_equal(xb_progress_count(1000, buf), "1,000");
	assert_string_equal(xb_progress_count(412000, buf), "412,000");
	assert_string_equal(xb_progress_count(1000000, buf), "1,000,000");
	assert_string_equal(xb_progress_count(18446744073709551615ull, buf),
			    "18,446,744,073,709,551,615");
	assert_string_equal(xb_progress_bytes(0, buf), "0 KiB");
	assert_string_equal(xb_progress_bytes(5000, buf), "4 KiB");
	assert_string_equal(xb_progress_bytes((1u << 20) - 1, buf), "1023 KiB");
	assert_string_equal(xb_progress_bytes(1u << 20, buf), "1.0 MiB");
	assert_string_equal(xb_progress_bytes((6u << 20) - 1, buf), "5.9 MiB");
	assert_string_equal(xb_progress_bytes((10u << 20) - 1, buf), "9.9 MiB");
	assert_string_equal(xb_progress_bytes(10u << 20, buf), "10 MiB");
	assert_string_equal(xb_progress_bytes(38u << 20, buf), "38 MiB");
	assert_string_equal(xb_progress_bytes((90u << 20) + 5, buf), "90 MiB");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nothing_in_the_first_second),
		cmocka_unit_test(drawn_after_a_second_then_throttled),
		cmocka_unit_test(a_phase_is_drawn_at_once),
		cmocka_unit_test(cut_to_the_width),
		cmocka_unit_test(off_writes_nothing),
		cmocka_unit_test(cleared_around_the_log),
		cmocka_unit_test(terminal_needs_a_tty_and_a_term),
		cmocka_unit_test(numbers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
