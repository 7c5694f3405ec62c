/* json.c - JSON renderings of the state with json-c, shared by the CLI's --json output and the
 * control protocol's replies so that both speak the same fields. The field names are a
 * contract (deploy/xdpban.8): add fields, never rename or retype one. Never prints.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "libxdpban.h"

#ifndef JSON_C_TO_STRING_NOSLASHESCAPE
#define JSON_C_TO_STRING_NOSLASHESCAPE (1 << 4)
#endif

const char *xb_json_line(struct json_object *obj)
{
	return json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
							   JSON_C_TO_STRING_NOSLASHESCAPE);
}

static struct json_object *classes_array(__u32 mask)
{
	struct json_object *arr = json_object_new_array();

	for (__u32 bit = 1; arr && bit && bit <= XDPBAN_CLASS_ALL; bit <<= 1)
		if (mask & bit)
			json_object_array_add(arr, json_object_new_string(xb_class_name(bit)));
	return arr;
}

static struct json_object *string_or_null(const char *s)
{
	return s && *s ? json_object_new_string(s) : NULL;
}

/* json-c builds objects member by member; a failed allocation anywhere shows up as NULL. */
static int finish(struct json_object *obj, struct json_object **out)
{
	if (!obj)
		return -ENOMEM;
	*out = obj;
	return 0;
}

int xb_json_config(const struct xb_maps *m, struct json_object **out)
{
	struct xdpban_config cfg;
	struct json_object *obj;
	bool defaults;
	int ret;

	ret = xb_config_read(m, &cfg);
	if (!ret)
		ret = xb_config_is_default(m, &defaults);
	if (ret)
		return ret;
	obj = json_object_new_object();
	if (!obj)
		return -ENOMEM;
	json_object_object_add(obj, "limit", json_object_new_int64(cfg.limit));
	json_object_object_add(obj, "window", json_object_new_int64(cfg.window_s));
	json_object_object_add(obj, "ban_time", json_object_new_int64(cfg.ban_s));
	json_object_object_add(obj, "ipv6_prefix", json_object_new_int(cfg.v6_prefix));
	json_object_object_add(obj, "errors", classes_array(cfg.class_mask));
	json_object_object_add(obj, "drop", classes_array(cfg.drop_mask));
	json_object_object_add(obj, "defaults", json_object_new_boolean(defaults));
	return finish(obj, out);
}

int xb_json_stats(const struct xb_maps *m, struct json_object **out)
{
	struct xdpban_stat_value stats[XDPBAN_STAT__MAX];
	struct json_object *obj;
	int ret = xb_stats_read(m, stats);

	if (ret)
		return ret;
	obj = json_object_new_object();
	if (!obj)
		return -ENOMEM;
	for (int i = 0; i < XDPBAN_STAT__MAX; i++) {
		struct json_object *one = json_object_new_object();

		if (!one) {
			json_object_put(obj);
			return -ENOMEM;
		}
		json_object_object_add(one, "packets", json_object_new_uint64(stats[i].packets));
		json_object_object_add(one, "bytes", json_object_new_uint64(stats[i].bytes));
		json_object_object_add(obj, xb_stat_name(i), one);
	}
	return finish(obj, out);
}

struct policy_tally {
	int ipv4, ipv6, prefix_bans;
};

static int tally_policy(const struct xb_policy_entry *e, void *ctx)
{
	struct policy_tally *t = ctx;

	if (e->expired)
		return 0;
	if (e->prefix.family == XDPBAN_FAMILY_INET)
		t->ipv4++;
	else
		t->ipv6++;
	if (e->policy.list_id == XDPBAN_LIST_MANUAL_BAN && e->policy.verdict == XDPBAN_POLICY_DENY)
		t->prefix_bans++;
	return 0;
}

/* A table's capacity, fixed when it was created: status shows use against it. */
static int map_capacity(int fd, __u32 *max_entries)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	*max_entries = info.max_entries;
	return 0;
}

