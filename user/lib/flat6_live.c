/* flat6_live.c - the IPv6 lines (xdpban_flat6x, include/xdpban_flat.h) while the data path
 * reads them: the slots mapped for writing, the lines a single change or a compile deletes
 * first, and the lines a compile writes after the trie holds its set. The rules are level 3's,
 * written out in flat_live.c (every line exact for the trie at every instant: deleted before
 * the trie changes anywhere in its region, written only after, never rewritten in place, a
 * grace period before a slot is reused; a writer that cannot reach the lines turns the IPv6
 * guard back to XDPBAN_FLAT_COMPILED first). The lines are computed in flat.c, the slots
 * mapped and the grace period waited for in lines_live.c. The step that deletes lines before
 * the trie changes also deletes the host entry of a /128 (host6_live.c), which the walk
 * reaches past them. Never calls flat_live.c or policy.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "bigmem.h"
#include "flat6_live.h"
#include "host6_live.h"

#define DEPTH_OF(key) ((__u32)((key) & 0xff))
#define LINES6_DELETE_DIRECT 4096u /* up to this many keys: delete by key, not by a scan */

/* Maps xdpban_flat6x for writing: 0, or -errno (-EPROTO: not a table of IPv6 line slots). */
static int l6_map(const struct xb_maps *m, struct xb_l6_map *s)
{
	s->views = m->views;
	return xb_slots_map(s->views, m->flat6x, sizeof(*s->slots), (void **)&s->slots, &s->n);
}

static void l6_unmap(struct xb_l6_map *s)
{
	xb_slots_unmap(s->views, (void **)&s->slots, &s->n, sizeof(*s->slots));
}

static __u64 slot_key(const struct xb_l6_map *s, __u32 at)
{
	return __atomic_load_n(&s->slots[at].key, __ATOMIC_ACQUIRE);
}

static bool key_live(__u64 key)
{
	return key != XDPBAN_FLAT6_SLOT_FREE && key != XDPBAN_FLAT6_SLOT_GONE;
}

static void slot_forget(struct xb_l6_map *s, __u32 at)
{
	__atomic_store_n(&s->slots[at].key, XDPBAN_FLAT6_SLOT_GONE, __ATOMIC_RELEASE);
}

/* The slot holding the line of key, as the data path's probe finds it, or -1. */
static long slot_find(const struct xb_l6_map *s, __u64 key)
{
	__u32 at = xdpban_flat6_slot_home(key, s->n);

	for (int probe = 0; probe < XDPBAN_FLAT_SLOT_PROBE; probe++) {
		__u64 k = slot_key(s, at);

		if (k == key)
			return at;
		if (k == XDPBAN_FLAT6_SLOT_FREE)
			return -1;
		at = at + 1 >= s->n ? 0 : at + 1;
	}
	return -1;
}

static void line_delete(struct xb_l6_map *s, __u64 key)
{
	long at = slot_find(s, key);

	if (at >= 0)
		slot_forget(s, (__u32)at);
}

/* Rule 4: the line into the first free or deleted slot of its window, the key last. 0 or
 * -ENOSPC (the trie answers there). */
static int line_insert(struct xb_l6_map *s, const struct xb_flat6_line *l)
{
	__u32 at = xdpban_flat6_slot_home(l->key, s->n);

	for (int probe = 0; probe < XDPBAN_FLAT_SLOT_PROBE; probe++) {
		if (!key_live(slot_key(s, at))) {
			memcpy(&s->slots[at].line, &l->line, sizeof(l->line));
			__atomic_store_n(&s->slots[at].key, l->key, __ATOMIC_RELEASE);
			return 0;
		}
		at = at + 1 >= s->n ? 0 : at + 1;
	}
	return -ENOSPC;
}

/* Whether the region of a line and the prefix (its first 64 bits hi, its length) overlap: one
 * holds the other. */
static bool line_overlaps(__u64 key, __u64 hi, __u32 plen)
{
	__u32 depth = DEPTH_OF(key), bits = depth < plen ? depth : plen;

	return !bits || !((key ^ hi) & ~0ull << (64 - bits));
}

static __u64 prefix_hi6(const struct xb_prefix *p)
{
	return xb_be64_load(p->addr);
}

/* The keys of depth `depth` that overlap the prefix: *count keys from *first, one region
 * (1 << (64 - depth)) apart. */
static void depth_keys(__u64 hi, __u32 plen, __u32 depth, __u64 *first, __u64 *count)
{
	__u32 bits = depth < plen ? depth : plen;

	*first = xdpban_flat6_key(bits ? hi & ~0ull << (64 - bits) : 0, depth);
	*count = depth > plen ? 1ull << (depth - plen) : 1;
}

/* Rule 1 for a single change: deletes the lines whose regions p touches, by key when they are
 * few, else by a scan of every slot. */
