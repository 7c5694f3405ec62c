/* dp.c - see dp.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "dp.h"
#include "xdpban_time.h"

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_WARN && getenv("XDPBAN_TEST_VERBOSE"))
		return vfprintf(stderr, fmt, args);
	return 0;
}

bool dp_can_load(void)
{
	if (geteuid() == 0)
		return true;
	fprintf(stderr, "skipping: loading BPF programs needs root\n");
	return false;
}

int dp_group_open(struct dp *dp, bool *loaded, const char *test)
{
	int err;

	*loaded = false;
	if (!dp_can_load())
		return 0;
	err = dp_open(dp, NULL);
	if (err) {
		fprintf(stderr, "%s: loading the data path failed: %s\n", test, strerror(-err));
		return -1;
	}
	*loaded = true;
	return 0;
}

void dp_group_close(struct dp *dp, bool *loaded)
{
	if (*loaded)
		dp_close(dp);
	*loaded = false;
}

static void fill_maps(struct dp *dp)
{
	xb_maps_from_skel(&dp->maps, dp->skel);
	dp->maps.report_prog = dp->report_fd;
}

/* A data path closed by one test and kept for the next that asks for the same options: a
 * load costs the verifier seconds, and most tests of a binary load the same program. Its maps
 * are reset to what a fresh load holds first (reset_maps). One at most; freed at exit. */
static struct {
	struct dp dp; /* its tables unmapped; dp.opts what it was loaded with */
	bool held;
} parked;

static void parked_free(void)
{
	if (parked.held && parked.dp.skel)
		xdpban__destroy(parked.dp.skel);
	parked.held = false;
}

__attribute__((destructor)) static void parked_free_at_exit(void)
{
	parked_free();
}

/* Zeroes every entry of an array map, as a fresh one reads. A mapped array in one memset. */
static int zero_array(const struct bpf_map *map, int ncpus)
{
	__u32 n = bpf_map__max_entries(map), value = bpf_map__value_size(map);
	int fd = bpf_map__fd(map), err = 0;
	size_t bytes;
	void *mem;

	if (bpf_map__map_flags(map) & BPF_F_MMAPABLE) {
		bytes = (size_t)n * ((value + 7) & ~7u);
		bytes = (bytes + (size_t)getpagesize() - 1) & ~((size_t)getpagesize() - 1);
		mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (mem == MAP_FAILED)
			return -errno;
		memset(mem, 0, bytes);
		munmap(mem, bytes);
		return 0;
	}
	if (bpf_map__type(map) == BPF_MAP_TYPE_PERCPU_ARRAY)
		value = ((value + 7) & ~7u) * ncpus;
	mem = calloc(1, value);
	if (!mem)
		return -ENOMEM;
	for (__u32 i = 0; i < n && !err; i++)
		if (bpf_map_update_elem(fd, &i, mem, BPF_ANY))
			err = -errno;
	free(mem);
	return err;
}

/* Deletes every entry of a hash or a trie: the keys first, then each. */
static int empty_keyed(const struct bpf_map *map)
{
	__u32 key_size = bpf_map__key_size(map), n = 0, cap = 1024;
	int fd = bpf_map__fd(map), err = 0;
	char *keys = malloc((size_t)cap * key_size), *prev = NULL;

	if (!keys)
		return -ENOMEM;
	while (bpf_map_get_next_key(fd, prev, keys + (size_t)n * key_size) == 0) {
		prev = keys + (size_t)n * key_size;
		if (++n == cap) {
			char *more = realloc(keys, (size_t)(cap *= 2) * key_size);

			if (!more) {
				free(keys);
				return -ENOMEM;
			}
			keys = more;
			prev = keys + (size_t)(n - 1) * key_size;
		}
	}
	for (__u32 i = 0; i < n && !err; i++)
		if (bpf_map_delete_elem(fd, keys + (size_t)i * key_size) && errno != ENOENT)
			err = -errno;
	free(keys);
	return err;
}

static int drop_record(void *ctx, void *data, size_t size)
{
	return 0;
}

/* Reads every record left in a ring buffer, so that it is as empty as a fresh one. */
static int drain_ring(const struct bpf_map *map)
{
	struct ring_buffer *rb = ring_buffer__new(bpf_map__fd(map), drop_record, NULL, NULL);
	int n;

	if (!rb)
		return -errno;
	n = ring_buffer__consume(rb);
	ring_buffer__free(rb);
	return n < 0 ? n : 0;
}

