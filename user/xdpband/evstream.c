/* evstream.c - see evstream.h. */
#include <errno.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include "control_fields.h"
#include "evstream.h"
#include "log.h"
#include "xdpban_time.h"

/* A timed ban the stream has told of, until its expiry is told of or it is lifted. */
struct told {
	struct xb_prefix who;
	__u64 expires_ns; /* CLOCK_BOOTTIME */
};

static int told_cmp(const void *a, const void *b)
{
	return xb_prefix_cmp(&((const struct told *)a)->who, &((const struct told *)b)->who);
}

static void told_forget(struct xbd_evstream *es, const struct xb_prefix *who)
{
	struct told probe = { .who = *who }, **node = tfind(&probe, &es->told, told_cmp), *t;

	if (!node)
		return;
	t = *node;
	tdelete(&probe, &es->told, told_cmp);
	free(t);
	es->told_n--;
}

static void told_put(struct xbd_evstream *es, const struct xb_prefix *who, __u64 expires_ns)
{
	struct told *t = malloc(sizeof(*t)), **node;

	if (!t) {
		pr_warn("out of memory: the expiry of a ban will not be in the event stream");
		return;
	}
	*t = (struct told){ .who = *who, .expires_ns = expires_ns };
	node = tsearch(t, &es->told, told_cmp);
	if (!node) {
		free(t);
		pr_warn("out of memory: the expiry of a ban will not be in the event stream");
		return;
	}
	if (*node != t) { /* banned again: the new expiry counts */
		(*node)->expires_ns = expires_ns;
		free(t);
		return;
	}
	es->told_n++;
}

int xbd_evstream_init(struct xbd_evstream *es)
{
	memset(es, 0, sizeof(*es));
	return xbd_evring_init(&es->ring);
}

static const char *kind_name(enum xbd_event_kind k)
{
	switch (k) {
	case XBD_EVENT_BAN:
		return "ban";
	case XBD_EVENT_UNBAN:
		return "unban";
	case XBD_EVENT_EXPIRE:
		return "expire";
	}
	return "?";
}

static void add_int(struct json_object *o, const char *name, __s64 v)
{
	json_object_object_add(o, name, json_object_new_int64(v));
}

/* A time of day as every time in the protocol is written, RFC 3339 in UTC (null for 0:
 * never), and beside it as Unix seconds (0: never), for a program that counts. */
static void add_time(struct json_object *o, const char *name, const char *unix_name, time_t t)
{
	char text[32];

	if (t && xb_time_format(t, text, sizeof(text)) == 0)
		json_object_object_add(o, name, json_object_new_string(text));
	else
		json_object_object_add(o, name, NULL);
	add_int(o, unix_name, t);
}

/* The event's object; its fields are a contract (docs/control.md). */
static struct json_object *event_json(const struct xbd_event *e, __u64 seq)
{
	struct json_object *o = json_object_new_object();
	char who[64] = "?";

	if (!o)
		return NULL;
	xb_prefix_format(&e->who, who, sizeof(who));
	add_int(o, XB_F(SEQ), (__s64)seq);
	json_object_object_add(o, XB_F(EVENT), json_object_new_string(kind_name(e->kind)));
	add_time(o, XB_F(TIME), XB_F(TIME_UNIX), xb_boot_to_wall(e->time_ns));
	json_object_object_add(o, XB_F(SOURCE), json_object_new_string(who));
	if (e->origin)
		json_object_object_add(o, XB_F(ORIGIN), json_object_new_string(e->origin));
	if (e->kind != XBD_EVENT_BAN)
		return o;
	json_object_object_add(o, XB_F(REASON), json_object_new_string(xb_reason_name(e->reason)));
	add_int(o, XB_F(COUNT), e->count);
	json_object_object_add(o, XB_F(CLASSES), xb_json_classes(e->classes));
	add_int(o, XB_F(SECONDS), (__s64)((e->length_ns + NS_PER_SEC - 1) / NS_PER_SEC));
	add_time(o, XB_F(EXPIRES), XB_F(EXPIRES_UNIX),
		 e->length_ns ? xb_boot_to_wall(e->time_ns + e->length_ns) : 0);
	add_int(o, XB_F(REPEAT), e->repeats);
	json_object_object_add(o, XB_F(MULTIPLIER), json_object_new_double(e->multiplier));
	json_object_object_add(o, XB_F(OBSERVED), json_object_new_boolean(e->observed));
	if (e->comment)
		json_object_object_add(o, XB_F(COMMENT), json_object_new_string(e->comment));
	xb_json_last_error(o, &e->last);
	return o;
}

