/* exempt.c - the exempt sources in userspace: naming the built-in set, reading the tries
 * xdpban_exempt4/6 (for query, lists and the refusal of a ban), and writing them (exempt.h).
 * Writes only what xb_exempt_sync is given, in the order exempt.h states.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "bancache.h"
#include "exempt.h"

const char *xb_exempt_origin_name(__u32 origin)
{
	switch (origin) {
	case XB_EXEMPT_BUILTIN:
		return "built-in";
	case XDPBAN_EXEMPT_LIST:
		return "never-ban";
	case XDPBAN_EXEMPT_HOST:
		return "host";
	case XDPBAN_EXEMPT_FLEET:
		return "fleet";
	}
	return "?";
}

/* The prefixes of xdpban_builtin_exempt() (include/xdpban_policy.h), which is the rule; these
 * only name it, and tests/kernel/test_exempt.c holds the two to each other. */
static const char *const builtin_prefixes[] = {
	"0.0.0.0/8", "127.0.0.0/8", "224.0.0.0/4", "240.0.0.0/4",
	"::/128",    "::1/128",     "ff00::/8",    "::ffff:0:0/96",
};

const char *xb_exempt_builtin_prefix(size_t i)
{
	return i < sizeof(builtin_prefixes) / sizeof(builtin_prefixes[0]) ? builtin_prefixes[i]
									   : NULL;
}

bool xb_exempt_builtin(const struct xb_prefix *p, struct xb_prefix *match)
{
	char err[XB_ERRLEN];
	struct xb_prefix b;

	for (size_t i = 0; xb_exempt_builtin_prefix(i); i++) {
		if (xb_prefix_parse_saved(builtin_prefixes[i], &b, err, sizeof(err)))
			continue; /* cannot happen: the table is tested */
		if (xb_prefix_contains(&b, p)) {
			*match = b;
			return true;
		}
	}
	/* The rule decides for an address, the table only names its prefix. */
	if (xb_prefix_is_addr(p) && xdpban_builtin_exempt(p->family, p->addr)) {
		*match = *p;
		return true;
	}
	return false;
}

static int exempt_fd(const struct xb_maps *m, __u8 family)
{
	return family == XDPBAN_FAMILY_INET ? m->exempt4 : m->exempt6;
}

struct exempt_walk {
	__u8 family;
	xb_exempt_cb cb;
	void *ctx;
};

static int exempt_entry(const void *key, const void *value, void *ctx)
{
	const struct exempt_walk *w = ctx;
	struct xb_exempt_entry e;

	xb_lpm_key_to_prefix(w->family, key, &e.prefix);
	memcpy(&e.val, value, sizeof(e.val));
	return w->cb(&e, w->ctx);
}

static int walk_family(const struct xb_maps *m, __u8 family, xb_exempt_cb cb, void *ctx)
{
	struct exempt_walk w = { family, cb, ctx };

	return xb_map_foreach(exempt_fd(m, family), xb_lpm_key_size(family),
			      sizeof(struct xdpban_exempt), exempt_entry, &w);
}

static int run_collect(const struct xb_exempt_entry *e, void *ctx)
{
	return xb_run_push(ctx, e, sizeof(*e));
}

static int run_load(const struct xb_maps *m, __u8 family, struct xb_run_trie *t)
{
	return walk_family(m, family, run_collect, t);
}

/* From a run's copy when one is on (bancache.h): the exempt tries change only at a start or
 * a reload, never within a run. */
static int exempt_foreach_family(const struct xb_maps *m, __u8 family, xb_exempt_cb cb,
				 void *ctx)
{
	const struct xb_exempt_entry *v;
	size_t n;
	int ret = 0;

	if (!m->ban_run ||
	    !xb_run_entries(m, m->ban_run->exempt, family, run_load, (const void **)&v, &n))
		return walk_family(m, family, cb, ctx);
	for (size_t i = 0; !ret && i < n; i++)
		ret = cb(&v[i], ctx);
	return ret;
}

int xb_exempt_foreach(const struct xb_maps *m, xb_exempt_cb cb, void *ctx)
{
	int ret = exempt_foreach_family(m, XDPBAN_FAMILY_INET, cb, ctx);

	return ret ? ret : exempt_foreach_family(m, XDPBAN_FAMILY_INET6, cb, ctx);
}

