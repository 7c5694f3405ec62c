/* test_fleet.c - the fleet's stream entries (user/common/fleet_entry.c, docs/fleet.md): a ban
 * or unban encoded into the fields of an XADD decodes back to the same entry; what a broken or
 * hostile writer may put in the stream (missing, repeated, unknown or junk fields, a bad or too
 * wide prefix, a wrong version, an expiry in the past or past the longest ban) is refused with
 * one phrase naming the field; an entry or snapshot value not signed with the fleet's key (no
 * mac, another key's, a field changed after signing) is refused before anything in it is
 * believed, and the signature is the HMAC-SHA256 docs/fleet.md describes, computed here on its
 * own; the snapshot hash's values and the stream ids. Pure functions: no root, no maps, no
 * Redis.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include "fleet_entry.h"

#define NOW 1796197954 /* a fixed "now" for the expiry checks */

static const struct xbd_fleet_secret KEY = { "this fleet's key: 32 bytes or more", 34 };
static const struct xbd_fleet_secret OTHER_KEY = { "a forger's own key of 32 bytes or more", 38 };

/* HMAC-SHA256 of msg under key in hex, as docs/fleet.md says, without fleet_entry.c. */
static void hmac_hex(const struct xbd_fleet_secret *key, const char *msg, char out[65])
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int len = 0;

	assert_non_null(HMAC(EVP_sha256(), key->bytes, (int)key->len, (const unsigned char *)msg,
			     strlen(msg), mac, &len));
	assert_int_equal(len, 32);
	for (unsigned int i = 0; i < len; i++)
		snprintf(out + 2 * i, 3, "%02x", mac[i]);
}

/* The mac of NAME VALUE pairs: "xdpban-fleet-entry\n", then NAME=VALUE lines of the fields of
 * version 1 in their order (docs/fleet.md, "Signatures"); other fields are not signed. */
static void entry_mac_of(const struct xbd_fleet_secret *key, const struct xbd_fleet_raw *raw,
			 size_t n, char out[65])
{
	static const char *const order[] = { "v",	"origin", "kind",  "key",
					     "reason", "classes", "count", "expires" };
	char msg[2048];
	size_t len = (size_t)snprintf(msg, sizeof(msg), "xdpban-fleet-entry\n");

	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++)
		for (size_t i = 0; i < n; i++)
			if (raw[i].name_len == strlen(order[k]) &&
			    !memcmp(raw[i].name, order[k], raw[i].name_len))
				len += (size_t)snprintf(msg + len, sizeof(msg) - len, "%s=%.*s\n",
							order[k], (int)raw[i].value_len,
							raw[i].value);
	hmac_hex(key, msg, out);
}

static struct xbd_fleet_entry ban_of(const char *key, __s64 expires)
{
	struct xbd_fleet_entry e = { .kind = XBD_FLEET_BAN, .reason = XDPBAN_REASON_ERRORS,
				     .classes = XDPBAN_CLASS_MALFORMED, .count = 11,
				     .expires = expires };
	char err[XB_ERRLEN];

	snprintf(e.origin, sizeof(e.origin), "node-a");
	if (xb_prefix_parse(key, &e.who, err, sizeof(err)))
		fail_msg("%s: %s", key, err);
	return e;
}

/* The fields as XREAD hands them over. */
static size_t raw_of(const struct xbd_fleet_fields *f, struct xbd_fleet_raw *raw)
{
	for (size_t i = 0; i < f->n; i++)
		raw[i] = (struct xbd_fleet_raw){ f->names[i], f->values[i], strlen(f->names[i]),
						 strlen(f->values[i]) };
	return f->n;
}

/* Decodes NAME VALUE ... pairs given as strings (NULL-terminated), signed with KEY: what a
 * node of the fleet, broken or buggy, could have written. */
static int decode_pairs(struct xbd_fleet_entry *e, char *why, const char *first, ...)
{
	struct xbd_fleet_raw raw[32];
	static char mac[65];
	size_t n = 0;
	va_list ap;

	va_start(ap, first);
	for (const char *name = first; name; name = va_arg(ap, const char *)) {
		const char *value = va_arg(ap, const char *);

		raw[n++] = (struct xbd_fleet_raw){ name, value, strlen(name), strlen(value) };
	}
	va_end(ap);
	entry_mac_of(&KEY, raw, n, mac);
	raw[n] = (struct xbd_fleet_raw){ "mac", mac, 3, strlen(mac) };
	return xbd_fleet_decode(raw, n + 1, &KEY, e, why, XB_ERRLEN);
}

