/* test_flat_kernel.c - the flat policy table in the real kernel: the XDP program and the report
 * program, loaded unpinned, with the policy written through user/lib/policy.h, against the
 * reference model (tests/harness/model.c), source by source.
 *
 *   - a table never compiled (all zero: a plain `ip link` load with bpftool-written policy)
 *     gives exactly the trie's verdicts, and so does a compiled one whose codes are all LOOKUP;
 *   - compiled random sets of several sizes, one after another (each compile a reload);
 *   - single changes after a compile (LOOKUP only), then a recompile;
 *   - the table really answers first: an entry written behind the module's back is not seen
 *     where a pure code covers it, and is seen once written through the module;
 *   - a reload observed at every step, with one trie update per syscall: at each step the data
 *     path agrees with the longest match over what the tries hold at that moment;
 *   - a bad set is refused with one line and changes nothing;
 *   - level 3 (IPv4 lines of /32 codes): sets heavy in /25../32 entries compiled, changed one
 *     entry at a time, recompiled and reloaded (also watched at every step); every line in the
 *     kernel must be exact for the tries at every check, and exactly the computed lines after
 *     a compile; a full level 3 leaves regions to the trie; a writer without the level-3 map
 *     turns level 3 off rather than leave a line stale.
 * Sources are random addresses (packet contents in BPF_PROG_TEST_RUN; nothing leaves the
 * machine). XDPBAN_FLAT_KERNEL_SOURCES=PCT checks PCT percent (1..100, default 100) of the
 * random sources of each check: tests/run.sh sets it for the ASan build, where their time
 * goes to the reference model's scan of every prefix for every source, and every compile,
 * table and line check still runs whole. Every frame is a valid UDP datagram and reports are disabled in the config, so no
 * source is ever counted: only the policy decides. Needs root; never pins or attaches.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "dp.h"
#include "model.h"
#include "pkt.h"
#include "pset.h"
#include "snapshot.h"
#include "xdpban_time.h"

#define BASE_SEED 0x78626b6c6174ull /* "xbklat" */
#define SHOWN 8

struct fx {
	struct dp dp;
	struct model model;
	struct fuzz_rng rng;
	__u64 seed;
	__u64 expired_ns, live_ns; /* times for timed entries, far from any boundary */
	unsigned int sources_pct;  /* XDPBAN_FLAT_KERNEL_SOURCES */
};

static struct xdpban_config quiet_config(void)
{
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;

	cfg.class_mask = XDPBAN_CLASS_MALFORMED; /* reports answer "disabled", count nothing */
	return cfg;
}

/* XDPBAN_FLAT_KERNEL_SOURCES as a percentage 1..100 (100 unset); 0 with a line if bad. */
static unsigned int sources_pct(void)
{
	const char *env = getenv("XDPBAN_FLAT_KERNEL_SOURCES");
	char *end;
	unsigned long pct;

	if (!env)
		return 100;
	pct = strtoul(env, &end, 10);
	if (*env && !*end && pct >= 1 && pct <= 100)
		return (unsigned int)pct;
	printf("XDPBAN_FLAT_KERNEL_SOURCES='%s': expected a percentage 1..100\n", env);
	return 0;
}

static int setup(void **state)
{
	struct xdpban_config cfg = quiet_config();
	const char *env = getenv("XDPBAN_FLAT_SEED");
	unsigned int pct = sources_pct();
	struct fx *f;

	*state = NULL;
	if (!pct)
		return -1;
	if (!dp_can_load())
		return 0; /* dp_can_load said why; each test skips */
	f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	f->sources_pct = pct;
	if (dp_open(&f->dp, NULL) || model_init(&f->model, 0, 0, 0) || dp_set_config(&f->dp, &cfg)) {
		free(f);
		return -1;
	}
	model_set_config(&f->model, &cfg);
	f->seed = env ? strtoull(env, NULL, 0) : BASE_SEED;
	fuzz_rng_seed(&f->rng, f->seed);
	f->expired_ns = 1;                             /* ran out just after boot */
	f->live_ns = dp_now_ns() + 3600 * NS_PER_SEC;    /* outlasts the test */
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	if (f) {
		dp_close(&f->dp);
		model_free(&f->model);
		free(f);
	}
	return 0;
}

static struct fx *need_fx(void **state)
{
	if (!*state)
		skip();
	return *state;
}

/* ---- one source through both programs ---- */

static void addr_text(__u8 family, const __u8 *addr, char *buf, size_t len)
{
	inet_ntop(family == XDPBAN_FAMILY_INET ? AF_INET : AF_INET6, addr, buf, len);
}

/* A valid UDP datagram from the source into frame; at->len is its length. */
static void source_frame(__u8 family, const __u8 *addr, unsigned char *frame, size_t size,
			 struct pkt_layout *at)
{
	char src[INET6_ADDRSTRLEN];
	struct pkt_spec spec = { .src = src, .l4 = PKT_L4_UDP, .payload_len = 8 };

	addr_text(family, addr, src, sizeof(src));
	assert_int_equal(pkt_build(&spec, frame, size, at), 0);
}

/* Whether the data path answers a valid UDP datagram from the source (the XDP program) and a
 * report on it (the report program) as the model does; *action and *status get the data
 * path's answers, want and want_rep the model's. */
static bool source_agrees(struct fx *f, struct model *m, __u8 family, const __u8 *addr,
			  __u32 *action, __u32 *status, struct model_verdict *want,
			  struct model_report_result *want_rep)
{
	unsigned char frame[256];
	struct pkt_layout at;
	struct xdpban_report_req rep;
	__u64 now;

	source_frame(family, addr, frame, sizeof(frame), &at);
	now = dp_now_ns();
	assert_int_equal(dp_run(&f->dp, frame, at.len, action), 0);
	assert_int_equal(model_packet(m, frame, at.len, now, want), 0);
	assert_int_equal(dp_report(&f->dp, family, addr, 1, &rep), 0);
	assert_int_equal(model_report(m, family, addr, 1, now, want_rep), 0);
	*status = rep.status;
	return *action == want->action && rep.status == want_rep->status;
}

/* The same, with the first SHOWN mismatches printed and all of them counted in *bad. */
static bool check_source(struct fx *f, struct model *m, __u8 family, const __u8 *addr,
			 const char *what, unsigned long *bad)
{
	char src[INET6_ADDRSTRLEN];
	struct model_verdict want;
	struct model_report_result want_rep;
	__u32 action, status;

	if (source_agrees(f, m, family, addr, &action, &status, &want, &want_rep))
		return true;
	addr_text(family, addr, src, sizeof(src));
	if ((*bad)++ < SHOWN)
		printf("MISMATCH [%s, seed 0x%llx] source %s: XDP action %u, model %u; report "
		       "status %u, model %u\n",
		       what, (unsigned long long)f->seed, src, action, want.action, status,
		       want_rep.status);
	return false;
}

/* The verdict slots of the statistics must have grown exactly as the model's. */
static void check_stats(struct fx *f, const struct model *m, const char *what,
			unsigned long *bad)
{
	struct xdpban_stat_value got[XDPBAN_STAT__MAX];

	assert_int_equal(dp_stats(&f->dp, got), 0);
	for (int i = 0; i < XDPBAN_STAT__VERDICTS; i++)
		if (got[i].packets != m->stats[i].packets && (*bad)++ < SHOWN)
			printf("MISMATCH [%s] stat %d: kernel %llu packets, model %llu\n", what, i,
			       (unsigned long long)got[i].packets,
			       (unsigned long long)m->stats[i].packets);
}

/* n, scaled to XDPBAN_FLAT_KERNEL_SOURCES percent: the random sources a check sends. */
static unsigned int scaled(const struct fx *f, unsigned int n)
{
	unsigned int k = n * f->sources_pct / 100;

	return k ? k : 1;
}

/* scaled(n) random sources (half inside entries of s), both families unless `family` names
 * one. */
static unsigned long check_sources(struct fx *f, struct model *m, const struct xb_policy_set *s,
				   __u8 family, unsigned int n, const char *what)
{
	unsigned long bad = 0;

	n = scaled(f, n);
	assert_int_equal(dp_stats_reset(&f->dp), 0);
	memset(m->stats, 0, sizeof(m->stats));
	for (unsigned int i = 0; i < n; i++) {
		__u8 fam = family ? family
				  : fuzz_rng_percent(&f->rng, 50) ? XDPBAN_FAMILY_INET
								  : XDPBAN_FAMILY_INET6;
		__u8 addr[16];

		pset_address(&f->rng, s, fam, addr);
		check_source(f, m, fam, addr, what, &bad);
	}
	check_stats(f, m, what, &bad);
	return bad;
}

/* ---- sets and tables ---- */

static void draw(struct fx *f, struct pset_shape shape, struct xb_policy_set *s)
{
	shape.expired_ns = f->expired_ns;
	shape.live_ns = f->live_ns;
	assert_int_equal(pset_random(&f->rng, &shape, s), 0);
}

static void mirror(struct fx *f, const struct xb_policy_set *s)
{
	assert_int_equal(pset_to_model(s, &f->model), 0);
}

/* Copies the live table of a family: XDPBAN_FLAT_ENTRIES words, the codes and the guard. */
static void read_table(struct fx *f, __u8 family, __u64 *words)
{
	assert_int_equal(snapshot_flat_table(&f->dp.maps, family, words), 0);
}

/* The guard a compile through the full maps leaves: both families have lines. */
static __u64 guard_of(__u8 family)
{
	(void)family;
	return XDPBAN_FLAT_COMPILED_L3;
}

static int line_cmp(const void *a, const void *b)
{
	__u32 x = ((const struct xb_flat_line *)a)->region, y = ((const struct xb_flat_line *)b)->region;

	return x < y ? -1 : x > y;
}

