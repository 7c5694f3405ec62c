/* peer.c - a peer XDP filter. xdp-filter (Debian xdp-tools), loaded by
 * bench/xdp_filter.sh on a veth in a namespace of its own, holds a list of exact source
 * addresses to drop; xdpban holds the same list as /32 and /128 deny prefixes. Its program
 * (found by id) and xdpban's full pipeline run over the same random sources in the same
 * BPF_PROG_TEST_RUN harness, in the same run.
 *
 * Prints a markdown section on stdout. Both programs' verdict counts are checked (xdp-filter's
 * xdp_stats_map, xdpban_stats) against which sources are listed; a row whose check fails
 * prints no number. It writes only xdp-filter's own filter maps under the pin directory the
 * script gave it, and never attaches or detaches anything.
 */
#include "bench_bpf.h"
#include <xdp/xdp_stats_kern_user.h> /* after linux/bpf.h: xdp-filter's stats record */

/* xdp-filter's map contract (xdp-tools, xdp-filter/common_kern_user.h): a u64 per address
 * and CPU whose low bits say which direction matches; the rest is a hit counter. */
#define XF_MAP_FLAG_SRC (1ull << 0)
#define XF_MAP_IPV4 "filter_ipv4"
#define XF_MAP_IPV6 "filter_ipv6"
#define XF_MAP_STATS "xdp_stats_map"
#define XF_MAX_ENTRIES 10000 /* xdp-filter's table size */

struct peer {
	struct bench_opts o;
	uint32_t prog_id;
	const char *pin_dir;
	int runs;
	uint64_t target_ns;
	uint32_t listed;  /* addresses on the list, per family */
	uint32_t sources; /* random sources per family */
	struct bench_rng rng;
	struct srcdrv drv;
	struct dp dp;
	int xf_fd, xf_v4, xf_v6, xf_stats, ncpus;
	char xf_name[BPF_OBJ_NAME_LEN];
	struct bench_check check;
};

static int parse_extra(int opt, const char *arg, void *ctx)
{
	struct peer *p = ctx;
	uint64_t v;

	switch (opt) {
	case 'i':
		if (bench_parse_u64(arg, 1, UINT32_MAX, &v))
			return fprintf(stderr, "peer: --prog-id: '%s' is not a program id\n", arg),
			       -EINVAL;
		p->prog_id = v;
		return 0;
	case 'p':
		p->pin_dir = arg;
		return 0;
	}
	return -EINVAL;
}

static int open_pinned(struct peer *p, const char *name)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", p->pin_dir, name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		fprintf(stderr, "peer: opening %s: %s\n", path, strerror(errno));
	return fd < 0 ? -errno : fd;
}

/* Finds xdp-filter's program and maps. */
static int open_xdp_filter(struct peer *p)
{
	struct bpf_prog_info info = { 0 };
	uint32_t len = sizeof(info);

	p->xf_fd = bpf_prog_get_fd_by_id(p->prog_id);
	if (p->xf_fd < 0)
		return fprintf(stderr, "peer: program id %u: %s\n", p->prog_id, strerror(errno)),
		       -errno;
	if (bpf_obj_get_info_by_fd(p->xf_fd, &info, &len) || info.type != BPF_PROG_TYPE_XDP)
		return fprintf(stderr, "peer: program id %u is not an XDP program\n", p->prog_id),
		       -EINVAL;
	snprintf(p->xf_name, sizeof(p->xf_name), "%s", info.name);
	p->xf_v4 = open_pinned(p, XF_MAP_IPV4);
	p->xf_v6 = open_pinned(p, XF_MAP_IPV6);
	p->xf_stats = open_pinned(p, XF_MAP_STATS);
	p->ncpus = libbpf_num_possible_cpus();
	if (p->xf_v4 < 0 || p->xf_v6 < 0 || p->xf_stats < 0 || p->ncpus <= 0)
		return -ENOENT;
	return 0;
}

/* One family's list and sources. */
struct family_case {
	struct peer *p;
	int family;
	uint32_t *src4, *list4;
	struct srcdrv_addr6 *src6, *list6;
	uint32_t denied; /* sources on the list */
	const char *what;
	uint64_t before[XDP_ACTION_MAX];
};

/* Lists an address in xdp-filter (every CPU's value says "match as source") and adds it to
 * the set compiled into xdpban's policy once both families are listed. */
