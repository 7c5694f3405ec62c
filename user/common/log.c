/* log.c - see log.h. Also routes libbpf's and libxdp's own messages into the same log, so that
 * a failed load explains itself in the journal instead of on a terminal nobody reads. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>
/* Without it every entry would name this file and function as where it was logged. */
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>
#include <xdp/libxdp.h>
#include "libxdpban.h"
#include "log.h"
#include "progress.h"

/* Where sd_journal_sendv sends: journald's socket for native entries. */
#define JOURNAL_SOCKET "/run/systemd/journal/socket"

static bool log_verbose;
static enum xbd_log_route log_route = XBD_ROUTE_PLAIN;

static const char *const level_prefix[] = {
	[XBD_LOG_ERR] = "error: ",
	[XBD_LOG_WARN] = "warning: ",
	[XBD_LOG_INFO] = "",
	[XBD_LOG_DEBUG] = "debug: ",
};

/* syslog priorities: err, warning, info, debug */
static const int journal_priority[] = { 3, 4, 6, 7 };

static const char *const field_name[] = {
#define XBD_LOG_FIELD_NAME_(name) [XBD_LF_##name] = #name,
	XBD_LOG_FIELDS(XBD_LOG_FIELD_NAME_)
#undef XBD_LOG_FIELD_NAME_
};

/* struct xbd_journal_entry has room for "CLASSES=" before each value. */
#define XBD_LOG_FIELD_FITS_(name) \
	_Static_assert(sizeof(#name) <= sizeof("CLASSES"), #name " is longer than CLASSES");
XBD_LOG_FIELDS(XBD_LOG_FIELD_FITS_)
#undef XBD_LOG_FIELD_FITS_
_Static_assert(XB_CLASSES_TEXT_MAX <= XBD_LOG_FIELD_MAX, "CLASSES would be cut");

void xbd_about_set(struct xbd_log_about *a, enum xbd_log_field f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->value[f], sizeof(a->value[f]), fmt, ap);
	va_end(ap);
}

void xbd_about_who(struct xbd_log_about *a, const char *who)
{
	xbd_about_set(a, strchr(who, '/') ? XBD_LF_PREFIX : XBD_LF_SOURCE, "%s", who);
}

int xbd_format_stamp(const struct timespec *t, char *buf, size_t len)
{
	struct tm tm;

	if (!gmtime_r(&t->tv_sec, &tm))
		return -EINVAL;
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 t->tv_nsec / 1000000);
	return 0;
}

void xbd_log_line(enum xbd_log_route route, const struct timespec *now,
		  enum xbd_log_level level, const char *text, char *buf, size_t len)
{
	char stamp[40];

	if (route == XBD_ROUTE_STREAM) {
		snprintf(buf, len, "<%d>%s%s\n", journal_priority[level], level_prefix[level], text);
		return;
	}
	if (route == XBD_ROUTE_STAMPED && xbd_format_stamp(now, stamp, sizeof(stamp)) == 0)
		snprintf(buf, len, "%s xdpband: %s%s\n", stamp, level_prefix[level], text);
	else
		snprintf(buf, len, "xdpband: %s%s\n", level_prefix[level], text);
}

static void entry_add(struct xbd_journal_entry *j, char *item)
{
	j->iov[j->n++] = (struct iovec){ .iov_base = item, .iov_len = strlen(item) };
}

void xbd_journal_entry(struct xbd_journal_entry *j, enum xbd_log_level level, const char *text,
		       const struct xbd_log_about *a)
{
	static char identifier[] = "SYSLOG_IDENTIFIER=xdpband";

	j->n = 0;
	snprintf(j->message, sizeof(j->message), "MESSAGE=%s%s", level_prefix[level], text);
	entry_add(j, j->message);
	snprintf(j->priority, sizeof(j->priority), "PRIORITY=%d", journal_priority[level]);
	entry_add(j, j->priority);
	entry_add(j, identifier);
	for (int f = 0; a && f < XBD_LF_N; f++) {
		if (!a->value[f][0])
			continue;
		snprintf(j->field[f], sizeof(j->field[f]), "%s=%s", field_name[f], a->value[f]);
		entry_add(j, j->field[f]);
	}
}

