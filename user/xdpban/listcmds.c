/* listcmds.c - `xdpban lists load|clear|show` and the file and line `query` names. With a
 * daemon they are requests on its socket (docs/control.md); without one this process does
 * what the daemon would, with the daemon's own code (user/common/runlists.h) on the pinned
 * maps, under the pin-directory lock: it reads the daemon's config (--config, else
 * XBD_CONF_DEFAULT) for its lists and its state file, beside which the runtime lists are
 * kept, so that the daemon's next start finds exactly what was loaded. */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "conf_load.h"
#include "control_fields.h"
#include "runlists.h"

#define ARGS(type, field) offsetof(type, field)

const struct param lists_load_params[] = {
	{ "FILE...", 0, P_FILES, true, ARGS(struct lists_load_args, files), NULL,
	  "list files in the config's list format (zmap blocklist, FireHOL .netset, Spamhaus "
	  "DROP; gzip read directly), at most 64" },
	{ "--allow", 0, P_FLAG, false, ARGS(struct lists_load_args, allow), NULL,
	  "into the allow layer (allow-only mode)" },
	{ "--deny", 0, P_FLAG, false, ARGS(struct lists_load_args, deny), NULL,
	  "into the deny layer" },
	{ "--trusted", 0, P_FLAG, false, ARGS(struct lists_load_args, trusted), NULL,
	  "into the trusted layer" },
	{ "--ignore-errors", 0, P_FLAG, false, ARGS(struct lists_load_args, ignore_errors), NULL,
	  "skip bad lines (counted, the first few named) instead of refusing the load" },
	{ NULL },
};

const struct param lists_clear_params[] = {
	{ "LAYER", 0, P_STRING, true, ARGS(struct lists_clear_args, layer), NULL,
	  "allow, deny or trusted" },
	{ NULL },
};

/* The daemon's view, rebuilt in this process. */
struct direct {
	struct xbd_conf conf;
	struct xbd_lists config;
	struct xbd_runtime rt;
	char *store;
	struct xbd_lists_ctx ctx;
};

static void direct_free(struct direct *d)
{
	xbd_lists_free(&d->config);
	xbd_runtime_free(&d->rt);
	free(d->store);
	xbd_conf_free(&d->conf);
	free(d);
}

static struct direct *direct_open(const struct cli *cli, const struct xb_maps *maps)
{
	const char *path = cli->config ? cli->config : XBD_CONF_DEFAULT;
	struct direct *d = calloc(1, sizeof(*d));
	struct xbd_list_caps caps;
	char err[XB_ERRLEN];
	int ret;

	if (!d) {
		pr_warn("out of memory");
		return NULL;
	}
	/* The default config may be missing (a plain `ip link` attachment): then its defaults, as
	 * for the other commands; a config given with --config must be there. */
	ret = cli->config ? xbd_conf_load(path, &d->conf, err, sizeof(err))
			  : xbd_conf_load_or_defaults(path, &d->conf, err, sizeof(err));
	if (ret) {
		pr_warn("no daemon answers, and without one the lists need its config: %s", err);
		free(d);
		return NULL;
	}
	ret = xbd_list_caps_of(maps, &caps, err, sizeof(err));
	if (!ret)
		ret = xbd_lists_read(&d->conf, &caps, &d->config, NULL, err, sizeof(err));
	if (!ret) {
		d->store = xbd_runtime_store(d->conf.state_file);
		ret = xbd_runtime_load(d->store, &d->rt, err, sizeof(err));
	}
	if (ret) {
		pr_warn("%s", err);
		direct_free(d);
		return NULL;
	}
	d->ctx = (struct xbd_lists_ctx){ .maps = maps, .conf = &d->conf, .config = &d->config,
					 .rt = &d->rt, .store = d->store };
	if (!d->store)
		pr_warn("note: [state] file = off in %s: runtime lists cannot be kept without a daemon",
			path);
	return d;
}

