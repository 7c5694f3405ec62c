/* model.h - the reference model of the xdpban data path: the oracle of the differential test.
 *
 * Written from the rules in docs/datapath.md alone, never from the BPF code, so that the two
 * implementations can be held to each other. Plain C over byte buffers and simple tables; it
 * needs no speed. It must never touch the kernel, read a clock or keep hidden global state:
 * the caller passes `now` and every input, so a run can be replayed exactly.
 *
 * The tables are modelled slot by slot, as section 4 places keys in groups (with the hash the
 * contract names, xdpban_key_home()), so eviction and a full ban table are modelled exactly.
 * What it does not model: races between CPUs, and learning (section 8: it needs established
 * TCP sockets, which a test run has none of).
 */
#ifndef XDPBAN_TEST_MODEL_H
#define XDPBAN_TEST_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "xdpban_config.h"
#include "xdpban_policy.h"
#include "xdpban_report.h"
#include "xdpban_state.h"
#include "xdpban_stats.h"

/* What the parser (docs/datapath.md section 1) makes of a frame. */
enum model_frame_kind {
	MODEL_FRAME_NOT_IP = 0,       /* not IP, short Ethernet or VLAN, third tag: passes */
	MODEL_FRAME_UNATTRIBUTED = 1, /* IP header cut short: malformed, no source */
	MODEL_FRAME_IP = 2,           /* a source address is known */
};

struct model_parsed {
	enum model_frame_kind kind;
	__u8 family;    /* XDPBAN_FAMILY_INET or XDPBAN_FAMILY_INET6, when kind is IP */
	__u8 src[16];   /* network order; IPv4 in src[0..3] */
	bool malformed; /* L3 or L4 rule broken */
	bool ndp;       /* ICMPv6 types 133..137 with a valid L4 region */
	__u8 ttl;       /* the TTL or hop limit, when kind is IP */
	/* What the port rules (section 9) read, for a packet that is not malformed: */
	__u8 dst[16];   /* network order, like src */
	__u8 l4;        /* MODEL_L4_* below; MODEL_L4_OTHER without an L4 region */
	__u16 sport, dport; /* host order: TCP and UDP */
	__u8 tcp_flags;
	const __u8 *payload; /* UDP: the payload the UDP length declares (into the frame) */
	__u32 payload_len;
};
enum { MODEL_L4_OTHER = 0, MODEL_L4_TCP, MODEL_L4_UDP, MODEL_L4_ECHO /* ICMP(v6) echo request */ };

/* One policy prefix, as userspace writes it into the LPM tries. */
struct model_prefix {
	__u8 family;
	__u8 plen;
	__u8 addr[16];    /* network order; bits past plen are ignored */
	__u32 verdict;    /* enum xdpban_verdict */
	__u64 expires_ns; /* 0 = permanent */
};

/* A counter and the spoof defence's record of its source (sections 4 and 8). */
struct model_counter {
	__u32 start_s; /* window start, CLOCK_BOOTTIME seconds */
	__u32 count;
	__u8 hop;      /* the reference hop count */
	__u8 flags;    /* MODEL_* below */
	__u8 classes;  /* of the errors counted in the window (section 4) */
	__u32 stamp_s; /* when it was verified, MODEL_VERIFIED */
};
#define MODEL_VERIFIED 1  /* the reference hop count was learned */
#define MODEL_FIRST_ERR 2 /* the reference is the hop count of the window's first error */
#define MODEL_DISPUTED 4

/* The tables, slot by slot: groups of four (section 4). */
struct model_ctr_slot {
	bool used;
	struct xdpban_key key;
	struct model_counter c;
};

struct model_ban_slot {
	__u8 state; /* MODEL_SLOT_* */
	struct xdpban_key key;
	struct xdpban_ban ban;
};
#define MODEL_SLOT_NEVER 0 /* never used */
#define MODEL_SLOT_LIVE 1
#define MODEL_SLOT_FREED 2

/* An exempt prefix (section 8), as the daemon writes it into xdpban_exempt4/6. */
struct model_exempt {
	__u8 family, plen;
	__u8 addr[16];
};

#define MODEL_EVENTS_UNLIMITED 0xffffffffu

struct model {
	struct xdpban_config config; /* as written; an invalid entry means the defaults */
	struct model_prefix *policy;
	size_t npolicy, policy_cap; /* policy_cap: room for entries, grown by doubling */
	__u64 seed;                  /* of the tables' hash (section 4) */
	__u32 ctr_groups, ban_groups;
	struct model_ctr_slot *ctrs; /* ctr_groups * 4 */
	struct model_ban_slot *bans; /* ban_groups * 4 */
	size_t n_counters, n_bans;   /* live slots */
	struct model_exempt *exempt;
	size_t nexempt;
	struct xdpban_stat_value stats[XDPBAN_STAT__MAX];
	__u32 events_room; /* ban events the ring buffer can still take */
	__u8 ports[65536]; /* each port's byte of xdpban_ports (section 9) */
	/* Ports a socket of this host takes (section 9's socket lookup): TCP, then UDP. */
	const __u16 *tcp_bound, *udp_bound;
	size_t n_tcp_bound, n_udp_bound;
};