#define GOOD_BAN "v", "1", "origin", "node-b", "kind", "ban", "key", "198.51.100.7", \
		 "reason", "manual", "classes", "none", "count", "0", "expires"

static void ban_round_trips(void **state)
{
	struct xbd_fleet_entry in = ban_of("2001:db8:1:2::/64", NOW + 3600), out;
	struct xbd_fleet_fields f;
	struct xbd_fleet_raw raw[XBD_FLEET_FIELDS];
	char why[XB_ERRLEN] = "";

	assert_int_equal(xbd_fleet_encode(&in, &KEY, &f), 0);
	assert_int_equal(f.n, 9);
	assert_string_equal(f.names[3], "key");
	assert_string_equal(f.values[3], "2001:db8:1:2::/64");
	assert_string_equal(f.values[5], "malformed");
	assert_string_equal(f.names[8], "mac");
	assert_int_equal(xbd_fleet_decode(raw, raw_of(&f, raw), &KEY, &out, why, sizeof(why)), 0);
	assert_memory_equal(&in, &out, sizeof(in));
}

static void unban_round_trips(void **state)
{
	struct xbd_fleet_entry in = ban_of("192.0.2.7", 0), out;
	struct xbd_fleet_fields f;
	struct xbd_fleet_raw raw[XBD_FLEET_FIELDS];
	char why[XB_ERRLEN] = "";

	in.kind = XBD_FLEET_UNBAN;
	in.reason = 0, in.classes = 0, in.count = 0;
	assert_int_equal(xbd_fleet_encode(&in, &KEY, &f), 0);
	assert_int_equal(f.n, 5); /* v origin kind key mac */
	assert_int_equal(xbd_fleet_decode(raw, raw_of(&f, raw), &KEY, &out, why, sizeof(why)), 0);
	assert_memory_equal(&in, &out, sizeof(in));
}

/* A newer writer may add fields: they are ignored. */
static void unknown_fields_ignored(void **state)
{
	struct xbd_fleet_entry e;
	char why[XB_ERRLEN] = "";

	assert_int_equal(decode_pairs(&e, why, GOOD_BAN, "1796201554", "region", "eu-1", NULL), 0);
	assert_string_equal(e.origin, "node-b");
	assert_int_equal(e.reason, XDPBAN_REASON_MANUAL);
	assert_int_equal(e.expires, 1796201554);
}

static void refused_as(int want, const char *what, int ret, const char *why,
		       const char *expected)
{
	if (ret != want)
		fail_msg("%s: returned %d (%s)", what, ret, why);
	if (!strstr(why, expected))
		fail_msg("%s: '%s' does not say '%s'", what, why, expected);
}

/* The signature is the documented HMAC; without it, or with another, or with a field changed
 * after signing, nothing is believed. */
static void signatures_checked(void **state)
{
	struct xbd_fleet_entry in = ban_of("203.0.113.5", NOW + 60), out;
	struct xbd_fleet_raw raw[XBD_FLEET_FIELDS];
	struct xbd_fleet_fields f;
	char why[XB_ERRLEN] = "", mac[65];
	size_t n;

	assert_int_equal(xbd_fleet_encode(&in, &KEY, &f), 0);
	n = raw_of(&f, raw);
	entry_mac_of(&KEY, raw, n - 1, mac);
	assert_string_equal(f.values[n - 1], mac);
	refused_as(-EACCES, "no mac", xbd_fleet_decode(raw, n - 1, &KEY, &out, why, sizeof(why)),
		   why, "no field \"mac\": not signed");
	refused_as(-EACCES, "another key",
		   xbd_fleet_decode(raw, n, &OTHER_KEY, &out, why, sizeof(why)), why,
		   "field \"mac\": not signed with this fleet's key");
	raw[3].value = "198.51.0.0/16"; /* the key changed after signing */
	raw[3].value_len = strlen(raw[3].value);
	refused_as(-EACCES, "changed key", xbd_fleet_decode(raw, n, &KEY, &out, why, sizeof(why)),
		   why, "not signed with this fleet's key");
	raw[3] = (struct xbd_fleet_raw){ "key", f.values[3], 3, strlen(f.values[3]) };
	raw[1].value = "node-b"; /* another node's name */
	raw[1].value_len = 6;
	refused_as(-EACCES, "changed origin", xbd_fleet_decode(raw, n, &KEY, &out, why, sizeof(why)),
		   why, "not signed with this fleet's key");
	/* a forger signing with a key of its own */
	raw[1].value = "node-a";
	entry_mac_of(&OTHER_KEY, raw, n - 1, mac);
	raw[n - 1].value = mac;
	refused_as(-EACCES, "forger's key", xbd_fleet_decode(raw, n, &KEY, &out, why, sizeof(why)),
		   why, "not signed with this fleet's key");
	/* junk in the mac is junk before it is a signature */
	raw[n - 1] = (struct xbd_fleet_raw){ "mac", "a b", 3, 3 };
	refused_as(-EINVAL, "junk mac", xbd_fleet_decode(raw, n, &KEY, &out, why, sizeof(why)), why,
		   "field \"mac\" is not short plain text");
}

