/* xdpban_config.h - the runtime configuration contract between userspace and the XDP data path.
 *
 * One entry in the array map xdpban_config. The data path reads it on every packet, so it
 * holds only plain host-order integers. An entry whose magic is not XDPBAN_CFG_MAGIC (the
 * all-zero entry of a fresh map, e.g. after a plain `ip link ... xdp obj`) means "use the
 * defaults below". Never put pointers, strings or anything that needs parsing here.
 */
#ifndef XDPBAN_CONFIG_H
#define XDPBAN_CONFIG_H

#include <linux/types.h>

#define XDPBAN_CFG_MAGIC 0x78647062u /* "xdpb" */

/* Error classes, as bits. XDPBAN_CLASSES is the one list: the enum, the names that the config,
 * `set`, the JSON and the metrics use, and the per-class statistics (xdpban_stats.h) are made
 * from it. A new class is one row here and one function in bpf/classify.h. Never reorder the
 * rows: a row's position is its bit. C(ENUM, name, what it is). */
#define XDPBAN_CLASSES(C)                                                                      \
	C(MALFORMED, "malformed", "bad IP/TCP/UDP headers, impossible TCP flags")              \
	C(REPORTED, "reported", "errors an application reported through userspace")           \
	C(PROTOCOL, "protocol", "datagrams to a guarded UDP port that break its protocol")     \
	C(PROBE, "probe", "a TCP SYN or UDP datagram to a closed port, or an ICMP echo")

#define XDPBAN_CLASS_BIT_(id, name, what) XDPBAN_CLASS_BITNO_##id,
enum { XDPBAN_CLASSES(XDPBAN_CLASS_BIT_) XDPBAN_CLASS__COUNT };
#define XDPBAN_CLASS_ENUM_(id, name, what) XDPBAN_CLASS_##id = 1u << XDPBAN_CLASS_BITNO_##id,
enum xdpban_class { XDPBAN_CLASSES(XDPBAN_CLASS_ENUM_) };
#define XDPBAN_CLASS_ALL ((1u << XDPBAN_CLASS__COUNT) - 1)

/* The spoof defence (docs/datapath.md, section 8): which errors may count toward a ban. */
enum xdpban_spoof_mode {
	XDPBAN_SPOOF_OFF = 0,      /* every error counts */
	XDPBAN_SPOOF_HOP = 1,      /* an error counts only if its hop count agrees with the
				    * source's reference (verified, or its window's first error) */
	XDPBAN_SPOOF_VERIFIED = 2, /* as HOP, and only sources that proved their return path */
};

#define XDPBAN_DEFAULT_LIMIT 10u       /* banned when count > limit */
#define XDPBAN_DEFAULT_WINDOW_S 86400u /* per-source counting window */
#define XDPBAN_DEFAULT_BAN_S 86400u    /* ban duration */
#define XDPBAN_DEFAULT_V6_PREFIX 64u   /* IPv6 sources are counted per /64 */
#define XDPBAN_DEFAULT_CLASS_MASK XDPBAN_CLASS_ALL
#define XDPBAN_DEFAULT_DROP_MASK XDPBAN_CLASS_MALFORMED
#define XDPBAN_DEFAULT_SPOOF XDPBAN_SPOOF_HOP
#define XDPBAN_DEFAULT_HOP_TOLERANCE 1u /* hop counts this far apart agree: a route change */
#define XDPBAN_DEFAULT_LEARN_SHIFT 4u   /* verify hop counts from 1 in 2^4 TCP segments */

/* config.ports: the port rules in force. 0 (the default, and a plain `ip link` load) means
 * none: no datagram is a protocol error and nothing is a probe, whatever xdpban_ports holds. */
enum xdpban_ports_flag {
	XDPBAN_PORTS_GUARD = 1u << 0,      /* read guard profiles of UDP ports: class protocol */
	XDPBAN_PORTS_PROBE = 1u << 1,      /* open ports are configured: class probe */
	XDPBAN_PORTS_PROBE_ICMP = 1u << 2, /* with PROBE: an ICMP or ICMPv6 echo request is one */
};
#define XDPBAN_PORTS_ALL (XDPBAN_PORTS_GUARD | XDPBAN_PORTS_PROBE | XDPBAN_PORTS_PROBE_ICMP)

