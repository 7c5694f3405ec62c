/* test_state_file.c - reading the state file (user/common/state.h) with restore_bans off, so
 * that no map is needed (every fd -1, as tests/fuzz/fuzz_state.c does): a good file restores
 * its offences into the history, the fleet's position and origins and the comments of manual
 * bans (their escapes undone), and no bans; a missing file is no error; a directory is
 * refused; and every kind of corrupt file (no "end N", a wrong count, a wrong magic or
 * version, an unknown or malformed record, a record after the end, a NUL, a line too long, a
 * bad comment) is moved aside with the message saying why, and nothing of it is used; and the
 * values `xdpban set` changed and the counts in progress (into a counter table in memory),
 * written and read back. Saving whole needs the maps (it walks the policy tries):
 * e2e_operator.sh saves and reads back comments.
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
#include <sys/stat.h>
#include <cmocka.h>
#include "history.h"
#include "state.h"
#include "table.h"
#include "tmpdir.h"
#include "xdpban_time.h"

#define TEXT_50 "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghij"
#define TEXT_201 TEXT_50 TEXT_50 TEXT_50 TEXT_50 "x" /* one byte past XB_COMMENT_MAX */
#define GOOD_FLEET "fleet last=1764498000123-0 epoch=5f0c3e9a41d27b86c0e1f3a2b4d5c6e7\n"

static const struct xb_maps no_maps = { XB_MAPS_NONE, .ncpus = 1 };

struct fixture {
	struct tmpdir dir;
	struct xbd_history h;
	struct xbd_state_fleet fleet;
	struct xbd_comments comments;
	struct xbd_setvals set;
	struct xbd_state_counts c;
	char path[PATH_MAX];
	char err[XB_ERRLEN];
	bool corrupt;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	*state = f;
	return !f || tmpdir_make(&f->dir);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	xbd_history_free(&f->h);
	xbd_state_fleet_free(&f->fleet);
	xbd_comments_free(&f->comments);
	tmpdir_remove(&f->dir);
	free(f);
	return 0;
}

/* Writes text as "state" (NULL: writes nothing) and loads it: the return of xbd_state_load. */
static int load(struct fixture *f, const char *text, size_t len)
{
	struct xbd_state_records rec = { &f->fleet, &f->comments, &f->set };

	tmpdir_path(&f->dir, "state", f->path);
	if (text)
		assert_int_equal(tmpdir_write(&f->dir, "state", text, len, NULL), 0);
	f->err[0] = '\0';
	return xbd_state_load(f->path, &no_maps, &f->h, false, &rec, &f->c, &f->corrupt, f->err,
			      sizeof(f->err));
}

static int load_text(struct fixture *f, const char *text)
{
	return load(f, text, strlen(text));
}

