/* test_deep6.c - the IPv6 hash past the flat table (include/xdpban_deep6.h) in the real kernel:
 * the XDP and report programs loaded unpinned, the policy written through user/lib/policy.h.
 *
 *   - it answers: an entry written into the trie behind the module's back is not seen where
 *     the hash is in force, and the same entry written through the module is, at once; a
 *     delete too; a longer entry inside a shorter one wins, whatever the order of lengths;
 *   - with more prefix lengths than the data path probes, it is out of force and the trie
 *     answers (the entry behind the back is seen); a compile back under the limit rebuilds it;
 *   - a timed entry whose time has come gives no verdict, as in the trie, even with a shorter
 *     entry around it.
 * The wider checks (random sets against the model, a reload watched at every step) run in
 * test_flat_kernel.c and test_diff.c, on this same path. Needs root; never pins or attaches.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "dp.h"
#include "pkt.h"
#include "pset.h"
#include "policy.h"

static int setup(void **state)
{
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;

	cfg.class_mask = XDPBAN_CLASS_MALFORMED; /* reports answer "disabled", count nothing */
	return dp_fixture_open(state, NULL, &cfg);
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

/* The policy verdict the report program gives an address; the XDP program must agree on the
 * action for a valid datagram from it. */
static __u32 verdict_of(struct dp *dp, const char *text)
{
	struct pkt_spec spec = { .src = text, .l4 = PKT_L4_UDP, .payload_len = 8 };
	struct xdpban_report_req rep;
	unsigned char frame[256];
	struct pkt_layout at;
	struct xb_prefix p;
	__u32 action, verdict;

	assert_int_equal(dp_prefix(text, &p), 0);
	assert_int_equal(dp_report(dp, p.family, p.addr, 1, &rep), 0);
	verdict = rep.status == XDPBAN_REPORT_TRUSTED  ? XDPBAN_POLICY_TRUSTED
		  : rep.status == XDPBAN_REPORT_DENIED ? XDPBAN_POLICY_DENY
						       : XDPBAN_POLICY_NONE;
	assert_int_equal(pkt_build(&spec, frame, sizeof(frame), &at), 0);
	assert_int_equal(dp_run(dp, frame, at.len, &action), 0);
	assert_int_equal(action, verdict == XDPBAN_POLICY_DENY ? XDP_DROP : XDP_PASS);
	return verdict;
}

static void add(struct xb_policy_set *s, const char *cidr, __u32 verdict, __u64 expires_ns)
{
	struct xdpban_policy val = { .verdict = verdict, .list_id = 1, .expires_ns = expires_ns };
	struct xb_prefix p;

	assert_int_equal(dp_prefix(cidr, &p), 0);
	assert_int_equal(xb_policy_set_add(s, &p, &val), 0);
}

/* An entry written into the trie only, as bpftool would. */
static void write_behind_the_back(struct dp *dp, const char *cidr, __u32 verdict)
{
	struct xdpban_policy val = { .verdict = verdict, .list_id = 1 };
	union xb_lpm_key key;
	struct xb_prefix p;

	assert_int_equal(dp_prefix(cidr, &p), 0);
	xb_lpm_key_make(&p, &key);
	assert_int_equal(bpf_map_update_elem(dp->maps.policy6, &key, &val, BPF_ANY), 0);
}

static struct xb_compile_result compile(struct dp *dp, const struct xb_policy_set *s)
{
	struct xb_compile_result res;

	assert_int_equal(dp_policy_compile(dp, s, NULL, &res), 0);
	return res;
}

/* Lists of the usual shape: a /32 allocation denied but for a trusted /48 in it, /56 and /64
 * denies elsewhere in it, a /40 deny. Every one lies in 2001:db8::/32, whose flat regions
 * are LOOKUP, so the hash decides. */
static void usual_lists(struct xb_policy_set *s)
{
	add(s, "2001:db8:100::/40", XDPBAN_POLICY_DENY, 0);
	add(s, "2001:db8:100:5500::/56", XDPBAN_POLICY_TRUSTED, 0);
	add(s, "2001:db8:200:7::/64", XDPBAN_POLICY_DENY, 0);
	add(s, "2001:db8:300::/48", XDPBAN_POLICY_TRUSTED, 0);
	add(s, "2001:db8:300:1:2::/80", XDPBAN_POLICY_DENY, 0);
}

