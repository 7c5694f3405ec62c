/* test_runlists.c - the pure parts of the runtime lists (user/common/runlists.h): the count
 * of the addresses each painted entry decides (its span less the entries inside it) and of
 * those no entry holds, against a brute force over IPv4 /24..32 sets and with exact IPv6
 * values up to 2^128; the decimal and "2^128" formatting; and the store: a file written by
 * hand is read back with its files (paths, or <stdin>), layers, skipped counts, entries and
 * lines, a cut or a garbled one is refused and moved aside, and a missing one is empty;
 * single entries (<entries>): added, their comments changed and deleted in memory (the later
 * ones moving up a line), written and read back with their comments and order, and the checks
 * of a prefix and a comment.
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
#include "runlists.h"
#include "xdpban_policy.h"

static struct xbd_list_entry entry(const char *text, __u32 verdict)
{
	struct xbd_list_entry e = { .verdict = verdict, .list_id = 1 };
	char err[XB_ERRLEN];

	assert_int_equal(xb_prefix_parse(text, &e.prefix, err, sizeof(err)), 0);
	return e;
}

static const char *fmt(const struct xbd_count *c)
{
	static char buf[64];

	return xbd_count_format(c, buf, sizeof(buf));
}

static void own_counts_ipv4(void **state)
{
	struct xbd_list_entry e[] = { entry("198.51.100.0/24", XDPBAN_POLICY_DENY),
				      entry("198.51.100.64/26", XDPBAN_POLICY_TRUSTED),
				      entry("198.51.100.70/32", XDPBAN_POLICY_DENY),
				      entry("10.0.0.0/8", XDPBAN_POLICY_DENY) };
	struct xbd_count own[4], rest[2];

	assert_int_equal(xbd_count_own(e, 4, own, rest), 0);
	/* sorted by start: 10/8, the /24, the /26, the /32 */
	assert_string_equal(fmt(&own[0]), "16777216");
	assert_string_equal(fmt(&own[1]), "192");
	assert_string_equal(fmt(&own[2]), "63");
	assert_string_equal(fmt(&own[3]), "1");
	assert_string_equal(fmt(&rest[0]), "4278189824"); /* 2^32 - 2^24 - 256 */
	assert_string_equal(fmt(&rest[1]), "2^128");
}

static void own_counts_ipv6(void **state)
{
	struct xbd_list_entry e[] = { entry("::/1", XDPBAN_POLICY_DENY),
				      entry("8000::/1", XDPBAN_POLICY_DENY),
				      entry("2001:db8::/32", XDPBAN_POLICY_TRUSTED) };
	struct xbd_count own[3], rest[2];

	assert_int_equal(xbd_count_own(e, 3, own, rest), 0);
	/* sorted by start: ::/1, 2001:db8::/32 inside it, 8000::/1 */
	assert_string_equal(fmt(&own[0]), "170141183381241069217422966122340155392"); /* 2^127 - 2^96 */
	assert_string_equal(fmt(&own[1]), "79228162514264337593543950336"); /* 2^96 */
	assert_string_equal(fmt(&own[2]), "170141183460469231731687303715884105728"); /* 2^127 */
	assert_string_equal(fmt(&rest[1]), "0"); /* the two /1 hold every address */
	assert_string_equal(fmt(&rest[0]), "4294967296");
}

