/* policy.c - the policy: reading the tries (every prefix with its verdict and list, the counts
 * per list that `xdpban lists` shows) and writing them together with the flat table in front
 * of them (policy.h). The only place that writes xdpban_policy4/6, xdpban_flat4/6 or the IPv4
 * level-3 lines in xdpban_flat4x: lists (xdpband), manual prefix bans (bans.c), the sweep and
 * the state file all come through here.
 * It must never store a pure code that the tries do not back at that instant (policy.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "libxdpban.h"
#include "policy.h"

const char *xb_verdict_name(__u32 verdict)
{
	switch (verdict) {
	case XDPBAN_POLICY_NONE:
		return "none";
	case XDPBAN_POLICY_DENY:
		return "deny";
	case XDPBAN_POLICY_TRUSTED:
		return "trusted";
	}
	return "?";
}

size_t xb_lpm_key_make(const struct xb_prefix *p, union xb_lpm_key *key)
{
	memset(key, 0, sizeof(*key));
	if (p->family == XDPBAN_FAMILY_INET) {
		key->v4.prefixlen = p->plen;
		memcpy(key->v4.addr, p->addr, sizeof(key->v4.addr));
		return sizeof(key->v4);
	}
	key->v6.prefixlen = p->plen;
	memcpy(key->v6.addr, p->addr, sizeof(key->v6.addr));
	return sizeof(key->v6);
}

void xb_lpm_key_to_prefix(__u8 family, const void *key, struct xb_prefix *p)
{
	memset(p, 0, sizeof(*p));
	p->family = family;
	if (family == XDPBAN_FAMILY_INET) {
		const struct xdpban_lpm4_key *k = key;

		p->plen = k->prefixlen;
		memcpy(p->addr, k->addr, sizeof(k->addr));
	} else {
		const struct xdpban_lpm6_key *k = key;

		p->plen = k->prefixlen;
		memcpy(p->addr, k->addr, sizeof(k->addr));
	}
}

int xb_policy_fd(const struct xb_maps *m, __u8 family)
{
	return family == XDPBAN_FAMILY_INET ? m->policy4 : m->policy6;
}

struct policy_walk {
	__u8 family;
	__u64 now_ns;
	xb_policy_cb cb;
	void *ctx;
};

static int policy_entry(const void *key, const void *value, void *ctx)
{
	const struct policy_walk *walk = ctx;
	struct xb_policy_entry e = {};

	xb_lpm_key_to_prefix(walk->family, key, &e.prefix);
	memcpy(&e.policy, value, sizeof(e.policy));
	e.expired = e.policy.expires_ns && walk->now_ns >= e.policy.expires_ns;
	return walk->cb(&e, walk->ctx);
}

int xb_policy_foreach_family(const struct xb_maps *m, __u8 family, xb_policy_cb cb, void *ctx)
{
	struct policy_walk walk = { family, xb_boot_ns(), cb, ctx };

	if (family == XDPBAN_FAMILY_INET)
		return xb_map_foreach(m->policy4, sizeof(struct xdpban_lpm4_key),
				      sizeof(struct xdpban_policy), policy_entry, &walk);
	if (family == XDPBAN_FAMILY_INET6)
		return xb_map_foreach(m->policy6, sizeof(struct xdpban_lpm6_key),
				      sizeof(struct xdpban_policy), policy_entry, &walk);
	return -EAFNOSUPPORT;
}

int xb_policy_foreach(const struct xb_maps *m, xb_policy_cb cb, void *ctx)
{
	int ret = xb_policy_foreach_family(m, XDPBAN_FAMILY_INET, cb, ctx);

	return ret ? ret : xb_policy_foreach_family(m, XDPBAN_FAMILY_INET6, cb, ctx);
}

struct list_tally {
	struct xb_list_count *rows;
	size_t n, cap;
};

static struct xb_list_count *tally_row(struct list_tally *t, __u32 list_id, __u32 verdict)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->rows[i].list_id == list_id && t->rows[i].verdict == verdict)
			return &t->rows[i];
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		struct xb_list_count *rows = realloc(t->rows, cap * sizeof(*rows));

		if (!rows)
			return NULL;
		t->rows = rows;
		t->cap = cap;
	}
	t->rows[t->n] = (struct xb_list_count){ .list_id = list_id, .verdict = verdict };
	return &t->rows[t->n++];
}

static int tally_entry(const struct xb_policy_entry *e, void *ctx)
{
	struct xb_list_count *row;

	if (e->expired)
		return 0;
	row = tally_row(ctx, e->policy.list_id, e->policy.verdict);
	if (!row)
		return -ENOMEM;
	if (e->prefix.family == XDPBAN_FAMILY_INET)
		row->ipv4++;
	else
		row->ipv6++;
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct xb_list_count *x = a, *y = b;

	if (x->list_id != y->list_id)
		return x->list_id < y->list_id ? -1 : 1;
	return x->verdict < y->verdict ? -1 : x->verdict > y->verdict;
}

int xb_lists_count(const struct xb_maps *m, struct xb_list_count **out, size_t *n)
{
	struct list_tally t = {};
	int ret = xb_policy_foreach(m, tally_entry, &t);

	if (ret) {
		free(t.rows);
		return ret;
	}
	if (t.n)
		qsort(t.rows, t.n, sizeof(*t.rows), row_cmp);
	*out = t.rows;
	*n = t.n;
	return 0;
}

/* ==== writing: prefixes ==================================================================== */

#define ENOMEM_RETRIES 5      /* an LPM trie update can fail with ENOMEM while it grows */
#define DEFAULT_BATCH 4096u   /* trie updates per syscall in a compile */
#define ENOTSUPP_ERRNO 524    /* the kernel-internal ENOTSUPP */
#define CODES_ALL(code) ((__u64)(code) * 0x5555555555555555ull) /* the code in all 32 slots */
#define FAMILIES 2

static unsigned int family_bits(__u8 family)
{
	return family == XDPBAN_FAMILY_INET ? 32 : 128;
}

static int family_index(__u8 family)
{
	return family == XDPBAN_FAMILY_INET ? 0 : 1;
}

static bool prefix_valid(const struct xb_prefix *p)
{
	return (p->family == XDPBAN_FAMILY_INET || p->family == XDPBAN_FAMILY_INET6) &&
	       p->plen <= family_bits(p->family);
}

/* Clears the bits past the length, so that equal prefixes compare equal whatever a writer
 * left there (the trie ignores those bits too). */
static void prefix_canonical(struct xb_prefix *p)
{
	unsigned int bytes = family_bits(p->family) / 8;

	for (unsigned int i = 0; i < 16; i++) {
		unsigned int first = i * 8;

		if (i >= bytes || first >= p->plen)
			p->addr[i] = 0;
		else if (first + 8 > p->plen)
			p->addr[i] &= (__u8)(0xff00 >> (p->plen - first));
	}
}

static int prefix_cmp(const struct xb_prefix *a, const struct xb_prefix *b)
{
	int c = memcmp(a->addr, b->addr, sizeof(a->addr));

	if (c)
		return c;
	return a->plen < b->plen ? -1 : a->plen > b->plen;
}

