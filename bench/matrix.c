/* matrix.c - the ban-service matrix of the Torrust tracker's benchmark (limit 10;
 * 10,000 repeated error increments from one source; 10,000 increments from distinct sources;
 * lookups of a source with 9, 10 and 11 errors among 10, 1,000 and 10,000 tracked sources;
 * IPv4 and IPv6), run on xdpban's data path through BPF_PROG_TEST_RUN, beside a bare XDP_DROP
 * measured the same way in the same run, and beside the published user-space figures.
 *
 * Prints a markdown section on stdout. Every call checks the verdicts and events xdpban
 * recorded; a row whose check fails prints no number. Never attaches, never pins.
 */
#include "bench_bpf.h"

#define MX_OPS 10000      /* the reference's iteration: 10,000 increments */
#define MX_EPISODES 64    /* sources run through a 10,000-packet episode per limit-10 call */
#define MX_V6_PREFIX 64   /* xdpban's default IPv6 counting prefix */

struct mx {
	struct bench_opts o;
	int runs;
	uint64_t target_ns;
	struct bench_rng rng;
	struct srcdrv drv;
	struct bpf_object *bare_obj;
	int bare_fd;
	struct bench_check check;
};

/* The published user-space figures (Torrust tracker, Criterion, Ryzen 9 7950X). */
struct reference {
	double v4, v6;
};
static const struct reference ref_repeated = { 9.8, 12.5 };
static const struct reference ref_distinct = { 28, 33 };
static const struct reference ref_lookup = { 9.2, 11.2 };

/* One measured row and the sources it runs. */
struct mx_row {
	struct mx *m;
	struct dp *dp;
	int family;               /* XDPBAN_FAMILY_INET or _INET6 */
	uint32_t n;               /* sources in the driver's table */
	struct xdpban_key *keys;  /* their keys, to clean up after a sample */
	bool fresh;               /* new sources for every sample */
	bool errors;              /* each source sends one counted malformed error a pass */
	const char *what;
};

static void random_source(struct mx *m, int family, struct srcdrv_addr6 *a6, uint32_t *a4)
{
	if (family == XDPBAN_FAMILY_INET)
		*a4 = bench_source4(&m->rng);
	else
		bench_random_addr6(&m->rng, a6->addr);
}

static void source_key(int family, uint32_t a4, const struct srcdrv_addr6 *a6,
		       struct xdpban_key *key)
{
	if (family == XDPBAN_FAMILY_INET)
		bench_key4(a4, key);
	else
		bench_key6(a6->addr, MX_V6_PREFIX, key);
}

/* Forgets the previous sample's sources (so every sample starts from the same table), then
 * draws r->n new ones into the driver. */
static int load_fresh(struct mx_row *r)
{
	struct srcdrv_addr6 *a6 = calloc(r->n, sizeof(*a6));
	uint32_t *a4 = calloc(r->n, sizeof(*a4));
	int err = -ENOMEM;

	if (a6 && a4) {
		for (uint32_t i = 0; i < r->n; i++) {
			dp_del_counter(r->dp, &r->keys[i]); /* absent on the first sample */
			dp_del_ban(r->dp, &r->keys[i]);
			random_source(r->m, r->family, &a6[i], &a4[i]);
			source_key(r->family, a4[i], &a6[i], &r->keys[i]);
		}
		err = r->family == XDPBAN_FAMILY_INET ? srcdrv_sources4(&r->m->drv, a4, r->n)
						      : srcdrv_sources6(&r->m->drv, a6, r->n);
	}
	free(a6);
	free(a4);
	return err;
}

static int prepare_row(void *ctx, struct bench_expect *want)
{
	struct mx_row *r = ctx;
	int err = load_fresh(r);

	if (err) {
		bench_check_fail(&r->m->check, r->what, "loading sources: %s", strerror(-err));
		return -1;
	}
	memset(want, 0, sizeof(*want));
	if (r->errors)
		bench_expect_malformed(want, r->n);
	return 0;
}

/* A 10,000-packet episode per source at limit 10: errors 1 to 10 are counted and dropped as
 * malformed, the 11th is counted and bans, the other 9,989 are dropped as banned. */
static void expect_episodes(void *ctx, uint32_t packets, struct bench_expect *t)
{
	struct mx_row *r = ctx;
	uint64_t crossing = (uint64_t)r->n * (XDPBAN_DEFAULT_LIMIT + 1);

	memset(t->n, 0, sizeof(t->n));
	bench_expect_malformed(t, crossing);
	t->n[XDPBAN_STAT_BANS_CREATED] = r->n;
	t->n[XDPBAN_STAT_DROP_BANNED] = packets - crossing;
	t->ignore = 1u << XDPBAN_STAT_EVENTS_LOST; /* nobody reads the ring buffer here */
}

