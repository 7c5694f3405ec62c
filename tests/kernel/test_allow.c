/* test_allow.c - the compiler of the four policy layers (docs/datapath.md, "Policy lists: the
 * painting order") against a brute force written from that definition: the default (pass, or
 * not allowed once an allow list is loaded), then allow, deny and trusted, a later layer over
 * its whole prefix whatever the lengths, overlapping entries of one layer uniting.
 *
 * A rule set becomes list files of each layer (the allow layer split over two files, with
 * repeats) in a temporary directory; xdpband's reader (user/common/lists.c) reads and paints
 * them, and their composition (user/common/runlists.c, no runtime lists) gives the plan and the
 * policy set the daemon compiles (with the default layer's /0 entries); the flat codes and
 * IPv4 lines are computed from it (user/lib/flat.c). Then every address of
 * ranges of 4,096 around sampled entries, every entry's first and last address and their
 * neighbours, and random addresses are looked up as the data path does (level 1, the middle
 * level, level 2, the line, the trie; for a DENY code in allow-only mode, the trie for the
 * reason) and by plain longest match over the set (the trie alone), and both must give the
 * definition's outcome. Fixed cases first (zmap's precedence, IPv6, the mode's edges), then
 * seeded random sets of both families. Last, the real XDP program: random four-layer sets
 * compiled into its maps (user/lib/policy.h) with the config bit, and a datagram from each
 * sampled address through BPF_PROG_TEST_RUN, its action and statistics reason held to the
 * definition. Needs root for that part only; never pins or attaches.
 * Reproduce a failure with the seed it prints (XDPBAN_ALLOW_SEED overrides the base).
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
#include <unistd.h>
#include <cmocka.h>
#include "dp.h"
#include "fuzz.h"
#include "lists.h"
#include "pkt.h"
#include "policy.h"
#include "pset.h"
#include "runlists.h"
#include "xdpban_flat.h"

#define BASE_SEED 0x78626c6c6f77ull /* "xbllow" */
#define SHOWN 8
#define RANGE 4096 /* consecutive addresses checked around a sampled entry */

enum layer { L_ALLOW = 1, L_DENY, L_TRUSTED };

struct rule {
	struct xb_prefix p;
	enum layer layer;
};

struct rules {
	struct rule v[256];
	size_t n;
	bool allow_list; /* an allow list is configured (maybe empty) */
};

/* What the data path does with a packet: the definition's outcome. */
enum outcome { GOES_ON, DROP_DENY, DROP_NOT_ALLOWED, PASS_TRUSTED };

static const char *outcome_name(enum outcome o)
{
	static const char *const names[] = { "goes on", "drop_deny", "drop_not_allowed",
					     "passed_trusted" };

	return names[o];
}

static __u64 base_seed(void)
{
	const char *env = getenv("XDPBAN_ALLOW_SEED");

	return env ? strtoull(env, NULL, 0) : BASE_SEED;
}

/* ---- the definition ---- */

static bool covers(const struct xb_prefix *p, __u8 family, const __u8 *addr)
{
	if (p->family != family)
		return false;
	for (unsigned int bit = 0; bit < p->plen; bit++) {
		__u8 mask = 0x80 >> (bit % 8);

		if ((addr[bit / 8] & mask) != (p->addr[bit / 8] & mask))
			return false;
	}
	return true;
}

/* Paints the layers in order: the last layer that covers the address decides. */
static enum outcome definition(const struct rules *r, __u8 family, const __u8 *addr)
{
	int top = 0;

	for (size_t i = 0; i < r->n; i++)
		if ((int)r->v[i].layer > top && covers(&r->v[i].p, family, addr))
			top = r->v[i].layer;
	switch (top) {
	case L_TRUSTED:
		return PASS_TRUSTED;
	case L_DENY:
		return DROP_DENY;
	case L_ALLOW:
		return GOES_ON;
	}
	return r->allow_list ? DROP_NOT_ALLOWED : GOES_ON;
}

