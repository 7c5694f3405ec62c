/* policy_plan.c - what a compile (xb_policy_compile, policy.h) will change, in plain memory:
 * policy sets, the check of a whole set, and the plan of one family (the sorted sets before
 * and after, what to write, what to delete, which prefixes to touch first). Never touches a
 * map, a file descriptor or a syscall: policy.c reads the tries into a plan and carries it out.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy_internal.h"

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

/* ==== the plan ============================================================================= */

int xb_entry_list_push(struct xb_entry_list *l, const struct xb_policy_entry *e)
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

void xb_entry_list_sort(struct xb_entry_list *l)
{
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), entry_cmp);
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
		xb_prefix_describe(&e->prefix, text, sizeof(text));
		if (e->prefix.plen > xb_family_bits(e->prefix.family)) {
			snprintf(err, errlen, "policy entry %s: prefix length %u out of range", text,
				 e->prefix.plen);
			return -EINVAL;
		}
		if (e->policy.verdict > XDPBAN_POLICY_VERDICT_MAX) {
			snprintf(err, errlen, "policy entry %s: bad verdict %u", text,
				 e->policy.verdict);
			return -EINVAL;
		}
	}
	return 0;
}

int xb_plan_take_set(struct xb_plan *p, const struct xb_policy_set *set, char *err,
		     size_t errlen)
{
	char text[64];
	int ret;

	for (size_t i = 0; i < set->n; i++) {
		if (set->v[i].prefix.family != p->family)
			continue;
		ret = xb_entry_list_push(&p->next, &set->v[i]);
		if (ret)
			return ret;
	}
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
	xb_entry_list_sort(&p->next);
	return 0;
}

/* A change that moves a verdict (not only the list id) can change codes. */
static bool verdict_changes(const struct xdpban_policy *a, const struct xdpban_policy *b)
{
	return a->verdict != b->verdict || a->expires_ns != b->expires_ns;
}

/* Longest first, then by address. */
static int longest_first(const void *a, const void *b)
{
	const struct xb_prefix *pa = &((const struct xb_policy_entry *)a)->prefix;
	const struct xb_prefix *pb = &((const struct xb_policy_entry *)b)->prefix;

	return pa->plen != pb->plen ? (pa->plen > pb->plen ? -1 : 1) : prefix_cmp(pa, pb);
}

/* Shortest first, then by address. */
static int shortest_first(const void *a, const void *b)
{
	return longest_first(b, a);
}

/* The order that keeps a reload atomic per source (policy.h): while the writes go in longest
 * first, the longest match of any address is its old entry or its new one; once they are all
 * in, removing the doomed entries shortest first keeps it so, because an address's old entry
 * is the longest doomed one over it and goes last of those. */
static void plan_order(struct xb_plan *p)
{
	if (p->write.n)
		qsort(p->write.v, p->write.n, sizeof(*p->write.v), longest_first);
	if (p->remove.n)
		qsort(p->remove.v, p->remove.n, sizeof(*p->remove.v), shortest_first);
}

int xb_plan_diff(struct xb_plan *p)
{
	size_t i = 0, j = 0;
	int ret = 0;

	while (!ret && (i < p->old.n || j < p->next.n)) {
		const struct xb_policy_entry *o = i < p->old.n ? &p->old.v[i] : NULL;
		const struct xb_policy_entry *n = j < p->next.n ? &p->next.v[j] : NULL;
		int c = !o ? 1 : !n ? -1 : entry_cmp(o, n);

		if (c < 0) {
			ret = xb_entry_list_push(&p->remove, o);
			if (!ret)
				ret = xb_entry_list_push(&p->touch, o);
			i++;
		} else if (c > 0) {
			ret = xb_entry_list_push(&p->write, n);
			if (!ret)
				ret = xb_entry_list_push(&p->touch, n);
			p->added++;
			j++;
		} else {
			if (memcmp(&o->policy, &n->policy, sizeof(o->policy)))
				ret = xb_entry_list_push(&p->write, n);
			if (!ret && verdict_changes(&o->policy, &n->policy))
				ret = xb_entry_list_push(&p->touch, n);
			i++;
			j++;
		}
	}
	if (!ret)
		plan_order(p);
	return ret;
}
