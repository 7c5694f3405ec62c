/* server.c - see server.h. Each client is a small state machine: read until a '\n', handle
 * that line, write the reply, and start over; a refused, oversized or late client gets one
 * error reply, then its input is drained (so that closing never resets the connection
 * before the reply is read) and it is closed. */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <json-c/json.h>
#include "log.h"
#include "server.h"

#define MAX_PEER_GROUPS 256

__u64 xbd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the listening socket ---- */

static int make_parent_dir(const char *path, char *err, size_t errlen)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0755) && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
		return -errno;
	}
	return 0;
}

/* A socket file left by a daemon that died is removed; a live one is not ours to take. */
static int remove_stale_socket(const struct sockaddr_un *sa, char *err, size_t errlen)
{
	struct stat st;
	int fd, ret = 0;

	if (lstat(sa->sun_path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "%s exists and is not a socket; not replacing it",
			 sa->sun_path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (!connect(fd, (const struct sockaddr *)sa, sizeof(*sa))) {
		snprintf(err, errlen, "another process is listening on %s", sa->sun_path);
		ret = -EADDRINUSE;
	} else if (errno == ECONNREFUSED) {
		unlink(sa->sun_path);
	} else {
		ret = -errno;
		snprintf(err, errlen, "cannot check %s: %s", sa->sun_path, strerror(errno));
	}
	close(fd);
	return ret;
}

/* Binds with a umask that leaves the file owner-only from its first instant; the configured
 * mode and group are applied after. */
static int bind_socket(struct xbd_server *s, const struct sockaddr_un *sa,
		       const struct xbd_conf *conf, char *err, size_t errlen)
{
	mode_t old_umask;
	struct stat st;
	int ret;

	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0)
		goto fail;
	old_umask = umask(0177);
	ret = bind(s->fd, (const struct sockaddr *)sa, sizeof(*sa));
	umask(old_umask);
	if (ret || chmod(sa->sun_path, conf->socket_mode) ||
	    (conf->has_group && chown(sa->sun_path, (uid_t)-1, conf->group)) ||
	    listen(s->fd, XBD_MAX_CLIENTS) || stat(sa->sun_path, &st))
		goto fail;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	return 0;
fail:
	ret = -errno;
	snprintf(err, errlen, "control socket %s: %s", sa->sun_path, strerror(errno));
	return ret;
}

int xbd_server_open(struct xbd_server *s, const struct xbd_conf *conf,
		    const struct xb_control_ctx *ctx, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int ret;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	for (int i = 0; i < XBD_MAX_CLIENTS; i++)
		s->clients[i].fd = -1;
	snprintf(s->path, sizeof(s->path), "%s", conf->socket_path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", conf->socket_path);
	s->owner = geteuid();
	s->has_group = conf->has_group;
	s->group = conf->group;
	s->group_full = conf->group_full;
	s->ctx = *ctx;
	ret = make_parent_dir(sa.sun_path, err, errlen);
	if (!ret)
		ret = remove_stale_socket(&sa, err, errlen);
	if (!ret)
		ret = bind_socket(s, &sa, conf, err, errlen);
	if (ret) {
		if (s->fd >= 0)
			close(s->fd);
		s->fd = -1;
		return ret;
	}
	pr_info("control socket %s (mode %04o%s)", s->path, conf->socket_mode,
		conf->has_group ? ", with a group" : "");
	return 0;
}

void xbd_server_close(struct xbd_server *s)
{
	struct stat st;

	for (int i = 0; i < XBD_MAX_CLIENTS; i++) {
		if (s->clients[i].fd >= 0)
			close(s->clients[i].fd);
		free(s->clients[i].out);
		s->clients[i].fd = -1;
		s->clients[i].out = NULL;
	}
	if (s->fd < 0)
		return;
	close(s->fd);
	s->fd = -1;
	/* Only our own file: a newer daemon may have replaced it. */
	if (!stat(s->path, &st) && st.st_dev == s->dev && st.st_ino == s->ino)
		unlink(s->path);
}

/* ---- clients ---- */

static void client_free(struct xbd_client *c)
{
	close(c->fd);
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

static void queue_reply(struct xbd_client *c, char *reply)
{
	size_t len = strlen(reply);
	char *line = realloc(reply, len + 2);

	if (!line) {
		free(reply);
		c->closing = true;
		return;
	}
	line[len] = '\n';
	line[len + 1] = '\0';
	c->out = line;
	c->out_len = len + 1;
	c->out_off = 0;
	c->deadline_ms = xbd_now_ms() + XBD_CLIENT_TIMEOUT_MS;
}

/* One {"ok": false, "error": msg} line, after which the connection ends. */
static void queue_error(struct xbd_client *c, const char *msg)
{
	struct json_object *o = json_object_new_object();
	char *text = NULL;

	if (o) {
		json_object_object_add(o, "ok", json_object_new_boolean(0));
		json_object_object_add(o, "error", json_object_new_string(msg));
		text = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	}
	c->closing = true;
	if (text)
		queue_reply(c, text);
}

static bool peer_in_group(int fd, gid_t primary, gid_t group)
{
	gid_t groups[MAX_PEER_GROUPS];
	socklen_t len = sizeof(groups);

	if (primary == group)
		return true;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len))
		return false;
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == group)
			return true;
	return false;
}

/* Root and the socket's owner may do everything; the configured group may read, or
 * everything with group-access = full; anyone else gets one error line. */
