/* server.c - see server.h. Each client is a small state machine: read until a '\n', handle
 * that line, write the reply, and start over; a refused, oversized or late client gets one
 * error reply, then its input is drained (so that closing never resets the connection
 * before the reply is read) and it is closed. */
#include <errno.h>
#include <grp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <json-c/json.h>
#include "control_fields.h"
#include "log.h"
#include "server.h"


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
	    listen(s->fd, XBD_LISTEN_BACKLOG) || stat(sa->sun_path, &st))
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
		xb_control_fds_close(&s->clients[i].fds);
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
	xb_control_fds_close(&c->fds);
	close(c->fd);
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/* Appends line and its '\n' after what still waits to be sent to c. 0 or -ENOMEM. */
static int out_append(struct xbd_client *c, const char *line)
{
	size_t pending = c->out ? c->out_len - c->out_off : 0, len = strlen(line);
	char *grown;

	if (c->out && c->out_off)
		memmove(c->out, c->out + c->out_off, pending);
	c->out_len = pending;
	c->out_off = 0;
	grown = realloc(c->out, pending + len + 2);
	if (!grown)
		return -ENOMEM;
	memcpy(grown + pending, line, len);
	grown[pending + len] = '\n';
	grown[pending + len + 1] = '\0';
	c->out = grown;
	c->out_len = pending + len + 1;
	return 0;
}

/* {"ok":false,"error":"dropped from the event stream: WHY ...","since":N}: N is the last
 * event the subscriber was sent, for a follower to resume after (docs/control.md). */
static char *drop_line(const char *why, __u64 since)
{
	struct json_object *o = json_object_new_object();
	char msg[XB_ERRLEN], *line;

	if (!o)
		return NULL;
	snprintf(msg, sizeof(msg),
		 "dropped from the event stream: %s; the last event sent was %llu", why,
		 (unsigned long long)since);
	json_object_object_add(o, XB_F(OK), json_object_new_boolean(false));
	json_object_object_add(o, XB_F(ERROR), json_object_new_string(msg));
	json_object_object_add(o, XB_F(SINCE), json_object_new_int64((__s64)since));
	line = strdup(xb_json_line(o));
	json_object_put(o);
	return line;
}

/* Ends a subscription: the lines it was already given, then one line that says why and which
 * event to resume after, then the close (once it took them, or after XBD_CLIENT_TIMEOUT_MS). */
static void subscriber_drop(struct xbd_server *s, struct xbd_client *c, const char *why)
{
	__u64 since = c->next_seq - 1;
	char *line = drop_line(why, since);

	pr_warn("control: dropped the event subscriber of uid %u: %s (the last event sent was %llu)",
		c->uid, why, (unsigned long long)since);
	s->subscribers_dropped++;
	c->subscribed = false;
	c->closing = true;
	c->deadline_ms = xbd_now_ms() + XBD_CLIENT_TIMEOUT_MS;
	if (!line || out_append(c, line)) {
		free(line);
		client_free(c);
		return;
	}
	free(line);
}

/* Whether subscriber c has something to take: lines in out, or events of the ring after them. */
static bool subscriber_due(const struct xbd_server *s, const struct xbd_client *c)
{
	return c->out || (s->ring && c->next_seq <= s->ring->last);
}

/* Copies whole lines from the ring, from c's next event on, into its empty out: at most
 * about XBD_SUBSCRIBER_CHUNK, the only copy a subscriber costs. 0 (out may stay empty),
 * -ERANGE when its next event is no longer held, or -ENOMEM. */
static int subscriber_fill(const struct xbd_server *s, struct xbd_client *c)
{
	const struct xbd_evline *l;
	size_t len = 0;
	__u64 seq;

	if (!s->ring)
		return 0;
	if (c->next_seq < xbd_evring_oldest(s->ring))
		return -ERANGE;
	for (seq = c->next_seq; len < XBD_SUBSCRIBER_CHUNK && (l = xbd_evring_get(s->ring, seq)); seq++)
		len += l->len;
	if (!len)
		return 0;
	c->out = malloc(len + 1);
	if (!c->out)
		return -ENOMEM;
	c->out_len = c->out_off = 0;
	for (; c->next_seq < seq; c->next_seq++) {
		l = xbd_evring_get(s->ring, c->next_seq);
		memcpy(c->out + c->out_len, l->text, l->len);
		c->out_len += l->len;
	}
	c->out[c->out_len] = '\0';
	return 0;
}

