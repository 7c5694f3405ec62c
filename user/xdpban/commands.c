/* commands.c - one do_<cmd> function per command and the option table it parses. A command
 * validates everything it was given before it sends anything: a usage error changes nothing.
 * Commands build a control request (docs/control.md) and leave the transport to backend.c.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include "banview.h"
#include "cli.h"
#include "control.h"
#include "control_fields.h"
#include "runlists.h"
#include "top.h"

#define ARGS(type, field) offsetof(type, field)

/* One request through a backend of its own. */
static int send_request(const struct cli *cli, struct json_object *request,
			const struct backend_opts *opts, struct json_object **reply)
{
	struct backend b;
	int ret;

	if (!request) {
		pr_warn("out of memory");
		return EXIT_FAIL;
	}
	ret = backend_open(&b, cli, opts);
	if (!ret) {
		ret = backend_call(&b, request, reply);
		backend_close(&b);
	}
	json_object_put(request);
	return ret;
}

/* Prints a reply as JSON, or its member (the whole reply if NULL) with render; frees it. */
static void print_reply(struct json_object *reply, bool json, const char *member,
			void (*render)(struct json_object *))
{
	struct json_object *part;

	if (json)
		render_json(reply);
	else if (render)
		render(member && json_object_object_get_ex(reply, member, &part) ? part : reply);
	json_object_put(reply);
}

/* Sends request (taking it) and prints the reply. */
static int run_request(const struct cli *cli, struct json_object *request,
		       const struct backend_opts *opts, bool json, const char *member,
		       void (*render)(struct json_object *))
{
	struct json_object *reply = NULL;
	int ret = send_request(cli, request, opts, &reply);

	if (!ret)
		print_reply(reply, json, member, render);
	return ret;
}

static struct json_object *request_new(const char *cmd)
{
	struct json_object *req = json_object_new_object();

	if (req)
		json_object_object_add(req, XB_F(CMD), json_object_new_string(cmd));
	return req;
}

static void add_prefix(struct json_object *req, const char *name, const struct xb_prefix *p)
{
	char text[64];

	xb_prefix_format(p, text, sizeof(text));
	json_object_object_add(req, name, json_object_new_string(text));
}

static const struct backend_opts reads = { 0 };
static const struct backend_opts changes = { .changes = true };

/* status, stats, bans, lists: no arguments but --json. */
struct json_args {
	bool json;
};

static const struct param json_params[] = {
	{ "--json", 0, P_FLAG, false, ARGS(struct json_args, json), NULL, "print JSON" },
	{ NULL },
};

static int do_status(const struct cli *cli, const void *args)
{
	const struct json_args *a = args;

	return run_request(cli, request_new(XB_CMD(STATUS)), &reads, a->json, NULL, render_status);
}

static int do_stats(const struct cli *cli, const void *args)
{
	const struct json_args *a = args;

	return run_request(cli, request_new(XB_CMD(STATS)), &reads, a->json, XB_F(STATS),
			   render_stats);
}

/* What the text listing carries from row to row. */
struct ban_rows {
	bool header_done;
	bool observed;   /* observe mode: the listing ends with its note */
	time_t stamp_of; /* the second `stamp` holds; 0: none yet */
	char stamp[32];  /* bans started in the same second share one formatting */
};

static int print_ban(const struct xb_ban_info *ban, void *ctx)
{
	struct ban_rows *rows = ctx;
	const char *started = NULL;

	if (ban->started && ban->started == rows->stamp_of) {
		started = rows->stamp;
	} else if (ban->started && !xb_time_format(ban->started, rows->stamp,
						   sizeof(rows->stamp))) {
		rows->stamp_of = ban->started;
		started = rows->stamp;
	}
	render_ban_row(&rows->header_done,
		       &(struct ban_row){ .prefix = ban->prefix, .reason = ban->reason,
					  .count = ban->count,
					  .drops = ban->has_drops ? (long long)ban->drops : -1,
					  .seconds_left = ban->seconds_left, .started = started });
	rows->observed |= ban->observed;
	return 0;
}

#define BANS_STDOUT_BUFFER (1 << 20) /* a million bans leave in ~150 writes, not ~36,000 */

