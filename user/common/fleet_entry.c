/* fleet_entry.c - see fleet_entry.h. Every field an entry carries is checked as strictly as
 * the CLI checks what an operator types: a hostile writer gets the same refusals. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include "fleet_entry.h"

static const char *const field_names[XBD_FLEET_FIELDS] = {
	"v", "origin", "kind", "key", "reason", "classes", "count", "expires", "mac",
};
enum { F_V, F_ORIGIN, F_KIND, F_KEY, F_REASON, F_CLASSES, F_COUNT, F_EXPIRES, F_MAC };

/* ---- signatures ---- */

/* HMAC-SHA256 of msg under key, as 64 lowercase hex digits and a NUL. */
static int mac_hex(const struct xbd_fleet_secret *key, const char *msg, size_t len,
		   char out[XBD_FLEET_MAC_HEX + 1])
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int mac_len = 0;

	if (!HMAC(EVP_sha256(), key->bytes, (int)key->len, (const unsigned char *)msg, len, mac,
		  &mac_len) ||
	    mac_len * 2 != XBD_FLEET_MAC_HEX)
		return -EINVAL;
	for (unsigned int i = 0; i < mac_len; i++)
		snprintf(out + 2 * i, 3, "%02x", mac[i]);
	return 0;
}

/* What an entry's mac signs: a tag, then "NAME=VALUE\n" for each field it has but the mac, in
 * the order of field_names. A value is plain text (no '=', no newline can make two messages
 * one), so the same fields always give the same bytes. */
static int entry_mac(const struct xbd_fleet_secret *key, char text[][XBD_FLEET_VALUE_MAX],
		     const bool *seen, char out[XBD_FLEET_MAC_HEX + 1])
{
	char msg[32 + XBD_FLEET_FIELDS * (16 + XBD_FLEET_VALUE_MAX)];
	size_t len = (size_t)snprintf(msg, sizeof(msg), "xdpban-fleet-entry\n");

	for (int k = 0; k < F_MAC; k++)
		if (seen[k])
			len += (size_t)snprintf(msg + len, sizeof(msg) - len, "%s=%s\n",
						field_names[k], text[k]);
	return mac_hex(key, msg, len, out);
}

/* What a snapshot value's mac signs: the key and the rest of the value. */
static int snapshot_mac(const struct xbd_fleet_secret *key, const char *who, __s64 expires,
			const char *origin, char out[XBD_FLEET_MAC_HEX + 1])
{
	char msg[64 + 2 * XBD_FLEET_VALUE_MAX];
	int len = snprintf(msg, sizeof(msg), "xdpban-fleet-snapshot\n%s\n%lld %s\n", who,
			   (long long)expires, origin);

	return mac_hex(key, msg, (size_t)len, out);
}

static bool mac_equal(const char *a, const char *b)
{
	return strlen(a) == XBD_FLEET_MAC_HEX && strlen(b) == XBD_FLEET_MAC_HEX &&
	       CRYPTO_memcmp(a, b, XBD_FLEET_MAC_HEX) == 0;
}

static void put(struct xbd_fleet_fields *out, int field, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void put(struct xbd_fleet_fields *out, int field, const char *fmt, ...)
{
	va_list ap;

	out->names[out->n] = field_names[field];
	va_start(ap, fmt);
	vsnprintf(out->values[out->n], XBD_FLEET_VALUE_MAX, fmt, ap);
	va_end(ap);
	out->n++;
}

/* The fields of out as entry_mac reads them. */
static void fields_text(const struct xbd_fleet_fields *out, char text[][XBD_FLEET_VALUE_MAX],
			bool *seen)
{
	for (size_t i = 0; i < out->n; i++)
		for (int k = 0; k < XBD_FLEET_FIELDS; k++)
			if (out->names[i] == field_names[k]) {
				memcpy(text[k], out->values[i], XBD_FLEET_VALUE_MAX);
				seen[k] = true;
			}
}

int xbd_fleet_encode(const struct xbd_fleet_entry *e, const struct xbd_fleet_secret *secret,
		     struct xbd_fleet_fields *out)
{
	char key[XBD_FLEET_VALUE_MAX], classes[XB_CLASSES_TEXT_MAX], mac[XBD_FLEET_MAC_HEX + 1];
	char text[XBD_FLEET_FIELDS][XBD_FLEET_VALUE_MAX];
	bool seen[XBD_FLEET_FIELDS] = {};

	out->n = 0;
	if (xb_prefix_format(&e->who, key, sizeof(key)) ||
	    xb_classes_format(e->classes, classes, sizeof(classes)))
		return -EINVAL;
	put(out, F_V, "%s", XBD_FLEET_VERSION);
	put(out, F_ORIGIN, "%s", e->origin);
	put(out, F_KIND, "%s", e->kind == XBD_FLEET_BAN ? "ban" : "unban");
	put(out, F_KEY, "%s", key);
	if (e->kind == XBD_FLEET_BAN) {
		put(out, F_REASON, "%s", xb_reason_name(e->reason));
		put(out, F_CLASSES, "%s", classes);
		put(out, F_COUNT, "%" PRIu32, e->count);
		put(out, F_EXPIRES, "%lld", (long long)e->expires);
	}
	fields_text(out, text, seen);
	if (entry_mac(secret, text, seen, mac))
		return -EINVAL;
	put(out, F_MAC, "%s", mac);
	return 0;
}

/* ---- decoding ---- */

static bool plain_text(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] < 0x21 || s[i] > 0x7e)
			return false;
	return len > 0;
}