/* compare_lines for the IPv6 lines of xdpban_flat6x. */
static unsigned long compare_lines6(struct fx *f, const struct xb_policy_set *s, bool exact,
				    const char *what)
{
	struct xb_flat6_line *live, *want;
	size_t nlive, nwant;
	unsigned long bad = 0;

	assert_int_equal(xb_flat6_lines_read(&f->dp.maps, &live, &nlive), 0);
	assert_int_equal(xb_flat6_lines_build(s->v, s->n, &want, &nwant), 0);
	for (size_t i = 0; i < nlive; i++) {
		const struct xb_flat6_line *w = xb_flat6_lines_find(want, nwant, live[i].key);

		if ((!w || memcmp(&w->line, &live[i].line, sizeof(w->line))) && bad++ < SHOWN)
			printf("MISMATCH [%s] IPv6 line %016llx: %s\n", what,
			       (unsigned long long)live[i].key, w ? "codes differ" : "should not be there");
	}
	if (exact && nlive != nwant && bad++ < SHOWN)
		printf("MISMATCH [%s] %zu IPv6 lines in the kernel, %zu computed\n", what, nlive,
		       nwant);
	free(live);
	free(want);
	return bad;
}

/* The permanent IPv6 /128 entry of s at the host key k, or NULL. */
static const struct xb_policy_entry *host_entry(const struct xb_policy_set *s,
						const struct xdpban_host6_key *k)
{
	__u64 hi = htobe64(k->hi), lo = htobe64(k->lo);

	for (size_t i = 0; i < s->n; i++) {
		const struct xb_prefix *p = &s->v[i].prefix;

		if (p->family == XDPBAN_FAMILY_INET6 && p->plen == 128 && !s->v[i].policy.expires_ns &&
		    !memcmp(p->addr, &hi, 8) && !memcmp(p->addr + 8, &lo, 8))
			return &s->v[i];
	}
	return NULL;
}

/* The IPv6 hosts of xdpban_host6 against s, as compare_lines6 does for the lines: each entry
 * must be a permanent /128 of s with its code (the data path trusts any it finds); with
 * `exact`, every such /128 must be there, as far as the map has room. */
static unsigned long compare_hosts6(struct fx *f, const struct xb_policy_set *s, bool exact,
				    const char *what)
{
	struct xb_h6_host *live;
	size_t nlive, nwant = 0;
	unsigned long bad = 0;
	__u32 room;

	assert_int_equal(xb_h6_read(&f->dp.maps, &live, &nlive), 0);
	assert_int_equal(xb_map_capacity(f->dp.maps.host6, &room), 0);
	for (size_t i = 0; i < nlive; i++) {
		const struct xb_policy_entry *e = host_entry(s, &live[i].key);

		if ((!e || xdpban_flat_code_of_verdict(e->policy.verdict) != live[i].code) &&
		    bad++ < SHOWN)
			printf("MISMATCH [%s] IPv6 host %016llx%016llx: %s\n", what,
			       (unsigned long long)live[i].key.hi, (unsigned long long)live[i].key.lo,
			       e ? "code differs" : "should not be there");
	}
	for (size_t i = 0; i < s->n; i++)
		nwant += s->v[i].prefix.family == XDPBAN_FAMILY_INET6 &&
			 s->v[i].prefix.plen == 128 && !s->v[i].policy.expires_ns;
	if (exact && nlive != (nwant < room ? nwant : room) && bad++ < SHOWN)
		printf("MISMATCH [%s] %zu IPv6 hosts in the kernel, %zu permanent /128 entries\n",
		       what, nlive, nwant);
	free(live);
	return bad;
}

/* The lines in the kernel against the lines of s (both families): each must be exact at every instant (the
 * data path trusts any line it finds); with `exact`, the kernel must hold all of them (and no
 * other). Returns the lines that break that. */
static unsigned long compare_lines(struct fx *f, const struct xb_policy_set *s, bool exact,
				   const char *what)
{
	struct { struct xb_flat_line *v; size_t n; } live;
	struct xb_flat_line *want;
	size_t nwant;
	unsigned long bad = 0;

	assert_int_equal(xb_flat_lines_read(&f->dp.maps, &live.v, &live.n), 0);
	assert_int_equal(xb_flat_lines_build(s->v, s->n, &want, &nwant), 0);
	for (size_t i = 0; i < live.n; i++) {
		const struct xb_flat_line *w =
			nwant ? bsearch(&live.v[i], want, nwant, sizeof(*want), line_cmp) : NULL;

		if ((!w || memcmp(&w->line, &live.v[i].line, sizeof(w->line))) && bad++ < SHOWN)
			printf("MISMATCH [%s] line of %u.%u.%u.0/24: %s\n", what,
			       live.v[i].region >> 16, (live.v[i].region >> 8) & 0xff,
			       live.v[i].region & 0xff, w ? "codes differ" : "should not be there");
	}
	if (exact && live.n != nwant && bad++ < SHOWN)
		printf("MISMATCH [%s] %zu lines in the kernel, %zu computed\n", what, live.n, nwant);
	free(live.v);
	free(want);
	return bad + compare_lines6(f, s, exact, what) + compare_hosts6(f, s, exact, what);
}

/* Live codes of a family against the exact codes of s: every pure live code must be exact;
 * with `exact`, every code must be, and the guard must let the data path read them. Returns
 * the codes that break that. */
static unsigned long compare_table(struct fx *f, const struct xb_policy_set *s, __u8 family,
				   bool exact, const char *what)
{
	__u64 *live = malloc(XDPBAN_FLAT_ENTRIES * sizeof(*live));
	__u64 *want = malloc(XDPBAN_FLAT_WORDS * sizeof(*want));
	unsigned long bad = 0;

	assert_non_null(live);
	assert_non_null(want);
	read_table(f, family, live);
	assert_int_equal(xb_flat_build(s->v, s->n, family, want), 0);
	if (exact && live[XDPBAN_FLAT_GUARD] != guard_of(family) && bad++ < SHOWN)
		printf("MISMATCH [%s] IPv%u guard %llx: the codes are not in force\n", what, family,
		       (unsigned long long)live[XDPBAN_FLAT_GUARD]);
	for (__u32 w = 0; w < XDPBAN_FLAT_WORDS; w++) {
		for (__u32 slot = 0; slot < XDPBAN_FLAT_CODES_PER_WORD; slot++) {
			__u32 got = (live[w] >> (2 * slot)) & 3, code = (want[w] >> (2 * slot)) & 3;

			if (got == code || (!exact && got == XDPBAN_FLAT_LOOKUP))
				continue;
			if (bad++ < SHOWN)
				printf("MISMATCH [%s] IPv%u word %u slot %u: live code %u, exact %u\n",
				       what, family, w, slot, got, code);
		}
	}
	free(live);
	free(want);
	return bad;
}

static bool table_is_zero(struct fx *f, __u8 family)
{
	__u64 *live = malloc(XDPBAN_FLAT_ENTRIES * sizeof(*live));
	bool zero = true;

	assert_non_null(live);
	read_table(f, family, live);
	for (__u32 w = 0; w < XDPBAN_FLAT_ENTRIES && zero; w++)
		zero = live[w] == 0;
	free(live);
	return zero;
}

/* ---- tests ---- */

/* As `ip link` plus bpftool would leave it: entries straight in the tries, the table never
 * compiled. LOOKUP everywhere sends every source to the trie. */
static void uncompiled_table_gives_the_lpm_verdicts(void **state)
{
	struct fx *f = need_fx(state);
	struct xb_policy_set s = {};
	unsigned long bad;

	draw(f, (struct pset_shape)PSET_SHAPE(XDPBAN_FAMILY_INET, 3000, 8, 32, "", 5), &s);
	draw(f, (struct pset_shape)PSET_SHAPE(XDPBAN_FAMILY_INET6, 1000, 8, 64, "", 5), &s);
	for (size_t i = 0; i < s.n; i++) {
		union xb_lpm_key key;

		xb_lpm_key_make(&s.v[i].prefix, &key);
		assert_int_equal(bpf_map_update_elem(xb_policy_fd(&f->dp.maps, s.v[i].prefix.family),
						     &key, &s.v[i].policy, BPF_ANY), 0);
	}
	mirror(f, &s);
	assert_true(table_is_zero(f, XDPBAN_FAMILY_INET));
	assert_true(table_is_zero(f, XDPBAN_FAMILY_INET6));
	bad = check_sources(f, &f->model, &s, 0, 6000, "never compiled");
	printf("never compiled: %zu prefixes, %u sources, %lu mismatches\n", s.n, scaled(f, 6000),
	       bad);
	assert_int_equal(bad, 0);
	xb_policy_set_free(&s);
}

/* LOOKUP itself, with the guard set: a compiled table whose codes are all LOOKUP (as every
 * code may be at any time) sends every source through every level and the trie. */
static void lookup_codes_give_the_lpm_verdicts(void **state)
{
	struct fx *f = need_fx(state);
	struct xb_policy_set s = {};
	unsigned long bad;

	draw(f, (struct pset_shape)PSET_SHAPE(XDPBAN_FAMILY_INET, 3000, 8, 32, "", 5), &s);
	draw(f, (struct pset_shape)PSET_SHAPE(XDPBAN_FAMILY_INET6, 1000, 8, 64, "", 5), &s);
	assert_int_equal(dp_policy_compile(&f->dp, &s, NULL, NULL), 0);
	for (int i = 0; i < 2; i++) {
		__u8 family = i ? XDPBAN_FAMILY_INET6 : XDPBAN_FAMILY_INET;
		struct xb_flat t;

		assert_int_equal(xb_flat_open(&t, &f->dp.maps, family), 0);
		assert_true(t.words[XDPBAN_FLAT_GUARD] == guard_of(family));
		memset(t.words, 0, XDPBAN_FLAT_WORDS * sizeof(__u64)); /* the codes, not the guard */
		xb_flat_close(&t);
	}
	mirror(f, &s);
	bad = check_sources(f, &f->model, &s, 0, 6000, "all LOOKUP");
	printf("all LOOKUP: %zu prefixes, %u sources, %lu mismatches\n", s.n, scaled(f, 6000), bad);
	assert_int_equal(bad, 0);
	xb_policy_set_free(&s);
}

