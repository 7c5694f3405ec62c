/* hooks.c - what the control handler (user/common/control.c) may ask of the daemon: its own
 * fields in `status` (with the host addresses it keeps exempt), notice of manual bans and
 * setting changes, and the daemon's commands `reload` and `save`. Each hook does one small
 * thing; none blocks for long. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>
#include "conf_diff.h"
#include "control_fields.h"
#include "ifinfo.h"
#include "log.h"
#include "runlists.h"
#include "xdpband.h"

/* docs/control.md names the modes as the kernel does. */
static const char *json_mode_name(enum xdp_attach_mode mode)
{
	switch (mode) {
	case XDP_MODE_NATIVE:
		return "native";
	case XDP_MODE_SKB:
		return "generic";
	case XDP_MODE_HW:
		return "offload";
	default:
		return "unknown";
	}
}

static struct json_object *interfaces_json(const struct xbd *d)
{
	struct json_object *arr = json_object_new_array();

	for (int i = 0; arr && i < d->att.n; i++) {
		const struct xbd_iface *ifc = &d->att.ifaces[i];
		struct json_object *o = json_object_new_object();
		__u32 mtu;

		json_object_object_add(o, XB_F(NAME), json_object_new_string(ifc->name));
		json_object_object_add(o, XB_F(IFINDEX), json_object_new_int(ifc->ifindex));
		json_object_object_add(o, XB_F(MODE),
				       json_object_new_string(json_mode_name(ifc->mode)));
		json_object_object_add(o, XB_F(PROGRAM_ID),
				       json_object_new_int64(xdp_program__id(ifc->prog)));
		if (!xbd_if_mtu(ifc->name, &mtu)) /* read now: the MTU may change after attach */
			json_object_object_add(o, XB_F(MTU), json_object_new_int64(mtu));
		json_object_array_add(arr, o);
	}
	return arr;
}

static struct json_object *lists_json(const struct xbd *d)
{
	struct json_object *arr = json_object_new_array();

	for (int i = 0; arr && i < d->conf.n_lists; i++) {
		const struct xbd_list_conf *l = &d->conf.lists[i];
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, XB_F(ID), json_object_new_int64(l->id));
		json_object_object_add(o, XB_F(FILE), json_object_new_string(l->path));
		json_object_object_add(o, XB_F(VERDICT),
				       json_object_new_string(xbd_layer_name(l->verdict)));
		json_object_object_add(o, XB_F(ENTRIES),
				       json_object_new_int64(d->list_entries[l->id]));
		json_object_object_add(o, XB_F(SKIPPED),
				       json_object_new_int64(d->list_skipped[l->id]));
		json_object_array_add(arr, o);
	}
	return arr;
}

/* The host's addresses that the exempt tries hold, with their interface. */
static struct json_object *host_addresses_json(const struct xbd *d)
{
	const struct xb_exempt_set *host = &d->exempt.host;
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; arr && i < host->n; i++) {
		const char *name = xbd_exemptions_ifname(&d->exempt, host->v[i].val.ifindex);
		struct json_object *o = json_object_new_object();
		char text[64] = "?";

		xb_prefix_format(&host->v[i].prefix, text, sizeof(text));
		json_object_object_add(o, XB_F(ADDRESS), json_object_new_string(text));
		json_object_object_add(o, XB_F(INTERFACE),
				       name ? json_object_new_string(name) : NULL);
		json_object_array_add(arr, o);
	}
	return arr;
}

static struct json_object *escalation_json(const struct xbd *d)
{
	const struct xbd_escalation *e = &d->conf.esc;
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, XB_F(ENABLED), json_object_new_boolean(e->enabled));
	json_object_object_add(o, XB_F(FACTOR), json_object_new_double(e->factor));
	json_object_object_add(o, XB_F(MAX_BAN_TIME_S), json_object_new_int64(e->max_ban_s));
	json_object_object_add(o, XB_F(PERIOD_S), json_object_new_int64(e->period_s));
	json_object_object_add(o, XB_F(OFFENDERS), json_object_new_int64(d->history.n));
	json_object_object_add(o, XB_F(ESCALATED), json_object_new_int64(d->history.escalated));
	return o;
}

/* The event stream: its last sequence number, subscribers now and those dropped. */
static struct json_object *events_json(const struct xbd *d)
{
	struct json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	json_object_object_add(o, XB_F(SEQ), json_object_new_int64((__s64)d->evs.ring.last));
	json_object_object_add(o, XB_F(SUBSCRIBERS),
			       json_object_new_int(xbd_server_subscribers(&d->server)));
	json_object_object_add(o, XB_F(SUBSCRIBERS_DROPPED),
			       json_object_new_int64((__s64)d->server.subscribers_dropped));
	return o;
}

