/* bench_bpf.h - the benchmarks' side of the kernel: opening BPF objects from the build, timing
 * BPF_PROG_TEST_RUN, the source driver (bench/bpf/srcdrv.bpf.c), filling xdpban's maps in bulk
 * and checking the verdicts a run left in xdpban_stats.
 *
 * Every program here is loaded unpinned and dies with the benchmark process; nothing here
 * attaches to an interface. Header-only (see bench.h); functions return 0 or -errno.
 */
#ifndef XDPBAN_BENCH_BPF_H
#define XDPBAN_BENCH_BPF_H

#include "bpf/lpm_only.h"
#include <limits.h>
#include <sched.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bench.h"
#include "bench_addr.h"
#include "dp.h"
#include "policy.h"
#include "xdpban_maps.h"
#include "bpf/floor.h"
#include "bpf/srcdrv.h"

/* Marks every XDP program of an opened object multi-buffer aware (on), as xdpband loads the
 * data path (xb_datapath_frags), or not: the source driver tail-calls the programs it
 * measures, and the kernel lets a tail call reach only a program that matches its caller in
 * frags. */
static inline int bench_obj_frags(struct bpf_object *obj, bool on)
{
	struct bpf_program *prog;
	int err = 0;

	bpf_object__for_each_program(prog, obj) {
		__u32 flags = bpf_program__flags(prog);

		if (!err && bpf_program__type(prog) == BPF_PROG_TYPE_XDP)
			err = bpf_program__set_flags(prog, on ? flags | BPF_F_XDP_HAS_FRAGS
							      : flags & ~BPF_F_XDP_HAS_FRAGS);
	}
	return err;
}

/* Opens BUILD/REL (e.g. "bare_drop.bpf.o" or "bench/bpf/srcdrv.bpf.o"), unloaded, its XDP
 * programs multi-buffer aware. */
static inline int bench_obj_open(const char *build, const char *rel, struct bpf_object **out)
{
	char path[PATH_MAX];
	struct bpf_object *obj;
	int err;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", build, rel) >= sizeof(path))
		return -ENAMETOOLONG;
	if (access(path, R_OK))
		return -errno;
	obj = bpf_object__open_file(path, NULL);
	if (!obj)
		return -errno;
	err = bench_obj_frags(obj, true);
	if (err) {
		bpf_object__close(obj);
		return err;
	}
	*out = obj;
	return 0;
}

/* Opens and loads an object with a single program; *prog_fd gets it. */
static inline int bench_obj_load(const char *build, const char *rel, struct bpf_object **out,
				 int *prog_fd)
{
	struct bpf_program *prog;
	int err = bench_obj_open(build, rel, out);

	if (err)
		return err;
	err = bpf_object__load(*out);
	if (err) {
		bpf_object__close(*out);
		*out = NULL;
		return err;
	}
	prog = bpf_object__next_program(*out, NULL);
	*prog_fd = prog ? bpf_program__fd(prog) : -ENOENT;
	return *prog_fd < 0 ? *prog_fd : 0;
}

static inline int bench_map_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, name);

	return map ? bpf_map__fd(map) : -ENOENT;
}

static inline int bench_prog_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, name);

	return prog ? bpf_program__fd(prog) : -ENOENT;
}

/* The memory floors (bench/bpf/floor.bpf.c): *l2_fd and *mem_fd get floor_l2 and floor_mem. */
static inline int bench_floors_load(const char *build, struct bpf_object **obj, int *l2_fd,
				    int *mem_fd)
{
	int err = bench_obj_open(build, "bench/bpf/floor.bpf.o", obj);

	if (!err)
		err = bpf_object__load(*obj);
	if (err) {
		bpf_object__close(*obj);
		*obj = NULL;
		return err;
	}
	*l2_fd = bench_prog_fd(*obj, FLOOR_PROG_L2);
	*mem_fd = bench_prog_fd(*obj, FLOOR_PROG_MEM);
	return *l2_fd < 0 ? *l2_fd : *mem_fd < 0 ? *mem_fd : 0;
}

/* The stages of the breakdown, as bpf/xdpban.bpf.c numbers them (XDPBAN_BENCH_CUT). */
#define BENCH_CUTS 6
static const char *const bench_cut_names[BENCH_CUTS + 1] = {
	"full", "parse", "classes and key", "policy", "ban check", "classify", "count",
};

/* The data path cut after stage `cut` (1..BENCH_CUTS), loaded onto the maps of dp, so that it
 * sees exactly the state the full program sees. The object's own internal maps (.rodata) are
 * its own. *prog_fd gets the program. */
static inline int bench_cut_load(const char *build, int cut, struct dp *dp,
				 struct bpf_object **obj, int *prog_fd)
{
	char rel[64];
	struct bpf_map *map;
	int err;

