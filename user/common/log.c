/* log.c - see log.h. Also routes libbpf's and libxdp's own messages into the same log, so that
 * a failed load explains itself in the journal instead of on a terminal nobody reads. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "log.h"
#include "progress.h"

static bool log_verbose;
static bool log_to_journal; /* stderr is the journal: use "<N>" priority prefixes */

static const char *const level_prefix[] = {
	[XBD_LOG_ERR] = "error: ",
	[XBD_LOG_WARN] = "warning: ",
	[XBD_LOG_INFO] = "",
	[XBD_LOG_DEBUG] = "debug: ",
};

/* syslog priorities: err, warning, info, debug */
static const int journal_priority[] = { 3, 4, 6, 7 };

void xbd_vlog(enum xbd_log_level level, const char *fmt, va_list ap)
{
	char line[1024];
	size_t n;

	if (level == XBD_LOG_DEBUG && !log_verbose)
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	/* libbpf and libxdp end their messages with '\n'; ours do not. One line either way. */
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = '\0';
	xb_progress_hold(); /* a progress line on the terminal goes first */
	if (log_to_journal)
		fprintf(stderr, "<%d>%s%s\n", journal_priority[level], level_prefix[level], line);
	else
		fprintf(stderr, "xdpband: %s%s\n", level_prefix[level], line);
	xb_progress_release();
}

void xbd_log(enum xbd_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	xbd_vlog(level, fmt, ap);
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

void xbd_log_init(bool verbose)
{
	log_verbose = verbose;
	log_to_journal = getenv("JOURNAL_STREAM") != NULL;
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
