/* ctl.c - the xdpban side of the control-plane workload, driven by
 * bench/control.sh:
 *
 *   ctl load PREFIXES_FILE compile|trie
 *       reads the IPv4 prefixes and loads them as deny entries into a fresh, unpinned xdpban
 *       (timed from the text file, as nft -f and ipset restore are): through the policy
 *       compile xdpband runs (user/lib/policy.h), or into the bare trie in batches (retrying
 *       where the trie runs short); checks through the data path that
 *       sources inside the prefixes are denied and others pass; prints
 *       "load N seconds S retries R memory_bytes M free_seconds F";
 *   ctl gen6 COUNT FILE
 *       writes COUNT random IPv6 prefixes of real-looking lengths (bench_prefix6_random, the
 *       fixed seed: policy6's lists) to FILE, one "ADDR/LEN" a line;
 *   ctl load6 PREFIXES_FILE
 *       the same as load ... compile for IPv6 prefixes (the IPv6 trie's memory is reported);
 *       checked with sources inside the prefixes and anywhere in 2001::/16 against a reference
 *       lookup;
 *   ctl state COUNTERS BANS PIN_DIR [CLI]
 *       fills a fresh xdpban, its tables sized COUNTERS and BANS, with as many tracked sources
 *       and bans and prints the memory the kernel reports for each table ("memory counts
 *       ENTRIES BYTES held N", "memory bans ENTRIES BYTES"). With CLI (the
 *       xdpban command) it pins the maps in PIN_DIR, a directory of its own that must not
 *       exist, and measures `CLI bans --json` ("dump bans N seconds S bytes B") and how long
 *       `CLI set limit` takes to reach the data path ("threshold seconds S probes P" per
 *       try); it removes the pins before it exits.
 *
 * It never attaches to an interface and never touches another xdpban's pins.
 */
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "bench_bpf.h"

extern char **environ;

#define CTL_CHECK_SOURCES 4096 /* sources checked through the data path after a load */
#define CTL_THRESHOLD_TRIES 5

static int usage(void)
{
	fprintf(stderr, "usage: ctl load PREFIXES_FILE compile|trie\n"
			"       ctl gen6 COUNT FILE\n"
			"       ctl load6 PREFIXES_FILE\n"
			"       ctl state COUNTERS BANS PIN_DIR [CLI]\n");
	return 2;
}

/* The bare trie in batches, for the floor: written directly into this private instance's
 * trie, whose flat table then stays all LOOKUP (correct by its contract, only slower). */
static int load_trie(struct dp *dp, const struct bench_prefix4 *p, uint32_t n, uint32_t *retries)
{
	return bench_lpm4_load(bpf_map__fd(dp->skel->maps.xdpban_policy4), p, n,
			       XDPBAN_POLICY_DENY, retries);
}

/* Runs sources inside random prefixes and sources outside all of them through the loaded
 * data path: the first must be denied, the others must pass. */
static int check_loaded(struct dp *dp, const struct bench_prefix4 *p, uint32_t n)
{
	struct bench_avoid4 avoid = { p, n, { NULL } };
	struct xdpban_stat_value before[XDPBAN_STAT__MAX], after[XDPBAN_STAT__MAX];
	struct bench_frame f;
	struct bench_rng rng;
	int err = dp_stats(dp, before);

	bench_rng_init(&rng, BENCH_SEED_DEFAULT ^ n);
	for (uint32_t i = 0; !err && i < 2 * CTL_CHECK_SOURCES; i++) {
		struct bench_frame_addrs a = { .saddr4 = i % 2 ? bench_clean_addr4(&rng, &avoid)
						: bench_addr_in_prefix(&rng, &p[bench_rng_below(&rng, n)]) };
		uint32_t action;

		bench_frame4(&f, &a, BENCH_FRAME_VALID);
		err = dp_run(dp, f.data, f.len, &action);
	}
	if (!err)
		err = dp_stats(dp, after);
	if (err)
		return err;
	if (after[XDPBAN_STAT_DROP_DENY].packets - before[XDPBAN_STAT_DROP_DENY].packets !=
		    CTL_CHECK_SOURCES ||
	    after[XDPBAN_STAT_PASSED].packets - before[XDPBAN_STAT_PASSED].packets !=
		    CTL_CHECK_SOURCES) {
		fprintf(stderr, "bench: control: load: verdict check failed: the loaded trie does not "
				"deny exactly the sources inside its prefixes\n");
		return -EPROTO;
	}
	return 0;
}