/* Every map of a loaded data path as a fresh load holds it (the read-only data aside). */
static int reset_maps(struct dp *dp)
{
	struct bpf_map *map;
	int err = 0;

	bpf_object__for_each_map(map, dp->skel->obj) {
		if (err || bpf_map__is_internal(map))
			continue;
		switch (bpf_map__type(map)) {
		case BPF_MAP_TYPE_ARRAY:
		case BPF_MAP_TYPE_PERCPU_ARRAY:
			err = zero_array(map, dp->ncpus);
			break;
		case BPF_MAP_TYPE_HASH:
		case BPF_MAP_TYPE_LPM_TRIE:
			err = empty_keyed(map);
			break;
		case BPF_MAP_TYPE_RINGBUF:
			err = drain_ring(map);
			break;
		default:
			err = -EOPNOTSUPP; /* a new kind of map: say how to reset it */
		}
	}
	return err;
}

static int open_tables(struct dp *dp)
{
	int err;

	fill_maps(dp);
	err = xb_bans_open(&dp->bans, dp->maps.bans, dp->maps.banidx, dp->maps.baninfo,
			   dp->maps.seed);
	if (!err)
		err = xb_counters_open(&dp->counters, dp->maps.counts, dp->maps.seed);
	return err;
}

static bool opts_equal(const struct dp_opts *a, const struct dp_opts *b)
{
	return a->counters_max == b->counters_max && a->bans_max == b->bans_max &&
	       a->ban_groups == b->ban_groups && a->flat4x_max == b->flat4x_max &&
	       a->flat6x_max == b->flat6x_max &&
	       a->policy4_max == b->policy4_max && a->policy6_max == b->policy6_max &&
	       a->single_buffer == b->single_buffer;
}

/* Unmaps the tables and unloads the program. */
static void destroy(struct dp *dp)
{
	xb_bans_close(&dp->bans);
	xb_counters_close(&dp->counters);
	if (dp->skel)
		xdpban__destroy(dp->skel);
	memset(dp, 0, sizeof(*dp));
}

/* The parked data path, if it was loaded with these options, reset. */
static bool unpark(struct dp *dp, const struct dp_opts *opts)
{
	struct dp_opts want = {};

	if (opts)
		want = *opts;
	if (!parked.held || !opts_equal(&want, &parked.dp.opts))
		return false;
	*dp = parked.dp;
	parked.held = false;
	if (reset_maps(dp) || open_tables(dp)) {
		destroy(dp); /* not parked again: a load afresh follows */
		return false;
	}
	return true;
}

int dp_open(struct dp *dp, const struct dp_opts *opts)
{
	struct bpf_map *map;
	int err;

	if (unpark(dp, opts))
		return 0;
	memset(dp, 0, sizeof(*dp));
	if (opts)
		dp->opts = *opts;
	parked_free(); /* its memory, before this load's */
	libbpf_set_print(quiet_print);
	dp->skel = xdpban__open();
	if (!dp->skel)
		return -errno;
	/* Unpinned: a test must never share or clobber the state of a running xdpban. */
	bpf_object__for_each_map(map, dp->skel->obj)
		bpf_map__set_pin_path(map, NULL);
	if (opts)
		xb_tables_size(dp->skel, opts->counters_max,
			       opts->ban_groups ? opts->ban_groups
						: opts->bans_max ? XDPBAN_BAN_GROUPS(opts->bans_max) : 0);
	if (opts && opts->flat4x_max)
		bpf_map__set_max_entries(dp->skel->maps.xdpban_flat4x,
					 XDPBAN_FLAT_SLOTS(opts->flat4x_max));
	if (opts && opts->flat6x_max)
		xb_lines6_size(dp->skel, opts->flat6x_max);
	if (opts && opts->policy4_max)
		bpf_map__set_max_entries(dp->skel->maps.xdpban_policy4, opts->policy4_max);
	if (opts && opts->policy6_max)
		bpf_map__set_max_entries(dp->skel->maps.xdpban_policy6, opts->policy6_max);
	bpf_program__set_autoload(dp->skel->progs.xdpban_report, true);
	err = opts && opts->single_buffer ? 0 : xb_datapath_frags(dp->skel); /* as xdpband */
	if (!err)
		err = xdpban__load(dp->skel);
	if (err) {
		xdpban__destroy(dp->skel);
		dp->skel = NULL;
		return err;
	}
	dp->prog_fd = bpf_program__fd(dp->skel->progs.xdpban);
	dp->report_fd = bpf_program__fd(dp->skel->progs.xdpban_report);
	dp->ncpus = libbpf_num_possible_cpus();
	err = open_tables(dp);
	if (err)
		destroy(dp); /* never parked: it did not open */
	return err;
}

