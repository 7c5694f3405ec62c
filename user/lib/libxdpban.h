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
#include <stdio.h>
#include <time.h>
#include <linux/types.h>
#include "xdpban_config.h"
#include "xdpban_maps.h"
#include "xdpban_policy.h"
#include "xdpban_state.h"
#include "xdpban_stats.h"

#define XB_ERRLEN 256

/* text as a message quotes it: printable ASCII as it is, any other byte as \xNN (so a message
 * stays one line of plain text). Cut to fit out (outlen >= 1 bytes); returns out. */
const char *xb_quote(const char *text, char *out, size_t outlen);
/* The noun of a count as a message writes it: one when n is 1, else many ("1 entry",
 * "0 entries", "2 entries"), for printf's "%zu %s". */
const char *xb_plural(unsigned long long n, const char *one, const char *many);

/* File descriptors of the data path's maps, one per row of XDPBAN_MAPS (xdpban_maps.h), named
 * by its field column (and of the report program, when loaded). Every map is required, and:
 *   - bans, baninfo, counts, seed: the tables, mapped and changed only through
 *     table.h; ban, unban, sweep and query fail without them;
 *   - flat4, flat6: every write of the policy tries keeps them right (policy.h); policy writes
 *     fail without them;
 *   - flat4x, level 3 of the IPv4 table, and flat6x, the IPv6 lines: policy writes keep their
 *     lines exact; a writer whose fd is not that map turns the family's lines off instead;
 *   - host6, the IPv6 hosts at the end of the lines: likewise (host6_live.c). */
struct xb_mapped;
struct xb_ban_run;
struct xb_map_views;
struct xb_maps {
#define XB_MAP_FD(name, field, ...) int field;
	XDPBAN_MAPS(XB_MAP_FD)
#undef XB_MAP_FD
	int report_prog; /* -1 when not loaded */
	int ncpus;       /* possible CPUs, for the per-CPU stats */
	bool owned;      /* the fds were opened by xb_maps_open_pinned and are closed by close */
	struct xb_map_views *views; /* NULL, or the policy maps kept mapped (xb_maps_keep_views) */
	/* NULL, or the ban and counter tables mapped once for the life of these fds
	 * (xb_maps_map_tables(), table.h): every ban, unban, query and sweep then borrows them
	 * instead of mapping and unmapping a whole table, milliseconds for a large one. */
	struct xb_mapped *mapped;
	struct xb_ban_run *ban_run; /* NULL, or a run of bans on (xb_ban_run_begin()) */
};

/* A struct xb_maps with no map open, to fill in: { XB_MAPS_NONE, .ncpus = 1 }. */
#define XB_MAP_NONE(name, field, ...) .field = -1,
#define XB_MAPS_NONE XDPBAN_MAPS(XB_MAP_NONE) .report_prog = -1

/* Opens the pinned maps under pin_dir (NULL: XDPBAN_PIN_DIR_DEFAULT, then
 * XDPBAN_PIN_DIR_IPROUTE2). -ENOENT with a message naming the directory when none is there. */
int xb_maps_open_pinned(struct xb_maps *m, const char *pin_dir, char *err, size_t errlen);
/* The directory xb_maps_open_pinned(NULL) would use, or NULL when neither holds the maps. */
const char *xb_pin_dir_find(void);
void xb_maps_close(struct xb_maps *m);
/* Whether every map pinned in pin_dir is still the one m holds (compared by map id): 0 if so,
 * -ESTALE if one was pinned anew (a restarted loader made new maps), -ENOENT if one is gone (it
 * stopped, or is still pinning), or another -errno. */
int xb_maps_pinned_same(const struct xb_maps *m, const char *pin_dir);
/* Keeps the mmapable maps a compile writes mapped from one compile to the next, until
 * xb_maps_drop_views or xb_maps_close: a fresh mapping's first store into each page is costly
 * on some VMs. xb_maps_map_tables (table.h) does it too, for the daemon. Optional; one thread
 * at a time. 0 or -ENOMEM. */
