/* control_client.c - the client side of the control protocol: connect to the daemon's socket,
 * send one request line, read one reply line within a timeout. It never interprets the reply
 * (the caller parses it) and never retries: a timeout is reported, not hidden.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "control.h"

#define READ_CHUNK 65536

int xb_control_connect(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd, ret;

	if (!path)
		path = XB_CONTROL_SOCKET_DEFAULT;
	if (strlen(path) >= sizeof(addr.sun_path)) {
		snprintf(err, errlen, "socket path too long (at most %zu bytes): %.60s...",
			 sizeof(addr.sun_path) - 1, path);
		return -ENAMETOOLONG;
	}
	strcpy(addr.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot create a Unix socket: %s", strerror(-ret));
		return ret;
	}
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		ret = -errno;
		snprintf(err, errlen, "cannot connect to %s: %s", path, strerror(-ret));
		close(fd);
		return ret;
	}
	return fd;
}

/* Waits until fd is ready for `events`; 0, -ETIMEDOUT or -errno. */
static int wait_ready(int fd, short events, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int n;

	do
		n = poll(&pfd, 1, timeout_ms);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == 0 ? -ETIMEDOUT : 0;
}

/* The descriptors go with the first bytes that are sent. */
static int send_all(int fd, const char *buf, size_t len, const int *fds, size_t n_fds,
		    int timeout_ms)
{
	while (len) {
		ssize_t n;
		int ret = wait_ready(fd, POLLOUT, timeout_ms);

		if (ret)
			return ret;
		n = xb_control_send_fds(fd, buf, len, fds, n_fds);
		if (n < 0) {
			if (n == -EINTR || n == -EAGAIN)
				continue;
			return (int)n;
		}
		n_fds = 0;
		buf += n;
		len -= n;
	}
	return 0;
}

static int send_request(int fd, const char *request, const int *fds, size_t n_fds,
			int timeout_ms, char *err, size_t errlen)
{
	size_t len = strlen(request);
	char *line;
	int ret;

	if (len > XB_CONTROL_REQUEST_MAX || memchr(request, '\n', len)) {
		snprintf(err, errlen, "request is not one line of at most %d bytes",
			 XB_CONTROL_REQUEST_MAX);
		return -EINVAL;
	}
	line = malloc(len + 1);
	if (!line)
		return -ENOMEM;
	memcpy(line, request, len);
	line[len] = '\n';
	ret = send_all(fd, line, len + 1, fds, n_fds, timeout_ms);
	free(line);
	if (ret)
		snprintf(err, errlen, "cannot send the request: %s",
			 ret == -ETIMEDOUT ? "timed out" : strerror(-ret));
	return ret;
}

struct line_buf {
	char *data;
	size_t len, cap;
};

static int fd_of(const struct xb_control_stream *st)
{
	return st->fd;
}

static int line_grow(struct line_buf *b)
{
	size_t cap = b->cap ? 2 * b->cap : READ_CHUNK;
	char *data;

	if (cap > XB_CONTROL_REPLY_MAX + 1)
		cap = XB_CONTROL_REPLY_MAX + 1;
	if (cap <= b->cap)
		return -EMSGSIZE;
	data = realloc(b->data, cap);
	if (!data)
		return -ENOMEM;
	b->data = data;
	b->cap = cap;
	return 0;
}

/* Reads until '\n'; b->len then counts the bytes before it. */
static int read_line(int fd, struct line_buf *b, int timeout_ms)
{
	for (;;) {
		char *nl;
		ssize_t n;
		int ret;

		if (b->len == b->cap && (ret = line_grow(b)))
			return ret;
		ret = wait_ready(fd, POLLIN, timeout_ms);
		if (ret)
			return ret;
		n = recv(fd, b->data + b->len, b->cap - b->len, 0);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ECONNRESET;
		nl = memchr(b->data + b->len, '\n', n);
		if (nl) {
			b->len = nl - b->data;
			return 0;
		}
		b->len += n;
	}
}

