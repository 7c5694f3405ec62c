/* kcheck.c - the kernel check: loads every program of the data path's object (the skeleton
 * build/xdpban.skel.h) into the running kernel the way xdpband loads it, and holds each to a
 * budget of processed instructions; optionally attaches xdpban natively to a veth, directly
 * and through libxdp, and runs verdict rows through BPF_PROG_TEST_RUN. tests/e2e/e2e_verifier.sh
 * runs it on this machine's kernel, tests/e2e/e2e_kernels.sh in a VM of another (linked
 * statically, as kcheck.static).
 *
 * It prints the kernel's release, one line of counts per program, and one "PASS: name",
 * "FAIL: name (why)" or "SKIP: name (why)" line per check; exits 1 when a check failed, 2 on a
 * usage error. Never pins a map: every map lives as long as this process, so it never touches
 * a running xdpban's state. An attach goes only to the interface it is given, and is undone.
 *
 * Usage: kcheck [-b BUDGET] [-a VETH] [-t] [-v]
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <xdp/libxdp.h>
#include "dp.h"
#include "pkt.h"
#include "verifier.h"

#define DEFAULT_BUDGET 250000
#define RUN_PRIO 10 /* xdpband's (user/xdpband/attach.h) */

struct args {
	long long budget;
	const char *veth; /* attach there, or NULL */
	bool verdicts;
	bool verbose;
};

/* One instance of the object, loading one program, as xdpband loads each: xdpban multi-buffer
 * aware in the instance it attaches, xdpban_report in its state object. */
struct instance {
	const char *prog;
	struct xdpban *skel;
	int err;                 /* of the load; 0 once loaded */
	double load_s;           /* how long the load took */
	char log[XB_VLOG_SIZE];  /* the verifier's, at level 4 */
};

static char g_release[65];
static int g_failed;
static char g_first[1200]; /* the first failure, for the closing line */

static void pass(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void pass(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("PASS: ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
}

static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (!g_failed++)
		vsnprintf(g_first, sizeof(g_first), fmt, ap);
	va_end(ap);
	va_start(ap, fmt);
	fputs("FAIL: ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
}

static bool g_verbose;

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return g_verbose && level != LIBBPF_DEBUG ? vfprintf(stderr, fmt, ap) : 0;
}

static int print_libxdp(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	return g_verbose ? vfprintf(stderr, fmt, ap) : 0;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- loading ---- */

/* The instance's maps become share's (as xdpband's instances share them through the pins). */
static int share_maps(struct xdpban *skel, const struct xdpban *share)
{
	struct bpf_map *map, *theirs;
	int ret = 0;

	bpf_object__for_each_map(map, skel->obj) {
		if (ret || bpf_map__is_internal(map))
			continue;
		theirs = bpf_object__find_map_by_name(share->obj, bpf_map__name(map));
		ret = theirs ? bpf_map__reuse_fd(map, bpf_map__fd(theirs)) : -ENOENT;
	}
	return ret;
}

/* Opens an instance that loads only its program, its maps unpinned (or share's). */
static int instance_open(struct instance *in, const char *prog, const struct xdpban *share)
{
	struct bpf_map *map;
	bool datapath = !strcmp(prog, "xdpban");
	int ret;

	in->prog = prog;
	in->log[0] = '\0';
	in->skel = xdpban__open();
	if (!in->skel)
		return -errno;
	bpf_object__for_each_map(map, in->skel->obj)
		bpf_map__set_pin_path(map, NULL);
	bpf_program__set_autoload(in->skel->progs.xdpban, datapath);
	bpf_program__set_autoload(in->skel->progs.xdpban_report, !datapath);
	ret = datapath ? xb_datapath_frags(in->skel) : 0;
	if (!ret && share)
		ret = share_maps(in->skel, share);
	if (!ret)
		ret = xb_vlog_set(datapath ? in->skel->progs.xdpban : in->skel->progs.xdpban_report,
				  in->log, sizeof(in->log));
	return ret;
}

static void instance_close(struct instance *in)
{
	xdpban__destroy(in->skel);
	in->skel = NULL;
}

static void instance_load(struct instance *in, const char *prog, const struct xdpban *share)
{
	double t0 = now_s();

	in->err = instance_open(in, prog, share);
	if (!in->err)
		in->err = xdpban__load(in->skel);
	in->load_s = now_s() - t0;
}

static int instance_fd(const struct instance *in)
{
	return bpf_program__fd(strcmp(in->prog, "xdpban") ? in->skel->progs.xdpban_report
							   : in->skel->progs.xdpban);
}

/* The instructions the kernel verified, from the program's info (5.16 and later): for a
 * kernel whose log says nothing countable. -1 when it cannot say. */
static long long verified_insns(const struct instance *in)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(instance_fd(in), &info, &len) || !info.verified_insns)
		return -1;
	return info.verified_insns;
}

