/* policy6.c - IPv6 policy scaling. With 16, 10K, 100K and 1M IPv6 deny
 * prefixes of real-looking lengths (/32 to /64, some /128) in 2001::/16, IPv6 sources go
 * through xdpban's full pipeline and through a plain kernel LPM trie program over the same
 * prefixes (bench/bpf/lpm_only.bpf.c, lpm_only6), in the same run. Every source lies in
 * 2001::/16, where the flat table's levels (which read only an IPv6 source's top 32 bits)
 * cannot answer, so what is measured is what answers past them, the IPv6 lines of 8-bit
 * strides down to /64 (xdpban_flat6x) and the trie past them, with xdpban's pipeline around
 * it.
 *
 * Prints a markdown section on stdout and its targets on stderr. Both programs' verdict
 * counts are checked against a reference lookup of every source; a row whose check fails
 * prints no number. Never attaches, never pins.
 */
#include "bench_bpf.h"
#include "bpf/floor.h"
#include "bpf/lpm_only.h"

struct sizes {
	uint32_t sources; /* IPv6 sources per table */
	uint32_t largest; /* the largest prefix count run */
};

static const struct sizes sizes_by_mode[] = {
	[BENCH_SMOKE] = { 4096, 10000 },
	[BENCH_QUICK] = { 131072, 1000000 },
	[BENCH_FULL] = { 1048576, 1000000 },
};

static const uint32_t prefix_counts[] = { 16, 10000, 100000, 1000000 };

enum { FLOOR_L2, FLOOR_4M, FLOOR_16M, FLOOR_MEM, FLOORS };

struct policy6_bench {
	struct bench_opts o;
	struct sizes sz;
	int runs;
	uint64_t target_ns;
	struct bench_rng rng;
	struct srcdrv drv;
	struct bench_check check;
	/* Measured beside every size, in the same samples: one random load from a table that
	 * fits the cache, from two of the sizes a million prefixes take, and from memory. */
	struct bpf_object *floor_obj;
	struct bench_extra floor[FLOORS];
	double ns_at_16, ns_at_1m, ratio_at_1m; /* xdpban's medians, 0 if not run */
	double floor_at_1m[FLOORS];            /* the floors' medians in the 1M samples */
	struct {
		double share;        /* of the sources, those read past their /24's line */
		double within, past; /* xdpban's medians for each kind alone */
	} split;                     /* at the largest size; 0 if not run */
};

/* One table size: both programs loaded with the same prefixes. */
struct table6 {
	struct policy6_bench *pb;
	uint32_t prefixes;
	struct dp dp;
	struct bpf_object *lpm_obj;
	int lpm_fd;
	struct bench_lpm_only lpm; /* what lpm_only must have done */
	struct srcdrv_addr6 *src;
	uint32_t denied; /* sources inside a prefix, by the reference lookup */
	uint32_t past;   /* sources whose walk reads past the line of their /24 */
	struct xb_flat6_line *lines; /* what the compile makes of the set, to sort sources by */
	size_t n_lines;
	const char *what;
	struct xb_compile_result compiled;
};

/* lpm_only6 must drop exactly the denied sources and pass the others, pass after pass. */
static int check_lpm_only6(void *ctx, int phase, uint32_t packets, uint32_t retval,
			   struct bench_check *c, const char *what)
{
	struct table6 *t = ctx;

	t->lpm.sources = t->pb->sz.sources;
	t->lpm.denied = t->denied;
	(void)retval;
	return bench_lpm_only_check(&t->lpm, phase, packets, c, what);
}

static int prepare_table(void *ctx, struct bench_expect *want)
{
	struct table6 *t = ctx;

	memset(want, 0, sizeof(*want));
	want->n[XDPBAN_STAT_DROP_DENY] = t->denied;
	want->n[XDPBAN_STAT_PASSED] = t->pb->sz.sources - t->denied;
	if (srcdrv_sources6(&t->pb->drv, t->src, t->pb->sz.sources)) {
		bench_check_fail(&t->pb->check, t->what, "loading the driver's sources");
		return -1;
	}
	return 0;
}

/* Whether the walk of a source reads past the line of its /24: the /24's code for its /32 is
 * LOOKUP, so what decides lies in the lines and hosts below, which grow with the list. */
static bool reads_past_first_line(const struct table6 *t, const uint8_t addr[16])
{
	const struct xb_flat6_line *l;
	uint64_t hi = 0;

	for (int i = 0; i < 8; i++)
		hi = hi << 8 | addr[i];
	l = xb_flat6_lines_find(t->lines, t->n_lines, xdpban_flat6_key(hi, XDPBAN_FLAT6_DEPTH_FIRST));
	return l && xdpban_flat6_code(&l->line, hi, XDPBAN_FLAT6_DEPTH_FIRST) == XDPBAN_FLAT_LOOKUP;
}