/* ---- what was compiled, looked up ---- */

struct compiled {
	struct xb_policy_set set;
	size_t painted;
	__u64 *words[2]; /* [0] IPv4, [1] IPv6 */
	struct xb_flat_line *lines;
	size_t nlines;
};

static __u32 lpm(const struct xb_policy_set *s, __u8 family, const __u8 *addr)
{
	const struct xb_policy_entry *best = NULL;

	for (size_t i = 0; i < s->n; i++)
		if (covers(&s->v[i].prefix, family, addr) &&
		    (!best || s->v[i].prefix.plen > best->prefix.plen))
			best = &s->v[i];
	return best ? best->policy.verdict : XDPBAN_POLICY_NONE;
}

static enum outcome outcome_of_verdict(__u32 verdict)
{
	switch (verdict) {
	case XDPBAN_POLICY_TRUSTED:
		return PASS_TRUSTED;
	case XDPBAN_POLICY_DENY:
		return DROP_DENY;
	case XDPBAN_POLICY_NOT_ALLOWED:
		return DROP_NOT_ALLOWED;
	}
	return GOES_ON;
}

static __u32 top_bits(const __u8 *addr)
{
	return (__u32)addr[0] << 24 | (__u32)addr[1] << 16 | (__u32)addr[2] << 8 | addr[3];
}

/* bpf/policy.h, step by step: the levels, the line, and the trie for LOOKUP or, in allow-only
 * mode, for the reason behind a DENY code. */
static enum outcome data_path(const struct compiled *c, bool allow_only, __u8 family,
			      const __u8 *addr)
{
	__u32 code = pset_flat_code(c->words[family == XDPBAN_FAMILY_INET6], c->lines, c->nlines,
				    family, top_bits(addr));

	if (code == XDPBAN_FLAT_DENY && allow_only)
		return lpm(&c->set, family, addr) == XDPBAN_POLICY_NOT_ALLOWED ? DROP_NOT_ALLOWED
										 : DROP_DENY;
	if (code == XDPBAN_FLAT_LOOKUP)
		return outcome_of_verdict(lpm(&c->set, family, addr));
	return code == XDPBAN_FLAT_TRUSTED ? PASS_TRUSTED
	       : code == XDPBAN_FLAT_DENY  ? DROP_DENY
					   : GOES_ON;
}

/* ---- list files and the daemon's reader ---- */

static char g_dir[64];

static void write_list(const char *name, const struct rules *r, enum layer layer, int part,
		       int parts, char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/%s", g_dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "# layer %d, part %d of %d\n", layer, part, parts);
	for (size_t i = 0; i < r->n; i++) {
		char text[64];

		/* part 0 of two takes the even entries and every third, so parts overlap */
		if (r->v[i].layer != layer || (parts == 2 && (i % 2 != (size_t)part && i % 3)))
			continue;
		assert_int_equal(xb_prefix_format(&r->v[i].p, text, sizeof(text)), 0);
		fprintf(f, "%s\n", text);
	}
	assert_int_equal(fclose(f), 0);
}

/* Reads the rules back as xdpband does, into the policy set it compiles, and computes the
 * flat codes and lines of that set. */