/* config.policy. XDPBAN_CFG_ALLOW_ONLY: allow lists are loaded, so a flat table's DENY code
 * may stand for a not-allowed address, and the data path looks closer (xdpban_nodeny16, then
 * the trie) to count the right reason (docs/datapath.md, "Allow-only mode"). It never changes
 * a verdict: the tries decide those. */
enum xdpban_cfg_policy {
	XDPBAN_CFG_ALLOW_ONLY = 1u << 0,
	/* xdpban_observed4/6 hold the prefixes of observed deny lists: a source passed on by the
	 * policy is looked up there and counted under observed_deny. Set only while they hold
	 * entries, so that without observed lists the data path reads no trie for them. */
	XDPBAN_CFG_OBSERVE_LISTS = 1u << 1,
};
#define XDPBAN_CFG_POLICY_ALL (XDPBAN_CFG_ALLOW_ONLY | XDPBAN_CFG_OBSERVE_LISTS)

/* config.mode: what a ban or a deny or not-allowed verdict does to the packet. In observe
 * mode it passes and is counted under its observed_* statistic (xdpban_stats.h); counting,
 * bans and events go on as in enforce mode, so that switching back applies the bans in time.
 * 0, the all-zero entry of a plain `ip link` load, enforces. */
enum xdpban_mode {
	XDPBAN_MODE_ENFORCE = 0,
	XDPBAN_MODE_OBSERVE = 1,
};

#define XDPBAN_V6_PREFIX_MIN 32u
#define XDPBAN_V6_PREFIX_MAX 128u
#define XDPBAN_LIMIT_MAX 1000000000u
#define XDPBAN_TIME_MAX_S (10u * 365u * 86400u) /* ten years: keeps ns arithmetic far from overflow */
#define XDPBAN_HOP_TOLERANCE_MAX 8u
#define XDPBAN_LEARN_SHIFT_MAX 16u /* 1 in 65536 segments; 0 looks at every one */
#define XDPBAN_LEARN_OFF 0xffu     /* learn_shift: never verify (no socket lookups) */

/* The rules of limits (docs/datapath.md, "Rules of limits"). A source has one counter; each
 * error is judged by the limit, window and ban time of its rule: the guarded UDP port's rule if
 * the error is a protocol error on a port that has one, else its class's, else the global
 * values of the entry. A field a rule does not own (XDPBAN_OWN_*) comes from the next rule down
 * (port, class, global). An error of several classes takes the class whose limit is lowest. */
enum xdpban_rule_own {
	XDPBAN_OWN_LIMIT = 1u << 0,
	XDPBAN_OWN_WINDOW = 1u << 1,
	XDPBAN_OWN_BAN = 1u << 2,
};
#define XDPBAN_OWN_ALL (XDPBAN_OWN_LIMIT | XDPBAN_OWN_WINDOW | XDPBAN_OWN_BAN)
#define XDPBAN_PORT_RULES 8u /* guarded ports with values of their own, at most */

struct xdpban_rule {
	__u32 limit;    /* as xdpban_config.limit, when owned */
	__u32 window_s; /* as xdpban_config.window_s, when owned */
	__u32 ban_s;    /* as xdpban_config.ban_s, when owned */
	__u16 port;     /* a port rule's UDP port, host order (0: a free entry); 0 for a class's */
	__u8 own;       /* XDPBAN_OWN_* bits: the fields this rule sets; 0 for a free entry */
	__u8 pad;       /* zero */
};

/* Which rule judged an error: XDPBAN_RULE_GLOBAL, XDPBAN_RULE_CLASS + the class's bit number
 * (XDPBAN_CLASS_BITNO_*), or XDPBAN_RULE_PORT (the port is the error's). The most specific rule
 * that owned a field names it. */
enum xdpban_rule_id {
	XDPBAN_RULE_NONE = 0, /* no error judged: a manual or fleet ban */
	XDPBAN_RULE_GLOBAL = 1,
	XDPBAN_RULE_CLASS = 2, /* .. XDPBAN_RULE_CLASS + XDPBAN_CLASS__COUNT - 1 */
	XDPBAN_RULE_PORT = 0x80,
};

