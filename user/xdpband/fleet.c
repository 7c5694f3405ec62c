/* fleet.c - see fleet.h. */
#include <errno.h>
#include <netdb.h>
#include <inttypes.h>
#include <search.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>
#include <bpf/bpf.h>
#include <arpa/inet.h>
#include "control_fields.h"
#include "fleet.h"
#include "log.h"
#include "table.h"
#include "xdpban_time.h"

/* A remote ban in force here, and the node it came from. */
struct origin {
	struct xb_prefix who;
	char node[XBD_FLEET_NAME_MAX + 1];
	unsigned int generation;
};

static int origin_cmp(const void *a, const void *b)
{
	return xb_prefix_cmp(&((const struct origin *)a)->who, &((const struct origin *)b)->who);
}

static struct origin *origin_find(const struct xbd_fleet *f, const struct xb_prefix *who)
{
	struct origin probe = { .who = *who }, **node = tfind(&probe, &f->origins, origin_cmp);

	return node ? *node : NULL;
}

static void origin_put(struct xbd_fleet *f, const struct xb_prefix *who, const char *node)
{
	struct origin *o = origin_find(f, who), **slot;

	if (!o) {
		o = calloc(1, sizeof(*o));
		if (o)
			o->who = *who; /* the key, before tsearch places it */
		slot = o ? tsearch(o, &f->origins, origin_cmp) : NULL;
		if (!slot) {
			free(o);
			pr_warn("fleet: out of memory: the origin of a remote ban is not kept");
			return;
		}
		f->n_origins++;
	}
	snprintf(o->node, sizeof(o->node), "%s", node);
	o->generation = f->generation;
}

static void origin_forget(struct xbd_fleet *f, const struct xb_prefix *who)
{
	struct origin *o = origin_find(f, who);

	if (!o)
		return;
	tdelete(o, &f->origins, origin_cmp);
	free(o);
	f->n_origins--;
}

const char *xbd_fleet_origin(const struct xbd_fleet *f, const struct xb_prefix *p)
{
	const struct origin *o = f->on ? origin_find(f, p) : NULL;

	return o ? o->node : NULL;
}

/* ---- publishing ---- */

void xbd_fleet_tap(const struct xbd_event *e, void *ctx)
{
	struct xbd_fleet *f = ctx;
	struct xbd_fleet_entry out = { .who = e->who };
	char who[64] = "?";

	if (!f->on || f->link.wake_fd < 0 || e->origin)
		return; /* a remote one */
	origin_forget(f, &e->who); /* banned, lifted or over here: no longer the fleet's */
	if (e->kind == XBD_EVENT_EXPIRE)
		return; /* an expiry every node sees for itself */
	if (e->kind == XBD_EVENT_BAN && e->observed)
		return; /* observe mode's: other nodes would drop what this one only counts */
	snprintf(out.origin, sizeof(out.origin), "%s", f->conf->node);
	if (e->kind == XBD_EVENT_BAN) {
		out.kind = XBD_FLEET_BAN;
		out.reason = e->reason;
		out.classes = e->classes;
		out.count = e->count;
		out.expires = e->length_ns ? xb_boot_to_wall(e->time_ns + e->length_ns) : 0;
	} else {
		out.kind = XBD_FLEET_UNBAN;
	}
	if (xbd_fleet_link_push(&f->link, &out) == -ENOBUFS) {
		xb_prefix_format(&e->who, who, sizeof(who));
		pr_warn("fleet: publish queue full (%u): the %s of %s is not shared",
			f->conf->queue_size, out.kind == XBD_FLEET_BAN ? "ban" : "unban", who);
	}
}

/* ---- applying ---- */

static void refuse(struct xbd_fleet *f, __u64 *counter, const char *id, const char *why)
{
	(*counter)++;
	pr_warn("fleet: entry %s refused: %s", id[0] ? id : "(snapshot)", why);
}

/* The seconds a ban's expiry (boot ns, 0: never) leaves at now: -1 for ever, 0 when over. */
static __s64 left_of(__u64 expires_ns, __u64 now)
{
	if (!expires_ns)
		return -1;
	return expires_ns > now ? (__s64)((expires_ns - now + NS_PER_SEC - 1) / NS_PER_SEC) : 0;
}

