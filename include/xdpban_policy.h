/* xdpban_policy.h - the policy contract: LPM trie keys and the verdict each prefix carries.
 * Userspace paints allow/deny/trusted lists into these tries (docs/datapath.md, "Policy lists:
 * the painting order"); the data path only reads them.
 */
#ifndef XDPBAN_POLICY_H
#define XDPBAN_POLICY_H

#include <linux/types.h>
#include "xdpban_state.h"

struct xdpban_lpm4_key {
	__u32 prefixlen; /* host order, 0..32; a lookup uses 32 */
	__u8 addr[4];    /* network byte order */
};

struct xdpban_lpm6_key {
	__u32 prefixlen; /* host order, 0..128; a lookup uses 128 */
	__u8 addr[16];   /* network byte order */
};

enum xdpban_verdict {
	XDPBAN_POLICY_NONE = 0,        /* no entry: the source goes through bans and counting */
	XDPBAN_POLICY_DENY = 1,        /* always dropped */
	XDPBAN_POLICY_TRUSTED = 2,     /* always passed; never counted, never banned */
	XDPBAN_POLICY_ALLOWED = 3,     /* an allow list's: goes through bans and counting */
	XDPBAN_POLICY_NOT_ALLOWED = 4, /* allow-only mode's default (the /0 entries): dropped,
					* unless the packet is exempt from the mode */
};
#define XDPBAN_POLICY_VERDICT_MAX XDPBAN_POLICY_NOT_ALLOWED

/* list_id of prefixes that are timed manual bans (`xdpban ban ADDR/LEN`) rather than a list. */
#define XDPBAN_LIST_MANUAL_BAN 0xffffffffu
/* list_id of the default layer in allow-only mode: 0.0.0.0/0 and ::/0, not allowed. */
#define XDPBAN_LIST_DEFAULT 0xfffffffeu

struct xdpban_policy {
	__u32 verdict;    /* host order, enum xdpban_verdict */
	__u32 list_id;    /* host order; which configured list the prefix came from, for `query` */
	__u64 expires_ns; /* host order, CLOCK_BOOTTIME ns; 0 = permanent. A deny entry whose time
			   * has come is ignored by the data path (and removed by the daemon). */
};

/* Sources that are never counted or banned, whatever arrives (docs/datapath.md, section 8),
 * besides the built-in ones: LPM tries xdpban_exempt4/6 with the keys above and this value. */
enum xdpban_exempt_origin {
	XDPBAN_EXEMPT_LIST = 1, /* the operator's never-ban list */
	XDPBAN_EXEMPT_HOST = 2, /* an address of the host on a protected interface */
	XDPBAN_EXEMPT_FLEET = 3, /* the fleet's Redis server: banning it would cut the node off */
};

struct xdpban_exempt {
	__u32 origin;  /* host order, enum xdpban_exempt_origin */
	__u32 ifindex; /* host order; XDPBAN_EXEMPT_HOST: the interface holding the address */
};

/* A group address: IPv4 224.0.0.0/4 (multicast) and above (240/4, with 255.255.255.255), IPv6
 * ff00::/8. Never a real source; a datagram to one is never a probe (docs/datapath.md). addr in
 * network order. */
static inline __attribute__((always_inline)) int xdpban_addr_is_group(__u8 family,
								   const __u8 *addr)
{
	return family == XDPBAN_FAMILY_INET ? addr[0] >= 224 : addr[0] == 0xff;
}

/* The built-in set, which no real source has: IPv4 0/8, 127/8, 224/4 and 240/4 (with
 * 255.255.255.255); IPv6 ::, ::1, ff00::/8 and ::ffff:0:0/96. saddr in network order. */
static inline __attribute__((always_inline)) int xdpban_builtin_exempt(__u8 family,
								    const __u8 *saddr)
{
	__u32 w[4];

	if (xdpban_addr_is_group(family, saddr))
		return 1;
	if (family == XDPBAN_FAMILY_INET)
		return saddr[0] == 0 || saddr[0] == 127;
	__builtin_memcpy(w, saddr, sizeof(w));
	if (w[0] || w[1])
		return 0;
	/* ::, ::1 and ::ffff:0:0/96; the words compared in memory order, so ::1 and
	 * ::ffff are tested byte by byte to stay independent of the host's byte order */
	if (w[2] == 0 && w[3] == 0)
		return 1;
	if (w[2] == 0 && saddr[12] == 0 && saddr[13] == 0 && saddr[14] == 0 && saddr[15] == 1)
		return 1;
	return saddr[8] == 0 && saddr[9] == 0 && saddr[10] == 0xff && saddr[11] == 0xff;
}

#endif /* XDPBAN_POLICY_H */