/* The verifier's log, indented, when a load failed: its reason and counts. */
static void show_log(const char *log)
{
	const char *end;

	for (const char *line = log; *line; line = *end ? end + 1 : end) {
		end = strchrnul(line, '\n');
		printf("  | %.*s\n", (int)(end - line), line);
	}
}

static void print_counts(const struct instance *in, const struct xb_vstats *st)
{
	printf("%s: processed %lld insns, total_states %lld, peak_states %lld, max_states_per_insn %lld, verification %lld usec, load %.2f s, Linux %s\n",
	       in->prog, st->insns, st->total_states, st->peak_states, st->max_states_per_insn,
	       st->time_usec, in->load_s, g_release);
}

/* Prints a program's counts and holds them to the budget. */
static void check_program(const struct instance *in, long long budget)
{
	char why[1024];
	struct xb_vstats st;

	if (in->err && xb_vstats_parse(in->log, &st)) {
		fail("load %s (%s, before the verifier ran)", in->prog, strerror(-in->err));
		return;
	}
	if (in->err) {
		xb_vlog_refusal(in->prog, in->log, in->err, why, sizeof(why));
		fail("load %s (%s)", in->prog, why);
		show_log(in->log);
		return;
	}
	if (xb_vstats_parse(in->log, &st))
		st.insns = verified_insns(in);
	print_counts(in, &st);
	if (st.insns < 0)
		fail("budget %s (the kernel's log and program info give no count)", in->prog);
	else if (st.insns > budget)
		fail("budget %s (%lld processed insns, over the budget of %lld on Linux %s)",
		     in->prog, st.insns, budget, g_release);
	else
		pass("budget %s (%lld processed insns, within %lld on Linux %s)", in->prog,
		     st.insns, budget, g_release);
}

/* ---- native attach ---- */

static __u32 prog_id(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

/* xdpban alone in the driver's hook (XDP_FLAGS_DRV_MODE), then off again. */
static void attach_direct(const struct instance *dpath, const char *veth, int ifindex)
{
	int fd = bpf_program__fd(dpath->skel->progs.xdpban), ret;
	__u32 id = 0;

	ret = bpf_xdp_attach(ifindex, fd, XDP_FLAGS_DRV_MODE | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (ret) {
		fail("native attach direct (%s: bpf_xdp_attach: %s)", veth, strerror(-ret));
		return;
	}
	ret = bpf_xdp_query_id(ifindex, XDP_FLAGS_DRV_MODE, &id);
	if (ret || id != prog_id(fd))
		fail("native attach direct (%s: attached, but the driver's hook holds program %u, not %u)",
		     veth, id, prog_id(fd));
	else
		pass("native attach direct (%s: program %u in the driver's hook)", veth, id);
	ret = bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE, NULL);
	if (ret)
		fail("native detach direct (%s: %s)", veth, strerror(-ret));
}

/* How libxdp attached: behind its dispatcher, or alone (its fallback when the kernel refuses
 * the dispatcher's freplace programs). */
static const char *libxdp_how(int ifindex)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	const char *how;

	if (libxdp_get_error(mp) || !mp)
		return NULL;
	how = xdp_multiprog__is_legacy(mp)
		      ? "directly: this kernel refused libxdp's dispatcher, libxdp fell back"
		      : "through libxdp's dispatcher";
	xdp_multiprog__close(mp);
	return how;
}

