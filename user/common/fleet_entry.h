/* fleet_entry.h - one ban or unban as a fleet stream entry (docs/fleet.md, "Stream entries"):
 * encoded into the field/value pairs of an XADD, and decoded and checked from what XREAD
 * returns, which may come from a hostile or broken writer. Also the snapshot hash's values.
 * Pure: no Redis, no maps, no clock but the `now` passed in, so that it is unit-tested whole. */
#ifndef XDPBAND_FLEET_ENTRY_H
#define XDPBAND_FLEET_ENTRY_H

#include <stddef.h>
#include <time.h>
#include <linux/types.h>
#include "conf.h"
#include "libxdpban.h"

#define XBD_FLEET_VERSION "1"
#define XBD_FLEET_FIELDS 9        /* v origin kind key reason classes count expires mac */
#define XBD_FLEET_VALUE_MAX 80    /* bytes of one value, its NUL included */
#define XBD_FLEET_MAC_HEX 64      /* an HMAC-SHA256 in hex digits */
/* A snapshot value, "EXPIRES ORIGIN MAC", its NUL included. */
#define XBD_SNAPSHOT_VALUE_MAX (24 + XBD_FLEET_NAME_MAX + XBD_FLEET_MAC_HEX)
#define XBD_FLEET_ID_MAX 48       /* a stream id "MS-SEQ" and its NUL */
/* The bytes of an entry's field names and values, at most; one of this version is about 250.
 * A longer entry is refused before it is read whole (fleet_conn.h), and so bounds what a
 * hostile writer costs every reader. */
#define XBD_FLEET_ENTRY_MAX 4096
/* The snapshot hash's field that holds the epoch of the fleet's Redis data: random hex set by
 * the first node to find it missing. A Redis that lost its data (restarted empty) has a new
 * one, which tells its new stream from one trimmed past a node's position. */
#define XBD_FLEET_EPOCH_FIELD "epoch"
#define XBD_FLEET_EPOCH_HEX 32
/* A remote prefix ban wider than these is refused: one node's mistake must not cut the whole
 * fleet off from half the Internet. */
#define XBD_FLEET_MIN_PLEN4 16
#define XBD_FLEET_MIN_PLEN6 32

enum xbd_fleet_kind { XBD_FLEET_BAN, XBD_FLEET_UNBAN };

struct xbd_fleet_entry {
	enum xbd_fleet_kind kind;
	char origin[XBD_FLEET_NAME_MAX + 1];
	struct xb_prefix who;  /* the banned key (address, IPv6 /64...) or prefix */
	__u8 reason;           /* enum xdpban_ban_reason; bans only */
	__u32 classes;         /* enum xdpban_class bits; bans only */
	__u32 count;           /* errors that made it; bans only */
	__s64 expires;         /* wall clock, Unix seconds; 0 = permanent; bans only */
};

/* The pairs of an XADD: names[i] = values[i], n of them. */
struct xbd_fleet_fields {
	const char *names[XBD_FLEET_FIELDS];
	char values[XBD_FLEET_FIELDS][XBD_FLEET_VALUE_MAX];
	size_t n;
};

/* The fields of e, the last of them "mac": the HMAC-SHA256 under the fleet's key of the
 * others (docs/fleet.md, "Signatures"). 0, or -EINVAL when e cannot be written (a prefix that
 * does not format). */
int xbd_fleet_encode(const struct xbd_fleet_entry *e, const struct xbd_fleet_secret *secret,
		     struct xbd_fleet_fields *out);

/* One field as XREAD returns it: bytes and their length, not NUL-terminated. */
struct xbd_fleet_raw {
	const char *name, *value;
	size_t name_len, value_len;
};
/* Decodes and checks the n pairs of one entry. 0; -EACCES with why when its mac is missing or
 * is not the fleet key's signature of its fields (checked before anything else is believed);
 * -EINVAL with why (one phrase, the field quoted) when a field is missing, repeated, not text,
 * or wrong. Unknown fields are ignored (a newer writer may add some); the version field must
 * be XBD_FLEET_VERSION. */
int xbd_fleet_decode(const struct xbd_fleet_raw *f, size_t n,
		     const struct xbd_fleet_secret *secret, struct xbd_fleet_entry *e, char *why,
		     size_t whylen);
/* The seconds a decoded ban has left at now (0: permanent), or -ERANGE with why when its time
 * is over or lies further ahead than the longest ban (XDPBAN_TIME_MAX_S). */
int xbd_fleet_seconds_left(const struct xbd_fleet_entry *e, time_t now, __u32 *seconds,
			   char *why, size_t whylen);
/* Those seconds as a log line says them: "1h30m left" (the one duration format), or
 * "permanent" for 0. buf holds XB_DURATION_TEXT_MAX + 5 bytes; returns buf. */
#define XBD_FLEET_LEFT_TEXT_MAX (XB_DURATION_TEXT_MAX + 5)
const char *xbd_fleet_left_text(__u32 seconds, char *buf, size_t len);

/* The snapshot hash: field = the key as text, value = "EXPIRES ORIGIN MAC", MAC the
 * HMAC-SHA256 under the fleet's key of the key and the rest of the value. */
int xbd_fleet_snapshot_value(const struct xbd_fleet_entry *e,
			     const struct xbd_fleet_secret *secret, char *buf, size_t len);
/* A ban from one field and value of the hash (reason manual, no count): 0, -EINVAL with why,
 * or -EACCES with why when it is not signed with the fleet's key. */
int xbd_fleet_snapshot_decode(const struct xbd_fleet_raw *f,
			      const struct xbd_fleet_secret *secret, struct xbd_fleet_entry *e,
			      char *why, size_t whylen);

/* True when a field of the hash holds a ban whose expiry has passed at now, which the fleet
 * prunes (fleet_prune.h). A permanent ban, or a field that does not decode, is never: a field
 * a later version writes differently is not this version's to delete. */
bool xbd_fleet_snapshot_expired(const struct xbd_fleet_raw *f, time_t now);

/* A node name: 1 to XBD_FLEET_NAME_MAX letters, digits, '.', '_' and '-'. */
bool xbd_fleet_name_valid(const char *s);
/* A stream id "MS-SEQ" (decimal, each part below 2^64): true when id is one. */
bool xbd_fleet_id_valid(const char *id);
/* <0, 0, >0 as a is before, equal to or after b (both valid ids). */
int xbd_fleet_id_cmp(const char *a, const char *b);
/* The milliseconds part of a valid id: when Redis added the entry, on its clock. */
__u64 xbd_fleet_id_ms(const char *id);

#endif /* XDPBAND_FLEET_ENTRY_H */
