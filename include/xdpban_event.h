/* xdpban_event.h - the record the data path writes into the ring buffer xdpban_events for
 * every ban it creates. A record that finds no room is counted in XDPBAN_STAT_EVENTS_LOST.
 */
#ifndef XDPBAN_EVENT_H
#define XDPBAN_EVENT_H

#include <linux/types.h>
#include "xdpban_state.h"

struct xdpban_event {
	struct xdpban_key key; /* the banned address or prefix */
	__u64 time_ns;         /* CLOCK_BOOTTIME ns when the ban began */
	__u64 expires_ns;      /* CLOCK_BOOTTIME ns when it ends */
	__u32 count;           /* error count that crossed the limit */
	__u8 reason;           /* enum xdpban_ban_reason */
	__u8 classes;          /* enum xdpban_class bits of the crossing error */
	__u8 flags;            /* XDPBAN_EVENT_* bits */
	__u8 pad;
};

/* flags: the ban was made in observe mode (xdpban_config.h): it drops nothing until the mode
 * is enforce again. */
#define XDPBAN_EVENT_OBSERVED 0x01

#endif /* XDPBAN_EVENT_H */
