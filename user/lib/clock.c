/* clock.c - the data path's clock (CLOCK_BOOTTIME) and wall-clock conversions for display and
 * persistence. Never store a converted wall time back into a map: the maps hold boot time only.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
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

/* The days from 1970-01-01 to a civil date: the inverse of civil_from_days. */
static long long days_from_civil(long long year, unsigned int month, unsigned int day)
{
	long long y = year - (month <= 2);
	long long era = (y >= 0 ? y : y - 399) / 400;
	unsigned int yoe = (unsigned int)(y - era * 400);                    /* 0..399 */
	unsigned int doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
	unsigned int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;            /* 0..146096 */

	return era * 146097 + (long long)doe - 719468;
}

/* width digits at *p, moved past them. */
static bool take_digits(const char **p, int width, unsigned int *v)
{
	*v = 0;
	for (int i = 0; i < width; i++, (*p)++) {
		if (**p < '0' || **p > '9')
			return false;
		*v = *v * 10 + (unsigned int)(**p - '0');
	}
	return true;
}

static bool take_char(const char **p, const char *one_of)
{
	if (!**p || !strchr(one_of, **p))
		return false;
	(*p)++;
	return true;
}

/* "Z", or "+HH:MM" / "-HH:MM": the seconds to take off the local time for UTC. */
static bool take_offset(const char **p, long long *offset)
{
	unsigned int h, m;
	int sign;

	if (take_char(p, "Zz")) {
		*offset = 0;
		return true;
	}
	if (**p != '+' && **p != '-')
		return false;
	sign = *(*p)++ == '-' ? -1 : 1;
	if (!take_digits(p, 2, &h) || !take_char(p, ":") || !take_digits(p, 2, &m) || h > 23 ||
	    m > 59)
		return false;
	*offset = sign * (long long)(h * 3600 + m * 60);
	return true;
}

static unsigned int days_in_month(unsigned int year, unsigned int month)
{
	static const unsigned char days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

	return days[month - 1] + (month == 2 && leap);
}

/* "2026-12-05T06:00:00Z", with fractions of a second (dropped) and an offset. */
static bool rfc3339_parse(const char *p, long long *wall)
{
	unsigned int year, month, day, hour, min, sec;
	long long offset;

	if (!take_digits(&p, 4, &year) || !take_char(&p, "-") || !take_digits(&p, 2, &month) ||
	    !take_char(&p, "-") || !take_digits(&p, 2, &day) || !take_char(&p, "Tt") ||
	    !take_digits(&p, 2, &hour) || !take_char(&p, ":") || !take_digits(&p, 2, &min) ||
	    !take_char(&p, ":") || !take_digits(&p, 2, &sec))
		return false;
	if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) || hour > 23 ||
	    min > 59 || sec > 60) /* 60: a leap second */
		return false;
	if (take_char(&p, ".") && !(*p >= '0' && *p <= '9'))
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	if (!take_offset(&p, &offset) || *p)
		return false;
	*wall = days_from_civil(year, month, day) * 86400 + hour * 3600 + min * 60 + sec - offset;
	return true;
}

/* "@1796450400". */
static bool unix_parse(const char *p, long long *wall)
{
	size_t len = strlen(++p);
	unsigned long long v = 0;

	if (!len || len > 12 || strspn(p, "0123456789") != len)
		return false;
	for (; *p; p++)
		v = v * 10 + (unsigned long long)(*p - '0');
	*wall = (long long)v;
	return true;
}

/* "10m", "1d12h": a duration ago; a bare number is not one here. */
static bool ago_parse(const char *text, time_t now, long long *wall)
{
	size_t len = strlen(text);
	char err[XB_ERRLEN];
	__u32 seconds;

	if (!len || text[len - 1] < 'a' || text[len - 1] > 'z' ||
	    xb_duration_parse("", text, &seconds, err, sizeof(err)))
		return false;
	*wall = (long long)now - seconds;
	return true;
}

int xb_time_parse(const char *what, const char *text, time_t now, time_t *wall, char *err,
		  size_t errlen)
{
	char quoted[XB_ERRLEN];
	long long t = -1;
	bool ok = text[0] == '@' ? unix_parse(text, &t)
				 : rfc3339_parse(text, &t) || ago_parse(text, now, &t);

	if (!ok) {
		snprintf(err, errlen,
			 "bad %s '%s': expected a time: RFC 3339 (2026-12-05T06:00:00Z), a duration ago "
			 "(10m, 2h, 1d) or @UNIX-SECONDS",
			 what, xb_quote(text, quoted, sizeof(quoted)));
		return -EINVAL;
	}
	if (t < 0 || t > XB_TIME_UNIX_MAX || t > (long long)now) {
		snprintf(err, errlen, "bad %s '%s': %s", what, xb_quote(text, quoted, sizeof(quoted)),
			 t < 0 ? "before 1970" : t > XB_TIME_UNIX_MAX ? "after 9999" : "in the future");
		return -ERANGE;
	}
	*wall = (time_t)t;
	return 0;
}
