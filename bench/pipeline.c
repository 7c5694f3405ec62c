/* pipeline.c - what xdpban's full pipeline costs per packet beside a bare
 * XDP_DROP, measured in the same run, with a realistic state loaded: a million tracked
 * sources, tens of thousands of bans and a million-prefix deny list, and random sources drawn
 * from a fixed seed over the tracked, untracked, banned and denied sets.
 *
 * Prints a markdown section on stdout. Every sample checks the verdicts xdpban recorded
 * against what each source must get; a case that fails its check prints no number. It never
 * attaches to an interface and never pins anything.
 */
#include "bench_bpf.h"

struct sizes {
	uint32_t prefixes; /* deny prefixes in xdpban_policy4 */
	uint32_t tracked;  /* sources with a counter in xdpban_counts */
	uint32_t bans;     /* banned sources in xdpban_bans */
	uint32_t sources;  /* distinct sources per case, each run once per pass */
};

static const struct sizes sizes_by_mode[] = {
	[BENCH_SMOKE] = { 2000, 2000, 500, 4096 },
	[BENCH_QUICK] = { 1000000, 1000000, 32768, 131072 },
	[BENCH_FULL] = { 1000000, 1000000, 60000, 1048576 },
};

struct pipe {
	struct bench_opts o;
	struct sizes sz;
	int runs;
	uint64_t target_ns; /* CPU time one sample's call should take */
	struct bench_rng rng;
	struct bench_prefix4 *deny;
	struct bench_set4 tracked, banned;
	struct dp dp;
	bool dp_open;
	struct xb_compile_result compiled; /* what the policy compile did */
	int tracked_held;                  /* of the tracked sources, those the table held */
	struct srcdrv drv;
	struct bpf_object *bare_obj;
	int bare_fd;
	/* Measured beside every case: the memory floors, then the data path cut after each
	 * stage (bench_cut_names). */
	struct bpf_object *floor_obj, *cut_obj[BENCH_CUTS + 1];
	struct bench_extra extra[2 + BENCH_CUTS];
	uint32_t *src; /* the sources of the case being measured */
	struct bench_check check;
};

/* One row of the table: which sources, which frame, which verdicts they must get. */
struct pipe_case {
	const char *traffic;
	const char *verdict;
	enum bench_frame_kind frame;
	bool fresh_sources; /* new sources every sample (the case creates state) */
	bool raise_limit;   /* errors must stay counted increments: no ban may cut them short */
	void (*pick)(struct pipe *p, struct bench_expect *want);
};

static uint32_t random_tracked(struct pipe *p)
{
	return p->tracked.addr[bench_rng_below(&p->rng, p->tracked.n)];
}

static uint32_t random_untracked(struct pipe *p)
{
	struct bench_avoid4 avoid = { p->deny, p->sz.prefixes, { &p->tracked, &p->banned } };

	return bench_clean_addr4(&p->rng, &avoid);
}

static uint32_t random_denied(struct pipe *p)
{
	return bench_addr_in_prefix(&p->rng, &p->deny[bench_rng_below(&p->rng, p->sz.prefixes)]);
}

static uint32_t random_banned(struct pipe *p)
{
	return p->banned.addr[bench_rng_below(&p->rng, p->banned.n)];
}

static void pick_clean(struct pipe *p, struct bench_expect *want)
{
	for (uint32_t i = 0; i < p->sz.sources; i++)
		p->src[i] = bench_rng_below(&p->rng, 2) ? random_tracked(p) : random_untracked(p);
	want->n[XDPBAN_STAT_PASSED] = p->sz.sources;
}

static void pick_denied(struct pipe *p, struct bench_expect *want)
{
	for (uint32_t i = 0; i < p->sz.sources; i++)
		p->src[i] = random_denied(p);
	want->n[XDPBAN_STAT_DROP_DENY] = p->sz.sources;
}

static void pick_banned(struct pipe *p, struct bench_expect *want)
{
	for (uint32_t i = 0; i < p->sz.sources; i++)
		p->src[i] = random_banned(p);
	want->n[XDPBAN_STAT_DROP_BANNED] = p->sz.sources;
}

