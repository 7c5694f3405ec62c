/* prefix.c - addresses, prefixes and data-path keys as the operator writes and reads them, and
 * the LPM keys of the tries (union xb_lpm_key). Parsing is strict: a literal address only
 * (never a hostname, never a DNS lookup), a length in range, no host bits set past the length.
 * Never touches a map, and calls nothing that does: the narrowed key of an address is
 * narrow.c's (xb_key_from_addr).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "libxdpban.h"

#define PREFIX_TEXT_MAX (INET6_ADDRSTRLEN + 4) /* "ADDR/128" */
#define QUOTED_MAX (4 * PREFIX_TEXT_MAX + 5)   /* xb_quote() of any text that may be one */
#define QUOTED_LONG 64                         /* the first 60 bytes of a longer text */

unsigned int xb_family_bits(__u8 family)
{
	return family == XDPBAN_FAMILY_INET ? 32 : 128;
}

/* Clears every bit of addr past plen. */
static void mask_host_bits(__u8 addr[16], unsigned int plen, unsigned int bits)
{
	for (unsigned int bit = plen; bit < bits; bit++)
		addr[bit / 8] &= ~(0x80 >> (bit % 8));
}

static bool has_host_bits(const __u8 addr[16], unsigned int plen, unsigned int bits)
{
	for (unsigned int bit = plen; bit < bits; bit++)
		if (addr[bit / 8] & (0x80 >> (bit % 8)))
			return true;
	return false;
}

/* "0".."128" written plainly: digits only, no sign, no spaces, no leading zero. */
static int parse_plen(const char *text, unsigned int max, unsigned int *plen)
{
	unsigned int v = 0;
	size_t n = strlen(text);

	if (n == 0 || n > 3 || (n > 1 && text[0] == '0'))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (text[i] < '0' || text[i] > '9')
			return -EINVAL;
		v = v * 10 + (text[i] - '0');
	}
	if (v > max)
		return -ERANGE;
	*plen = v;
	return 0;
}

static int parse_addr(const char *text, struct xb_prefix *out)
{
	memset(out->addr, 0, sizeof(out->addr));
	if (inet_pton(AF_INET, text, out->addr) == 1) {
		out->family = XDPBAN_FAMILY_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, text, out->addr) == 1) {
		out->family = XDPBAN_FAMILY_INET6;
		return 0;
	}
	return -EINVAL;
}

/* Inside ::ffff:0:0/96: the data path sees an IPv4 packet as IPv4, never with a mapped IPv6
 * source, so such an entry can never match anything. */
static bool ipv4_mapped(const struct xb_prefix *p)
{
	static const __u8 mapped[12] = { [10] = 0xff, [11] = 0xff };

	return p->family == XDPBAN_FAMILY_INET6 && p->plen >= 96 &&
	       !memcmp(p->addr, mapped, sizeof(mapped));
}

static int prefix_parse(const char *text, bool mapped_ok, struct xb_prefix *out, char *err,
			size_t errlen)
{
	char buf[PREFIX_TEXT_MAX + 1], quoted[QUOTED_MAX], *slash;
	struct xb_prefix p = {};
	unsigned int bits, plen;
	int ret;

	if (!text || !*text) {
		snprintf(err, errlen, "empty address");
		return -EINVAL;
	}
	if (strlen(text) > PREFIX_TEXT_MAX) {
		snprintf(err, errlen, "not an IPv4 or IPv6 address or prefix: '%s...'",
			 xb_quote(text, quoted, QUOTED_LONG));
		return -EINVAL;
	}
	strcpy(buf, text);
	slash = strchr(buf, '/');
	if (slash)
		*slash++ = '\0';
	if (parse_addr(buf, &p)) {
		snprintf(err, errlen, "not an IPv4 or IPv6 address%s: '%s'", slash ? " or prefix" : "",
			 xb_quote(text, quoted, sizeof(quoted)));
		return -EINVAL;
	}
	bits = xb_family_bits(p.family);
	plen = bits;
	if (slash) {
		ret = parse_plen(slash, bits, &plen);
		if (ret) {
			snprintf(err, errlen, "bad prefix length in '%s': must be 0..%u",
				 xb_quote(text, quoted, sizeof(quoted)), bits);
			return -EINVAL;
		}
	}
	if (has_host_bits(p.addr, plen, bits)) {
		char fixed[PREFIX_TEXT_MAX];

		p.plen = plen;
		mask_host_bits(p.addr, plen, bits);
		xb_prefix_format(&p, fixed, sizeof(fixed));
		snprintf(err, errlen, "host bits set in '%s' (the prefix is %s)", text, fixed);
		return -EINVAL;
	}
	p.plen = plen;
	if (!mapped_ok && ipv4_mapped(&p)) {
		snprintf(err, errlen,
			 "'%s' is an IPv4-mapped IPv6 %s (::ffff:0:0/96): it never matches IPv4 traffic, which the data path sees as IPv4; write it as IPv4",
			 text, slash ? "prefix" : "address");
		return -EINVAL;
	}
	*out = p;
	return 0;
}