static int entry_cmp(const void *a, const void *b)
{
	return prefix_cmp(&((const struct xb_policy_entry *)a)->prefix,
			  &((const struct xb_policy_entry *)b)->prefix);
}

__u32 xb_prefix_top(const struct xb_prefix *p)
{
	__u32 top = (__u32)p->addr[0] << 24 | (__u32)p->addr[1] << 16 | (__u32)p->addr[2] << 8 |
		    p->addr[3];

	if (p->plen >= 32)
		return top;
	return p->plen ? top & ~0u << (32 - p->plen) : 0;
}

/* ==== writing: codes ======================================================================= */

/* Every store into a live table is one aligned 8-byte store of a whole word, so the data path
 * reads either the old word or the new one, never a mix. The caller is the only writer. */
static __u64 word_load(const __u64 *w)
{
	return __atomic_load_n(w, __ATOMIC_RELAXED);
}

static void word_store(__u64 *w, __u64 v)
{
	__atomic_store_n(w, v, __ATOMIC_RELEASE);
}

/* Sets codes [first, first + count) of one level to `code`. */
static void codes_fill(__u64 *level, __u32 first, __u32 count, __u32 code)
{
	const __u64 pattern = CODES_ALL(code);
	const __u32 end = first + count;

	while (first < end) {
		__u32 slot = first % XDPBAN_FLAT_CODES_PER_WORD;
		__u32 n = XDPBAN_FLAT_CODES_PER_WORD - slot;
		__u64 *word = &level[first / XDPBAN_FLAT_CODES_PER_WORD];
		__u64 mask, old, new;

		if (n > end - first)
			n = end - first;
		mask = n == XDPBAN_FLAT_CODES_PER_WORD ? ~0ull
						       : ((1ull << (2 * n)) - 1) << (2 * slot);
		old = word_load(word);
		new = (old & ~mask) | (pattern & mask);
		if (new != old)
			word_store(word, new);
		first += n;
	}
}

__u32 xb_flat_code(const __u64 *words, int level, __u32 top)
{
	__u32 region = level == 1 ? xdpban_flat_l1_region(top) : xdpban_flat_l2_region(top);
	__u32 base = level == 1 ? 0 : XDPBAN_FLAT_L2_BASE;

	return (words[xdpban_flat_word(base, region)] >> xdpban_flat_shift(region)) &
	       XDPBAN_FLAT_CODE_MASK;
}

/* The regions of one level that a prefix covers or lies in. */
static void level_touch(__u64 *level, unsigned int bits, __u32 top, unsigned int plen)
{
	__u32 first = top >> (32 - bits);

	codes_fill(level, first, plen < bits ? 1u << (bits - plen) : 1, XDPBAN_FLAT_LOOKUP);
}

/* LOOKUP in every region whose code a change of the entry at p could make wrong. */
static void flat_touch(__u64 *words, const struct xb_prefix *p)
{
	__u32 top = xb_prefix_top(p);

	level_touch(words, XDPBAN_FLAT_L1_BITS, top, p->plen);
	level_touch(words + XDPBAN_FLAT_L2_BASE, XDPBAN_FLAT_L2_BITS, top, p->plen);
}

/* Pure codes in a level: a code is pure when either of its two bits is set. */
static __u32 count_pure(const __u64 *level, __u32 nwords)
{
	__u32 n = 0;

	for (__u32 i = 0; i < nwords; i++)
		n += __builtin_popcountll((level[i] | level[i] >> 1) & CODES_ALL(1));
	return n;
}

/* ==== the code computation ================================================================= */

/* An entry as the computation sees it: its place in the top 32 bits and its code. */
struct flat_item {
	__u32 top;
	__u32 plen;  /* 0..128 */
	__u32 code;  /* the pure code of its verdict; LOOKUP for a verdict the data path does
		      * not know, which only the trie can answer for exactly */
	bool timed;  /* expires_ns != 0: only the trie knows whether it still applies */
};

static int item_cmp(const void *pa, const void *pb)
{
	const struct flat_item *a = pa, *b = pb;

	if (a->top != b->top)
		return a->top < b->top ? -1 : 1;
	return a->plen < b->plen ? -1 : a->plen > b->plen;
}

/* A prefix whose range of regions is still open during the sweep over a level. */
struct open_prefix {
	__u32 end;    /* first region past it */
	__u32 code;   /* what its regions get where no longer prefix lies */
	bool tainted; /* it or a prefix around it is timed */
};

#define OPEN_MAX (XDPBAN_FLAT_L2_BITS + 1) /* nested distinct prefixes of length 0..24 */

/* Closes the open prefixes that end at or before `until`, filling their remaining regions. */
static __u32 close_until(struct open_prefix *stack, int *depth, __u64 *level, __u32 pos,
			 __u32 until)
{
	while (*depth && stack[*depth - 1].end <= until) {
		const struct open_prefix *o = &stack[--*depth];

		codes_fill(level, pos, o->end - pos, o->code);
		pos = o->end;
	}
	return pos;
}

/* One level in one sweep over the items sorted by (top, plen), which puts every prefix before
 * the prefixes inside it: a stack of the open prefixes gives each region its longest covering
 * prefix. Then every region with a longer prefix inside becomes LOOKUP. */
static int level_build(const struct flat_item *items, size_t n, unsigned int bits, __u64 *level)
{
	struct open_prefix stack[OPEN_MAX];
	const __u32 regions = 1u << bits;
	__u32 pos = 0;
	int depth = 0;

	for (size_t i = 0; i < n; i++) {
		const struct flat_item *it = &items[i];
		__u32 start = it->top >> (32 - bits);
		bool tainted;

		if (it->plen > bits)
			continue;
		pos = close_until(stack, &depth, level, pos, start);
		codes_fill(level, pos, start - pos, depth ? stack[depth - 1].code : XDPBAN_FLAT_NONE);
		pos = start;
		if (depth == OPEN_MAX)
			return -EINVAL; /* only a repeated prefix nests this deep */
		tainted = it->timed || (depth && stack[depth - 1].tainted);
		stack[depth++] = (struct open_prefix){
			.end = start + (1u << (bits - it->plen)),
			.code = tainted ? XDPBAN_FLAT_LOOKUP : it->code,
			.tainted = tainted,
		};
	}
	pos = close_until(stack, &depth, level, pos, regions);
	codes_fill(level, pos, regions - pos, XDPBAN_FLAT_NONE);
	for (size_t i = 0; i < n; i++)
		if (items[i].plen > bits)
			codes_fill(level, items[i].top >> (32 - bits), 1, XDPBAN_FLAT_LOOKUP);
	return 0;
}

static __u32 entry_code(const struct xdpban_policy *pol)
{
	if (pol->verdict > XDPBAN_POLICY_TRUSTED)
		return XDPBAN_FLAT_LOOKUP;
	return xdpban_flat_code_of_verdict(pol->verdict);
}

