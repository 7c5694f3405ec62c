/* json.c - JSON renderings of the state with json-c, shared by the CLI's --json output and the
 * control protocol's replies so that both speak the same fields. The field names are a
 * contract (deploy/xdpban.8), spelt from the protocol's table (control_fields.h): add fields,
 * never rename or retype one. Never prints on its own:
 * xb_json_bans_write writes only to the stream its caller hands it.
 */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "control_fields.h"
#include "libxdpban.h"
#include "ports.h"

#ifndef JSON_C_TO_STRING_NOSLASHESCAPE
#define JSON_C_TO_STRING_NOSLASHESCAPE (1 << 4)
#endif

const char *xb_json_line(struct json_object *obj)
{
	return json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
							   JSON_C_TO_STRING_NOSLASHESCAPE);
}

struct json_object *xb_json_classes(__u32 mask)
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

/* One rule of limits with values of its own: its name, the limits it gives (its own fields
 * over the next rule's) and which fields are its own. */
static struct json_object *json_rule(const struct xdpban_config *cfg, __u32 bitno, __u16 port,
				     __u8 own)
{
	static const struct {
		__u8 own;
		const char *name;
	} fields[] = { { XDPBAN_OWN_LIMIT, "limit" }, { XDPBAN_OWN_WINDOW, "window" },
		       { XDPBAN_OWN_BAN, "ban_time" } };
	struct json_object *o = json_object_new_object(), *owned = json_object_new_array();
	struct xdpban_limits lim;
	char name[XB_RULE_NAME_MAX];

	xdpban_limits_class(cfg, bitno, port, &lim);
	xb_rule_name(port ? XDPBAN_RULE_PORT : (__u8)(XDPBAN_RULE_CLASS + bitno), port, name,
		     sizeof(name));
	for (size_t i = 0; owned && i < sizeof(fields) / sizeof(fields[0]); i++)
		if (own & fields[i].own)
			json_object_array_add(owned, json_object_new_string(fields[i].name));
	if (!o || !owned) {
		json_object_put(o);
		json_object_put(owned);
		return NULL;
	}
	json_object_object_add(o, XB_F(RULE), json_object_new_string(name));
	json_object_object_add(o, XB_F(LIMIT), json_object_new_int64(lim.limit));
	json_object_object_add(o, XB_F(WINDOW), json_object_new_int64(lim.window_s));
	json_object_object_add(o, XB_F(BAN_TIME), json_object_new_int64(lim.ban_s));
	json_object_object_add(o, XB_F(OWN), owned);
	return o;
}

/* The rules with values of their own: classes, then ports. */
static struct json_object *json_rules(const struct xdpban_config *cfg)
{
	struct json_object *arr = json_object_new_array();

	for (__u32 i = 0; arr && i < XDPBAN_CLASS__COUNT; i++)
		if (cfg->class_rule[i].own)
			json_object_array_add(arr, json_rule(cfg, i, 0, cfg->class_rule[i].own));
	for (__u32 i = 0; arr && i < XDPBAN_PORT_RULES; i++)
		if (cfg->port_rule[i].port)
			json_object_array_add(arr, json_rule(cfg, XDPBAN_CLASS_BITNO_PROTOCOL,
							     cfg->port_rule[i].port,
							     cfg->port_rule[i].own));
	return arr;
}

void xb_json_last_error(struct json_object *obj, const struct xb_last_error *e)
{
	char text[XB_LAST_ERROR_TEXT_MAX] = "", rule[XB_RULE_NAME_MAX];

	xb_last_error_format(e, text, sizeof(text));
	json_object_object_add(obj, XB_F(LAST_ERROR), string_or_null(text));
	json_object_object_add(obj, XB_F(BAN_RULE),
			       e->rule && !xb_rule_name(e->rule, e->port, rule, sizeof(rule))
				       ? json_object_new_string(rule)
				       : NULL);
}