/* Without a daemon the bans are printed as they are read: a million of them would take
 * seconds to render into one reply and parse back. The fields are the same, and so is the
 * JSON text (xb_json_bans_write writes what xb_json_bans serialises to). */
static int print_bans_direct(const struct xb_maps *maps, bool json)
{
	struct ban_rows rows = { .header_done = false };
	int ret;

	setvbuf(stdout, NULL, _IOFBF, BANS_STDOUT_BUFFER); /* before anything is printed */
	if (json) {
		fputs("{\"bans\":", stdout);
		ret = xb_json_bans_write(maps, stdout);
		if (!ret)
			fputs("}\n", stdout);
	} else {
		ret = xb_ban_foreach(maps, print_ban, &rows);
		if (!ret && !rows.header_done)
			printf("no bans\n");
		if (!ret && rows.observed)
			render_observed_note();
	}
	if ((fflush(stdout) || ferror(stdout)) && !ret)
		ret = -EIO;
	if (ret)
		pr_warn("cannot list the bans: %s", strerror(-ret));
	return ret ? EXIT_FAIL : EXIT_OK;
}

struct bans_args {
	bool json;
	const char *reason, *origin, *sort;
	struct xb_prefix within; /* family 0: not given */
};

static const struct param bans_params[] = {
	{ "PREFIX", 0, P_PREFIX, false, ARGS(struct bans_args, within), NULL,
	  "only the bans inside this address or prefix (IPv4 or IPv6)" },
	{ "--reason", 0, P_STRING, false, ARGS(struct bans_args, reason), "R",
	  "only the bans of this reason: errors, manual or reported" },
	{ "--origin", 0, P_STRING, false, ARGS(struct bans_args, origin), "O",
	  "only the bans made here by the data path or a report (local), by hand here (manual), "
	  "from the fleet (remote), or from the fleet node of this name" },
	{ "--sort", 0, P_STRING, false, ARGS(struct bans_args, sort), "KEY",
	  "time (newest first), count (most errors first) or left (least time left first, "
	  "permanent last); ties by prefix" },
	{ "--json", 0, P_FLAG, false, ARGS(struct bans_args, json), NULL, "print JSON" },
	{ NULL },
};

/* The view the arguments ask for. EXIT_OK, or one line and EXIT_USAGE. */
static int bans_view_of(const struct bans_args *a, struct xb_ban_view *v)
{
	char err[XB_ERRLEN];
	int ret = 0;

	memset(v, 0, sizeof(*v));
	if (a->reason) {
		v->by_reason = true;
		ret = xb_reason_parse(a->reason, &v->reason, err, sizeof(err));
	}
	if (!ret && a->origin)
		ret = xb_ban_origin_parse(a->origin, v, err, sizeof(err));
	if (!ret && a->sort)
		ret = xb_ban_sort_parse(a->sort, &v->sort, err, sizeof(err));
	if (ret) {
		pr_warn("%s", err);
		return EXIT_USAGE;
	}
	v->by_prefix = a->within.family != 0;
	v->within = a->within;
	return EXIT_OK;
}

/* A view reads the whole reply, from the daemon or from this process alike; without one, the
 * bans are printed as they are read when no daemon answers. */
static int do_bans(const struct cli *cli, const void *args)
{
	const struct bans_args *a = args;
	struct json_object *request, *reply = NULL;
	struct xb_ban_view view;
	struct backend b;
	int ret = bans_view_of(a, &view);

	if (!ret)
		ret = backend_open(&b, cli, &reads);
	if (ret)
		return ret;
	if (backend_direct(&b) && !xb_ban_view_active(&view)) {
		ret = print_bans_direct(&b.maps, a->json);
	} else {
		request = request_new(XB_CMD(BANS));
		ret = request ? backend_call(&b, request, &reply) : EXIT_FAIL;
		json_object_put(request);
	}
	backend_close(&b);
	if (reply && ((xb_ban_view_active(&view) && xb_ban_view_apply(reply, &view)) ||
		      xb_ban_view_comments(reply))) {
		pr_warn("out of memory");
		json_object_put(reply);
		return EXIT_FAIL;
	}
	if (reply)
		print_reply(reply, a->json, NULL, render_bans);
	return ret;
}