/* The longest entry holding the target, and the first lying inside it. */
struct exempt_search {
	struct xb_prefix target;
	bool covered, inside;
	struct xb_exempt_entry cover, within;
};

static int search_entry(const struct xb_exempt_entry *e, void *ctx)
{
	struct exempt_search *s = ctx;

	if (xb_prefix_contains(&e->prefix, &s->target)) {
		if (!s->covered || e->prefix.plen > s->cover.prefix.plen) {
			s->covered = true;
			s->cover = *e;
		}
	} else if (!s->inside && xb_prefix_contains(&s->target, &e->prefix)) {
		s->inside = true;
		s->within = *e;
	}
	return 0;
}

int xb_exempt_find(const struct xb_maps *m, const struct xb_prefix *p,
		   struct xb_exempt_entry *out, bool *inside)
{
	struct exempt_search s = { .target = *p };
	int ret;

	if (inside)
		*inside = false;
	if (xb_exempt_builtin(p, &out->prefix)) {
		out->val = (struct xdpban_exempt){ .origin = XB_EXEMPT_BUILTIN };
		return 0;
	}
	/* Only p's own family can hold or lie inside p: the other trie is not read (a remote
	 * ban from the fleet runs this for every entry). */
	ret = exempt_foreach_family(m, p->family, search_entry, &s);
	if (ret)
		return ret;
	if (s.covered) {
		*out = s.cover;
		return 0;
	}
	if (inside && s.inside) {
		*out = s.within;
		*inside = true;
		return 0;
	}
	return -ENOENT;
}

void xb_exempt_describe(const struct xb_exempt_entry *e, const struct xb_prefix *p, char *buf,
			size_t len)
{
	char text[64] = "?", name[IF_NAMESIZE];
	bool wider = e->prefix.plen < p->plen;

	xb_prefix_format(&e->prefix, text, sizeof(text));
	switch (e->val.origin) {
	case XB_EXEMPT_BUILTIN:
		snprintf(buf, len, "built in: %s", text);
		break;
	case XDPBAN_EXEMPT_HOST:
		if (if_indextoname(e->val.ifindex, name))
			snprintf(buf, len, "host address of %s", name);
		else
			snprintf(buf, len, "host address of ifindex %u", e->val.ifindex);
		break;
	case XDPBAN_EXEMPT_FLEET:
		snprintf(buf, len, "the fleet's Redis server %s", text);
		break;
	default:
		snprintf(buf, len, "never-ban list%s%s", wider ? " " : "", wider ? text : "");
	}
}

static int family_index(__u8 family)
{
	return family == XDPBAN_FAMILY_INET6;
}

static int count_entry(const struct xb_exempt_entry *e, void *ctx)
{
	struct xb_exempt_counts *c = ctx;

	if (e->val.origin == XDPBAN_EXEMPT_HOST)
		c->host[family_index(e->prefix.family)]++;
	else
		c->never_ban[family_index(e->prefix.family)]++;
	return 0;
}

int xb_exempt_count(const struct xb_maps *m, struct xb_exempt_counts *out)
{
	memset(out, 0, sizeof(*out));
	return xb_exempt_foreach(m, count_entry, out);
}

/* ---- sets and plans (pure) ---- */

int xb_exempt_set_add(struct xb_exempt_set *s, const struct xb_prefix *p, __u32 origin,
		      __u32 ifindex)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct xb_exempt_entry *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = (struct xb_exempt_entry){
		.prefix = *p, .val = { .origin = origin, .ifindex = ifindex },
	};
	return 0;
}

static int set_add_entry(struct xb_exempt_set *s, const struct xb_exempt_entry *e)
{
	int ret = xb_exempt_set_add(s, &e->prefix, e->val.origin, e->val.ifindex);

	if (!ret)
		s->v[s->n - 1].link_plen = e->link_plen;
	return ret;
}

int xb_exempt_set_add_all(struct xb_exempt_set *s, const struct xb_exempt_set *src)
{
	int ret = 0;

	for (size_t i = 0; i < src->n && !ret; i++)
		ret = set_add_entry(s, &src->v[i]);
	return ret;
}