/* Compiles a set (a reload of whatever the tries held) and holds it to the model. */
static void compile_and_check(struct fx *f, const struct xb_policy_set *s, __u8 family,
			      unsigned int sources, const char *what)
{
	struct xb_compile_result res;
	unsigned long bad;
	int fi = family == XDPBAN_FAMILY_INET ? 0 : 1;

	assert_int_equal(dp_policy_compile(&f->dp, s, NULL, &res), 0);
	assert_int_equal(res.entries, s->n);
	mirror(f, s);
	bad = compare_table(f, s, XDPBAN_FAMILY_INET, true, what);
	bad += compare_table(f, s, XDPBAN_FAMILY_INET6, true, what);
	bad += compare_lines(f, s, true, what);
	bad += check_sources(f, &f->model, s, family, sources, what);
	printf("%s: %zu prefixes (%zu written, %zu removed), pure regions %u of 65536 /16, "
	       "%u of 4194304 /22 and %u of 16777216 /24, %u lines, %u sources, %lu mismatches\n",
	       what, s->n, res.written, res.removed, res.pure_l1[fi], res.pure_mid[fi],
	       res.pure_l2[fi], res.lines4, scaled(f, sources), bad);
	assert_int_equal(bad, 0);
	/* every level must be in play, or this test would not test it */
	assert_true(res.pure_l1[fi] > 0 && res.pure_mid[fi] > 0 && res.pure_l2[fi] > 0);
}

/* Random sets of several sizes, each compiled over the one before. */
static void compiled_sets_match_the_model(void **state)
{
	static const struct {
		struct pset_shape shape;
		const char *what;
	} rounds[] = {
		{ PSET_SHAPE(XDPBAN_FAMILY_INET, 16, 8, 32, "", 10), "IPv4, 16" },
		{ PSET_SHAPE(XDPBAN_FAMILY_INET, 1000, 8, 32, "", 5), "IPv4, 1000" },
		{ PSET_SHAPE(XDPBAN_FAMILY_INET, 20000, 8, 32, "", 2), "IPv4, 20000" },
		{ PSET_SHAPE(XDPBAN_FAMILY_INET, 2000, 12, 32, "10.16.0.0/12", 5), "IPv4, crowded" },
		{ PSET_SHAPE(XDPBAN_FAMILY_INET, 5000, 25, 32, "", 2), "IPv4, 5000 /25../32" },
		{ PSET_SHAPE(XDPBAN_FAMILY_INET, 3000, 22, 32, "10.16.0.0/16", 3), "IPv4, /22../32 crowded" },
		{ PSET_SHAPE(XDPBAN_FAMILY_INET6, 16, 8, 64, "", 10), "IPv6, 16" },
		{ PSET_SHAPE(XDPBAN_FAMILY_INET6, 2000, 16, 64, "2001::/16", 5), "IPv6, 2000" },
	};
	struct fx *f = need_fx(state);

	for (size_t i = 0; i < sizeof(rounds) / sizeof(rounds[0]); i++) {
		struct xb_policy_set s = {};

		draw(f, rounds[i].shape, &s);
		compile_and_check(f, &s, rounds[i].shape.family, 3000, rounds[i].what);
		xb_policy_set_free(&s);
	}
}

/* Replaces s's entry at p (or adds it) in the set. */
static void set_put(struct xb_policy_set *s, const struct xb_prefix *p,
		    const struct xdpban_policy *val)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i].prefix.family == p->family && s->v[i].prefix.plen == p->plen &&
		    !memcmp(s->v[i].prefix.addr, p->addr, sizeof(p->addr))) {
			s->v[i].policy = *val;
			return;
		}
	}
	assert_int_equal(xb_policy_set_add(s, p, val), 0);
}

static void set_del(struct xb_policy_set *s, size_t i)
{
	s->v[i] = s->v[--s->n];
}

/* After a compile, ban-like single changes (put, replace, delete) only ever set LOOKUP: the
 * verdicts stay right, and every code still pure is exact; a recompile makes it all exact. */
static void single_changes_then_recompile(void **state)
{
	struct fx *f = need_fx(state);
	struct xb_policy_set s = {}, extra = {};
	char err[XB_ERRLEN];
	unsigned long bad;

	draw(f, (struct pset_shape)PSET_SHAPE(XDPBAN_FAMILY_INET, 2000, 8, 32, "", 0), &s);
	draw(f, (struct pset_shape)PSET_SHAPE(XDPBAN_FAMILY_INET6, 500, 8, 64, "", 0), &s);
	assert_int_equal(dp_policy_compile(&f->dp, &s, NULL, NULL), 0);
	draw(f, (struct pset_shape)PSET_SHAPE(XDPBAN_FAMILY_INET, 150, 8, 32, "", 30), &extra);
	draw(f, (struct pset_shape)PSET_SHAPE(XDPBAN_FAMILY_INET6, 50, 8, 64, "", 30), &extra);
	for (size_t i = 0; i < extra.n; i++) { /* new entries, or new values of old ones */
		assert_int_equal(xb_policy_put(&f->dp.maps, &extra.v[i].prefix, &extra.v[i].policy,
					       BPF_ANY), 0);
		set_put(&s, &extra.v[i].prefix, &extra.v[i].policy);
	}
	for (int i = 0; i < 200 && s.n; i++) { /* and deletes */
		size_t victim = fuzz_rng_below(&f->rng, (__u32)s.n);

		assert_int_equal(xb_policy_delete(&f->dp.maps, &s.v[victim].prefix), 0);
		set_del(&s, victim);
	}
	/* a delete of what is gone already is refused, and harmless */
	assert_int_equal(xb_policy_delete(&f->dp.maps, &s.v[0].prefix), 0);
	assert_int_equal(xb_policy_delete(&f->dp.maps, &s.v[0].prefix), -ENOENT);
	set_del(&s, 0);
	mirror(f, &s);
	bad = compare_table(f, &s, XDPBAN_FAMILY_INET, false, "after single changes");
	bad += compare_table(f, &s, XDPBAN_FAMILY_INET6, false, "after single changes");
	bad += compare_lines(f, &s, false, "after single changes");
	bad += check_sources(f, &f->model, &s, 0, 5000, "after single changes");
	assert_int_equal(bad, 0);

	/* the tries are the truth: a recompile makes every code exact for them */
	assert_int_equal(xb_policy_recompile(&f->dp.maps, NULL, err, sizeof(err)), 0);
	bad = compare_table(f, &s, XDPBAN_FAMILY_INET, true, "recompiled");
	bad += compare_table(f, &s, XDPBAN_FAMILY_INET6, true, "recompiled");
	bad += compare_lines(f, &s, true, "recompiled");
	bad += check_sources(f, &f->model, &s, 0, 5000, "recompiled");
	assert_int_equal(bad, 0);
	xb_policy_set_free(&s);
	xb_policy_set_free(&extra);
}

/* ---- the table answers first ---- */

static void add(struct xb_policy_set *s, const char *cidr, __u32 verdict, __u32 list_id)
{
	struct xdpban_policy val = { .verdict = verdict, .list_id = list_id };
	struct xb_prefix p;

	assert_int_equal(dp_prefix(cidr, &p), 0);
	assert_int_equal(xb_policy_set_add(s, &p, &val), 0);
}

/* What the report program says of an address: the policy verdict, or NONE. The XDP program
 * must agree on the action for a valid datagram. */
static __u32 verdict_of(struct fx *f, const char *text)
{
	char src[INET6_ADDRSTRLEN];
	struct pkt_spec spec = { .src = src, .l4 = PKT_L4_UDP, .payload_len = 8 };
	struct xdpban_report_req rep;
	struct xb_prefix p;
	unsigned char frame[256];
	struct pkt_layout at;
	__u32 action, verdict;

	snprintf(src, sizeof(src), "%s", text);
	assert_int_equal(dp_prefix(text, &p), 0);
	assert_int_equal(dp_report(&f->dp, p.family, p.addr, 1, &rep), 0);
	verdict = rep.status == XDPBAN_REPORT_TRUSTED  ? XDPBAN_POLICY_TRUSTED
		  : rep.status == XDPBAN_REPORT_DENIED ? XDPBAN_POLICY_DENY
						       : XDPBAN_POLICY_NONE;
	assert_int_equal(pkt_build(&spec, frame, sizeof(frame), &at), 0);
	assert_int_equal(dp_run(&f->dp, frame, at.len, &action), 0);
	assert_int_equal(action, verdict == XDPBAN_POLICY_DENY ? XDP_DROP : XDP_PASS);
	return verdict;
}

/* Writes straight into a trie, as bpftool would: unsupported once the table is compiled. */
static void write_behind_the_back(struct fx *f, const char *cidr, __u32 verdict)
{
	struct xdpban_policy val = { .verdict = verdict, .list_id = 1 };
	union xb_lpm_key key;
	struct xb_prefix p;

	assert_int_equal(dp_prefix(cidr, &p), 0);
	xb_lpm_key_make(&p, &key);
	assert_int_equal(bpf_map_update_elem(xb_policy_fd(&f->dp.maps, p.family), &key, &val,
					     BPF_ANY), 0);
}

/* Proof that the data path reads the table before the trie: a pure code hides an entry that
 * bypassed policy.h; the same entry written through policy.h is seen at once (LOOKUP first),
 * its delete too, and a recompile restores the pure code. */