/* The seconds left of a ban in force here on who (-1: for ever, 0: none): its key in the ban
 * table, or a manual prefix ban covering it. Read with the mapped table and one trie lookup,
 * not xb_query(), which walks the policy and exempt tries: this runs for every remote ban. */
static __s64 local_left(const struct xbd_fleet *f, const struct xb_prefix *who)
{
	struct xb_prefix addr = *who;
	struct xdpban_policy pol;
	struct xdpban_key key;
	struct xdpban_ban ban;
	union xb_lpm_key lpm;
	__u64 now = xb_boot_ns();
	__s64 left;

	addr.plen = xb_family_bits(who->family); /* the key's first address */
	xb_key_from_addr(NULL, &addr, who->family == XDPBAN_FAMILY_INET6 ? who->plen : 0, &key);
	left = xb_bans_get_in(f->maps, &key, &ban) ? 0 : left_of(ban.expires_ns, now);
	if (left)
		return left;
	xb_lpm_key_make(who, &lpm);
	if (bpf_map_lookup_elem(xb_policy_fd(f->maps, who->family), &lpm, &pol) ||
	    pol.verdict != XDPBAN_POLICY_DENY || pol.list_id != XDPBAN_LIST_MANUAL_BAN)
		return 0;
	return left_of(pol.expires_ns, now);
}

/* True when a ban made here (not the fleet's) outlasts a remote one of seconds (0: ever). */
static bool local_outlasts(const struct xbd_fleet *f, const struct xb_prefix *who,
			   __u32 seconds)
{
	__s64 left;

	if (origin_find(f, who))
		return false;
	left = local_left(f, who);
	return left < 0 || (seconds && left > 0 && left >= (__s64)seconds);
}

/* The first XBD_FLEET_LOGGED entries applied in a turn are logged, the rest only with -v. */
static enum xbd_log_level applied_level(struct xbd_fleet *f)
{
	return f->turn_applied++ < XBD_FLEET_LOGGED ? XBD_LOG_INFO : XBD_LOG_DEBUG;
}

/* The fields of the line of an entry applied: what the node that made the ban saw. */
static void fleet_about(struct xbd_log_about *a, const struct xbd_fleet_entry *e,
			const char *who)
{
	char classes[XB_CLASSES_TEXT_MAX];

	xbd_about_who(a, who);
	xbd_about_set(a, XBD_LF_ORIGIN, "%s", e->origin);
	if (e->kind != XBD_FLEET_BAN)
		return;
	xbd_about_set(a, XBD_LF_REASON, "%s", xb_reason_name(e->reason));
	if (e->count)
		xbd_about_set(a, XBD_LF_COUNT, "%u", e->count);
	if (e->classes && xb_classes_format(e->classes, classes, sizeof(classes)) == 0)
		xbd_about_set(a, XBD_LF_CLASSES, "%s", classes);
}

/* Tells the event stream's subscribers, with the origin (the tap leaves it alone). */
static void tell(struct xbd_fleet *f, const struct xbd_fleet_entry *e, __u32 seconds)
{
	struct xbd_event ev = { .kind = e->kind == XBD_FLEET_BAN ? XBD_EVENT_BAN : XBD_EVENT_UNBAN,
				.who = e->who, .reason = e->reason, .classes = e->classes,
				.count = e->count, .time_ns = xb_boot_ns(),
				.length_ns = (__u64)seconds * NS_PER_SEC, .multiplier = 1,
				.origin = e->origin };

	xbd_evstream_publish(f->evs, &ev);
	*f->dirty = true;
}

/* A new remote ban when remote bans hold their share of the ban table already: refused, so
 * that the fleet never crowds out this node's own bans; counted, and logged at most once a
 * minute. A ban of a key the fleet banned here already only renews it. */
static bool over_quota(struct xbd_fleet *f, const struct xb_prefix *who)
{
	__u64 now = xb_boot_ns() / 1000000;

	if (f->n_origins < f->remote_max || origin_find(f, who))
		return false;
	f->counts.refused_quota++;
	f->quota_unlogged++;
	if (!f->quota_logged_ms || now - f->quota_logged_ms >= XBD_FLEET_QUOTA_LOG_MS) {
		pr_warn("fleet: %zu remote %s refused: remote bans hold their share of the ban table (%zu, remote-share %u%%)",
			f->quota_unlogged, xb_plural(f->quota_unlogged, "ban", "bans"),
			f->remote_max, f->conf->remote_share);
		f->quota_unlogged = 0;
		f->quota_logged_ms = now;
	}
	return true;
}

