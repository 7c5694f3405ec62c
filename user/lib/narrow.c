/* narrow.c - see narrow.h. The data path's side is bpf/narrow.h: the two read the same gate
 * bit (xdpban_narrow_gate_bit) and trie. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include "exempt.h"
#include "narrow.h"

void xb_narrow_set_free(struct xb_narrow_set *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int set_add(struct xb_narrow_set *s, const struct xb_prefix *p)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct xb_prefix *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = *p;
	return 0;
}

/* p cut to its first plen bits. */
static struct xb_prefix prefix_cut(const struct xb_prefix *p, __u8 plen)
{
	struct xb_prefix c = { .family = p->family, .plen = plen };

	for (unsigned bit = 0; bit < plen; bit++)
		if (p->addr[bit / 8] & (0x80 >> (bit % 8)))
			c.addr[bit / 8] |= 0x80 >> (bit % 8);
	return c;
}

static int cmp_prefix(const void *a, const void *b)
{
	return xb_prefix_cmp(a, b);
}

static void set_finish(struct xb_narrow_set *s)
{
	size_t kept = 0;

	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), cmp_prefix);
	for (size_t i = 0; i < s->n; i++)
		if (!kept || xb_prefix_cmp(&s->v[kept - 1], &s->v[i]))
			s->v[kept++] = s->v[i];
	s->n = kept;
}

/* A protected prefix longer than v6_prefix makes its /v6_prefix network keyed at /128. */
static int add_network(struct xb_narrow_set *s, const struct xb_prefix *p, __u8 v6_prefix)
{
	struct xb_prefix net;

	if (p->family != XDPBAN_FAMILY_INET6 || p->plen <= v6_prefix)
		return 0;
	net = prefix_cut(p, v6_prefix);
	return set_add(s, &net);
}

static int add_builtins(struct xb_narrow_set *s, __u8 v6_prefix)
{
	char err[XB_ERRLEN];
	struct xb_prefix b;
	int ret = 0;

	for (size_t i = 0; !ret && xb_exempt_builtin_prefix(i); i++)
		if (!xb_prefix_parse_saved(xb_exempt_builtin_prefix(i), &b, err, sizeof(err)))
			ret = add_network(s, &b, v6_prefix);
	return ret;
}

int xb_narrow_plan(const struct xb_exempt_set *protected, __u8 v6_prefix,
		   struct xb_narrow_set *out)
{
	int ret = add_builtins(out, v6_prefix);

	for (size_t i = 0; !ret && i < protected->n; i++) {
		const struct xb_exempt_entry *e = &protected->v[i];

		ret = add_network(out, &e->prefix, v6_prefix);
		if (!ret && e->prefix.family == XDPBAN_FAMILY_INET6 && e->link_plen &&
		    e->link_plen < 128) {
			struct xb_prefix link = prefix_cut(&e->prefix, e->link_plen);

			ret = set_add(out, &link);
		}
	}
	if (ret)
		xb_narrow_set_free(out);
	else
		set_finish(out);
	return ret;
}

static int collect(const void *key, const void *value, void *ctx)
{
	struct xb_prefix p;

	xb_lpm_key_to_prefix(XDPBAN_FAMILY_INET6, key, &p);
	return set_add(ctx, &p);
}

int xb_narrow_read(const struct xb_maps *m, struct xb_narrow_set *out)
{
	int ret;

	memset(out, 0, sizeof(*out));
	ret = xb_map_foreach(m->narrow6, sizeof(struct xdpban_lpm6_key),
			     sizeof(struct xdpban_narrow), collect, out);
	if (ret)
		xb_narrow_set_free(out);
	else
		set_finish(out);
	return ret;
}

static __u32 prefix_top(const struct xb_prefix *p)
{
	__u32 top;

	memcpy(&top, p->addr, sizeof(top));
	return ntohl(top);
}

/* Sets the gate bits of every entry of s in gate (XDPBAN_NARROW_GATE_WORDS words). */
static void gate_add(__u64 *gate, const struct xb_narrow_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		__u32 bit;

		if (s->v[i].plen < 32) { /* more than one top: every bit */
			memset(gate, 0xff, XDPBAN_NARROW_GATE_WORDS * sizeof(*gate));
			return;
		}
		bit = xdpban_narrow_gate_bit(prefix_top(&s->v[i]));
		gate[bit / 64] |= 1ull << (bit % 64);
	}
}

