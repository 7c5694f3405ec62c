/* test_narrow.c - the narrowing of IPv6 keys (include/xdpban_narrow.h): which networks the plan
 * keys per address (user/lib/narrow.c), and, on the real data path loaded unpinned
 * (tests/harness/dp.h), that the sync makes the trie and its gate hold exactly the plan, that
 * the data path keys a source as the library does, bans an offender's /128 where its /64 holds
 * a protected address and its /64 elsewhere, and that the ban of such a network is refused.
 * Plan tests need no root; map tests skip() without it. Never touches pinned state.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/bpf.h>
#include "dp.h"
#include "exempt.h"
#include "libxdpban.h"
#include "maps_fixture.h"
#include "narrow.h"
#include "pkt.h"

static struct xb_prefix P(const char *text)
{
	struct xb_prefix p;

	assert_int_equal(dp_prefix(text, &p), 0);
	return p;
}

/* The set as "A, B, C". */
static const char *set_text(const struct xb_narrow_set *s)
{
	static char out[1024];
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < s->n; i++) {
		char p[64];

		assert_int_equal(xb_prefix_format(&s->v[i], p, sizeof(p)), 0);
		used += snprintf(out + used, sizeof(out) - used, "%s%s", i ? ", " : "", p);
	}
	return out;
}

static void add(struct xb_exempt_set *s, const char *text, __u32 origin, __u8 link_plen)
{
	struct xb_prefix p = P(text);

	assert_int_equal(xb_exempt_set_add(s, &p, origin, origin == XDPBAN_EXEMPT_HOST ? 3 : 0), 0);
	s->v[s->n - 1].link_plen = link_plen;
}

/* --- the plan -------------------------------------------------------------------------------- */

static void plan_keys_the_networks_of_protected_addresses(void **state)
{
	struct xb_exempt_set prot = {};
	struct xb_narrow_set out = {};

	add(&prot, "2001:db8:aa::53", XDPBAN_EXEMPT_LIST, 0);
	add(&prot, "2001:db8:aa::54", XDPBAN_EXEMPT_LIST, 0);   /* the same network: one entry */
	add(&prot, "2001:db8:ab::/80", XDPBAN_EXEMPT_LIST, 0);  /* a prefix inside a network */
	add(&prot, "2001:db8:ac::/48", XDPBAN_EXEMPT_LIST, 0);  /* whole networks: exempt anyway */
	add(&prot, "2001:db8:ff::1", XDPBAN_EXEMPT_HOST, 64);   /* a host address and its link */
	add(&prot, "2001:db8:f0:1::1", XDPBAN_EXEMPT_HOST, 56); /* a link wider than a network */
	add(&prot, "2001:db8:fe::1", XDPBAN_EXEMPT_HOST, 128);  /* no link beside the address */
	add(&prot, "192.0.2.1", XDPBAN_EXEMPT_HOST, 0);         /* IPv4: keyed per address anyway */
	assert_int_equal(xb_narrow_plan(&prot, 64, &out), 0);
	/* In the order of the sets: by length, then address. */
	assert_string_equal(set_text(&out),
			    "2001:db8:f0::/56, ::/64, 2001:db8:aa::/64, 2001:db8:ab::/64, "
			    "2001:db8:f0:1::/64, 2001:db8:fe::/64, 2001:db8:ff::/64");
	xb_narrow_set_free(&out);

	/* Under ipv6-prefix 48 the networks are /48s; the links stay what they are. */
	assert_int_equal(xb_narrow_plan(&prot, 48, &out), 0);
	assert_string_equal(set_text(&out), "::/48, 2001:db8:aa::/48, 2001:db8:ab::/48, "
					    "2001:db8:f0::/48, 2001:db8:fe::/48, 2001:db8:ff::/48, "
					    "2001:db8:f0::/56, 2001:db8:ff::/64");
	xb_narrow_set_free(&out);
	/* Under 128 nothing is wider than an address. */
	assert_int_equal(xb_narrow_plan(&prot, 128, &out), 0);
	assert_string_equal(set_text(&out), "2001:db8:f0::/56, 2001:db8:ff::/64");
	xb_narrow_set_free(&out);
	xb_exempt_set_free(&prot);
}

static void plan_of_nothing_is_the_builtin_networks(void **state)
{
	struct xb_exempt_set prot = {};
	struct xb_narrow_set out = {};

	assert_int_equal(xb_narrow_plan(&prot, 64, &out), 0);
	/* ::, ::1 and ::ffff:0:0/96 lie in ::/64; ff00::/8 is wider than a network. */
	assert_string_equal(set_text(&out), "::/64");
	xb_narrow_set_free(&out);
}

/* --- on the data path ------------------------------------------------------------------------ */

static int setup_maps(void **state)
{
	return maps_fixture_open(state, NULL);
}

static int teardown_maps(void **state)
{
	return maps_fixture_close(state);
}

static void sync_plan(struct maps_fixture *f, const char *const *protected, size_t n)
{
	struct xb_exempt_set prot = {};
	struct xb_narrow_set want = {};
	char err[XB_ERRLEN] = "";

	for (size_t i = 0; i < n; i++)
		add(&prot, protected[i], XDPBAN_EXEMPT_LIST, 0);
	assert_int_equal(xb_narrow_plan(&prot, 64, &want), 0);
	if (xb_narrow_sync(&f->m, &want, err, sizeof(err)))
		fail_msg("sync: %s", err);
	xb_narrow_set_free(&want);
	xb_exempt_set_free(&prot);
}

