/* flat_live.c - the flat table while the data path reads it: xdpban_flat4/6 mapped for
 * writing (xb_flat_open), and the IPv4 level-3 lines in xdpban_flat4x with the rules that keep
 * every line exact at every instant (below): the lines a single change or a compile deletes
 * first, and the lines a compile writes after. The codes themselves are computed in flat.c,
 * the slots mapped and the grace period waited for in lines_live.c; policy.c decides when each
 * step runs. Never calls flat6_live.c or policy.c, never writes a trie, and never stores a pure
 * code that the tries do not back at that instant.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "flat_live.h"
#include "views.h"

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
	t->views = m->views;
	p = xb_map_view(t->views, t->fd, XDPBAN_FLAT_ENTRIES * sizeof(__u64));
	if (!p)
		return -errno;
	t->words = p;
	return 0;
}

void xb_flat_close(struct xb_flat *t)
{
	if (t->words)
		xb_map_unview(t->views, t->words, XDPBAN_FLAT_ENTRIES * sizeof(__u64));
	t->words = NULL;
}

/* ==== level 3 live: the line slots of xdpban_flat4x ======================================== *
 *
 * Why the lines are right at every instant. The data path reads a line only when the IPv4
 * guard is XDPBAN_FLAT_COMPILED_L3 and level 2 says LOOKUP, and then trusts its pure codes.
 * Level 2 says LOOKUP in many places (every touched region), so a line must never depend on
 * level 2 to be hidden: the invariant is that every line in the map, while the guard is
 * COMPILED_L3, holds codes exact for the trie as it is at that instant. Writers keep it so:
 *   1. before the trie changes anywhere in a /24 (a single change, or a compile's trie writes
 *      and deletes), the line of that /24 is deleted (its key set to XDPBAN_FLAT_SLOT_GONE);
 *      a delete is always safe (a missing line means the trie) and, once the store is done,
 *      no new lookup finds the old line;
 *   2. a line is written only after the trie holds every entry it stands for (a compile,
 *      after its trie writes), computed from the sorted set, never from lookups;
 *   3. a writer that cannot reach the lines (no usable map), or fails to delete one, first
 *      turns the guard back to XDPBAN_FLAT_COMPILED: no line is read from then on, so lines
 *      it leaves behind cannot be wrong where they are read; a compile that can reach them
 *      reconciles every line (deletes all it does not write) before it sets COMPILED_L3 again.
 * Level 2 and level 1 keep their own rule (policy.h) unchanged: a region with a line is
 * LOOKUP at level 2 already, and LOOKUP is always correct there.
 *   4. a slot's codes are written only into a slot never used, or one whose line was deleted
 *      before a grace period that has since passed (xb_rcu_wait(): every XDP program that may
 *      have read its old key has returned); the codes go in before the key, and the key is
 *      stored with release, so a reader that finds the key finds its codes. So a compile
 *      never rewrites a line in place: it deletes every line that goes or changes, waits,
 *      and only then writes. A deleted slot stays deleted (it does not end a probe) until a
 *      line is written into it. */

#define LINES_DELETE_DIRECT 4096u /* up to this many regions: delete by key, not by a scan */

/* Maps xdpban_flat4x for writing: 0, or -errno (-EPROTO: not a table of line slots). */
static int l3_map(const struct xb_maps *m, struct xb_l3_map *s)
{
	s->views = m->views;
	return xb_slots_map(s->views, m->flat4x, sizeof(*s->slots), (void **)&s->slots, &s->n);
}

static void l3_unmap(struct xb_l3_map *s)
{
	xb_slots_unmap(s->views, (void **)&s->slots, &s->n, sizeof(*s->slots));
}

static __u32 slot_key(const struct xb_l3_map *s, __u32 at)
{
	return __atomic_load_n(&s->slots[at].key, __ATOMIC_ACQUIRE);
}

static __u32 slot_next(const struct xb_l3_map *s, __u32 at)
{
	return at + 1 >= s->n ? 0 : at + 1;
}

/* The slot holding the line of region, as the data path's probe finds it, or -1. */
static long slot_find(const struct xb_l3_map *s, __u32 region)
{
	__u32 want = xdpban_flat_slot_key(region), at = xdpban_flat_slot_home(region, s->n);

	for (int probe = 0; probe < XDPBAN_FLAT_SLOT_PROBE; probe++, at = slot_next(s, at)) {
		__u32 key = slot_key(s, at);

		if (key == want)
			return at;
		if (key == XDPBAN_FLAT_SLOT_FREE)
			return -1;
	}
	return -1;
}