static int set_limit(struct dp *dp, uint32_t limit)
{
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;

	cfg.limit = limit;
	return dp_set_config(dp, &cfg);
}

static const char *family_name(int family)
{
	return family == XDPBAN_FAMILY_INET ? "IPv4" : "IPv6";
}

static void print_row(const char *op, int family, const char *tracked,
		      const struct bench_result *res, const struct reference *ref)
{
	char x[64], b[64], ratio[64], refcell[32] = "-";

	bench_result_cells(res, x, b, ratio, sizeof(x));
	if (ref)
		snprintf(refcell, sizeof(refcell), "%.1f",
			 family == XDPBAN_FAMILY_INET ? ref->v4 : ref->v6);
	printf("| %s | %s | %s | %s | %s | %s | %s |\n", op, family_name(family), tracked, x, b,
	       ratio, refcell);
}

static void frame_for(int family, enum bench_frame_kind kind, struct bench_frame *f)
{
	if (family == XDPBAN_FAMILY_INET)
		bench_frame4(f, NULL, kind);
	else
		bench_frame6(f, NULL, kind);
}

/* Runs one increment row on a fresh data path: sources, frame, limit and what each source's
 * packets must add are given by the row. */
static void run_increments(struct mx *m, struct mx_row *row, uint32_t limit,
			   const struct bench_frame *f, uint32_t packets,
			   void (*expect_total)(void *, uint32_t, struct bench_expect *),
			   struct bench_result *res)
{
	struct dp dp;
	struct bench_pair pp = {
		.drv = &m->drv, .dp = &dp, .other_fd = m->bare_fd, .frame = f, .count = row->n,
		.packets = packets, .target_ns = m->target_ns, .runs = m->runs,
		.prepare = prepare_row, .every_sample = row->fresh,
		.expect_total = expect_total, .ctx = row,
	};
	int err;

	memset(res, 0, sizeof(*res));
	res->broken = true;
	row->keys = calloc(row->n, sizeof(*row->keys));
	err = row->keys ? dp_open(&dp, NULL) : -ENOMEM;
	if (err) {
		bench_check_fail(&m->check, row->what, "loading xdpban: %s", strerror(-err));
		free(row->keys);
		return;
	}
	row->dp = &dp;
	if (set_limit(&dp, limit))
		bench_check_fail(&m->check, row->what, "setting the limit");
	else
		bench_pair_run(&pp, &m->check, row->what, res);
	dp_close(&dp);
	free(row->keys);
}

static void run_family_increments(struct mx *m, int family)
{
	struct bench_frame bad;
	struct bench_result res;
	struct mx_row row = { .m = m, .family = family };

	frame_for(family, BENCH_FRAME_MALFORMED, &bad);

	/* One source, every packet an error. The reference's increment never bans, so the limit
	 * is raised here to keep every packet a counted increment. */
	row.n = 1;
	row.fresh = false;
	row.errors = true;
	row.what = family == XDPBAN_FAMILY_INET ? "repeated increment, IPv4"
						: "repeated increment, IPv6";
	run_increments(m, &row, XDPBAN_LIMIT_MAX, &bad, 0, NULL, &res);
	print_row("repeated increment (one source; limit raised so none bans)", family, "1", &res,
		  &ref_repeated);

	/* 10,000 new sources per call, one error each: every packet creates a counter. */
	row.n = MX_OPS;
	row.fresh = true;
	row.what = family == XDPBAN_FAMILY_INET ? "distinct increment, IPv4"
						: "distinct increment, IPv6";
	run_increments(m, &row, XDPBAN_DEFAULT_LIMIT, &bad, MX_OPS, NULL, &res);
	print_row("distinct increment (10,000 new sources per call, limit 10)", family,
		  "0 to 10,000", &res, &ref_distinct);

	/* What limit 10 really does with 10,000 errors from one source. */
	row.n = MX_EPISODES;
	row.what = family == XDPBAN_FAMILY_INET ? "limit-10 episode, IPv4"
						: "limit-10 episode, IPv6";
	run_increments(m, &row, XDPBAN_DEFAULT_LIMIT, &bad, MX_EPISODES * MX_OPS, expect_episodes,
		       &res);
	print_row("10,000 errors from one source at limit 10 (10 counted, 11th bans, 9,989 "
		  "dropped as banned)", family, "64", &res, NULL);
}

