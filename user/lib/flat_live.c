/* flat_live.c - the flat table while the data path reads it: xdpban_flat4/6 mapped for
 * writing (xb_flat_open), the LOOKUP marks a single change sets first, and the IPv4 level-3
 * lines in xdpban_flat4x with the rules that keep every line exact at every instant (below).
 * The codes themselves are computed in flat.c; policy.c decides when each step runs. Never
 * writes a trie, and never stores a pure code that the tries do not back at that instant.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "policy_internal.h"

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

static int line_collect(const void *key, const void *value, void *ctx)
{
	struct xb_line_dump *d = ctx;

	if (xb_flat_lines_push(&d->v, &d->n, &d->cap))
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
static int lines_dump(int fd, struct xb_line_dump *d)
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
	*first = xb_prefix_top(p) >> XB_FLAT_L3_SHIFT;
	*count = p->plen < XDPBAN_FLAT_L2_BITS ? 1u << (XDPBAN_FLAT_L2_BITS - p->plen) : 1;
}

/* Rule 1 for a single change: deletes the lines of the regions p touches, by key when they
 * are few, else from a dump of the map. */
static int lines_forget(int fd, const struct xb_prefix *p)
{
	struct xb_line_dump d = {};
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

void xb_l3_live_free(struct xb_l3_live *l)
{
	free(l->old.v);
	free(l->gone);
	memset(l, 0, sizeof(*l));
	l->fd = -1;
}

void xb_l3_live_open(struct xb_l3_live *l, const struct xb_maps *m, struct xb_flat *t)
{
	memset(l, 0, sizeof(*l));
	l->fd = l3_usable(m->flat4x) ? m->flat4x : -1;
	if (l->fd >= 0 && !lines_dump(l->fd, &l->old)) {
		l->gone = calloc(l->old.n + 1, sizeof(*l->gone));
		if (l->gone)
			return;
	}
	l3_disable(t);
	xb_l3_live_free(l);
}

void xb_l3_forget(struct xb_l3_live *l, struct xb_flat *t, const struct xb_prefix *p)
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
			xb_l3_live_free(l);
			return;
		}
		l->gone[i] = true;
	}
}

/* The old line of a region still in the map, or NULL. */
static const struct xb_flat_line *l3_old(const struct xb_l3_live *l, __u32 region)
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
static size_t l3_write_batched(struct xb_l3_live *l, const struct xb_flat_line *lines, size_t n,
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

bool xb_l3_write(struct xb_l3_live *l, struct xb_flat *t, const struct xb_flat_line *lines,
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

/* ==== before a single change =============================================================== */

int xb_flat_touch_live(const struct xb_maps *m, const struct xb_prefix *p)
{
	struct xb_flat t;
	int ret = xb_flat_open(&t, m, p->family);

	if (ret)
		return ret;
	xb_flat_touch(t.words, p);
	if (p->family == XDPBAN_FAMILY_INET &&
	    (!l3_usable(m->flat4x) || lines_forget(m->flat4x, p)))
		l3_disable(&t);
	xb_flat_close(&t);
	return 0;
}