/* The family's entries as items, sorted. *out is malloc'ed (NULL when there are none). */
static int items_make(const struct xb_policy_entry *entries, size_t n, __u8 family,
		      struct flat_item **out, size_t *count)
{
	struct flat_item *items = NULL;
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += entries[i].prefix.family == family;
	*out = NULL;
	*count = 0;
	if (!k)
		return 0;
	items = malloc(k * sizeof(*items));
	if (!items)
		return -ENOMEM;
	k = 0;
	for (size_t i = 0; i < n; i++) {
		const struct xb_policy_entry *e = &entries[i];

		if (e->prefix.family != family)
			continue;
		items[k++] = (struct flat_item){
			.top = xb_prefix_top(&e->prefix),
			.plen = e->prefix.plen,
			.code = entry_code(&e->policy),
			.timed = e->policy.expires_ns != 0,
		};
	}
	qsort(items, k, sizeof(*items), item_cmp);
	*out = items;
	*count = k;
	return 0;
}

int xb_flat_build(const struct xb_policy_entry *entries, size_t n, __u8 family, __u64 *words)
{
	struct flat_item *items;
	size_t k;
	int ret = items_make(entries, n, family, &items, &k);

	if (ret)
		return ret;
	for (size_t i = 1; i < k && !ret; i++)
		if (items[i].plen <= 32 && !item_cmp(&items[i - 1], &items[i]))
			ret = -EINVAL;
	if (!ret)
		ret = level_build(items, k, XDPBAN_FLAT_L1_BITS, words);
	if (!ret)
		ret = level_build(items, k, XDPBAN_FLAT_L2_BITS, words + XDPBAN_FLAT_L2_BASE);
	free(items);
	return ret;
}

/* ==== level 3: lines of /32 codes for IPv4 /24 regions ==================================== */

#define L3_SHIFT (32 - XDPBAN_FLAT_L2_BITS) /* address >> L3_SHIFT: its /24 region */
#define COVER_MAX 33                          /* nested prefixes of lengths 0..32 */

/* A prefix of /24 or shorter that covers the regions being swept. */
struct cover {
	__u64 end;  /* first address past it */
	__u32 code;
	bool timed; /* it or a prefix around it is timed */
};

/* Paints the line of one region: the code of the longest covering prefix (base), then the
 * region's own entries (all longer than /24) in (top, plen) order, which puts every prefix
 * before the prefixes inside it, so each /32 ends with the code of its longest prefix.
 * False when a timed entry covers or lies in the region: only the trie can answer there. */
static bool line_paint(struct xdpban_flat_line *line, const struct flat_item *items,
		       size_t first, size_t end, const struct cover *base)
{
	bool timed = base && base->timed;

	memset(line, 0, sizeof(*line));
	codes_fill(line->codes, 0, XDPBAN_FLAT_LINE_CODES, base ? base->code : XDPBAN_FLAT_NONE);
	for (size_t i = first; i < end; i++) {
		timed |= items[i].timed;
		codes_fill(line->codes, items[i].top & (XDPBAN_FLAT_LINE_CODES - 1),
			   1u << (32 - items[i].plen), items[i].code);
	}
	return !timed;
}

/* Room for one more line at (*v)[*n]. */
static int lines_push(struct xb_flat_line **v, size_t *n, size_t *cap)
{
	if (*n == *cap) {
		size_t grown = *cap ? 2 * *cap : 256;
		struct xb_flat_line *p = realloc(*v, grown * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*v = p;
		*cap = grown;
	}
	return 0;
}

/* One sweep over the sorted items: a stack of the open prefixes of /24 and shorter gives each
 * region holding longer entries its base code; the region's entries follow it in the order. */
static int lines_sweep(const struct flat_item *items, size_t n, struct xb_flat_line **out,
		       size_t *count)
{
	struct cover stack[COVER_MAX];
	size_t cap = 0, i = 0;
	int depth = 0;

	while (i < n) {
		const struct flat_item *it = &items[i];
		__u32 region = it->top >> L3_SHIFT;
		size_t end = i;

		while (depth && stack[depth - 1].end <= it->top)
			depth--;
		if (it->plen <= XDPBAN_FLAT_L2_BITS) {
			if (depth == COVER_MAX)
				return -EINVAL; /* only a repeated prefix nests this deep */
			stack[depth] = (struct cover){
				.end = (__u64)it->top + (1ull << (32 - it->plen)),
				.code = it->code,
				.timed = it->timed || (depth && stack[depth - 1].timed),
			};
			depth++;
			i++;
			continue;
		}
		while (end < n && items[end].plen > XDPBAN_FLAT_L2_BITS &&
		       items[end].top >> L3_SHIFT == region)
			end++;
		if (lines_push(out, count, &cap))
			return -ENOMEM;
		(*out)[*count].region = region;
		if (line_paint(&(*out)[*count].line, items, i, end, depth ? &stack[depth - 1] : NULL))
			(*count)++;
		i = end;
	}
	return 0;
}

int xb_flat_lines_build(const struct xb_policy_entry *entries, size_t n,
			struct xb_flat_line **lines, size_t *count)
{
	struct flat_item *items;
	size_t k;
	int ret = items_make(entries, n, XDPBAN_FAMILY_INET, &items, &k);

	*lines = NULL;
	*count = 0;
	if (ret)
		return ret;
	for (size_t i = 1; i < k && !ret; i++)
		if (!item_cmp(&items[i - 1], &items[i]))
			ret = -EINVAL;
	if (!ret)
		ret = lines_sweep(items, k, lines, count);
	if (ret) {
		free(*lines);
		*lines = NULL;
		*count = 0;
	}
	free(items);
	return ret;
}

__u32 xb_flat_lines_code(const struct xb_flat_line *lines, size_t count, __u32 addr)
{
	size_t lo = 0, hi = count;
	__u32 region = addr >> L3_SHIFT;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (lines[mid].region < region)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < count && lines[lo].region == region)
		return xdpban_flat_line_code(&lines[lo].line, addr);
	return XDPBAN_FLAT_LOOKUP;
}

/* ==== the live table ======================================================================= */

int xb_flat_open(struct xb_flat *t, const struct xb_maps *m, __u8 family)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	void *p;

	t->words = NULL;
	t->fd = family == XDPBAN_FAMILY_INET ? m->flat4 : family == XDPBAN_FAMILY_INET6 ? m->flat6 : -1;
	if (t->fd < 0)
		return -EBADF;
	if (bpf_obj_get_info_by_fd(t->fd, &info, &len))
		return -errno;
	if (info.type != BPF_MAP_TYPE_ARRAY || info.value_size != sizeof(__u64) ||
	    info.max_entries != XDPBAN_FLAT_ENTRIES || !(info.map_flags & BPF_F_MMAPABLE))
		return -EPROTO;
	p = mmap(NULL, XDPBAN_FLAT_ENTRIES * sizeof(__u64), PROT_READ | PROT_WRITE, MAP_SHARED,
		 t->fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	t->words = p;
	return 0;
}

