/* policy.c - policy scaling. With 16, 10K, 100K and 1M random prefixes
 * (and none, as a floor), random sources go through xdpban's full pipeline and through a plain
 * kernel LPM trie program over the same prefixes (bench/bpf/lpm_only.bpf.c), in the same run.
 *
 * Prints a markdown section on stdout. Both programs' verdict counts are checked against a
 * reference lookup of every source; a row whose check fails prints no number. Never
 * attaches, never pins.
 */
#include "bench_bpf.h"
#include "bpf/lpm_only.h"

struct sizes {
	uint32_t sources; /* random sources per table */
	uint32_t largest; /* the largest prefix count run */
};

static const struct sizes sizes_by_mode[] = {
	[BENCH_SMOKE] = { 4096, 10000 },
	[BENCH_QUICK] = { 131072, 1000000 },
	[BENCH_FULL] = { 1048576, 1000000 },
};

static const uint32_t prefix_counts[] = { 0, 16, 10000, 100000, 1000000 };

/* xdp-project's bench02: random-key LPM lookups on an AMD EPYC 9684X,
 * measured elsewhere; 0 where that table has no entry. */
static double reference_lpm_ns(uint32_t prefixes)
{
	switch (prefixes) {
	case 10000: return 133;
	case 100000: return 263;
	case 1000000: return 665;
	}
	return 0;
}

struct policy_bench {
	struct bench_opts o;
	struct sizes sz;
	int runs;
	uint64_t target_ns;
	struct bench_rng rng;
	struct srcdrv drv;
	struct bench_check check;
	double ns_at_16, ns_at_1m; /* xdpban's medians at 16 and 1M prefixes, 0 if not run */
};

/* One table size: both programs loaded with the same prefixes. */
struct table {
	struct policy_bench *pb;
	uint32_t prefixes;
	struct dp dp;
	struct bpf_object *lpm_obj;
	int lpm_fd;
	struct bench_lpm_only lpm; /* what lpm_only must have done */
	uint32_t *src;
	uint32_t denied; /* sources inside a prefix, by the reference lookup */
	const char *what;
	struct xb_compile_result compiled;
};

/* lpm_only must drop exactly the denied sources and pass the others, pass after pass. */
static int check_lpm_only(void *ctx, int phase, uint32_t packets, uint32_t retval,
			  struct bench_check *c, const char *what)
{
	struct table *t = ctx;

	t->lpm.sources = t->pb->sz.sources;
	t->lpm.denied = t->denied;
	(void)retval;
	return bench_lpm_only_check(&t->lpm, phase, packets, c, what);
}

/* The sources are drawn once per table; a pass over them must give drop_deny for the denied
 * ones and pass for the rest. */
static int prepare_table(void *ctx, struct bench_expect *want)
{
	struct table *t = ctx;

	memset(want, 0, sizeof(*want));
	want->n[XDPBAN_STAT_DROP_DENY] = t->denied;
	want->n[XDPBAN_STAT_PASSED] = t->pb->sz.sources - t->denied;
	if (srcdrv_sources4(&t->pb->drv, t->src, t->pb->sz.sources)) {
		bench_check_fail(&t->pb->check, t->what, "loading the driver's sources");
		return -1;
	}
	return 0;
}

static int load_table(struct table *t, const struct bench_prefix4 *p)
{
	/* room for a line of every /24 that holds longer entries, as an operator sizes
	 * policy-lines-max for a list of this size (docs/datapath.md), as the pipeline does */
	struct dp_opts dopts = { .flat4x_max = t->prefixes > XDPBAN_DEFAULT_FLAT4X_MAX
						     ? t->prefixes : XDPBAN_DEFAULT_FLAT4X_MAX };
	struct bpf_map *trie;
	uint32_t retries = 0;
	int err;

	err = dp_open(&t->dp, &dopts);
	if (err)
		return err;
	err = bench_xdpban_policy4(&t->dp, p, t->prefixes, XDPBAN_POLICY_DENY, &t->compiled);
	if (err)
		return err;
	err = bench_obj_open(t->pb->o.build, "bench/bpf/lpm_only.bpf.o", &t->lpm_obj);
	if (err)
		return err;
	trie = bpf_object__find_map_by_name(t->lpm_obj, LPM_ONLY_MAP_TRIE);
	if (!trie)
		return -ENOENT;
	bpf_map__set_max_entries(trie, t->prefixes ? t->prefixes : 1);
	err = bpf_object__load(t->lpm_obj);
	if (err)
		return err;
	t->lpm_fd = bench_prog_fd(t->lpm_obj, LPM_ONLY_PROG4);
	t->lpm.stats_fd = bench_map_fd(t->lpm_obj, LPM_ONLY_MAP_STATS);
	return bench_lpm4_load(bpf_map__fd(trie), p, t->prefixes, XDPBAN_POLICY_DENY, &retries);
}

static void unload_table(struct table *t)
{
	if (t->lpm_obj)
		bpf_object__close(t->lpm_obj);
	if (t->dp.skel)
		dp_close(&t->dp);
	free(t->src);
}