/* When the compile of one family reached its steps (bench_mono_ns), for the breakdown. */
struct ctl_steps {
	__u8 family;
	uint64_t touched, trie_done;
};

static void ctl_observe(__u8 family, enum xb_compile_step step, size_t done, size_t total,
			void *ctx)
{
	struct ctl_steps *s = ctx;

	(void)done;
	(void)total;
	if (family != s->family)
		return;
	if (step == XB_COMPILE_TOUCHED && !s->touched)
		s->touched = bench_mono_ns();
	if (step == XB_COMPILE_TRIE_DONE)
		s->trie_done = bench_mono_ns();
}

/* "load N seconds S retries R memory_bytes M free_seconds F", then with a compile where its
 * time went: " read R set_plan P trie T flat F" (seconds: the text file read; the set built,
 * checked, sorted and diffed; the trie writes; the flat table and lines). */
static void print_load(uint32_t n, uint64_t t0, uint64_t t_read, uint64_t t1, uint32_t retries,
		       long long memory, uint64_t t2, const struct ctl_steps *st)
{
	printf("load %u seconds %.3f retries %u memory_bytes %lld free_seconds %.3f", n,
	       (t1 - t0) / 1e9, retries, memory, (bench_mono_ns() - t2) / 1e9);
	if (st && st->touched && st->trie_done)
		printf(" read %.3f set_plan %.3f trie %.3f flat %.3f", (t_read - t0) / 1e9,
		       (st->touched - t_read) / 1e9, (st->trie_done - st->touched) / 1e9,
		       (t1 - st->trie_done) / 1e9);
	printf("\n");
}

static int do_load(int argc, char **argv)
{
	struct bench_prefix4 *p;
	struct ctl_steps st = { .family = XDPBAN_FAMILY_INET };
	const struct xb_compile_opts opts = { .observe = ctl_observe, .ctx = &st };
	uint32_t n, retries = 0;
	uint64_t t0, t_read, t1, t2;
	long long memory;
	bool compile;
	struct dp dp;
	int err;

	if (argc != 2 || (strcmp(argv[1], "compile") && strcmp(argv[1], "trie")))
		return usage();
	compile = !strcmp(argv[1], "compile");
	err = dp_open(&dp, NULL);
	if (err) {
		fprintf(stderr, "bench: control: loading xdpban: %s\n", strerror(-err));
		return 1;
	}
	/* Timed from the text file, as nft -f and ipset restore are. */
	t0 = bench_mono_ns();
	if (bench_prefix4_read(argv[0], &p, &n)) {
		dp_close(&dp);
		return 1;
	}
	if (n == 0 || n > XDPBAN_LISTED4_MAX) {
		fprintf(stderr, "bench: control: %s: %u prefixes, expected 1 to %u\n", argv[0], n,
			XDPBAN_LISTED4_MAX);
		free(p);
		dp_close(&dp);
		return 1;
	}
	t_read = bench_mono_ns();
	err = compile ? bench_xdpban_policy4_opts(&dp, p, n, XDPBAN_POLICY_DENY, &opts, NULL)
		      : load_trie(&dp, p, n, &retries);
	t1 = bench_mono_ns();
	memory = bench_map_memory(bpf_map__fd(dp.skel->maps.xdpban_policy4));
	if (!err)
		err = check_loaded(&dp, p, n);
	free(p);
	t2 = bench_mono_ns();
	dp_close(&dp); /* the trie is freed here: that time is reported too */
	if (err) {
		if (err != -EPROTO)
			fprintf(stderr, "bench: control: loading %u prefixes: %s\n", n, strerror(-err));
		return 1;
	}
	print_load(n, t0, t_read, t1, retries, memory, t2, compile ? &st : NULL);
	return 0;
}