static __u8 key_plen(struct maps_fixture *f, const char *addr)
{
	struct xb_prefix p = P(addr);
	struct xdpban_key key;

	xb_key_from_addr(&f->m, &p, 64, &key);
	return key.prefixlen;
}

static void sync_makes_the_trie_and_gate_hold_the_plan(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	static const char *const first[] = { "2001:db8:aa::53", "2001:db8:bb::53" };
	static const char *const second[] = { "2001:db8:bb::54", "2001:db8:cc::1" };
	struct xb_narrow_set have;

	sync_plan(f, first, 2);
	assert_int_equal(xb_narrow_read(&f->m, &have), 0);
	assert_string_equal(set_text(&have), "::/64, 2001:db8:aa::/64, 2001:db8:bb::/64");
	xb_narrow_set_free(&have);
	assert_int_equal(key_plen(f, "2001:db8:aa::99"), 128);
	assert_int_equal(key_plen(f, "2001:db8:aa:1::99"), 64);
	assert_int_equal(key_plen(f, "fe80::1234"), 128); /* link-local: always a neighbour */

	sync_plan(f, second, 2);
	assert_int_equal(xb_narrow_read(&f->m, &have), 0);
	assert_string_equal(set_text(&have), "::/64, 2001:db8:bb::/64, 2001:db8:cc::/64");
	xb_narrow_set_free(&have);
	assert_int_equal(key_plen(f, "2001:db8:aa::99"), 64); /* gone from the trie and the gate */
	assert_int_equal(key_plen(f, "2001:db8:cc::99"), 128);
}

/* Errors from addr through the XDP program until it is banned; its ban's key. */
static void errors_until_banned(struct maps_fixture *f, const char *addr, __u32 errors)
{
	const struct pkt_spec spec = { .src = addr, .l4 = PKT_L4_TCP,
				       .tcp.flags = PKT_SET(PKT_SYN | PKT_FIN) };
	struct pkt_layout at;
	__u8 frame[256];
	__u32 action;

	assert_int_equal(pkt_build(&spec, frame, sizeof(frame), &at), 0);
	for (__u32 i = 0; i < errors; i++) {
		assert_int_equal(dp_run(&f->dp, frame, at.len, &action), 0);
		assert_int_equal(action, XDP_DROP);
	}
}

static bool banned_key(struct maps_fixture *f, const char *key_text)
{
	struct xb_prefix p = P(key_text);
	struct xdpban_key key = { .family = p.family, .prefixlen = p.plen };
	struct xdpban_ban ban;

	memcpy(key.addr, p.addr, sizeof(p.addr));
	return dp_ban(&f->dp, &key, &ban) == 0;
}

static void data_path_bans_per_address_where_the_library_says(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	static const char *const prot[] = { "2001:db8:aa::53" };
	char err[XB_ERRLEN] = "";
	struct xb_prefix net = P("2001:db8:aa::/64");

	sync_plan(f, prot, 1);
	errors_until_banned(f, "2001:db8:aa::99", 10);
	assert_false(banned_key(f, "2001:db8:aa::99/128"));
	errors_until_banned(f, "2001:db8:aa::99", 1);
	assert_true(banned_key(f, "2001:db8:aa::99/128"));
	assert_false(banned_key(f, "2001:db8:aa::/64"));
	errors_until_banned(f, "2001:db8:bb::99", 11);
	assert_true(banned_key(f, "2001:db8:bb::/64"));
	assert_false(banned_key(f, "2001:db8:bb::99/128"));
	/* A ban of the network by hand or from elsewhere is refused, and says why. */
	assert_int_equal(xb_ban(&f->m, &net, 60, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "2001:db8:aa::/64"));
	assert_int_equal(xb_ban_check(&f->m, &net, err, sizeof(err)), -EPERM);
	net = P("2001:db8:bb::/64");
	assert_int_equal(xb_ban_check(&f->m, &net, err, sizeof(err)), 0);
}

static void sync_refuses_more_than_the_trie_holds(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xb_narrow_set want = {}, have;
	char err[XB_ERRLEN] = "";
	__u32 cap;

	assert_int_equal(xb_map_capacity(f->m.narrow6, &cap), 0);
	want.n = want.cap = (size_t)cap + 1;
	want.v = calloc(want.n, sizeof(*want.v));
	assert_non_null(want.v);
	for (size_t i = 0; i < want.n; i++) {
		want.v[i] = P("2001:db8::/64");
		want.v[i].addr[4] = (__u8)(i >> 8);
		want.v[i].addr[5] = (__u8)i;
	}
	assert_int_equal(xb_narrow_sync(&f->m, &want, err, sizeof(err)), -ENOSPC);
	assert_non_null(strstr(err, "xdpban_narrow6 holds"));
	assert_int_equal(xb_narrow_read(&f->m, &have), 0);
	assert_int_equal(have.n, 0); /* nothing written */
	xb_narrow_set_free(&have);
	xb_narrow_set_free(&want);
}

#define MAPS_TEST(fn) cmocka_unit_test_setup_teardown(fn, setup_maps, teardown_maps)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plan_keys_the_networks_of_protected_addresses),
		cmocka_unit_test(plan_of_nothing_is_the_builtin_networks),
		MAPS_TEST(sync_makes_the_trie_and_gate_hold_the_plan),
		MAPS_TEST(data_path_bans_per_address_where_the_library_says),
		MAPS_TEST(sync_refuses_more_than_the_trie_holds),
	};

	return cmocka_run_group_tests_name("narrow", tests, NULL, NULL);
}