void xbd_evstream_publish(struct xbd_evstream *es, const struct xbd_event *e)
{
	struct json_object *o = event_json(e, es->ring.last + 1);
	int ret = o ? xbd_evring_push(&es->ring, xb_json_line(o)) : -ENOMEM;

	if (o)
		xbd_evhistory_append(&es->history, xb_json_line(o)); /* says its own failure */
	json_object_put(o);
	if (e->kind == XBD_EVENT_BAN && e->length_ns)
		told_put(es, &e->who, e->time_ns + e->length_ns);
	else
		told_forget(es, &e->who); /* unbanned, expired, or banned for ever */
	if (es->tap)
		es->tap(e, es->tap_ctx);
	if (ret) /* subscribers are sent it from the ring as their sockets drain (server.h) */
		pr_warn("out of memory: a ban event is not in the event stream");
}

struct due {
	__u64 now_ns;
	struct told *v;
	size_t n, cap;
};

static void collect_due(const void *node, VISIT which, void *ctx)
{
	const struct told *t = *(const struct told *const *)node;
	struct due *d = ctx;

	if ((which == postorder || which == leaf) && t->expires_ns <= d->now_ns && d->n < d->cap)
		d->v[d->n++] = *t;
}

/* Expiries logged one by one in a sweep; the rest in one line, each with -v, so that a mass
 * expiry (a flood's bans, a fleet snapshot's) costs a few lines, as their bans did. */
#define XBD_EXPIRED_LOGGED 16

static void log_expired(const struct xb_prefix *who, size_t nth)
{
	struct xbd_log_about about = { 0 };
	char text[64] = "?";

	xb_prefix_format(who, text, sizeof(text));
	xbd_about_who(&about, text);
	xbd_log_about(nth < XBD_EXPIRED_LOGGED ? XBD_LOG_INFO : XBD_LOG_DEBUG, &about,
		      "ban %s expired", text);
}

void xbd_evstream_expire(struct xbd_evstream *es, __u64 now_ns)
{
	struct due d = { .now_ns = now_ns, .cap = es->told_n };

	if (!es->told_n)
		return;
	d.v = calloc(d.cap, sizeof(*d.v));
	if (!d.v)
		return; /* the next sweep tries again */
	twalk_r(es->told, collect_due, &d);
	for (size_t i = 0; i < d.n; i++) {
		struct xbd_event e = { .kind = XBD_EVENT_EXPIRE, .who = d.v[i].who,
				       .time_ns = d.v[i].expires_ns };

		log_expired(&e.who, i);
		xbd_evstream_publish(es, &e);
	}
	if (d.n > XBD_EXPIRED_LOGGED)
		pr_info("%zu more bans expired (each with -v)", d.n - XBD_EXPIRED_LOGGED);
	free(d.v);
}

static int seed_ban(const struct xb_ban_info *ban, void *ctx)
{
	struct xbd_evstream *es = ctx;
	struct xb_prefix who;
	char err[XB_ERRLEN];

	if (ban->seconds_left < 0 || xb_prefix_parse(ban->prefix, &who, err, sizeof(err)))
		return 0;
	told_put(es, &who, xb_boot_ns() + (__u64)ban->seconds_left * NS_PER_SEC);
	return 0;
}

int xbd_evstream_seed(struct xbd_evstream *es, const struct xb_maps *m)
{
	return xb_ban_foreach(m, seed_ban, es);
}

int xbd_evstream_history(struct xbd_evstream *es, const char *path, __u32 max_events,
			 char *err, size_t errlen)
{
	return xbd_evhistory_open(&es->history, path, max_events, err, errlen);
}

/* The lines were made from JSON objects: reading them back costs a parse each, once per
 * `events` request, instead of keeping an object per event. */
static int pick_ring(const struct xbd_evring *ring, struct xbd_evpick *pick)
{
	int ret = 0;

	for (__u64 seq = xbd_evring_oldest(ring); !ret && seq <= ring->last; seq++) {
		const struct xbd_evline *l = xbd_evring_get(ring, seq);

		ret = xbd_evpick_line(pick, l->text, l->len - 1); /* without its '\n' */
	}
	return ret;
}

struct json_object *xbd_evstream_backlog(const struct xbd_evstream *es, time_t since, char *err,
					 size_t errlen)
{
	struct xbd_evpick pick;
	int ret = since >= 0 ? xbd_evpick_init(&pick, since, 0)
			     : xbd_evpick_init(&pick, 0, XBD_EVENTS_BACKLOG);

	if (!ret)
		ret = es->history.path
			      ? xbd_evhistory_read(es->history.path, &pick, err, errlen)
			      : pick_ring(&es->ring, &pick);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (ret) {
		xbd_evpick_free(&pick);
		return NULL;
	}
	return xbd_evpick_take(&pick);
}

void xbd_evstream_free(struct xbd_evstream *es)
{
	xbd_evring_free(&es->ring);
	xbd_evhistory_close(&es->history);
	tdestroy(es->told, free);
	memset(es, 0, sizeof(*es));
}
