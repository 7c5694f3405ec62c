/* xdpban_flat.h - the flat policy table: the policy tries compiled into 2-bit codes per address
 * region, so that the data path answers most sources with a few array loads from tables that
 * stay in the cache and asks the LPM trie only about the few regions that need it
 * (zmap's radix array, lib/constraint.c).
 *
 * One mmapable array of u64 words per family (xdpban_flat4, xdpban_flat6), indexed by
 * the top 32 bits of the source address in host order (IPv4: the address; IPv6: its first four
 * bytes). Three levels of codes, read in this order: level 1, one code per /16 (16 KiB, words
 * from 0); the middle level, one code per /22 (1 MiB, words from XDPBAN_FLAT_MID_BASE), sized
 * to stay in L2 so that a list of a million prefixes, which leaves no /16 pure, still answers
 * most sources from the cache; level 2, one code per /24 (4 MiB, words from
 * XDPBAN_FLAT_L2_BASE), read only where the middle level says LOOKUP, which costs a miss to
 * memory. Code i of a level sits in word i / 32 of the level, bits 2 * (i % 32).
 * The last word is the guard: the codes are read only when it holds XDPBAN_FLAT_COMPILED,
 * which a compile writes after the codes; otherwise every source goes straight to the trie.
 * So a table never compiled (plain `ip link`, bpftool-written policy) costs one hot load, not
 * loads of levels that would only ever say LOOKUP.
 *
 * A region's code is pure (NONE, DENY, TRUSTED) only when no timed entry (expires_ns != 0)
 * covers it or lies inside it, and every entry inside it (longer than the region) has the code
 * of the longest entry covering the whole region (NONE where none does); the code is then that
 * one, the verdict of every address of the region (as zmap merges a node whose halves agree:
 * a /48 deny inside a /32 deny changes no verdict). Otherwise it is LOOKUP: level 1
 * LOOKUP means "read the middle level", its LOOKUP "read level 2", level 2 LOOKUP "look up the
 * trie" (or the lines: level 3, the IPv6 lines). It is the same computation at every level, only the region size
 * differs, so a pure code of a level is the code of every finer region inside it. Zero is
 * LOOKUP, so the all-zero table of a fresh map (a plain `ip link` load) is always correct, and
 * LOOKUP is the code any writer may set at any time. Userspace writes the table only through
 * user/lib/policy.h; never store a pure code a trie does not back.
 *
 * Level 3 (IPv4; IPv6 has its lines, below): xdpban_flat4x, an mmapable array of 64-byte
 * slots, each the line of one /24 region: the region as its key and the /24's 256 /32 codes,
 * packed in base 3 (a line holds only pure codes, three values), so that key and codes share
 * one cache line and a line costs one miss. A region's line lies in the first XDPBAN_FLAT_SLOT_PROBE slots from
 * its home slot (xdpban_flat_slot_home, a multiplicative hash), at the first that was free
 * when it was written; the array has twice as many slots as lines, so nearly every line sits
 * at its home. Only a region whose level-2 code is LOOKUP because permanent entries longer than
 * /24 and of another code lie in it gets a line; a timed entry keeps its regions out. Lines are read only when the
 * IPv4 guard holds XDPBAN_FLAT_COMPILED_L3: then level-2 LOOKUP means "the line of the /24 if
 * there is one, else the trie". Every line in the array is exact for the trie at every instant
 * (policy.h says how writers keep it so), whatever level 2 says; a writer that cannot reach
 * the lines first turns the guard back to XDPBAN_FLAT_COMPILED. A line that finds no free
 * slot in its window is left to the trie.
 */
#ifndef XDPBAN_FLAT_H
#define XDPBAN_FLAT_H

#include <linux/types.h>
#include "xdpban_policy.h"

enum xdpban_flat_code {
	XDPBAN_FLAT_LOOKUP = 0,  /* ask the next level, finally the trie */
	XDPBAN_FLAT_NONE = 1,    /* XDPBAN_POLICY_NONE or _ALLOWED: on to bans and counting */
	XDPBAN_FLAT_DENY = 2,    /* XDPBAN_POLICY_DENY or _NOT_ALLOWED: dropped */
	XDPBAN_FLAT_TRUSTED = 3, /* XDPBAN_POLICY_TRUSTED */
};

#define XDPBAN_FLAT_CODE_BITS 2
#define XDPBAN_FLAT_CODE_MASK 3u
#define XDPBAN_FLAT_CODES_PER_WORD 32
/* Why /22 for the middle level: of a million random prefixes (the bench's list), /21 leaves
 * 63% of its regions pure (512 KiB), /22 79% (1 MiB), /23 89% (2 MiB). The L2 is 1 MiB a
 * core and shared with the ban index (256 KiB) and the hot words of the other tables; the
 * policy bench could not tell the three apart (their 1M-prefix medians fell within its noise
 * of +-40 ns), so the middle level takes the largest size that fits the cache. */
