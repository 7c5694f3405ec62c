/* conf_diff.c - see conf_diff.h. The settings a reload applies are one table, in the order of
 * xdpban.conf(5); the keys that wait for a restart are conf_load.c's (xbd_conf_restart_keys),
 * so that the reply and the daemon's log name the same ones. */
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "conf_diff.h"
#include "conf_load.h"
#include "control_fields.h"
#include "ports.h"
#include "runlists.h"

/* Room for a value's text; a longer port list is cut, with "...". */
#define VALUE_TEXT_MAX 512

enum value_kind {
	V_U32, V_U8, V_BOOL, V_DURATION, V_CLASSES, V_SPOOF, V_MODE, V_LEARN, V_FACTOR, V_PORTS,
	V_RULES
};

static const struct diff_key {
	const char *name; /* as the reply names it: "[section] key" */
	const char *set;  /* the key `xdpban set` names it by, or NULL */
	enum value_kind kind;
	size_t off;       /* of the value in struct xbd_conf; V_PORTS: unused */
	__u8 mask;        /* V_PORTS: the rules of the key */
} keys[] = {
#define F(field) offsetof(struct xbd_conf, field)
	{ "[xdp] detach-on-exit", NULL, V_BOOL, F(detach_on_exit), 0 },
	{ "[bans] limit", "limit", V_U32, F(dp.limit), 0 },
	{ "[bans] window", "window", V_DURATION, F(dp.window_s), 0 },
	{ "[bans] ban-time", "ban-time", V_DURATION, F(dp.ban_s), 0 },
	{ "[bans] limit.*, window.*, ban-time.*", NULL, V_RULES, 0, 0 },
	{ "[bans] ipv6-prefix", "ipv6-prefix", V_U8, F(dp.v6_prefix), 0 },
	{ "[bans] errors", "errors", V_CLASSES, F(dp.class_mask), 0 },
	{ "[bans] drop", "drop", V_CLASSES, F(dp.drop_mask), 0 },
	{ "[bans] mode", "mode", V_MODE, F(dp.mode), 0 },
	{ "[spoof] mode", "spoof", V_SPOOF, F(dp.spoof), 0 },
	{ "[spoof] hop-tolerance", "hop-tolerance", V_U8, F(dp.hop_tolerance), 0 },
	{ "[spoof] learn", "learn", V_LEARN, F(dp.learn_shift), 0 },
	{ "[lists] ignore-errors", NULL, V_BOOL, F(lists_ignore_errors), 0 },
	{ "[state] save-interval", NULL, V_DURATION, F(save_interval_s), 0 },
	{ "[escalation] enabled", NULL, V_BOOL, F(esc.enabled), 0 },
	{ "[escalation] factor", NULL, V_FACTOR, F(esc.factor), 0 },
	{ "[escalation] max-ban-time", NULL, V_DURATION, F(esc.max_ban_s), 0 },
	{ "[escalation] period", NULL, V_DURATION, F(esc.period_s), 0 },
	{ "[ports] guard", NULL, V_PORTS, 0, XDPBAN_PORT_GUARD_MASK },
	{ "[ports] open-tcp", NULL, V_PORTS, 0, XDPBAN_PORT_TCP_OPEN },
	{ "[ports] open-udp", NULL, V_PORTS, 0, XDPBAN_PORT_UDP_OPEN },
	{ "[ports] probe-icmp", NULL, V_BOOL, F(probe_icmp), 0 },
#undef F
};

static const void *field(const struct xbd_conf *c, const struct diff_key *k)
{
	return (const char *)c + k->off;
}

static size_t value_size(enum value_kind kind)
{
	switch (kind) {
	case V_U8:
	case V_SPOOF:
	case V_MODE:
	case V_LEARN:
		return sizeof(__u8);
	case V_BOOL:
		return sizeof(bool);
	case V_FACTOR:
		return sizeof(double);
	default:
		return sizeof(__u32);
	}
}