int xb_maps_keep_views(struct xb_maps *m);
void xb_maps_drop_views(struct xb_maps *m);
/* A run of bans and unbans (the daemon applying a turn of the fleet's entries): between begin
 * and end, the checks of xb_ban and xb_unban read the config and each family's policy and
 * exempt tries once, not once a call, and a write through the library drops its copy. For a
 * thread that changes the maps only through the library meanwhile. 0 or -ENOMEM. */
int xb_ban_run_begin(struct xb_maps *m);
void xb_ban_run_end(struct xb_maps *m);
struct xdpban; /* the skeleton, build/xdpban.skel.h */
/* Sizes the counter and ban tables of an opened, not yet loaded skeleton: counter slots, and
 * groups of the ban table (XDPBAN_BAN_GROUPS(bans) for a capacity of bans); 0 keeps a size. */
int xb_tables_size(struct xdpban *skel, __u32 counters_max, __u32 ban_groups);
/* Sizes the IPv6 lines (xdpban_flat6x) of such a skeleton for lines6_max lines, and the IPv6
 * hosts (xdpban_host6) for as many /128 entries. 0 or -errno. */
int xb_lines6_size(struct xdpban *skel, __u32 lines6_max);
/* Marks the data path of an opened, not yet loaded skeleton multi-buffer aware
 * (BPF_F_XDP_HAS_FRAGS): drivers then take it natively above their single-buffer MTU, and
 * BPF_PROG_TEST_RUN passes it frames in several buffers. Every loader of the attached
 * program calls it; the report program needs no frags. 0 or -errno. */
int xb_datapath_frags(struct xdpban *skel);
/* Fills m with the fds of a loaded skeleton (not owned: the skeleton closes them). */
void xb_maps_from_skel(struct xb_maps *m, const struct xdpban *skel);

/* An address or prefix as the operator writes it: "192.0.2.1", "192.0.2.0/24", "2001:db8::/48".
 * Strict: no hostnames, no host bits set past the length, length in range, and no IPv4-mapped
 * IPv6 address or prefix (inside ::ffff:0:0/96: the data path sees IPv4 traffic as IPv4, so
 * such an entry never matches it). */
struct xb_prefix {
	__u8 family; /* XDPBAN_FAMILY_INET or XDPBAN_FAMILY_INET6 */
	__u8 plen;
	__u8 addr[16]; /* network byte order */
};
int xb_prefix_parse(const char *text, struct xb_prefix *out, char *err, size_t errlen);
/* The bits of an address of the family: 32 or 128. */
unsigned int xb_family_bits(__u8 family);
/* The same for what xdpband wrote itself (the state file): it also takes an IPv4-mapped IPv6
 * key, which a spoofed IPv6 packet can earn a ban under with ipv6-prefix 96 or more. */
int xb_prefix_parse_saved(const char *text, struct xb_prefix *out, char *err, size_t errlen);
int xb_prefix_format(const struct xb_prefix *p, char *buf, size_t len);
/* The data path's key for an address, at the given IPv6 prefix length, narrowed as the data
 * path narrows it (xdpban_narrow.h) when m is not NULL. */
void xb_key_from_addr(const struct xb_maps *m, const struct xb_prefix *addr, __u8 v6_prefix,
		      struct xdpban_key *key);
int xb_key_format(const struct xdpban_key *key, char *buf, size_t len); /* "ADDR" or "ADDR/LEN" */
void xb_key_to_prefix(const struct xdpban_key *key, struct xb_prefix *p);
bool xb_prefix_is_addr(const struct xb_prefix *p); /* a /32 or /128 */
bool xb_prefix_contains(const struct xb_prefix *outer, const struct xb_prefix *inner);
/* A total order (family, length, address) for sorted sets of prefixes: <0, 0 or >0. */
int xb_prefix_cmp(const struct xb_prefix *a, const struct xb_prefix *b);
/* Address order: IPv4 first, then by start address, a shorter prefix before the longer ones
 * that start where it does (every prefix after those that hold it). <0, 0 or >0. */
int xb_prefix_order(const struct xb_prefix *a, const struct xb_prefix *b);

/* The config in force (the defaults when the map entry is unset). */
int xb_config_read(const struct xb_maps *m, struct xdpban_config *cfg);
/* Writes cfg after xb_config_valid(); -EINVAL with a message otherwise. */
int xb_config_write(const struct xb_maps *m, const struct xdpban_config *cfg, char *err,
		    size_t errlen);
