/* evring.c - see evring.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "evring.h"

_Static_assert((XBD_EVRING_EVENTS & (XBD_EVRING_EVENTS - 1)) == 0,
	       "XBD_EVRING_EVENTS must be a power of two");

int xbd_evring_init(struct xbd_evring *r)
{
	memset(r, 0, sizeof(*r));
	r->slot = calloc(XBD_EVRING_EVENTS, sizeof(*r->slot));
	return r->slot ? 0 : -ENOMEM;
}

static struct xbd_evline *slot_of(const struct xbd_evring *r, __u64 seq)
{
	return &r->slot[seq & (XBD_EVRING_EVENTS - 1)];
}

int xbd_evring_push(struct xbd_evring *r, const char *line)
{
	size_t len = strlen(line);
	char *text = malloc(len + 2);
	struct xbd_evline *s;

	if (!text)
		return -ENOMEM;
	memcpy(text, line, len);
	text[len] = '\n';
	text[len + 1] = '\0';
	s = slot_of(r, r->last + 1);
	free(s->text); /* the oldest, when full */
	*s = (struct xbd_evline){ .text = text, .len = len + 1 };
	r->last++;
	if (r->held < XBD_EVRING_EVENTS)
		r->held++;
	return 0;
}

__u64 xbd_evring_oldest(const struct xbd_evring *r)
{
	return r->last + 1 - r->held;
}

const struct xbd_evline *xbd_evring_get(const struct xbd_evring *r, __u64 seq)
{
	if (seq < xbd_evring_oldest(r) || seq > r->last)
		return NULL;
	return slot_of(r, seq);
}

void xbd_evring_free(struct xbd_evring *r)
{
	if (r->slot)
		for (size_t i = 0; i < XBD_EVRING_EVENTS; i++)
			free(r->slot[i].text);
	free(r->slot);
	memset(r, 0, sizeof(*r));
}
