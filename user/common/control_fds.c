/* control_fds.c - open files passed with a control request (SCM_RIGHTS), both ways. A
 * descriptor that is received is always either kept in the caller's fds or closed here: none
 * is ever left open unnamed, whatever the peer sends. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "control.h"

ssize_t xb_control_send_fds(int sock, const void *buf, size_t len, const int *fds, size_t n)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * XB_CONTROL_FDS_MAX)];
		struct cmsghdr align;
	} control = {};
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	ssize_t sent;

	if (n > XB_CONTROL_FDS_MAX || !len)
		return -EINVAL;
	if (n) {
		msg.msg_control = control.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	}
	sent = sendmsg(sock, &msg, MSG_NOSIGNAL);
	return sent < 0 ? -errno : sent;
}

/* The descriptors of one SCM_RIGHTS message: kept while fds has room, closed after. */
static void take_fds(const struct cmsghdr *c, struct xb_control_fds *fds)
{
	size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
	const unsigned char *data = CMSG_DATA(c);

	for (size_t i = 0; i < n; i++) {
		int fd;

		memcpy(&fd, data + i * sizeof(int), sizeof(int));
		if (fds->n < XB_CONTROL_FDS_MAX) {
			fds->v[fds->n++] = fd;
		} else {
			close(fd);
			fds->over = true;
		}
	}
}

ssize_t xb_control_recv_fds(int sock, void *buf, size_t len, struct xb_control_fds *fds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * XB_CONTROL_FDS_MAX)];
		struct cmsghdr align;
	} control;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
			      .msg_controllen = sizeof(control.buf) };
	ssize_t got = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);

	if (got < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			take_fds(c, fds);
	/* What did not fit in control was closed by the kernel. */
	if (msg.msg_flags & MSG_CTRUNC)
		fds->over = true;
	return got;
}

void xb_control_fds_close(struct xb_control_fds *fds)
{
	for (size_t i = 0; i < fds->n; i++)
		close(fds->v[i]);
	fds->n = 0;
	fds->over = false;
}