/* 80% clean (half of them tracked), 10% denied, 10% banned. */
static void pick_mix(struct pipe *p, struct bench_expect *want)
{
	for (uint32_t i = 0; i < p->sz.sources; i++) {
		uint32_t roll = bench_rng_below(&p->rng, 10);

		if (roll == 0) {
			p->src[i] = random_denied(p);
			want->n[XDPBAN_STAT_DROP_DENY]++;
		} else if (roll == 1) {
			p->src[i] = random_banned(p);
			want->n[XDPBAN_STAT_DROP_BANNED]++;
		} else {
			p->src[i] = bench_rng_below(&p->rng, 2) ? random_tracked(p)
								: random_untracked(p);
			want->n[XDPBAN_STAT_PASSED]++;
		}
	}
}

static void pick_tracked_errors(struct pipe *p, struct bench_expect *want)
{
	for (uint32_t i = 0; i < p->sz.sources; i++)
		p->src[i] = random_tracked(p);
	bench_expect_malformed(want, p->sz.sources);
}

static void pick_new_errors(struct pipe *p, struct bench_expect *want)
{
	for (uint32_t i = 0; i < p->sz.sources; i++)
		p->src[i] = random_untracked(p);
	bench_expect_malformed(want, p->sz.sources);
}

/* The last case fills the counter table past its size with new sources, so it runs last. */
enum { CASE_CLEAN, CASE_DENIED, CASE_BANNED, CASE_MIX, CASE_TRACKED_ERRORS, CASE_NEW_ERRORS };
static const struct pipe_case cases[] = {
	{ "clean sources, half tracked, half untracked", "pass", BENCH_FRAME_VALID, false, false,
	  pick_clean },
	{ "sources inside a deny prefix", "drop_deny", BENCH_FRAME_VALID, false, false,
	  pick_denied },
	{ "banned sources", "drop_banned", BENCH_FRAME_VALID, false, false, pick_banned },
	{ "mix: 80% clean, 10% denied, 10% banned", "mixed", BENCH_FRAME_VALID, false, false,
	  pick_mix },
	{ "malformed, tracked sources (counter increment)", "drop_malformed", BENCH_FRAME_MALFORMED,
	  false, true, pick_tracked_errors },
	{ "malformed, new sources (counter created, evicting another)", "drop_malformed",
	  BENCH_FRAME_MALFORMED, true, true, pick_new_errors },
};

/* A case under one setting: what the spoof defence costs in each mode and
 * what the protocol guard costs, measured beside the bare drop in the same run.
 * Every error row raises the limit, as the main table's do. */
struct setting_case {
	struct pipe_case c;
	const char *mode;
	uint8_t spoof, learn_shift;
	uint8_t ports; /* config.ports; with XDPBAN_PORTS_GUARD, BENCH_UDP_DPORT is bep15 */
};

static void pick_clean_tracked(struct pipe *p, struct bench_expect *want)
{
	for (uint32_t i = 0; i < p->sz.sources; i++)
		p->src[i] = random_tracked(p);
	want->n[XDPBAN_STAT_PASSED] = p->sz.sources;
}

#define SPOOF_ERRORS(traffic, fresh, pick, mode, spoof)                                     \
	{ { traffic, "drop_malformed", BENCH_FRAME_MALFORMED, fresh, true, pick }, mode,     \
	  spoof, XDPBAN_DEFAULT_LEARN_SHIFT, 0 }
#define SPOOF_LEARN(mode, shift)                                                             \
	{ { "clean TCP ACKs of no connection, tracked sources", "pass", BENCH_FRAME_TCP_ACK,  \
	    false, false, pick_clean_tracked }, mode, XDPBAN_SPOOF_HOP, shift, 0 }
static const struct setting_case spoof_cases[] = {
	SPOOF_ERRORS("malformed, tracked sources", false, pick_tracked_errors, "off",
		     XDPBAN_SPOOF_OFF),
	SPOOF_ERRORS("malformed, tracked sources", false, pick_tracked_errors, "hop",
		     XDPBAN_SPOOF_HOP),
	SPOOF_ERRORS("malformed, tracked sources", false, pick_tracked_errors,
		     "verified (none is: not counted)", XDPBAN_SPOOF_VERIFIED),
	SPOOF_ERRORS("malformed, new sources", true, pick_new_errors, "off", XDPBAN_SPOOF_OFF),
	SPOOF_ERRORS("malformed, new sources", true, pick_new_errors, "hop", XDPBAN_SPOOF_HOP),
	SPOOF_ERRORS("malformed, new sources", true, pick_new_errors,
		     "verified (no counter made)", XDPBAN_SPOOF_VERIFIED),
	SPOOF_LEARN("hop, learning off (learn_shift 255)", XDPBAN_LEARN_OFF),
	SPOOF_LEARN("hop, every segment looked at (learn_shift 0): a socket lookup each", 0),
};

