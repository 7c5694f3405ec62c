/* ports.c - see ports.h. A parse works on a copy of the table and replaces it only when every
 * piece was good, so a bad value changes nothing. The table is written through a mapping of
 * xdpban_ports, a whole word per store, so the data path never meets half a byte. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "ports.h"
#include "table.h"

#define GUARD_NAME_(id, value, name, what) [XDPBAN_GUARD_##id] = name,
static const char *const guard_names[XDPBAN_PORT_GUARD_MASK + 1] = {
	XDPBAN_GUARDS(GUARD_NAME_)
};
/* "bep15, dns", for the messages. */
#define GUARD_LIST_(id, value, name, what) ", " name
#define GUARD_LIST (&XDPBAN_GUARDS(GUARD_LIST_)[2])
#define GUARD_FITS_(id, value, name, what) &&(value) > 0 && (value) <= XDPBAN_PORT_GUARD_MASK
_Static_assert(1 XDPBAN_GUARDS(GUARD_FITS_),
	       "a profile fits the 4 bits of a port's byte, 0 is none");

#define PORT_MAX (XDPBAN_PORTS_PORTS - 1)
#define PIECE_QUOTED 40 /* bytes of a piece a message quotes at most */
#define BLANKS " \t"

void xb_ports_clear(struct xb_ports *t)
{
	memset(t, 0, sizeof(*t));
}

__u8 xb_ports_byte(const struct xb_ports *t, __u32 port)
{
	return xdpban_port_byte(t->words[xdpban_port_word(port)], port);
}

static void set_byte(struct xb_ports *t, __u32 port, __u8 byte)
{
	__u64 *word = &t->words[xdpban_port_word(port)];
	__u32 shift = xdpban_port_shift(port);

	*word = (*word & ~(0xffull << shift)) | ((__u64)byte << shift);
}

const char *xb_guard_name(unsigned int profile)
{
	return profile <= XDPBAN_PORT_GUARD_MASK ? guard_names[profile] : NULL;
}

/* ---- parsing ---- */

struct parse {
	const char *what, *text;
	const char *expected; /* what a piece should look like, for an empty value */
	__u8 open_bit;        /* add_open's */
	char *err;
	size_t errlen;
};

