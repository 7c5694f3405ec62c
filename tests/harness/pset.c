/* pset.c - see pset.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "pset.h"

static unsigned int family_bytes(__u8 family)
{
	return family == XDPBAN_FAMILY_INET ? 4 : 16;
}

/* Copies the first `bits` bits of from into addr; the rest of addr stays. */
static void copy_bits(__u8 *addr, const __u8 *from, unsigned int bits)
{
	for (unsigned int bit = 0; bit < bits; bit++) {
		__u8 mask = 0x80 >> (bit % 8);

		addr[bit / 8] = (addr[bit / 8] & ~mask) | (from[bit / 8] & mask);
	}
}

static void clear_past(__u8 *addr, unsigned int plen)
{
	for (unsigned int bit = plen; bit < 128; bit++)
		addr[bit / 8] &= ~(0x80 >> (bit % 8));
}

static __u32 random_verdict(struct fuzz_rng *rng)
{
	if (fuzz_rng_percent(rng, 10))
		return XDPBAN_POLICY_NONE;
	return fuzz_rng_percent(rng, 50) ? XDPBAN_POLICY_DENY : XDPBAN_POLICY_TRUSTED;
}

int pset_random(struct fuzz_rng *rng, const struct pset_shape *sh, struct xb_policy_set *s)
{
	struct xb_prefix base = { .family = sh->family };
	char err[XB_ERRLEN];

	if (sh->within && sh->within[0] &&
	    (xb_prefix_parse(sh->within, &base, err, sizeof(err)) || base.family != sh->family))
		return -EINVAL;
	if (sh->min_len > sh->max_len || sh->max_len > family_bytes(sh->family) * 8 ||
	    sh->min_len < base.plen)
		return -EINVAL;
	for (size_t i = 0; i < sh->n; i++) {
		struct xb_prefix p = { .family = sh->family };
		struct xdpban_policy val = { .list_id = 1 };

		p.plen = sh->min_len + fuzz_rng_below(rng, sh->max_len - sh->min_len + 1);
		for (unsigned int b = 0; b < family_bytes(sh->family); b++)
			p.addr[b] = (__u8)fuzz_rng_next(rng);
		copy_bits(p.addr, base.addr, base.plen);
		clear_past(p.addr, p.plen);
		val.verdict = random_verdict(rng);
		if (fuzz_rng_percent(rng, sh->timed_pct))
			val.expires_ns = fuzz_rng_percent(rng, 50) ? sh->expired_ns : sh->live_ns;
		if (xb_policy_set_add(s, &p, &val))
			return -ENOMEM;
	}
	pset_dedup(s);
	return 0;
}

static int prefix_order(const void *pa, const void *pb)
{
	const struct xb_policy_entry *a = pa, *b = pb;
	int c;

	if (a->prefix.family != b->prefix.family)
		return a->prefix.family < b->prefix.family ? -1 : 1;
	c = memcmp(a->prefix.addr, b->prefix.addr, sizeof(a->prefix.addr));
	return c ? c : (int)a->prefix.plen - (int)b->prefix.plen;
}

void pset_dedup(struct xb_policy_set *s)
{
	size_t kept = 0;

	if (!s->n)
		return;
	/* qsort is not stable: the first of a prefix is the one the caller added first only
	 * when no prefix repeats with different values, which is all the tests need. */
	qsort(s->v, s->n, sizeof(*s->v), prefix_order);
	for (size_t i = 0; i < s->n; i++)
		if (!kept || prefix_order(&s->v[kept - 1], &s->v[i]))
			s->v[kept++] = s->v[i];
	s->n = kept;
}

static void random_address(struct fuzz_rng *rng, __u8 family, __u8 addr[16])
{
	memset(addr, 0, 16);
	for (unsigned int b = 0; b < family_bytes(family); b++)
		addr[b] = (__u8)fuzz_rng_next(rng);
}

void pset_address_in(struct fuzz_rng *rng, const struct xb_prefix *p, __u8 addr[16])
{
	random_address(rng, p->family, addr);
	copy_bits(addr, p->addr, p->plen);
}

void pset_address(struct fuzz_rng *rng, const struct xb_policy_set *s, __u8 family,
		  __u8 addr[16])
{
	const struct xb_prefix *p;

	random_address(rng, family, addr);
	if (!s->n || !fuzz_rng_percent(rng, 50))
		return;
	p = &s->v[fuzz_rng_below(rng, (__u32)s->n)].prefix;
	if (p->family == family)
		copy_bits(addr, p->addr, p->plen);
}

__u32 pset_flat_code(const __u64 *words, const struct xb_flat_line *lines, size_t nlines,
		     __u8 family, __u32 top)
{
	__u32 code = xb_flat_code(words, XDPBAN_FLAT_L1_BITS, top);

	if (code == XDPBAN_FLAT_LOOKUP)
		code = xb_flat_code(words, XDPBAN_FLAT_MID_BITS, top);
	if (code == XDPBAN_FLAT_LOOKUP)
		code = xb_flat_code(words, XDPBAN_FLAT_L2_BITS, top);
	if (code == XDPBAN_FLAT_LOOKUP && family == XDPBAN_FAMILY_INET)
		code = xb_flat_lines_code(lines, nlines, top);
	return code;
}

int pset_to_model(const struct xb_policy_set *s, struct model *m)
{
	model_policy_clear(m);
	for (size_t i = 0; i < s->n; i++) {
		const struct xb_policy_entry *e = &s->v[i];
		struct model_prefix p = {
			.family = e->prefix.family,
			.plen = e->prefix.plen,
			.verdict = e->policy.verdict,
			.expires_ns = e->policy.expires_ns,
		};
		int ret;

		memcpy(p.addr, e->prefix.addr, sizeof(p.addr));
		ret = model_policy_add(m, &p);
		if (ret)
			return ret;
	}
	return 0;
}