/* What one packet did. */
struct model_verdict {
	__u32 action;              /* XDP_PASS or XDP_DROP */
	enum xdpban_stat reason;   /* the verdict slot */
	struct model_parsed parsed;
	bool counted;              /* an error was counted against `key` */
	struct xdpban_key key;     /* valid when counted */
	__u32 new_count;           /* the count after this error (the crossing count on a ban) */
	bool ban_created;          /* and `ban` holds it; `event_sent` says if its event fit */
	bool event_sent;
	struct xdpban_ban ban;
	__u32 events[XDPBAN_STAT__MAX]; /* how much each event slot grew (verdict slots: 0) */
};

/* What one report did: the completed request of docs/datapath.md section 7. */
struct model_report_result {
	__u32 status;    /* enum xdpban_report_status */
	__u32 new_count; /* meaningful for COUNTED, BANNED and TABLE_FULL */
	struct xdpban_key key;
	bool ban_created;
	bool event_sent;
	struct xdpban_ban ban;
};

/* The tables of the data path under test: groups of each table and the seed (0: the
 * compiled-in sizes, and a fixed seed). 0 or -errno. */
int model_init(struct model *m, __u32 ctr_groups, __u32 ban_groups, __u64 seed);
void model_free(struct model *m);

/* The config entry as written to the map; an entry that is not valid means the defaults. */
void model_set_config(struct model *m, const struct xdpban_config *cfg);
/* The config the data path acts on. */
void model_effective_config(const struct model *m, struct xdpban_config *out);

/* Adds or replaces a policy prefix. 0, -EINVAL (bad family or length) or -ENOMEM. */
int model_policy_add(struct model *m, const struct model_prefix *prefix);
/* Removes the prefix equal to `prefix` (family, length, address; verdict ignored). 0 or
 * -ENOENT. */
int model_policy_del(struct model *m, const struct model_prefix *prefix);
/* Removes every policy prefix. */
void model_policy_clear(struct model *m);
/* Adds an exempt prefix (section 8). 0, -EINVAL or -ENOMEM. */
int model_exempt_add(struct model *m, const struct model_exempt *e);

/* Parses a frame per section 1. Never fails. */
void model_parse(const __u8 *frame, __u32 len, struct model_parsed *out);

/* Section 9: the port classes of a parsed packet that is not malformed under cfg. */
__u8 model_port_classes(const struct model *m, const struct xdpban_config *cfg,
			const struct model_parsed *p);

/* Runs one frame at `now_ns` (CLOCK_BOOTTIME): updates the state and stats. 0 or -ENOMEM. */
int model_packet(struct model *m, const __u8 *frame, __u32 len, __u64 now_ns,
		 struct model_verdict *out);

/* Runs one report (section 7). addr: 4 or 16 bytes by family. 0 or -ENOMEM. */
int model_report(struct model *m, __u8 family, const __u8 *addr, __u32 count, __u64 now_ns,
		 struct model_report_result *out);

/* The counting key of an address at the current config (section 2, stage 3). */
void model_key(const struct model *m, __u8 family, const __u8 *addr, struct xdpban_key *key);

/* Direct state access, mirroring dp_counter/dp_ban/dp_put_*: 0, -ENOENT, -ENOSPC (no slot
 * for it). A counter put takes a slot as section 4 says (at now_s, for its window_s). */
int model_counter(const struct model *m, const struct xdpban_key *key, struct model_counter *c);
int model_ban(const struct model *m, const struct xdpban_key *key, struct xdpban_ban *ban);
int model_put_counter(struct model *m, const struct xdpban_key *key, __u32 now_s,
		      const struct model_counter *c);
int model_put_ban(struct model *m, const struct xdpban_key *key, const struct xdpban_ban *ban);
int model_del_ban(struct model *m, const struct xdpban_key *key);

/* Visits every entry; stops at and returns the first non-zero value of fn. */
typedef int (*model_counter_fn)(const struct xdpban_key *key, const struct model_counter *c,
				void *ctx);
typedef int (*model_ban_fn)(const struct xdpban_key *key, const struct xdpban_ban *ban,
			    void *ctx);
int model_for_each_counter(const struct model *m, model_counter_fn fn, void *ctx);
int model_for_each_ban(const struct model *m, model_ban_fn fn, void *ctx);

/* The ring buffer was drained: it has room for `room` events again. */
void model_events_drained(struct model *m, __u32 room);

#endif /* XDPBAN_TEST_MODEL_H */