static bool digits_u64(const char *s, __u64 max, __u64 *out)
{
	__u64 v = 0;

	if (!isdigit((unsigned char)*s) || (s[0] == '0' && s[1]))
		return false;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s) || v > (max - (*s - '0')) / 10)
			return false;
		v = v * 10 + (*s - '0');
	}
	*out = v;
	return true;
}

bool xbd_fleet_name_valid(const char *s)
{
	size_t len = strlen(s);

	if (!len || len > XBD_FLEET_NAME_MAX)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._-", *s))
			return false;
	return true;
}

/* A key narrow enough for the fleet to ban (XBD_FLEET_MIN_PLEN4/6). */
static int parse_key(const char *s, struct xb_prefix *p)
{
	char ignored[XB_ERRLEN];

	if (xb_prefix_parse(s, p, ignored, sizeof(ignored)))
		return -EINVAL;
	if (p->plen < (p->family == XDPBAN_FAMILY_INET ? XBD_FLEET_MIN_PLEN4 : XBD_FLEET_MIN_PLEN6))
		return -ERANGE;
	return 0;
}

/* The values of the fields, by field; NULL when absent. */
typedef char field_text[XBD_FLEET_FIELDS][XBD_FLEET_VALUE_MAX];

static int collect(const struct xbd_fleet_raw *f, size_t n, field_text text, bool *seen,
		   char *why, size_t whylen)
{
	for (size_t i = 0; i < n; i++) {
		for (int k = 0; k < XBD_FLEET_FIELDS; k++) {
			if (f[i].name_len != strlen(field_names[k]) ||
			    memcmp(f[i].name, field_names[k], f[i].name_len))
				continue;
			if (seen[k]) {
				snprintf(why, whylen, "field \"%s\" twice", field_names[k]);
				return -EINVAL;
			}
			if (f[i].value_len >= XBD_FLEET_VALUE_MAX ||
			    !plain_text(f[i].value, f[i].value_len)) {
				snprintf(why, whylen, "field \"%s\" is not short plain text",
					 field_names[k]);
				return -EINVAL;
			}
			memcpy(text[k], f[i].value, f[i].value_len);
			text[k][f[i].value_len] = '\0';
			seen[k] = true;
		}
	}
	return 0;
}

static int bad(char *why, size_t whylen, int field, const char *value, const char *what)
{
	char quoted[XBD_FLEET_VALUE_MAX];

	snprintf(why, whylen, "field \"%s\" = \"%s\": %s", field_names[field],
		 xb_quote(value, quoted, sizeof(quoted)), what);
	return -EINVAL;
}

static int decode_ban(field_text text, const bool *seen, struct xbd_fleet_entry *e, char *why,
		      size_t whylen)
{
	char ignored[XB_ERRLEN];
	__u64 count, expires;

	for (int k = F_REASON; k <= F_EXPIRES; k++)
		if (!seen[k]) {
			snprintf(why, whylen, "a ban without field \"%s\"", field_names[k]);
			return -EINVAL;
		}
	if (xb_reason_parse(text[F_REASON], &e->reason, ignored, sizeof(ignored)))
		return bad(why, whylen, F_REASON, text[F_REASON], "not errors, manual or reported");
	if (xb_classes_parse("classes", text[F_CLASSES], &e->classes, why, whylen))
		return bad(why, whylen, F_CLASSES, text[F_CLASSES], "not a list of error classes");
	if (!digits_u64(text[F_COUNT], UINT32_MAX, &count))
		return bad(why, whylen, F_COUNT, text[F_COUNT], "not a count");
	if (!digits_u64(text[F_EXPIRES], INT64_MAX, &expires))
		return bad(why, whylen, F_EXPIRES, text[F_EXPIRES], "not Unix seconds");
	e->count = (__u32)count;
	e->expires = (__s64)expires;
	return 0;
}