/* A subscriber with nothing in out takes its next lines from the ring; one that fell behind
 * it, or that cannot have them, is dropped (and takes its last line instead). */
static void subscriber_refill(struct xbd_server *s, struct xbd_client *c)
{
	char why[64];
	int ret;

	if (!c->subscribed || c->out)
		return;
	ret = subscriber_fill(s, c);
	if (ret == -ERANGE) {
		snprintf(why, sizeof(why), "it fell more than %d events behind", XBD_EVRING_EVENTS);
		subscriber_drop(s, c, why);
	} else if (ret) {
		subscriber_drop(s, c, "out of memory");
	}
}

/* A subscriber's clock: it has XBD_CLIENT_TIMEOUT_MS to take something from when lines are
 * first due to it (counted from a turn of the loop, so that a long burst is not held against
 * it); none while it has taken everything. */
static void subscriber_clock(const struct xbd_server *s, struct xbd_client *c, __u64 now)
{
	if (!c->subscribed)
		return;
	if (!subscriber_due(s, c))
		c->deadline_ms = UINT64_MAX;
	else if (c->deadline_ms == UINT64_MAX)
		c->deadline_ms = now + XBD_CLIENT_TIMEOUT_MS;
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

/* One error line, after which the connection ends. */
static void queue_error(struct xbd_client *c, const char *msg)
{
	char *line = xb_control_error_reply(msg);

	c->closing = true;
	if (line)
		queue_reply(c, line);
}

/* Ends a connection that holds no slot (or is losing it) at once: one error line if the
 * socket takes it now, the input it sent read away (so that the close does not reset the
 * connection before the line is read), and the close. Never waits. */
static void end_now(int fd, const char *msg)
{
	char *line = xb_control_error_reply(msg), discard[4096];

	if (line) {
		snprintf(discard, sizeof(discard), "%s\n", line);
		(void)!send(fd, discard, strlen(discard), MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	free(line);
	for (int i = 0; i < 16 && recv(fd, discard, sizeof(discard), MSG_DONTWAIT) > 0; i++)
		;
	close(fd);
}

/* Refusals are logged one by one at most once per XBD_REFUSALS_LOG_MS, and the others are
 * counted in one line at the end of that time: a peer that reconnects in a loop must not flood
 * the journal. */
static void log_refusal(struct xbd_server *s, const struct ucred *cred, const char *why)
{
	__u64 now = xbd_now_ms();

	s->refused_uid = cred->uid;
	if (s->refusals_logged_ms && now < s->refusals_logged_ms + XBD_REFUSALS_LOG_MS) {
		s->refusals_unlogged++;
		return;
	}
	pr_warn("control: refused a connection from uid %u (pid %d): %s", cred->uid, cred->pid,
		why);
	s->refusals_logged_ms = now;
}

static __u64 refusals_due_ms(const struct xbd_server *s)
{
	return s->refusals_unlogged ? s->refusals_logged_ms + XBD_REFUSALS_LOG_MS : UINT64_MAX;
}

static void log_refusals_counted(struct xbd_server *s, __u64 now)
{
	char interval[XB_DURATION_TEXT_MAX];

	if (now < refusals_due_ms(s))
		return;
	xb_duration_format(XBD_REFUSALS_LOG_MS / 1000, interval, sizeof(interval));
	pr_warn("control: %lu more connections refused in the last %s (last from uid %u)",
		s->refusals_unlogged, interval, s->refused_uid);
	s->refusals_unlogged = 0;
	s->refusals_logged_ms = now;
}

#define PEER_GROUPS_MAX 256

/* Whether the peer has group among its gid and its groups (none when the kernel cannot say:
 * fewer rights, never more). */
static bool peer_in_group(int fd, const struct ucred *cred, gid_t group)
{
	gid_t groups[PEER_GROUPS_MAX];
	socklen_t len = sizeof(groups);
	size_t n = getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) ? 0
									  : len / sizeof(gid_t);

	if (cred->gid == group)
		return true;
	for (size_t i = 0; i < n; i++)
		if (groups[i] == group)
			return true;
	return false;
}

enum peer_class { PEER_REFUSED, PEER_MEMBER, PEER_PRIVILEGED };

/* Root and the socket's owner may do everything; the configured group may read, or
 * everything with group-access = full; anyone else nothing. */
static enum peer_class classify(const struct xbd_server *s, int fd, struct ucred *cred)
{
	socklen_t len = sizeof(*cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cred, &len)) {
		*cred = (struct ucred){ .uid = (uid_t)-1, .pid = -1 };
		return PEER_REFUSED;
	}
	if (cred->uid == 0 || cred->uid == s->owner)
		return PEER_PRIVILEGED;
	if (s->has_group && peer_in_group(fd, cred, s->group))
		return PEER_MEMBER;
	return PEER_REFUSED;
}

/* Connections held by one uid, and by group members. */
static int count_uid(const struct xbd_server *s, uid_t uid)
{
	int n = 0;

	for (int i = 0; i < XBD_MAX_CLIENTS; i++)
		n += s->clients[i].fd >= 0 && s->clients[i].uid == uid;
	return n;
}

static int count_members(const struct xbd_server *s)
{
	int n = 0;

	for (int i = 0; i < XBD_MAX_CLIENTS; i++)
		n += s->clients[i].fd >= 0 && !s->clients[i].privileged;
	return n;
}

/* Idle: no request begun (none read, none waiting in the socket), none held, no reply
 * pending, and not accepted in this very turn (it has not been read from yet). */
static bool idle(const struct xbd_server *s, const struct xbd_client *c)
{
	char byte;

	if (c->held || c->subscribed)
		return false;
	if (c->closing)
		return true;
	return c->turn != s->turn && !c->in_len && !c->out &&
	       recv(c->fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) < 0;
}

/* When no slot is free: the idle connection that has waited longest, of a uid that holds
 * more connections than the newcomer's would (its own included); a privileged newcomer may
 * take any idle one's slot, and else any member's. NULL when none may go. */
static struct xbd_client *pick_victim(const struct xbd_server *s, bool privileged, uid_t uid)
{
	const struct xbd_client *best = NULL;
	int mine = count_uid(s, uid) + 1;
	bool found;

	for (int i = 0; i < XBD_MAX_CLIENTS; i++) {
		const struct xbd_client *c = &s->clients[i];

		if (c->fd < 0 || !idle(s, c) ||
		    (!privileged && c->uid != uid && count_uid(s, c->uid) <= mine))
			continue;
		if (!best || c->active_ms < best->active_ms)
			best = c;
	}
	found = best != NULL;
	for (int i = 0; !found && privileged && i < XBD_MAX_CLIENTS; i++) {
		const struct xbd_client *c = &s->clients[i];

		if (c->fd >= 0 && !c->privileged && (!best || c->active_ms < best->active_ms))
			best = c;
	}
	return (struct xbd_client *)best;
}

/* A free slot for the newcomer, or one taken from another connection; NULL with why set when
 * it may not have one. */
static struct xbd_client *find_slot(struct xbd_server *s, enum peer_class cls, uid_t uid,
				    char *why, size_t len)
{
	struct xbd_client *c = NULL;

	if (cls == PEER_MEMBER && count_uid(s, uid) >= XBD_CLIENTS_PER_UID) {
		snprintf(why, len, "too many connections from uid %u (at most %d at once)", uid,
			 XBD_CLIENTS_PER_UID);
		return NULL;
	}
	if (cls == PEER_MEMBER && count_members(s) >= XBD_MAX_CLIENTS - XBD_RESERVED_CLIENTS) {
		snprintf(why, len, "too many connections: the last %d are kept for root",
			 XBD_RESERVED_CLIENTS);
		return NULL;
	}
	for (int i = 0; i < XBD_MAX_CLIENTS && !c; i++)
		if (s->clients[i].fd < 0)
			c = &s->clients[i];
	if (c)
		return c;
	c = pick_victim(s, cls == PEER_PRIVILEGED, uid);
	if (!c) {
		snprintf(why, len, "too many connections (%d), none of them idle", XBD_MAX_CLIENTS);
		return NULL;
	}
	pr_debug("control: uid %u takes the slot of an idle connection of uid %u", uid, c->uid);
	end_now(c->fd, "closed: a new connection needed the slot of this idle one");
	xb_control_fds_close(&c->fds);
	free(c->out);
	return c;
}

/* Every peer is checked before it takes a slot: one that may not connect, or may not have
 * another connection, is answered and closed at once. */
static void admit(struct xbd_server *s, int fd)
{
	struct ucred cred;
	enum peer_class cls = classify(s, fd, &cred);
	struct xbd_client *c = NULL;
	char why[160];

	if (cls == PEER_REFUSED)
		snprintf(why, sizeof(why), "permission denied: uid %u may not use the control socket",
			 cred.uid);
	else
		c = find_slot(s, cls, cred.uid, why, sizeof(why));
	if (!c) {
		log_refusal(s, &cred, why);
		end_now(fd, why);
		return;
	}
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->uid = cred.uid;
	c->privileged = cls == PEER_PRIVILEGED;
	c->read_only = cls == PEER_MEMBER && !s->group_full;
	c->turn = s->turn;
	c->active_ms = xbd_now_ms();
	c->deadline_ms = c->active_ms + XBD_CLIENT_TIMEOUT_MS;
}

/* A bounded number per turn, so that a flood of connections cannot hold up the loop. */
static void accept_clients(struct xbd_server *s)
{
	for (int i = 0; i < XBD_ACCEPTS_PER_POLL; i++) {
		int fd = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return; /* EAGAIN, or a client that went away */
		admit(s, fd);
	}
}

static void handle_request(struct xbd_server *s, struct xbd_client *c, const char *line,
			   size_t len)
{
	struct xb_control_ctx ctx = s->ctx;
	char *reply = NULL;
	int ret;

	if (c->fds.over) {
		char why[64];

		snprintf(why, sizeof(why), "more than %d open files sent with one request",
			 XB_CONTROL_FDS_MAX);
		xb_control_fds_close(&c->fds);
		queue_error(c, why);
		return;
	}
	ctx.read_only = c->read_only;
	s->serving_read_only = c->read_only; /* for the daemon's own commands */
	s->serving = c;
	pr_debug("control: uid %u: %.*s", c->uid, (int)(len > 200 ? 200 : len), line);
	ret = xb_control_handle(&ctx, line, len, &reply);
	s->serving = NULL;
	xb_control_fds_close(&c->fds); /* those no hook took: they were the request's alone */
	if (c->held) { /* the answer comes later, from xbd_server_release() */
		free(reply);
		c->deadline_ms = xbd_now_ms() + XBD_HELD_TIMEOUT_MS;
		return;
	}
	if (ret || !reply) {
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

	while (!c->out && !c->closing && !c->held && !c->subscribed) {
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

	if (c->closing || c->held || c->subscribed) { /* draining what a refused client or a
						       * subscriber still sends, or a held client
						       * hung up (it is not polled for input) */
		n = recv(c->fd, discard, sizeof(discard), 0);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			client_free(c);
		return;
	}
	n = xb_control_recv_fds(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, &c->fds);
	if (n < 0) {
		if (n != -EAGAIN && n != -EINTR)
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
	ssize_t n;

	subscriber_refill(s, c);
	if (c->fd < 0 || !c->out)
		return;
	n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			client_free(c);
		return;
	}
	c->out_off += n;
	if (c->subscribed && n > 0) /* it takes what waits: give it time for the rest */
		c->deadline_ms = xbd_now_ms() + XBD_CLIENT_TIMEOUT_MS;
	if (c->out_off < c->out_len)
		return;
	free(c->out);
	c->out = NULL;
	c->active_ms = xbd_now_ms();
	if (c->subscribed)
		return; /* its clock: subscriber_clock() */
	c->deadline_ms = c->active_ms + XBD_CLIENT_TIMEOUT_MS;
	if (c->closing)
		shutdown(c->fd, SHUT_WR); /* then drain until the peer closes or the deadline */
	else
		handle_lines(s, c); /* requests sent ahead of their replies */
}

static void expire(struct xbd_server *s, struct xbd_client *c, __u64 now)
{
	if (now < c->deadline_ms)
		return;
	if (c->subscribed) {
		subscriber_drop(s, c, "it took nothing of the event stream for 5 s");
		return;
	}
	if (c->held) {
		c->held = XBD_HOLD_NONE;
		queue_error(c, "the outcome did not come in time: see the daemon's log");
		return;
	}
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
			.events = c->subscribed ? POLLIN | (subscriber_due(s, c) ? POLLOUT : 0)
				  : c->held	  ? 0
				  : c->out	  ? POLLOUT
						  : POLLIN,
		};
	}
}

void xbd_server_serve(struct xbd_server *s, const struct pollfd *pfds)
{
	__u64 now;

	s->turn++;
	for (int i = 0; i < XBD_MAX_CLIENTS; i++) {
		struct xbd_client *c = &s->clients[i];
		short ev = pfds[i + 1].revents;

		if (c->fd < 0 || c->fd != pfds[i + 1].fd || !ev)
			continue;
		if (ev & POLLOUT)
			client_write(s, c);
		else if (ev & (POLLIN | POLLHUP | POLLERR))
			client_read(s, c);
		/* A subscriber is polled for both: its hangup must not wait for the stream. */
		if (c->subscribed && c->fd >= 0 && (ev & POLLOUT) && (ev & (POLLIN | POLLHUP | POLLERR)))
			client_read(s, c);
	}
	if (pfds[0].revents & POLLIN)
		accept_clients(s);
	now = xbd_now_ms();
	for (int i = 0; i < XBD_MAX_CLIENTS; i++) {
		if (s->clients[i].fd < 0)
			continue;
		subscriber_clock(s, &s->clients[i], now);
		expire(s, &s->clients[i], now);
	}
	log_refusals_counted(s, now);
}

int xbd_server_timeout_ms(const struct xbd_server *s)
{
	__u64 now = xbd_now_ms(), next = refusals_due_ms(s);

	for (int i = 0; i < XBD_MAX_CLIENTS; i++)
		if (s->clients[i].fd >= 0 && s->clients[i].deadline_ms < next)
			next = s->clients[i].deadline_ms;
	if (next == UINT64_MAX)
		return -1;
	return next <= now ? 0 : (int)(next - now);
}

struct xb_control_fds *xbd_server_serving_fds(struct xbd_server *s)
{
	return s->serving ? &s->serving->fds : NULL;
}

void xbd_server_hold(struct xbd_server *s, enum xbd_hold what)
{
	if (s->serving)
		s->serving->held = what;
}

void xbd_server_subscribe(struct xbd_server *s, const struct xbd_evring *ring, __u64 next_seq)
{
	if (!s->serving)
		return;
	s->ring = ring;
	s->serving->subscribed = true;
	s->serving->next_seq = next_seq;
}

int xbd_server_subscribers(const struct xbd_server *s)
{
	int n = 0;

	for (int i = 0; i < XBD_MAX_CLIENTS; i++)
		n += s->clients[i].fd >= 0 && s->clients[i].subscribed;
	return n;
}

void xbd_server_release(struct xbd_server *s, enum xbd_hold what, const char *reply)
{
	for (int i = 0; i < XBD_MAX_CLIENTS; i++) {
		struct xbd_client *c = &s->clients[i];
		char *line;

		if (c->fd < 0 || c->held != what)
			continue;
		c->held = XBD_HOLD_NONE;
		line = strdup(reply);
		if (line)
			queue_reply(c, line);
		else
			queue_error(c, "out of memory");
		if (!c->closing)
			c->deadline_ms = xbd_now_ms() + XBD_CLIENT_TIMEOUT_MS;
	}
}
