/* xdpban_table.h - the per-source tables: bans and error counters, each an mmapable BPF array
 * of groups of four 32-byte slots, shared by the data path and userspace. One group is 128
 * bytes (two adjacent cache lines), so a lookup costs one miss to memory, where a kernel hash
 * costs a bucket, an element and their locks (docs/datapath.md, "Tables and memory").
 *
 * This header is the layout. The algorithms, in xdpban_table_ops.h, are compiled twice, by
 * clang for the BPF program and by gcc for userspace, which works on the same memory through
 * mmap; both sides follow that one protocol, so neither may write a slot any other way.
 *
 * A slot (all fields host order except addr):
 *   ctl  state (EMPTY, BUSY, LIVE, TOMB), a generation that changes whenever the slot is
 *        claimed, the key's family and prefix length, and 32 bits of table data (aux);
 *   val  bans: expires_ns (CLOCK_BOOTTIME, 0 = never); counters: window start, generation
 *        and count (XDPBAN_CTR_*);
 *   addr the key's address, network byte order, masked to its prefix (struct xdpban_key).
 * A slot is claimed by a compare-and-swap of ctl to BUSY, written, then published as LIVE; a
 * reader reads ctl, then the key and val, then ctl again, and trusts what it read only when
 * ctl did not change (x86 keeps loads in order and stores in order, and every CAS is a full
 * barrier). Slot 0's ctl of a counter group also holds the group's insert lock (XDPBAN_G0_LOCK),
 * which a reader ignores when it compares.
 *
 * The ban index (xdpban_banidx) has one 64-bit word per ban group, in an array a sixteenth of
 * the table's size that stays in the cache: the tags of the group's four slots (XDPBAN_IDX_*; a
 * key's tag is 14 more bits of the hash that picks its home group, never 0) and the group's
 * overflow count. A lookup reads the index word first and reads a slot only when its tag is the
 * key's, so a source with no ban costs one read of the index and none of the table. A slot's
 * tag is set, by its owner, after the slot is claimed and before it is published; it is
 * cleared only while the slot is taken back from LIVE (BUSY again, by the one writer that won
 * it), before it is freed. So a free slot's tag is always 0, and a LIVE slot's is its key's.
 *
 * Bans may live up to XDPBAN_BAN_PROBE - 1 groups past their home group. Each group's overflow
 * count, in its index word, counts the bans living beyond it whose home is at or before it:
 * raised before such a ban is published, lowered only after it is gone. It can never pass 60
 * (fifteen groups of four slots), so an atomic add never carries out of its bits. A ban lookup
 * that misses in a group stops there when its overflow count is zero, which at the table's
 * load is almost always at the home group. Bans are never evicted.
 *
 * Counters live in their home group only. Inserting one takes the group's insert lock (a bit
 * in slot 0), so a key is never in a group twice; updates of a present key are lock-free
 * compare-and-swaps of val, whose generation bits make a reassigned slot fail the swap. A new
 * key takes an empty slot, else evicts the cheapest: an ended window first, then the lowest
 * count, never a source whose hop count was verified recently (docs/datapath.md).
 */
#ifndef XDPBAN_TABLE_H
#define XDPBAN_TABLE_H

#include <linux/types.h>
#include "xdpban_config.h"
#include "xdpban_state.h"

#ifndef XDPBAN_INLINE
#define XDPBAN_INLINE static inline __attribute__((always_inline))
#endif

#define XDPBAN_GROUP_SLOTS 4
#define XDPBAN_SLOT_BYTES 32

struct xdpban_slot {
	__u64 ctl;     /* XDPBAN_CTL_* */
	__u64 val;     /* per table, see above */
	__u32 addr[4]; /* network byte order, as struct xdpban_key's addr */
};

struct xdpban_group {
	struct xdpban_slot slot[XDPBAN_GROUP_SLOTS];
} __attribute__((aligned(128)));

/* How many groups a table of a given capacity has: a ban table keeps its load at half its
 * slots, so that every ban finds room within its probe window (tests/unit/test_table.c measures
 * it); a counter table's capacity is its slots. The cold ban data has one record per slot. */
