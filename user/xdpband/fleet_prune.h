/* fleet_prune.h - removing the snapshot hash's bans whose time is over (docs/fleet.md,
 * "Stream entries"): nothing else ever deletes them, since an expiry is not published. Every
 * node's publisher runs one bounded pass a second, on its own connection, between publishes:
 * WATCH the hash, HSCAN one page of it from a cursor kept across passes, and delete the
 * expired fields of that page in MULTI/HDEL/EXEC. A ban or unban anywhere in the fleet between
 * the WATCH and the EXEC aborts the EXEC, so that a field banned again meanwhile is never
 * deleted; the next pass tries again. Uses only the hash and transaction commands the fleet's
 * ACL grants. */
#ifndef XDPBAND_FLEET_PRUNE_H
#define XDPBAND_FLEET_PRUNE_H

#include <stddef.h>
#include <time.h>

#define XBD_FLEET_PRUNE_COUNT 256 /* fields asked of one HSCAN, and deleted at most, per pass */
#define XBD_FLEET_PRUNE_MS 1000   /* a pass this often */

struct redisContext;

/* One pass from cursor (a decimal string, "0" at the start; the next one is written back).
 * *deleted: the fields removed (0 as well when the EXEC was aborted). 0, or -EIO when the
 * connection failed or Redis refused a command. */
int xbd_fleet_prune_pass(struct redisContext *c, const char *snapshot, char *cursor,
			 size_t cursor_len, time_t now, size_t *deleted);

#endif /* XDPBAND_FLEET_PRUNE_H */