static int do_gen6(int argc, char **argv)
{
	struct bench_prefix6 *p;
	struct bench_rng rng;
	uint64_t n;
	FILE *f;
	int err;

	if (argc != 2 || bench_parse_u64(argv[0], 1, XDPBAN_LISTED6_MAX, &n))
		return usage();
	bench_rng_init(&rng, BENCH_SEED_DEFAULT);
	if (bench_prefix6_random(&rng, n, &p))
		return fprintf(stderr, "bench: control: out of memory for %llu prefixes\n",
			       (unsigned long long)n), 1;
	f = fopen(argv[1], "w");
	for (uint64_t i = 0; f && i < n; i++) {
		char text[INET6_ADDRSTRLEN];

		fprintf(f, "%s/%u\n", inet_ntop(AF_INET6, p[i].addr, text, sizeof(text)), p[i].len);
	}
	err = !f || ferror(f);
	if ((f && fclose(f)) || err)
		fprintf(stderr, "bench: control: cannot write %s: %s\n", argv[1], strerror(errno));
	free(p);
	return err ? 1 : 0;
}

/* The IPv6 counterpart of bench_prefix4_read, sorted for the reference lookup. */
static int prefix6_read(const char *path, struct bench_prefix6 **out, uint32_t *n)
{
	FILE *f = fopen(path, "r");
	uint32_t cap = 1024, have = 0;
	struct bench_prefix6 *p = malloc(cap * sizeof(*p));
	char line[128];
	int err = 0;

	if (!f || !p) {
		fprintf(stderr, "bench: cannot read %s: %s\n", path, strerror(errno));
		err = -EIO;
	}
	while (!err && fgets(line, sizeof(line), f)) {
		char *slash = strchr(line, '/');
		unsigned len = 999;

		line[strcspn(line, "\r\n")] = '\0';
		if (slash) {
			*slash = '\0';
			if (sscanf(slash + 1, "%u", &len) != 1)
				len = 999;
		}
		if (have == cap) {
			struct bench_prefix6 *more = realloc(p, 2 * cap * sizeof(*p));

			if (!more) {
				err = -ENOMEM;
				break;
			}
			p = more;
			cap *= 2;
		}
		if (len > 128 || inet_pton(AF_INET6, line, p[have].addr) != 1) {
			fprintf(stderr, "bench: %s: line %u is not an IPv6 prefix\n", path, have + 1);
			err = -EINVAL;
			break;
		}
		p[have++].len = len;
	}
	if (f)
		fclose(f);
	if (err) {
		free(p);
		return err;
	}
	qsort(p, have, sizeof(*p), bench_prefix6_cmp);
	*out = p;
	*n = have;
	return 0;
}

static int compile6(struct dp *dp, const struct bench_prefix6 *p, uint32_t n,
		    struct ctl_steps *st)
{
	const struct xb_compile_opts opts = { .observe = ctl_observe, .ctx = st };
	struct xdpban_policy val = { .verdict = XDPBAN_POLICY_DENY, .list_id = 1 };
	struct xb_policy_set set = { 0 };
	int err = xb_policy_set_reserve(&set, n);

	for (uint32_t i = 0; !err && i < n; i++) {
		struct xb_prefix pre = { .family = XDPBAN_FAMILY_INET6, .plen = p[i].len };

		memcpy(pre.addr, p[i].addr, 16);
		err = xb_policy_set_add(&set, &pre, &val);
	}
	if (!err)
		err = dp_policy_compile(dp, &set, &opts, NULL);
	xb_policy_set_free(&set);
	return err;
}

/* Sources inside random prefixes, and anywhere in 2001::/16, through the data path: exactly
 * those the reference finds in a prefix are denied. */