static int prefix_cmp(const struct xb_prefix *a, const struct xb_prefix *b)
{
	if (a->family != b->family)
		return a->family < b->family ? -1 : 1;
	if (a->plen != b->plen)
		return a->plen < b->plen ? -1 : 1;
	return memcmp(a->addr, b->addr, sizeof(a->addr));
}

/* Of one prefix, the entry kept comes first: a host address, then the lower ifindex. */
static int entry_cmp(const void *pa, const void *pb)
{
	const struct xb_exempt_entry *a = pa, *b = pb;
	int c = prefix_cmp(&a->prefix, &b->prefix);

	if (c)
		return c;
	if (a->val.origin != b->val.origin)
		return a->val.origin == XDPBAN_EXEMPT_HOST ? -1 : 1;
	return a->val.ifindex < b->val.ifindex ? -1 : a->val.ifindex > b->val.ifindex;
}

void xb_exempt_set_finish(struct xb_exempt_set *s)
{
	size_t kept = 0;

	if (!s->n)
		return;
	qsort(s->v, s->n, sizeof(*s->v), entry_cmp);
	for (size_t i = 0; i < s->n; i++)
		if (!kept || prefix_cmp(&s->v[kept - 1].prefix, &s->v[i].prefix))
			s->v[kept++] = s->v[i];
	s->n = kept;
}

void xb_exempt_set_free(struct xb_exempt_set *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

size_t xb_exempt_set_count(const struct xb_exempt_set *s, __u8 family)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n; i++)
		n += s->v[i].prefix.family == family;
	return n;
}

static bool same_value(const struct xdpban_exempt *a, const struct xdpban_exempt *b)
{
	return a->origin == b->origin && a->ifindex == b->ifindex;
}

/* One merge walk over both sorted sets. */
int xb_exempt_plan_make(const struct xb_exempt_set *want, const struct xb_exempt_set *have,
			struct xb_exempt_plan *plan)
{
	size_t i = 0, j = 0;
	int ret = 0;

	memset(plan, 0, sizeof(*plan));
	while (!ret && (i < want->n || j < have->n)) {
		const struct xb_exempt_entry *w = i < want->n ? &want->v[i] : NULL;
		const struct xb_exempt_entry *h = j < have->n ? &have->v[j] : NULL;
		int c = !w ? 1 : !h ? -1 : prefix_cmp(&w->prefix, &h->prefix);

		if (c < 0 || (c == 0 && !same_value(&w->val, &h->val)))
			ret = set_add_entry(&plan->put, w);
		else if (c > 0)
			ret = set_add_entry(&plan->del, h);
		i += c <= 0;
		j += c >= 0;
	}
	if (ret)
		xb_exempt_plan_free(plan);
	return ret;
}

void xb_exempt_plan_free(struct xb_exempt_plan *plan)
{
	xb_exempt_set_free(&plan->put);
	xb_exempt_set_free(&plan->del);
}

static int delete_all(const struct xb_exempt_ops *ops, const struct xb_exempt_set *del,
		      size_t *removed)
{
	int ret = 0;

	for (size_t i = 0; i < del->n && !ret; i++) {
		ret = ops->del(ops->ctx, &del->v[i]);
		*removed += !ret;
	}
	return ret;
}

int xb_exempt_apply(const struct xb_exempt_plan *plan, const struct xb_exempt_ops *ops,
		    struct xb_exempt_sync_result *res)
{
	bool deleted = false;
	int ret = 0;

	for (size_t i = 0; i < plan->put.n && !ret; i++) {
		ret = ops->put(ops->ctx, &plan->put.v[i]);
		if (ret == -ENOSPC && !deleted) {
			deleted = true;
			ret = delete_all(ops, &plan->del, &res->removed);
			if (!ret)
				ret = ops->put(ops->ctx, &plan->put.v[i]);
		}
		res->put += !ret;
	}
	if (!ret && !deleted)
		ret = delete_all(ops, &plan->del, &res->removed);
	return ret;
}

/* ---- the tries ---- */

static int collect_entry(const struct xb_exempt_entry *e, void *ctx)
{
	return set_add_entry(ctx, e);
}