static void lines_forget(struct xb_l6_map *s, const struct xb_prefix *p)
{
	__u64 hi = prefix_hi6(p), keys = 0, first, count;

	for (__u32 d = XDPBAN_FLAT6_DEPTH_FIRST; d <= XDPBAN_FLAT6_DEPTH_LAST;
	     d += XDPBAN_FLAT6_STRIDE) {
		depth_keys(hi, p->plen, d, &first, &count);
		keys += count;
	}
	if (keys > LINES6_DELETE_DIRECT) {
		for (__u32 at = 0; at < s->n; at++) {
			__u64 key = slot_key(s, at);

			if (key_live(key) && line_overlaps(key, hi, p->plen))
				slot_forget(s, at);
		}
		return;
	}
	for (__u32 d = XDPBAN_FLAT6_DEPTH_FIRST; d <= XDPBAN_FLAT6_DEPTH_LAST;
	     d += XDPBAN_FLAT6_STRIDE) {
		depth_keys(hi, p->plen, d, &first, &count);
		for (__u64 i = 0; i < count; i++)
			line_delete(s, first + (i << (64 - d)));
	}
}

/* The live lines in the slots. With tidy, a writer's, it first deletes every line the data
 * path's probe would not find where it lies, so that no later write can bring it into reach
 * (a deleted slot stays in the probe's way: the others are found as before). */
static size_t lines_count(struct xb_l6_map *s, bool tidy)
{
	size_t n = 0;

	for (__u32 at = 0; at < s->n; at++) {
		__u64 key = slot_key(s, at);

		if (!key_live(key))
			continue;
		if (tidy && slot_find(s, key) != (long)at)
			slot_forget(s, at);
		else
			n++;
	}
	return n;
}

/* Every line in the slots, in their order, and (slots not NULL) the slot of each: the keys
 * are sorted as numbers with their slots, then the lines copied out in that order (no copy
 * of a line moves twice). This compile is the only writer, so the count holds. */
static int lines_dump(struct xb_l6_map *s, struct xb_line6_dump *d, __u32 **slots, bool tidy)
{
	size_t n = lines_count(s, tidy), k = 0;
	struct xb_sort_rec *recs = n ? xb_big_malloc(2 * n * sizeof(*recs)) : NULL;
	const struct xb_sort_rec *sorted;

	if (!n)
		return 0;
	d->v = xb_big_malloc(n * sizeof(*d->v));
	if (slots)
		*slots = xb_big_malloc(n * sizeof(**slots));
	if (!recs || !d->v || (slots && !*slots)) {
		free(recs);
		return -ENOMEM;
	}
	for (__u32 at = 0; at < s->n && k < n; at++) {
		__u64 key = slot_key(s, at);

		if (key_live(key))
			recs[k++] = (struct xb_sort_rec){ .hi = xb_flat6_key_rank(key), .at = at };
	}
	sorted = xb_recs_order(recs, n);
	for (size_t i = 0; i < n; i++) {
		__u32 at = sorted[i].at;

		d->v[i].key = slot_key(s, at);
		memcpy(&d->v[i].line, &s->slots[at].line, sizeof(d->v[i].line));
		if (slots)
			(*slots)[i] = at;
	}
	d->n = d->cap = n;
	free(recs);
	return 0;
}

int xb_flat6_lines_read(const struct xb_maps *m, struct xb_flat6_line **lines, size_t *n)
{
	struct xb_line6_dump d = {};
	struct xb_l6_map s;
	int ret = l6_map(m, &s);

	*lines = NULL;
	*n = 0;
	if (ret)
		return ret;
	ret = lines_dump(&s, &d, NULL, false);
	l6_unmap(&s);
	if (ret) {
		free(d.v);
		return ret;
	}
	*lines = d.v;
	*n = d.n;
	return 0;
}

void xb_l6_live_free(struct xb_l6_live *l)
{
	free(l->old.v);
	free(l->slot);
	free(l->gone);
	free(l->doomed);
	l6_unmap(&l->map);
	memset(l, 0, sizeof(*l));
	l->fd = -1;
}

void xb_l6_live_open(struct xb_l6_live *l, const struct xb_maps *m, struct xb_flat *t)
{
	memset(l, 0, sizeof(*l));
	l->fd = -1;
	if (!l6_map(m, &l->map) && !lines_dump(&l->map, &l->old, &l->slot, true)) {
		l->gone = calloc(l->old.n + 1, sizeof(*l->gone));
		l->doomed = calloc(l->map.n / 64 + 1, sizeof(*l->doomed));
		if (l->gone && l->doomed) {
			l->fd = m->flat6x;
			l->maps = m;
			l->table = t;
			return;
		}
	}
	xb_lines_disable(t);
	xb_l6_live_free(l);
}

/* Old line i goes: deleted from its slot by the next xb_l6_flush. */
static void line_doom(struct xb_l6_live *l, size_t i)
{
	__u32 at = l->slot[i];

	if (l->gone[i])
		return;
	l->gone[i] = true;
	l->doomed[at / 64] |= 1ull << (at % 64);
}

/* The deletes in slot order: a million of them, each in a random slot of a large array, cost
 * a TLB miss and a cache miss apiece; in order they cost a sweep. */
