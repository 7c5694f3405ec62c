/* config.c - the runtime configuration: reading the entry in force, validating and writing it,
 * and `set KEY VALUE` with its value parsers (numbers, durations, class lists, spoof modes,
 * learning rates): the one place that names the settings and their ranges. The daemon's
 * config file goes through xb_config_set and xb_duration_parse too, so the file, `set` and
 * `--for` accept the same text. A bad key or value is refused with a one-line message naming
 * it, and nothing is changed. Never writes an entry that xb_config_valid() rejects.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "libxdpban.h"
#include "bancache.h"

static const struct xdpban_config config_defaults = XDPBAN_CONFIG_DEFAULTS;

bool xb_config_valid(const struct xdpban_config *cfg)
{
	if (!xdpban_config_valid(cfg))
		return false;
	for (__u32 i = 0; i < XDPBAN_CLASS__COUNT; i++)
		if (!xdpban_rule_valid(&cfg->class_rule[i]) || cfg->class_rule[i].port ||
		    cfg->class_rule[i].pad)
			return false;
	for (__u32 i = 0; i < XDPBAN_PORT_RULES; i++) {
		const struct xdpban_rule *r = &cfg->port_rule[i];

		if (!xdpban_rule_valid(r) || r->pad || !r->port != !r->own)
			return false;
		for (__u32 j = 0; r->port && j < i; j++)
			if (cfg->port_rule[j].port == r->port)
				return false;
	}
	return true;
}

int xb_config_read(const struct xb_maps *m, struct xdpban_config *cfg)
{
	__u32 zero = 0;

	if (m->ban_run && m->ban_run->have_config) { /* bancache.h */
		*cfg = m->ban_run->config;
		return 0;
	}
	if (bpf_map_lookup_elem(m->config, &zero, cfg))
		return -errno;
	if (!xdpban_config_valid(cfg))
		*cfg = config_defaults; /* what the data path falls back to */
	if (m->ban_run) {
		m->ban_run->config = *cfg;
		m->ban_run->have_config = true;
	}
	return 0;
}

int xb_config_is_default(const struct xb_maps *m, bool *is_default)
{
	struct xdpban_config raw;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(m->config, &zero, &raw))
		return -errno;
	*is_default = !xdpban_config_valid(&raw);
	return 0;
}

int xb_config_write(const struct xb_maps *m, const struct xdpban_config *cfg, char *err,
		    size_t errlen)
{
	struct xdpban_config clean = *cfg;
	__u32 zero = 0;
	int ret;

	clean.pad = 0;
	if (m->ban_run)
		m->ban_run->have_config = false;
	if (!xb_config_valid(&clean)) {
		snprintf(err, errlen, "refusing to write an invalid config (a value is out of range)");
		return -EINVAL;
	}
	if (bpf_map_update_elem(m->config, &zero, &clean, BPF_ANY)) {
		ret = -errno;
		snprintf(err, errlen, "cannot write %s: %s", XDPBAN_MAP_NAME(xdpban_config),
			 strerror(-ret));
		return ret;
	}
	return 0;
}

/* Digits only: strtoul alone would take " 12", "+12", "-1" and "0x10". */
static bool all_digits(const char *text, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (text[i] < '0' || text[i] > '9')
			return false;
	return true;
}

int xb_u32_parse(const char *what, const char *text, __u32 min, __u32 max, __u32 *out,
		 char *err, size_t errlen)
{
	char quoted[XB_ERRLEN];
	unsigned long long v;

	if (!text || !all_digits(text, strlen(text)) || strlen(text) > 12) {
		snprintf(err, errlen, "bad %s '%s': expected a whole number %u..%u", what,
			 xb_quote(text ? text : "", quoted, sizeof(quoted)), min, max);
		return -EINVAL;
	}
	v = strtoull(text, NULL, 10);
	if (v < min || v > max) {
		snprintf(err, errlen, "%s %s out of range: must be %u..%u", what, text, min, max);
		return -ERANGE;
	}
	*out = (__u32)v;
	return 0;
}