static void table_answers_before_the_trie(void **state)
{
	static const struct {
		const char *covering, *host;
	} cases[] = {
		{ "198.51.100.0/24", "198.51.100.7" }, /* level 2 answers */
		{ "2001::/16", "2001:db8::1" },        /* level 1 answers */
		{ "10.20.4.0/22", "10.20.5.7" },       /* the middle level answers */
		{ "2002:400::/22", "2002:500::9" },     /* in IPv6 too: its top 32 bits */
		{ "192.0.2.0/25", "192.0.2.9" },       /* a level-3 line answers */
	};
	struct fx *f = need_fx(state);
	struct xb_policy_set s = {};
	char err[XB_ERRLEN];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		add(&s, cases[i].covering, XDPBAN_POLICY_DENY, 1);
	assert_int_equal(dp_policy_compile(&f->dp, &s, NULL, NULL), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *host = cases[i].host;

		assert_int_equal(verdict_of(f, host), XDPBAN_POLICY_DENY);
		write_behind_the_back(f, host, XDPBAN_POLICY_TRUSTED);
		assert_int_equal(verdict_of(f, host), XDPBAN_POLICY_DENY); /* the table answered */
		assert_int_equal(dp_policy_add(&f->dp, host, XDPBAN_POLICY_TRUSTED), 0);
		assert_int_equal(verdict_of(f, host), XDPBAN_POLICY_TRUSTED);
		assert_int_equal(dp_policy_del(&f->dp, host), 0);
		assert_int_equal(verdict_of(f, host), XDPBAN_POLICY_DENY); /* the trie's entry */
		assert_int_equal(xb_policy_recompile(&f->dp.maps, NULL, err, sizeof(err)), 0);
		assert_int_equal(verdict_of(f, host), XDPBAN_POLICY_DENY);
	}
	assert_int_equal(verdict_of(f, "203.0.113.9"), XDPBAN_POLICY_NONE);
	assert_int_equal(compare_table(f, &s, XDPBAN_FAMILY_INET, true, "restored"), 0);
	assert_int_equal(compare_table(f, &s, XDPBAN_FAMILY_INET6, true, "restored"), 0);
	xb_policy_set_free(&s);
}

/* ---- a reload at every step ---- */

static int collect_entry(const struct xb_policy_entry *e, void *ctx)
{
	return xb_policy_set_add(ctx, &e->prefix, &e->policy);
}

struct reload_watch {
	struct fx *f;
	const struct xb_policy_set *probe; /* entries whose addresses are checked */
	struct model before, after;        /* the policy before the reload, and after it */
	unsigned long bad, steps;
	unsigned long mixed; /* sources answered neither as before nor as after */
	size_t done;    /* the trie changes the last step said were done */
	size_t changes; /* the totals the families' TRIE_DONE steps said */
	bool two_writers; /* a second thread writes part of each list, which no step counts */
};

/* The counts a step gives (one trie update per step here): none before the trie, one more at
 * each trie step (at least one, with a second writer), all of them from the end of the trie
 * on. */
static void watch_count(struct reload_watch *w, enum xb_compile_step step, size_t done,
			size_t total)
{
	if (step == XB_COMPILE_TOUCHED)
		assert_int_equal(done, 0);
	else if (step == XB_COMPILE_TRIE_STEP && w->two_writers)
		assert_true(done > w->done);
	else if (step == XB_COMPILE_TRIE_STEP)
		assert_int_equal(done, w->done + 1);
	else
		assert_int_equal(done, total);
	assert_true(done <= total);
	if (step == XB_COMPILE_TRIE_DONE)
		w->changes += total;
	w->done = done;
}

/* The statistics reason (which stands for the verdict) a model gives a valid datagram from
 * the source. */
static enum xdpban_stat model_reason(struct model *m, __u8 family, const __u8 *addr)
{
	unsigned char frame[256];
	struct pkt_layout at;
	struct model_verdict want;

	source_frame(family, addr, frame, sizeof(frame), &at);
	assert_int_equal(model_packet(m, frame, at.len, dp_now_ns(), &want), 0);
	return want.reason;
}

/* A model holding only the policy set s, under the config the fixture runs. Its counter and
 * ban tables are the smallest (a group each): under that config nothing is ever counted or
 * banned, so they stay empty and no verdict depends on their size, and a reload watched at
 * every step builds one model a step (full-size tables made that most of this test's time
 * under ASan, which fills and poisons every large block it hands out and takes back). */
static void policy_model(struct model *m, const struct xb_policy_set *s)
{
	struct xdpban_config cfg = quiet_config();

	assert_int_equal(model_init(m, 1, 1, 0), 0);
	model_set_config(m, &cfg);
	assert_int_equal(pset_to_model(s, m), 0);
}

/* With a second writer the tries change between a snapshot of them and a packet, so each
 * packet is held to the two ends only: the data path answers every source as the policy did
 * before the reload or as it will after it. */
static void watch_ends(struct reload_watch *w, const char *what)
{
	for (size_t i = 0; i < w->probe->n; i++) {
		const struct xb_policy_entry *e = &w->probe->v[i];
		struct model_report_result want_rep;
		struct model_verdict want;
		__u32 action, status;
		char src[INET6_ADDRSTRLEN];
		__u8 addr[16];

		pset_address_in(&w->f->rng, &e->prefix, addr);
		if (source_agrees(w->f, &w->before, e->prefix.family, addr, &action, &status, &want,
				  &want_rep) ||
		    source_agrees(w->f, &w->after, e->prefix.family, addr, &action, &status, &want,
				  &want_rep) ||
		    w->mixed++ >= SHOWN)
			continue;
		addr_text(e->prefix.family, addr, src, sizeof(src));
		printf("MIXED [%s, seed 0x%llx] source %s: XDP action %u, report status %u: neither "
		       "the old nor the new verdict\n",
		       what, (unsigned long long)w->f->seed, src, action, status);
	}
}

/* At each step: what the data path says of an address inside every entry of either set must
 * be the longest match over what the tries hold right now, and (the reload is atomic per
 * source, policy.h) what the policy said of it before the reload or what it says after. */
static void watch_step(__u8 family, enum xb_compile_step step, size_t done, size_t total,
		       void *ctx)
{
	struct reload_watch *w = ctx;
	struct xb_policy_set now = {};
	struct model m;
	char what[64];

	watch_count(w, step, done, total);
	snprintf(what, sizeof(what), "reload IPv%u step %d (#%lu)", family, step, w->steps);
	if (w->two_writers) { /* the tries move under a snapshot: hold the data path to both ends */
		watch_ends(w, what);
		w->steps++;
		return;
	}
	assert_int_equal(xb_policy_foreach(&w->f->dp.maps, collect_entry, &now), 0);
	policy_model(&m, &now);
	for (size_t i = 0; i < w->probe->n; i++) {
		const struct xb_policy_entry *e = &w->probe->v[i];
		enum xdpban_stat reason;
		__u8 addr[16];

		pset_address_in(&w->f->rng, &e->prefix, addr);
		if (!check_source(w->f, &m, e->prefix.family, addr, what, &w->bad))
			continue; /* counted in bad */
		reason = model_reason(&m, e->prefix.family, addr);
		if (reason != model_reason(&w->before, e->prefix.family, addr) &&
		    reason != model_reason(&w->after, e->prefix.family, addr) && w->mixed++ < SHOWN) {
			char src[INET6_ADDRSTRLEN];

			addr_text(e->prefix.family, addr, src, sizeof(src));
			printf("MIXED [%s, seed 0x%llx] source %s: neither the old nor the new verdict\n",
			       what, (unsigned long long)w->f->seed, src);
		}
	}
	model_free(&m);
	xb_policy_set_free(&now);
	w->steps++;
}

static bool same_prefix(const struct xb_prefix *a, const struct xb_prefix *b)
{
	return a->family == b->family && a->plen == b->plen &&
	       !memcmp(a->addr, b->addr, sizeof(a->addr));
}

static bool set_names(const struct xb_policy_set *s, const struct xb_prefix *p)
{
	for (size_t i = 0; i < s->n; i++)
		if (same_prefix(&s->v[i].prefix, p))
			return true;
	return false;
}

/* The lists of the next reload: some of a's list entries go, some change verdict, expiry or
 * only their list, new ones come; a's manual bans are not the lists' and are left out. */
static void next_lists(struct fx *f, const struct xb_policy_set *a, struct xb_policy_set *b)
{
	for (size_t i = 0; i < a->n; i++) {
		struct xdpban_policy val = a->v[i].policy;
		__u32 r = fuzz_rng_below(&f->rng, 100);

		if (val.list_id == XDPBAN_LIST_MANUAL_BAN || r < 20)
			continue;
		if (r < 40)
			val.verdict = val.verdict == XDPBAN_POLICY_DENY ? XDPBAN_POLICY_TRUSTED
									 : XDPBAN_POLICY_DENY;
		else if (r < 50)
			val.expires_ns = val.expires_ns ? 0 : f->live_ns;
		else if (r < 55)
			val.list_id = 2; /* written again, but no code can change */
		assert_int_equal(xb_policy_set_add(b, &a->v[i].prefix, &val), 0);
	}
	draw(f, (struct pset_shape)PSET_SHAPE(XDPBAN_FAMILY_INET, 20, 12, 32, "10.16.0.0/12", 10), b);
	draw(f, (struct pset_shape)PSET_SHAPE(XDPBAN_FAMILY_INET6, 10, 16, 40, "2001::/16", 10), b);
}

/* A reload with one trie update per syscall, watched at every step (reload_watch), from a
 * first IPv4 set of the given shape, by one trie writer or two (policy.h). */