int xb_json_config(const struct xb_maps *m, struct json_object **out)
{
	struct xdpban_config cfg;
	struct json_object *obj;
	char learn[16];
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
	json_object_object_add(obj, XB_F(LIMIT), json_object_new_int64(cfg.limit));
	json_object_object_add(obj, XB_F(WINDOW), json_object_new_int64(cfg.window_s));
	json_object_object_add(obj, XB_F(BAN_TIME), json_object_new_int64(cfg.ban_s));
	json_object_object_add(obj, XB_F(RULES), json_rules(&cfg));
	json_object_object_add(obj, XB_F(IPV6_PREFIX), json_object_new_int(cfg.v6_prefix));
	json_object_object_add(obj, XB_F(ERRORS), xb_json_classes(cfg.class_mask));
	json_object_object_add(obj, XB_F(DROP), xb_json_classes(cfg.drop_mask));
	json_object_object_add(obj, XB_F(SPOOF), json_object_new_string(xb_spoof_name(cfg.spoof)));
	json_object_object_add(obj, XB_F(HOP_TOLERANCE), json_object_new_int(cfg.hop_tolerance));
	if (xb_learn_format(cfg.learn_shift, learn, sizeof(learn)))
		snprintf(learn, sizeof(learn), "?");
	json_object_object_add(obj, XB_F(LEARN), json_object_new_string(learn));
	json_object_object_add(obj, XB_F(ALLOW_ONLY),
			       json_object_new_boolean(cfg.policy & XDPBAN_CFG_ALLOW_ONLY));
	json_object_object_add(obj, XB_F(MODE), json_object_new_string(xb_mode_name(cfg.mode)));
	json_object_object_add(obj, XB_F(DEFAULTS), json_object_new_boolean(defaults));
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
		json_object_object_add(one, XB_F(PACKETS),
				       json_object_new_uint64(stats[i].packets));
		json_object_object_add(one, XB_F(BYTES), json_object_new_uint64(stats[i].bytes));
		json_object_object_add(obj, xb_stat_name(i), one);
	}
	return finish(obj, out);
}

struct runs_json {
	struct json_object *arr;
	__u8 mask;
};

static int add_run(__u32 lo, __u32 hi, __u8 value, void *ctx)
{
	struct runs_json *r = ctx;
	char piece[40];

	xb_ports_format_run(lo, hi, value, r->mask, piece, sizeof(piece));
	return json_object_array_add(r->arr, json_object_new_string(piece)) ? -ENOMEM : 0;
}

/* The runs under mask as an array of pieces of the config's text: ["22", "8000-8100"]. */
static struct json_object *runs_array(const struct xb_ports *t, __u8 mask)
{
	struct runs_json r = { .arr = json_object_new_array(), .mask = mask };

	if (r.arr && xb_ports_runs(t, mask, add_run, &r)) {
		json_object_put(r.arr);
		r.arr = NULL;
	}
	return r.arr;
}

int xb_json_ports(const struct xb_maps *m, struct json_object **out)
{
	struct xb_ports *t = malloc(sizeof(*t));
	struct json_object *obj = NULL;
	int ret = t ? xb_ports_read(m, t) : -ENOMEM;

	if (!ret)
		obj = json_object_new_object();
	if (obj) {
		json_object_object_add(obj, XB_F(GUARDS), runs_array(t, XDPBAN_PORT_GUARD_MASK));
		json_object_object_add(obj, XB_F(OPEN_TCP), runs_array(t, XDPBAN_PORT_TCP_OPEN));
		json_object_object_add(obj, XB_F(OPEN_UDP), runs_array(t, XDPBAN_PORT_UDP_OPEN));
		json_object_object_add(obj, XB_F(PROBE_ICMP),
				       json_object_new_boolean(t->flags & XDPBAN_PORTS_PROBE_ICMP));
	}
	free(t);
	return ret ? ret : finish(obj, out);
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
	t->prefix_bans += xb_is_prefix_ban(e);
	return 0;
}