	snprintf(rel, sizeof(rel), "bench/bpf/xdpban_cut%d.bpf.o", cut);
	err = bench_obj_open(build, rel, obj);
	if (err)
		return err;
	bpf_object__for_each_map(map, *obj) {
		struct bpf_map *same;

		bpf_map__set_pin_path(map, NULL); /* never pin: the maps are dp's, unpinned */
		if (bpf_map__is_internal(map))
			continue;
		same = bpf_object__find_map_by_name(dp->skel->obj, bpf_map__name(map));
		err = same ? bpf_map__reuse_fd(map, bpf_map__fd(same)) : -ENOENT;
		if (err)
			break;
	}
	if (!err)
		err = bpf_object__load(*obj);
	if (err) {
		bpf_object__close(*obj);
		*obj = NULL;
		return err;
	}
	*prog_fd = bench_prog_fd(*obj, "xdpban");
	return *prog_fd < 0 ? *prog_fd : 0;
}

/* One timed BPF_PROG_TEST_RUN call. */
struct bench_timed {
	uint64_t packets;   /* program runs */
	uint64_t cpu_ns;    /* thread CPU time of the call, less the fixed cost of a call */
	uint32_t retval;    /* the verdict of the last run */
	uint32_t kernel_ns; /* the kernel's own average per run, truncated: for sizing only */
};

static inline double bench_ns_per_packet(const struct bench_timed *t)
{
	return t->packets ? (double)t->cpu_ns / t->packets : 0;
}

/* The fixed CPU cost of one XDP test run call, whatever its repeat: the kernel registers the
 * program with the XDP dispatcher and unregisters it afterwards (about 250 us of CPU and two RCU
 * grace periods here). Measured once by bench_calibrate_call(). */
static inline uint64_t *bench_call_cost_ns(void)
{
	static uint64_t cost;

	return &cost;
}

static inline int bench_run_once(int prog_fd, const void *frame, uint32_t len, uint32_t repeat,
				 uint64_t *cpu_ns, uint32_t *retval, uint32_t *kernel_ns)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame, .data_size_in = len,
		    .repeat = (int)repeat);
	uint64_t start;

	if (repeat == 0 || repeat > INT_MAX)
		return -EINVAL;
	start = bench_thread_ns();
	if (bpf_prog_test_run_opts(prog_fd, &opts))
		return -errno;
	*cpu_ns = bench_thread_ns() - start;
	*retval = opts.retval;
	if (kernel_ns)
		*kernel_ns = opts.duration;
	return 0;
}

/* Runs prog over one frame `repeat` times. The kernel's own per-run average is truncated to
 * whole nanoseconds, so the time is the calling thread's CPU time around the call (the call
 * runs in this thread; time the CPU gave to other tasks is not counted), less the fixed cost
 * of a call. Callers size `repeat` so that a call lasts tens of milliseconds. */
static inline int bench_test_run(int prog_fd, const void *frame, uint32_t len, uint32_t repeat,
				 struct bench_timed *t)
{
	uint64_t cpu_ns = 0, cost = *bench_call_cost_ns();
	int err = bench_run_once(prog_fd, frame, len, repeat, &cpu_ns, &t->retval, &t->kernel_ns);

	if (err)
		return err;
	t->cpu_ns = cpu_ns > cost ? cpu_ns - cost : 0;
	t->packets = repeat;
	return 0;
}

/* Measures the fixed cost of a call: the median CPU time of calls with repeat 2 (the kernel
 * registers the dispatcher only when repeat > 1). prog_fd must be the program the measured
 * calls run (the driver): a program already attached to a device is in the dispatcher and
 * costs almost nothing to register. */
static inline int bench_calibrate_call(int prog_fd, const struct bench_frame *f)
{
	struct bench_samples s = { .n = 0 };
	uint32_t retval;

	for (int i = 0; i < 9; i++) {
		uint64_t cpu_ns = 0;
		int err = bench_run_once(prog_fd, f->data, f->len, 2, &cpu_ns, &retval, NULL);

		if (err)
			return err;
		bench_sample_add(&s, cpu_ns);
	}
	*bench_call_cost_ns() = (uint64_t)bench_median(&s);
	return 0;
}

/* Repeats of a `count`-source table that make one call last about target_ns, given a cost per
 * packet measured before; at least one pass. */
static inline uint32_t bench_packets_for(double ns_per_packet, uint32_t count, uint64_t target_ns)
{
	double passes = ns_per_packet > 0 ? target_ns / (ns_per_packet * count) : 1;
	uint64_t n;

	if (passes < 1)
		passes = 1;
	n = (uint64_t)passes * count;
	return n > INT_MAX ? (INT_MAX / count) * count : (uint32_t)n;
}

