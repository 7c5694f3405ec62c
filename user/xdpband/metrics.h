/* metrics.h - the Prometheus text endpoint (GET /metrics) on a local address, served by
 * libmicrohttpd from the daemon's own poll loop (no thread): per-verdict packets and bytes,
 * events, tracked and banned sources, and the fill of the counter and ban tables, read from the
 * maps at scrape time. Read-only: a scrape never changes state. */
#ifndef XDPBAND_METRICS_H
#define XDPBAND_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "conf.h"
#include "libxdpban.h"
#include "offences.h"

struct MHD_Daemon;
struct MHD_Connection;

/* At most this many connections at once; each must send a whole request within
 * XBD_METRICS_REQUEST_MS of its start or of its last answer, or it is closed: a slow client
 * holds a slot for that long at most, never as long as it keeps trickling bytes. */
#define XBD_METRICS_CONN_LIMIT 8
#define XBD_METRICS_REQUEST_MS 3000

struct xbd_metrics_conn {
	struct MHD_Connection *conn; /* NULL: a free slot */
	__u64 since_ms;              /* monotonic: when it began waiting for a request */
	bool answering;              /* its request is in, its answer on the way */
};

struct xbd_metrics {
	struct MHD_Daemon *mhd; /* NULL when metrics are off */
	struct xbd_metrics_conn conns[XBD_METRICS_CONN_LIMIT];
	size_t slow_closed;     /* connections closed at the deadline since the last log line */
	__u64 slow_logged_ms;   /* when that line was written */
	const struct xb_maps *maps;
	const struct xbd_history *history;
	void (*extra)(FILE *out, void *ctx); /* more metrics after ours (the fleet's); NULL */
	void *extra_ctx;
};

/* Starts listening on conf->metrics_addr, unless metrics are off. 0 or -errno, message in err. */
int xbd_metrics_start(struct xbd_metrics *mt, const struct xbd_conf *conf,
		      const struct xb_maps *maps, const struct xbd_history *history, char *err,
		      size_t errlen);
/* The fd to poll for input, or -1. */
int xbd_metrics_fd(const struct xbd_metrics *mt);
/* How long the poll may sleep for libmicrohttpd's sake, in ms; -1 = no limit. */
int xbd_metrics_timeout_ms(const struct xbd_metrics *mt);
/* Serves whatever is ready. */
void xbd_metrics_run(struct xbd_metrics *mt);
void xbd_metrics_stop(struct xbd_metrics *mt);
/* Writes the exposition text. 0 or -errno. */
int xbd_metrics_render(FILE *out, const struct xb_maps *maps, const struct xbd_history *history);

#endif /* XDPBAND_METRICS_H */
