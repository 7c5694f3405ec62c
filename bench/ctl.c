/* ctl.c - the xdpban side of issue 4, workload 5 (the control plane), driven by
 * bench/control.sh:
 *
 *   ctl load PREFIXES_FILE batch|single
 *       reads the prefixes and loads them as deny entries into the policy trie of a fresh,
 *       unpinned xdpban (timed from the text file, as nft -f and ipset restore are), in batches (retrying where the trie runs short, REFERENCE.md section 4) or one update
 *       per prefix (as xdpband's list loader does today); checks through the data path that
 *       sources inside the prefixes are denied and others pass; prints
 *       "load N seconds S retries R memory_bytes M free_seconds F";
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

static int do_load(int argc, char **argv)
{
	struct bench_prefix4 *p;
	uint32_t n, retries = 0;
	uint64_t t0, t1, t2;
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
	err = compile ? bench_xdpban_policy4(&dp, p, n, XDPBAN_POLICY_DENY, NULL)
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
	printf("load %u seconds %.3f retries %u memory_bytes %lld free_seconds %.3f\n", n,
	       (t1 - t0) / 1e9, retries, memory, (bench_mono_ns() - t2) / 1e9);
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
		{ "load", do_load }, { "state", do_state }, { NULL, NULL },
	};

	libbpf_set_print(NULL);
	return bench_dispatch(argc, argv, cmds, NULL, usage);
}
