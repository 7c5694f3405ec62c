/* host6_live.c - the IPv6 hosts (xdpban_host6, include/xdpban_flat.h) while the data path
 * reads them: a permanent /128 entry of the trie, as a hash entry holding its code, so that a
 * listed host costs a hash probe past the lines and not the trie's walk. The rules are the
 * lines' (flat_live.c), simpler for a hash whose updates the kernel makes whole: an entry is
 * deleted before the trie's /128 entry changes, written only from what the trie holds after,
 * and a writer that cannot delete one turns the IPv6 guard back to XDPBAN_FLAT_COMPILED.
 * Only the /128 entry itself decides a host's entry: it is the longest prefix that can match,
 * so no change of a shorter entry changes the host's verdict.
 */
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "host6_live.h"

static bool is_host6(const struct xb_prefix *p)
{
	return p->family == XDPBAN_FAMILY_INET6 && p->plen == 128;
}

static struct xdpban_host6_key host_key(const struct xb_prefix *p)
{
	return (struct xdpban_host6_key){ .hi = xb_be64_load(p->addr),
					  .lo = xb_be64_load(p->addr + 8) };
}

int xb_h6_forget(const struct xb_maps *m, const struct xb_prefix *p)
{
	struct xdpban_host6_key k;

	if (!is_host6(p))
		return 0;
	if (m->host6 < 0)
		return -EBADF; /* the data path's hosts out of reach: one may be stale */
	k = host_key(p);
	if (!bpf_map_delete_elem(m->host6, &k) || errno == ENOENT)
		return 0;
	return -errno;
}

/* The code a host entry holds for e, or LOOKUP when it gets no host entry (timed, or not a
 * /128 of IPv6). */
static __u32 host_code(const struct xb_policy_entry *e)
{
	if (!is_host6(&e->prefix) || e->policy.expires_ns)
		return XDPBAN_FLAT_LOOKUP;
	return xdpban_flat_code_of_verdict(e->policy.verdict);
}

struct host_list {
	struct xb_h6_host *v;
	size_t n, cap;
};

static int host_push(struct host_list *l, const struct xdpban_host6_key *key, __u32 code)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		struct xb_h6_host *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n].key = *key;
	l->v[l->n++].code = code;
	return 0;
}

static int host_cmp(const void *a, const void *b)
{
	const struct xdpban_host6_key *x = a, *y = b; /* the key comes first */

	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static const struct xb_h6_host *host_find(const struct host_list *l,
					  const struct xdpban_host6_key *key)
{
	return l->n ? bsearch(key, l->v, l->n, sizeof(*l->v), host_cmp) : NULL;
}

static int collect_live(const void *key, const void *value, void *ctx)
{
	return host_push(ctx, key, *(const __u32 *)value);
}

/* The map's entries, in its order. */
static int hosts_live(const struct xb_maps *m, struct host_list *l)
{
	return xb_map_foreach(m->host6, sizeof(struct xdpban_host6_key), sizeof(__u32),
			      collect_live, l);
}

/* The host entries set should give, sorted. */
static int hosts_wanted(const struct xb_entry_list *set, struct host_list *l)
{
	for (size_t i = 0; i < set->n; i++) {
		__u32 code = host_code(&set->v[i]);
		struct xdpban_host6_key k;

		if (code == XDPBAN_FLAT_LOOKUP)
			continue;
		k = host_key(&set->v[i].prefix);
		if (host_push(l, &k, code))
			return -ENOMEM;
	}
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), host_cmp);
	return 0;
}

/* Writes the wanted entries that live (sorted) lacks: in batches of one syscall, and one at a
 * time from where a batch stopped. A write that fails leaves the host to the trie, which is
 * right, only slower. */
static int hosts_add(const struct xb_maps *m, const struct host_list *want,
		     const struct host_list *live, struct xb_compile_result *res)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = BPF_ANY);
	struct xdpban_host6_key *keys = malloc((want->n + 1) * sizeof(*keys));
	__u32 *codes = malloc((want->n + 1) * sizeof(*codes)), n = 0, done;

	if (!keys || !codes) {
		free(keys);
		free(codes);
		return -ENOMEM;
	}
	for (size_t i = 0; i < want->n; i++) {
		const struct xb_h6_host *l = host_find(live, &want->v[i].key);

		if (l && l->code == want->v[i].code) {
			res->hosts6++;
			continue;
		}
		keys[n] = want->v[i].key;
		codes[n++] = want->v[i].code;
	}
	done = n;
	if (n && bpf_map_update_batch(m->host6, keys, codes, &done, &opts))
		done = done > n ? 0 : done;
	res->hosts6 += done;
	for (__u32 i = done; i < n; i++) {
		if (bpf_map_update_elem(m->host6, &keys[i], &codes[i], BPF_ANY))
			res->hosts6_full++;
		else
			res->hosts6++;
	}
	free(keys);
	free(codes);
	return 0;
}

/* Deletes the entries that set does not give, which a writer with the lines off may have left
 * behind, then writes the missing and changed ones. */
static int hosts_sync(const struct xb_maps *m, struct host_list *want, struct host_list *live,
		      struct xb_compile_result *res)
{
	for (size_t i = 0; i < live->n; i++) {
		const struct xb_h6_host *w = host_find(want, &live->v[i].key);

		if (w && w->code == live->v[i].code)
			continue;
		if (bpf_map_delete_elem(m->host6, &live->v[i].key) && errno != ENOENT)
			return -errno;
	}
	if (live->n)
		qsort(live->v, live->n, sizeof(*live->v), host_cmp);
	return hosts_add(m, want, live, res);
}

int xb_h6_write(const struct xb_maps *m, const struct xb_entry_list *set,
		struct xb_compile_result *res)
{
	struct host_list want = {}, live = {};
	int ret;

	res->hosts6 = 0;
	res->hosts6_full = 0;
	if (m->host6 < 0)
		return -EBADF;
	ret = hosts_wanted(set, &want);
	if (!ret)
		ret = hosts_live(m, &live);
	if (!ret)
		ret = hosts_sync(m, &want, &live, res);
	free(want.v);
	free(live.v);
	return ret;
}

int xb_h6_read(const struct xb_maps *m, struct xb_h6_host **hosts, size_t *n)
{
	struct host_list l = {};
	int ret = hosts_live(m, &l);

	if (ret) {
		free(l.v);
		return ret;
	}
	*hosts = l.v;
	*n = l.n;
	return 0;
}
