/* xdpban_narrow.h - the narrowing contract: where IPv6 sources are keyed at a longer prefix
 * than ipv6-prefix, so that no automatic ban covers an address that must never be banned
 * (docs/datapath.md, "Keys that never cover a protected address").
 *
 * An IPv6 source is counted and banned per its /ipv6-prefix, the network one party holds,
 * unless that network also holds an address xdpban protects: then its key is its own /128.
 * xdpband writes, and the data path and the library read:
 *   - xdpban_narrow6, an LPM trie of prefixes (struct xdpban_lpm6_key) whose sources are keyed
 *     at key_plen bits: every /ipv6-prefix that holds a host address, a never-ban entry or a
 *     built-in exempt address, and every subnet a protected interface is on (its neighbours:
 *     the gateway, the resolver, the other servers share it);
 *   - xdpban_narrow6_gate, one bit per hash of a source's top 32 bits, set for every entry
 *     there, so that a source of no such network costs one cached word, not a trie walk.
 * Link-local sources (fe80::/10) are always neighbours: keyed at /128 with no entry.
 */
#ifndef XDPBAN_NARROW_H
#define XDPBAN_NARROW_H

#include <linux/types.h>

struct xdpban_narrow {
	__u32 key_plen; /* host order; the prefix length of the keys of sources in the entry,
			 * ipv6-prefix..128 (a longer ipv6-prefix wins) */
};

/* The gate: XDPBAN_NARROW_GATE_BITS bits in 64-bit words, an array map of this many. */
#define XDPBAN_NARROW_GATE_ORDER 16
#define XDPBAN_NARROW_GATE_BITS (1u << XDPBAN_NARROW_GATE_ORDER)
#define XDPBAN_NARROW_GATE_WORDS (XDPBAN_NARROW_GATE_BITS / 64)
/* Entries of xdpban_narrow6 xdpband may write. */
#define XDPBAN_DEFAULT_NARROW_MAX 16384

/* The gate's bit of a source whose first 32 bits are top (host order): a multiplicative hash,
 * so that the networks of one provider spread over the words. An entry shorter than /32 sets
 * every bit. */
static inline __attribute__((always_inline)) __u32 xdpban_narrow_gate_bit(__u32 top)
{
	return (top * 0x9e3779b1u) >> (32 - XDPBAN_NARROW_GATE_ORDER);
}

/* A link-local source, fe80::/10; addr in network order. */
static inline __attribute__((always_inline)) int xdpban_addr_is_link_local6(const __u8 *addr)
{
	return addr[0] == 0xfe && (addr[1] & 0xc0) == 0x80;
}

#endif /* XDPBAN_NARROW_H */
