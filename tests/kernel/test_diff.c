/* test_diff.c - the differential test: the real XDP program (through BPF_PROG_TEST_RUN) and the
 * reference model (tests/harness/model.c) get the same seeded stream of random and mutated
 * frames, reports, and injected state, and must agree on every verdict, every ban event, and,
 * every check_every frames, on the summed statistics and on every counter and ban. Half the
 * frames reach the kernel as multi-buffer frames (the first buffer ending at a header
 * boundary or anywhere), and a few are stretched into GSO/GRO aggregates of about 64 KiB.
 *
 * Phases: a main run with a small limit under five configs; a tiny ban table (ban_table_full);
 * injected expired bans, windows and timed policy (the expiry paths); a ring buffer left
 * undrained (events_lost); config entries out of range; policy changes during the run
 * (reloads of other lists, timed prefix bans put and lifted, recompiles); and allow-only mode. The policy is always
 * written the way the daemon writes it, through user/lib/policy.h: each phase starts with a
 * compile of the standard lists, so the flat table in front of the tries answers most
 * sources. Each check also holds the ban
 * table's overflow counts (include/xdpban_table.h) to the bans it holds. The only tolerance is
 * time: the
 * kernel reads its clock a little after our `now`, so its times must lie between the clock
 * reads around the run (a counter's window start may be one second later).
 *
 * Reproduce: the seed and the frame index are printed with every mismatch, with the frame in
 * hex. XDPBAN_DIFF_SEED overrides the base seed, XDPBAN_DIFF_CHECK_EVERY=1 compares the state
 * after every frame. This test must never pin, attach, or use any interface.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "xdpban_event.h"
#include "xdpban_maps.h"
#include "dp.h"
#include "fuzz.h"
#include "model.h"
#include "xdpban_time.h"

#define BASE_SEED 0x78627364696666ull /* "xbsdiff" */
#define MISMATCHES_SHOWN 12
#define REPORT_PCT 3
#define AGGREGATE_PCT 3 /* of IP frames, stretched into a GSO/GRO aggregate */


/* A ban event the model says the kernel must have sent, and when the kernel could have. */
struct expected_event {
	struct xdpban_key key;
	struct xdpban_ban ban; /* times from the model's `now` */
	__u64 not_before, not_after;
	unsigned long frame;
};

struct totals {
	unsigned long frames, reports, checks, mismatches, events;
	unsigned long aggregates, split; /* frames stretched into aggregates, in several buffers */
	__u64 stats[XDPBAN_STAT__MAX];
};

struct diff {
	struct dp dp;
	bool dp_opened;
	int cpu; /* the one CPU this test and so every run of the data path is on */
	struct model model;
	struct fuzz_gen gen;
	struct ring_buffer *rb;
	__u64 seed;
	const char *phase;
	unsigned long frame; /* index within the phase */
	unsigned long mismatches;
	unsigned long reports;
	__u32 check_every;
	bool drain_each_frame;
	__u32 ring_room; /* ban events an empty ring buffer holds */
	struct expected_event *expect;
	size_t nexpect, expect_head, expect_cap;
};

static struct totals totals;

/* ---- Reporting mismatches ---- */

static void __attribute__((format(printf, 2, 3))) mismatch(struct diff *d, const char *fmt, ...)
{
	va_list ap;

	if (d->mismatches++ >= MISMATCHES_SHOWN)
		return;
	printf("MISMATCH [%s seed 0x%llx frame %lu] ", d->phase, (unsigned long long)d->seed,
	       d->frame);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void key_text(const struct xdpban_key *key, char *buf, size_t len)
{
	char addr[INET6_ADDRSTRLEN] = "?";

	inet_ntop(key->family == XDPBAN_FAMILY_INET ? AF_INET : AF_INET6, key->addr, addr,
		  sizeof(addr));
	snprintf(buf, len, "%s/%u", addr, key->prefixlen);
}

/* ---- Setup ---- */

static __u64 base_seed(void)
{
	const char *env = getenv("XDPBAN_DIFF_SEED");

	return env ? strtoull(env, NULL, 0) : BASE_SEED;
}

static __u32 check_every(void)
{
	const char *env = getenv("XDPBAN_DIFF_CHECK_EVERY");
	long v = env ? strtol(env, NULL, 0) : 0;

	return v > 0 ? (__u32)v : 1000;
}

static int on_event(void *ctx, void *data, size_t size);

/* BPF_RINGBUF_HDR_SZ per record, the record rounded up to 8 bytes (uapi linux/bpf.h). */
static __u32 ring_capacity(struct dp *dp)
{
	__u32 record = (sizeof(struct xdpban_event) + BPF_RINGBUF_HDR_SZ + 7) & ~7u;

	return bpf_map__max_entries(dp->skel->maps.xdpban_events) / record;
}

static int policy_parse(const char *cidr, struct model_prefix *p)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash;

	snprintf(buf, sizeof(buf), "%s", cidr);
	slash = strchr(buf, '/');
	if (slash)
		*slash++ = '\0';
	memset(p, 0, sizeof(*p));
	if (inet_pton(AF_INET, buf, p->addr) == 1)
		p->family = XDPBAN_FAMILY_INET;
	else if (inet_pton(AF_INET6, buf, p->addr) == 1)
		p->family = XDPBAN_FAMILY_INET6;
	else
		return -EINVAL;
	p->plen = slash ? (__u8)atoi(slash) : xb_family_bits(p->family);
	return 0;
}

#define LIST_ID 7 /* of every list entry here; manual bans use XDPBAN_LIST_MANUAL_BAN */

/* Writes one policy prefix, timed or not, into both sides: a single change, as a manual ban
 * is (LOOKUP in its regions first, then the trie). */
static void policy_put(struct diff *d, const char *cidr, __u32 verdict, __u32 list_id,
		       __u64 expires_ns)
{
	struct xdpban_policy pol = { .verdict = verdict, .list_id = list_id,
				     .expires_ns = expires_ns };
	struct model_prefix p;

	assert_int_equal(policy_parse(cidr, &p), 0);
	p.verdict = verdict;
	p.expires_ns = expires_ns;
	assert_int_equal(model_policy_add(&d->model, &p), 0);
	assert_int_equal(dp_policy_put(&d->dp, cidr, &pol), 0);
}

static void policy_add(struct diff *d, const char *cidr, __u32 verdict, __u64 expires_ns)
{
	policy_put(d, cidr, verdict, LIST_ID, expires_ns);
}

/* Deletes one prefix on both sides (an unban, or the sweep's removal of a timed entry). */
static void policy_del(struct diff *d, const char *cidr)
{
	struct model_prefix p;

	assert_int_equal(policy_parse(cidr, &p), 0);
	assert_int_equal(model_policy_del(&d->model, &p), 0);
	assert_int_equal(dp_policy_del(&d->dp, cidr), 0);
}

/* A manual prefix ban that a reload keeps (the daemon keeps list XDPBAN_LIST_MANUAL_BAN). */
struct manual_ban {
	const char *cidr;
	__u64 expires_ns;
};

/* Compiles lists as a reload does: the tries end up holding exactly the lists and the manual
 * bans still in force, and the flat table is exact again. The model gets the same. */
