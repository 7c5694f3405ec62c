/* evstream.h - the daemon's stream of ban events for subscribers of the control socket
 * (docs/control.md, "events"): every ban (errors, reports, manual, with its escalation),
 * unban and expiry as one JSON line, numbered and kept in the ring of recent events
 * (evring.h), from which every subscribed connection is sent it as its socket drains
 * (server.h), and appended to the history file (evhistory.h). Expiries are found by the sweep from the bans the stream has told of, so a ban
 * the data path lifted itself is told of too, and logged here. Never changes a ban. */
#ifndef XDPBAND_EVSTREAM_H
#define XDPBAND_EVSTREAM_H

#include <stdbool.h>
#include <linux/types.h>
#include "evhistory.h"
#include "evring.h"
#include "libxdpban.h"

struct json_object;

/* The events of the reply to `events` without "since": the last ones of the ring. */
#define XBD_EVENTS_BACKLOG 256

enum xbd_event_kind { XBD_EVENT_BAN, XBD_EVENT_UNBAN, XBD_EVENT_EXPIRE };

/* One event as the daemon saw it. */
struct xbd_event {
	enum xbd_event_kind kind;
	struct xb_prefix who;  /* the banned key (address, IPv6 /64...) or prefix */
	__u8 reason;           /* enum xdpban_ban_reason (bans) */
	__u8 classes;          /* enum xdpban_class bits of an error ban */
	__u32 count;           /* errors that made it; 0 for a manual ban */
	__u64 time_ns;         /* CLOCK_BOOTTIME of the event */
	__u64 length_ns;       /* the ban's length (0: permanent) */
	__u32 repeats;         /* an escalated ban's earlier offences (0: a first) */
	double multiplier;     /* of the ban time by escalation (1: none) */
	const char *origin;    /* the fleet node a remote ban or unban came from; NULL: here */
	const char *comment;   /* a manual ban's comment; NULL: none */
	bool observed;         /* a ban made in observe mode: it drops nothing */
	struct xb_last_error last; /* an error ban's crossing error; proto 0: none */
};

/* Sees every event published (the fleet publishes this node's own, fleet.h). */
typedef void (*xbd_evstream_tap)(const struct xbd_event *e, void *ctx);

struct xbd_evstream {
	struct xbd_evring ring; /* ring.last: the sequence number of the last event */
	struct xbd_evhistory history; /* history.path NULL: no history file */
	void *told;     /* tsearch tree of the timed bans told of: prefix and expiry */
	unsigned long told_n;
	xbd_evstream_tap tap;  /* NULL: none */
	void *tap_ctx;
};

/* 0 or -ENOMEM. */
int xbd_evstream_init(struct xbd_evstream *es);
/* Learns the bans in force (at start, so that their expiry is told of). 0 or -errno. */
int xbd_evstream_seed(struct xbd_evstream *es, const struct xb_maps *m);
/* Numbers the event and adds it to the ring, for every subscriber. */
void xbd_evstream_publish(struct xbd_evstream *es, const struct xbd_event *e);
/* Tells of every ban told of whose time has run out by now (CLOCK_BOOTTIME ns), and logs it. */
void xbd_evstream_expire(struct xbd_evstream *es, __u64 now_ns);
/* Keeps every event from now on in the history file at path as well, bounded to max_events.
 * 0, or -errno with one line in err. */
int xbd_evstream_history(struct xbd_evstream *es, const char *path, __u32 max_events,
			 char *err, size_t errlen);
/* The events at or after since (Unix seconds), every one of them; with since -1, the last
 * XBD_EVENTS_BACKLOG events; oldest first, as a new JSON array: from the history file, the events from
 * before a restart with them, else from the ring. NULL with one line in err. */
struct json_object *xbd_evstream_backlog(const struct xbd_evstream *es, time_t since, char *err,
					 size_t errlen);
void xbd_evstream_free(struct xbd_evstream *es);

#endif /* XDPBAND_EVSTREAM_H */
