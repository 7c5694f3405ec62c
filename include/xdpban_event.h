/* xdpban_event.h - the record the data path writes into the ring buffer xdpban_events for
 * every ban it creates. A record that finds no room is counted in XDPBAN_STAT_EVENTS_LOST.
 */
#ifndef XDPBAN_EVENT_H
#define XDPBAN_EVENT_H

#include <linux/types.h>
#include "xdpban_state.h"

/* The layout of the fields before proto and flags (and the place of port and rule) is that of
 * builds before them, which zeroed those two bytes and left the four after the key unset: proto
 * 0 means no port, and flags from such a build are 0 (its rule, read only while such a build is
 * still attached during an upgrade, may be anything). */
struct xdpban_event {
	struct xdpban_key key; /* the banned address or prefix */
	__u16 port;            /* the crossing error's destination port, host order; only with proto */
	__u8 rule;             /* enum xdpban_rule_id of the limits that judged it */
	__u8 pad;
	__u64 time_ns;         /* CLOCK_BOOTTIME ns when the ban began */
	__u64 expires_ns;      /* CLOCK_BOOTTIME ns when it ends */
	__u32 count;           /* error count that crossed the limit */
	__u8 reason;           /* enum xdpban_ban_reason */
	__u8 classes;          /* enum xdpban_class bits of the crossing error */
	__u8 proto;            /* its IP protocol (IPPROTO_*); 0: none (struct xdpban_ban_info) */
	__u8 flags;            /* XDPBAN_EVENT_* bits */
};

/* flags: the ban was made in observe mode (xdpban_config.h): it drops nothing until the mode
 * is enforce again. */
#define XDPBAN_EVENT_OBSERVED 0x01

#endif /* XDPBAN_EVENT_H */
