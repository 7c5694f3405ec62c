/* policy.h - the policy stage: which verdict the configured lists give a source address.
 * The one entry point is policy_lookup(); how lists are stored may change behind it. */
#ifndef XDPBAN_BPF_POLICY_H
#define XDPBAN_BPF_POLICY_H

#include "maps.h"

static __always_inline __u32 policy_lookup(__u8 family, const __u8 *saddr)
{
	struct xdpban_policy *pol;

	if (family == XDPBAN_FAMILY_INET) {
		struct xdpban_lpm4_key k = { .prefixlen = 32 };

		__builtin_memcpy(k.addr, saddr, 4);
		pol = bpf_map_lookup_elem(&xdpban_policy4, &k);
	} else {
		struct xdpban_lpm6_key k = { .prefixlen = 128 };

		__builtin_memcpy(k.addr, saddr, 16);
		pol = bpf_map_lookup_elem(&xdpban_policy6, &k);
	}
	if (!pol)
		return XDPBAN_POLICY_NONE;
	/* A timed entry (a manual prefix ban) stops applying when its time has come. */
	if (pol->expires_ns && bpf_ktime_get_boot_ns() >= pol->expires_ns)
		return XDPBAN_POLICY_NONE;
	return pol->verdict;
}

#endif /* XDPBAN_BPF_POLICY_H */