static int list_address(struct family_case *fc, uint32_t i, struct xb_policy_set *set)
{
	struct xdpban_policy pol = { .verdict = XDPBAN_POLICY_DENY, .list_id = 1 };
	struct peer *p = fc->p;
	uint64_t *flags = calloc(p->ncpus, sizeof(*flags));
	struct xb_prefix pre = { .family = fc->family };
	int err = 0;

	if (!flags)
		return -ENOMEM;
	for (int c = 0; c < p->ncpus; c++)
		flags[c] = XF_MAP_FLAG_SRC;
	if (fc->family == XDPBAN_FAMILY_INET) {
		uint32_t be = htonl(fc->list4[i]);

		pre.plen = 32;
		memcpy(pre.addr, &be, 4);
		if (bpf_map_update_elem(p->xf_v4, &be, flags, BPF_ANY))
			err = -errno;
	} else {
		pre.plen = 128;
		memcpy(pre.addr, fc->list6[i].addr, 16);
		if (bpf_map_update_elem(p->xf_v6, fc->list6[i].addr, flags, BPF_ANY))
			err = -errno;
	}
	free(flags);
	return err ? err : xb_policy_set_add(set, &pre, &pol);
}

static int addr6_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct srcdrv_addr6));
}

/* Distinct random addresses for the list, sorted so that membership is a binary search. */
static int make_list(struct family_case *fc)
{
	struct peer *p = fc->p;

	if (fc->family == XDPBAN_FAMILY_INET) {
		struct bench_set4 set = { NULL, 0 };
		int err = bench_set4_random(&p->rng, p->listed, NULL, &set);

		if (!err)
			memcpy(fc->list4, set.addr, p->listed * sizeof(*fc->list4));
		bench_set4_free(&set);
		return err;
	}
	for (uint32_t i = 0; i < p->listed; i++)
		bench_random_addr6(&p->rng, fc->list6[i].addr);
	qsort(fc->list6, p->listed, sizeof(*fc->list6), addr6_cmp);
	for (uint32_t i = 1; i < p->listed; i++)
		if (!addr6_cmp(&fc->list6[i - 1], &fc->list6[i]))
			return -EEXIST; /* two equal random 128-bit addresses: a broken generator */
	return 0;
}

/* A random source that is not on the list. */
static void random_unlisted(struct family_case *fc, uint32_t i)
{
	struct bench_set4 list = { fc->list4, fc->p->listed };

	if (fc->family == XDPBAN_FAMILY_INET) {
		do
			fc->src4[i] = bench_source4(&fc->p->rng);
		while (bench_set4_has(&list, fc->src4[i]));
		return;
	}
	do
		bench_random_addr6(&fc->p->rng, fc->src6[i].addr);
	while (bsearch(&fc->src6[i], fc->list6, fc->p->listed, sizeof(*fc->list6), addr6_cmp));
}

/* The list, then the sources: a tenth of them listed, the rest random and not listed. */
static int make_family(struct family_case *fc, struct xb_policy_set *set)
{
	struct peer *p = fc->p;
	int err;

	fc->list4 = calloc(p->listed, sizeof(*fc->list4));
	fc->list6 = calloc(p->listed, sizeof(*fc->list6));
	fc->src4 = calloc(p->sources, sizeof(*fc->src4));
	fc->src6 = calloc(p->sources, sizeof(*fc->src6));
	if (!fc->list4 || !fc->list6 || !fc->src4 || !fc->src6)
		return -ENOMEM;
	err = make_list(fc);
	for (uint32_t i = 0; !err && i < p->listed; i++)
		err = list_address(fc, i, set);
	for (uint32_t i = 0; !err && i < p->sources; i++) {
		uint32_t pick = bench_rng_below(&p->rng, p->listed);

		if (bench_rng_below(&p->rng, 10)) {
			random_unlisted(fc, i);
			continue;
		}
		fc->denied++;
		if (fc->family == XDPBAN_FAMILY_INET)
			fc->src4[i] = fc->list4[pick];
		else
			fc->src6[i] = fc->list6[pick];
	}
	return err;
}

static void free_family(struct family_case *fc)
{
	free(fc->list4);
	free(fc->list6);
	free(fc->src4);
	free(fc->src6);
}

