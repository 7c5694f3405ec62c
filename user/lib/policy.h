/* policy.h - the one writer of the policy: the LPM tries and the flat table in front of them
 * (include/xdpban_flat.h). Every userspace write or delete of a policy entry goes through
 * here; never write xdpban_policy4/6 directly (a prefix written past this module may go
 * unenforced where the table holds a pure code).
 *
 * The rule that keeps the data path right at every instant: a code goes from pure to LOOKUP
 * only before the trie changes, and from LOOKUP to pure only after the trie holds the entries
 * the code stands for. So:
 *   - put/delete of one entry first sets LOOKUP in every region the entry touches, then changes
 *     the trie; the table stays correct, only slower there until the next compile;
 *   - compile makes the tries hold exactly a given set (LOOKUP first where the set changes
 *     anything), then writes exact codes for every region, finest level first (level 2, the
 *     middle level, level 1), computed from a sorted copy of the set, never from lookups in
 *     the trie; then the guard word, which tells the data path to read the codes at all.
 * A compile is atomic per source: at every instant, each address gets from the tries either
 * the verdict of the old set or that of the new one, never a third (a denied source that the
 * new set denies too is never passed, an allowed one never dropped). The new and changed
 * entries go in each after every entry inside it (longest first along every chain of nested
 * prefixes, otherwise in address order), then the doomed ones go in address order, each
 * before the entries inside it (policy_plan.c says why that suffices). The one exception is a trie too small to hold the old and the new entries at
 * once: removals go first, and the result says so (removals_first).
 * Level 3 (the IPv4 lines in xdpban_flat4x) and the IPv6 lines (xdpban_flat6x, flat6_live.c)
 * have their own rule, written out in flat_live.c: every line in the map is exact for the trie
 * at every instant; a line is deleted before the trie changes in its region and written only
 * after; a writer that cannot reach the lines turns the family's guard from
 * XDPBAN_FLAT_COMPILED_L3 back to XDPBAN_FLAT_COMPILED before it changes the trie.
 * Writers must be serialised by the caller: while xdpband runs it is the only writer; the CLI
 * writes directly only under the pin-directory lock.
 */
#ifndef XB_POLICY_H
#define XB_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "libxdpban.h"
#include "xdpban_flat.h"

/* ---- the flat table as plain memory (no kernel needed) ---- */

/* The levels of codes in words[XDPBAN_FLAT_WORDS], coarsest (read first) to finest: level 1
 * (/16), the middle level (/22), level 2 (/24). */
#define XB_FLAT_LEVELS 3
struct xb_flat_level {
	unsigned int bits; /* regions are /bits */
	__u32 base;        /* its first word */
	__u32 words;
};
extern const struct xb_flat_level xb_flat_levels[XB_FLAT_LEVELS];

/* Computes the exact codes of one family's entries (others in the array are skipped) into
 * words[XDPBAN_FLAT_WORDS], every level. Entries need no order. 0, -EINVAL (a prefix of length
 * 32 or less named twice) or -ENOMEM. */
int xb_flat_build(const struct xb_policy_entry *entries, size_t n, __u8 family, __u64 *words);
/* The code of the region holding `top` (an address's top 32 bits, host order) at the level of
 * /bits regions (XDPBAN_FLAT_L1_BITS, _MID_BITS or _L2_BITS); LOOKUP for any other bits. */
__u32 xb_flat_code(const __u64 *words, unsigned int bits, __u32 top);
/* The top 32 bits of a prefix's address, host order, bits past the length cleared. */
__u32 xb_prefix_top(const struct xb_prefix *p);

/* Level 3 (IPv4): the line of /32 codes of one /24 region. */
struct xb_flat_line {
	__u32 region; /* the /24: address >> 8, host order */
	struct xdpban_flat_line line;
};
/* Computes the lines of the IPv4 entries (others skipped): one for each /24 that holds an
 * entry longer than /24 and that no timed entry covers or lies in, sorted by region.
 * *lines is malloc'ed (NULL when there are none). 0, -EINVAL (a prefix twice) or -ENOMEM. */
int xb_flat_lines_build(const struct xb_policy_entry *entries, size_t n,
			struct xb_flat_line **lines, size_t *count);
