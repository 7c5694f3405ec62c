/* wire.c - the programs behind the wire workload, driven by bench/wire.sh:
 *
 *   wire gen DIR --prefixes N --sources S [--seed N]
 *       writes the deny list and the sources that will be sent: DIR/prefixes.txt (CIDR),
 *       DIR/sources.txt, DIR/nft.conf (an nftables netdev table with an interval set) and
 *       DIR/ipset.restore (an ipset hash:net), all from the fixed seed;
 *   wire attach IFNAME xdpban PREFIXES | pass | drop
 *       attaches xdpban (unpinned, the prefixes compiled as deny entries), or xdp_pass or xdp_drop of
 *       bench/bpf/xdp_pass.bpf.o, natively to IFNAME in the current namespace, prints "ready",
 *       and on SIGTERM or SIGINT prints what its program counted ("xdp_pass N", "xdp_drop N"
 *       or one "xdpban NAME N" per verdict), detaches and exits;
 *   wire send IFNAME DST_MAC SOURCES FRAMES
 *       sends FRAMES 60-byte UDP frames into IFNAME the way a NIC delivers them: XDP frames
 *       from BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES, each redirected by
 *       srcdrv_redirect with the next source of SOURCES (bench_live.h); prints "sending",
 *       then "sent N ns M ...".
 *
 * Every command takes --build DIR. Nothing is pinned; an attachment lives only as long as
 * the process. This file must never attach to an interface the script did not create: the
 * script passes only its own veth names.
 */
#include <signal.h>
#include <sys/stat.h>
#include <linux/if_link.h>
#include "bench_live.h"

static const char *build_dir = "build";

static int usage(void)
{
	fprintf(stderr,
		"usage: wire [--build DIR] gen DIR --prefixes N --sources S [--seed N]\n"
		"       wire [--build DIR] attach IFNAME xdpban PREFIXES_FILE | pass | drop\n"
		"       wire [--build DIR] send IFNAME DST_MAC SOURCES_FILE FRAMES\n");
	return 2;
}