static void policy_compile(struct diff *d, const struct fuzz_policy *lists, size_t n,
			   const struct manual_ban *manual, size_t n_manual)
{
	const struct xb_compile_opts opts = { .keep = xb_keep_manual_bans };
	struct xb_policy_set set = {};
	struct xb_compile_result res;

	model_policy_clear(&d->model);
	for (size_t i = 0; i < n_manual; i++) {
		struct model_prefix p;

		assert_int_equal(policy_parse(manual[i].cidr, &p), 0);
		p.verdict = XDPBAN_POLICY_DENY;
		p.expires_ns = manual[i].expires_ns;
		assert_int_equal(model_policy_add(&d->model, &p), 0);
	}
	for (size_t i = 0; i < n; i++) {
		struct xdpban_policy val = { .verdict = lists[i].verdict, .list_id = LIST_ID };
		struct model_prefix p;
		struct xb_prefix prefix;

		assert_int_equal(policy_parse(lists[i].cidr, &p), 0);
		p.verdict = lists[i].verdict;
		assert_int_equal(model_policy_add(&d->model, &p), 0); /* a list entry wins */
		assert_int_equal(dp_prefix(lists[i].cidr, &prefix), 0);
		assert_int_equal(xb_policy_set_add(&set, &prefix, &val), 0);
	}
	assert_int_equal(dp_policy_compile(&d->dp, &set, &opts, &res), 0);
	assert_int_equal(res.entries, d->model.npolicy);
	xb_policy_set_free(&set);
}

static void set_config(struct diff *d, const struct xdpban_config *cfg)
{
	assert_int_equal(dp_set_config(&d->dp, cfg), 0);
	model_set_config(&d->model, cfg);
}

static struct xdpban_config config(__u32 limit, __u32 window_s, __u32 ban_s)
{
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;

	cfg.limit = limit;
	cfg.window_s = window_s;
	cfg.ban_s = ban_s;
	return cfg;
}

/* Loads a fresh program and a fresh model with the same ban table and the standard policy. */
static void phase_open_sized(struct diff *d, const char *phase, __u32 ban_groups,
			     __u32 counter_slots, __u64 seed_offset)
{
	struct dp_opts opts = { .ban_groups = ban_groups, .counters_max = counter_slots };

	d->phase = phase;
	d->seed = base_seed() + seed_offset;
	d->check_every = check_every();
	d->drain_each_frame = true;
	assert_int_equal(dp_open(&d->dp, &opts), 0);
	d->dp_opened = true;
	assert_int_equal(model_init(&d->model, d->dp.counters.tab.n, d->dp.bans.tab.n,
				    d->dp.bans.seed), 0);
	d->rb = ring_buffer__new(bpf_map__fd(d->dp.skel->maps.xdpban_events), on_event, d, NULL);
	assert_non_null(d->rb);
	d->ring_room = ring_capacity(&d->dp);
	model_events_drained(&d->model, d->ring_room);
	fuzz_gen_init(&d->gen, d->seed);
	policy_compile(d, fuzz_policy, fuzz_policy_count, NULL, 0);
	printf("phase %s: seed 0x%llx, ban table %u slots, counters %u slots, ring buffer %u "
	       "events\n", phase, (unsigned long long)d->seed,
	       d->dp.bans.tab.n * XDPBAN_GROUP_SLOTS, d->dp.counters.tab.n * XDPBAN_GROUP_SLOTS,
	       d->ring_room);
}

static void phase_open(struct diff *d, const char *phase, __u32 ban_groups, __u64 seed_offset)
{
	phase_open_sized(d, phase, ban_groups, 0, seed_offset);
}

/* ---- Ban events ---- */