void xb_flat_close(struct xb_flat *t)
{
	if (t->words)
		munmap(t->words, XDPBAN_FLAT_ENTRIES * sizeof(__u64));
	t->words = NULL;
}

static const char *flat_name(__u8 family)
{
	return family == XDPBAN_FAMILY_INET ? XDPBAN_MAP_NAME(xdpban_flat4)
					    : XDPBAN_MAP_NAME(xdpban_flat6);
}

static const char *trie_name(__u8 family)
{
	return family == XDPBAN_FAMILY_INET ? XDPBAN_MAP_NAME(xdpban_policy4)
					    : XDPBAN_MAP_NAME(xdpban_policy6);
}

/* ==== level 3 live: the lines in xdpban_flat4x ============================================= *
 *
 * Why the lines are right at every instant. The data path reads a line only when the IPv4
 * guard is XDPBAN_FLAT_COMPILED_L3 and level 2 says LOOKUP, and then trusts its pure codes.
 * Level 2 says LOOKUP in many places (every touched region), so a line must never depend on
 * level 2 to be hidden: the invariant is that every line in the map, while the guard is
 * COMPILED_L3, holds codes exact for the trie as it is at that instant. Writers keep it so:
 *   1. before the trie changes anywhere in a /24 (a single change, or a compile's trie writes
 *      and deletes), the line of that /24 is deleted; a delete is always safe (a missing line
 *      means the trie) and, once it returns, no new lookup finds the old line;
 *   2. a line is inserted or rewritten only after the trie holds every entry it stands for
 *      (a compile, after its trie writes), computed from the sorted set, never from lookups;
 *   3. a writer that cannot reach the lines (no usable fd), or fails to delete one, first
 *      turns the guard back to XDPBAN_FLAT_COMPILED: no line is read from then on, so lines
 *      it leaves behind cannot be wrong where they are read; a compile that can reach them
 *      reconciles every line (deletes all it does not write) before it sets COMPILED_L3 again.
 * Level 2 and level 1 keep their own rule (policy.h) unchanged: a region with a line is
 * LOOKUP at level 2 already, and LOOKUP is always correct there.
 *   4. a preallocated hash hands a freed element to the very next insert (and an overwrite
 *      frees the element it replaces), so a reader that found a line and stalled could see
 *      another /24's codes land under its pointer. So a compile never overwrites a line: it
 *      deletes every line that goes or changes, waits for an RCU grace period (rcu_wait():
 *      every XDP program that may hold a pointer it found has returned), and only then
 *      inserts, with BPF_NOEXIST, into elements no reader can still hold. */

#define LINES_DELETE_DIRECT 4096u /* up to this many regions: delete by key, not by a dump */

static bool l3_usable(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return false;
	return info.type == BPF_MAP_TYPE_HASH && info.key_size == sizeof(__u32) &&
	       info.value_size == sizeof(struct xdpban_flat_line);
}

/* Rule 3: from now on the data path reads no line. */
static void l3_disable(struct xb_flat *t)
{
	if (word_load(&t->words[XDPBAN_FLAT_GUARD]) == XDPBAN_FLAT_COMPILED_L3)
		word_store(&t->words[XDPBAN_FLAT_GUARD], XDPBAN_FLAT_COMPILED);
}

/* Waits for an RCU grace period: the kernel runs synchronize_rcu() after a userspace update
 * of a map-in-map slot (maybe_wait_bpf_programs() in kernel/bpf/syscall.c), so that it can
 * promise no program still uses the old value. Rule 4 borrows that promise. */
static int rcu_wait(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	__u32 zero = 0;
	int inner, outer, ret = 0;

	inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, sizeof(__u32), sizeof(__u32), 1, NULL);
	if (inner < 0)
		return -errno;
	opts.inner_map_fd = inner;
	outer = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, NULL, sizeof(__u32), sizeof(__u32), 1,
			       &opts);
	if (outer < 0 || bpf_map_update_elem(outer, &zero, &inner, BPF_ANY))
		ret = -errno;
	if (outer >= 0)
		close(outer);
	close(inner);
	return ret;
}

static int line_delete(int fd, __u32 region)
{
	if (bpf_map_delete_elem(fd, &region) && errno != ENOENT)
		return -errno;
	return 0;
}

struct line_dump {
	struct xb_flat_line *v;
	size_t n, cap;
};

static int line_collect(const void *key, const void *value, void *ctx)
{
	struct line_dump *d = ctx;

	if (lines_push(&d->v, &d->n, &d->cap))
		return -ENOMEM;
	d->v[d->n].region = *(const __u32 *)key;
	memcpy(&d->v[d->n].line, value, sizeof(d->v[d->n].line));
	d->n++;
	return 0;
}

static int line_region_cmp(const void *a, const void *b)
{
	__u32 x = ((const struct xb_flat_line *)a)->region, y = ((const struct xb_flat_line *)b)->region;

	return x < y ? -1 : x > y;
}

/* Every line in the map, sorted by region. */
static int lines_dump(int fd, struct line_dump *d)
{
	int ret = xb_map_foreach(fd, sizeof(__u32), sizeof(struct xdpban_flat_line), line_collect,
				 d);

	if (!ret && d->n)
		qsort(d->v, d->n, sizeof(*d->v), line_region_cmp);
	return ret;
}

/* The /24 regions a prefix covers or lies in: [*first, *first + *count). */
static void prefix_regions(const struct xb_prefix *p, __u32 *first, __u32 *count)
{
	*first = xb_prefix_top(p) >> L3_SHIFT;
	*count = p->plen < XDPBAN_FLAT_L2_BITS ? 1u << (XDPBAN_FLAT_L2_BITS - p->plen) : 1;
}

/* Rule 1 for a single change: deletes the lines of the regions p touches, by key when they
 * are few, else from a dump of the map. */
static int lines_forget(int fd, const struct xb_prefix *p)
{
	struct line_dump d = {};
	__u32 first, count;
	int ret = 0;

	prefix_regions(p, &first, &count);
	if (count <= LINES_DELETE_DIRECT) {
		for (__u32 r = first; r < first + count && !ret; r++)
			ret = line_delete(fd, r);
		return ret;
	}
	ret = lines_dump(fd, &d);
	for (size_t i = 0; i < d.n && !ret; i++)
		if (d.v[i].region - first < count)
			ret = line_delete(fd, d.v[i].region);
	free(d.v);
	return ret;
}

/* What a compile knows of the lines: the map's fd, or -1 when level 3 is off. */
struct l3_live {
	int fd;
	struct line_dump old; /* the lines in the map before the compile, sorted */
	bool *gone;           /* old lines deleted by rule 1 */
};

static void l3_live_free(struct l3_live *l)
{
	free(l->old.v);
	free(l->gone);
	memset(l, 0, sizeof(*l));
	l->fd = -1;
}