enum source_class { ALL_SOURCES, WITHIN_FIRST_LINE, PAST_FIRST_LINE };

/* Sources of a class, each as the bench draws them: every second one inside a random prefix,
 * the others anywhere in 2001::/16; a source of another class is drawn again. */
static void draw_sources(struct table6 *t, const struct bench_prefix6 *p, enum source_class c)
{
	struct bench_rng *r = &t->pb->rng;

	t->denied = t->past = 0;
	for (uint32_t i = 0; i < t->pb->sz.sources;) {
		uint8_t *a = t->src[i].addr;
		bool past;

		bench_addr6_in_2001(r, a);
		if (i % 2 == 0) {
			const struct bench_prefix6 *in = &p[bench_rng_below(r, t->prefixes)];

			bench_addr6_into(a, in->addr, in->len);
		}
		past = reads_past_first_line(t, a);
		if (c != ALL_SOURCES && past != (c == PAST_FIRST_LINE))
			continue;
		t->denied += bench_prefix6_holds(p, t->prefixes, a);
		t->past += past;
		i++;
	}
}

static uint32_t lengths_of(const struct bench_prefix6 *p, uint32_t n)
{
	uint32_t lengths = 0;

	for (uint32_t i = 0; i < n; i++) /* sorted by length */
		lengths += i == 0 || p[i].len != p[i - 1].len;
	return lengths;
}

/* Room for every line the compile makes, and an eighth more, as an operator sizes
 * policy-lines6-max from the count a compile reports: how many a list needs depends on how
 * its prefixes nest (bench/RESULTS.md reports how many were written). */
static uint32_t lines6_room(size_t lines)
{
	uint32_t room = (uint32_t)(lines + lines / 8);

	return room > XDPBAN_DEFAULT_FLAT6X_MAX ? room : XDPBAN_DEFAULT_FLAT6X_MAX;
}

static int xdpban_load6(struct table6 *t, const struct bench_prefix6 *p)
{
	struct xdpban_policy val = { .verdict = XDPBAN_POLICY_DENY, .list_id = 1 };
	struct xb_policy_set set = { 0 };
	struct dp_opts dopts = {
		.policy6_max = t->prefixes > XDPBAN_DEFAULT_POLICY6_MAX ? t->prefixes
									 : XDPBAN_DEFAULT_POLICY6_MAX,
	};
	int err = 0;

	for (uint32_t i = 0; !err && i < t->prefixes; i++) {
		struct xb_prefix pre = { .family = XDPBAN_FAMILY_INET6, .plen = p[i].len };

		memcpy(pre.addr, p[i].addr, 16);
		err = xb_policy_set_add(&set, &pre, &val);
	}
	if (!err)
		err = xb_flat6_lines_build(set.v, set.n, &t->lines, &t->n_lines);
	dopts.flat6x_max = lines6_room(t->n_lines);
	if (!err)
		err = dp_open(&t->dp, &dopts);
	if (!err)
		err = dp_policy_compile(&t->dp, &set, NULL, &t->compiled);
	xb_policy_set_free(&set);
	return err;
}

static int lpm6_load(struct table6 *t, const struct bench_prefix6 *p)
{
	struct xdpban_lpm6_key *keys = calloc(t->prefixes, sizeof(*keys));
	struct xdpban_policy *vals = calloc(t->prefixes, sizeof(*vals));
	struct bpf_map *trie;
	uint32_t retries = 0;
	int err = keys && vals ? bench_obj_open(t->pb->o.build, "bench/bpf/lpm_only.bpf.o",
						&t->lpm_obj)
			       : -ENOMEM;

	trie = err ? NULL : bpf_object__find_map_by_name(t->lpm_obj, LPM_ONLY_MAP_TRIE6);
	if (!err && !trie)
		err = -ENOENT;
	if (!err) {
		bpf_map__set_max_entries(trie, t->prefixes);
		err = bpf_object__load(t->lpm_obj);
	}
	if (!err) {
		t->lpm_fd = bench_prog_fd(t->lpm_obj, LPM_ONLY_PROG6);
		t->lpm.stats_fd = bench_map_fd(t->lpm_obj, LPM_ONLY_MAP_STATS);
		for (uint32_t i = 0; i < t->prefixes; i++) {
			keys[i].prefixlen = p[i].len;
			memcpy(keys[i].addr, p[i].addr, 16);
			vals[i] = (struct xdpban_policy){ .verdict = XDPBAN_POLICY_DENY, .list_id = 1 };
		}
		err = bench_update_batch(bpf_map__fd(trie), keys, sizeof(*keys), vals, sizeof(*vals),
					 t->prefixes, &retries);
	}
	free(keys);
	free(vals);
	return err;
}