/* The entry's mac is the key's signature of its fields: 0, or -EACCES with why. */
static int check_mac(const struct xbd_fleet_secret *secret, field_text text, const bool *seen,
		     char *why, size_t whylen)
{
	char want[XBD_FLEET_MAC_HEX + 1];

	if (!seen[F_MAC]) {
		snprintf(why, whylen, "no field \"mac\": not signed");
		return -EACCES;
	}
	if (entry_mac(secret, text, seen, want) || !mac_equal(text[F_MAC], want)) {
		snprintf(why, whylen, "field \"mac\": not signed with this fleet's key");
		return -EACCES;
	}
	return 0;
}

int xbd_fleet_decode(const struct xbd_fleet_raw *f, size_t n,
		     const struct xbd_fleet_secret *secret, struct xbd_fleet_entry *e, char *why,
		     size_t whylen)
{
	field_text text = {};
	bool seen[XBD_FLEET_FIELDS] = {};
	int ret = collect(f, n, text, seen, why, whylen);

	memset(e, 0, sizeof(*e));
	if (!ret)
		ret = check_mac(secret, text, seen, why, whylen);
	if (ret)
		return ret;
	for (int k = F_V; k <= F_KEY; k++)
		if (!seen[k]) {
			snprintf(why, whylen, "no field \"%s\"", field_names[k]);
			return -EINVAL;
		}
	if (strcmp(text[F_V], XBD_FLEET_VERSION))
		return bad(why, whylen, F_V, text[F_V], "not version " XBD_FLEET_VERSION);
	if (!xbd_fleet_name_valid(text[F_ORIGIN]))
		return bad(why, whylen, F_ORIGIN, text[F_ORIGIN], "not a node name");
	memcpy(e->origin, text[F_ORIGIN], strlen(text[F_ORIGIN]) + 1); /* valid: it fits */
	if (!strcmp(text[F_KIND], "ban"))
		e->kind = XBD_FLEET_BAN;
	else if (!strcmp(text[F_KIND], "unban"))
		e->kind = XBD_FLEET_UNBAN;
	else
		return bad(why, whylen, F_KIND, text[F_KIND], "not ban or unban");
	ret = parse_key(text[F_KEY], &e->who);
	if (ret == -ERANGE)
		return bad(why, whylen, F_KEY, text[F_KEY], "wider than the fleet bans (/16, /32)");
	if (ret)
		return bad(why, whylen, F_KEY, text[F_KEY], "not an address or prefix");
	return e->kind == XBD_FLEET_BAN ? decode_ban(text, seen, e, why, whylen) : 0;
}

int xbd_fleet_seconds_left(const struct xbd_fleet_entry *e, time_t now, __u32 *seconds,
			   char *why, size_t whylen)
{
	if (!e->expires) {
		*seconds = 0;
		return 0;
	}
	if (e->expires <= now) {
		snprintf(why, whylen, "expired %lld s ago", (long long)(now - e->expires));
		return -ERANGE;
	}
	if (e->expires - now > XDPBAN_TIME_MAX_S) {
		snprintf(why, whylen, "expiry %lld lies beyond the longest ban", (long long)e->expires);
		return -ERANGE;
	}
	*seconds = (__u32)(e->expires - now);
	return 0;
}

const char *xbd_fleet_left_text(__u32 seconds, char *buf, size_t len)
{
	char d[XB_DURATION_TEXT_MAX];

	if (!seconds || xb_duration_format(seconds, d, sizeof(d)))
		snprintf(buf, len, "%s", seconds ? "?" : "permanent");
	else
		snprintf(buf, len, "%s left", d);
	return buf;
}

/* ---- the snapshot hash ---- */