int xb_json_status(const struct xb_maps *m, struct json_object **out)
{
	struct json_object *obj, *config = NULL, *ports = NULL, *stats = NULL;
	struct policy_tally tally = {};
	__u32 counters_max = 0, bans_max = 0;
	int tracked, verified, banned, ret;

	tracked = xb_count_tracked(m);
	verified = xb_count_verified(m);
	banned = xb_count_banned(m, xb_boot_ns());
	ret = tracked < 0 ? tracked : verified < 0 ? verified : banned < 0 ? banned : 0;
	if (!ret)
		ret = xb_capacity(m, &counters_max, &bans_max);
	if (!ret)
		ret = xb_policy_foreach(m, tally_policy, &tally);
	if (!ret)
		ret = xb_json_config(m, &config);
	if (!ret)
		ret = xb_json_ports(m, &ports);
	if (!ret)
		ret = xb_json_stats(m, &stats);
	obj = ret ? NULL : json_object_new_object();
	if (!obj) {
		json_object_put(config);
		json_object_put(ports);
		json_object_put(stats);
		return ret ? ret : -ENOMEM;
	}
	json_object_object_add(obj, XB_F(CONFIG), config);
	json_object_object_add(obj, XB_F(PORTS), ports);
	json_object_object_add(obj, XB_F(TRACKED), json_object_new_int(tracked));
	json_object_object_add(obj, XB_F(VERIFIED_N), json_object_new_int(verified));
	json_object_object_add(obj, XB_F(COUNTERS_MAX), json_object_new_int64(counters_max));
	json_object_object_add(obj, XB_F(BANNED_N), json_object_new_int(banned));
	json_object_object_add(obj, XB_F(BANS_MAX), json_object_new_int64(bans_max));
	json_object_object_add(obj, XB_F(PREFIX_BANS), json_object_new_int(tally.prefix_bans));
	json_object_object_add(obj, XB_F(POLICY_IPV4), json_object_new_int(tally.ipv4));
	json_object_object_add(obj, XB_F(POLICY_IPV6), json_object_new_int(tally.ipv6));
	json_object_object_add(obj, XB_F(STATS), stats);
	return finish(obj, out);
}

/* Bans are written straight as text rather than built as json-c objects: a million objects
 * cost seconds to build and serialise, the text a fraction of that. The text is exactly what
 * json-c prints for the same object (PLAIN, '/' not escaped: test_control_maps holds the two
 * to each other byte for byte). Every string written is ours and needs no escaping: addresses from
 * xb_key_format/xb_prefix_format (hex digits, '.', ':', '/'), fixed names, RFC 3339 stamps. */
/* One ban's object: prefix (< 64), fixed text, numbers, stamp, classes and last error. */
#define BAN_TEXT_MAX (448 + 2 * XB_CLASSES_TEXT_MAX)

struct ban_writer {
	FILE *out;
	time_t stamp_of;  /* the second `stamp` holds; 0: none yet */
	char stamp[32];   /* bans started in the same second share one formatting */
	size_t stamp_len;
	size_t n;         /* bans written */
};

/* Appends len bytes at *p; the callers size the line so that everything fits. */
static void put_bytes(char **p, const char *text, size_t len)
{
	memcpy(*p, text, len);
	*p += len;
}

#define PUT_LITERAL(p, lit) put_bytes(p, lit, sizeof(lit) - 1)

static void put_str(char **p, const char *text, size_t max)
{
	put_bytes(p, text, strnlen(text, max));
}

/* ["malformed","reported"]: what xb_json_classes() serialises to, names of XDPBAN_CLASSES. */
static void put_classes(char **p, __u32 mask)
{
	bool first = true;

	PUT_LITERAL(p, "[");
	for (unsigned int i = 0; i < XDPBAN_CLASS__COUNT; i++) {
		if (!(mask & 1u << i))
			continue;
		if (!first)
			PUT_LITERAL(p, ",");
		PUT_LITERAL(p, "\"");
		put_str(p, xb_class_name(1u << i), XB_CLASSES_TEXT_MAX);
		PUT_LITERAL(p, "\"");
		first = false;
	}
	PUT_LITERAL(p, "]");
}

