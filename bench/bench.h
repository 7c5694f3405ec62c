/* bench.h - what every xdpban benchmark shares: the command line, the seeded random numbers,
 * statistics over repeated samples and the way results and failures are printed.
 *
 * Every bench/NAME.c is built as its own program, so shared code lives in headers as static
 * inline functions. Nothing here measures or loads anything. A benchmark prints its results as
 * a markdown section on stdout, and one line "bench: NAME: verdicts verified (N checks)" on
 * stderr when every run checked its verdicts; it must never print a number for a run whose
 * verdicts were wrong.
 */
#ifndef XDPBAN_BENCH_H
#define XDPBAN_BENCH_H

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "xdpban_time.h"

#define BENCH_SEED_DEFAULT 0x78647062ull /* "xdpb": runs on different days stay comparable */
#define BENCH_MAX_RUNS 64

enum bench_mode {
	BENCH_SMOKE = 0, /* a few iterations: proves the workload runs and checks its verdicts */
	BENCH_QUICK = 1, /* `make bench` */
	BENCH_FULL = 2,  /* `make bench-full` */
};

struct bench_opts {
	const char *name;  /* the benchmark, for messages */
	const char *build; /* the build directory holding the BPF objects */
	enum bench_mode mode;
	uint64_t seed;
	int runs; /* samples per measurement; 0 = the mode's default */
	/* extra options a benchmark declares for itself */
	const struct option *extra;
	int (*extra_parse)(int opt, const char *arg, void *ctx);
	void *extra_ctx;
	const char *extra_usage;
};

static inline const char *bench_mode_name(enum bench_mode mode)
{
	return mode == BENCH_SMOKE ? "smoke" : mode == BENCH_QUICK ? "quick" : "full";
}

/* Parses a whole decimal number into [min, max]; -EINVAL otherwise. */
static inline int bench_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!text || !*text || *text == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(text, &end, 0);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static inline void bench_usage(const struct bench_opts *o, FILE *to)
{
	fprintf(to,
		"usage: %s [--build DIR] [--mode smoke|quick|full] [--seed N] [--runs N]%s%s\n",
		o->name, o->extra_usage ? " " : "", o->extra_usage ? o->extra_usage : "");
}

static inline int bench_parse_common(struct bench_opts *o, int opt, const char *arg)
{
	uint64_t v;

	switch (opt) {
	case 'b':
		o->build = arg;
		return 0;
	case 'm':
		if (!strcmp(arg, "smoke"))
			o->mode = BENCH_SMOKE;
		else if (!strcmp(arg, "quick"))
			o->mode = BENCH_QUICK;
		else if (!strcmp(arg, "full"))
			o->mode = BENCH_FULL;
		else
			return fprintf(stderr, "%s: --mode: '%s' is not smoke, quick or full\n",
				       o->name, arg), -EINVAL;
		return 0;
	case 's':
		if (bench_parse_u64(arg, 0, UINT64_MAX, &o->seed))
			return fprintf(stderr, "%s: --seed: '%s' is not a number\n", o->name, arg),
			       -EINVAL;
		return 0;
	case 'r':
		if (bench_parse_u64(arg, 1, BENCH_MAX_RUNS, &v))
			return fprintf(stderr, "%s: --runs: '%s' is not a number from 1 to %d\n",
				       o->name, arg, BENCH_MAX_RUNS), -EINVAL;
		o->runs = v;
		return 0;
	}
	return -ENOENT;
}

/* Parses argv into *o (defaults: build, quick, the fixed seed). 0, or -EINVAL after printing
 * one line naming what was wrong. */
