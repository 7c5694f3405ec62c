/* fuzz_fleet.c - libFuzzer harness for xbd_fleet_decode and xbd_fleet_snapshot_decode
 * (user/common/fleet_entry.c), the readers of what anyone who can write the fleet's Redis
 * stream and snapshot hash puts there. No seam is needed: they are pure functions of the
 * fields XREAD and HSCAN hand over.
 *
 * Each input is a mode byte, then lines "NAME=VALUE" (split at the first '='; a line without
 * one is a name with an empty value), the fields of one entry in their order, any bytes,
 * NULs included. With the mode's bit 0 set, the harness signs the fields itself, as
 * docs/fleet.md says, and adds the "mac" field: otherwise no input would pass the signature
 * and the checks behind it would never be fuzzed. The first field is also read as a snapshot
 * field and value, signed the same way with bit 1.
 *
 * Checked: the decoders return 0, -EINVAL or -EACCES; a refusal says why in one line of
 * printable text; an entry the harness did not sign is never accepted (-EACCES, or -EINVAL for
 * junk), nor one signed under another key; an accepted entry has a valid node name, a known
 * kind, a key no wider than the fleet bans, and encodes, under the same key, into fields that
 * decode back to the same entry; a snapshot value is treated the same way.
 */
/* fuzz-options: -max_len=1024 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include "fleet_entry.h"
#include "support.h"

#define FIELDS_MAX 32

static const struct xbd_fleet_secret KEY = { "the fuzzed fleet's key, 32 bytes long", 37 };
static const struct xbd_fleet_secret OTHER = { "another fleet's key, also 32 bytes or more", 42 };

static void hmac_hex(const char *msg, size_t len, char out[XBD_FLEET_MAC_HEX + 1])
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	fz_check(HMAC(EVP_sha256(), KEY.bytes, (int)KEY.len, (const unsigned char *)msg, len, mac,
		      &n) && n == 32, "HMAC failed");
	for (unsigned int i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", mac[i]);
}

/* The mac docs/fleet.md defines: the fields of version 1, in their order, as NAME=VALUE lines. */
static void sign_entry(const struct xbd_fleet_raw *f, size_t n, char out[XBD_FLEET_MAC_HEX + 1])
{
	static const char *const order[] = { "v",	"origin", "kind",  "key",
					     "reason", "classes", "count", "expires" };
	static char msg[64 + FIELDS_MAX * 1100];
	size_t len = (size_t)snprintf(msg, sizeof(msg), "xdpban-fleet-entry\n");

	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++)
		for (size_t i = 0; i < n; i++)
			if (f[i].name_len == strlen(order[k]) &&
			    !memcmp(f[i].name, order[k], f[i].name_len) &&
			    len + f[i].value_len + 16 < sizeof(msg)) {
				len += (size_t)snprintf(msg + len, sizeof(msg) - len, "%s=", order[k]);
				memcpy(msg + len, f[i].value, f[i].value_len);
				len += f[i].value_len;
				msg[len++] = '\n';
			}
	hmac_hex(msg, len, out);
}

static void check_refusal(int ret, const char *why, const char *what)
{
	fz_check(ret == -EINVAL || ret == -EACCES, "%s: returned %d", what, ret);
	fz_check_message(why, XB_ERRLEN, what);
	fz_check(fz_printable(why), "%s: '%s' is not printable", what, why);
}