/* Applies one `set KEY VALUE` (limit, window, ban-time, ipv6-prefix, errors, drop, spoof,
 * hop-tolerance, learn, mode, and the rules of limits FIELD.CLASS and FIELD.PORT) to *cfg;
 * -EINVAL with a message naming the key or value that is wrong; *cfg untouched then. */
int xb_config_set(struct xdpban_config *cfg, const char *key, const char *value, char *err,
		  size_t errlen);
/* The i-th key `set` takes, in order, with the rule keys of the classes (limit.probe, ...);
 * NULL past the last. The rule keys of ports (limit.6969) are not listed: any port is one. */
const char *xb_config_key(size_t i);
/* The name of a rule of limits (enum xdpban_rule_id; port for XDPBAN_RULE_PORT): "global",
 * a class name ("probe"), "6969/udp", or "none". 0 or -ENOSPC. */
#define XB_RULE_NAME_MAX 16
int xb_rule_name(__u8 rule, __u16 port, char *buf, size_t len);
/* True when rule is an enum xdpban_rule_id value (XDPBAN_RULE_NONE too). */
bool xb_rule_known(__u8 rule);
/* True when `set` knows key (a rule key of a port too). */
bool xb_config_key_known(const char *key);
/* The value that `set` takes to give a rule's field back to the next rule down. */
#define XB_RULE_INHERIT "inherit"
/* The text of rule key's value in cfg ("3", "2h" or XB_RULE_INHERIT): 0, -ENOENT for a key that
 * is not a rule's, -ENOSPC. */
int xb_config_rule_text(const struct xdpban_config *cfg, const char *key, char *buf,
			size_t len);
/* The rules of limits of cfg as `set` keys and values, "limit.probe 2, window.6969 1h" (ports
 * in order), or "none": 0 or -ENOSPC. */
int xb_config_rules_format(const struct xdpban_config *cfg, char *buf, size_t len);
/* xdpban_config_valid(), and every rule of limits valid (xdpban_rule_valid), the port rules each
 * with a port of its own: what userspace checks before it writes an entry. */
bool xb_config_valid(const struct xdpban_config *cfg);
/* True when the map entry is unset (or invalid) and the data path runs on the defaults. */
int xb_config_is_default(const struct xb_maps *m, bool *is_default);
/* The one duration format of xdpban, both ways. Parsed: "30" (seconds), or numbers each with
 * a unit w, d, h, m or s, largest first ("30s", "5m", "1d12h", "2w"), in 1..XDPBAN_TIME_MAX_S;
 * -EINVAL/-ERANGE, message naming `what` (an option as "--for", a key as "window").
 * Formatted: days, hours, minutes and seconds, zero parts left out ("45s", "59m59s", "7d",
 * "1d0h" never): what every human-readable output prints, and what the parser takes back.
 * buf holds at least XB_DURATION_TEXT_MAX bytes, else -ENOSPC. */
int xb_duration_parse(const char *what, const char *text, __u32 *seconds, char *err,
		      size_t errlen);
#define XB_DURATION_TEXT_MAX 32 /* "213503982334601d23h59m59s" and its NUL, with room */
int xb_duration_format(unsigned long long seconds, char *buf, size_t len);
/* A plain decimal integer in min..max. -EINVAL/-ERANGE, message naming `what`. */
int xb_u32_parse(const char *what, const char *text, __u32 min, __u32 max, __u32 *out,
		 char *err, size_t errlen);
/* Error classes as "malformed,reported" or "none", both ways, with the names of
 * XDPBAN_CLASSES; XB_CLASSES_TEXT_MAX holds the longest formatting (every class). */
int xb_classes_parse(const char *what, const char *text, __u32 *mask, char *err, size_t errlen);
int xb_classes_format(__u32 mask, char *buf, size_t len);
const char *xb_class_name(enum xdpban_class c); /* "malformed", ...; "?" for not one class */
#define XB_CLASS_SIZE_(id, name, what) +sizeof(name)
#define XB_CLASSES_TEXT_MAX (1 XDPBAN_CLASSES(XB_CLASS_SIZE_)) /* names, commas, NUL */
/* The class names as messages and help list them, a string literal to write between "one of"
 * and " or none": " malformed, reported, ...,". */