static void reload_watched(struct fx *f, struct pset_shape first4, __u32 writers)
{
	struct xb_policy_set a = {}, b = {}, final = {}, probe = {};
	struct reload_watch w = { .f = f, .probe = &probe, .two_writers = writers == 2 };
	const struct xb_compile_opts opts = { .keep = xb_keep_manual_bans, .observe = watch_step,
					      .ctx = &w, .batch = 1, .writers = writers };
	struct xb_compile_result res;
	char err[XB_ERRLEN] = "";
	size_t kept = 0;
	unsigned long bad;

	draw(f, first4, &a);
	draw(f, (struct pset_shape)PSET_SHAPE(XDPBAN_FAMILY_INET6, 20, 16, 40, "2001::/16", 10), &a);
	for (size_t i = 0; i < a.n; i += 8) { /* some are manual bans, which a reload keeps */
		a.v[i].policy.list_id = XDPBAN_LIST_MANUAL_BAN;
		a.v[i].policy.verdict = XDPBAN_POLICY_DENY;
	}
	assert_int_equal(dp_policy_compile(&f->dp, &a, NULL, NULL), 0);
	next_lists(f, &a, &b);
	for (size_t i = 0; i < b.n; i++)
		assert_int_equal(xb_policy_set_add(&final, &b.v[i].prefix, &b.v[i].policy), 0);
	for (size_t i = 0; i < a.n; i++) {
		assert_int_equal(xb_policy_set_add(&probe, &a.v[i].prefix, &a.v[i].policy), 0);
		if (a.v[i].policy.list_id == XDPBAN_LIST_MANUAL_BAN && !set_names(&b, &a.v[i].prefix)) {
			assert_int_equal(xb_policy_set_add(&final, &a.v[i].prefix, &a.v[i].policy), 0);
			kept++;
		}
	}
	for (size_t i = 0; i < b.n; i++)
		assert_int_equal(xb_policy_set_add(&probe, &b.v[i].prefix, &b.v[i].policy), 0);

	policy_model(&w.before, &a);
	policy_model(&w.after, &final);
	assert_int_equal(xb_policy_compile(&f->dp.maps, &b, &opts, &res, err, sizeof(err)), 0);
	printf("reload: %zu entries before, %zu after (%zu written, %zu removed, %zu kept), %lu "
	       "steps watched, %lu mismatches, %lu sources neither as before nor as after\n",
	       a.n, final.n, res.written, res.removed, res.kept, w.steps, w.bad, w.mixed);
	assert_int_equal(w.bad, 0);
	assert_int_equal(w.mixed, 0);
	model_free(&w.before);
	model_free(&w.after);
	if (writers == 2) /* the second writer's changes are nobody's step */
		assert_true(w.steps < res.written + res.removed + 4 * 2);
	else /* a step a change, and 4 fixed steps each */
		assert_int_equal(w.steps, res.written + res.removed + 4 * 2);
	assert_int_equal(w.changes, res.written + res.removed);
	assert_true(res.written + res.removed >= 20);
	assert_int_equal(res.kept, kept);
	assert_int_equal(res.entries, final.n);
	mirror(f, &final);
	bad = compare_table(f, &final, XDPBAN_FAMILY_INET, true, "reloaded");
	bad += compare_table(f, &final, XDPBAN_FAMILY_INET6, true, "reloaded");
	bad += compare_lines(f, &final, true, "reloaded");
	bad += check_sources(f, &f->model, &final, 0, 3000, "reloaded");
	assert_int_equal(bad, 0);
	xb_policy_set_free(&a);
	xb_policy_set_free(&b);
	xb_policy_set_free(&final);
	xb_policy_set_free(&probe);
}

static void reload_is_right_at_every_step(void **state)
{
	reload_watched(need_fx(state),
		       (struct pset_shape)PSET_SHAPE(XDPBAN_FAMILY_INET, 60, 12, 32, "10.16.0.0/12", 10),
		       1);
}

/* The same from a set of /24../32 entries packed into a /20: most regions have lines, and the
 * reload's changes land in them. */
static void reload_of_long_prefixes_is_right_at_every_step(void **state)
{
	reload_watched(need_fx(state),
		       (struct pset_shape)PSET_SHAPE(XDPBAN_FAMILY_INET, 80, 24, 32, "10.16.0.0/20", 10),
		       1);
}

/* The same with two trie writers, each on its side of the plan's split (policy_write.c), while
 * the steps watch the data path: the second writer's changes land between any two steps. */
static void reload_by_two_writers_is_right_at_every_step(void **state)
{
	reload_watched(need_fx(state),
		       (struct pset_shape)PSET_SHAPE(XDPBAN_FAMILY_INET, 80, 24, 32, "10.16.0.0/20", 10),
		       2);
}

/* A /8 that changes verdict over thousands of entries inside it, one of which holds the
 * probed sources and keeps their verdict (tests/e2e/e2e_reload.sh on the wire): trusted by the /8
 * before, by a /27 inside a denied /8 after, and back. */
static void covering_change_is_atomic(void **state)
{
	struct fx *f = need_fx(state);
	struct xb_policy_set a = {}, b = {}, probe = {}, bulk = {};
	struct reload_watch w = { .f = f, .probe = &probe };
	const struct xb_compile_opts opts = { .observe = watch_step, .ctx = &w, .batch = 1 };
	struct xb_compile_result res;
	char err[XB_ERRLEN] = "";

	add(&a, "198.0.0.0/8", XDPBAN_POLICY_TRUSTED, 1);
	add(&b, "198.0.0.0/8", XDPBAN_POLICY_DENY, 1);
	add(&b, "198.51.100.0/27", XDPBAN_POLICY_TRUSTED, 1);
	draw(f, (struct pset_shape)PSET_SHAPE(XDPBAN_FAMILY_INET, 400, 9, 32, "198.0.0.0/8", 0), &bulk);
	for (size_t i = 0; i < bulk.n; i++) {
		struct xdpban_policy val = { .verdict = XDPBAN_POLICY_DENY, .list_id = 1 };
		const __u8 *x = bulk.v[i].prefix.addr;

		if (bulk.v[i].prefix.plen > 27 && x[1] == 51 && x[2] == 100 && x[3] < 32)
			continue; /* painted out by the trusted /27 */
		if (bulk.v[i].prefix.plen == 8)
			continue;
		assert_int_equal(xb_policy_set_add(&b, &bulk.v[i].prefix, &val), 0);
	}
	for (int i = 0; i < 8; i++)
		add(&probe, "198.51.100.0/27", XDPBAN_POLICY_TRUSTED, 1);
	for (int round = 0; round < 2; round++) {
		const struct xb_policy_set *from = round ? &b : &a, *to = round ? &a : &b;

		assert_int_equal(dp_policy_compile(&f->dp, from, NULL, NULL), 0);
		policy_model(&w.before, from);
		policy_model(&w.after, to);
		assert_int_equal(xb_policy_compile(&f->dp.maps, to, &opts, &res, err, sizeof(err)), 0);
		printf("covering change %d: %lu steps, %lu mismatches, %lu mixed\n", round, w.steps,
		       w.bad, w.mixed);
		model_free(&w.before);
		model_free(&w.after);
		assert_int_equal(w.bad, 0);
		assert_int_equal(w.mixed, 0);
		w.done = 0;
	}
	xb_policy_set_free(&a);
	xb_policy_set_free(&b);
	xb_policy_set_free(&probe);
	xb_policy_set_free(&bulk);
}

/* ---- level 3 ---- */

/* A blocklist-like IPv4 set: mostly /25../32, a few shorter prefixes around them. */
static void draw_long(struct fx *f, struct xb_policy_set *s, const char *within)
{
	draw(f, (struct pset_shape)PSET_SHAPE(XDPBAN_FAMILY_INET, 3000, 25, 32, within, 0), s);
	draw(f, (struct pset_shape)PSET_SHAPE(XDPBAN_FAMILY_INET, 100, 16, 24, within, 5), s);
	pset_dedup(s);
}

/* The family's codes and both families' lines held to s, and 4000 sources of the family
 * (scaled). */
static unsigned long check_family(struct fx *f, __u8 family, const struct xb_policy_set *s,
				  bool exact, const char *what)
{
	unsigned long bad;

	mirror(f, s);
	bad = compare_table(f, s, family, exact, what);
	bad += compare_lines(f, s, exact, what);
	bad += check_sources(f, &f->model, s, family, 4000, what);
	printf("%s: %zu prefixes, %u IPv%u sources, %lu mismatches\n", what, s->n, scaled(f, 4000),
	       family, bad);
	return bad;
}

static unsigned long check_all(struct fx *f, const struct xb_policy_set *s, bool exact,
			       const char *what)
{
	return check_family(f, XDPBAN_FAMILY_INET, s, exact, what);
}

/* One entry through policy.h and into s, then everything held to the model. */
static void put_one(struct fx *f, struct xb_policy_set *s, const char *cidr, __u32 verdict,
		    __u64 expires_ns, const char *what)
{
	struct xdpban_policy val = { .verdict = verdict, .list_id = 1, .expires_ns = expires_ns };
	struct xb_prefix p;

	assert_int_equal(dp_prefix(cidr, &p), 0);
	assert_int_equal(xb_policy_put(&f->dp.maps, &p, &val, BPF_ANY), 0);
	set_put(s, &p, &val);
	assert_int_equal(check_all(f, s, false, what), 0);
}

/* The lines the kernel holds for a family. */
static __u32 lines_of(struct fx *f, __u8 family)
{
	struct xb_flat6_line *lines6 = NULL;
	struct xb_flat_line *lines = NULL;
	size_t n;

	if (family == XDPBAN_FAMILY_INET)
		assert_int_equal(xb_flat_lines_read(&f->dp.maps, &lines, &n), 0);
	else
		assert_int_equal(xb_flat6_lines_read(&f->dp.maps, &lines6, &n), 0);
	free(lines);
	free(lines6);
	return (__u32)n;
}

static __u32 lines_in_kernel(struct fx *f)
{
	return lines_of(f, XDPBAN_FAMILY_INET);
}

/* Compile, then single changes of every kind in regions that have lines (a /32 beside one, a
 * longer prefix inside one, covering prefixes of /20, /16 and /8 that take many lines at once,
 * a timed entry, deletes), each checked at once; then a recompile and a reload. */