static void check_entry(const struct xbd_fleet_entry *e)
{
	struct xbd_fleet_raw raw[XBD_FLEET_FIELDS];
	struct xbd_fleet_fields f;
	struct xbd_fleet_entry again;
	char why[XB_ERRLEN] = "";

	fz_check(xbd_fleet_name_valid(e->origin), "accepted origin '%s'", e->origin);
	fz_check(e->kind == XBD_FLEET_BAN || e->kind == XBD_FLEET_UNBAN, "kind %d", e->kind);
	fz_check(e->who.plen >= (e->who.family == XDPBAN_FAMILY_INET ? XBD_FLEET_MIN_PLEN4
								     : XBD_FLEET_MIN_PLEN6),
		 "accepted a /%u", e->who.plen);
	fz_check(!xbd_fleet_encode(e, &KEY, &f), "an accepted entry does not encode");
	for (size_t i = 0; i < f.n; i++)
		raw[i] = (struct xbd_fleet_raw){ f.names[i], f.values[i], strlen(f.names[i]),
						 strlen(f.values[i]) };
	fz_check(!xbd_fleet_decode(raw, f.n, &KEY, &again, why, sizeof(why)),
		 "its encoding does not decode: %s", why);
	fz_check(!memcmp(e, &again, sizeof(*e)), "it does not decode to itself");
	fz_check(xbd_fleet_decode(raw, f.n, &OTHER, &again, why, sizeof(why)) == -EACCES,
		 "another key's reader accepted it");
}

/* The first field as a snapshot field and value, signed when asked. */
static void check_snapshot(const struct xbd_fleet_raw *first, bool sign)
{
	static char value[2048];
	char mac[XBD_FLEET_MAC_HEX + 1], why[XB_ERRLEN] = "", msg[2200];
	struct xbd_fleet_raw raw = *first;
	struct xbd_fleet_entry e;
	int ret;

	if (sign && first->name_len < 100 && first->value_len < 1000) {
		int len = snprintf(msg, sizeof(msg), "xdpban-fleet-snapshot\n%.*s\n%.*s\n",
				   (int)first->name_len, first->name, (int)first->value_len,
				   first->value);

		hmac_hex(msg, (size_t)len, mac);
		len = snprintf(value, sizeof(value), "%.*s %s", (int)first->value_len, first->value,
			       mac);
		raw.value = value;
		raw.value_len = (size_t)len;
	}
	ret = xbd_fleet_snapshot_decode(&raw, &KEY, &e, why, sizeof(why));
	(void)xbd_fleet_snapshot_expired(&raw, 1796197954);
	if (ret) {
		check_refusal(ret, why, "snapshot");
		return;
	}
	fz_check(sign, "an unsigned snapshot value was accepted");
	fz_check(xbd_fleet_name_valid(e.origin), "snapshot origin '%s'", e.origin);
	fz_check(!xbd_fleet_snapshot_value(&e, &KEY, value, sizeof(value)),
		 "an accepted snapshot ban does not encode");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xbd_fleet_raw raw[FIELDS_MAX + 1];
	char mac[XBD_FLEET_MAC_HEX + 1], why[XB_ERRLEN] = "";
	const char *p, *end = (const char *)data + size;
	struct xbd_fleet_entry e;
	bool sign;
	size_t n = 0;
	int ret;

	if (!size)
		return 0;
	sign = data[0] & 1;
	for (p = (const char *)data + 1; p < end && n < FIELDS_MAX;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *line_end = nl ? nl : end;
		const char *eq = memchr(p, '=', (size_t)(line_end - p));

		raw[n++] = eq ? (struct xbd_fleet_raw){ p, eq + 1, (size_t)(eq - p),
							(size_t)(line_end - eq - 1) }
			      : (struct xbd_fleet_raw){ p, line_end, (size_t)(line_end - p), 0 };
		p = line_end + 1;
	}
	if (n)
		check_snapshot(&raw[0], data[0] & 2);
	if (sign) {
		sign_entry(raw, n, mac);
		raw[n++] = (struct xbd_fleet_raw){ "mac", mac, 3, XBD_FLEET_MAC_HEX };
	}
	ret = xbd_fleet_decode(raw, n, &KEY, &e, why, sizeof(why));
	if (ret) {
		check_refusal(ret, why, "entry");
		return 0;
	}
	/* Unsigned by the harness: only a "mac" line of the input's own could carry a valid
	 * signature, which the fuzzer cannot find. */
	fz_check(sign, "an entry the harness did not sign was accepted");
	check_entry(&e);
	return 0;
}