/* The one line for a failed read of a `what` ("reply", "line"). */
static void read_error(int ret, int timeout_ms, const char *what, char *err, size_t errlen)
{
	if (ret == -ETIMEDOUT)
		snprintf(err, errlen, "no %s from the daemon within %d ms", what, timeout_ms);
	else if (ret == -ECONNRESET)
		snprintf(err, errlen, "the daemon closed the connection without a %s", what);
	else if (ret == -EMSGSIZE)
		snprintf(err, errlen, "%s longer than %u bytes", what, XB_CONTROL_REPLY_MAX);
	else
		snprintf(err, errlen, "cannot read the %s: %s", what, strerror(-ret));
}

int xb_control_call(int fd, const char *request, int timeout_ms, char **reply, char *err,
		    size_t errlen)
{
	return xb_control_call_fds(fd, request, NULL, 0, timeout_ms, reply, err, errlen);
}

int xb_control_call_fds(int fd, const char *request, const int *fds, size_t n, int timeout_ms,
			char **reply, char *err, size_t errlen)
{
	struct line_buf b = {};
	int sent, ret;

	*reply = NULL;
	if (n > XB_CONTROL_FDS_MAX) {
		snprintf(err, errlen, "at most %d files go with one request", XB_CONTROL_FDS_MAX);
		return -EINVAL;
	}
	sent = send_request(fd, request, fds, n, timeout_ms, err, errlen);
	/* A server that refuses a peer answers and closes before it reads a byte: the send can
	 * fail then, and the refusal is still there to be read. */
	if (sent && sent != -EPIPE && sent != -ECONNRESET)
		return sent;
	ret = read_line(fd, &b, sent ? 0 : timeout_ms);
	if (ret) {
		free(b.data);
		if (sent)
			return sent; /* err says why the send failed */
		read_error(ret, timeout_ms, "reply", err, errlen);
		return ret;
	}
	b.data[b.len] = '\0'; /* b.len < b.cap: the '\n' was inside the buffer */
	*reply = b.data;
	return 0;
}

int xb_control_subscribe(int fd, const char *request, int timeout_ms, struct xb_control_stream *st,
			 char *err, size_t errlen)
{
	memset(st, 0, sizeof(*st));
	st->fd = fd;
	return send_request(fd, request, NULL, 0, timeout_ms, err, errlen);
}

int xb_control_next_line(struct xb_control_stream *st, int timeout_ms, const char **line,
			 char *err, size_t errlen)
{
	struct line_buf b = { st->data, st->len, st->cap };
	char *nl;
	int ret = 0;

	/* Drop the line handed out last time, keep what came after it. */
	if (st->taken) {
		memmove(b.data, b.data + st->taken, b.len - st->taken);
		b.len -= st->taken;
		st->taken = 0;
	}
	nl = b.len ? memchr(b.data, '\n', b.len) : NULL;
	while (!nl) {
		size_t had = b.len;
		ssize_t n;

		if (b.len == b.cap && (ret = line_grow(&b)))
			break;
		ret = wait_ready(fd_of(st), POLLIN, timeout_ms);
		if (ret)
			break;
		n = recv(fd_of(st), b.data + b.len, b.cap - b.len, 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			ret = n ? -errno : -ECONNRESET;
			break;
		}
		b.len += n;
		nl = memchr(b.data + had, '\n', b.len - had);
	}
	st->data = b.data;
	st->len = b.len;
	st->cap = b.cap;
	if (ret) {
		read_error(ret, timeout_ms, "further line", err, errlen);
		return ret;
	}
	*nl = '\0';
	st->taken = (size_t)(nl - b.data) + 1;
	*line = b.data;
	return 0;
}

void xb_control_stream_free(struct xb_control_stream *st)
{
	free(st->data);
	memset(st, 0, sizeof(*st));
	st->fd = -1;
}