/* Batch updates, retried where the kernel runs short: an LPM trie allocates its nodes from a
 * cache refilled in the background, so a large batch into a fresh trie can fail with ENOMEM
 * half way. *retries counts the ENOMEM retries. */
#define BENCH_BATCH 65536
#define BENCH_ENOMEM_TRIES 2000

static inline int bench_update_batch(int fd, const void *keys, size_t key_size, const void *vals,
				     size_t val_size, uint32_t n, uint32_t *retries)
{
	uint32_t done = 0, stuck = 0;

	while (done < n) {
		uint32_t count = n - done < BENCH_BATCH ? n - done : BENCH_BATCH;
		int err = bpf_map_update_batch(fd, (const char *)keys + (size_t)done * key_size,
					       (const char *)vals + (size_t)done * val_size, &count,
					       NULL);

		if (err)
			err = -errno;
		done += count;
		if (!err) {
			stuck = 0;
			continue;
		}
		if (err != -ENOMEM || ++stuck > BENCH_ENOMEM_TRIES)
			return err;
		if (retries)
			(*retries)++;
		usleep(100); /* let the allocator's refill work run */
	}
	return 0;
}

/* Loads the prefixes into xdpban's policy the way the product does: one compile of the whole
 * set (user/lib/policy.h), which fills the trie in batches and writes the flat table in front
 * of it. *res (may be NULL) gets what the compile did. 0 or -errno. */
static inline int bench_xdpban_policy4_opts(struct dp *dp, const struct bench_prefix4 *p,
					    uint32_t n, uint32_t verdict,
					    const struct xb_compile_opts *opts,
					    struct xb_compile_result *res);
static inline int bench_xdpban_policy4(struct dp *dp, const struct bench_prefix4 *p, uint32_t n,
				       uint32_t verdict, struct xb_compile_result *res)
{
	return bench_xdpban_policy4_opts(dp, p, n, verdict, NULL, res);
}

/* The same with compile options (an observer: bench/ctl.c times the compile's steps). */
static inline int bench_xdpban_policy4_opts(struct dp *dp, const struct bench_prefix4 *p,
					    uint32_t n, uint32_t verdict,
					    const struct xb_compile_opts *opts,
					    struct xb_compile_result *res)
{
	struct xdpban_policy val = { .verdict = verdict, .list_id = 1 };
	struct xb_policy_set set = { 0 };
	int err = xb_policy_set_reserve(&set, n);

	for (uint32_t i = 0; !err && i < n; i++) {
		struct xb_prefix pre = { .family = XDPBAN_FAMILY_INET, .plen = p[i].len };
		uint32_t be = htonl(p[i].addr);

		memcpy(pre.addr, &be, 4);
		err = xb_policy_set_add(&set, &pre, &val);
	}
	if (!err)
		err = dp_policy_compile(dp, &set, opts, res);
	xb_policy_set_free(&set);
	return err;
}

/* What a lpm_only program (bench/bpf/lpm_only.bpf.c) must do, pass after pass: drop exactly
 * `denied` of `sources` and pass the rest, as its per-CPU verdict counts say. */
struct bench_lpm_only {
	int stats_fd;
	uint32_t sources, denied;
	uint64_t before[LPM_ONLY_STAT__MAX];
};

static inline int bench_lpm_only_sum(const struct bench_lpm_only *l,
				     uint64_t out[LPM_ONLY_STAT__MAX])
{
	int ncpus = libbpf_num_possible_cpus();
	uint64_t *percpu = calloc(ncpus > 0 ? ncpus : 1, sizeof(*percpu));
	int err = percpu && ncpus > 0 ? 0 : -ENOMEM;

	for (uint32_t i = 0; !err && i < LPM_ONLY_STAT__MAX; i++) {
		out[i] = 0;
		if (bpf_map_lookup_elem(l->stats_fd, &i, percpu))
			err = -errno;
		for (int c = 0; !err && c < ncpus; c++)
			out[i] += percpu[c];
	}
	free(percpu);
	return err;
}

/* A bench_other_check's work for lpm_only: phase 0 notes the counts, phase 1 checks them. */
static inline int bench_lpm_only_check(struct bench_lpm_only *l, int phase, uint32_t packets,
				       struct bench_check *c, const char *what)
{
	uint64_t now[LPM_ONLY_STAT__MAX], passes = packets / l->sources, dropped, passed;