static void compile_rules(const struct rules *r, struct compiled *c)
{
	static const struct {
		const char *file;
		enum layer layer;
		int part, parts;
		__u32 verdict;
	} files[] = {
		{ "allow-a", L_ALLOW, 0, 2, XDPBAN_POLICY_ALLOWED },
		{ "deny", L_DENY, 0, 1, XDPBAN_POLICY_DENY },
		{ "allow-b", L_ALLOW, 1, 2, XDPBAN_POLICY_ALLOWED },
		{ "trusted", L_TRUSTED, 0, 1, XDPBAN_POLICY_TRUSTED },
	};
	static char paths[4][128];
	struct xbd_conf conf = {};
	struct xbd_list_caps caps;
	struct xbd_lists lists;
	struct xbd_runtime none = {};
	struct xbd_list_plan plan;
	char err[XB_ERRLEN] = "";

	for (size_t i = 0; i < 4; i++) {
		if (files[i].layer == L_ALLOW && !r->allow_list)
			continue;
		write_list(files[i].file, r, files[i].layer, files[i].part, files[i].parts,
			   paths[i], sizeof(paths[i]));
		conf.lists[conf.n_lists] = (struct xbd_list_conf){
			.path = paths[i], .verdict = files[i].verdict, .id = conf.n_lists + 1 };
		conf.n_lists++;
	}
	xbd_list_caps_default(&caps);
	if (xbd_lists_read(&conf, &caps, &lists, NULL, err, sizeof(err)))
		fail_msg("reading the lists: %s", err);
	assert_int_equal(xbd_lists_compose(&lists, &none, &plan), 0);
	assert_int_equal(plan.allow_only, r->allow_list);
	memset(c, 0, sizeof(*c));
	assert_int_equal(xbd_lists_policy_set(&plan, &c->set), 0);
	c->painted = lists.painted;
	xbd_list_plan_free(&plan);
	xbd_lists_free(&lists);
	for (int f = 0; f < 2; f++) {
		c->words[f] = malloc(XDPBAN_FLAT_WORDS * sizeof(__u64));
		assert_non_null(c->words[f]);
		memset(c->words[f], 0xa5, XDPBAN_FLAT_WORDS * sizeof(__u64));
		assert_int_equal(xb_flat_build(c->set.v, c->set.n,
					       f ? XDPBAN_FAMILY_INET6 : XDPBAN_FAMILY_INET,
					       c->words[f]), 0);
	}
	assert_int_equal(xb_flat_lines_build(c->set.v, c->set.n, &c->lines, &c->nlines), 0);
}

static void compiled_free(struct compiled *c)
{
	xb_policy_set_free(&c->set);
	free(c->words[0]);
	free(c->words[1]);
	free(c->lines);
}

/* ---- checking addresses ---- */

struct tally {
	unsigned long checked, bad;
	unsigned long seen[4]; /* outcomes met: a set must reach them to mean anything */
	const char *what;
};

static void check_one(const struct rules *r, const struct compiled *c, __u8 family,
		      const __u8 *addr, struct tally *t)
{
	enum outcome want = definition(r, family, addr);
	enum outcome flat = data_path(c, r->allow_list, family, addr);
	enum outcome trie = outcome_of_verdict(lpm(&c->set, family, addr));
	char text[INET6_ADDRSTRLEN];

	t->checked++;
	t->seen[want]++;
	if (flat == want && trie == want)
		return;
	if (t->bad++ < SHOWN) {
		inet_ntop(family == XDPBAN_FAMILY_INET ? AF_INET : AF_INET6, addr, text,
			  sizeof(text));
		printf("MISMATCH [%s] %s: definition %s, through the table %s, longest match %s\n",
		       t->what, text, outcome_name(want), outcome_name(flat), outcome_name(trie));
	}
}

/* addr += delta (two's complement over the family's width). */
static void addr_add(__u8 family, __u8 *addr, long long delta)
{
	int bytes = family == XDPBAN_FAMILY_INET ? 4 : 16;
	__u64 d = (__u64)delta;
	unsigned int carry = 0;

	for (int i = bytes - 1; i >= 0; i--) {
		unsigned int sum = addr[i] + (unsigned int)(d & 0xff) + carry;

		addr[i] = (__u8)sum;
		carry = sum >> 8;
		d = delta < 0 ? (d >> 8) | 0xff00000000000000ull : d >> 8;
	}
}

static void prefix_last(const struct xb_prefix *p, __u8 *last)
{
	memcpy(last, p->addr, 16);
	for (unsigned int b = p->plen; b < xb_family_bits(p->family); b++)
		last[b / 8] |= (__u8)(0x80 >> (b % 8));
}