/* Random nested IPv4 sets inside 192.0.2.0/23, checked against a count of every address. */
static void own_counts_brute_force(void **state)
{
	srand(7);
	for (int round = 0; round < 200; round++) {
		struct xbd_list_entry e[12];
		struct xbd_count own[12], rest[2];
		size_t n = 0;
		unsigned long long want[12] = {}, none = 0;

		while (n < 12) {
			char text[32];
			int plen = 23 + rand() % 10;
			unsigned int addr = (192u << 24 | 2 << 8) + (rand() % 512);
			bool dup = false;

			addr &= plen == 32 ? ~0u : ~((1u << (32 - plen)) - 1);
			snprintf(text, sizeof(text), "%u.%u.%u.%u/%d", addr >> 24, addr >> 16 & 255,
				 addr >> 8 & 255, addr & 255, plen);
			e[n] = entry(text, XDPBAN_POLICY_DENY);
			for (size_t i = 0; i < n; i++)
				dup = dup || (e[i].prefix.plen == e[n].prefix.plen &&
					      !memcmp(e[i].prefix.addr, e[n].prefix.addr, 4));
			n += !dup;
		}
		assert_int_equal(xbd_count_own(e, n, own, rest), 0);
		for (unsigned int a = (192u << 24 | 2 << 8) - 256; a < (192u << 24 | 4 << 8) + 256; a++) {
			int best = -1;

			for (size_t i = 0; i < n; i++) {
				unsigned int p = (unsigned int)e[i].prefix.addr[0] << 24 |
						 e[i].prefix.addr[1] << 16 | e[i].prefix.addr[2] << 8 |
						 e[i].prefix.addr[3];
				unsigned int mask = e[i].prefix.plen == 32 ? ~0u
						    : ~((1u << (32 - e[i].prefix.plen)) - 1);

				if ((a & mask) == p &&
				    (best < 0 || e[i].prefix.plen > e[best].prefix.plen))
					best = (int)i;
			}
			if (best >= 0)
				want[best]++;
			else
				none++;
		}
		for (size_t i = 0; i < n; i++)
			assert_true((unsigned long long)own[i].n == want[i]);
		assert_true((unsigned long long)rest[0].n == (1ull << 32) - (1024 - none));
	}
}

static char dir[] = "/tmp/test_runlists.XXXXXX";

static int write_store(const char *name, const char *text, char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static void store_round_trip(void **state)
{
	struct xbd_runtime *rt = calloc(1, sizeof(*rt));
	char path[256], err[XB_ERRLEN];

	assert_non_null(rt);
	assert_int_equal(write_store("ok", "xdpban-runtime-lists 1\n"
				     "list deny 2 /srv/a list.txt\n203.0.113.0/24 17\n2001:db8::/32 3\n"
				     "list trusted 0 /srv/b\n192.0.2.7 1\nlist allow 0 <stdin>\nend 3\n",
				     path, sizeof(path)),
			 0);
	assert_int_equal(xbd_runtime_load(path, rt, err, sizeof(err)), 0);
	assert_int_equal(rt->n, 3);
	assert_string_equal(rt->v[2].path, XBD_LIST_STDIN);
	assert_string_equal(rt->v[0].path, "/srv/a list.txt");
	assert_int_equal(rt->v[0].verdict, XDPBAN_POLICY_DENY);
	assert_int_equal(rt->v[0].skipped, 2);
	assert_int_equal(rt->v[0].e.n, 2);
	assert_int_equal(rt->v[1].verdict, XDPBAN_POLICY_TRUSTED);
	assert_int_equal(rt->v[1].e.v[0].line, 1);
	assert_int_equal(rt->v[1].e.v[0].list_id, XBD_RUNTIME_LIST_BASE + 1);
	{
		struct xbd_list_entry want = entry("203.0.113.0/24", XDPBAN_POLICY_DENY);
		const struct xbd_list_entry *e = xbd_lists_find(&rt->v[0].e, &want.prefix);

		assert_non_null(e);
		assert_int_equal(e->line, 17);
		assert_int_equal(e->list_id, XBD_RUNTIME_LIST_BASE);
	}
	xbd_runtime_free(rt);
	snprintf(path, sizeof(path), "%s/missing", dir);
	assert_int_equal(xbd_runtime_load(path, rt, err, sizeof(err)), 0);
	assert_int_equal(rt->n, 0);
	free(rt);
}

static void store_refused(void **state)
{
	static const char *const bad[][2] = {
		{ "xdpban-runtime-lists 1\nlist deny 0 /a\n192.0.2.0/24 1\n", "cut short: no end line" },
		{ "xdpban-runtime-lists 2\nend 0\n", "line 1: not 'xdpban-runtime-lists 1'" },
		{ "xdpban-runtime-lists 1\nlist deny 0 /a\n192.0.2.0/24 1\nend 2\n",
		  "line 4: the end line does not say 1 entries" },
		{ "xdpban-runtime-lists 1\nlist bogus 0 /a\nend 0\n", "line 2: not a list or entry line" },
		{ "xdpban-runtime-lists 1\nlist deny 0 a\nend 0\n", "line 2: not a list or entry line" },
		{ "xdpban-runtime-lists 1\nlist deny 0 <stdin>x\nend 0\n", "line 2: not a list or entry line" },
		{ "xdpban-runtime-lists 1\n192.0.2.0/24 1\nend 1\n", "line 2: not a list or entry line" },
		{ "xdpban-runtime-lists 1\nlist deny 0 /a\nexample.com 1\nend 1\n", "line 3:" },
	};
	struct xbd_runtime *rt = calloc(1, sizeof(*rt));
	char path[256], err[XB_ERRLEN];

	assert_non_null(rt);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(write_store("bad", bad[i][0], path, sizeof(path)), 0);
		assert_int_equal(xbd_runtime_load(path, rt, err, sizeof(err)), -EBADMSG);
		assert_non_null(strstr(err, bad[i][1]));
		assert_non_null(strstr(err, "moved aside to"));
		assert_int_equal(rt->n, 0);
		assert_int_not_equal(access(path, F_OK), 0);
	}
	free(rt);
}

