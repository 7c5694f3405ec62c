/* fuzz_duration.c - libFuzzer harness for the value parsers of user/lib/config.c:
 * xb_duration_parse (durations in the config file, `xdpban set`, `ban --for` and the control
 * socket), and beside it xb_u32_parse, xb_classes_parse/xb_classes_format, xb_learn_parse/
 * xb_learn_format, xb_spoof_parse and xb_config_set, which the config file and `set` share,
 * and xb_time_parse (user/lib/clock.c, `events --since`), which takes durations too. No seam
 * is needed: they are pure functions of their text (and of a fixed "now").
 *
 * Each input is one text (cut at its first NUL) given to every parser. Checked against the
 * documented contract (libxdpban.h): a refusal is -EINVAL or -ERANGE with a one-line message
 * of printable ASCII and leaves the output alone; an accepted duration is 1..XDPBAN_TIME_MAX_S,
 * equal to what a reference reading of the contract gives (plain seconds, or numbers with
 * units w, d, h, m, s, largest first), and survives the one formatting (xb_duration_format)
 * and a second parse; an accepted number is plain digits in range; an accepted class list
 * formats and parses back to the same mask, and an accepted learning rate or spoof mode to
 * the same value; `set` of any key leaves a valid
 * config or no change at all; an accepted time is 0..now, now minus the duration for a
 * duration, and survives xb_time_format and a second parse. "KEY VALUE" and "KEY=VALUE" inputs also try that key.
 *
 * Inputs are kept to 128 bytes (fuzz-options below): longer values are refused at once.
 */
/* fuzz-options: -max_len=128 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "libxdpban.h"
#include "support.h"

static bool all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return n > 0;
}

#define UNTOUCHED 0xdeadbeef /* what an output holds before the call */

/* True when the call refused text; a refusal is -EINVAL or -ERANGE, with a one-line message
 * of printable ASCII, and the output as it was. */
static bool refused(int ret, const char *err, const char *what, const char *text,
		    bool untouched)
{
	if (!ret)
		return false;
	fz_check(ret == -EINVAL || ret == -ERANGE, "%s '%s': returned %d", what, text, ret);
	fz_check_message(err, XB_ERRLEN, what);
	fz_check(fz_printable(err), "%s: the message quotes a byte as it is: %s", what, err);
	fz_check(untouched, "%s '%s' refused but the output changed", what, text);
	return true;
}

/* The reference reading of a duration, written from the contract (libxdpban.h) apart from
 * the parser: plain digits are seconds; otherwise groups of digits each ending in a unit of
 * "wdhms", in that order, each at most once. 0 and the seconds, or -1. */
static long long reference_seconds(const char *text)
{
	static const char units[] = "wdhms";
	static const unsigned long long seconds[] = { 7 * 86400, 86400, 3600, 60, 1 };
	size_t n = strlen(text), next = 0;
	unsigned long long total = 0;

	if (all_digits(text, n))
		return n <= 12 ? (long long)strtoull(text, NULL, 10) : -1;
	while (*text) {
		size_t digits = strspn(text, "0123456789");
		const char *u = text[digits] ? strchr(units + next, text[digits]) : NULL;

		if (!digits || digits > 12 || !u)
			return -1;
		total += strtoull(text, NULL, 10) * seconds[u - units];
		next = (size_t)(u - units) + 1;
		text += digits + 1;
	}
	return (long long)total;
}

static void fuzz_duration(const char *text)
{
	__u32 s = UNTOUCHED, again;
	char err[XB_ERRLEN], back[XB_DURATION_TEXT_MAX];
	int ret = xb_duration_parse("window", text, &s, err, sizeof(err));
	long long want = reference_seconds(text);

	if (refused(ret, err, "xb_duration_parse", text, s == UNTOUCHED)) {
		fz_check(want < 1 || want > XDPBAN_TIME_MAX_S, "'%s' (%lld s) refused", text, want);
		return;
	}
	fz_check(s >= 1 && s <= XDPBAN_TIME_MAX_S, "'%s' -> %u s, out of range", text, s);
	fz_check(want == s, "'%s' -> %u s, not %lld", text, s, want);
	fz_check(!xb_duration_format(s, back, sizeof(back)), "%u s does not format", s);
	fz_check(!xb_duration_parse("window", back, &again, err, sizeof(err)) && again == s,
		 "'%s' -> %u s -> '%s' does not parse back", text, s, back);
}