static void apply_ban(struct xbd_fleet *f, const struct xbd_fleet_entry *e, const char *id)
{
	char why[XB_ERRLEN], who[64] = "?", line[XB_ERRLEN + 80], left[XBD_FLEET_LEFT_TEXT_MAX];
	struct xbd_log_about about = { 0 };
	__u32 seconds;
	int ret;

	if (xbd_fleet_seconds_left(e, time(NULL), &seconds, why, sizeof(why))) {
		xb_prefix_format(&e->who, who, sizeof(who));
		snprintf(line, sizeof(line), "ban of %s from %s: %s", who, e->origin, why);
		if (id[0] || e->expires > time(NULL))
			refuse(f, &f->counts.refused_expired, id, line);
		else /* the snapshot keeps bans past their end until a ban or unban replaces them */
			f->counts.refused_expired++;
		return;
	}
	if (local_outlasts(f, &e->who, seconds)) {
		f->counts.skipped_local++;
		return;
	}
	if (over_quota(f, &e->who))
		return;
	ret = xb_ban(f->maps, &e->who, seconds, why, sizeof(why));
	if (ret == -EPERM) { /* trusted, never-ban, a host address: kept as it is */
		snprintf(line, sizeof(line), "from %s: %s", e->origin, why);
		refuse(f, &f->counts.refused_policy, id, line);
		return;
	}
	if (ret) {
		snprintf(line, sizeof(line), "from %s: %s", e->origin, why);
		refuse(f, &f->counts.refused_malformed, id, line);
		return;
	}
	origin_put(f, &e->who, e->origin);
	f->counts.applied++;
	xb_prefix_format(&e->who, who, sizeof(who));
	xbd_fleet_left_text(seconds, left, sizeof(left));
	fleet_about(&about, e, who);
	xbd_log_about(applied_level(f), &about, "fleet: ban %s from %s, %s", who, e->origin, left);
	tell(f, e, seconds);
}

/* Lifts a ban only the fleet made here: an unban elsewhere never lifts a local ban. */
static void apply_unban(struct xbd_fleet *f, const struct xbd_fleet_entry *e)
{
	struct xb_prefix lifted;
	char why[XB_ERRLEN], who[64] = "?";
	struct xbd_log_about about = { 0 };
	int ret;

	if (!origin_find(f, &e->who)) {
		pr_debug("fleet: unban from %s of a ban not the fleet's: skipped", e->origin);
		f->counts.skipped_local++;
		return;
	}
	origin_forget(f, &e->who);
	ret = xb_unban(f->maps, &e->who, &lifted, why, sizeof(why));
	if (ret) {
		if (ret != -ENOENT) /* -ENOENT: expired meanwhile */
			pr_warn("fleet: unban from %s: %s", e->origin, why);
		return;
	}
	f->counts.applied++;
	xb_prefix_format(&e->who, who, sizeof(who));
	fleet_about(&about, e, who);
	xbd_log_about(applied_level(f), &about, "fleet: unban %s from %s", who, e->origin);
	tell(f, e, 0);
}

static void apply_entry(struct xbd_fleet *f, const struct xbd_fleet_item *it)
{
	if (it->status) {
		refuse(f, it->status == -EACCES  ? &f->counts.refused_unsigned
			  : it->status == -E2BIG ? &f->counts.refused_oversize
						 : &f->counts.refused_malformed,
		       it->id, it->why);
		return;
	}
	if (!strcmp(it->e.origin, f->conf->node)) {
		f->counts.skipped_own++;
		return;
	}
	if (it->e.kind == XBD_FLEET_BAN)
		apply_ban(f, &it->e, it->id);
	else
		apply_unban(f, &it->e);
}

/* Remote bans the rebuild did not renew: lifted elsewhere while this node could not see it. */
struct stale {
	unsigned int generation;
	struct xb_prefix *v;
	size_t n, cap;
};

