/* log.h - the daemon's log: one line per message on stderr, which systemd stores in the
 * journal (with a syslog priority prefix when stderr is the journal). Debug lines appear only
 * with -v. Never writes to a file, never exits the process. */
#ifndef XDPBAND_LOG_H
#define XDPBAND_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

enum xbd_log_level {
	XBD_LOG_ERR,
	XBD_LOG_WARN,
	XBD_LOG_INFO,
	XBD_LOG_DEBUG,
};

/* verbose enables debug lines, and the libbpf/libxdp messages they route here. */
void xbd_log_init(bool verbose);
void xbd_log(enum xbd_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void xbd_vlog(enum xbd_log_level level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

#define pr_err(...) xbd_log(XBD_LOG_ERR, __VA_ARGS__)
#define pr_warn(...) xbd_log(XBD_LOG_WARN, __VA_ARGS__)
#define pr_info(...) xbd_log(XBD_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) xbd_log(XBD_LOG_DEBUG, __VA_ARGS__)

/* "2026-11-30 10:20:00 UTC": how every wall-clock time appears in the log. */
void xbd_format_wall(time_t t, char *buf, size_t len);

#endif /* XDPBAND_LOG_H */