/* The values set at run time, by key. */
static struct json_object *set_values_json(const struct xbd *d)
{
	struct json_object *o = json_object_new_object();

	for (int i = 0; o && i < XBD_SETVALS_KEYS; i++)
		if (d->setvals.key[i][0])
			json_object_object_add(o, d->setvals.key[i],
					       json_object_new_string(d->setvals.text[i]));
	return o;
}

static int on_status(struct json_object *reply, void *user)
{
	const struct xbd *d = user;
	struct json_object *daemon;
	char started[32];
	int ret = xb_time_format(d->started, started, sizeof(started)); /* RFC 3339, as all times */

	if (ret)
		return ret;
	daemon = json_object_new_object();
	if (!daemon)
		return -ENOMEM;
	json_object_object_add(daemon, XB_F(PID), json_object_new_int(getpid()));
	json_object_object_add(daemon, XB_F(STARTED), json_object_new_string(started));
	json_object_object_add(daemon, XB_F(PIN_DIR), json_object_new_string(d->ld.pin_dir));
	json_object_object_add(daemon, XB_F(STATE_FILE), d->conf.state_file
							    ? json_object_new_string(d->conf.state_file)
							    : NULL);
	json_object_object_add(daemon, XB_F(DETACH_ON_EXIT),
			       json_object_new_boolean(d->conf.detach_on_exit));
	json_object_object_add(daemon, XB_F(SET_VALUES), set_values_json(d));
	json_object_object_add(daemon, XB_F(DAEMON_LISTS), lists_json(d));
	json_object_object_add(daemon, XB_F(HOST_ADDRESSES), host_addresses_json(d));
	json_object_object_add(daemon, XB_F(ESCALATION), escalation_json(d));
	json_object_object_add(daemon, XB_F(DAEMON_EVENTS), events_json(d));
	if (d->fleet.on)
		json_object_object_add(daemon, XB_F(FLEET), xbd_fleet_json(&d->fleet));
	json_object_object_add(reply, XB_F(CONFIG_FILE), json_object_new_string(d->conf.path));
	json_object_object_add(reply, XB_F(INTERFACES), interfaces_json(d));
	json_object_object_add(reply, XB_F(XDPBAND), daemon);
	return 0;
}

/* A ban over the control socket for length, with the operator's comment (NULL: none), or an
 * unban (length NULL). */
static void log_manual(const char *who, const char *length, const char *comment)
{
	struct xbd_log_about about = { 0 };

	xbd_about_who(&about, who);
	xbd_about_set(&about, XBD_LF_ORIGIN, XBD_ORIGIN_MANUAL);
	if (!length) {
		xbd_log_about(XBD_LOG_INFO, &about, "manual unban %s", who);
		return;
	}
	xbd_about_set(&about, XBD_LF_REASON, "%s", xb_reason_name(XDPBAN_REASON_MANUAL));
	if (comment)
		xbd_log_about(XBD_LOG_INFO, &about, "manual ban %s for %s: %s", who, length, comment);
	else
		xbd_log_about(XBD_LOG_INFO, &about, "manual ban %s for %s", who, length);
}

/* A new ban replaces the comment of the one before it, even with none of its own. */
static void on_banned(const struct xb_prefix *p, __u32 seconds, const char *comment, void *user)
{
	struct xbd *d = user;
	char text[64] = "?", length[XB_DURATION_TEXT_MAX] = "ever";

	xb_prefix_format(p, text, sizeof(text));
	if (seconds)
		xb_duration_format(seconds, length, sizeof(length));
	log_manual(text, length, comment);
	if (xbd_comments_set(&d->comments, p, comment))
		pr_warn("out of memory: the comment of the ban of %s is not kept", text);
	xbd_evstream_publish(&d->evs, &(struct xbd_event){ .kind = XBD_EVENT_BAN, .who = *p,
							   .reason = XDPBAN_REASON_MANUAL,
							   .time_ns = xb_boot_ns(),
							   .length_ns = (__u64)seconds * NS_PER_SEC,
							   .multiplier = 1, .comment = comment });
	d->state_dirty = true;
}

/* Lifting a ban by hand forgives the offence too: the next ban starts from the base time. The
 * event shares the unban with the fleet, as any ban made here is (fleet.h). */
static void forget_ban(struct xbd *d, const struct xb_prefix *p)
{
	struct xdpban_key key = { .family = p->family, .prefixlen = p->plen };

	memcpy(key.addr, p->addr, sizeof(key.addr));
	xbd_history_forget(&d->history, &key);
	xbd_comments_set(&d->comments, p, NULL);
	xbd_evstream_publish(&d->evs, &(struct xbd_event){ .kind = XBD_EVENT_UNBAN, .who = *p,
							   .time_ns = xb_boot_ns() });
	d->state_dirty = true;
}