	if (bench_lpm_only_sum(l, phase == 0 ? l->before : now)) {
		bench_check_fail(c, what, "reading lpm_only_stats");
		return -1;
	}
	if (phase == 0)
		return 0;
	dropped = now[LPM_ONLY_STAT_DROPPED] - l->before[LPM_ONLY_STAT_DROPPED];
	passed = now[LPM_ONLY_STAT_PASSED] - l->before[LPM_ONLY_STAT_PASSED];
	if (dropped != passes * l->denied || passed != passes * (l->sources - l->denied)) {
		bench_check_fail(c, what, "lpm_only dropped %llu and passed %llu, expected %llu and "
				 "%llu", (unsigned long long)dropped, (unsigned long long)passed,
				 (unsigned long long)(passes * l->denied),
				 (unsigned long long)(passes * (l->sources - l->denied)));
		return -1;
	}
	return 0;
}

/* Fills an IPv4 LPM trie keyed like xdpban_policy4 with the prefixes, all with one verdict:
 * the bare trie, for the baselines (never xdpban's own trie: that goes through the compile). */
static inline int bench_lpm4_load(int fd, const struct bench_prefix4 *p, uint32_t n,
				  uint32_t verdict, uint32_t *retries)
{
	struct xdpban_lpm4_key *keys = calloc(n ? n : 1, sizeof(*keys));
	struct xdpban_policy *vals = calloc(n ? n : 1, sizeof(*vals));
	int err = -ENOMEM;

	if (keys && vals) {
		for (uint32_t i = 0; i < n; i++) {
			uint32_t be = htonl(p[i].addr);

			keys[i].prefixlen = p[i].len;
			memcpy(keys[i].addr, &be, 4);
			vals[i].verdict = verdict;
			vals[i].list_id = 1;
		}
		err = bench_update_batch(fd, keys, sizeof(*keys), vals, sizeof(*vals), n, retries);
	}
	free(keys);
	free(vals);
	return err;
}

/* The xdpban key of an IPv4 address given in host order. */
static inline void bench_key4(uint32_t addr, struct xdpban_key *key)
{
	uint32_t be = htonl(addr);

	memset(key, 0, sizeof(*key));
	key->family = XDPBAN_FAMILY_INET;
	key->prefixlen = 32;
	memcpy(key->addr, &be, 4);
}

/* The xdpban key of an IPv6 address at the given prefix length. */
static inline void bench_key6(const uint8_t addr[16], uint8_t prefixlen, struct xdpban_key *key)
{
	memset(key, 0, sizeof(*key));
	key->family = XDPBAN_FAMILY_INET6;
	key->prefixlen = prefixlen;
	for (int bit = 0; bit < prefixlen && bit < 128; bit++)
		key->addr[bit / 8] |= addr[bit / 8] & (0x80 >> (bit % 8));
}

/* Gives each key a counter in the current window with count_of(i) errors, through the
 * table's own protocol (user/lib/table.h), so a key whose group is full evicts another as the
 * data path would. */
static inline int bench_fill_counters(struct dp *dp, const struct xdpban_key *keys, uint32_t n,
				      uint32_t (*count_of)(uint32_t i))
{
	uint32_t now_s = dp_now_ns() / NS_PER_SEC;

	for (uint32_t i = 0; i < n; i++) {
		int err = dp_put_counter(dp, &keys[i], now_s, count_of(i));

		if (err)
			return err;
	}
	return 0;
}

static inline uint32_t bench_count_below_limit(uint32_t i)
{
	return 1 + i % XDPBAN_DEFAULT_LIMIT;
}

/* Tracks every address with 1..limit errors (never over the limit: none is banned). */
static inline int bench_fill_counters4(struct dp *dp, const struct bench_set4 *s)
{
	struct xdpban_key *keys = calloc(s->n ? s->n : 1, sizeof(*keys));
	int err = -ENOMEM;

	if (keys) {
		for (uint32_t i = 0; i < s->n; i++)
			bench_key4(s->addr[i], &keys[i]);
		err = bench_fill_counters(dp, keys, s->n, bench_count_below_limit);
	}
	free(keys);
	return err;
}

/* Bans each key for a day, as the data path does after the 11th error. Written one by one
 * through user/lib/table.h, as every userspace writer must. */
static inline int bench_fill_bans(struct dp *dp, const struct xdpban_key *keys, uint32_t n)
{
	uint64_t now = dp_now_ns();
	struct xdpban_ban ban = {
		.start_ns = now,
		.expires_ns = now + 86400ull * NS_PER_SEC,
		.count = XDPBAN_DEFAULT_LIMIT + 1,
		.reason = XDPBAN_REASON_ERRORS,
		.classes = XDPBAN_CLASS_MALFORMED,
	};

	for (uint32_t i = 0; i < n; i++) {
		int err = dp_put_ban(dp, &keys[i], &ban);

		if (err)
			return err;
	}
	return 0;
}

static inline int bench_fill_bans4(struct dp *dp, const struct bench_set4 *s)
{
	struct xdpban_key *keys = calloc(s->n ? s->n : 1, sizeof(*keys));
	int err = -ENOMEM;

	if (keys) {
		for (uint32_t i = 0; i < s->n; i++)
			bench_key4(s->addr[i], &keys[i]);
		err = bench_fill_bans(dp, keys, s->n);
	}
	free(keys);
	return err;
}

