/* test_flat.c - the code computation of the flat policy table (xb_flat_build and
 * xb_flat_lines_build, user/lib/flat.c) against a brute force written from the definition in
 * include/xdpban_flat.h, over fixed and seeded random prefix sets: every /16, /22 and /24
 * region (and that a pure code agrees with every finer code under it), which IPv4 /24s get a
 * level-3 line and every /32 code of each line, then random addresses looked up the way the
 * data path does (level 1, the middle level, level 2, the line, then longest prefix match)
 * against a plain longest prefix match with the expiry rule of docs/datapath.md. No kernel:
 * it runs as any user.
 *
 * The brute force paints each entry over the regions it covers (longest wins) and marks the
 * regions that hold a longer or a timed entry; the code under test sweeps a sorted copy with a
 * stack. Reproduce a failure with the seed it prints (XDPBAN_FLAT_SEED overrides the base).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "flat.h"
#include "fuzz.h"
#include "policy.h"
#include "pset.h"
#include "xdpban_flat.h"

#define BASE_SEED 0x78626c617431ull /* "xblat1" */
#define NOW_NS 5000000000000ull     /* the `now` of every expiry check here */
#define SHOWN 8                     /* mismatches printed per check */
#define NONE_LEN 0xff               /* no covering entry yet */

static __u64 base_seed(void)
{
	const char *env = getenv("XDPBAN_FLAT_SEED");

	return env ? strtoull(env, NULL, 0) : BASE_SEED;
}

/* ---- the brute force ---- */

/* The first 32 bits of an address, host order. */
static __u32 top_bits(const __u8 *addr)
{
	return (__u32)addr[0] << 24 | (__u32)addr[1] << 16 | (__u32)addr[2] << 8 | addr[3];
}

static bool bit_matches(const __u8 *addr, const struct xb_prefix *p)
{
	for (unsigned int bit = 0; bit < p->plen; bit++) {
		__u8 mask = 0x80 >> (bit % 8);

		if ((addr[bit / 8] & mask) != (p->addr[bit / 8] & mask))
			return false;
	}
	return true;
}

/* The data path's rule: the longest prefix holding the address; a timed one whose time has
 * come counts as no entry, and no shorter prefix is consulted then. */
static __u32 lpm_verdict(const struct xb_policy_set *s, __u8 family, const __u8 *addr)
{
	const struct xb_policy_entry *best = NULL;

	for (size_t i = 0; i < s->n; i++) {
		const struct xb_policy_entry *e = &s->v[i];

		if (e->prefix.family == family && bit_matches(addr, &e->prefix) &&
		    (!best || e->prefix.plen > best->prefix.plen))
			best = e;
	}
	if (!best || (best->policy.expires_ns && NOW_NS >= best->policy.expires_ns))
		return XDPBAN_POLICY_NONE;
	return best->policy.verdict;
}

/* Scratch for the painting: per region, the longest covering length and its code, and
 * whether the region must be left to the trie. */
struct paint {
	__u8 *len, *code, *lookup;
};

static struct paint paint;

/* The code an entry paints: its verdict's, LOOKUP for one the data path does not know. */
static __u32 brute_code(const struct xb_policy_entry *e)
{
	return e->policy.verdict <= XDPBAN_POLICY_TRUSTED ? e->policy.verdict + 1
							  : XDPBAN_FLAT_LOOKUP;
}

/* The definition, entry by entry: a region is LOOKUP when a timed entry covers it or lies
 * inside it, or an entry inside it (longer) has another code than the longest entry covering
 * the whole region (none: NONE); otherwise that code. */
static void brute_level(const struct xb_policy_set *s, __u8 family, unsigned int bits,
			__u8 *codes)
{
	__u32 regions = 1u << bits;

	memset(paint.len, NONE_LEN, regions);
	memset(paint.lookup, 0, regions);
	for (size_t i = 0; i < s->n; i++) {
		const struct xb_policy_entry *e = &s->v[i];
		__u32 top = top_bits(e->prefix.addr), first, count;

		if (e->prefix.family != family || e->prefix.plen > bits)
			continue;
		first = top >> (32 - bits);
		count = 1u << (bits - e->prefix.plen);
		for (__u32 r = first; r < first + count; r++) {
			if (e->policy.expires_ns)
				paint.lookup[r] = 1;
			if (paint.len[r] == NONE_LEN || e->prefix.plen > paint.len[r]) {
				paint.len[r] = e->prefix.plen;
				paint.code[r] = brute_code(e);
			}
		}
	}
	for (__u32 r = 0; r < regions; r++)
		codes[r] = paint.lookup[r] ? XDPBAN_FLAT_LOOKUP
					   : paint.len[r] == NONE_LEN ? XDPBAN_FLAT_NONE : paint.code[r];
	for (size_t i = 0; i < s->n; i++) { /* the entries inside a region, against its code */
		const struct xb_policy_entry *e = &s->v[i];
		__u32 r = top_bits(e->prefix.addr) >> (32 - bits);

		if (e->prefix.family == family && e->prefix.plen > bits &&
		    (e->policy.expires_ns || brute_code(e) != codes[r]))
			codes[r] = XDPBAN_FLAT_LOOKUP;
	}
}

/* ---- checks ---- */

static const char *code_name(__u32 code)
{
	static const char *const names[] = { "LOOKUP", "NONE", "DENY", "TRUSTED" };

	return code < 4 ? names[code] : "?";
}

static void region_text(__u8 family, __u32 top, unsigned int bits, char *buf, size_t len)
{
	__u8 addr[16] = { top >> 24, top >> 16, top >> 8, top };
	char text[INET6_ADDRSTRLEN];

	inet_ntop(family == XDPBAN_FAMILY_INET ? AF_INET : AF_INET6, addr, text, sizeof(text));
	snprintf(buf, len, "%s/%u", text, bits);
}

/* Every region of the level of /bits regions: the built table against the brute force. */
static unsigned long check_level(const struct xb_policy_set *s, __u8 family, const __u64 *words,
				 unsigned int bits, const char *what)
{
	__u8 *want = malloc(1u << bits);
	unsigned long bad = 0;

	assert_non_null(want);
	brute_level(s, family, bits, want);
	for (__u32 r = 0; r < 1u << bits; r++) {
		__u32 top = r << (32 - bits), got = xb_flat_code(words, bits, top);
		char text[64];

		if (got == want[r])
			continue;
		if (bad++ < SHOWN) {
			region_text(family, top, bits, text, sizeof(text));
			printf("MISMATCH [%s] region %s: table %s, definition %s\n", what, text,
			       code_name(got), code_name(want[r]));
		}
	}
	free(want);
	return bad;
}

