/* narrow.h - the prefix an IPv6 source is keyed at (include/xdpban_narrow.h): ipv6-prefix,
 * unless the source is link-local or its network holds an address xdpban protects, then the
 * longer length xdpban_narrow6 gives. One cached gate word for a source of no such network;
 * the trie only where its bit is set. Never writes a map. */
#ifndef XDPBAN_BPF_NARROW_H
#define XDPBAN_BPF_NARROW_H

#include <bpf/bpf_endian.h>
#include "maps.h"

/* A source address for key_prefix6. */
struct narrow_addr {
	__u8 b[16];
};

/* A global function: its three answers would otherwise make the verifier walk every later
 * stage once per answer. a: the source, 16 bytes, network order. */
__attribute__((noinline)) __u32 key_prefix6(const struct narrow_addr *a, __u32 v6_prefix)
{
	struct xdpban_lpm6_key k = { .prefixlen = 128 };
	const __u8 *saddr;
	struct xdpban_narrow *n;
	__u32 top, bit, word;
	__u64 *gate;

	if (!a)
		return v6_prefix;
	saddr = a->b;
	if (xdpban_addr_is_link_local6(saddr))
		return 128;
	__builtin_memcpy(&top, saddr, sizeof(top)); /* saddr may be unaligned */
	bit = xdpban_narrow_gate_bit(bpf_ntohl(top));
	word = bit / 64;
	gate = bpf_map_lookup_elem(&xdpban_narrow6_gate, &word);
	if (!gate || !((*gate >> (bit % 64)) & 1))
		return v6_prefix;
	__builtin_memcpy(k.addr, saddr, 16);
	n = bpf_map_lookup_elem(&xdpban_narrow6, &k);
	if (!n || n->key_plen <= v6_prefix)
		return v6_prefix;
	return n->key_plen > 128 ? 128 : n->key_plen;
}

/* xdpban_key_make with the narrowing: the one key of a source on this side. */
static __always_inline void source_key(struct xdpban_key *key, __u8 family, const __u8 *saddr,
				       __u8 v6_prefix)
{
	if (family == XDPBAN_FAMILY_INET6)
		v6_prefix = key_prefix6((const struct narrow_addr *)saddr, v6_prefix);
	xdpban_key_make(key, family, saddr, v6_prefix);
}

#endif /* XDPBAN_BPF_NARROW_H */
