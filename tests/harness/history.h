/* history.h - finding one offence of the history (user/common/offences.h) in the unit tests
 * of the history and of the state file, through xbd_history_foreach as any caller sees it.
 * Header only. Test support only.
 */
#ifndef XDPBAN_TEST_HISTORY_H
#define XDPBAN_TEST_HISTORY_H

#include <string.h>
#include "offences.h"

struct history_find {
	struct xdpban_key key;
	struct xbd_offence found;
	int n; /* offences of the key seen */
};

static inline void history_find_cb(const struct xbd_offence *o, void *ctx)
{
	struct history_find *q = ctx;

	if (!memcmp(&o->key, &q->key, sizeof(q->key))) {
		q->found = *o;
		q->n++;
	}
}

/* How many offences of key the history holds (0 or 1), the last one in *out. */
static inline int history_find(const struct xbd_history *h, const struct xdpban_key *key,
			       struct xbd_offence *out)
{
	struct history_find q = { .key = *key };

	xbd_history_foreach(h, history_find_cb, &q);
	*out = q.found;
	return q.n;
}

#endif /* XDPBAN_TEST_HISTORY_H */
