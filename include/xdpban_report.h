/* xdpban_report.h - the request of the xdpban_report program, through which userspace adds
 * errors an application saw. Userspace runs that XDP program with BPF_PROG_TEST_RUN, this struct
 * as the packet data in and out, so a report goes through the same atomic counter and the same
 * threshold as errors counted on the wire. Host byte order except where stated.
 */
#ifndef XDPBAN_REPORT_H
#define XDPBAN_REPORT_H

#include <linux/types.h>

enum xdpban_report_status {
	XDPBAN_REPORT_COUNTED = 0,        /* counted, still under the limit */
	XDPBAN_REPORT_BANNED = 1,         /* counted over the limit: this report created the ban,
					   * or another error crossing at the same moment did */
	XDPBAN_REPORT_ALREADY_BANNED = 2, /* the source was banned already; nothing counted */
	XDPBAN_REPORT_TRUSTED = 3,        /* a trusted policy entry: never counted */
	XDPBAN_REPORT_DENIED = 4,         /* a deny policy entry: dropped anyway, not counted */
	XDPBAN_REPORT_DISABLED = 5,       /* the reported class is off in class_mask */
	XDPBAN_REPORT_TABLE_FULL = 6,     /* over the limit, but the ban table was full */
	XDPBAN_REPORT_INVALID = 7,        /* bad family or count in the request */
	XDPBAN_REPORT_NOT_COUNTED = 8,    /* no counter slot could be taken (counter_full) */
	XDPBAN_REPORT_EXEMPT = 9,         /* a source that is never banned: not counted */
};

struct xdpban_report_req {
	/* in */
	__u8 family;   /* XDPBAN_FAMILY_INET or XDPBAN_FAMILY_INET6 */
	__u8 pad[3];   /* zero */
	__u8 addr[16]; /* network byte order; IPv4 in addr[0..3]; IPv6 unmasked */
	__u32 count;   /* errors to add, >= 1 */
	/* out */
	__u32 status;    /* enum xdpban_report_status */
	__u32 new_count; /* the source's count after the report (the crossing count if banned) */
};

#endif /* XDPBAN_REPORT_H */