static void run_table(struct policy_bench *pb, uint32_t prefixes)
{
	struct table t = { .pb = pb, .prefixes = prefixes };
	struct bench_prefix4 *p = NULL;
	char what[64], count[32], x[64], l[64], ratio[64], ref[32] = "-";
	struct bench_result res = { .broken = true };
	struct bench_frame f;
	int err;

	bench_thousands(prefixes, count, sizeof(count));
	snprintf(what, sizeof(what), "%s prefixes", count);
	t.what = what;
	t.src = malloc(pb->sz.sources * sizeof(*t.src));
	err = t.src ? bench_prefix4_random(&pb->rng, prefixes, &p) : -ENOMEM;
	for (uint32_t i = 0; !err && i < pb->sz.sources; i++) {
		t.src[i] = bench_source4(&pb->rng);
		t.denied += bench_prefix4_find(p, prefixes, t.src[i]) >= 0;
	}
	if (!err)
		err = load_table(&t, p);
	if (err) {
		bench_check_fail(&pb->check, what, "loading the tables: %s", strerror(-err));
	} else {
		struct bench_pair pp = {
			.drv = &pb->drv, .dp = &t.dp, .other_fd = t.lpm_fd,
			.check_other = check_lpm_only, .frame = &f, .count = pb->sz.sources,
			.target_ns = pb->target_ns, .runs = pb->runs, .prepare = prepare_table,
			.ctx = &t,
		};

		bench_frame4(&f, NULL, BENCH_FRAME_VALID);
		bench_pair_run(&pp, &pb->check, what, &res);
	}
	bench_result_cells(&res, x, l, ratio, sizeof(x));
	if (!res.broken && !res.unmeasurable && prefixes == 16)
		pb->ns_at_16 = bench_median(&res.xdpban);
	if (!res.broken && !res.unmeasurable && prefixes == 1000000)
		pb->ns_at_1m = bench_median(&res.xdpban);
	if (reference_lpm_ns(prefixes))
		snprintf(ref, sizeof(ref), "%.0f", reference_lpm_ns(prefixes));
	printf("| %s | %.1f%% | %.2f%% | %.2f%% | %u (%u full) | %s | %s | %s | %s |\n", count,
	       100.0 * t.denied / pb->sz.sources, 100.0 * t.compiled.pure_mid[0] / (1u << XDPBAN_FLAT_MID_BITS),
	       100.0 * t.compiled.pure_l2[0] / (1u << 24),
	       t.compiled.lines4, t.compiled.lines4_full, x, l, ratio, ref);
	free(p);
	unload_table(&t);
}

static void print_header(struct policy_bench *pb)
{
	printf("## Policy scaling\n\n");
	printf("Method: for each size, random disjoint deny prefixes (half /32, 30%% /24, the rest "
	       "/20 to /31; fixed seed) are compiled into the policy of a fresh, unpinned xdpban "
	       "(user/lib/policy.h: its LPM trie and the flat table in front of it) and loaded into "
	       "the trie of bench/bpf/lpm_only.bpf.o, a program that only parses Ethernet and IPv4 "
	       "and looks the source up (same key and value types). The third column is the share "
	       "of /22 regions the flat table answers from its middle level (1 MiB, in the cache; "
	       "level 1 answers whole /16s before it), the fourth the share of /24 regions level 2 "
	       "(4 MiB, read where the middle level cannot answer) answers without the trie; the "
	       "fifth, the /24 regions answered by a level-3 line of /32 codes "
	       "(regions holding /25../32 entries; in parentheses, those left to the trie because "
	       "level 3 was full). %u random IPv4 sources, drawn "
	       "once per size, go through each program behind the driver (bench/bpf/srcdrv.bpf.c), "
	       "calls sized to about %.0f ms; ns/packet = thread CPU time less the fixed cost of a "
	       "call (%.0f us), / packets. Both programs' verdicts (xdpban_stats, lpm_only_stats) "
	       "are checked against a reference lookup of every source. Medians of %d samples "
	       "(min-max); ratio per sample.\n\n",
	       pb->sz.sources, pb->target_ns / 1e6, *bench_call_cost_ns() / 1e3, pb->runs);
	printf("The last column is xdp-project's bench02 (AMD EPYC 9684X, "
	       "random keys), **measured elsewhere**: context only.\n\n");
	printf("| prefixes | sources denied | /22s answered flat | /24s answered flat | "
	       "/24 lines (level 3) | xdpban ns/pkt | lpm_only ns/pkt | ratio | "
	       "LPM lookup ns, measured elsewhere |\n");
	printf("|---|---|---|---|---|---|---|---|---|\n");
}

int main(int argc, char **argv)
{
	static struct policy_bench pb = { .o = { .name = "policy" }, .check = { .bench = "policy" } };
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
	err = srcdrv_open(&pb.drv, pb.o.build, pb.sz.sources, 1);
	if (err) {
		fprintf(stderr, "policy: loading %s/bench/bpf/srcdrv.bpf.o: %s\n", pb.o.build,
			strerror(-err));
		return 1;
	}
	bench_frame4(&f, NULL, BENCH_FRAME_VALID);
	err = bench_calibrate_call(pb.drv.tail_fd, &f);
	if (err) {
		fprintf(stderr, "policy: test run of the driver: %s\n", strerror(-err));
		srcdrv_close(&pb.drv);
		return 1;
	}
	print_header(&pb);
	for (size_t i = 0; i < sizeof(prefix_counts) / sizeof(prefix_counts[0]); i++) {
		if (prefix_counts[i] > pb.sz.largest)
			break;
		bench_note(&pb.o, "%u prefixes", prefix_counts[i]);
		run_table(&pb, prefix_counts[i]);
	}
	printf("\n");
	/* The target: the policy's cost stays flat as the list grows. */
	if (pb.ns_at_16 > 0 && pb.ns_at_1m > 0)
		fprintf(stderr, "bench-target: policy scaling, 1M prefixes at most 1.2x the cost at 16 = "
			"%.2fx (%.1f vs %.1f ns/pkt): %s\n", pb.ns_at_1m / pb.ns_at_16, pb.ns_at_1m,
			pb.ns_at_16, pb.ns_at_1m <= 1.2 * pb.ns_at_16 ? "met" : "not met");
	srcdrv_close(&pb.drv);
	return bench_finish(&pb.check);
}