/* Rule 1: the line of region, if there is one, is read no more. */
static void line_delete(struct xb_l3_map *s, __u32 region)
{
	long at = slot_find(s, region);

	if (at >= 0)
		__atomic_store_n(&s->slots[at].key, XDPBAN_FLAT_SLOT_GONE, __ATOMIC_RELEASE);
}

/* Rule 4: writes the line of region into the first slot of its window that is free or
 * deleted. 0, -ENOSPC (no such slot: the trie answers) or -EINVAL (a code a slot cannot
 * hold). */
static int line_insert(struct xb_l3_map *s, __u32 region, const struct xdpban_flat_line *line)
{
	__u32 at = xdpban_flat_slot_home(region, s->n);
	struct xdpban_flat_slot slot;

	if (xb_flat_slot_encode(line, &slot))
		return -EINVAL;
	for (int probe = 0; probe < XDPBAN_FLAT_SLOT_PROBE; probe++, at = slot_next(s, at)) {
		__u32 key = slot_key(s, at);

		if (key != XDPBAN_FLAT_SLOT_FREE && key != XDPBAN_FLAT_SLOT_GONE)
			continue;
		memcpy(s->slots[at].trits, slot.trits, sizeof(slot.trits));
		memcpy(s->slots[at].pad, slot.pad, sizeof(slot.pad));
		__atomic_store_n(&s->slots[at].key, xdpban_flat_slot_key(region), __ATOMIC_RELEASE);
		return 0;
	}
	return -ENOSPC;
}

/* Every line in the slots, decoded and sorted by region. */
static int lines_dump(const struct xb_l3_map *s, struct xb_line_dump *d)
{
	for (__u32 at = 0; at < s->n; at++) {
		__u32 key = slot_key(s, at);

		if (key == XDPBAN_FLAT_SLOT_FREE || key == XDPBAN_FLAT_SLOT_GONE)
			continue;
		if (xb_flat_lines_push(&d->v, &d->n, &d->cap))
			return -ENOMEM;
		d->v[d->n].region = key - 1;
		xb_flat_slot_decode(&s->slots[at], &d->v[d->n].line);
		d->n++;
	}
	xb_flat_lines_sort(d->v, d->n);
	return 0;
}

int xb_flat_lines_read(const struct xb_maps *m, struct xb_flat_line **lines, size_t *n)
{
	struct xb_line_dump d = {};
	struct xb_l3_map s;
	int ret = l3_map(m, &s);

	*lines = NULL;
	*n = 0;
	if (ret)
		return ret;
	ret = lines_dump(&s, &d);
	l3_unmap(&s);
	if (ret) {
		free(d.v);
		return ret;
	}
	*lines = d.v;
	*n = d.n;
	return 0;
}

/* The /24 regions a prefix covers or lies in: [*first, *first + *count). */
static void prefix_regions(const struct xb_prefix *p, __u32 *first, __u32 *count)
{
	*first = xb_prefix_top(p) >> XB_FLAT_L3_SHIFT;
	*count = p->plen < XDPBAN_FLAT_L2_BITS ? 1u << (XDPBAN_FLAT_L2_BITS - p->plen) : 1;
}

/* Rule 1 for a single change: deletes the lines of the regions p touches, by key when they
 * are few, else by a scan of every slot. */
static void lines_forget(struct xb_l3_map *s, const struct xb_prefix *p)
{
	__u32 first, count;

	prefix_regions(p, &first, &count);
	if (count <= LINES_DELETE_DIRECT) {
		for (__u32 r = first; r < first + count; r++)
			line_delete(s, r);
		return;
	}
	for (__u32 at = 0; at < s->n; at++) {
		__u32 key = slot_key(s, at);

		if (key != XDPBAN_FLAT_SLOT_FREE && key != XDPBAN_FLAT_SLOT_GONE &&
		    key - 1 - first < count)
			__atomic_store_n(&s->slots[at].key, XDPBAN_FLAT_SLOT_GONE, __ATOMIC_RELEASE);
	}
}

void xb_l3_live_free(struct xb_l3_live *l)
{
	free(l->old.v);
	free(l->gone);
	l3_unmap(&l->map);
	memset(l, 0, sizeof(*l));
	l->fd = -1;
}

