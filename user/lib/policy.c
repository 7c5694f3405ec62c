/* policy.c - reading the policy tries: every prefix with its verdict and list, and the counts
 * per list that `xdpban lists` shows. Read-only: lists are written by the daemon, manual
 * prefix bans by bans.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "libxdpban.h"

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

	e.prefix.family = walk->family;
	if (walk->family == XDPBAN_FAMILY_INET) {
		const struct xdpban_lpm4_key *k = key;

		e.prefix.plen = k->prefixlen;
		memcpy(e.prefix.addr, k->addr, sizeof(k->addr));
	} else {
		const struct xdpban_lpm6_key *k = key;

		e.prefix.plen = k->prefixlen;
		memcpy(e.prefix.addr, k->addr, sizeof(k->addr));
	}
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