/* One list command: through the daemon, or here on the maps. */
static int run_lists(const struct cli *cli, struct json_object *req, bool changes,
		     int (*direct)(struct xbd_lists_ctx *ctx, const void *args,
				   struct json_object *reply, char *err, size_t errlen),
		     const void *args, struct json_object **reply)
{
	const struct backend_opts opts = { .changes = changes };
	struct direct *d = NULL;
	char err[XB_ERRLEN];
	struct backend b;
	int ret = req ? backend_open(&b, cli, &opts) : EXIT_FAIL;

	if (ret) {
		json_object_put(req);
		return ret;
	}
	if (!backend_direct(&b)) {
		ret = backend_call(&b, req, reply);
	} else if (!(d = direct_open(cli, &b.maps))) {
		ret = EXIT_FAIL;
	} else {
		*reply = json_object_new_object();
		if (direct(&d->ctx, args, *reply, err, sizeof(err))) {
			pr_warn("%s", err);
			ret = EXIT_FAIL;
		} else if (changes) {
			pr_warn("note: no daemon answers on %s; changed the maps in %s directly",
				cli->socket_path, b.pin_dir);
		}
		direct_free(d);
	}
	backend_close(&b);
	json_object_put(req);
	if (ret) {
		json_object_put(*reply);
		*reply = NULL;
	}
	return ret;
}

static struct json_object *lists_request(const char *cmd, const char *layer)
{
	struct json_object *req = json_object_new_object();

	if (!req)
		return NULL;
	json_object_object_add(req, XB_F(CMD), json_object_new_string(cmd));
	if (layer)
		json_object_object_add(req, XB_F(LAYER), json_object_new_string(layer));
	return req;
}

/* ---- load ---- */

/* The files as absolute paths: the daemon's working directory is not ours. */
struct load_job {
	const struct lists_load_args *a;
	__u32 verdict;
	char *paths[CLI_FILES_MAX];
};

static int direct_load(struct xbd_lists_ctx *ctx, const void *args, struct json_object *reply,
		       char *err, size_t errlen)
{
	const struct load_job *j = args;

	return xbd_lists_ctx_load(ctx, j->verdict, (const char *const *)j->paths, j->a->files.n,
				  j->a->ignore_errors, reply, err, errlen);
}

static const char *num_text(struct json_object *o, const char *key, char *buf, size_t len)
{
	struct json_object *v = NULL;

	json_object_object_get_ex(o, key, &v);
	snprintf(buf, len, "%s", v ? json_object_get_string(v) : "?");
	return buf;
}

/* The compile's note of what it left to the trie for room (xbd_lists_left_out), if any. */
static void warn_left_out(struct json_object *reply)
{
	struct json_object *v;

	if (json_object_object_get_ex(reply, XB_F(LEFT_OUT), &v))
		pr_warn("%s", json_object_get_string(v));
}

