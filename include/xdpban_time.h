/* xdpban_time.h - units of time shared by the data path and userspace, and the data path's
 * clock. The maps hold CLOCK_BOOTTIME nanoseconds (xdpban_state.h) and the config holds seconds;
 * convert with these, never with a literal. */
#ifndef XDPBAN_TIME_H
#define XDPBAN_TIME_H

#include <linux/types.h>

#define NS_PER_SEC 1000000000ull

/* The data path reads CLOCK_BOOTTIME once per scheduler tick and CPU (docs/datapath.md, "The
 * clock", says why), so its `now` may lag CLOCK_BOOTTIME by up to a tick. This bounds that lag
 * with room to spare (a tick is 10 ms at the slowest HZ Linux has, 100), for whoever compares
 * the data path's times with their own. */
#define XDPBAN_CLOCK_LAG_MAX_NS (20 * 1000000ull)

/* One CPU's last reading (the per-CPU map xdpban_clock); host order. Written only by the data
 * path, on the CPU it belongs to. */
struct xdpban_clock {
	__u64 jiffies; /* jiffies when it was taken; 0: never */
	__u64 boot_ns; /* CLOCK_BOOTTIME ns taken at that jiffy */
};

#endif /* XDPBAN_TIME_H */