/* The memory the kernel reports for a map ("memlock" in /proc/self/fdinfo, which is the
 * map's own accounting of what it holds since Linux 6.5). -errno if it cannot be read. */
static inline long long bench_map_memory(int fd)
{
	char path[64], line[256];
	long long bytes = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %lld", &bytes) == 1)
			break;
	fclose(f);
	return bytes;
}

/* The source driver. */
struct srcdrv {
	struct bpf_object *obj;
	int tail_fd, redirect_fd;
	int state_fd, src4_fd, src6_fd, target_fd, shape_fd;
	uint32_t cap4, cap6;
	uint32_t shape_period; /* 0: no shapes (srcdrv_shapes) */
};

static inline void srcdrv_close(struct srcdrv *d)
{
	if (d->obj)
		bpf_object__close(d->obj);
	memset(d, 0, sizeof(*d));
}

/* Loads the driver with room for cap4 IPv4 and cap6 IPv6 sources. */
/* Opens and loads the driver, multi-buffer aware or not (frags): it may tail-call only
 * programs loaded the same way. */
static inline int srcdrv_open_frags(struct srcdrv *d, const char *build, uint32_t cap4,
				    uint32_t cap6, bool frags)
{
	struct bpf_map *map;
	int err;

	memset(d, 0, sizeof(*d));
	err = bench_obj_open(build, "bench/bpf/srcdrv.bpf.o", &d->obj);
	if (!err && !frags)
		err = bench_obj_frags(d->obj, false);
	if (err)
		return err;
	d->cap4 = cap4 ? cap4 : 1;
	d->cap6 = cap6 ? cap6 : 1;
	map = bpf_object__find_map_by_name(d->obj, SRCDRV_MAP_SRC4);
	err = map ? bpf_map__set_max_entries(map, d->cap4) : -ENOENT;
	map = bpf_object__find_map_by_name(d->obj, SRCDRV_MAP_SRC6);
	if (!err)
		err = map ? bpf_map__set_max_entries(map, d->cap6) : -ENOENT;
	if (!err)
		err = bpf_object__load(d->obj);
	if (err) {
		srcdrv_close(d);
		return err;
	}
	d->tail_fd = bpf_program__fd(bpf_object__find_program_by_name(d->obj, SRCDRV_PROG_TAIL));
	d->redirect_fd =
		bpf_program__fd(bpf_object__find_program_by_name(d->obj, SRCDRV_PROG_REDIRECT));
	d->state_fd = bench_map_fd(d->obj, SRCDRV_MAP_STATE);
	d->src4_fd = bench_map_fd(d->obj, SRCDRV_MAP_SRC4);
	d->src6_fd = bench_map_fd(d->obj, SRCDRV_MAP_SRC6);
	d->target_fd = bench_map_fd(d->obj, SRCDRV_MAP_TARGET);
	d->shape_fd = bench_map_fd(d->obj, SRCDRV_MAP_SHAPE);
	return 0;
}

/* The driver for the programs bench_obj_open and dp_open load: multi-buffer aware. */
static inline int srcdrv_open(struct srcdrv *d, const char *build, uint32_t cap4, uint32_t cap6)
{
	return srcdrv_open_frags(d, build, cap4, cap6, true);
}

/* Starts the table over at index 0 with `count` sources; ifindex is for srcdrv_redirect. */
static inline int srcdrv_reset(struct srcdrv *d, uint32_t count, uint32_t ifindex)
{
	struct srcdrv_state st = { .count = count, .ifindex = ifindex,
				   .shape_period = d->shape_period };
	uint32_t zero = 0;

	return bpf_map_update_elem(d->state_fd, &zero, &st, BPF_ANY) ? -errno : 0;
}

static inline int srcdrv_runs(struct srcdrv *d, uint64_t *runs)
{
	struct srcdrv_state st;
	uint32_t zero = 0;

	if (bpf_map_lookup_elem(d->state_fd, &zero, &st))
		return -errno;
	*runs = st.runs;
	return 0;
}

/* Writes vals[0..n) into an array map at keys 0..n-1, in batches. */
static inline int bench_array_fill(int fd, const void *vals, size_t val_size, uint32_t n)
{
	uint32_t *keys = malloc((n ? n : 1) * sizeof(*keys));
	int err;

	if (!keys)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		keys[i] = i;
	err = bench_update_batch(fd, keys, sizeof(*keys), vals, val_size, n, NULL);
	free(keys);
	return err;
}