#define XB_CLASS_WORD_(id, name, what) " " name ","
#define XB_CLASS_WORDS XDPBAN_CLASSES(XB_CLASS_WORD_)
/* The spoof defence's settings as `set` and the config file write them: a mode "off", "hop"
 * or "verified" (enum xdpban_spoof_mode), and a learning rate "1/N" (N = 2^learn_shift, 1 to
 * 65536) or "off" (XDPBAN_LEARN_OFF). Parsers: 0, or -EINVAL with a message naming `what`. */
int xb_spoof_parse(const char *what, const char *text, __u8 *mode, char *err, size_t errlen);
const char *xb_spoof_name(__u8 mode); /* "?" out of range */
int xb_learn_parse(const char *what, const char *text, __u8 *shift, char *err, size_t errlen);
int xb_learn_format(__u8 shift, char *buf, size_t len); /* 0, -EINVAL or -ENOSPC */
/* What a ban or a list's drop does, as `set mode` and [bans] mode write it: "enforce" or
 * "observe" (enum xdpban_mode). The parser: 0, or -EINVAL with a message naming `what`. */
int xb_mode_parse(const char *what, const char *text, __u8 *mode, char *err, size_t errlen);
const char *xb_mode_name(__u8 mode); /* "?" out of range */

/* Bans. A prefix at the key's granularity (IPv4 /32, IPv6 /v6_prefix) goes into xdpban_bans;
 * a wider one becomes a timed deny entry in the policy tries (list XDPBAN_LIST_MANUAL_BAN).
 * seconds 0 = permanent. Refuses (-EPERM, message) a ban overlapping a trusted entry. */
int xb_ban(const struct xb_maps *m, const struct xb_prefix *p, __u32 seconds, char *err,
	   size_t errlen);
/* Whether p and seconds are a ban at all, as xb_ban checks them before it reads a map: 0, or
 * -EINVAL (a family, a length of 0 or past the family's bits) or -ERANGE (seconds) with the
 * reason in err. What a caller refuses as bad input, before it asks anything of the maps. */
int xb_ban_args_check(const struct xb_prefix *p, __u32 seconds, char *err, size_t errlen);
/* An operator's comment, on a manual ban or a single list entry: UTF-8 text of at most XB_COMMENT_MAX bytes without control
 * characters (it is printed to terminals and written to the state file as it is). 0, or
 * -EINVAL with one line in err. */
#define XB_COMMENT_MAX 200
int xb_ban_comment_check(const char *text, char *err, size_t errlen);
/* Whether p may be banned here, as xb_ban checks it: 0, or -EPERM with the reason in err (it
 * is or holds an exempt address, or is an IPv6 network whose addresses are keyed one by one,
 * xdpban_narrow.h); -errno when the tries cannot be read. For bans that come from elsewhere: a
 * restored state. */
int xb_ban_check(const struct xb_maps *m, const struct xb_prefix *p, char *err, size_t errlen);
/* Lifts the ban of p exactly as it was banned; for an address, also the ban of its source key
 * (its /v6_prefix), the ban that stops it. *lifted: what was lifted. -ENOENT with a message
 * when there is none, naming the manual prefix ban the address lies in, if one does. */
int xb_unban(const struct xb_maps *m, const struct xb_prefix *p, struct xb_prefix *lifted,
	     char *err, size_t errlen);
/* Lifts every active ban, of the ban table and the manual prefix bans, or only those of one
 * reason (enum xdpban_ban_reason; -1: any; a prefix ban's is manual). cb (may be NULL) is
 * told of each ban lifted, as it is; *lifted counts them. 0, or -errno with a message (what
 * was lifted by then stays lifted, and counted). */
typedef void (*xb_unbanned_cb)(const struct xb_prefix *p, void *ctx);
int xb_unban_all(const struct xb_maps *m, int reason, xb_unbanned_cb cb, void *ctx,
		 size_t *lifted, char *err, size_t errlen);

