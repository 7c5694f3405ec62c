/* exempt.h - sources whose errors are never counted and that are never banned, whatever
 * arrives (docs/datapath.md, section 8): addresses no real source has (unspecified, loopback,
 * multicast, broadcast, reserved, IPv4-mapped), and the never-ban and host addresses userspace
 * puts in xdpban_exempt4/6. Asked only for an error about to be counted, so it costs clean
 * traffic nothing. Their packets still go through policy, bans and the drop of errors. Never
 * writes a map. */
#ifndef XDPBAN_BPF_EXEMPT_H
#define XDPBAN_BPF_EXEMPT_H

#include "maps.h"

static __always_inline int exempt(__u8 family, const __u8 *saddr)
{
	if (xdpban_builtin_exempt(family, saddr))
		return 1;
	return lpm_holds(&xdpban_exempt4, &xdpban_exempt6, family, saddr);
}

#endif /* XDPBAN_BPF_EXEMPT_H */