/* Sorts lines by region; the order of two lines for bsearch and qsort. */
void xb_flat_lines_sort(struct xb_flat_line *lines, size_t n);
int xb_flat_line_cmp(const void *a, const void *b);
/* The level-3 code of an IPv4 address (host order) in sorted lines; LOOKUP when its /24 has
 * no line. */
__u32 xb_flat_lines_code(const struct xb_flat_line *lines, size_t count, __u32 addr);

/* The IPv6 lines (xdpban_flat6x): the line of one region of depth 24, 32, 40, 48 or 56 bits. */
struct xb_flat6_line {
	__u64 key; /* xdpban_flat6_key: the region's first 64 bits, its depth in the low byte */
	struct xdpban_flat_line line;
};
/* Computes the lines of the IPv6 entries (others skipped): one for each region of a line depth
 * that holds an entry longer than the region and that no timed entry covers or lies in, in
 * their order: by depth, coarsest first, then by region (xb_flat6_key_rank). *lines is
 * malloc'ed (NULL when there are none). 0, -EINVAL (a prefix twice) or -ENOMEM. */
int xb_flat6_lines_build(const struct xb_policy_entry *entries, size_t n,
			 struct xb_flat6_line **lines, size_t *count);
/* The line with that key in sorted lines, or NULL. */
const struct xb_flat6_line *xb_flat6_lines_find(const struct xb_flat6_line *lines, size_t n,
						__u64 key);
/* What the data path's walk down sorted lines gives an address whose first 64 bits are hi
 * (host order): a pure code, or LOOKUP (a line missing, or LOOKUP at /64: the trie). */
__u32 xb_flat6_lines_code(const struct xb_flat6_line *lines, size_t n, __u64 hi);

/* A flat map mmapped for writing. */
struct xb_flat {
	__u64 *words; /* XDPBAN_FLAT_ENTRIES words shared with the data path: the codes, then the
		       * guard */
	int fd;
	struct xb_map_views *views; /* where words came from (struct xb_maps) */
};
/* Maps the flat table of a family after checking that fd really is one. 0 or -errno
 * (-EPROTO: not a flat table). */
int xb_flat_open(struct xb_flat *t, const struct xb_maps *m, __u8 family);
void xb_flat_close(struct xb_flat *t);

/* ---- single changes ---- */

/* Adds or replaces one entry (flags: BPF_ANY, BPF_NOEXIST, BPF_EXIST), LOOKUP first. 0 or
 * -errno: -EINVAL for a bad prefix or verdict, the trie's error otherwise. */
int xb_policy_put(const struct xb_maps *m, const struct xb_prefix *p,
		  const struct xdpban_policy *val, __u64 flags);
/* Deletes the entry at exactly p, LOOKUP first. 0, -ENOENT or -errno. */
int xb_policy_delete(const struct xb_maps *m, const struct xb_prefix *p);

/* ---- compiling a whole set ---- */

struct xb_policy_set {
	struct xb_policy_entry *v;
	size_t n, cap;
};
/* Appends an entry (no check: xb_policy_compile checks the whole set). 0 or -ENOMEM. */
int xb_policy_set_add(struct xb_policy_set *s, const struct xb_prefix *p,
		      const struct xdpban_policy *val);
/* Room for `more` entries, so that adding a large list does not move it as it grows. 0 or
 * -ENOMEM. */
int xb_policy_set_reserve(struct xb_policy_set *s, size_t more);
void xb_policy_set_free(struct xb_policy_set *s);

/* Where a compile is; an observer sees each point (tests hold the data path to the tries, the
 * daemon shows progress), with the family's trie changes (writes and deletes) done so far and
 * in all. */
enum xb_compile_step {
	XB_COMPILE_TOUCHED,   /* LOOKUP set where the set changes anything; tries unchanged */
	XB_COMPILE_TRIE_STEP, /* one batch of trie writes or deletes done */
	XB_COMPILE_TRIE_DONE, /* the trie holds the new set; codes not yet written */
	XB_COMPILE_L2_DONE,   /* level 2 exact; the middle level and level 1 not yet written */
	XB_COMPILE_MID_DONE,  /* the middle level exact too; level 1 not yet written */
};