#define GUARD_ANNOUNCES(setting, ports)                                                      \
	{ { "valid BEP 15 announces (98 bytes), clean sources, half tracked", "pass",         \
	    BENCH_FRAME_ANNOUNCE, false, false, pick_clean }, setting, XDPBAN_DEFAULT_SPOOF,   \
	  XDPBAN_DEFAULT_LEARN_SHIFT, ports }
/* Datagrams to a closed port from tracked sources: each is a probe, confirmed by a socket
 * lookup that finds nothing, and counted (the limit raised, so none bans). */
static void pick_tracked_probes(struct pipe *p, struct bench_expect *want)
{
	for (uint32_t i = 0; i < p->sz.sources; i++)
		p->src[i] = random_tracked(p);
	want->n[XDPBAN_STAT_PASSED] = want->n[XDPBAN_STAT_ERRORS] = p->sz.sources;
	want->n[XDPBAN_STAT_CLASS_PROBE] = p->sz.sources;
}

static const struct setting_case guard_cases[] = {
	GUARD_ANNOUNCES("no port rules", 0),
	GUARD_ANNOUNCES("guard = 6969/bep15", XDPBAN_PORTS_GUARD),
	{ { "datagrams to a closed UDP port, tracked sources (counter increment)", "pass",
	    BENCH_FRAME_VALID, false, true, pick_tracked_probes },
	  "open ports set, 6969 not among them: a probe, and a socket lookup that finds nothing",
	  XDPBAN_DEFAULT_SPOOF, XDPBAN_DEFAULT_LEARN_SHIFT, XDPBAN_PORTS_PROBE },
};

/* The configuration a case runs under: the defaults, the spoof settings, and for error rows
 * the highest limit, so that errors stay counted increments and no ban cuts them short. */
static int set_config(struct pipe *p, const struct pipe_case *c, const struct setting_case *s)
{
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;

	if (c->raise_limit)
		cfg.limit = XDPBAN_LIMIT_MAX;
	if (s) {
		cfg.spoof = s->spoof;
		cfg.learn_shift = s->learn_shift;
		cfg.ports = s->ports;
		if (dp_port_rules(&p->dp, BENCH_UDP_DPORT,
				  s->ports & XDPBAN_PORTS_GUARD ? XDPBAN_GUARD_BEP15 : 0))
			return -1;
	}
	return dp_set_config(&p->dp, &cfg);
}

/* Loads xdpban unpinned with the whole state, and checks the maps hold what was put in. */
static int load_state(struct pipe *p)
{
	struct dp_opts dopts = {
		/* a quarter load: 0.4% of the sources find their group of four full at fill */
		.counters_max = 4 * p->sz.tracked,
		.bans_max = p->sz.bans * 2 > XDPBAN_DEFAULT_BANS_MAX ? p->sz.bans * 2
								    : XDPBAN_DEFAULT_BANS_MAX,
		/* room for a line of every /24 that holds longer entries, as an operator sizes
		 * policy-lines-max for a list of this size (docs/datapath.md) */
		.flat4x_max = p->sz.prefixes,
	};
	uint64_t t0;
	int err, n;

	err = dp_open(&p->dp, &dopts);
	if (err)
		return fprintf(stderr, "pipeline: loading %s/xdpban.bpf.o: %s\n", p->o.build,
			       strerror(-err)), err;
	p->dp_open = true;
	t0 = bench_mono_ns();
	err = bench_xdpban_policy4(&p->dp, p->deny, p->sz.prefixes, XDPBAN_POLICY_DENY,
				   &p->compiled);
	if (err)
		return fprintf(stderr, "pipeline: loading %u deny prefixes: %s\n", p->sz.prefixes,
			       strerror(-err)), err;
	bench_note(&p->o, "%u deny prefixes compiled in %.2f s", p->sz.prefixes,
		   (bench_mono_ns() - t0) / 1e9);
	err = bench_fill_counters4(&p->dp, &p->tracked);
	if (!err)
		err = bench_fill_bans4(&p->dp, &p->banned);
	if (err)
		return fprintf(stderr, "pipeline: filling counters and bans: %s\n", strerror(-err)),
		       err;
	/* A group of four holds what hashes to it: a few sources find their group full at fill
	 * and evict its cheapest, as they would on the wire. */
	n = dp_count_counters(&p->dp);
	p->tracked_held = n;
	if (n < (int)(p->tracked.n - p->tracked.n / 50))
		return fprintf(stderr, "pipeline: xdpban_counts holds %d sources, expected %u\n", n,
			       p->tracked.n), -EPROTO;
	n = dp_count_bans(&p->dp);
	if (n != (int)p->banned.n)
		return fprintf(stderr, "pipeline: xdpban_bans holds %d bans, expected %u\n", n,
			       p->banned.n), -EPROTO;
	return 0;
}