static int expect_event(struct diff *d, const struct xdpban_key *key, const struct xdpban_ban *ban,
			__u64 before, __u64 after)
{
	if (d->nexpect == d->expect_cap) {
		size_t cap = d->expect_cap ? d->expect_cap * 2 : 1024;
		struct expected_event *grown = realloc(d->expect, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		d->expect = grown;
		d->expect_cap = cap;
	}
	d->expect[d->nexpect++] = (struct expected_event){
		.key = *key, .ban = *ban, .not_before = before, .not_after = after, .frame = d->frame,
	};
	return 0;
}

static bool event_matches(const struct expected_event *want, const struct xdpban_event *got)
{
	__u64 duration = want->ban.expires_ns - want->ban.start_ns;

	return !memcmp(&want->key, &got->key, sizeof(got->key)) && got->count == want->ban.count &&
	       got->reason == want->ban.reason && got->classes == want->ban.classes &&
	       got->proto == want->ban.proto && got->rule == want->ban.rule &&
	       (!got->proto || got->port == want->ban.port) &&
	       got->time_ns >= want->not_before && got->time_ns <= want->not_after &&
	       got->expires_ns - got->time_ns == duration;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct diff *d = ctx;
	const struct xdpban_event *got = data;
	char text[64];

	totals.events++;
	key_text(&got->key, text, sizeof(text));
	if (size < sizeof(*got)) {
		mismatch(d, "ban event of %zu bytes", size);
	} else if (d->expect_head == d->nexpect) {
		mismatch(d, "kernel sent a ban event for %s (count %u) the model did not create",
			 text, got->count);
	} else {
		const struct expected_event *want = &d->expect[d->expect_head++];
		char want_text[64];

		key_text(&want->key, want_text, sizeof(want_text));
		if (!event_matches(want, got))
			mismatch(d, "ban event of frame %lu: kernel %s count %u reason %u classes %u "
				    "time %llu expires %llu; model %s count %u reason %u classes %u "
				    "time in [%llu, %llu] expires +%llu",
				 want->frame, text, got->count, got->reason, got->classes,
				 (unsigned long long)got->time_ns,
				 (unsigned long long)got->expires_ns, want_text, want->ban.count,
				 want->ban.reason, want->ban.classes,
				 (unsigned long long)want->not_before,
				 (unsigned long long)want->not_after,
				 (unsigned long long)(want->ban.expires_ns - want->ban.start_ns));
	}
	return 0;
}

/* Reads every event the kernel wrote; each must be the next one the model expects. */
static void drain_events(struct diff *d)
{
	int n = ring_buffer__consume(d->rb);

	if (n < 0)
		mismatch(d, "reading the ring buffer: %s", strerror(-n));
	for (; d->expect_head < d->nexpect; d->expect_head++) {
		char text[64];

		key_text(&d->expect[d->expect_head].key, text, sizeof(text));
		mismatch(d, "no ban event from the kernel for %s (frame %lu)", text,
			 d->expect[d->expect_head].frame);
	}
	d->nexpect = d->expect_head = 0;
	model_events_drained(&d->model, d->ring_room);
}

/* ---- State comparison ---- */

static void compare_stats(struct diff *d)
{
	struct xdpban_stat_value got[XDPBAN_STAT__MAX];
	bool same = true;

	assert_int_equal(dp_stats(&d->dp, got), 0);
	for (int i = 0; i < XDPBAN_STAT__MAX; i++)
		same &= got[i].packets == d->model.stats[i].packets &&
			got[i].bytes == d->model.stats[i].bytes;
	if (same)
		return;
	mismatch(d, "statistics differ (kernel vs model, packets/bytes):");
	for (int i = 0; i < XDPBAN_STAT__MAX && d->mismatches <= MISMATCHES_SHOWN; i++)
		printf("  %-15s %10llu/%-12llu %10llu/%-12llu%s\n", xb_stat_name(i),
		       (unsigned long long)got[i].packets, (unsigned long long)got[i].bytes,
		       (unsigned long long)d->model.stats[i].packets,
		       (unsigned long long)d->model.stats[i].bytes,
		       got[i].packets == d->model.stats[i].packets &&
				       got[i].bytes == d->model.stats[i].bytes ?
			       "" :
			       "  <--");
}

static int compare_counter(const struct xdpban_key *key, const struct model_counter *want,
			   void *ctx)
{
	struct diff *d = ctx;
	const __u8 kept = MODEL_VERIFIED | MODEL_FIRST_ERR | MODEL_DISPUTED;
	struct xb_counter got;
	bool window, hop;
	char text[64];
	int err = dp_counter_full(&d->dp, key, &got);

	key_text(key, text, sizeof(text));
	if (err) {
		mismatch(d, "counter %s: kernel has none (%d), model start %u count %u", text, err,
			 want->start_s, want->count);
		return 0;
	}
	/* A start matters only while it starts a window; a hop count only as a reference. The
	 * model's `now` is the kernel's (run_now), so the starts are the same second. */
	window = want->count > 0 || (want->flags & MODEL_DISPUTED);
	hop = want->flags & (MODEL_VERIFIED | MODEL_FIRST_ERR);
	if (got.count != want->count || (got.flags & kept) != want->flags ||
	    (window && got.start_s != want->start_s) || (hop && got.hop != want->hop) ||
	    (want->count > 0 && got.classes != want->classes))
		mismatch(d, "counter %s: kernel start %u count %u flags %u hop %u classes %#x, model "
			    "start %u count %u flags %u hop %u classes %#x", text, got.start_s,
			 got.count, got.flags, got.hop, got.classes, want->start_s, want->count,
			 want->flags, want->hop, want->classes);
	return 0;
}

static int compare_ban(const struct xdpban_key *key, const struct xdpban_ban *want, void *ctx)
{
	struct diff *d = ctx;
	struct xdpban_ban got;
	char text[64];
	int err = dp_ban(&d->dp, key, &got);
	bool permanent = want->expires_ns == 0;

	key_text(key, text, sizeof(text));
	if (err) {
		mismatch(d, "ban %s: kernel has none (%d), model count %u reason %u", text, err,
			 want->count, want->reason);
		return 0;
	}
	/* The model's `now` is the kernel's (run_now): the times are the same. */
	if (got.count != want->count || got.reason != want->reason ||
	    got.classes != want->classes || got.start_ns != want->start_ns ||
	    got.proto != want->proto || got.port != want->port || got.rule != want->rule ||
	    (got.expires_ns == 0) != permanent ||
	    (!permanent && got.expires_ns - got.start_ns != want->expires_ns - want->start_ns))
		mismatch(d, "ban %s: kernel count %u reason %u classes %u start %llu expires %llu "
			    "last error %u/%u rule %u; model count %u reason %u classes %u start %llu "
			    "expires %llu last error %u/%u rule %u",
			 text, got.count, got.reason, got.classes, (unsigned long long)got.start_ns,
			 (unsigned long long)got.expires_ns, got.port, got.proto, got.rule,
			 want->count, want->reason, want->classes,
			 (unsigned long long)want->start_ns, (unsigned long long)want->expires_ns,
			 want->port, want->proto, want->rule);
	return 0;
}

static void compare_table_sizes(struct diff *d)
{
	int counters = dp_count_counters(&d->dp), bans = dp_count_bans(&d->dp);

	if (counters < 0 || (size_t)counters != d->model.n_counters)
		mismatch(d, "counter table: kernel %d entries, model %zu", counters,
			 d->model.n_counters);
	if (bans < 0 || (size_t)bans != d->model.n_bans)
		mismatch(d, "ban table: kernel %d entries, model %zu", bans, d->model.n_bans);
}

struct overflow_tally {
	struct diff *d;
	const struct xb_bans *b;
	__u32 *want;
	__u32 walked, found;
};

static int tally_overflow(const struct xdpban_key *key, const struct xdpban_ban *ban, void *ctx)
{
	struct overflow_tally *t = ctx;
	struct xdpban_ban_ref ref;
	__u32 n = t->b->tab.n, home = xdpban_key_home(t->b->seed, key, n);
	char text[64];

	t->walked++;
	if (!xdpban_ban_find(&t->b->tab, n, t->b->seed, key, &ref)) {
		key_text(key, text, sizeof(text));
		mismatch(t->d, "the ban of %s is in the table but its index word hides it", text);
		return 0;
	}
	t->found++;
	for (__u32 g = home; g != ref.group; g = g + 1 == n ? 0 : g + 1)
		t->want[g]++;
	return 0;
}

/* Each group's overflow count must be exactly the bans living past it whose home is at or
 * before it: fewer would let a ban go unenforced, more would only cost probes but break the
 * stated invariant. And the index holds exactly one tag per live ban (each found through it
 * above), none for a free slot. */
static void compare_ban_index(struct diff *d)
{
	const struct xb_bans *b = &d->dp.bans;
	struct overflow_tally t = { d, b, calloc(b->tab.n, sizeof(__u32)), 0, 0 };
	__u32 tags = 0;

	assert_non_null(t.want);
	xb_bans_walk(b, tally_overflow, &t);
	for (__u32 g = 0; g < b->tab.n; g++) {
		if (xb_bans_overflow(b, g) != t.want[g])
			mismatch(d, "ban group %u overflow count: kernel %u, bans living past it %u (%s)",
				 g, xb_bans_overflow(b, g), t.want[g],
				 xb_bans_overflow(b, g) < t.want[g] ? "a ban may go unenforced" : "stale");
		for (__u32 i = 0; i < XDPBAN_GROUP_SLOTS; i++)
			tags += xb_bans_tag(b, g, i) != 0;
	}
	if (tags != t.found)
		mismatch(d, "ban index: %u slot tags set for %u live bans (%u walked)", tags, t.found,
			 t.walked);
	free(t.want);
}

/* Every entry the model has is in the kernel with the same value, and the sizes agree. */
static void compare_state(struct diff *d)
{
	totals.checks++;
	compare_stats(d);
	compare_table_sizes(d);
	model_for_each_counter(&d->model, compare_counter, d);
	model_for_each_ban(&d->model, compare_ban, d);
	compare_ban_index(d);
}

/* ---- Frames and reports ---- */

static const char *verdict_name(__u32 action)
{
	return action == XDP_PASS ? "XDP_PASS" : action == XDP_DROP ? "XDP_DROP" : "other";
}

/* The `now` to give the model for a run that began at `before`: the kernel's own, the reading
 * its clock left on this CPU (docs/datapath.md, "The clock"), up to a tick older than
 * `before`. A run that needed the time used exactly that reading; one that did not made no
 * decision that depends on it, so the model may have it too. */
static __u64 run_now(struct diff *d, __u64 before)
{
	__u64 kernel = 0;

	assert_int_equal(dp_clock_ns(&d->dp, d->cpu, &kernel), 0);
	return kernel ? kernel : before;
}

/* Sometimes stretches an IP frame into what generic mode sees of a GSO/GRO aggregate: zero
 * bytes up to about 64 KiB of IP (at the edges of docs/datapath.md's "Aggregates" rule, or
 * past them), its length field mostly set to 0. Returns the bytes to run and their length. */
static const __u8 *frame_bytes(struct diff *d, const struct fuzz_frame *f, __u32 *len,
			       bool *stretched)
{
	static const __u32 edges[] = { 65535, 65536, 65535 + 40, 65536 + 40 };
	static __u8 big[DP_FRAME_MAX];
	struct fuzz_rng *rng = &d->gen.rng;
	__u32 ip_bytes;

	*len = f->len;
	*stretched = false;
	if (f->l3_off < 0 || f->l3_len_off < 0 || !fuzz_rng_percent(rng, AGGREGATE_PCT))
		return f->data;
	ip_bytes = fuzz_rng_percent(rng, 50) ? edges[fuzz_rng_below(rng, 4)]
					     : 65536 + fuzz_rng_below(rng, 4000);
	memset(big, 0, sizeof(big));
	memcpy(big, f->data, f->len);
	if (fuzz_rng_percent(rng, 80))
		big[f->l3_len_off] = big[f->l3_len_off + 1] = 0;
	*len = f->l3_off + ip_bytes;
	*stretched = true;
	return big;
}

/* Where the frame's first buffer ends: mostly where the kernel ends it (0), else at one of
 * the frame's header boundaries or a byte past it, or anywhere. */
static __u32 first_buffer(struct diff *d, const struct fuzz_frame *f, __u32 len)
{
	struct fuzz_rng *rng = &d->gen.rng;
	__u32 max = len < DP_LINEAR_MAX ? len : DP_LINEAR_MAX, r = fuzz_rng_below(rng, 100), b;

	if (r < 50 || max <= DP_LINEAR_MIN)
		return 0;
	if (r < 75 && f->nbounds) {
		b = f->bounds[fuzz_rng_below(rng, f->nbounds)] + fuzz_rng_below(rng, 2);
		if (b >= DP_LINEAR_MIN && b <= max)
			return b;
	}
	return DP_LINEAR_MIN + fuzz_rng_below(rng, max - DP_LINEAR_MIN + 1);
}

static void run_frame(struct diff *d)
{
	struct fuzz_frame f;
	struct model_verdict want;
	__u32 action = ~0u, len, linear;
	const __u8 *data;
	__u64 before, after;
	bool stretched;

	assert_int_equal(fuzz_gen_frame(&d->gen, &f), 0);
	data = frame_bytes(d, &f, &len, &stretched);
	linear = first_buffer(d, &f, len);
	before = dp_now_ns();
	assert_int_equal(dp_run_split(&d->dp, data, len, linear, &action), 0);
	after = dp_now_ns();
	before = run_now(d, before);
	assert_int_equal(model_packet(&d->model, data, len, before, &want), 0);
	if (action != want.action) {
		mismatch(d, "frame (%s, %u mutations, %u bytes%s, first buffer %u): kernel %s, "
			    "model %s (%s)",
			 f.template, f.mutations, len,
			 stretched ? ", stretched with zeros from the frame below" : "", linear,
			 verdict_name(action), verdict_name(want.action), xb_stat_name(want.reason));
		if (d->mismatches <= MISMATCHES_SHOWN)
			fuzz_frame_hex(&f, stdout);
	}
	if (want.ban_created && want.event_sent)
		assert_int_equal(expect_event(d, &want.key, &want.ban, before, after), 0);
	totals.frames++;
	totals.aggregates += stretched;
	totals.split += linear && linear < len;
}

static const char *report_status_name(__u32 status)
{
	static const char *const names[] = { "counted", "banned",   "already_banned", "trusted",
					     "denied",	"disabled", "table_full",     "invalid" };

	return status < sizeof(names) / sizeof(names[0]) ? names[status] : "?";
}

static __u32 report_count(struct fuzz_rng *rng)
{
	__u32 r = fuzz_rng_below(rng, 100);

	if (r < 70)
		return 1;
	if (r < 95)
		return 2 + fuzz_rng_below(rng, 4);
	if (r < 98)
		return 0; /* invalid */
	return 0xfffffff0u + fuzz_rng_below(rng, 16);
}

static void run_report(struct diff *d)
{
	struct xdpban_report_req got;
	struct model_report_result want;
	__u8 family, addr[16];
	__u32 count = report_count(&d->gen.rng);
	__u64 before, after;
	bool has_count;

	fuzz_gen_source(&d->gen, &family, addr);
	if (fuzz_rng_percent(&d->gen.rng, 2))
		family = 5; /* invalid */
	before = dp_now_ns();
	assert_int_equal(dp_report(&d->dp, family, addr, count, &got), 0);
	after = dp_now_ns();
	before = run_now(d, before);
	assert_int_equal(model_report(&d->model, family, addr, count, before, &want), 0);
	has_count = want.status == XDPBAN_REPORT_COUNTED || want.status == XDPBAN_REPORT_BANNED ||
		    want.status == XDPBAN_REPORT_TABLE_FULL;
	if (got.status != want.status || (has_count && got.new_count != want.new_count)) {
		char text[INET6_ADDRSTRLEN] = "?";

		inet_ntop(family == XDPBAN_FAMILY_INET ? AF_INET : AF_INET6, addr, text,
			  sizeof(text));
		mismatch(d, "report %s family %u count %u: kernel %s new_count %u, model %s "
			    "new_count %u",
			 text, family, count, report_status_name(got.status), got.new_count,
			 report_status_name(want.status), want.new_count);
	}
	if (want.ban_created && want.event_sent)
		assert_int_equal(expect_event(d, &want.key, &want.ban, before, after), 0);
	d->reports++;
	totals.reports++;
}

/* Runs frames (and, now and then, a report) and compares as it goes. */
static void run_frames(struct diff *d, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++, d->frame++) {
		run_frame(d);
		if (fuzz_rng_percent(&d->gen.rng, REPORT_PCT))
			run_report(d);
		if (d->drain_each_frame)
			drain_events(d);
		if ((d->frame + 1) % d->check_every == 0)
			compare_state(d);
	}
	compare_state(d);
}