static void on_unbanned(const struct xb_prefix *p, void *user)
{
	char text[64] = "?";

	forget_ban(user, p);
	xb_prefix_format(p, text, sizeof(text));
	log_manual(text, NULL, NULL);
}

/* One line for them all: an unban of every ban may lift a million. */
static void on_unbanned_all(const struct xb_prefix *lifted, size_t n, int reason, void *user)
{
	for (size_t i = 0; i < n; i++)
		forget_ban(user, &lifted[i]);
	pr_info("manual unban of every %s%sban: %zu %s lifted", reason < 0 ? "" : xb_reason_name(reason),
		reason < 0 ? "" : " ", n, xb_plural(n, "ban", "bans"));
}

/* The value set is kept (setvals.h) and saved at once, so that a crash right after it does not
 * lose it; a reset gives the key back to the file. */
static void on_config_changed(const struct xdpban_config *c, const char *key, bool reset,
			      void *user)
{
	struct xbd *d = user;
	struct xbd_conf now = d->conf; /* a view, with the thresholds just written */
	char learn[16] = "?", errors[XB_CLASSES_TEXT_MAX] = "?", drop[XB_CLASSES_TEXT_MAX] = "?";
	char window[XB_DURATION_TEXT_MAX], ban[XB_DURATION_TEXT_MAX];
	char text[XBD_SETVALS_TEXT], err[XB_ERRLEN], rules[256] = "?";
	int ret = 0;

	now.dp = *c;
	if (reset)
		xbd_setvals_drop(&d->setvals, key);
	else if (!(ret = xbd_conf_setting_text(&now, key, text, sizeof(text))))
		ret = xbd_setvals_put(&d->setvals, key, text);
	if (ret)
		pr_warn("set %s: cannot keep the value for the next start: %s", key, strerror(-ret));
	xb_learn_format(c->learn_shift, learn, sizeof(learn));
	xb_classes_format(c->class_mask, errors, sizeof(errors));
	xb_classes_format(c->drop_mask, drop, sizeof(drop));
	xb_duration_format(c->window_s, window, sizeof(window));
	xb_duration_format(c->ban_s, ban, sizeof(ban));
	xb_config_rules_format(c, rules, sizeof(rules));
	pr_info("settings changed over the control socket: limit %u, window %s, ban-time %s, limit rules %s, ipv6-prefix %u, errors %s, drop %s, spoof %s, hop-tolerance %u, learn %s, mode %s (%s %s)",
		c->limit, window, ban, rules, c->v6_prefix, errors, drop, xb_spoof_name(c->spoof),
		c->hop_tolerance, learn, xb_mode_name(c->mode), key,
		reset ? "given back to the file's value"
		      : "kept across restarts, until a reload or xdpban set KEY --reset");
	d->state_dirty = true;
	if (xbd_save_state(d, err, sizeof(err)))
		pr_err("%s", err);
}

static int on_setting_of_file(const char *key, char *buf, size_t len, char *err, size_t errlen,
			      void *user)
{
	const struct xbd *d = user;
	int ret = xbd_conf_setting_text(&d->conf, key, buf, len);

	if (ret)
		snprintf(err, errlen, "unknown setting '%.40s'", key);
	return ret;
}

static const char *on_list_name(__u32 list_id, void *user)
{
	const struct xbd *d = user;

	if (list_id == XDPBAN_LIST_MANUAL_BAN)
		return "manual bans";
	if (list_id >= XBD_RUNTIME_LIST_BASE && list_id - XBD_RUNTIME_LIST_BASE < d->runtime.n)
		return d->runtime.v[list_id - XBD_RUNTIME_LIST_BASE].path;
	if (list_id < 1 || list_id > (__u32)d->conf.n_lists)
		return NULL;
	return d->conf.lists[list_id - 1].path;
}

/* The fleet node the ban of the reply's field came from, or NULL. */
static const char *origin_of(const struct xbd *d, struct json_object *reply, const char *field)
{
	struct json_object *v;
	struct xb_prefix p;
	char err[XB_ERRLEN];

	if (!json_object_object_get_ex(reply, field, &v) || !json_object_is_type(v, json_type_string) ||
	    xb_prefix_parse_saved(json_object_get_string(v), &p, err, sizeof(err)))
		return NULL;
	return xbd_fleet_origin(&d->fleet, &p);
}

/* The comment of the manual ban a query found, made here: a manual prefix ban (the policy
 * match of the manual list, which the data path looks at first) or its key's ban. */