void xb_l6_flush(struct xb_l6_live *l)
{
	if (l->fd < 0)
		return;
	for (__u32 w = 0; w <= l->map.n / 64; w++) {
		for (__u64 bits = l->doomed[w]; bits; bits &= bits - 1)
			slot_forget(&l->map, w * 64 + (__u32)__builtin_ctzll(bits));
		l->doomed[w] = 0;
	}
}

static bool line_before(__u64 k, __u64 key)
{
	return DEPTH_OF(k) != DEPTH_OF(key) ? DEPTH_OF(k) < DEPTH_OF(key) : k < key;
}

/* The index of the first old line at or past key in their order, searched in [lo, hi). */
static size_t old_lower(const struct xb_l6_live *l, __u64 key, size_t lo, size_t hi)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (line_before(l->old.v[mid].key, key))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The same, from the depth's cursor: a compile forgets its touched prefixes in address order,
 * so the answer is at or a little past the last one, and steps doubling from there find it in
 * a few reads (a search of all the lines for each of a million prefixes cost seconds). */
static size_t old_from_cursor(struct xb_l6_live *l, int depth_at, __u64 key)
{
	size_t lo = l->cursor[depth_at], step = 1, hi;

	if (lo > l->old.n || (lo > 0 && !line_before(l->old.v[lo - 1].key, key)))
		lo = 0; /* out of order: search everything */
	hi = lo;
	while (hi < l->old.n && line_before(l->old.v[hi].key, key)) {
		lo = hi + 1;
		hi += step;
		step *= 2;
	}
	hi = hi < l->old.n ? hi : l->old.n;
	return l->cursor[depth_at] = old_lower(l, key, lo, hi);
}

void xb_l6_forget(struct xb_l6_live *l, const struct xb_prefix *p)
{
	__u64 hi = prefix_hi6(p), first, count;

	if (l->fd < 0)
		return;
	for (__u32 d = XDPBAN_FLAT6_DEPTH_FIRST; d <= XDPBAN_FLAT6_DEPTH_LAST;
	     d += XDPBAN_FLAT6_STRIDE) {
		int depth_at = (int)((d - XDPBAN_FLAT6_DEPTH_FIRST) / XDPBAN_FLAT6_STRIDE);

		depth_keys(hi, p->plen, d, &first, &count);
		for (size_t i = old_from_cursor(l, depth_at, first); i < l->old.n; i++) {
			__u64 k = l->old.v[i].key;

			if (DEPTH_OF(k) != d || (k - first) >> (64 - d) >= count)
				break;
			line_doom(l, i);
		}
	}
	if (xb_h6_forget(l->maps, p)) {
		xb_lines_disable(l->table); /* a host entry may be stale: no walk may reach it */
		xb_l6_live_free(l);
	}
}

/* The old line with that key still in the map, or NULL. */
static const struct xb_flat6_line *l6_old(const struct xb_l6_live *l, __u64 key)
{
	const struct xb_flat6_line *o = xb_flat6_lines_find(l->old.v, l->old.n, key);

	return o && !l->gone[o - l->old.v] ? o : NULL;
}

static bool line_same(const struct xb_flat6_line *a, const struct xb_flat6_line *b)
{
	return a && b && !memcmp(&a->line, &b->line, sizeof(a->line));
}

bool xb_l6_write(struct xb_l6_live *l, struct xb_flat *t, const struct xb_flat6_line *lines,
		 size_t n, struct xb_compile_result *res)
{
	bool inserts = false;
	size_t held = 0;

	for (size_t i = 0; i < l->old.n; i++) {
		const struct xb_flat6_line *o = &l->old.v[i];

		if (l->gone[i] || line_same(o, xb_flat6_lines_find(lines, n, o->key)))
			continue;
		line_doom(l, i); /* gone, or changed: never overwrite */
	}
	xb_l6_flush(l);
	for (size_t i = 0; i < l->old.n; i++)
		held += !l->gone[i];
	for (size_t i = 0; i < n && !inserts; i++)
		inserts = !l6_old(l, lines[i].key);
	if (inserts && xb_rcu_wait())
		goto off;
	for (size_t i = 0; i < n; i++) { /* coarse first: room goes to the lines most sources read */
		if (line_same(l6_old(l, lines[i].key), &lines[i])) {
			res->lines6++;
			continue;
		}
		if (held >= l->map.n / 2 || slot_find(&l->map, lines[i].key) >= 0 ||
		    line_insert(&l->map, &lines[i])) {
			line_delete(&l->map, lines[i].key); /* one this compile did not read */
			res->lines6_full++;
			continue;
		}
		res->lines6++;
		held++;
	}
	return true;
off:
	xb_lines_disable(t);
	res->lines6 = 0;
	res->lines6_full = 0;
	return false;
}

int xb_l6_touch_live(const struct xb_maps *m, struct xb_flat *t, const struct xb_prefix *p)
{
	struct xb_l6_map s;

	if (l6_map(m, &s)) {
		xb_lines_disable(t);
		return 0;
	}
	lines_forget(&s, p);
	l6_unmap(&s);
	if (xb_h6_forget(m, p))
		xb_lines_disable(t); /* a host entry may be stale: no walk may reach it */
	return 0;
}