/* Every boundary of every entry, every address of ranges around some entries, and random
 * addresses inside and outside. */
static void check_rules(const struct rules *r, const struct compiled *c, struct fuzz_rng *rng,
			struct tally *t)
{
	static const __u8 families[] = { XDPBAN_FAMILY_INET, XDPBAN_FAMILY_INET6 };

	for (size_t i = 0; i < r->n; i++) {
		const struct xb_prefix *p = &r->v[i].p;
		__u8 a[16], last[16];

		prefix_last(p, last);
		for (int d = -1; d <= 1; d++) {
			memcpy(a, p->addr, 16);
			addr_add(p->family, a, d);
			check_one(r, c, p->family, a, t);
			memcpy(a, last, 16);
			addr_add(p->family, a, d);
			check_one(r, c, p->family, a, t);
		}
		if (i % 4 == 0) { /* a range around the start, and one around the end */
			memcpy(a, p->addr, 16);
			addr_add(p->family, a, -RANGE / 2);
			for (int k = 0; k < RANGE; k++, addr_add(p->family, a, 1))
				check_one(r, c, p->family, a, t);
			memcpy(a, last, 16);
			addr_add(p->family, a, -RANGE / 2);
			for (int k = 0; k < RANGE; k++, addr_add(p->family, a, 1))
				check_one(r, c, p->family, a, t);
		}
		for (int k = 0; k < 64; k++) { /* inside */
			memcpy(a, p->addr, 16);
			for (unsigned int b = p->plen; b < xb_family_bits(p->family); b++)
				if (fuzz_rng_percent(rng, 50))
					a[b / 8] |= (__u8)(0x80 >> (b % 8));
			check_one(r, c, p->family, a, t);
		}
	}
	for (int k = 0; k < 2000; k++) { /* anywhere: mostly the default layer */
		__u8 family = families[k % 2], a[16] = {};

		for (int b = 0; b < 16; b++)
			a[b] = (__u8)fuzz_rng_next(rng);
		if (family == XDPBAN_FAMILY_INET)
			memset(a + 4, 0, 12);
		check_one(r, c, family, a, t);
	}
}

static void check_set(const struct rules *r, struct fuzz_rng *rng, const char *what,
		      struct compiled *keep)
{
	struct compiled c;
	struct tally t = { .what = what };

	compile_rules(r, &c);
	check_rules(r, &c, rng, &t);
	if (t.bad)
		fail_msg("%s: %lu of %lu addresses mismatched", what, t.bad, t.checked);
	if (keep)
		*keep = c;
	else
		compiled_free(&c);
}

/* ---- rule sets ---- */

static void rule(struct rules *r, const char *cidr, enum layer layer)
{
	char err[XB_ERRLEN];

	assert_true(r->n < sizeof(r->v) / sizeof(r->v[0]));
	if (xb_prefix_parse(cidr, &r->v[r->n].p, err, sizeof(err)))
		fail_msg("test prefix '%s': %s", cidr, err);
	r->v[r->n++].layer = layer;
	r->allow_list = r->allow_list || layer == L_ALLOW;
}

static enum outcome outcome_at(const struct compiled *c, bool allow_only, const char *text)
{
	struct xb_prefix p;
	char err[XB_ERRLEN];

	assert_int_equal(xb_prefix_parse(text, &p, err, sizeof(err)), 0);
	return data_path(c, allow_only, p.family, p.addr);
}

#define EXPECT(c, r, addr, want) assert_string_equal(outcome_name(outcome_at(c, (r)->allow_list, addr)), outcome_name(want))