static void collect_stale(const void *node, VISIT which, void *ctx)
{
	const struct origin *o = *(const struct origin *const *)node;
	struct stale *s = ctx;

	if ((which == postorder || which == leaf) && o->generation != s->generation &&
	    s->n < s->cap)
		s->v[s->n++] = o->who;
}

static void lift_stale(struct xbd_fleet *f)
{
	struct stale s = { .generation = f->generation, .cap = f->n_origins };
	struct xb_prefix lifted;
	char why[XB_ERRLEN];

	s.v = s.cap ? calloc(s.cap, sizeof(*s.v)) : NULL;
	if (!s.v)
		return;
	twalk_r(f->origins, collect_stale, &s);
	for (size_t i = 0; i < s.n; i++) {
		origin_forget(f, &s.v[i]);
		if (!xb_unban(f->maps, &s.v[i], &lifted, why, sizeof(why)))
			xbd_evstream_publish(f->evs, &(struct xbd_event){ .kind = XBD_EVENT_UNBAN,
				.who = s.v[i], .time_ns = xb_boot_ns(), .origin = "snapshot" });
	}
	if (s.n)
		pr_info("fleet: %zu remote %s no longer in the snapshot lifted", s.n,
			xb_plural(s.n, "ban", "bans"));
	free(s.v);
}

/* Wall-clock milliseconds: what a stream id's first part counts, on Redis's clock. */
static __s64 wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (__s64)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void handle(struct xbd_fleet *f, const struct xbd_fleet_item *it)
{
	switch (it->kind) {
	case XBD_FLEET_ITEM_ENTRY:
		f->lag_ms = wall_ms() - (__s64)xbd_fleet_id_ms(it->id);
		apply_entry(f, it);
		snprintf(f->last_id, sizeof(f->last_id), "%s", it->id);
		*f->dirty = true;
		break;
	case XBD_FLEET_ITEM_SNAPSHOT_BEGIN:
		f->generation++;
		break;
	case XBD_FLEET_ITEM_SNAPSHOT:
		apply_entry(f, it);
		break;
	case XBD_FLEET_ITEM_SNAPSHOT_END:
		if (it->status)
			lift_stale(f);
		snprintf(f->last_id, sizeof(f->last_id), "%s", it->id);
		*f->dirty = true;
		break;
	case XBD_FLEET_ITEM_EPOCH:
		snprintf(f->epoch, sizeof(f->epoch), "%s", it->id);
		*f->dirty = true;
		break;
	}
}

void xbd_fleet_run(struct xbd_fleet *f)
{
	size_t n;

	if (!f->on || f->link.wake_fd < 0)
		return;
	n = xbd_fleet_link_take(&f->link, f->items, XBD_FLEET_TAKE);
	if (!n)
		return;
	f->turn_applied = 0;
	/* One run: the checks of the turn's bans read the config and the tries once, not once a
	 * ban (nothing else changes them while the loop is here). Without memory for it, each
	 * ban reads them itself. */
	if (xb_ban_run_begin(f->maps))
		pr_debug("fleet: out of memory for a run of bans: each one reads the tries");
	for (size_t i = 0; i < n; i++)
		handle(f, &f->items[i]);
	xb_ban_run_end(f->maps);
	if (f->turn_applied > XBD_FLEET_LOGGED)
		pr_info("fleet: %zu more bans and unbans from the fleet applied (each with -v)",
			f->turn_applied - XBD_FLEET_LOGGED);
}

/* ---- start and stop ---- */

/* Remote bans this node takes at most: remote-share of what its ban table holds. */
static size_t remote_max_of(const struct xbd_fleet_conf *conf, const struct xb_maps *maps)
{
	__u32 groups = 0;
	size_t bans;

	if (xb_map_capacity(maps->bans, &groups))
		groups = XDPBAN_BAN_GROUPS(XDPBAN_DEFAULT_BANS_MAX);
	bans = (size_t)groups * XDPBAN_GROUP_SLOTS / 2; /* the table keeps half its slots free */
	return bans * conf->remote_share / 100 ? bans * conf->remote_share / 100 : 1;
}