/* The units of a duration, largest first: parsed in this order, formatted without weeks (a
 * week is 7d, and a week's countdown reads better as "6d23h" than as "0w6d23h"). */
static const struct {
	char suffix;
	unsigned long long seconds;
} duration_units[] = { { 'w', 7 * 86400 }, { 'd', 86400 }, { 'h', 3600 }, { 'm', 60 }, { 's', 1 } };
#define N_DURATION_UNITS (sizeof(duration_units) / sizeof(duration_units[0]))
#define DURATION_GROUP_DIGITS 12 /* of one number: no overflow below 2^64 once times a week */

/* "90", "15m", "1d12h", "2w3d": plain seconds alone, or numbers each with a unit, largest
 * first, each unit at most once. 0 and the sum, or -EINVAL. */
static int duration_sum(const char *text, unsigned long long *sum)
{
	size_t n = strlen(text), next_unit = 0, digits;
	unsigned long long total = 0;

	if (all_digits(text, n) && n <= DURATION_GROUP_DIGITS) {
		*sum = strtoull(text, NULL, 10);
		return 0;
	}
	while (*text) {
		size_t u;

		digits = strspn(text, "0123456789");
		if (!digits || digits > DURATION_GROUP_DIGITS || !text[digits])
			return -EINVAL;
		for (u = next_unit; u < N_DURATION_UNITS; u++)
			if (duration_units[u].suffix == text[digits])
				break;
		if (u == N_DURATION_UNITS)
			return -EINVAL;
		total += strtoull(text, NULL, 10) * duration_units[u].seconds;
		next_unit = u + 1;
		text += digits + 1;
	}
	*sum = total;
	return 0;
}

int xb_duration_parse(const char *what, const char *text, __u32 *seconds, char *err,
		      size_t errlen)
{
	char quoted[XB_ERRLEN], max[XB_DURATION_TEXT_MAX];
	unsigned long long v = 0;

	if (!text || !*text || duration_sum(text, &v)) {
		snprintf(err, errlen, "bad %s '%s': a duration is seconds (90) or numbers with "
			 "units w, d, h, m, s, largest first (15m, 2h, 1d12h, 1w)", what,
			 xb_quote(text ? text : "", quoted, sizeof(quoted)));
		return -EINVAL;
	}
	if (v < 1 || v > XDPBAN_TIME_MAX_S) {
		xb_duration_format(XDPBAN_TIME_MAX_S, max, sizeof(max));
		snprintf(err, errlen, "%s %s out of range: must be 1s..%s (10 years)", what, text,
			 max);
		return -ERANGE;
	}
	*seconds = (__u32)v;
	return 0;
}

/* Decimal digits of v at p, without printf (a listing formats a million durations). */
static char *put_digits(char *p, unsigned long long v)
{
	char digits[24], *d = digits + sizeof(digits);
	size_t n;

	do
		*--d = (char)('0' + v % 10);
	while ((v /= 10));
	n = (size_t)(digits + sizeof(digits) - d);
	memcpy(p, d, n);
	return p + n;
}

int xb_duration_format(unsigned long long seconds, char *buf, size_t len)
{
	bool zero = seconds == 0;
	char *p = buf;

	if (len < XB_DURATION_TEXT_MAX) {
		if (len)
			buf[0] = '\0';
		return -ENOSPC;
	}
	for (size_t u = 1; u < N_DURATION_UNITS; u++) { /* from days down: no weeks */
		unsigned long long n = seconds / duration_units[u].seconds;

		if (n || (zero && duration_units[u].suffix == 's')) {
			p = put_digits(p, n);
			*p++ = duration_units[u].suffix;
		}
		seconds %= duration_units[u].seconds;
	}
	*p = '\0';
	return 0;
}

#define CLASS_NAME_(id, name, what) [XDPBAN_CLASS_BITNO_##id] = name,
static const char *const class_names[XDPBAN_CLASS__COUNT] = { XDPBAN_CLASSES(CLASS_NAME_) };