static void phase_close(struct diff *d)
{
	if (d->drain_each_frame)
		drain_events(d);
	compare_state(d);
	printf("phase %s: %lu frames, %lu reports, %lu mismatches; model: %zu counters, %zu bans\n",
	       d->phase, d->frame, d->reports, d->mismatches, d->model.n_counters,
	       d->model.n_bans);
	printf("  ");
	for (int i = 0; i < XDPBAN_STAT__MAX; i++) {
		printf("%s %llu%s", xb_stat_name(i), (unsigned long long)d->model.stats[i].packets,
		       i + 1 < XDPBAN_STAT__MAX ? ", " : "\n");
		totals.stats[i] += d->model.stats[i].packets;
	}
	totals.mismatches += d->mismatches;
	assert_int_equal(d->mismatches, 0);
}

/* ---- Injected state ---- */

/* The same write on both sides; both must accept it, or both refuse it alike. */
static void inject_ban(struct diff *d, const struct xdpban_key *key, const struct xdpban_ban *ban)
{
	int kernel = dp_put_ban(&d->dp, key, ban), model = model_put_ban(&d->model, key, ban);
	char text[64];

	key_text(key, text, sizeof(text));
	if (kernel != model)
		mismatch(d, "writing ban %s: kernel %d, model %d", text, kernel, model);
}

