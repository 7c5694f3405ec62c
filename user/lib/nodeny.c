/* nodeny.c - xdpban_nodeny16 (include/xdpban_flat.h), the bits that let the data path count a
 * not-allowed drop in allow-only mode without asking the trie. Written only by the policy
 * module (policy.h), so that a set bit is always backed by the tries: a region's bit is
 * cleared before a deny entry that touches it enters a trie, and a compile sets a family's
 * bits from the sorted set its trie holds once the trie holds it. A bit left clear costs one
 * trie lookup on a not-allowed drop, never a wrong verdict.
 */
#include <errno.h>
#include <sys/mman.h>
#include "flat.h"
#include "nodeny.h"

#define NODENY_BYTES (XDPBAN_NODENY_WORDS * sizeof(__u64))

static int nodeny_map(const struct xb_maps *m, __u64 **words)
{
	void *p = mmap(NULL, NODENY_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, m->nodeny16, 0);

	if (p == MAP_FAILED)
		return -errno;
	*words = p;
	return 0;
}

/* The /16 regions (xdpban_nodeny_region) a prefix touches: the ones it covers, or the one it
 * lies in. */
static void regions_of(const struct xb_prefix *p, __u32 *first, __u32 *count)
{
	*first = xdpban_nodeny_region(p->family, xb_prefix_top(p));
	*count = p->plen < XDPBAN_FLAT_L1_BITS ? 1u << (XDPBAN_FLAT_L1_BITS - p->plen) : 1;
}

static void bits_clear(__u64 *words, const struct xb_prefix *p, bool live)
{
	__u32 first, count;

	regions_of(p, &first, &count);
	for (__u32 r = first; r < first + count; r++) {
		__u64 *w = &words[r / 64], v = word_load(w), bit = 1ull << (r % 64);

		if (!(v & bit))
			continue;
		if (live)
			word_store(w, v & ~bit);
		else
			*w = v & ~bit;
	}
}

int xb_nodeny_clear_denies(const struct xb_maps *m, const struct xb_entry_list *l)
{
	__u64 *words = NULL;
	int ret = nodeny_map(m, &words);

	if (ret)
		return ret;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].policy.verdict == XDPBAN_POLICY_DENY)
			bits_clear(words, &l->v[i].prefix, true);
	munmap(words, NODENY_BYTES);
	return 0;
}

int xb_nodeny_write(const struct xb_maps *m, __u8 family, const struct xb_entry_list *set)
{
	const __u32 base = xdpban_nodeny_region(family, 0) / 64, n = XDPBAN_NODENY_WORDS / 2;
	__u64 exact[XDPBAN_NODENY_WORDS / 2 + 1], *words = NULL;
	int ret = nodeny_map(m, &words);

	if (ret)
		return ret;
	for (__u32 i = 0; i < n; i++)
		exact[i] = ~0ull;
	for (size_t i = 0; i < set->n; i++) {
		struct xb_prefix p = set->v[i].prefix;

		if (set->v[i].policy.verdict != XDPBAN_POLICY_DENY || p.family != family)
			continue;
		p.family = XDPBAN_FAMILY_INET; /* regions from 0 in exact[] */
		bits_clear(exact, &p, false);
	}
	for (__u32 i = 0; i < n; i++)
		if (word_load(&words[base + i]) != exact[i])
			word_store(&words[base + i], exact[i]);
	munmap(words, NODENY_BYTES);
	return 0;
}
