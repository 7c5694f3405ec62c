/* libxdpban.h - the userspace side of the xdpban state, shared by the daemon xdpband, the CLI
 * xdpban, the tests and the benchmarks: opening the maps, addresses and keys, config, bans,
 * counters, stats, reports, and the control protocol. It never attaches programs and never
 * prints: it returns 0 or -errno and, where a message helps, fills an error buffer with one
 * line that the caller prints.
 *
 * CONTRACT between the CLI/library owner and the daemon owner: change a signature here only
 * together with every caller.
 */
#ifndef LIBXDPBAN_H
#define LIBXDPBAN_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <linux/types.h>
#include "xdpban_config.h"
#include "xdpban_maps.h"
#include "xdpban_policy.h"
#include "xdpban_state.h"
#include "xdpban_stats.h"

#define XB_ERRLEN 256

/* File descriptors of the data path's maps (and of the report program, when loaded). */
struct xb_maps {
	int config, policy4, policy6, counts, bans, stats, events;
	int report_prog; /* -1 when not loaded */
	int ncpus;       /* possible CPUs, for the per-CPU stats */
	bool owned;      /* the fds were opened by xb_maps_open_pinned and are closed by close */
};

/* Opens the pinned maps under pin_dir (NULL: XDPBAN_PIN_DIR_DEFAULT, then
 * XDPBAN_PIN_DIR_IPROUTE2). -ENOENT with a message naming the directory when none is there. */
int xb_maps_open_pinned(struct xb_maps *m, const char *pin_dir, char *err, size_t errlen);
void xb_maps_close(struct xb_maps *m);

/* An address or prefix as the operator writes it: "192.0.2.1", "192.0.2.0/24", "2001:db8::/48".
 * Strict: no hostnames, no host bits set past the length, length in range. */
struct xb_prefix {
	__u8 family; /* XDPBAN_FAMILY_INET or XDPBAN_FAMILY_INET6 */
	__u8 plen;
	__u8 addr[16]; /* network byte order */
};
int xb_prefix_parse(const char *text, struct xb_prefix *out, char *err, size_t errlen);
int xb_prefix_format(const struct xb_prefix *p, char *buf, size_t len);
/* The data path's key for an address, at the given IPv6 prefix length. */
void xb_key_from_addr(const struct xb_prefix *addr, __u8 v6_prefix, struct xdpban_key *key);
int xb_key_format(const struct xdpban_key *key, char *buf, size_t len); /* "ADDR" or "ADDR/LEN" */

/* The config in force (the defaults when the map entry is unset). */
int xb_config_read(const struct xb_maps *m, struct xdpban_config *cfg);
/* Writes cfg after xdpban_config_valid(); -EINVAL with a message otherwise. */
int xb_config_write(const struct xb_maps *m, const struct xdpban_config *cfg, char *err,
		    size_t errlen);
/* Applies one `set KEY VALUE` (limit, window, ban-time, ipv6-prefix, errors, drop) to *cfg;
 * -EINVAL with a message naming the key or value that is wrong; *cfg untouched then. */
int xb_config_set(struct xdpban_config *cfg, const char *key, const char *value, char *err,
		  size_t errlen);

/* Bans. A prefix at the key's granularity (IPv4 /32, IPv6 /v6_prefix) goes into xdpban_bans;
 * a wider one becomes a timed deny entry in the policy tries (list XDPBAN_LIST_MANUAL_BAN).
 * seconds 0 = permanent. Refuses (-EPERM, message) a ban overlapping a trusted entry. */
int xb_ban(const struct xb_maps *m, const struct xb_prefix *p, __u32 seconds, char *err,
	   size_t errlen);
int xb_unban(const struct xb_maps *m, const struct xb_prefix *p, char *err, size_t errlen);

/* One active ban, whichever table holds it. Times converted to wall clock. */
struct xb_ban_info {
	char prefix[64];     /* "ADDR" or "ADDR/LEN" */
	__u32 count;         /* errors that caused it; 0 for manual */
	const char *reason;  /* "errors", "manual" or "reported" */
	__s64 seconds_left;  /* -1 = permanent */
	time_t started;      /* wall clock */
	__u32 classes;       /* enum xdpban_class bits */
};
typedef int (*xb_ban_cb)(const struct xb_ban_info *ban, void *ctx);
/* Calls cb for every active (unexpired) ban; stops early if cb returns non-zero. */
int xb_ban_foreach(const struct xb_maps *m, xb_ban_cb cb, void *ctx);

/* Removes expired bans, expired timed deny entries and counters whose window has passed.
 * Returns the number removed or -errno. */
int xb_sweep(const struct xb_maps *m, __u64 now_ns);

/* What `xdpban query ADDR` shows. */
struct xb_query_info {
	__u32 count;          /* errors in the current window (0 if none or window passed) */
	bool banned;
	__s64 seconds_left;   /* of the ban; -1 permanent; 0 when not banned */
	__u32 policy;         /* enum xdpban_verdict */
	char policy_match[64]; /* the matching prefix, "" if none */
	__u32 policy_list;    /* list_id of the match */
};
int xb_query(const struct xb_maps *m, const struct xb_prefix *addr, struct xb_query_info *out);

/* Summed over CPUs. */
int xb_stats_read(const struct xb_maps *m, struct xdpban_stat_value out[XDPBAN_STAT__MAX]);
const char *xb_stat_name(enum xdpban_stat s); /* "passed", "drop_deny", ... stable names */
/* Counts entries (tracked sources in xdpban_counts, bans in xdpban_bans). */
int xb_count_tracked(const struct xb_maps *m);
int xb_count_banned(const struct xb_maps *m, __u64 now_ns); /* unexpired only */

/* Reports count errors seen by an application; needs m->report_prog. *status gets enum
 * xdpban_report_status, *new_count the source's count. */
int xb_report(const struct xb_maps *m, const struct xb_prefix *addr, __u32 count,
	      __u32 *status, __u32 *new_count);

/* CLOCK_BOOTTIME now, and conversion of a boot-clock time to wall clock. */
__u64 xb_boot_ns(void);
time_t xb_boot_to_wall(__u64 boot_ns);
__u64 xb_wall_to_boot(time_t wall);

#endif /* LIBXDPBAN_H */