static void long_prefixes_answered_at_level_3(void **state)
{
	struct fx *f = need_fx(state);
	struct xb_policy_set s = {}, next = {};
	struct xb_compile_result res;
	char err[XB_ERRLEN], cidr[64];
	__u32 before;

	draw_long(f, &s, "10.0.0.0/8");
	assert_int_equal(dp_policy_compile(&f->dp, &s, NULL, &res), 0);
	printf("compiled: %u lines, %u left to the trie for room\n", res.lines4, res.lines4_full);
	assert_true(res.lines4 > 1000);
	assert_int_equal(res.lines4_full, 0);
	assert_int_equal(lines_in_kernel(f), res.lines4);
	assert_int_equal(check_all(f, &s, true, "compiled /25../32"), 0);

	/* next to and inside entries that have lines */
	for (int i = 0; i < 20; i++) {
		const struct xb_prefix *p = &s.v[fuzz_rng_below(&f->rng, (__u32)s.n)].prefix;

		if (p->plen <= 24)
			continue;
		snprintf(cidr, sizeof(cidr), "%u.%u.%u.%u/%u", p->addr[0], p->addr[1], p->addr[2],
			 p->addr[3] ^ 1, 32);
		put_one(f, &s, cidr, i % 2 ? XDPBAN_POLICY_TRUSTED : XDPBAN_POLICY_NONE, 0,
			"a /32 beside a line's entry");
	}
	before = lines_in_kernel(f);
	put_one(f, &s, "10.1.16.0/20", XDPBAN_POLICY_DENY, 0, "a /20 over lines");
	put_one(f, &s, "10.2.0.0/16", XDPBAN_POLICY_TRUSTED, 0, "a /16 over lines");
	put_one(f, &s, "10.0.0.0/8", XDPBAN_POLICY_NONE, 0, "a /8 over every line");
	assert_true(lines_in_kernel(f) < before);
	put_one(f, &s, "10.3.3.16/28", XDPBAN_POLICY_DENY, f->live_ns, "a timed /28");
	for (int i = 0; i < 30 && s.n; i++) {
		size_t victim = fuzz_rng_below(&f->rng, (__u32)s.n);

		assert_int_equal(xb_policy_delete(&f->dp.maps, &s.v[victim].prefix), 0);
		set_del(&s, victim);
	}
	assert_int_equal(check_all(f, &s, false, "after deletes"), 0);

	assert_int_equal(xb_policy_recompile(&f->dp.maps, &res, err, sizeof(err)), 0);
	assert_int_equal(lines_in_kernel(f), res.lines4);
	assert_int_equal(check_all(f, &s, true, "recompiled"), 0);

	draw_long(f, &next, "10.0.0.0/9"); /* a reload: half the lines go, new ones come */
	assert_int_equal(dp_policy_compile(&f->dp, &next, NULL, &res), 0);
	assert_int_equal(lines_in_kernel(f), res.lines4);
	assert_int_equal(check_all(f, &next, true, "reloaded"), 0);
	xb_policy_set_free(&s);
	xb_policy_set_free(&next);
}

/* A level 3 of 16 lines: the compile fills it, leaves the other regions to the trie, says how
 * many, and every verdict stays right. */
static void full_level_3_leaves_regions_to_the_trie(void **state)
{
	struct fx *f = need_fx(state);
	const struct dp_opts small = { .flat4x_max = 16 };
	struct xb_policy_set s = {};
	struct xb_compile_result res;
	struct xb_flat_line *want;
	size_t nwant;

	dp_close(&f->dp);
	assert_int_equal(dp_open(&f->dp, &small), 0);
	{
		struct xdpban_config cfg = quiet_config();

		assert_int_equal(dp_set_config(&f->dp, &cfg), 0);
	}
	draw_long(f, &s, "");
	assert_int_equal(xb_flat_lines_build(s.v, s.n, &want, &nwant), 0);
	free(want);
	assert_int_equal(dp_policy_compile(&f->dp, &s, NULL, &res), 0);
	printf("full: %u lines written, %u regions left to the trie, %zu computed\n", res.lines4,
	       res.lines4_full, nwant);
	assert_true(res.lines4 <= 16 && res.lines4 > 0);
	assert_int_equal(res.lines4 + res.lines4_full, nwant);
	assert_int_equal(lines_in_kernel(f), res.lines4);
	mirror(f, &s);
	assert_int_equal(compare_table(f, &s, XDPBAN_FAMILY_INET, true, "full"), 0);
	assert_int_equal(compare_lines(f, &s, false, "full"), 0);
	assert_int_equal(check_sources(f, &f->model, &s, XDPBAN_FAMILY_INET, 4000, "full"), 0);
	xb_policy_set_free(&s);
}

/* A writer whose maps lack the level-3 fd (-1, or an fd that is not the map) cannot delete a
 * line: it turns level 3 off first, so a line made stale by its change is never read; the
 * next full compile turns it back on with exact lines. */
static void writer_without_level_3_turns_it_off(void **state)
{
	struct fx *f = need_fx(state);
	struct xb_maps blind = f->dp.maps;
	struct xb_policy_set s = {};
	struct xdpban_policy trusted = { .verdict = XDPBAN_POLICY_TRUSTED, .list_id = 1 };
	struct xb_prefix p;
	struct xb_flat t;
	char err[XB_ERRLEN];

	add(&s, "198.51.100.0/24", XDPBAN_POLICY_DENY, 1);
	add(&s, "198.51.100.128/25", XDPBAN_POLICY_NONE, 1);
	assert_int_equal(dp_policy_compile(&f->dp, &s, NULL, NULL), 0);
	assert_int_equal(lines_in_kernel(f), 1);
	assert_int_equal(verdict_of(f, "198.51.100.7"), XDPBAN_POLICY_DENY);

	for (int i = 0; i < 2; i++) {
		blind.flat4x = i ? f->dp.maps.flat6 : -1; /* missing, then the wrong map */
		assert_int_equal(dp_prefix(i ? "198.51.100.9" : "198.51.100.7", &p), 0);
		assert_int_equal(xb_policy_put(&blind, &p, &trusted, BPF_ANY), 0);
		set_put(&s, &p, &trusted);
		assert_int_equal(lines_in_kernel(f), 1); /* stale now, but no longer read */
		assert_int_equal(xb_flat_open(&t, &f->dp.maps, XDPBAN_FAMILY_INET), 0);
		assert_true(t.words[XDPBAN_FLAT_GUARD] == XDPBAN_FLAT_COMPILED);
		xb_flat_close(&t);
		assert_int_equal(verdict_of(f, i ? "198.51.100.9" : "198.51.100.7"),
				 XDPBAN_POLICY_TRUSTED);
		assert_int_equal(verdict_of(f, "198.51.100.8"), XDPBAN_POLICY_DENY);
		/* and its compile leaves level 3 off */
		assert_int_equal(xb_policy_recompile(&blind, NULL, err, sizeof(err)), 0);
		assert_int_equal(verdict_of(f, i ? "198.51.100.9" : "198.51.100.7"),
				 XDPBAN_POLICY_TRUSTED);
		assert_int_equal(xb_flat_open(&t, &f->dp.maps, XDPBAN_FAMILY_INET), 0);
		assert_true(t.words[XDPBAN_FLAT_GUARD] == XDPBAN_FLAT_COMPILED);
		xb_flat_close(&t);
	}
	assert_int_equal(xb_policy_recompile(&f->dp.maps, NULL, err, sizeof(err)), 0);
	assert_int_equal(check_all(f, &s, true, "level 3 back on"), 0);
	assert_int_equal(verdict_of(f, "198.51.100.7"), XDPBAN_POLICY_TRUSTED);
	assert_int_equal(verdict_of(f, "198.51.100.200"), XDPBAN_POLICY_NONE);
	xb_policy_set_free(&s);
}

/* ---- bad input ---- */

static void assert_unchanged(struct fx *f, const struct policy_snapshot *before)
{
	struct policy_snapshot now;
	char why[160];

	assert_int_equal(policy_snapshot_take(&f->dp.maps, &now), 0);
	if (policy_snapshot_differs(before, &now, why, sizeof(why)))
		fail_msg("the policy changed: %s", why);
	policy_snapshot_free(&now);
}

/* A good set plus one bad entry: refused with one line naming what is wrong. */
static void refuse_with(struct fx *f, const struct xb_policy_set *good,
			const struct xb_policy_entry *bad, const char *needle)
{
	struct xb_policy_set s = {};
	char err[XB_ERRLEN] = "";

	for (size_t i = 0; i < good->n; i++)
		assert_int_equal(xb_policy_set_add(&s, &good->v[i].prefix, &good->v[i].policy), 0);
	assert_int_equal(xb_policy_set_add(&s, &bad->prefix, &bad->policy), 0);
	assert_int_equal(xb_policy_compile(&f->dp.maps, &s, NULL, NULL, err, sizeof(err)), -EINVAL);
	printf("refused: %s\n", err);
	if (!strstr(err, needle) || strchr(err, '\n'))
		fail_msg("error '%s' should be one line naming '%s'", err, needle);
	xb_policy_set_free(&s);
}

static void bad_input_changes_nothing(void **state)
{
	struct fx *f = need_fx(state);
	struct xb_policy_set good = {}, next = {};
	struct xb_policy_entry bad;
	struct policy_snapshot before;

	draw(f, (struct pset_shape)PSET_SHAPE(XDPBAN_FAMILY_INET, 300, 8, 32, "", 5), &good);
	draw(f, (struct pset_shape)PSET_SHAPE(XDPBAN_FAMILY_INET6, 100, 8, 64, "", 5), &good);
	assert_int_equal(dp_policy_compile(&f->dp, &good, NULL, NULL), 0);
	assert_int_equal(policy_snapshot_take(&f->dp.maps, &before), 0);
	/* the next set would change a lot, were it not refused */
	draw(f, (struct pset_shape)PSET_SHAPE(XDPBAN_FAMILY_INET, 300, 8, 32, "", 5), &next);

	bad = next.v[0];
	bad.policy.verdict = bad.policy.verdict == XDPBAN_POLICY_DENY ? XDPBAN_POLICY_TRUSTED
								      : XDPBAN_POLICY_DENY;
	refuse_with(f, &next, &bad, "twice");
	bad = next.v[1];
	bad.prefix.plen = 33;
	refuse_with(f, &next, &bad, "prefix length 33");
	bad.prefix.family = XDPBAN_FAMILY_INET6;
	bad.prefix.plen = 129;
	refuse_with(f, &next, &bad, "prefix length 129");
	bad.prefix.family = 5;
	refuse_with(f, &next, &bad, "bad address family 5");
	bad = next.v[2];
	bad.policy.verdict = XDPBAN_POLICY_VERDICT_MAX + 1;
	refuse_with(f, &next, &bad, "bad verdict 5");
	assert_unchanged(f, &before);

	bad = next.v[3];
	bad.policy.verdict = XDPBAN_POLICY_VERDICT_MAX + 1;
	assert_int_equal(xb_policy_put(&f->dp.maps, &bad.prefix, &bad.policy, BPF_ANY), -EINVAL);
	bad = next.v[3];
	bad.prefix.plen = 40;
	assert_int_equal(xb_policy_put(&f->dp.maps, &bad.prefix, &bad.policy, BPF_ANY), -EINVAL);
	assert_int_equal(xb_policy_delete(&f->dp.maps, &bad.prefix), -EINVAL);
	bad.prefix.family = 9;
	assert_int_equal(xb_policy_delete(&f->dp.maps, &bad.prefix), -EINVAL);
	assert_unchanged(f, &before);
	policy_snapshot_free(&before);
	xb_policy_set_free(&good);
	xb_policy_set_free(&next);
}