/* A pure code speaks for its whole region, so every finer level below it must agree: level 1
 * over the middle level and level 2, the middle level over level 2. */
static unsigned long check_levels_agree(const __u64 *words, unsigned int coarse,
					unsigned int fine, const char *what)
{
	unsigned long bad = 0;

	for (__u32 r = 0; r < 1u << coarse; r++) {
		__u32 top = r << (32 - coarse), code = xb_flat_code(words, coarse, top);

		if (code == XDPBAN_FLAT_LOOKUP)
			continue;
		for (__u32 sub = 0; sub < 1u << (fine - coarse); sub++) {
			__u32 finer = xb_flat_code(words, fine, top | sub << (32 - fine));

			if (finer != code && bad++ < SHOWN)
				printf("MISMATCH [%s] /%u %u is %s but its /%u %u is %s\n", what, coarse,
				       r, code_name(code), fine, sub, code_name(finer));
		}
	}
	return bad;
}

/* The IPv4 level-3 lines of a set (none for IPv6). */
struct lines {
	struct xb_flat_line *v;
	size_t n;
	struct xb_flat6_line *v6; /* the IPv6 lines */
	size_t n6;
};

static __u64 hi_bits(const __u8 *addr)
{
	__u64 hi = 0;

	for (int i = 0; i < 8; i++)
		hi = hi << 8 | addr[i];
	return hi;
}

/* What the data path does with the table: level 1, the middle level, level 2, the line
 * (IPv4) or the walk down the IPv6 lines, then the trie. */
static __u32 flat_verdict(const __u64 *words, const struct lines *l, const struct xb_policy_set *s,
			  __u8 family, const __u8 *addr)
{
	__u32 code = pset_flat_code(words, l->v, l->n, family, top_bits(addr));

	if (code == XDPBAN_FLAT_LOOKUP && family == XDPBAN_FAMILY_INET6)
		code = xb_flat6_lines_code(l->v6, l->n6, hi_bits(addr));
	if (code == XDPBAN_FLAT_LOOKUP)
		return lpm_verdict(s, family, addr);
	return xdpban_flat_verdict(code);
}

/* The definition of level 3: a /24 gets a line when its level-2 code is LOOKUP because of an
 * entry longer than /24 and no timed entry covers it or lies in it; code i of the line is the
 * longest match of the /32 i (all permanent there). Checks which regions have lines, and
 * every code of every line. */
static unsigned long check_lines(const struct xb_policy_set *s, const struct lines *l,
				 const char *what)
{
	__u8 *has_long = paint.len, *timed = paint.lookup;
	struct xb_policy_set near = {};
	const __u32 regions = 1u << XDPBAN_FLAT_L2_BITS;
	__u8 *level2 = malloc(regions);
	unsigned long bad = 0;
	size_t want = 0, at = 0;

	assert_non_null(level2);
	brute_level(s, XDPBAN_FAMILY_INET, XDPBAN_FLAT_L2_BITS, level2);
	memset(has_long, 0, regions);
	memset(timed, 0, regions);
	for (size_t i = 0; i < s->n; i++) {
		const struct xb_policy_entry *e = &s->v[i];
		__u32 first = top_bits(e->prefix.addr) >> 8, count;

		if (e->prefix.family != XDPBAN_FAMILY_INET)
			continue;
		count = e->prefix.plen < 24 ? 1u << (24 - e->prefix.plen) : 1;
		if (e->prefix.plen > 24 && level2[first] == XDPBAN_FLAT_LOOKUP)
			has_long[first] = 1;
		if (e->policy.expires_ns)
			memset(timed + first, 1, count);
	}
	for (size_t i = 1; i < l->n; i++)
		if (l->v[i - 1].region >= l->v[i].region && bad++ < SHOWN)
			printf("MISMATCH [%s] lines not sorted at %zu\n", what, i);
	for (__u32 r = 0; r < regions; r++) {
		bool line = at < l->n && l->v[at].region == r;

		if (has_long[r] && !timed[r])
			want++;
		if (line != (has_long[r] && !timed[r]) && bad++ < SHOWN)
			printf("MISMATCH [%s] /24 %u.%u.%u.0: line %s, definition %s\n", what, r >> 16,
			       (r >> 8) & 0xff, r & 0xff, line ? "present" : "absent",
			       has_long[r] && !timed[r] ? "present" : "absent");
		if (!line)
			continue;
		near.n = 0; /* the entries that cover the region or lie in it: the only candidates */
		for (size_t i = 0; i < s->n; i++) {
			const struct xb_policy_entry *e = &s->v[i];
			__u8 base[16] = { r >> 16, r >> 8, r };
			struct xb_prefix region = { .family = XDPBAN_FAMILY_INET, .plen = 24 };

			memcpy(region.addr, base, sizeof(base));
			if (e->prefix.family == XDPBAN_FAMILY_INET &&
			    (bit_matches(base, &e->prefix) || bit_matches(e->prefix.addr, &region)))
				assert_int_equal(xb_policy_set_add(&near, &e->prefix, &e->policy), 0);
		}
		for (__u32 host = 0; host < XDPBAN_FLAT_LINE_CODES; host++) {
			__u32 addr32 = r << 8 | host, code = xdpban_flat_line_code(&l->v[at].line, addr32);
			__u8 addr[16] = { addr32 >> 24, addr32 >> 16, addr32 >> 8, addr32 };
			__u32 verdict = lpm_verdict(&near, XDPBAN_FAMILY_INET, addr);

			__u32 want_code = verdict <= XDPBAN_POLICY_TRUSTED
						  ? xdpban_flat_code_of_verdict(verdict)
						  : XDPBAN_FLAT_LOOKUP;

			if (code != want_code && bad++ < SHOWN)
				printf("MISMATCH [%s] %u.%u.%u.%u: line code %s, longest match %u\n",
				       what, addr[0], addr[1], addr[2], addr[3], code_name(code),
				       verdict);
		}
		at++;
	}
	if (want != l->n && bad++ < SHOWN)
		printf("MISMATCH [%s] %zu lines, definition %zu\n", what, l->n, want);
	xb_policy_set_free(&near);
	free(level2);
	return bad;
}

