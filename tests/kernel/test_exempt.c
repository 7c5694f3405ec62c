/* test_exempt.c - unit tests of the spoof settings and the exempt sources in userspace: the
 * `set` keys spoof, hop-tolerance and learn (user/lib/config.c); the table that names the
 * built-in set, held to xdpban_builtin_exempt(); exempt sets, plans and the order a plan is
 * carried out in (user/lib/exempt.c); the host's addresses from rtnetlink messages
 * (user/lib/ifaddr.c); and, on the real data path loaded unpinned (tests/harness/dp.h), the sync
 * of the exempt tries, query, the lists' counts and the refusal to ban an exempt source. Parsing
 * and plan tests need no root; map tests skip() without it. Never touches pinned state.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <json-c/json.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include "dp.h"
#include "maps_fixture.h"
#include "exempt.h"
#include "libxdpban.h"

static struct xb_prefix P(const char *text)
{
	struct xb_prefix p;
	char err[XB_ERRLEN];

	if (xb_prefix_parse_saved(text, &p, err, sizeof(err)))
		fail_msg("test prefix '%s' does not parse: %s", text, err);
	return p;
}

/* --- the spoof settings --------------------------------------------------------------------- */

static void config_set_spoof_keys(void **state)
{
	static const struct {
		const char *key, *value;
		size_t off;
		__u8 want;
	} rows[] = {
		{ "spoof", "off", offsetof(struct xdpban_config, spoof), XDPBAN_SPOOF_OFF },
		{ "spoof", "verified", offsetof(struct xdpban_config, spoof), XDPBAN_SPOOF_VERIFIED },
		{ "spoof", "hop", offsetof(struct xdpban_config, spoof), XDPBAN_SPOOF_HOP },
		{ "hop-tolerance", "0", offsetof(struct xdpban_config, hop_tolerance), 0 },
		{ "hop-tolerance", "8", offsetof(struct xdpban_config, hop_tolerance), 8 },
		{ "learn", "1/1", offsetof(struct xdpban_config, learn_shift), 0 },
		{ "learn", "1/2", offsetof(struct xdpban_config, learn_shift), 1 },
		{ "learn", "1/16", offsetof(struct xdpban_config, learn_shift), 4 },
		{ "learn", "1/65536", offsetof(struct xdpban_config, learn_shift), 16 },
		{ "learn", "off", offsetof(struct xdpban_config, learn_shift), XDPBAN_LEARN_OFF },
	};
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;
	char err[XB_ERRLEN];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (xb_config_set(&cfg, rows[i].key, rows[i].value, err, sizeof(err)))
			fail_msg("set %s %s: %s", rows[i].key, rows[i].value, err);
		assert_int_equal(((const __u8 *)&cfg)[rows[i].off], rows[i].want);
		assert_true(xdpban_config_valid(&cfg));
	}
	assert_int_equal(cfg.limit, XDPBAN_DEFAULT_LIMIT); /* nothing else moved */
}

static void config_set_spoof_keys_refused(void **state)
{
	static const struct {
		const char *key, *value, *says;
	} rows[] = {
		{ "spoof", "Hop", "bad spoof 'Hop': expected off, hop or verified" },
		{ "spoof", "", "bad spoof ''" },
		{ "spoof", "on", "bad spoof 'on'" },
		{ "spoof", "hop ", "bad spoof 'hop '" },
		{ "spoof", "2", "bad spoof '2'" },
		{ "hop-tolerance", "9", "hop-tolerance 9 out of range: must be 0..8" },
		{ "hop-tolerance", "-1", "bad hop-tolerance '-1'" },
		{ "hop-tolerance", "1.5", "bad hop-tolerance '1.5'" },
		{ "learn", "1/3", "bad learn '1/3': expected 1/N with N a power of two from 1 to 65536" },
		{ "learn", "1/0", "bad learn '1/0'" },
		{ "learn", "1/131072", "bad learn '1/131072'" },
		{ "learn", "2/16", "bad learn '2/16'" },
		{ "learn", "16", "bad learn '16'" },
		{ "learn", "1/", "bad learn '1/'" },
		{ "learn", "1/ 16", "bad learn '1/ 16'" },
		{ "learn", "1/-16", "bad learn '1/-16'" },
		{ "learn", "1/0x10", "bad learn '1/0x10'" },
		{ "learn", "1/99999999999999999999", "bad learn" },
		{ "learn", "Off", "bad learn 'Off'" },
		{ "learn", "1/16\xff", "bad learn '1/16\\xff'" },
	};
	const struct xdpban_config before = XDPBAN_CONFIG_DEFAULTS;
	struct xdpban_config cfg = before;
	char err[XB_ERRLEN];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		err[0] = '\0';
		assert_int_equal(xb_config_set(&cfg, rows[i].key, rows[i].value, err, sizeof(err)),
				 rows[i].says[0] == 'h' ? -ERANGE : -EINVAL);
		if (!strstr(err, rows[i].says))
			fail_msg("%s=%s: message '%s' lacks '%s'", rows[i].key, rows[i].value, err,
				 rows[i].says);
		assert_null(strchr(err, '\n'));
		assert_memory_equal(&cfg, &before, sizeof(cfg));
	}
}

