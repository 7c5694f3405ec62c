/* libapi.c - what a call of the application library (include/xdpban.h) costs
 * an application. The data path is loaded, its maps pinned in a directory of this process's
 * own, and a handle opened on them as a service would; then each call is timed one by one
 * (CLOCK_MONOTONIC around the call) over many calls, and the median and the 99th percentile
 * are printed as a markdown section on stdout.
 *
 * Verdicts: every report must say "counted" with the count the model of one counter expects,
 * the reported sources' counters must hold every report, and xdpban_is_banned must say banned
 * for the banned source only. It removes its pins and directory before it exits. Never
 * attaches.
 */
#include <arpa/inet.h>
#include <sys/stat.h>
#include "bench_bpf.h"
#include "xdpban.h"

#define SOURCES 4096 /* distinct sources of the "many sources" rows */

struct libapi_bench {
	struct bench_opts o;
	struct bench_check check;
	struct dp dp;
	char pin_dir[64];
	struct xdpban_handle *h;
	uint32_t calls;
	double *ns; /* one per call */
	struct sockaddr_in v4[SOURCES];
	struct sockaddr_in6 v6[SOURCES];
	uint32_t reported[SOURCES]; /* reports per IPv4 source, for the check */
};

/* Sources in 198.18.0.0/15 and 2001:db8::/32 (benchmarking and documentation ranges), one
 * IPv6 source per /64 so that each is its own key. */
static void make_sources(struct libapi_bench *b)
{
	struct bench_rng rng;

	bench_rng_init(&rng, b->o.seed);
	for (uint32_t i = 0; i < SOURCES; i++) {
		uint32_t r = bench_rng_next(&rng);

		b->v4[i] = (struct sockaddr_in){ .sin_family = AF_INET,
						 .sin_addr.s_addr = htonl(0xc6120000u | (i << 4) | (r & 15)) };
		b->v6[i] = (struct sockaddr_in6){ .sin6_family = AF_INET6 };
		b->v6[i].sin6_addr.s6_addr32[0] = htonl(0x20010db8);
		b->v6[i].sin6_addr.s6_addr32[1] = htonl(i);
		b->v6[i].sin6_addr.s6_addr32[3] = r;
	}
}

static int open_all(struct libapi_bench *b)
{
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;
	int err = dp_open(&b->dp, NULL);

	if (err)
		return err;
	cfg.limit = XDPBAN_LIMIT_MAX; /* every report is counted, none bans */
	snprintf(b->pin_dir, sizeof(b->pin_dir), "/sys/fs/bpf/xdpban-bench-libapi-%d",
		 (int)getpid());
	if (mkdir(b->pin_dir, 0700))
		return -errno;
	err = dp_pin(&b->dp, b->pin_dir);
	if (!err)
		err = dp_set_config(&b->dp, &cfg);
	if (!err)
		err = xdpban_open(b->pin_dir, &b->h);
	return err;
}

static void close_all(struct libapi_bench *b)
{
	xdpban_close(b->h);
	if (b->pin_dir[0])
		dp_unpin(&b->dp, b->pin_dir);
	if (b->dp.skel)
		dp_close(&b->dp);
	free(b->ns);
}

enum call { REPORT_ONE, REPORT_MANY, REPORT_V6, BANNED_NO, BANNED_YES, BANNED_V6 };

static const char *const call_names[] = {
	[REPORT_ONE] = "`xdpban_report`, one IPv4 source",
	[REPORT_MANY] = "`xdpban_report`, 4,095 IPv4 sources in turn",
	[REPORT_V6] = "`xdpban_report`, 4,096 IPv6 sources in turn",
	[BANNED_NO] = "`xdpban_is_banned`, IPv4, not banned",
	[BANNED_YES] = "`xdpban_is_banned`, IPv4, banned",
	[BANNED_V6] = "`xdpban_is_banned`, IPv6, not banned",
};