static int do_lists(const struct cli *cli, const void *args)
{
	const struct json_args *a = args;

	return run_request(cli, request_new(XB_CMD(LISTS)), &reads, a->json, NULL,
			   render_lists_reply);
}

struct query_args {
	struct xb_prefix addr;
	bool json;
};

static const struct param query_params[] = {
	{ "ADDR", 0, P_ADDRESS, true, ARGS(struct query_args, addr), NULL,
	  "the address to look up (IPv4 or IPv6)" },
	{ "--json", 0, P_FLAG, false, ARGS(struct query_args, json), NULL, "print JSON" },
	{ NULL },
};

/* Without a daemon, the file and line of the policy entry come from the lists themselves. */
static int do_query(const struct cli *cli, const void *args)
{
	const struct query_args *a = args;
	struct json_object *req = request_new(XB_CMD(QUERY)), *reply = NULL;
	struct backend b;
	int ret = req ? backend_open(&b, cli, &reads) : EXIT_FAIL;

	if (ret) {
		json_object_put(req);
		return ret;
	}
	add_prefix(req, XB_F(ADDR), &a->addr);
	ret = backend_call(&b, req, &reply);
	if (!ret && backend_direct(&b))
		lists_direct_source(cli, &b, reply);
	backend_close(&b);
	json_object_put(req);
	if (!ret)
		print_reply(reply, a->json, NULL, render_query);
	return ret;
}

struct ban_args {
	struct xb_prefix prefix;
	__u32 seconds; /* 0: permanent */
	const char *comment;
};

static const struct param ban_params[] = {
	{ "ADDR[/LEN]", 0, P_PREFIX, true, ARGS(struct ban_args, prefix), NULL,
	  "an address or prefix; a prefix wider than the counting key becomes a prefix ban" },
	{ "--for", 0, P_DURATION, false, ARGS(struct ban_args, seconds), "DURATION",
	  "how long: seconds (90) or numbers with units w, d, h, m, s (15m, 1d12h, 1w), at most "
	  "10 years; default permanent" },
	{ "--comment", 0, P_STRING, false, ARGS(struct ban_args, comment), "TEXT",
	  "a note kept with the ban by the daemon and shown by bans, query and events: up to "
	  "200 bytes of text without control characters; refused without a daemon" },
	{ NULL },
};

/* The arguments as a ban: EXIT_OK, or one line and EXIT_USAGE (bad input, not a refusal by
 * the maps: as a bad prefix is). */