#define XDPBAN_FLAT_L1_BITS 16  /* level 1: /16 regions, 16 KiB: stays in L1 */
#define XDPBAN_FLAT_MID_BITS 22 /* the middle level: /22 regions, 1 MiB: stays in L2 */
#define XDPBAN_FLAT_L2_BITS 24  /* level 2: /24 regions, 4 MiB: a miss to memory */
#define XDPBAN_FLAT_L1_WORDS ((1u << XDPBAN_FLAT_L1_BITS) / XDPBAN_FLAT_CODES_PER_WORD)
#define XDPBAN_FLAT_MID_WORDS ((1u << XDPBAN_FLAT_MID_BITS) / XDPBAN_FLAT_CODES_PER_WORD)
#define XDPBAN_FLAT_L2_WORDS ((1u << XDPBAN_FLAT_L2_BITS) / XDPBAN_FLAT_CODES_PER_WORD)
#define XDPBAN_FLAT_MID_BASE XDPBAN_FLAT_L1_WORDS /* first word of the middle level */
#define XDPBAN_FLAT_L2_BASE (XDPBAN_FLAT_MID_BASE + XDPBAN_FLAT_MID_WORDS) /* of level 2 */
#define XDPBAN_FLAT_WORDS (XDPBAN_FLAT_L2_BASE + XDPBAN_FLAT_L2_WORDS) /* of codes */
#define XDPBAN_FLAT_GUARD XDPBAN_FLAT_WORDS           /* index of the guard word */
#define XDPBAN_FLAT_ENTRIES (XDPBAN_FLAT_WORDS + 1)   /* the map's max_entries */
#define XDPBAN_FLAT_COMPILED 0x78646270666c6174ull  /* "xdbpflat": the codes are in force */
#define XDPBAN_FLAT_COMPILED_L3 0x78646270666c3378ull /* "xdbpfl3x": codes and lines (IPv4's
							  * level 3, the IPv6 lines) */

/* Level 3: the line of /32 codes of one IPv4 /24 region. */
#define XDPBAN_FLAT_L3_BITS 8              /* /32s per /24: 256 codes */
#define XDPBAN_FLAT_LINE_CODES (1u << XDPBAN_FLAT_L3_BITS)
#define XDPBAN_FLAT_LINE_WORDS (XDPBAN_FLAT_LINE_CODES / XDPBAN_FLAT_CODES_PER_WORD) /* 8 */

struct xdpban_flat_line {
	__u64 codes[XDPBAN_FLAT_LINE_WORDS]; /* code of /32 i: word i / 32, bits 2 * (i % 32) */
};

/* Pure codes are what the data path does: allowed goes on like no entry, not allowed drops
 * like deny (only in allow-only mode, XDPBAN_CFG_ALLOW_ONLY, does the data path tell them
 * apart, for the statistics reason: xdpban_nodeny16 below). The first three verdicts are
 * their code less one. */
static inline __u32 xdpban_flat_code_of_verdict(__u32 verdict)
{
	return verdict == XDPBAN_POLICY_ALLOWED	      ? XDPBAN_FLAT_NONE
	       : verdict == XDPBAN_POLICY_NOT_ALLOWED ? XDPBAN_FLAT_DENY
						      : verdict + 1;
}

static inline __u32 xdpban_flat_verdict(__u32 code)
{
	return code - 1; /* code != XDPBAN_FLAT_LOOKUP */
}

/* Word and bit position of region `region` of a level whose first word is `base`. */
static inline __u32 xdpban_flat_word(__u32 base, __u32 region)
{
	return base + region / XDPBAN_FLAT_CODES_PER_WORD;
}

static inline __u32 xdpban_flat_shift(__u32 region)
{
	return (region % XDPBAN_FLAT_CODES_PER_WORD) * XDPBAN_FLAT_CODE_BITS;
}

/* The region of an address (its top 32 bits, host order) at each level. */
static inline __u32 xdpban_flat_l1_region(__u32 top)
{
	return top >> (32 - XDPBAN_FLAT_L1_BITS);
}

static inline __u32 xdpban_flat_mid_region(__u32 top)
{
	return top >> (32 - XDPBAN_FLAT_MID_BITS);
}

static inline __u32 xdpban_flat_l2_region(__u32 top)
{
	return top >> (32 - XDPBAN_FLAT_L2_BITS);
}