/* One call, checked: 0, or -EPROTO after saying what was wrong. */
static int call_once(struct libapi_bench *b, enum call c, uint32_t i)
{
	/* Never source 0, the one banned for the BANNED_YES row. */
	const struct sockaddr *v4 = (const struct sockaddr *)&b->v4[1 + i % (SOURCES - 1)];
	const struct sockaddr *v6 = (const struct sockaddr *)&b->v6[i % SOURCES];
	struct xdpban_result r;
	bool banned = false;
	int err;

	switch (c) {
	case REPORT_ONE:
	case REPORT_MANY:
		if (c == REPORT_ONE)
			v4 = (const struct sockaddr *)&b->v4[0];
		err = xdpban_report(b->h, v4, 1, &r);
		if (!err && r.status == XDPBAN_REPORT_COUNTED)
			b->reported[c == REPORT_ONE ? 0 : 1 + i % (SOURCES - 1)]++;
		return err ? err : r.status == XDPBAN_REPORT_COUNTED ? 0 : -EPROTO;
	case REPORT_V6:
		err = xdpban_report(b->h, v6, 1, &r);
		return err ? err : r.status == XDPBAN_REPORT_COUNTED ? 0 : -EPROTO;
	case BANNED_NO:
	case BANNED_YES:
		err = xdpban_is_banned(b->h, c == BANNED_YES ? (const struct sockaddr *)&b->v4[0] : v4,
				       &banned);
		return err ? err : banned == (c == BANNED_YES) ? 0 : -EPROTO;
	case BANNED_V6:
		err = xdpban_is_banned(b->h, v6, &banned);
		return err ? err : !banned ? 0 : -EPROTO;
	}
	return -EINVAL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Times every call; prints its row, or a failed check and no number. */
static void run_row(struct libapi_bench *b, enum call c)
{
	int err = 0;

	for (uint32_t i = 0; i < b->calls && !err; i++) {
		uint64_t t0 = bench_mono_ns();

		err = call_once(b, c, i);
		b->ns[i] = bench_mono_ns() - t0;
	}
	if (err) {
		bench_check_fail(&b->check, call_names[c], "%s", err == -EPROTO ? "wrong answer"
									 : xdpban_strerror(err));
		return;
	}
	b->check.checks++;
	qsort(b->ns, b->calls, sizeof(*b->ns), cmp_double);
	printf("| %s | %u | %.0f | %.0f |\n", call_names[c], b->calls, b->ns[b->calls / 2],
	       b->ns[(uint64_t)b->calls * 99 / 100]);
}

/* The counters hold every report counted; then the source is banned for the is_banned rows. */
static int check_and_ban(struct libapi_bench *b)
{
	struct xb_prefix p = { .family = XDPBAN_FAMILY_INET, .plen = 32 };
	char err[XB_ERRLEN];

	for (uint32_t i = 0; i < SOURCES; i++) {
		char text[INET_ADDRSTRLEN];
		struct xdpban_key key;
		__u32 start, count = 0;

		if (!b->reported[i])
			continue;
		inet_ntop(AF_INET, &b->v4[i].sin_addr, text, sizeof(text));
		if (dp_key(text, 64, &key) || dp_counter(&b->dp, &key, &start, &count) ||
		    count != b->reported[i]) {
			bench_check_fail(&b->check, "counters", "%s holds %u of %u reports", text,
					 count, b->reported[i]);
			return -EPROTO;
		}
	}
	b->check.checks++;
	memcpy(p.addr, &b->v4[0].sin_addr, 4);
	return xb_ban(&b->dp.maps, &p, 0, err, sizeof(err));
}

int main(int argc, char **argv)
{
	static struct libapi_bench b = { .o = { .name = "libapi" }, .check = { .bench = "libapi" } };
	int err;

	if (bench_parse_args(&b.o, argc, argv))
		return 2;
	if (!dp_can_load())
		return 77;
	b.calls = BENCH_BY_MODE(&b.o, 2000u, 200000u, 1000000u);
	b.ns = calloc(b.calls, sizeof(*b.ns));
	make_sources(&b);
	err = b.ns ? open_all(&b) : -ENOMEM;
	if (err) {
		fprintf(stderr, "libapi: setting up the pinned maps and the handle: %s\n",
			xdpban_strerror(err));
		close_all(&b);
		return 1;
	}
	printf("## Application library (libxdpban)\n\n");
	printf("One handle on pinned maps (`xdpban_open`), as a service holds it; each call timed "
	       "alone with CLOCK_MONOTONIC (about 20 ns of it is the clock), %u calls per row. "
	       "A report is one BPF_PROG_TEST_RUN of the report program; a ban check reads the "
	       "mapped ban table and looks the address up in the policy trie (IPv6 also reads "
	       "the config). Every answer is checked.\n\n", b.calls);
	printf("| call | calls | median ns | p99 ns |\n|---|---|---|---|\n");
	for (enum call c = REPORT_ONE; c <= REPORT_V6; c++)
		run_row(&b, c);
	if (check_and_ban(&b) == 0)
		for (enum call c = BANNED_NO; c <= BANNED_V6; c++)
			run_row(&b, c);
	else
		bench_check_fail(&b.check, "ban", "the ban for the is_banned rows failed");
	printf("\n");
	close_all(&b);
	return bench_finish(&b.check);
}