static void check_peer(struct xbd_server *s, struct xbd_client *c)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char msg[160];

	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len)) {
		queue_error(c, "cannot read the peer's credentials");
		return;
	}
	c->uid = cred.uid;
	if (cred.uid == 0 || cred.uid == s->owner)
		return;
	if (s->has_group && peer_in_group(c->fd, cred.gid, s->group)) {
		c->read_only = !s->group_full;
		return;
	}
	pr_warn("control: refused a connection from uid %u (pid %d)", cred.uid, cred.pid);
	snprintf(msg, sizeof(msg), "permission denied: uid %u may not use the control socket",
		 cred.uid);
	queue_error(c, msg);
}

static void accept_clients(struct xbd_server *s)
{
	for (;;) {
		struct xbd_client *c = NULL;
		int fd = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return; /* EAGAIN, or a client that went away */
		for (int i = 0; i < XBD_MAX_CLIENTS && !c; i++)
			if (s->clients[i].fd < 0)
				c = &s->clients[i];
		if (!c) {
			static const char busy[] = "{\"ok\":false,\"error\":\"too many connections\"}\n";

			(void)!send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
			close(fd);
			continue;
		}
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->deadline_ms = xbd_now_ms() + XBD_CLIENT_TIMEOUT_MS;
		check_peer(s, c);
	}
}

static void handle_request(struct xbd_server *s, struct xbd_client *c, const char *line,
			   size_t len)
{
	struct xb_control_ctx ctx = s->ctx;
	char *reply = NULL;

	ctx.read_only = c->read_only;
	s->serving_read_only = c->read_only; /* for the daemon's own commands */
	pr_debug("control: uid %u: %.*s", c->uid, (int)(len > 200 ? 200 : len), line);
	if (xb_control_handle(&ctx, line, len, &reply) || !reply) {
		free(reply);
		queue_error(c, "out of memory");
		return;
	}
	queue_reply(c, reply);
}

/* Handles complete lines until a reply is pending or no line is left. */
static void handle_lines(struct xbd_server *s, struct xbd_client *c)
{
	char *nl;
	size_t len;

	while (!c->out && !c->closing) {
		nl = memchr(c->in, '\n', c->in_len);
		if (!nl) {
			if (c->in_len == sizeof(c->in))
				queue_error(c, "request longer than 4096 bytes");
			return;
		}
		len = nl - c->in;
		handle_request(s, c, c->in, len);
		c->in_len -= len + 1;
		memmove(c->in, nl + 1, c->in_len);
	}
}

static void client_read(struct xbd_server *s, struct xbd_client *c)
{
	char discard[512];
	ssize_t n;

	if (c->closing) { /* draining what a refused client still sends */
		n = recv(c->fd, discard, sizeof(discard), 0);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			client_free(c);
		return;
	}
	n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, 0);
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			client_free(c);
		return;
	}
	if (n == 0) { /* EOF: a last request without its '\n' still gets an answer */
		if (c->in_len && !c->out) {
			handle_request(s, c, c->in, c->in_len);
			c->in_len = 0;
			c->closing = true;
		} else if (!c->out) {
			client_free(c);
		}
		return;
	}
	c->in_len += n;
	handle_lines(s, c);
}

static void client_write(struct xbd_server *s, struct xbd_client *c)
{
	ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);

	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			client_free(c);
		return;
	}
	c->out_off += n;
	if (c->out_off < c->out_len)
		return;
	free(c->out);
	c->out = NULL;
	c->deadline_ms = xbd_now_ms() + XBD_CLIENT_TIMEOUT_MS;
	if (c->closing)
		shutdown(c->fd, SHUT_WR); /* then drain until the peer closes or the deadline */
	else
		handle_lines(s, c); /* requests sent ahead of their replies */
}

static void expire(struct xbd_client *c, __u64 now)
{
	if (now < c->deadline_ms)
		return;
	if (c->out || c->closing) {
		client_free(c);
		return;
	}
	queue_error(c, "timed out waiting for a complete request line");
}

void xbd_server_pollfds(const struct xbd_server *s, struct pollfd *pfds)
{
	pfds[0] = (struct pollfd){ .fd = s->fd, .events = POLLIN };
	for (int i = 0; i < XBD_MAX_CLIENTS; i++) {
		const struct xbd_client *c = &s->clients[i];

		pfds[i + 1] = (struct pollfd){
			.fd = c->fd, /* a negative fd is ignored by poll */
			.events = c->out ? POLLOUT : POLLIN,
		};
	}
}

void xbd_server_serve(struct xbd_server *s, const struct pollfd *pfds)
{
	__u64 now;

	for (int i = 0; i < XBD_MAX_CLIENTS; i++) {
		struct xbd_client *c = &s->clients[i];
		short ev = pfds[i + 1].revents;

		if (c->fd < 0 || c->fd != pfds[i + 1].fd || !ev)
			continue;
		if (ev & POLLOUT)
			client_write(s, c);
		else if (ev & (POLLIN | POLLHUP | POLLERR))
			client_read(s, c);
	}
	if (pfds[0].revents & POLLIN)
		accept_clients(s);
	now = xbd_now_ms();
	for (int i = 0; i < XBD_MAX_CLIENTS; i++)
		if (s->clients[i].fd >= 0)
			expire(&s->clients[i], now);
}

int xbd_server_timeout_ms(const struct xbd_server *s)
{
	__u64 now = xbd_now_ms(), next = UINT64_MAX;

	for (int i = 0; i < XBD_MAX_CLIENTS; i++)
		if (s->clients[i].fd >= 0 && s->clients[i].deadline_ms < next)
			next = s->clients[i].deadline_ms;
	if (next == UINT64_MAX)
		return -1;
	return next <= now ? 0 : (int)(next - now);
}