static int check_loaded6(struct dp *dp, const struct bench_prefix6 *p, uint32_t n)
{
	struct xdpban_stat_value before[XDPBAN_STAT__MAX], after[XDPBAN_STAT__MAX];
	struct bench_rng rng;
	uint64_t denied = 0;
	int err = dp_stats(dp, before);

	bench_rng_init(&rng, BENCH_SEED_DEFAULT ^ n);
	for (uint32_t i = 0; !err && i < 2 * CTL_CHECK_SOURCES; i++) {
		struct bench_frame_addrs a = { 0 };
		struct bench_frame f;
		uint32_t action;

		bench_addr6_in_2001(&rng, a.saddr6);
		if (i % 2) {
			const struct bench_prefix6 *in = &p[bench_rng_below(&rng, n)];

			bench_addr6_into(a.saddr6, in->addr, in->len);
		}
		denied += bench_prefix6_holds(p, n, a.saddr6);
		bench_frame6(&f, &a, BENCH_FRAME_VALID);
		err = dp_run(dp, f.data, f.len, &action);
	}
	if (!err)
		err = dp_stats(dp, after);
	if (err)
		return err;
	if (denied < CTL_CHECK_SOURCES ||
	    after[XDPBAN_STAT_DROP_DENY].packets - before[XDPBAN_STAT_DROP_DENY].packets != denied ||
	    after[XDPBAN_STAT_PASSED].packets - before[XDPBAN_STAT_PASSED].packets !=
		    2 * CTL_CHECK_SOURCES - denied) {
		fprintf(stderr, "bench: control: load6: verdict check failed: the loaded tries do not "
				"deny exactly the %llu sources the reference finds in a prefix\n",
			(unsigned long long)denied);
		return -EPROTO;
	}
	return 0;
}

static int do_load6(int argc, char **argv)
{
	struct ctl_steps st = { .family = XDPBAN_FAMILY_INET6 };
	struct bench_prefix6 *p;
	uint64_t t0, t_read, t1, t2;
	long long memory;
	struct dp dp;
	uint32_t n;
	int err;

	if (argc != 1)
		return usage();
	err = dp_open(&dp, NULL);
	if (err) {
		fprintf(stderr, "bench: control: loading xdpban: %s\n", strerror(-err));
		return 1;
	}
	t0 = bench_mono_ns();
	err = prefix6_read(argv[0], &p, &n);
	if (!err && (n == 0 || n > XDPBAN_LISTED6_MAX)) {
		fprintf(stderr, "bench: control: %s: %u prefixes, expected 1 to %u\n", argv[0], n,
			XDPBAN_LISTED6_MAX);
		free(p);
		err = -EPROTO;
	}
	if (err) {
		dp_close(&dp);
		return 1;
	}
	t_read = bench_mono_ns();
	err = compile6(&dp, p, n, &st);
	t1 = bench_mono_ns();
	memory = bench_map_memory(bpf_map__fd(dp.skel->maps.xdpban_policy6));
	if (!err)
		err = check_loaded6(&dp, p, n);
	free(p);
	t2 = bench_mono_ns();
	dp_close(&dp);
	if (err) {
		if (err != -EPROTO)
			fprintf(stderr, "bench: control: loading %u IPv6 prefixes: %s\n", n,
				strerror(-err));
		return 1;
	}
	print_load(n, t0, t_read, t1, 0, memory, t2, &st);
	return 0;
}

static uint32_t count_one(uint32_t i)
{
	return 1 + i % XDPBAN_DEFAULT_LIMIT;
}

/* Distinct keys from the seed: IPv4 sources. */
static struct xdpban_key *random_keys(struct bench_rng *rng, uint32_t n)
{
	struct bench_set4 set;
	struct xdpban_key *keys;

	if (bench_set4_random(rng, n, NULL, &set))
		return NULL;
	keys = calloc(n, sizeof(*keys));
	for (uint32_t i = 0; keys && i < n; i++)
		bench_key4(set.addr[i], &keys[i]);
	bench_set4_free(&set);
	return keys;
}