/* zmap's precedence: a later layer over its whole prefix, whatever the lengths. */
static void zmap_precedence(void **state)
{
	struct fuzz_rng rng;
	struct rules r = {};
	struct compiled c;

	fuzz_rng_seed(&rng, base_seed());
	rule(&r, "10.0.0.0/8", L_ALLOW);
	rule(&r, "10.1.0.0/16", L_DENY);
	rule(&r, "10.1.2.0/24", L_ALLOW);     /* inside the deny: stays denied */
	rule(&r, "10.1.2.128/25", L_TRUSTED); /* inside that: trusted */
	rule(&r, "10.2.0.0/16", L_TRUSTED);
	rule(&r, "10.2.3.0/24", L_DENY);      /* inside trusted: stays trusted */
	rule(&r, "10.2.3.4", L_ALLOW);        /* and so does this */
	rule(&r, "10.3.0.0/16", L_ALLOW);     /* allowed twice over */
	rule(&r, "10.3.4.0/24", L_ALLOW);
	rule(&r, "10.4.0.0/16", L_ALLOW);     /* one prefix in three layers: trusted */
	rule(&r, "10.4.0.0/16", L_DENY);
	rule(&r, "10.4.0.0/16", L_TRUSTED);
	rule(&r, "10.5.0.0/16", L_ALLOW);     /* in two: the later */
	rule(&r, "10.5.0.0/16", L_DENY);
	rule(&r, "192.0.2.7", L_DENY);        /* denied, in no allow list */
	check_set(&r, &rng, "zmap precedence", &c);
	EXPECT(&c, &r, "10.9.9.9", GOES_ON);
	EXPECT(&c, &r, "10.1.2.3", DROP_DENY);
	EXPECT(&c, &r, "10.1.2.200", PASS_TRUSTED);
	EXPECT(&c, &r, "10.1.3.0", DROP_DENY);
	EXPECT(&c, &r, "10.2.3.4", PASS_TRUSTED);
	EXPECT(&c, &r, "10.3.4.5", GOES_ON);
	EXPECT(&c, &r, "10.4.1.1", PASS_TRUSTED);
	EXPECT(&c, &r, "10.5.1.1", DROP_DENY);
	EXPECT(&c, &r, "11.0.0.0", DROP_NOT_ALLOWED);
	EXPECT(&c, &r, "9.255.255.255", DROP_NOT_ALLOWED);
	EXPECT(&c, &r, "192.0.2.7", DROP_DENY);
	EXPECT(&c, &r, "192.0.2.8", DROP_NOT_ALLOWED);
	EXPECT(&c, &r, "2001:db8::1", DROP_NOT_ALLOWED); /* IPv6 has the default layer too */
	/* painted away: the allow /24 in the deny, the deny /24 and the allow /32 in trusted
	 * (not the allow /24 in an allow /16: one layer unites), 10.4/16 as allow and deny,
	 * 10.5/16 as allow, and the copies of those two allow entries in the second allow file
	 * (every third entry is in both) */
	assert_int_equal(c.painted, 8);
	compiled_free(&c);
}

static void ipv6_precedence(void **state)
{
	struct fuzz_rng rng;
	struct rules r = {};
	struct compiled c;

	fuzz_rng_seed(&rng, base_seed() + 1);
	rule(&r, "2001:db8::/32", L_ALLOW);
	rule(&r, "2001:db8:1::/48", L_DENY);
	rule(&r, "2001:db8:1:2::/64", L_ALLOW);       /* stays denied */
	rule(&r, "2001:db8:1:2::8/125", L_TRUSTED);   /* a hole */
	rule(&r, "2001:db8:2::/48", L_TRUSTED);
	rule(&r, "2001:db8:2:3::/64", L_DENY);        /* stays trusted */
	rule(&r, "2001:db9::/32", L_DENY);            /* in no allow list */
	rule(&r, "198.51.100.0/24", L_ALLOW);
	check_set(&r, &rng, "IPv6 precedence", &c);
	EXPECT(&c, &r, "2001:db8:5::1", GOES_ON);
	EXPECT(&c, &r, "2001:db8:1:2::1", DROP_DENY);
	EXPECT(&c, &r, "2001:db8:1:2::9", PASS_TRUSTED);
	EXPECT(&c, &r, "2001:db8:2:3::1", PASS_TRUSTED);
	EXPECT(&c, &r, "2001:db9::1", DROP_DENY);
	EXPECT(&c, &r, "2001:dba::1", DROP_NOT_ALLOWED);
	EXPECT(&c, &r, "198.51.100.1", GOES_ON);
	EXPECT(&c, &r, "198.51.101.1", DROP_NOT_ALLOWED);
	compiled_free(&c);
}