/* The prefix of an IPv6 line's region. */
static struct xb_prefix line6_region(__u64 key, unsigned int bits)
{
	struct xb_prefix p = { .family = XDPBAN_FAMILY_INET6, .plen = bits };

	for (int i = 0; i < 8; i++)
		p.addr[i] = (__u8)(key >> (56 - 8 * i));
	return p;
}

static bool overlaps(const struct xb_prefix *a, const struct xb_prefix *b)
{
	return bit_matches(a->addr, b) || bit_matches(b->addr, a);
}

static int key_cmp(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	if ((x & 0xff) != (y & 0xff))
		return (x & 0xff) < (y & 0xff) ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Whether a region is pure by the definition (brute_level's), over the entries `near`, which
 * hold every entry that covers it or lies in it: none timed, and every entry inside it of
 * the code of the longest entry covering it (NONE without one). */
static bool brute_uniform(const struct xb_policy_set *near, const struct xb_prefix *region)
{
	const struct xb_policy_entry *cover = NULL;
	__u32 code;

	for (size_t k = 0; k < near->n; k++) {
		const struct xb_policy_entry *e = &near->v[k];

		if (e->prefix.family != region->family || !overlaps(&e->prefix, region))
			continue;
		if (e->policy.expires_ns)
			return false;
		if (e->prefix.plen <= region->plen && (!cover || e->prefix.plen > cover->prefix.plen))
			cover = e;
	}
	code = cover ? brute_code(cover) : XDPBAN_FLAT_NONE;
	for (size_t k = 0; k < near->n; k++) {
		const struct xb_policy_entry *e = &near->v[k];

		if (e->prefix.family == region->family && e->prefix.plen > region->plen &&
		    bit_matches(e->prefix.addr, region) && brute_code(e) != code)
			return false;
	}
	return code != XDPBAN_FLAT_LOOKUP;
}

/* The definition of the IPv6 lines: a region of a line depth gets a line when an entry longer
 * than the region lies in it, no timed entry covers it or lies in it, and it is not pure
 * (brute_uniform); code i is LOOKUP when sub-region i is not pure, else the longest match of
 * the sub-region. Checks the order, which regions have lines, and every code of every line. */
static unsigned long check_lines6(const struct xb_policy_set *s, const struct lines *l,
				  const char *what)
{
	struct xb_policy_set near = {};
	__u64 *want = malloc((s->n * XDPBAN_FLAT6_DEPTHS + 1) * sizeof(*want));
	size_t nwant = 0, kept = 0;
	unsigned long bad = 0;

	assert_non_null(want);
	for (size_t i = 0; i < s->n; i++)
		for (__u32 d = XDPBAN_FLAT6_DEPTH_FIRST; d <= XDPBAN_FLAT6_DEPTH_LAST; d += 8)
			if (s->v[i].prefix.family == XDPBAN_FAMILY_INET6 && s->v[i].prefix.plen > d)
				want[nwant++] = xdpban_flat6_key(hi_bits(s->v[i].prefix.addr), d);
	qsort(want, nwant, sizeof(*want), key_cmp);
	for (size_t i = 0; i < nwant; i++) { /* unique, and no timed entry touching the region */
		struct xb_prefix region = line6_region(want[i], want[i] & 0xff);
		bool timed = false;

		if (kept && want[kept - 1] == want[i])
			continue;
		for (size_t k = 0; k < s->n && !timed; k++)
			timed = s->v[k].prefix.family == XDPBAN_FAMILY_INET6 &&
				s->v[k].policy.expires_ns && overlaps(&s->v[k].prefix, &region);
		if (!timed) {
			near.n = 0;
			for (size_t k = 0; k < s->n; k++)
				if (s->v[k].prefix.family == XDPBAN_FAMILY_INET6 &&
				    overlaps(&s->v[k].prefix, &region))
					assert_int_equal(xb_policy_set_add(&near, &s->v[k].prefix,
									   &s->v[k].policy), 0);
			if (!brute_uniform(&near, &region))
				want[kept++] = want[i];
		}
	}
	if (kept != l->n6 && bad++ < SHOWN)
		printf("MISMATCH [%s] %zu IPv6 lines, definition %zu\n", what, l->n6, kept);
	for (size_t i = 0; i < l->n6; i++) {
		__u64 key = l->v6[i].key;
		__u32 depth = key & 0xff, sub = depth + XDPBAN_FLAT6_STRIDE;
		struct xb_prefix region = line6_region(key, depth);

		if ((i >= kept || want[i] != key) && bad++ < SHOWN)
			printf("MISMATCH [%s] IPv6 line %zu: key %016llx, definition %016llx\n", what, i,
			       (unsigned long long)key, i < kept ? (unsigned long long)want[i] : 0ull);
		near.n = 0;
		for (size_t k = 0; k < s->n; k++)
			if (s->v[k].prefix.family == XDPBAN_FAMILY_INET6 &&
			    overlaps(&s->v[k].prefix, &region))
				assert_int_equal(xb_policy_set_add(&near, &s->v[k].prefix,
								   &s->v[k].policy), 0);
		for (__u32 c = 0; c < XDPBAN_FLAT_LINE_CODES; c++) {
			__u64 hi = (key & ~0xffull) | (__u64)c << (64 - sub);
			struct xb_prefix subr = line6_region(hi, sub);
			__u32 code = xdpban_flat6_code(&l->v6[i].line, hi, depth), want_code;

			want_code = !brute_uniform(&near, &subr)
					    ? XDPBAN_FLAT_LOOKUP
					    : xdpban_flat_code_of_verdict(
						      lpm_verdict(&near, XDPBAN_FAMILY_INET6, subr.addr));
			if (code != want_code && bad++ < SHOWN)
				printf("MISMATCH [%s] IPv6 line %016llx code %u: %s, definition %s\n",
				       what, (unsigned long long)key, c, code_name(code),
				       code_name(want_code));
		}
	}
	xb_policy_set_free(&near);
	free(want);
	return bad;
}

static unsigned long check_addresses(const struct xb_policy_set *s, __u8 family,
				     const __u64 *words, const struct lines *l,
				     struct fuzz_rng *rng, unsigned int n, const char *what)
{
	unsigned long bad = 0;

	for (unsigned int i = 0; i < n; i++) {
		__u8 addr[16];
		__u32 got, want;
		char text[INET6_ADDRSTRLEN];

		pset_address(rng, s, family, addr);
		got = flat_verdict(words, l, s, family, addr);
		want = lpm_verdict(s, family, addr);
		if (got != want && bad++ < SHOWN) {
			inet_ntop(family == XDPBAN_FAMILY_INET ? AF_INET : AF_INET6, addr, text,
				  sizeof(text));
			printf("MISMATCH [%s] address %s: through the table %u, longest match %u\n",
			       what, text, got, want);
		}
	}
	return bad;
}

/* Builds the table of a set and holds it to the brute force everywhere. */
static void check_set(const struct xb_policy_set *s, __u8 family, struct fuzz_rng *rng,
		      unsigned int addresses, const char *what)
{
	__u64 *words = malloc(XDPBAN_FLAT_WORDS * sizeof(*words));
	struct lines l = {};
	unsigned long bad;

	assert_non_null(words);
	memset(words, 0xa5, XDPBAN_FLAT_WORDS * sizeof(*words)); /* no help from a zero table */
	assert_int_equal(xb_flat_build(s->v, s->n, family, words), 0);
	assert_int_equal(xb_flat_lines_build(s->v, s->n, &l.v, &l.n), 0);
	assert_int_equal(xb_flat6_lines_build(s->v, s->n, &l.v6, &l.n6), 0);
	bad = check_level(s, family, words, XDPBAN_FLAT_L1_BITS, what);
	bad += check_level(s, family, words, XDPBAN_FLAT_MID_BITS, what);
	bad += check_level(s, family, words, XDPBAN_FLAT_L2_BITS, what);
	bad += check_levels_agree(words, XDPBAN_FLAT_L1_BITS, XDPBAN_FLAT_MID_BITS, what);
	bad += check_levels_agree(words, XDPBAN_FLAT_L1_BITS, XDPBAN_FLAT_L2_BITS, what);
	bad += check_levels_agree(words, XDPBAN_FLAT_MID_BITS, XDPBAN_FLAT_L2_BITS, what);
	if (family == XDPBAN_FAMILY_INET)
		bad += check_lines(s, &l, what);
	else if (l.n && bad++ < SHOWN)
		printf("MISMATCH [%s] %zu IPv4 lines from an IPv6 set\n", what, l.n);
	if (family == XDPBAN_FAMILY_INET6) {
		bad += check_lines6(s, &l, what);
		printf("%zu IPv6 lines\n", l.n6);
	}
	else if (l.n6 && bad++ < SHOWN)
		printf("MISMATCH [%s] %zu IPv6 lines from an IPv4 set\n", what, l.n6);
	bad += check_addresses(s, family, words, &l, rng, addresses, what);
	free(words);
	free(l.v);
	free(l.v6);
	if (bad)
		fail_msg("%s: %lu mismatches", what, bad);
}

/* ---- sets ---- */

static void add(struct xb_policy_set *s, const char *cidr, __u32 verdict, __u64 expires_ns)
{
	struct xdpban_policy val = { .verdict = verdict, .list_id = 1, .expires_ns = expires_ns };
	char err[XB_ERRLEN];
	struct xb_prefix p;

	if (xb_prefix_parse(cidr, &p, err, sizeof(err)))
		fail_msg("test prefix '%s': %s", cidr, err);
	assert_int_equal(xb_policy_set_add(s, &p, &val), 0);
}

/* ---- tests ---- */

static int setup(void **state)
{
	paint.len = malloc(1u << XDPBAN_FLAT_L2_BITS);
	paint.code = malloc(1u << XDPBAN_FLAT_L2_BITS);
	paint.lookup = malloc(1u << XDPBAN_FLAT_L2_BITS);
	return paint.len && paint.code && paint.lookup ? 0 : -1;
}

static int teardown(void **state)
{
	free(paint.len);
	free(paint.code);
	free(paint.lookup);
	return 0;
}

/* The code of an IPv4 address's region at level 1 (/16), "mid" (the middle level, /22) or 2
 * (/24). */
#define L1 XDPBAN_FLAT_L1_BITS
#define MID XDPBAN_FLAT_MID_BITS
#define L2 XDPBAN_FLAT_L2_BITS

static __u32 code_at(const __u64 *words, unsigned int bits, const char *addr)
{
	__u8 bytes[4];

	assert_int_equal(inet_pton(AF_INET, addr, bytes), 1);
	return xb_flat_code(words, bits, top_bits(bytes));
}

/* A readable case: each rule of the definition once, with the codes written out. */
static void codes_of_a_small_set(void **state)
{
	struct xb_policy_set s = {};
	__u64 *words = malloc(XDPBAN_FLAT_WORDS * sizeof(*words));

	assert_non_null(words);
	add(&s, "10.0.0.0/8", XDPBAN_POLICY_DENY, 0);
	add(&s, "10.1.0.0/16", XDPBAN_POLICY_TRUSTED, 0);     /* a whole /16 */
	add(&s, "10.2.3.0/24", XDPBAN_POLICY_TRUSTED, 0);     /* a whole /24 */
	add(&s, "10.4.5.6", XDPBAN_POLICY_TRUSTED, 0);        /* inside a /24 */
	add(&s, "11.0.0.0/8", XDPBAN_POLICY_DENY, NOW_NS);   /* timed: the trie decides */
	add(&s, "12.0.0.0/8", XDPBAN_POLICY_DENY, 0);
	add(&s, "12.7.0.0/16", XDPBAN_POLICY_TRUSTED, NOW_NS); /* timed, inside */
	add(&s, "10.5.4.0/22", XDPBAN_POLICY_NONE, 0);         /* a whole /22 */
	add(&s, "10.6.0.0/21", XDPBAN_POLICY_TRUSTED, 0);      /* two /22s */
	add(&s, "10.7.2.0/23", XDPBAN_POLICY_TRUSTED, 0);      /* inside a /22 */
	add(&s, "12.9.0.0/24", XDPBAN_POLICY_DENY, 0);    /* inside 12/8, same code: still pure */
	add(&s, "12.9.1.0/24", XDPBAN_POLICY_DENY, 0);    /* the same, and inside it: */
	add(&s, "12.9.1.128/25", XDPBAN_POLICY_NONE, 0);  /* another code */
	add(&s, "12.9.1.129", XDPBAN_POLICY_DENY, 0);     /* the first code again, inside it */
	add(&s, "13.1.0.0/16", XDPBAN_POLICY_NONE, 0);    /* no entry's code, where none covers */
	assert_int_equal(xb_flat_build(s.v, s.n, XDPBAN_FAMILY_INET, words), 0);

	assert_int_equal(code_at(words, L1, "10.0.0.1"), XDPBAN_FLAT_DENY);
	assert_int_equal(code_at(words, L1, "10.1.200.1"), XDPBAN_FLAT_TRUSTED);
	assert_int_equal(code_at(words, L2, "10.1.200.1"), XDPBAN_FLAT_TRUSTED);
	assert_int_equal(code_at(words, L1, "10.2.3.4"), XDPBAN_FLAT_LOOKUP);
	assert_int_equal(code_at(words, L2, "10.2.3.4"), XDPBAN_FLAT_TRUSTED);
	assert_int_equal(code_at(words, L2, "10.2.4.4"), XDPBAN_FLAT_DENY);
	assert_int_equal(code_at(words, L1, "10.4.5.6"), XDPBAN_FLAT_LOOKUP);
	assert_int_equal(code_at(words, L2, "10.4.5.6"), XDPBAN_FLAT_LOOKUP);
	assert_int_equal(code_at(words, L2, "10.4.6.6"), XDPBAN_FLAT_DENY);
	assert_int_equal(code_at(words, L1, "11.9.9.9"), XDPBAN_FLAT_LOOKUP);
	assert_int_equal(code_at(words, L2, "11.9.9.9"), XDPBAN_FLAT_LOOKUP);
	assert_int_equal(code_at(words, L1, "12.6.0.0"), XDPBAN_FLAT_DENY);
	assert_int_equal(code_at(words, L1, "12.7.0.0"), XDPBAN_FLAT_LOOKUP);
	assert_int_equal(code_at(words, L2, "12.7.255.0"), XDPBAN_FLAT_LOOKUP);
	assert_int_equal(code_at(words, L1, "9.255.255.255"), XDPBAN_FLAT_NONE);
	assert_int_equal(code_at(words, L2, "13.0.0.0"), XDPBAN_FLAT_NONE);
	/* the middle level, /22 by /22 */
	assert_int_equal(code_at(words, MID, "10.0.0.1"), XDPBAN_FLAT_DENY);
	assert_int_equal(code_at(words, MID, "10.1.200.1"), XDPBAN_FLAT_TRUSTED);
	assert_int_equal(code_at(words, MID, "10.2.3.4"), XDPBAN_FLAT_LOOKUP); /* holds a /24 */
	assert_int_equal(code_at(words, MID, "10.2.4.4"), XDPBAN_FLAT_DENY);
	assert_int_equal(code_at(words, MID, "10.4.7.255"), XDPBAN_FLAT_LOOKUP); /* a /32 */
	assert_int_equal(code_at(words, MID, "10.4.8.0"), XDPBAN_FLAT_DENY);
	assert_int_equal(code_at(words, L1, "10.5.5.5"), XDPBAN_FLAT_LOOKUP);
	assert_int_equal(code_at(words, MID, "10.5.5.5"), XDPBAN_FLAT_NONE);
	assert_int_equal(code_at(words, L2, "10.5.7.1"), XDPBAN_FLAT_NONE);
	assert_int_equal(code_at(words, MID, "10.5.3.255"), XDPBAN_FLAT_DENY);
	assert_int_equal(code_at(words, MID, "10.5.8.0"), XDPBAN_FLAT_DENY);
	assert_int_equal(code_at(words, MID, "10.6.0.1"), XDPBAN_FLAT_TRUSTED);
	assert_int_equal(code_at(words, MID, "10.6.7.1"), XDPBAN_FLAT_TRUSTED);
	assert_int_equal(code_at(words, MID, "10.6.8.1"), XDPBAN_FLAT_DENY);
	assert_int_equal(code_at(words, MID, "10.7.1.1"), XDPBAN_FLAT_LOOKUP); /* holds a /23 */
	assert_int_equal(code_at(words, L2, "10.7.1.1"), XDPBAN_FLAT_DENY);
	assert_int_equal(code_at(words, L2, "10.7.3.1"), XDPBAN_FLAT_TRUSTED);
	assert_int_equal(code_at(words, MID, "11.9.9.9"), XDPBAN_FLAT_LOOKUP);  /* timed */
	assert_int_equal(code_at(words, MID, "12.7.100.1"), XDPBAN_FLAT_LOOKUP);
	assert_int_equal(code_at(words, MID, "12.8.0.1"), XDPBAN_FLAT_DENY);
	assert_int_equal(code_at(words, MID, "13.0.0.0"), XDPBAN_FLAT_NONE);
	/* entries inside a region with the region's code keep it pure */
	assert_int_equal(code_at(words, L2, "12.9.0.1"), XDPBAN_FLAT_DENY);
	assert_int_equal(code_at(words, L1, "13.1.0.1"), XDPBAN_FLAT_NONE);
	assert_int_equal(code_at(words, L1, "13.0.0.0"), XDPBAN_FLAT_NONE);
	/* one of another code, however deep, does not; nor does its region's first code again */
	assert_int_equal(code_at(words, L1, "12.9.0.1"), XDPBAN_FLAT_LOOKUP);
	assert_int_equal(code_at(words, MID, "12.9.0.1"), XDPBAN_FLAT_LOOKUP);
	assert_int_equal(code_at(words, L2, "12.9.1.1"), XDPBAN_FLAT_LOOKUP);
	assert_int_equal(code_at(words, L2, "12.9.2.1"), XDPBAN_FLAT_DENY);
	assert_int_equal(code_at(words, L1, "12.10.0.1"), XDPBAN_FLAT_DENY);
	/* IPv4 entries say nothing about IPv6 */
	assert_int_equal(xb_flat_build(s.v, s.n, XDPBAN_FAMILY_INET6, words), 0);
	assert_int_equal(code_at(words, L1, "10.0.0.1"), XDPBAN_FLAT_NONE);
	free(words);
	xb_policy_set_free(&s);
}

static __u32 line_code_at(const struct lines *l, const char *addr)
{
	__u8 bytes[4];

	assert_int_equal(inet_pton(AF_INET, addr, bytes), 1);
	return xb_flat_lines_code(l->v, l->n, top_bits(bytes));
}

/* Level 3 in a readable case: which /24s get a line, and the /32 codes written out. */
static void lines_of_a_small_set(void **state)
{
	struct xb_policy_set s = {};
	struct lines l = {};

	add(&s, "198.51.100.0/24", XDPBAN_POLICY_DENY, 0);
	add(&s, "198.51.100.128/25", XDPBAN_POLICY_TRUSTED, 0); /* inside the /24 */
	add(&s, "198.51.100.200/30", XDPBAN_POLICY_NONE, 0);    /* inside the /25 */
	add(&s, "203.0.113.7", XDPBAN_POLICY_DENY, 0);          /* alone in its /24 */
	add(&s, "192.0.2.0/23", XDPBAN_POLICY_TRUSTED, 0);      /* covers 192.0.2.0/24 */
	add(&s, "192.0.3.64/26", XDPBAN_POLICY_DENY, 0);        /* and lies in 192.0.3.0/24 */
	add(&s, "10.9.0.0/16", XDPBAN_POLICY_DENY, NOW_NS);     /* timed, covering: no line */
	add(&s, "10.9.1.1", XDPBAN_POLICY_TRUSTED, 0);
	add(&s, "10.10.1.1", XDPBAN_POLICY_TRUSTED, NOW_NS);    /* timed, inside: no line */
	add(&s, "10.10.1.128/25", XDPBAN_POLICY_DENY, 0);
	add(&s, "10.11.0.0/24", XDPBAN_POLICY_DENY, 0);         /* nothing longer: level 2 */
	add(&s, "10.12.0.0/24", XDPBAN_POLICY_DENY, 0);
	add(&s, "10.12.0.64/26", XDPBAN_POLICY_DENY, 0);   /* the /24's code: level 2, no line */
	add(&s, "10.13.0.64/26", XDPBAN_POLICY_NONE, 0);   /* no entry's code, nothing covering */
	add(&s, "10.14.0.0/24", XDPBAN_POLICY_DENY, 0);
	add(&s, "10.14.0.64/26", XDPBAN_POLICY_TRUSTED, 0); /* another code: a line */
	add(&s, "10.14.0.65", XDPBAN_POLICY_DENY, 0);
	assert_int_equal(xb_flat_lines_build(s.v, s.n, &l.v, &l.n), 0);

	assert_int_equal(l.n, 4);
	assert_int_equal(line_code_at(&l, "198.51.100.1"), XDPBAN_FLAT_DENY);
	assert_int_equal(line_code_at(&l, "198.51.100.127"), XDPBAN_FLAT_DENY);
	assert_int_equal(line_code_at(&l, "198.51.100.128"), XDPBAN_FLAT_TRUSTED);
	assert_int_equal(line_code_at(&l, "198.51.100.199"), XDPBAN_FLAT_TRUSTED);
	assert_int_equal(line_code_at(&l, "198.51.100.201"), XDPBAN_FLAT_NONE);
	assert_int_equal(line_code_at(&l, "198.51.100.204"), XDPBAN_FLAT_TRUSTED);
	assert_int_equal(line_code_at(&l, "203.0.113.7"), XDPBAN_FLAT_DENY);
	assert_int_equal(line_code_at(&l, "203.0.113.8"), XDPBAN_FLAT_NONE);
	assert_int_equal(line_code_at(&l, "192.0.3.63"), XDPBAN_FLAT_TRUSTED);
	assert_int_equal(line_code_at(&l, "192.0.3.64"), XDPBAN_FLAT_DENY);
	assert_int_equal(line_code_at(&l, "192.0.2.64"), XDPBAN_FLAT_LOOKUP); /* no line */
	assert_int_equal(line_code_at(&l, "10.9.1.1"), XDPBAN_FLAT_LOOKUP);
	assert_int_equal(line_code_at(&l, "10.10.1.129"), XDPBAN_FLAT_LOOKUP);
	assert_int_equal(line_code_at(&l, "10.11.0.1"), XDPBAN_FLAT_LOOKUP);
	assert_int_equal(line_code_at(&l, "10.12.0.65"), XDPBAN_FLAT_LOOKUP);
	assert_int_equal(line_code_at(&l, "10.13.0.65"), XDPBAN_FLAT_LOOKUP);
	assert_int_equal(line_code_at(&l, "10.14.0.1"), XDPBAN_FLAT_DENY);
	assert_int_equal(line_code_at(&l, "10.14.0.64"), XDPBAN_FLAT_TRUSTED);
	assert_int_equal(line_code_at(&l, "10.14.0.65"), XDPBAN_FLAT_DENY);
	free(l.v);

	add(&s, "203.0.113.7/32", XDPBAN_POLICY_TRUSTED, 0); /* named twice: refused */
	assert_int_equal(xb_flat_lines_build(s.v, s.n, &l.v, &l.n), -EINVAL);
	assert_null(l.v);
	assert_int_equal(l.n, 0);
	xb_policy_set_free(&s);
}

/* The code of an IPv6 address in the walk down the lines (LOOKUP: the trie answers). */
static __u32 line6_code_at(const struct lines *l, const char *addr)
{
	__u8 a[16];

	assert_int_equal(inet_pton(AF_INET6, addr, a), 1);
	return xb_flat6_lines_code(l->v6, l->n6, hi_bits(a));
}

/* The IPv6 lines in a readable case: which regions get a line, and the codes on the walk. */
static void lines6_of_a_small_set(void **state)
{
	struct xb_policy_set s = {};
	struct lines l = {};

	(void)state;
	add(&s, "2001:db8::/32", XDPBAN_POLICY_DENY, 0);
	add(&s, "2001:db8:1::/48", XDPBAN_POLICY_DENY, 0);  /* the /32's code: no line below */
	add(&s, "2001:db9::/32", XDPBAN_POLICY_DENY, 0);
	add(&s, "2001:db9:100::/40", XDPBAN_POLICY_TRUSTED, 0); /* another code: a /32 line */
	add(&s, "2001:db9:100::/48", XDPBAN_POLICY_DENY, 0);    /* and inside it another: /40 */
	add(&s, "2001:dba:100::/48", XDPBAN_POLICY_NONE, 0);    /* no entry's code, none around */
	assert_int_equal(xb_flat6_lines_build(s.v, s.n, &l.v6, &l.n6), 0);

	assert_int_equal(l.n6, 3); /* 2001:d00::/24, 2001:db9::/32, 2001:db9:100::/40 */
	assert_int_equal(line6_code_at(&l, "2001:db8:1::1"), XDPBAN_FLAT_DENY);
	assert_int_equal(line6_code_at(&l, "2001:db8:2::1"), XDPBAN_FLAT_DENY);
	assert_int_equal(line6_code_at(&l, "2001:db9::1"), XDPBAN_FLAT_DENY);
	assert_int_equal(line6_code_at(&l, "2001:db9:100::1"), XDPBAN_FLAT_DENY);
	assert_int_equal(line6_code_at(&l, "2001:db9:100:1::1"), XDPBAN_FLAT_DENY);
	assert_int_equal(line6_code_at(&l, "2001:db9:101::1"), XDPBAN_FLAT_TRUSTED);
	assert_int_equal(line6_code_at(&l, "2001:db9:1ff::1"), XDPBAN_FLAT_TRUSTED);
	assert_int_equal(line6_code_at(&l, "2001:dba:100::1"), XDPBAN_FLAT_NONE);
	assert_int_equal(line6_code_at(&l, "2001:dbb::1"), XDPBAN_FLAT_NONE);
	assert_non_null(xb_flat6_lines_find(l.v6, l.n6, xdpban_flat6_key(0x20010d0000000000ull, 24)));
	assert_null(xb_flat6_lines_find(l.v6, l.n6, xdpban_flat6_key(0x20010db800000000ull, 32)));
	assert_null(xb_flat6_lines_find(l.v6, l.n6, xdpban_flat6_key(0x20010dba00000000ull, 32)));
	free(l.v6);
	xb_policy_set_free(&s);
}

/* The edges: no entry, the whole space, a timed whole space, a verdict the data path does not
 * know (left to the trie), the last region, and a prefix named twice (refused). */
static void edge_sets(void **state)
{
	struct fuzz_rng rng;
	struct xb_policy_set s = {};
	__u64 *words = malloc(XDPBAN_FLAT_WORDS * sizeof(*words));

	assert_non_null(words);
	fuzz_rng_seed(&rng, base_seed());
	check_set(&s, XDPBAN_FAMILY_INET, &rng, 1000, "empty");
	assert_int_equal(xb_flat_build(NULL, 0, XDPBAN_FAMILY_INET, words), 0);
	assert_int_equal(code_at(words, L2, "255.255.255.255"), XDPBAN_FLAT_NONE);

	add(&s, "0.0.0.0/0", XDPBAN_POLICY_DENY, 0);
	check_set(&s, XDPBAN_FAMILY_INET, &rng, 1000, "0/0 deny");
	assert_int_equal(xb_flat_build(s.v, s.n, XDPBAN_FAMILY_INET, words), 0);
	assert_int_equal(code_at(words, L1, "255.255.0.0"), XDPBAN_FLAT_DENY);
	assert_int_equal(code_at(words, MID, "255.255.252.0"), XDPBAN_FLAT_DENY);
	xb_policy_set_free(&s);

	add(&s, "0.0.0.0/0", XDPBAN_POLICY_TRUSTED, NOW_NS + 1);
	add(&s, "255.255.255.0/24", XDPBAN_POLICY_DENY, 0);
	check_set(&s, XDPBAN_FAMILY_INET, &rng, 1000, "timed 0/0");
	xb_policy_set_free(&s);

	add(&s, "192.0.2.0/24", 7, 0); /* unknown verdict */
	add(&s, "198.51.100.0/24", XDPBAN_POLICY_DENY, 0);
	add(&s, "198.51.0.0/16", 9, 0); /* unknown, but a longer entry covers part of it */
	check_set(&s, XDPBAN_FAMILY_INET, &rng, 1000, "unknown verdicts");
	assert_int_equal(xb_flat_build(s.v, s.n, XDPBAN_FAMILY_INET, words), 0);
	assert_int_equal(code_at(words, L2, "192.0.2.1"), XDPBAN_FLAT_LOOKUP);
	assert_int_equal(code_at(words, MID, "192.0.2.1"), XDPBAN_FLAT_LOOKUP);
	assert_int_equal(code_at(words, MID, "198.51.100.1"), XDPBAN_FLAT_LOOKUP);
	assert_int_equal(code_at(words, L2, "198.51.100.1"), XDPBAN_FLAT_DENY);
	assert_int_equal(code_at(words, L2, "198.51.101.1"), XDPBAN_FLAT_LOOKUP);
	xb_policy_set_free(&s);

	add(&s, "203.0.113.0/24", XDPBAN_POLICY_DENY, 0);
	add(&s, "203.0.113.0/24", XDPBAN_POLICY_TRUSTED, 0);
	assert_int_equal(xb_flat_build(s.v, s.n, XDPBAN_FAMILY_INET, words), -EINVAL);
	xb_policy_set_free(&s);
	free(words);
}

static void run_shapes(const struct pset_shape *shapes, size_t n, __u64 seed_offset,
		       unsigned int addresses)
{
	for (size_t i = 0; i < n; i++) {
		struct pset_shape shape = shapes[i];
		struct xb_policy_set s = {};
		struct fuzz_rng rng;
		__u64 seed = base_seed() + seed_offset + i;
		char what[128];

		shape.expired_ns = NOW_NS - 1;
		shape.live_ns = NOW_NS + 1;
		fuzz_rng_seed(&rng, seed);
		assert_int_equal(pset_random(&rng, &shape, &s), 0);
		snprintf(what, sizeof(what), "IPv%u, %zu prefixes /%u../%u in '%s', seed 0x%llx",
			 shape.family, s.n, shape.min_len, shape.max_len, shape.within,
			 (unsigned long long)seed);
		check_set(&s, shape.family, &rng, addresses, what);
		printf("ok: %s\n", what);
		xb_policy_set_free(&s);
	}
}

/* Random IPv4 sets of several sizes, spread over the space or crowded into one prefix, where
 * prefixes nest deeply and share regions. */
static void random_ipv4_sets(void **state)
{
	static const struct pset_shape shapes[] = {
		PSET_SHAPE(XDPBAN_FAMILY_INET, 1, 0, 32, "", 10),
		PSET_SHAPE(XDPBAN_FAMILY_INET, 5, 0, 32, "", 10),
		PSET_SHAPE(XDPBAN_FAMILY_INET, 16, 0, 32, "", 10),
		PSET_SHAPE(XDPBAN_FAMILY_INET, 40, 0, 32, "", 10),
		PSET_SHAPE(XDPBAN_FAMILY_INET, 16, 8, 32, "", 0),
		PSET_SHAPE(XDPBAN_FAMILY_INET, 300, 8, 32, "", 5),
		PSET_SHAPE(XDPBAN_FAMILY_INET, 3000, 10, 32, "", 2),
		PSET_SHAPE(XDPBAN_FAMILY_INET, 500, 12, 32, "10.16.0.0/12", 5),
		PSET_SHAPE(XDPBAN_FAMILY_INET, 2000, 14, 30, "10.16.0.0/12", 0),
		PSET_SHAPE(XDPBAN_FAMILY_INET, 400, 16, 32, "172.16.0.0/16", 10),
		/* blocklist-like: mostly /25../32, where level 3 answers */
		PSET_SHAPE(XDPBAN_FAMILY_INET, 3000, 25, 32, "", 3),
		PSET_SHAPE(XDPBAN_FAMILY_INET, 2000, 20, 32, "10.16.0.0/16", 5),
		PSET_SHAPE(XDPBAN_FAMILY_INET, 600, 22, 32, "198.51.100.0/22", 10),
		PSET_SHAPE(XDPBAN_FAMILY_INET, 1500, 24, 32, "203.0.113.0/24", 0),
	};

	run_shapes(shapes, sizeof(shapes) / sizeof(shapes[0]), 0, 4000);
}

/* IPv6: the levels see only the top 32 bits, where longer prefixes make their region LOOKUP;
 * past them the IPv6 lines answer down to /64. */
static void random_ipv6_sets(void **state)
{
	static const struct pset_shape shapes[] = {
		PSET_SHAPE(XDPBAN_FAMILY_INET6, 16, 0, 128, "", 10),
		PSET_SHAPE(XDPBAN_FAMILY_INET6, 200, 4, 48, "", 5),
		PSET_SHAPE(XDPBAN_FAMILY_INET6, 500, 16, 40, "2001::/16", 5),
		PSET_SHAPE(XDPBAN_FAMILY_INET6, 300, 24, 128, "2001:d00::/24", 10),
		/* real lists' lengths, where the IPv6 lines answer: nested, crowded, timed */
		PSET_SHAPE(XDPBAN_FAMILY_INET6, 400, 32, 72, "2001:db8::/32", 5),
		PSET_SHAPE(XDPBAN_FAMILY_INET6, 1500, 32, 64, "2001:d00::/24", 0),
		PSET_SHAPE(XDPBAN_FAMILY_INET6, 300, 40, 128, "2001:db8:1200::/40", 10),
		PSET_SHAPE(XDPBAN_FAMILY_INET6, 200, 56, 72, "2001:db8:1234:5600::/56", 0),
	};

	run_shapes(shapes, sizeof(shapes) / sizeof(shapes[0]), 100, 3000);
}

/* Level 3's slot (include/xdpban_flat.h): the divisions by 3 and 5 the data path makes with a
 * multiply hold for every byte, and a line's codes come back from its slot at every /32. */
static void line_slots_hold_every_code(void **state)
{
	struct fuzz_rng rng;
	struct xdpban_flat_line line, back;
	struct xdpban_flat_slot slot;

	(void)state;
	fuzz_rng_seed(&rng, 0x736c6f74ull); /* "slot" */
	for (__u32 x = 0; x < 256; x++) {
		assert_int_equal((x * 171) >> 9, x / 3);
		assert_int_equal((x * 205) >> 10, x / 5);
	}
	for (int round = 0; round < 200; round++) {
		memset(&line, 0, sizeof(line));
		for (__u32 i = 0; i < XDPBAN_FLAT_LINE_CODES; i++) {
			/* rounds 0-2: one code everywhere; then random codes */
			__u32 code = round < 3 ? (__u32)round + 1 : 1 + fuzz_rng_below(&rng, 3);

			line.codes[i / XDPBAN_FLAT_CODES_PER_WORD] |= (__u64)code << xdpban_flat_shift(i);
		}
		assert_int_equal(xb_flat_slot_encode(&line, &slot), 0);
		for (__u32 i = 0; i < XDPBAN_FLAT_LINE_CODES; i++)
			assert_int_equal(xdpban_flat_slot_code(&slot, 0xc0000200u | i),
					 xdpban_flat_line_code(&line, i));
		xb_flat_slot_decode(&slot, &back);
		assert_memory_equal(&back, &line, sizeof(line));
	}
	/* A LOOKUP code cannot go into a slot; a byte past 3^5 - 1 reads as LOOKUP. */
	line.codes[3] &= ~(3ull << 10);
	assert_int_equal(xb_flat_slot_encode(&line, &slot), -EINVAL);
	memset(slot.trits, 243, sizeof(slot.trits));
	assert_int_equal(xdpban_flat_slot_code(&slot, 7), XDPBAN_FLAT_LOOKUP);
	/* The decoder gives every code as the data path reads it, from any bytes at all. */
	for (int round = 0; round < 50; round++) {
		for (size_t b = 0; b < sizeof(slot.trits); b++)
			slot.trits[b] = (__u8)fuzz_rng_below(&rng, 256);
		xb_flat_slot_decode(&slot, &back);
		for (__u32 i = 0; i < XDPBAN_FLAT_LINE_CODES; i++)
			assert_int_equal(xdpban_flat_line_code(&back, i),
					 xdpban_flat_slot_code(&slot, i));
	}
	assert_int_equal(sizeof(struct xdpban_flat_slot), 64);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(codes_of_a_small_set),
		cmocka_unit_test(edge_sets),
		cmocka_unit_test(lines_of_a_small_set),
		cmocka_unit_test(lines6_of_a_small_set),
		cmocka_unit_test(line_slots_hold_every_code),
		cmocka_unit_test(random_ipv4_sets),
		cmocka_unit_test(random_ipv6_sets),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests_name("flat", tests, setup, teardown);
}