/* An <entries> list of the layer with the given prefixes and comments, in that order. */
static void entries_list(struct xbd_rt_list *l, __u32 verdict, const char *const *v, size_t n)
{
	bool added;

	memset(l, 0, sizeof(*l));
	l->verdict = verdict;
	l->path = strdup(XBD_LIST_ENTRIES);
	assert_non_null(l->path);
	for (size_t i = 0; i < n; i += 2) {
		struct xbd_list_entry e = entry(v[i], verdict);

		assert_int_equal(xbd_rt_entries_put(l, &e.prefix, v[i + 1], &added), 0);
		assert_true(added);
	}
}

/* The comment of the entry at p in l, or NULL when l lacks it; its line in *line. */
static const char *comment_at(const struct xbd_rt_list *l, const char *p, __u32 *line)
{
	struct xbd_list_entry want = entry(p, l->verdict);
	const struct xbd_list_entry *e = xbd_lists_find(&l->e, &want.prefix);

	if (!e)
		return NULL;
	*line = e->line;
	return xbd_rt_entry_comment(l, e);
}

static void entries_put_and_del(void **state)
{
	static const char *const v[] = { "203.0.113.9", "first", "192.0.2.0/24", NULL,
					 "2001:db8::/48", "third" };
	struct xbd_rt_list l;
	struct xbd_list_entry e = entry("192.0.2.0/24", XDPBAN_POLICY_DENY);
	bool added = true;
	__u32 line = 0;

	entries_list(&l, XDPBAN_POLICY_DENY, v, 6);
	assert_int_equal(l.e.n, 3);
	/* sorted by prefix, lines in the order added */
	assert_int_equal(l.e.v[0].line, 2);
	assert_string_equal(comment_at(&l, "203.0.113.9", &line), "first");
	assert_int_equal(line, 1);
	assert_string_equal(comment_at(&l, "192.0.2.0/24", &line), "");
	assert_int_equal(xbd_rt_entries_put(&l, &e.prefix, "now one", &added), 0);
	assert_false(added);
	assert_int_equal(l.e.n, 3);
	assert_string_equal(comment_at(&l, "192.0.2.0/24", &line), "now one");
	assert_int_equal(line, 2);
	assert_int_equal(xbd_rt_entries_del(&l, &e.prefix), 0);
	assert_int_equal(xbd_rt_entries_del(&l, &e.prefix), -ENOENT);
	assert_null(comment_at(&l, "192.0.2.0/24", &line));
	assert_string_equal(comment_at(&l, "2001:db8::/48", &line), "third");
	assert_int_equal(line, 2); /* moved up */
	assert_string_equal(comment_at(&l, "203.0.113.9", &line), "first");
	assert_int_equal(line, 1);
	xbd_rt_list_free(&l);
}