/* The code of an IPv4 address (host order) in the line of its /24. */
static inline __u32 xdpban_flat_line_code(const struct xdpban_flat_line *line, __u32 addr)
{
	__u32 slot = addr & (XDPBAN_FLAT_LINE_CODES - 1);

	return (line->codes[slot / XDPBAN_FLAT_CODES_PER_WORD] >> xdpban_flat_shift(slot)) &
	       XDPBAN_FLAT_CODE_MASK;
}

/* ---- level 3 slots ---- */

/* A slot's key: the /24 region (address >> 8, host order) plus one; 0 is a slot never used,
 * which ends a probe, and XDPBAN_FLAT_SLOT_GONE a deleted line, which does not. */
#define XDPBAN_FLAT_SLOT_FREE 0u
#define XDPBAN_FLAT_SLOT_GONE 0xffffffffu
#define XDPBAN_FLAT_SLOT_PROBE 8 /* slots a line may lie past its home, its home included */
#define XDPBAN_FLAT_TRITS_PER_BYTE 5 /* 3^5 = 243 <= 256 */
#define XDPBAN_FLAT_TRIT_BYTES                                                                   \
	((XDPBAN_FLAT_LINE_CODES + XDPBAN_FLAT_TRITS_PER_BYTE - 1) / XDPBAN_FLAT_TRITS_PER_BYTE)
/* Slots for a capacity of `lines` lines: half stay free, so probes stay short. */
#define XDPBAN_FLAT_SLOTS(lines) ((lines) * 2u)

/* Code c of /32 i is the base-3 digit c - 1 (NONE 0, DENY 1, TRUSTED 2) at place
 * i % 5 of byte i / 5; a byte above 242 holds no digits and reads as LOOKUP. */
struct xdpban_flat_slot {
	__u32 key;                           /* host order; written last, with release */
	__u8 trits[XDPBAN_FLAT_TRIT_BYTES];  /* 52 */
	__u8 pad[64 - 4 - XDPBAN_FLAT_TRIT_BYTES];
} __attribute__((aligned(64)));

static inline __u32 xdpban_flat_slot_key(__u32 region)
{
	return region + 1;
}

/* The home slot of a /24 region in an array of `slots` slots. */
static inline __u32 xdpban_flat_slot_home(__u32 region, __u32 slots)
{
	return (__u32)(((__u64)(region * 0x9e3779b1u) * slots) >> 32);
}

/* The code of an IPv4 address (host order) in the slot of its /24: x / 3 is (x * 171) >> 9
 * and x / 5 is (x * 205) >> 10 for every x below 256 (tests/unit/test_flat.c checks all of them),
 * so the data path needs no division. */
static inline __u32 xdpban_flat_slot_code(const struct xdpban_flat_slot *s, __u32 addr)
{
	__u32 i = addr & (XDPBAN_FLAT_LINE_CODES - 1), byte = (i * 205) >> 10;
	__u32 place = i - byte * XDPBAN_FLAT_TRITS_PER_BYTE, v = s->trits[byte];

	if (v >= 243)
		return XDPBAN_FLAT_LOOKUP;
	for (__u32 k = 0; k < XDPBAN_FLAT_TRITS_PER_BYTE - 1; k++)
		if (k < place)
			v = (v * 171) >> 9;
	return v - ((v * 171) >> 9) * 3 + 1;
}

/* ---- IPv6 lines: strides past the top 32 bits ---- */

/* xdpban_flat6x: an mmapable array of 72-byte slots, each the line of one IPv6 region of
 * `depth` bits (24, 32, 40, 48 or 56; XDPBAN_FLAT6_DEPTHS of them): its key, then the 256
 * 2-bit codes of the regions eight bits longer, laid out as struct xdpban_flat_line. Unlike a
 * level-3 line, a code may be LOOKUP: "the line one stride deeper", so that a source walks
 * /24 -> /32 -> /40 -> /48 -> /56 -> /64 until a pure code, and the trie answers only past
 * /64 (after a probe of the IPv6 hosts, below) or where a line is missing. A line exists
 * only for a region whose code one stride coarser (level 2's for depth 24) is LOOKUP because
 * a permanent entry longer than the region and of another code lies in it; a timed entry
 * keeps its regions out. Codes are the levels' computation (above: pure where every address
 * of the sub-region has one verdict). The key and the codes span two cache lines, both
 * addressed before the key is compared, so a line costs about one miss. Slots, probing and
 * the writer's rules are level 3's (a multiplicative hash of the key,
 * XDPBAN_FLAT_SLOT_PROBE, twice as many slots as lines, flat_live.c); lines are read only
 * when the IPv6 guard holds XDPBAN_FLAT_COMPILED_L3.
 * Why 8-bit strides: real prefixes are /32, /48, /56, /64, all on a stride, so a listed /48
 * ends three lines down; 256 codes of 4 values are the 64 bytes of a cache line. */