static int xf_stats(struct peer *p, uint64_t out[XDP_ACTION_MAX])
{
	struct xdp_stats_record *percpu = calloc(p->ncpus, sizeof(*percpu));

	if (!percpu)
		return -ENOMEM;
	for (uint32_t a = 0; a < XDP_ACTION_MAX; a++) {
		out[a] = 0;
		if (bpf_map_lookup_elem(p->xf_stats, &a, percpu)) {
			free(percpu);
			return -errno;
		}
		for (int c = 0; c < p->ncpus; c++)
			out[a] += percpu[c].rx_packets;
	}
	free(percpu);
	return 0;
}

/* xdp-filter must drop exactly the listed sources and pass the others, pass after pass. */
static int check_xdp_filter(void *ctx, int phase, uint32_t packets, uint32_t retval,
			    struct bench_check *c, const char *what)
{
	struct family_case *fc = ctx;
	uint64_t now[XDP_ACTION_MAX], passes = packets / fc->p->sources, dropped, passed;

	if (xf_stats(fc->p, phase == 0 ? fc->before : now)) {
		bench_check_fail(c, what, "reading xdp-filter's %s", XF_MAP_STATS);
		return -1;
	}
	if (phase == 0)
		return 0;
	dropped = now[XDP_DROP] - fc->before[XDP_DROP];
	passed = now[XDP_PASS] - fc->before[XDP_PASS];
	if (dropped != passes * fc->denied || passed != passes * (fc->p->sources - fc->denied)) {
		bench_check_fail(c, what, "xdp-filter dropped %llu and passed %llu, expected %llu "
				 "and %llu", (unsigned long long)dropped, (unsigned long long)passed,
				 (unsigned long long)(passes * fc->denied),
				 (unsigned long long)(passes * (fc->p->sources - fc->denied)));
		return -1;
	}
	(void)retval;
	return 0;
}

static int prepare_family(void *ctx, struct bench_expect *want)
{
	struct family_case *fc = ctx;
	struct peer *p = fc->p;
	int err = fc->family == XDPBAN_FAMILY_INET ? srcdrv_sources4(&p->drv, fc->src4, p->sources)
						    : srcdrv_sources6(&p->drv, fc->src6, p->sources);

	if (err) {
		bench_check_fail(&p->check, fc->what, "loading the driver's sources: %s",
				 strerror(-err));
		return -1;
	}
	memset(want, 0, sizeof(*want));
	want->n[XDPBAN_STAT_DROP_DENY] = fc->denied;
	want->n[XDPBAN_STAT_PASSED] = p->sources - fc->denied;
	return 0;
}

static void run_family(struct peer *p, struct family_case *fc, struct bench_result *res)
{
	struct bench_frame f;
	struct bench_pair pp = {
		.drv = &p->drv, .dp = &p->dp, .other_fd = p->xf_fd,
		.check_other = check_xdp_filter, .frame = &f, .count = p->sources,
		.target_ns = p->target_ns, .runs = p->runs, .prepare = prepare_family, .ctx = fc,
	};

	if (srcdrv_target(&p->drv, p->xf_fd)) {
		bench_check_fail(&p->check, fc->what, "xdp-filter's program cannot be tail-called "
				 "from the driver: %s", strerror(errno));
		return;
	}
	if (fc->family == XDPBAN_FAMILY_INET)
		bench_frame4(&f, NULL, BENCH_FRAME_VALID);
	else
		bench_frame6(&f, NULL, BENCH_FRAME_VALID);
	bench_pair_run(&pp, &p->check, fc->what, res);
}

/* Lists both families' addresses (xdp-filter's maps; one compile of xdpban's policy, which
 * must see every entry at once), then measures each family. */
static void run_families(struct peer *p, struct bench_result res[2])
{
	struct family_case fc[2] = {
		{ .p = p, .family = XDPBAN_FAMILY_INET, .what = "IPv4" },
		{ .p = p, .family = XDPBAN_FAMILY_INET6, .what = "IPv6" },
	};
	struct xb_policy_set set = { 0 };
	int err = make_family(&fc[0], &set);

	if (!err)
		err = make_family(&fc[1], &set);
	if (!err)
		err = dp_policy_compile(&p->dp, &set, NULL, NULL);
	xb_policy_set_free(&set);
	if (err)
		bench_check_fail(&p->check, "lists", "listing the addresses: %s", strerror(-err));
	for (int i = 0; i < 2 && !err; i++)
		run_family(p, &fc[i], &res[i]);
	free_family(&fc[0]);
	free_family(&fc[1]);
}

