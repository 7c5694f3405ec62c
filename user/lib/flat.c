/* flat.c - the code computation of the flat policy table (include/xdpban_flat.h), in plain
 * memory: the exact codes of every level of a set of entries (xb_flat_build), the IPv4
 * level-3 lines of /32 codes (xb_flat_lines_build), and the LOOKUP marks a change sets first.
 * What tests/unit/test_flat.c holds to a brute force. Never touches a map, a file descriptor or a
 * syscall: flat_live.c writes the results into the live table (policy.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "bigmem.h"
#include "flat.h"
#include "policy_plan.h"

#define CODES_ALL(code) ((__u64)(code) * 0x5555555555555555ull) /* the code in all 32 slots */

/* ==== codes ================================================================================ */

__u32 xb_prefix_top(const struct xb_prefix *p)
{
	__u32 top = (__u32)p->addr[0] << 24 | (__u32)p->addr[1] << 16 | (__u32)p->addr[2] << 8 |
		    p->addr[3];

	if (p->plen >= 32)
		return top;
	return p->plen ? top & ~0u << (32 - p->plen) : 0;
}

/* Code i of one level. */
static __u32 code_at(const __u64 *level, __u32 i)
{
	return (word_load(&level[i / XDPBAN_FLAT_CODES_PER_WORD]) >> xdpban_flat_shift(i)) &
	       XDPBAN_FLAT_CODE_MASK;
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

const struct xb_flat_level xb_flat_levels[XB_FLAT_LEVELS] = {
	{ XDPBAN_FLAT_L1_BITS, 0, XDPBAN_FLAT_L1_WORDS },
	{ XDPBAN_FLAT_MID_BITS, XDPBAN_FLAT_MID_BASE, XDPBAN_FLAT_MID_WORDS },
	{ XDPBAN_FLAT_L2_BITS, XDPBAN_FLAT_L2_BASE, XDPBAN_FLAT_L2_WORDS },
};

__u32 xb_flat_code(const __u64 *words, unsigned int bits, __u32 top)
{
	for (int i = 0; i < XB_FLAT_LEVELS; i++) {
		const struct xb_flat_level *l = &xb_flat_levels[i];
		__u32 region = top >> (32 - l->bits);

		if (l->bits == bits)
			return code_at(words + l->base, region);
	}
	return XDPBAN_FLAT_LOOKUP;
}

/* The regions of one level that a prefix covers or lies in. */
static void level_touch(__u64 *level, unsigned int bits, __u32 top, unsigned int plen)
{
	__u32 first = top >> (32 - bits);

	codes_fill(level, first, plen < bits ? 1u << (bits - plen) : 1, XDPBAN_FLAT_LOOKUP);
}

void xb_flat_touch(__u64 *words, const struct xb_prefix *p)
{
	__u32 top = xb_prefix_top(p);

	for (int i = 0; i < XB_FLAT_LEVELS; i++)
		level_touch(words + xb_flat_levels[i].base, xb_flat_levels[i].bits, top, p->plen);
}

__u32 xb_flat_count_pure(const __u64 *level, __u32 nwords)
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
	__u64 hi;    /* the first 64 bits (IPv6 lines), past the length cleared */
	__u32 plen;  /* 0..128 */
	__u32 code;  /* the pure code of its verdict; LOOKUP for a verdict the data path does
		      * not know, which only the trie can answer for exactly */
	bool timed;  /* expires_ns != 0: only the trie knows whether it still applies */
};

/* By the first 64 bits, then length: every prefix comes before the prefixes inside it, at
 * every level and line depth of either family (an IPv4 item's hi is its top shifted up), and
 * a compile's entries, sorted by address, are nearly always in this order already. */