/* One active ban, whichever table holds it. Times converted to wall clock. */
/* The error that crossed a ban's limit (struct xdpban_ban_info): its destination port and
 * IP protocol, and the rule of limits that judged it. proto 0: none (a manual, remote or
 * restored ban, a report, a malformed packet). */
struct xb_last_error {
	__u16 port;  /* TCP or UDP, host order; 0 for another protocol */
	__u8 proto;  /* IPPROTO_* */
	__u8 rule;   /* enum xdpban_rule_id */
};
/* Of a ban as the tables hold it. */
struct xb_last_error xb_last_error_of(const struct xdpban_ban *ban);
/* "6969/udp", "22/tcp", "icmp", "ipv6-icmp": the port and protocol of an error, "" for none.
 * 0 or -ENOSPC. */
#define XB_LAST_ERROR_TEXT_MAX 16
int xb_last_error_format(const struct xb_last_error *e, char *buf, size_t len);

struct xb_ban_info {
	char prefix[64];     /* "ADDR" or "ADDR/LEN" */
	__u32 count;         /* errors that caused it; 0 for manual */
	const char *reason;  /* "errors", "manual" or "reported" */
	__s64 seconds_left;  /* -1 = permanent */
	time_t started;      /* wall clock; 0 = not recorded (prefix bans in the policy tries) */
	__u32 classes;       /* enum xdpban_class bits */
	const char *table;   /* where it lives: "bans" (xdpban_bans) or "policy" (a prefix ban) */
	bool observed;       /* observe mode is in force: the ban drops nothing */
	bool has_drops;      /* drops is counted: a ban of the ban table, not a prefix ban */
	__u64 drops;         /* packets it dropped while in force (observed, in observe mode) */
	struct xb_last_error last; /* the error that crossed the limit */
};
typedef int (*xb_ban_cb)(const struct xb_ban_info *ban, void *ctx);
/* Calls cb for every active (unexpired) ban, in no particular order; stops early and returns
 * what cb returned if that is non-zero. Reads with batch lookups. */
int xb_ban_foreach(const struct xb_maps *m, xb_ban_cb cb, void *ctx);
const char *xb_reason_name(__u8 reason); /* enum xdpban_ban_reason -> "errors", ... or "?" */
/* The reason xb_reason_name calls name: 0, or -EINVAL with err naming the known ones. */
int xb_reason_parse(const char *name, __u8 *reason, char *err, size_t errlen);

/* Removes expired bans, expired timed deny entries and counters whose window has passed.
 * Returns the number removed or -errno. */
int xb_sweep(const struct xb_maps *m, __u64 now_ns);

/* Exempt sources (docs/datapath.md, section 8): never counted and never banned, whatever
 * arrives. The built-in set is xdpban_builtin_exempt(); the tries xdpban_exempt4/6 hold the
 * never-ban lists and the host's addresses, written by xdpband only (exempt.h). */
#define XB_EXEMPT_BUILTIN 0 /* the origin userspace gives the built-in set: never in a trie */
struct xb_exempt_entry {
	struct xb_prefix prefix;
	struct xdpban_exempt val; /* origin (enum xdpban_exempt_origin, or XB_EXEMPT_BUILTIN) and
				   * ifindex (XDPBAN_EXEMPT_HOST) */
	__u8 link_plen; /* an IPv6 host address read from rtnetlink: the length of its subnet
			 * (the neighbours on its link); 0 otherwise, and in what a trie holds */
};
/* "built-in", "never-ban", "host", "fleet" ("?" otherwise): the names `query` and `lists` use. */
const char *xb_exempt_origin_name(__u32 origin);
/* The built-in prefix that holds all of p (an address or a prefix): true and *match, or false. */
bool xb_exempt_builtin(const struct xb_prefix *p, struct xb_prefix *match);
typedef int (*xb_exempt_cb)(const struct xb_exempt_entry *e, void *ctx);
/* Every entry of both tries (IPv4 first); stops at, and returns, a non-zero return of cb. */
int xb_exempt_foreach(const struct xb_maps *m, xb_exempt_cb cb, void *ctx);
/* What keeps p from ever being banned: an exempt prefix that holds all of p (the built-in set
 * first, then the longest of the tries), or, when inside is not NULL and none does, an entry
 * of the tries that lies inside p (*inside set to true). 0 and *out, -ENOENT, or -errno. */
