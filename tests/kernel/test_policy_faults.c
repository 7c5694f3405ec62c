/* test_policy_faults.c - a policy compile (user/lib/policy.h) is all or nothing, on tries made
 * small for the test:
 *   - a set a trie cannot hold, with what the compile keeps (manual prefix bans), is refused
 *     with one line naming the count and the capacity, before either family changes;
 *   - a trie that turns out full while it is written (filled behind the compile's back, as a
 *     kernel table that has less room than it seemed) is rolled back: the tries, both flat
 *     tables and the level-3 lines are exactly as before, and the data path drops what it
 *     dropped; a failure in IPv6 rolls back the IPv4 change made before it;
 *   - lists swapped in a trie too small for both at once go through (the old entries are
 *     removed first);
 *   - compiles through mappings kept from one to the next (xb_maps_keep_views, as xdpband
 *     keeps them) reach the data path, and a kept mapping of an fd that now holds another map
 *     is made again.
 * Needs root (skips without); loads the data path unpinned, never attaches.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "dp.h"
#include "pkt.h"
#include "policy.h"
#include "snapshot.h"
#include "views.h"

#define CAP4 256
#define CAP6 64
#define LIST 1
#define FILLER_LIST 9

static int setup(void **state)
{
	const struct dp_opts opts = { .policy4_max = CAP4, .policy6_max = CAP6 };

	return dp_fixture_open(state, &opts, NULL);
}

static int teardown(void **state)
{
	return dp_fixture_close(state);
}

static struct dp *need_dp(void **state)
{
	if (!*state)
		skip();
	return *state;
}

/* n prefixes from fmt (two numbers: a "/24" of 10/8 or a "/64" of 2001:db8::/32), numbered
 * from first. */
static void add_nets(struct xb_policy_set *s, const char *fmt, unsigned int first,
		     unsigned int n, __u32 verdict, __u32 list_id)
{
	const struct xdpban_policy val = { .verdict = verdict, .list_id = list_id };

	for (unsigned int i = first; i < first + n; i++) {
		struct xb_prefix p;
		char text[64];

		snprintf(text, sizeof(text), fmt, i / 256, i % 256);
		assert_int_equal(dp_prefix(text, &p), 0);
		assert_int_equal(xb_policy_set_add(s, &p, &val), 0);
	}
}

#define NET4 "10.%u.%u.0/24"
#define NET6 "2001:db8:%x:%x::/64"

/* The XDP action for a valid UDP datagram from the first address of a prefix. */
static __u32 action_for(struct dp *dp, const struct xb_prefix *p)
{
	char src[INET6_ADDRSTRLEN];
	struct pkt_spec spec = { .src = src, .l4 = PKT_L4_UDP, .payload_len = 8 };
	unsigned char frame[256];
	struct pkt_layout at;
	__u32 action = ~0u;

	inet_ntop(p->family == XDPBAN_FAMILY_INET ? AF_INET : AF_INET6, p->addr, src, sizeof(src));
	assert_int_equal(pkt_build(&spec, frame, sizeof(frame), &at), 0);
	assert_int_equal(dp_run(dp, frame, at.len, &action), 0);
	return action;
}

/* Every deny entry of s is dropped by the data path; every other entry passes. */
static void assert_enforced(struct dp *dp, const struct xb_policy_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		__u32 want = s->v[i].policy.verdict == XDPBAN_POLICY_DENY ? XDP_DROP : XDP_PASS;

		assert_int_equal(action_for(dp, &s->v[i].prefix), want);
	}
}

static void assert_unchanged(struct dp *dp, const struct policy_snapshot *before)
{
	struct policy_snapshot now;
	char why[160];

	assert_int_equal(policy_snapshot_take(&dp->maps, &now), 0);
	if (policy_snapshot_differs(before, &now, why, sizeof(why)))
		fail_msg("the policy changed: %s", why);
	policy_snapshot_free(&now);
}

/* Compiles s and expects it refused with -err, with every needle in the one-line message. */
static void expect_refused(struct dp *dp, const struct xb_policy_set *s,
			   const struct xb_compile_opts *opts, int want, const char *needle1,
			   const char *needle2)
{
	char err[XB_ERRLEN] = "";

	assert_int_equal(xb_policy_compile(&dp->maps, s, opts, NULL, err, sizeof(err)), want);
	printf("refused: %s\n", err);
	if (!strstr(err, needle1) || !strstr(err, needle2) || strchr(err, '\n'))
		fail_msg("'%s' should be one line naming '%s' and '%s'", err, needle1, needle2);
}

/* The first policy: list entries of both families, and manual prefix bans. */
static void compile_first(struct dp *dp, struct xb_policy_set *a)
{
	add_nets(a, NET4, 0, 100, XDPBAN_POLICY_DENY, LIST);
	add_nets(a, NET4, 1000, 10, XDPBAN_POLICY_DENY, XDPBAN_LIST_MANUAL_BAN);
	add_nets(a, NET6, 0, 20, XDPBAN_POLICY_DENY, LIST);
	assert_int_equal(dp_policy_compile(dp, a, NULL, NULL), 0);
	assert_enforced(dp, a);
}

