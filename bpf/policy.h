/* policy.h - the policy stage: which verdict the configured lists give a source address.
 * The one entry point is policy_lookup(); how lists are stored may change behind it.
 *
 * The flat table (include/xdpban_flat.h) answers first, once compiled (its guard word says so):
 * level 1 (/16), then the middle level (/22) only when level 1 says LOOKUP, then level 2 (/24)
 * only when the middle level says LOOKUP; when level 2 says LOOKUP too, for IPv4 the line of
 * the /24 in level 3 (a hash, when the guard says lines are in force), for IPv6 the lines of
 * 8-bit strides from /24 down to /64 (xdpban_flat6x, likewise) and past /64 the source's own
 * /128 entry (xdpban_host6), and the LPM trie only when there is no line or host or the code
 * is LOOKUP. Array lookups are inlined by the verifier, so
 * the common case is two to four loads, the guard and level 1 always hot, the middle level
 * in L2 (1 MiB), level 2 a miss (4 MiB); a line is one slot, key and codes in one cache line;
 * the trie is a helper call of up to 33 (IPv4) or 129 (IPv6) dependent loads. Never write a
 * map here.
 * A pure code is what the data path does (xdpban_flat.h): NONE goes on (no entry, or allowed),
 * DENY drops (denied, or not allowed), TRUSTED passes; deny_reason tells allow-only mode's
 * two drops apart. */
#ifndef XDPBAN_BPF_POLICY_H
#define XDPBAN_BPF_POLICY_H

#include <stdbool.h>
#include <bpf/bpf_endian.h>
#include "clock.h"
#include "maps.h"

/* One 2-bit code of a flat table. A missing word (impossible: the index is in range) reads as
 * LOOKUP, which is always correct. */
static __always_inline __u32 flat_code(void *flat, __u32 base, __u32 region)
{
	__u32 word = xdpban_flat_word(base, region);
	__u64 *codes = bpf_map_lookup_elem(flat, &word);

	if (!codes)
		return XDPBAN_FLAT_LOOKUP;
	return (*codes >> xdpban_flat_shift(region)) & XDPBAN_FLAT_CODE_MASK;
}

/* Level 1, the middle level and level 2, each only if the one before says LOOKUP;
 * XDPBAN_FLAT_LOOKUP when a later level must decide, which is always the case for a table
 * that was never compiled. *lines is set when level 2 said LOOKUP and the guard puts level 3
 * in force. */
static __always_inline __u32 flat_lookup(void *flat, __u32 top, bool *lines)
{
	__u32 guard = XDPBAN_FLAT_GUARD, code;
	__u64 *compiled = bpf_map_lookup_elem(flat, &guard);
	__u64 state;

	*lines = false;
	if (!compiled)
		return XDPBAN_FLAT_LOOKUP;
	state = *(volatile __u64 *)compiled; /* one read: both tests below see the same word */
	if (state != XDPBAN_FLAT_COMPILED && state != XDPBAN_FLAT_COMPILED_L3)
		return XDPBAN_FLAT_LOOKUP;
	code = flat_code(flat, 0, xdpban_flat_l1_region(top));
	if (code != XDPBAN_FLAT_LOOKUP)
		return code;
	code = flat_code(flat, XDPBAN_FLAT_MID_BASE, xdpban_flat_mid_region(top));
	if (code != XDPBAN_FLAT_LOOKUP)
		return code;
	code = flat_code(flat, XDPBAN_FLAT_L2_BASE, xdpban_flat_l2_region(top));
	*lines = code == XDPBAN_FLAT_LOOKUP && state == XDPBAN_FLAT_COMPILED_L3;
	return code;
}

/* Level 3: the code of an IPv4 address (host order) in the line of its /24; LOOKUP when it
 * has none. A global function, so that the verifier checks its probe loop once. The barrier
 * keeps the codes from being read before the key: a slot's codes change only after its key
 * was deleted and a grace period passed, and a new key is stored after its codes. */