static const char *comment_of(const struct xbd *d, struct json_object *reply)
{
	struct json_object *list = NULL, *reason = NULL, *v;
	bool prefix_ban;
	struct xb_prefix p;
	char err[XB_ERRLEN];

	json_object_object_get_ex(reply, XB_F(POLICY_LIST), &list);
	json_object_object_get_ex(reply, XB_F(BAN_REASON), &reason);
	if (!d->comments.n || !reason ||
	    strcmp(json_object_get_string(reason), xb_reason_name(XDPBAN_REASON_MANUAL)))
		return NULL;
	prefix_ban = list && (__u32)json_object_get_int64(list) == XDPBAN_LIST_MANUAL_BAN;
	if (!json_object_object_get_ex(reply, prefix_ban ? XB_F(POLICY_MATCH) : XB_F(QUERY_KEY),
				       &v) ||
	    !json_object_is_type(v, json_type_string) ||
	    xb_prefix_parse_saved(json_object_get_string(v), &p, err, sizeof(err)) ||
	    xbd_fleet_origin(&d->fleet, &p))
		return NULL;
	return xbd_comments_get(&d->comments, &p);
}

static void on_queried(struct json_object *reply, void *user)
{
	struct xbd *d = user;
	const struct xbd_lists_ctx ctx = xbd_lists_ctx_of(d, NULL);
	struct json_object *banned;
	const char *origin = NULL, *comment;

	xbd_lists_ctx_source(&ctx, reply);
	if (!json_object_object_get_ex(reply, XB_F(BANNED), &banned) ||
	    !json_object_get_boolean(banned))
		return;
	comment = comment_of(d, reply);
	if (comment)
		json_object_object_add(reply, XB_F(COMMENT), json_object_new_string(comment));
	if (!d->fleet.on)
		return;
	origin = origin_of(d, reply, XB_F(QUERY_KEY)) ?: origin_of(d, reply, XB_F(POLICY_MATCH));
	if (origin)
		json_object_object_add(reply, XB_F(BAN_ORIGIN), json_object_new_string(origin));
}

struct listed_comments {
	const struct xbd *d;
	struct json_object *obj;
};

/* A remote ban on a commented prefix is the fleet's, not the one the comment was made for. */
static void add_comment(const struct xb_prefix *p, const char *text, void *ctx)
{
	struct listed_comments *l = ctx;
	char key[64];

	if (!xbd_fleet_origin(&l->d->fleet, p) && !xb_prefix_format(p, key, sizeof(key)))
		json_object_object_add(l->obj, key, json_object_new_string(text));
}

/* "origins": {"PREFIX": "NODE"} of the remote bans, with the fleet on; "comments":
 * {"PREFIX": "TEXT"} of the manual bans in force that have one. */
static void on_listed(struct json_object *reply, void *user)
{
	struct xbd *d = user;
	struct listed_comments l = { .d = d };

	if (d->fleet.on)
		json_object_object_add(reply, XB_F(ORIGINS), xbd_fleet_origins_json(&d->fleet));
	xbd_comments_prune(&d->comments, &d->maps);
	if (!d->comments.n || !(l.obj = json_object_new_object()))
		return;
	xbd_comments_foreach(&d->comments, add_comment, &l);
	json_object_object_add(reply, XB_F(COMMENTS), l.obj);
}

/* A list command's fields. */
struct list_req {
	int id;               /* XB_CMD_LISTS_... */
	__u32 verdict;
	const char *files[XBD_MAX_LISTS];
	size_t n;
	bool ignore;
	const char *file;     /* lists_clear: the one list, or NULL */
	struct xb_prefix prefix;
	const char *comment;  /* lists_add: NULL for none */
};

/* The fields a list command takes beside "cmd" (docs/control.md). */
static bool list_field_known(int id, const char *key)
{
	static const struct {
		int id;
		enum xb_control_field f;
	} known[] = {
		{ XB_CMD_LISTS_LOAD, XB_FIELD_LAYER },	 { XB_CMD_LISTS_LOAD, XB_FIELD_FILES },
		{ XB_CMD_LISTS_LOAD, XB_FIELD_IGNORE_ERRORS },
		{ XB_CMD_LISTS_CLEAR, XB_FIELD_LAYER },	 { XB_CMD_LISTS_CLEAR, XB_FIELD_CLEAR_FILE },
		{ XB_CMD_LISTS_ADD, XB_FIELD_LAYER },	 { XB_CMD_LISTS_ADD, XB_FIELD_PREFIX },
		{ XB_CMD_LISTS_ADD, XB_FIELD_COMMENT },	 { XB_CMD_LISTS_DEL, XB_FIELD_LAYER },
		{ XB_CMD_LISTS_DEL, XB_FIELD_PREFIX },
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (known[i].id == id && !strcmp(key, xb_control_fields[known[i].f].name))
			return true;
	return !strcmp(key, XB_F(CMD));
}

/* A string member of request, or NULL when it has none; -EINVAL with err when it is another
 * type or holds a NUL. */
static int string_field(struct json_object *request, const char *key, const char **out,
			char *err, size_t errlen)
{
	struct json_object *v;

	*out = NULL;
	if (!json_object_object_get_ex(request, key, &v))
		return 0;
	if (!json_object_is_type(v, json_type_string) ||
	    strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v)) {
		snprintf(err, errlen, "field \"%s\" must be a string", key);
		return -EINVAL;
	}
	*out = json_object_get_string(v);
	return 0;
}

