/* clock.c - the data path's clock (CLOCK_BOOTTIME) and wall-clock conversions for display and
 * persistence. Never store a converted wall time back into a map: the maps hold boot time only.
 */
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include "libxdpban.h"
#include "xdpban_time.h"

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

static int time_format_libc(time_t wall, char *buf, size_t len)
{
	struct tm tm;

	if (!gmtime_r(&wall, &tm))
		return -EOVERFLOW;
	if (strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return -ENOSPC;
	return 0;
}

/* The civil (proleptic Gregorian) date of a day counted from 1970-01-01, by the days-from-civil
 * inverse in eras of 400 years (H. Hinnant's derivation). */
static void civil_from_days(long long days, long long *year, unsigned int *month,
			    unsigned int *day)
{
	long long z = days + 719468;
	long long era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned int doe = (unsigned int)(z - era * 146097);                 /* 0..146096 */
	unsigned int yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* 0..399 */
	unsigned int doy = doe - (365 * yoe + yoe / 4 - yoe / 100);          /* 0..365 */
	unsigned int mp = (5 * doy + 2) / 153;                               /* 0..11, from March */

	*day = doy - (153 * mp + 2) / 5 + 1;
	*month = mp < 10 ? mp + 3 : mp - 9;
	*year = (long long)yoe + era * 400 + (*month <= 2);
}

static char *put_digits(char *p, unsigned int v, int width)
{
	for (int i = width - 1; i >= 0; i--, v /= 10)
		p[i] = '0' + v % 10;
	return p + width;
}

/* The formatting is done by hand, not with gmtime_r and strftime: listing a million bans may
 * format a million stamps. Years outside 1000..9999 (never a ban's) go through libc, so that
 * the text stays what strftime's %Y prints. */
int xb_time_format(time_t wall, char *buf, size_t len)
{
	static const char sep[] = "--T::Z";
	long long days = wall / 86400, secs = wall % 86400, year;
	unsigned int month, day, fields[6];
	char *p = buf;

	if (secs < 0) {
		secs += 86400;
		days--;
	}
	civil_from_days(days, &year, &month, &day);
	if (year < 1000 || year > 9999)
		return time_format_libc(wall, buf, len);
	if (len < sizeof("YYYY-MM-DDTHH:MM:SSZ"))
		return -ENOSPC;
	fields[0] = (unsigned int)year;
	fields[1] = month;
	fields[2] = day;
	fields[3] = (unsigned int)(secs / 3600);
	fields[4] = (unsigned int)(secs / 60 % 60);
	fields[5] = (unsigned int)(secs % 60);
	for (int i = 0; i < 6; i++) {
		p = put_digits(p, fields[i], i == 0 ? 4 : 2);
		*p++ = sep[i];
	}
	*p = '\0';
	return 0;
}