/* One row: the sources of class c through both programs, with the floors in the same
 * samples. The medians of xdpban, of the ratio and of the floors go to *m. */
struct row_medians {
	double xdpban, ratio, floor[FLOORS];
};

static int run_row(struct table6 *t, const struct bench_prefix6 *p, enum source_class c,
		   const char *label, struct row_medians *m)
{
	struct policy6_bench *pb = t->pb;
	struct bench_result res = { .broken = true };
	char x[64], l[64], ratio[64], floor[FLOORS][64];
	struct bench_frame f;
	struct bench_pair pp = {
		.drv = &pb->drv, .dp = &t->dp, .other_fd = t->lpm_fd,
		.check_other = check_lpm_only6, .frame = &f, .count = pb->sz.sources,
		.target_ns = pb->target_ns, .runs = pb->runs, .prepare = prepare_table,
		.ctx = t, .extra = pb->floor, .n_extra = FLOORS,
	};
	bool measured;

	draw_sources(t, p, c);
	bench_frame6(&f, NULL, BENCH_FRAME_VALID);
	bench_pair_run(&pp, &pb->check, t->what, &res);
	bench_result_cells(&res, x, l, ratio, sizeof(x));
	for (int i = 0; i < FLOORS; i++) {
		if (res.broken)
			snprintf(floor[i], sizeof(floor[i]), "-");
		else
			bench_cell(&res.extra[i], 1, floor[i], sizeof(floor[i]));
	}
	measured = !res.broken && !res.unmeasurable;
	if (measured) {
		m->xdpban = bench_median(&res.xdpban);
		m->ratio = bench_median(&res.ratio);
		for (int i = 0; i < FLOORS; i++)
			m->floor[i] = bench_median(&res.extra[i]);
	}
	printf("| %s | %u | %.1f%% | %u (%u) | %u (%u) | %s | %s | %s | %s | %s | %s | %s |\n",
	       label, lengths_of(p, t->prefixes), 100.0 * t->denied / pb->sz.sources,
	       t->compiled.lines6, t->compiled.lines6_full, t->compiled.hosts6,
	       t->compiled.hosts6_full, x, l, ratio, floor[FLOOR_L2], floor[FLOOR_4M],
	       floor[FLOOR_16M], floor[FLOOR_MEM]);
	return measured ? 0 : -1;
}

/* One table size: every source as the bench draws them; at the largest size also, apart,
 * the sources answered by the line of their /24 and those whose walk reads past it, which
 * is where a larger list costs more. */
static void run_table(struct policy6_bench *pb, uint32_t prefixes)
{
	struct table6 t = { .pb = pb, .prefixes = prefixes };
	struct bench_prefix6 *p = NULL;
	struct row_medians all = { 0 }, within = { 0 }, past = { 0 };
	char what[96], count[32], label[128];
	double past_share;
	int err;

	bench_thousands(prefixes, count, sizeof(count));
	snprintf(what, sizeof(what), "%s IPv6 prefixes", count);
	t.what = what;
	t.src = malloc(pb->sz.sources * sizeof(*t.src));
	err = t.src ? bench_prefix6_random(&pb->rng, prefixes, &p) : -ENOMEM;
	if (!err)
		err = xdpban_load6(&t, p);
	if (!err)
		err = lpm6_load(&t, p);
	if (err) {
		bench_check_fail(&pb->check, what, "loading the tables: %s", strerror(-err));
		printf("| %s | - | - | - | - | - | - | - | - | - | - | - |\n", count);
	} else if (!run_row(&t, p, ALL_SOURCES, count, &all)) {
		if (prefixes == 16)
			pb->ns_at_16 = all.xdpban;
		if (prefixes == 1000000) {
			pb->ns_at_1m = all.xdpban;
			pb->ratio_at_1m = all.ratio;
			memcpy(pb->floor_at_1m, all.floor, sizeof(all.floor));
		}
	}
	past_share = (double)t.past / pb->sz.sources;
	/* Drawn by rejection, so each kind must be common enough. */
	if (!err && prefixes == pb->sz.largest && past_share >= 0.01 && past_share <= 0.99) {
		snprintf(what, sizeof(what), "%s IPv6 prefixes, sources answered by their /24's line",
			 count);
		snprintf(label, sizeof(label), "%s: only sources answered by their /24's line "
			 "(%.1f%% of those above)", count, 100 * (1 - past_share));
		err = run_row(&t, p, WITHIN_FIRST_LINE, label, &within);
		snprintf(what, sizeof(what), "%s IPv6 prefixes, sources read past their /24's line",
			 count);
		snprintf(label, sizeof(label), "%s: only sources read past their /24's line "
			 "(%.1f%%)", count, 100 * past_share);
		err = run_row(&t, p, PAST_FIRST_LINE, label, &past) || err;
		if (!err) {
			pb->split.share = past_share;
			pb->split.within = within.xdpban;
			pb->split.past = past.xdpban;
		}
	}
	free(p);
	free(t.lines);
	if (t.lpm_obj)
		bpf_object__close(t.lpm_obj);
	if (t.dp.skel)
		dp_close(&t.dp);
	free(t.src);
}