static void refused(const char *what, int ret, const char *why, const char *expected)
{
	if (ret != -EINVAL)
		fail_msg("%s: returned %d (%s)", what, ret, why);
	if (!strstr(why, expected))
		fail_msg("%s: '%s' does not say '%s'", what, why, expected);
	if (strchr(why, '\n'))
		fail_msg("%s: more than one line: '%s'", what, why);
}

static void junk_refused(void **state)
{
	struct xbd_fleet_entry e;
	char why[XB_ERRLEN];

	refused("no fields", decode_pairs(&e, why, "foo", "bar", NULL), why, "no field \"v\"");
	refused("version 2", decode_pairs(&e, why, "v", "2", "origin", "a", "kind", "ban", "key",
					  "192.0.2.1", NULL), why, "not version 1");
	refused("no key", decode_pairs(&e, why, "v", "1", "origin", "a", "kind", "ban", NULL), why,
		"no field \"key\"");
	refused("a ban without expires",
		decode_pairs(&e, why, "v", "1", "origin", "a", "kind", "ban", "key", "192.0.2.1",
			     "reason", "manual", "classes", "none", "count", "0", NULL),
		why, "without field \"expires\"");
	refused("kind", decode_pairs(&e, why, "v", "1", "origin", "a", "kind", "nuke", "key",
				     "192.0.2.1", NULL), why, "not ban or unban");
	refused("origin", decode_pairs(&e, why, "v", "1", "origin", "a b", "kind", "unban", "key",
				       "192.0.2.1", NULL), why, "not short plain text");
	refused("origin /", decode_pairs(&e, why, "v", "1", "origin", "a/b", "kind", "unban", "key",
					 "192.0.2.1", NULL), why, "not a node name");
	refused("twice", decode_pairs(&e, why, "v", "1", "v", "1", NULL), why, "field \"v\" twice");
	refused("reason", decode_pairs(&e, why, "v", "1", "origin", "a", "kind", "ban", "key",
				       "192.0.2.1", "reason", "bored", "classes", "none", "count", "0",
				       "expires", "0", NULL), why, "not errors, manual or reported");
	refused("count", decode_pairs(&e, why, "v", "1", "origin", "a", "kind", "ban", "key",
				      "192.0.2.1", "reason", "manual", "classes", "none", "count",
				      "4294967296", "expires", "0", NULL), why, "not a count");
	refused("expires", decode_pairs(&e, why, GOOD_BAN, "-5", NULL), why, "not Unix seconds");
	refused("expires 0x", decode_pairs(&e, why, GOOD_BAN, "0x10", NULL), why, "not Unix seconds");
	refused("classes", decode_pairs(&e, why, "v", "1", "origin", "a", "kind", "ban", "key",
					"192.0.2.1", "reason", "manual", "classes", "evil", "count", "0",
					"expires", "0", NULL), why, "not a list of error classes");
}

