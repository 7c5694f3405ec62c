/* policy_internal.h - what the files of the policy module (policy.h) share, and nobody
 * else may use: flat.c and policy_plan.c compute in plain memory (no map, no syscall);
 * flat_live.c writes the flat maps (xdpban_flat4/6 through mmap, the level-3 lines in
 * xdpban_flat4x), flat6_live.c the IPv6 lines in xdpban_flat6x; policy.c reads the tries and
 * runs a compile, policy_write.c writes a compile's changes into them. Declared here once,
 * defined once in the file named above each group.
 */
#ifndef XB_POLICY_INTERNAL_H
#define XB_POLICY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "libxdpban.h"
#include "policy.h"

#define XB_FLAT_L3_SHIFT (32 - XDPBAN_FLAT_L2_BITS) /* address >> XB_FLAT_L3_SHIFT: its /24 */

/* Every store into a live table is one aligned 8-byte store of a whole word, so the data path
 * reads either the old word or the new one, never a mix. The caller is the only writer. */
static inline __u64 word_load(const __u64 *w)
{
	return __atomic_load_n(w, __ATOMIC_RELAXED);
}

static inline void word_store(__u64 *w, __u64 v)
{
	__atomic_store_n(w, v, __ATOMIC_RELEASE);
}

/* ---- flat.c: codes in plain memory ---- */

/* LOOKUP in every region (levels 1 and 2) whose code a change of the entry at p could make
 * wrong. */
void xb_flat_touch(__u64 *words, const struct xb_prefix *p);
/* Pure codes in a level: a code is pure when either of its two bits is set. */
__u32 xb_flat_count_pure(const __u64 *level, __u32 nwords);
/* A line as the data path's slot holds it (codes only; the key is the writer's): 0, or
 * -EINVAL when a code is LOOKUP, which a slot cannot hold. */
int xb_flat_slot_encode(const struct xdpban_flat_line *line, struct xdpban_flat_slot *slot);
void xb_flat_slot_decode(const struct xdpban_flat_slot *slot, struct xdpban_flat_line *line);
/* An IPv6 line's key as a number in the lines' order: by depth, then by region. */
__u64 xb_flat6_key_rank(__u64 key);
/* Room for one more line at (*v)[*n]. 0 or -ENOMEM. */
int xb_flat_lines_push(struct xb_flat_line **v, size_t *n, size_t *cap);
int xb_flat6_lines_push(struct xb_flat6_line **v, size_t *n, size_t *cap);

/* ---- policy_plan.c: what a compile changes ---- */

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

/* ---- policy.c and policy_write.c: the tries ---- */

#define XB_TRIE_ENOMEM_RETRIES 5 /* an LPM trie update can fail with ENOMEM while it grows */

/* xdpban_policy4 or xdpban_policy6, for messages. */
const char *xb_policy_trie_name(__u8 family);

static inline void xb_plan_observe(const struct xb_compile_opts *opts, const struct xb_plan *p,
				   enum xb_compile_step step, size_t done)
{
	if (opts && opts->observe)
		opts->observe(p->family, step, done, p->write.n + p->remove.n, opts->ctx);
}

/* Writes the plan's new and changed entries into its family's trie, then removes its doomed
 * ones (the removals first when p->remove_first), so that every entry of old or next is in
 * force throughout. 0 or -errno with one line in err; the trie holds part of the change. */
int xb_plan_apply_trie(const struct xb_plan *p, const struct xb_maps *m,
		       const struct xb_compile_opts *opts, char *err, size_t errlen);

/* ---- nodeny.c: allow-only mode's reasons (xdpban_nodeny16) ---- */

/* Clears the bits of the regions every deny entry of l touches: the step before they enter a
 * trie (a deny entry already in it has its bits clear: clearing them again changes nothing).
 * 0 or -errno (the map not mapped). */
int xb_nodeny_clear_denies(const struct xb_maps *m, const struct xb_entry_list *l);
/* Sets the family's bits exactly for set (sorted or not), which the trie holds. 0 or -errno. */
int xb_nodeny_write(const struct xb_maps *m, __u8 family, const struct xb_entry_list *set);

/* ---- flat_live.c: the flat maps while the data path reads them ---- */

/* LOOKUP in every region the entry at p touches, and no level-3 line there (or no lines read
 * at all): the step before any single change of a trie. 0 or -errno (the table not mapped). */
int xb_flat_touch_live(const struct xb_maps *m, const struct xb_prefix *p);

/* Maps an mmapable array of line slots of value_size bytes for writing (from vs when kept): 0,
 * or -errno (-EPROTO: not such an array). */
int xb_slots_map(struct xb_map_views *vs, int fd, size_t value_size, void **slots, __u32 *n);
void xb_slots_unmap(struct xb_map_views *vs, void **slots, __u32 *n, size_t value_size);

/* ---- views.c: mappings kept across compiles (xb_maps_keep_views) ---- */