struct xdpban_config {
	__u32 magic;      /* XDPBAN_CFG_MAGIC once userspace has written the entry */
	__u32 limit;      /* global: a source is banned when its error count > limit;
			   * 0..XDPBAN_LIMIT_MAX */
	__u32 window_s;   /* global: seconds; a source's window starts at its first error;
			   * 1..XDPBAN_TIME_MAX_S */
	__u32 ban_s;      /* global: seconds a new ban lasts; 1..XDPBAN_TIME_MAX_S */
	__u32 class_mask; /* enum xdpban_class bits that count as errors; others are ignored */
	__u32 drop_mask;  /* counted classes whose packets are dropped even before a ban */
	__u8 v6_prefix;   /* IPv6 counting and ban granularity, XDPBAN_V6_PREFIX_MIN..MAX */
	__u8 spoof;       /* enum xdpban_spoof_mode */
	__u8 hop_tolerance; /* 0..XDPBAN_HOP_TOLERANCE_MAX */
	__u8 learn_shift; /* verify from 1 in 2^learn_shift TCP segments with ACK;
			   * 0..XDPBAN_LEARN_SHIFT_MAX, or XDPBAN_LEARN_OFF */
	__u8 ports;       /* XDPBAN_PORTS_* bits: which port rules are in force (xdpban_ports.h) */
	__u8 policy;      /* XDPBAN_CFG_* bits: what the policy tries hold */
	__u8 mode;        /* enum xdpban_mode */
	__u8 pad;         /* zero */
	struct xdpban_rule class_rule[XDPBAN_CLASS__COUNT]; /* by XDPBAN_CLASS_BITNO_* */
	struct xdpban_rule port_rule[XDPBAN_PORT_RULES];     /* in use: port != 0, any order */
};

/* The limits an error is judged by, and the rule they came from. */
struct xdpban_limits {
	__u32 limit, window_s, ban_s;
	__u8 rule; /* enum xdpban_rule_id */
};

/* True when every field of the head is in range. Both sides use it: userspace refuses a bad
 * config, the data path falls back to the defaults rather than trust one. The rules are not
 * checked here, on every packet, but by xdpban_rule_valid: by userspace before a write, and by
 * the data path on the rules an error uses (xdpban_limits_of). */
static inline int xdpban_config_valid(const struct xdpban_config *c)
{
	return c->magic == XDPBAN_CFG_MAGIC && c->limit <= XDPBAN_LIMIT_MAX &&
	       c->window_s >= 1 && c->window_s <= XDPBAN_TIME_MAX_S && c->ban_s >= 1 &&
	       c->ban_s <= XDPBAN_TIME_MAX_S && (c->class_mask & ~XDPBAN_CLASS_ALL) == 0 &&
	       (c->drop_mask & ~XDPBAN_CLASS_ALL) == 0 && c->v6_prefix >= XDPBAN_V6_PREFIX_MIN &&
	       c->v6_prefix <= XDPBAN_V6_PREFIX_MAX && c->spoof <= XDPBAN_SPOOF_VERIFIED &&
	       c->hop_tolerance <= XDPBAN_HOP_TOLERANCE_MAX &&
	       (c->learn_shift <= XDPBAN_LEARN_SHIFT_MAX || c->learn_shift == XDPBAN_LEARN_OFF) &&
	       (c->ports & ~XDPBAN_PORTS_ALL) == 0 && (c->policy & ~XDPBAN_CFG_POLICY_ALL) == 0 &&
	       c->mode <= XDPBAN_MODE_OBSERVE;
}

/* True when the rule's owned fields are in range and it owns nothing else. */
static inline int xdpban_rule_valid(const struct xdpban_rule *r)
{
	return (r->own & ~XDPBAN_OWN_ALL) == 0 &&
	       (!(r->own & XDPBAN_OWN_LIMIT) || r->limit <= XDPBAN_LIMIT_MAX) &&
	       (!(r->own & XDPBAN_OWN_WINDOW) ||
		(r->window_s >= 1 && r->window_s <= XDPBAN_TIME_MAX_S)) &&
	       (!(r->own & XDPBAN_OWN_BAN) || (r->ban_s >= 1 && r->ban_s <= XDPBAN_TIME_MAX_S));
}