struct xb_compile_opts {
	/* Entries already in the tries to keep when the set does not name their prefix (the
	 * daemon keeps manual bans); NULL keeps none. */
	bool (*keep)(const struct xb_policy_entry *old, void *ctx);
	void (*observe)(__u8 family, enum xb_compile_step step, size_t done, size_t total,
			void *ctx); /* NULL: none */
	void *ctx;
	__u32 batch; /* trie updates per syscall; 0: a default */
	/* Threads writing a family's trie: 1, or 2 where the plan can be split (policy_write.c);
	 * 0: two for a list of writes (or of removals) of at least XB_TRIE_WRITERS_MIN entries,
	 * on two or more CPUs. The observer is called from the compile's own thread only. */
	__u32 writers;
};
#define XB_TRIE_WRITERS_MIN 16384u

struct xb_compile_result {
	size_t written;   /* entries added or changed in the tries */
	size_t removed;   /* entries deleted */
	size_t kept;      /* entries kept by opts->keep */
	size_t entries;   /* in the tries now, both families */
	__u32 pure_l1[2];  /* [0] IPv4, [1] IPv6: regions answered at level 1, of 65,536 */
	__u32 pure_mid[2]; /* ... at the middle level, of 4,194,304 */
	__u32 pure_l2[2];  /* ... at level 2, of 16,777,216 */
	__u32 lines4;      /* IPv4 /24 regions answered at level 3 (a line each) */
	__u32 lines4_full; /* IPv4 /24 regions that qualified for a line but found level 3 full:
			    * left to the trie (right, slower); never an error */
	__u32 lines6;      /* IPv6 lines in xdpban_flat6x (all depths) */
	__u32 lines6_full; /* IPv6 lines computed but left out for room (the trie answers) */
	__u32 hosts6;      /* permanent IPv6 /128 entries in xdpban_host6 */
	__u32 hosts6_full; /* ... left out, for room (the trie answers) */
	bool removals_first; /* a trie could not hold the old and new entries at once: the
			      * removals went first, so the compile was not atomic per source */
};

/* Makes the tries of both families hold exactly `set` (plus what opts->keep keeps; an entry
 * of the set wins over a kept one with the same prefix), then writes exact codes. A bad set (a
 * prefix twice, a bad length, family or verdict) is refused with one line in err before
 * anything changes, and so is a set that a trie cannot hold (-ENOSPC, naming the count and the
 * trie's max_entries). Entries are written before the ones that go are removed, unless the
 * trie cannot hold both at once. A compile that fails midway (a trie full or out of memory)
 * is rolled back: every family it changed is compiled back to the entries it held before, and
 * err says "rolled back" (or, if that failed too, that the tries hold part of the new set,
 * with LOOKUP wherever they may differ: right for what they hold, slower until the next
 * compile). opts and res may be NULL. 0 or -errno. */
int xb_policy_compile(const struct xb_maps *m, const struct xb_policy_set *set,
		      const struct xb_compile_opts *opts, struct xb_compile_result *res,
		      char *err, size_t errlen);
/* Writes exact codes for the tries as they are (after single changes, e.g. when timed entries
 * have gone). 0 or -errno with one line in err. */
int xb_policy_recompile(const struct xb_maps *m, struct xb_compile_result *res, char *err,
			size_t errlen);

/* Every line level 3 holds now, decoded, sorted by region, in *lines (free() it). 0 or -errno
 * (-EPROTO: m->flat4x is not an xdpban line table). */
int xb_flat_lines_read(const struct xb_maps *m, struct xb_flat_line **lines, size_t *n);
/* Every IPv6 line xdpban_flat6x holds now, in their order, in *lines (free() it). 0 or -errno
 * (-EPROTO: m->flat6x is not an xdpban IPv6 line table). */
int xb_flat6_lines_read(const struct xb_maps *m, struct xb_flat6_line **lines, size_t *n);
/* An entry of xdpban_host6: a permanent /128 and its code. */
struct xb_h6_host {
	struct xdpban_host6_key key;
	__u32 code;
};
/* Every IPv6 host entry xdpban_host6 holds now, in the map's order, in *hosts (free() it). 0
 * or -errno. */
int xb_h6_read(const struct xb_maps *m, struct xb_h6_host **hosts, size_t *n);

#endif /* XB_POLICY_H */