int dp_adopt(struct dp *dp, struct xdpban *skel)
{
	int report = bpf_program__fd(skel->progs.xdpban_report), err;

	memset(dp, 0, sizeof(*dp));
	dp->skel = skel;
	dp->prog_fd = bpf_program__fd(skel->progs.xdpban);
	dp->report_fd = report < 0 ? -1 : report; /* loaded or not */
	dp->ncpus = libbpf_num_possible_cpus();
	dp->adopted = true;
	err = dp->prog_fd < 0 ? -EINVAL : open_tables(dp);
	if (err) {
		xb_bans_close(&dp->bans);
		xb_counters_close(&dp->counters);
		memset(dp, 0, sizeof(*dp));
	}
	return err;
}

/* Keeps the program for the next dp_open with the same options (parked), in place of the one
 * kept before. */
void dp_close(struct dp *dp)
{
	xb_bans_close(&dp->bans);
	xb_counters_close(&dp->counters);
	if (!dp->skel || dp->adopted || getenv("XDPBAN_TEST_FRESH_LOADS")) {
		destroy(dp);
		return;
	}
	xb_bans_close(&dp->bans);
	xb_counters_close(&dp->counters);
	parked_free();
	parked.dp = *dp;
	parked.held = true;
	memset(dp, 0, sizeof(*dp));
}

int dp_run(struct dp *dp, const void *frame, __u32 len, __u32 *action)
{
	return dp_run_split(dp, frame, len, 0, action);
}

/* The kernel puts ctx_in's data_end bytes in the first buffer and the rest in page-sized
 * fragments (bpf_prog_test_run_xdp). No data_out: nothing reads the frame back, and a frame
 * of several pages would not fit a fixed buffer. */
int dp_run_split(struct dp *dp, const void *frame, __u32 len, __u32 linear, __u32 *action)
{
	struct xdp_md ctx = { .data_end = linear };
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = frame, .data_size_in = len, .repeat = 1);
	int err;

	if (linear) {
		run.ctx_in = &ctx;
		run.ctx_size_in = sizeof(ctx);
	}
	err = bpf_prog_test_run_opts(dp->prog_fd, &run);
	if (err)
		return -errno;
	*action = run.retval;
	return 0;
}

int dp_set_config(struct dp *dp, const struct xdpban_config *cfg)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(bpf_map__fd(dp->skel->maps.xdpban_config), &zero, cfg, BPF_ANY))
		return -errno;
	return 0;
}

int dp_clock_ns(struct dp *dp, int cpu, __u64 *now)
{
	struct xdpban_clock *percpu;
	__u32 zero = 0;
	int err = 0;

	if (cpu < 0 || cpu >= dp->ncpus)
		return -EINVAL;
	percpu = calloc(dp->ncpus, sizeof(*percpu));
	if (!percpu)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(dp->skel->maps.xdpban_clock), &zero, percpu))
		err = -errno;
	else
		*now = percpu[cpu].boot_ns;
	free(percpu);
	return err;
}

int dp_stats(struct dp *dp, struct xdpban_stat_value out[XDPBAN_STAT__MAX])
{
	int fd = bpf_map__fd(dp->skel->maps.xdpban_stats);
	struct xdpban_stat_value *percpu = calloc(dp->ncpus, sizeof(*percpu));

	if (!percpu)
		return -ENOMEM;
	for (__u32 i = 0; i < XDPBAN_STAT__MAX; i++) {
		if (bpf_map_lookup_elem(fd, &i, percpu)) {
			free(percpu);
			return -errno;
		}
		out[i].packets = out[i].bytes = 0;
		for (int c = 0; c < dp->ncpus; c++) {
			out[i].packets += percpu[c].packets;
			out[i].bytes += percpu[c].bytes;
		}
	}
	free(percpu);
	return 0;
}

int dp_port_rules(struct dp *dp, __u32 port, __u8 rules)
{
	int fd = bpf_map__fd(dp->skel->maps.xdpban_ports);
	__u32 word = xdpban_port_word(port), shift = xdpban_port_shift(port);
	__u64 w;

	if (port >= XDPBAN_PORTS_PORTS)
		return -EINVAL;
	if (bpf_map_lookup_elem(fd, &word, &w))
		return -errno;
	w = (w & ~(0xffull << shift)) | ((__u64)rules << shift);
	return bpf_map_update_elem(fd, &word, &w, BPF_ANY) ? -errno : 0;
}