/* The extras every case measures: EXTRA_L2 and EXTRA_MEM, then cut k at EXTRA_CUT + k - 1. */
enum { EXTRA_L2, EXTRA_MEM, EXTRA_CUT, EXTRAS = EXTRA_CUT + BENCH_CUTS };

static int load_extras(struct pipe *p)
{
	int err = bench_floors_load(p->o.build, &p->floor_obj, &p->extra[EXTRA_L2].fd,
				    &p->extra[EXTRA_MEM].fd);

	if (err)
		return fprintf(stderr, "pipeline: loading %s/bench/bpf/floor.bpf.o: %s\n",
			       p->o.build, strerror(-err)), err;
	p->extra[EXTRA_L2].name = "L2 floor";
	p->extra[EXTRA_MEM].name = "memory floor";
	for (int cut = 1; cut <= BENCH_CUTS; cut++) {
		struct bench_extra *e = &p->extra[EXTRA_CUT + cut - 1];

		err = bench_cut_load(p->o.build, cut, &p->dp, &p->cut_obj[cut], &e->fd);
		if (err)
			return fprintf(stderr, "pipeline: loading the data path cut after %s: %s\n",
				       bench_cut_names[cut], strerror(-err)), err;
		e->name = bench_cut_names[cut];
	}
	return 0;
}

static int setup(struct pipe *p)
{
	struct bench_avoid4 avoid = { NULL, 0, { NULL } };
	struct bench_frame f;
	int err;

	bench_rng_init(&p->rng, p->o.seed);
	err = bench_prefix4_random(&p->rng, p->sz.prefixes, &p->deny);
	avoid.prefixes = p->deny;
	avoid.n_prefixes = p->sz.prefixes;
	if (!err)
		err = bench_set4_random(&p->rng, p->sz.tracked, &avoid, &p->tracked);
	avoid.sets[0] = &p->tracked;
	if (!err)
		err = bench_set4_random(&p->rng, p->sz.bans, &avoid, &p->banned);
	p->src = malloc(p->sz.sources * sizeof(*p->src));
	if (err || !p->src)
		return fprintf(stderr, "pipeline: generating addresses: out of memory\n"), -ENOMEM;
	err = load_state(p);
	if (err)
		return err;
	err = srcdrv_open(&p->drv, p->o.build, p->sz.sources, 1);
	if (err)
		return fprintf(stderr, "pipeline: loading %s/bench/bpf/srcdrv.bpf.o: %s\n",
			       p->o.build, strerror(-err)), err;
	err = bench_obj_load(p->o.build, "bare_drop.bpf.o", &p->bare_obj, &p->bare_fd);
	if (err)
		return fprintf(stderr, "pipeline: loading %s/bare_drop.bpf.o: %s\n", p->o.build,
			       strerror(-err)), err;
	err = load_extras(p);
	if (err)
		return err;
	bench_frame4(&f, NULL, BENCH_FRAME_VALID);
	err = bench_calibrate_call(p->drv.tail_fd, &f);
	if (err)
		return fprintf(stderr, "pipeline: test run of the driver: %s\n", strerror(-err)), err;
	bench_note(&p->o, "fixed cost of a test run call: %.0f us", *bench_call_cost_ns() / 1e3);
	return 0;
}

struct case_ctx {
	struct pipe *p;
	const struct pipe_case *c;
	bool unverified; /* spoof mode verified: the case's errors count as errors_unverified */
};