int xb_exempt_read(const struct xb_maps *m, struct xb_exempt_set *out)
{
	int ret;

	memset(out, 0, sizeof(*out));
	ret = xb_exempt_foreach(m, collect_entry, out);
	if (ret)
		xb_exempt_set_free(out);
	else
		xb_exempt_set_finish(out);
	return ret;
}

static int trie_put(void *ctx, const struct xb_exempt_entry *e)
{
	const struct xb_maps *m = ctx;
	union xb_lpm_key key;

	xb_lpm_key_make(&e->prefix, &key);
	return bpf_map_update_elem(exempt_fd(m, e->prefix.family), &key, &e->val, BPF_ANY)
		       ? -errno
		       : 0;
}

static int trie_delete(void *ctx, const struct xb_exempt_entry *e)
{
	const struct xb_maps *m = ctx;
	union xb_lpm_key key;

	xb_lpm_key_make(&e->prefix, &key);
	if (bpf_map_delete_elem(exempt_fd(m, e->prefix.family), &key) && errno != ENOENT)
		return -errno;
	return 0;
}

static int apply_plan(const struct xb_maps *m, const struct xb_exempt_plan *plan,
		      struct xb_exempt_sync_result *res)
{
	const struct xb_exempt_ops ops = { trie_put, trie_delete, (void *)m };

	return xb_exempt_apply(plan, &ops, res);
}

static int check_capacity(const struct xb_maps *m, const struct xb_exempt_set *want, char *err,
			  size_t errlen)
{
	static const __u8 families[] = { XDPBAN_FAMILY_INET, XDPBAN_FAMILY_INET6 };
	__u32 max;
	int ret;

	for (size_t i = 0; i < sizeof(families); i++) {
		size_t n = xb_exempt_set_count(want, families[i]);
		int v = families[i] == XDPBAN_FAMILY_INET ? 4 : 6;

		ret = xb_map_capacity(exempt_fd(m, families[i]), &max);
		if (ret) {
			snprintf(err, errlen, "cannot read the size of the IPv%d exempt trie: %s", v,
				 strerror(-ret));
			return ret;
		}
		if (n > max) {
			snprintf(err, errlen,
				 "%zu IPv%d exempt entries (never-ban lists and host addresses): more than the exempt trie holds (%u)",
				 n, v, max);
			return -ENOSPC;
		}
	}
	return 0;
}

/* Back to what the tries held: another sync, from what they hold now. */
static int roll_back(const struct xb_maps *m, const struct xb_exempt_set *before)
{
	struct xb_exempt_sync_result ignored = {};
	struct xb_exempt_plan plan;
	struct xb_exempt_set now;
	int ret = xb_exempt_read(m, &now);

	if (ret)
		return ret;
	ret = xb_exempt_plan_make(before, &now, &plan);
	if (!ret)
		ret = apply_plan(m, &plan, &ignored);
	xb_exempt_plan_free(&plan);
	xb_exempt_set_free(&now);
	return ret;
}

int xb_exempt_sync(const struct xb_maps *m, const struct xb_exempt_set *want,
		   struct xb_exempt_sync_result *res, char *err, size_t errlen)
{
	struct xb_exempt_sync_result local = {};
	struct xb_exempt_plan plan;
	struct xb_exempt_set have;
	int ret, back;

	if (!res)
		res = &local;
	memset(res, 0, sizeof(*res));
	ret = check_capacity(m, want, err, errlen);
	if (ret)
		return ret;
	ret = xb_exempt_read(m, &have);
	if (ret) {
		snprintf(err, errlen, "cannot read the exempt tries: %s", strerror(-ret));
		return ret;
	}
	ret = xb_exempt_plan_make(want, &have, &plan);
	if (ret) {
		snprintf(err, errlen, "out of memory for %zu exempt entries", want->n);
		goto out;
	}
	ret = apply_plan(m, &plan, res);
	if (ret) {
		back = roll_back(m, &have);
		snprintf(err, errlen, "cannot write the exempt tries: %s; %s", strerror(-ret),
			 back ? "the rollback failed too: they hold part of the new entries"
			      : "rolled back: they are as they were");
	}
	xb_exempt_plan_free(&plan);
out:
	xb_exempt_set_free(&have);
	return ret;
}