/* Loads IPv4 sources (host order) into the table; the next run starts at the first. */
static inline int srcdrv_sources4(struct srcdrv *d, const uint32_t *addr, uint32_t n)
{
	uint32_t *vals;
	int err = -ENOMEM;

	if (n == 0 || n > d->cap4)
		return -EINVAL;
	vals = malloc(n * sizeof(*vals));
	if (vals) {
		for (uint32_t i = 0; i < n; i++)
			vals[i] = htonl(addr[i]);
		err = bench_array_fill(d->src4_fd, vals, sizeof(*vals), n);
	}
	free(vals);
	return err ? err : srcdrv_reset(d, n, 0);
}

/* Loads IPv6 sources (network order, 16 bytes each). */
static inline int srcdrv_sources6(struct srcdrv *d, const struct srcdrv_addr6 *addr, uint32_t n)
{
	int err;

	if (n == 0 || n > d->cap6)
		return -EINVAL;
	err = bench_array_fill(d->src6_fd, addr, sizeof(*addr), n);
	return err ? err : srcdrv_reset(d, n, 0);
}

/* Gives the IPv4 frame of source i the TTL and UDP length of shape[i % period] from the next
 * srcdrv_reset on (the frame must be the bench's IPv4 UDP frame). */
static inline int srcdrv_shapes(struct srcdrv *d, const struct srcdrv_shape *shape,
				uint32_t period)
{
	int err;

	if (period == 0 || period > SRCDRV_SHAPES_MAX)
		return -EINVAL;
	err = bench_array_fill(d->shape_fd, shape, sizeof(*shape), period);
	if (!err)
		d->shape_period = period;
	return err;
}

/* Makes prog_fd the program the driver tail-calls. */
static inline int srcdrv_target(struct srcdrv *d, int prog_fd)
{
	uint32_t zero = 0;

	return bpf_map_update_elem(d->target_fd, &zero, &prog_fd, BPF_ANY) ? -errno : 0;
}

/* Runs the target behind the driver: `packets` runs over the first `count` sources, starting
 * at the first. Fails with -EPROTO if the driver did not run exactly `packets` times or the
 * tail call did not happen (the driver's own XDP_ABORTED). */
static inline int srcdrv_run(struct srcdrv *d, int target_fd, const struct bench_frame *f,
			     uint32_t count, uint32_t packets, struct bench_timed *t)
{
	uint64_t runs = 0;
	int err = srcdrv_target(d, target_fd);

	if (!err)
		err = srcdrv_reset(d, count, 0);
	if (!err)
		err = bench_test_run(d->tail_fd, f->data, f->len, packets, t);
	if (!err)
		err = srcdrv_runs(d, &runs);
	if (err)
		return err;
	if (runs != packets || t->retval == XDP_ABORTED)
		return -EPROTO;
	return 0;
}


/* What a run must leave in xdpban_stats: packets per slot. */
struct bench_expect {
	uint64_t n[XDPBAN_STAT__MAX];
	uint32_t ignore; /* 1 << slot for slots not checked (events_lost, when bans fill the ring) */
};

/* n malformed packets that reach stage 5 and are counted: each adds to errors, drop_malformed
 * and class_malformed (docs/datapath.md, stage 5). */
static inline void bench_expect_malformed(struct bench_expect *want, uint64_t n)
{
	want->n[XDPBAN_STAT_ERRORS] = want->n[XDPBAN_STAT_DROP_MALFORMED] = n;
	want->n[XDPBAN_STAT_CLASS_MALFORMED] = n;
}

/* Compares the stats now with `before` plus `want`. Records one failure line naming every
 * slot that differs. 0 or -EPROTO. */
static inline int bench_expect_stats(struct dp *dp, const struct xdpban_stat_value *before,
				     const struct bench_expect *want, struct bench_check *c,
				     const char *what)
{
	struct xdpban_stat_value now[XDPBAN_STAT__MAX];
	char diff[512] = "";
	size_t used = 0;
	int err = dp_stats(dp, now);

	if (err) {
		bench_check_fail(c, what, "reading xdpban_stats: %s", strerror(-err));
		return err;
	}
	for (int i = 0; i < XDPBAN_STAT__MAX; i++) {
		uint64_t got = now[i].packets - before[i].packets;

		if (want->ignore & (1u << i))
			continue;
		if (got != want->n[i] && used < sizeof(diff))
			used += snprintf(diff + used, sizeof(diff) - used, "%s%s %llu, expected %llu",
					 used ? "; " : "", xb_stat_name(i),
					 (unsigned long long)got, (unsigned long long)want->n[i]);
	}
	if (used) {
		bench_check_fail(c, what, "%s", diff);
		return -EPROTO;
	}
	c->checks++;
	return 0;
}

/* Checks a call of the program xdpban is compared with: phase 0 just before the call, 1 just
 * after it (retval: the verdict of its last run). 0, or -1 after recording a failure in *c. */
