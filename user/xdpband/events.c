/* events.c - see events.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "events.h"
#include "log.h"
#include "xdpban_event.h"
#include "xdpban_time.h"

/* The event's crossing error, as the ban table keeps it. */
static struct xb_last_error last_error(const struct xdpban_event *e)
{
	struct xdpban_ban ban = { .count = e->count, .proto = e->proto, .port = e->port,
				  .rule = e->rule };

	return xb_last_error_of(&ban);
}

static void log_ban(const struct xdpban_event *e, const struct xbd_escalated *x)
{
	char who[64] = "?", classes[XB_CLASSES_TEXT_MAX] = "?", length[XB_DURATION_TEXT_MAX], until[40];
	char repeat[128] = "", last[XB_LAST_ERROR_TEXT_MAX + 16] = "";
	struct xb_last_error error = last_error(e);
	struct xbd_log_about about = { 0 };

	xb_key_format(&e->key, who, sizeof(who));
	xb_classes_format(e->classes, classes, sizeof(classes));
	xbd_about_who(&about, who);
	xbd_about_set(&about, XBD_LF_REASON, "%s", xb_reason_name(e->reason));
	xbd_about_set(&about, XBD_LF_COUNT, "%u", e->count);
	xbd_about_set(&about, XBD_LF_CLASSES, "%s", classes);
	xbd_about_set(&about, XBD_LF_ORIGIN, XBD_ORIGIN_LOCAL);
	if (!x->ban_ns) {
		snprintf(length, sizeof(length), "ever");
		snprintf(until, sizeof(until), "no expiry");
	} else {
		xb_duration_format((x->ban_ns + NS_PER_SEC - 1) / NS_PER_SEC, length,
				    sizeof(length));
		snprintf(until, sizeof(until), "until ");
		xbd_format_wall(xb_boot_to_wall(e->time_ns + x->ban_ns), until + 6,
				sizeof(until) - 6);
	}
	if (x->repeats)
		snprintf(repeat, sizeof(repeat), "; repeat offence %u, ban time x%g", x->repeats,
			 x->multiplier);
	if (error.proto) {
		strcpy(last, ", last error ");
		xb_last_error_format(&error, last + strlen(last), sizeof(last) - strlen(last));
	}
	xbd_log_about(XBD_LOG_INFO, &about, "ban %s for %s, %s: %u %s (%s)%s, reason %s%s%s", who,
		      length, until, e->count, xb_plural(e->count, "error", "errors"), classes,
		      last, xb_reason_name(e->reason), repeat,
		      e->flags & XDPBAN_EVENT_OBSERVED ? "; observed: would have dropped" : "");
}

static void publish_ban(struct xbd_evstream *evs, const struct xdpban_event *e,
			const struct xbd_escalated *x)
{
	struct xbd_event out = { .kind = XBD_EVENT_BAN, .reason = e->reason,
				 .classes = e->classes, .count = e->count,
				 .time_ns = e->time_ns, .length_ns = x->ban_ns,
				 .repeats = x->repeats, .multiplier = x->multiplier,
				 .observed = e->flags & XDPBAN_EVENT_OBSERVED,
				 .last = last_error(e) };

	xb_key_to_prefix(&e->key, &out.who);
	xbd_evstream_publish(evs, &out);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct xbd_events *ev = ctx;
	const struct xdpban_event *e = data;
	struct xbd_escalated x;
	int ret;

	if (size < sizeof(*e)) {
		pr_warn("ignoring a short ban event (%zu bytes)", size);
		return 0;
	}
	ret = xbd_escalate(ev->history, ev->maps, ev->esc, e, &x);
	if (ret)
		pr_warn("cannot escalate a ban: %s", strerror(-ret));
	log_ban(e, &x);
	publish_ban(ev->evs, e, &x);
	*ev->dirty = true;
	return 0;
}

int xbd_events_open(struct xbd_events *ev, const struct xb_maps *maps,
		    struct xbd_history *history, const struct xbd_escalation *esc, bool *dirty,
		    struct xbd_evstream *evs)
{
	*ev = (struct xbd_events){ .maps = maps, .history = history, .esc = esc, .dirty = dirty,
				   .evs = evs };
	ev->rb = ring_buffer__new(maps->events, on_event, ev, NULL);
	return ev->rb ? 0 : -errno;
}

int xbd_events_fd(const struct xbd_events *ev)
{
	return ring_buffer__epoll_fd(ev->rb);
}

int xbd_events_consume(struct xbd_events *ev)
{
	return ring_buffer__consume(ev->rb);
}

void xbd_events_close(struct xbd_events *ev)
{
	ring_buffer__free(ev->rb);
	ev->rb = NULL;
}
