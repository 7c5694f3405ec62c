/* backend.c - where a CLI request goes. When the daemon's control socket answers, every
 * request goes through it, so the daemon sees every change. Otherwise the same request is
 * handled in this process by the library's handler on the pinned maps, under an exclusive
 * lock of the pin directory for changes, with a note on stderr. Never both for one command.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include "cli.h"
#include "conf_load.h"
#include "control.h"
#include "control_fields.h"

#define CLI_TIMEOUT_MS 30000 /* per read: a daemon listing a million bans needs a moment */

/* Parses a reply line; EXIT_OK with the reply minus "ok", or one line (after prefix) and
 * EXIT_FAIL. */
static int take_reply(const char *line, const char *prefix, struct json_object **reply)
{
	struct json_object *obj = json_tokener_parse(line), *ok, *error = NULL;

	if (!obj || !json_object_is_type(obj, json_type_object) ||
	    !json_object_object_get_ex(obj, XB_F(OK), &ok)) {
		pr_warn("%smalformed reply: %.80s", prefix, line);
		json_object_put(obj);
		return EXIT_FAIL;
	}
	if (!json_object_get_boolean(ok)) {
		json_object_object_get_ex(obj, XB_F(ERROR), &error);
		pr_warn("%s%s", prefix, error ? json_object_get_string(error) : "request failed");
		json_object_put(obj);
		return EXIT_FAIL;
	}
	json_object_object_del(obj, XB_F(OK));
	*reply = obj;
	return EXIT_OK;
}

int backend_take_reply(const char *line, struct json_object **reply)
{
	return take_reply(line, "", reply);
}

/* In direct mode the status says so, and where the maps are. */
static int direct_status(struct json_object *reply, void *user)
{
	json_object_object_add(reply, XB_F(DAEMON), json_object_new_boolean(false));
	json_object_object_add(reply, XB_F(PIN_DIR), json_object_new_string(user));
	return 0;
}

static const struct xb_control_hooks direct_hooks = { .status = direct_status };

#define LOCK_TRIES 60      /* another CLI holds the lock for milliseconds: wait up to ~3 s */
#define LOCK_TRY_US 50000

/* Serialises direct changes by concurrent CLIs, as xdp-tools does on its pin directory.
 * Bounded: a daemon holds the lock for its whole life, so waiting forever would hang. The fd
 * holding the lock (op LOCK_EX or LOCK_SH), or -EBUSY after tries. */
static int lock_dir(const char *dir, int op, int tries)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	for (int i = 0; i < tries; i++) {
		if (i)
			usleep(LOCK_TRY_US);
		if (flock(fd, op | LOCK_NB) == 0)
			return fd;
		if (errno != EWOULDBLOCK)
			break;
	}
	int ret = errno == EWOULDBLOCK ? -EBUSY : -errno;

	close(fd);
	return ret;
}

/* A read needs no lock, but one held says who else is there: the daemon of these maps, whose
 * socket is not the one asked (what a change would be refused for), said before the answer. */
static void note_held_lock(const struct backend *b)
{
	int fd = lock_dir(b->pin_dir, LOCK_SH, 1);

	if (fd >= 0)
		close(fd);
	else if (fd == -EBUSY)
		pr_warn("note: no daemon answers on %s (%s), but %s is locked by another "
			"process (an xdpband whose control socket is elsewhere?); reading the maps "
			"directly",
			b->cli->socket_path, b->cli->socket_from, b->pin_dir);
}