static void fuzz_u32(const char *text, __u32 min, __u32 max)
{
	__u32 v = UNTOUCHED;
	char err[XB_ERRLEN];
	int ret = xb_u32_parse("limit", text, min, max, &v, err, sizeof(err));

	if (refused(ret, err, "xb_u32_parse", text, v == UNTOUCHED)) {
		fz_check(ret == -EINVAL || all_digits(text, strlen(text)),
			 "'%s' is not a number but out of range", text);
		return;
	}
	fz_check(all_digits(text, strlen(text)), "'%s' accepted as a number", text);
	fz_check(v >= min && v <= max && strtoull(text, NULL, 10) == v, "'%s' -> %u (%u..%u)",
		 text, v, min, max);
}

static void fuzz_classes(const char *text)
{
	__u32 mask = UNTOUCHED, again;
	char err[XB_ERRLEN], back[64];
	int ret = xb_classes_parse("errors", text, &mask, err, sizeof(err));

	if (refused(ret, err, "xb_classes_parse", text, mask == UNTOUCHED))
		return;
	fz_check(!(mask & ~XDPBAN_CLASS_ALL), "'%s' -> mask %#x", text, mask);
	fz_check(!xb_classes_format(mask, back, sizeof(back)), "mask %#x does not format", mask);
	fz_check(!xb_classes_parse("errors", back, &again, err, sizeof(err)) && again == mask,
		 "'%s' -> %#x -> '%s' does not parse back", text, mask, back);
}

static void fuzz_spoof(const char *text)
{
	char err[XB_ERRLEN], back[16];
	__u8 shift = 0xaa, mode = 0xaa, again;

	if (!refused(xb_learn_parse("learn", text, &shift, err, sizeof(err)), err,
		     "xb_learn_parse", text, shift == 0xaa)) {
		fz_check(shift <= XDPBAN_LEARN_SHIFT_MAX || shift == XDPBAN_LEARN_OFF,
			 "'%s' -> learn_shift %u", text, shift);
		fz_check(!xb_learn_format(shift, back, sizeof(back)) &&
				 !xb_learn_parse("learn", back, &again, err, sizeof(err)) &&
				 again == shift,
			 "'%s' -> %u -> '%s' does not parse back", text, shift, back);
	}
	if (!refused(xb_spoof_parse("spoof", text, &mode, err, sizeof(err)), err, "xb_spoof_parse",
		     text, mode == 0xaa))
		fz_check(mode <= XDPBAN_SPOOF_VERIFIED && !strcmp(xb_spoof_name(mode), text),
			 "'%s' -> mode %u", text, mode);
}

static void fuzz_set(const char *key, const char *value)
{
	const struct xdpban_config defaults = XDPBAN_CONFIG_DEFAULTS;
	struct xdpban_config cfg = defaults;
	char err[XB_ERRLEN];
	int ret = xb_config_set(&cfg, key, value, err, sizeof(err));

	if (!refused(ret, err, "xb_config_set", value, !memcmp(&cfg, &defaults, sizeof(cfg))))
		fz_check(xdpban_config_valid(&cfg), "set %s '%s' left an invalid config", key, value);
}

static void fuzz_time(const char *text)
{
	const time_t now = 1796450400; /* 2026-12-05T06:00:00Z */
	time_t t = UNTOUCHED, again = UNTOUCHED;
	char err[XB_ERRLEN], back[32];
	size_t n = strlen(text);
	__u32 ago;
	int ret = xb_time_parse("--since", text, now, &t, err, sizeof(err));

	if (refused(ret, err, "xb_time_parse", text, t == UNTOUCHED))
		return;
	fz_check(t >= 0 && t <= now, "'%s' gave %lld, not 0..now", text, (long long)t);
	if (n && text[n - 1] >= 'a' && text[n - 1] <= 'y' &&
	    !xb_duration_parse("ago", text, &ago, err, sizeof(err)))
		fz_check(t == now - (time_t)ago, "'%s' gave %lld, not now - %u", text, (long long)t,
			 ago);
	fz_check(!xb_time_format(t, back, sizeof(back)), "%lld does not format", (long long)t);
	ret = xb_time_parse("--since", back, now, &again, err, sizeof(err));
	fz_check(!ret && again == t, "'%s' gave %lld, formatted '%s', parsed back %d: %lld",
		 text, (long long)t, back, ret, (long long)again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = { "limit", "window", "ban-time", "ipv6-prefix", "errors",
					    "drop", "spoof", "hop-tolerance", "learn" };
	char *text = fz_text(data, size), *sep;

	fuzz_duration(text);
	fuzz_u32(text, 0, UINT32_MAX);
	fuzz_u32(text, XDPBAN_V6_PREFIX_MIN, XDPBAN_V6_PREFIX_MAX);
	fuzz_classes(text);
	fuzz_spoof(text);
	fuzz_time(text);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		fuzz_set(keys[i], text);
	sep = strpbrk(text, " =");
	if (sep) {
		*sep = '\0';
		fuzz_set(text, sep + 1);
	}
	free(text);
	return 0;
}