/* {"cmd": "lists_load", "layer": L, "files": [NAME, ...], "ignore_errors": BOOL}: the files. */
static int load_fields(struct json_object *request, struct list_req *r, char *err, size_t errlen)
{
	struct json_object *v;

	if (json_object_object_get_ex(request, XB_F(IGNORE_ERRORS), &v)) {
		if (!json_object_is_type(v, json_type_boolean)) {
			snprintf(err, errlen, "field \"%s\" must be true or false",
				 XB_F(IGNORE_ERRORS));
			return -EINVAL;
		}
		r->ignore = json_object_get_boolean(v);
	}
	if (!json_object_object_get_ex(request, XB_F(FILES), &v) ||
	    !json_object_is_type(v, json_type_array) || !json_object_array_length(v)) {
		snprintf(err, errlen, "field \"%s\" must be a non-empty array of paths",
			 XB_F(FILES));
		return -EINVAL;
	}
	if (json_object_array_length(v) > XBD_MAX_LISTS) {
		snprintf(err, errlen, "at most %d files in one load", XBD_MAX_LISTS);
		return -EINVAL;
	}
	r->n = json_object_array_length(v);
	for (size_t i = 0; i < r->n; i++) {
		struct json_object *f = json_object_array_get_idx(v, i);

		r->files[i] = json_object_is_type(f, json_type_string) ? json_object_get_string(f) : NULL;
		if (!r->files[i] || strlen(r->files[i]) != (size_t)json_object_get_string_len(f) ||
		    !xbd_list_name_ok(r->files[i])) {
			snprintf(err, errlen, "field \"%s\": each must be an absolute path or \"%s\"",
				 XB_F(FILES), XBD_LIST_STDIN);
			return -EINVAL;
		}
	}
	return 0;
}

/* {"cmd": "lists_add", "layer": L, "prefix": P, "comment": C} and {"cmd": "lists_del",
 * "layer": L, "prefix": P}. */
static int entry_fields(struct json_object *request, struct list_req *r, char *err, size_t errlen)
{
	const char *prefix;
	int ret = string_field(request, XB_F(PREFIX), &prefix, err, errlen);

	if (!ret)
		ret = string_field(request, XB_F(COMMENT), &r->comment, err, errlen);
	if (ret)
		return ret;
	if (!prefix) {
		snprintf(err, errlen, "field \"%s\" is missing", XB_F(PREFIX));
		return -EINVAL;
	}
	if (xb_prefix_parse(prefix, &r->prefix, err, errlen))
		return -EINVAL;
	return xbd_entry_check(&r->prefix, r->comment, err, errlen);
}

/* {"cmd": "lists_clear", "layer": L, "file": F}: the list, when named. */
static int clear_fields(struct json_object *request, struct list_req *r, char *err, size_t errlen)
{
	int ret = string_field(request, XB_F(CLEAR_FILE), &r->file, err, errlen);

	if (!ret && r->file && !xbd_list_name_ok(r->file) && strcmp(r->file, XBD_LIST_ENTRIES)) {
		snprintf(err, errlen, "field \"%s\" must be an absolute path, \"%s\" or \"%s\"",
			 XB_F(CLEAR_FILE), XBD_LIST_STDIN, XBD_LIST_ENTRIES);
		ret = -EINVAL;
	}
	return ret;
}

