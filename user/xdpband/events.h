/* events.h - the consumer of the data path's ring buffer: one log line per new ban (address
 * or prefix, error count, reason, expiry in wall-clock time), after escalation has had its say.
 * Never changes a ban itself; offences.h decides about escalation. */
#ifndef XDPBAND_EVENTS_H
#define XDPBAND_EVENTS_H

#include <stdbool.h>
#include "conf.h"
#include "libxdpban.h"
#include "evstream.h"
#include "offences.h"

struct ring_buffer;

struct xbd_events {
	struct ring_buffer *rb;
	const struct xb_maps *maps;
	struct xbd_history *history;
	const struct xbd_escalation *esc; /* the daemon's current settings; reload swaps them */
	bool *dirty;                      /* set when a ban happened: the state file is behind */
	struct xbd_evstream *evs;         /* where each ban goes, escalation applied */
};

int xbd_events_open(struct xbd_events *ev, const struct xb_maps *maps,
		    struct xbd_history *history, const struct xbd_escalation *esc, bool *dirty,
		    struct xbd_evstream *evs);
int xbd_events_fd(const struct xbd_events *ev);
/* Handles every waiting event. The number handled, or -errno. */
int xbd_events_consume(struct xbd_events *ev);
void xbd_events_close(struct xbd_events *ev);

#endif /* XDPBAND_EVENTS_H */