int xb_exempt_find(const struct xb_maps *m, const struct xb_prefix *p,
		   struct xb_exempt_entry *out, bool *inside);
/* Why e is exempt, for a message about p (an address or prefix that e holds, or e itself):
 * "host address of eth1", "never-ban list", "never-ban list 198.51.100.0/24" (when e is wider
 * than p), "built in: 224.0.0.0/4". The interface is named in this process's network
 * namespace ("ifindex 7" when it has no such interface). */
void xb_exempt_describe(const struct xb_exempt_entry *e, const struct xb_prefix *p, char *buf,
			size_t len);
/* Entries of the tries per origin and family ([0] IPv4, [1] IPv6). */
struct xb_exempt_counts {
	__u32 never_ban[2];
	__u32 host[2];
};
int xb_exempt_count(const struct xb_maps *m, struct xb_exempt_counts *out);

/* What `xdpban query ADDR` shows. */
struct xb_query_info {
	__u32 count;          /* errors in the current window (0 if none or window passed) */
	bool banned;          /* a ban in xdpban_bans or a manual prefix ban applies */
	__s64 seconds_left;   /* of the ban; -1 permanent; 0 when not banned */
	__u32 policy;         /* enum xdpban_verdict, as the data path sees it now */
	char policy_match[64]; /* the matching prefix, "" if none */
	__u32 policy_list;    /* list_id of the match */
	char key[64];         /* the counting/ban key of the address ("2001:db8::/64") */
	const char *ban_reason; /* xb_reason_name() of the ban; NULL when not banned */
	__u8 classes;         /* enum xdpban_class bits of the errors of the current window */
	__u8 ban_classes;     /* of the error that crossed the limit (errors and reports) */
	/* The limits that judge the errors of the current window's classes (xdpban_limits_of,
	 * without a port: a port's rule is known once it bans) */
	__u32 limit;
	__u8 rule;            /* enum xdpban_rule_id */
	struct xb_last_error ban_last; /* of the ban in the ban table; none for a prefix ban */
	time_t ban_started;   /* wall clock start of that ban; 0 for a prefix ban */
	/* the spoof defence's record of the key (docs/datapath.md, section 8) */
	bool verified;        /* its hop count came from an established TCP connection */
	__s64 verified_ago_s; /* how long ago (to 64 s) it was last verified */
	bool has_hop;         /* hop holds its reference hop count (verified, or this window's
			       * first error) */
	__u8 hop;
	bool disputed;        /* an error disagreed with the reference: no counting until the
			       * window ends */
	bool exempt;          /* never counted or banned (built-in, never-ban or host address) */
	const char *exempt_why; /* "built-in", "never-ban" or "host", when exempt */
	struct xb_exempt_entry exempt_match; /* the exempt prefix that holds the address */
	bool observed;        /* banned, denied or not allowed, in observe mode: passed, and
			       * counted as what would have been dropped */
	bool has_drops;       /* banned in the ban table, whose bans count their drops */
	__u64 drops;          /* packets that ban dropped (or observed) */
	/* The observed deny list entry that holds the address, when the policy passes it on
	 * (an enforced list wins): its packets are counted under observed_deny. */
	char observed_match[64]; /* "" if none */
	__u32 observed_list;     /* its list_id */
};
/* addr must be a single address (/32 or /128): -EINVAL otherwise. */
int xb_query(const struct xb_maps *m, const struct xb_prefix *addr, struct xb_query_info *out);

/* Summed over CPUs. */
int xb_stats_read(const struct xb_maps *m, struct xdpban_stat_value out[XDPBAN_STAT__MAX]);
const char *xb_stat_name(enum xdpban_stat s); /* "passed", "drop_deny", ... stable names */
const char *xb_stat_help(enum xdpban_stat s); /* one sentence, for the metrics */
/* Sources with a counting window open (errors, or a dispute) in xdpban_counts. */
int xb_count_tracked(const struct xb_maps *m);
/* Sources whose hop count is verified (docs/datapath.md, section 8). */
int xb_count_verified(const struct xb_maps *m);
/* The tables' capacities: counter slots, and the bans the ban table is sized for. */
int xb_capacity(const struct xb_maps *m, __u32 *counters_max, __u32 *bans_max);
int xb_count_banned(const struct xb_maps *m, __u64 now_ns); /* unexpired only */
/* Unexpired manual prefix bans (the deny entries of XDPBAN_LIST_MANUAL_BAN in the policy
 * tries), each counted once whatever its length; xb_is_prefix_ban tells one entry. */
