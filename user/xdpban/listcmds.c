/* listcmds.c - `xdpban lists load|clear|add|del|show` and the file and line `query` names. With a
 * daemon they are requests on its socket (docs/control.md), a load's files opened here with
 * this user's rights and sent open with it (standard input too); without one this process does
 * what the daemon would, with the daemon's own code (user/common/runlists.h) on the pinned
 * maps, under the pin-directory lock: it reads the daemon's config (--config, else
 * XBD_CONF_DEFAULT) for its lists and its state file, beside which the runtime lists are
 * kept, so that the daemon's next start finds exactly what was loaded. The never-ban layer is
 * the exception: its entries live in the exempt tries, which only the daemon writes, so that
 * without one a change of it is refused (by the same code, runlists.h). */
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "cli.h"
#include "conf_load.h"
#include "control_fields.h"
#include "files.h"
#include "runlists.h"

#define ARGS(type, field) offsetof(type, field)

const struct param lists_load_params[] = {
	{ "FILE...", 0, P_FILES, true, ARGS(struct lists_load_args, files), NULL,
	  "list files in the config's list format (zmap blocklist, FireHOL .netset, Spamhaus "
	  "DROP; gzip read directly), at most 64; - (or /dev/stdin) reads standard input, "
	  "named <stdin>" },
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

#define LAYER_HELP "allow, deny, trusted or never-ban"

const struct param lists_clear_params[] = {
	{ "LAYER", 0, P_STRING, true, ARGS(struct lists_clear_args, layer), NULL, LAYER_HELP },
	{ "FILE", 0, P_STRING, false, ARGS(struct lists_clear_args, file), NULL,
	  "only this runtime list of the layer, as lists show names it: a path (relative to "
	  "here), - for <stdin>, or <entries> for the layer's single entries" },
	{ NULL },
};

const struct param lists_add_params[] = {
	{ "LAYER", 0, P_STRING, true, ARGS(struct lists_entry_args, layer), NULL, LAYER_HELP },
	{ "PREFIX", 0, P_PREFIX, true, ARGS(struct lists_entry_args, prefix), NULL,
	  "ADDR or ADDR/LEN, with no host bits set" },
	{ "--comment", 0, P_STRING, false, ARGS(struct lists_entry_args, comment), "TEXT",
	  "why it is there (at most 200 bytes, no control characters), shown by lists show "
	  "and query" },
	{ NULL },
};

const struct param lists_del_params[] = {
	{ "LAYER", 0, P_STRING, true, ARGS(struct lists_entry_args, layer), NULL, LAYER_HELP },
	{ "PREFIX", 0, P_PREFIX, true, ARGS(struct lists_entry_args, prefix), NULL,
	  "the entry's prefix, as added" },
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

/* The files a request sends open: v[0..n), opened by open(job) once the daemon or the maps
 * are found, so that a command says first whether it can reach either. */
struct sent_files {
	int (*open)(void *job); /* EXIT_OK, or one line and EXIT_FAIL */
	void *job;
	const int *v;
	size_t n;
};

/* One list command: through the daemon, or here on the maps. */
static int run_lists(const struct cli *cli, struct json_object *req, bool changes,
		     int (*direct)(struct xbd_lists_ctx *ctx, const void *args,
				   struct json_object *reply, char *err, size_t errlen),
		     const void *args, const struct sent_files *files, struct json_object **reply)
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
	if (files)
		ret = files->open(files->job); /* says why it fails */
	if (ret) {
		*reply = NULL;
	} else if (!backend_direct(&b)) {
		ret = backend_call_fds(&b, req, files ? files->v : NULL, files ? files->n : 0, reply);
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

/* The files open, each with its name: its absolute path (it names the list in `lists show`
 * and `query`, and a later load of the same path replaces it), or XBD_LIST_STDIN. */
struct load_job {
	const struct lists_load_args *a;
	__u32 verdict;
	char *names[CLI_FILES_MAX];
	int fds[CLI_FILES_MAX]; /* -1 until opened */
	size_t n;               /* named so far */
};

static int direct_load(struct xbd_lists_ctx *ctx, const void *args, struct json_object *reply,
		       char *err, size_t errlen)
{
	const struct load_job *j = args;

	return xbd_lists_ctx_load(ctx, j->verdict, (const char *const *)j->names, j->fds, j->n,
				  j->a->ignore_errors, reply, err, errlen);
}

static bool is_stdin(const char *file)
{
	return !strcmp(file, "-") || !strcmp(file, "/dev/stdin");
}

/* Waits until standard input has bytes or its end, when it was left non-blocking. */
static ssize_t read_stdin(char *buf, size_t len)
{
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	ssize_t n;

	while ((n = read(STDIN_FILENO, buf, len)) < 0 &&
	       (errno == EINTR || (errno == EAGAIN && poll(&pfd, 1, -1) >= 0)))
		;
	return n;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
		}
	}
	return 0;
}

/* Standard input, copied whole into a memory file: the reader (the daemon's, or this
 * process's) then gets a regular file like every other list and never waits on a pipe whose
 * writer it cannot see, and a list larger than a list file may be stops the copy. A file
 * descriptor, or -1 after one line. */
static int stdin_file(void)
{
	int fd = memfd_create("xdpban-stdin", MFD_CLOEXEC), ret = 0;
	char buf[65536];
	off_t total = 0;
	ssize_t n;

	if (fd < 0) {
		pr_warn("cannot hold list %s: %s", XBD_LIST_STDIN, strerror(errno));
		return -1;
	}
	while (!ret && (n = read_stdin(buf, sizeof(buf))) != 0) {
		ret = n < 0 ? -errno : 0;
		total += n > 0 ? n : 0;
		if (!ret && total > XBD_LIST_FILE_MAX)
			ret = -EFBIG;
		if (!ret)
			ret = write_all(fd, buf, (size_t)n);
	}
	if (!ret && lseek(fd, 0, SEEK_SET) < 0)
		ret = -errno;
	if (ret == -EFBIG)
		pr_warn("list %s holds more than %d bytes, the most a list file may", XBD_LIST_STDIN,
			XBD_LIST_FILE_MAX);
	else if (ret)
		pr_warn("cannot read list %s: %s", XBD_LIST_STDIN, strerror(-ret));
	if (ret) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Names the next file of j: its absolute path (the daemon's working directory is not ours),
 * or XBD_LIST_STDIN, which is read now, before the daemon is asked: it may take long, and a
 * daemon does not wait for a request that long. */
static int name_next(struct load_job *j, const char *cwd)
{
	const char *f = j->a->files.v[j->n];

	j->fds[j->n] = -1;
	if (is_stdin(f))
		j->names[j->n] = strdup(XBD_LIST_STDIN);
	else if (asprintf(&j->names[j->n], "%s%s%s", f[0] == '/' ? "" : cwd,
			  f[0] == '/' ? "" : "/", f) < 0)
		j->names[j->n] = NULL;
	if (!j->names[j->n]) {
		pr_warn("out of memory");
		return EXIT_FAIL;
	}
	j->n++;
	if (is_stdin(f) && (j->fds[j->n - 1] = stdin_file()) < 0)
		return EXIT_FAIL;
	return EXIT_OK;
}

/* Opens the files of j by path with this user's rights: the daemon opens no path for a
 * client. What each is, is the reader's to check (a FIFO is opened without waiting, and never
 * read). */
static int open_paths(void *job)
{
	struct load_job *j = job;
	char err[XB_ERRLEN];

	for (size_t i = 0; i < j->n; i++) {
		if (j->fds[i] < 0 && xbd_open_read(j->names[i], "list", &j->fds[i], err, sizeof(err))) {
			pr_warn("%s", err);
			return EXIT_FAIL;
		}
	}
	return EXIT_OK;
}

static void load_job_free(struct load_job *j)
{
	for (size_t i = 0; i < j->n; i++) {
		free(j->names[i]);
		if (j->fds[i] >= 0)
			close(j->fds[i]);
	}
}

/* Standard input is read once: it cannot be two lists. */
static int check_stdin_once(const struct cli_files *files)
{
	size_t n = 0;

	for (size_t i = 0; i < files->n; i++)
		n += is_stdin(files->v[i]);
	if (n < 2)
		return EXIT_OK;
	pr_warn("lists load: standard input ('-' or /dev/stdin) can be read only once");
	return EXIT_USAGE;
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
	ret = check_stdin_once(&a->files);
	if (ret)
		return ret;
	j.verdict = a->allow ? XDPBAN_POLICY_ALLOWED
		    : a->deny ? XDPBAN_POLICY_DENY
			      : XDPBAN_POLICY_TRUSTED;
	if (!getcwd(cwd, sizeof(cwd))) {
		pr_warn("cannot find the working directory: %s", strerror(errno));
		return EXIT_FAIL;
	}
	while (!ret && j.n < a->files.n)
		ret = name_next(&j, cwd);
	req = ret ? NULL : lists_request(XB_CMD(LISTS_LOAD), xbd_layer_name(j.verdict));
	files = req ? json_object_new_array() : NULL;
	for (size_t i = 0; files && i < j.n; i++)
		json_object_array_add(files, json_object_new_string(j.names[i]));
	if (!ret && (!req || !files)) {
		pr_warn("out of memory");
		ret = EXIT_FAIL;
	}
	if (ret) {
		json_object_put(req);
	} else {
		json_object_object_add(req, XB_F(FILES), files);
		if (a->ignore_errors)
			json_object_object_add(req, XB_F(IGNORE_ERRORS),
					       json_object_new_boolean(1));
		ret = run_lists(cli, req, true, direct_load, &j,
				&(struct sent_files){ open_paths, &j, j.fds, j.n }, &reply);
	}
	load_job_free(&j);
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

/* ---- clear, add and del ---- */

/* A layer named on the command line. EXIT_OK, or one line and EXIT_USAGE. */
static int parse_layer(const char *cmd, const char *name, __u32 *verdict)
{
	if (!xbd_layer_parse(name, verdict))
		return EXIT_OK;
	pr_warn("%s: unknown layer '%s': %s", cmd, name, LAYER_HELP);
	return EXIT_USAGE;
}

struct clear_job {
	__u32 verdict;
	char *file; /* the list's name, or NULL for all */
};

static int direct_clear(struct xbd_lists_ctx *ctx, const void *args, struct json_object *reply,
			char *err, size_t errlen)
{
	const struct clear_job *j = args;

	return xbd_lists_ctx_clear(ctx, j->verdict, j->file, reply, err, errlen);
}

/* The name `lists clear` gives a runtime list as `lists load` named it: <entries> and <stdin>
 * as they are, - for <stdin>, a path made absolute. NULL when out of memory. */
static char *list_name(const char *file)
{
	char cwd[PATH_MAX], *name = NULL;

	if (!strcmp(file, XBD_LIST_ENTRIES) || !strcmp(file, XBD_LIST_STDIN) || is_stdin(file))
		return strdup(is_stdin(file) ? XBD_LIST_STDIN : file);
	if (file[0] == '/')
		return strdup(file);
	if (!getcwd(cwd, sizeof(cwd)) || asprintf(&name, "%s/%s", cwd, file) < 0)
		return NULL;
	return name;
}

int do_lists_clear(const struct cli *cli, const void *args)
{
	const struct lists_clear_args *a = args;
	struct clear_job j = {};
	struct json_object *reply = NULL, *req;
	char n[32];
	int ret = parse_layer("lists clear", a->layer, &j.verdict);

	if (ret)
		return ret;
	if (a->file && !(j.file = list_name(a->file))) {
		pr_warn("cannot name %s: %s", a->file, strerror(errno ? errno : ENOMEM));
		return EXIT_FAIL;
	}
	req = lists_request(XB_CMD(LISTS_CLEAR), a->layer);
	if (req && j.file)
		json_object_object_add(req, XB_F(CLEAR_FILE), json_object_new_string(j.file));
	ret = run_lists(cli, req, true, direct_clear, &j, NULL, &reply);
	if (!ret) {
		num_text(reply, XB_F(CLEARED), n, sizeof(n));
		if (j.file)
			printf("cleared runtime list %s of the %s layer\n", j.file, a->layer);
		else
			printf("cleared %s runtime %s of the %s layer (the config's lists stay)\n", n,
			       xb_plural(strtoull(n, NULL, 10), "list", "lists"), a->layer);
		warn_left_out(reply);
	}
	json_object_put(reply);
	free(j.file);
	return ret;
}

struct entry_job {
	const struct lists_entry_args *a;
	__u32 verdict;
};

static int direct_add(struct xbd_lists_ctx *ctx, const void *args, struct json_object *reply,
		      char *err, size_t errlen)
{
	const struct entry_job *j = args;

	return xbd_lists_ctx_add(ctx, j->verdict, &j->a->prefix, j->a->comment, reply, err, errlen);
}

static int direct_del(struct xbd_lists_ctx *ctx, const void *args, struct json_object *reply,
		      char *err, size_t errlen)
{
	const struct entry_job *j = args;

	return xbd_lists_ctx_del(ctx, j->verdict, &j->a->prefix, reply, err, errlen);
}

/* The request of `lists add` or `lists del`, checked here first: bad input is a usage error
 * that reaches no daemon. EXIT_OK, or one line and EXIT_USAGE. */
static int entry_request(const char *cmd, const struct lists_entry_args *a, struct entry_job *j,
			 struct json_object **req)
{
	char err[XB_ERRLEN], text[64];
	int ret = parse_layer(cmd, a->layer, &j->verdict);

	if (ret)
		return ret;
	if (xbd_entry_check(&a->prefix, a->comment, err, sizeof(err))) {
		pr_warn("%s: %s", cmd, err);
		return EXIT_USAGE;
	}
	j->a = a;
	*req = lists_request(strcmp(cmd, "lists add") ? XB_CMD(LISTS_DEL) : XB_CMD(LISTS_ADD),
			     a->layer);
	xb_prefix_format(&a->prefix, text, sizeof(text));
	if (*req)
		json_object_object_add(*req, XB_F(PREFIX), json_object_new_string(text));
	if (*req && a->comment)
		json_object_object_add(*req, XB_F(COMMENT), json_object_new_string(a->comment));
	return EXIT_OK;
}

int do_lists_add(const struct cli *cli, const void *args)
{
	struct json_object *req = NULL, *reply = NULL, *added;
	struct entry_job j;
	char text[64];
	int ret = entry_request("lists add", args, &j, &req);

	if (!ret)
		ret = run_lists(cli, req, true, direct_add, &j, NULL, &reply);
	if (ret)
		return ret;
	xb_prefix_format(&j.a->prefix, text, sizeof(text));
	if (json_object_object_get_ex(reply, XB_F(ADDED), &added) && !json_object_get_boolean(added))
		printf("changed the comment of %s in the %s layer\n", text, j.a->layer);
	else
		printf("added %s to the %s layer\n", text, j.a->layer);
	warn_left_out(reply);
	json_object_put(reply);
	return EXIT_OK;
}

int do_lists_del(const struct cli *cli, const void *args)
{
	struct json_object *req = NULL, *reply = NULL;
	struct entry_job j;
	char text[64];
	int ret = entry_request("lists del", args, &j, &req);

	if (!ret)
		ret = run_lists(cli, req, true, direct_del, &j, NULL, &reply);
	if (ret)
		return ret;
	xb_prefix_format(&j.a->prefix, text, sizeof(text));
	printf("deleted %s from the %s layer\n", text, j.a->layer);
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
			    NULL, &reply);

	if (ret)
		return ret;
	if (*json)
		render_json(reply);
	else
		render_lists_show(reply);
	json_object_put(reply);
	return EXIT_OK;
}

/* Whether a query reply names an entry of a list: a policy list's, or a never-ban one. */
static bool names_list_entry(struct json_object *reply)
{
	struct json_object *id, *why;

	if (json_object_object_get_ex(reply, XB_F(EXEMPT_WHY), &why) &&
	    json_object_is_type(why, json_type_string) &&
	    !strcmp(json_object_get_string(why), xb_exempt_origin_name(XDPBAN_EXEMPT_LIST)))
		return true;
	return json_object_object_get_ex(reply, XB_F(POLICY_LIST), &id) && id &&
	       (__u32)json_object_get_int64(id) != XDPBAN_LIST_MANUAL_BAN &&
	       (__u32)json_object_get_int64(id) != XDPBAN_LIST_DEFAULT;
}

void lists_direct_source(const struct cli *cli, struct backend *b, struct json_object *reply)
{
	struct direct *d;

	if (!names_list_entry(reply))
		return;
	d = direct_open(cli, &b->maps);
	if (d) {
		xbd_lists_ctx_source(&d->ctx, reply);
		direct_free(d);
	}
}