static void learn_and_spoof_names_round_trip(void **state)
{
	char buf[16], err[XB_ERRLEN];
	__u8 back;

	for (__u8 shift = 0; shift <= XDPBAN_LEARN_SHIFT_MAX; shift++) {
		assert_int_equal(xb_learn_format(shift, buf, sizeof(buf)), 0);
		assert_int_equal(xb_learn_parse("learn", buf, &back, err, sizeof(err)), 0);
		assert_int_equal(back, shift);
	}
	assert_int_equal(xb_learn_format(4, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "1/16");
	assert_int_equal(xb_learn_format(XDPBAN_LEARN_OFF, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "off");
	assert_int_equal(xb_learn_format(17, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(xb_learn_format(16, buf, 7), -ENOSPC); /* "1/65536" and its NUL */
	for (__u8 mode = XDPBAN_SPOOF_OFF; mode <= XDPBAN_SPOOF_VERIFIED; mode++) {
		assert_int_equal(xb_spoof_parse("spoof", xb_spoof_name(mode), &back, err,
						sizeof(err)),
				 0);
		assert_int_equal(back, mode);
	}
	assert_string_equal(xb_spoof_name(XDPBAN_SPOOF_VERIFIED + 1), "?");
}

/* --- the built-in set ----------------------------------------------------------------------- */

static void expect_prefix(const struct xb_prefix *got, const char *text)
{
	char buf[64];

	assert_int_equal(xb_prefix_format(got, buf, sizeof(buf)), 0);
	assert_string_equal(buf, text);
}

static bool in_table(const struct xb_prefix *addr)
{
	for (size_t i = 0; xb_exempt_builtin_prefix(i); i++) {
		struct xb_prefix row = P(xb_exempt_builtin_prefix(i));

		if (xb_prefix_contains(&row, addr))
			return true;
	}
	return false;
}

/* The address at an offset from a prefix's first (or last) address, within the family. */
static struct xb_prefix edge(const struct xb_prefix *row, bool last, int step)
{
	struct xb_prefix a = *row;
	unsigned bits = xb_family_bits(row->family);
	int carry = step;

	a.plen = bits;
	for (unsigned bit = row->plen; last && bit < bits; bit++)
		a.addr[bit / 8] |= 0x80 >> (bit % 8);
	for (int byte = bits / 8 - 1; byte >= 0 && carry; byte--) {
		int v = a.addr[byte] + carry;

		a.addr[byte] = (__u8)v;
		carry = v < 0 ? -1 : v > 255 ? 1 : 0;
	}
	return a;
}

static void check_agrees(const struct xb_prefix *a)
{
	char text[64];

	if (in_table(a) != (bool)xdpban_builtin_exempt(a->family, a->addr)) {
		xb_prefix_format(a, text, sizeof(text));
		fail_msg("%s: the table says %d, xdpban_builtin_exempt() %d", text, in_table(a),
			 xdpban_builtin_exempt(a->family, a->addr));
	}
}

/* Both ends of every row and the addresses just outside them, then random addresses of both
 * families (IPv6 ones also with the first 12 bytes zero, where ::, ::1 and ::ffff:0:0/96 lie). */
static void builtin_table_is_the_rule(void **state)
{
	size_t rows = 0;

	for (size_t i = 0; xb_exempt_builtin_prefix(i); i++, rows++) {
		struct xb_prefix row = P(xb_exempt_builtin_prefix(i));

		for (int step = -1; step <= 1; step++) {
			struct xb_prefix first = edge(&row, false, step), last = edge(&row, true, step);

			check_agrees(&first);
			check_agrees(&last);
		}
		assert_true(xdpban_builtin_exempt(row.family, row.addr));
	}
	assert_int_equal(rows, 8);
	srand(8);
	for (int i = 0; i < 200000; i++) {
		struct xb_prefix a = { .family = i % 2 ? XDPBAN_FAMILY_INET6 : XDPBAN_FAMILY_INET };

		a.plen = xb_family_bits(a.family);
		for (int b = 0; b < 16; b++)
			a.addr[b] = (__u8)rand();
		if (a.family == XDPBAN_FAMILY_INET)
			memset(a.addr + 4, 0, 12);
		else if (i % 4 == 1)
			memset(a.addr, 0, 12 - (i % 8 == 1 ? 0 : 2)); /* near ::ffff:0:0/96 too */
		if (i % 16 == 3 && a.family == XDPBAN_FAMILY_INET6)
			memset(a.addr, 0, 15); /* ::0 .. ::ff */
		check_agrees(&a);
	}
}

static void builtin_names_its_prefix(void **state)
{
	struct xb_prefix addr = P("239.255.255.250"), match, net = P("224.0.0.0/8");

	assert_true(xb_exempt_builtin(&addr, &match));
	expect_prefix(&match, "224.0.0.0/4");
	assert_true(xb_exempt_builtin(&net, &match)); /* a prefix inside a row */
	addr = P("ff02::1");
	assert_true(xb_exempt_builtin(&addr, &match));
	expect_prefix(&match, "ff00::/8");
	addr = P("192.0.2.1");
	assert_false(xb_exempt_builtin(&addr, &match));
	net = P("224.0.0.0/3"); /* holds a row, is not inside one */
	assert_false(xb_exempt_builtin(&net, &match));
	assert_string_equal(xb_exempt_origin_name(XB_EXEMPT_BUILTIN), "built-in");
	assert_string_equal(xb_exempt_origin_name(XDPBAN_EXEMPT_LIST), "never-ban");
	assert_string_equal(xb_exempt_origin_name(XDPBAN_EXEMPT_HOST), "host");
}

/* --- sets and plans ------------------------------------------------------------------------- */

static void add(struct xb_exempt_set *s, const char *text, __u32 origin, __u32 ifindex)
{
	struct xb_prefix p = P(text);

	assert_int_equal(xb_exempt_set_add(s, &p, origin, ifindex), 0);
}

static void expect_entry(const struct xb_exempt_set *s, size_t i, const char *text,
			 __u32 origin, __u32 ifindex)
{
	char got[64];

	assert_true(i < s->n);
	assert_int_equal(xb_prefix_format(&s->v[i].prefix, got, sizeof(got)), 0);
	assert_string_equal(got, text);
	assert_int_equal(s->v[i].val.origin, origin);
	assert_int_equal(s->v[i].val.ifindex, ifindex);
}

static void set_finish_sorts_and_keeps_one_per_prefix(void **state)
{
	struct xb_exempt_set s = {};

	add(&s, "2001:db8::1", XDPBAN_EXEMPT_HOST, 3);
	add(&s, "192.0.2.0/24", XDPBAN_EXEMPT_LIST, 0);
	add(&s, "192.0.2.1", XDPBAN_EXEMPT_LIST, 0);
	add(&s, "192.0.2.1", XDPBAN_EXEMPT_HOST, 5);
	add(&s, "192.0.2.1", XDPBAN_EXEMPT_HOST, 4);
	add(&s, "198.51.100.7", XDPBAN_EXEMPT_LIST, 0);
	add(&s, "198.51.100.7", XDPBAN_EXEMPT_LIST, 0);
	xb_exempt_set_finish(&s);
	assert_int_equal(s.n, 4);
	expect_entry(&s, 0, "192.0.2.0/24", XDPBAN_EXEMPT_LIST, 0); /* shorter first */
	expect_entry(&s, 1, "192.0.2.1", XDPBAN_EXEMPT_HOST, 4);    /* host, lower ifindex */
	expect_entry(&s, 2, "198.51.100.7", XDPBAN_EXEMPT_LIST, 0);
	expect_entry(&s, 3, "2001:db8::1", XDPBAN_EXEMPT_HOST, 3);
	assert_int_equal(xb_exempt_set_count(&s, XDPBAN_FAMILY_INET), 3);
	assert_int_equal(xb_exempt_set_count(&s, XDPBAN_FAMILY_INET6), 1);
	xb_exempt_set_free(&s);
	xb_exempt_set_finish(&s); /* empty: nothing to sort */
	assert_int_equal(s.n, 0);
}

static void plan_puts_what_is_new_or_changed_and_deletes_what_went(void **state)
{
	struct xb_exempt_set want = {}, have = {};
	struct xb_exempt_plan plan;

	add(&want, "192.0.2.1", XDPBAN_EXEMPT_HOST, 2);     /* same: nothing */
	add(&want, "192.0.2.9", XDPBAN_EXEMPT_HOST, 2);     /* new */
	add(&want, "198.51.100.0/24", XDPBAN_EXEMPT_HOST, 2); /* value changes */
	add(&want, "2001:db8::/48", XDPBAN_EXEMPT_LIST, 0);  /* new */
	add(&have, "192.0.2.1", XDPBAN_EXEMPT_HOST, 2);
	add(&have, "192.0.2.2", XDPBAN_EXEMPT_HOST, 2);      /* gone */
	add(&have, "198.51.100.0/24", XDPBAN_EXEMPT_LIST, 0);
	add(&have, "2001:db8::1", XDPBAN_EXEMPT_HOST, 2);    /* gone */
	xb_exempt_set_finish(&want);
	xb_exempt_set_finish(&have);
	assert_int_equal(xb_exempt_plan_make(&want, &have, &plan), 0);
	assert_int_equal(plan.put.n, 3);
	expect_entry(&plan.put, 0, "198.51.100.0/24", XDPBAN_EXEMPT_HOST, 2);
	expect_entry(&plan.put, 1, "192.0.2.9", XDPBAN_EXEMPT_HOST, 2);
	expect_entry(&plan.put, 2, "2001:db8::/48", XDPBAN_EXEMPT_LIST, 0);
	assert_int_equal(plan.del.n, 2);
	expect_entry(&plan.del, 0, "192.0.2.2", XDPBAN_EXEMPT_HOST, 2);
	expect_entry(&plan.del, 1, "2001:db8::1", XDPBAN_EXEMPT_HOST, 2);
	xb_exempt_plan_free(&plan);
	/* Same sets: nothing to do; from nothing: everything is put. */
	assert_int_equal(xb_exempt_plan_make(&want, &want, &plan), 0);
	assert_int_equal(plan.put.n + plan.del.n, 0);
	xb_exempt_plan_free(&plan);
	xb_exempt_set_free(&have);
	assert_int_equal(xb_exempt_plan_make(&want, &have, &plan), 0);
	assert_int_equal(plan.put.n, want.n);
	assert_int_equal(plan.del.n, 0);
	xb_exempt_plan_free(&plan);
	xb_exempt_set_free(&want);
}

/* A trie of fixed room that records what was done to it, in order. */
struct fake_trie {
	size_t room, held;
	char log[64][48];
	size_t n;
	int fail_at; /* the operation (1-based) that fails with -EIO; 0: none */
};

static int fake_op(struct fake_trie *t, const struct xb_exempt_entry *e, char op)
{
	char text[40];

	if (t->fail_at && (int)t->n + 1 == t->fail_at)
		return -EIO;
	if (op == '+' && t->held == t->room)
		return -ENOSPC;
	t->held += op == '+' ? 1 : -1;
	xb_prefix_format(&e->prefix, text, sizeof(text));
	snprintf(t->log[t->n++], sizeof(t->log[0]), "%c%s", op, text);
	return 0;
}

static int fake_put(void *ctx, const struct xb_exempt_entry *e)
{
	return fake_op(ctx, e, '+');
}

static int fake_del(void *ctx, const struct xb_exempt_entry *e)
{
	return fake_op(ctx, e, '-');
}

static void plan_for_two_in_two_out(struct xb_exempt_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
	add(&plan->put, "192.0.2.10", XDPBAN_EXEMPT_HOST, 2);
	add(&plan->put, "192.0.2.11", XDPBAN_EXEMPT_HOST, 2);
	add(&plan->del, "192.0.2.1", XDPBAN_EXEMPT_HOST, 2);
	add(&plan->del, "192.0.2.2", XDPBAN_EXEMPT_HOST, 2);
}

/* Puts before deletes while there is room; a full trie makes the deletes come at that point. */
static void apply_adds_before_it_deletes(void **state)
{
	struct fake_trie roomy = { .room = 10, .held = 2 }, full = { .room = 3, .held = 2 },
			 broken = { .room = 10, .held = 2, .fail_at = 2 };
	struct xb_exempt_ops ops = { fake_put, fake_del, &roomy };
	struct xb_exempt_sync_result res = {};
	struct xb_exempt_plan plan;

	plan_for_two_in_two_out(&plan);
	assert_int_equal(xb_exempt_apply(&plan, &ops, &res), 0);
	assert_int_equal(roomy.n, 4);
	assert_string_equal(roomy.log[0], "+192.0.2.10");
	assert_string_equal(roomy.log[1], "+192.0.2.11");
	assert_string_equal(roomy.log[2], "-192.0.2.1");
	assert_string_equal(roomy.log[3], "-192.0.2.2");
	assert_int_equal(res.put, 2);
	assert_int_equal(res.removed, 2);

	res = (struct xb_exempt_sync_result){};
	ops.ctx = &full;
	assert_int_equal(xb_exempt_apply(&plan, &ops, &res), 0);
	assert_int_equal(full.n, 4);
	assert_string_equal(full.log[0], "+192.0.2.10");
	assert_string_equal(full.log[1], "-192.0.2.1");
	assert_string_equal(full.log[2], "-192.0.2.2");
	assert_string_equal(full.log[3], "+192.0.2.11");
	assert_int_equal(full.held, 2);

	res = (struct xb_exempt_sync_result){};
	ops.ctx = &broken;
	assert_int_equal(xb_exempt_apply(&plan, &ops, &res), -EIO);
	assert_int_equal(broken.n, 1); /* stops at the first error: no delete was made */
	assert_int_equal(res.put, 1);
	assert_int_equal(res.removed, 0);
	xb_exempt_plan_free(&plan);
}

/* --- host addresses from rtnetlink ---------------------------------------------------------- */

struct addr_msg {
	struct nlmsghdr nh;
	struct ifaddrmsg ifa;
	char attrs[128];
};

static void msg_init(struct addr_msg *m, __u16 type, __u8 family, __u8 plen, int ifindex)
{
	memset(m, 0, sizeof(*m));
	m->nh.nlmsg_type = type;
	m->nh.nlmsg_len = NLMSG_LENGTH(sizeof(m->ifa));
	m->ifa = (struct ifaddrmsg){ .ifa_family = family, .ifa_prefixlen = plen,
				     .ifa_index = (__u32)ifindex };
}

static void msg_attr(struct addr_msg *m, __u16 type, const char *text, size_t len)
{
	struct rtattr *rta = (struct rtattr *)((char *)m + NLMSG_ALIGN(m->nh.nlmsg_len));
	__u8 addr[16];

	assert_true(inet_pton(strchr(text, ':') ? AF_INET6 : AF_INET, text, addr) == 1);
	rta->rta_type = type;
	rta->rta_len = RTA_LENGTH(len);
	memcpy(RTA_DATA(rta), addr, len);
	m->nh.nlmsg_len = NLMSG_ALIGN(m->nh.nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

static void ifaddr_parse_reads_addresses_and_broadcasts(void **state)
{
	const int watched[] = { 7, 9 };
	struct xb_exempt_set s = {};
	struct addr_msg m;

	/* IPv4 with a peer: IFA_LOCAL is ours; a broadcast given, and the subnet's is the same */
	msg_init(&m, RTM_NEWADDR, AF_INET, 24, 7);
	msg_attr(&m, IFA_ADDRESS, "192.0.2.99", 4);
	msg_attr(&m, IFA_LOCAL, "192.0.2.1", 4);
	msg_attr(&m, IFA_BROADCAST, "192.0.2.255", 4);
	assert_int_equal(xb_ifaddr_parse(&m.nh, watched, 2, &s), 0);
	/* no broadcast attribute: the subnet's still counts; IFA_ADDRESS alone is the address */
	msg_init(&m, RTM_NEWADDR, AF_INET, 25, 9);
	msg_attr(&m, IFA_ADDRESS, "198.51.100.3", 4);
	assert_int_equal(xb_ifaddr_parse(&m.nh, watched, 2, &s), 0);
	/* a /31 has no broadcast address */
	msg_init(&m, RTM_NEWADDR, AF_INET, 31, 9);
	msg_attr(&m, IFA_LOCAL, "203.0.113.4", 4);
	assert_int_equal(xb_ifaddr_parse(&m.nh, watched, 2, &s), 0);
	/* IPv6, link-local included */
	msg_init(&m, RTM_NEWADDR, AF_INET6, 64, 7);
	msg_attr(&m, IFA_ADDRESS, "fe80::1", 16);
	assert_int_equal(xb_ifaddr_parse(&m.nh, watched, 2, &s), 0);
	/* nothing from: another interface, a deletion, another family */
	msg_init(&m, RTM_NEWADDR, AF_INET, 24, 8);
	msg_attr(&m, IFA_LOCAL, "192.0.2.50", 4);
	assert_int_equal(xb_ifaddr_parse(&m.nh, watched, 2, &s), 0);
	msg_init(&m, RTM_DELADDR, AF_INET, 24, 7);
	msg_attr(&m, IFA_LOCAL, "192.0.2.51", 4);
	assert_int_equal(xb_ifaddr_parse(&m.nh, watched, 2, &s), 0);
	msg_init(&m, RTM_NEWADDR, AF_PACKET, 0, 7);
	assert_int_equal(xb_ifaddr_parse(&m.nh, watched, 2, &s), 0);

	xb_exempt_set_finish(&s);
	assert_int_equal(s.n, 6);
	expect_entry(&s, 0, "192.0.2.1", XDPBAN_EXEMPT_HOST, 7);
	expect_entry(&s, 1, "192.0.2.255", XDPBAN_EXEMPT_HOST, 7);
	expect_entry(&s, 2, "198.51.100.3", XDPBAN_EXEMPT_HOST, 9);
	expect_entry(&s, 3, "198.51.100.127", XDPBAN_EXEMPT_HOST, 9);
	expect_entry(&s, 4, "203.0.113.4", XDPBAN_EXEMPT_HOST, 9);
	expect_entry(&s, 5, "fe80::1", XDPBAN_EXEMPT_HOST, 7);
	xb_exempt_set_free(&s);
}

static void ifaddr_parse_refuses_short_messages(void **state)
{
	const int watched[] = { 7 };
	struct xb_exempt_set s = {};
	struct addr_msg m;

	msg_init(&m, RTM_NEWADDR, AF_INET, 24, 7);
	msg_attr(&m, IFA_LOCAL, "192.0.2.1", 2); /* an address of 2 bytes */
	assert_int_equal(xb_ifaddr_parse(&m.nh, watched, 1, &s), -EINVAL);
	msg_init(&m, RTM_NEWADDR, AF_INET6, 64, 7);
	msg_attr(&m, IFA_ADDRESS, "192.0.2.1", 4); /* 4 bytes for IPv6 */
	assert_int_equal(xb_ifaddr_parse(&m.nh, watched, 1, &s), -EINVAL);
	msg_init(&m, RTM_NEWADDR, AF_INET, 24, 7);
	m.nh.nlmsg_len = NLMSG_LENGTH(2); /* cut inside struct ifaddrmsg */
	assert_int_equal(xb_ifaddr_parse(&m.nh, watched, 1, &s), -EINVAL);
	assert_int_equal(s.n, 0);
}

/* --- on the real data path ------------------------------------------------------------------ */

static int setup(void **state)
{
	return maps_fixture_open(state, NULL);
}

static int teardown(void **state)
{
	return maps_fixture_close(state);
}

static void sync(struct maps_fixture *f, struct xb_exempt_set *want)
{
	char err[XB_ERRLEN];

	xb_exempt_set_finish(want);
	if (xb_exempt_sync(&f->m, want, NULL, err, sizeof(err)))
		fail_msg("sync: %s", err);
}

static void expect_same(const struct xb_exempt_set *got, const struct xb_exempt_set *want)
{
	assert_int_equal(got->n, want->n);
	for (size_t i = 0; i < got->n; i++) {
		assert_memory_equal(&got->v[i].prefix, &want->v[i].prefix, sizeof(got->v[i].prefix));
		assert_memory_equal(&got->v[i].val, &want->v[i].val, sizeof(got->v[i].val));
	}
}

static void sync_makes_the_tries_hold_exactly_the_set(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xb_exempt_set first = {}, second = {}, got;
	struct xb_exempt_sync_result res;
	char err[XB_ERRLEN];

	add(&first, "192.0.2.1", XDPBAN_EXEMPT_HOST, 1);
	add(&first, "198.51.100.0/24", XDPBAN_EXEMPT_LIST, 0);
	add(&first, "2001:db8::1", XDPBAN_EXEMPT_HOST, 1);
	sync(f, &first);
	add(&second, "192.0.2.1", XDPBAN_EXEMPT_LIST, 0);
	add(&second, "203.0.113.0/25", XDPBAN_EXEMPT_LIST, 0);
	xb_exempt_set_finish(&second);
	assert_int_equal(xb_exempt_sync(&f->m, &second, &res, err, sizeof(err)), 0);
	assert_int_equal(res.put, 2);
	assert_int_equal(res.removed, 2);
	assert_int_equal(xb_exempt_read(&f->m, &got), 0);
	assert_int_equal(got.n, 2);
	expect_entry(&got, 0, "203.0.113.0/25", XDPBAN_EXEMPT_LIST, 0);
	expect_entry(&got, 1, "192.0.2.1", XDPBAN_EXEMPT_LIST, 0);
	xb_exempt_set_free(&got);
	xb_exempt_set_free(&first);
	xb_exempt_set_free(&second);
}

/* More entries of a family than the trie holds: refused before anything changes. A new set as
 * large as the trie replaces a full one (the deletes come when the trie is found full). */
static void sync_checks_capacity_and_replaces_a_full_trie(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xb_exempt_set old = {}, new = {}, over = {}, got;
	char err[XB_ERRLEN], text[32];

	for (int i = 0; i < XDPBAN_DEFAULT_EXEMPT_MAX; i++) {
		snprintf(text, sizeof(text), "10.%d.%d.1", i / 256, i % 256);
		add(&old, text, XDPBAN_EXEMPT_LIST, 0);
		snprintf(text, sizeof(text), "10.%d.%d.2", i / 256, i % 256);
		add(&new, text, XDPBAN_EXEMPT_LIST, 0);
		add(&over, text, XDPBAN_EXEMPT_LIST, 0);
	}
	add(&over, "192.0.2.1", XDPBAN_EXEMPT_HOST, 1);
	sync(f, &old);
	xb_exempt_set_finish(&over);
	assert_int_equal(xb_exempt_sync(&f->m, &over, NULL, err, sizeof(err)), -ENOSPC);
	assert_non_null(strstr(err, "4097 IPv4 exempt entries"));
	assert_non_null(strstr(err, "(4096)"));
	assert_int_equal(xb_exempt_read(&f->m, &got), 0);
	expect_same(&got, &old); /* unchanged */
	xb_exempt_set_free(&got);
	sync(f, &new);
	assert_int_equal(xb_exempt_read(&f->m, &got), 0);
	expect_same(&got, &new);
	xb_exempt_set_free(&got);
	xb_exempt_set_free(&old);
	xb_exempt_set_free(&new);
	xb_exempt_set_free(&over);
}

static void query_says_why_an_address_is_exempt(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xb_exempt_set set = {};
	struct json_object *q, *v;
	struct xb_query_info info;
	struct xb_prefix a;

	add(&set, "192.0.2.1", XDPBAN_EXEMPT_HOST, 1); /* ifindex 1: lo, in every namespace */
	add(&set, "198.51.100.0/24", XDPBAN_EXEMPT_LIST, 0);
	sync(f, &set);
	a = P("192.0.2.1");
	assert_int_equal(xb_query(&f->m, &a, &info), 0);
	assert_true(info.exempt);
	assert_string_equal(info.exempt_why, "host");
	assert_int_equal(info.exempt_match.val.ifindex, 1);
	assert_int_equal(xb_json_query(&f->m, &a, &q), 0);
	assert_true(json_object_object_get_ex(q, "exempt_interface", &v));
	assert_string_equal(json_object_get_string(v), "lo");
	assert_true(json_object_object_get_ex(q, "exempt_match", &v));
	assert_string_equal(json_object_get_string(v), "192.0.2.1");
	assert_true(json_object_object_get_ex(q, "hop", &v));
	assert_null(v); /* no reference hop count yet */
	json_object_put(q);
	a = P("198.51.100.77");
	assert_int_equal(xb_json_query(&f->m, &a, &q), 0);
	assert_true(json_object_object_get_ex(q, "exempt_why", &v));
	assert_string_equal(json_object_get_string(v), "never-ban");
	assert_true(json_object_object_get_ex(q, "exempt_match", &v));
	assert_string_equal(json_object_get_string(v), "198.51.100.0/24");
	assert_true(json_object_object_get_ex(q, "exempt_interface", &v));
	assert_null(v);
	json_object_put(q);
	a = P("255.255.255.255");
	assert_int_equal(xb_query(&f->m, &a, &info), 0);
	assert_string_equal(info.exempt_why, "built-in");
	expect_prefix(&info.exempt_match.prefix, "240.0.0.0/4");
	a = P("203.0.113.1");
	assert_int_equal(xb_query(&f->m, &a, &info), 0);
	assert_false(info.exempt);
	assert_null(info.exempt_why);
	xb_exempt_set_free(&set);
}

static void lists_count_never_ban_and_host_entries(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xb_exempt_set set = {};
	struct xb_exempt_counts c;
	struct json_object *obj, *part, *n;

	add(&set, "192.0.2.1", XDPBAN_EXEMPT_HOST, 1);
	add(&set, "192.0.2.255", XDPBAN_EXEMPT_HOST, 1);
	add(&set, "fe80::1", XDPBAN_EXEMPT_HOST, 1);
	add(&set, "198.51.100.0/24", XDPBAN_EXEMPT_LIST, 0);
	add(&set, "2001:db8::/32", XDPBAN_EXEMPT_LIST, 0);
	add(&set, "2001:db9::/32", XDPBAN_EXEMPT_LIST, 0);
	sync(f, &set);
	assert_int_equal(xb_exempt_count(&f->m, &c), 0);
	assert_int_equal(c.host[0], 2);
	assert_int_equal(c.host[1], 1);
	assert_int_equal(c.never_ban[0], 1);
	assert_int_equal(c.never_ban[1], 2);
	assert_int_equal(xb_json_exempt(&f->m, &obj), 0);
	assert_true(json_object_object_get_ex(obj, "never_ban", &part));
	assert_true(json_object_object_get_ex(part, "ipv6", &n));
	assert_int_equal(json_object_get_int64(n), 2);
	assert_true(json_object_object_get_ex(obj, "host", &part));
	assert_true(json_object_object_get_ex(part, "ipv4", &n));
	assert_int_equal(json_object_get_int64(n), 2);
	json_object_put(obj);
	xb_exempt_set_free(&set);
}

/* Nothing exempt is banned by hand, and a refusal changes nothing; a prefix that merely holds
 * built-in addresses may be. */
static void ban_refuses_exempt_sources(void **state)
{
	static const struct {
		const char *target, *says;
	} rows[] = {
		{ "192.0.2.1", "refusing to ban 192.0.2.1: it is never banned (host address of lo)" },
		{ "192.0.2.0/24",
		  "refusing to ban 192.0.2.0/24: it contains 192.0.2.1, which is never banned (host address of lo)" },
		{ "198.51.100.7",
		  "refusing to ban 198.51.100.7: it is never banned (never-ban list 198.51.100.0/24)" },
		{ "198.51.100.0/24", "refusing to ban 198.51.100.0/24: it is never banned (never-ban list)" },
		{ "198.51.0.0/16",
		  "refusing to ban 198.51.0.0/16: it contains 198.51.100.0/24, which is never banned (never-ban list)" },
		{ "224.0.0.5", "refusing to ban 224.0.0.5: it is never banned (built in: 224.0.0.0/4)" },
		{ "255.255.255.255",
		  "refusing to ban 255.255.255.255: it is never banned (built in: 240.0.0.0/4)" },
		{ "0.0.0.0", "refusing to ban 0.0.0.0: it is never banned (built in: 0.0.0.0/8)" },
		{ "2001:db8:1::/64",
		  "refusing to ban 2001:db8:1::/64: it contains 2001:db8:1::5, which is never banned (host address of lo)" },
		{ "ff02::/16", "refusing to ban ff02::/16: it is never banned (built in: ff00::/8)" },
	};
	struct maps_fixture *f = maps_fixture_need(state);
	struct xb_exempt_set set = {};
	char err[XB_ERRLEN];
	struct xb_prefix p;
	int bans = 0;

	add(&set, "192.0.2.1", XDPBAN_EXEMPT_HOST, 1);
	add(&set, "2001:db8:1::5", XDPBAN_EXEMPT_HOST, 1);
	add(&set, "198.51.100.0/24", XDPBAN_EXEMPT_LIST, 0);
	sync(f, &set);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		p = P(rows[i].target);
		err[0] = '\0';
		assert_int_equal(xb_ban(&f->m, &p, 60, err, sizeof(err)), -EPERM);
		if (strcmp(err, rows[i].says))
			fail_msg("ban %s: '%s', not '%s'", rows[i].target, err, rows[i].says);
	}
	assert_int_equal(xb_count_banned(&f->m, xb_boot_ns()), 0);
	p = P("224.0.0.0/3");
	assert_int_equal(xb_ban(&f->m, &p, 60, err, sizeof(err)), 0);
	p = P("192.0.2.2");
	assert_int_equal(xb_ban(&f->m, &p, 60, err, sizeof(err)), 0);
	bans = xb_count_banned(&f->m, xb_boot_ns());
	assert_int_equal(bans, 1); /* 192.0.2.2; the prefix ban is in the policy */
	xb_exempt_set_free(&set);
}

/* A run of bans (xb_ban_run_begin, as the fleet applies a turn) refuses what a lone ban
 * refuses, from its copies of the tries, and sees a policy entry written during it. */
static void ban_run_refuses_the_same_and_sees_writes(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xdpban_policy trusted = { .verdict = XDPBAN_POLICY_TRUSTED, .list_id = 7 };
	struct xb_exempt_set set = {};
	char err[XB_ERRLEN];
	struct xb_prefix p;

	add(&set, "2001:db8:1::5", XDPBAN_EXEMPT_HOST, 1);
	add(&set, "198.51.100.0/24", XDPBAN_EXEMPT_LIST, 0);
	sync(f, &set);
	assert_int_equal(xb_ban_run_begin(&f->m), 0);
	for (int round = 0; round < 2; round++) { /* the second from the copies */
		p = P("2001:db8:1::/64");
		assert_int_equal(xb_ban(&f->m, &p, 60, err, sizeof(err)), -EPERM);
		assert_non_null(strstr(err, "contains 2001:db8:1::5"));
		p = P("198.51.0.0/16");
		assert_int_equal(xb_ban(&f->m, &p, 60, err, sizeof(err)), -EPERM);
	}
	p = P("2001:db8:3::/64");
	assert_int_equal(xb_ban(&f->m, &p, 60, err, sizeof(err)), 0);
	assert_int_equal(xb_unban(&f->m, &p, &p, err, sizeof(err)), 0);
	p = P("2001:db8:3::7");
	assert_int_equal(xb_policy_put(&f->m, &p, &trusted, BPF_ANY), 0);
	p = P("2001:db8:3::/64");
	assert_int_equal(xb_ban(&f->m, &p, 60, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "contains trusted 2001:db8:3::7"));
	xb_ban_run_end(&f->m);
	assert_null(f->m.ban_run);
	xb_exempt_set_free(&set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* no root needed */
		cmocka_unit_test(config_set_spoof_keys),
		cmocka_unit_test(config_set_spoof_keys_refused),
		cmocka_unit_test(learn_and_spoof_names_round_trip),
		cmocka_unit_test(builtin_table_is_the_rule),
		cmocka_unit_test(builtin_names_its_prefix),
		cmocka_unit_test(set_finish_sorts_and_keeps_one_per_prefix),
		cmocka_unit_test(plan_puts_what_is_new_or_changed_and_deletes_what_went),
		cmocka_unit_test(apply_adds_before_it_deletes),
		cmocka_unit_test(ifaddr_parse_reads_addresses_and_broadcasts),
		cmocka_unit_test(ifaddr_parse_refuses_short_messages),
		/* the real data path, loaded unpinned per test */
		cmocka_unit_test_setup_teardown(sync_makes_the_tries_hold_exactly_the_set, setup,
						teardown),
		cmocka_unit_test_setup_teardown(sync_checks_capacity_and_replaces_a_full_trie, setup,
						teardown),
		cmocka_unit_test_setup_teardown(query_says_why_an_address_is_exempt, setup, teardown),
		cmocka_unit_test_setup_teardown(lists_count_never_ban_and_host_entries, setup,
						teardown),
		cmocka_unit_test_setup_teardown(ban_refuses_exempt_sources, setup, teardown),
		cmocka_unit_test_setup_teardown(ban_run_refuses_the_same_and_sees_writes, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("exempt", tests, NULL, NULL);
}
