/* control.c - the request handler of the control protocol (docs/control.md): one JSON request
 * in, one JSON reply out, for the daemon's socket server and for tests. Every request is
 * checked completely (size, JSON, fields, types, values) before anything is changed, and every
 * failure becomes an {"ok": false, "error": "..."} reply, whose text never holds a byte that
 * is not printable ASCII, whatever the request held. It never reads or writes a socket.
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "control.h"
#include "ports.h"
#include "control_fields.h"

struct request {
	const struct xb_control_ctx *ctx;
	struct json_object *req;   /* the parsed request */
	struct json_object *reply; /* {"ok": true} so far; handlers add to it */
	char *err;
	size_t errlen;
};

typedef int (*command_fn)(struct request *r);

struct command {
	enum xb_control_cmd cmd;
	bool changes;                    /* refused when ctx->read_only */
	enum xb_control_field fields[3]; /* allowed besides CMD; a slot left over holds CMD */
	command_fn run;
};

/* Field access. A missing optional field leaves *out as it was. */
static int field_string(struct request *r, const char *name, bool required, const char **out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(r->req, name, &v)) {
		if (!required)
			return 0;
		snprintf(r->err, r->errlen, "missing field \"%s\"", name);
		return -EINVAL;
	}
	if (!json_object_is_type(v, json_type_string)) {
		snprintf(r->err, r->errlen, "field \"%s\" must be a string", name);
		return -EINVAL;
	}
	/* An escaped NUL would cut the string short: "192.0.2.45\u0000/8" is not 192.0.2.45. */
	if ((size_t)json_object_get_string_len(v) != strlen(json_object_get_string(v))) {
		snprintf(r->err, r->errlen, "field \"%s\" contains a NUL character (\\u0000)",
			 name);
		return -EINVAL;
	}
	*out = json_object_get_string(v);
	return 0;
}

static int field_u32(struct request *r, const char *name, __u32 min, __u32 max, __u32 *out)
{
	struct json_object *v;
	int64_t n;

	if (!json_object_object_get_ex(r->req, name, &v))
		return 0;
	if (!json_object_is_type(v, json_type_int)) {
		snprintf(r->err, r->errlen, "field \"%s\" must be an integer", name);
		return -EINVAL;
	}
	errno = 0;
	n = json_object_get_int64(v);
	if (errno || n < min || n > max) {
		snprintf(r->err, r->errlen, "field \"%s\" out of range: must be %u..%u", name, min,
			 max);
		return -ERANGE;
	}
	*out = (__u32)n;
	return 0;
}

static int field_prefix(struct request *r, const char *name, bool address_only,
			struct xb_prefix *p)
{
	const char *text = NULL;
	int ret = field_string(r, name, true, &text);

	if (ret)
		return ret;
	ret = xb_prefix_parse(text, p, r->err, r->errlen);
	if (ret)
		return ret;
	if (address_only && !xb_prefix_is_addr(p)) {
		snprintf(r->err, r->errlen, "field \"%s\" must be a single address, not a prefix: '%s'",
			 name, text);
		return -EINVAL;
	}
	return 0;
}

/* Moves every member of src into r->reply and frees src. */
static int merge_reply(struct request *r, struct json_object *src)
{
	json_object_object_foreach(src, key, val)
	{
		json_object_object_add(r->reply, key, json_object_get(val));
	}
	json_object_put(src);
	return 0;
}

static int fail_errno(struct request *r, const char *what, int ret)
{
	snprintf(r->err, r->errlen, "%s: %s", what, strerror(-ret));
	return ret;
}

static int cmd_status(struct request *r)
{
	const struct xb_control_hooks *hooks = r->ctx->hooks;
	struct json_object *status;
	int ret = xb_json_status(r->ctx->maps, &status);

	if (ret)
		return fail_errno(r, "cannot read the state", ret);
	json_object_object_add(r->reply, XB_F(DAEMON), json_object_new_boolean(true));
	merge_reply(r, status);
	if (hooks && hooks->status) {
		ret = hooks->status(r->reply, r->ctx->user);
		if (ret)
			return fail_errno(r, "cannot read the daemon's status", ret);
	}
	return 0;
}

static int cmd_stats(struct request *r)
{
	struct json_object *stats;
	int ret = xb_json_stats(r->ctx->maps, &stats);

	if (ret)
		return fail_errno(r, "cannot read " XDPBAN_MAP_NAME(xdpban_stats), ret);
	json_object_object_add(r->reply, XB_F(STATS), stats);
	return 0;
}