/* Opens level 3 for a compile of IPv4; when it cannot, turns it off (rule 3). */
static void l3_live_open(struct l3_live *l, const struct xb_maps *m, struct xb_flat *t)
{
	memset(l, 0, sizeof(*l));
	l->fd = l3_usable(m->flat4x) ? m->flat4x : -1;
	if (l->fd >= 0 && !lines_dump(l->fd, &l->old)) {
		l->gone = calloc(l->old.n + 1, sizeof(*l->gone));
		if (l->gone)
			return;
	}
	l3_disable(t);
	l3_live_free(l);
}

/* Rule 1 for a compile: deletes the old lines in the regions a touched prefix covers. */
static void l3_forget(struct l3_live *l, struct xb_flat *t, const struct xb_prefix *p)
{
	struct xb_flat_line probe;
	__u32 first, count;
	size_t lo = 0, hi;

	if (l->fd < 0)
		return;
	prefix_regions(p, &first, &count);
	probe.region = first;
	hi = l->old.n;
	while (lo < hi) { /* the first old line at or past `first` */
		size_t mid = lo + (hi - lo) / 2;

		if (line_region_cmp(&l->old.v[mid], &probe) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < l->old.n && l->old.v[i].region - first < count; i++) {
		if (l->gone[i])
			continue;
		if (line_delete(l->fd, l->old.v[i].region)) {
			l3_disable(t);
			l3_live_free(l);
			return;
		}
		l->gone[i] = true;
	}
}

/* The old line of a region still in the map, or NULL. */
static const struct xb_flat_line *l3_old(const struct l3_live *l, __u32 region)
{
	struct xb_flat_line probe = { .region = region };
	const struct xb_flat_line *o = l->old.n ? bsearch(&probe, l->old.v, l->old.n,
							  sizeof(probe), line_region_cmp)
						: NULL;

	return o && !l->gone[o - l->old.v] ? o : NULL;
}

#define L3_BATCH 8192

/* Writes the lines that differ from the old ones in batch syscalls (a compile of 1M prefixes
 * writes a quarter million lines), in order, until the first batch that does not go through
 * whole. Returns the index of the first line not handled; the caller goes on one by one from
 * there, which sorts out a full map exactly. */
static size_t l3_write_batched(struct l3_live *l, const struct xb_flat_line *lines, size_t n,
			       struct xb_compile_result *res)
{
	/* Batch updates take no BPF_NOEXIST (only BPF_F_LOCK); every key here is absent all the
	 * same: l->old is the whole map as this compile found it, writers hold the pin-directory
	 * lock, and the lines that go or change were deleted before the grace period. */
	LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = 0);
	__u32 *keys = malloc(L3_BATCH * sizeof(*keys));
	struct xdpban_flat_line *vals = malloc(L3_BATCH * sizeof(*vals));
	size_t *at = malloc(L3_BATCH * sizeof(*at)); /* index in lines of each key */
	size_t i = 0;

	while (keys && vals && at && i < n) {
		size_t start = i;
		__u32 count = 0, done;

		for (; i < n && count < L3_BATCH; i++) {
			const struct xb_flat_line *o = l3_old(l, lines[i].region);

			if (o && !memcmp(&o->line, &lines[i].line, sizeof(o->line)))
				continue;
			at[count] = i;
			keys[count] = lines[i].region;
			vals[count++] = lines[i].line;
		}
		done = count;
		if (count && bpf_map_update_batch(l->fd, keys, vals, &done, &opts)) {
			/* The first `done` went in; the caller goes on one by one from the
			 * line that did not. */
			if (done >= count)
				done = 0;
			res->lines4 += at[done] - start;
			i = at[done];
			break;
		}
		res->lines4 += i - start;
	}
	free(keys);
	free(vals);
	free(at);
	return i;
}

/* Rule 2, after the trie holds the new set: drops the old lines the set no longer has (first,
 * to make room), then writes the new ones that differ. A full map leaves the rest of the
 * regions to the trie. False when level 3 had to be turned off. */
static bool l3_write(struct l3_live *l, struct xb_flat *t, const struct xb_flat_line *lines,
		     size_t n, struct xb_compile_result *res)
{
	bool inserts = false;

	for (size_t i = 0; i < l->old.n; i++) {
		const struct xb_flat_line *o = &l->old.v[i];
		const struct xb_flat_line *keep =
			n ? bsearch(o, lines, n, sizeof(*o), line_region_cmp) : NULL;

		if (l->gone[i] || (keep && !memcmp(&o->line, &keep->line, sizeof(o->line))))
			continue;
		if (line_delete(l->fd, o->region)) /* gone, or changed: rule 4, never overwrite */
			goto off;
		l->gone[i] = true;
	}
	for (size_t i = 0; i < n && !inserts; i++)
		inserts = !l3_old(l, lines[i].region);
	if (inserts && rcu_wait())
		goto off; /* no grace period, no safe insert: the trie answers instead */
	bool full = false; /* a new region found no room: the next new ones will not either */

	for (size_t i = l3_write_batched(l, lines, n, res); i < n; i++) {
		const struct xb_flat_line *o = l3_old(l, lines[i].region);

		if (o && !memcmp(&o->line, &lines[i].line, sizeof(o->line))) {
			res->lines4++;
			continue;
		}
		if (full && !o) {
			res->lines4_full++;
			continue;
		}
		if (!bpf_map_update_elem(l->fd, &lines[i].region, &lines[i].line, BPF_NOEXIST)) {
			res->lines4++;
			continue;
		}
		if (errno == EEXIST) {
			/* A line this compile did not read: never trust it, the trie answers. */
			if (line_delete(l->fd, lines[i].region))
				goto off;
			res->lines4_full++;
			continue;
		}
		if (errno != E2BIG && errno != ENOMEM && errno != ENOSPC)
			goto off;
		full = true;
		res->lines4_full++;
	}
	return true;
off:
	l3_disable(t);
	res->lines4 = 0;
	res->lines4_full = 0;
	return false;
}

/* ==== single changes ======================================================================= */

static int trie_update(int fd, const void *key, const void *value, __u64 flags)
{
	for (int i = 0;; i++) {
		if (!bpf_map_update_elem(fd, key, value, flags))
			return 0;
		if (errno != ENOMEM || i == ENOMEM_RETRIES)
			return -errno;
		usleep(1000 << i);
	}
}

/* LOOKUP in every region the entry at p touches, and no line there (or no lines read at all):
 * the step before any trie change. */
static int touch_prefix(const struct xb_maps *m, const struct xb_prefix *p)
{
	struct xb_flat t;
	int ret = xb_flat_open(&t, m, p->family);

	if (ret)
		return ret;
	flat_touch(t.words, p);
	if (p->family == XDPBAN_FAMILY_INET &&
	    (!l3_usable(m->flat4x) || lines_forget(m->flat4x, p)))
		l3_disable(&t);
	xb_flat_close(&t);
	return 0;
}

int xb_policy_put(const struct xb_maps *m, const struct xb_prefix *p,
		  const struct xdpban_policy *val, __u64 flags)
{
	union xb_lpm_key key;
	int ret;

	if (!prefix_valid(p) || val->verdict > XDPBAN_POLICY_TRUSTED)
		return -EINVAL;
	ret = touch_prefix(m, p);
	if (ret)
		return ret;
	xb_lpm_key_make(p, &key);
	return trie_update(xb_policy_fd(m, p->family), &key, val, flags);
}

