/* xdpban.h - the xdpban library for applications (libxdpban, `pkg-config --cflags --libs
 * xdpban`; man libxdpban(3)). A service that sees errors only it can judge (a bad connection
 * cookie, a forged DNS cookie) reports them here, and they are counted by the data path's own
 * report program on the pinned maps: the same counter, window and ban rule as errors on the
 * wire (docs/datapath.md, sections 4 and 7), at the cost of one BPF_PROG_TEST_RUN syscall and
 * no daemon round trip.
 *
 * Every function returns 0 or a negative errno (documented per function and in the man page);
 * nothing prints. One handle may be shared by any number of threads.
 *
 * This header is installed: it holds only what applications need and no libbpf type. The
 * daemon's internal library (user/lib/libxdpban.h, prefix xb_) is not part of it.
 */
#ifndef XDPBAN_H
#define XDPBAN_H

#include <stdbool.h>
#include <sys/socket.h>
#include "xdpban_report.h" /* enum xdpban_report_status: what a report did */

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility; only what carries this is exported. */
#ifndef XDPBAN_API
#define XDPBAN_API __attribute__((visibility("default")))
#endif

/* The most errors one report may add: the highest limit there can be, so one report can ban
 * under any config, and never more (the CLI and the control socket take the same range). */
#define XDPBAN_REPORT_COUNT_MAX 1000000000u

/* The environment variable xdpban_open(NULL, ...) reads for the pin directory. */
#define XDPBAN_PIN_DIR_ENV "XDPBAN_PIN_DIR"

/* An open view of one xdpban state: its pinned maps and the loaded report program. */
struct xdpban_handle;

/* What a report did. */
struct xdpban_result {
	unsigned int status; /* enum xdpban_report_status: counted, banned, trusted, ... */
	unsigned int count;  /* the source's count after the report (the crossing count if it
			      * banned); 0 when nothing was counted */
};

/* Opens the maps pinned in pin_dir and loads the report program onto them, once. pin_dir NULL:
 * $XDPBAN_PIN_DIR when set and not empty, else /sys/fs/bpf/xdpban (xdpband), else
 * /sys/fs/bpf/xdp/globals (a plain `ip link` attachment). Works whether a daemon runs or not.
 * Needs root (CAP_BPF and CAP_NET_ADMIN, and read access to the pins).
 * 0 and *h, or: -EINVAL (h NULL), -ENOENT (no xdpban maps pinned there), -EPROTO (pins of
 * another shape: another xdpban version), -EPERM/-EACCES (not privileged), -ENAMETOOLONG
 * (pin_dir), -ENOMEM, or the errno of the failed load. */
XDPBAN_API int xdpban_open(const char *pin_dir, struct xdpban_handle **h);

/* Closes the handle (NULL is fine). No other thread may use it meanwhile or afterwards. */
XDPBAN_API void xdpban_close(struct xdpban_handle *h);

/* Reports count errors (1..XDPBAN_REPORT_COUNT_MAX) seen from addr, a struct sockaddr_in or
 * sockaddr_in6 as recvfrom() fills it. An IPv4-mapped IPv6 address (::ffff:a.b.c.d, what a
 * dual-stack socket shows for IPv4 clients) is reported as the IPv4 address, the source the
 * data path sees. IPv6 sources are counted per the configured prefix (ipv6-prefix, /64 by
 * default). Trusted, denied, exempt and already banned sources are not counted: out->status
 * says which (the request succeeded all the same).
 * out may be NULL. 0, or: -EINVAL (h or addr NULL, count 0), -ERANGE (count above
 * XDPBAN_REPORT_COUNT_MAX), -EAFNOSUPPORT (neither AF_INET nor AF_INET6), -ESTALE (the maps
 * were replaced or removed: a daemon restart; close and open again), or the syscall's errno. */
XDPBAN_API int xdpban_report(struct xdpban_handle *h, const struct sockaddr *addr,
			     unsigned int count, struct xdpban_result *out);

/* Whether addr is banned now: its key (the address, or its IPv6 prefix) holds an unexpired
 * ban, or a manual prefix ban (`xdpban ban PREFIX`) covers it, as `xdpban query` says. A deny
 * or trusted list entry is policy, not a ban. Reads the mapped ban table (no syscall) and the
 * policy trie (one lookup; IPv6 also reads the config for its prefix length).
 * 0 and *banned, or -EINVAL (h, addr or banned NULL), -EAFNOSUPPORT, -ESTALE, or errno. */
XDPBAN_API int xdpban_is_banned(struct xdpban_handle *h, const struct sockaddr *addr,
				bool *banned);

/* One line saying what a negative return of this library means here ("no xdpban maps are
 * pinned in DIR ...", DIR the directory this thread's last xdpban_open looked in); any other
 * errno gets its usual description. Never NULL; thread-safe. */
XDPBAN_API const char *xdpban_strerror(int err);

/* The name of an enum xdpban_report_status ("counted", "banned", ...), as `xdpban report`
 * prints it; "?" for another value. */
XDPBAN_API const char *xdpban_status_name(unsigned int status);

#ifdef __cplusplus
}
#endif

#endif /* XDPBAN_H */
