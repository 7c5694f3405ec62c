/* xdpban_stats.h - per-CPU statistics, one slot per reason, in the per-CPU array
 * xdpban_stats. Userspace sums the slots over CPUs.
 *
 * XDPBAN_STATS is the one list of them: the enum below, the stable names of the JSON and the
 * metrics' help texts (user/lib/stats.c) are made from it. The first XDPBAN_STAT__VERDICTS
 * slots are verdicts: every packet lands in exactly one of them, so they add up to the packets
 * seen. The rest are events, recorded with the packet that caused them (reports from
 * userspace record their error count as packets, 0 bytes). Never reorder the rows: their
 * position is the slot. A new row goes at the end, so that a pin of an older, shorter layout
 * holds the same rows at the same slots: xdpband carries its counts over into a new map
 * (user/xdpband/load.c); a pin longer than this layout is a newer version's, refused.
 */
#ifndef XDPBAN_STATS_H
#define XDPBAN_STATS_H

#include <linux/types.h>
#include "xdpban_config.h"

/* V(ENUM, name, help) for verdicts, E(...) for events. */
#define XDPBAN_STATS(V, E)                                                                     \
	V(PASSED, "passed", "passed every stage, or not IP, or NDP")                           \
	V(PASSED_TRUSTED, "passed_trusted", "passed by a trusted policy entry")                \
	V(DROP_DENY, "drop_deny", "dropped by a deny policy entry")                            \
	V(DROP_NOT_ALLOWED, "drop_not_allowed", "dropped in allow-only mode: in no allow list") \
	V(DROP_BANNED, "drop_banned", "dropped: the source is banned")                         \
	V(DROP_MALFORMED, "drop_malformed", "dropped as malformed (class in drop_mask)")       \
	V(DROP_ERROR, "drop_error", "dropped for another error class in drop_mask")            \
	E(ERRORS, "errors", "Errors counted against sources.")                                 \
	E(BANS_CREATED, "bans_created", "Bans created by the data path.")                      \
	E(BAN_TABLE_FULL, "ban_table_full",                                                    \
	  "Bans that could not be stored because the ban table was full.")                     \
	E(BANS_EXPIRED, "bans_expired", "Expired bans lifted by the data path.")               \
	E(EVENTS_LOST, "events_lost", "Ban events the ring buffer had no room for.")           \
	E(ERRORS_SUSPECT, "errors_suspect",                                                    \
	  "Errors not counted: their hop count disagreed with the source's, or the source was " \
	  "disputed (spoofing suspected).")                                                     \
	E(ERRORS_UNVERIFIED, "errors_unverified",                                              \
	  "Errors not counted: spoof mode verified, and the source never proved its return "    \
	  "path.")                                                                              \
	E(ERRORS_EXEMPT, "errors_exempt",                                                      \
	  "Errors not counted: the source is never banned (never-ban, built-in or host).")      \
	E(COUNTER_FULL, "counter_full",                                                        \
	  "Errors not counted: no slot of the source's counter group could be taken.")          \
	E(SOURCES_VERIFIED, "sources_verified",                                                \
	  "Hop counts learned from segments of established TCP connections.")                  \
	E(CLASS_MALFORMED, "class_malformed",                                                  \
	  "Error packets of class malformed (counted or not), from sources not trusted, denied " \
	  "or banned.")                                                                         \
	E(CLASS_REPORTED, "class_reported", "Errors of class reported (counted or not).")      \
	E(CLASS_PROTOCOL, "class_protocol",                                                    \
	  "Error packets of class protocol: datagrams to a guarded port that break its "         \
	  "protocol.")                                                                          \
	E(CLASS_PROBE, "class_probe",                                                          \
	  "Error packets of class probe: a SYN or datagram to a closed port, or an echo request.") \
	E(OBSERVED_DENY, "observed_deny",                                                      \
	  "Packets a deny policy entry would have dropped, passed in observe mode.")            \
	E(OBSERVED_NOT_ALLOWED, "observed_not_allowed",                                        \
	  "Packets allow-only mode would have dropped, passed in observe mode.")                \
	E(OBSERVED_BANNED, "observed_banned",                                                  \
	  "Packets of banned sources that would have been dropped, passed in observe mode.")

#define XDPBAN_STAT_ENUM_(id, name, help) XDPBAN_STAT_##id,
enum xdpban_stat {
	XDPBAN_STATS(XDPBAN_STAT_ENUM_, XDPBAN_STAT_ENUM_)
	XDPBAN_STAT__MAX,
};
#define XDPBAN_STAT_COUNT_(id, name, help) +1
#define XDPBAN_STAT_NONE_(id, name, help)
enum { XDPBAN_STAT__VERDICTS = 0 XDPBAN_STATS(XDPBAN_STAT_COUNT_, XDPBAN_STAT_NONE_) };

/* The per-class rows follow XDPBAN_CLASSES in its order: class bit i has row
 * XDPBAN_STAT_CLASS_MALFORMED + i. */
#define XDPBAN_STAT_OF_CLASS_BITNO(i) (XDPBAN_STAT_CLASS_MALFORMED + (i))
_Static_assert(XDPBAN_STAT_CLASS_PROBE - XDPBAN_STAT_CLASS_MALFORMED + 1 == XDPBAN_CLASS__COUNT &&
		       XDPBAN_STAT_CLASS_PROTOCOL ==
			       XDPBAN_STAT_OF_CLASS_BITNO(XDPBAN_CLASS_BITNO_PROTOCOL) &&
		       XDPBAN_STAT_CLASS_REPORTED ==
			       XDPBAN_STAT_OF_CLASS_BITNO(XDPBAN_CLASS_BITNO_REPORTED),
	       "one statistics row per error class, in the classes' order");

/* The observed row of a drop by a list or a ban: the three rows follow the drops' order. */
#define XDPBAN_STAT_OBSERVED_OF(drop) (XDPBAN_STAT_OBSERVED_DENY + (drop) - XDPBAN_STAT_DROP_DENY)
_Static_assert(XDPBAN_STAT_OBSERVED_OF(XDPBAN_STAT_DROP_NOT_ALLOWED) ==
			       XDPBAN_STAT_OBSERVED_NOT_ALLOWED &&
		       XDPBAN_STAT_OBSERVED_OF(XDPBAN_STAT_DROP_BANNED) == XDPBAN_STAT_OBSERVED_BANNED,
	       "one observed row per drop of a list or a ban, in the drops' order");

struct xdpban_stat_value {
	__u64 packets;
	__u64 bytes;
};

#endif /* XDPBAN_STATS_H */
