/* progress.c - see progress.h. One lock for every display: there is one terminal, and a
 * display may draw from a reading thread while the main thread logs. Nothing here may write
 * when a display is off, not even a clear: the output must stay byte for byte what it was. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include "progress.h"

#define CLEAR_EOL "\033[K"
#define COLUMNS_UNKNOWN 80

static pthread_mutex_t screen_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xb_progress *screen; /* the display whose line is on the screen, or NULL */

bool xb_progress_terminal(int fd)
{
	const char *term = getenv("TERM");

	return isatty(fd) && term && term[0] && strcmp(term, "dumb");
}

static __u64 monotonic_ms(void *ctx)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + (__u64)ts.tv_nsec / 1000000;
}

/* Through stdio, so that the line and the log's lines on stderr keep their order. */
static void stderr_write(const char *text, size_t len, void *ctx)
{
	fwrite(text, 1, len, stderr);
	fflush(stderr);
}

void xb_progress_begin_io(struct xb_progress *p, const struct xb_progress_io *io, bool on)
{
	memset(p, 0, sizeof(*p));
	p->io = *io;
	p->on = on;
	p->start_ms = on ? io->now_ms(io->ctx) : 0;
}

void xb_progress_begin(struct xb_progress *p)
{
	struct xb_progress_io io = { .now_ms = monotonic_ms, .write = stderr_write };
	bool on = xb_progress_terminal(STDERR_FILENO);
	struct winsize ws;

	if (on && !ioctl(STDERR_FILENO, TIOCGWINSZ, &ws))
		io.columns = ws.ws_col;
	xb_progress_begin_io(p, &io, on);
}

/* Takes the line off the screen. Under screen_lock. */
static void screen_clear(void)
{
	if (!screen)
		return;
	screen->io.write("\r" CLEAR_EOL, sizeof("\r" CLEAR_EOL) - 1, screen->io.ctx);
	screen->shown = false;
	screen = NULL;
}

/* The text cut to the width less one column (a line that fills the width wraps on some
 * terminals, and "\r" returns only to the start of its last row), never inside a UTF-8
 * character; control bytes (from a file name) become '?', so the line stays one line. */
static size_t line_compose(const struct xb_progress *p, const char *fmt, va_list ap,
			   char *out, size_t cap)
{
	unsigned int columns = p->io.columns ? p->io.columns : COLUMNS_UNKNOWN;
	char text[XB_PROGRESS_LINE_MAX];
	size_t n, width = columns > 1 ? columns - 1 : 1;

	vsnprintf(text, sizeof(text), fmt, ap);
	n = strlen(text);
	if (n > width) {
		n = width;
		while (n && ((unsigned char)text[n] & 0xc0) == 0x80)
			n--;
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
			text[i] = '?';
	return (size_t)snprintf(out, cap, "\r%.*s" CLEAR_EOL, (int)n, text);
}

static void show(struct xb_progress *p, bool phase, const char *fmt, va_list ap)
{
	char line[XB_PROGRESS_LINE_MAX + 16];
	__u64 now;
	size_t len;

	if (!p || !p->on)
		return;
	now = p->io.now_ms(p->io.ctx);
	if (now - p->start_ms < XB_PROGRESS_DELAY_MS)
		return;
	pthread_mutex_lock(&screen_lock);
	if (phase || !p->shown || now - p->drawn_ms >= XB_PROGRESS_INTERVAL_MS) {
		len = line_compose(p, fmt, ap, line, sizeof(line));
		if (screen != p && screen) /* another display drew last: this line replaces it */
			screen->shown = false;
		p->io.write(line, len, p->io.ctx);
		p->shown = true;
		p->drawn_ms = now;
		screen = p;
	}
	pthread_mutex_unlock(&screen_lock);
}

void xb_progress_show(struct xb_progress *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	show(p, false, fmt, ap);
	va_end(ap);
}

void xb_progress_phase(struct xb_progress *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	show(p, true, fmt, ap);
	va_end(ap);
}

void xb_progress_end(struct xb_progress *p)
{
	if (!p || !p->on)
		return;
	pthread_mutex_lock(&screen_lock);
	if (screen == p)
		screen_clear();
	p->on = false;
	pthread_mutex_unlock(&screen_lock);
}

void xb_progress_hold(void)
{
	pthread_mutex_lock(&screen_lock);
	screen_clear();
}

void xb_progress_release(void)
{
	pthread_mutex_unlock(&screen_lock);
}

const char *xb_progress_count(__u64 n, char buf[XB_PROGRESS_NUM_MAX])
{
	char digits[24];
	int len = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)n), o = 0;

	for (int i = 0; i < len; i++) {
		if (i && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

const char *xb_progress_bytes(__u64 n, char buf[XB_PROGRESS_NUM_MAX])
{
	if (n < (1 << 20))
		snprintf(buf, XB_PROGRESS_NUM_MAX, "%llu KiB", (unsigned long long)(n >> 10));
	else if (n < (10 << 20)) /* rounded down, so that a part never reads as its whole */
		snprintf(buf, XB_PROGRESS_NUM_MAX, "%llu.%llu MiB", (unsigned long long)(n >> 20),
			 (unsigned long long)((n & ((1 << 20) - 1)) * 10 >> 20));
	else
		snprintf(buf, XB_PROGRESS_NUM_MAX, "%llu MiB", (unsigned long long)(n >> 20));
	return buf;
}