static void good_file_restores_offences_and_the_fleet_position(void **state)
{
	static const char text[] =
		"xdpban-state 1\n"
		"# written by xdpband at 2025-11-30T10:20:00Z; times are Unix seconds, 0 = permanent\n"
		"ban 192.0.2.7 start=1764498000 expires=0 count=11 reason=errors classes=1\n"
		"ban 192.0.2.9 start=1764498000 expires=0 count=2 reason=errors classes=4 proto=17 "
		"port=6969 rule=128\n"
		"prefix 198.51.100.0/24 expires=0\n"
		"offence 192.0.2.7 last=1764498000 until=1764501600 repeats=1\n"
		"offence 2001:db8:1:2::/64 last=1764490000 until=0 repeats=3\n"
		GOOD_FLEET
		"origin 198.51.100.9 node=web-2\n"
		"origin 2001:db8::/48 node=db.1\n"
		"end 8\n";
	struct fixture *f = *state;
	const struct xdpban_key v4 = { .family = XDPBAN_FAMILY_INET, .prefixlen = 32,
				       .addr = { 192, 0, 2, 7 } };
	const struct xdpban_key v6 = { .family = XDPBAN_FAMILY_INET6, .prefixlen = 64,
				       .addr = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2 } };
	struct xbd_offence o;

	assert_int_equal(load_text(f, text), 0);
	assert_false(f->corrupt);
	assert_string_equal(f->err, "");
	assert_true(f->c.present);
	assert_int_equal(f->c.offences, 2);
	assert_int_equal(f->c.bans, 0); /* restore_bans off: parsed, not restored */
	assert_int_equal(f->c.prefixes, 0);
	assert_int_equal(f->h.n, 2);
	assert_int_equal(history_find(&f->h, &v4, &o), 1);
	assert_int_equal(o.last_ban, 1764498000);
	assert_int_equal(o.last_until, 1764501600);
	assert_int_equal(o.repeats, 1);
	assert_int_equal(history_find(&f->h, &v6, &o), 1);
	assert_int_equal(o.last_ban, 1764490000);
	assert_int_equal(o.last_until, 0);
	assert_int_equal(o.repeats, 3);
	assert_string_equal(f->fleet.last_id, "1764498000123-0");
	assert_string_equal(f->fleet.epoch, "5f0c3e9a41d27b86c0e1f3a2b4d5c6e7");
	assert_int_equal(f->fleet.n_origins, 2);
	assert_string_equal(f->fleet.origins[0].node, "web-2");
	assert_int_equal(f->fleet.origins[1].who.plen, 48);
	assert_string_equal(f->fleet.origins[1].node, "db.1");
	assert_int_equal(access(f->path, F_OK), 0); /* a good file stays where it is */
}

/* The records an xdpband with comments writes (state.h): '%' and ' ' escaped, UTF-8 as it is;
 * read whether or not the bans are restored, as offences are. */
static void comments_are_read_with_their_escapes(void **state)
{
	static const char text[] =
		"xdpban-state 1\n"
		"prefix 198.51.100.0/24 expires=0\n"
		"comment 198.51.100.0/24 text=scanner%20of%20port%2022,%2050%25%20of%20SYNs\n"
		"comment 2001:db8:1:2::/64 text=caf\xc3\xa9\n"
		"end 3\n";
	struct fixture *f = *state;
	struct xb_prefix net = { .family = XDPBAN_FAMILY_INET, .plen = 24,
				 .addr = { 198, 51, 100, 0 } };
	struct xb_prefix v6 = { .family = XDPBAN_FAMILY_INET6, .plen = 64,
				.addr = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2 } };

	assert_int_equal(load_text(f, text), 0);
	assert_false(f->corrupt);
	assert_int_equal(f->c.comments, 2);
	assert_int_equal(f->comments.n, 2);
	assert_string_equal(xbd_comments_get(&f->comments, &net),
			    "scanner of port 22, 50% of SYNs");
	assert_string_equal(xbd_comments_get(&f->comments, &v6), "caf\xc3\xa9");
	net.plen = 25;
	assert_null(xbd_comments_get(&f->comments, &net));
}

static void missing_file_is_empty_and_a_directory_is_refused(void **state)
{
	struct fixture *f = *state;
	char want[3 * PATH_MAX];

	assert_int_equal(load(f, NULL, 0), 0); /* err may say it is missing: nothing to act on */
	assert_false(f->c.present);
	assert_false(f->corrupt);
	assert_int_equal(f->h.n, 0);

	assert_int_equal(mkdir(f->path, 0700), 0);
	assert_int_equal(load(f, NULL, 0), -EINVAL);
	snprintf(want, sizeof(want), "state file %s is a directory, not a regular file", f->path);
	assert_string_equal(f->err, want);
	assert_int_equal(xbd_state_check(f->path, f->err, sizeof(f->err)), -EINVAL);
	assert_string_equal(f->err, want);
	assert_int_equal(access(f->path, F_OK), 0); /* not moved aside */
}

