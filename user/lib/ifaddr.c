/* ifaddr.c - the host's addresses from rtnetlink address messages, as exempt entries
 * (exempt.h): which addresses of a protected interface are never to be counted or banned.
 * Only parses the bytes it is given, which come from the kernel: every length is checked
 * before it is read all the same. Never opens a socket.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include "exempt.h"

static bool watched(int ifindex, const int *ifindexes, int n)
{
	for (int i = 0; i < n; i++)
		if (ifindexes[i] == ifindex)
			return true;
	return false;
}

/* The attributes of an address message that name addresses, each NULL when absent. */
struct ifaddr_attrs {
	const void *address, *local, *broadcast;
};

static int read_attrs(const struct nlmsghdr *nh, const struct ifaddrmsg *ifa, size_t alen,
		      struct ifaddr_attrs *a)
{
	int len = (int)nh->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*ifa));

	memset(a, 0, sizeof(*a));
	for (const struct rtattr *rta = IFA_RTA(ifa); RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
		const void **slot = rta->rta_type == IFA_ADDRESS     ? &a->address
				    : rta->rta_type == IFA_LOCAL     ? &a->local
				    : rta->rta_type == IFA_BROADCAST ? &a->broadcast
								     : NULL;

		if (!slot)
			continue;
		if (RTA_PAYLOAD(rta) < alen)
			return -EINVAL;
		*slot = RTA_DATA(rta);
	}
	return 0;
}

static int add_addr(struct xb_exempt_set *out, __u8 family, const void *addr, size_t alen,
		    int ifindex)
{
	struct xb_prefix p = { .family = family, .plen = alen * 8 };

	memcpy(p.addr, addr, alen);
	return xb_exempt_set_add(out, &p, XDPBAN_EXEMPT_HOST, (__u32)ifindex);
}

/* The all-ones address of the subnet of a local IPv4 address. */
static int add_subnet_broadcast(struct xb_exempt_set *out, const __u8 *local, unsigned plen,
				int ifindex)
{
	__u8 b[4];

	memcpy(b, local, sizeof(b));
	for (unsigned bit = plen; bit < 32; bit++)
		b[bit / 8] |= 0x80 >> (bit % 8);
	return add_addr(out, XDPBAN_FAMILY_INET, b, sizeof(b), ifindex);
}

int xb_ifaddr_parse(const struct nlmsghdr *nh, const int *ifindexes, int n,
		    struct xb_exempt_set *out)
{
	const struct ifaddrmsg *ifa = NLMSG_DATA(nh);
	struct ifaddr_attrs a;
	const void *local;
	size_t alen;
	__u8 family;
	int ret;

	if (nh->nlmsg_type != RTM_NEWADDR)
		return 0;
	if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifa)))
		return -EINVAL;
	if (ifa->ifa_family == AF_INET) {
		family = XDPBAN_FAMILY_INET;
		alen = 4;
	} else if (ifa->ifa_family == AF_INET6) {
		family = XDPBAN_FAMILY_INET6;
		alen = 16;
	} else {
		return 0;
	}
	if (!watched((int)ifa->ifa_index, ifindexes, n))
		return 0;
	ret = read_attrs(nh, ifa, alen, &a);
	if (ret)
		return ret;
	local = a.local ? a.local : a.address; /* IFA_ADDRESS is the peer's when both are there */
	if (!local)
		return 0;
	ret = add_addr(out, family, local, alen, (int)ifa->ifa_index);
	if (!ret && family == XDPBAN_FAMILY_INET6)
		out->v[out->n - 1].link_plen = ifa->ifa_prefixlen;
	if (!ret && a.broadcast && family == XDPBAN_FAMILY_INET)
		ret = add_addr(out, family, a.broadcast, alen, (int)ifa->ifa_index);
	if (!ret && family == XDPBAN_FAMILY_INET && ifa->ifa_prefixlen <= 30)
		ret = add_subnet_broadcast(out, local, ifa->ifa_prefixlen, (int)ifa->ifa_index);
	return ret;
}