int xbd_fleet_endpoint_exempt(const struct xbd_fleet_conf *conf, struct xb_exempt_set *out)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
	int ret = 0, gai;

	if (!conf->redis || !conf->redis_host)
		return 0;
	gai = getaddrinfo(conf->redis_host, NULL, &hints, &res);
	if (gai) {
		pr_warn("fleet: %s does not resolve now (%s): its address is not exempt",
			conf->redis_host, gai_strerror(gai));
		return 0;
	}
	for (const struct addrinfo *a = res; a && !ret; a = a->ai_next) {
		struct xb_prefix p = { 0 };

		if (a->ai_family == AF_INET) {
			p.family = XDPBAN_FAMILY_INET;
			p.plen = 32;
			memcpy(p.addr, &((const struct sockaddr_in *)a->ai_addr)->sin_addr, 4);
		} else if (a->ai_family == AF_INET6) {
			p.family = XDPBAN_FAMILY_INET6;
			p.plen = 128;
			memcpy(p.addr, &((const struct sockaddr_in6 *)a->ai_addr)->sin6_addr, 16);
		} else {
			continue;
		}
		ret = xb_exempt_set_add(out, &p, XDPBAN_EXEMPT_FLEET, 0);
	}
	freeaddrinfo(res);
	return ret;
}

int xbd_fleet_start(struct xbd_fleet *f, const struct xbd_fleet_conf *conf,
		    struct xb_maps *maps, struct xbd_evstream *evs, bool *dirty,
		    struct xbd_state_fleet *saved, char *err, size_t errlen)
{
	char password[256] = "";
	int ret;

	memset(f, 0, sizeof(*f));
	f->link.wake_fd = -1;
	if (!conf->redis)
		return 0;
	if (conf->password_file) {
		ret = xbd_fleet_password_read(conf->password_file, password, sizeof(password), err,
					      errlen);
		if (ret)
			return ret;
	}
	*f = (struct xbd_fleet){ .conf = conf, .maps = maps, .evs = evs, .dirty = dirty };
	f->remote_max = remote_max_of(conf, maps);
	f->on = true; /* before the origins: origin_put needs nothing more */
	snprintf(f->last_id, sizeof(f->last_id), "%s", saved->last_id);
	snprintf(f->epoch, sizeof(f->epoch), "%s", saved->epoch);
	for (size_t i = 0; i < saved->n_origins; i++)
		origin_put(f, &saved->origins[i].who, saved->origins[i].node);
	ret = xbd_fleet_link_start(&f->link, conf, password, f->last_id, f->epoch, err, errlen);
	explicit_bzero(password, sizeof(password));
	if (ret) {
		tdestroy(f->origins, free);
		memset(f, 0, sizeof(*f));
		f->link.wake_fd = -1;
		return ret;
	}
	pr_info("fleet: node %s sharing bans through redis %s, stream %s (%s)", conf->node,
		conf->redis, conf->stream,
		f->last_id[0] ? "after the last entry applied" : "from the snapshot first");
	return 0;
}

int xbd_fleet_fd(const struct xbd_fleet *f)
{
	return f->on ? f->link.wake_fd : -1;
}

struct state_walk {
	struct xbd_state_fleet *out;
	int ret;
};

static void add_origin(const void *node, VISIT which, void *ctx)
{
	const struct origin *o = *(const struct origin *const *)node;
	struct state_walk *w = ctx;

	if ((which == postorder || which == leaf) && !w->ret)
		w->ret = xbd_state_fleet_add(w->out, &o->who, o->node);
}

int xbd_fleet_state(const struct xbd_fleet *f, struct xbd_state_fleet *out)
{
	struct state_walk w = { .out = out };

	memset(out, 0, sizeof(*out));
	if (!f->on)
		return 0;
	snprintf(out->last_id, sizeof(out->last_id), "%s", f->last_id);
	snprintf(out->epoch, sizeof(out->epoch), "%s", f->epoch);
	twalk_r(f->origins, add_origin, &w);
	return w.ret;
}

void xbd_fleet_reread_password(struct xbd_fleet *f)
{
	char err[XB_ERRLEN];
	int ret;

	if (!f->on || f->link.wake_fd < 0 || !f->conf->password_file)
		return;
	ret = xbd_fleet_link_reauth(&f->link, err, sizeof(err));
	if (ret < 0)
		pr_warn("reload: %s; the fleet keeps the password it has", err);
	else if (ret)
		pr_info("reload: fleet: the password in %s changed: connecting to redis again with it",
			f->conf->password_file);
}

