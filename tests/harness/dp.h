/* dp.h - the data path under test: loads the real xdpban object into the kernel, unpinned so
 * that tests never touch a live state, and runs packets and reports through BPF_PROG_TEST_RUN.
 * Test support only; the daemon has its own loader. */
#ifndef XDPBAN_TEST_DP_H
#define XDPBAN_TEST_DP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "libxdpban.h"
#include "policy.h"
#include "table.h"
#include "xdpban_config.h" /* before the skeleton: its .rodata holds the defaults */
#include "xdpban.skel.h"
#include "xdpban_policy.h"
#include "xdpban_report.h"
#include "xdpban_state.h"
#include "xdpban_stats.h"

/* Table sizes for the load; 0 keeps the compiled-in size. */
struct dp_opts {
	__u32 counters_max; /* counter slots */
	__u32 bans_max;     /* bans (the table gets twice as many slots) */
	__u32 ban_groups;   /* or: exactly this many groups of four slots (a capacity a test
			     * can count on: with 16 groups or fewer every ban may go anywhere) */
	__u32 flat4x_max; /* level-3 lines of the IPv4 flat table */
	__u32 flat6x_max; /* IPv6 lines (xdpban_flat6x) */
	__u32 policy4_max, policy6_max; /* entries of the policy tries */
	bool single_buffer; /* without multi-buffer (frags), as a plain `ip link` load */
};

struct dp {
	struct xdpban *skel;
	struct dp_opts opts; /* what it was loaded with */
	int prog_fd;   /* the XDP data path */
	int report_fd; /* the report program */
	int ncpus;     /* possible CPUs, for per-CPU maps */
	struct xb_bans bans;          /* the ban and counter tables, mapped: every write goes */
	struct xb_counters counters;  /* through table.h, never to the maps directly */
	struct xb_maps maps; /* the loaded maps, as the daemon fills them (not owned) */
	bool adopted; /* loaded by the caller (dp_adopt): never parked for another dp_open */
};


/* 0 or -errno. A program an earlier dp_close kept, loaded with the same options, is reused
 * with every map reset to what a fresh load holds (XDPBAN_TEST_FRESH_LOADS=1 in the
 * environment loads afresh each time). */
int dp_open(struct dp *dp, const struct dp_opts *opts);
void dp_close(struct dp *dp);
/* Takes a skeleton the caller opened and loaded itself (with its own logs, say: the kernel
 * check of tests/kernel/), its maps unpinned, as the data path under test. On success dp owns
 * it (dp_close frees it, never keeps it for a dp_open); on failure it is still the caller's.
 * 0 or -errno. */
int dp_adopt(struct dp *dp, struct xdpban *skel);

/* Runs one frame; *action gets the XDP verdict (XDP_PASS, XDP_DROP, ...). 0 or -errno. */
int dp_run(struct dp *dp, const void *frame, __u32 len, __u32 *action);
/* Runs one frame as a multi-buffer frame: its first `linear` bytes in the first buffer (at
 * least DP_LINEAR_MIN, at most DP_LINEAR_MAX), the rest, at most DP_FRAGS_MAX bytes, in
 * fragments of a page each. linear 0: as much as the first buffer takes. 0 or -errno. */
int dp_run_split(struct dp *dp, const void *frame, __u32 len, __u32 linear, __u32 *action);
#define DP_LINEAR_MIN 14   /* BPF_PROG_TEST_RUN wants the Ethernet header in the first buffer */
#define DP_LINEAR_MAX 3520 /* a 4 KiB page less XDP's headroom and skb_shared_info */
#define DP_FRAGS_MAX (17 * 4096) /* MAX_SKB_FRAGS (17) pages of fragments */
#define DP_FRAME_MAX (DP_LINEAR_MAX + DP_FRAGS_MAX)

int dp_set_config(struct dp *dp, const struct xdpban_config *cfg);

/* The time a run on CPU `cpu` took as `now` (docs/datapath.md, "The clock": the CPU's reading
 * of the current tick, up to XDPBAN_CLOCK_LAG_MAX_NS behind CLOCK_BOOTTIME) if the run needed
 * one, else an older reading, or 0 before any. A test that pins itself to `cpu` gives its model
 * exactly the kernel's `now` with it. 0 or -errno. */
int dp_clock_ns(struct dp *dp, int cpu, __u64 *now);
/* The stats summed over CPUs. */
int dp_stats(struct dp *dp, struct xdpban_stat_value out[XDPBAN_STAT__MAX]);
int dp_stats_reset(struct dp *dp);
/* Sets the xdpban_ports byte of port (host order) to rules (xdpban_ports.h). */
int dp_port_rules(struct dp *dp, __u32 port, __u8 rules);
/* Adds to want[] the class_<name> rows a packet of these classes records (one each). */
void dp_want_classes(__u64 want[XDPBAN_STAT__MAX], __u32 classes);