/* Compared by value, not by text: a text may be cut, or round a factor. */
static bool differs(const struct xbd_conf *a, const struct xbd_conf *b, const struct diff_key *k)
{
	char ta[VALUE_TEXT_MAX], tb[VALUE_TEXT_MAX];

	if (k->kind == V_RULES) /* the port rules' order in the entry means nothing */
		return xb_config_rules_format(&a->dp, ta, sizeof(ta)) ||
		       xb_config_rules_format(&b->dp, tb, sizeof(tb)) || strcmp(ta, tb);
	if (k->kind != V_PORTS)
		return memcmp(field(a, k), field(b, k), value_size(k->kind)) != 0;
	for (__u32 port = 0; port <= 65535; port++)
		if ((xb_ports_byte(a->ports, port) ^ xb_ports_byte(b->ports, port)) & k->mask)
			return true;
	return false;
}

/* A value as the config file writes it; port lists cut with "..." past buf. */
static void format_value(const struct xbd_conf *c, const struct diff_key *k, char *buf,
			 size_t len)
{
	const void *v = field(c, k);
	__u32 u32 = 0;

	if (value_size(k->kind) == sizeof(__u32))
		memcpy(&u32, v, sizeof(u32));
	switch (k->kind) {
	case V_U32:
		snprintf(buf, len, "%u", u32);
		break;
	case V_U8:
		snprintf(buf, len, "%u", *(const __u8 *)v);
		break;
	case V_BOOL:
		snprintf(buf, len, "%s", *(const bool *)v ? "yes" : "no");
		break;
	case V_DURATION:
		xb_duration_format(u32, buf, len);
		break;
	case V_CLASSES:
		xb_classes_format(u32, buf, len);
		break;
	case V_SPOOF:
		snprintf(buf, len, "%s", xb_spoof_name(*(const __u8 *)v));
		break;
	case V_MODE:
		snprintf(buf, len, "%s", xb_mode_name(*(const __u8 *)v));
		break;
	case V_LEARN:
		if (xb_learn_format(*(const __u8 *)v, buf, len))
			snprintf(buf, len, "?");
		break;
	case V_FACTOR:
		snprintf(buf, len, "%g", *(const double *)v);
		break;
	case V_RULES:
		if (xb_config_rules_format(&c->dp, buf, len))
			snprintf(buf, len, "?");
		break;
	case V_PORTS:
		if (xb_ports_format(c->ports, k->mask, buf, len - 3))
			strcat(buf, "...");
		else if (!buf[0])
			snprintf(buf, len, "none");
		break;
	}
}

int xbd_conf_setting_text(const struct xbd_conf *c, const char *set_key, char *buf, size_t len)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (keys[i].set && !strcmp(keys[i].set, set_key)) {
			format_value(c, &keys[i], buf, len);
			return 0;
		}
	}
	return xb_config_rule_text(&c->dp, set_key, buf, len);
}

static int add_setting(struct json_object *arr, const struct diff_key *k,
		       const struct xbd_conf *old, const struct xbd_conf *next)
{
	struct json_object *o = json_object_new_object();
	char text[VALUE_TEXT_MAX];

	if (!o || json_object_array_add(arr, o)) {
		json_object_put(o);
		return -ENOMEM;
	}
	json_object_object_add(o, XB_F(SETTING), json_object_new_string(k->name));
	format_value(old, k, text, sizeof(text));
	json_object_object_add(o, XB_F(OLD), json_object_new_string(text));
	format_value(next, k, text, sizeof(text));
	json_object_object_add(o, XB_F(NEW), json_object_new_string(text));
	return 0;
}

static struct json_object *settings_changed(const struct xbd_conf *old,
					    const struct xbd_conf *next)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; arr && i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (differs(old, next, &keys[i]) && add_setting(arr, &keys[i], old, next)) {
			json_object_put(arr);
			return NULL;
		}
	}
	return arr;
}

/* The list of c that is l's file in l's layer, or NULL. */
static const struct xbd_list_conf *find_list(const struct xbd_conf *c,
					     const struct xbd_list_conf *l)
{
	for (int i = 0; i < c->n_lists; i++)
		if (c->lists[i].verdict == l->verdict && !strcmp(c->lists[i].path, l->path))
			return &c->lists[i];
	return NULL;
}