static void inject_counter(struct diff *d, const struct xdpban_key *key, __u32 start_s,
			   __u32 count)
{
	struct model_counter c = { .start_s = start_s, .count = count };
	__u32 now_s = (__u32)(dp_now_ns() / NS_PER_SEC);

	assert_int_equal(dp_put_counter(&d->dp, key, start_s, count), 0);
	assert_int_equal(model_put_counter(&d->model, key, now_s, &c), 0);
}

struct key_list {
	struct xdpban_key keys[16];
	size_t n, max;
};

static int collect_ban_key(const struct xdpban_key *key, const struct xdpban_ban *ban, void *ctx)
{
	struct key_list *list = ctx;

	if (list->n == list->max)
		return 1;
	list->keys[list->n++] = *key;
	return 0;
}

/* Turns up to n existing bans into bans that ran out a second ago, making room in the table. */
static void expire_some_bans(struct diff *d, size_t n)
{
	struct key_list list = { .max = n < 16 ? n : 16 };
	__u64 now = dp_now_ns();

	model_for_each_ban(&d->model, collect_ban_key, &list);
	for (size_t i = 0; i < list.n; i++) {
		struct xdpban_ban ban;

		assert_int_equal(model_ban(&d->model, &list.keys[i], &ban), 0);
		ban.start_ns = now - 2 * NS_PER_SEC;
		ban.expires_ns = now - NS_PER_SEC;
		inject_ban(d, &list.keys[i], &ban);
	}
}

/* Expired, live and permanent bans, and expired and nearly full windows, on random sources.
 * Nothing lands near a boundary: expired things ran out long ago, live ones last far longer
 * than the phase, so the two clocks cannot disagree about them. */
static void inject_expiry_round(struct diff *d, __u32 window_s, __u32 limit)
{
	__u64 now = dp_now_ns();
	__u32 now_s = (__u32)(now / NS_PER_SEC);

	for (__u32 i = 0; i < 15; i++) {
		struct fuzz_rng *rng = &d->gen.rng;
		struct xdpban_ban ban = { .start_ns = now - 5 * NS_PER_SEC,
					  .reason = XDPBAN_REASON_MANUAL };
		struct xdpban_key key;
		__u8 family, addr[16];

		fuzz_gen_source(&d->gen, &family, addr);
		model_key(&d->model, family, addr, &key);
		switch (i % 5) {
		case 0: /* ran out between 1 and 4 seconds ago */
			ban.expires_ns = now - NS_PER_SEC - fuzz_rng_below(rng, 3 * NS_PER_SEC);
			inject_ban(d, &key, &ban);
			break;
		case 1:
			ban.expires_ns = now + 3600 * NS_PER_SEC;
			inject_ban(d, &key, &ban);
			break;
		case 2:
			ban.expires_ns = 0; /* never */
			inject_ban(d, &key, &ban);
			break;
		case 3: /* a window that ended between 0 and window_s seconds ago */
			inject_counter(d, &key, now_s - window_s - fuzz_rng_below(rng, window_s),
				       fuzz_rng_below(rng, limit + 4));
			break;
		default: /* at the limit, in a window far from its end */
			inject_counter(d, &key, now_s - fuzz_rng_below(rng, window_s / 4 + 1), limit);
			break;
		}
	}
}

/* ---- Phases ---- */

/* A small limit so that bans happen, under five configs in turn: the config is read on every
 * packet, and a v6_prefix change leaves old keys in place. */
static void diff_main(void **state)
{
	struct diff *d = *state;
	struct xdpban_config cfg = config(3, 86400, 86400);

	if (!d)
		skip();
	phase_open(d, "main", 0, 0);
	set_config(d, &cfg);
	run_frames(d, 40000);

	cfg.drop_mask = 0; /* malformed counted and banned, but not dropped before the ban */
	cfg.v6_prefix = 56;
	set_config(d, &cfg);
	run_frames(d, 20000);

	cfg.class_mask = XDPBAN_CLASS_REPORTED; /* malformed no longer an error */
	cfg.drop_mask = XDPBAN_CLASS_ALL;
	cfg.v6_prefix = 64;
	set_config(d, &cfg);
	run_frames(d, 15000);

	cfg = config(3, 86400, 86400);
	cfg.class_mask = XDPBAN_CLASS_MALFORMED; /* reports disabled */
	set_config(d, &cfg);
	run_frames(d, 10000);

	cfg.mode = XDPBAN_MODE_OBSERVE; /* the bans made so far pass, and new ones are made */
	set_config(d, &cfg);
	run_frames(d, 10000);
	assert_true(d->model.stats[XDPBAN_STAT_OBSERVED_BANNED].packets > 0);

	cfg = (struct xdpban_config){ .limit = 3, .v6_prefix = 48 }; /* no magic: the defaults */
	set_config(d, &cfg);
	run_frames(d, 15000);
	phase_close(d);
	assert_true(d->model.stats[XDPBAN_STAT_BANS_CREATED].packets > 0);
}

/* A ban table of 8: sources over the limit find it full, and keep (saturating) counts. */
static void diff_small_ban_table(void **state)
{
	struct diff *d = *state;
	struct xdpban_config cfg = config(2, 86400, 86400);

	if (!d)
		skip();
	phase_open(d, "small-ban-table", 2, 1); /* 8 slots */
	set_config(d, &cfg);
	for (__u32 i = 0; i < 6; i++) { /* near saturation: the next errors must not wrap */
		struct xdpban_key key;
		__u8 addr[16] = { 0 };
		__u32 now_s = (__u32)(dp_now_ns() / NS_PER_SEC);

		fuzz_pool4(i, addr);
		model_key(&d->model, XDPBAN_FAMILY_INET, addr, &key);
		struct model_counter c = { .start_s = now_s, .count = 0xfffffffeu };

		assert_int_equal(dp_put_counter(&d->dp, &key, now_s, 0xfffffffeu), 0);
		assert_int_equal(model_put_counter(&d->model, &key, now_s, &c), 0);
	}
	for (int round = 0; round < 5; round++) {
		run_frames(d, 3000);
		expire_some_bans(d, 2);
	}
	phase_close(d);
	assert_true(d->model.stats[XDPBAN_STAT_BAN_TABLE_FULL].packets > 0);
	assert_true(d->model.stats[XDPBAN_STAT_BANS_EXPIRED].packets > 0);
}

/* Entries with the magic but out of range (the data path must not trust them: it uses the
 * defaults, include/xdpban_config.h), each for a run of frames. */
static void diff_bad_config(void **state)
{
	struct diff *d = *state;
	struct xdpban_config cfg;

	if (!d)
		skip();
	phase_open(d, "bad-config", 0, 4);
	cfg = config(3, 86400, 86400);
	cfg.v6_prefix = 20; /* below XDPBAN_V6_PREFIX_MIN */
	set_config(d, &cfg);
	run_frames(d, 3000);
	cfg = config(XDPBAN_LIMIT_MAX + 1, 86400, 86400);
	set_config(d, &cfg);
	run_frames(d, 3000);
	cfg = config(3, 0, 86400); /* window 0 */
	set_config(d, &cfg);
	run_frames(d, 3000);
	cfg = config(3, 86400, 86400);
	cfg.class_mask = 0x80; /* an unknown class */
	set_config(d, &cfg);
	run_frames(d, 3000);
	phase_close(d);
}

