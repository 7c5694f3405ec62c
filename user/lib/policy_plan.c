/* policy_plan.c - what a compile (xb_policy_compile, policy.h) will change, in plain memory:
 * policy sets, the check of a whole set, and the plan of one family (the sorted sets before
 * and after, what to write, what to delete, which prefixes to touch first). Never touches a
 * map, a file descriptor or a syscall: policy.c reads the tries into a plan and carries it out.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bigmem.h"
#include "policy_plan.h"

/* ==== prefixes ============================================================================= */

/* Clears the bits past the length, so that equal prefixes compare equal whatever a writer
 * left there (the trie ignores those bits too). */
static void prefix_canonical(struct xb_prefix *p)
{
	unsigned int bytes = xb_family_bits(p->family) / 8;

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

/* ==== sets ================================================================================= */

/* Room for `more` entries past n in a vector of entries. 0 or -ENOMEM. */
static int entries_reserve(struct xb_policy_entry **v, size_t n, size_t *cap, size_t more)
{
	struct xb_policy_entry *grown;

	if (*cap - n >= more)
		return 0;
	grown = xb_big_realloc(*v, (n + more) * sizeof(**v));
	if (!grown)
		return -ENOMEM;
	*v = grown;
	*cap = n + more;
	return 0;
}

int xb_policy_set_reserve(struct xb_policy_set *s, size_t more)
{
	return entries_reserve(&s->v, s->n, &s->cap, more);
}

int xb_policy_set_add(struct xb_policy_set *s, const struct xb_prefix *p,
		      const struct xdpban_policy *val)
{
	if (s->n == s->cap && xb_policy_set_reserve(s, s->cap ? s->cap : 1024))
		return -ENOMEM;
	s->v[s->n++] = (struct xb_policy_entry){ .prefix = *p, .policy = *val };
	return 0;
}

void xb_policy_set_free(struct xb_policy_set *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* ==== the plan ============================================================================= */

int xb_entry_list_reserve(struct xb_entry_list *l, size_t more)
{
	return entries_reserve(&l->v, l->n, &l->cap, more);
}

int xb_entry_list_push(struct xb_entry_list *l, const struct xb_policy_entry *e)
{
	if (l->n == l->cap && xb_entry_list_reserve(l, l->cap ? l->cap : 1024))
		return -ENOMEM;
	l->v[l->n] = *e;
	prefix_canonical(&l->v[l->n].prefix);
	l->n++;
	return 0;
}

static bool rec_less(const struct xb_sort_rec *a, const struct xb_sort_rec *b)
{
	if (a->hi != b->hi)
		return a->hi < b->hi;
	if (a->lo != b->lo)
		return a->lo < b->lo;
	return a->plen < b->plen;
}

/* Bottom-up merge sort of n records, with room for n more in tmp: the sorted copy. */
struct xb_sort_rec *xb_recs_order(struct xb_sort_rec *a, size_t n)
{
	struct xb_sort_rec *tmp = a + n;

	for (size_t w = 1; w < n; w *= 2) {
		struct xb_sort_rec *t = a;

		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n, end = lo + 2 * w < n ? lo + 2 * w : n;
			size_t i = lo, j = mid, k = lo;

			while (i < mid && j < end)
				tmp[k++] = rec_less(&a[j], &a[i]) ? a[j++] : a[i++];
			while (i < mid)
				tmp[k++] = a[i++];
			while (j < end)
				tmp[k++] = a[j++];
		}
		a = tmp;
		tmp = t;
	}
	return a;
}

int xb_recs_sort(struct xb_sort_rec *recs, size_t n, void *v, size_t size)
{
	struct xb_sort_rec *sorted;
	char *base = v, *held = malloc(size);

	if (!held)
		return -ENOMEM;
	sorted = xb_recs_order(recs, n);
	/* Record i takes the one at sorted[i].at: each cycle of that permutation moves through one
	 * held record, and a record in place is marked by at == its index. */
	for (size_t i = 0; i < n; i++) {
		size_t j = i;

		if (sorted[i].at == i)
			continue;
		memcpy(held, base + i * size, size);
		while (sorted[j].at != i) {
			size_t from = sorted[j].at;

			memcpy(base + j * size, base + from * size, size);
			sorted[j].at = (__u32)j;
			j = from;
		}
		memcpy(base + j * size, held, size);
		sorted[j].at = (__u32)j;
	}
	free(held);
	return 0;
}

/* The sort record of a canonical prefix kept at place `at`: the prefix as numbers. */
static struct xb_sort_rec prefix_rec(const struct xb_prefix *c, size_t at)
{
	return (struct xb_sort_rec){ .hi = xb_be64_load(c->addr), .lo = xb_be64_load(c->addr + 8),
				     .plen = c->plen, .at = (__u32)at };
}

/* Lists come sorted more often than not (a file in address order, the trie read back, a set
 * that kept nothing), and checking costs one pass. Otherwise the entries' keys are sorted as
 * numbers and the entries moved into that order: qsort through memcmp took half a second
 * for a million IPv6 entries. */
void xb_entry_list_sort(struct xb_entry_list *l)
{
	struct xb_sort_rec *recs;
	size_t i = 1;

	while (i < l->n && entry_cmp(&l->v[i - 1], &l->v[i]) <= 0)
		i++;
	if (i >= l->n)
		return;
	recs = xb_big_malloc(2 * l->n * sizeof(*recs));
	for (i = 0; recs && i < l->n; i++)
		recs[i] = prefix_rec(&l->v[i].prefix, i); /* a list's prefixes are canonical */
	if (!recs || xb_recs_sort(recs, l->n, l->v, sizeof(*l->v)))
		qsort(l->v, l->n, sizeof(*l->v), entry_cmp); /* the slow way needs no memory */
	free(recs);
}

/* Room for `more` places past l->n. 0 or -ENOMEM. */
static int refs_reserve(struct xb_ref_list *l, size_t more)
{
	__u32 *grown;

	if (l->cap - l->n >= more)
		return 0;
	grown = xb_big_realloc(l->v, (l->n + more) * sizeof(*l->v));
	if (!grown)
		return -ENOMEM;
	l->v = grown;
	l->cap = l->n + more;
	return 0;
}

void xb_plan_free(struct xb_plan *p)
{
	free(p->old.v);
	free(p->next.v);
	free(p->write.v);
	free(p->remove.v);
	free(p->touch.v);
	memset(p, 0, sizeof(*p));
}

void xb_prefix_describe(const struct xb_prefix *p, char *buf, size_t len)
{
	if (xb_prefix_format(p, buf, len))
		snprintf(buf, len, "(a bad prefix)");
}

int xb_policy_set_check(const struct xb_policy_set *set, char *err, size_t errlen)
{
	char text[64];

	for (size_t i = 0; i < set->n; i++) {
		const struct xb_policy_entry *e = &set->v[i];

		if (e->prefix.family != XDPBAN_FAMILY_INET && e->prefix.family != XDPBAN_FAMILY_INET6) {
			snprintf(err, errlen, "policy entry %zu: bad address family %u", i,
				 e->prefix.family);
			return -EINVAL;
		}
		if (e->prefix.plen > xb_family_bits(e->prefix.family)) {
			xb_prefix_describe(&e->prefix, text, sizeof(text));
			snprintf(err, errlen, "policy entry %s: prefix length %u out of range", text,
				 e->prefix.plen);
			return -EINVAL;
		}
		if (e->policy.verdict > XDPBAN_POLICY_VERDICT_MAX) {
			xb_prefix_describe(&e->prefix, text, sizeof(text));
			snprintf(err, errlen, "policy entry %s: bad verdict %u", text,
				 e->policy.verdict);
			return -EINVAL;
		}
	}
	return 0;
}

/* A set's prefixes may carry bits past their length: records are made of canonical copies. */
static struct xb_sort_rec set_rec(const struct xb_policy_set *set, size_t i)
{
	struct xb_prefix c = set->v[i].prefix;

	prefix_canonical(&c);
	return prefix_rec(&c, i);
}

/* The set's entries of the family, in the order of their canonical prefixes, or NULL when
 * they are in that order already (or no memory can be had for it: then they are sorted after
 * the copy). *n gets how many there are. The records are made twice, first only to find
 * out whether they are needed: a sorted set, the common case, then faults in no fresh memory
 * for them (48 MB for a million, slower to fault in than the second pass takes). */
static struct xb_sort_rec *set_order(const struct xb_policy_set *set, __u8 family, size_t *n,
				     struct xb_sort_rec **held)
{
	struct xb_sort_rec *recs = NULL, last = { 0 };
	bool sorted = true;

	*n = 0;
	*held = NULL;
	for (size_t i = 0; i < set->n; i++) {
		struct xb_sort_rec r;

		if (set->v[i].prefix.family != family)
			continue;
		r = set_rec(set, i);
		sorted = sorted && (!*n || !rec_less(&r, &last));
		last = r;
		(*n)++;
	}
	if (sorted || !(recs = xb_big_malloc(2 * *n * sizeof(*recs))))
		return NULL;
	*held = recs;
	for (size_t i = 0, k = 0; i < set->n; i++)
		if (set->v[i].prefix.family == family)
			recs[k++] = set_rec(set, i);
	return xb_recs_order(recs, *n);
}

/* An unsorted set is gathered into p->next in order from its sorted records, rather than
 * copied and then moved into order: a million IPv6 entries moved in place took 0.16 s. */
int xb_plan_take_set(struct xb_plan *p, const struct xb_policy_set *set, char *err,
		     size_t errlen)
{
	struct xb_sort_rec *held, *order;
	size_t mine;
	char text[64];
	int ret;

	order = set_order(set, p->family, &mine, &held);
	ret = xb_entry_list_reserve(&p->next, mine);
	for (size_t i = 0; order && i < mine && !ret; i++)
		ret = xb_entry_list_push(&p->next, &set->v[order[i].at]);
	for (size_t i = 0; !order && i < set->n && !ret; i++) {
		if (set->v[i].prefix.family == p->family)
			ret = xb_entry_list_push(&p->next, &set->v[i]);
	}
	free(held);
	if (ret)
		return ret;
	if (!order)
		xb_entry_list_sort(&p->next);
	for (size_t i = 1; i < p->next.n; i++) {
		if (entry_cmp(&p->next.v[i - 1], &p->next.v[i]))
			continue;
		xb_prefix_describe(&p->next.v[i].prefix, text, sizeof(text));
		snprintf(err, errlen, "policy entry %s is in the set twice", text);
		return -EINVAL;
	}
	return 0;
}

int xb_plan_keep_old(struct xb_plan *p, const struct xb_compile_opts *opts)
{
	size_t named = p->next.n;
	int ret;

	for (size_t i = 0; opts && opts->keep && i < p->old.n; i++) {
		const struct xb_policy_entry *e = &p->old.v[i];
		struct xb_policy_entry probe = { .prefix = e->prefix };

		if (!opts->keep(e, opts->ctx) ||
		    (named && bsearch(&probe, p->next.v, named, sizeof(probe), entry_cmp)))
			continue;
		ret = xb_entry_list_push(&p->next, e);
		if (ret)
			return ret;
		p->kept++;
	}
	if (p->kept)
		xb_entry_list_sort(&p->next);
	return 0;
}

bool xb_keep_manual_bans(const struct xb_policy_entry *old, void *ctx)
{
	return old->policy.list_id == XDPBAN_LIST_MANUAL_BAN;
}

/* A change that moves a verdict (not only the list id) can change codes. */
static bool verdict_changes(const struct xdpban_policy *a, const struct xdpban_policy *b)
{
	return a->verdict != b->verdict || a->expires_ns != b->expires_ns;
}

/* Takes `at` as a plan's split of a list of n changes if it is nearer the middle than *best. */
static void split_consider(size_t *best, size_t at, size_t n)
{
	size_t half = n / 2, d = at > half ? at - half : half - at;
	size_t best_d = *best > half ? *best - half : half - *best;

	if (at && at < n && (!*best || d < best_d))
		*best = at;
}

#define CHAIN_MAX 129 /* nested distinct prefixes of lengths 0..128 */

/* a covers b: b is a itself or lies inside it (both canonical). */
static bool prefix_covers(const struct xb_prefix *a, const struct xb_prefix *b)
{
	unsigned int whole = a->plen / 8, rest = a->plen % 8;

	if (a->plen > b->plen || memcmp(a->addr, b->addr, whole))
		return false;
	return !rest || !((a->addr[whole] ^ b->addr[whole]) & (__u8)(0xff00 >> rest));
}

/* The order that keeps a reload atomic per source (policy.h). Only the entries over one
 * address matter to it, and they nest: a chain. Writes go deepest first along every chain
 * (each entry after every entry inside it), so that the written part of a chain is always
 * its longest entries and an address's longest match is its old entry or its new one; then
 * the removals go in address order, which puts each entry before the entries inside it, so
 * an address's old entry, the longest doomed one over it, goes last of those. The writes'
 * order is the sorted list's post-order: one pass with a stack of the open chain, and the
 * trie is still written in nearly address order (the kernel's walks stay in the cache;
 * longest first over the whole list, a million entries took 1.4 s to write against 0.9 s). */
static int plan_order(struct xb_plan *p)
{
	struct xb_ref_list *w = &p->write;
	size_t open[CHAIN_MAX], depth = 0, n = 0;
	__u32 *order;

	if (w->n < 2)
		return 0;
	order = xb_big_malloc(w->n * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < w->n; i++) {
		while (depth && !prefix_covers(&xb_plan_written(p, open[depth - 1])->prefix,
					       &xb_plan_written(p, i)->prefix))
			order[n++] = w->v[open[--depth]];
		if (!depth) /* every chain before i is closed, and none of them covers i */
			split_consider(&p->write_split, n, w->n);
		if (depth == CHAIN_MAX) { /* only a repeated prefix nests this deep */
			free(order);
			return -EINVAL;
		}
		open[depth++] = i;
	}
	while (depth)
		order[n++] = w->v[open[--depth]];
	free(w->v);
	w->v = order;
	w->cap = w->n;
	return 0;
}

/* The removals go in address order, where an entry comes before every entry it covers, and
 * those follow it without a gap: a place that the last uncovered entry before it does not
 * cover is a split. */
static void removal_split(struct xb_plan *p)
{
	const struct xb_prefix *top = NULL;

	for (size_t i = 0; i < p->remove.n; i++) {
		const struct xb_prefix *e = &xb_plan_removed(p, i)->prefix;

		if (top && prefix_covers(top, e))
			continue;
		split_consider(&p->remove_split, i, p->remove.n);
		top = e;
	}
}

/* A place into a list with room for it. */
static void append(struct xb_ref_list *l, size_t at)
{
	l->v[l->n++] = (__u32)at;
}

int xb_plan_diff(struct xb_plan *p)
{
	size_t i = 0, j = 0;

	if (p->old.n >= XB_REF_OLD || p->next.n >= XB_REF_OLD ||
	    refs_reserve(&p->write, p->next.n) || refs_reserve(&p->remove, p->old.n) ||
	    refs_reserve(&p->touch, p->next.n + p->old.n))
		return -ENOMEM;
	while (i < p->old.n || j < p->next.n) {
		const struct xb_policy_entry *o = i < p->old.n ? &p->old.v[i] : NULL;
		const struct xb_policy_entry *n = j < p->next.n ? &p->next.v[j] : NULL;
		int c = !o ? 1 : !n ? -1 : entry_cmp(o, n);

		if (c < 0) {
			append(&p->remove, i);
			append(&p->touch, i | XB_REF_OLD);
			i++;
		} else if (c > 0) {
			append(&p->write, j);
			append(&p->touch, j);
			p->added++;
			j++;
		} else {
			if (memcmp(&o->policy, &n->policy, sizeof(o->policy)))
				append(&p->write, j);
			if (verdict_changes(&o->policy, &n->policy))
				append(&p->touch, j);
			i++;
			j++;
		}
	}
	removal_split(p);
	return plan_order(p);
}
