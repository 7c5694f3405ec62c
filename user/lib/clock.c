/* clock.c - the data path's clock (CLOCK_BOOTTIME) and wall-clock conversions for display and
 * persistence. Never store a converted wall time back into a map: the maps hold boot time only.
 */
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include "libxdpban.h"

#define NS_PER_SEC 1000000000ull

static __u64 clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (__u64)ts.tv_sec * NS_PER_SEC + (__u64)ts.tv_nsec;
}

__u64 xb_boot_ns(void)
{
	return clock_ns(CLOCK_BOOTTIME);
}

/* Wall clock minus boot clock, in ns: what to add to a boot time to get a wall time. Both
 * clocks are read back to back; the error is far below the one-second display unit. */
static __s64 wall_minus_boot_ns(void)
{
	__u64 boot = clock_ns(CLOCK_BOOTTIME);
	__u64 wall = clock_ns(CLOCK_REALTIME);

	return (__s64)(wall - boot);
}

time_t xb_boot_to_wall(__u64 boot_ns)
{
	return (time_t)(((__s64)boot_ns + wall_minus_boot_ns()) / (__s64)NS_PER_SEC);
}

__u64 xb_wall_to_boot(time_t wall)
{
	__s64 boot = (__s64)wall * (__s64)NS_PER_SEC - wall_minus_boot_ns();

	return boot > 0 ? (__u64)boot : 0; /* before this boot: clamp to its start */
}

int xb_time_format(time_t wall, char *buf, size_t len)
{
	struct tm tm;

	if (!gmtime_r(&wall, &tm))
		return -EOVERFLOW;
	if (strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return -ENOSPC;
	return 0;
}