void xbd_fleet_stop(struct xbd_fleet *f)
{
	if (f->on && f->link.wake_fd >= 0)
		xbd_fleet_link_stop(&f->link);
}

void xbd_fleet_free(struct xbd_fleet *f)
{
	xbd_fleet_stop(f);
	tdestroy(f->origins, free);
	memset(f, 0, sizeof(*f));
	f->link.wake_fd = -1;
}

/* ---- status and metrics ---- */

static void add_u64(struct json_object *o, const char *name, __u64 v)
{
	json_object_object_add(o, name, json_object_new_int64((__s64)v));
}

struct json_object *xbd_fleet_json(const struct xbd_fleet *f)
{
	struct xbd_fleet_link_stats ls;
	struct json_object *o;

	if (!f->on || f->link.wake_fd < 0 || !(o = json_object_new_object()))
		return NULL;
	/* Reading the counters takes the link's lock, which is no part of the fleet's state. */
	xbd_fleet_link_stats((struct xbd_fleet_link *)&f->link, &ls);
	json_object_object_add(o, XB_F(NODE), json_object_new_string(f->conf->node));
	json_object_object_add(o, XB_F(REDIS), json_object_new_string(f->conf->redis));
	json_object_object_add(o, XB_F(STREAM), json_object_new_string(f->conf->stream));
	json_object_object_add(o, XB_F(CONNECTED),
			       json_object_new_boolean(ls.publisher_up && ls.reader_up));
	json_object_object_add(o, XB_F(FLEET_ERROR),
			       ls.error[0] ? json_object_new_string(ls.error) : NULL);
	json_object_object_add(o, XB_F(LAST_ID), f->last_id[0] ? json_object_new_string(f->last_id)
							   : NULL);
	json_object_object_add(o, XB_F(LAG_MS), json_object_new_int64(f->lag_ms));
	add_u64(o, XB_F(REMOTE_BANS), f->n_origins);
	add_u64(o, XB_F(PUBLISHED), ls.published);
	add_u64(o, XB_F(PUBLISH_FAILED), ls.publish_failed);
	json_object_object_add(o, XB_F(PUBLISH_ERROR), ls.publish_error[0]
							   ? json_object_new_string(ls.publish_error)
							   : NULL);
	add_u64(o, XB_F(QUEUED), ls.queued);
	add_u64(o, XB_F(OVERFLOWED), ls.overflowed);
	add_u64(o, XB_F(REBUILDS), ls.rebuilds);
	add_u64(o, XB_F(PRUNED), ls.pruned);
	add_u64(o, XB_F(APPLIED), f->counts.applied);
	add_u64(o, XB_F(REFUSED_UNSIGNED), f->counts.refused_unsigned);
	add_u64(o, XB_F(REFUSED_MALFORMED), f->counts.refused_malformed);
	add_u64(o, XB_F(REFUSED_EXPIRED), f->counts.refused_expired);
	add_u64(o, XB_F(REFUSED_POLICY), f->counts.refused_policy);
	add_u64(o, XB_F(REFUSED_QUOTA), f->counts.refused_quota);
	add_u64(o, XB_F(REFUSED_OVERSIZE), f->counts.refused_oversize);
	add_u64(o, XB_F(REMOTE_BANS_MAX), f->remote_max);
	add_u64(o, XB_F(SKIPPED_OWN), f->counts.skipped_own);
	add_u64(o, XB_F(SKIPPED_LOCAL), f->counts.skipped_local);
	return o;
}