static int item_cmp(const void *pa, const void *pb)
{
	const struct flat_item *a = pa, *b = pb;

	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
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

/* An entry longer than its region leaves the region's code (the code of the longest entry
 * covering the whole region) pure only when it is permanent and has that code: every address
 * of the region then keeps the region's verdict. Otherwise the region becomes LOOKUP, which
 * later entries cannot undo. */
static void inner_mark(__u64 *level, __u32 region, const struct flat_item *it)
{
	if (it->timed || it->code != code_at(level, region))
		codes_fill(level, region, 1, XDPBAN_FLAT_LOOKUP);
}

/* One level in one sweep over the items sorted (item_cmp), which puts every prefix before
 * the prefixes inside it: a stack of the open prefixes gives each region its longest covering
 * prefix. Then every region holding a longer entry of another code, or a timed one, becomes
 * LOOKUP. */
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
			inner_mark(level, items[i].top >> (32 - bits), &items[i]);
	return 0;
}

static __u32 entry_code(const struct xdpban_policy *pol)
{
	if (pol->verdict > XDPBAN_POLICY_VERDICT_MAX)
		return XDPBAN_FLAT_LOOKUP;
	return xdpban_flat_code_of_verdict(pol->verdict);
}

/* The first 64 bits of a prefix's address, host order, bits past the length cleared. */
static __u64 prefix_hi(const struct xb_prefix *p)
{
	__u64 hi = xb_be64_load(p->addr);

	if (p->plen >= 64)
		return hi;
	return p->plen ? hi & ~0ull << (64 - p->plen) : 0;
}

/* Sorts, unless the items are in order already (one pass against a third of a second for a
 * million). */
static void items_sort(struct flat_item *items, size_t k)
{
	size_t i = 1;

	while (i < k && item_cmp(&items[i - 1], &items[i]) <= 0)
		i++;
	if (i < k)
		qsort(items, k, sizeof(*items), item_cmp);
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
	items = xb_big_malloc(k * sizeof(*items));
	if (!items)
		return -ENOMEM;
	k = 0;
	for (size_t i = 0; i < n; i++) {
		const struct xb_policy_entry *e = &entries[i];

		if (e->prefix.family != family)
			continue;
		items[k++] = (struct flat_item){
			.top = xb_prefix_top(&e->prefix),
			.hi = prefix_hi(&e->prefix),
			.plen = e->prefix.plen,
			.code = entry_code(&e->policy),
			.timed = e->policy.expires_ns != 0,
		};
	}
	items_sort(items, k);
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
	for (int i = 0; i < XB_FLAT_LEVELS && !ret; i++)
		ret = level_build(items, k, xb_flat_levels[i].bits, words + xb_flat_levels[i].base);
	free(items);
	return ret;
}

/* ==== level 3: lines of /32 codes for IPv4 /24 regions ===================================== */

#define COVER_MAX 33                          /* nested prefixes of lengths 0..32 */

/* A prefix of /24 or shorter that covers the regions being swept. */
struct cover {
	__u64 end;  /* first address past it */
	__u32 code;
	bool timed; /* it or a prefix around it is timed */
};

/* Whether the entries [first, end), all longer than their region and inside it, leave the
 * region pure: none is timed, and all have `code`, the code of the longest entry covering the
 * whole region (NONE without one), which is not timed either. Such a region needs no line:
 * the coarser code is pure and answers (inner_mark). */
static bool region_uniform(const struct flat_item *items, size_t first, size_t end, __u32 code,
			   bool timed)
{
	if (timed || code == XDPBAN_FLAT_LOOKUP)
		return false;
	for (size_t i = first; i < end; i++)
		if (items[i].timed || items[i].code != code)
			return false;
	return true;
}

