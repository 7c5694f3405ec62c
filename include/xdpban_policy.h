/* xdpban_policy.h - the policy contract: LPM trie keys and the verdict each prefix carries.
 * Userspace compiles allow/deny/trusted lists into these tries; the data path only reads them.
 */
#ifndef XDPBAN_POLICY_H
#define XDPBAN_POLICY_H

#include <linux/types.h>

struct xdpban_lpm4_key {
	__u32 prefixlen; /* host order, 0..32; a lookup uses 32 */
	__u8 addr[4];    /* network byte order */
};

struct xdpban_lpm6_key {
	__u32 prefixlen; /* host order, 0..128; a lookup uses 128 */
	__u8 addr[16];   /* network byte order */
};

enum xdpban_verdict {
	XDPBAN_POLICY_NONE = 0,    /* no entry: the source goes through bans and counting */
	XDPBAN_POLICY_DENY = 1,    /* always dropped */
	XDPBAN_POLICY_TRUSTED = 2, /* always passed; never counted, never banned */
};

/* list_id of prefixes that are timed manual bans (`xdpban ban ADDR/LEN`) rather than a list. */
#define XDPBAN_LIST_MANUAL_BAN 0xffffffffu

struct xdpban_policy {
	__u32 verdict;    /* host order, enum xdpban_verdict */
	__u32 list_id;    /* host order; which configured list the prefix came from, for `query` */
	__u64 expires_ns; /* host order, CLOCK_BOOTTIME ns; 0 = permanent. A deny entry whose time
			   * has come is ignored by the data path (and removed by the daemon). */
};

#endif /* XDPBAN_POLICY_H */