static int parse_count(const char *what, const char *text, uint64_t max, uint32_t *out)
{
	uint64_t v;

	if (bench_parse_u64(text, 1, max, &v)) {
		fprintf(stderr, "wire: %s: '%s' is not a number from 1 to %llu\n", what, text,
			(unsigned long long)max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static void format_prefix(const struct bench_prefix4 *p, char *buf, size_t len)
{
	struct in_addr a = { htonl(p->addr) };
	char text[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &a, text, sizeof(text));
	snprintf(buf, len, "%s/%u", text, p->len);
}

static FILE *open_out(const char *dir, const char *name)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "wire: cannot write %s: %s\n", path, strerror(errno));
	return f;
}

/* The four files of the deny list and the sources, from one seed. */
static int write_lists(const char *dir, const struct bench_prefix4 *p, uint32_t n,
		       const uint32_t *src, uint32_t s)
{
	FILE *pre = NULL, *nft = NULL, *ips = NULL, *srcs = NULL;
	char text[64];
	int err = 0;

	/* Stop at the first file that cannot be written: one message is enough. */
	if (!(pre = open_out(dir, "prefixes.txt")) || !(nft = open_out(dir, "nft.conf")) ||
	    !(ips = open_out(dir, "ipset.restore")) || !(srcs = open_out(dir, "sources.txt"))) {
		err = -EIO;
		goto out;
	}
	/* The chain and its device are added by the script, which knows the device. */
	fprintf(nft, "table netdev xbbench {\n\tset deny {\n\t\ttype ipv4_addr\n"
		     "\t\tflags interval\n\t\telements = {\n");
	fprintf(ips, "create xbbench-deny hash:net family inet hashsize %u maxelem %u\n",
		n < 1024 ? 1024 : n, n + 1024);
	for (uint32_t i = 0; i < n; i++) {
		format_prefix(&p[i], text, sizeof(text));
		fprintf(pre, "%s\n", text);
		fprintf(nft, "\t\t\t%s%s\n", text, i + 1 < n ? "," : "");
		fprintf(ips, "add xbbench-deny %s\n", text);
	}
	fprintf(nft, "\t\t}\n\t}\n}\n");
	for (uint32_t i = 0; i < s; i++) {
		struct in_addr a = { htonl(src[i]) };

		fprintf(srcs, "%s\n", inet_ntop(AF_INET, &a, text, sizeof(text)));
	}
out:
	if (pre && fclose(pre))
		err = -EIO;
	if (nft && fclose(nft))
		err = -EIO;
	if (ips && fclose(ips))
		err = -EIO;
	if (srcs && fclose(srcs))
		err = -EIO;
	return err;
}

static int do_gen(int argc, char **argv)
{
	uint32_t n = 0, s = 0, *src;
	uint64_t seed = BENCH_SEED_DEFAULT;
	struct bench_prefix4 *p;
	struct bench_rng rng;
	const char *dir;
	int err;

	if (argc < 1)
		return usage();
	dir = argv[0];
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--prefixes"))
			err = parse_count("--prefixes", argv[i + 1], 1 << 24, &n);
		else if (!strcmp(argv[i], "--sources"))
			err = parse_count("--sources", argv[i + 1], 1 << 24, &s);
		else if (!strcmp(argv[i], "--seed"))
			err = bench_parse_u64(argv[i + 1], 0, UINT64_MAX, &seed)
				      ? (fprintf(stderr, "wire: --seed: '%s' is not a number\n",
						 argv[i + 1]), -EINVAL)
				      : 0;
		else
			err = (fprintf(stderr, "wire: gen: unknown option '%s'\n", argv[i]), -EINVAL);
		if (err)
			return 2;
	}
	if (!n || !s || argc % 2 == 0) {
		fprintf(stderr, "wire: gen needs DIR --prefixes N --sources S\n");
		return 2;
	}
	bench_rng_init(&rng, seed);
	if (bench_prefix4_random(&rng, n, &p))
		return 1;
	src = malloc(s * sizeof(*src));
	if (!src) {
		free(p);
		return 1;
	}
	/* Every source lies inside a deny prefix, so each frame sent must be dropped, and is one
	 * the stack would deliver to a socket (no martians). */
	for (uint32_t i = 0; i < s; i++)
		do
			src[i] = bench_addr_in_prefix(&rng, &p[bench_rng_below(&rng, n)]);
		while (bench_addr4_unroutable(src[i]));
	err = write_lists(dir, p, n, src, s);
	free(p);
	free(src);
	return err ? 1 : 0;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

/* Waits for SIGTERM/SIGINT after telling the script the program is in place. */
static void wait_for_stop(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		pause();
}

static int attach(int ifindex, int prog_fd)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts);

	return bpf_xdp_attach(ifindex, prog_fd, XDP_FLAGS_DRV_MODE | XDP_FLAGS_UPDATE_IF_NOEXIST,
			      &opts);
}

static void detach(int ifindex, int prog_fd)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts, .old_prog_fd = prog_fd);

	bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE | XDP_FLAGS_REPLACE, &opts);
}

static int attach_xdpban(int ifindex, const char *prefixes_file)
{
	struct xdpban_stat_value stats[XDPBAN_STAT__MAX];
	struct bench_prefix4 *p;
	struct dp dp;
	uint32_t n;
	int err = bench_prefix4_read(prefixes_file, &p, &n);

	if (err)
		return 1;
	err = dp_open(&dp, NULL);
	if (!err)
		err = bench_xdpban_policy4(&dp, p, n, XDPBAN_POLICY_DENY, NULL);
	free(p);
	if (!err)
		err = attach(ifindex, dp.prog_fd);
	if (err) {
		fprintf(stderr, "wire: attaching xdpban: %s\n", strerror(-err));
		if (dp.skel)
			dp_close(&dp);
		return 1;
	}
	wait_for_stop();
	err = dp_stats(&dp, stats);
	detach(ifindex, dp.prog_fd);
	for (int i = 0; !err && i < XDPBAN_STAT__VERDICTS; i++)
		printf("xdpban %s %llu\n", xb_stat_name(i), (unsigned long long)stats[i].packets);
	dp_close(&dp);
	return err ? 1 : 0;
}