static int gate_write(const struct xb_maps *m, const __u64 *gate)
{
	for (__u32 w = 0; w < XDPBAN_NARROW_GATE_WORDS; w++)
		if (bpf_map_update_elem(m->narrow6_gate, &w, &gate[w], BPF_ANY))
			return -errno;
	return 0;
}

static bool set_has(const struct xb_narrow_set *s, const struct xb_prefix *p)
{
	return bsearch(p, s->v, s->n, sizeof(*s->v), cmp_prefix) != NULL;
}

static int entry_put(const struct xb_maps *m, const struct xb_prefix *p)
{
	struct xdpban_narrow val = { .key_plen = 128 };
	union xb_lpm_key key;

	xb_lpm_key_make(p, &key);
	return bpf_map_update_elem(m->narrow6, &key, &val, BPF_ANY) ? -errno : 0;
}

static int entry_del(const struct xb_maps *m, const struct xb_prefix *p)
{
	union xb_lpm_key key;

	xb_lpm_key_make(p, &key);
	return bpf_map_delete_elem(m->narrow6, &key) && errno != ENOENT ? -errno : 0;
}

static int apply(const struct xb_maps *m, const struct xb_narrow_set *want,
		 const struct xb_narrow_set *have, __u64 *gate)
{
	int ret;

	gate_add(gate, want);
	gate_add(gate, have);
	ret = gate_write(m, gate);
	for (size_t i = 0; !ret && i < want->n; i++)
		ret = entry_put(m, &want->v[i]);
	for (size_t i = 0; !ret && i < have->n; i++)
		if (!set_has(want, &have->v[i]))
			ret = entry_del(m, &have->v[i]);
	if (ret)
		return ret;
	memset(gate, 0, XDPBAN_NARROW_GATE_WORDS * sizeof(*gate));
	gate_add(gate, want);
	return gate_write(m, gate);
}

int xb_narrow_sync(const struct xb_maps *m, const struct xb_narrow_set *want, char *err,
		   size_t errlen)
{
	struct xb_narrow_set have;
	__u32 cap = 0;
	__u64 *gate;
	int ret = xb_map_capacity(m->narrow6, &cap);

	if (ret) {
		snprintf(err, errlen, "cannot read the size of %s: %s",
			 XDPBAN_MAP_NAME(xdpban_narrow6), strerror(-ret));
		return ret;
	}
	if (want->n > cap) {
		snprintf(err, errlen, "%zu networks to key per address, but %s holds %u",
			 want->n, XDPBAN_MAP_NAME(xdpban_narrow6), cap);
		return -ENOSPC;
	}
	ret = xb_narrow_read(m, &have);
	if (ret) {
		snprintf(err, errlen, "cannot read %s: %s", XDPBAN_MAP_NAME(xdpban_narrow6),
			 strerror(-ret));
		return ret;
	}
	gate = calloc(XDPBAN_NARROW_GATE_WORDS, sizeof(*gate));
	ret = gate ? apply(m, want, &have, gate) : -ENOMEM;
	if (ret)
		snprintf(err, errlen, "cannot write %s: %s", XDPBAN_MAP_NAME(xdpban_narrow6),
			 strerror(-ret));
	free(gate);
	xb_narrow_set_free(&have);
	return ret;
}

__u8 xb_narrow_key_plen(const struct xb_maps *m, const __u8 *addr, __u8 v6_prefix)
{
	struct xdpban_lpm6_key key = { .prefixlen = 128 };
	struct xdpban_narrow val;
	__u32 top, bit, word;
	__u64 gate;

	if (xdpban_addr_is_link_local6(addr))
		return 128;
	if (m->narrow6 < 0 || m->narrow6_gate < 0)
		return v6_prefix;
	memcpy(&top, addr, sizeof(top));
	bit = xdpban_narrow_gate_bit(ntohl(top));
	word = bit / 64;
	if (bpf_map_lookup_elem(m->narrow6_gate, &word, &gate) || !((gate >> (bit % 64)) & 1))
		return v6_prefix;
	memcpy(key.addr, addr, sizeof(key.addr));
	if (bpf_map_lookup_elem(m->narrow6, &key, &val) || val.key_plen <= v6_prefix)
		return v6_prefix;
	return val.key_plen > 128 ? 128 : (__u8)val.key_plen;
}

void xb_key_from_addr(const struct xb_maps *m, const struct xb_prefix *addr, __u8 v6_prefix,
		      struct xdpban_key *key)
{
	if (m && addr->family == XDPBAN_FAMILY_INET6)
		v6_prefix = xb_narrow_key_plen(m, addr->addr, v6_prefix);
	xdpban_key_make(key, addr->family, addr->addr, v6_prefix);
}
