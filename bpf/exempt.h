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
	if (family == XDPBAN_FAMILY_INET) {
		struct xdpban_lpm4_key k = { .prefixlen = 32 };

		__builtin_memcpy(k.addr, saddr, 4);
		return bpf_map_lookup_elem(&xdpban_exempt4, &k) != NULL;
	} else {
		struct xdpban_lpm6_key k = { .prefixlen = 128 };

		__builtin_memcpy(k.addr, saddr, 16);
		return bpf_map_lookup_elem(&xdpban_exempt6, &k) != NULL;
	}
}

#endif /* XDPBAN_BPF_EXEMPT_H */