/* A port's rules on both sides (docs/datapath.md, section 9). */
static void port_rules(struct diff *d, __u16 port, __u8 rules)
{
	assert_int_equal(dp_port_rules(&d->dp, port, rules), 0);
	d->model.ports[port] = rules;
}

/* The port rules over the generator's traffic (UDP and TCP to 6969, ICMP echoes): the port
 * guarded by each profile, then open, then closed, with the drop of the new classes on and
 * off, and a table whose rules config.ports leaves off. Nothing in this test's network
 * namespace is bound to 6969, so the socket lookup finds nothing on either side. */
static void diff_port_rules(void **state)
{
	const __u8 all = XDPBAN_PORTS_GUARD | XDPBAN_PORTS_PROBE | XDPBAN_PORTS_PROBE_ICMP;
	struct diff *d = *state;
	struct xdpban_config cfg = config(3, 86400, 86400);

	if (!d)
		skip();
	phase_open(d, "port-rules", 0, 7);
	port_rules(d, 6969, XDPBAN_GUARD_BEP15);
	cfg.ports = all;
	set_config(d, &cfg);
	run_frames(d, 3000);
	cfg.drop_mask = XDPBAN_CLASS_MALFORMED | XDPBAN_CLASS_PROTOCOL | XDPBAN_CLASS_PROBE;
	set_config(d, &cfg);
	run_frames(d, 3000);
	port_rules(d, 6969, XDPBAN_GUARD_DNS);
	run_frames(d, 2000);
	port_rules(d, 6969, XDPBAN_PORT_UDP_OPEN | XDPBAN_PORT_TCP_OPEN);
	run_frames(d, 2000);
	port_rules(d, 6969, 0);
	cfg.drop_mask = XDPBAN_DEFAULT_DROP_MASK;
	set_config(d, &cfg);
	run_frames(d, 2000);
	cfg.class_mask = XDPBAN_CLASS_MALFORMED | XDPBAN_CLASS_PROBE; /* protocol off */
	port_rules(d, 6969, XDPBAN_GUARD_BEP15);
	set_config(d, &cfg);
	run_frames(d, 2000);
	cfg = config(3, 86400, 86400); /* config.ports 0: the table is not read */
	set_config(d, &cfg);
	run_frames(d, 2000);
	assert_true(d->model.stats[XDPBAN_STAT_CLASS_PROTOCOL].packets > 0);
	assert_true(d->model.stats[XDPBAN_STAT_CLASS_PROBE].packets > 0);
	phase_close(d);
}

/* The rules of limits (docs/datapath.md, "Rules of limits") over the generator's traffic:
 * malformed, protocol (6969 guarded), probe and reported errors each under a rule of its own,
 * the port's rule over its class's, fields inherited, and rules out of range that own
 * nothing on either side. */
static void diff_limit_rules(void **state)
{
	struct diff *d = *state;
	struct xdpban_config cfg = config(6, 86400, 86400);
	struct xdpban_rule *malformed = &cfg.class_rule[XDPBAN_CLASS_BITNO_MALFORMED],
			   *protocol = &cfg.class_rule[XDPBAN_CLASS_BITNO_PROTOCOL],
			   *probe = &cfg.class_rule[XDPBAN_CLASS_BITNO_PROBE],
			   *reported = &cfg.class_rule[XDPBAN_CLASS_BITNO_REPORTED];

	if (!d)
		skip();
	phase_open(d, "limit-rules", 0, 9);
	port_rules(d, 6969, XDPBAN_GUARD_BEP15);
	cfg.ports = XDPBAN_PORTS_GUARD | XDPBAN_PORTS_PROBE | XDPBAN_PORTS_PROBE_ICMP;
	*malformed = (struct xdpban_rule){ .limit = 1, .ban_s = 600, .own = XDPBAN_OWN_LIMIT |
									      XDPBAN_OWN_BAN };
	*probe = (struct xdpban_rule){ .limit = 2, .window_s = 30, .own = XDPBAN_OWN_LIMIT |
									     XDPBAN_OWN_WINDOW };
	*reported = (struct xdpban_rule){ .ban_s = 3600, .own = XDPBAN_OWN_BAN };
	set_config(d, &cfg);
	run_frames(d, 6000);

	*protocol = (struct xdpban_rule){ .limit = 4, .own = XDPBAN_OWN_LIMIT };
	cfg.port_rule[3] = (struct xdpban_rule){ .port = 6969, .limit = 0, .ban_s = 120,
						 .own = XDPBAN_OWN_LIMIT | XDPBAN_OWN_BAN };
	set_config(d, &cfg);
	run_frames(d, 6000);

	cfg.port_rule[3].own = XDPBAN_OWN_BAN; /* the limit is the class's again */
	probe->limit = XDPBAN_LIMIT_MAX + 1;  /* out of range: the rule owns nothing */
	malformed->own = 0x80;                /* an unknown field: the same */
	set_config(d, &cfg);
	run_frames(d, 6000);
	phase_close(d);
	assert_true(d->model.stats[XDPBAN_STAT_BANS_CREATED].packets > 0);
	assert_true(d->model.stats[XDPBAN_STAT_CLASS_PROTOCOL].packets > 0);
	assert_true(d->model.stats[XDPBAN_STAT_CLASS_PROBE].packets > 0);
}

/* An exempt prefix on both sides, as the daemon writes xdpban_exempt4/6. */
static void exempt_add(struct diff *d, const char *cidr)
{
	struct xdpban_exempt val = { .origin = XDPBAN_EXEMPT_LIST };
	struct model_exempt e = { 0 };
	union xb_lpm_key key;
	struct xb_prefix p;

	assert_int_equal(dp_prefix(cidr, &p), 0);
	xb_lpm_key_make(&p, &key);
	assert_int_equal(bpf_map_update_elem(p.family == XDPBAN_FAMILY_INET ? d->dp.maps.exempt4
								       : d->dp.maps.exempt6,
					     &key, &val, BPF_ANY), 0);
	e.family = p.family;
	e.plen = p.plen;
	memcpy(e.addr, p.addr, sizeof(e.addr));
	assert_int_equal(model_exempt_add(&d->model, &e), 0);
}

/* Pool sources verified (section 8, "Learning") on both sides, as learning would leave them:
 * reference hop count 0 (TTL 64), verified now. */
static void verify_pool(struct diff *d, __u32 n)
{
	__u32 now_s = (__u32)(dp_now_ns() / NS_PER_SEC);

	for (__u32 i = 0; i < n; i++) {
		struct xb_counter k = { .flags = XDPBAN_CTR_VERIFIED, .stamp_s = now_s };
		struct model_counter m = { .flags = MODEL_VERIFIED, .stamp_s = now_s };
		struct xdpban_config cfg;
		struct xdpban_key key;
		__u8 addr[16] = { 0 };

		if (i % 2)
			fuzz_pool4(i, addr);
		else
			fuzz_pool6(i, addr);
		model_key(&d->model, i % 2 ? XDPBAN_FAMILY_INET : XDPBAN_FAMILY_INET6, addr, &key);
		model_effective_config(&d->model, &cfg);
		assert_int_equal(xb_counters_put(&d->dp.counters, &key, now_s, cfg.window_s, &k), 0);
		assert_int_equal(model_put_counter(&d->model, &key, now_s, &m), 0);
	}
}