static void write_stderr(enum xbd_log_route route, enum xbd_log_level level, const char *text)
{
	char line[XBD_LOG_LINE_MAX + 64];
	struct timespec now = { 0 };

	if (route == XBD_ROUTE_STAMPED)
		clock_gettime(CLOCK_REALTIME, &now);
	xbd_log_line(route, &now, level, text, line, sizeof(line));
	xb_progress_hold(); /* a progress line on the terminal goes first */
	fputs(line, stderr);
	xb_progress_release();
}

/* Under the journal, a line it does not take (its socket gone or refusing, out of memory) goes
 * to the stream on stderr, with its priority but without its fields: never lost. The socket is
 * looked for first because sd_journal_sendv reports success when it is missing. */
static void emit(enum xbd_log_level level, const struct xbd_log_about *a, const char *text)
{
	struct xbd_journal_entry j;

	if (log_route == XBD_ROUTE_STREAM && access(JOURNAL_SOCKET, F_OK) == 0) {
		xbd_journal_entry(&j, level, text, a);
		if (sd_journal_sendv(j.iov, j.n) >= 0)
			return;
	}
	write_stderr(log_route, level, text);
}

static void vlog_about(enum xbd_log_level level, const struct xbd_log_about *a,
		       const char *fmt, va_list ap)
{
	char text[XBD_LOG_LINE_MAX];
	size_t n;

	if (level == XBD_LOG_DEBUG && !log_verbose)
		return;
	vsnprintf(text, sizeof(text), fmt, ap);
	/* libbpf and libxdp end their messages with '\n'; ours do not. One line either way. */
	n = strlen(text);
	while (n && text[n - 1] == '\n')
		text[--n] = '\0';
	emit(level, a, text);
}

void xbd_vlog(enum xbd_log_level level, const char *fmt, va_list ap)
{
	vlog_about(level, NULL, fmt, ap);
}

void xbd_log(enum xbd_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_about(level, NULL, fmt, ap);
	va_end(ap);
}

void xbd_log_about(enum xbd_log_level level, const struct xbd_log_about *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_about(level, a, fmt, ap);
	va_end(ap);
}

/* libbpf and libxdp warn about things the daemon expects and handles itself (native mode
 * refused before the skb fallback, feature probes), so all their output is debug, shown with
 * -v; the daemon's own error line says what failed and suggests -v for their details. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBBPF_DEBUG)
		xbd_vlog(XBD_LOG_DEBUG, fmt, ap);
	return 0;
}

static int libxdp_print(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBXDP_DEBUG)
		xbd_vlog(XBD_LOG_DEBUG, fmt, ap);
	return 0;
}

/* systemd names the stream it gave a service as "DEVICE:INODE" in JOURNAL_STREAM; the variable
 * alone is not enough, since a child of a service inherits it with its stderr elsewhere. */
static bool stderr_is_journal(void)
{
	const char *env = getenv("JOURNAL_STREAM");
	uintmax_t dev, ino;
	struct stat st;
	char end;

	if (!env || sscanf(env, "%ju:%ju%c", &dev, &ino, &end) != 2)
		return false;
	if (fstat(STDERR_FILENO, &st))
		return false;
	return (uintmax_t)st.st_dev == dev && (uintmax_t)st.st_ino == ino;
}

static bool stamps_wanted(bool stamped)
{
	const char *env = getenv(XBD_LOG_TIME_ENV);

	return stamped && !(env && strcmp(env, "no") == 0);
}

void xbd_log_init(bool verbose, bool stamped)
{
	log_verbose = verbose;
	if (stderr_is_journal())
		log_route = XBD_ROUTE_STREAM;
	else
		log_route = stamps_wanted(stamped) ? XBD_ROUTE_STAMPED : XBD_ROUTE_PLAIN;
	setvbuf(stderr, NULL, _IOLBF, 0);
	libbpf_set_print(libbpf_print);
	libxdp_set_print(libxdp_print);
}

void xbd_format_wall(time_t t, char *buf, size_t len)
{
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, len, "@%lld", (long long)t);
}
