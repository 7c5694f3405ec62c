/* evring.h - the ring of the event stream's recent lines (docs/control.md, "events"): the
 * last XBD_EVRING_EVENTS events, each as the text a subscriber is sent, numbered by its
 * sequence number. Subscribers hold only a sequence number into it (server.h), so that a
 * burst costs one copy of each line, not one per subscriber, and a follower that was dropped
 * or reconnects can resume from any event still held. Knows nothing of sockets or JSON. */
#ifndef XDPBAND_EVRING_H
#define XDPBAND_EVRING_H

#include <stddef.h>
#include <linux/types.h>

/* 65,536 events: a burst of bans far larger than the data path's ring buffer holds (about
 * 4,600 events) still fits whole. A ban's line is about 200 bytes: some 14 MiB when full,
 * with the heap's overhead, plus 1 MiB of slots. A power of two, so that a sequence number
 * maps to its slot. */
#define XBD_EVRING_EVENTS 65536

struct xbd_evline {
	char *text; /* the line with its '\n'; NULL: empty slot */
	size_t len;
};

struct xbd_evring {
	struct xbd_evline *slot; /* XBD_EVRING_EVENTS of them; event seq is at seq % the size */
	__u64 last;              /* sequence number of the newest event; 0: none yet */
	__u64 held;              /* events held: at most XBD_EVRING_EVENTS */
};

/* 0 or -ENOMEM. */
int xbd_evring_init(struct xbd_evring *r);
/* Adds line (without '\n') as event last + 1, in place of the oldest when full. 0, or
 * -ENOMEM with nothing changed (the event has no number). */
int xbd_evring_push(struct xbd_evring *r, const char *line);
/* The line of event seq (with its '\n'), or NULL when it is not held: too old or not yet. */
const struct xbd_evline *xbd_evring_get(const struct xbd_evring *r, __u64 seq);
/* The sequence number of the oldest event held; last + 1 when none is. */
__u64 xbd_evring_oldest(const struct xbd_evring *r);
void xbd_evring_free(struct xbd_evring *r);

#endif /* XDPBAND_EVRING_H */