/* Draws the case's sources and loads them into the driver. */
static int prepare_case(void *ctx, struct bench_expect *want)
{
	struct case_ctx *cc = ctx;

	memset(want, 0, sizeof(*want));
	cc->c->pick(cc->p, want);
	if (cc->unverified) {
		want->n[XDPBAN_STAT_ERRORS_UNVERIFIED] = want->n[XDPBAN_STAT_ERRORS];
		want->n[XDPBAN_STAT_ERRORS] = 0;
	}
	if (srcdrv_sources4(&cc->p->drv, cc->p->src, cc->p->sz.sources)) {
		bench_check_fail(&cc->p->check, cc->c->traffic, "loading the driver's sources");
		return -1;
	}
	return 0;
}

/* Measures case c (under the spoof settings of s, if any; with the stage extras if not). */
static void run_case(struct pipe *p, const struct pipe_case *c, const struct setting_case *s,
		     struct bench_result *r)
{
	struct case_ctx cc = { p, c, s && s->spoof == XDPBAN_SPOOF_VERIFIED };
	struct bench_frame f;
	struct bench_pair pp = {
		.drv = &p->drv,
		.dp = &p->dp,
		.other_fd = p->bare_fd,
		.frame = &f,
		.count = p->sz.sources,
		.target_ns = p->target_ns,
		.runs = p->runs,
		.prepare = prepare_case,
		.every_sample = c->fresh_sources,
		.ctx = &cc,
		.extra = s ? NULL : p->extra,
		.n_extra = s ? 0 : EXTRAS,
	};

	bench_frame4(&f, NULL, c->frame);
	if (set_config(p, c, s)) {
		memset(r, 0, sizeof(*r));
		r->broken = true;
		return;
	}
	bench_pair_run(&pp, &p->check, c->traffic, r);
	if (dp_set_config(&p->dp, &(struct xdpban_config)XDPBAN_CONFIG_DEFAULTS))
		r->broken = true;
}

static void print_settings(const struct setting_case *cases, size_t n,
			   const struct bench_result *rows)
{
	for (size_t i = 0; i < n; i++) {
		char x[64], b[64], ratio[64];

		bench_result_cells(&rows[i], x, b, ratio, sizeof(x));
		printf("| %s | %s | %s | %s | %s |\n", cases[i].c.traffic, cases[i].mode, x, b,
		       ratio);
	}
	printf("\n");
}

static void print_spoof(const struct bench_result *rows)
{
	printf("### What the spoof defence costs\n\n");
	printf("The same state, driver and method as above, each row under one setting of the "
	       "spoof defence (docs/datapath.md, section 8). The tracked sources' counters hold a "
	       "first-error reference and none is verified. A looked-at TCP segment of no "
	       "connection costs a socket lookup that finds nothing; 1 in 16 are looked at by "
	       "default (learn_shift 4), chosen by a keyed hash a forger cannot aim at.\n\n");
	printf("| traffic (IPv4) | spoof defence | xdpban ns/pkt | bare_drop ns/pkt | ratio |\n");
	printf("|---|---|---|---|---|\n");
	print_settings(spoof_cases, sizeof(spoof_cases) / sizeof(spoof_cases[0]), rows);
}

static void print_guard(const struct bench_result *rows)
{
	printf("### What the port rules cost\n\n");
	printf("The same state, driver and method, on valid BEP 15 announces (98-byte payloads, "
	       "140-byte frames) to port %d, with no port rules and with the port guarded by the "
	       "bep15 profile (docs/datapath.md, section 9): the difference is what checking a "
	       "valid request costs. Then probes: 60-byte datagrams to the same port when open "
	       "ports are configured without it, each confirmed by a socket lookup (none is "
	       "bound here) and counted; compare the malformed, tracked row above, an error "
	       "without the lookup. The bare drop runs the same frames.\n\n",
	       BENCH_UDP_DPORT);
	printf("| traffic (IPv4) | port rules | xdpban ns/pkt | bare_drop ns/pkt | ratio |\n");
	printf("|---|---|---|---|---|\n");
	print_settings(guard_cases, sizeof(guard_cases) / sizeof(guard_cases[0]), rows);
}

static void print_row(const char *traffic, const char *verdict, const struct bench_result *r)
{
	char x[64], b[64], ratio[64];

	bench_result_cells(r, x, b, ratio, sizeof(x));
	printf("| %s | %s | %s | %s | %s |\n", traffic, verdict, x, b, ratio);
}