/* ---- IPv6 lines ---- */

/* A list with real IPv6 lengths in one /32 (where level 2 says LOOKUP everywhere): /40 and
 * /44 around many /48, /56 and /64, /100 to /128, a hundred hosts, deny and trusted. */
static void draw_ipv6_list(struct fx *f, struct xb_policy_set *s, const char *within,
			   unsigned int timed_pct)
{
	draw(f, (struct pset_shape)PSET_SHAPE(XDPBAN_FAMILY_INET6, 1500, 45, 64, within, timed_pct), s);
	draw(f, (struct pset_shape)PSET_SHAPE(XDPBAN_FAMILY_INET6, 60, 33, 44, within, timed_pct), s);
	draw(f, (struct pset_shape)PSET_SHAPE(XDPBAN_FAMILY_INET6, 100, 100, 128, within, 0), s);
	draw(f, (struct pset_shape)PSET_SHAPE(XDPBAN_FAMILY_INET6, 100, 128, 128, within, 0), s);
	pset_dedup(s);
}

static void put_prefix6(struct fx *f, struct xb_policy_set *s, const struct xb_prefix *p,
			__u32 verdict, __u64 expires_ns, const char *what)
{
	struct xdpban_policy val = { .verdict = verdict, .list_id = 1, .expires_ns = expires_ns };

	assert_int_equal(xb_policy_put(&f->dp.maps, p, &val, BPF_ANY), 0);
	set_put(s, p, &val);
	assert_int_equal(check_family(f, XDPBAN_FAMILY_INET6, s, false, what), 0);
}

static void put_one6(struct fx *f, struct xb_policy_set *s, const char *cidr, __u32 verdict,
		     __u64 expires_ns, const char *what)
{
	struct xb_prefix p;

	assert_int_equal(dp_prefix(cidr, &p), 0);
	put_prefix6(f, s, &p, verdict, expires_ns, what);
}

/* A compile, the data path held to the model (lines at every depth in play); then single
 * changes of every kind where lines are (a /128 and a /64 inside them, covering prefixes that
 * delete lines by key and by a scan, a timed /56, deletes), each checked at once, a recompile
 * and a reload. (reload_watched holds the IPv6 lines to the tries at every compile step.) */
static void ipv6_answered_by_lines(void **state)
{
	struct fx *f = need_fx(state);
	struct xb_policy_set s = {}, next = {};
	struct xb_compile_result res;
	char err[XB_ERRLEN];
	__u32 before;

	draw_ipv6_list(f, &s, "2001:db8::/32", 0);
	assert_int_equal(dp_policy_compile(&f->dp, &s, NULL, &res), 0);
	printf("compiled: %u IPv6 lines, %u left out for room; %u IPv6 hosts\n", res.lines6,
	       res.lines6_full, res.hosts6);
	assert_true(res.lines6 > 1000);
	assert_int_equal(res.lines6_full, 0);
	assert_true(res.hosts6 > 90);
	assert_int_equal(res.hosts6_full, 0);
	assert_int_equal(lines_of(f, XDPBAN_FAMILY_INET6), res.lines6);
	assert_int_equal(check_family(f, XDPBAN_FAMILY_INET6, &s, true, "compiled /33../128"), 0);

	for (int i = 0; i < 10; i++) {
		struct xb_prefix q = s.v[fuzz_rng_below(&f->rng, (__u32)s.n)].prefix;

		if (q.plen > 64)
			continue;
		q.plen = i % 2 ? 128 : 80;
		q.addr[9] = (__u8)(0x10 + i);
		q.addr[15] = i % 2;
		put_prefix6(f, &s, &q, i % 2 ? XDPBAN_POLICY_TRUSTED : XDPBAN_POLICY_NONE, 0,
			    "a /128 or /80 inside a line's entry");
	}
	before = lines_of(f, XDPBAN_FAMILY_INET6);
	put_one6(f, &s, "2001:db8:40::/48", XDPBAN_POLICY_TRUSTED, 0, "a /48 (lines by key)");
	put_one6(f, &s, "2001:db8:8000::/34", XDPBAN_POLICY_DENY, 0, "a /34 (lines by a scan)");
	put_one6(f, &s, "2001:db8:4400::/40", XDPBAN_POLICY_NONE, 0, "a /40 over lines");
	put_one6(f, &s, "2001:db8:1200::/56", XDPBAN_POLICY_DENY, f->live_ns, "a timed /56");
	assert_true(lines_of(f, XDPBAN_FAMILY_INET6) < before);
	for (int i = 0; i < 30 && s.n; i++) {
		size_t victim = fuzz_rng_below(&f->rng, (__u32)s.n);

		assert_int_equal(xb_policy_delete(&f->dp.maps, &s.v[victim].prefix), 0);
		set_del(&s, victim);
	}
	assert_int_equal(check_family(f, XDPBAN_FAMILY_INET6, &s, false, "after deletes"), 0);

	assert_int_equal(xb_policy_recompile(&f->dp.maps, &res, err, sizeof(err)), 0);
	assert_int_equal(lines_of(f, XDPBAN_FAMILY_INET6), res.lines6);
	assert_int_equal(check_family(f, XDPBAN_FAMILY_INET6, &s, true, "recompiled"), 0);

	draw_ipv6_list(f, &next, "2001:db8::/33", 5); /* a reload: half the lines go */
	assert_int_equal(dp_policy_compile(&f->dp, &next, NULL, &res), 0);
	assert_int_equal(lines_of(f, XDPBAN_FAMILY_INET6), res.lines6);
	assert_int_equal(check_family(f, XDPBAN_FAMILY_INET6, &next, true, "reloaded, some timed"), 0);
	xb_policy_set_free(&s);
	xb_policy_set_free(&next);
}

/* 16 IPv6 lines of room: the compile fills them, coarse depths first, says how many it left
 * out, and every verdict stays right. */
static void full_ipv6_lines_leave_the_rest_to_the_trie(void **state)
{
	struct fx *f = need_fx(state);
	const struct dp_opts small = { .flat6x_max = 16 };
	struct xdpban_config cfg = quiet_config();
	struct xb_policy_set s = {};
	struct xb_compile_result res;
	struct xb_flat6_line *want, *live;
	size_t nwant, nlive;

	dp_close(&f->dp);
	assert_int_equal(dp_open(&f->dp, &small), 0);
	assert_int_equal(dp_set_config(&f->dp, &cfg), 0);
	draw_ipv6_list(f, &s, "2001:db8::/32", 0);
	assert_int_equal(xb_flat6_lines_build(s.v, s.n, &want, &nwant), 0);
	assert_int_equal(dp_policy_compile(&f->dp, &s, NULL, &res), 0);
	printf("full: %u IPv6 lines written, %u left out, %zu computed\n", res.lines6,
	       res.lines6_full, nwant);
	assert_true(res.lines6 <= 16 && res.lines6 > 0);
	assert_int_equal(res.lines6 + res.lines6_full, nwant);
	assert_int_equal(xb_flat6_lines_read(&f->dp.maps, &live, &nlive), 0);
	assert_int_equal(nlive, res.lines6);
	assert_true(live[0].key == want[0].key); /* the /24's line, read by every source */
	free(want);
	free(live);
	assert_int_equal(check_family(f, XDPBAN_FAMILY_INET6, &s, false, "full"), 0);
	xb_policy_set_free(&s);
}

static __u64 guard_now(struct fx *f, __u8 family)
{
	struct xb_flat t;
	__u64 guard;

	assert_int_equal(xb_flat_open(&t, &f->dp.maps, family), 0);
	guard = t.words[XDPBAN_FLAT_GUARD];
	xb_flat_close(&t);
	return guard;
}

/* A writer without the IPv6 lines' fd turns them off before it changes the trie (the stale
 * lines stay, unread); the next full compile turns them back on. */