/* The fields of a list command (docs/control.md); {"cmd": "lists_show"} takes none. */
static int list_fields(struct json_object *request, struct list_req *r, char *err, size_t errlen)
{
	const char *cmd = xb_control_commands[r->id].name, *layer;

	json_object_object_foreach(request, key, val) {
		(void)val;
		if (!list_field_known(r->id, key)) {
			snprintf(err, errlen, "unknown field \"%.40s\" for %s", key, cmd);
			return -EINVAL;
		}
	}
	if (r->id == XB_CMD_LISTS_SHOW)
		return 0;
	if (string_field(request, XB_F(LAYER), &layer, err, errlen) || !layer ||
	    xbd_layer_parse(layer, &r->verdict)) {
		snprintf(err, errlen, "field \"%s\" must be \"allow\", \"deny\", \"trusted\" or "
				      "\"never-ban\"",
			 XB_F(LAYER));
		return -EINVAL;
	}
	if (r->id == XB_CMD_LISTS_LOAD)
		return load_fields(request, r, err, errlen);
	if (r->id == XB_CMD_LISTS_CLEAR)
		return clear_fields(request, r, err, errlen);
	return entry_fields(request, r, err, errlen);
}

/* A load is read beside the loop (listload.h); its answer comes when it is in force
 * (xbd_hooks_lists_loaded). The limits are checked first: a load that cannot be kept reads
 * nothing. The files are those the client sent open, one per name: the daemon opens no path
 * for a client, so it never reads for one what the client could not open itself. */
static int start_lists_load(struct xbd *d, const struct xbd_lists_ctx *ctx, __u32 verdict,
			    const char *const *files, size_t n, bool ignore, char *err,
			    size_t errlen)
{
	struct xb_control_fds *fds = xbd_server_serving_fds(&d->server);
	struct xbd_list_caps caps;
	int ret = xbd_lists_ctx_load_check(ctx, verdict, files, n, err, errlen);

	if (ret)
		return ret;
	if (!fds || fds->n != n) {
		snprintf(err, errlen,
			 "%zu %s named but %zu sent open with the request: each list file goes "
			 "with it as an open file (SCM_RIGHTS)",
			 n, xb_plural(n, "file", "files"), fds ? fds->n : 0);
		return -EINVAL;
	}
	ret = xbd_list_caps_of(&d->maps, &caps, err, errlen);
	if (ret)
		return ret;
	ret = xbd_list_load_start(&d->list_load, verdict, files, fds, n, ignore, &caps);
	if (ret == -EBUSY)
		snprintf(err, errlen, "another lists load is being read: try again when it is done");
	else if (ret)
		snprintf(err, errlen, "cannot start reading the lists: %s", strerror(-ret));
	else
		xbd_server_hold(&d->server, XBD_HOLD_LISTS);
	return ret;
}

void xbd_hooks_lists_loaded(struct xbd *d)
{
	struct xbd_lists_ctx ctx = xbd_lists_ctx_of(d, NULL);
	struct xbd_list_load *l = &d->list_load;
	struct json_object *o = json_object_new_object();
	char err[XB_ERRLEN] = "", *line = NULL;
	int ret = xbd_list_load_finish(l);

	if (ret)
		snprintf(err, sizeof(err), "%s", l->err);
	else if (!o)
		ret = -ENOMEM;
	else
		ret = xbd_lists_ctx_load_read(&ctx, l->verdict, (const char *const *)l->files, l->n,
					      &l->read, o, err, sizeof(err));
	if (ret) {
		line = xb_control_error_reply(err[0] ? err : strerror(-ret));
	} else {
		json_object_object_add(o, XB_F(OK), json_object_new_boolean(1));
		line = strdup(xb_json_line(o));
	}
	json_object_put(o);
	xbd_list_load_done(l);
	xbd_server_release(&d->server, XBD_HOLD_LISTS,
			   line ? line : "{\"ok\":false,\"error\":\"out of memory\"}");
	free(line);
}

static int do_lists_cmd(struct xbd *d, int id, struct json_object *request,
			struct json_object *reply, char *err, size_t errlen)
{
	struct xbd_lists_ctx ctx = xbd_lists_ctx_of(d, NULL);
	struct list_req r = { .id = id };
	int ret = list_fields(request, &r, err, errlen);

	if (ret)
		return ret;
	if (id == XB_CMD_LISTS_SHOW)
		return xbd_lists_ctx_show(&ctx, reply, err, errlen);
	if (d->server.serving_read_only) {
		snprintf(err, errlen, "permission denied: %s needs write access",
			 xb_control_commands[id].name);
		return -EPERM;
	}
	if (id == XB_CMD_LISTS_LOAD)
		return start_lists_load(d, &ctx, r.verdict, r.files, r.n, r.ignore, err, errlen);
	if (id == XB_CMD_LISTS_CLEAR)
		ret = xbd_lists_ctx_clear(&ctx, r.verdict, r.file, reply, err, errlen);
	else if (id == XB_CMD_LISTS_ADD)
		ret = xbd_lists_ctx_add(&ctx, r.verdict, &r.prefix, r.comment, reply, err, errlen);
	else
		ret = xbd_lists_ctx_del(&ctx, r.verdict, &r.prefix, reply, err, errlen);
	return ret;
}