/* One line: "bad WHAT 'TEXT': " and the reason, which names the piece. */
__attribute__((format(printf, 2, 3))) static int bad(const struct parse *p, const char *fmt,
						      ...)
{
	char quoted[XB_ERRLEN];
	int n = snprintf(p->err, p->errlen, "bad %s '%s': ", p->what,
			 xb_quote(p->text, quoted, sizeof(quoted)));
	va_list ap;

	if (n >= 0 && (size_t)n < p->errlen) {
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errlen - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* A piece as a message shows it: cut, and quoted with xb_quote. */
static const char *piece_text(const char *s, size_t len, char *out, size_t outlen)
{
	char cut[PIECE_QUOTED + 1];

	snprintf(cut, sizeof(cut), "%.*s", (int)(len > PIECE_QUOTED ? PIECE_QUOTED : len), s);
	return xb_quote(cut, out, outlen);
}

/* Digits only, 1..65535: -EINVAL for anything but digits, -ERANGE for 0 or too large. */
static int port_number(const char *s, size_t len, __u32 *port)
{
	__u32 v = 0;

	if (!len)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		if (v <= PORT_MAX) /* past it, stays past it without overflowing */
			v = v * 10 + (s[i] - '0');
	}
	if (v < 1 || v > PORT_MAX)
		return -ERANGE;
	*port = v;
	return 0;
}

/* "PORT" or "LO-HI". */
static int port_range(const struct parse *p, const char *s, size_t len, __u32 *lo, __u32 *hi)
{
	const char *dash = memchr(s, '-', len);
	size_t lo_len = dash ? (size_t)(dash - s) : len;
	int ret_lo = port_number(s, lo_len, lo);
	int ret_hi = dash ? port_number(dash + 1, len - lo_len - 1, hi) : ret_lo;
	char q[4 * PIECE_QUOTED + 1];

	if (ret_lo == -EINVAL || ret_hi == -EINVAL)
		return bad(p, "'%s' is not a port 1..%u or a range LO-HI",
			   piece_text(s, len, q, sizeof(q)), PORT_MAX);
	if (ret_lo || ret_hi)
		return bad(p, "'%s' is out of range: ports are 1..%u",
			   piece_text(s, len, q, sizeof(q)), PORT_MAX);
	if (!dash)
		*hi = *lo;
	if (*lo > *hi)
		return bad(p, "range '%s' is reversed: LO must not be above HI",
			   piece_text(s, len, q, sizeof(q)));
	return 0;
}

typedef int (*piece_fn)(const struct parse *p, struct xb_ports *t, const char *s, size_t len);

static int open_piece(const struct parse *p, struct xb_ports *t, const char *s, size_t len)
{
	__u32 lo, hi;
	int ret = port_range(p, s, len, &lo, &hi);

	for (__u32 port = lo; !ret && port <= hi; port++)
		set_byte(t, port, xb_ports_byte(t, port) | p->open_bit);
	return ret;
}

/* The profile named by s[0..len), or 0. */
static __u8 guard_profile(const char *s, size_t len)
{
	for (__u8 g = 1; g <= XDPBAN_PORT_GUARD_MASK; g++)
		if (guard_names[g] && strlen(guard_names[g]) == len &&
		    !strncmp(guard_names[g], s, len))
			return g;
	return 0;
}

static int guard_piece(const struct parse *p, struct xb_ports *t, const char *s, size_t len)
{
	const char *slash = memrchr(s, '/', len);
	char q[4 * PIECE_QUOTED + 1];
	__u8 profile, byte, had;
	__u32 lo, hi;
	int ret;

	if (!slash)
		return bad(p, "'%s' is not PORT/PROFILE (profiles: %s)",
			   piece_text(s, len, q, sizeof(q)), GUARD_LIST);
	profile = guard_profile(slash + 1, len - (slash + 1 - s));
	if (!profile)
		return bad(p, "'%s' is not a guard profile (known: %s)",
			   piece_text(slash + 1, len - (slash + 1 - s), q, sizeof(q)), GUARD_LIST);
	ret = port_range(p, s, slash - s, &lo, &hi);
	for (__u32 port = lo; !ret && port <= hi; port++) {
		byte = xb_ports_byte(t, port);
		had = byte & XDPBAN_PORT_GUARD_MASK;
		if (had && had != profile)
			return bad(p, "port %u is guarded as %s already", port, guard_names[had]);
		set_byte(t, port, (byte & ~XDPBAN_PORT_GUARD_MASK) | profile);
	}
	return ret;
}

/* Each comma-separated piece, blanks around it trimmed, to fn. */
static int each_piece(const struct parse *p, struct xb_ports *t, piece_fn fn)
{
	const char *at = p->text;
	int ret;

	if (!at[strspn(at, BLANKS)])
		return bad(p, "expected %s", p->expected);
	for (unsigned int n = 1;; n++) {
		size_t len = strcspn(at, ","), lead = strspn(at, BLANKS), used = len;

		while (used > lead && strchr(BLANKS, at[used - 1]))
			used--;
		if (used <= lead)
			return bad(p, "piece %u is empty", n);
		ret = fn(p, t, at + lead, used - lead);
		if (ret || !at[len])
			return ret;
		at += len + 1;
	}
}

/* Parses into a copy, which replaces *t only when the whole text was good. */
static int parse_into(const struct parse *p, struct xb_ports *t, piece_fn fn, __u8 flag)
{
	struct xb_ports *next = malloc(sizeof(*next));
	int ret;

	if (!next) {
		snprintf(p->err, p->errlen, "out of memory for the port table");
		return -ENOMEM;
	}
	*next = *t;
	ret = p->text ? each_piece(p, next, fn) : bad(p, "expected %s", p->expected);
	if (!ret) {
		next->flags |= flag;
		*t = *next;
	}
	free(next);
	return ret;
}

int xb_ports_add_open(struct xb_ports *t, __u8 open_bit, const char *what, const char *text,
		      char *err, size_t errlen)
{
	const struct parse p = {
		.what = what, .text = text ?: "", .open_bit = open_bit, .err = err,
		.errlen = errlen, .expected = "a comma list of ports 1..65535 and ranges LO-HI",
	};

	if (open_bit != XDPBAN_PORT_TCP_OPEN && open_bit != XDPBAN_PORT_UDP_OPEN) {
		snprintf(err, errlen, "%s: %#x is neither the TCP nor the UDP open bit", what,
			 open_bit);
		return -EINVAL;
	}
	return parse_into(&p, t, open_piece, XDPBAN_PORTS_PROBE);
}

int xb_ports_add_guards(struct xb_ports *t, const char *what, const char *text, char *err,
			size_t errlen)
{
	char expected[96];
	const struct parse p = {
		.what = what, .text = text ?: "", .err = err, .errlen = errlen,
		.expected = expected,
	};

	snprintf(expected, sizeof(expected), "PORT/PROFILE or a comma list of them (profiles: %s)",
		 GUARD_LIST);
	return parse_into(&p, t, guard_piece, XDPBAN_PORTS_GUARD);
}

int xb_ports_probe_icmp(struct xb_ports *t, const char *what, char *err, size_t errlen)
{
	if (!(t->flags & XDPBAN_PORTS_PROBE)) {
		snprintf(err, errlen,
			 "%s needs open ports: without an open TCP or UDP port list nothing is a probe",
			 what);
		return -EINVAL;
	}
	t->flags |= XDPBAN_PORTS_PROBE_ICMP;
	return 0;
}

/* ---- the map ---- */

static int map_table(const struct xb_maps *m, __u64 **words, size_t *len)
{
	__u32 n;
	int ret = xb_array_map(m->ports, sizeof(__u64), (void **)words, len, &n);

	if (!ret && n != XDPBAN_PORTS_WORDS) {
		munmap(*words, *len);
		ret = -EPROTO;
	}
	return ret;
}

static int write_flags(const struct xb_maps *m, struct xdpban_config *cfg, __u8 flags,
		       char *err, size_t errlen)
{
	if (cfg->ports == flags)
		return 0;
	cfg->ports = flags;
	return xb_config_write(m, cfg, err, errlen);
}

int xb_ports_write(const struct xb_maps *m, const struct xb_ports *t, char *err,
		   size_t errlen)
{
	struct xdpban_config cfg;
	__u64 *words;
	size_t len;
	int ret = xb_config_read(m, &cfg);

	if (!ret)
		ret = map_table(m, &words, &len);
	if (ret) {
		snprintf(err, errlen, "cannot reach %s: %s", XDPBAN_MAP_NAME(xdpban_ports),
			 strerror(-ret));
		return ret;
	}
	/* A rule that goes stops before its bytes change, one that comes starts after: the
	 * data path then never reads a rule in force from bytes that were not written for it. */
	ret = write_flags(m, &cfg, cfg.ports & t->flags, err, errlen);
	for (__u32 i = 0; !ret && i < XDPBAN_PORTS_WORDS; i++)
		if (words[i] != t->words[i])
			__atomic_store_n(&words[i], t->words[i], __ATOMIC_RELAXED);
	if (!ret)
		ret = write_flags(m, &cfg, t->flags, err, errlen);
	munmap(words, len);
	return ret;
}

/* The byte bits that flags put in force, in every byte of a word. */
static __u64 in_force_mask(__u8 flags)
{
	__u64 byte = (flags & XDPBAN_PORTS_GUARD ? XDPBAN_PORT_GUARD_MASK : 0) |
		     (flags & XDPBAN_PORTS_PROBE ? XDPBAN_PORT_UDP_OPEN | XDPBAN_PORT_TCP_OPEN : 0);

	return byte * 0x0101010101010101ull;
}

int xb_ports_read(const struct xb_maps *m, struct xb_ports *t)
{
	struct xdpban_config cfg;
	__u64 *words, mask;
	size_t len;
	int ret = xb_config_read(m, &cfg);

	if (!ret)
		ret = map_table(m, &words, &len);
	if (ret)
		return ret;
	mask = in_force_mask(cfg.ports);
	for (__u32 i = 0; i < XDPBAN_PORTS_WORDS; i++)
		t->words[i] = __atomic_load_n(&words[i], __ATOMIC_RELAXED) & mask;
	t->flags = cfg.ports;
	munmap(words, len);
	return 0;
}

/* True when before holds rule r as it is. */
static bool rule_unchanged(const struct xdpban_config *before, const struct xdpban_rule *r)
{
	for (__u32 i = 0; i < XDPBAN_PORT_RULES; i++)
		if (!memcmp(&before->port_rule[i], r, sizeof(*r)))
			return true;
	return false;
}

int xb_ports_check_rules(const struct xb_maps *m, const struct xdpban_config *before,
			 const struct xdpban_config *cfg, char *err, size_t errlen)
{
	struct xb_ports *t = calloc(1, sizeof(*t)); /* 64 KiB: not on a stack */
	int ret = t ? xb_ports_read(m, t) : -ENOMEM;

	for (__u32 i = 0; !ret && i < XDPBAN_PORT_RULES; i++) {
		__u16 port = cfg->port_rule[i].port;

		if (port && !rule_unchanged(before, &cfg->port_rule[i]) &&
		    !(xb_ports_byte(t, port) & XDPBAN_PORT_GUARD_MASK)) {
			snprintf(err, errlen,
				 "port %u has no guard in force ([ports] guard): its limits would never apply",
				 port);
			ret = -EINVAL;
		}
	}
	free(t);
	return ret;
}

/* ---- describing ---- */

int xb_ports_runs(const struct xb_ports *t, __u8 mask, xb_port_run_cb cb, void *ctx)
{
	__u32 lo = 0;
	__u8 run = 0;
	int ret;

	for (__u32 port = 0; port <= XDPBAN_PORTS_PORTS; port++) {
		__u8 v = port < XDPBAN_PORTS_PORTS ? xb_ports_byte(t, port) & mask : 0;

		if (v == run)
			continue;
		if (run && (ret = cb(lo, port - 1, run, ctx)))
			return ret;
		run = v;
		lo = port;
	}
	return 0;
}

int xb_ports_format_run(__u32 lo, __u32 hi, __u8 value, __u8 mask, char *buf, size_t len)
{
	char range[16];
	int n;

	if (lo == hi)
		snprintf(range, sizeof(range), "%u", lo);
	else
		snprintf(range, sizeof(range), "%u-%u", lo, hi);
	if (mask == XDPBAN_PORT_GUARD_MASK)
		n = snprintf(buf, len, "%s/%s", range, xb_guard_name(value) ?: "?");
	else
		n = snprintf(buf, len, "%s", range);
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

struct format {
	char *buf;
	size_t len, used;
	__u8 mask;
};

static int format_one(__u32 lo, __u32 hi, __u8 value, void *ctx)
{
	struct format *f = ctx;
	char piece[40];
	int n;

	xb_ports_format_run(lo, hi, value, f->mask, piece, sizeof(piece));
	n = snprintf(f->buf + f->used, f->len - f->used, "%s%s", f->used ? "," : "", piece);
	if (n < 0 || (size_t)n >= f->len - f->used) {
		f->buf[f->used] = '\0'; /* whole pieces only */
		return -ENOSPC;
	}
	f->used += n;
	return 0;
}

int xb_ports_format(const struct xb_ports *t, __u8 mask, char *buf, size_t len)
{
	struct format f = { .buf = buf, .len = len, .mask = mask };

	if (!len)
		return -ENOSPC;
	buf[0] = '\0';
	return xb_ports_runs(t, mask, format_one, &f);
}