static void print_header(struct policy6_bench *pb)
{
	printf("## IPv6 policy scaling\n\n");
	printf("Method: for each size, random distinct IPv6 deny prefixes in 2001::/16 (lengths as "
	       "real lists hold them: /48 most, then /56, /64, /32, /40, /44 and some /128; fixed "
	       "seed; they may nest, and all deny) are compiled into the policy of a fresh, "
	       "unpinned xdpban (user/lib/policy.h: the IPv6 trie and the flat table in front of "
	       "it, with room for the IPv6 lines the compile makes and an eighth more, at least the "
	       "default; a region whose addresses all get one verdict, such as a /32 deny holding "
	       "nested /48 denies, is answered without a line below it; a /128 deny by a probe of the "
	       "IPv6 hosts past the lines) and loaded into the trie of "
	       "bench/bpf/lpm_only.bpf.o's lpm_only6, a program that only parses Ethernet and "
	       "IPv6 and looks the source up (same key and value types). %u IPv6 sources, half "
	       "inside a random prefix and half anywhere in 2001::/16 (where the levels of the "
	       "flat table, which read the top 32 bits, cannot answer), drawn once per size, go "
	       "through each program behind the driver (bench/bpf/srcdrv.bpf.c), calls sized to "
	       "about %.0f ms; ns/packet = thread CPU time less the fixed cost of a call (%.0f us), / "
	       "packets. Both programs' verdicts are checked against a reference lookup of every "
	       "source. Medians of %d samples (min-max); ratio per sample. In the same samples, "
	       "the floors (bench/bpf/floor.bpf.c): the driver, the parse and one dependent random "
	       "load from an array of %u MiB (fits the L2 cache), %u MiB (a million prefixes in 4 "
	       "bytes each), %u MiB (a million entries of 8 bytes of key and 8 of answer) or %u "
	       "MiB (memory). A table of a million prefixes does not fit where the one of 16 "
	       "does; the first target line sets what a read from the middle two costs more than "
	       "from the first beside the room the target leaves, half the cost at 16. At the "
	       "largest size, two more rows split the cost: sources drawn the same way, but only "
	       "those answered by the line of their /24 (its code for their /32 is pure), then "
	       "only those whose walk reads past it (the lines and hosts below, which grow with "
	       "the list; each kind drawn again until %u of it).\n\n",
	       pb->sz.sources, pb->target_ns / 1e6, *bench_call_cost_ns() / 1e3, pb->runs,
	       FLOOR_L2_BYTES >> 20, FLOOR_4M_BYTES >> 20, FLOOR_16M_BYTES >> 20,
	       FLOOR_MEM_BYTES >> 20, pb->sz.sources);
	printf("| prefixes | lengths | sources denied | IPv6 lines (left out) | IPv6 hosts (left "
	       "out) | xdpban ns/pkt | lpm_only6 ns/pkt | ratio | %u MiB floor | %u MiB floor | "
	       "%u MiB floor | %u MiB floor |\n", FLOOR_L2_BYTES >> 20, FLOOR_4M_BYTES >> 20,
	       FLOOR_16M_BYTES >> 20, FLOOR_MEM_BYTES >> 20);
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
}

/* The scaling target, beside where the cost at 1M comes from: the room the target leaves (half
 * the cost at 16), the sources read past their /24's line alone against the others, and what
 * one read from a table too big for the L2 cache costs here over one that fits. All of it goes
 * before the verdict, which ends the line for bench/run.sh's table of targets. */