int xb_count_prefix_bans(const struct xb_maps *m);

/* Reports count errors seen by an application; needs m->report_prog. *status gets enum
 * xdpban_report_status, *new_count the source's count. */
int xb_report(const struct xb_maps *m, const struct xb_prefix *addr, __u32 count,
	      __u32 *status, __u32 *new_count);
const char *xb_report_status_name(__u32 status); /* "counted", "banned", ... */
/* Loads the report program from the embedded skeleton onto m's maps (bpf_map__reuse_fd) and
 * sets m->report_prog; for callers without a loaded object, e.g. the CLI with no daemon.
 * Needs m->owned (the fd is closed by xb_maps_close). */
int xb_report_prog_load(struct xb_maps *m, char *err, size_t errlen);

/* CLOCK_BOOTTIME now, and conversion of a boot-clock time to wall clock. */
__u64 xb_boot_ns(void);
time_t xb_boot_to_wall(__u64 boot_ns);
__u64 xb_wall_to_boot(time_t wall);
/* "2026-11-30T10:17:53Z". */
int xb_time_format(time_t wall, char *buf, size_t len);
/* A time of day as an operator writes one, into Unix seconds: RFC 3339 ("2026-12-05T06:00:00Z",
 * with a fraction, dropped, or an offset "+01:00"), a duration ago with its unit
 * (xb_duration_parse: "10m", "2h", "1d"; a bare number is not a time), or "@" and Unix
 * seconds. From 1970 to now (0..XB_TIME_UNIX_MAX). -EINVAL/-ERANGE, message naming `what`. */
#define XB_TIME_UNIX_MAX 253402300799LL /* 9999-12-31T23:59:59Z */
int xb_time_parse(const char *what, const char *text, time_t now, time_t *wall, char *err,
		  size_t errlen);

/* Every entry of a map, through bpf_map_lookup_batch where the map type has it (get_next_key
 * otherwise). cb gets each key and value (a per-CPU map's value is ncpus values); a non-zero
 * return stops the walk and is returned. Entries changed during the walk may be seen or not. */
typedef int (*xb_entry_cb)(const void *key, const void *value, void *ctx);
int xb_map_foreach(int fd, size_t key_size, size_t value_size, xb_entry_cb cb, void *ctx);
/* A map's max_entries, fixed when it was created. 0 or -errno. */
int xb_map_capacity(int fd, __u32 *max_entries);

/* Policy prefixes, both tries. Timed entries whose time has come are included (expired set). */
struct xb_policy_entry {
	struct xb_prefix prefix;
	struct xdpban_policy policy;
	bool expired; /* a timed entry the data path already ignores */
};
bool xb_is_prefix_ban(const struct xb_policy_entry *e);
typedef int (*xb_policy_cb)(const struct xb_policy_entry *e, void *ctx);
int xb_policy_foreach(const struct xb_maps *m, xb_policy_cb cb, void *ctx);
int xb_policy_foreach_family(const struct xb_maps *m, __u8 family, xb_policy_cb cb, void *ctx);
const char *xb_verdict_name(__u32 verdict); /* "none", "deny", "trusted", "allowed", ... */
/* The LPM key of a prefix, and the trie of its family. */
union xb_lpm_key {
	struct xdpban_lpm4_key v4;
	struct xdpban_lpm6_key v6;
};
size_t xb_lpm_key_make(const struct xb_prefix *p, union xb_lpm_key *key); /* key size */
size_t xb_lpm_key_size(__u8 family); /* struct xdpban_lpm4_key's or xdpban_lpm6_key's */
/* The prefix of an LPM key of the family (struct xdpban_lpm4_key or xdpban_lpm6_key). */
void xb_lpm_key_to_prefix(__u8 family, const void *key, struct xb_prefix *p);
int xb_policy_fd(const struct xb_maps *m, __u8 family);