/* Policy changes go through user/lib/policy.h, as every writer's must, so that the flat
 * table stays right. Prefixes are text ("192.0.2.0/24", "2001:db8::/32", or a bare address). */
/* Adds a permanent prefix of list 1. */
int dp_policy_add(struct dp *dp, const char *cidr, __u32 verdict);
/* Adds or replaces a prefix with any value (a timed one, say). */
int dp_policy_put(struct dp *dp, const char *cidr, const struct xdpban_policy *val);
/* Deletes the prefix; -ENOENT if it was not there. */
int dp_policy_del(struct dp *dp, const char *cidr);
/* Compiles a complete set (xb_policy_compile): prints the error line on failure. */
int dp_policy_compile(struct dp *dp, const struct xb_policy_set *set,
		      const struct xb_compile_opts *opts, struct xb_compile_result *res);
/* Parses a prefix given as text, as dp_policy_add reads it. 0 or -EINVAL. */
int dp_prefix(const char *cidr, struct xb_prefix *p);

/* Runs the report program; *out gets the completed request. */
int dp_report(struct dp *dp, __u8 family, const __u8 *addr, __u32 count,
	      struct xdpban_report_req *out);

/* Builds the key the data path would use for an address given as text. */
int dp_key(const char *addr, __u8 v6_prefix, struct xdpban_key *key);

/* Reads the counter/ban of a key: 0, -ENOENT, or -errno. A counter's start is in CLOCK_BOOTTIME
 * seconds; its count is what the table holds, whether its window has ended or not. */
int dp_counter(struct dp *dp, const struct xdpban_key *key, __u32 *start_s, __u32 *count);
int dp_counter_full(struct dp *dp, const struct xdpban_key *key, struct xb_counter *out);
int dp_ban(struct dp *dp, const struct xdpban_key *key, struct xdpban_ban *ban);
/* Writes counters and bans the way every userspace writer must (user/lib/table.h). */
int dp_put_counter(struct dp *dp, const struct xdpban_key *key, __u32 start_s, __u32 count);
int dp_put_ban(struct dp *dp, const struct xdpban_key *key, const struct xdpban_ban *ban);
int dp_del_ban(struct dp *dp, const struct xdpban_key *key);
int dp_del_counter(struct dp *dp, const struct xdpban_key *key);
/* Empties the counter and ban tables (no traffic may run meanwhile). */
void dp_tables_clear(struct dp *dp);
/* Live slots of the counter and ban tables. */
int dp_count_counters(struct dp *dp);
int dp_count_bans(struct dp *dp);
/* Zeroes every CPU's drop word of every ban slot (xdpban_bandrops), for a test that reads drop
 * counts: dp_tables_clear starts the slots' generations over, and clears no drop word (it
 * would cost a batch write per test), so a word of an earlier test could match again.
 * 0 or -errno. */
int dp_drops_clear(struct dp *dp);
/* Number of entries in a hash or trie map. */
int dp_map_count(int map_fd, size_t key_size);

/* Pins the data path's own maps (not libbpf's internal ones) by name in dir, a directory the
 * caller created, as xdpband pins them: for tests and benchmarks of what reads the pins (the
 * CLI, the application library). 0 or -errno. */
int dp_pin(struct dp *dp, const char *dir);
/* Removes the pins dp_pin() made, then dir itself; pins that are gone already are no error. */
void dp_unpin(struct dp *dp, const char *dir);

/* CLOCK_BOOTTIME, the data path's clock. */
__u64 dp_now_ns(void);

/* True when the tests can load BPF (root). Tests call skip() when false, after saying why. */
bool dp_can_load(void);

/* A cmocka setup's and teardown's work for a test with a data path of its own: *state gets a
 * dp opened with opts (NULL: defaults) and, unless NULL, cfg; or NULL when dp_can_load()
 * says no (each test then skips). 0, or -1 when opening failed. */
int dp_fixture_open(void **state, const struct dp_opts *opts, const struct xdpban_config *cfg);
int dp_fixture_close(void **state);
/* A cmocka group's setup and teardown around one data path with the default options: without
 * root, *loaded stays false (the tests skip); a failed load is named for `test` and fails the
 * group. 0 or -1. */
int dp_group_open(struct dp *dp, bool *loaded, const char *test);
void dp_group_close(struct dp *dp, bool *loaded);

#endif /* XDPBAN_TEST_DP_H */