/* Runs one program over the hot frame and checks its verdict. ns per packet, or -1. */
static double measure_hot(struct pipe *p, int fd, const struct bench_frame *f, uint32_t repeat)
{
	struct xdpban_stat_value before[XDPBAN_STAT__MAX];
	struct bench_expect want = { .ignore = 0 };
	bool xdpban = fd == p->dp.prog_fd;
	struct bench_timed t = { 0 };

	want.n[XDPBAN_STAT_PASSED] = xdpban ? repeat : 0;
	if (dp_stats(&p->dp, before) || bench_test_run(fd, f->data, f->len, repeat, &t)) {
		bench_check_fail(&p->check, "one hot source", "test run failed");
		return -1;
	}
	if (bench_expect_stats(&p->dp, before, &want, &p->check, "one hot source"))
		return -1;
	if (t.retval != (xdpban ? XDP_PASS : XDP_DROP)) {
		bench_check_fail(&p->check, "one hot source", "verdict %u", t.retval);
		return -1;
	}
	return bench_ns_per_packet(&t);
}

/* The classic single-frame figure (one hot source, no driver), as published XDP
 * benchmarks give it. */
static void run_hot(struct pipe *p, struct bench_result *r)
{
	struct bench_frame_addrs a = { .saddr4 = random_untracked(p) };
	const uint32_t warm = 100000;
	uint32_t repeat_x, repeat_b;
	struct bench_frame f;
	double x, b;

	memset(r, 0, sizeof(*r));
	bench_frame4(&f, &a, BENCH_FRAME_VALID);
	x = measure_hot(p, p->dp.prog_fd, &f, warm);
	b = measure_hot(p, p->bare_fd, &f, warm);
	repeat_x = bench_packets_for(x, 1, p->target_ns);
	repeat_b = bench_packets_for(b, 1, p->target_ns);
	for (int run = 0; run < p->runs && x >= 0 && b > 0; run++) {
		x = measure_hot(p, p->dp.prog_fd, &f, repeat_x);
		b = x >= 0 ? measure_hot(p, p->bare_fd, &f, repeat_b) : -1;
		if (x < 0 || b <= 0)
			break;
		bench_sample_add(&r->xdpban, x);
		bench_sample_add(&r->other, b);
		bench_sample_add(&r->ratio, x / b);
	}
	r->broken = r->xdpban.n < p->runs;
}

static void print_header(struct pipe *p)
{
	long long lpm = bench_map_memory(bpf_map__fd(p->dp.skel->maps.xdpban_policy4));

	printf("## Pipeline against a bare XDP_DROP\n\n");
	printf("State loaded: %u random disjoint deny prefixes compiled into the policy "
	       "(user/lib/policy.h: the trie, %.0f MiB reported, and the flat table in front of it, "
	       "which answers %u of 65,536 /16 regions, %u of 4,194,304 /22 regions (the middle "
	       "level, 1 MiB) and %u of 16,777,216 /24 regions without the "
	       "trie, and %u more /24s by a level-3 line of /32 codes, %u left to the trie for room), %u sources tracked in xdpban_counts (%d held after the fill: a group of four holds what hashes to it; %u slots), %u bans. Seed %llu.\n\n",
	       p->sz.prefixes, lpm > 0 ? lpm / 1048576.0 : 0, p->compiled.pure_l1[0],
	       p->compiled.pure_mid[0], p->compiled.pure_l2[0], p->compiled.lines4, p->compiled.lines4_full, p->tracked.n,
	       p->tracked_held, 4 * p->sz.tracked, p->banned.n, (unsigned long long)p->o.seed);
	printf("Method: a driver program (bench/bpf/srcdrv.bpf.c) writes the next of %u random "
	       "IPv4 sources into a 60-byte UDP frame and tail-calls the program under test: the "
	       "real xdpban program (build/xdpban.bpf.o through the skeleton, unpinned) or "
	       "build/bare_drop.bpf.o. One BPF_PROG_TEST_RUN call per sample makes whole passes "
	       "over the sources, sized to about %.0f ms; ns/packet = the thread's CPU time for "
	       "the call, less the fixed cost of a call (%.0f us, measured), / packets. Both "
	       "columns include the driver and the tail call; the first row runs one frame with "
	       "no driver, as published XDP benchmarks measure it. Every call checks "
	       "xdpban_stats against "
	       "the verdict each source must get. Medians of %d samples (min-max); the ratio is "
	       "taken per sample, bare_drop and xdpban alternating.\n\n",
	       p->sz.sources, p->target_ns / 1e6, *bench_call_cost_ns() / 1e3, p->runs);
	printf("| traffic (IPv4) | verdict | xdpban ns/pkt | bare_drop ns/pkt | ratio |\n");
	printf("|---|---|---|---|---|\n");
}

