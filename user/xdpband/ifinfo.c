/* ifinfo.c - see ifinfo.h. Both are ioctls on a throwaway datagram socket, in the daemon's own
 * network namespace, where its interfaces are. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include "ifinfo.h"

static int if_ioctl(const char *name, unsigned long req, struct ifreq *ifr)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", name);
	if (ioctl(fd, req, ifr))
		ret = -errno;
	close(fd);
	return ret;
}

int xbd_if_mtu(const char *name, __u32 *mtu)
{
	struct ifreq ifr = {};
	int ret = if_ioctl(name, SIOCGIFMTU, &ifr);

	if (!ret)
		*mtu = (__u32)ifr.ifr_mtu;
	return ret;
}

int xbd_if_driver(const char *name, char *buf, size_t len)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr = { .ifr_data = (void *)&info };
	int ret = if_ioctl(name, SIOCETHTOOL, &ifr);

	if (!ret)
		snprintf(buf, len, "%s", info.driver);
	return ret;
}