/* Attaches in mode native; 0, or -errno after a FAIL line. */
static int libxdp_attach(struct instance *in, struct xdp_program *p, const char *veth,
			 int ifindex)
{
	char why[1024];
	double t0 = now_s();
	int ret = xdp_program__attach(p, ifindex, XDP_MODE_NATIVE, 0);

	in->load_s = now_s() - t0;
	if (!ret)
		return 0;
	if (bpf_program__fd(in->skel->progs.xdpban) < 0 &&
	    xb_vlog_explain(in->prog, in->log, ret, why, sizeof(why))) {
		fail("native attach libxdp (%s: %s)", veth, why);
		show_log(in->log);
	} else {
		fail("native attach libxdp (%s: xdp_program__attach: %s)", veth, strerror(-ret));
	}
	return ret;
}

/* A third instance of the object, sharing the maps, loaded by libxdp as xdpband's attach is. */
static void attach_libxdp(const struct instance *dpath, const char *veth, int ifindex)
{
	DECLARE_LIBXDP_OPTS(xdp_program_opts, opts, .prog_name = "xdpban");
	struct instance *in = calloc(1, sizeof(*in));
	struct xdp_program *p = NULL;
	const char *how;
	int ret;

	ret = in ? instance_open(in, "xdpban", dpath->skel) : -ENOMEM;
	if (!ret) {
		opts.obj = in->skel->obj;
		p = xdp_program__create(&opts);
		ret = (int)libxdp_get_error(p);
	}
	if (!ret)
		ret = xdp_program__set_run_prio(p, RUN_PRIO);
	if (ret) {
		fail("native attach libxdp (%s: cannot prepare the program: %s)", veth,
		     strerror(-ret));
	} else if (!libxdp_attach(in, p, veth, ifindex)) {
		how = libxdp_how(ifindex);
		if (how)
			pass("native attach libxdp (%s: %s; load and attach %.2f s)", veth, how,
			     in->load_s);
		else
			fail("native attach libxdp (%s: attached, but libxdp finds no program there)",
			     veth);
		ret = xdp_program__detach(p, ifindex, XDP_MODE_NATIVE, 0);
		if (ret)
			fail("native detach libxdp (%s: %s)", veth, strerror(-ret));
	}
	if (p && !libxdp_get_error(p))
		xdp_program__close(p);
	if (in)
		instance_close(in);
	free(in);
}

static void check_attach(const struct instance *dpath, const char *veth)
{
	int ifindex = (int)if_nametoindex(veth);

	if (dpath->err) {
		printf("SKIP: native attach (%s: xdpban did not load)\n", veth);
		return;
	}
	if (!ifindex) {
		fail("native attach (%s: no such interface)", veth);
		return;
	}
	attach_direct(dpath, veth, ifindex);
	attach_libxdp(dpath, veth, ifindex);
}

/* ---- verdicts ---- */

#define CLEAN "192.0.2.10"
#define ERRING "192.0.2.20"
#define DENIED_NET "203.0.113.0/24"
#define DENIED "203.0.113.7"
#define STATS_SLOTS XDPBAN_STAT__MAX

/* The packets of the rows: a clean UDP datagram, and two malformed ones. */
enum kind {
	GOOD,
	BAD_IHL,     /* an IPv4 header length of 4 (16 bytes), under the minimum of 5 */
	BAD_UDP_LEN, /* a UDP length 100 bytes past the end of the packet */
};

static const char *action_name(__u32 action)
{
	static const char *const names[] = { "XDP_ABORTED", "XDP_DROP", "XDP_PASS", "XDP_TX",
					     "XDP_REDIRECT" };

	return action < sizeof(names) / sizeof(names[0]) ? names[action] : "?";
}

static int frame(const char *src, enum kind kind, __u8 *buf, __u32 cap, __u32 *len)
{
	struct pkt_spec spec = { .src = src, .dst = "198.51.100.1", .l4 = PKT_L4_UDP,
				 .payload_len = 16 };
	struct pkt_layout at;
	int ret;

	if (kind == BAD_IHL)
		spec.ip4.ihl = (struct pkt_opt)PKT_SET(4);
	else if (kind == BAD_UDP_LEN)
		spec.udp.len = (struct pkt_opt)PKT_SET(PKT_UDP_LEN + 16 + 100);
	ret = pkt_build(&spec, buf, cap, &at);
	*len = ret ? 0 : at.len;
	return ret;
}