/* Starts CLI --pin-dir DIR --socket (none) ARGS... with stdout to out_fd (or /dev/null). */
static int spawn_cli(const char *cli, const char *pin_dir, const char *const *args, int out_fd,
		     pid_t *pid)
{
	const char *argv[16] = { cli, "--pin-dir", pin_dir, "--socket", "/nonexistent/xbbench.sock" };
	posix_spawn_file_actions_t fa;
	int n = 5, err;

	for (int i = 0; args[i] && n < 15; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	posix_spawn_file_actions_init(&fa);
	if (out_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
	else
		posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	err = posix_spawn(pid, cli, &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	return -err;
}

static int wait_cli(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

/* Counts the ban objects in the CLI's JSON output. */
static long count_bans_in(const char *path, long long *bytes)
{
	static const char needle[] = "{\"prefix\":\"";
	FILE *f = fopen(path, "r");
	size_t matched = 0;
	long count = 0;
	int c;

	if (!f)
		return -errno;
	*bytes = 0;
	while ((c = getc(f)) != EOF) {
		(*bytes)++;
		if (c == needle[matched]) {
			if (++matched == sizeof(needle) - 1) {
				count++;
				matched = 0;
			}
		} else {
			matched = c == needle[0];
		}
	}
	fclose(f);
	return count;
}

static int dump_bans(const char *cli, const char *pin_dir, uint32_t bans)
{
	static const char *const args[] = { "bans", "--json", NULL };
	char path[] = "/tmp/xbbench-ctl-json.XXXXXX";
	int fd = mkstemp(path), err;
	long long bytes = 0;
	uint64_t t0, t1;
	long listed;
	pid_t pid;

	if (fd < 0)
		return -errno;
	t0 = bench_mono_ns();
	err = spawn_cli(cli, pin_dir, args, fd, &pid);
	if (!err)
		err = wait_cli(pid);
	t1 = bench_mono_ns();
	close(fd);
	listed = err ? 0 : count_bans_in(path, &bytes);
	unlink(path);
	if (err || listed != (long)bans) {
		fprintf(stderr, "bench: control: dump: verdict check failed: `%s bans --json` %s, "
				"listed %ld bans of %u\n", cli, err ? "failed" : "ran", listed, bans);
		return -EPROTO;
	}
	printf("dump bans %u seconds %.3f bytes %lld\n", bans, (t1 - t0) / 1e9, bytes);
	return 0;
}

/* Whether the data path uses limit 0: a first error from a new source bans it when the limit
 * is 0 and does not when it is 10. One malformed frame through the real program; 1 or 0. A
 * ban it creates is lifted at once, so the ban table keeps the one free entry it needs. */
static int probe_limit_zero(struct dp *dp, struct bench_rng *rng)
{
	struct bench_frame_addrs a = { .saddr4 = bench_source4(rng) };
	struct xdpban_key key;
	struct xdpban_ban ban;
	struct bench_frame f;
	uint32_t action;

	bench_frame4(&f, &a, BENCH_FRAME_MALFORMED);
	if (dp_run(dp, f.data, f.len, &action))
		return -errno;
	bench_key4(a.saddr4, &key);
	if (dp_ban(dp, &key, &ban))
		return 0;
	return dp_del_ban(dp, &key) ? -EIO : 1;
}

static int first_ban(const struct xdpban_key *key, const struct xdpban_ban *ban, void *ctx)
{
	*(struct xdpban_key *)ctx = *key;
	return 1;
}

/* Lifts one ban of the full table, so that a probe's ban has room. */
static int free_one_ban(struct dp *dp)
{
	struct xdpban_key key;

	if (xb_bans_walk(&dp->bans, first_ban, &key) != 1)
		return -ENOENT;
	return dp_del_ban(dp, &key);
}

/* From the moment `CLI set limit V` starts to the first frame the data path handles with V. */
static int threshold_latency(struct dp *dp, const char *cli, const char *pin_dir)
{
	struct bench_rng rng;
	int err = free_one_ban(dp);

	if (err)
		return fprintf(stderr, "bench: control: threshold: making room in the ban table: "
				       "%s\n", strerror(-err)), err;
	bench_rng_init(&rng, BENCH_SEED_DEFAULT + 1);
	for (int i = 0; i < CTL_THRESHOLD_TRIES * 2; i++) {
		const char *value = i % 2 == 0 ? "0" : "10";
		const char *const args[] = { "set", "limit", value, NULL };
		int want = i % 2 == 0, seen = !want;
		uint64_t t0 = bench_mono_ns(), t_seen = 0, probes = 0;
		pid_t pid;

		err = spawn_cli(cli, pin_dir, args, -1, &pid);
		while (!err && seen != want && bench_mono_ns() - t0 < 10 * NS_PER_SEC) {
			seen = probe_limit_zero(dp, &rng);
			probes++;
			err = seen < 0 ? seen : 0;
		}
		t_seen = bench_mono_ns();
		if (!err)
			err = wait_cli(pid);
		if (err || seen != want) {
			fprintf(stderr, "bench: control: threshold: verdict check failed: `%s set limit "
					"%s` %s\n", cli, value,
				err ? "failed" : "never reached the data path in 10 s");
			return -EPROTO;
		}
		printf("threshold limit %s seconds %.6f probes %llu\n", value, (t_seen - t0) / 1e9,
		       (unsigned long long)probes);
	}
	return 0;
}

/* Fills the tables to their size, through user/lib/table.h. */
static int fill_state(struct dp *dp, uint32_t counters, uint32_t bans, int *held)
{
	struct bench_rng rng;
	struct xdpban_key *ck, *bk;
	int err = -ENOMEM, have_counters, have_bans;
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &one);
	sched_setaffinity(0, sizeof(one), &one);
	bench_rng_init(&rng, BENCH_SEED_DEFAULT);
	ck = random_keys(&rng, counters);
	bk = random_keys(&rng, bans);
	if (ck && bk)
		err = bench_fill_counters(dp, ck, counters, count_one);
	if (!err)
		err = bench_fill_bans(dp, bk, bans);
	free(ck);
	free(bk);
	if (err)
		return err;
	have_counters = dp_count_counters(dp);
	have_bans = dp_count_bans(dp);
	/* A counter group of four holds what hashes to it: a few groups overflow and their
	 * cheapest source is evicted, as on the wire (docs/datapath.md). */
	if (have_counters < (int)(counters - counters / 64) || have_bans != (int)bans) {
		fprintf(stderr, "bench: control: state: verdict check failed: the tables hold %d "
				"counters and %d bans, expected %u and %u\n", have_counters, have_bans,
			counters, bans);
		return -EPROTO;
	}
	*held = have_counters;
	return 0;
}

static int do_state(int argc, char **argv)
{
	const char *pin_dir, *cli;
	uint32_t counters, bans;
	struct dp_opts opts;
	int err, held = 0;
	struct dp dp;

	if (argc < 3 || argc > 4)
		return usage();
	if (bench_parse_u64(argv[0], 1, 1 << 24, &(uint64_t){ 0 }) ||
	    bench_parse_u64(argv[1], 1, 1 << 24, &(uint64_t){ 0 })) {
		fprintf(stderr, "bench: control: COUNTERS and BANS must be numbers from 1 to %u\n",
			1 << 24);
		return 2;
	}
	counters = strtoul(argv[0], NULL, 0);
	bans = strtoul(argv[1], NULL, 0);
	pin_dir = argv[2];
	cli = argc == 4 ? argv[3] : NULL;
	/* counters at a quarter of the table's slots: 0.4% find their group of four full */
	opts = (struct dp_opts){ .counters_max = 4 * counters, .bans_max = bans };
	err = dp_open(&dp, &opts);
	if (!err)
		err = fill_state(&dp, counters, bans, &held);
	if (err) {
		if (err != -EPROTO)
			fprintf(stderr, "bench: control: filling the tables: %s\n", strerror(-err));
		if (dp.skel)
			dp_close(&dp);
		return 1;
	}
	printf("memory counts %u %lld held %d\n", counters,
	       bench_map_memory(bpf_map__fd(dp.skel->maps.xdpban_counts)), held);
	printf("memory bans %u %lld\n", bans,
	       bench_map_memory(bpf_map__fd(dp.skel->maps.xdpban_bans)) +
		       bench_map_memory(bpf_map__fd(dp.skel->maps.xdpban_banidx)) +
		       bench_map_memory(bpf_map__fd(dp.skel->maps.xdpban_baninfo)));
	fflush(stdout);
	if (cli && mkdir(pin_dir, 0700)) {
		/* It must not exist: it would be someone else's, and its pins are not ours. */
		fprintf(stderr, "bench: control: cannot create the pin directory %s: %s\n", pin_dir,
			strerror(errno));
		err = -EEXIST;
	} else if (cli) {
		err = dp_pin(&dp, pin_dir);
		if (err)
			fprintf(stderr, "bench: control: pinning the maps in %s: %s\n", pin_dir,
				strerror(-err));
		if (!err)
			err = dump_bans(cli, pin_dir, bans);
		if (!err)
			err = threshold_latency(&dp, cli, pin_dir);
		dp_unpin(&dp, pin_dir);
	}
	dp_close(&dp);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct bench_cmd cmds[] = {
		{ "load", do_load }, { "gen6", do_gen6 }, { "load6", do_load6 },
		{ "state", do_state }, { NULL, NULL },
	};

	libbpf_set_print(NULL);
	return bench_dispatch(argc, argv, cmds, NULL, usage);
}