static double floors_k(const struct bench_result *r)
{
	double b = bench_median(&r->other), mem = bench_median(&r->extra[EXTRA_MEM]);

	return mem > b ? (bench_median(&r->xdpban) - b) / (mem - b) : -1;
}

/* Every row again as "a bare drop plus k memory floors". */
static void print_floors(struct pipe *p, const struct bench_result *rows)
{
	printf("### Against the memory floors\n\n");
	printf("The floors run behind the same driver in the same samples (bench/bpf/floor.bpf.c): "
	       "each parses the source, hashes it to an index and makes one dependent load from a "
	       "BPF array of %u MiB (the L2 floor: a table that fits the cache) or %u MiB (the "
	       "memory floor: one miss, as a table of a million sources must cost at least once). "
	       "k = (xdpban - bare drop) / (memory floor - bare drop), from the medians: how many "
	       "misses a traffic class costs.\n\n",
	       FLOOR_L2_BYTES >> 20, FLOOR_MEM_BYTES >> 20);
	printf("| traffic (IPv4) | xdpban ns/pkt | bare drop | L2 floor | memory floor | xdpban = bare drop + k x memory floor |\n");
	printf("|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bench_result *r = &rows[i];
		char x[64], b[64], l2[64], mem[64];

		if (r->broken) {
			printf("| %s | not measured | - | - | - | - |\n", cases[i].traffic);
			continue;
		}
		bench_cell(&r->xdpban, 1, x, sizeof(x));
		bench_cell(&r->other, 1, b, sizeof(b));
		bench_cell(&r->extra[EXTRA_L2], 1, l2, sizeof(l2));
		bench_cell(&r->extra[EXTRA_MEM], 1, mem, sizeof(mem));
		printf("| %s | %s | %s | %s | %s | k = %.2f |\n", cases[i].traffic, x, b, l2, mem,
		       floors_k(r));
	}
	printf("\n");
}

/* What each stage adds: the cut builds, cumulative, and the step. */
static void print_breakdown(const struct bench_result *rows)
{
	printf("### Where the time goes\n\n");
	printf("The data path built again with XDPBAN_BENCH_CUT (bpf/xdpban.bpf.c), each copy "
	       "stopping right after one stage and skipping the statistics, on xdpban's own maps "
	       "and state, in the same samples. Cells: ns/packet of the program cut there "
	       "(median), and in parentheses what that stage added to the one before; the first "
	       "step is against the bare drop, the last column is the full program (the "
	       "statistics stage included). A stage a traffic class never reaches (a denied "
	       "source stops at the policy) adds only noise. The configuration is read, the classes "
	       "computed, the source's table key made and an error's counter group requested "
	       "before the policy (so that its miss overlaps the policy's and the ban check's): "
	       "the classes and key column holds that work, and the count column what the miss "
	       "did not hide.\n\n");
	printf("| traffic (IPv4) | bare drop |");
	for (int cut = 1; cut <= BENCH_CUTS; cut++)
		printf(" %s |", bench_cut_names[cut]);
	printf(" + statistics (full) |\n|---|---|");
	for (int cut = 0; cut <= BENCH_CUTS; cut++)
		printf("---|");
	printf("\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bench_result *r = &rows[i];
		double prev = bench_median(&r->other);

		if (r->broken) {
			printf("| %s | not measured |\n", cases[i].traffic);
			continue;
		}
		printf("| %s | %.1f |", cases[i].traffic, prev);
		for (int cut = 1; cut <= BENCH_CUTS + 1; cut++) {
			double ns = cut <= BENCH_CUTS ? bench_median(&r->extra[EXTRA_CUT + cut - 1])
						     : bench_median(&r->xdpban);

			printf(" %.1f (%+.1f) |", ns, ns - prev);
			prev = ns;
		}
		printf("\n");
	}
	printf("\n");
}