static void entries_round_trip(void **state)
{
	static const char *const deny[] = { "203.0.113.9", "noisy scanner", "192.0.2.0/24", NULL };
	static const char *const never[] = { "2001:db8:1::/64", "lab, 2nd floor", "198.51.100.7",
					     "monitoring" };
	struct xbd_runtime *rt = calloc(1, sizeof(*rt)), *back = calloc(1, sizeof(*back));
	char path[256], err[XB_ERRLEN], text[512];
	__u32 line = 0;
	FILE *f;

	assert_non_null(rt);
	assert_non_null(back);
	rt->v[0] = (struct xbd_rt_list){ .path = strdup("/srv/a"), .verdict = XDPBAN_POLICY_DENY };
	assert_int_equal(xbd_list_entries_push(&rt->v[0].e, &(struct xbd_list_entry){
		.prefix = entry("198.51.100.0/24", 0).prefix, .verdict = XDPBAN_POLICY_DENY,
		.line = 4 }, 8), 0);
	entries_list(&rt->v[1], XDPBAN_POLICY_DENY, deny, 4);
	entries_list(&rt->v[2], XBD_LIST_NEVER_BAN, never, 4);
	rt->n = 3;
	snprintf(path, sizeof(path), "%s/entries", dir);
	assert_int_equal(xbd_runtime_save(path, rt, err, sizeof(err)), 0);
	/* single entries in the order added, with their comments */
	f = fopen(path, "r");
	assert_non_null(f);
	text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
	fclose(f);
	assert_string_equal(text, "xdpban-runtime-lists 1\nlist deny 0 /srv/a\n198.51.100.0/24 4\n"
				  "list deny 0 <entries>\n203.0.113.9 1 noisy scanner\n192.0.2.0/24 2\n"
				  "list never-ban 0 <entries>\n2001:db8:1::/64 1 lab, 2nd floor\n"
				  "198.51.100.7 2 monitoring\nend 5\n");
	assert_int_equal(xbd_runtime_load(path, back, err, sizeof(err)), 0);
	assert_int_equal(back->n, 3);
	assert_true(xbd_rt_is_entries(&back->v[1]));
	assert_false(xbd_rt_is_entries(&back->v[0]));
	assert_int_equal(back->v[2].verdict, XBD_LIST_NEVER_BAN);
	assert_string_equal(comment_at(&back->v[1], "203.0.113.9", &line), "noisy scanner");
	assert_int_equal(line, 1);
	assert_string_equal(comment_at(&back->v[1], "192.0.2.0/24", &line), "");
	assert_int_equal(line, 2);
	assert_string_equal(comment_at(&back->v[2], "198.51.100.7", &line), "monitoring");
	assert_int_equal(back->v[2].e.v[0].list_id, XBD_RUNTIME_LIST_BASE + 2);
	/* an empty runtime leaves no store */
	xbd_runtime_free(back);
	assert_int_equal(xbd_runtime_save(path, back, err, sizeof(err)), 0);
	assert_int_not_equal(access(path, F_OK), 0);
	xbd_runtime_free(rt);
	free(rt);
	free(back);
}

