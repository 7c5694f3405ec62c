/* fleet.h - fleet sharing of bans (docs/fleet.md), the loop's half: every ban and unban this
 * node makes (the event stream's tap, evstream.h) is queued for the publisher, and every other
 * node's entry the reader hands over (fleet_link.h) is checked and applied to the maps with
 * the library's own ban and unban, which refuse what the trusted, never-ban and host lists
 * protect. It keeps the node each remote ban came from, for `bans`, `query` and the event
 * stream, and which remote bans a rebuild from the snapshot no longer holds. Runs only in
 * the loop's thread; never waits on Redis. */
#ifndef XDPBAND_FLEET_H
#define XDPBAND_FLEET_H

#include <stdbool.h>
#include <stdio.h>
#include "evstream.h"
#include "exempt.h"
#include "fleet_link.h"
#include "state.h"

#define XBD_FLEET_TAKE 256 /* items applied per turn of the loop */
#define XBD_FLEET_QUOTA_LOG_MS 60000 /* at most one line a minute about the remote quota */
#define XBD_FLEET_LOGGED 16 /* applied bans and unbans logged one by one per turn; the rest
			      * in one line (a burst of 100,000 would be as many lines) */

struct json_object;

/* What became of the entries read (the metrics' and status's counters). */
struct xbd_fleet_counts {
	__u64 applied;          /* bans and unbans put in force here */
	__u64 refused_unsigned; /* no mac, or not the fleet key's signature */
	__u64 refused_malformed; /* junk: missing, repeated or bad fields */
	__u64 refused_expired;  /* a ban whose time is over, or absurdly far ahead */
	__u64 refused_policy;   /* trusted, never-ban or a host address here */
	__u64 refused_quota;    /* remote bans already hold their share of the ban table */
	__u64 refused_oversize; /* over XBD_FLEET_ENTRY_MAX bytes, refused before read whole */
	__u64 skipped_own;      /* this node's own entries */
	__u64 skipped_local;    /* a local ban here outlasts it, or an unban of a local ban */
};

struct xbd_fleet {
	bool on;
	const struct xbd_fleet_conf *conf;
	struct xb_maps *maps;        /* not const: a turn runs its bans as one run (xb_ban_run) */
	struct xbd_evstream *evs;
	bool *dirty;                 /* the state file is behind */
	struct xbd_fleet_link link;
	char last_id[XBD_FLEET_ID_MAX]; /* the last stream entry handled */
	char epoch[XBD_FLEET_EPOCH_HEX + 1]; /* of the Redis data it was read from; "" unknown */
	void *origins;               /* tsearch tree: remote bans in force and their node */
	size_t n_origins;
	unsigned int generation;     /* of the rebuild under way (origins not renewed by it go) */
	__s64 lag_ms;                /* from Redis adding the last entry to its handling here */
	size_t turn_applied;         /* bans and unbans applied in this turn of the loop */
	struct xbd_fleet_counts counts;
	size_t remote_max;           /* remote bans in force here, at most (remote-share) */
	__u64 quota_logged_ms;       /* the last log line about the quota */
	size_t quota_unlogged;       /* remote bans refused since then */
	struct xbd_fleet_item items[XBD_FLEET_TAKE];
};

/* Starts the link when [fleet] redis is set (else f->on stays false and every call is a
 * no-op), after what the state file kept (saved: taken). 0, or -errno with one line in err. */
int xbd_fleet_start(struct xbd_fleet *f, const struct xbd_fleet_conf *conf,
		    struct xb_maps *maps, struct xbd_evstream *evs, bool *dirty,
		    struct xbd_state_fleet *saved, char *err, size_t errlen);
/* Adds the addresses of the fleet's Redis server (conf->redis_host, resolved when it is a
 * name) to out as exempt (XDPBAN_EXEMPT_FLEET): a ban of it, local or from a forged entry,
 * would cut the node off the fleet. Nothing when the fleet is off; a name that does not
 * resolve now is logged and skipped. 0 or -ENOMEM. */
int xbd_fleet_endpoint_exempt(const struct xbd_fleet_conf *conf, struct xb_exempt_set *out);
/* The fd to poll for input, or -1. */
int xbd_fleet_fd(const struct xbd_fleet *f);
/* Applies what the reader handed over. */
void xbd_fleet_run(struct xbd_fleet *f);
/* The event stream's tap (ctx: the fleet): queues this node's own bans and unbans. */
void xbd_fleet_tap(const struct xbd_event *e, void *ctx);
/* The node a remote ban of p came from, or NULL. */
const char *xbd_fleet_origin(const struct xbd_fleet *f, const struct xb_prefix *p);
/* What the state file keeps. 0 or -ENOMEM. */
int xbd_fleet_state(const struct xbd_fleet *f, struct xbd_state_fleet *out);
/* status's "fleet" object (NULL when off or out of memory), and the metrics. */
struct json_object *xbd_fleet_json(const struct xbd_fleet *f);
void xbd_fleet_metrics(FILE *out, void *ctx);
/* {"PREFIX": "NODE", ...}: the origins of the remote bans, for `bans`. */
struct json_object *xbd_fleet_origins_json(const struct xbd_fleet *f);
/* At a reload (SIGHUP): reads the password file again, and connects again when it changed. */
void xbd_fleet_reread_password(struct xbd_fleet *f);
/* Stops the link's threads (the publisher has XBD_FLEET_FLUSH_MS to send what is queued);
 * the origins and the last id stay for the last save. */
void xbd_fleet_stop(struct xbd_fleet *f);
void xbd_fleet_free(struct xbd_fleet *f);

#endif /* XDPBAND_FLEET_H */
