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

/* Error classes, as bits. A new class is one bit here and one function in bpf/classify.h. */
enum xdpban_class {
	XDPBAN_CLASS_MALFORMED = 1u << 0, /* bad L3/L4 headers, impossible TCP flags */
	XDPBAN_CLASS_REPORTED = 1u << 1,  /* reported by an application through userspace */
};
#define XDPBAN_CLASS_ALL (XDPBAN_CLASS_MALFORMED | XDPBAN_CLASS_REPORTED)

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

#define XDPBAN_V6_PREFIX_MIN 32u
#define XDPBAN_V6_PREFIX_MAX 128u
#define XDPBAN_LIMIT_MAX 1000000000u
#define XDPBAN_TIME_MAX_S (10u * 365u * 86400u) /* ten years: keeps ns arithmetic far from overflow */
#define XDPBAN_HOP_TOLERANCE_MAX 8u
#define XDPBAN_LEARN_SHIFT_MAX 16u /* 1 in 65536 segments; 0 looks at every one */
#define XDPBAN_LEARN_OFF 0xffu     /* learn_shift: never verify (no socket lookups) */

struct xdpban_config {
	__u32 magic;      /* XDPBAN_CFG_MAGIC once userspace has written the entry */
	__u32 limit;      /* a source is banned when its error count > limit; 0..XDPBAN_LIMIT_MAX */
	__u32 window_s;   /* seconds; a source's window starts at its first error; 1..XDPBAN_TIME_MAX_S */
	__u32 ban_s;      /* seconds a new ban lasts; 1..XDPBAN_TIME_MAX_S */
	__u32 class_mask; /* enum xdpban_class bits that count as errors; others are ignored */
	__u32 drop_mask;  /* counted classes whose packets are dropped even before a ban */
	__u8 v6_prefix;   /* IPv6 counting and ban granularity, XDPBAN_V6_PREFIX_MIN..MAX */
	__u8 spoof;       /* enum xdpban_spoof_mode */
	__u8 hop_tolerance; /* 0..XDPBAN_HOP_TOLERANCE_MAX */
	__u8 learn_shift; /* verify from 1 in 2^learn_shift TCP segments with ACK;
			   * 0..XDPBAN_LEARN_SHIFT_MAX, or XDPBAN_LEARN_OFF */
	__u8 pad[4];      /* zero */
};

/* True when every field is in range. Both sides use it: userspace refuses a bad config, the
 * data path falls back to the defaults rather than trust one. */
static inline int xdpban_config_valid(const struct xdpban_config *c)
{
	return c->magic == XDPBAN_CFG_MAGIC && c->limit <= XDPBAN_LIMIT_MAX &&
	       c->window_s >= 1 && c->window_s <= XDPBAN_TIME_MAX_S && c->ban_s >= 1 &&
	       c->ban_s <= XDPBAN_TIME_MAX_S && (c->class_mask & ~XDPBAN_CLASS_ALL) == 0 &&
	       (c->drop_mask & ~XDPBAN_CLASS_ALL) == 0 && c->v6_prefix >= XDPBAN_V6_PREFIX_MIN &&
	       c->v6_prefix <= XDPBAN_V6_PREFIX_MAX && c->spoof <= XDPBAN_SPOOF_VERIFIED &&
	       c->hop_tolerance <= XDPBAN_HOP_TOLERANCE_MAX &&
	       (c->learn_shift <= XDPBAN_LEARN_SHIFT_MAX || c->learn_shift == XDPBAN_LEARN_OFF);
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