/* Puts rule r's owned fields over *l, and names it; an invalid rule (written behind
 * userspace's back) owns nothing. */
static inline void xdpban_limits_apply(struct xdpban_limits *l, const struct xdpban_rule *r,
				       __u8 rule)
{
	if (!r->own || !xdpban_rule_valid(r))
		return;
	if (r->own & XDPBAN_OWN_LIMIT)
		l->limit = r->limit;
	if (r->own & XDPBAN_OWN_WINDOW)
		l->window_s = r->window_s;
	if (r->own & XDPBAN_OWN_BAN)
		l->ban_s = r->ban_s;
	l->rule = rule;
}

/* The port rule of UDP port `port` (host order), or NULL. */
static inline const struct xdpban_rule *xdpban_port_rule(const struct xdpban_config *c,
							 __u16 port)
{
	for (__u32 i = 0; i < XDPBAN_PORT_RULES; i++)
		if (port && c->port_rule[i].port == port)
			return &c->port_rule[i];
	return 0;
}

/* The limits of class number `bitno` for a datagram to UDP port `port` (host order; 0 for
 * none): the global values, under the class's rule, under the port's rule for a protocol error
 * on a port that has one. */
static inline void xdpban_limits_class(const struct xdpban_config *c, __u32 bitno, __u16 port,
				       struct xdpban_limits *out)
{
	const struct xdpban_rule *pr;

	out->limit = c->limit;
	out->window_s = c->window_s;
	out->ban_s = c->ban_s;
	out->rule = XDPBAN_RULE_GLOBAL;
	if (bitno >= XDPBAN_CLASS__COUNT)
		return;
	xdpban_limits_apply(out, &c->class_rule[bitno], (__u8)(XDPBAN_RULE_CLASS + bitno));
	if (bitno == XDPBAN_CLASS_BITNO_PROTOCOL && (pr = xdpban_port_rule(c, port)))
		xdpban_limits_apply(out, pr, XDPBAN_RULE_PORT);
}

/* The limits of an error of `classes` (enum xdpban_class bits) whose datagram went to UDP port
 * `port` (host order; 0 for none), under a valid config c: those of the class whose limit is
 * lowest (the first such), or the global ones for no class. The one rule for the data path,
 * the model and `query`. Writes only *out: the data path's stack has no room for more. */
static inline void xdpban_limits_of(const struct xdpban_config *c, __u32 classes, __u16 port,
				    struct xdpban_limits *out)
{
	__u32 best = XDPBAN_CLASS__COUNT, best_limit = 0;

	/* One class (every packet of the data path): its limits, without the comparison. */
	for (__u32 i = 0; i < XDPBAN_CLASS__COUNT; i++) {
		if (classes == 1u << i) {
			xdpban_limits_class(c, i, port, out);
			return;
		}
	}
	for (__u32 i = 0; i < XDPBAN_CLASS__COUNT; i++) {
		if (!(classes & (1u << i)))
			continue;
		xdpban_limits_class(c, i, port, out);
		if (best == XDPBAN_CLASS__COUNT || out->limit < best_limit) {
			best = i;
			best_limit = out->limit;
		}
	}
	xdpban_limits_class(c, best, port, out);
}

#define XDPBAN_CONFIG_DEFAULTS                                                                 \
	{                                                                                      \
		.magic = XDPBAN_CFG_MAGIC, .limit = XDPBAN_DEFAULT_LIMIT,                      \
		.window_s = XDPBAN_DEFAULT_WINDOW_S, .ban_s = XDPBAN_DEFAULT_BAN_S,            \
		.class_mask = XDPBAN_DEFAULT_CLASS_MASK, .drop_mask = XDPBAN_DEFAULT_DROP_MASK, \
		.v6_prefix = XDPBAN_DEFAULT_V6_PREFIX, .spoof = XDPBAN_DEFAULT_SPOOF,          \
		.hop_tolerance = XDPBAN_DEFAULT_HOP_TOLERANCE,                                 \
		.learn_shift = XDPBAN_DEFAULT_LEARN_SHIFT,                                     \
	}

#endif /* XDPBAN_CONFIG_H */