static int cmd_bans(struct request *r)
{
	struct json_object *bans;
	int ret = xb_json_bans(r->ctx->maps, &bans);

	if (ret)
		return fail_errno(r, "cannot list the bans", ret);
	json_object_object_add(r->reply, XB_F(BANS), bans);
	if (r->ctx->hooks && r->ctx->hooks->listed)
		r->ctx->hooks->listed(r->reply, r->ctx->user);
	return 0;
}

static void name_lists(struct request *r, struct json_object *lists)
{
	const struct xb_control_hooks *hooks = r->ctx->hooks;

	if (!hooks || !hooks->list_name)
		return;
	for (size_t i = 0; i < json_object_array_length(lists); i++) {
		struct json_object *row = json_object_array_get_idx(lists, i), *id;
		const char *name;

		if (!json_object_object_get_ex(row, XB_F(LIST), &id))
			continue;
		name = hooks->list_name((__u32)json_object_get_int64(id), r->ctx->user);
		if (name)
			json_object_object_add(row, XB_F(NAME), json_object_new_string(name));
	}
}

static int cmd_lists(struct request *r)
{
	struct json_object *lists, *exempt;
	int ret = xb_json_lists(r->ctx->maps, &lists);

	if (ret)
		return fail_errno(r, "cannot read the policy tries", ret);
	name_lists(r, lists);
	json_object_object_add(r->reply, XB_F(LISTS), lists);
	ret = xb_json_exempt(r->ctx->maps, &exempt);
	if (ret)
		return fail_errno(r, "cannot read the exempt tries", ret);
	json_object_object_add(r->reply, XB_F(EXEMPT_COUNTS), exempt);
	return 0;
}

static int cmd_query(struct request *r)
{
	struct json_object *info;
	struct xb_prefix addr;
	int ret = field_prefix(r, XB_F(ADDR), true, &addr);

	if (ret)
		return ret;
	ret = xb_json_query(r->ctx->maps, &addr, &info);
	if (ret)
		return fail_errno(r, "cannot query", ret);
	merge_reply(r, info);
	if (r->ctx->hooks && r->ctx->hooks->queried)
		r->ctx->hooks->queried(r->reply, r->ctx->user);
	return 0;
}

/* A ban's comment is kept by the daemon (its banned hook): a handler without one refuses it
 * rather than ban without it. 0, or -errno with one line in err. */
static int field_comment(struct request *r, const char **comment)
{
	int ret = field_string(r, XB_F(COMMENT), false, comment);

	if (ret || !*comment)
		return ret;
	ret = xb_ban_comment_check(*comment, r->err, r->errlen);
	if (!ret && !(r->ctx->hooks && r->ctx->hooks->banned)) {
		snprintf(r->err, r->errlen, "a ban's comment is kept by xdpband, and this handler has "
			 "no daemon to keep it: nothing was banned");
		ret = -EOPNOTSUPP;
	}
	return ret;
}

static int cmd_ban(struct request *r)
{
	const struct xb_control_hooks *hooks = r->ctx->hooks;
	const char *comment = NULL;
	struct xb_prefix p;
	__u32 seconds = 0;
	char text[64];
	int ret;

	ret = field_prefix(r, XB_F(PREFIX), false, &p);
	if (!ret)
		ret = field_u32(r, XB_F(SECONDS), 0, XDPBAN_TIME_MAX_S, &seconds);
	if (!ret)
		ret = field_comment(r, &comment);
	if (!ret)
		ret = xb_ban(r->ctx->maps, &p, seconds, r->err, r->errlen);
	if (ret)
		return ret;
	if (hooks && hooks->banned)
		hooks->banned(&p, seconds, comment, r->ctx->user);
	xb_prefix_format(&p, text, sizeof(text));
	json_object_object_add(r->reply, XB_F(PREFIX), json_object_new_string(text));
	json_object_object_add(r->reply, XB_F(SECONDS), json_object_new_int64(seconds));
	if (comment)
		json_object_object_add(r->reply, XB_F(COMMENT), json_object_new_string(comment));
	return 0;
}

static int field_bool(struct request *r, const char *name, bool *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(r->req, name, &v))
		return 0;
	if (!json_object_is_type(v, json_type_boolean)) {
		snprintf(r->err, r->errlen, "field \"%s\" must be true or false", name);
		return -EINVAL;
	}
	*out = json_object_get_boolean(v);
	return 0;
}