/* The spoof defence and a counter table small enough to evict: hop counts agreeing and not
 * (the generator varies TTLs), each spoof mode, exempt prefixes, verified sources, and sources
 * evicting each other (and finding no slot beside verified ones). */
static void diff_spoof_and_eviction(void **state)
{
	struct diff *d = *state;
	struct xdpban_config cfg = config(4, 86400, 86400);

	if (!d)
		skip();
	phase_open_sized(d, "spoof-and-eviction", 0, 16, 6); /* 4 counter groups */
	exempt_add(d, "192.0.2.0/29");
	exempt_add(d, "2001:db8:0:1::/64");
	cfg.hop_tolerance = 0;
	set_config(d, &cfg);
	run_frames(d, 8000);
	verify_pool(d, 12);
	run_frames(d, 6000);
	cfg.spoof = XDPBAN_SPOOF_VERIFIED;
	cfg.hop_tolerance = 1;
	set_config(d, &cfg);
	verify_pool(d, 12);
	run_frames(d, 8000);
	cfg.spoof = XDPBAN_SPOOF_OFF;
	set_config(d, &cfg);
	run_frames(d, 6000);
	phase_close(d);
	assert_true(d->model.stats[XDPBAN_STAT_ERRORS_SUSPECT].packets > 0);
	assert_true(d->model.stats[XDPBAN_STAT_ERRORS_UNVERIFIED].packets > 0);
	assert_true(d->model.stats[XDPBAN_STAT_ERRORS_EXEMPT].packets > 0);
	assert_true(d->model.stats[XDPBAN_STAT_BANS_CREATED].packets > 0);
}

/* Expired and live bans, windows and timed policy entries, injected into both sides again and
 * again, so that every expiry path runs: bans_expired, window restart, timed policy. */
static void diff_expiry(void **state)
{
	struct diff *d = *state;
	__u64 now;
	__u32 window_s;
	struct xdpban_config cfg;

	if (!d)
		skip();
	phase_open(d, "expiry", 0, 2);
	now = dp_now_ns();
	/* Long enough that nothing made during the phase expires in it; short enough that an
	 * expired window can be placed after boot. */
	window_s = (__u32)(now / NS_PER_SEC / 4);
	window_s = window_s > 600 ? 600 : window_s < 1 ? 1 : window_s;
	cfg = config(3, window_s, 86400);
	set_config(d, &cfg);
	policy_add(d, "192.0.2.16/29", XDPBAN_POLICY_DENY, 1);                 /* ran out */
	policy_add(d, "192.0.2.24/30", XDPBAN_POLICY_DENY, now + 3600 * NS_PER_SEC);
	policy_add(d, "2001:db8:0:3::/64", XDPBAN_POLICY_TRUSTED, 1);          /* ran out */
	policy_add(d, "2001:db8:0:2::/64", XDPBAN_POLICY_TRUSTED, now + 3600 * NS_PER_SEC);
	policy_add(d, "203.0.113.128/25", XDPBAN_POLICY_DENY, 1);              /* ran out */
	/* Ran out inside a live prefix: the longest match counts as no entry (section 2). */
	policy_add(d, "198.51.100.18/31", XDPBAN_POLICY_DENY, 1);
	policy_add(d, "2001:db8:0:9::1", XDPBAN_POLICY_DENY, 1);
	for (int round = 0; round < 10; round++) {
		inject_expiry_round(d, window_s, cfg.limit);
		run_frames(d, 2000);
	}
	phase_close(d);
	assert_true(d->model.stats[XDPBAN_STAT_BANS_EXPIRED].packets > 0);
}

/* Limit 0 (the first error bans) on mostly fresh sources, with the ring buffer never read
 * until the end: once it is full, ban events are lost and counted. */
static void diff_events_lost(void **state)
{
	struct diff *d = *state;
	struct xdpban_config cfg = config(0, 86400, 86400);

	if (!d)
		skip();
	phase_open(d, "events-lost", XDPBAN_BAN_GROUPS(8192), 3);
	set_config(d, &cfg);
	d->drain_each_frame = false;
	d->gen.random_source_pct = 90;
	d->gen.mutate_pct = 80;
	run_frames(d, 40000);
	drain_events(d);
	phase_close(d);
	assert_true(d->model.stats[XDPBAN_STAT_EVENTS_LOST].packets > 0);
}

/* Other lists a reload may bring: wide prefixes that the flat table answers on its own
 * (192.0.2.x at level 1, 198.51.100.x at level 2, every IPv6 source at level 1), then a mix. */
static const struct fuzz_policy lists_wide[] = {
	{ "192.0.0.0/16", XDPBAN_POLICY_DENY },
	{ "198.51.100.0/24", XDPBAN_POLICY_TRUSTED },
	{ "203.0.113.0/25", XDPBAN_POLICY_DENY },
	{ "2001::/16", XDPBAN_POLICY_TRUSTED },
};

static const struct fuzz_policy lists_mixed[] = {
	{ "192.0.2.0/24", XDPBAN_POLICY_TRUSTED },
	{ "198.51.0.0/16", XDPBAN_POLICY_DENY },
	{ "198.51.100.16/28", XDPBAN_POLICY_TRUSTED },
	{ "2001:db8::/32", XDPBAN_POLICY_DENY },
	{ "2001:db8:0:2::/63", XDPBAN_POLICY_TRUSTED },
	{ "2001:db8:0:9::/64", XDPBAN_POLICY_TRUSTED },
};

/* Allow-only mode, painted as xdpband paints it (docs/datapath.md): the default layer (/0 not
 * allowed), allow entries over parts of the pools and of the random sources, deny entries
 * inside them, trusted entries inside those. */