int do_lists_load(const struct cli *cli, const void *args)
{
	const struct lists_load_args *a = args;
	struct load_job j = { .a = a };
	struct json_object *req, *files, *reply = NULL, *first;
	char cwd[PATH_MAX], n[32], e[32], s[32];
	int layers = a->allow + a->deny + a->trusted, ret;

	if (layers != 1) {
		pr_warn("lists load: give one of --allow, --deny or --trusted");
		return EXIT_USAGE;
	}
	j.verdict = a->allow ? XDPBAN_POLICY_ALLOWED
		    : a->deny ? XDPBAN_POLICY_DENY
			      : XDPBAN_POLICY_TRUSTED;
	if (!getcwd(cwd, sizeof(cwd))) {
		pr_warn("cannot find the working directory: %s", strerror(errno));
		return EXIT_FAIL;
	}
	req = lists_request(XB_CMD(LISTS_LOAD), xbd_layer_name(j.verdict));
	files = json_object_new_array();
	ret = req && files ? EXIT_OK : EXIT_FAIL;
	for (size_t i = 0; i < a->files.n && !ret; i++) {
		const char *f = a->files.v[i];

		if (asprintf(&j.paths[i], "%s%s%s", f[0] == '/' ? "" : cwd,
			     f[0] == '/' ? "" : "/", f) < 0) {
			j.paths[i] = NULL;
			ret = EXIT_FAIL;
		} else {
			json_object_array_add(files, json_object_new_string(j.paths[i]));
		}
	}
	if (ret) {
		pr_warn("out of memory");
		json_object_put(files);
		json_object_put(req);
	} else {
		json_object_object_add(req, XB_F(FILES), files);
		if (a->ignore_errors)
			json_object_object_add(req, XB_F(IGNORE_ERRORS),
					       json_object_new_boolean(1));
		ret = run_lists(cli, req, true, direct_load, &j, &reply);
	}
	for (size_t i = 0; i < a->files.n; i++)
		free(j.paths[i]);
	if (ret)
		return ret;
	num_text(reply, XB_F(LOADED), n, sizeof(n));
	num_text(reply, XB_F(ENTRIES), e, sizeof(e));
	printf("loaded %s %s into the %s layer: %s %s", n,
	       xb_plural(strtoull(n, NULL, 10), "file", "files"), xbd_layer_name(j.verdict), e,
	       xb_plural(strtoull(e, NULL, 10), "entry", "entries"));
	if (strcmp(num_text(reply, XB_F(SKIPPED), s, sizeof(s)), "0"))
		printf(", %s bad %s skipped", s, xb_plural(strtoull(s, NULL, 10), "line", "lines"));
	printf("\n");
	fflush(stdout); /* the summary, then the lines it counts */
	if (json_object_object_get_ex(reply, XB_F(SKIPPED_FIRST), &first))
		for (size_t i = 0; i < json_object_array_length(first); i++)
			pr_warn("skipped: %s",
				json_object_get_string(json_object_array_get_idx(first, i)));
	warn_left_out(reply);
	json_object_put(reply);
	return EXIT_OK;
}

/* ---- clear ---- */

static int direct_clear(struct xbd_lists_ctx *ctx, const void *args, struct json_object *reply,
			char *err, size_t errlen)
{
	return xbd_lists_ctx_clear(ctx, *(const __u32 *)args, reply, err, errlen);
}

int do_lists_clear(const struct cli *cli, const void *args)
{
	const struct lists_clear_args *a = args;
	struct json_object *reply = NULL;
	char n[32];
	__u32 verdict;
	int ret;

	if (xbd_layer_parse(a->layer, &verdict)) {
		pr_warn("lists clear: unknown layer '%s': allow, deny or trusted", a->layer);
		return EXIT_USAGE;
	}
	ret = run_lists(cli, lists_request(XB_CMD(LISTS_CLEAR), a->layer), true, direct_clear,
			&verdict, &reply);
	if (ret)
		return ret;
	num_text(reply, XB_F(CLEARED), n, sizeof(n));
	printf("cleared %s runtime %s of the %s layer (the config's lists stay)\n", n,
	       xb_plural(strtoull(n, NULL, 10), "list", "lists"), a->layer);
	warn_left_out(reply);
	json_object_put(reply);
	return EXIT_OK;
}

/* ---- show ---- */

static int direct_show(struct xbd_lists_ctx *ctx, const void *args, struct json_object *reply,
		       char *err, size_t errlen)
{
	return xbd_lists_ctx_show(ctx, reply, err, errlen);
}

int do_lists_show(const struct cli *cli, const void *args)
{
	const bool *json = args; /* struct json_args */
	struct json_object *reply = NULL;
	int ret = run_lists(cli, lists_request(XB_CMD(LISTS_SHOW), NULL), false, direct_show, NULL,
			    &reply);

	if (ret)
		return ret;
	if (*json)
		render_json(reply);
	else
		render_lists_show(reply);
	json_object_put(reply);
	return EXIT_OK;
}

void lists_direct_source(const struct cli *cli, struct backend *b, struct json_object *reply)
{
	struct json_object *id;
	struct direct *d;

	if (!json_object_object_get_ex(reply, XB_F(POLICY_LIST), &id) ||
	    (__u32)json_object_get_int64(id) == XDPBAN_LIST_MANUAL_BAN ||
	    (__u32)json_object_get_int64(id) == XDPBAN_LIST_DEFAULT)
		return;
	d = direct_open(cli, &b->maps);
	if (d) {
		xbd_lists_ctx_source(&d->ctx, reply);
		direct_free(d);
	}
}