/* A decimal number without printf: two of them per ban. */
static void put_int(char **p, long long v)
{
	char digits[24], *d = digits + sizeof(digits);
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;

	do
		*--d = '0' + u % 10;
	while ((u /= 10));
	if (v < 0)
		*--d = '-';
	put_bytes(p, d, digits + sizeof(digits) - d);
}

static int update_stamp(struct ban_writer *w, time_t started)
{
	if (started == w->stamp_of)
		return 0;
	if (xb_time_format(started, w->stamp, sizeof(w->stamp)))
		return -EOVERFLOW;
	w->stamp_of = started;
	w->stamp_len = strlen(w->stamp);
	return 0;
}

/* ,"name": (or {"name": for the first member), the name from the protocol's table. */
static void put_member(char **p, char before, enum xb_control_field f)
{
	*(*p)++ = before;
	*(*p)++ = '"';
	put_bytes(p, xb_control_fields[f].name, xb_control_fields[f].len);
	PUT_LITERAL(p, "\":");
}

static void put_quoted(char **p, const char *text, size_t max)
{
	PUT_LITERAL(p, "\"");
	put_str(p, text, max);
	PUT_LITERAL(p, "\"");
}

/* One ban's object, preceded by a comma unless it is the first; returns its length. */
static size_t format_ban(struct ban_writer *w, const struct xb_ban_info *ban,
			 char line[BAN_TEXT_MAX])
{
	char *p = line, text[XB_LAST_ERROR_TEXT_MAX + XB_RULE_NAME_MAX];

	if (w->n)
		PUT_LITERAL(&p, ",");
	put_member(&p, '{', XB_FIELD_PREFIX);
	put_quoted(&p, ban->prefix, sizeof(ban->prefix) - 1);
	put_member(&p, ',', XB_FIELD_COUNT);
	put_int(&p, ban->count);
	put_member(&p, ',', XB_FIELD_DROPS);
	if (ban->has_drops)
		put_int(&p, (long long)ban->drops);
	else
		PUT_LITERAL(&p, "null");
	put_member(&p, ',', XB_FIELD_REASON);
	put_quoted(&p, ban->reason, 16);
	put_member(&p, ',', XB_FIELD_SECONDS_LEFT);
	put_int(&p, ban->seconds_left);
	put_member(&p, ',', XB_FIELD_STARTED);
	if (ban->started)
		put_quoted(&p, w->stamp, w->stamp_len);
	else
		PUT_LITERAL(&p, "null");
	put_member(&p, ',', XB_FIELD_CLASSES);
	put_classes(&p, ban->classes);
	put_member(&p, ',', XB_FIELD_TABLE);
	put_quoted(&p, ban->table, 16);
	put_member(&p, ',', XB_FIELD_OBSERVED);
	if (ban->observed)
		PUT_LITERAL(&p, "true");
	else
		PUT_LITERAL(&p, "false");
	put_member(&p, ',', XB_FIELD_LAST_ERROR);
	if (ban->last.proto && !xb_last_error_format(&ban->last, text, sizeof(text)))
		put_quoted(&p, text, sizeof(text));
	else
		PUT_LITERAL(&p, "null");
	put_member(&p, ',', XB_FIELD_BAN_RULE);
	if (ban->last.rule && !xb_rule_name(ban->last.rule, ban->last.port, text, sizeof(text)))
		put_quoted(&p, text, sizeof(text));
	else
		PUT_LITERAL(&p, "null");
	PUT_LITERAL(&p, "}");
	return p - line;
}

static int write_ban(const struct xb_ban_info *ban, void *ctx)
{
	struct ban_writer *w = ctx;
	char line[BAN_TEXT_MAX];
	size_t len;

	if (ban->started && update_stamp(w, ban->started))
		return -EOVERFLOW;
	len = format_ban(w, ban, line);
	if (fwrite_unlocked(line, 1, len, w->out) != len)
		return -EIO;
	w->n++;
	return 0;
}