/* The keys: strict prefixes, never wider than the fleet bans, and quoted when refused. */
static void bad_keys_refused(void **state)
{
	static const char *const keys[] = { "192.0.2.1/24x", "192.0.2.1/24", "host.example",
					    "::ffff:192.0.2.1", "" };
	struct xbd_fleet_entry e;
	char why[XB_ERRLEN];

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		refused(keys[i], decode_pairs(&e, why, "v", "1", "origin", "a", "kind", "unban", "key",
					      keys[i], NULL), why, "field \"");
	refused("0.0.0.0/0", decode_pairs(&e, why, "v", "1", "origin", "a", "kind", "unban", "key",
					  "0.0.0.0/0", NULL), why, "wider than the fleet bans");
	refused("2001:db8::/16", decode_pairs(&e, why, "v", "1", "origin", "a", "kind", "unban",
					      "key", "2001::/16", NULL), why, "wider than the fleet bans");
	assert_int_equal(decode_pairs(&e, why, "v", "1", "origin", "a", "kind", "unban", "key",
				      "198.51.0.0/16", NULL), 0);
	/* a byte that is not text, past a NUL, is quoted, not printed */
	{
		struct xbd_fleet_raw raw[] = {
			{ "v", "1", 1, 1 }, { "origin", "a", 6, 1 }, { "kind", "unban", 4, 5 },
			{ "key", "192.0.2.1\0\x07", 3, 11 },
		};

		refused("NUL in key", xbd_fleet_decode(raw, 4, &KEY, &e, why, sizeof(why)), why,
			"field \"key\" is not short plain text");
	}
}

static void expiry_checked(void **state)
{
	struct xbd_fleet_entry e = ban_of("192.0.2.7", NOW + 60);
	char why[XB_ERRLEN] = "";
	__u32 s = 1;

	assert_int_equal(xbd_fleet_seconds_left(&e, NOW, &s, why, sizeof(why)), 0);
	assert_int_equal(s, 60);
	e.expires = 0;
	assert_int_equal(xbd_fleet_seconds_left(&e, NOW, &s, why, sizeof(why)), 0);
	assert_int_equal(s, 0); /* permanent */
	e.expires = NOW;
	assert_int_equal(xbd_fleet_seconds_left(&e, NOW, &s, why, sizeof(why)), -ERANGE);
	assert_non_null(strstr(why, "expired 0 s ago"));
	e.expires = 1;
	assert_int_equal(xbd_fleet_seconds_left(&e, NOW, &s, why, sizeof(why)), -ERANGE);
	e.expires = (__s64)NOW + XDPBAN_TIME_MAX_S + 1;
	assert_int_equal(xbd_fleet_seconds_left(&e, NOW, &s, why, sizeof(why)), -ERANGE);
	assert_non_null(strstr(why, "beyond the longest ban"));
	e.expires = (__s64)NOW + XDPBAN_TIME_MAX_S;
	assert_int_equal(xbd_fleet_seconds_left(&e, NOW, &s, why, sizeof(why)), 0);
}

/* What the log says of a remote ban's time: a permanent one is "permanent", not "0 s left". */
static void left_text_says_permanent(void **state)
{
	char buf[XBD_FLEET_LEFT_TEXT_MAX];

	assert_string_equal(xbd_fleet_left_text(0, buf, sizeof(buf)), "permanent");
	assert_string_equal(xbd_fleet_left_text(60, buf, sizeof(buf)), "1m left");
	assert_string_equal(xbd_fleet_left_text(5400, buf, sizeof(buf)), "1h30m left");
	assert_string_equal(xbd_fleet_left_text(XDPBAN_TIME_MAX_S, buf, sizeof(buf)),
			    "3650d left");
}