/* Deletes every line the data path's probe would not find where it lies (written by other
 * means, or a second line of a region), so that no later write can bring it into reach. */
static void slots_tidy(struct xb_l3_map *s)
{
	for (__u32 at = 0; at < s->n; at++) {
		__u32 key = slot_key(s, at);

		if (key != XDPBAN_FLAT_SLOT_FREE && key != XDPBAN_FLAT_SLOT_GONE &&
		    slot_find(s, key - 1) != (long)at)
			__atomic_store_n(&s->slots[at].key, XDPBAN_FLAT_SLOT_GONE, __ATOMIC_RELEASE);
	}
}

void xb_l3_live_open(struct xb_l3_live *l, const struct xb_maps *m, struct xb_flat *t)
{
	memset(l, 0, sizeof(*l));
	l->fd = -1;
	if (!l3_map(m, &l->map))
		slots_tidy(&l->map);
	if (l->map.slots && !lines_dump(&l->map, &l->old)) {
		l->gone = calloc(l->old.n + 1, sizeof(*l->gone));
		if (l->gone) {
			l->fd = m->flat4x;
			return;
		}
	}
	xb_lines_disable(t);
	xb_l3_live_free(l);
}

void xb_l3_forget(struct xb_l3_live *l, const struct xb_prefix *p)
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

		if (xb_flat_line_cmp(&l->old.v[mid], &probe) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < l->old.n && l->old.v[i].region - first < count; i++) {
		if (!l->gone[i])
			line_delete(&l->map, l->old.v[i].region);
		l->gone[i] = true;
	}
}

/* The old line of a region still in the map, or NULL. */
static const struct xb_flat_line *l3_old(const struct xb_l3_live *l, __u32 region)
{
	struct xb_flat_line probe = { .region = region };
	const struct xb_flat_line *o = l->old.n ? bsearch(&probe, l->old.v, l->old.n,
							  sizeof(probe), xb_flat_line_cmp)
						: NULL;

	return o && !l->gone[o - l->old.v] ? o : NULL;
}

static bool line_same(const struct xb_flat_line *a, const struct xb_flat_line *b)
{
	return a && b && !memcmp(&a->line, &b->line, sizeof(a->line));
}

bool xb_l3_write(struct xb_l3_live *l, struct xb_flat *t, const struct xb_flat_line *lines,
		 size_t n, struct xb_compile_result *res)
{
	bool inserts = false;
	size_t held = 0; /* lines in the slots */

	for (size_t i = 0; i < l->old.n; i++) {
		const struct xb_flat_line *o = &l->old.v[i];
		const struct xb_flat_line *keep =
			n ? bsearch(o, lines, n, sizeof(*o), xb_flat_line_cmp) : NULL;

		if (l->gone[i] || line_same(o, keep))
			continue;
		line_delete(&l->map, o->region); /* gone, or changed: rule 4, never overwrite */
		l->gone[i] = true;
	}
	for (size_t i = 0; i < l->old.n; i++)
		held += !l->gone[i];
	for (size_t i = 0; i < n && !inserts; i++)
		inserts = !l3_old(l, lines[i].region);
	if (inserts && xb_rcu_wait())
		goto off; /* no grace period, no safe write: the trie answers instead */
	for (size_t i = 0; i < n; i++) {
		const struct xb_flat_line *o = l3_old(l, lines[i].region);

		if (line_same(o, &lines[i])) {
			res->lines4++;
			continue;
		}
		if (held >= l->map.n / 2) { /* the capacity: half the slots stay free */
			res->lines4_full++;
			continue;
		}
		if (slot_find(&l->map, lines[i].region) >= 0) {
			/* A line this compile did not read: never trust it, the trie answers. */
			line_delete(&l->map, lines[i].region);
			res->lines4_full++;
			continue;
		}
		if (line_insert(&l->map, lines[i].region, &lines[i].line)) {
			res->lines4_full++;
			continue;
		}
		res->lines4++;
		held++;
	}
	return true;
off:
	xb_lines_disable(t);
	res->lines4 = 0;
	res->lines4_full = 0;
	return false;
}

/* ==== before a single change =============================================================== */

void xb_l3_touch_live(const struct xb_maps *m, struct xb_flat *t, const struct xb_prefix *p)
{
	struct xb_l3_map s;

	if (l3_map(m, &s))
		xb_lines_disable(t);
	else
		lines_forget(&s, p);
	l3_unmap(&s);
}