/* The mode's edges: an empty allow list is allow-only mode with nothing allowed; without an
 * allow list there is no default layer; a /1 allow list leaves the other half. */
static void mode_edges(void **state)
{
	struct fuzz_rng rng;
	struct rules empty = { .allow_list = true }, none = {}, half = {};
	struct compiled c;

	fuzz_rng_seed(&rng, base_seed() + 2);
	rule(&empty, "203.0.113.0/24", L_TRUSTED);
	check_set(&empty, &rng, "empty allow list", &c);
	EXPECT(&c, &empty, "203.0.113.9", PASS_TRUSTED);
	EXPECT(&c, &empty, "203.0.114.9", DROP_NOT_ALLOWED);
	EXPECT(&c, &empty, "::1", DROP_NOT_ALLOWED); /* the exemption is the data path's */
	compiled_free(&c);

	rule(&none, "203.0.113.0/24", L_DENY);
	rule(&none, "203.0.113.64/26", L_TRUSTED);
	check_set(&none, &rng, "no allow list", &c);
	EXPECT(&c, &none, "203.0.114.9", GOES_ON);
	for (size_t i = 0; i < c.set.n; i++)
		assert_int_not_equal(c.set.v[i].prefix.plen, 0);
	compiled_free(&c);

	rule(&half, "0.0.0.0/1", L_ALLOW);
	rule(&half, "8000::/1", L_ALLOW);
	rule(&half, "127.255.255.255", L_DENY);
	check_set(&half, &rng, "a /1 allowed", &c);
	EXPECT(&c, &half, "127.255.255.254", GOES_ON);
	EXPECT(&c, &half, "127.255.255.255", DROP_DENY);
	EXPECT(&c, &half, "128.0.0.0", DROP_NOT_ALLOWED);
	EXPECT(&c, &half, "8000::", GOES_ON);
	EXPECT(&c, &half, "7fff::", DROP_NOT_ALLOWED);
	compiled_free(&c);
}

/* A random prefix of the family: half the time on, inside or around an earlier rule, so the
 * layers overlap; otherwise inside a small region so they meet. */
static void random_rule(struct fuzz_rng *rng, struct rules *r, __u8 family)
{
	struct rule *e = &r->v[r->n];
	unsigned int bits = xb_family_bits(family), lo = family == XDPBAN_FAMILY_INET ? 8 : 16;
	const struct rule *near = NULL;

	memset(e, 0, sizeof(*e));
	e->p.family = family;
	for (size_t i = 0; r->n && i < 4 && !near; i++) {
		const struct rule *o = &r->v[fuzz_rng_below(rng, (__u32)r->n)];

		if (o->p.family == family && fuzz_rng_percent(rng, 50))
			near = o;
	}
	if (near) {
		memcpy(e->p.addr, near->p.addr, 16);
		e->p.plen = near->p.plen;
		if (fuzz_rng_percent(rng, 70)) /* inside: longer, random bits below */
			e->p.plen += fuzz_rng_below(rng, bits - e->p.plen + 1);
		else if (e->p.plen > lo) /* around: shorter */
			e->p.plen -= fuzz_rng_below(rng, e->p.plen - lo + 1);
	} else if (family == XDPBAN_FAMILY_INET) {
		memcpy(e->p.addr, (__u8[]){ 10, (__u8)fuzz_rng_below(rng, 4) }, 2);
		e->p.plen = lo + fuzz_rng_below(rng, bits - lo + 1);
	} else {
		memcpy(e->p.addr, (__u8[]){ 0x20, 0x01, 0x0d, 0xb8, 0, (__u8)fuzz_rng_below(rng, 4) },
		       6);
		e->p.plen = fuzz_rng_percent(rng, 30) ? lo + fuzz_rng_below(rng, 48 - lo)
						       : 48 + fuzz_rng_below(rng, bits - 48 + 1);
	}
	for (unsigned int b = 0; b < bits; b++) /* random bits below the parent, none past plen */
		if (b >= (near ? near->p.plen : 24) && b < e->p.plen && fuzz_rng_percent(rng, 50))
			e->p.addr[b / 8] |= (__u8)(0x80 >> (b % 8));
	for (unsigned int b = e->p.plen; b < 128; b++)
		e->p.addr[b / 8] &= (__u8)~(0x80 >> (b % 8));
	e->layer = (enum layer)(1 + fuzz_rng_below(rng, 3));
	r->n++;
}