/* The observed deny lists' tries xdpban_observed4/6: prefixes whose sources are counted under
 * observed_deny and never dropped for it (docs/datapath.md, section 2). */
struct xb_observed_entry {
	struct xb_prefix prefix;
	__u32 list_id; /* the list it came from, as in the policy tries */
};
/* Makes the tries hold exactly v[0..n): the config's XDPBAN_CFG_OBSERVE_LISTS bit goes off,
 * the tries are emptied and filled, and the bit goes on when n is not 0. Verdicts never
 * depend on the tries, so the packets of that short time are only not counted. 0 or -errno
 * with one line in err (the tries may then hold part of v, and the bit is off). */
int xb_observed_replace(const struct xb_maps *m, const struct xb_observed_entry *v, size_t n,
			char *err, size_t errlen);
typedef int (*xb_observed_cb)(const struct xb_observed_entry *e, void *ctx);
/* Calls cb for every entry of both tries, stopping at the first non-zero it returns. */
int xb_observed_foreach(const struct xb_maps *m, xb_observed_cb cb, void *ctx);
/* The verdict xb_lists_count and xb_verdict_name give an observed list, outside
 * enum xdpban_verdict. */
#define XB_VERDICT_OBSERVED 0x100u
/* The longest entry of the tries holding addr: 1 (in *found), 0 when none holds it, or -errno. */
int xb_observed_find(const struct xb_maps *m, const struct xb_prefix *addr,
		     struct xb_observed_entry *found);

/* What `xdpban lists` shows: prefixes per (list_id, verdict), sorted by list_id. Expired
 * manual bans are not counted. *out is malloc'ed. */
struct xb_list_count {
	__u32 list_id; /* XDPBAN_LIST_MANUAL_BAN for manual prefix bans */
	__u32 verdict; /* enum xdpban_verdict, or XB_VERDICT_OBSERVED for an observed list */
	__u32 ipv4, ipv6;
};
int xb_lists_count(const struct xb_maps *m, struct xb_list_count **out, size_t *n);

/* JSON (json-c) renderings; their field names are a contract documented in deploy/xdpban.8.
 * Each returns 0 and a new object in *out (the caller puts it), or -errno. */
struct json_object;
/* ["malformed", ...]: the names of the classes in mask, as every JSON reply writes them. */
struct json_object *xb_json_classes(__u32 mask);
/* Adds "last_error" and "ban_rule" of a ban's error that crossed the limit (null: none). */
void xb_json_last_error(struct json_object *obj, const struct xb_last_error *e);
int xb_json_config(const struct xb_maps *m, struct json_object **out);
int xb_json_stats(const struct xb_maps *m, struct json_object **out);
/* The port rules in force (ports.h): {"guards": ["6969/bep15"], "open_tcp": ["22",
 * "8000-8100"], "open_udp": [], "probe_icmp": false}, pieces as the config file writes them. */
int xb_json_ports(const struct xb_maps *m, struct json_object **out);
/* config, ports, counts, stats */
int xb_json_status(const struct xb_maps *m, struct json_object **out);
/* The array of every active ban. Rendered in advance and streamed when serialised (a million
 * bans without a million objects): serialise it, do not walk it (it has no elements). */
int xb_json_bans(const struct xb_maps *m, struct json_object **out);
/* Writes the JSON array of every active ban, the same text xb_json_bans() serialises to,
 * straight to out as it is read: 0 or -errno (-EIO when out fails; out may then hold part of
 * the array). */
int xb_json_bans_write(const struct xb_maps *m, FILE *out);
int xb_json_query(const struct xb_maps *m, const struct xb_prefix *addr,
		  struct json_object **out);
int xb_json_lists(const struct xb_maps *m, struct json_object **out); /* array of lists */
/* {"never_ban": {"ipv4": N, "ipv6": N}, "host": {...}}: the entries of the exempt tries. */
int xb_json_exempt(const struct xb_maps *m, struct json_object **out);
/* One line, '/' not escaped; points into obj (valid while obj lives). */
const char *xb_json_line(struct json_object *obj);

#endif /* LIBXDPBAN_H */