#define XDPBAN_FLAT6_DEPTH_FIRST XDPBAN_FLAT_L2_BITS /* the first line: a /24's /32 codes */
#define XDPBAN_FLAT6_STRIDE XDPBAN_FLAT_L3_BITS     /* 8 bits: 256 codes a line */
#define XDPBAN_FLAT6_DEPTH_LAST 56                  /* the last line holds /64 codes */
#define XDPBAN_FLAT6_DEPTHS                                                                      \
	((XDPBAN_FLAT6_DEPTH_LAST - XDPBAN_FLAT6_DEPTH_FIRST) / XDPBAN_FLAT6_STRIDE + 1) /* 5 */
#define XDPBAN_FLAT6_SLOT_FREE 0ull
#define XDPBAN_FLAT6_SLOT_GONE (~0ull) /* depth byte 0xff: no real key */

struct xdpban_flat6_slot {
	__u64 key; /* xdpban_flat6_key; written last, with release */
	struct xdpban_flat_line line;
};

/* The key of the line of depth `depth` over an address whose first 64 bits are hi (host
 * order): the region's bits, and the depth in the low byte, so that no key is FREE or GONE. */
static inline __u64 xdpban_flat6_key(__u64 hi, __u32 depth)
{
	return (hi & ~0ull << (64 - depth)) | depth;
}

/* The code of the address with first 64 bits hi in the line of depth `depth` over it. */
static inline __u32 xdpban_flat6_code(const struct xdpban_flat_line *line, __u64 hi, __u32 depth)
{
	return xdpban_flat_line_code(line, (__u32)(hi >> (64 - depth - XDPBAN_FLAT6_STRIDE)));
}

/* The home slot of a key in an array of `slots` slots. */
static inline __u32 xdpban_flat6_slot_home(__u64 key, __u32 slots)
{
	return (__u32)(((key * 0x9e3779b97f4a7c15ull) >> 32) * slots >> 32);
}

/* ---- IPv6 hosts: the /128 entries past the lines ---- */

/* xdpban_host6: a hash of the permanent /128 entries (single hosts, as lists of abusers hold
 * them), read where the walk down the lines ends at the /64 code of a /56's line and that code
 * is LOOKUP: the source's own entry, if it has one, is the longest that can match, so its
 * code is the trie's answer at the cost of one hash probe instead of the trie's 129-bit walk.
 * A miss means the trie. Every entry equals the trie's /128 entry at every instant: a writer
 * deletes it before it changes that entry in the trie, and writes it only from what the trie
 * holds (user/lib/host6_live.c); a writer that cannot delete it turns the IPv6 guard back to
 * XDPBAN_FLAT_COMPILED, which the walk needs. A timed /128 is left to the trie, which knows
 * its time. Its size is xdpban_flat6x's in lines; a host that finds no room is left to the
 * trie. */
struct xdpban_host6_key {
	__u64 hi; /* the address's first 64 bits, host order */
	__u64 lo; /* its last 64 bits, host order */
};

/* ---- allow-only mode's reasons ---- */

/* xdpban_nodeny16: one bit per /16 region of the top 32 bits, IPv4's 65,536 then IPv6's
 * (16 KiB, so it stays in the cache), set only where no deny entry (a deny list's, or a
 * manual prefix ban, timed or not) covers the region or lies in it. In allow-only mode a DENY
 * code drops a denied or a not-allowed address alike; where the bit is set it can only be a
 * not-allowed one, so the data path counts drop_not_allowed without asking the trie. Zero
 * means "ask the trie", which is always right: a writer clears a region's bit before a deny
 * entry touching it enters a trie, and sets bits only from a sorted set the tries hold. The
 * bits pick a statistics reason, never a verdict. */
#define XDPBAN_NODENY_REGIONS (2u << XDPBAN_FLAT_L1_BITS)
#define XDPBAN_NODENY_WORDS (XDPBAN_NODENY_REGIONS / 64) /* 2,048 */

static inline __u32 xdpban_nodeny_region(__u8 family, __u32 top)
{
	return (family == XDPBAN_FAMILY_INET6 ? 1u << XDPBAN_FLAT_L1_BITS : 0) |
	       top >> (32 - XDPBAN_FLAT_L1_BITS);
}

#endif /* XDPBAN_FLAT_H */