/* Attaches one program of bench/bpf/xdp_pass.bpf.o (xdp_pass or xdp_drop); at the end prints
 * "NAME COUNT", the frames it saw. */
static int attach_counting(int ifindex, const char *name)
{
	int prog_fd, count_fd, err, ncpus = libbpf_num_possible_cpus();
	uint64_t *percpu = calloc(ncpus > 0 ? ncpus : 1, sizeof(*percpu)), total = 0;
	struct bpf_program *prog;
	struct bpf_object *obj = NULL;
	uint32_t zero = 0;

	err = percpu ? bench_obj_open(build_dir, "bench/bpf/xdp_pass.bpf.o", &obj) : -ENOMEM;
	if (!err)
		err = bpf_object__load(obj);
	prog = err ? NULL : bpf_object__find_program_by_name(obj, name);
	prog_fd = prog ? bpf_program__fd(prog) : -ENOENT;
	err = err ? err : prog_fd < 0 ? prog_fd : attach(ifindex, prog_fd);
	if (err) {
		fprintf(stderr, "wire: attaching %s: %s\n", name, strerror(-err));
		if (obj)
			bpf_object__close(obj);
		free(percpu);
		return 1;
	}
	wait_for_stop();
	count_fd = bench_map_fd(obj, "xdp_pass_count");
	err = bpf_map_lookup_elem(count_fd, &zero, percpu) ? -errno : 0;
	detach(ifindex, prog_fd);
	for (int c = 0; !err && c < ncpus; c++)
		total += percpu[c];
	if (!err)
		printf("%s %llu\n", name, (unsigned long long)total);
	bpf_object__close(obj);
	free(percpu);
	return err ? 1 : 0;
}

static int do_attach(int argc, char **argv)
{
	int ifindex;

	if (argc < 2)
		return usage();
	ifindex = if_nametoindex(argv[0]);
	if (!ifindex) {
		fprintf(stderr, "wire: no interface '%s' in this namespace\n", argv[0]);
		return 1;
	}
	if (!strcmp(argv[1], "xdpban") && argc == 3)
		return attach_xdpban(ifindex, argv[2]);
	if (!strcmp(argv[1], "pass") && argc == 2)
		return attach_counting(ifindex, "xdp_pass");
	if (!strcmp(argv[1], "drop") && argc == 2)
		return attach_counting(ifindex, "xdp_drop");
	return usage();
}

static int do_send(int argc, char **argv)
{
	struct bench_live l = { .build = build_dir, .kind = BENCH_FRAME_VALID };
	struct bench_prefix4 *src;
	uint32_t *addrs;
	int rc;

	if (argc != 4)
		return usage();
	l.ifname = argv[0];
	l.dst_mac = argv[1];
	if (parse_count("FRAMES", argv[3], INT_MAX, &l.frames))
		return 2;
	if (bench_prefix4_read(argv[2], &src, &l.n))
		return 1;
	addrs = malloc(l.n * sizeof(*addrs));
	for (uint32_t i = 0; addrs && i < l.n; i++)
		addrs[i] = src[i].addr;
	free(src);
	if (!addrs)
		return fprintf(stderr, "wire: out of memory\n"), 1;
	l.addr = addrs;
	rc = bench_live_send("wire", &l);
	free(addrs);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct bench_cmd cmds[] = {
		{ "gen", do_gen }, { "attach", do_attach }, { "send", do_send }, { NULL, NULL },
	};

	libbpf_set_print(NULL);
	return bench_dispatch(argc, argv, cmds, &build_dir, usage);
}