const char *xb_class_name(enum xdpban_class c)
{
	for (unsigned int i = 0; i < XDPBAN_CLASS__COUNT; i++)
		if (c == 1u << i)
			return class_names[i];
	return "?";
}

static int class_bit(const char *name, size_t len, __u32 *bit)
{
	for (unsigned int i = 0; i < XDPBAN_CLASS__COUNT; i++) {
		if (strlen(class_names[i]) == len && !strncmp(class_names[i], name, len)) {
			*bit = 1u << i;
			return 0;
		}
	}
	return -EINVAL;
}

int xb_classes_parse(const char *what, const char *text, __u32 *mask, char *err, size_t errlen)
{
	char quoted[XB_ERRLEN], piece[41], name[4 * sizeof(piece) + 5];
	const char *p = text;
	__u32 result = 0, bit;

	if (text && !strcmp(text, "none")) {
		*mask = 0;
		return 0;
	}
	if (!text || !*text)
		goto bad;
	for (;;) {
		size_t len = strcspn(p, ",");

		if (class_bit(p, len, &bit)) {
			snprintf(piece, sizeof(piece), "%.*s", (int)(len > 40 ? 40 : len), p);
			snprintf(err, errlen,
				 "bad %s '%s': '%s' is not an error class (one of" XB_CLASS_WORDS
				 " or none alone)",
				 what, xb_quote(text, quoted, sizeof(quoted)),
				 xb_quote(piece, name, sizeof(name)));
			return -EINVAL;
		}
		result |= bit;
		if (!p[len])
			break;
		p += len + 1;
	}
	*mask = result;
	return 0;
bad:
	snprintf(err, errlen, "bad %s '': expected a comma list of" XB_CLASS_WORDS " or none",
		 what);
	return -EINVAL;
}

int xb_classes_format(__u32 mask, char *buf, size_t len)
{
	size_t used = 0;

	if (len == 0)
		return -ENOSPC;
	buf[0] = '\0';
	if (!mask)
		return snprintf(buf, len, "none") >= (int)len ? -ENOSPC : 0;
	for (unsigned int i = 0; i < XDPBAN_CLASS__COUNT; i++) {
		int n;

		if (!(mask & 1u << i))
			continue;
		n = snprintf(buf + used, len - used, "%s%s", used ? "," : "", class_names[i]);
		if (n < 0 || (size_t)n >= len - used)
			return -ENOSPC;
		used += n;
	}
	return 0;
}

static const char *const spoof_names[] = {
	[XDPBAN_SPOOF_OFF] = "off",
	[XDPBAN_SPOOF_HOP] = "hop",
	[XDPBAN_SPOOF_VERIFIED] = "verified",
};
#define N_SPOOF_MODES (sizeof(spoof_names) / sizeof(spoof_names[0]))

static const char *const mode_names[] = {
	[XDPBAN_MODE_ENFORCE] = "enforce",
	[XDPBAN_MODE_OBSERVE] = "observe",
};
#define N_MODES (sizeof(mode_names) / sizeof(mode_names[0]))

/* One of n names, its index to *value; the message lists them as `expected`. */
static int name_parse(const char *what, const char *text, const char *const *names, size_t n,
		      const char *expected, __u8 *value, char *err, size_t errlen)
{
	char quoted[XB_ERRLEN];

	for (size_t i = 0; text && i < n; i++) {
		if (!strcmp(text, names[i])) {
			*value = (__u8)i;
			return 0;
		}
	}
	snprintf(err, errlen, "bad %s '%s': expected %s", what,
		 xb_quote(text ? text : "", quoted, sizeof(quoted)), expected);
	return -EINVAL;
}

const char *xb_spoof_name(__u8 mode)
{
	return mode < N_SPOOF_MODES ? spoof_names[mode] : "?";
}

int xb_spoof_parse(const char *what, const char *text, __u8 *mode, char *err, size_t errlen)
{
	return name_parse(what, text, spoof_names, N_SPOOF_MODES, "off, hop or verified", mode,
			  err, errlen);
}