/* Each corrupt file, and why it is refused. */
static const struct corrupt_row {
	const char *text, *why;
} corrupt_rows[] = {
	{ "xdpban-state 1\noffence 192.0.2.7 last=1 until=2 repeats=1\n",
	  "truncated: no end line after line 2" },
	{ "xdpban-state 1\n", "truncated: no end line after line 1" },
	{ "", "truncated: no end line after line 0" },
	{ "xdpban-state 1\noffence 192.0.2.7 last=1 until=2 repeats=1\nend 2\n",
	  "line 3: not a valid record" },
	{ "xdpban-state 1\nend 0\noffence 192.0.2.7 last=1 until=2 repeats=1\n",
	  "line 3: not a valid record" },
	{ "xdpban-stat 1\nend 0\n", "line 1: not an xdpban state file of version 1" },
	{ "xdpban-state 2\nend 0\n", "line 1: not an xdpban state file of version 1" },
	{ "# a comment first\nxdpban-state 1\nend 0\n",
	  "line 1: not an xdpban state file of version 1" },
	{ "xdpban-state 1\nunban 192.0.2.7\nend 1\n", "line 2: not a valid record" },
	{ "xdpban-state 1\n\nend 0\n", "line 2: not a valid record" },
	/* an IPv4 offence must be a /32; a count past 32 bits; a time past 9999 */
	{ "xdpban-state 1\noffence 192.0.2.0/24 last=1 until=2 repeats=1\nend 1\n",
	  "line 2: not a valid record" },
	{ "xdpban-state 1\noffence 192.0.2.7 last=1 until=2 repeats=4294967296\nend 1\n",
	  "line 2: not a valid record" },
	{ "xdpban-state 1\noffence 192.0.2.7 last=253402300800 until=2 repeats=1\nend 1\n",
	  "line 2: not a valid record" },
	/* a ban's last error: an unknown rule, a port past 16 bits, a part of it */
	{ "xdpban-state 1\nban 192.0.2.7 start=1 expires=0 count=11 reason=errors classes=4 proto=17 "
	  "port=6969 rule=9\nend 1\n",
	  "line 2: not a valid record" },
	{ "xdpban-state 1\nban 192.0.2.7 start=1 expires=0 count=11 reason=errors classes=4 proto=17 "
	  "port=65536 rule=128\nend 1\n",
	  "line 2: not a valid record" },
	{ "xdpban-state 1\nban 192.0.2.7 start=1 expires=0 count=11 reason=errors classes=4 proto=17 "
	  "port=6969\nend 1\n",
	  "line 2: not a valid record" },
	{ "xdpban-state 1\nban 192.0.2.7 start=1 expires=0 count=11 reason=bored classes=1\nend 1\n",
	  "line 2: not a valid record" },
	{ "xdpban-state 1\n" GOOD_FLEET GOOD_FLEET "end 2\n", "line 3: not a valid record" },
	{ "xdpban-state 1\norigin 198.51.100.9 node=a/b\nend 1\n", "line 2: not a valid record" },
	/* a comment: empty, a broken escape, a control character, not UTF-8, no key, too long */
	{ "xdpban-state 1\ncomment 192.0.2.7 text=\nend 1\n", "line 2: not a valid record" },
	{ "xdpban-state 1\ncomment 192.0.2.7 text=50%2\nend 1\n", "line 2: not a valid record" },
	{ "xdpban-state 1\ncomment 192.0.2.7 text=a%0Ab\nend 1\n", "line 2: not a valid record" },
	{ "xdpban-state 1\ncomment 192.0.2.7 text=\xff\nend 1\n", "line 2: not a valid record" },
	{ "xdpban-state 1\ncomment text=x\nend 1\n", "line 2: not a valid record" },
	{ "xdpban-state 1\ncomment 192.0.2.7 text=" TEXT_201 "\nend 1\n",
	  "line 2: not a valid record" },
	/* a counter's count past 32 bits, a counter without its classes */
	{ "xdpban-state 1\ncounter 192.0.2.7 start=1 count=4294967296 classes=1\nend 1\n",
	  "line 2: not a valid record" },
	{ "xdpban-state 1\ncounter 192.0.2.7 start=1 count=4\nend 1\n", "line 2: not a valid record" },
	/* a key `set` does not know, a value missing, a key twice */
	{ "xdpban-state 1\nset frob 1\nend 1\n", "line 2: not a valid record" },
	{ "xdpban-state 1\nset limit\nend 1\n", "line 2: not a valid record" },
	{ "xdpban-state 1\nset limit 15\nset limit 16\nend 2\n", "line 3: not a valid record" },
};