static void random_rules(struct fuzz_rng *rng, struct rules *r, size_t n)
{
	memset(r, 0, sizeof(*r));
	r->allow_list = fuzz_rng_percent(rng, 80);
	for (size_t i = 0; i < n; i++) {
		random_rule(rng, r, i % 2 ? XDPBAN_FAMILY_INET6 : XDPBAN_FAMILY_INET);
		if (r->v[r->n - 1].layer == L_ALLOW && !r->allow_list)
			r->v[r->n - 1].layer = L_DENY + fuzz_rng_below(rng, 2);
	}
}

static void random_sets(void **state)
{
	unsigned long seen[4] = {};

	for (int round = 0; round < 24; round++) {
		__u64 seed = base_seed() + 100 + (__u64)round;
		struct fuzz_rng rng;
		struct rules r;
		char what[64];

		fuzz_rng_seed(&rng, seed);
		random_rules(&rng, &r, 20 + (size_t)fuzz_rng_below(&rng, 100));
		snprintf(what, sizeof(what), "random set %d, seed 0x%llx", round,
			 (unsigned long long)seed);
		{
			struct compiled c;
			struct tally t = { .what = what };

			compile_rules(&r, &c);
			check_rules(&r, &c, &rng, &t);
			compiled_free(&c);
			if (t.bad)
				fail_msg("%s: %lu of %lu addresses mismatched", what, t.bad,
					 t.checked);
			for (int o = 0; o < 4; o++)
				seen[o] += t.seen[o];
		}
	}
	for (int o = 0; o < 4; o++)
		if (!seen[o])
			fail_msg("the random sets never reached outcome %s", outcome_name(o));
}

/* ---- the real program ---- */

static struct dp g_dp;
static bool g_dp_open;

static enum outcome kernel_outcome(__u8 family, const __u8 *addr)
{
	static const enum xdpban_stat reasons[] = { XDPBAN_STAT_PASSED, XDPBAN_STAT_DROP_DENY,
						    XDPBAN_STAT_DROP_NOT_ALLOWED,
						    XDPBAN_STAT_PASSED_TRUSTED };
	struct xdpban_stat_value before[XDPBAN_STAT__MAX], after[XDPBAN_STAT__MAX];
	char src[INET6_ADDRSTRLEN];
	struct pkt_spec spec = { .src = src, .l4 = PKT_L4_UDP, .payload_len = 8 };
	unsigned char frame[256];
	struct pkt_layout at;
	__u32 action;
	int found = -1;