int xb_json_bans_write(const struct xb_maps *m, FILE *out)
{
	struct ban_writer w = { .out = out };
	int ret;

	if (fputs_unlocked("[", out) == EOF)
		return -EIO;
	ret = xb_ban_foreach(m, write_ban, &w);
	if (ret)
		return ret;
	if (fputs_unlocked("]", out) == EOF)
		return -EIO;
	return 0;
}

/* The array's text, rendered in advance, is what the placeholder serialises to. */
struct bans_text {
	char *buf;
	size_t len;
};

static int bans_serialize(struct json_object *jso, struct printbuf *pb, int level, int flags)
{
	struct bans_text *text = json_object_get_userdata(jso);

	return printbuf_memappend(pb, text->buf, (int)text->len);
}

static void bans_text_free(struct json_object *jso, void *userdata)
{
	struct bans_text *text = userdata;

	free(text->buf);
	free(text);
}

static int render_bans_text(const struct xb_maps *m, struct bans_text *text)
{
	FILE *out = open_memstream(&text->buf, &text->len);
	int ret;

	if (!out)
		return -ENOMEM;
	ret = xb_json_bans_write(m, out);
	if (fclose(out) && !ret)
		ret = -ENOMEM;
	if (!ret && text->len > INT_MAX) /* what a printbuf can take */
		ret = -E2BIG;
	return ret;
}

int xb_json_bans(const struct xb_maps *m, struct json_object **out)
{
	struct bans_text *text = calloc(1, sizeof(*text));
	struct json_object *arr;
	int ret;

	if (!text)
		return -ENOMEM;
	ret = render_bans_text(m, text);
	arr = ret ? NULL : json_object_new_array();
	if (!arr) {
		free(text->buf);
		free(text);
		return ret ? ret : -ENOMEM;
	}
	json_object_set_serializer(arr, bans_serialize, text, bans_text_free);
	*out = arr;
	return 0;
}

/* Whether the address is exempt, why, the prefix that makes it so and, for a host address, the
 * interface (its name in this network namespace, null when it has none here). */
static void add_query_exempt(struct json_object *obj, const struct xb_query_info *q)
{
	const struct xb_exempt_entry *e = &q->exempt_match;
	bool host = q->exempt && e->val.origin == XDPBAN_EXEMPT_HOST;
	char text[64] = "", name[IF_NAMESIZE];

	if (q->exempt)
		xb_prefix_format(&e->prefix, text, sizeof(text));
	json_object_object_add(obj, XB_F(EXEMPT), json_object_new_boolean(q->exempt));
	json_object_object_add(obj, XB_F(EXEMPT_WHY),
			       string_or_null(q->exempt ? q->exempt_why : NULL));
	json_object_object_add(obj, XB_F(EXEMPT_MATCH), string_or_null(text));
	json_object_object_add(obj, XB_F(EXEMPT_IFINDEX),
			       host ? json_object_new_int64(e->val.ifindex) : NULL);
	json_object_object_add(obj, XB_F(EXEMPT_INTERFACE),
			       string_or_null(host && if_indextoname(e->val.ifindex, name) ? name
											   : NULL));
}

