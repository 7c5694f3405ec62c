/* server.h - the control socket server: a Unix stream socket (owner-only by default) that
 * checks each peer's credentials with SO_PEERCRED before it takes a slot, keeps slots for root,
 * limits the connections of every other user, reads request lines of at most
 * XB_CONTROL_REQUEST_MAX bytes, with at most XB_CONTROL_FDS_MAX open files sent along, within
 * a time limit, and hands each to xb_control_handle().
 * It never interprets a request itself and never blocks the daemon: every socket is
 * non-blocking and driven by the daemon's poll loop. */
#ifndef XDPBAND_SERVER_H
#define XDPBAND_SERVER_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>
#include "conf.h"
#include "control.h"
#include "evring.h"

/* The limits of the socket (xdpband(8), docs/control.md), so that no peer can keep another
 * out: a peer that may not connect is refused before it takes a slot; the last
 * XBD_RESERVED_CLIENTS slots are for root and the daemon's own user; a group member holds at
 * most XBD_CLIENTS_PER_UID; when every slot is taken, a newcomer takes the slot of the
 * connection that has waited longest with nothing to do (of root's or the daemon's user's, if
 * the newcomer is one of those, any member's after that). */
#define XBD_MAX_CLIENTS 32
#define XBD_RESERVED_CLIENTS 8
#define XBD_CLIENTS_PER_UID 4
#define XBD_CLIENT_TIMEOUT_MS 5000 /* to send a whole request, and to take the whole reply */
#define XBD_ACCEPTS_PER_POLL 64    /* connections taken per turn of the loop; more wait */
#define XBD_LISTEN_BACKLOG 128
#define XBD_REFUSALS_LOG_MS 5000   /* one refusal is logged per this long; the rest counted */
#define XBD_HELD_TIMEOUT_MS XB_CONTROL_HELD_MS /* a held request (a reload) is answered by then */
/* An event subscriber (docs/control.md, "events") holds only the sequence number of the next
 * event it is due in the ring (evring.h); each time its socket drains, at most this much of
 * whole lines is copied from there for it. It is dropped when it falls more than the ring
 * behind, or when it takes nothing of what waits for XBD_CLIENT_TIMEOUT_MS: a slow reader
 * never holds up the daemon or the other subscribers, and a burst costs it no copy. */
#define XBD_SUBSCRIBER_CHUNK (64 * 1024)

/* What a held request waits for: each is answered on its own. */
enum xbd_hold { XBD_HOLD_NONE, XBD_HOLD_RELOAD, XBD_HOLD_LISTS };

struct xbd_client {
	int fd; /* -1 = free slot */
	uid_t uid;
	bool privileged;   /* root or the daemon's user: may use the reserved slots */
	bool read_only;
	bool closing;      /* close once the reply is out */
	enum xbd_hold held; /* its request is answered later (xbd_server_release) */
	bool subscribed;   /* takes the event stream; reads no more requests */
	__u64 next_seq;    /* a subscriber's: the next event of the ring it is due */
	__u64 deadline_ms; /* CLOCK_MONOTONIC */
	__u64 active_ms;   /* when it connected or last had a reply */
	unsigned long turn; /* xbd_server.turn it was accepted in */
	char in[XB_CONTROL_REQUEST_MAX + 1]; /* a full request and its '\n' */
	size_t in_len;
	struct xb_control_fds fds; /* sent with what is in `in`: go with the next request handled */
	char *out;
	size_t out_len, out_off;
};

struct xbd_server {
	int fd;
	char path[108];
	dev_t dev; /* of the socket file we made, so that we only ever unlink our own */
	ino_t ino;
	uid_t owner;
	bool has_group, group_full;
	gid_t group;
	struct xb_control_ctx ctx;
	bool serving_read_only; /* the request being handled is from a read-only peer */
	struct xbd_client *serving; /* whose request is being handled, or NULL */
	unsigned long turn;       /* calls of xbd_server_serve */
	__u64 refusals_logged_ms; /* when a refusal was last logged */
	unsigned long refusals_unlogged; /* refusals since then */
	uid_t refused_uid;               /* of the last refusal */
	unsigned long subscribers_dropped; /* for falling behind the event stream */
	const struct xbd_evring *ring;     /* what subscribers are sent; NULL until one is */
	struct xbd_client clients[XBD_MAX_CLIENTS];
};

int xbd_server_open(struct xbd_server *s, const struct xbd_conf *conf,
		    const struct xb_control_ctx *ctx, char *err, size_t errlen);
#define XBD_SERVER_POLLFDS (1 + XBD_MAX_CLIENTS)

/* Fills XBD_SERVER_POLLFDS entries: the listening socket, then one per client slot. */
void xbd_server_pollfds(const struct xbd_server *s, struct pollfd *pfds);
/* Serves what poll reported in those entries, and expires clients past their deadline. */
void xbd_server_serve(struct xbd_server *s, const struct pollfd *pfds);
/* The poll timeout the nearest client deadline allows, in ms; -1 = none. */
int xbd_server_timeout_ms(const struct xbd_server *s);
/* Called from a hook while a request is handled: its reply is not sent; the connection waits
 * (reading no further request) for xbd_server_release() of what, at most XBD_HELD_TIMEOUT_MS. */
void xbd_server_hold(struct xbd_server *s, enum xbd_hold what);
/* The open files sent with the request being handled (NULL outside one). A hook may take them
 * (and leave it empty); those it leaves are closed after the request. */
struct xb_control_fds *xbd_server_serving_fds(struct xbd_server *s);
/* Called from a hook while a request is handled: after its reply, the connection takes every
 * line of ring from event next_seq on, as they come, and no further request. */
void xbd_server_subscribe(struct xbd_server *s, const struct xbd_evring *ring, __u64 next_seq);
int xbd_server_subscribers(const struct xbd_server *s);
/* Sends reply (a line without '\n') to every connection held for what. */
void xbd_server_release(struct xbd_server *s, enum xbd_hold what, const char *reply);
void xbd_server_close(struct xbd_server *s);
__u64 xbd_now_ms(void);

#endif /* XDPBAND_SERVER_H */