static void corrupt_file_is_moved_aside_with_the_reason(void **state)
{
	struct fixture *f = *state;
	struct xbd_offence before = { .key = { .family = XDPBAN_FAMILY_INET, .prefixlen = 32,
					       .addr = { 203, 0, 113, 9 } }, .repeats = 4 };

	assert_int_equal(xbd_history_put(&f->h, &before), 0);
	for (size_t i = 0; i < sizeof(corrupt_rows) / sizeof(corrupt_rows[0]); i++) {
		char want[3 * PATH_MAX];

		assert_int_equal(load_text(f, corrupt_rows[i].text), 0);
		assert_true(f->corrupt);
		assert_true(f->c.present);
		snprintf(want, sizeof(want), "state file %s: %s; moved aside to %s.corrupt-",
			 f->path, corrupt_rows[i].why, f->path);
		assert_memory_equal(f->err, want, strlen(want));
		assert_int_equal(access(f->path, F_OK), -1);
		/* nothing of it is used: the history is as it was, no fleet position */
		assert_int_equal(f->h.n, 1);
		assert_int_equal(f->c.offences, 0);
		assert_string_equal(f->fleet.last_id, "");
		assert_int_equal(f->fleet.n_origins, 0);
		assert_int_equal(f->comments.n, 0);
		assert_int_equal(xbd_setvals_count(&f->set), 0);
	}
}

/* The values set at run time, written as xbd_state_save writes them, come back the same from
 * the file, and apply over a config as they were set; one a config no longer takes (a limit
 * past the range) is dropped with its reason, the others still apply. */