static inline int bench_parse_args(struct bench_opts *o, int argc, char **argv)
{
	struct option all[32] = {
		{ "build", required_argument, NULL, 'b' },
		{ "mode", required_argument, NULL, 'm' },
		{ "seed", required_argument, NULL, 's' },
		{ "runs", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
	};
	int n = 5, opt, err;

	o->build = "build";
	o->mode = BENCH_QUICK;
	o->seed = BENCH_SEED_DEFAULT;
	for (const struct option *e = o->extra; e && e->name && n < 31; e++)
		all[n++] = *e;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "", all, NULL)) != -1) {
		if (opt == 'h') {
			bench_usage(o, stdout);
			exit(0);
		}
		if (opt == '?') {
			fprintf(stderr, "%s: unknown or incomplete option '%s'\n", o->name,
				argv[optind - 1]);
			bench_usage(o, stderr);
			return -EINVAL;
		}
		err = bench_parse_common(o, opt, optarg);
		if (err == -ENOENT && o->extra_parse)
			err = o->extra_parse(opt, optarg, o->extra_ctx);
		if (err)
			return -EINVAL;
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", o->name, argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/* The samples per measurement: --runs, else the mode's default. */
static inline int bench_runs(const struct bench_opts *o, int smoke, int quick, int full)
{
	if (o->runs)
		return o->runs;
	return o->mode == BENCH_SMOKE ? smoke : o->mode == BENCH_QUICK ? quick : full;
}

/* Picks the mode's value from three. */
#define BENCH_BY_MODE(o, smoke, quick, full)                                                  \
	((o)->mode == BENCH_SMOKE ? (smoke) : (o)->mode == BENCH_QUICK ? (quick) : (full))

/* xoshiro256** seeded through splitmix64: fast, and the same stream for the same seed on
 * every machine, which is all a benchmark needs. */
struct bench_rng {
	uint64_t s[4];
};

static inline uint64_t bench_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline void bench_rng_init(struct bench_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = bench_splitmix64(&seed);
}

static inline uint64_t bench_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t bench_rng_next(struct bench_rng *r)
{
	uint64_t *s = r->s, result = bench_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = bench_rotl(s[3], 45);
	return result;
}

/* Uniform in [0, n), n > 0 (Lemire's multiply-shift; the bias is far below 2^-32). */
static inline uint32_t bench_rng_below(struct bench_rng *r, uint32_t n)
{
	return (uint32_t)(((bench_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* Samples of one measurement. */
struct bench_samples {
	double v[BENCH_MAX_RUNS];
	int n;
};

static inline void bench_sample_add(struct bench_samples *s, double v)
{
	if (s->n < BENCH_MAX_RUNS)
		s->v[s->n++] = v;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median, minimum and maximum of the samples; 0 when there are none. */
static inline void bench_summary(const struct bench_samples *s, double *median, double *min,
				 double *max)
{
	double sorted[BENCH_MAX_RUNS];

	*median = *min = *max = 0;
	if (!s->n)
		return;
	memcpy(sorted, s->v, s->n * sizeof(double));
	qsort(sorted, s->n, sizeof(double), bench_cmp_double);
	*min = sorted[0];
	*max = sorted[s->n - 1];
	*median = s->n % 2 ? sorted[s->n / 2] : (sorted[s->n / 2 - 1] + sorted[s->n / 2]) / 2;
}

static inline double bench_median(const struct bench_samples *s)
{
	double median, min, max;

	bench_summary(s, &median, &min, &max);
	return median;
}

/* "median (min-max)" with the given decimals, for a table cell. */
static inline const char *bench_cell(const struct bench_samples *s, int decimals, char *buf,
				     size_t len)
{
	double median, min, max;

	bench_summary(s, &median, &min, &max);
	if (s->n == 1)
		snprintf(buf, len, "%.*f", decimals, median);
	else
		snprintf(buf, len, "%.*f (%.*f-%.*f)", decimals, median, decimals, min, decimals,
			 max);
	return buf;
}

/* n with thousands separators: "1,000,000". */
static inline const char *bench_thousands(uint64_t n, char *buf, size_t len)
{
	char digits[32];
	int nd = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)n);
	size_t o = 0;

	for (int i = 0; i < nd && o + 2 < len; i++) {
		if (i && (nd - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

/* The result of one verdict check. */
struct bench_check {
	const char *bench;
	int checks; /* checks that passed */
	int failed; /* checks that failed */
};

/* Records a failed check: one line naming the benchmark, the case and what was wrong. */
static inline void bench_check_fail(struct bench_check *c, const char *what, const char *fmt,
				    ...)
{
	va_list ap;

	c->failed++;
	fprintf(stderr, "bench: %s: %s: verdict check failed: ", c->bench, what);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The closing line every benchmark prints; the smoke test looks for it. 0 or 1 for exit(). */
static inline int bench_finish(const struct bench_check *c)
{
	if (c->failed) {
		fprintf(stderr, "bench: %s: %d verdict checks failed\n", c->bench, c->failed);
		return 1;
	}
	fprintf(stderr, "bench: %s: verdicts verified (%d checks)\n", c->bench, c->checks);
	return 0;
}

static inline uint64_t bench_clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

/* CPU time of the calling thread. A BPF_PROG_TEST_RUN call runs in the caller's context, so
 * this counts the runs but not the time other tasks held the CPU. */
static inline uint64_t bench_thread_ns(void)
{
	return bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static inline uint64_t bench_mono_ns(void)
{
	return bench_clock_ns(CLOCK_MONOTONIC);
}

/* Wall-clock time, to compare with what a script stamps (bash's $EPOCHREALTIME). */
static inline uint64_t bench_real_ns(void)
{
	return bench_clock_ns(CLOCK_REALTIME);
}

/* A command of a bench tool that takes them ("wire send ...", "flood gen ..."): run with the
 * arguments after its name. */
struct bench_cmd {
	const char *name;
	int (*run)(int argc, char **argv);
};

/* Runs the command named by argv[1] from cmds (ended by a NULL name), after an optional
 * "--build DIR" that sets *build (when build is not NULL); usage() when none matches. */
static inline int bench_dispatch(int argc, char **argv, const struct bench_cmd *cmds,
				 const char **build, int (*usage)(void))
{
	int i = 1;

	if (build && argc > 2 && !strcmp(argv[1], "--build")) {
		*build = argv[2];
		i = 3;
	}
	for (const struct bench_cmd *c = cmds; i < argc && c->name; c++)
		if (!strcmp(argv[i], c->name))
			return c->run(argc - i - 1, argv + i + 1);
	return usage();
}

/* Progress for the operator, on stderr so it never lands in the tables. */
static inline void bench_note(const struct bench_opts *o, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", o->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#endif /* XDPBAN_BENCH_H */