int xb_json_status(const struct xb_maps *m, struct json_object **out)
{
	struct json_object *obj, *config = NULL, *stats = NULL;
	struct policy_tally tally = {};
	__u32 counters_max = 0, bans_max = 0;
	int tracked, banned, ret;

	tracked = xb_count_tracked(m);
	banned = xb_count_banned(m, xb_boot_ns());
	ret = tracked < 0 ? tracked : banned < 0 ? banned : 0;
	if (!ret)
		ret = map_capacity(m->counts, &counters_max);
	if (!ret)
		ret = map_capacity(m->bans, &bans_max);
	if (!ret)
		ret = xb_policy_foreach(m, tally_policy, &tally);
	if (!ret)
		ret = xb_json_config(m, &config);
	if (!ret)
		ret = xb_json_stats(m, &stats);
	if (ret) {
		json_object_put(config);
		return ret;
	}
	obj = json_object_new_object();
	if (!obj) {
		json_object_put(config);
		json_object_put(stats);
		return -ENOMEM;
	}
	json_object_object_add(obj, "config", config);
	json_object_object_add(obj, "tracked", json_object_new_int(tracked));
	json_object_object_add(obj, "counters_max", json_object_new_int64(counters_max));
	json_object_object_add(obj, "banned", json_object_new_int(banned));
	json_object_object_add(obj, "bans_max", json_object_new_int64(bans_max));
	json_object_object_add(obj, "prefix_bans", json_object_new_int(tally.prefix_bans));
	json_object_object_add(obj, "policy_ipv4", json_object_new_int(tally.ipv4));
	json_object_object_add(obj, "policy_ipv6", json_object_new_int(tally.ipv6));
	json_object_object_add(obj, "stats", stats);
	return finish(obj, out);
}

/* Bans are written straight into one text rather than built as json-c objects: a million
 * objects cost seconds to build and serialise, the text a fraction of that. Every
 * string written is ours and needs no escaping: addresses from xb_key_format/xb_prefix_format
 * (hex digits, '.', ':', '/'), fixed names, and RFC 3339 stamps. test_lib parses the text
 * back with json-c, field by field. */
struct ban_writer {
	struct printbuf *text;
	time_t last_started;
	char stamp[32]; /* last_started as text: bans made in the same second share it */
	size_t n;
};

static const char *const classes_text[XDPBAN_CLASS_ALL + 1] = {
	[0] = "[]",
	[XDPBAN_CLASS_MALFORMED] = "[\"malformed\"]",
	[XDPBAN_CLASS_REPORTED] = "[\"reported\"]",
	[XDPBAN_CLASS_ALL] = "[\"malformed\",\"reported\"]",
};

/* Appends literal text, or a decimal number, to a printbuf without going through printf. */
static void put_text(struct printbuf *pb, const char *text, int *err)
{
	if (printbuf_memappend(pb, text, (int)strlen(text)) < 0)
		*err = -ENOMEM;
}

static void put_int(struct printbuf *pb, long long v, int *err)
{
	char digits[24], *p = digits + sizeof(digits);
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;

	*--p = '\0';
	do
		*--p = '0' + u % 10;
	while ((u /= 10));
	if (v < 0)
		*--p = '-';
	put_text(pb, p, err);
}

static int write_ban(const struct xb_ban_info *ban, void *ctx)
{
	struct ban_writer *w = ctx;
	struct printbuf *pb = w->text;
	int err = 0;

	if (ban->started && ban->started != w->last_started) {
		if (xb_time_format(ban->started, w->stamp, sizeof(w->stamp)))
			return -EOVERFLOW;
		w->last_started = ban->started;
	}
	put_text(pb, w->n++ ? ",{\"prefix\":\"" : "{\"prefix\":\"", &err);
	put_text(pb, ban->prefix, &err);
	put_text(pb, "\",\"count\":", &err);
	put_int(pb, ban->count, &err);
	put_text(pb, ",\"reason\":\"", &err);
	put_text(pb, ban->reason, &err);
	put_text(pb, "\",\"seconds_left\":", &err);
	put_int(pb, ban->seconds_left, &err);
	put_text(pb, ",\"started\":", &err);
	if (ban->started) {
		put_text(pb, "\"", &err);
		put_text(pb, w->stamp, &err);
		put_text(pb, "\"", &err);
	} else {
		put_text(pb, "null", &err);
	}
	put_text(pb, ",\"classes\":", &err);
	put_text(pb, classes_text[ban->classes & XDPBAN_CLASS_ALL], &err);
	put_text(pb, ",\"table\":\"", &err);
	put_text(pb, ban->table, &err);
	put_text(pb, "\"}", &err);
	return err;
}