/* The lookup table: `tracked` sources of which three are the probes with 9, 10 and 11
 * errors, made through the report program; the others have 1 to 11 errors in turn (those
 * at 11 banned, their counter reset, as the data path leaves them). */
struct lookup_table {
	struct dp dp;
	struct xdpban_key probe[3];
	uint32_t probe4[3];
	struct srcdrv_addr6 probe6[3];
};

static const uint32_t probe_errors[3] = { 9, 10, 11 };

static uint32_t other_count(uint32_t i)
{
	return 1 + i % (XDPBAN_DEFAULT_LIMIT + 1);
}

static int fill_others(struct mx *m, struct lookup_table *t, int family, uint32_t n)
{
	struct xdpban_key *keys = calloc(n ? n : 1, sizeof(*keys));
	int err = -ENOMEM;

	if (keys) {
		for (uint32_t i = 0; i < n; i++) {
			struct srcdrv_addr6 a6;
			uint32_t a4;

			random_source(m, family, &a6, &a4);
			source_key(family, a4, &a6, &keys[i]);
		}
		err = bench_fill_counters(&t->dp, keys, n, other_count);
		/* The sources at 11 errors are banned and start over at 0. */
		for (uint32_t i = 0; !err && i < n; i++) {
			if (other_count(i) <= XDPBAN_DEFAULT_LIMIT)
				continue;
			err = bench_fill_bans(&t->dp, &keys[i], 1);
			if (!err)
				err = dp_put_counter(&t->dp, &keys[i], dp_now_ns() / NS_PER_SEC, 0);
		}
	}
	free(keys);
	return err;
}

/* Gives each probe its errors through the report program, checking every status. */
static int make_probes(struct mx *m, struct lookup_table *t, int family, const char *what)
{
	for (int p = 0; p < 3; p++) {
		struct xdpban_report_req out;
		uint8_t addr[16] = { 0 };

		random_source(m, family, &t->probe6[p], &t->probe4[p]);
		if (family == XDPBAN_FAMILY_INET) {
			uint32_t be = htonl(t->probe4[p]);

			memcpy(addr, &be, 4);
		} else {
			memcpy(addr, t->probe6[p].addr, 16);
		}
		source_key(family, t->probe4[p], &t->probe6[p], &t->probe[p]);
		for (uint32_t e = 1; e <= probe_errors[p]; e++) {
			uint32_t want = e <= XDPBAN_DEFAULT_LIMIT ? XDPBAN_REPORT_COUNTED
								  : XDPBAN_REPORT_BANNED;

			if (dp_report(&t->dp, family, addr, 1, &out) || out.status != want ||
			    out.new_count != e) {
				bench_check_fail(&m->check, what, "report %u of the probe: status %u, "
						 "count %u", e, out.status, out.new_count);
				return -EPROTO;
			}
		}
		m->check.checks++;
	}
	return 0;
}

struct lookup_row {
	struct mx *m;
	struct lookup_table *t;
	int family, probe;
	const char *what;
};

static int prepare_lookup(void *ctx, struct bench_expect *want)
{
	struct lookup_row *l = ctx;
	int err = l->family == XDPBAN_FAMILY_INET
			  ? srcdrv_sources4(&l->m->drv, &l->t->probe4[l->probe], 1)
			  : srcdrv_sources6(&l->m->drv, &l->t->probe6[l->probe], 1);

	if (err) {
		bench_check_fail(&l->m->check, l->what, "loading the probe: %s", strerror(-err));
		return -1;
	}
	memset(want, 0, sizeof(*want));
	want->n[probe_errors[l->probe] > XDPBAN_DEFAULT_LIMIT ? XDPBAN_STAT_DROP_BANNED
							       : XDPBAN_STAT_PASSED] = 1;
	return 0;
}

static void run_lookups(struct mx *m, int family, uint32_t tracked)
{
	static struct lookup_table t;
	char what[96], tracked_text[32], op[64];
	struct bench_frame ok;
	struct bench_result res;
	int err;

	snprintf(what, sizeof(what), "lookups among %u, %s", tracked, family_name(family));
	bench_thousands(tracked, tracked_text, sizeof(tracked_text));
	frame_for(family, BENCH_FRAME_VALID, &ok);
	err = dp_open(&t.dp, NULL);
	if (!err)
		err = fill_others(m, &t, family, tracked - 3);
	if (!err)
		err = make_probes(m, &t, family, what);
	for (int p = 0; p < 3; p++) {
		struct lookup_row l = { m, &t, family, p, what };
		struct bench_pair pp = {
			.drv = &m->drv, .dp = &t.dp, .other_fd = m->bare_fd, .frame = &ok,
			.count = 1, .target_ns = m->target_ns, .runs = m->runs,
			.prepare = prepare_lookup, .ctx = &l,
		};

		memset(&res, 0, sizeof(res));
		res.broken = true;
		if (!err)
			bench_pair_run(&pp, &m->check, what, &res);
		snprintf(op, sizeof(op), "lookup, source with %u errors (%s)", probe_errors[p],
			 probe_errors[p] > XDPBAN_DEFAULT_LIMIT ? "banned: drop" : "pass");
		print_row(op, family, tracked_text, &res, &ref_lookup);
	}
	if (err && err != -EPROTO)
		bench_check_fail(&m->check, what, "setting up the table: %s", strerror(-err));
	if (t.dp.skel)
		dp_close(&t.dp);
}