/* Paints the line of one region: the code of the longest covering prefix (base), then the
 * region's own entries (all longer than /24) in item order, which puts every prefix
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

/* Room for `want` elements of `size` bytes in all. 0 or -ENOMEM. */
static int vec_reserve(void **v, size_t *cap, size_t want, size_t size)
{
	void *p;

	if (want <= *cap)
		return 0;
	p = xb_big_realloc(*v, want * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = want;
	return 0;
}

/* Room for one more element of `size` bytes at (*v)[n]. 0 or -ENOMEM. */
static int vec_room(void **v, size_t n, size_t *cap, size_t size)
{
	return n < *cap ? 0 : vec_reserve(v, cap, *cap ? 2 * *cap : 256, size);
}

/* The most lines a sweep at `depth` (bits of the first 64) makes: one per run of items
 * longer than the depth in one region. Reserved before the sweep, so that the lines of a
 * million entries are not copied as they grow. */
static size_t lines_bound(const struct flat_item *items, size_t n, unsigned int depth)
{
	size_t runs = 0;
	__u64 region = 0;
	bool open = false;

	for (size_t i = 0; i < n; i++) {
		__u64 r = items[i].hi >> (64 - depth);

		if (items[i].plen <= depth) {
			open = false;
			continue;
		}
		runs += !open || r != region;
		open = true;
		region = r;
	}
	return runs;
}

int xb_flat_lines_push(struct xb_flat_line **v, size_t *n, size_t *cap)
{
	return vec_room((void **)v, *n, cap, sizeof(**v));
}

/* One sweep over the sorted items: a stack of the open prefixes of /24 and shorter gives each
 * region holding longer entries its base code; the region's entries follow it in the order. */
static int lines_sweep(const struct flat_item *items, size_t n, struct xb_flat_line **out,
		       size_t *count)
{
	struct cover stack[COVER_MAX];
	size_t cap = 0, i = 0;
	int depth = 0;

	if (vec_reserve((void **)out, &cap, lines_bound(items, n, XDPBAN_FLAT_L2_BITS),
			sizeof(**out)))
		return -ENOMEM;

	while (i < n) {
		const struct flat_item *it = &items[i];
		__u32 region = it->top >> XB_FLAT_L3_SHIFT;
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
		       items[end].top >> XB_FLAT_L3_SHIFT == region)
			end++;
		if (region_uniform(items, i, end, depth ? stack[depth - 1].code : XDPBAN_FLAT_NONE,
				   depth && stack[depth - 1].timed)) {
			i = end;
			continue;
		}
		if (xb_flat_lines_push(out, count, &cap))
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
	__u32 region = addr >> XB_FLAT_L3_SHIFT;

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

int xb_flat_slot_encode(const struct xdpban_flat_line *line, struct xdpban_flat_slot *slot)
{
	memset(slot->trits, 0, sizeof(slot->trits));
	memset(slot->pad, 0, sizeof(slot->pad));
	for (int byte = XDPBAN_FLAT_TRIT_BYTES - 1; byte >= 0; byte--) {
		__u32 v = 0;

		for (int place = XDPBAN_FLAT_TRITS_PER_BYTE - 1; place >= 0; place--) {
			__u32 i = (__u32)(byte * XDPBAN_FLAT_TRITS_PER_BYTE + place), code;

			if (i >= XDPBAN_FLAT_LINE_CODES)
				continue;
			code = xdpban_flat_line_code(line, i);
			if (code == XDPBAN_FLAT_LOOKUP)
				return -EINVAL;
			v = v * 3 + code - 1;
		}
		slot->trits[byte] = (__u8)v;
	}
	return 0;
}

/* Byte by byte, each trit peeled off the low end (xdpban_flat_slot_code's answer for every
 * code, without its division per code: a compile decodes every line in the map). */
void xb_flat_slot_decode(const struct xdpban_flat_slot *slot, struct xdpban_flat_line *line)
{
	memset(line, 0, sizeof(*line));
	for (__u32 byte = 0; byte < XDPBAN_FLAT_TRIT_BYTES; byte++) {
		__u32 v = slot->trits[byte];
		bool junk = v >= 243; /* no five trits: LOOKUP, as the data path reads it */

		for (__u32 place = 0; place < XDPBAN_FLAT_TRITS_PER_BYTE; place++, v /= 3) {
			__u32 i = byte * XDPBAN_FLAT_TRITS_PER_BYTE + place;
			__u64 code = junk ? XDPBAN_FLAT_LOOKUP : v % 3 + 1;

			if (i >= XDPBAN_FLAT_LINE_CODES)
				break;
			line->codes[i / XDPBAN_FLAT_CODES_PER_WORD] |= code << xdpban_flat_shift(i);
		}
	}
}

/* ==== IPv6 lines: 8-bit strides from /24 to /64 ============================================ */

/* One depth's lines in one sweep over the sorted items, as lines_sweep does for level 3: a
 * stack of the open prefixes of `depth` bits or fewer gives each region holding longer entries
 * its base code, and the region's entries follow in the order, each painting its sub-regions
 * (every prefix comes before the prefixes inside it); sub-regions with a longer entry inside
 * end as LOOKUP. A timed entry around or inside keeps the region's line out. */
static int lines6_depth(const struct flat_item *items, size_t n, __u32 depth,
			struct xb_flat6_line **out, size_t *count, size_t *cap)
{
	struct cover6 {
		unsigned __int128 end; /* first address past it (of 64 bits) */
		__u32 code;
		bool timed;
	} stack[XDPBAN_FLAT6_DEPTH_LAST + 1];
	const __u32 sub = depth + XDPBAN_FLAT6_STRIDE;
	int top = 0;

	for (size_t i = 0; i < n;) {
		const struct flat_item *it = &items[i];
		__u64 region = xdpban_flat6_key(it->hi, depth) & ~0xffull;
		struct xdpban_flat_line *line;
		bool timed;
		size_t end = i;

		while (top && stack[top - 1].end <= it->hi)
			top--;
		if (it->plen <= depth) {
			if (top == (int)(sizeof(stack) / sizeof(stack[0])))
				return -EINVAL; /* only a repeated prefix nests this deep */
			stack[top] = (struct cover6){
				.end = it->hi + ((unsigned __int128)1 << (64 - it->plen)),
				.code = it->code,
				.timed = it->timed || (top && stack[top - 1].timed),
			};
			top++;
			i++;
			continue;
		}
		while (end < n && items[end].plen > depth &&
		       (xdpban_flat6_key(items[end].hi, depth) & ~0xffull) == region)
			end++;
		if (region_uniform(items, i, end, top ? stack[top - 1].code : XDPBAN_FLAT_NONE,
				   top && stack[top - 1].timed)) {
			i = end;
			continue;
		}
		if (xb_flat6_lines_push(out, count, cap))
			return -ENOMEM;
		(*out)[*count].key = region | depth;
		line = &(*out)[*count].line;
		timed = top && stack[top - 1].timed;
		codes_fill(line->codes, 0, XDPBAN_FLAT_LINE_CODES,
			   top ? stack[top - 1].code : XDPBAN_FLAT_NONE);
		for (size_t k = i; k < end; k++) {
			__u32 at = (__u32)(items[k].hi >> (64 - sub)) & (XDPBAN_FLAT_LINE_CODES - 1);

			timed |= items[k].timed;
			if (items[k].plen <= sub)
				codes_fill(line->codes, at, 1u << (sub - items[k].plen), items[k].code);
		}
		for (size_t k = i; k < end; k++)
			if (items[k].plen > sub)
				inner_mark(line->codes,
					   (__u32)(items[k].hi >> (64 - sub)) & (XDPBAN_FLAT_LINE_CODES - 1),
					   &items[k]);
		*count += !timed;
		i = end;
	}
	return 0;
}

int xb_flat6_lines_push(struct xb_flat6_line **v, size_t *n, size_t *cap)
{
	return vec_room((void **)v, *n, cap, sizeof(**v));
}

int xb_flat6_lines_build(const struct xb_policy_entry *entries, size_t n,
			 struct xb_flat6_line **lines, size_t *count)
{
	struct flat_item *items;
	size_t k, cap = 0, bound = 0;
	int ret = items_make(entries, n, XDPBAN_FAMILY_INET6, &items, &k);

	*lines = NULL;
	*count = 0;
	if (ret || !k)
		return ret;
	for (size_t i = 1; i < k && !ret; i++)
		if (items[i].plen <= 64 && !item_cmp(&items[i - 1], &items[i]))
			ret = -EINVAL;
	for (__u32 d = XDPBAN_FLAT6_DEPTH_FIRST; d <= XDPBAN_FLAT6_DEPTH_LAST; d += XDPBAN_FLAT6_STRIDE)
		bound += lines_bound(items, k, d);
	if (!ret)
		ret = vec_reserve((void **)lines, &cap, bound, sizeof(**lines));
	/* Depth by depth, so the lines come out in their order (line6_key_cmp): coarse first. */
	for (__u32 d = XDPBAN_FLAT6_DEPTH_FIRST; d <= XDPBAN_FLAT6_DEPTH_LAST && !ret;
	     d += XDPBAN_FLAT6_STRIDE)
		ret = lines6_depth(items, k, d, lines, count, &cap);
	if (ret) {
		free(*lines);
		*lines = NULL;
		*count = 0;
	}
	free(items);
	return ret;
}

/* The order of IPv6 lines: by depth (the key's low byte), then by region. */
static int line6_key_cmp(const void *a, const void *b)
{
	__u64 x = ((const struct xb_flat6_line *)a)->key, y = ((const struct xb_flat6_line *)b)->key;

	if ((x & 0xff) != (y & 0xff))
		return (x & 0xff) < (y & 0xff) ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The same order as one number: the depth above the region's bits (at most 56 of them, so
 * the key's low byte holds only the depth). */
__u64 xb_flat6_key_rank(__u64 key)
{
	return (key & 0xff) << 56 | key >> 8;
}

int xb_flat_line_cmp(const void *a, const void *b)
{
	__u32 x = ((const struct xb_flat_line *)a)->region, y = ((const struct xb_flat_line *)b)->region;

	return x < y ? -1 : x > y;
}

/* Unless they are in order: the lines read back from a hash table of slots are in no order,
 * and qsort moving them whole took a third of a second for a million. */
void xb_flat_lines_sort(struct xb_flat_line *lines, size_t n)
{
	struct xb_sort_rec *recs;
	size_t i = 1;

	while (i < n && lines[i - 1].region <= lines[i].region)
		i++;
	if (i >= n)
		return;
	recs = xb_big_malloc(2 * n * sizeof(*recs));
	for (i = 0; recs && i < n; i++)
		recs[i] = (struct xb_sort_rec){ .hi = lines[i].region, .at = (__u32)i };
	if (!recs || xb_recs_sort(recs, n, lines, sizeof(*lines)))
		qsort(lines, n, sizeof(*lines), xb_flat_line_cmp);
	free(recs);
}

const struct xb_flat6_line *xb_flat6_lines_find(const struct xb_flat6_line *lines, size_t n,
						__u64 key)
{
	struct xb_flat6_line probe = { .key = key };

	return n ? bsearch(&probe, lines, n, sizeof(probe), line6_key_cmp) : NULL;
}

__u32 xb_flat6_lines_code(const struct xb_flat6_line *lines, size_t n, __u64 hi)
{
	for (__u32 d = XDPBAN_FLAT6_DEPTH_FIRST; d <= XDPBAN_FLAT6_DEPTH_LAST;
	     d += XDPBAN_FLAT6_STRIDE) {
		const struct xb_flat6_line *l = xb_flat6_lines_find(lines, n, xdpban_flat6_key(hi, d));
		__u32 code = l ? xdpban_flat6_code(&l->line, hi, d) : XDPBAN_FLAT_LOOKUP;

		if (code != XDPBAN_FLAT_LOOKUP || !l)
			return code;
	}
	return XDPBAN_FLAT_LOOKUP;
}