static const struct fuzz_policy lists_allow[] = {
	{ "0.0.0.0/0", XDPBAN_POLICY_NOT_ALLOWED },
	{ "::/0", XDPBAN_POLICY_NOT_ALLOWED },
	{ "192.0.2.0/27", XDPBAN_POLICY_ALLOWED },     /* pool .10-.31; .32 and .33 are not */
	{ "192.0.2.20/30", XDPBAN_POLICY_DENY },
	{ "192.0.2.21", XDPBAN_POLICY_TRUSTED },
	{ "198.51.100.0/24", XDPBAN_POLICY_ALLOWED },
	{ "198.51.100.16/28", XDPBAN_POLICY_TRUSTED },
	{ "203.0.113.128/25", XDPBAN_POLICY_ALLOWED }, /* half the random IPv4 sources */
	{ "203.0.113.192/26", XDPBAN_POLICY_DENY },
	{ "2001:db8::/61", XDPBAN_POLICY_ALLOWED },    /* pool :0..:7; :8 and :9 are not */
	{ "2001:db8:0:4::/62", XDPBAN_POLICY_DENY },
	{ "2001:db8:0:5::1", XDPBAN_POLICY_TRUSTED },
	{ "2001:db8:8000::/33", XDPBAN_POLICY_ALLOWED }, /* half the random IPv6 sources */
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Allow-only mode under the traffic: compiled with its config bit, manual prefix bans inside
 * allowed prefixes (live, permanent, and one that ran out, where the default layer answers),
 * a recompile, then a reload without allow lists and the bit cleared. */
static void diff_allow_only(void **state)
{
	struct diff *d = *state;
	struct xdpban_config cfg = config(3, 86400, 86400);
	struct manual_ban manual[3];
	char err[XB_ERRLEN];

	if (!d)
		skip();
	phase_open(d, "allow-only", 0, 8);
	cfg.policy = XDPBAN_CFG_ALLOW_ONLY;
	set_config(d, &cfg);
	policy_compile(d, lists_allow, COUNT(lists_allow), NULL, 0);
	run_frames(d, 6000);
	manual[0] = (struct manual_ban){ "192.0.2.24/30", dp_now_ns() + 3600 * NS_PER_SEC };
	manual[1] = (struct manual_ban){ "192.0.2.12/30", 1 }; /* ran out: not allowed again */
	manual[2] = (struct manual_ban){ "2001:db8:0:1::/64", 0 };
	for (size_t i = 0; i < COUNT(manual); i++)
		policy_put(d, manual[i].cidr, XDPBAN_POLICY_DENY, XDPBAN_LIST_MANUAL_BAN,
			   manual[i].expires_ns);
	run_frames(d, 4000);
	assert_int_equal(xb_policy_recompile(&d->dp.maps, NULL, err, sizeof(err)), 0);
	run_frames(d, 4000);
	cfg.mode = XDPBAN_MODE_OBSERVE;
	set_config(d, &cfg);
	run_frames(d, 3000);
	assert_true(d->model.stats[XDPBAN_STAT_OBSERVED_NOT_ALLOWED].packets > 0);
	assert_true(d->model.stats[XDPBAN_STAT_OBSERVED_DENY].packets > 0);
	cfg.mode = XDPBAN_MODE_ENFORCE;
	set_config(d, &cfg);
	run_frames(d, 2000);
	assert_true(d->model.stats[XDPBAN_STAT_DROP_NOT_ALLOWED].packets > 0);
	assert_true(d->model.stats[XDPBAN_STAT_DROP_DENY].packets > 0);
	assert_true(d->model.stats[XDPBAN_STAT_PASSED_TRUSTED].packets > 0);
	assert_true(d->model.stats[XDPBAN_STAT_PASSED].packets > 0);
	cfg.policy = 0;
	set_config(d, &cfg);
	policy_compile(d, fuzz_policy, fuzz_policy_count, manual, COUNT(manual));
	run_frames(d, 3000);
	phase_close(d);
}

/* The policy changes under the traffic as it does in the daemon: reloads of other lists (each
 * a compile), manual prefix bans put and lifted between them (single changes: LOOKUP only) -
 * timed and permanent ones, each inside a region the table answered on its own - a ban that
 * ran out swept away, and recompiles. */
static void diff_policy_changes(void **state)
{
	struct diff *d = *state;
	struct xdpban_config cfg = config(3, 86400, 86400);
	struct manual_ban manual[4];
	char err[XB_ERRLEN];
	__u64 now;

	if (!d)
		skip();
	phase_open(d, "policy-changes", 0, 5);
	set_config(d, &cfg);
	run_frames(d, 4000);
	policy_compile(d, lists_wide, COUNT(lists_wide), NULL, 0);
	run_frames(d, 4000);

	now = dp_now_ns();
	manual[0] = (struct manual_ban){ "192.0.2.64/26", now + 3600 * NS_PER_SEC };
	manual[1] = (struct manual_ban){ "2001:db8:0:4::/62", 0 }; /* permanent */
	manual[2] = (struct manual_ban){ "198.51.100.128/25", 1 }; /* ran out long ago */
	manual[3] = (struct manual_ban){ "203.0.113.0/24", 0 };    /* a whole /24, permanent */
	for (size_t i = 0; i < COUNT(manual); i++)
		policy_put(d, manual[i].cidr, XDPBAN_POLICY_DENY, XDPBAN_LIST_MANUAL_BAN,
			   manual[i].expires_ns);
	run_frames(d, 4000);
	policy_compile(d, lists_mixed, COUNT(lists_mixed), manual, COUNT(manual));
	run_frames(d, 4000);

	policy_del(d, manual[0].cidr); /* an unban */
	policy_del(d, manual[2].cidr); /* the sweep's removal of a ban that ran out */
	policy_del(d, manual[3].cidr); /* an unban where the table said DENY on its own */
	run_frames(d, 3000);
	assert_int_equal(xb_policy_recompile(&d->dp.maps, NULL, err, sizeof(err)), 0);
	run_frames(d, 3000);
	policy_compile(d, fuzz_policy, fuzz_policy_count, &manual[1], 1);
	run_frames(d, 4000);
	phase_close(d);
	assert_true(d->model.stats[XDPBAN_STAT_DROP_DENY].packets > 0);
	assert_true(d->model.stats[XDPBAN_STAT_PASSED_TRUSTED].packets > 0);
}

/* ---- Runner ---- */

static int setup(void **state)
{
	struct diff *d;
	cpu_set_t one;

	*state = NULL;
	if (!dp_can_load())
		return 0; /* dp_can_load said why; the test skips */
	d = calloc(1, sizeof(*d));
	if (!d)
		return -1;
	/* Pinned, so that every test run is on the CPU whose clock reading run_now() reads. */
	d->cpu = sched_getcpu();
	CPU_ZERO(&one);
	CPU_SET(d->cpu, &one);
	if (d->cpu < 0 || sched_setaffinity(0, sizeof(one), &one)) {
		fprintf(stderr, "diff: pinning to one CPU: %s\n", strerror(errno));
		free(d);
		return -1;
	}
	*state = d;
	return 0;
}

static int teardown(void **state)
{
	struct diff *d = *state;

	if (!d)
		return 0;
	ring_buffer__free(d->rb);
	if (d->dp_opened)
		dp_close(&d->dp);
	model_free(&d->model);
	free(d->expect);
	free(d);
	*state = NULL;
	return 0;
}

static int print_totals(void **state)
{
	printf("diff totals: %lu frames (%lu in several buffers, %lu stretched into aggregates), "
	       "%lu reports, %lu ban events, %lu state checks, %lu mismatches\n",
	       totals.frames, totals.split, totals.aggregates, totals.reports, totals.events,
	       totals.checks, totals.mismatches);
	printf("  verdicts:");
	for (int i = 0; i < XDPBAN_STAT__MAX; i++)
		printf("%s %s %llu", i == XDPBAN_STAT__VERDICTS ? "\n  events:" : i ? "," : "",
		       xb_stat_name(i), (unsigned long long)totals.stats[i]);
	printf("\n");
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(diff_main, setup, teardown),
		cmocka_unit_test_setup_teardown(diff_small_ban_table, setup, teardown),
		cmocka_unit_test_setup_teardown(diff_expiry, setup, teardown),
		cmocka_unit_test_setup_teardown(diff_events_lost, setup, teardown),
		cmocka_unit_test_setup_teardown(diff_bad_config, setup, teardown),
		cmocka_unit_test_setup_teardown(diff_port_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(diff_limit_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(diff_policy_changes, setup, teardown),
		cmocka_unit_test_setup_teardown(diff_allow_only, setup, teardown),
		cmocka_unit_test_setup_teardown(diff_spoof_and_eviction, setup, teardown),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests_name("diff", tests, NULL, print_totals);
}