typedef int (*bench_other_check)(void *ctx, int phase, uint32_t packets, uint32_t retval,
				 struct bench_check *c, const char *what);

/* Runs `packets` frames through the driver (its first `count` sources) into target_fd and
 * checks the verdicts: when target_fd is xdpban's, its stats must grow by exactly *want; any
 * other target is checked by check_other, or (NULL) must be a bare XDP_DROP. ns per packet,
 * or -1 after recording the failure in *c. */
static inline double bench_measure(struct srcdrv *d, struct dp *dp, int target_fd,
				   const struct bench_frame *f, uint32_t count, uint32_t packets,
				   const struct bench_expect *want, bench_other_check check_other,
				   void *ctx, struct bench_check *c, const char *what,
				   uint32_t *kernel_ns)
{
	struct xdpban_stat_value before[XDPBAN_STAT__MAX];
	bool xdpban = target_fd == dp->prog_fd;
	struct bench_timed t = { 0 };
	int err = dp_stats(dp, before);

	if (err) {
		bench_check_fail(c, what, "reading xdpban_stats: %s", strerror(-err));
		return -1;
	}
	if (!xdpban && check_other && check_other(ctx, 0, packets, 0, c, what))
		return -1;
	err = srcdrv_run(d, target_fd, f, count, packets, &t);
	if (err) {
		bench_check_fail(c, what, "%s run: %s", xdpban ? "xdpban" : "baseline",
				 strerror(-err));
		return -1;
	}
	if (kernel_ns)
		*kernel_ns = t.kernel_ns;
	if (xdpban) {
		if (bench_expect_stats(dp, before, want, c, what))
			return -1;
	} else if (check_other) {
		if (check_other(ctx, 1, packets, t.retval, c, what))
			return -1;
		c->checks++;
	} else {
		if (t.retval != XDP_DROP) {
			bench_check_fail(c, what, "bare_drop returned %u", t.retval);
			return -1;
		}
		c->checks++;
	}
	return bench_ns_per_packet(&t);
}

/* A program measured beside the pair in every sample (a memory floor, a cut build of xdpban):
 * it must return XDP_DROP for every source, which is checked. */
#define BENCH_EXTRA_MAX 8
struct bench_extra {
	const char *name;
	int fd;
};

/* A measurement of xdpban against another program (bare_drop unless stated) behind the same
 * driver, sample by sample. */
struct bench_pair {
	struct srcdrv *drv;
	struct dp *dp;
	int other_fd;                  /* the program xdpban is compared with */
	bench_other_check check_other; /* NULL: other_fd is a bare XDP_DROP */
	const struct bench_frame *frame;
	uint32_t count;     /* sources in the driver's table */
	uint32_t packets;   /* per call; 0: whole passes sized to target_ns */
	uint64_t target_ns; /* CPU time a call should take when sized */
	int runs;
	/* Readies the state and the driver's sources before each sample (every_sample) or
	 * once, and fills *want with the stats one pass over the sources must add. 0 or -1. */
	int (*prepare)(void *ctx, struct bench_expect *want);
	bool every_sample;
	/* Optional: the stats a call of `packets` must add, when they are not whole passes of
	 * the same verdicts (a source that gets banned part way). */
	void (*expect_total)(void *ctx, uint32_t packets, struct bench_expect *total);
	void *ctx;
	/* Optional: programs measured in the same samples, after the pair, over the same
	 * sources (fresh ones first when every_sample, since a cut build may count). */
	const struct bench_extra *extra;
	int n_extra;
};

struct bench_result {
	struct bench_samples xdpban, other, ratio;
	struct bench_samples extra[BENCH_EXTRA_MAX]; /* ns/packet of pp->extra[i] */
	bool broken;
	bool unmeasurable; /* verdicts were right, but a call was too short to time */
};

static inline double bench_pair_one(const struct bench_pair *pp, int fd, uint32_t packets,
				    const struct bench_expect *per_pass, struct bench_check *c,
				    const char *what, uint32_t *kernel_ns)
{
	struct bench_expect total = { .ignore = 0 };

	if (packets % pp->count) {
		bench_check_fail(c, what, "%u packets are not whole passes over %u sources",
				 packets, pp->count);
		return -1;
	}
	total.ignore = per_pass->ignore;
	if (pp->expect_total)
		pp->expect_total(pp->ctx, packets, &total);
	else
		for (int i = 0; i < XDPBAN_STAT__MAX; i++)
			total.n[i] = per_pass->n[i] * (packets / pp->count);
	return bench_measure(pp->drv, pp->dp, fd, pp->frame, pp->count, packets, &total,
			     pp->check_other, pp->ctx, c, what, kernel_ns);
}