const char *xb_mode_name(__u8 mode)
{
	return mode < N_MODES ? mode_names[mode] : "?";
}

int xb_mode_parse(const char *what, const char *text, __u8 *mode, char *err, size_t errlen)
{
	return name_parse(what, text, mode_names, N_MODES, "enforce or observe", mode, err,
			  errlen);
}

/* "1/N" with N = 2^shift, or "off" for XDPBAN_LEARN_OFF. */
int xb_learn_parse(const char *what, const char *text, __u8 *shift, char *err, size_t errlen)
{
	char quoted[XB_ERRLEN];
	const char *n = text && !strncmp(text, "1/", 2) ? text + 2 : NULL;
	unsigned long long v;

	if (text && !strcmp(text, "off")) {
		*shift = XDPBAN_LEARN_OFF;
		return 0;
	}
	if (n && all_digits(n, strlen(n)) && strlen(n) <= 12) {
		v = strtoull(n, NULL, 10);
		for (__u8 s = 0; s <= XDPBAN_LEARN_SHIFT_MAX; s++) {
			if (v == 1ull << s) {
				*shift = s;
				return 0;
			}
		}
	}
	snprintf(err, errlen,
		 "bad %s '%s': expected 1/N with N a power of two from 1 to %u (1/16: one TCP "
		 "segment in 16), or off",
		 what, xb_quote(text ? text : "", quoted, sizeof(quoted)),
		 1u << XDPBAN_LEARN_SHIFT_MAX);
	return -EINVAL;
}