static void entries_store_refused(void **state)
{
	static const char *const bad[] = {
		/* a never-ban file, a place out of order, a prefix twice, a comment on a file's line,
		 * a control character, a comment too long */
		"xdpban-runtime-lists 1\nlist never-ban 0 /a\nend 0\n",
		"xdpban-runtime-lists 1\nlist deny 0 <entries>\n192.0.2.1 2\nend 1\n",
		"xdpban-runtime-lists 1\nlist deny 0 <entries>\n192.0.2.1 1\n192.0.2.1 2\nend 2\n",
		"xdpban-runtime-lists 1\nlist deny 0 /a\n192.0.2.1 1 why\nend 1\n",
		"xdpban-runtime-lists 1\nlist deny 0 <entries>\n192.0.2.1 1 a\tb\nend 1\n",
	};
	struct xbd_runtime *rt = calloc(1, sizeof(*rt));
	char path[256], err[XB_ERRLEN], text[400];

	assert_non_null(rt);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(write_store("bad", bad[i], path, sizeof(path)), 0);
		assert_int_equal(xbd_runtime_load(path, rt, err, sizeof(err)), -EBADMSG);
		assert_non_null(strstr(err, "not a list or entry line"));
	}
	snprintf(text, sizeof(text), "xdpban-runtime-lists 1\nlist deny 0 <entries>\n192.0.2.1 1 %0*d\nend 1\n",
		 XB_COMMENT_MAX + 1, 0);
	assert_int_equal(write_store("bad", text, path, sizeof(path)), 0);
	assert_int_equal(xbd_runtime_load(path, rt, err, sizeof(err)), -EBADMSG);
	free(rt);
}

static void entry_checks(void **state)
{
	struct xbd_list_entry host = entry("192.0.2.1", 0), all = entry("::/0", 0);
	char err[XB_ERRLEN], longest[XB_COMMENT_MAX + 2];

	memset(longest, 'x', sizeof(longest) - 1);
	longest[XB_COMMENT_MAX] = '\0';
	assert_int_equal(xbd_entry_check(&host.prefix, NULL, err, sizeof(err)), 0);
	assert_int_equal(xbd_entry_check(&host.prefix, "caf\xc3\xa9, \"quoted\" # not a comment", err,
					 sizeof(err)), 0);
	assert_int_equal(xbd_entry_check(&host.prefix, longest, err, sizeof(err)), 0);
	longest[XB_COMMENT_MAX] = 'x';
	longest[XB_COMMENT_MAX + 1] = '\0';
	assert_int_equal(xbd_entry_check(&host.prefix, longest, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "comment of 201 bytes: at most 200");
	assert_int_equal(xbd_entry_check(&host.prefix, "a\x7f", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "comment holds a control character (0x7f at byte 2)");
	assert_int_equal(xbd_entry_check(&all.prefix, NULL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "::/0: a whole address family is not an entry");
}

static void layer_names(void **state)
{
	__u32 v = 0;

	assert_int_equal(xbd_layer_parse("never-ban", &v), 0);
	assert_int_equal(v, XBD_LIST_NEVER_BAN);
	assert_string_equal(xbd_layer_name(XBD_LIST_NEVER_BAN), "never-ban");
	assert_int_equal(xbd_layer_parse("never_ban", &v), -EINVAL);
	assert_string_equal(xbd_layer_nth(3), "never-ban");
	assert_null(xbd_layer_nth(4));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(own_counts_ipv4),
		cmocka_unit_test(own_counts_ipv6),
		cmocka_unit_test(own_counts_brute_force),
		cmocka_unit_test(store_round_trip),
		cmocka_unit_test(store_refused),
		cmocka_unit_test(entries_put_and_del),
		cmocka_unit_test(entries_round_trip),
		cmocka_unit_test(entries_store_refused),
		cmocka_unit_test(entry_checks),
		cmocka_unit_test(layer_names),
	};
	int ret;

	if (!mkdtemp(dir))
		return 1;
	char rm[sizeof(dir) + 16];

	ret = cmocka_run_group_tests(tests, NULL, NULL);
	/* Our own directory only: the ASan build of this test may be running beside us. */
	snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
	if (system(rm) != 0)
		ret = ret ? ret : 1;
	return ret;
}