static void report_scaling(const struct policy6_bench *pb)
{
	const double *f = pb->floor_at_1m;
	char split[160] = "";

	if (pb->split.share > 0)
		snprintf(split, sizeof(split), "; the %.1f%% of sources read past their /24's line cost "
			 "%.1f alone, the others %.1f", 100 * pb->split.share, pb->split.past,
			 pb->split.within);
	fprintf(stderr, "bench-target: IPv6 policy scaling, 1M prefixes at most 1.5x the cost at 16 "
		"= %.2fx (%.1f vs %.1f ns/pkt, room %.1f%s; one read from %u MiB costs %.1f more "
		"than from %u MiB, from %u MiB %.1f more): %s\n",
		pb->ns_at_1m / pb->ns_at_16, pb->ns_at_1m, pb->ns_at_16, 0.5 * pb->ns_at_16, split,
		FLOOR_4M_BYTES >> 20, f[FLOOR_4M] - f[FLOOR_L2], FLOOR_L2_BYTES >> 20,
		FLOOR_16M_BYTES >> 20, f[FLOOR_16M] - f[FLOOR_L2],
		pb->ns_at_1m <= 1.5 * pb->ns_at_16 ? "met" : "not met");
}

static int floors_load(struct policy6_bench *pb)
{
	static const char *const names[FLOORS] = {
		[FLOOR_L2] = FLOOR_PROG_L2,
		[FLOOR_4M] = FLOOR_PROG_4M,
		[FLOOR_16M] = FLOOR_PROG_16M,
		[FLOOR_MEM] = FLOOR_PROG_MEM,
	};
	int err = bench_floors_load(pb->o.build, &pb->floor_obj, &pb->floor[FLOOR_L2].fd,
				    &pb->floor[FLOOR_MEM].fd);

	for (int i = 0; !err && i < FLOORS; i++) {
		pb->floor[i].name = names[i];
		pb->floor[i].fd = bench_prog_fd(pb->floor_obj, names[i]);
		err = pb->floor[i].fd < 0 ? pb->floor[i].fd : 0;
	}
	return err;
}

int main(int argc, char **argv)
{
	static struct policy6_bench pb = { .o = { .name = "policy6" },
					   .check = { .bench = "policy6" } };
	struct bench_frame f;
	int err;

	if (bench_parse_args(&pb.o, argc, argv))
		return 2;
	if (!dp_can_load())
		return 77;
	pb.sz = sizes_by_mode[pb.o.mode];
	pb.runs = bench_runs(&pb.o, 2, 5, 11);
	pb.target_ns = BENCH_BY_MODE(&pb.o, 5000000ull, 40000000ull, 100000000ull);
	bench_rng_init(&pb.rng, pb.o.seed);
	err = srcdrv_open(&pb.drv, pb.o.build, 1, pb.sz.sources);
	if (err) {
		fprintf(stderr, "policy6: loading %s/bench/bpf/srcdrv.bpf.o: %s\n", pb.o.build,
			strerror(-err));
		return 1;
	}
	err = floors_load(&pb);
	if (err) {
		fprintf(stderr, "policy6: loading %s/bench/bpf/floor.bpf.o: %s\n", pb.o.build,
			strerror(-err));
		if (pb.floor_obj)
			bpf_object__close(pb.floor_obj);
		srcdrv_close(&pb.drv);
		return 1;
	}
	bench_frame6(&f, NULL, BENCH_FRAME_VALID);
	err = bench_calibrate_call(pb.drv.tail_fd, &f);
	if (err) {
		fprintf(stderr, "policy6: test run of the driver: %s\n", strerror(-err));
		bpf_object__close(pb.floor_obj);
		srcdrv_close(&pb.drv);
		return 1;
	}
	print_header(&pb);
	for (size_t i = 0; i < sizeof(prefix_counts) / sizeof(prefix_counts[0]); i++) {
		if (prefix_counts[i] > pb.sz.largest)
			break;
		bench_note(&pb.o, "%u IPv6 prefixes", prefix_counts[i]);
		run_table(&pb, prefix_counts[i]);
	}
	printf("\n");
	/* The targets: flat as the list grows, and well below the plain trie. */
	if (pb.ns_at_16 > 0 && pb.ns_at_1m > 0)
		report_scaling(&pb);
	if (pb.ratio_at_1m > 0)
		fprintf(stderr, "bench-target: IPv6 policy at 1M prefixes at least 5x below the plain "
			"trie = %.1fx below (ratio %.2f): %s\n", 1 / pb.ratio_at_1m, pb.ratio_at_1m,
			pb.ratio_at_1m <= 0.2 ? "met" : "not met");
	bpf_object__close(pb.floor_obj);
	srcdrv_close(&pb.drv);
	return bench_finish(&pb.check);
}