int xb_policy_delete(const struct xb_maps *m, const struct xb_prefix *p)
{
	union xb_lpm_key key;
	int ret;

	if (!prefix_valid(p))
		return -EINVAL;
	ret = touch_prefix(m, p);
	if (ret)
		return ret;
	xb_lpm_key_make(p, &key);
	if (bpf_map_delete_elem(xb_policy_fd(m, p->family), &key))
		return -errno;
	return 0;
}

/* ==== compiling ============================================================================ */

int xb_policy_set_add(struct xb_policy_set *s, const struct xb_prefix *p,
		      const struct xdpban_policy *val)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;
		struct xb_policy_entry *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = (struct xb_policy_entry){ .prefix = *p, .policy = *val };
	return 0;
}

void xb_policy_set_free(struct xb_policy_set *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* A growing array of entries. */
struct entry_list {
	struct xb_policy_entry *v;
	size_t n, cap;
};

static int list_push(struct entry_list *l, const struct xb_policy_entry *e)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 1024;
		struct xb_policy_entry *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n] = *e;
	prefix_canonical(&l->v[l->n].prefix);
	l->n++;
	return 0;
}

static void list_sort(struct entry_list *l)
{
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), entry_cmp);
}

/* What one family's compile does: the sets before and after, and the changes between. */
struct plan {
	__u8 family;
	struct entry_list old;     /* in the trie now, sorted */
	struct entry_list next;    /* what the trie will hold, sorted */
	struct entry_list write;   /* entries of `next` that are new or changed */
	struct entry_list remove;  /* entries of `old` that are not in `next` */
	struct entry_list touch;   /* prefixes whose codes may change: LOOKUP first */
	size_t kept;
	size_t added;              /* entries of `write` that take a new place in the trie */
	bool remove_first;         /* the trie cannot hold `old` and `write` at once */
	bool changed;              /* its compile has begun to change the maps */
};

static void plan_free(struct plan *p)
{
	free(p->old.v);
	free(p->next.v);
	free(p->write.v);
	free(p->remove.v);
	free(p->touch.v);
	memset(p, 0, sizeof(*p));
}

static void describe(const struct xb_prefix *p, char *buf, size_t len)
{
	if (xb_prefix_format(p, buf, len))
		snprintf(buf, len, "(a bad prefix)");
}

/* Refuses the set as a whole, before anything changes. */
static int check_set(const struct xb_policy_set *set, char *err, size_t errlen)
{
	char text[64];

	for (size_t i = 0; i < set->n; i++) {
		const struct xb_policy_entry *e = &set->v[i];

		if (e->prefix.family != XDPBAN_FAMILY_INET && e->prefix.family != XDPBAN_FAMILY_INET6) {
			snprintf(err, errlen, "policy entry %zu: bad address family %u", i,
				 e->prefix.family);
			return -EINVAL;
		}
		describe(&e->prefix, text, sizeof(text));
		if (e->prefix.plen > family_bits(e->prefix.family)) {
			snprintf(err, errlen, "policy entry %s: prefix length %u out of range", text,
				 e->prefix.plen);
			return -EINVAL;
		}
		if (e->policy.verdict > XDPBAN_POLICY_TRUSTED) {
			snprintf(err, errlen, "policy entry %s: bad verdict %u", text,
				 e->policy.verdict);
			return -EINVAL;
		}
	}
	return 0;
}

static int collect_old(const struct xb_policy_entry *e, void *ctx)
{
	return list_push(ctx, e);
}

/* The set's entries of the plan's family, sorted; a prefix twice is refused. */
static int plan_take_set(struct plan *p, const struct xb_policy_set *set, char *err,
			 size_t errlen)
{
	char text[64];
	int ret;

	for (size_t i = 0; i < set->n; i++) {
		if (set->v[i].prefix.family != p->family)
			continue;
		ret = list_push(&p->next, &set->v[i]);
		if (ret)
			return ret;
	}
	list_sort(&p->next);
	for (size_t i = 1; i < p->next.n; i++) {
		if (entry_cmp(&p->next.v[i - 1], &p->next.v[i]))
			continue;
		describe(&p->next.v[i].prefix, text, sizeof(text));
		snprintf(err, errlen, "policy entry %s is in the set twice", text);
		return -EINVAL;
	}
	return 0;
}

/* Adds the old entries opts->keep keeps and the set does not name. */
static int plan_keep_old(struct plan *p, const struct xb_compile_opts *opts)
{
	size_t named = p->next.n;
	int ret;

	for (size_t i = 0; opts && opts->keep && i < p->old.n; i++) {
		const struct xb_policy_entry *e = &p->old.v[i];
		struct xb_policy_entry probe = { .prefix = e->prefix };

		if (!opts->keep(e, opts->ctx) ||
		    (named && bsearch(&probe, p->next.v, named, sizeof(probe), entry_cmp)))
			continue;
		ret = list_push(&p->next, e);
		if (ret)
			return ret;
		p->kept++;
	}
	list_sort(&p->next);
	return 0;
}

/* A change that moves a verdict (not only the list id) can change codes. */
static bool verdict_changes(const struct xdpban_policy *a, const struct xdpban_policy *b)
{
	return a->verdict != b->verdict || a->expires_ns != b->expires_ns;
}

/* Walks old and next in step: what to write, what to delete, which prefixes to touch. */
static int plan_diff(struct plan *p)
{
	size_t i = 0, j = 0;
	int ret = 0;

	while (!ret && (i < p->old.n || j < p->next.n)) {
		const struct xb_policy_entry *o = i < p->old.n ? &p->old.v[i] : NULL;
		const struct xb_policy_entry *n = j < p->next.n ? &p->next.v[j] : NULL;
		int c = !o ? 1 : !n ? -1 : entry_cmp(o, n);

		if (c < 0) {
			ret = list_push(&p->remove, o);
			if (!ret)
				ret = list_push(&p->touch, o);
			i++;
		} else if (c > 0) {
			ret = list_push(&p->write, n);
			if (!ret)
				ret = list_push(&p->touch, n);
			p->added++;
			j++;
		} else {
			if (memcmp(&o->policy, &n->policy, sizeof(o->policy)))
				ret = list_push(&p->write, n);
			if (!ret && verdict_changes(&o->policy, &n->policy))
				ret = list_push(&p->touch, n);
			i++;
			j++;
		}
	}
	return ret;
}

static int plan_make(struct plan *p, const struct xb_maps *m, const struct xb_policy_set *set,
		     const struct xb_compile_opts *opts, char *err, size_t errlen)
{
	int ret = plan_take_set(p, set, err, errlen);

	if (ret)
		return ret;
	ret = xb_policy_foreach_family(m, p->family, collect_old, &p->old);
	if (ret) {
		snprintf(err, errlen, "cannot read %s: %s", trie_name(p->family), strerror(-ret));
		return ret;
	}
	list_sort(&p->old);
	ret = plan_keep_old(p, opts);
	if (!ret)
		ret = plan_diff(p);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory compiling %zu policy entries", p->next.n);
	return ret;
}