__attribute__((noinline)) int line_lookup(__u32 addr)
{
	__u32 slots = map_entries(&xdpban_flat4x), region = xdpban_flat_l2_region(addr);
	__u32 want = xdpban_flat_slot_key(region), at = xdpban_flat_slot_home(region, slots);

	for (int probe = 0; probe < XDPBAN_FLAT_SLOT_PROBE; probe++) {
		struct xdpban_flat_slot *slot = bpf_map_lookup_elem(&xdpban_flat4x, &at);
		__u32 key;

		if (!slot)
			return XDPBAN_FLAT_LOOKUP;
		key = *(volatile __u32 *)&slot->key;
		asm volatile("" ::: "memory");
		if (key == want)
			return xdpban_flat_slot_code(slot, addr);
		if (key == XDPBAN_FLAT_SLOT_FREE)
			return XDPBAN_FLAT_LOOKUP;
		at = at + 1 >= slots ? 0 : at + 1;
	}
	return XDPBAN_FLAT_LOOKUP;
}

/* The code for the source whose first 64 bits are hi (host order) in its line of `depth` bits,
 * or LINE6_NONE when that line is not in xdpban_flat6x. A global function: the probe loop is
 * verified once, not once per depth. The barrier is line_lookup's. */
#define LINE6_NONE (-1)
__attribute__((noinline)) int line6_probe(__u64 hi, __u32 depth)
{
	__u32 slots = map_entries(&xdpban_flat6x), at;
	__u64 want;

	if (depth > XDPBAN_FLAT6_DEPTH_LAST)
		return LINE6_NONE;
	want = xdpban_flat6_key(hi, depth);
	at = xdpban_flat6_slot_home(want, slots);
	for (int probe = 0; probe < XDPBAN_FLAT_SLOT_PROBE; probe++) {
		struct xdpban_flat6_slot *slot = bpf_map_lookup_elem(&xdpban_flat6x, &at);
		__u64 key;

		if (!slot)
			return LINE6_NONE;
		key = *(volatile __u64 *)&slot->key;
		asm volatile("" ::: "memory");
		if (key == want)
			return xdpban_flat6_code(&slot->line, hi, depth);
		if (key == XDPBAN_FLAT6_SLOT_FREE)
			return LINE6_NONE;
		at = at + 1 >= slots ? 0 : at + 1;
	}
	return LINE6_NONE;
}

/* The IPv6 lines (xdpban_flat6x): from the /24's line down one stride at a time while the code
 * is LOOKUP; where the /64 code is LOOKUP too, the source's own /128 entry (xdpban_host6);
 * LOOKUP when a line or the host is missing. hi, lo: the source's first and last 64 bits,
 * host order. A global function, so that the verifier checks its loop once. */
__attribute__((noinline)) int line6_lookup(__u64 hi, __u64 lo)
{
	struct xdpban_host6_key host = { .hi = hi, .lo = lo };
	__u32 *host_code;

	for (__u32 depth = XDPBAN_FLAT6_DEPTH_FIRST; depth <= XDPBAN_FLAT6_DEPTH_LAST;
	     depth += XDPBAN_FLAT6_STRIDE) {
		int code = line6_probe(hi, depth);

		if (code == LINE6_NONE)
			return XDPBAN_FLAT_LOOKUP;
		if (code != XDPBAN_FLAT_LOOKUP)
			return code;
	}
	host_code = bpf_map_lookup_elem(&xdpban_host6, &host);
	return host_code ? *host_code : XDPBAN_FLAT_LOOKUP;
}

/* The entry of the longest matching prefix of length plen or less in the trie of the family;
 * NULL when there is none. */
static __always_inline struct xdpban_policy *trie_find(__u8 family, const __u8 *saddr,
						       __u32 plen)
{
	if (family == XDPBAN_FAMILY_INET) {
		struct xdpban_lpm4_key k = { .prefixlen = plen };

		__builtin_memcpy(k.addr, saddr, 4);
		return bpf_map_lookup_elem(&xdpban_policy4, &k);
	} else {
		struct xdpban_lpm6_key k = { .prefixlen = plen };

		__builtin_memcpy(k.addr, saddr, 16);
		return bpf_map_lookup_elem(&xdpban_policy6, &k);
	}
}