static void hash_answers_past_the_table(void **state)
{
	struct dp *dp = need_dp(state);
	struct xb_policy_set s = {};

	usual_lists(&s);
	assert_true(compile(dp, &s).deep6);
	assert_int_equal(verdict_of(dp, "2001:db8:100:1::9"), XDPBAN_POLICY_DENY);
	assert_int_equal(verdict_of(dp, "2001:db8:100:5501::9"), XDPBAN_POLICY_TRUSTED);
	assert_int_equal(verdict_of(dp, "2001:db8:200:7::1"), XDPBAN_POLICY_DENY);
	assert_int_equal(verdict_of(dp, "2001:db8:200:8::1"), XDPBAN_POLICY_NONE);
	assert_int_equal(verdict_of(dp, "2001:db8:300:1:2::7"), XDPBAN_POLICY_DENY);
	assert_int_equal(verdict_of(dp, "2001:db8:300:1:3::7"), XDPBAN_POLICY_TRUSTED);
	assert_int_equal(verdict_of(dp, "2001:db8:400::1"), XDPBAN_POLICY_NONE);

	/* The hash answers, not the trie: an entry that bypassed policy.h is not seen... */
	write_behind_the_back(dp, "2001:db8:100:1::9", XDPBAN_POLICY_TRUSTED);
	assert_int_equal(verdict_of(dp, "2001:db8:100:1::9"), XDPBAN_POLICY_DENY);
	/* ...one written through it is, and so is its delete. */
	assert_int_equal(dp_policy_add(dp, "2001:db8:100:1::9", XDPBAN_POLICY_TRUSTED), 0);
	assert_int_equal(verdict_of(dp, "2001:db8:100:1::9"), XDPBAN_POLICY_TRUSTED);
	assert_int_equal(dp_policy_add(dp, "2001:db8:200:8::/64", XDPBAN_POLICY_DENY), 0);
	assert_int_equal(verdict_of(dp, "2001:db8:200:8::1"), XDPBAN_POLICY_DENY);
	assert_int_equal(dp_policy_del(dp, "2001:db8:100:1::9"), 0);
	assert_int_equal(verdict_of(dp, "2001:db8:100:1::9"), XDPBAN_POLICY_DENY);
	xb_policy_set_free(&s);
}

static void too_many_lengths_leave_it_to_the_trie(void **state)
{
	struct dp *dp = need_dp(state);
	struct xb_policy_set s = {}, wide = {};
	char cidr[64];

	usual_lists(&s);
	usual_lists(&wide);
	/* 17 more lengths: /97 to /113, one entry each, whose last bit is set */
	for (int i = 0; i < XDPBAN_DEEP6_LENGTHS_MAX + 1; i++) {
		int bit = 96 + i;
		unsigned int g7 = bit < 112 ? 0x8000u >> (bit - 96) : 0,
			     g8 = bit >= 112 ? 0x8000u >> (bit - 112) : 0;

		snprintf(cidr, sizeof(cidr), "2001:db8:500:0:0:0:%x:%x/%d", g7, g8, bit + 1);
		add(&wide, cidr, XDPBAN_POLICY_DENY, 0);
	}
	assert_false(compile(dp, &wide).deep6);
	assert_int_equal(verdict_of(dp, "2001:db8:100:1::9"), XDPBAN_POLICY_DENY);
	assert_int_equal(verdict_of(dp, "2001:db8:500::8000:0"), XDPBAN_POLICY_DENY);
	write_behind_the_back(dp, "2001:db8:100:1::9", XDPBAN_POLICY_TRUSTED);
	assert_int_equal(verdict_of(dp, "2001:db8:100:1::9"), XDPBAN_POLICY_TRUSTED); /* the trie */

	/* Back under the limit: the hash is rebuilt from the set, in force again. */
	assert_true(compile(dp, &s).deep6);
	assert_int_equal(verdict_of(dp, "2001:db8:100:1::9"), XDPBAN_POLICY_DENY);
	assert_int_equal(verdict_of(dp, "2001:db8:500::8000:0"), XDPBAN_POLICY_NONE);
	assert_int_equal(verdict_of(dp, "2001:db8:300:1:2::7"), XDPBAN_POLICY_DENY);
	xb_policy_set_free(&s);
	xb_policy_set_free(&wide);
}

static void expired_timed_entry_gives_none(void **state)
{
	struct dp *dp = need_dp(state);
	struct xb_policy_set s = {};
	struct timespec ts;
	__u64 now;

	assert_int_equal(clock_gettime(CLOCK_BOOTTIME, &ts), 0);
	now = (__u64)ts.tv_sec * NS_PER_SEC + (__u64)ts.tv_nsec;
	add(&s, "2001:db8:600::/40", XDPBAN_POLICY_DENY, 0);
	add(&s, "2001:db8:600:1::/64", XDPBAN_POLICY_TRUSTED, now > 1 ? now - 1 : 1);
	add(&s, "2001:db8:600:2::/64", XDPBAN_POLICY_TRUSTED, now + 3600ull * NS_PER_SEC);
	assert_true(compile(dp, &s).deep6);
	/* the trie's rule: the longest match decides, and a timed one past its time says NONE */
	assert_int_equal(verdict_of(dp, "2001:db8:600:1::5"), XDPBAN_POLICY_NONE);
	assert_int_equal(verdict_of(dp, "2001:db8:600:2::5"), XDPBAN_POLICY_TRUSTED);
	assert_int_equal(verdict_of(dp, "2001:db8:600:3::5"), XDPBAN_POLICY_DENY);
	xb_policy_set_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(hash_answers_past_the_table, setup, teardown),
		cmocka_unit_test_setup_teardown(too_many_lengths_leave_it_to_the_trie, setup,
						teardown),
		cmocka_unit_test_setup_teardown(expired_timed_entry_gives_none, setup, teardown),
	};

	return cmocka_run_group_tests_name("deep6", tests, NULL, NULL);
}