/* Runs a packet; *grew gets the packets each stats slot gained. */
static int run(struct dp *dp, const char *src, enum kind kind, __u32 *action,
	       __u64 grew[STATS_SLOTS])
{
	struct xdpban_stat_value before[STATS_SLOTS], after[STATS_SLOTS];
	__u8 buf[256];
	__u32 len;
	int ret = frame(src, kind, buf, sizeof(buf), &len);

	if (!ret)
		ret = dp_stats(dp, before);
	if (!ret)
		ret = dp_run(dp, buf, len, action);
	if (!ret)
		ret = dp_stats(dp, after);
	for (int i = 0; !ret && i < STATS_SLOTS; i++)
		grew[i] = after[i].packets - before[i].packets;
	return ret;
}

/* One row: a packet's action and the verdict slot it landed in. NULL, or why it failed. */
static const char *expect(struct dp *dp, const char *src, enum kind kind, __u32 want_action,
			  enum xdpban_stat want_slot, __u64 grew[STATS_SLOTS])
{
	static char why[160];
	__u32 action;
	int ret = run(dp, src, kind, &action, grew);

	if (ret)
		snprintf(why, sizeof(why), "test run: %s", strerror(-ret));
	else if (action != want_action)
		snprintf(why, sizeof(why), "%s, expected %s", action_name(action),
			 action_name(want_action));
	else if (grew[want_slot] != 1)
		snprintf(why, sizeof(why), "stats slot %s grew by %llu, expected 1",
			 xb_stat_name(want_slot), (unsigned long long)grew[want_slot]);
	else
		return NULL;
	return why;
}

static void row(const char *name, const char *why)
{
	if (why)
		fail("verdict %s (%s)", name, why);
	else
		pass("verdict %s", name);
}

static const char *errors_counted(struct dp *dp, const struct xdpban_key *key)
{
	static char why[200];
	__u64 grew[STATS_SLOTS];
	struct xdpban_ban ban;
	__u32 start_s, count = 0;
	const char *bad;

	for (__u32 i = 1; i <= 10; i++) {
		bad = expect(dp, ERRING, i % 2 ? BAD_IHL : BAD_UDP_LEN, XDP_DROP,
			     XDPBAN_STAT_DROP_MALFORMED, grew);
		if (!bad && (dp_counter(dp, key, &start_s, &count) || count != i))
			bad = "counter not at the error's number";
		if (!bad && dp_ban(dp, key, &ban) != -ENOENT)
			bad = "banned before the 11th error";
		if (bad) {
			snprintf(why, sizeof(why), "error %u: %s (counter %u)", i, bad, count);
			return why;
		}
	}
	return NULL;
}

static const char *eleventh_bans(struct dp *dp, const struct xdpban_key *key)
{
	__u64 grew[STATS_SLOTS];
	struct xdpban_ban ban;
	const char *bad = expect(dp, ERRING, BAD_IHL, XDP_DROP, XDPBAN_STAT_DROP_MALFORMED, grew);

	if (bad)
		return bad;
	if (grew[XDPBAN_STAT_BANS_CREATED] != 1)
		return "bans_created did not grow by 1";
	if (dp_ban(dp, key, &ban))
		return "no ban in the ban table";
	if (ban.count != 11 || ban.reason != XDPBAN_REASON_ERRORS)
		return "the ban's count is not 11, or its reason not errors";
	return NULL;
}