static int open_direct(struct backend *b, const struct backend_opts *opts)
{
	char err[XB_ERRLEN];

	b->pin_dir = b->cli->pin_dir ? b->cli->pin_dir : xb_pin_dir_find();
	if (xb_maps_open_pinned(&b->maps, b->pin_dir, err, sizeof(err))) {
		pr_warn("no daemon answers on %s (%s), and %s", b->cli->socket_path,
			b->cli->socket_from, err);
		return EXIT_FAIL;
	}
	if (opts->needs_report && xb_report_prog_load(&b->maps, err, sizeof(err))) {
		pr_warn("%s", err);
		return EXIT_FAIL;
	}
	if (!opts->changes) {
		note_held_lock(b);
		return EXIT_OK;
	}
	b->lock = lock_dir(b->pin_dir, LOCK_EX, LOCK_TRIES);
	if (b->lock < 0) {
		if (b->lock == -EBUSY)
			pr_warn("%s is locked by another process (an xdpband whose control socket "
				"did not answer?); not changing the maps behind its back", b->pin_dir);
		else
			pr_warn("cannot lock %s: %s", b->pin_dir, strerror(-b->lock));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* The daemon's socket as its config says: the daemon's own parser (user/common/conf_load.c), so
 * that the CLI reads the file exactly as xdpband does. */
static int socket_from_config(struct cli *cli, const char *path)
{
	static char from[XB_ERRLEN];
	struct xbd_conf conf;
	char err[XB_ERRLEN];
	int ret = xbd_conf_load(path, &conf, err, sizeof(err));

	if (ret) {
		pr_warn("cannot find the daemon's socket: %s (give --socket or $%s)", err,
			XDPBAN_SOCKET_ENV);
		return EXIT_FAIL;
	}
	cli->socket_owned = conf.socket_path;
	conf.socket_path = NULL;
	xbd_conf_free(&conf);
	snprintf(from, sizeof(from), "[control] socket of %s", path);
	cli->socket_path = cli->socket_owned;
	cli->socket_from = from;
	return EXIT_OK;
}

int backend_find_socket(struct cli *cli)
{
	const char *env = getenv(XDPBAN_SOCKET_ENV);

	if (cli->socket_path) {
		cli->socket_from = "--socket";
	} else if (env && *env) {
		cli->socket_path = env;
		cli->socket_from = "$" XDPBAN_SOCKET_ENV;
	} else if (cli->config) {
		return socket_from_config(cli, cli->config);
	} else if (access(XBD_CONF_DEFAULT, F_OK) == 0) {
		return socket_from_config(cli, XBD_CONF_DEFAULT);
	} else {
		cli->socket_path = XB_CONTROL_SOCKET_DEFAULT;
		cli->socket_from = "the default; no " XBD_CONF_DEFAULT;
	}
	return EXIT_OK;
}

int backend_open(struct backend *b, const struct cli *cli, const struct backend_opts *opts)
{
	char err[XB_ERRLEN];
	int ret;

	memset(b, 0, sizeof(*b));
	b->cli = cli;
	b->lock = -1;
	b->timeout_ms = opts->timeout_ms ? opts->timeout_ms : CLI_TIMEOUT_MS;
	b->prefix = opts->prefix ? opts->prefix : "";
	b->maps.owned = false;
	b->fd = xb_control_connect(cli->socket_path, err, sizeof(err));
	if (b->fd >= 0) {
		pr_debug(cli, "talking to the daemon on %s (%s)", cli->socket_path, cli->socket_from);
		return EXIT_OK;
	}
	if (b->fd != -ENOENT && b->fd != -ECONNREFUSED) {
		pr_warn("%s%s (%s)", b->prefix, err, cli->socket_from);
		return EXIT_FAIL;
	}
	if (opts->daemon_only) {
		pr_warn("%sno daemon answers on %s (%s): %s", b->prefix, cli->socket_path,
			cli->socket_from, strerror(-b->fd));
		return EXIT_FAIL;
	}
	pr_debug(cli, "%s (%s); working on the pinned maps", err, cli->socket_from);
	b->fd = -1;
	ret = open_direct(b, opts);
	if (ret)
		backend_close(b);
	return ret;
}

bool backend_direct(const struct backend *b)
{
	return b->fd < 0;
}

int backend_call(struct backend *b, struct json_object *request, struct json_object **reply)
{
	return backend_call_fds(b, request, NULL, 0, reply);
}

int backend_call_fds(struct backend *b, struct json_object *request, const int *fds, size_t n,
		     struct json_object **reply)
{
	const char *text = xb_json_line(request);
	struct xb_control_ctx ctx = { .maps = &b->maps, .hooks = &direct_hooks,
				      .user = (void *)b->pin_dir };
	char err[XB_ERRLEN], *line = NULL;
	int ret;

	pr_debug(b->cli, "request: %s", text);
	if (backend_direct(b))
		ret = xb_control_handle(&ctx, text, strlen(text), &line) ? -ENOMEM : 0;
	else
		ret = xb_control_call_fds(b->fd, text, fds, n, b->timeout_ms, &line, err,
					  sizeof(err));
	if (ret) {
		pr_warn("%s%s", b->prefix, backend_direct(b) ? "out of memory" : err);
		return EXIT_FAIL;
	}
	ret = take_reply(line, b->prefix, reply);
	free(line);
	/* Said after the fact, so that a refused change still prints one line only. */
	if (ret == EXIT_OK && b->lock >= 0)
		pr_warn("note: no daemon answers on %s; changed the maps in %s directly",
			b->cli->socket_path, b->pin_dir);
	return ret;
}

void backend_close(struct backend *b)
{
	if (b->fd >= 0)
		close(b->fd);
	if (b->lock >= 0)
		close(b->lock);
	if (b->maps.owned)
		xb_maps_close(&b->maps);
	b->fd = b->lock = -1;
}