/* The daemon's commands take no fields but "cmd", like every command of the protocol. */
static int check_no_fields(const char *cmd, struct json_object *request, char *err,
			   size_t errlen)
{
	json_object_object_foreach(request, key, val) {
		(void)val;
		if (strcmp(key, XB_F(CMD))) {
			snprintf(err, errlen, "unknown field \"%.40s\" for %s", key, cmd);
			return -EINVAL;
		}
	}
	return 0;
}

/* The answer comes when the reading is done (xbd_hooks_reload_done). */
static int do_reload(struct xbd *d, struct json_object *reply, char *err, size_t errlen)
{
	int ret = xbd_reload_request(d, err, errlen);

	if (!ret)
		xbd_server_hold(&d->server, XBD_HOLD_RELOAD);
	return ret;
}

void xbd_hooks_reload_done(struct xbd *d, int ret, const char *err, struct json_object *changes)
{
	struct json_object *o = ret ? NULL : json_object_new_object();
	char *line = NULL;

	if (ret) {
		char why[XB_ERRLEN + 64];

		snprintf(why, sizeof(why), "%s; the old configuration is kept", err);
		line = xb_control_error_reply(why);
	} else if (o) {
		json_object_object_add(o, XB_F(OK), json_object_new_boolean(1));
		json_object_object_add(o, XB_F(CONFIG_FILE), json_object_new_string(d->conf.path));
		if (changes) {
			json_object_object_foreach(changes, key, val)
				json_object_object_add(o, key, json_object_get(val));
		}
		line = strdup(xb_json_line(o));
	}
	json_object_put(o);
	json_object_put(changes);
	xbd_server_release(&d->server, XBD_HOLD_RELOAD,
			   line ? line : "{\"ok\":false,\"error\":\"out of memory\"}");
	free(line);
}

static int do_save(struct xbd *d, struct json_object *reply, char *err, size_t errlen)
{
	int ret;

	if (!d->conf.state_file) {
		snprintf(err, errlen, "%s: no state file is configured ([state] file = off)",
			 XB_CMD(SAVE));
		return -ENOENT;
	}
	ret = xbd_save_state(d, err, errlen);
	if (!ret)
		json_object_object_add(reply, XB_F(STATE_FILE),
				       json_object_new_string(d->conf.state_file));
	return ret;
}

/* "since" of `events`: a sequence number no later than the last event's. 0 or -EINVAL. */
static int events_since(const struct xbd *d, struct json_object *val, __u64 *since, char *err,
			size_t errlen)
{
	__s64 v = json_object_get_int64(val);

	if (!json_object_is_type(val, json_type_int) || v < 0) {
		snprintf(err, errlen, "field \"%s\" must be a sequence number (a whole number, 0 or more)",
			 XB_F(SINCE));
		return -EINVAL;
	}
	if ((__u64)v > d->evs.ring.last) {
		snprintf(err, errlen, "field \"%s\" is %lld, after the last event (%llu)",
			 XB_F(SINCE), (long long)v, (unsigned long long)d->evs.ring.last);
		return -EINVAL;
	}
	*since = (__u64)v;
	return 0;
}

/* "since_unix" of `events`: a time, as Unix seconds. 0 or -EINVAL. */
static int events_since_unix(struct json_object *val, time_t *since, char *err, size_t errlen)
{
	__s64 v = json_object_get_int64(val);

	if (!json_object_is_type(val, json_type_int) || v < 0 || v > XB_TIME_UNIX_MAX) {
		snprintf(err, errlen, "field \"%s\" must be a time in Unix seconds, 0..%lld",
			 XB_F(SINCE_UNIX), XB_TIME_UNIX_MAX);
		return -EINVAL;
	}
	*since = (time_t)v;
	return 0;
}

/* A resume the ring can no longer make whole is refused, never silently shortened: the
 * follower learns how many events it lost and where it may go on from. 0 or -ERANGE. */
static int events_held(const struct xbd *d, __u64 since, char *err, size_t errlen)
{
	__u64 oldest = xbd_evring_oldest(&d->evs.ring);

	if (since + 1 >= oldest)
		return 0;
	snprintf(err, errlen,
		 "%llu events after %llu are no longer held; the oldest held is %llu: resume after %llu to follow from there without them",
		 (unsigned long long)(oldest - since - 1), (unsigned long long)since,
		 (unsigned long long)oldest, (unsigned long long)(oldest - 1));
	return -ERANGE;
}

/* The fields of `events`: "follow" (a boolean), "since" (with follow only) and "since_unix"
 * (not with since). */
