/* xdpban_stats.h - per-CPU statistics, one slot per reason, in the per-CPU array
 * xdpban_stats. Userspace sums the slots over CPUs.
 *
 * The first XDPBAN_STAT__VERDICTS slots are verdicts: every packet lands in exactly one of
 * them, so they add up to the packets seen. The rest are events, recorded with the packet
 * that caused them (reports from userspace record their error count as packets, 0 bytes).
 */
#ifndef XDPBAN_STATS_H
#define XDPBAN_STATS_H

#include <linux/types.h>

enum xdpban_stat {
	/* verdicts */
	XDPBAN_STAT_PASSED = 0,         /* passed every stage, or not IP, or NDP */
	XDPBAN_STAT_PASSED_TRUSTED = 1, /* passed by a trusted policy entry */
	XDPBAN_STAT_DROP_DENY = 2,      /* dropped by a deny policy entry */
	XDPBAN_STAT_DROP_BANNED = 3,    /* dropped: the source is banned */
	XDPBAN_STAT_DROP_MALFORMED = 4, /* dropped as malformed (class in drop_mask) */
	XDPBAN_STAT_DROP_ERROR = 5,     /* dropped for another error class in drop_mask */
	XDPBAN_STAT__VERDICTS = 6,
	/* events */
	XDPBAN_STAT_ERRORS = 6,         /* errors counted against a source */
	XDPBAN_STAT_BANS_CREATED = 7,   /* bans created by the data path */
	XDPBAN_STAT_BAN_TABLE_FULL = 8, /* a ban that could not be stored: the table was full */
	XDPBAN_STAT_BANS_EXPIRED = 9,   /* expired bans lifted by the data path */
	XDPBAN_STAT_EVENTS_LOST = 10,   /* ban events the ring buffer had no room for */
	XDPBAN_STAT__MAX = 11,
};

struct xdpban_stat_value {
	__u64 packets;
	__u64 bytes;
};

#endif /* XDPBAN_STATS_H */