static const char *layer_name(__u32 verdict)
{
	return verdict == XBD_LIST_NEVER_BAN ? "never-ban" : xbd_layer_name(verdict);
}

/* The entries of l on side s, as JSON; null when l is not on that side. */
static struct json_object *entries_of(const struct xbd_conf_side *s, const struct xbd_list_conf *l)
{
	return l ? json_object_new_int64((int64_t)s->lists->entries[l->id]) : NULL;
}

/* A file l that changed, with what it is on each side (NULL: not there). */
static int add_list(struct json_object *arr, const struct xbd_list_conf *l,
		    const struct xbd_conf_side *old, const struct xbd_list_conf *in_old,
		    const struct xbd_conf_side *next, const struct xbd_list_conf *in_next)
{
	struct json_object *o = json_object_new_object();

	if (!o || json_object_array_add(arr, o)) {
		json_object_put(o);
		return -ENOMEM;
	}
	json_object_object_add(o, XB_F(CHANGED_LAYER),
			       json_object_new_string(layer_name(l->verdict)));
	json_object_object_add(o, XB_F(FILE), json_object_new_string(l->path));
	json_object_object_add(o, XB_F(BEFORE), entries_of(old, in_old));
	json_object_object_add(o, XB_F(AFTER), entries_of(next, in_next));
	return 0;
}

static bool same_contents(const struct xbd_conf_side *old, const struct xbd_list_conf *a,
			  const struct xbd_conf_side *next, const struct xbd_list_conf *b)
{
	return old->lists->entries[a->id] == next->lists->entries[b->id] &&
	       old->lists->digest[a->id] == next->lists->digest[b->id];
}

/* The files of next in its order, each added or changed; then those next no longer has. */
static struct json_object *lists_changed(const struct xbd_conf_side *old,
					 const struct xbd_conf_side *next)
{
	struct json_object *arr = json_object_new_array();
	int ret = arr ? 0 : -ENOMEM;

	for (int i = 0; !ret && i < next->conf->n_lists; i++) {
		const struct xbd_list_conf *l = &next->conf->lists[i], *was = find_list(old->conf, l);

		if (!was || !same_contents(old, was, next, l))
			ret = add_list(arr, l, old, was, next, l);
	}
	for (int i = 0; !ret && i < old->conf->n_lists; i++) {
		const struct xbd_list_conf *l = &old->conf->lists[i];

		if (!find_list(next->conf, l))
			ret = add_list(arr, l, old, l, next, NULL);
	}
	if (ret) {
		json_object_put(arr);
		return NULL;
	}
	return arr;
}

/* The names xbd_conf_restart_keys joins with ", ", as an array. */
static struct json_object *restart_keys(const struct xbd_conf *old, const struct xbd_conf *next)
{
	struct json_object *arr = json_object_new_array();
	char names[512], *save = NULL;

	xbd_conf_restart_keys(old, next, names, sizeof(names));
	for (char *n = strtok_r(names, ",", &save); arr && n; n = strtok_r(NULL, ",", &save)) {
		if (json_object_array_add(arr, json_object_new_string(n + strspn(n, " ")))) {
			json_object_put(arr);
			return NULL;
		}
	}
	return arr;
}

int xbd_conf_diff_json(const struct xbd_conf_side *old, const struct xbd_conf_side *next,
		       struct json_object *reply)
{
	struct json_object *settings = settings_changed(old->conf, next->conf);
	struct json_object *lists = lists_changed(old, next);
	struct json_object *restart = restart_keys(old->conf, next->conf);

	if (!settings || !lists || !restart) {
		json_object_put(settings);
		json_object_put(lists);
		json_object_put(restart);
		return -ENOMEM;
	}
	json_object_object_add(reply, XB_F(CHANGED), settings);
	json_object_object_add(reply, XB_F(LISTS_CHANGED), lists);
	json_object_object_add(reply, XB_F(RESTART), restart);
	return 0;
}