static int events_fields(const struct xbd *d, struct json_object *request, bool *follow,
			 __u64 *since, bool *resume, time_t *from, char *err, size_t errlen)
{
	json_object_object_foreach(request, key, val) {
		if (!strcmp(key, XB_F(CMD)))
			continue;
		if (!strcmp(key, XB_F(SINCE_UNIX))) {
			if (events_since_unix(val, from, err, errlen))
				return -EINVAL;
			continue;
		}
		if (!strcmp(key, XB_F(SINCE))) {
			if (events_since(d, val, since, err, errlen))
				return -EINVAL;
			*resume = true;
			continue;
		}
		if (strcmp(key, XB_F(FOLLOW))) {
			snprintf(err, errlen, "unknown field \"%.40s\" for %s", key,
				 XB_CMD(EVENTS));
			return -EINVAL;
		}
		if (!json_object_is_type(val, json_type_boolean)) {
			snprintf(err, errlen, "field \"%s\" must be true or false",
				 XB_F(FOLLOW));
			return -EINVAL;
		}
		*follow = json_object_get_boolean(val);
	}
	if (*resume && !*follow) {
		snprintf(err, errlen, "field \"%s\" needs \"%s\": true", XB_F(SINCE),
			 XB_F(FOLLOW));
		return -EINVAL;
	}
	if (*resume && *from >= 0) {
		snprintf(err, errlen, "fields \"%s\" and \"%s\" cannot go together", XB_F(SINCE),
			 XB_F(SINCE_UNIX));
		return -EINVAL;
	}
	return *resume ? events_held(d, *since, err, errlen) : 0;
}

/* {"cmd": "events", "follow": BOOL, "since": SEQ, "since_unix": TIME}: the backlog (with
 * since_unix every event from TIME on), and with follow every later event on the same
 * connection; with since, no backlog, and the stream starts after event SEQ
 * (docs/control.md). Read access is enough. */
static int do_events(struct xbd *d, struct json_object *request, struct json_object *reply,
		     char *err, size_t errlen)
{
	bool follow = false, resume = false;
	struct json_object *backlog;
	time_t from = -1; /* no since_unix */
	__u64 since = 0;
	int ret = events_fields(d, request, &follow, &since, &resume, &from, err, errlen);

	if (ret)
		return ret;
	backlog = resume ? json_object_new_array()
			 : xbd_evstream_backlog(&d->evs, from, err, errlen);
	if (!backlog) {
		if (resume)
			snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	json_object_object_add(reply, XB_F(EVENTS), backlog);
	json_object_object_add(reply, XB_F(FOLLOW), json_object_new_boolean(follow));
	if (resume)
		json_object_object_add(reply, XB_F(SINCE), json_object_new_int64((__s64)since));
	if (from >= 0)
		json_object_object_add(reply, XB_F(SINCE_UNIX), json_object_new_int64(from));
	if (follow)
		xbd_server_subscribe(&d->server, &d->evs.ring,
				     (resume ? since : d->evs.ring.last) + 1);
	return 0;
}

static int on_command(const char *cmd, struct json_object *request, struct json_object *reply,
		      char *err, size_t errlen, void *user)
{
	struct xbd *d = user;
	int id = xb_control_cmd_of(cmd), ret;

	if (id == XB_CMD_EVENTS)
		return do_events(d, request, reply, err, errlen);
	if (id == XB_CMD_LISTS_LOAD || id == XB_CMD_LISTS_CLEAR || id == XB_CMD_LISTS_SHOW ||
	    id == XB_CMD_LISTS_ADD || id == XB_CMD_LISTS_DEL)
		return do_lists_cmd(d, id, request, reply, err, errlen);
	if (id != XB_CMD_RELOAD && id != XB_CMD_SAVE) {
		snprintf(err, errlen, "%s is not a command of xdpband", cmd);
		return -EOPNOTSUPP;
	}
	ret = check_no_fields(cmd, request, err, errlen);
	if (ret)
		return ret;
	if (d->server.serving_read_only) {
		snprintf(err, errlen, "permission denied: %s needs write access", cmd);
		return -EPERM;
	}
	return id == XB_CMD_RELOAD ? do_reload(d, reply, err, errlen)
				   : do_save(d, reply, err, errlen);
}

void xbd_hooks_init(struct xbd *d)
{
	d->hooks = (struct xb_control_hooks){
		.status = on_status,
		.banned = on_banned,
		.unbanned = on_unbanned,
		.unbanned_all = on_unbanned_all,
		.config_changed = on_config_changed,
		.setting_of_file = on_setting_of_file,
		.list_name = on_list_name,
		.queried = on_queried,
		.listed = on_listed,
		.command = on_command,
	};
}