/* The array's text, rendered in advance, is what the placeholder serialises to. */
static int bans_serialize(struct json_object *jso, struct printbuf *pb, int level, int flags)
{
	struct printbuf *text = json_object_get_userdata(jso);

	return printbuf_memappend(pb, text->buf, text->bpos);
}

static void bans_text_free(struct json_object *jso, void *userdata)
{
	printbuf_free(userdata);
}

int xb_json_bans(const struct xb_maps *m, struct json_object **out)
{
	struct ban_writer w = { .text = printbuf_new() };
	struct json_object *arr;
	int ret;

	if (!w.text)
		return -ENOMEM;
	ret = printbuf_memappend(w.text, "[", 1) < 0 ? -ENOMEM : 0;
	if (!ret)
		ret = xb_ban_foreach(m, write_ban, &w);
	if (!ret && printbuf_memappend(w.text, "]", 1) < 0)
		ret = -ENOMEM;
	arr = ret ? NULL : json_object_new_array();
	if (!arr) {
		printbuf_free(w.text);
		return ret ? ret : -ENOMEM;
	}
	json_object_set_serializer(arr, bans_serialize, w.text, bans_text_free);
	*out = arr;
	return 0;
}

int xb_json_query(const struct xb_maps *m, const struct xb_prefix *addr,
		  struct json_object **out)
{
	struct xb_query_info q;
	struct json_object *obj;
	char text[64];
	int ret = xb_query(m, addr, &q);

	if (ret)
		return ret;
	obj = json_object_new_object();
	if (!obj)
		return -ENOMEM;
	xb_prefix_format(addr, text, sizeof(text));
	json_object_object_add(obj, "address", json_object_new_string(text));
	json_object_object_add(obj, "key", json_object_new_string(q.key));
	json_object_object_add(obj, "count", json_object_new_int64(q.count));
	json_object_object_add(obj, "banned", json_object_new_boolean(q.banned));
	json_object_object_add(obj, "seconds_left", json_object_new_int64(q.seconds_left));
	json_object_object_add(obj, "ban_reason", string_or_null(q.ban_reason));
	json_object_object_add(obj, "policy", json_object_new_string(xb_verdict_name(q.policy)));
	json_object_object_add(obj, "policy_match", string_or_null(q.policy_match));
	json_object_object_add(obj, "policy_list",
			       q.policy_match[0] ? json_object_new_int64(q.policy_list) : NULL);
	return finish(obj, out);
}

int xb_json_lists(const struct xb_maps *m, struct json_object **out)
{
	struct xb_list_count *rows;
	struct json_object *arr;
	size_t n;
	int ret = xb_lists_count(m, &rows, &n);

	if (ret)
		return ret;
	arr = json_object_new_array();
	for (size_t i = 0; arr && i < n; i++) {
		struct json_object *obj = json_object_new_object();

		if (!obj || json_object_array_add(arr, obj)) {
			json_object_put(obj);
			json_object_put(arr);
			arr = NULL;
			break;
		}
		json_object_object_add(obj, "list", json_object_new_int64(rows[i].list_id));
		json_object_object_add(obj, "manual",
				       json_object_new_boolean(rows[i].list_id ==
							       XDPBAN_LIST_MANUAL_BAN));
		json_object_object_add(obj, "verdict",
				       json_object_new_string(xb_verdict_name(rows[i].verdict)));
		json_object_object_add(obj, "ipv4", json_object_new_int64(rows[i].ipv4));
		json_object_object_add(obj, "ipv6", json_object_new_int64(rows[i].ipv6));
	}
	free(rows);
	return finish(arr, out);
}