static void observe(const struct xb_compile_opts *opts, __u8 family, enum xb_compile_step step)
{
	if (opts && opts->observe)
		opts->observe(family, step, opts->ctx);
}

/* Keys (and values, unless values is NULL) of entries laid out for a batch syscall. */
static int batch_layout(const struct entry_list *l, size_t key_size, char **keys,
			struct xdpban_policy **values)
{
	*keys = malloc(l->n * key_size + 1);
	if (values)
		*values = malloc(l->n * sizeof(**values) + 1);
	if (!*keys || (values && !*values))
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++) {
		union xb_lpm_key key;

		xb_lpm_key_make(&l->v[i].prefix, &key);
		memcpy(*keys + i * key_size, &key, key_size);
		if (values)
			(*values)[i] = l->v[i].policy;
	}
	return 0;
}

/* One batch syscall: writes (values) or deletes (values NULL) count entries; *done gets how
 * many went through. 0 or -errno for the entry after them. */
static int batch_once(int fd, const char *keys, const struct xdpban_policy *values, __u32 count,
		      __u32 *done)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = BPF_ANY);
	int ret;

	*done = count;
	ret = values ? bpf_map_update_batch(fd, keys, values, done, &opts)
		     : bpf_map_delete_batch(fd, keys, done, &opts);
	if (ret && *done > count)
		*done = 0;
	return ret ? -errno : 0;
}

/* The same, one entry at a time, for kernels without batch operations on the trie. */
static int single_once(int fd, const char *keys, const struct xdpban_policy *values,
		       size_t key_size, __u32 count, __u32 *done)
{
	for (*done = 0; *done < count; (*done)++) {
		const char *key = keys + *done * key_size;
		int ret = values ? bpf_map_update_elem(fd, key, &values[*done], BPF_ANY)
				 : bpf_map_delete_elem(fd, key);

		if (ret)
			return -errno;
	}
	return 0;
}

/* Applies a list to the trie in batches, retrying ENOMEM (a trie that grows can fail an
 * insert, REFERENCE.md section 4); a delete of an entry already gone is skipped. *failed gets
 * the index of the entry that failed. */
static int trie_apply(int fd, const struct entry_list *l, bool write, size_t key_size,
		      const struct xb_compile_opts *opts, __u8 family, size_t *failed)
{
	__u32 batch = opts && opts->batch ? opts->batch : DEFAULT_BATCH;
	struct xdpban_policy *values = NULL;
	bool batches = true;
	char *keys = NULL;
	int ret = batch_layout(l, key_size, &keys, write ? &values : NULL), retries = 0;
	size_t i = 0;

	while (!ret && i < l->n) {
		__u32 count = l->n - i < batch ? (__u32)(l->n - i) : batch, done;

		ret = batches ? batch_once(fd, keys + i * key_size, values ? values + i : NULL, count,
					   &done)
			      : single_once(fd, keys + i * key_size, values ? values + i : NULL,
					    key_size, count, &done);
		i += done;
		if (ret && batches && i == 0 && done == 0 &&
		    (ret == -EOPNOTSUPP || ret == -ENOTSUPP_ERRNO)) {
			batches = false;
			ret = 0;
		} else if (ret == -ENOMEM && retries < ENOMEM_RETRIES) {
			usleep(1000 << retries++);
			ret = 0;
		} else if (ret == -ENOENT && !write) {
			i++; /* deleted meanwhile */
			ret = 0;
		} else if (!ret) {
			retries = 0;
			observe(opts, family, XB_COMPILE_TRIE_STEP);
		}
	}
	*failed = i;
	free(keys);
	free(values);
	return ret;
}

static size_t trie_key_size(__u8 family)
{
	return family == XDPBAN_FAMILY_INET ? sizeof(struct xdpban_lpm4_key)
					    : sizeof(struct xdpban_lpm6_key);
}

/* Writes the plan's new and changed entries, or deletes its doomed ones. */
static int plan_apply_list(const struct plan *p, bool write, const struct xb_maps *m,
			   const struct xb_compile_opts *opts, char *err, size_t errlen)
{
	const struct entry_list *l = write ? &p->write : &p->remove;
	char text[64];
	size_t failed;
	int ret = trie_apply(xb_policy_fd(m, p->family), l, write, trie_key_size(p->family), opts,
			     p->family, &failed);

	if (!ret)
		return 0;
	if (failed < l->n)
		describe(&l->v[failed].prefix, text, sizeof(text));
	else
		snprintf(text, sizeof(text), "entries");
	if (write)
		snprintf(err, errlen, "cannot add %s to %s (%zu of %zu written): %s", text,
			 trie_name(p->family), failed, l->n,
			 ret == -ENOSPC || ret == -E2BIG ? "the table is full" : strerror(-ret));
	else
		snprintf(err, errlen, "cannot remove %s from %s: %s", text, trie_name(p->family),
			 strerror(-ret));
	return ret;
}

/* Writes, then removes, so that every entry of old or next is in force throughout; removes
 * first only when the trie cannot hold both (plan_check_capacity). */
static int plan_apply_trie(const struct plan *p, const struct xb_maps *m,
			   const struct xb_compile_opts *opts, char *err, size_t errlen)
{
	bool first = !p->remove_first; /* true: write */
	int ret = plan_apply_list(p, first, m, opts, err, errlen);

	return ret ? ret : plan_apply_list(p, !first, m, opts, err, errlen);
}

/* Copies the exact table into the live one, level 2 first: a level-1 code turns pure only
 * when level 2 below it is exact already. Only words that differ are stored. */
static void table_store(__u64 *live, const __u64 *exact, __u32 first, __u32 nwords)
{
	for (__u32 i = first; i < first + nwords; i++)
		if (word_load(&live[i]) != exact[i])
			word_store(&live[i], exact[i]);
}