	inet_ntop(family == XDPBAN_FAMILY_INET ? AF_INET : AF_INET6, addr, src, sizeof(src));
	assert_int_equal(pkt_build(&spec, frame, sizeof(frame), &at), 0);
	assert_int_equal(dp_stats(&g_dp, before), 0);
	assert_int_equal(dp_run(&g_dp, frame, at.len, &action), 0);
	assert_int_equal(dp_stats(&g_dp, after), 0);
	for (int o = 0; o < 4; o++)
		if (after[reasons[o]].packets != before[reasons[o]].packets)
			found = o;
	assert_int_not_equal(found, -1);
	assert_int_equal(action, found == GOES_ON || found == PASS_TRUSTED ? XDP_PASS : XDP_DROP);
	return (enum outcome)found;
}

static void kernel_sets(void **state)
{
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;
	unsigned long seen[4] = {};

	if (!g_dp_open)
		skip();
	cfg.class_mask = XDPBAN_CLASS_MALFORMED; /* valid datagrams: only the policy decides */
	for (int round = 0; round < 6; round++) {
		__u64 seed = base_seed() + 1000 + (__u64)round;
		struct fuzz_rng rng;
		struct rules r;
		struct compiled c;
		unsigned long bad = 0;

		fuzz_rng_seed(&rng, seed);
		random_rules(&rng, &r, 40 + (size_t)fuzz_rng_below(&rng, 80));
		compile_rules(&r, &c);
		cfg.policy = r.allow_list ? XDPBAN_CFG_ALLOW_ONLY : 0;
		assert_int_equal(dp_set_config(&g_dp, &cfg), 0);
		assert_int_equal(dp_policy_compile(&g_dp, &c.set, NULL, NULL), 0);
		for (int k = 0; k < 1500; k++) {
			const struct xb_prefix *p = &r.v[fuzz_rng_below(&rng, (__u32)r.n)].p;
			__u8 a[16];
			enum outcome want, got;

			memcpy(a, p->addr, 16);
			for (unsigned int b = p->plen; b < xb_family_bits(p->family); b++)
				if (fuzz_rng_percent(&rng, 50))
					a[b / 8] |= (__u8)(0x80 >> (b % 8));
			if (k % 5 == 0) /* now and then just past the entry */
				addr_add(p->family, a, fuzz_rng_percent(&rng, 50) ? 1 : -1);
			want = definition(&r, p->family, a);
			got = kernel_outcome(p->family, a);
			seen[want]++;
			if (got != want && bad++ < SHOWN) {
				char text[INET6_ADDRSTRLEN];

				inet_ntop(p->family == XDPBAN_FAMILY_INET ? AF_INET : AF_INET6, a,
					  text, sizeof(text));
				printf("MISMATCH [kernel, seed 0x%llx] %s: definition %s, the program %s\n",
				       (unsigned long long)seed, text, outcome_name(want),
				       outcome_name(got));
			}
		}
		compiled_free(&c);
		if (bad)
			fail_msg("kernel round %d (seed 0x%llx): %lu mismatches", round,
				 (unsigned long long)seed, bad);
	}
	for (int o = 0; o < 4; o++)
		if (!seen[o])
			fail_msg("the kernel rounds never reached outcome %s", outcome_name(o));
}

static int group_setup(void **state)
{
	snprintf(g_dir, sizeof(g_dir), "/tmp/xdpban-test-allow.XXXXXX");
	if (!mkdtemp(g_dir))
		return -1;
	if (geteuid() == 0 && dp_can_load())
		g_dp_open = dp_open(&g_dp, NULL) == 0;
	return 0;
}

static int group_teardown(void **state)
{
	static const char *const names[] = { "allow-a", "allow-b", "deny", "trusted" };
	char path[128];

	for (size_t i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/%s", g_dir, names[i]);
		unlink(path);
	}
	rmdir(g_dir);
	if (g_dp_open)
		dp_close(&g_dp);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(zmap_precedence),
		cmocka_unit_test(ipv6_precedence),
		cmocka_unit_test(mode_edges),
		cmocka_unit_test(random_sets),
		cmocka_unit_test(kernel_sets),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests_name("allow", tests, group_setup, group_teardown);
}