static void set_too_big_is_refused_before_anything_changes(void **state)
{
	struct dp *dp = need_dp(state);
	const struct xb_compile_opts keep = { .keep = xb_keep_manual_bans };
	struct xb_policy_set a = {}, b = {};
	struct policy_snapshot before;

	compile_first(dp, &a);
	assert_int_equal(policy_snapshot_take(&dp->maps, &before), 0);

	add_nets(&b, NET4, 200, CAP4 + 1, XDPBAN_POLICY_DENY, LIST);
	expect_refused(dp, &b, NULL, -ENOSPC, "257 policy entries", "xdpban_policy4, which holds 256");
	xb_policy_set_free(&b);
	/* fits alone, not with the 10 manual bans the compile keeps */
	add_nets(&b, NET4, 200, CAP4 - 5, XDPBAN_POLICY_DENY, LIST);
	expect_refused(dp, &b, &keep, -ENOSPC, "261 policy entries (10 of them kept from the trie",
		       "nothing changed");
	xb_policy_set_free(&b);
	/* IPv4 fits, IPv6 does not: IPv4 is not changed either */
	add_nets(&b, NET4, 200, 10, XDPBAN_POLICY_DENY, LIST);
	add_nets(&b, NET6, 100, CAP6 + 1, XDPBAN_POLICY_DENY, LIST);
	expect_refused(dp, &b, NULL, -ENOSPC, "65 policy entries", "xdpban_policy6, which holds 64");
	assert_unchanged(dp, &before);
	assert_enforced(dp, &a);
	policy_snapshot_free(&before);
	xb_policy_set_free(&a);
	xb_policy_set_free(&b);
}

/* Fills a family's trie directly, once, at the compile's first trie step in that family. */
struct filler {
	struct dp *dp;
	__u8 family;
	unsigned int written;
};

static void fill_trie(__u8 family, enum xb_compile_step step, size_t done, size_t total,
		      void *ctx)
{
	struct filler *f = ctx;
	const struct xdpban_policy val = { .verdict = XDPBAN_POLICY_DENY,
					   .list_id = FILLER_LIST };
	int fd = xb_policy_fd(&f->dp->maps, family);

	if (family != f->family || step != XB_COMPILE_TRIE_STEP || f->written)
		return;
	for (unsigned int i = 0;; i++) {
		union xb_lpm_key key;
		struct xb_prefix p;
		char text[64];

		snprintf(text, sizeof(text), family == XDPBAN_FAMILY_INET ? "172.%u.%u.0/24"
									  : "2001:db8:ff%02x:%x::/64",
			 16 + i / 256, i % 256);
		assert_int_equal(dp_prefix(text, &p), 0);
		xb_lpm_key_make(&p, &key);
		if (bpf_map_update_elem(fd, &key, &val, BPF_NOEXIST)) {
			assert_int_equal(errno, ENOSPC);
			break;
		}
		f->written++;
	}
}

/* A reload whose trie fills up in `family` while the compile writes it. */
static void full_while_writing(struct dp *dp, __u8 family)
{
	struct filler fill = { .dp = dp, .family = family };
	const struct xb_compile_opts opts = { .keep = xb_keep_manual_bans, .observe = fill_trie,
					      .ctx = &fill, .batch = 16 };
	struct xb_policy_set a = {}, b = {};
	struct policy_snapshot before;

	compile_first(dp, &a);
	assert_int_equal(policy_snapshot_take(&dp->maps, &before), 0);
	/* new entries in both families, changed verdicts, and some of a's gone */
	add_nets(&b, NET4, 50, 50, XDPBAN_POLICY_TRUSTED, LIST);
	add_nets(&b, NET4, 300, 100, XDPBAN_POLICY_DENY, LIST);
	add_nets(&b, NET6, 10, 40, XDPBAN_POLICY_DENY, LIST);
	expect_refused(dp, &b, &opts, -ENOSPC, "the table is full", "rolled back");
	printf("%u entries written behind the compile's back\n", fill.written);
	assert_true(fill.written > 0);
	assert_unchanged(dp, &before);
	assert_enforced(dp, &a);
	/* and the next good compile goes through */
	xb_policy_set_free(&b);
	add_nets(&b, NET4, 300, 100, XDPBAN_POLICY_DENY, LIST);
	assert_int_equal(dp_policy_compile(dp, &b, NULL, NULL), 0);
	assert_enforced(dp, &b);
	policy_snapshot_free(&before);
	xb_policy_set_free(&a);
	xb_policy_set_free(&b);
}

static void table_full_while_writing_is_rolled_back(void **state)
{
	full_while_writing(need_dp(state), XDPBAN_FAMILY_INET);
}

static void ipv6_failure_rolls_back_ipv4_too(void **state)
{
	full_while_writing(need_dp(state), XDPBAN_FAMILY_INET6);
}

