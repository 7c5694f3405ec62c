/* policy_plan.h - what a compile (xb_policy_compile, policy.h) will change, worked out in plain
 * memory (policy_plan.c): the policy sets a caller hands in, the options and results that every
 * layer of a compile shares, and one family's plan (the sorted sets before and after, what to
 * write, what to delete, which prefixes to touch first). The bottom of the policy module: it
 * includes none of its headers, and nothing declared here touches a map, a file descriptor or
 * a syscall.
 */
#ifndef XB_POLICY_PLAN_H
#define XB_POLICY_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "libxdpban.h"

/* ---- compiling a whole set: what a caller hands in and gets back (policy.h) ---- */

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
/* A keep that keeps the manual prefix bans (list XDPBAN_LIST_MANUAL_BAN): the lists' compile
 * leaves them to `ban` and `unban`. */
bool xb_keep_manual_bans(const struct xb_policy_entry *old, void *ctx);

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

/* ---- one family's plan ---- */

/* Eight bytes of an address (network order) as a number. */
static inline __u64 xb_be64_load(const __u8 *b)
{
	__u64 v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | b[i];
	return v;
}

/* A growing array of entries. */
struct xb_entry_list {
	struct xb_policy_entry *v;
	size_t n, cap;
};

/* Entries of a plan's old or next by their place: the changes name the entries they change
 * instead of copying them (three copies of a million entries cost more in fresh pages than
 * the rest of the plan, measured on this kind of VM). */
struct xb_ref_list {
	__u32 *v;
	size_t n, cap;
};
#define XB_REF_OLD 0x80000000u /* in touch: the place is in old, not in next */

/* Room for `more` entries past l->n, so that pushes do not move the list. 0 or -ENOMEM. */
int xb_entry_list_reserve(struct xb_entry_list *l, size_t more);
/* Appends a copy of e, its prefix made canonical (no bits set past the length). 0 or -ENOMEM. */
int xb_entry_list_push(struct xb_entry_list *l, const struct xb_policy_entry *e);
/* Sorts by prefix (address, then length), unless it is sorted already. */
void xb_entry_list_sort(struct xb_entry_list *l);

/* A record's place in an order as numbers (hi, then lo, then plen), and where it is. */
struct xb_sort_rec {
	__u64 hi, lo;
	__u32 plen, at;
};
/* Sorts n records with room for n more past them: the sorted ones, at recs or recs + n. */
struct xb_sort_rec *xb_recs_order(struct xb_sort_rec *recs, size_t n);
/* Sorts the n records of `size` bytes at v in place by recs, where recs[i] describes record
 * i and has room for n more records past them: a merge sort of the numbers, then each record
 * moved once (qsort moving whole records costs several times more). recs is used up. 0, or
 * -ENOMEM and v as it was. */
int xb_recs_sort(struct xb_sort_rec *recs, size_t n, void *v, size_t size);

/* What one family's compile does: the sets before and after, and the changes between. */
struct xb_plan {
	__u8 family;
	struct xb_entry_list old;     /* in the trie now, sorted */
	struct xb_entry_list next;    /* what the trie will hold, sorted */
	struct xb_ref_list write;     /* entries of `next` that are new or changed, in write order */
	struct xb_ref_list remove;    /* entries of `old` that are not in `next` */
	struct xb_ref_list touch;     /* prefixes whose codes may change, LOOKUP first: places in
				       * next, or in old with XB_REF_OLD */
	size_t kept;
	size_t added;                 /* entries of `write` that take a new place in the trie */
	/* Where a second writer may start in write (in remove): no entry on one side of it
	 * covers an entry on the other, so each source's entries are all on one side and keep
	 * their order (policy.h); the such place nearest the middle, 0 where there is none. */
	size_t write_split, remove_split;
	bool remove_first;            /* the trie cannot hold `old` and `write` at once */
	bool changed;                 /* its compile has begun to change the maps */
};

void xb_plan_free(struct xb_plan *p);

static inline const struct xb_policy_entry *xb_plan_written(const struct xb_plan *p, size_t i)
{
	return &p->next.v[p->write.v[i]];
}

static inline const struct xb_policy_entry *xb_plan_removed(const struct xb_plan *p, size_t i)
{
	return &p->old.v[p->remove.v[i]];
}

static inline const struct xb_prefix *xb_plan_touched(const struct xb_plan *p, size_t i)
{
	__u32 at = p->touch.v[i];

	return at & XB_REF_OLD ? &p->old.v[at & ~XB_REF_OLD].prefix : &p->next.v[at].prefix;
}
/* The prefix as text for a message, or "(a bad prefix)". */
void xb_prefix_describe(const struct xb_prefix *p, char *buf, size_t len);
/* Refuses the set as a whole (family, length, verdict), before anything changes. 0 or -EINVAL
 * with one line in err. */
int xb_policy_set_check(const struct xb_policy_set *set, char *err, size_t errlen);
/* The set's entries of the plan's family into p->next, sorted; a prefix twice is refused
 * (-EINVAL with one line in err). 0, -EINVAL or -ENOMEM. */
int xb_plan_take_set(struct xb_plan *p, const struct xb_policy_set *set, char *err,
		     size_t errlen);
/* Adds to p->next the entries of p->old (sorted) that opts->keep keeps and the set does not
 * name. 0 or -ENOMEM. */
int xb_plan_keep_old(struct xb_plan *p, const struct xb_compile_opts *opts);
/* Walks p->old and p->next in step: what to write, what to delete, which prefixes to touch.
 * 0, or -ENOMEM (also for lists too long for a place in a struct xb_ref_list). */
int xb_plan_diff(struct xb_plan *p);

#endif /* XB_POLICY_PLAN_H */