static void metric(FILE *out, const char *type, const char *name, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* deploy/xdpband.8 (METRICS) lists them. */
void xbd_fleet_metrics(FILE *out, void *ctx)
{
	struct xbd_fleet *f = ctx;
	const struct xbd_fleet_counts *c = &f->counts;
	struct xbd_fleet_link_stats ls;

	if (!f->on || f->link.wake_fd < 0)
		return;
	xbd_fleet_link_stats(&f->link, &ls);
	metric(out, "gauge", "xdpban_fleet_connected",
	       "1 when both connections to the fleet's Redis are up.");
	fprintf(out, "xdpban_fleet_connected %d\n", ls.publisher_up && ls.reader_up);
	metric(out, "gauge", "xdpban_fleet_lag_seconds",
	       "From Redis adding the last entry read to its handling here.");
	fprintf(out, "xdpban_fleet_lag_seconds %.3f\n", f->lag_ms / 1000.0);
	metric(out, "gauge", "xdpban_fleet_queued", "Entries waiting to be published.");
	fprintf(out, "xdpban_fleet_queued %zu\n", ls.queued);
	metric(out, "counter", "xdpban_fleet_overflowed_total",
	       "Entries dropped because the publish queue was full.");
	fprintf(out, "xdpban_fleet_overflowed_total %" PRIu64 "\n", (uint64_t)ls.overflowed);
	metric(out, "counter", "xdpban_fleet_published_total",
	       "This node's bans and unbans added to the stream.");
	fprintf(out, "xdpban_fleet_published_total %" PRIu64 "\n", (uint64_t)ls.published);
	metric(out, "counter", "xdpban_fleet_publish_failed_total",
	       "This node's bans and unbans Redis refused, each once: kept queued and sent again (the log says why).");
	fprintf(out, "xdpban_fleet_publish_failed_total %" PRIu64 "\n", (uint64_t)ls.publish_failed);
	metric(out, "counter", "xdpban_fleet_applied_total",
	       "Other nodes' bans and unbans put in force here.");
	fprintf(out, "xdpban_fleet_applied_total %" PRIu64 "\n", (uint64_t)c->applied);
	metric(out, "counter", "xdpban_fleet_refused_total",
	       "Entries not applied, by why: malformed, expired (or absurdly far ahead), policy (trusted, never-ban or a host address here).");
	fprintf(out, "xdpban_fleet_refused_total{why=\"unsigned\"} %" PRIu64 "\n"
		     "xdpban_fleet_refused_total{why=\"malformed\"} %" PRIu64 "\n"
		     "xdpban_fleet_refused_total{why=\"expired\"} %" PRIu64 "\n"
		     "xdpban_fleet_refused_total{why=\"policy\"} %" PRIu64 "\n"
		     "xdpban_fleet_refused_total{why=\"quota\"} %" PRIu64 "\n"
		     "xdpban_fleet_refused_total{why=\"oversize\"} %" PRIu64 "\n",
		(uint64_t)c->refused_unsigned, (uint64_t)c->refused_malformed,
		(uint64_t)c->refused_expired, (uint64_t)c->refused_policy,
		(uint64_t)c->refused_quota, (uint64_t)c->refused_oversize);
	metric(out, "counter", "xdpban_fleet_skipped_total",
	       "Entries left alone, by why: own (this node's), local (a local ban outlasts it, or it unbans a local ban).");
	fprintf(out, "xdpban_fleet_skipped_total{why=\"own\"} %" PRIu64 "\n"
		     "xdpban_fleet_skipped_total{why=\"local\"} %" PRIu64 "\n",
		(uint64_t)c->skipped_own, (uint64_t)c->skipped_local);
	metric(out, "counter", "xdpban_fleet_rebuilds_total",
	       "Rebuilds from the snapshot hash (at start, or after the stream was trimmed).");
	fprintf(out, "xdpban_fleet_rebuilds_total %" PRIu64 "\n", (uint64_t)ls.rebuilds);
	metric(out, "counter", "xdpban_fleet_pruned_total",
	       "Expired bans this node deleted from the snapshot hash.");
	fprintf(out, "xdpban_fleet_pruned_total %" PRIu64 "\n", (uint64_t)ls.pruned);
}

static void add_origin_json(const void *node, VISIT which, void *ctx)
{
	const struct origin *o = *(const struct origin *const *)node;
	char text[64];

	if ((which == postorder || which == leaf) && !xb_prefix_format(&o->who, text, sizeof(text)))
		json_object_object_add(ctx, text, json_object_new_string(o->node));
}

struct json_object *xbd_fleet_origins_json(const struct xbd_fleet *f)
{
	struct json_object *o = json_object_new_object();

	if (o && f->on)
		twalk_r(f->origins, add_origin_json, o);
	return o;
}