static void swap_in_a_trie_too_small_for_both_goes_through(void **state)
{
	struct dp *dp = need_dp(state);
	struct xb_policy_set a = {}, b = {}, gone = {};
	struct xb_compile_result res;
	struct policy_snapshot now;
	char err[XB_ERRLEN] = "";

	add_nets(&a, NET4, 0, 200, XDPBAN_POLICY_DENY, LIST);
	assert_int_equal(dp_policy_compile(dp, &a, NULL, NULL), 0);
	add_nets(&b, NET4, 1000, 200, XDPBAN_POLICY_DENY, LIST);
	assert_int_equal(xb_policy_compile(&dp->maps, &b, NULL, &res, err, sizeof(err)), 0);
	assert_int_equal(res.written, 200);
	assert_int_equal(res.removed, 200);
	assert_int_equal(policy_snapshot_take(&dp->maps, &now), 0);
	assert_int_equal(now.tries.n, 200);
	assert_enforced(dp, &b);
	add_nets(&gone, NET4, 0, 200, XDPBAN_POLICY_NONE, LIST);
	assert_enforced(dp, &gone); /* a's entries pass now */
	policy_snapshot_free(&now);
	xb_policy_set_free(&a);
	xb_policy_set_free(&b);
	xb_policy_set_free(&gone);
}

/* The guard word of a family's flat table, read through the syscall (no mapping). */
static __u64 guard_of(int flat_fd)
{
	__u32 at = XDPBAN_FLAT_GUARD;
	__u64 guard = 0;

	assert_int_equal(bpf_map_lookup_elem(flat_fd, &at, &guard), 0);
	return guard;
}

static void kept_views_carry_compiles(void **state)
{
	struct dp *dp = need_dp(state);
	struct xb_policy_set a = {}, b = {}, gone = {};

	assert_int_equal(xb_maps_keep_views(&dp->maps), 0);
	assert_non_null(dp->maps.views);
	add_nets(&a, NET4, 0, 100, XDPBAN_POLICY_DENY, LIST);
	add_nets(&a, NET6, 0, 20, XDPBAN_POLICY_DENY, LIST);
	add_nets(&b, NET4, 500, 100, XDPBAN_POLICY_DENY, LIST);
	add_nets(&b, NET6, 40, 20, XDPBAN_POLICY_DENY, LIST);
	add_nets(&gone, NET4, 0, 100, XDPBAN_POLICY_NONE, LIST);
	for (int round = 0; round < 2; round++) { /* the second round through the same views */
		assert_int_equal(dp_policy_compile(dp, &a, NULL, NULL), 0);
		assert_enforced(dp, &a);
		assert_int_equal(dp_policy_compile(dp, &b, NULL, NULL), 0);
		assert_enforced(dp, &b);
		assert_enforced(dp, &gone);
		assert_int_not_equal(guard_of(dp->maps.flat4), 0);
		assert_int_not_equal(guard_of(dp->maps.flat6), 0);
	}
	xb_maps_drop_views(&dp->maps);
	assert_null(dp->maps.views);
	assert_int_equal(dp_policy_compile(dp, &a, NULL, NULL), 0);
	assert_enforced(dp, &a);
	xb_policy_set_free(&a);
	xb_policy_set_free(&b);
	xb_policy_set_free(&gone);
}

static int mmapable_array(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xb_view_test", 4, 8, 512, &opts);

	assert_true(fd >= 0);
	return fd;
}

static void stale_view_is_made_again(void **state)
{
	struct xb_maps m = { XB_MAPS_NONE, .ncpus = 1 };
	const size_t len = 512 * 8;
	int fd = mmapable_array(), other = mmapable_array();
	__u64 *p, *q, value = 0;
	__u32 at = 0;

	(void)need_dp(state); /* root */
	assert_int_equal(xb_maps_keep_views(&m), 0);
	p = xb_map_view(m.views, fd, len);
	assert_non_null(p);
	p[0] = 41;
	xb_map_unview(m.views, p, len); /* kept: still mapped */
	assert_ptr_equal(xb_map_view(m.views, fd, len), p);
	assert_int_equal(p[0], 41);
	/* The fd's number now names another map: its view is that map's. */
	assert_int_equal(dup2(other, fd), fd);
	q = xb_map_view(m.views, fd, len);
	assert_non_null(q);
	assert_int_equal(q[0], 0);
	q[0] = 7;
	assert_int_equal(bpf_map_lookup_elem(other, &at, &value), 0);
	assert_int_equal(value, 7);
	/* Without views, every view is a mapping of its own. */
	p = xb_map_view(NULL, other, len);
	assert_non_null(p);
	assert_int_equal(p[0], 7);
	xb_map_unview(NULL, p, len);
	xb_maps_drop_views(&m);
	assert_null(m.views);
	close(fd);
	close(other);
}

#define DP_TEST(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		DP_TEST(set_too_big_is_refused_before_anything_changes),
		DP_TEST(table_full_while_writing_is_rolled_back),
		DP_TEST(ipv6_failure_rolls_back_ipv4_too),
		DP_TEST(swap_in_a_trie_too_small_for_both_goes_through),
		DP_TEST(kept_views_carry_compiles),
		DP_TEST(stale_view_is_made_again),
	};

	return cmocka_run_group_tests_name("policy_faults", tests, NULL, NULL);
}