/* len bytes of the mmapable map fd, mapped for writing: vs's mapping of it when vs is not
 * NULL (made and kept on first use), else a fresh one. NULL with errno. */
void *xb_map_view(struct xb_map_views *vs, int fd, size_t len);
/* Unmaps p unless vs keeps it. */
void xb_map_unview(struct xb_map_views *vs, void *p, size_t len);
/* Rule 3 of flat_live.c, for the lines of t's family: from now on the data path reads none. */
void xb_lines_disable(struct xb_flat *t);
/* Waits for an RCU grace period (rule 4 of flat_live.c). 0 or -errno. */
int xb_rcu_wait(void);

/* Lines as they are in the map. */
struct xb_line_dump {
	struct xb_flat_line *v;
	size_t n, cap;
};

/* xdpban_flat4x mapped for writing. */
struct xb_l3_map {
	struct xdpban_flat_slot *slots;
	__u32 n;
	struct xb_map_views *views;
};

/* What a compile knows of the lines: the map's fd, or -1 when level 3 is off. */
struct xb_l3_live {
	int fd;
	struct xb_l3_map map;
	struct xb_line_dump old; /* the lines in the map before the compile, sorted */
	bool *gone;              /* old lines deleted by rule 1 */
};

/* Opens level 3 for a compile of IPv4; when it cannot, turns it off (rule 3, flat_live.c). */
void xb_l3_live_open(struct xb_l3_live *l, const struct xb_maps *m, struct xb_flat *t);
void xb_l3_live_free(struct xb_l3_live *l);
/* Rule 1 for a compile: deletes the old lines in the regions a touched prefix covers. */
void xb_l3_forget(struct xb_l3_live *l, const struct xb_prefix *p);
/* Rule 2, after the trie holds the new set: drops the old lines the set no longer has, then
 * writes the new ones (sorted by region) that differ, counting them in res. False when level 3
 * had to be turned off. */
bool xb_l3_write(struct xb_l3_live *l, struct xb_flat *t, const struct xb_flat_line *lines,
		 size_t n, struct xb_compile_result *res);

/* ---- flat6_live.c: the IPv6 lines in xdpban_flat6x, by level 3's rules ---- */

struct xb_line6_dump {
	struct xb_flat6_line *v;
	size_t n, cap;
};

struct xb_l6_map {
	struct xdpban_flat6_slot *slots;
	__u32 n;
	struct xb_map_views *views;
};

/* What a compile of IPv6 knows of the lines: the map's fd, or -1 when they are off. */
struct xb_l6_live {
	int fd;
	struct xb_l6_map map;
	struct xb_line6_dump old; /* the lines in the map before the compile, in their order */
	__u32 *slot;              /* the slot of each old line */
	bool *gone;               /* old lines deleted, or doomed to be by the next xb_l6_flush */
	__u64 *doomed;            /* a bit per slot: deleted by the next xb_l6_flush */
	size_t cursor[XDPBAN_FLAT6_DEPTHS]; /* per depth: where xb_l6_forget last began */
	const struct xb_maps *maps;         /* for the IPv6 hosts, which end the walk */
	struct xb_flat *table;              /* whose guard turns the lines off */
};

/* Rule 1 for a single change of the IPv6 trie at p: no line or host entry there, or (a map
 * not usable) no line read at all. 0. */
int xb_l6_touch_live(const struct xb_maps *m, struct xb_flat *t, const struct xb_prefix *p);
/* The level-3 calls above, for the IPv6 lines. */
void xb_l6_live_open(struct xb_l6_live *l, const struct xb_maps *m, struct xb_flat *t);
void xb_l6_live_free(struct xb_l6_live *l);
/* Dooms the old lines in the regions p touches, which xb_l6_flush deletes, and deletes the
 * host entry of p (or turns the lines off, when it cannot); both before the trie changes. */
void xb_l6_forget(struct xb_l6_live *l, const struct xb_prefix *p);
void xb_l6_flush(struct xb_l6_live *l);
bool xb_l6_write(struct xb_l6_live *l, struct xb_flat *t, const struct xb_flat6_line *lines,
		 size_t n, struct xb_compile_result *res);

/* ---- host6_live.c: the IPv6 hosts in xdpban_host6, by the lines' rules ---- */

/* Rule 1 for the /128 entry at p (nothing for any other prefix): its host entry deleted, the
 * step before the trie's entry changes. 0, or -errno: then the caller turns the IPv6 lines off
 * (rule 3), since the walk that reads the hosts is theirs. */
int xb_h6_forget(const struct xb_maps *m, const struct xb_prefix *p);
/* Rule 2, after the trie holds set: exactly a host entry for each of its permanent IPv6 /128
 * entries, counted in res (one that does not fit is left to the trie). 0, or -errno when an
 * entry set does not give could not be deleted: then the caller turns the IPv6 lines off. */
int xb_h6_write(const struct xb_maps *m, const struct xb_entry_list *set,
		struct xb_compile_result *res);

#endif /* XB_POLICY_INTERNAL_H */