static void snapshot_round_trips(void **state)
{
	struct xbd_fleet_entry in = ban_of("203.0.113.9", NOW + 5), out;
	char value[XBD_SNAPSHOT_VALUE_MAX], why[XB_ERRLEN] = "", mac[65], forged[160];
	struct xbd_fleet_raw raw = { "203.0.113.9", value, 11, 0 };

	assert_int_equal(xbd_fleet_snapshot_value(&in, &KEY, value, sizeof(value)), 0);
	hmac_hex(&KEY, "xdpban-fleet-snapshot\n203.0.113.9\n1796197959 node-a\n", mac);
	snprintf(forged, sizeof(forged), "1796197959 node-a %s", mac);
	assert_string_equal(value, forged);
	raw.value_len = strlen(value);
	assert_int_equal(xbd_fleet_snapshot_decode(&raw, &KEY, &out, why, sizeof(why)), 0);
	assert_memory_equal(&out.who, &in.who, sizeof(in.who));
	assert_int_equal(out.expires, NOW + 5);
	assert_string_equal(out.origin, "node-a");
	refused_as(-EACCES, "snapshot under another key",
		   xbd_fleet_snapshot_decode(&raw, &OTHER_KEY, &out, why, sizeof(why)), why,
		   "not signed with this fleet's key");
	snprintf(forged, sizeof(forged), "0 node-a %s", mac); /* made permanent */
	raw.value = forged;
	raw.value_len = strlen(forged);
	refused_as(-EACCES, "snapshot changed",
		   xbd_fleet_snapshot_decode(&raw, &KEY, &out, why, sizeof(why)), why,
		   "not signed with this fleet's key");
	raw.value = "0 node-a";
	raw.value_len = strlen(raw.value);
	refused_as(-EACCES, "snapshot without mac",
		   xbd_fleet_snapshot_decode(&raw, &KEY, &out, why, sizeof(why)), why,
		   "snapshot field \"203.0.113.9\": not signed");
	raw.value = "soon node-a";
	raw.value_len = strlen(raw.value);
	refused("snapshot junk", xbd_fleet_snapshot_decode(&raw, &KEY, &out, why, sizeof(why)), why,
		"not KEY = \"EXPIRES ORIGIN MAC\"");
	raw.value = "5";
	raw.value_len = 1;
	refused("snapshot without origin",
		xbd_fleet_snapshot_decode(&raw, &KEY, &out, why, sizeof(why)), why,
		"snapshot field \"203.0.113.9\"");
}

/* What the prune deletes from the snapshot hash: a ban whose expiry has passed, nothing else. */
static bool expired(const char *key, const char *value, time_t now)
{
	struct xbd_fleet_raw raw = { key, value, strlen(key), strlen(value) };

	return xbd_fleet_snapshot_expired(&raw, now);
}

static void snapshot_expiry_for_the_prune(void **state)
{
	assert_true(expired("203.0.113.9", "1796197950 node-a", NOW));
	assert_true(expired("2001:db8:1:2::/64", "1796197954 node-b", NOW)); /* ends now */
	assert_false(expired("203.0.113.9", "1796197955 node-a", NOW));     /* a second left */
	assert_false(expired("203.0.113.9", "0 node-a", NOW));              /* permanent */
	assert_false(expired("203.0.113.9", "soon node-a", NOW));          /* not ours */
	assert_false(expired("203.0.113.9", "5", NOW));
	assert_false(expired("0.0.0.0/0", "5 node-a", NOW));               /* a key refused */
}

static void ids_compare(void **state)
{
	assert_true(xbd_fleet_id_valid("0-0"));
	assert_true(xbd_fleet_id_valid("1796197954782-12"));
	assert_false(xbd_fleet_id_valid("1796197954782"));
	assert_false(xbd_fleet_id_valid("-1"));
	assert_false(xbd_fleet_id_valid("1-x"));
	assert_false(xbd_fleet_id_valid("18446744073709551616-0"));
	assert_true(xbd_fleet_id_cmp("9-0", "10-0") < 0);
	assert_true(xbd_fleet_id_cmp("10-1", "10-0") > 0);
	assert_int_equal(xbd_fleet_id_cmp("10-1", "10-1"), 0);
	assert_int_equal(xbd_fleet_id_ms("1796197954782-3"), 1796197954782ull);
	assert_true(xbd_fleet_name_valid("web-2.eu_1"));
	assert_false(xbd_fleet_name_valid(""));
	assert_false(xbd_fleet_name_valid("a:b"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ban_round_trips),
		cmocka_unit_test(signatures_checked),
		cmocka_unit_test(unban_round_trips),
		cmocka_unit_test(unknown_fields_ignored),
		cmocka_unit_test(junk_refused),
		cmocka_unit_test(bad_keys_refused),
		cmocka_unit_test(expiry_checked),
		cmocka_unit_test(left_text_says_permanent),
		cmocka_unit_test(snapshot_round_trips),
		cmocka_unit_test(snapshot_expiry_for_the_prune),
		cmocka_unit_test(ids_compare),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
