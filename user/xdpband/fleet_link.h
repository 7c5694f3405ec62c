/* fleet_link.h - the daemon's two connections to Redis (docs/fleet.md), each in a thread of
 * its own so that the poll loop, the control socket and the data path never wait on Redis:
 *   - the publisher takes entries from a bounded queue and sends each as MULTI, XADD (MAXLEN
 *     ~), HSET or HDEL of the snapshot hash, EXEC; an entry leaves the queue once Redis has
 *     it, so nothing is lost while Redis is away unless the queue overflows (counted);
 *   - the reader positions itself (after the last applied id, or on the snapshot hash when
 *     the stream was trimmed past it or it has none), then waits in XREAD BLOCK and hands the
 *     decoded entries to the loop through a bounded inbox and an eventfd.
 * Both reconnect with backoff, reading the password file again for every connection (so
 * that a rotated password is taken up), and the publisher prunes the snapshot hash of expired
 * bans (fleet_prune.h). At stop the publisher has XBD_FLEET_FLUSH_MS to send what is queued.
 * Nothing here touches the maps or logs from the threads but on a change of connection state. */
#ifndef XDPBAND_FLEET_LINK_H
#define XDPBAND_FLEET_LINK_H

#include <stdbool.h>
#include "fleet_shared.h"

/* Starts both threads; the reader continues after last_id ("" rebuilds from the snapshot),
 * which was read under epoch ("" not known). 0, or -errno with one line in err. */
int xbd_fleet_link_start(struct xbd_fleet_link *l, const struct xbd_fleet_conf *conf,
			 const char *password, const char *last_id, const char *epoch, char *err,
			 size_t errlen);
/* Queues e for publishing. 0, or -ENOBUFS when the queue is full (counted in overflowed). */
int xbd_fleet_link_push(struct xbd_fleet_link *l, const struct xbd_fleet_entry *e);
/* Takes up to max items of the inbox, in order. The number taken. */
size_t xbd_fleet_link_take(struct xbd_fleet_link *l, struct xbd_fleet_item *out, size_t max);
/* The counters and states, read under the lock. */
struct xbd_fleet_link_stats {
	bool publisher_up, reader_up;
	bool head_refused;           /* the queue's head was refused and counted in publish_failed */
	size_t queued;
	__u64 published, overflowed, publish_failed, rebuilds, pruned;
	char error[XBD_FLEET_WHY_MAX];
	char publish_error[XBD_FLEET_WHY_MAX];
};
void xbd_fleet_link_stats(struct xbd_fleet_link *l, struct xbd_fleet_link_stats *out);
/* Reads the password file again (SIGHUP); when the password changed, both connections are
 * made anew with it. 1 changed, 0 the same (or no file), -errno with one line in err. */
int xbd_fleet_link_reauth(struct xbd_fleet_link *l, char *err, size_t errlen);
/* Stops the reader at once and gives the publisher XBD_FLEET_FLUSH_MS to send what is
 * queued; joins both and logs what was left unsent. */
void xbd_fleet_link_stop(struct xbd_fleet_link *l);

#endif /* XDPBAND_FLEET_LINK_H */
