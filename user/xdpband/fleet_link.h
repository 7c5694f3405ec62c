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

#include <pthread.h>
#include <stdbool.h>
#include "fleet_entry.h"

#define XBD_FLEET_INBOX 4096      /* decoded entries waiting for the loop, at most */
#define XBD_FLEET_WHY_MAX 160
#define XBD_FLEET_FLUSH_MS 2000   /* at stop, the time the queue has to reach Redis */

enum xbd_fleet_item_kind {
	XBD_FLEET_ITEM_ENTRY,          /* a stream entry: id, and e or why */
	XBD_FLEET_ITEM_SNAPSHOT_BEGIN, /* a rebuild from the snapshot starts */
	XBD_FLEET_ITEM_SNAPSHOT,       /* one ban of the snapshot: e or why */
	XBD_FLEET_ITEM_SNAPSHOT_END,   /* it is over; id: the stream id it stands for; status
					* 1: lift the remote bans it did not hold (a trimmed
					* stream), 0: keep them (the stream was lost) */
	XBD_FLEET_ITEM_EPOCH,          /* id: the epoch of the Redis data read from now on */
};

/* What the reader hands the loop. */
struct xbd_fleet_item {
	enum xbd_fleet_item_kind kind;
	char id[XBD_FLEET_ID_MAX];
	int status;                 /* 0: e holds it; -EINVAL: refused, why says why */
	char why[XBD_FLEET_WHY_MAX];
	struct xbd_fleet_entry e;
};

struct redisContext;

struct xbd_fleet_link {
	struct xbd_fleet_conf conf;  /* a copy of its own: a reload frees the daemon's */
	char password[256];          /* "" for none; the last one read (under the lock) */
	unsigned int auth_gen;       /* bumped when the password changed: both reconnect */
	int wake_fd;                 /* eventfd: readable when the inbox holds items */
	pthread_t publisher, reader;
	bool started;
	pthread_mutex_t lock;        /* everything below */
	pthread_cond_t queue_cond;   /* the publisher waits for entries (or a backoff) */
	pthread_cond_t inbox_cond;   /* the reader waits for room, and backs off */
	pthread_cond_t done_cond;    /* the publisher has ended (stop waits for it) */
	pthread_cond_t refused_cond; /* the publisher waits to send a refused entry again (stop
				      * wakes it; a new entry does not) */
	bool stopping;
	bool publisher_done;
	__u64 flush_until_ms;        /* CLOCK_MONOTONIC: the publisher's last moment at stop */
	struct xbd_fleet_entry *queue; /* a ring of conf->queue_size */
	size_t queue_head, queue_n;
	struct xbd_fleet_item *inbox;  /* a ring of XBD_FLEET_INBOX */
	size_t inbox_head, inbox_n;
	char read_from[XBD_FLEET_ID_MAX]; /* the reader's position; "" rebuilds */
	char epoch[XBD_FLEET_EPOCH_HEX + 1]; /* the reader's: of the data read, "" not known */
	int reader_fd;               /* the reader's socket, to cut its XREAD at stop; -1 */
	int publisher_fd;            /* the publisher's, to cut it at the flush's end; -1 */
	bool publisher_up, reader_up;
	bool head_refused;           /* the queue's head was refused and counted in publish_failed */
	__u64 published, overflowed, publish_failed, rebuilds, pruned;
	char error[XBD_FLEET_WHY_MAX]; /* the last connection problem, "" none */
	char publish_error[XBD_FLEET_WHY_MAX]; /* why Redis refused the last refused entry (sent
						* again with backoff); "" once one is taken */
};

/* The first line of a password file, which must be a regular file owned by root that its
 * group and others cannot read or write. 0, or -errno with one line in err. */
int xbd_fleet_password_read(const char *path, char *buf, size_t len, char *err, size_t errlen);

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