/* The lifted bans, gathered for the hook: one call for all of them. */
struct lifted_bans {
	struct xb_prefix *v;
	size_t n, cap;
	bool short_of_memory;
};

static void gather_lifted(const struct xb_prefix *p, void *ctx)
{
	struct lifted_bans *l = ctx;
	struct xb_prefix *bigger;

	if (l->n == l->cap) {
		bigger = realloc(l->v, (l->cap ? 2 * l->cap : 64) * sizeof(*l->v));
		if (!bigger) {
			l->short_of_memory = true;
			return;
		}
		l->v = bigger;
		l->cap = l->cap ? 2 * l->cap : 64;
	}
	l->v[l->n++] = *p;
}

/* {"cmd": "unban", "all": true, "reason": R}: every ban, or every ban of one reason. */
static int unban_all(struct request *r)
{
	const struct xb_control_hooks *hooks = r->ctx->hooks;
	bool tell = hooks && hooks->unbanned_all;
	struct lifted_bans l = {};
	const char *name = NULL;
	int reason = -1, ret;
	size_t n = 0;
	__u8 code;

	if (json_object_object_get_ex(r->req, XB_F(PREFIX), NULL)) {
		snprintf(r->err, r->errlen, "field \"%s\" and \"%s\": true exclude each other",
			 XB_F(PREFIX), XB_F(ALL));
		return -EINVAL;
	}
	ret = field_string(r, XB_F(REASON), false, &name);
	if (!ret && name && !(ret = xb_reason_parse(name, &code, r->err, r->errlen)))
		reason = code;
	if (ret)
		return ret;
	ret = xb_unban_all(r->ctx->maps, reason, tell ? gather_lifted : NULL, &l, &n, r->err,
			   r->errlen);
	if (tell)
		hooks->unbanned_all(l.v, l.n, reason, r->ctx->user);
	if (l.short_of_memory)
		snprintf(r->err, r->errlen, "lifted %zu %s, but out of memory to tell the daemon of "
			 "each", n, xb_plural(n, "ban", "bans"));
	free(l.v);
	if (ret || l.short_of_memory)
		return ret ? ret : -ENOMEM;
	json_object_object_add(r->reply, XB_F(UNBANNED), json_object_new_int64((int64_t)n));
	return 0;
}

static int cmd_unban(struct request *r)
{
	const struct xb_control_hooks *hooks = r->ctx->hooks;
	struct xb_prefix p, lifted;
	bool all = false;
	char text[64];
	int ret;

	ret = field_bool(r, XB_F(ALL), &all);
	if (!ret && all)
		return unban_all(r);
	if (!ret && json_object_object_get_ex(r->req, XB_F(REASON), NULL)) {
		snprintf(r->err, r->errlen, "field \"%s\" needs \"%s\": true", XB_F(REASON),
			 XB_F(ALL));
		return -EINVAL;
	}
	if (!ret)
		ret = field_prefix(r, XB_F(PREFIX), false, &p);
	if (!ret)
		ret = xb_unban(r->ctx->maps, &p, &lifted, r->err, r->errlen);
	if (ret)
		return ret;
	if (hooks && hooks->unbanned)
		hooks->unbanned(&lifted, r->ctx->user);
	xb_prefix_format(&lifted, text, sizeof(text));
	json_object_object_add(r->reply, XB_F(PREFIX), json_object_new_string(text));
	return 0;
}

static int cmd_report(struct request *r)
{
	__u32 count = 1, status, new_count;
	struct xb_prefix addr;
	int ret;

	ret = field_prefix(r, XB_F(ADDR), true, &addr);
	if (!ret)
		ret = field_u32(r, XB_F(COUNT), 1, XDPBAN_LIMIT_MAX, &count);
	if (ret)
		return ret;
	if (r->ctx->maps->report_prog < 0) {
		snprintf(r->err, r->errlen, "the report program is not loaded");
		return -ENOENT;
	}
	ret = xb_report(r->ctx->maps, &addr, count, &status, &new_count);
	if (ret)
		return fail_errno(r, "cannot run the report program", ret);
	json_object_object_add(r->reply, XB_F(RESULT),
			       json_object_new_string(xb_report_status_name(status)));
	json_object_object_add(r->reply, XB_F(COUNT), json_object_new_int64(new_count));
	return 0;
}