static void writer_without_ipv6_lines_turns_them_off(void **state)
{
	struct fx *f = need_fx(state);
	struct xb_maps blind = f->dp.maps;
	struct xb_policy_set s = {};
	struct xdpban_policy val = { .verdict = XDPBAN_POLICY_TRUSTED, .list_id = 1 };
	struct xb_prefix host;
	char err[XB_ERRLEN];

	add(&s, "2001:db8:1::/48", XDPBAN_POLICY_DENY, 1);
	add(&s, "2001:db8:1:8000::/49", XDPBAN_POLICY_NONE, 1);
	assert_int_equal(dp_policy_compile(&f->dp, &s, NULL, NULL), 0);
	assert_int_equal(lines_of(f, XDPBAN_FAMILY_INET6), 4); /* depths 24 to 48 */
	assert_true(guard_now(f, XDPBAN_FAMILY_INET6) == XDPBAN_FLAT_COMPILED_L3);
	assert_int_equal(verdict_of(f, "2001:db8:1::7"), XDPBAN_POLICY_DENY);
	blind.flat6x = -1;
	assert_int_equal(dp_prefix("2001:db8:1::7", &host), 0);
	assert_int_equal(xb_policy_put(&blind, &host, &val, BPF_ANY), 0);
	set_put(&s, &host, &val);
	assert_int_equal(lines_of(f, XDPBAN_FAMILY_INET6), 4);
	assert_true(guard_now(f, XDPBAN_FAMILY_INET6) == XDPBAN_FLAT_COMPILED);
	assert_int_equal(verdict_of(f, "2001:db8:1::7"), XDPBAN_POLICY_TRUSTED);
	assert_int_equal(verdict_of(f, "2001:db8:1::8"), XDPBAN_POLICY_DENY);
	assert_int_equal(xb_policy_recompile(&f->dp.maps, NULL, err, sizeof(err)), 0);
	assert_int_equal(check_family(f, XDPBAN_FAMILY_INET6, &s, true, "IPv6 lines back on"), 0);
	assert_int_equal(verdict_of(f, "2001:db8:1::7"), XDPBAN_POLICY_TRUSTED);
	assert_int_equal(verdict_of(f, "2001:db8:1:8000::1"), XDPBAN_POLICY_NONE);
	xb_policy_set_free(&s);
}

/* Proof that a listed IPv6 host is answered from xdpban_host6, not the trie: /128s inside a
 * trusted /48, where the walk ends at a LOOKUP /64 code. A trie entry written behind the back
 * is hidden by the host's entry; a change through policy.h deletes the entry first and is seen
 * at once; a recompile writes it again, and a timed /128 gets none. */
static void ipv6_hosts_answer_without_the_trie(void **state)
{
	struct fx *f = need_fx(state);
	struct xdpban_policy trusted = { .verdict = XDPBAN_POLICY_TRUSTED, .list_id = 1 };
	struct xb_policy_set s = {};
	struct xb_compile_result res;
	struct xb_prefix host;
	char err[XB_ERRLEN];

	add(&s, "2001:db8:5::/48", XDPBAN_POLICY_TRUSTED, 1);
	add(&s, "2001:db8:5::66/128", XDPBAN_POLICY_DENY, 1);
	add(&s, "2001:db8:5::67/128", XDPBAN_POLICY_NONE, 1);
	assert_int_equal(dp_policy_compile(&f->dp, &s, NULL, &res), 0);
	assert_int_equal(res.hosts6, 2);
	assert_int_equal(res.hosts6_full, 0);
	assert_int_equal(check_family(f, XDPBAN_FAMILY_INET6, &s, true, "hosts compiled"), 0);
	assert_int_equal(verdict_of(f, "2001:db8:5::66"), XDPBAN_POLICY_DENY);
	assert_int_equal(verdict_of(f, "2001:db8:5::67"), XDPBAN_POLICY_NONE);
	assert_int_equal(verdict_of(f, "2001:db8:5::68"), XDPBAN_POLICY_TRUSTED);

	write_behind_the_back(f, "2001:db8:5::66/128", XDPBAN_POLICY_TRUSTED);
	assert_int_equal(verdict_of(f, "2001:db8:5::66"), XDPBAN_POLICY_DENY); /* not the trie */

	assert_int_equal(dp_prefix("2001:db8:5::66", &host), 0);
	assert_int_equal(xb_policy_put(&f->dp.maps, &host, &trusted, BPF_ANY), 0);
	set_put(&s, &host, &trusted);
	assert_int_equal(verdict_of(f, "2001:db8:5::66"), XDPBAN_POLICY_TRUSTED);
	assert_int_equal(check_family(f, XDPBAN_FAMILY_INET6, &s, false, "a host changed"), 0);
	assert_int_equal(xb_policy_recompile(&f->dp.maps, &res, err, sizeof(err)), 0);
	assert_int_equal(res.hosts6, 2);
	assert_int_equal(check_family(f, XDPBAN_FAMILY_INET6, &s, true, "hosts recompiled"), 0);

	put_one6(f, &s, "2001:db8:5::69/128", XDPBAN_POLICY_DENY, f->live_ns, "a timed host");
	assert_int_equal(xb_policy_recompile(&f->dp.maps, &res, err, sizeof(err)), 0);
	assert_int_equal(res.hosts6, 2); /* the timed one is the trie's */
	assert_int_equal(check_family(f, XDPBAN_FAMILY_INET6, &s, true, "a timed host"), 0);
	assert_int_equal(verdict_of(f, "2001:db8:5::69"), XDPBAN_POLICY_DENY);
	xb_policy_set_free(&s);
}

/* A writer that cannot reach xdpban_host6 cannot delete a host's entry before the trie
 * changes, so it turns the IPv6 lines off (the walk that ends in the hosts): the verdict is
 * the trie's at once, for a single change and for a compile, and a writer with the map turns
 * them back on. */
static void writer_without_ipv6_hosts_turns_the_lines_off(void **state)
{
	struct fx *f = need_fx(state);
	struct xdpban_policy none = { .verdict = XDPBAN_POLICY_NONE, .list_id = 1 };
	struct xb_maps blind = f->dp.maps;
	struct xb_policy_set s = {};
	struct xb_compile_result res;
	struct xb_prefix host;
	char err[XB_ERRLEN];

	add(&s, "2001:db8:6::/48", XDPBAN_POLICY_TRUSTED, 1);
	add(&s, "2001:db8:6::1/128", XDPBAN_POLICY_DENY, 1);
	assert_int_equal(dp_policy_compile(&f->dp, &s, NULL, &res), 0);
	assert_int_equal(res.hosts6, 1);
	assert_true(guard_now(f, XDPBAN_FAMILY_INET6) == XDPBAN_FLAT_COMPILED_L3);
	blind.host6 = -1;
	assert_int_equal(dp_prefix("2001:db8:6::1", &host), 0);
	assert_int_equal(xb_policy_put(&blind, &host, &none, BPF_ANY), 0);
	set_put(&s, &host, &none);
	assert_true(guard_now(f, XDPBAN_FAMILY_INET6) == XDPBAN_FLAT_COMPILED);
	assert_int_equal(verdict_of(f, "2001:db8:6::1"), XDPBAN_POLICY_NONE);
	assert_int_equal(xb_policy_recompile(&f->dp.maps, &res, err, sizeof(err)), 0);
	assert_true(guard_now(f, XDPBAN_FAMILY_INET6) == XDPBAN_FLAT_COMPILED_L3);
	assert_int_equal(check_family(f, XDPBAN_FAMILY_INET6, &s, true, "IPv6 hosts back"), 0);

	none.verdict = XDPBAN_POLICY_DENY; /* a compile by the blind writer changes the host */
	set_put(&s, &host, &none);
	assert_int_equal(xb_policy_compile(&blind, &s, NULL, &res, err, sizeof(err)), 0);
	assert_true(guard_now(f, XDPBAN_FAMILY_INET6) == XDPBAN_FLAT_COMPILED);
	assert_int_equal(verdict_of(f, "2001:db8:6::1"), XDPBAN_POLICY_DENY);
	assert_int_equal(verdict_of(f, "2001:db8:6::2"), XDPBAN_POLICY_TRUSTED);

	/* The blind writer removes the host: its stale entry stays until a compile that can reach
	 * the map, which deletes it before it turns the lines on. */
	for (size_t i = 0; i < s.n; i++)
		if (s.v[i].prefix.plen == 128)
			set_del(&s, i);
	assert_int_equal(xb_policy_compile(&blind, &s, NULL, &res, err, sizeof(err)), 0);
	assert_int_equal(verdict_of(f, "2001:db8:6::1"), XDPBAN_POLICY_TRUSTED);
	assert_int_equal(xb_policy_recompile(&f->dp.maps, &res, err, sizeof(err)), 0);
	assert_true(guard_now(f, XDPBAN_FAMILY_INET6) == XDPBAN_FLAT_COMPILED_L3);
	assert_int_equal(res.hosts6, 0);
	assert_int_equal(check_family(f, XDPBAN_FAMILY_INET6, &s, true, "stale host deleted"), 0);
	assert_int_equal(verdict_of(f, "2001:db8:6::1"), XDPBAN_POLICY_TRUSTED);
	xb_policy_set_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(uncompiled_table_gives_the_lpm_verdicts, setup,
						teardown),
		cmocka_unit_test_setup_teardown(lookup_codes_give_the_lpm_verdicts, setup,
						teardown),
		cmocka_unit_test_setup_teardown(compiled_sets_match_the_model, setup, teardown),
		cmocka_unit_test_setup_teardown(single_changes_then_recompile, setup, teardown),
		cmocka_unit_test_setup_teardown(table_answers_before_the_trie, setup, teardown),
		cmocka_unit_test_setup_teardown(reload_is_right_at_every_step, setup, teardown),
		cmocka_unit_test_setup_teardown(reload_of_long_prefixes_is_right_at_every_step, setup,
						teardown),
		cmocka_unit_test_setup_teardown(reload_by_two_writers_is_right_at_every_step, setup,
						teardown),
		cmocka_unit_test_setup_teardown(covering_change_is_atomic, setup, teardown),
		cmocka_unit_test_setup_teardown(long_prefixes_answered_at_level_3, setup, teardown),
		cmocka_unit_test_setup_teardown(full_level_3_leaves_regions_to_the_trie, setup,
						teardown),
		cmocka_unit_test_setup_teardown(writer_without_level_3_turns_it_off, setup,
						teardown),
		cmocka_unit_test_setup_teardown(bad_input_changes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(ipv6_answered_by_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(full_ipv6_lines_leave_the_rest_to_the_trie, setup,
						teardown),
		cmocka_unit_test_setup_teardown(writer_without_ipv6_lines_turns_them_off, setup,
						teardown),
		cmocka_unit_test_setup_teardown(ipv6_hosts_answer_without_the_trie, setup, teardown),
		cmocka_unit_test_setup_teardown(writer_without_ipv6_hosts_turns_the_lines_off, setup,
						teardown),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests_name("flat-kernel", tests, NULL, NULL);
}