static void set_values_round_trip(void **state)
{
	struct fixture *f = *state;
	struct xbd_setvals saved = { 0 };
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;
	char text[512], err[XB_ERRLEN] = "";
	FILE *mem = fmemopen(text, sizeof(text), "w");
	size_t n;

	assert_int_equal(xbd_setvals_put(&saved, "limit", "15"), 0);
	assert_int_equal(xbd_setvals_put(&saved, "ban-time", "2h"), 0);
	assert_int_equal(xbd_setvals_put(&saved, "errors", "malformed,probe"), 0);
	assert_int_equal(xbd_setvals_put(&saved, "limit.probe", "2"), 0);
	assert_int_equal(xbd_setvals_put(&saved, "window.6969", "1h"), 0);
	assert_int_equal(xbd_setvals_put(&saved, "frob", "1"), -ENOENT);
	assert_int_equal(xbd_setvals_put(&saved, "limit.frob", "1"), -ENOENT);
	assert_int_equal(xbd_setvals_put(&saved, "drop", "malformed, probe"), -EINVAL);
	assert_non_null(mem);
	fputs("xdpban-state 1\n", mem);
	n = xbd_state_write_set(mem, &saved);
	fprintf(mem, "end %zu\n", n);
	assert_int_equal(fclose(mem), 0);
	assert_int_equal(n, 5);
	assert_non_null(strstr(text, "\nset limit 15\nset ban-time 2h\nset errors malformed,probe\n"
				     "set limit.probe 2\nset window.6969 1h\n"));

	assert_int_equal(load_text(f, text), 0);
	assert_false(f->corrupt);
	assert_int_equal(f->c.settings, 5);
	assert_memory_equal(&f->set, &saved, sizeof(saved));
	assert_int_equal(xbd_setvals_apply(&f->set, &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.limit, 15);
	assert_int_equal(cfg.class_rule[XDPBAN_CLASS_BITNO_PROBE].limit, 2);
	assert_int_equal(cfg.port_rule[0].port, 6969);
	assert_int_equal(cfg.port_rule[0].window_s, 3600);
	assert_int_equal(cfg.ban_s, 7200);
	assert_int_equal(cfg.class_mask, XDPBAN_CLASS_MALFORMED | XDPBAN_CLASS_PROBE);

	assert_int_equal(load_text(f, "xdpban-state 1\nset limit 99999999999\nset window 90\n"
				     "end 2\n"),
			 0);
	assert_false(f->corrupt);
	cfg = (struct xdpban_config)XDPBAN_CONFIG_DEFAULTS;
	assert_int_equal(xbd_setvals_apply(&f->set, &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "limit"));
	assert_int_equal(cfg.limit, ((struct xdpban_config)XDPBAN_CONFIG_DEFAULTS).limit);
	assert_int_equal(cfg.window_s, 90);
	assert_int_equal(xbd_setvals_count(&f->set), 1); /* the limit is forgotten */
}

static void nul_byte_and_long_line_are_corrupt(void **state)
{
	static const char nul[] = "xdpban-state 1\noffence 192.0.2.7\0 last=1 until=2 repeats=1\nend 1\n";
	struct fixture *f = *state;
	char text[1200], want[3 * PATH_MAX];

	assert_int_equal(load(f, nul, sizeof(nul) - 1), 0);
	assert_true(f->corrupt);
	snprintf(want, sizeof(want), "state file %s: line 2: not a valid record; moved aside",
		 f->path);
	assert_memory_equal(f->err, want, strlen(want));
	assert_int_equal(f->h.n, 0);

	snprintf(text, sizeof(text), "xdpban-state 1\n# %01100d\nend 0\n", 0);
	assert_int_equal(load_text(f, text), 0);
	assert_true(f->corrupt);
	snprintf(want, sizeof(want), "state file %s: line 2: longer than 1024 bytes; moved aside",
		 f->path);
	assert_memory_equal(f->err, want, strlen(want));
	assert_int_equal(f->h.n, 0);
}

/* Ban and counter tables in memory, lent through struct xb_maps as the daemon's are, so that a
 * load may restore (restore_bans) without a map: ban groups, their index and cold data, and
 * counter groups. */
#define MEM_GROUPS 16
struct mem_tables {
	struct xdpban_group bans[MEM_GROUPS], counts[MEM_GROUPS];
	__u64 idx[MEM_GROUPS];
	struct xdpban_ban_info info[MEM_GROUPS * XDPBAN_GROUP_SLOTS];
	struct xb_mapped mapped;
	struct xb_maps m;
};

static struct mem_tables *mem_tables_new(void)
{
	struct mem_tables *t = aligned_alloc(128, sizeof(*t));

	assert_non_null(t);
	memset(t, 0, sizeof(*t));
	xb_bans_init(&t->mapped.bans, t->bans, MEM_GROUPS, t->idx, t->info, 0x5eedull);
	xb_counters_init(&t->mapped.counters, t->counts, MEM_GROUPS, 0x5eedull);
	t->m = (struct xb_maps){ XB_MAPS_NONE, .ncpus = 1, .mapped = &t->mapped };
	return t;
}

static struct xdpban_key v4_key(__u8 last)
{
	return (struct xdpban_key){ .family = XDPBAN_FAMILY_INET, .prefixlen = 32,
				    .addr = { 203, 0, 113, last } };
}

/* Writes the counter records of t (at most max) between a header and an end line. */
static void write_counters(const struct mem_tables *t, size_t max, char *text, size_t len,
			   size_t *n, size_t *left)
{
	FILE *mem = fmemopen(text, len, "w");

	assert_non_null(mem);
	fputs("xdpban-state 1\n", mem);
	assert_int_equal(xbd_state_write_counters(mem, &t->m, max, n, left), 0);
	fprintf(mem, "end %zu\n", *n);
	assert_int_equal(fclose(mem), 0);
}

/* The counts in progress, written from one table and restored into another as a start on new
 * maps does: count, classes and window start come back (to the second: wall-clock time in the
 * file); a window over by now is dropped; past the bound the highest counts are kept. */
static void counters_round_trip(void **state)
{
	struct fixture *f = *state;
	struct mem_tables *from = mem_tables_new(), *to = mem_tables_new();
	__u32 now_s = (__u32)(xb_boot_ns() / NS_PER_SEC), day = 86400;
	struct xdpban_key a = v4_key(5), b = v4_key(6), old = v4_key(7);
	struct xb_counter in = { .count = 5, .start_s = now_s - 100, .classes = 1 }, out;
	char text[1024];
	size_t n, left;

	assert_int_equal(xb_counters_put(&from->mapped.counters, &a, now_s, day, &in), 0);
	in = (struct xb_counter){ .count = 9, .start_s = now_s - 50, .classes = 4 };
	assert_int_equal(xb_counters_put(&from->mapped.counters, &b, now_s, day, &in), 0);
	write_counters(from, 10, text, sizeof(text), &n, &left);
	assert_int_equal(n, 2);
	assert_int_equal(left, 0);
	assert_non_null(strstr(text, "\ncounter 203.0.113.5 start="));
	assert_non_null(strstr(text, " count=5 classes=1\n"));

	/* a window begun two days before now: over under the default window of a day */
	snprintf(text + strlen(text) - strlen("end 2\n"), 200,
		 "counter 203.0.113.7 start=%lld count=3 classes=1\nend 3\n",
		 (long long)time(NULL) - 2 * day);
	tmpdir_path(&f->dir, "state", f->path);
	assert_int_equal(tmpdir_write_text(&f->dir, "state", text, NULL), 0);
	assert_int_equal(xbd_state_load(f->path, &to->m, &f->h, true, NULL, &f->c, &f->corrupt,
					f->err, sizeof(f->err)),
			 0);
	assert_false(f->corrupt);
	assert_int_equal(f->c.counters, 2);
	assert_int_equal(f->c.expired, 1);
	assert_int_equal(xb_counters_get(&to->mapped.counters, &a, now_s, &out), 0);
	assert_int_equal(out.count, 5);
	assert_int_equal(out.classes, 1);
	assert_in_range(out.start_s, now_s - 101, now_s - 99); /* a second either way: wall clock */
	assert_int_equal(xb_counters_get(&to->mapped.counters, &b, now_s, &out), 0);
	assert_int_equal(out.count, 9);
	assert_int_equal(xb_counters_get(&to->mapped.counters, &old, now_s, &out), -ENOENT);

	write_counters(from, 1, text, sizeof(text), &n, &left); /* bounded: the highest stays */
	assert_int_equal(n, 1);
	assert_int_equal(left, 1);
	assert_non_null(strstr(text, "\ncounter 203.0.113.6 start="));
	free(from);
	free(to);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(good_file_restores_offences_and_the_fleet_position,
						setup, teardown),
		cmocka_unit_test_setup_teardown(comments_are_read_with_their_escapes, setup, teardown),
		cmocka_unit_test_setup_teardown(missing_file_is_empty_and_a_directory_is_refused,
						setup, teardown),
		cmocka_unit_test_setup_teardown(corrupt_file_is_moved_aside_with_the_reason, setup,
						teardown),
		cmocka_unit_test_setup_teardown(nul_byte_and_long_line_are_corrupt, setup, teardown),
		cmocka_unit_test_setup_teardown(set_values_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(counters_round_trip, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