void dp_want_classes(__u64 want[XDPBAN_STAT__MAX], __u32 classes)
{
	for (int i = 0; i < XDPBAN_CLASS__COUNT; i++)
		if (classes & (1u << i))
			want[XDPBAN_STAT_OF_CLASS_BITNO(i)]++;
}

int dp_stats_reset(struct dp *dp)
{
	int fd = bpf_map__fd(dp->skel->maps.xdpban_stats);
	struct xdpban_stat_value *zero = calloc(dp->ncpus, sizeof(*zero));

	if (!zero)
		return -ENOMEM;
	for (__u32 i = 0; i < XDPBAN_STAT__MAX; i++) {
		if (bpf_map_update_elem(fd, &i, zero, BPF_ANY)) {
			free(zero);
			return -errno;
		}
	}
	free(zero);
	return 0;
}

int dp_prefix(const char *cidr, struct xb_prefix *p)
{
	char err[XB_ERRLEN];

	return xb_prefix_parse(cidr, p, err, sizeof(err));
}

int dp_policy_put(struct dp *dp, const char *cidr, const struct xdpban_policy *val)
{
	struct xb_prefix p;
	int err = dp_prefix(cidr, &p);

	return err ? err : xb_policy_put(&dp->maps, &p, val, BPF_ANY);
}

int dp_policy_add(struct dp *dp, const char *cidr, __u32 verdict)
{
	struct xdpban_policy pol = { .verdict = verdict, .list_id = 1 };

	return dp_policy_put(dp, cidr, &pol);
}

int dp_policy_del(struct dp *dp, const char *cidr)
{
	struct xb_prefix p;
	int err = dp_prefix(cidr, &p);

	return err ? err : xb_policy_delete(&dp->maps, &p);
}

int dp_policy_compile(struct dp *dp, const struct xb_policy_set *set,
		      const struct xb_compile_opts *opts, struct xb_compile_result *res)
{
	char err[XB_ERRLEN] = "";
	int ret = xb_policy_compile(&dp->maps, set, opts, res, err, sizeof(err));

	if (ret)
		fprintf(stderr, "policy compile: %s\n", err);
	return ret;
}

int dp_report(struct dp *dp, __u8 family, const __u8 *addr, __u32 count,
	      struct xdpban_report_req *out)
{
	struct xdpban_report_req req = { .family = family, .count = count };
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = &req, .data_size_in = sizeof(req),
		    .data_out = out, .data_size_out = sizeof(*out), .repeat = 1);

	memcpy(req.addr, addr, family == XDPBAN_FAMILY_INET ? 4 : 16);
	if (bpf_prog_test_run_opts(dp->report_fd, &run))
		return -errno;
	return 0;
}

int dp_key(const char *text, __u8 v6_prefix, struct xdpban_key *key)
{
	struct xb_prefix addr;
	int err = dp_prefix(text, &addr);

	if (!err)
		xb_key_from_addr(NULL, &addr, v6_prefix, key);
	return err;
}

int dp_counter_full(struct dp *dp, const struct xdpban_key *key, struct xb_counter *out)
{
	return xb_counters_get(&dp->counters, key, dp_now_ns() / NS_PER_SEC, out);
}

int dp_counter(struct dp *dp, const struct xdpban_key *key, __u32 *start_s, __u32 *count)
{
	struct xb_counter c;
	int err = dp_counter_full(dp, key, &c);

	if (err)
		return err;
	*start_s = c.start_s;
	*count = c.count;
	return 0;
}

int dp_ban(struct dp *dp, const struct xdpban_key *key, struct xdpban_ban *ban)
{
	return xb_bans_get(&dp->bans, key, ban);
}

int dp_put_counter(struct dp *dp, const struct xdpban_key *key, __u32 start_s, __u32 count)
{
	struct xb_counter c = { .count = count, .start_s = start_s };
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;

	xb_config_read(&dp->maps, &cfg);
	return xb_counters_put(&dp->counters, key, dp_now_ns() / NS_PER_SEC, cfg.window_s, &c);
}

int dp_put_ban(struct dp *dp, const struct xdpban_key *key, const struct xdpban_ban *ban)
{
	return xb_bans_put(&dp->bans, key, ban, BPF_ANY);
}

