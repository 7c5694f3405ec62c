/* progress.h - one status line on a terminal for long work an operator starts by hand (a list
 * read, a compile): drawn only when the output is a terminal, only once the work has run for
 * XB_PROGRESS_DELAY_MS (small work shows nothing), redrawn in place ("\r", the text, then
 * clear-to-end-of-line) at most every XB_PROGRESS_INTERVAL_MS, and cleared at the end, so that
 * the line that follows (the result) stands alone. When it is off (no terminal, a dumb one,
 * systemd's journal) it writes nothing at all: the output is what it would be without it.
 * One display is on the screen at a time; every function may be called from any thread, and
 * with a NULL display (no progress wanted), which does nothing. It never writes a newline.
 */
#ifndef XB_PROGRESS_H
#define XB_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define XB_PROGRESS_DELAY_MS 1000
#define XB_PROGRESS_INTERVAL_MS 100
#define XB_PROGRESS_LINE_MAX 256 /* bytes of text at most, cut to the terminal's width */

/* Where a display draws: a clock and a terminal (tests give their own). */
struct xb_progress_io {
	__u64 (*now_ms)(void *ctx);                          /* monotonic */
	void (*write)(const char *text, size_t len, void *ctx); /* to the terminal */
	void *ctx;
	unsigned int columns; /* the terminal's width; 0: unknown (80) */
};

struct xb_progress {
	struct xb_progress_io io;
	bool on;      /* draws at all */
	bool shown;   /* its line is on the screen */
	__u64 start_ms, drawn_ms;
};

/* True when fd is a terminal that takes "\r" and "\033[K": TERM set and not "dumb". */
bool xb_progress_terminal(int fd);
/* Starts a display on stderr, on when xb_progress_terminal(2); the work starts now. */
void xb_progress_begin(struct xb_progress *p);
/* The same through io, on or off as told (tests). */
void xb_progress_begin_io(struct xb_progress *p, const struct xb_progress_io *io, bool on);
/* Where the work is now: the line gets this text if the work has run XB_PROGRESS_DELAY_MS and
 * the last draw was XB_PROGRESS_INTERVAL_MS ago or more. Cheap when it does not draw. */
void xb_progress_show(struct xb_progress *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A new phase of the work: as xb_progress_show, but drawn whatever the interval (once past the
 * delay), so that the line never names a phase that is over. Call it once per phase. */
void xb_progress_phase(struct xb_progress *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The work is done: clears the line if it was drawn; the display is off from now on. */
void xb_progress_end(struct xb_progress *p);

/* Around any other output to the same terminal (the log): hold clears the line of the display
 * on the screen, if any, and keeps displays from drawing until release; the next show draws
 * the line again below that output. */
void xb_progress_hold(void);
void xb_progress_release(void);

/* "1,234,567", and "38 MiB" (rounded down: "5.9 MiB" below 10 MiB, "600 KiB" below one MiB),
 * for the text of a line. */
#define XB_PROGRESS_NUM_MAX 32
const char *xb_progress_count(__u64 n, char buf[XB_PROGRESS_NUM_MAX]);
const char *xb_progress_bytes(__u64 n, char buf[XB_PROGRESS_NUM_MAX]);

#endif /* XB_PROGRESS_H */
