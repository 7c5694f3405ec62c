/* xdpban_deep6.h - IPv6 policy past the flat table: an exact hash per prefix length present,
 * so that an IPv6 source in a region the flat table leaves to LOOKUP costs one hash probe per
 * prefix length the lists hold (most lists hold a handful, /32 to /64) instead of a walk down
 * the LPM trie, one dependent miss per level (docs/datapath.md, "IPv6 past the flat table").
 *
 * Two maps:
 *   xdpban_deep6       a hash: key struct xdpban_lpm6_key (the prefix length and the address
 *                      with the bits past it cleared, exactly the trie's key of the entry),
 *                      value struct xdpban_policy, one element per entry of xdpban_policy6;
 *   xdpban_deep6_lens  an mmapable array of one struct xdpban_deep6_lens: which lengths the
 *                      hash holds, and whether it is in force.
 * The data path probes the lengths present, longest first; the first hit is the longest
 * matching prefix, which decides as the trie would (a timed entry whose time has come gives
 * NONE, as in the trie). No hit: NONE.
 *
 * The hash is in force only while `state` is XDPBAN_DEEP6_EXACT: then it holds exactly the
 * entries of the trie, and a length's bit is set before the first entry of that length is
 * written and cleared only after the last one is gone. Otherwise (a fresh map of a plain `ip
 * link` load, more than XDPBAN_DEEP6_LENGTHS_MAX lengths, a writer that failed half-way) the
 * trie answers. Userspace writes both only through user/lib/policy.h.
 */
#ifndef XDPBAN_DEEP6_H
#define XDPBAN_DEEP6_H

#include <linux/types.h>

#define XDPBAN_DEEP6_EXACT 0x7864627036686173ull /* "xdbp6has": the hash is in force */

/* The most lengths the data path probes; more and the trie answers instead. */
#define XDPBAN_DEEP6_LENGTHS_MAX 16

/* Prefix length l (0..128) is bit (128 - l) % 64 of word (128 - l) / 64 of `present`: the
 * longest length present is the lowest set bit, which the data path finds without a loop
 * (a de Bruijn multiply), so that it probes longest first. */
#define XDPBAN_DEEP6_LEN_WORDS 3

struct xdpban_deep6_lens {
	__u64 state; /* host order; XDPBAN_DEEP6_EXACT or anything else */
	__u64 present[XDPBAN_DEEP6_LEN_WORDS]; /* host order, bits as above */
};

static inline __attribute__((always_inline)) __u32 xdpban_deep6_len_bit(__u32 plen)
{
	return 128 - plen;
}

/* The netmask word j (0..3, network order, as stored) of a prefix of length plen (0..128),
 * computed without a branch: min(max(plen - 32j, 0), 32) bits of ones. */
static inline __attribute__((always_inline)) __u32 xdpban_deep6_mask_word(__u32 plen, __u32 j)
{
	__s64 bits = (__s64)plen - 32 * (__s64)j, over;

	bits &= ~(bits >> 63);              /* negative: 0 */
	over = bits - 32;
	bits -= over & ~(over >> 63);       /* past 32: 32 */
	return __builtin_bswap32((__u32)(~0ull << (32 - bits)) & 0xffffffffu);
}

#endif /* XDPBAN_DEEP6_H */