static void print_header(struct mx *m)
{
	printf("## The ban-service matrix\n\n");
	printf("Method: each operation is one packet through the real xdpban program "
	       "(BPF_PROG_TEST_RUN, unpinned, default config unless stated): an increment is a "
	       "malformed UDP datagram (an error, counted and dropped), a lookup is a valid one "
	       "(the ban check decides pass or drop). A driver (bench/bpf/srcdrv.bpf.c) writes the "
	       "row's sources into the frame and tail-calls xdpban or build/bare_drop.bpf.o; "
	       "ns/op = thread CPU time of the call, less the fixed cost of a call (%.0f us), / "
	       "packets, calls sized to about %.0f ms except where the row fixes the count. IPv6 "
	       "sources are counted per /64. Every call checks xdpban_stats (and the report "
	       "statuses that made the probes). Medians of %d samples (min-max); ratio per "
	       "sample.\n\n",
	       *bench_call_cost_ns() / 1e3, m->target_ns / 1e6, m->runs);
	printf("The reference column is the Torrust tracker's user-space benchmark (Criterion "
	       "on a Ryzen 9 7950X), **measured elsewhere**, on another CPU "
	       "and for a function call on a map, not a packet through XDP; it is context, not a "
	       "same-run comparison. The same-run comparison is the ratio to bare_drop.\n\n");
	printf("| operation | family | tracked | xdpban ns/op | bare_drop ns/pkt | ratio | "
	       "reference ns/op (measured elsewhere) |\n");
	printf("|---|---|---|---|---|---|---|\n");
}

static void cleanup(struct mx *m)
{
	if (m->bare_obj)
		bpf_object__close(m->bare_obj);
	srcdrv_close(&m->drv);
}

static int setup(struct mx *m)
{
	struct bench_frame f;
	int err = srcdrv_open(&m->drv, m->o.build, MX_OPS, MX_OPS);

	if (err)
		return fprintf(stderr, "matrix: loading %s/bench/bpf/srcdrv.bpf.o: %s\n",
			       m->o.build, strerror(-err)), err;
	err = bench_obj_load(m->o.build, "bare_drop.bpf.o", &m->bare_obj, &m->bare_fd);
	if (err)
		return fprintf(stderr, "matrix: loading %s/bare_drop.bpf.o: %s\n", m->o.build,
			       strerror(-err)), err;
	bench_frame4(&f, NULL, BENCH_FRAME_VALID);
	err = bench_calibrate_call(m->drv.tail_fd, &f);
	if (err)
		return fprintf(stderr, "matrix: test run of the driver: %s\n", strerror(-err)), err;
	return 0;
}

int main(int argc, char **argv)
{
	static const uint32_t sizes[] = { 10, 1000, 10000 };
	static struct mx m = { .o = { .name = "matrix" }, .check = { .bench = "matrix" } };
	int rc = 1;

	if (bench_parse_args(&m.o, argc, argv))
		return 2;
	if (!dp_can_load())
		return 77;
	m.runs = bench_runs(&m.o, 2, 7, 15);
	m.target_ns = BENCH_BY_MODE(&m.o, 5000000ull, 30000000ull, 100000000ull);
	bench_rng_init(&m.rng, m.o.seed);
	if (setup(&m))
		goto out;
	print_header(&m);
	for (int f = 0; f < 2; f++) {
		int family = f == 0 ? XDPBAN_FAMILY_INET : XDPBAN_FAMILY_INET6;

		bench_note(&m.o, "%s increments", family_name(family));
		run_family_increments(&m, family);
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			bench_note(&m.o, "%s lookups among %u", family_name(family), sizes[s]);
			run_lookups(&m, family, sizes[s]);
		}
	}
	printf("\n");
	rc = bench_finish(&m.check);
out:
	cleanup(&m);
	return rc;
}
