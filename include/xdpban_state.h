/* xdpban_state.h - per-source state shared by the data path and userspace: the source key,
 * the error counter and the ban record. Times are CLOCK_BOOTTIME (bpf_ktime_get_boot_ns()),
 * so they keep running across suspend; userspace converts them to wall time for display and
 * for the state file. Never store wall-clock time here.
 */
#ifndef XDPBAN_STATE_H
#define XDPBAN_STATE_H

#include <linux/types.h>

#define XDPBAN_FAMILY_INET 4
#define XDPBAN_FAMILY_INET6 6

/* The unit that is counted and banned: an IPv4 address, or an IPv6 prefix. */
struct xdpban_key {
	__u8 family;    /* XDPBAN_FAMILY_INET or XDPBAN_FAMILY_INET6 */
	__u8 prefixlen; /* 32 for IPv4; the IPv6 prefix length in force when the key was made */
	__u8 pad[2];    /* zero */
	__u8 addr[16];  /* network byte order; IPv4 in addr[0..3] and the rest zero;
			 * IPv6 with every bit past prefixlen zero */
} __attribute__((aligned(4))); /* read as 32-bit words by xdpban_key_hash() and the slot compare */

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define XDPBAN_HTONL(x) __builtin_bswap32(x) /* no libc on the BPF side: no htonl() */
#else
#define XDPBAN_HTONL(x) (x)
#endif

/* The network-order mask of 32-bit word w (address bits 32w..32w+31) of a plen-bit prefix. */
static inline __attribute__((always_inline)) __u32 xdpban_prefix_mask32(__u32 plen, __u32 w)
{
	__u32 bits = plen > w * 32 ? plen - w * 32 : 0;

	if (bits >= 32)
		return 0xffffffffu;
	return bits ? XDPBAN_HTONL(0xffffffffu << (32 - bits)) : 0;
}

/* The key a source address is counted and banned under (docs/datapath.md, section 2, step 3):
 * an IPv4 address as it is (/32), an IPv6 address cut to v6_prefix bits (at most 128). saddr
 * holds 4 or 16 bytes, network order, at any alignment. Fills every byte of *key. The one rule
 * for both sides: the data path keys every packet and report with it, userspace every lookup. */
static inline __attribute__((always_inline)) void
xdpban_key_make(struct xdpban_key *key, __u8 family, const __u8 *saddr, __u8 v6_prefix)
{
	key->family = family;
	key->pad[0] = key->pad[1] = 0;
	if (family == XDPBAN_FAMILY_INET) {
		key->prefixlen = 32;
		__builtin_memcpy(key->addr, saddr, 4);
		__builtin_memset(&key->addr[4], 0, sizeof(key->addr) - 4);
		return;
	}
	key->prefixlen = v6_prefix > 128 ? 128 : v6_prefix;
	__builtin_memcpy(key->addr, saddr, 16);
	for (__u32 w = 0; w < 4; w++) { /* whole words: addr is 4-aligned, saddr need not be */
		__u32 word;

		__builtin_memcpy(&word, &key->addr[w * 4], 4);
		word &= xdpban_prefix_mask32(key->prefixlen, w);
		__builtin_memcpy(&key->addr[w * 4], &word, 4);
	}
}

/* Window start and count in one u64, so that one compare-and-swap moves both: an increment
 * and a window restart can never interleave, and no increment is lost between CPUs. */
struct xdpban_counter {
	__u64 state; /* host order: (window_start_s << 32) | count; window_start_s in
		      * CLOCK_BOOTTIME seconds */
};

#define XDPBAN_COUNTER_PACK(start_s, count) (((__u64)(start_s) << 32) | (__u32)(count))
#define XDPBAN_COUNTER_START(state) ((__u32)((state) >> 32))
#define XDPBAN_COUNTER_COUNT(state) ((__u32)(state))

enum xdpban_ban_reason {
	XDPBAN_REASON_ERRORS = 1,   /* errors the data path classified crossed the limit */
	XDPBAN_REASON_MANUAL = 2,   /* an operator's `xdpban ban` */
	XDPBAN_REASON_REPORTED = 3, /* an application's report crossed the limit */
};

struct xdpban_ban {
	__u64 start_ns;   /* CLOCK_BOOTTIME ns when the ban began */
	__u64 expires_ns; /* CLOCK_BOOTTIME ns when it ends; 0 = never */
	__u32 count;      /* the error count that caused the ban (0 for manual bans) */
	__u8 reason;      /* enum xdpban_ban_reason */
	__u8 classes;     /* enum xdpban_class bits of the error that crossed the limit */
	__u8 proto;       /* of that error, and its port and rule: struct xdpban_ban_info */
	__u8 rule;
	__u16 port;
	__u8 pad[4];      /* zero */
	__u64 drops;      /* packets it dropped (observed, in observe mode), summed over CPUs;
			   * filled only by the walks that read them (xb_bans_walk_drops_in) */
};

#endif /* XDPBAN_STATE_H */