static __always_inline int policy_expired(const struct xdpban_policy *pol)
{
	return pol->expires_ns && clock_now_ns() >= pol->expires_ns;
}

/* The longest matching prefix in the trie of the family. */
static __always_inline __u32 trie_lookup(__u8 family, const __u8 *saddr)
{
	struct xdpban_policy *pol = trie_find(family, saddr, family == XDPBAN_FAMILY_INET ? 32 : 128);

	if (!pol)
		return XDPBAN_POLICY_NONE;
	/* A timed entry (a manual prefix ban) stops applying when its time has come: the
	 * default layer (the /0 entry of allow-only mode) answers instead, or no entry. */
	if (policy_expired(pol)) {
		pol = trie_find(family, saddr, 0);
		if (!pol || policy_expired(pol))
			return XDPBAN_POLICY_NONE;
	}
	return pol->verdict;
}

/* Which of deny and not allowed a DENY code of the flat table stands for, in allow-only mode:
 * not allowed where no deny entry touches the source's /16 (xdpban_nodeny16), else the trie's
 * answer. One cached word for a flood from outside the allow lists. */
static __always_inline __u32 deny_reason(__u8 family, __u32 top, const __u8 *saddr)
{
	__u32 region = xdpban_nodeny_region(family, top), word = region / 64;
	__u64 *bits = bpf_map_lookup_elem(&xdpban_nodeny16, &word);

	if (bits && (*bits >> (region % 64)) & 1)
		return XDPBAN_POLICY_NOT_ALLOWED;
	return trie_lookup(family, saddr) == XDPBAN_POLICY_NOT_ALLOWED ? XDPBAN_POLICY_NOT_ALLOWED
								       : XDPBAN_POLICY_DENY;
}

/* The source's verdict. With allow_only (XDPBAN_CFG_ALLOW_ONLY) a DENY code of the flat table
 * may stand for deny or for not allowed, which drop alike: deny_reason says which, and only
 * on that path, so a clean or denied packet outside allow-only mode reads nothing more. */
static __always_inline __u32 policy_lookup(__u8 family, const __u8 *saddr, bool allow_only)
{
	bool lines;
	__u32 top, code;

	__builtin_memcpy(&top, saddr, sizeof(top)); /* saddr may be unaligned */
	top = bpf_ntohl(top);
	/* Two calls, each with its own map: a map pointer merged from two maps would make the
	 * verifier give up inlining the lookup. */
	if (family == XDPBAN_FAMILY_INET) {
		code = flat_lookup(&xdpban_flat4, top, &lines);
		if (lines)
			code = line_lookup(top);
	} else {
		code = flat_lookup(&xdpban_flat6, top, &lines);
		if (lines) {
			__u64 hi, lo;

			__builtin_memcpy(&hi, saddr, sizeof(hi));
			__builtin_memcpy(&lo, saddr + sizeof(hi), sizeof(lo));
			code = line6_lookup(bpf_be64_to_cpu(hi), bpf_be64_to_cpu(lo));
		}
	}
	if (code == XDPBAN_FLAT_DENY && allow_only)
		return deny_reason(family, top, saddr);
	if (code != XDPBAN_FLAT_LOOKUP)
		return xdpban_flat_verdict(code);
	return trie_lookup(family, saddr);
}

/* A source address for policy_check: 4 (IPv4) or 16 bytes, network byte order. */
struct policy_addr {
	__u8 b[16];
};

/* policy_lookup as a global function: the policy stage's many branches are verified once,
 * not again on every path that reaches them. */
__attribute__((noinline)) __u32 policy_check(__u32 family, const struct policy_addr *saddr,
					     __u32 allow_only)
{
	if (!saddr)
		return XDPBAN_POLICY_NONE;
	return policy_lookup(family, saddr->b, allow_only);
}

#endif /* XDPBAN_BPF_POLICY_H */