/* A target in floors: at most `k_max` memory floors over a bare drop. */
static void report_floor_target(struct pipe *p, const char *what, const struct bench_result *r,
				double k_max)
{
	double k = floors_k(r);

	if (r->broken || p->sz.prefixes < 1000000 || p->sz.tracked < 1000000)
		return;
	fprintf(stderr, "bench-target: %s, at most bare drop + %.1f memory floor%s = "
		"bare drop + %.2f floors (%.1f vs %.1f ns/pkt, floor %.1f): %s\n", what, k_max,
		k_max == 1 ? "" : "s", k, bench_median(&r->xdpban), bench_median(&r->other),
		bench_median(&r->extra[EXTRA_MEM]), k >= 0 && k <= k_max ? "met" : "not met");
}

/* The target for clean traffic with the full state loaded. */
static void report_target(struct pipe *p, const struct bench_result *clean)
{
	double ratio = bench_median(&clean->ratio);

	if (clean->broken || p->sz.prefixes < 1000000 || p->sz.tracked < 1000000)
		return; /* the target is defined at a million of each */
	fprintf(stderr, "bench-target: clean traffic with 1M tracked sources, 32K bans and 1M "
		"prefixes, at most 5x a bare XDP_DROP = %.2fx (%.1f vs %.1f ns/pkt, random "
		"sources): %s\n", ratio, bench_median(&clean->xdpban), bench_median(&clean->other),
		ratio <= 5 ? "met" : "not met");
}

static void cleanup(struct pipe *p)
{
	for (int cut = 1; cut <= BENCH_CUTS; cut++)
		if (p->cut_obj[cut])
			bpf_object__close(p->cut_obj[cut]);
	if (p->floor_obj)
		bpf_object__close(p->floor_obj);
	if (p->bare_obj)
		bpf_object__close(p->bare_obj);
	srcdrv_close(&p->drv);
	if (p->dp_open)
		dp_close(&p->dp);
	bench_set4_free(&p->tracked);
	bench_set4_free(&p->banned);
	free(p->deny);
	free(p->src);
}

int main(int argc, char **argv)
{
	static struct pipe p = { .o = { .name = "pipeline" }, .check = { .bench = "pipeline" } };
	struct bench_result rows[sizeof(cases) / sizeof(cases[0])], hot;
	struct bench_result spoof_rows[sizeof(spoof_cases) / sizeof(spoof_cases[0])];
	struct bench_result guard_rows[sizeof(guard_cases) / sizeof(guard_cases[0])];
	int rc = 1;

	if (bench_parse_args(&p.o, argc, argv))
		return 2;
	if (!dp_can_load())
		return 77;
	p.sz = sizes_by_mode[p.o.mode];
	p.runs = bench_runs(&p.o, 2, 5, 11);
	p.target_ns = BENCH_BY_MODE(&p.o, 5000000ull, 40000000ull, 100000000ull);
	if (setup(&p))
		goto out;
	run_hot(&p, &hot);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bench_note(&p.o, "%s", cases[i].traffic);
		run_case(&p, &cases[i], NULL, &rows[i]);
	}
	for (size_t i = 0; i < sizeof(spoof_cases) / sizeof(spoof_cases[0]); i++) {
		bench_note(&p.o, "%s, spoof defence %s", spoof_cases[i].c.traffic,
			   spoof_cases[i].mode);
		run_case(&p, &spoof_cases[i].c, &spoof_cases[i], &spoof_rows[i]);
	}
	for (size_t i = 0; i < sizeof(guard_cases) / sizeof(guard_cases[0]); i++) {
		bench_note(&p.o, "%s, %s", guard_cases[i].c.traffic, guard_cases[i].mode);
		run_case(&p, &guard_cases[i].c, &guard_cases[i], &guard_rows[i]);
	}
	print_header(&p);
	print_row("one clean source, repeated (no driver)", "pass", &hot);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		print_row(cases[i].traffic, cases[i].verdict, &rows[i]);
	printf("\n");
	print_floors(&p, rows);
	print_breakdown(rows);
	print_spoof(spoof_rows);
	print_guard(guard_rows);
	report_target(&p, &rows[CASE_CLEAN]);
	report_floor_target(&p, "sources inside a deny prefix", &rows[CASE_DENIED], 1);
	report_floor_target(&p, "banned sources", &rows[CASE_BANNED], 1);
	report_floor_target(&p, "errors from tracked sources", &rows[CASE_TRACKED_ERRORS], 1.5);
	report_floor_target(&p, "errors from new sources (the spoofed flood)",
			    &rows[CASE_NEW_ERRORS], 2);
	rc = bench_finish(&p.check);
out:
	cleanup(&p);
	return rc;
}