/* How many packets make one call of fd last about target_ns: a checked warm-up call of at
 * least 10,000 packets, sized from the kernel's own per-run average (good enough to size,
 * too coarse to report). 0 after a failed check. */
static inline uint32_t bench_pair_size(const struct bench_pair *pp, int fd,
				       const struct bench_expect *want, struct bench_check *c,
				       const char *what)
{
	uint32_t warm = pp->packets ? pp->packets : pp->count * ((10000 + pp->count - 1) / pp->count);
	uint32_t kernel_ns = 0;

	if (bench_pair_one(pp, fd, warm, want, c, what, &kernel_ns) < 0)
		return 0;
	if (pp->packets)
		return pp->packets;
	return bench_packets_for(kernel_ns ? kernel_ns : 1, pp->count, pp->target_ns);
}

/* One sample of every extra program, `packets` each (the baseline's size: extras cost about
 * what a bare drop costs, or more, and a call of them stays far above its fixed cost). 0, or
 * -1 after a failed check. */
static inline int bench_extras_run(const struct bench_pair *pp, struct bench_check *c,
				   const char *what, uint32_t packets, struct bench_result *r)
{
	struct bench_expect want = { .ignore = 0 };

	for (int i = 0; i < pp->n_extra && i < BENCH_EXTRA_MAX; i++) {
		double ns;

		if (pp->every_sample && pp->prepare(pp->ctx, &want))
			return -1;
		ns = bench_measure(pp->drv, pp->dp, pp->extra[i].fd, pp->frame, pp->count, packets,
				   &want, NULL, NULL, c, what, NULL);
		if (ns <= 0)
			return -1;
		bench_sample_add(&r->extra[i], ns);
	}
	return 0;
}

/* Checked warm-up calls size the samples; then each sample runs the other program and xdpban
 * over the same sources, in alternating order so neither always runs on a cache the other warmed. The
 * ratio is taken per sample. r->broken when any check failed. */
static inline void bench_pair_run(const struct bench_pair *pp, struct bench_check *c,
				  const char *what, struct bench_result *r)
{
	struct bench_expect want = { .ignore = 0 };
	uint32_t px = 0, pb = 0;
	double x = 0, b = 0;

	memset(r, 0, sizeof(*r));
	if (pp->prepare(pp->ctx, &want))
		goto out;
	px = bench_pair_size(pp, pp->dp->prog_fd, &want, c, what);
	if (px && pp->every_sample && pp->prepare(pp->ctx, &want))
		goto out;
	pb = px ? bench_pair_size(pp, pp->other_fd, &want, c, what) : 0;
	for (int run = 0; run < pp->runs && px && pb; run++) {
		if (pp->every_sample && pp->prepare(pp->ctx, &want))
			break;
		if (run % 2 == 0) {
			b = bench_pair_one(pp, pp->other_fd, pb, &want, c, what, NULL);
			x = b >= 0 ? bench_pair_one(pp, pp->dp->prog_fd, px, &want, c, what, NULL) : -1;
		} else {
			x = bench_pair_one(pp, pp->dp->prog_fd, px, &want, c, what, NULL);
			b = x >= 0 ? bench_pair_one(pp, pp->other_fd, pb, &want, c, what, NULL) : -1;
		}
		if (x < 0 || b < 0)
			break;
		if (x == 0 || b == 0) {
			/* Not a verdict failure: the row prints no number and says why. Rows
			 * with a fixed packet count hit this in smoke mode on a busy machine. */
			r->unmeasurable = true;
			break;
		}
		bench_sample_add(&r->xdpban, x);
		bench_sample_add(&r->other, b);
		bench_sample_add(&r->ratio, x / b);
		if (bench_extras_run(pp, c, what, pb, r))
			break;
	}
out:
	r->broken = r->xdpban.n < pp->runs;
	for (int i = 0; i < pp->n_extra && i < BENCH_EXTRA_MAX; i++)
		r->broken |= r->extra[i].n < pp->runs;
}

/* A table row for a result: "median (min-max)" cells, or the failure. */
static inline void bench_result_cells(const struct bench_result *r, char *x, char *b, char *ratio,
				      size_t len)
{
	if (r->broken && r->unmeasurable) {
		snprintf(x, len, "not measured: a call took less CPU than its fixed cost");
		snprintf(b, len, "-");
		snprintf(ratio, len, "-");
		return;
	}
	if (r->broken) {
		snprintf(x, len, "verdict check failed");
		snprintf(b, len, "-");
		snprintf(ratio, len, "-");
		return;
	}
	bench_cell(&r->xdpban, 1, x, len);
	bench_cell(&r->other, 1, b, len);
	bench_cell(&r->ratio, 2, ratio, len);
}

#endif /* XDPBAN_BENCH_BPF_H */