static void check_verdict_rows(struct dp *dp)
{
	__u64 grew[STATS_SLOTS];
	struct xdpban_key key;

	row("clean UDP " CLEAN " -> 198.51.100.1 passes",
	    expect(dp, CLEAN, GOOD, XDP_PASS, XDPBAN_STAT_PASSED, grew));
	if (dp_key(ERRING, XDPBAN_DEFAULT_V6_PREFIX, &key)) {
		fail("verdict rows (no key for " ERRING ")");
		return;
	}
	row("malformed 1..10 from " ERRING " (ihl 4, UDP length past the end) dropped, counted 1..10",
	    errors_counted(dp, &key));
	row("malformed 11th from " ERRING " dropped, bans it", eleventh_bans(dp, &key));
	row("clean 12th from " ERRING " dropped as banned",
	    expect(dp, ERRING, GOOD, XDP_DROP, XDPBAN_STAT_DROP_BANNED, grew));
	row("clean UDP " DENIED " passes before the deny entry",
	    expect(dp, DENIED, GOOD, XDP_PASS, XDPBAN_STAT_PASSED, grew));
	if (dp_policy_add(dp, DENIED_NET, XDPBAN_POLICY_DENY)) {
		fail("verdict deny (cannot write " DENIED_NET " into xdpban_policy4)");
		return;
	}
	row("clean UDP " DENIED " dropped by deny " DENIED_NET,
	    expect(dp, DENIED, GOOD, XDP_DROP, XDPBAN_STAT_DROP_DENY, grew));
}

/* The rows run on the data path's own instance, which the harness takes over. */
static void check_verdicts(struct instance *dpath)
{
	struct dp dp;
	int ret;

	if (dpath->err) {
		printf("SKIP: verdict rows (xdpban did not load)\n");
		return;
	}
	ret = dp_adopt(&dp, dpath->skel);
	if (ret) {
		fail("verdict rows (cannot open the tables: %s)", strerror(-ret));
		return;
	}
	dpath->skel = NULL;
	check_verdict_rows(&dp);
	dp_close(&dp);
}

/* ---- main ---- */

static void usage(FILE *f)
{
	fprintf(f, "Usage: kcheck [-b BUDGET] [-a VETH] [-t] [-v]\n"
		   "Loads every program of xdpban's object as xdpband does and checks each against\n"
		   "BUDGET processed instructions (default %d).\n"
		   "  -a, --attach VETH  also attach xdpban natively to VETH, directly and through libxdp\n"
		   "  -t, --verdicts     also run verdict rows through BPF_PROG_TEST_RUN\n"
		   "  -v, --verbose      libbpf's and libxdp's messages on stderr\n",
		DEFAULT_BUDGET);
}

static int parse_args(int argc, char **argv, struct args *a)
{
	static const struct option longopts[] = {
		{ "budget", required_argument, NULL, 'b' }, { "attach", required_argument, NULL, 'a' },
		{ "verdicts", no_argument, NULL, 't' },     { "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },         {},
	};
	char *end;
	int c;

	*a = (struct args){ .budget = DEFAULT_BUDGET };
	while ((c = getopt_long(argc, argv, "b:a:tvh", longopts, NULL)) != -1) {
		if (c == 'b') {
			a->budget = strtoll(optarg, &end, 10);
			if (*end || end == optarg || a->budget < 0) {
				fprintf(stderr, "kcheck: --budget %s: expected a whole number\n", optarg);
				return 2;
			}
		} else if (c == 'a') {
			a->veth = optarg;
		} else if (c == 't' || c == 'v') {
			*(c == 't' ? &a->verdicts : &a->verbose) = true;
		} else {
			usage(c == 'h' ? stdout : stderr);
			return c == 'h' ? -1 : 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct instance dpath, report;
	struct args a;
	int ret = parse_args(argc, argv, &a);

	if (ret)
		return ret < 0 ? 0 : ret;
	setvbuf(stdout, NULL, _IOLBF, 0);
	g_verbose = a.verbose;
	libbpf_set_print(print_libbpf);
	libxdp_set_print(print_libxdp);
	xb_kernel_release(g_release, sizeof(g_release));
	printf("kernel: Linux %s\n", g_release);
	instance_load(&dpath, "xdpban", NULL);
	instance_load(&report, "xdpban_report", dpath.err ? NULL : dpath.skel);
	check_program(&dpath, a.budget);
	check_program(&report, a.budget);
	instance_close(&report);
	if (a.veth)
		check_attach(&dpath, a.veth);
	if (a.verdicts)
		check_verdicts(&dpath);
	instance_close(&dpath);
	if (g_failed)
		fprintf(stderr, "kcheck: %d check%s failed on Linux %s, the first: %s\n", g_failed,
			g_failed == 1 ? "" : "s", g_release, g_first);
	return g_failed ? 1 : 0;
}
