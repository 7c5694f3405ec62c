/* fleet_shared.h - the state of the link to Redis that its threads share (fleet_link.h): the
 * publisher's queue, the reader's inbox and what the loop reads of both, under one lock; and
 * the reading of the password file, which the loop does at start and each connection again.
 * The link's functions are fleet_link.h's, the connections' fleet_conn.h's. */
#ifndef XDPBAND_FLEET_SHARED_H
#define XDPBAND_FLEET_SHARED_H

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

#endif /* XDPBAND_FLEET_SHARED_H */