int xb_prefix_parse(const char *text, struct xb_prefix *out, char *err, size_t errlen)
{
	return prefix_parse(text, false, out, err, errlen);
}

int xb_prefix_parse_saved(const char *text, struct xb_prefix *out, char *err, size_t errlen)
{
	return prefix_parse(text, true, out, err, errlen);
}

bool xb_prefix_is_addr(const struct xb_prefix *p)
{
	return p->plen == xb_family_bits(p->family);
}

bool xb_prefix_contains(const struct xb_prefix *outer, const struct xb_prefix *inner)
{
	unsigned int bits = xb_family_bits(outer->family);

	if (outer->family != inner->family || outer->plen > inner->plen)
		return false;
	for (unsigned int bit = 0; bit < outer->plen && bit < bits; bit++) {
		__u8 m = 0x80 >> (bit % 8);

		if ((outer->addr[bit / 8] & m) != (inner->addr[bit / 8] & m))
			return false;
	}
	return true;
}

/* Dotted quad without stdio: listing a million bans formats a million addresses. Returns the
 * end of the text (INET_ADDRSTRLEN bytes are enough), not terminated. */
static char *format_ipv4(const __u8 *addr, char *text)
{
	for (int i = 0; i < 4; i++) {
		unsigned int v = addr[i];

		if (v >= 100)
			*text++ = '0' + v / 100;
		if (v >= 10)
			*text++ = '0' + v / 10 % 10;
		*text++ = '0' + v % 10;
		if (i < 3)
			*text++ = '.';
	}
	return text;
}

/* "/LEN"; the callers pass a __u8. */
static char *format_plen(unsigned int plen, char *text)
{
	*text++ = '/';
	if (plen >= 100)
		*text++ = '0' + plen / 100;
	if (plen >= 10)
		*text++ = '0' + plen / 10 % 10;
	*text++ = '0' + plen % 10;
	return text;
}

static int format_addr_len(__u8 family, const __u8 *addr, unsigned int plen, char *buf,
			   size_t len)
{
	char text[PREFIX_TEXT_MAX], *end;

	if (family == XDPBAN_FAMILY_INET) {
		end = format_ipv4(addr, text);
	} else if (family != XDPBAN_FAMILY_INET6) {
		return -EINVAL;
	} else {
		if (!inet_ntop(AF_INET6, addr, text, INET6_ADDRSTRLEN))
			return -errno;
		end = text + strlen(text);
	}
	if (plen != xb_family_bits(family))
		end = format_plen(plen, end);
	if ((size_t)(end - text) >= len)
		return -ENOSPC;
	memcpy(buf, text, end - text);
	buf[end - text] = '\0';
	return 0;
}

int xb_prefix_format(const struct xb_prefix *p, char *buf, size_t len)
{
	return format_addr_len(p->family, p->addr, p->plen, buf, len);
}

int xb_key_format(const struct xdpban_key *key, char *buf, size_t len)
{
	return format_addr_len(key->family, key->addr, key->prefixlen, buf, len);
}

void xb_key_to_prefix(const struct xdpban_key *key, struct xb_prefix *p)
{
	memset(p, 0, sizeof(*p));
	p->family = key->family;
	p->plen = key->prefixlen;
	memcpy(p->addr, key->addr, sizeof(p->addr));
}

int xb_prefix_order(const struct xb_prefix *a, const struct xb_prefix *b)
{
	int c;

	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	c = memcmp(a->addr, b->addr, sizeof(a->addr));
	if (c)
		return c;
	return a->plen < b->plen ? -1 : a->plen > b->plen;
}

int xb_prefix_cmp(const struct xb_prefix *a, const struct xb_prefix *b)
{
	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	if (a->plen != b->plen)
		return a->plen < b->plen ? -1 : 1;
	return memcmp(a->addr, b->addr, sizeof(a->addr));
}

size_t xb_lpm_key_make(const struct xb_prefix *p, union xb_lpm_key *key)
{
	memset(key, 0, sizeof(*key));
	if (p->family == XDPBAN_FAMILY_INET) {
		key->v4.prefixlen = p->plen;
		memcpy(key->v4.addr, p->addr, sizeof(key->v4.addr));
		return sizeof(key->v4);
	}
	key->v6.prefixlen = p->plen;
	memcpy(key->v6.addr, p->addr, sizeof(key->v6.addr));
	return sizeof(key->v6);
}

size_t xb_lpm_key_size(__u8 family)
{
	return family == XDPBAN_FAMILY_INET ? sizeof(struct xdpban_lpm4_key)
					    : sizeof(struct xdpban_lpm6_key);
}

void xb_lpm_key_to_prefix(__u8 family, const void *key, struct xb_prefix *p)
{
	memset(p, 0, sizeof(*p));
	p->family = family;
	if (family == XDPBAN_FAMILY_INET) {
		const struct xdpban_lpm4_key *k = key;

		p->plen = k->prefixlen;
		memcpy(p->addr, k->addr, sizeof(k->addr));
	} else {
		const struct xdpban_lpm6_key *k = key;

		p->plen = k->prefixlen;
		memcpy(p->addr, k->addr, sizeof(k->addr));
	}
}