/* "value" may be a string ("1h", "malformed,reported") or, for convenience, an integer. */
static int set_value_text(struct request *r, char *buf, size_t len, const char **value)
{
	struct json_object *v;

	if (!json_object_object_get_ex(r->req, XB_F(VALUE), &v)) {
		snprintf(r->err, r->errlen, "missing field \"%s\"", XB_F(VALUE));
		return -EINVAL;
	}
	if (json_object_is_type(v, json_type_int)) {
		snprintf(buf, len, "%lld", (long long)json_object_get_int64(v));
		*value = buf;
		return 0;
	}
	return field_string(r, XB_F(VALUE), true, value);
}

/* "reset": true instead of a value: the config file's value, which only the daemon has. */
static int set_reset_text(struct request *r, const char *key, char *buf, size_t len,
			  const char **value, bool *reset)
{
	const struct xb_control_hooks *hooks = r->ctx->hooks;
	struct json_object *v;

	*reset = json_object_object_get_ex(r->req, XB_F(RESET), &v);
	if (!*reset)
		return set_value_text(r, buf, len, value);
	if (!json_object_is_type(v, json_type_boolean) || !json_object_get_boolean(v) ||
	    json_object_object_get_ex(r->req, XB_F(VALUE), NULL)) {
		snprintf(r->err, r->errlen, "\"%s\" must be true, and comes without \"%s\"",
			 XB_F(RESET), XB_F(VALUE));
		return -EINVAL;
	}
	if (!hooks || !hooks->setting_of_file) {
		snprintf(r->err, r->errlen,
			 "a reset needs xdpband: the config file's values are the daemon's");
		return -EOPNOTSUPP;
	}
	*value = buf;
	return hooks->setting_of_file(key, buf, len, r->err, r->errlen, r->ctx->user);
}

static int cmd_set(struct request *r)
{
	const struct xb_control_hooks *hooks = r->ctx->hooks;
	const char *key = NULL, *value = NULL;
	struct json_object *config;
	struct xdpban_config cfg, before;
	char text[64];
	bool reset;
	int ret;

	ret = field_string(r, XB_F(KEY), true, &key);
	if (!ret)
		ret = set_reset_text(r, key, text, sizeof(text), &value, &reset);
	if (ret)
		return ret;
	ret = xb_config_read(r->ctx->maps, &cfg);
	if (ret)
		return fail_errno(r, "cannot read " XDPBAN_MAP_NAME(xdpban_config), ret);
	before = cfg;
	ret = xb_config_set(&cfg, key, value, r->err, r->errlen);
	if (!ret)
		ret = xb_ports_check_rules(r->ctx->maps, &before, &cfg, r->err, r->errlen);
	if (!ret)
		ret = xb_config_write(r->ctx->maps, &cfg, r->err, r->errlen);
	if (ret)
		return ret;
	if (hooks && hooks->config_changed)
		hooks->config_changed(&cfg, key, reset, r->ctx->user);
	ret = xb_json_config(r->ctx->maps, &config);
	if (ret)
		return fail_errno(r, "cannot read back " XDPBAN_MAP_NAME(xdpban_config), ret);
	json_object_object_add(r->reply, XB_F(CONFIG), config);
	return 0;
}

static const struct command commands[] = {
	{ XB_CMD_STATUS, false, {}, cmd_status },
	{ XB_CMD_STATS, false, {}, cmd_stats },
	{ XB_CMD_BANS, false, {}, cmd_bans },
	{ XB_CMD_LISTS, false, {}, cmd_lists },
	{ XB_CMD_QUERY, false, { XB_FIELD_ADDR }, cmd_query },
	{ XB_CMD_BAN, true, { XB_FIELD_PREFIX, XB_FIELD_SECONDS, XB_FIELD_COMMENT }, cmd_ban },
	{ XB_CMD_UNBAN, true, { XB_FIELD_PREFIX, XB_FIELD_ALL, XB_FIELD_REASON }, cmd_unban },
	{ XB_CMD_REPORT, true, { XB_FIELD_ADDR, XB_FIELD_COUNT }, cmd_report },
	{ XB_CMD_SET, true, { XB_FIELD_KEY, XB_FIELD_VALUE, XB_FIELD_RESET }, cmd_set },
};
_Static_assert(XB_FIELD_CMD == 0, "a slot left over in a command's fields holds CMD");

static const struct command *find_command(const char *name)
{
	int cmd = xb_control_cmd_of(name);

	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if ((int)commands[i].cmd == cmd)
			return &commands[i];
	return NULL;
}