int xb_learn_format(__u8 shift, char *buf, size_t len)
{
	int n;

	if (shift == XDPBAN_LEARN_OFF)
		n = snprintf(buf, len, "off");
	else if (shift <= XDPBAN_LEARN_SHIFT_MAX)
		n = snprintf(buf, len, "1/%u", 1u << shift);
	else
		return -EINVAL;
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

typedef int (*set_fn)(struct xdpban_config *cfg, const char *key, const char *value,
		      char *err, size_t errlen);

static int set_limit(struct xdpban_config *cfg, const char *key, const char *value, char *err,
		     size_t errlen)
{
	return xb_u32_parse(key, value, 0, XDPBAN_LIMIT_MAX, &cfg->limit, err, errlen);
}

static int set_window(struct xdpban_config *cfg, const char *key, const char *value, char *err,
		      size_t errlen)
{
	return xb_duration_parse(key, value, &cfg->window_s, err, errlen);
}

static int set_ban_time(struct xdpban_config *cfg, const char *key, const char *value,
			char *err, size_t errlen)
{
	return xb_duration_parse(key, value, &cfg->ban_s, err, errlen);
}

static int set_v6_prefix(struct xdpban_config *cfg, const char *key, const char *value,
			 char *err, size_t errlen)
{
	__u32 plen;
	int ret = xb_u32_parse(key, value, XDPBAN_V6_PREFIX_MIN, XDPBAN_V6_PREFIX_MAX, &plen, err,
			       errlen);

	if (!ret)
		cfg->v6_prefix = (__u8)plen;
	return ret;
}

static int set_errors(struct xdpban_config *cfg, const char *key, const char *value, char *err,
		      size_t errlen)
{
	return xb_classes_parse(key, value, &cfg->class_mask, err, errlen);
}

static int set_drop(struct xdpban_config *cfg, const char *key, const char *value, char *err,
		    size_t errlen)
{
	return xb_classes_parse(key, value, &cfg->drop_mask, err, errlen);
}

static int set_spoof(struct xdpban_config *cfg, const char *key, const char *value, char *err,
		     size_t errlen)
{
	return xb_spoof_parse(key, value, &cfg->spoof, err, errlen);
}

static int set_hop_tolerance(struct xdpban_config *cfg, const char *key, const char *value,
			     char *err, size_t errlen)
{
	__u32 hops;
	int ret = xb_u32_parse(key, value, 0, XDPBAN_HOP_TOLERANCE_MAX, &hops, err, errlen);

	if (!ret)
		cfg->hop_tolerance = (__u8)hops;
	return ret;
}

static int set_learn(struct xdpban_config *cfg, const char *key, const char *value, char *err,
		     size_t errlen)
{
	return xb_learn_parse(key, value, &cfg->learn_shift, err, errlen);
}

static int set_mode(struct xdpban_config *cfg, const char *key, const char *value, char *err,
		    size_t errlen)
{
	return xb_mode_parse(key, value, &cfg->mode, err, errlen);
}

static const struct {
	const char *key;
	set_fn set;
} set_keys[] = {
	{ "limit", set_limit },
	{ "window", set_window },
	{ "ban-time", set_ban_time },
	{ "ipv6-prefix", set_v6_prefix },
	{ "errors", set_errors },
	{ "drop", set_drop },
	{ "spoof", set_spoof },
	{ "hop-tolerance", set_hop_tolerance },
	{ "learn", set_learn },
	{ "mode", set_mode },
};
#define N_SET_KEYS (sizeof(set_keys) / sizeof(set_keys[0]))

/* The rules of limits (xdpban_config.h): `set FIELD.RULE VALUE`, FIELD one of these, RULE an
 * error class or a guarded UDP port; VALUE as the global FIELD takes, or XB_RULE_INHERIT. */
static const struct {
	const char *field;
	__u8 own;
} rule_fields[] = {
	{ "limit", XDPBAN_OWN_LIMIT },
	{ "window", XDPBAN_OWN_WINDOW },
	{ "ban-time", XDPBAN_OWN_BAN },
};
#define N_RULE_FIELDS (sizeof(rule_fields) / sizeof(rule_fields[0]))
#define CLASS_RULE_KEYS_(id, name, what) "limit." name, "window." name, "ban-time." name,
static const char *const class_rule_keys[] = { XDPBAN_CLASSES(CLASS_RULE_KEYS_) };
#define N_CLASS_RULE_KEYS (sizeof(class_rule_keys) / sizeof(class_rule_keys[0]))
_Static_assert(N_CLASS_RULE_KEYS == N_RULE_FIELDS * XDPBAN_CLASS__COUNT,
	       "a class rule key per field and class");

const char *xb_config_key(size_t i)
{
	if (i < N_SET_KEYS)
		return set_keys[i].key;
	i -= N_SET_KEYS;
	return i < N_CLASS_RULE_KEYS ? class_rule_keys[i] : NULL;
}

/* A rule key taken apart: its field (index of rule_fields) and its rule. */
struct rule_key {
	size_t field;
	bool is_port;
	__u32 bitno; /* a class rule's XDPBAN_CLASS_BITNO_* */
	__u16 port;  /* a port rule's UDP port */
};

static int rule_key_parse(const char *key, struct rule_key *rk)
{
	const char *dot = key ? strchr(key, '.') : NULL, *rule;
	__u32 bit;

	if (!dot)
		return -ENOENT;
	rule = dot + 1;
	for (rk->field = 0; rk->field < N_RULE_FIELDS; rk->field++)
		if (strlen(rule_fields[rk->field].field) == (size_t)(dot - key) &&
		    !strncmp(rule_fields[rk->field].field, key, (size_t)(dot - key)))
			break;
	if (rk->field == N_RULE_FIELDS)
		return -ENOENT;
	rk->is_port = all_digits(rule, strlen(rule));
	if (rk->is_port) {
		unsigned long port = strlen(rule) <= 5 ? strtoul(rule, NULL, 10) : 0;

		if (port < 1 || port > 65535 || rule[0] == '0')
			return -EINVAL;
		rk->port = (__u16)port;
		return 0;
	}
	if (class_bit(rule, strlen(rule), &bit))
		return -EINVAL;
	rk->bitno = (__u32)__builtin_ctz(bit);
	return 0;
}

bool xb_rule_known(__u8 rule)
{
	return rule <= XDPBAN_RULE_GLOBAL || rule == XDPBAN_RULE_PORT ||
	       (rule >= XDPBAN_RULE_CLASS && rule - XDPBAN_RULE_CLASS < XDPBAN_CLASS__COUNT);
}

int xb_rule_name(__u8 rule, __u16 port, char *buf, size_t len)
{
	int n;

	if (rule == XDPBAN_RULE_PORT)
		n = snprintf(buf, len, "%u/udp", port);
	else if (rule >= XDPBAN_RULE_CLASS && rule - XDPBAN_RULE_CLASS < XDPBAN_CLASS__COUNT)
		n = snprintf(buf, len, "%s", class_names[rule - XDPBAN_RULE_CLASS]);
	else if (rule == XDPBAN_RULE_GLOBAL)
		n = snprintf(buf, len, "global");
	else
		n = snprintf(buf, len, "none");
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

bool xb_config_key_known(const char *key)
{
	struct rule_key rk;

	for (size_t i = 0; i < N_SET_KEYS; i++)
		if (!strcmp(set_keys[i].key, key ? key : ""))
			return true;
	return rule_key_parse(key, &rk) == 0;
}

/* The rule a key names in cfg; a port without one gets a free entry when `take`. NULL: none. */
static struct xdpban_rule *rule_of(struct xdpban_config *cfg, const struct rule_key *rk,
				   bool take)
{
	struct xdpban_rule *free_entry = NULL;

	if (!rk->is_port)
		return &cfg->class_rule[rk->bitno];
	for (__u32 i = 0; i < XDPBAN_PORT_RULES; i++) {
		if (cfg->port_rule[i].port == rk->port)
			return &cfg->port_rule[i];
		if (!cfg->port_rule[i].port && !free_entry)
			free_entry = &cfg->port_rule[i];
	}
	if (!take || !free_entry)
		return NULL;
	memset(free_entry, 0, sizeof(*free_entry));
	free_entry->port = rk->port;
	return free_entry;
}

/* `set FIELD.RULE VALUE` on next; 0, or -errno with err. */
static int set_rule(struct xdpban_config *next, const char *key, const struct rule_key *rk,
		    const char *value, char *err, size_t errlen)
{
	__u8 own = rule_fields[rk->field].own;
	bool inherit = value && !strcmp(value, XB_RULE_INHERIT);
	struct xdpban_rule *r = rule_of(next, rk, !inherit);
	int ret;

	if (!r && inherit)
		return 0; /* a port without values of its own: nothing to give back */
	if (!r) {
		snprintf(err, errlen, "%s: at most %u ports have limits of their own", key,
			 XDPBAN_PORT_RULES);
		return -ENOSPC;
	}
	if (inherit) {
		r->own &= (__u8)~own;
		if (!r->own)
			memset(r, 0, sizeof(*r));
		return 0;
	}
	if (own == XDPBAN_OWN_LIMIT)
		ret = xb_u32_parse(key, value, 0, XDPBAN_LIMIT_MAX, &r->limit, err, errlen);
	else
		ret = xb_duration_parse(key, value,
					own == XDPBAN_OWN_WINDOW ? &r->window_s : &r->ban_s, err,
					errlen);
	if (ret && strlen(err) + 40 < errlen)
		strcat(err, ", or " XB_RULE_INHERIT);
	if (!ret)
		r->own |= own;
	return ret;
}

int xb_config_rule_text(const struct xdpban_config *cfg, const char *key, char *buf,
			size_t len)
{
	struct xdpban_config copy = *cfg;
	const struct xdpban_rule *r;
	struct rule_key rk;
	__u8 own;
	int n;

	if (rule_key_parse(key, &rk))
		return -ENOENT;
	own = rule_fields[rk.field].own;
	r = rule_of(&copy, &rk, false);
	if (!r || !(r->own & own))
		n = snprintf(buf, len, "%s", XB_RULE_INHERIT);
	else if (own == XDPBAN_OWN_LIMIT)
		n = snprintf(buf, len, "%u", r->limit);
	else
		return xb_duration_format(own == XDPBAN_OWN_WINDOW ? r->window_s : r->ban_s, buf,
					  len);
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

/* " FIELD.RULE VALUE" of each field r owns, at buf + *used; false when out of room. */
static bool rule_format(const struct xdpban_rule *r, const char *rule, char *buf, size_t len,
			size_t *used)
{
	for (size_t f = 0; f < N_RULE_FIELDS; f++) {
		char value[XB_DURATION_TEXT_MAX];
		int n;

		if (!(r->own & rule_fields[f].own))
			continue;
		if (rule_fields[f].own == XDPBAN_OWN_LIMIT)
			snprintf(value, sizeof(value), "%u", r->limit);
		else
			xb_duration_format(rule_fields[f].own == XDPBAN_OWN_WINDOW ? r->window_s
										 : r->ban_s,
					   value, sizeof(value));
		n = snprintf(buf + *used, len - *used, "%s%s.%s %s", *used ? ", " : "",
			     rule_fields[f].field, rule, value);
		if (n < 0 || (size_t)n >= len - *used)
			return false;
		*used += (size_t)n;
	}
	return true;
}

int xb_config_rules_format(const struct xdpban_config *cfg, char *buf, size_t len)
{
	size_t used = 0;
	char port[8];

	if (!len)
		return -ENOSPC;
	buf[0] = '\0';
	for (__u32 i = 0; i < XDPBAN_CLASS__COUNT; i++)
		if (!rule_format(&cfg->class_rule[i], class_names[i], buf, len, &used))
			return -ENOSPC;
	/* By port, whatever the entries' order. */
	for (__u32 last = 0;;) {
		const struct xdpban_rule *next = NULL;

		for (__u32 i = 0; i < XDPBAN_PORT_RULES; i++)
			if (cfg->port_rule[i].port > last &&
			    (!next || cfg->port_rule[i].port < next->port))
				next = &cfg->port_rule[i];
		if (!next)
			break;
		snprintf(port, sizeof(port), "%u", next->port);
		if (!rule_format(next, port, buf, len, &used))
			return -ENOSPC;
		last = next->port;
	}
	if (!used && snprintf(buf, len, "none") >= (int)len)
		return -ENOSPC;
	return 0;
}

int xb_config_set(struct xdpban_config *cfg, const char *key, const char *value, char *err,
		  size_t errlen)
{
	struct xdpban_config next = *cfg;
	char quoted[4 * 40 + 5], known[160] = "";
	struct rule_key rk;
	size_t used = 0;
	int ret = -ENOENT;

	for (size_t i = 0; i < N_SET_KEYS && ret == -ENOENT; i++)
		if (!strcmp(set_keys[i].key, key ? key : ""))
			ret = set_keys[i].set(&next, key, value, err, errlen);
	if (ret == -ENOENT) {
		ret = rule_key_parse(key, &rk);
		if (ret == -EINVAL) {
			snprintf(err, errlen,
				 "bad setting '%.40s': after the '.' an error class (one of" XB_CLASS_WORDS
				 " or a UDP port 1..65535)",
				 xb_quote(key, quoted, sizeof(quoted)));
			return ret;
		}
		if (!ret)
			ret = set_rule(&next, key, &rk, value, err, errlen);
	}
	if (!ret) {
		next.magic = XDPBAN_CFG_MAGIC;
		*cfg = next;
		return 0;
	}
	if (ret != -ENOENT)
		return ret;
	for (size_t i = 0; i < N_SET_KEYS && used < sizeof(known); i++)
		used += snprintf(known + used, sizeof(known) - used, "%s%s", i ? ", " : "",
				 set_keys[i].key);
	snprintf(err, errlen,
		 "unknown setting '%.40s': limit, window and ban-time also as KEY.CLASS "
		 "(limit.probe) and KEY.PORT (limit.6969) (known: %s)",
		 xb_quote(key ? key : "", quoted, sizeof(quoted)), known);
	return -EINVAL;
}