/* The spoof defence's record: the reference hop count and where it came from. */
static void add_query_spoof(struct json_object *obj, const struct xb_query_info *q)
{
	const char *from = !q->has_hop ? NULL : q->verified ? "verified" : "first_error";

	json_object_object_add(obj, XB_F(HOP), q->has_hop ? json_object_new_int(q->hop) : NULL);
	json_object_object_add(obj, XB_F(HOP_FROM), string_or_null(from));
	json_object_object_add(obj, XB_F(VERIFIED), json_object_new_boolean(q->verified));
	json_object_object_add(obj, XB_F(VERIFIED_AGO_S),
			       q->verified ? json_object_new_int64(q->verified_ago_s) : NULL);
	json_object_object_add(obj, XB_F(DISPUTED), json_object_new_boolean(q->disputed));
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
	json_object_object_add(obj, XB_F(ADDRESS), json_object_new_string(text));
	json_object_object_add(obj, XB_F(QUERY_KEY), json_object_new_string(q.key));
	json_object_object_add(obj, XB_F(COUNT), json_object_new_int64(q.count));
	json_object_object_add(obj, XB_F(CLASSES), xb_json_classes(q.classes));
	json_object_object_add(obj, XB_F(BANNED), json_object_new_boolean(q.banned));
	json_object_object_add(obj, XB_F(SECONDS_LEFT), json_object_new_int64(q.seconds_left));
	json_object_object_add(obj, XB_F(DROPS),
			       q.has_drops ? json_object_new_int64((int64_t)q.drops) : NULL);
	json_object_object_add(obj, XB_F(BAN_REASON), string_or_null(q.ban_reason));
	json_object_object_add(obj, XB_F(BAN_CLASSES),
			       q.banned ? xb_json_classes(q.ban_classes) : NULL);
	json_object_object_add(obj, XB_F(LIMIT), json_object_new_int64(q.limit));
	xb_rule_name(q.rule, 0, text, sizeof(text));
	json_object_object_add(obj, XB_F(RULE), json_object_new_string(text));
	xb_json_last_error(obj, &q.ban_last);
	if (q.ban_started && !xb_time_format(q.ban_started, text, sizeof(text)))
		json_object_object_add(obj, XB_F(STARTED), json_object_new_string(text));
	else
		json_object_object_add(obj, XB_F(STARTED), NULL);
	json_object_object_add(obj, XB_F(POLICY),
			       json_object_new_string(xb_verdict_name(q.policy)));
	json_object_object_add(obj, XB_F(POLICY_MATCH), string_or_null(q.policy_match));
	json_object_object_add(obj, XB_F(POLICY_LIST),
			       q.policy_match[0] ? json_object_new_int64(q.policy_list) : NULL);
	json_object_object_add(obj, XB_F(OBSERVED), json_object_new_boolean(q.observed));
	json_object_object_add(obj, XB_F(OBSERVED_MATCH), string_or_null(q.observed_match));
	json_object_object_add(obj, XB_F(OBSERVED_LIST),
			       q.observed_match[0] ? json_object_new_int64(q.observed_list) : NULL);
	add_query_exempt(obj, &q);
	add_query_spoof(obj, &q);
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
		json_object_object_add(obj, XB_F(LIST), json_object_new_int64(rows[i].list_id));
		json_object_object_add(obj, XB_F(MANUAL),
				       json_object_new_boolean(rows[i].list_id ==
							       XDPBAN_LIST_MANUAL_BAN));
		json_object_object_add(obj, XB_F(DEFAULT),
				       json_object_new_boolean(rows[i].list_id ==
							       XDPBAN_LIST_DEFAULT));
		json_object_object_add(obj, XB_F(VERDICT),
				       json_object_new_string(xb_verdict_name(rows[i].verdict)));
		json_object_object_add(obj, XB_F(IPV4), json_object_new_int64(rows[i].ipv4));
		json_object_object_add(obj, XB_F(IPV6), json_object_new_int64(rows[i].ipv6));
	}
	free(rows);
	return finish(arr, out);
}

static struct json_object *family_counts(const __u32 counts[2])
{
	struct json_object *obj = json_object_new_object();

	if (obj) {
		json_object_object_add(obj, XB_F(IPV4), json_object_new_int64(counts[0]));
		json_object_object_add(obj, XB_F(IPV6), json_object_new_int64(counts[1]));
	}
	return obj;
}

int xb_json_exempt(const struct xb_maps *m, struct json_object **out)
{
	struct xb_exempt_counts c;
	struct json_object *obj;
	int ret = xb_exempt_count(m, &c);

	if (ret)
		return ret;
	obj = json_object_new_object();
	if (!obj)
		return -ENOMEM;
	json_object_object_add(obj, XB_F(NEVER_BAN), family_counts(c.never_ban));
	json_object_object_add(obj, XB_F(HOST), family_counts(c.host));
	return finish(obj, out);
}
