/* log.h - the daemon's log: one line per message. Under the journal (stderr is the stream
 * systemd named in JOURNAL_STREAM) every line is sent as a journal entry with its priority, and
 * a line about a source with the fields of XBD_LOG_FIELDS; a line the journal refuses goes to
 * stderr instead. Elsewhere each line goes to stderr, after an RFC 3339 UTC time unless told
 * not to. Debug lines appear only with -v. Never writes to a file, never exits the process. */
#ifndef XDPBAND_LOG_H
#define XDPBAND_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>
#include <time.h>

enum xbd_log_level {
	XBD_LOG_ERR,
	XBD_LOG_WARN,
	XBD_LOG_INFO,
	XBD_LOG_DEBUG,
};

/* The journal fields of a line about a source, beside MESSAGE, PRIORITY and
 * SYSLOG_IDENTIFIER: the one list of their names (deploy/xdpband.8, JOURNAL FIELDS). A line
 * carries SOURCE when it is about one address, PREFIX when about a wider prefix. */
#define XBD_LOG_FIELDS(X)                                                                   \
	X(SOURCE)  /* the address banned, unbanned or whose ban ended */                     \
	X(PREFIX)  /* the prefix, when wider than one address (an IPv6 /64, a manual ban) */ \
	X(REASON)  /* why the ban: errors, report, manual, ... */                            \
	X(COUNT)   /* the errors that made it */                                            \
	X(CLASSES) /* their classes, comma-separated */                                     \
	X(ORIGIN)  /* local (the data path), manual (the control socket) or the fleet node */

enum xbd_log_field {
#define XBD_LOG_FIELD_ID_(name) XBD_LF_##name,
	XBD_LOG_FIELDS(XBD_LOG_FIELD_ID_)
#undef XBD_LOG_FIELD_ID_
	XBD_LF_N
};

#define XBD_LOG_FIELD_MAX 128 /* a value and its NUL; a longer one is cut */
#define XBD_LOG_LINE_MAX 1024 /* a message and its NUL; a longer one is cut */

/* Values of ORIGIN for what this node did itself. */
#define XBD_ORIGIN_LOCAL "local"
#define XBD_ORIGIN_MANUAL "manual"

/* What a line about a source says in fields: each value, "" when the line has none. */
struct xbd_log_about {
	char value[XBD_LF_N][XBD_LOG_FIELD_MAX];
};

void xbd_about_set(struct xbd_log_about *a, enum xbd_log_field f, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* SOURCE or PREFIX, from the text of an address ("ADDR") or a prefix ("ADDR/LEN"). */
void xbd_about_who(struct xbd_log_about *a, const char *who);

/* The environment variable that, set to "no", leaves the time out of the lines on stderr. */
#define XBD_LOG_TIME_ENV "XDPBAND_LOG_TIME"

/* verbose enables debug lines, and the libbpf/libxdp messages they route here. stamped: the
 * lines on stderr start with the time (false for xdpband -t, whose line is an answer, not a
 * record), unless XBD_LOG_TIME_ENV says no. */
void xbd_log_init(bool verbose, bool stamped);
void xbd_log(enum xbd_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void xbd_vlog(enum xbd_log_level level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* A line about a source: under the journal with the fields of a, elsewhere as xbd_log. */
void xbd_log_about(enum xbd_log_level level, const struct xbd_log_about *a, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define pr_err(...) xbd_log(XBD_LOG_ERR, __VA_ARGS__)
#define pr_warn(...) xbd_log(XBD_LOG_WARN, __VA_ARGS__)
#define pr_info(...) xbd_log(XBD_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) xbd_log(XBD_LOG_DEBUG, __VA_ARGS__)

/* "2026-11-30 10:20:00 UTC": how every wall-clock time appears in the log. */
void xbd_format_wall(time_t t, char *buf, size_t len);

/* What the sending and the writing of a line are made of, apart so that a test can check
 * them without a journal or a clock. */

/* "2026-12-05T02:50:01.123Z": the time a line on stderr starts with, UTC, to the millisecond
 * (cut, not rounded). 0, or -EINVAL for a time gmtime cannot break down. */
int xbd_format_stamp(const struct timespec *t, char *buf, size_t len);

/* How a line reaches its reader. */
enum xbd_log_route {
	XBD_ROUTE_PLAIN,   /* stderr: "xdpband: LEVEL: text" */
	XBD_ROUTE_STAMPED, /* stderr: "STAMP xdpband: LEVEL: text" */
	XBD_ROUTE_STREAM,  /* stderr is the journal's stream: "<PRIORITY>LEVEL: text" */
};

/* The line written to stderr, with its newline; now is read by XBD_ROUTE_STAMPED only. */
void xbd_log_line(enum xbd_log_route route, const struct timespec *now,
		  enum xbd_log_level level, const char *text, char *buf, size_t len);

/* MESSAGE, PRIORITY, SYSLOG_IDENTIFIER, then each field a has: at most XBD_JOURNAL_ITEMS. */
#define XBD_JOURNAL_ITEMS (3 + XBD_LF_N)

/* One journal entry as sd_journal_sendv takes it: iov[0..n) point into its strings. */
struct xbd_journal_entry {
	char message[sizeof("MESSAGE=warning: ") + XBD_LOG_LINE_MAX];
	char priority[sizeof("PRIORITY=7")];
	char field[XBD_LF_N][sizeof("CLASSES=") + XBD_LOG_FIELD_MAX]; /* the longest name */
	struct iovec iov[XBD_JOURNAL_ITEMS];
	int n;
};

/* Fills j with the entry of a line of text at level, with the fields of a (NULL: none). */
void xbd_journal_entry(struct xbd_journal_entry *j, enum xbd_log_level level, const char *text,
		       const struct xbd_log_about *a);

#endif /* XDPBAND_LOG_H */