/* A misspelt field is an error, never silently ignored. */
static int check_fields(struct request *r, const struct command *c)
{
	json_object_object_foreach(r->req, key, val)
	{
		bool known = !strcmp(key, XB_F(CMD));

		(void)val;
		for (size_t i = 0; !known && i < sizeof(c->fields) / sizeof(c->fields[0]); i++)
			known = !strcmp(xb_control_fields[c->fields[i]].name, key);
		if (!known) {
			snprintf(r->err, r->errlen, "unknown field \"%.40s\" for \"%s\"", key,
				 xb_control_commands[c->cmd].name);
			return -EINVAL;
		}
	}
	return 0;
}

/* Member names, found in the request text, which is valid JSON by now: a backslash occurs
 * only inside a string, and a string followed by ':' is a name. cb gets each name with its
 * quotes and its depth (1: a member of the request itself); a non-zero return stops. */
typedef int (*name_fn)(const char *name, size_t len, int depth, void *ctx);

static int scan_names(const char *text, size_t len, name_fn cb, void *ctx)
{
	size_t start = 0;
	int depth = 0, ret;

	for (size_t i = 0; i < len; i++) {
		if (text[i] == '{' || text[i] == '[') {
			depth++;
		} else if (text[i] == '}' || text[i] == ']') {
			depth--;
		} else if (text[i] == '"') {
			for (start = i++; i < len && text[i] != '"'; i++)
				i += text[i] == '\\'; /* the escaped character, which may be a '"' */
			size_t next = i + 1 + strspn(text + i + 1, " \t\r\n");

			if (next < len && text[next] == ':') {
				ret = cb(text + start, i + 1 - start, depth, ctx);
				if (ret)
					return ret;
			}
		}
	}
	return 0;
}

/* json-c cuts a member name at an escaped NUL: "cmd\u0000x" arrives as "cmd", and may then
 * replace an earlier "cmd". */
static int name_has_nul(const char *name, size_t len, int depth, void *ctx)
{
	for (size_t i = 0; i + 5 < len; i++) {
		if (name[i] != '\\')
			continue;
		if (!memcmp(name + i + 1, "u0000", 5))
			return 1;
		i++;
	}
	return 0;
}

struct member_names {
	size_t n;
	char **v; /* decoded, when they are collected */
};

static int count_member(const char *name, size_t len, int depth, void *ctx)
{
	struct member_names *m = ctx;

	m->n += depth == 1;
	return 0;
}

static int collect_member(const char *name, size_t len, int depth, void *ctx)
{
	struct member_names *m = ctx;
	struct json_tokener *tok;
	struct json_object *s;

	if (depth != 1)
		return 0;
	tok = json_tokener_new();
	s = tok ? json_tokener_parse_ex(tok, name, (int)len) : NULL;
	m->v[m->n] = s ? strdup(json_object_get_string(s)) : NULL;
	json_object_put(s);
	json_tokener_free(tok);
	return m->v[m->n++] ? 0 : -ENOMEM;
}

/* json-c keeps the last of two members with one name: {"cmd":"status","cmd":"ban"} would be a
 * ban. A request whose text names more members than the object holds is refused, naming the
 * member that came twice. */
static int check_unique_names(const char *text, size_t len, struct json_object *obj,
			      char *err, size_t errlen)
{
	struct member_names m = {};
	int ret = 0;

	scan_names(text, len, count_member, &m);
	if (m.n == (size_t)json_object_object_length(obj))
		return 0;
	m.v = calloc(m.n, sizeof(*m.v));
	if (!m.v)
		return -ENOMEM;
	m.n = 0;
	ret = scan_names(text, len, collect_member, &m);
	for (size_t i = 0; !ret && i < m.n; i++)
		for (size_t j = 0; !ret && j < i; j++)
			if (!strcmp(m.v[i], m.v[j])) {
				snprintf(err, errlen, "field \"%.40s\" appears twice", m.v[i]);
				ret = -EINVAL;
			}
	for (size_t i = 0; i < m.n; i++)
		free(m.v[i]);
	free(m.v);
	return ret ? ret : -EINVAL; /* the counts differ: some name came twice */
}

