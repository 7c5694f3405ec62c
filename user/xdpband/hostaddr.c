/* hostaddr.c - see hostaddr.h. Every message is parsed by xb_ifaddr_parse (user/lib/ifaddr.c);
 * here only the sockets, the request and the walk over the replies. A dump that the kernel
 * marks interrupted (NLM_F_DUMP_INTR: addresses changed meanwhile) is made again. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include "exempt.h"
#include "hostaddr.h"

#define DUMP_TRIES 3
#define RECV_BUF 32768

int xbd_hostaddr_open(struct xbd_hostaddr *h, char *err, size_t errlen)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK,
				  .nl_groups = RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR };
	int ret;

	h->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (h->fd < 0 || bind(h->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		snprintf(err, errlen, "cannot subscribe to the host's address events (rtnetlink): %s",
			 strerror(-ret));
		xbd_hostaddr_close(h);
		return ret;
	}
	return 0;
}

bool xbd_hostaddr_changed(struct xbd_hostaddr *h)
{
	char buf[RECV_BUF] __attribute__((aligned(NLMSG_ALIGNTO)));
	bool changed = false;
	ssize_t n;

	while ((n = recv(h->fd, buf, sizeof(buf), MSG_DONTWAIT)) != 0) {
		int len = (int)n;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			changed |= errno == ENOBUFS; /* events were lost */
			break;
		}
		for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, len);
		     nh = NLMSG_NEXT(nh, len))
			changed |= nh->nlmsg_type == RTM_NEWADDR || nh->nlmsg_type == RTM_DELADDR;
	}
	return changed;
}

void xbd_hostaddr_close(struct xbd_hostaddr *h)
{
	if (h->fd >= 0)
		close(h->fd);
	h->fd = -1;
}

static int dump_request(int fd, __u32 seq)
{
	struct {
		struct nlmsghdr nh;
		struct ifaddrmsg ifa;
	} req = {
		.nh = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct ifaddrmsg)),
			.nlmsg_type = RTM_GETADDR, .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
			.nlmsg_seq = seq },
		.ifa = { .ifa_family = AF_UNSPEC },
	};
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };

	if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	return 0;
}

/* The replies to one dump: 0 at NLMSG_DONE, -EAGAIN when it was interrupted, or -errno. */
static int dump_replies(int fd, __u32 seq, const int *ifindexes, int n,
			struct xb_exempt_set *out)
{
	char buf[RECV_BUF] __attribute__((aligned(NLMSG_ALIGNTO)));
	bool interrupted = false;

	for (;;) {
		ssize_t got = recv(fd, buf, sizeof(buf), 0);
		int len = (int)got, ret;

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return got < 0 ? (errno == EAGAIN ? -ETIMEDOUT : -errno) : -EPROTO;
		for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, len);
		     nh = NLMSG_NEXT(nh, len)) {
			if (nh->nlmsg_seq != seq)
				continue;
			interrupted |= (nh->nlmsg_flags & NLM_F_DUMP_INTR) != 0;
			if (nh->nlmsg_type == NLMSG_DONE)
				return interrupted ? -EAGAIN : 0;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nh);

				return nh->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error
					       ? e->error
					       : -EPROTO;
			}
			ret = xb_ifaddr_parse(nh, ifindexes, n, out);
			if (ret)
				return ret;
		}
	}
}

static int dump_once(const int *ifindexes, int n, __u32 seq, struct xb_exempt_set *out)
{
	struct timeval timeout = { .tv_sec = 1 };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE), ret;

	if (fd < 0)
		return -errno;
	ret = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)) ? -errno : 0;
	if (!ret)
		ret = dump_request(fd, seq);
	if (!ret)
		ret = dump_replies(fd, seq, ifindexes, n, out);
	close(fd);
	return ret;
}

int xbd_hostaddr_read(const int *ifindexes, int n, struct xb_exempt_set *out, char *err,
		      size_t errlen)
{
	static __u32 seq;
	int ret = -EAGAIN;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < DUMP_TRIES && ret == -EAGAIN; i++) {
		xb_exempt_set_free(out);
		ret = dump_once(ifindexes, n, ++seq, out);
	}
	if (ret) {
		xb_exempt_set_free(out);
		snprintf(err, errlen, "cannot read the host's addresses (rtnetlink): %s",
			 ret == -EAGAIN ? "they kept changing while they were read" : strerror(-ret));
		return ret;
	}
	xb_exempt_set_finish(out);
	return 0;
}