static void print_table(struct peer *p, const struct bench_result res[2])
{
	printf("## A peer XDP filter: xdp-filter\n\n");
	printf("Method: bench/xdp_filter.sh loads xdp-filter (Debian xdp-tools; program %s, id %u, "
	       "attached natively to a veth in a namespace of its own, no libxdp dispatcher) and "
	       "lists %u random addresses per family in its pinned filter maps (exact match, "
	       "source direction); xdpban (fresh, unpinned) gets the same addresses as /32 and "
	       "/128 deny prefixes, compiled into its policy (trie and flat table). %u sources per family, a tenth of them listed, go through each "
	       "program behind the driver (bench/bpf/srcdrv.bpf.c); calls sized to about %.0f ms; "
	       "ns/packet = thread CPU time less the fixed cost of a call (%.0f us), / packets. "
	       "Verdicts checked on both sides (xdp-filter's xdp_stats_map, xdpban_stats). "
	       "Medians of %d samples (min-max); ratio per sample. xdp-filter matches exact "
	       "addresses only; xdpban matches prefixes, and also checks bans, counts errors and "
	       "validates headers.\n\n",
	       p->xf_name, p->prog_id, p->listed, p->sources, p->target_ns / 1e6,
	       *bench_call_cost_ns() / 1e3, p->runs);
	printf("| family | listed | xdpban ns/pkt | xdp-filter ns/pkt | ratio |\n");
	printf("|---|---|---|---|---|\n");
	for (int i = 0; i < 2; i++) {
		char x[64], o[64], ratio[64], listed[32];

		bench_result_cells(&res[i], x, o, ratio, sizeof(x));
		printf("| %s | %s | %s | %s | %s |\n", i == 0 ? "IPv4" : "IPv6",
		       bench_thousands(p->listed, listed, sizeof(listed)), x, o, ratio);
	}
	printf("\n");
	for (int i = 0; i < 2 && p->o.mode != BENCH_SMOKE; i++)
		if (!res[i].broken)
			fprintf(stderr, "bench-target: at most xdp-filter's cost per packet (%s) = "
				"%.2fx (%.1f vs %.1f ns/pkt): %s\n", i == 0 ? "IPv4" : "IPv6",
				bench_median(&res[i].ratio), bench_median(&res[i].xdpban),
				bench_median(&res[i].other),
				bench_median(&res[i].ratio) <= 1 ? "met" : "not met");
}

int main(int argc, char **argv)
{
	static const struct option extra[] = {
		{ "prog-id", required_argument, NULL, 'i' },
		{ "pin-dir", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	static struct peer p = {
		.o = { .name = "peer", .extra = extra, .extra_parse = parse_extra, .extra_ctx = &p,
		       .extra_usage = "--prog-id ID [--pin-dir DIR]" },
		.pin_dir = "/sys/fs/bpf/xdp-filter",
		.check = { .bench = "xdp-filter" },
	};
	struct bench_result res[2] = { { .broken = true }, { .broken = true } };
	struct bench_frame f;
	int err, rc = 1;

	if (bench_parse_args(&p.o, argc, argv))
		return 2;
	if (!p.prog_id) {
		fprintf(stderr, "peer: --prog-id is required\n");
		return 2;
	}
	if (!dp_can_load())
		return 77;
	p.runs = bench_runs(&p.o, 2, 5, 11);
	p.target_ns = BENCH_BY_MODE(&p.o, 5000000ull, 40000000ull, 100000000ull);
	p.listed = BENCH_BY_MODE(&p.o, 1000, XF_MAX_ENTRIES, XF_MAX_ENTRIES);
	p.sources = BENCH_BY_MODE(&p.o, 4096, 131072, 1048576);
	bench_rng_init(&p.rng, p.o.seed);
	err = open_xdp_filter(&p);
	/* xdp-filter's loader has no frags, and one driver tail-calls both programs. */
	if (!err)
		err = dp_open(&p.dp, &(struct dp_opts){ .single_buffer = true });
	if (!err)
		err = srcdrv_open_frags(&p.drv, p.o.build, p.sources, p.sources, false);
	bench_frame4(&f, NULL, BENCH_FRAME_VALID);
	if (!err)
		err = bench_calibrate_call(p.drv.tail_fd, &f);
	if (err) {
		fprintf(stderr, "peer: setting up: %s\n", strerror(-err));
		goto out;
	}
	run_families(&p, res);
	print_table(&p, res);
	rc = bench_finish(&p.check);
out:
	srcdrv_close(&p.drv);
	if (p.dp.skel)
		dp_close(&p.dp);
	return rc;
}