static int ban_args_check(const struct ban_args *a)
{
	char err[XB_ERRLEN];

	if (xb_ban_args_check(&a->prefix, a->seconds, err, sizeof(err)) ||
	    (a->comment && xb_ban_comment_check(a->comment, err, sizeof(err)))) {
		pr_warn("%s", err);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

static void print_banned(const struct ban_args *a)
{
	char text[64], length[XB_DURATION_TEXT_MAX];

	xb_prefix_format(&a->prefix, text, sizeof(text));
	xb_duration_format(a->seconds, length, sizeof(length));
	if (a->seconds)
		printf("banned %s for %s\n", text, length);
	else
		printf("banned %s until unbanned\n", text);
}

/* A comment lives in the daemon: without one it is refused before anything is banned. */
static int do_ban(const struct cli *cli, const void *args)
{
	const struct ban_args *a = args;
	struct json_object *req, *reply = NULL;
	struct backend b;
	int ret = ban_args_check(a);

	if (!ret)
		ret = backend_open(&b, cli, &changes);
	if (ret)
		return ret;
	if (a->comment && backend_direct(&b)) {
		pr_warn("--comment needs xdpband, which keeps comments, and no daemon answers on %s "
			"(%s): nothing was banned", cli->socket_path, cli->socket_from);
		backend_close(&b);
		return EXIT_FAIL;
	}
	req = request_new(XB_CMD(BAN));
	if (req) {
		add_prefix(req, XB_F(PREFIX), &a->prefix);
		json_object_object_add(req, XB_F(SECONDS), json_object_new_int64(a->seconds));
		if (a->comment)
			json_object_object_add(req, XB_F(COMMENT),
					       json_object_new_string(a->comment));
	}
	ret = req ? backend_call(&b, req, &reply) : EXIT_FAIL;
	backend_close(&b);
	json_object_put(req);
	json_object_put(reply);
	if (ret == EXIT_OK)
		print_banned(a);
	return ret;
}

struct unban_args {
	struct xb_prefix prefix; /* family 0: not given */
	bool all;
	const char *reason;
};

static const struct param unban_params[] = {
	{ "ADDR[/LEN]", 0, P_PREFIX, false, ARGS(struct unban_args, prefix), NULL,
	  "the address or prefix as it was banned, or an address whose key (its /64, by "
	  "default, for IPv6) is banned" },
	{ "--all", 0, P_FLAG, false, ARGS(struct unban_args, all), NULL,
	  "lift every ban instead (the ban table's and the manual prefix bans)" },
	{ "--reason", 0, P_STRING, false, ARGS(struct unban_args, reason), "R",
	  "with --all: only the bans of this reason (errors, manual or reported)" },
	{ NULL },
};

/* One of ADDR and --all, and --reason only with --all: EXIT_OK, or one line and EXIT_USAGE. */
static int unban_args_check(const struct unban_args *a)
{
	char err[XB_ERRLEN];
	__u8 reason;

	if (a->all && a->prefix.family) {
		pr_warn("unban: ADDR[/LEN] and --all exclude each other");
		return EXIT_USAGE;
	}
	if (!a->all && !a->prefix.family) {
		pr_warn("unban: missing ADDR[/LEN] or --all (see 'xdpban help unban')");
		return EXIT_USAGE;
	}
	if (a->reason && !a->all) {
		pr_warn("unban: --reason goes with --all");
		return EXIT_USAGE;
	}
	if (a->reason && xb_reason_parse(a->reason, &reason, err, sizeof(err))) {
		pr_warn("%s", err);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* "unbanned P", and when P is the key the address is banned under, which address that was. */
static void render_unban(const struct xb_prefix *asked, struct json_object *reply)
{
	struct json_object *lifted = NULL;
	char text[64];

	xb_prefix_format(asked, text, sizeof(text));
	json_object_object_get_ex(reply, XB_F(PREFIX), &lifted);
	if (lifted && strcmp(json_object_get_string(lifted), text))
		printf("unbanned %s (the key of %s)\n", json_object_get_string(lifted), text);
	else
		printf("unbanned %s\n", text);
}

static int do_unban(const struct cli *cli, const void *args)
{
	const struct unban_args *a = args;
	struct json_object *req, *reply = NULL, *n = NULL;
	int ret = unban_args_check(a);

	if (ret)
		return ret;
	req = request_new(XB_CMD(UNBAN));
	if (req && a->all)
		json_object_object_add(req, XB_F(ALL), json_object_new_boolean(true));
	else if (req)
		add_prefix(req, XB_F(PREFIX), &a->prefix);
	if (req && a->reason)
		json_object_object_add(req, XB_F(REASON), json_object_new_string(a->reason));
	ret = send_request(cli, req, &changes, &reply);
	if (ret == EXIT_OK && a->all) {
		json_object_object_get_ex(reply, XB_F(UNBANNED), &n);
		printf("unbanned %lld %s\n", (long long)json_object_get_int64(n),
		       xb_plural(json_object_get_int64(n), "source", "sources"));
	} else if (ret == EXIT_OK) {
		render_unban(&a->prefix, reply);
	}
	json_object_put(reply);
	return ret;
}

struct report_args {
	struct xb_prefix addr;
	__u32 count;
	bool json;
};

static const struct param report_params[] = {
	{ "ADDR", 0, P_ADDRESS, true, ARGS(struct report_args, addr), NULL,
	  "the source an application saw errors from" },
	{ "COUNT", 0, P_COUNT, false, ARGS(struct report_args, count), NULL,
	  "how many errors (1..1000000000, default 1)" },
	{ "--json", 0, P_FLAG, false, ARGS(struct report_args, json), NULL, "print JSON" },
	{ NULL },
};

static void render_report(struct json_object *r)
{
	struct json_object *result = NULL, *count = NULL;

	json_object_object_get_ex(r, XB_F(RESULT), &result);
	json_object_object_get_ex(r, XB_F(COUNT), &count);
	printf("%s (count %lld)\n", json_object_get_string(result),
	       (long long)json_object_get_int64(count));
}

static int do_report(const struct cli *cli, const void *args)
{
	const struct report_args *a = args;
	const struct backend_opts opts = { .changes = true, .needs_report = true };
	struct json_object *req = request_new(XB_CMD(REPORT));

	if (req) {
		add_prefix(req, XB_F(ADDR), &a->addr);
		json_object_object_add(req, XB_F(COUNT),
				       json_object_new_int64(a->count ? a->count : 1));
	}
	return run_request(cli, req, &opts, a->json, NULL, render_report);
}

struct set_args {
	const char *key;
	const char *value;
	bool reset;
};

static const struct param set_params[] = {
	{ "KEY", 0, P_STRING, true, ARGS(struct set_args, key), NULL,
	  "limit (0..1000000000), window, ban-time (durations, 1s..10 years: 90, 15m, 1d12h), "
	  "ipv6-prefix (32..128), errors, drop (a comma list of" XB_CLASS_WORDS " or none), "
	  "spoof (off, hop or verified), hop-tolerance (0..8), learn (1/N, N a power of two up "
	  "to 65536, or off), mode (enforce, or observe: bans and lists drop nothing); limit.RULE, "
	  "window.RULE, ban-time.RULE for the errors of one class "
	  "or one guarded UDP port (RULE a class or a port: limit.probe, window.6969), or "
	  XB_RULE_INHERIT " to take the next rule's (the port's class protocol, then the global "
	  "value)" },
	{ "VALUE", 0, P_STRING, false, ARGS(struct set_args, value), NULL,
	  "the new value, kept across restarts until a reload" },
	{ "--reset", 0, P_FLAG, false, ARGS(struct set_args, reset), NULL,
	  "instead of a VALUE: give KEY back to the config file's value (needs xdpband)" },
	{ NULL },
};

/* The key and value are checked here, so that a typo is a usage error; for a reset only the
 * key, and an unknown one gets xb_config_set's list of the known ones. */
static int check_set_args(const struct set_args *a, char *err, size_t errlen)
{
	struct xdpban_config scratch = XDPBAN_CONFIG_DEFAULTS;

	if (a->reset && xb_config_key_known(a->key))
		return 0;
	return xb_config_set(&scratch, a->key, a->reset ? "" : a->value, err, errlen);
}

/* A reset needs the config file's value, which only the daemon has. */
static const struct backend_opts reset_opts = { .changes = true, .daemon_only = true };

static int do_set(const struct cli *cli, const void *args)
{
	const struct set_args *a = args;
	struct json_object *req;
	char err[XB_ERRLEN];

	if (!a->value == !a->reset) {
		pr_warn("set %s: give a VALUE or --reset, not %s", a->key,
			a->reset ? "both" : "neither");
		return EXIT_USAGE;
	}
	if (check_set_args(a, err, sizeof(err))) {
		pr_warn("%s", err);
		return EXIT_USAGE;
	}
	req = request_new(XB_CMD(SET));
	if (req) {
		json_object_object_add(req, XB_F(KEY), json_object_new_string(a->key));
		if (a->reset)
			json_object_object_add(req, XB_F(RESET), json_object_new_boolean(true));
		else
			json_object_object_add(req, XB_F(VALUE), json_object_new_string(a->value));
	}
	return run_request(cli, req, a->reset ? &reset_opts : &changes, false, "config",
			   render_config);
}

/* The daemon answers when the reload is over, or says it did not come in time
 * (XB_CONTROL_HELD_MS): this waits a little longer, so that its answer is the one printed. */
static const struct backend_opts reload_opts = {
	.changes = true, .daemon_only = true, .prefix = "reload: ",
	.timeout_ms = XB_CONTROL_HELD_MS + XB_CONTROL_TIMEOUT_MS,
};

/* Without a daemon there is nothing to reload: the maps hold no configuration file. */
static int do_reload(const struct cli *cli, const void *args)
{
	const struct json_args *a = args;

	return run_request(cli, request_new(XB_CMD(RELOAD)), &reload_opts, a->json, NULL,
			   render_reload);
}

/* The subcommands of `lists`, as its help's keys (the completion offers them). */
static const char *lists_key(size_t i)
{
	static const char *const subs[] = { "show", "load", "clear", "add", "del" };

	return i < sizeof(subs) / sizeof(subs[0]) ? subs[i] : NULL;
}

#define COMMAND(n, p, args, text, ...)                                                        \
	{ .name = #n, .run = do_##n, .params = p, .args_size = sizeof(args), .summary = text,    \
	  __VA_ARGS__ }
const struct command cli_commands[] = {
	COMMAND(status, json_params, struct json_args,
		"Show the daemon, the config in force, table use and sizes, and statistics."),
	COMMAND(bans, bans_params, struct bans_args,
		"List the active bans: every one, or those of a reason, an origin or inside a "
		"prefix; in the tables' order, or sorted."),
	COMMAND(query, query_params, struct query_args,
		"Show the counter, ban, policy, exemption and hop count of one address."),
	COMMAND(ban, ban_params, struct ban_args, "Ban an address or prefix."),
	COMMAND(unban, unban_params, struct unban_args,
		"Lift a ban; with --all, every ban, or every ban of one reason."),
	COMMAND(report, report_params, struct report_args,
		"Count errors an application saw from a source; may ban it."),
	COMMAND(set, set_params, struct set_args, "Change one setting of the data path.",
		.keys = xb_config_key),
	COMMAND(reload, json_params, struct json_args,
		"Make the daemon reread its config file and lists; print what changed. Waits for "
		"the outcome: a bad file changes nothing and exits 1 with its FILE:LINE."),
	COMMAND(stats, json_params, struct json_args, "Show packets and bytes per reason."),
	COMMAND(events, events_params, struct events_args,
		"Print the daemon's recent bans, unbans and expiries; with --follow, each as it "
		"happens."),
	COMMAND(top, top_params, struct top_args,
		"A live view: packets and bytes per second per reason, errors and bans per second, "
		"table fill, and the sources with the most errors. Keys: s next sort (e errors, c "
		"count, a source), p or space pause, q quit."),
	COMMAND(lists, json_params, struct json_args,
		"Show the policy lists loaded (prefixes per list), never-ban entries and host "
		"addresses. Subcommands (the keys): lists show, lists load, lists clear, lists add, "
		"lists del.",
		.keys = lists_key),
	{ .name = "lists show", .run = do_lists_show, .params = json_params,
	  .args_size = sizeof(struct json_args),
	  .summary = "Per layer, the files (config or runtime), entries and addresses; the "
		     "addresses allowed, denied and trusted." },
	{ .name = "lists load", .run = do_lists_load, .params = lists_load_params,
	  .args_size = sizeof(struct lists_load_args),
	  .summary = "Load list files into a layer at run time, beside the config's lists; "
		     "kept across restarts until cleared." },
	{ .name = "lists clear", .run = do_lists_clear, .params = lists_clear_params,
	  .args_size = sizeof(struct lists_clear_args),
	  .summary = "Drop the runtime lists of a layer (its single entries are one, "
		     "<entries>), or with FILE only that one; the config's stay. The keys are the "
		     "layers.",
	  .keys = xbd_layer_nth },
	{ .name = "lists add", .run = do_lists_add, .params = lists_add_params,
	  .args_size = sizeof(struct lists_entry_args),
	  .summary = "Add one prefix to a layer at run time, in force at once and kept across "
		     "restarts until deleted; never-ban needs the daemon. The keys are the layers.",
	  .keys = xbd_layer_nth },
	{ .name = "lists del", .run = do_lists_del, .params = lists_del_params,
	  .args_size = sizeof(struct lists_entry_args),
	  .summary = "Delete a prefix that lists add put in a layer. The keys are the layers.",
	  .keys = xbd_layer_nth },
	{ NULL },
};

const struct command *cli_find_sub(int argc, char **argv, int i)
{
	char name[32];

	if (i + 1 < argc && snprintf(name, sizeof(name), "%s %s", argv[i], argv[i + 1]) <
				    (int)sizeof(name) && cli_find_command(name))
		return cli_find_command(name);
	return cli_find_command(argv[i]);
}

const struct command *cli_find_command(const char *name)
{
	for (const struct command *c = cli_commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}