int dp_del_ban(struct dp *dp, const struct xdpban_key *key)
{
	return xb_bans_remove(&dp->bans, key);
}

int dp_del_counter(struct dp *dp, const struct xdpban_key *key)
{
	return xb_counters_remove(&dp->counters, key);
}

int dp_drops_clear(struct dp *dp)
{
	__u32 slots = (__u32)((size_t)dp->bans.tab.n * XDPBAN_GROUP_SLOTS);
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 *keys = calloc(slots, sizeof(*keys)), count = slots;
	__u64 *zeros = calloc((size_t)slots * dp->ncpus, sizeof(*zeros));

	for (__u32 i = 0; keys && i < slots; i++)
		keys[i] = i;
	int err = keys && zeros ? 0 : -ENOMEM;

	if (!err && bpf_map_update_batch(bpf_map__fd(dp->skel->maps.xdpban_bandrops), keys, zeros,
					 &count, &opts))
		err = -errno;
	free(keys);
	free(zeros);
	return err;
}

void dp_tables_clear(struct dp *dp)
{
	size_t groups = (size_t)dp->bans.tab.n;

	memset(dp->counters.tab.groups, 0, (size_t)dp->counters.tab.n * sizeof(struct xdpban_group));
	memset(dp->bans.tab.groups, 0, groups * sizeof(struct xdpban_group));
	memset(dp->bans.info, 0, groups * XDPBAN_GROUP_SLOTS * sizeof(struct xdpban_ban_info));
}

static int count_counter(const struct xdpban_key *key, const struct xb_counter *c, void *ctx)
{
	(*(int *)ctx)++;
	return 0;
}

static int count_ban(const struct xdpban_key *key, const struct xdpban_ban *ban, void *ctx)
{
	(*(int *)ctx)++;
	return 0;
}

int dp_count_counters(struct dp *dp)
{
	int n = 0, err = xb_counters_walk(&dp->counters, dp_now_ns() / NS_PER_SEC,
					  count_counter, &n);

	return err ? err : n;
}

int dp_count_bans(struct dp *dp)
{
	int n = 0, err = xb_bans_walk(&dp->bans, count_ban, &n);

	return err ? err : n;
}

int dp_map_count(int map_fd, size_t key_size)
{
	unsigned char key[64], next[64];
	void *prev = NULL;
	int n = 0;

	if (key_size > sizeof(key))
		return -EINVAL;
	while (bpf_map_get_next_key(map_fd, prev, next) == 0) {
		memcpy(key, next, key_size);
		prev = key;
		n++;
	}
	return errno == ENOENT ? n : -errno;
}

/* The pin of a map that dp_pin() pins (the object's own maps, whose names all start so):
 * true and its path, or false for libbpf's internal maps. */
static bool pin_path(const struct bpf_map *map, const char *dir, char *path, size_t len)
{
	if (strncmp(bpf_map__name(map), "xdpban_", 7))
		return false;
	snprintf(path, len, "%s/%s", dir, bpf_map__name(map));
	return true;
}

int dp_pin(struct dp *dp, const char *dir)
{
	struct bpf_map *map;
	char path[512];

	/* Not bpf_map__pin: libbpf would remember the pin and skip it after dp_unpin, on a
	 * parked data path's next dp_pin. */
	bpf_object__for_each_map(map, dp->skel->obj)
		if (pin_path(map, dir, path, sizeof(path)) && bpf_obj_pin(bpf_map__fd(map), path))
			return -errno;
	return 0;
}

void dp_unpin(struct dp *dp, const char *dir)
{
	struct bpf_map *map;
	char path[512];

	bpf_object__for_each_map(map, dp->skel->obj)
		if (pin_path(map, dir, path, sizeof(path)))
			unlink(path);
	rmdir(dir);
}

__u64 dp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (__u64)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

int dp_fixture_open(void **state, const struct dp_opts *opts, const struct xdpban_config *cfg)
{
	struct dp *dp;

	*state = NULL;
	if (!dp_can_load())
		return 0; /* dp_can_load said why */
	dp = calloc(1, sizeof(*dp));
	if (!dp)
		return -1;
	if (dp_open(dp, opts)) {
		free(dp);
		return -1;
	}
	if (cfg && dp_set_config(dp, cfg)) {
		dp_close(dp);
		free(dp);
		return -1;
	}
	*state = dp;
	return 0;
}

int dp_fixture_close(void **state)
{
	if (*state) {
		dp_close(*state);
		free(*state);
		*state = NULL;
	}
	return 0;
}