static int parse_request(const char *text, size_t len, struct json_object **out, char *err,
			 size_t errlen)
{
	struct json_tokener *tok;
	struct json_object *obj;
	enum json_tokener_error jerr;
	size_t used;
	int ret;

	if (len > XB_CONTROL_REQUEST_MAX) {
		snprintf(err, errlen, "request longer than %d bytes", XB_CONTROL_REQUEST_MAX);
		return -EMSGSIZE;
	}
	if (len == 0 || memchr(text, '\0', len)) {
		snprintf(err, errlen, len ? "request contains a NUL byte" : "empty request");
		return -EINVAL;
	}
	tok = json_tokener_new();
	if (!tok) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	obj = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	used = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!obj || jerr != json_tokener_success) {
		snprintf(err, errlen, "request is not valid JSON: %s",
			 jerr == json_tokener_continue ? "unexpected end"
						       : json_tokener_error_desc(jerr));
		json_object_put(obj);
		return -EINVAL;
	}
	while (used < len && (text[used] == ' ' || text[used] == '\t' || text[used] == '\r'))
		used++;
	if (used != len || !json_object_is_type(obj, json_type_object)) {
		snprintf(err, errlen, used != len ? "trailing data after the JSON request"
						  : "request must be a JSON object");
		json_object_put(obj);
		return -EINVAL;
	}
	if (scan_names(text, len, name_has_nul, NULL)) {
		snprintf(err, errlen, "a field name contains a NUL character (\\u0000)");
		json_object_put(obj);
		return -EINVAL;
	}
	ret = check_unique_names(text, len, obj, err, errlen);
	if (ret) {
		json_object_put(obj);
		return ret;
	}
	*out = obj;
	return 0;
}

static int dispatch(struct request *r)
{
	const struct xb_control_hooks *hooks = r->ctx->hooks;
	const struct command *c;
	const char *name = NULL;
	int ret = field_string(r, XB_F(CMD), true, &name);

	if (ret)
		return ret;
	c = find_command(name);
	if (!c) {
		/* Only a name of the protocol goes to the daemon, and what the daemon answers is the
		 * reply, whatever its errno: a command of its own that fails for want of a file is
		 * not an unknown command. */
		if (hooks && hooks->command && xb_control_cmd_of(name) >= 0)
			return hooks->command(name, r->req, r->reply, r->err, r->errlen,
					      r->ctx->user);
		snprintf(r->err, r->errlen, "unknown command \"%.40s\"", name);
		return -EINVAL;
	}
	ret = check_fields(r, c);
	if (ret)
		return ret;
	if (c->changes && r->ctx->read_only) {
		snprintf(r->err, r->errlen, "\"%s\" changes state and this connection is read-only",
			 xb_control_commands[c->cmd].name);
		return -EPERM;
	}
	return c->run(r);
}

/* Error messages quote what the client sent, and json-c copies bytes >= 0x80 into a reply as
 * they are: a client's invalid UTF-8 (or a character cut in half by "%.40s") would make the
 * reply invalid JSON, and control characters would reach the CLI's terminal. So every byte of
 * a message that is not printable ASCII is written as \xNN (xb_quote); our own text is plain
 * ASCII. */
char *xb_control_error_reply(const char *message)
{
	struct json_object *obj = json_object_new_object();
	char escaped[4 * XB_ERRLEN + 1];
	char *line;

	if (!obj)
		return NULL;
	xb_quote(message, escaped, sizeof(escaped));
	json_object_object_add(obj, XB_F(OK), json_object_new_boolean(false));
	json_object_object_add(obj, XB_F(ERROR), json_object_new_string(escaped));
	line = strdup(xb_json_line(obj));
	json_object_put(obj);
	return line;
}

int xb_control_handle(const struct xb_control_ctx *ctx, const char *request, size_t len,
		      char **reply)
{
	char err[XB_ERRLEN] = "";
	struct request r = { .ctx = ctx, .err = err, .errlen = sizeof(err) };
	int ret;

	*reply = NULL;
	r.reply = json_object_new_object();
	if (!r.reply)
		return -ENOMEM;
	json_object_object_add(r.reply, XB_F(OK), json_object_new_boolean(true));
	ret = parse_request(request, len, &r.req, err, sizeof(err));
	if (!ret)
		ret = dispatch(&r);
	if (ret) {
		if (!err[0])
			snprintf(err, sizeof(err), "%s", strerror(-ret));
		*reply = xb_control_error_reply(err);
	} else {
		*reply = strdup(xb_json_line(r.reply));
	}
	json_object_put(r.req);
	json_object_put(r.reply);
	return *reply ? 0 : -ENOMEM;
}