int xbd_fleet_snapshot_value(const struct xbd_fleet_entry *e,
			     const struct xbd_fleet_secret *secret, char *buf, size_t len)
{
	char who[XBD_FLEET_VALUE_MAX], mac[XBD_FLEET_MAC_HEX + 1];
	int n;

	if (xb_prefix_format(&e->who, who, sizeof(who)) ||
	    snapshot_mac(secret, who, e->expires, e->origin, mac))
		return -EINVAL;
	n = snprintf(buf, len, "%lld %s %s", (long long)e->expires, e->origin, mac);
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

/* The parts of a snapshot field: its key, and its value's expiry, origin and mac (NULL when
 * there is none). 0, or -EINVAL with why. */
static int snapshot_parts(const struct xbd_fleet_raw *f, struct xbd_fleet_entry *e,
			  char key[XBD_FLEET_VALUE_MAX], char value[XBD_SNAPSHOT_VALUE_MAX],
			  char **mac, char *why, size_t whylen)
{
	char quoted[XBD_FLEET_VALUE_MAX], *space;
	__u64 expires;
	int ret;

	memset(e, 0, sizeof(*e));
	if (f->name_len >= XBD_FLEET_VALUE_MAX || f->value_len >= XBD_SNAPSHOT_VALUE_MAX ||
	    !plain_text(f->name, f->name_len)) {
		snprintf(why, whylen, "a snapshot field that is not short plain text");
		return -EINVAL;
	}
	memcpy(key, f->name, f->name_len);
	key[f->name_len] = '\0';
	memcpy(value, f->value, f->value_len);
	value[f->value_len] = '\0';
	ret = parse_key(key, &e->who);
	space = strchr(value, ' ');
	*mac = space ? strchr(space + 1, ' ') : NULL;
	if (*mac)
		*(*mac)++ = '\0';
	if (ret || !space || (*space = '\0', !digits_u64(value, INT64_MAX, &expires)) ||
	    !xbd_fleet_name_valid(space + 1)) {
		snprintf(why, whylen, "snapshot field \"%s\": not KEY = \"EXPIRES ORIGIN MAC\"",
			 xb_quote(key, quoted, sizeof(quoted)));
		return -EINVAL;
	}
	e->kind = XBD_FLEET_BAN;
	e->reason = XDPBAN_REASON_MANUAL;
	e->expires = (__s64)expires;
	snprintf(e->origin, sizeof(e->origin), "%s", space + 1);
	return 0;
}

int xbd_fleet_snapshot_decode(const struct xbd_fleet_raw *f,
			      const struct xbd_fleet_secret *secret, struct xbd_fleet_entry *e,
			      char *why, size_t whylen)
{
	char key[XBD_FLEET_VALUE_MAX], value[XBD_SNAPSHOT_VALUE_MAX], want[XBD_FLEET_MAC_HEX + 1];
	char quoted[XBD_FLEET_VALUE_MAX], *mac;
	int ret = snapshot_parts(f, e, key, value, &mac, why, whylen);

	if (ret)
		return ret;
	if (!mac || snapshot_mac(secret, key, e->expires, e->origin, want) ||
	    !mac_equal(mac, want)) {
		snprintf(why, whylen, "snapshot field \"%s\": not signed with this fleet's key",
			 xb_quote(key, quoted, sizeof(quoted)));
		memset(e, 0, sizeof(*e));
		return -EACCES;
	}
	return 0;
}

bool xbd_fleet_snapshot_expired(const struct xbd_fleet_raw *f, time_t now)
{
	char key[XBD_FLEET_VALUE_MAX], value[XBD_SNAPSHOT_VALUE_MAX], why[XB_ERRLEN], *mac;
	struct xbd_fleet_entry e;

	return !snapshot_parts(f, &e, key, value, &mac, why, sizeof(why)) && e.expires &&
	       e.expires <= now;
}

/* ---- stream ids ---- */

static bool id_parts(const char *id, __u64 *ms, __u64 *seq)
{
	char buf[XBD_FLEET_ID_MAX], *dash;

	if (strlen(id) >= sizeof(buf))
		return false;
	snprintf(buf, sizeof(buf), "%s", id);
	dash = strchr(buf, '-');
	if (!dash)
		return false;
	*dash = '\0';
	return digits_u64(buf, UINT64_MAX, ms) && digits_u64(dash + 1, UINT64_MAX, seq);
}

bool xbd_fleet_id_valid(const char *id)
{
	__u64 ms, seq;

	return id_parts(id, &ms, &seq);
}

int xbd_fleet_id_cmp(const char *a, const char *b)
{
	__u64 ams = 0, aseq = 0, bms = 0, bseq = 0;

	id_parts(a, &ams, &aseq);
	id_parts(b, &bms, &bseq);
	if (ams != bms)
		return ams < bms ? -1 : 1;
	return aseq < bseq ? -1 : aseq > bseq;
}

__u64 xbd_fleet_id_ms(const char *id)
{
	__u64 ms = 0, seq;

	id_parts(id, &ms, &seq);
	return ms;
}
