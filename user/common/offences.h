/* offences.h - time and repeat offenders: the periodic sweep of expired bans and counters, and
 * escalation in the style of fail2ban's bantime.increment: a source banned again less than
 * `period` after its previous ban ended gets ban-time x factor^repeats, at most max-ban-time. Holds the
 * offence history (key -> last ban, repeats) that the state file saves. It never creates a
 * ban and never shortens one: it only lengthens a ban the data path has just made. */
#ifndef XB_OFFENCES_H
#define XB_OFFENCES_H

#include <stddef.h>
#include <time.h>
#include <linux/types.h>
#include "conf.h"
#include "libxdpban.h"
#include "xdpban_event.h"

struct xbd_offence {
	struct xdpban_key key;
	time_t last_ban;   /* wall clock: when the latest ban began */
	time_t last_until; /* wall clock: when it ends (0 = permanent) */
	__u32 repeats;     /* 0 for a first ban, 1 for the first repeat, ... */
};

struct xbd_history {
	void *root; /* tsearch tree of struct xbd_offence */
	size_t n;
	__u64 escalated; /* bans lengthened since start, for the metrics */
};

/* What escalation did with one new ban. */
struct xbd_escalated {
	__u32 repeats;
	__u64 ban_ns;     /* the ban's length now (0 = permanent) */
	double multiplier; /* 1 when not escalated */
};

int xbd_history_put(struct xbd_history *h, const struct xbd_offence *o);
void xbd_history_forget(struct xbd_history *h, const struct xdpban_key *key);
typedef void (*xbd_offence_cb)(const struct xbd_offence *o, void *ctx);
void xbd_history_foreach(const struct xbd_history *h, xbd_offence_cb cb, void *ctx);
void xbd_history_free(struct xbd_history *h);

/* Records the ban of an event and, for a repeat offence with escalation enabled, lengthens it
 * in the ban table. 0, or -errno when the map update failed (the ban stands as made). */
int xbd_escalate(struct xbd_history *h, const struct xb_maps *m,
		 const struct xbd_escalation *esc, const struct xdpban_event *ev,
		 struct xbd_escalated *out);

/* Removes expired bans and counters (xb_sweep) and offences too old to count as a repeat.
 * Returns the number of map entries removed, or -errno. */
int xbd_sweep(struct xbd_history *h, const struct xb_maps *m, const struct xbd_escalation *esc);

#endif /* XB_OFFENCES_H */