#define XDPBAN_BAN_GROUPS(bans_max) (((bans_max) * 2 + XDPBAN_GROUP_SLOTS - 1) / XDPBAN_GROUP_SLOTS)
#define XDPBAN_CTR_GROUPS(counters_max)                                                        \
	(((counters_max) + XDPBAN_GROUP_SLOTS - 1) / XDPBAN_GROUP_SLOTS)

/* ---- hashing ---- */

/* A key's hash: a keyed multiply-xorshift hash of its five words, taken as two 64-bit lanes
 * and one more word (the seed is chosen at random when the tables are made, xdpban_seed, so
 * that sources cannot be aimed at one group). */
XDPBAN_INLINE __u64 xdpban_key_hash(__u64 seed, const struct xdpban_key *key)
{
	const __u32 *w = (const __u32 *)key;
	__u64 h = (((__u64)w[0] | (__u64)w[1] << 32) ^ seed) * 0x9e3779b97f4a7c15ull;

	h = (h ^ (h >> 29) ^ ((__u64)w[2] | (__u64)w[3] << 32)) * 0xbf58476d1ce4e5b9ull;
	h = (h ^ (h >> 32) ^ w[4]) * 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

/* The home group from a key's hash: its top 32 bits reduced to [0, groups) by a multiply,
 * which needs no power of two. */
XDPBAN_INLINE __u32 xdpban_hash_home(__u64 h, __u32 groups)
{
	return (__u32)(((h >> 32) * (__u64)groups) >> 32);
}

XDPBAN_INLINE __u32 xdpban_key_home(__u64 seed, const struct xdpban_key *key, __u32 groups)
{
	return xdpban_hash_home(xdpban_key_hash(seed, key), groups);
}

/* The ban index's tag of a key from its hash: 14 low bits, which the home does not use;
 * never 0 (a free slot's tag). */
#define XDPBAN_IDX_TAG_BITS 14
#define XDPBAN_IDX_TAG_MASK 0x3fffull
XDPBAN_INLINE __u32 xdpban_hash_tag(__u64 h)
{
	__u32 tag = (__u32)(h & XDPBAN_IDX_TAG_MASK);

	return tag ? tag : 1;
}

/* A slot from a key's own bits, independent of its home group: where an insert's scan for
 * a victim begins. */
XDPBAN_INLINE int xdpban_key_spread(const struct xdpban_key *key)
{
	const __u32 *a = (const __u32 *)key->addr;

	return (int)(((a[0] ^ a[1] ^ a[2] ^ a[3]) * 0x9e3779b1u) >> 30);
}

/* ---- ctl ---- */
enum xdpban_slot_state {
	XDPBAN_SLOT_EMPTY = 0, /* never used since the table was made: a ban probe may stop */
	XDPBAN_SLOT_BUSY = 1,  /* claimed, being written */
	XDPBAN_SLOT_LIVE = 2,  /* holds a key */
	XDPBAN_SLOT_TOMB = 3,  /* was used and freed: reusable, a ban probe goes on */
};
#define XDPBAN_CTL_STATE_MASK 0x3ull
#define XDPBAN_CTL_GEN_SHIFT 2
#define XDPBAN_CTL_GEN_MASK (0x3fffull << XDPBAN_CTL_GEN_SHIFT) /* 14 bits */
#define XDPBAN_CTL_V6 (1ull << 16)                             /* family IPv6 */
#define XDPBAN_G0_LOCK (1ull << 17) /* slot 0 of a counter group: the group's insert lock */
#define XDPBAN_G0_BITS XDPBAN_G0_LOCK /* slot 0's bits of the group, not of the slot */
#define XDPBAN_CTL_PLEN_SHIFT 24
#define XDPBAN_CTL_PLEN_MASK (0xffull << XDPBAN_CTL_PLEN_SHIFT)
#define XDPBAN_CTL_AUX_SHIFT 32

XDPBAN_INLINE __u32 xdpban_ctl_state(__u64 ctl)
{
	return ctl & XDPBAN_CTL_STATE_MASK;
}

XDPBAN_INLINE __u32 xdpban_ctl_aux(__u64 ctl)
{
	return (__u32)(ctl >> XDPBAN_CTL_AUX_SHIFT);
}

XDPBAN_INLINE __u64 xdpban_ctl_with_aux(__u64 ctl, __u32 aux)
{
	return (ctl & 0xffffffffull) | ((__u64)aux << XDPBAN_CTL_AUX_SHIFT);
}

/* The identity bits of a key: family and prefix length. */
XDPBAN_INLINE __u64 xdpban_ctl_key(const struct xdpban_key *key)
{
	return (key->family == XDPBAN_FAMILY_INET6 ? XDPBAN_CTL_V6 : 0) |
	       ((__u64)key->prefixlen << XDPBAN_CTL_PLEN_SHIFT);
}

/* The ctl of a slot claimed from `old`: BUSY, the next generation, old's group bits. */
XDPBAN_INLINE __u64 xdpban_ctl_claimed(__u64 old)
{
	__u64 gen = (old + (1ull << XDPBAN_CTL_GEN_SHIFT)) & XDPBAN_CTL_GEN_MASK;

	return (old & XDPBAN_G0_BITS) | gen | XDPBAN_SLOT_BUSY;
}

/* The published ctl of a claimed slot holding key with aux. */
XDPBAN_INLINE __u64 xdpban_ctl_live(__u64 claimed, const struct xdpban_key *key, __u32 aux)
{
	return (claimed & (XDPBAN_G0_BITS | XDPBAN_CTL_GEN_MASK)) | xdpban_ctl_key(key) |
	       ((__u64)aux << XDPBAN_CTL_AUX_SHIFT) | XDPBAN_SLOT_LIVE;
}

/* A ban lives in its home group or in one of the XDPBAN_BAN_PROBE - 1 groups after it. */
#define XDPBAN_BAN_PROBE 16

/* A ban group's index word: slot i's tag in bits 14i..14i+13, the overflow count in 56..61. */
#define XDPBAN_IDX_TAG_SHIFT(slot) ((slot) * XDPBAN_IDX_TAG_BITS)
#define XDPBAN_IDX_TAG(word, slot) ((__u32)((word) >> XDPBAN_IDX_TAG_SHIFT(slot)) & 0x3fffu)
#define XDPBAN_IDX_OVF_SHIFT 56
#define XDPBAN_IDX_OVF_ONE (1ull << XDPBAN_IDX_OVF_SHIFT)
#define XDPBAN_IDX_OVF_MASK (0x3full << XDPBAN_IDX_OVF_SHIFT) /* at most 60: 15 groups of 4 */
/* 1 in the low bit of each of the four tag fields, so that REP * x is x in every field */
#define XDPBAN_IDX_REP 0x0000040010004001ull

/* 1 if any of the word's four slot tags is `tag`, without a branch or a loop (the verifier
 * walks a loop over the tags once per value it could leave behind): x is 0 exactly in the
 * fields equal to tag, and adding 0x1fff to a field's low 13 bits sets its bit 13 exactly
 * when the field is not 0, with no carry into the next field. */
XDPBAN_INLINE int xdpban_idx_has(__u64 word, __u32 tag)
{
	const __u64 low = 0x1fffull * XDPBAN_IDX_REP, high = 0x2000ull * XDPBAN_IDX_REP;
	__u64 x = (word ^ (__u64)tag * XDPBAN_IDX_REP) & (low | high);

	return ((((x & low) + low) | x) & high) != high;
}
/* aux of a ban: reason and classes (struct xdpban_ban) */
#define XDPBAN_BAN_AUX(reason, classes) ((__u32)(reason) | ((__u32)(classes) << 8))
#define XDPBAN_BAN_AUX_REASON(aux) ((__u8)(aux))
#define XDPBAN_BAN_AUX_CLASSES(aux) ((__u8)((aux) >> 8))

/* Where a ban was found: group index, slot, the key's tag, and the ctl and expiry read
 * together. */
struct xdpban_ban_ref {
	__u32 group;
	__u32 slot;
	__u64 ctl;
	__u64 expires_ns;
	__u32 tag;
	__u32 pad;
};

/* What a ban holds besides its key, expiry, reason and classes: read only by userspace. */
struct xdpban_ban_info {
	__u64 start_ns; /* CLOCK_BOOTTIME ns when the ban began */
	__u32 count;    /* the error count that caused it (0 for manual bans) */
	/* The error that crossed the limit (its last): its destination port (host order) and IP
	 * protocol (IPPROTO_*; 0: none, for a manual ban, a report, a malformed packet, or one
	 * stored by a build before these fields), and the rule of limits that judged it (enum
	 * xdpban_rule_id). */
	__u16 port;
	__u8 proto;
	__u8 rule;
};

/* A ban slot's drop count, one per CPU in xdpban_bandrops (at xdpban_ban_info_index): the
 * packets its ban dropped (or observe mode passed) on that CPU, under the slot's 14-bit
 * generation (XDPBAN_CTL_GEN_MASK), which a new claim changes. The data path starts a CPU's
 * count over when the generation differs, so no claim has to clear every CPU's word; a reader
 * sums the words of the ban's generation. A word left by a ban 16,384 claims of the slot
 * earlier would count again: a bound on the error of a statistic, never on a verdict. */
#define XDPBAN_DROPS_GEN_SHIFT 50
#define XDPBAN_DROPS_COUNT_MASK ((1ull << XDPBAN_DROPS_GEN_SHIFT) - 1)
#define XDPBAN_DROPS_GEN(ctl) (((ctl) & XDPBAN_CTL_GEN_MASK) >> XDPBAN_CTL_GEN_SHIFT)

/* The word after one more drop by the ban whose slot ctl is ctl. */
static inline __attribute__((always_inline)) __u64 xdpban_drops_next(__u64 word, __u64 ctl)
{
	__u64 gen = XDPBAN_DROPS_GEN(ctl);

	return word >> XDPBAN_DROPS_GEN_SHIFT == gen ? word + 1
						     : (gen << XDPBAN_DROPS_GEN_SHIFT) | 1;
}

/* The drops a CPU's word holds for the ban whose slot ctl is ctl. */
static inline __attribute__((always_inline)) __u64 xdpban_drops_of(__u64 word, __u64 ctl)
{
	return word >> XDPBAN_DROPS_GEN_SHIFT == XDPBAN_DROPS_GEN(ctl)
		       ? word & XDPBAN_DROPS_COUNT_MASK
		       : 0;
}

/* val of a counter: count (32 bits), the low 2 bits of the slot's generation, and the window
 * start in CLOCK_BOOTTIME seconds modulo 2^30 (34 years; a window is at most ten). */
#define XDPBAN_CTR_START_BITS 30
#define XDPBAN_CTR_START_MASK ((1u << XDPBAN_CTR_START_BITS) - 1)
#define XDPBAN_CTR_PACK(start_s, gen, count)                                                   \
	((((__u64)(start_s) & XDPBAN_CTR_START_MASK) << 34) | (((__u64)(gen) & 3) << 32) |     \
	 (__u32)(count))
#define XDPBAN_CTR_COUNT(val) ((__u32)(val))
#define XDPBAN_CTR_GEN(val) ((__u32)((val) >> 32) & 3)
#define XDPBAN_CTR_START(val) ((__u32)((val) >> 34))
/* The generation bits a claimed slot's val must carry. */
#define XDPBAN_CTL_GEN2(ctl) ((__u32)((ctl) >> XDPBAN_CTL_GEN_SHIFT) & 3)

/* aux of a counter: the spoof defence's record of the source (docs/datapath.md, section 8):
 * its reference hop count, flags, and when its hop count was last verified. */
#define XDPBAN_CTR_AUX(hop, flags, stamp)                                                      \
	((__u32)(hop) | ((__u32)(flags) << 8) | ((__u32)(stamp) << 16))
#define XDPBAN_CTR_AUX_HOP(aux) ((__u8)(aux))
#define XDPBAN_CTR_AUX_FLAGS(aux) ((__u8)((aux) >> 8))
#define XDPBAN_CTR_AUX_STAMP(aux) ((__u16)((aux) >> 16))
enum xdpban_ctr_flag {
	XDPBAN_CTR_VERIFIED = 1, /* hop count learned from a segment of an established TCP
				  * connection (return path proven) */
	XDPBAN_CTR_HOPREF = 2,   /* hop count of the first error of the current window */
	XDPBAN_CTR_DISPUTED = 4, /* an error's hop count disagreed: no more counting in this
				  * window */
	XDPBAN_CTR_BANNING = 8,  /* over the limit: one error (on one CPU) is storing the ban;
				  * cleared when it is stored (the counter starts over) or found
				  * no room (the next error tries again) */
};
/* The flags' high four bits: the classes (enum xdpban_class) of the errors counted in the
 * current window, for `xdpban query`; cleared when a window starts or a ban starts the counter
 * over. Information only: no rule reads them, and a lost race only loses a bit of it. */
#define XDPBAN_CTR_CLASSES_SHIFT 4
#define XDPBAN_CTR_CLASSES_FLAGS 0xf0u
#define XDPBAN_CTR_FLAGS_CLASSES(flags) ((__u8)((flags) >> XDPBAN_CTR_CLASSES_SHIFT))
#define XDPBAN_CTR_CLASSES_FLAG(classes) ((__u8)((classes) << XDPBAN_CTR_CLASSES_SHIFT))
_Static_assert(XDPBAN_CLASS__COUNT <= 8 - XDPBAN_CTR_CLASSES_SHIFT,
	       "every error class has a bit in a counter's flags");
/* A verification stamp counts time in units of 64 s, modulo 2^16 (48 days). */
#define XDPBAN_STAMP_SHIFT 6
/* A verified source stays protected from eviction this long after its last verification. */
#define XDPBAN_VERIFIED_KEEP_S 86400u

/* A counter found in its group: which slot, and ctl and val read together. An index, not a
 * pointer, so that a step of the BPF side (xdpban_table_ops.h) can take it. */
struct xdpban_ctr_ref {
	__u32 slot;
	__u32 pad;
	__u64 ctl;
	__u64 val;
};

/* A new counter, for xdpban_ctr_insert: its window start, count and aux; window_s and
 * verified choose the victim (xdpban_ctr_cost). */
struct xdpban_ctr_new {
	__u32 now_s;
	__u32 window_s;
	__u32 count;
	__u32 aux;
	__u8 verified;
	__u8 pad[3];
};

/* The hop count of a packet from its TTL or hop limit: the distance from the smallest usual
 * initial value (30, 32, 60, 64, 128, 255) at or above it (Jin, Wang and Shin, CCS 2003). */
XDPBAN_INLINE __u8 xdpban_hop_of_ttl(__u8 ttl)
{
	__u32 init = ttl <= 30 ? 30 : ttl <= 32 ? 32 : ttl <= 60 ? 60 : ttl <= 64 ? 64
		   : ttl <= 128 ? 128 : 255;

	return (__u8)(init - ttl);
}

#define XDPBAN_HOP_NONE 0xff /* an error with no packet behind it (a report) */

/* One error event to count. */
struct xdpban_error {
	__u32 n;         /* errors, >= 1 */
	__u32 now_s;     /* CLOCK_BOOTTIME seconds */
	__u32 window_s;
	__u8 hop;        /* the packet's hop count, or XDPBAN_HOP_NONE */
	__u8 spoof;      /* enum xdpban_spoof_mode in force for this error */
	__u8 tolerance;  /* hop counts this far apart still agree */
	__u8 classes;    /* enum xdpban_class bits of the error */
};

enum xdpban_count_result {
	XDPBAN_COUNT_COUNTED = 0,    /* counted; *count is the source's new count */
	XDPBAN_COUNT_SUSPECT = 1,    /* not counted: its hop count disagrees, or the source is
				      * disputed for this window (errors_suspect) */
	XDPBAN_COUNT_UNVERIFIED = 2, /* not counted: spoof mode `verified` and the source never
				      * proved its return path (errors_unverified) */
	XDPBAN_COUNT_FULL = 3,       /* not counted: no slot of the group could be taken
				      * (counter_full) */
};

#endif /* XDPBAN_TABLE_H */