static int plan_write_codes(const struct plan *p, struct xb_flat *t, struct l3_live *l3,
			    const struct xb_compile_opts *opts, struct xb_compile_result *res,
			    char *err, size_t errlen)
{
	__u64 *exact = malloc(XDPBAN_FLAT_WORDS * sizeof(*exact));
	struct xb_flat_line *lines = NULL;
	size_t nlines = 0;
	__u64 guard = XDPBAN_FLAT_COMPILED;
	int ret = exact ? xb_flat_build(p->next.v, p->next.n, p->family, exact) : -ENOMEM;

	if (!ret && l3->fd >= 0)
		ret = xb_flat_lines_build(p->next.v, p->next.n, &lines, &nlines);
	if (ret) {
		snprintf(err, errlen, "cannot compute the %s codes: %s", flat_name(p->family),
			 strerror(-ret));
		free(exact);
		return ret;
	}
	/* Lines first (any order against level 2 is right, see rule 2); the guard says whether
	 * they are read. */
	if (l3->fd >= 0 && l3_write(l3, t, lines, nlines, res))
		guard = XDPBAN_FLAT_COMPILED_L3;
	free(lines);
	table_store(t->words, exact, XDPBAN_FLAT_L2_BASE, XDPBAN_FLAT_L2_WORDS);
	observe(opts, p->family, XB_COMPILE_L2_DONE);
	table_store(t->words, exact, 0, XDPBAN_FLAT_L1_WORDS);
	/* Last: from now on the data path reads the codes, which are exact. */
	if (word_load(&t->words[XDPBAN_FLAT_GUARD]) != guard)
		word_store(&t->words[XDPBAN_FLAT_GUARD], guard);
	res->pure_l1[family_index(p->family)] = count_pure(exact, XDPBAN_FLAT_L1_WORDS);
	res->pure_l2[family_index(p->family)] =
		count_pure(exact + XDPBAN_FLAT_L2_BASE, XDPBAN_FLAT_L2_WORDS);
	free(exact);
	return 0;
}

/* One family: LOOKUP where anything changes, the trie, then the exact codes. */
static int compile_family(struct plan *p, const struct xb_maps *m,
			  const struct xb_compile_opts *opts, struct xb_compile_result *res,
			  char *err, size_t errlen)
{
	struct l3_live l3 = { .fd = -1 };
	struct xb_flat t;
	int ret = xb_flat_open(&t, m, p->family);

	if (ret) {
		snprintf(err, errlen, "cannot map the flat table %s: %s", flat_name(p->family),
			 ret == -EPROTO ? "not an xdpban flat table" : strerror(-ret));
		return ret;
	}
	if (p->family == XDPBAN_FAMILY_INET)
		l3_live_open(&l3, m, &t);
	p->changed = true;
	for (size_t i = 0; i < p->touch.n; i++) {
		flat_touch(t.words, &p->touch.v[i].prefix);
		l3_forget(&l3, &t, &p->touch.v[i].prefix);
	}
	observe(opts, p->family, XB_COMPILE_TOUCHED);
	ret = plan_apply_trie(p, m, opts, err, errlen);
	if (!ret) {
		observe(opts, p->family, XB_COMPILE_TRIE_DONE);
		ret = plan_write_codes(p, &t, &l3, opts, res, err, errlen);
	}
	l3_live_free(&l3);
	xb_flat_close(&t);
	res->written += p->write.n;
	res->removed += p->remove.n;
	res->kept += p->kept;
	res->entries += p->next.n;
	return ret;
}

/* Refuses, before anything changes, a set the trie cannot hold (with what the compile keeps),
 * and has the removals go first when the new entries do not fit beside the doomed ones. */
static int plan_check_capacity(struct plan *p, const struct xb_maps *m, char *err,
			       size_t errlen)
{
	char kept[96];
	__u32 max;
	int ret = xb_map_capacity(xb_policy_fd(m, p->family), &max);

	if (ret) {
		snprintf(err, errlen, "cannot read the size of %s: %s", trie_name(p->family),
			 strerror(-ret));
		return ret;
	}
	if (p->next.n > max) {
		if (p->kept)
			snprintf(kept, sizeof(kept), " (%zu of them kept from the trie, such as manual prefix bans)",
				 p->kept);
		snprintf(err, errlen, "%zu policy entries%s do not fit in %s, which holds %u; nothing changed",
			 p->next.n, p->kept ? kept : "", trie_name(p->family), max);
		return -ENOSPC;
	}
	p->remove_first = p->old.n + p->added > max;
	return 0;
}

/* After a failed compile: makes the family's trie hold again what it held before (p->old),
 * with exact codes, through a compile of its own from what the trie holds now. Removals go
 * first, so that it fits wherever the failed compile stopped. 0 or -errno. */
static int plan_revert(const struct plan *p, const struct xb_maps *m,
		       const struct xb_compile_opts *opts)
{
	struct plan r = { .family = p->family, .remove_first = true };
	struct xb_compile_result ignored = {};
	char err[XB_ERRLEN];
	int ret = 0;

	for (size_t i = 0; i < p->old.n && !ret; i++)
		ret = list_push(&r.next, &p->old.v[i]);
	if (!ret)
		ret = xb_policy_foreach_family(m, p->family, collect_old, &r.old);
	if (!ret) {
		list_sort(&r.old);
		ret = plan_diff(&r);
	}
	if (!ret)
		ret = compile_family(&r, m, opts, &ignored, err, sizeof(err));
	plan_free(&r);
	return ret;
}

/* Every family whose compile began, the failed one included, goes back to where it was; err
 * (the failure) gets what came of that. */
static void plans_revert(struct plan *plans, const struct xb_maps *m,
			 const struct xb_compile_opts *opts, char *err, size_t errlen)
{
	size_t used = strlen(err);
	int ret = 0, one;

	for (int f = FAMILIES - 1; f >= 0; f--) {
		one = plans[f].changed ? plan_revert(&plans[f], m, opts) : 0;
		ret = ret ? ret : one;
	}
	if (!ret)
		snprintf(err + used, errlen - used, "; rolled back: the policy is as it was");
	else
		snprintf(err + used, errlen - used,
			 "; the rollback failed too (%s): the tries hold part of the new set until a compile succeeds",
			 strerror(-ret));
}

int xb_policy_compile(const struct xb_maps *m, const struct xb_policy_set *set,
		      const struct xb_compile_opts *opts, struct xb_compile_result *res,
		      char *err, size_t errlen)
{
	static const __u8 families[FAMILIES] = { XDPBAN_FAMILY_INET, XDPBAN_FAMILY_INET6 };
	struct xb_compile_result ignored;
	struct plan plans[FAMILIES] = {};
	int ret = check_set(set, err, errlen);

	if (!res)
		res = &ignored;
	memset(res, 0, sizeof(*res));
	/* Both plans are made and checked before either family changes: a bad set, or one that
	 * does not fit, changes nothing. */
	for (int f = 0; f < FAMILIES && !ret; f++) {
		plans[f].family = families[f];
		ret = plan_make(&plans[f], m, set, opts, err, errlen);
		if (!ret)
			ret = plan_check_capacity(&plans[f], m, err, errlen);
	}
	for (int f = 0; f < FAMILIES && !ret; f++)
		ret = compile_family(&plans[f], m, opts, res, err, errlen);
	if (ret && plans[0].changed) /* IPv4 goes first: if it changed nothing, nothing did */
		plans_revert(plans, m, opts, err, errlen);
	for (int f = 0; f < FAMILIES; f++)
		plan_free(&plans[f]);
	return ret;
}

static bool keep_all(const struct xb_policy_entry *old, void *ctx)
{
	return true;
}

int xb_policy_recompile(const struct xb_maps *m, struct xb_compile_result *res, char *err,
			size_t errlen)
{
	const struct xb_policy_set none = {};
	const struct xb_compile_opts opts = { .keep = keep_all };

	return xb_policy_compile(m, &none, &opts, res, err, errlen);
}
