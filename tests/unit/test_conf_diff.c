/* test_conf_diff.c - what a reload changes (user/common/conf_diff.h), on config and list files
 * written to a scratch directory and read as the daemon reads them: the settings that differ,
 * each with its old and new value as the file writes it, and no other; the list files added,
 * dropped or with other prefixes (the same number of other ones too), and not one whose lines
 * were only reordered; the keys that wait for a restart; and empty arrays when nothing
 * changed. No kernel, no root.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <limits.h>
#include <cmocka.h>
#include <json-c/json.h>
#include "conf_diff.h"
#include "conf_load.h"
#include "control.h"
#include "tmpdir.h"

/* A config (and its lists) read from text, as a reload reads them. */
struct side {
	struct xbd_conf conf;
	struct xbd_lists lists;
};

static void read_side(void **state, const char *name, const char *text, struct side *s)
{
	char path[PATH_MAX], err[XB_ERRLEN] = "";
	struct xbd_list_caps caps;

	assert_int_equal(tmpdir_write_text(*state, name, text, path), 0);
	assert_int_equal(xbd_conf_load(path, &s->conf, err, sizeof(err)), 0);
	xbd_list_caps_default(&caps);
	assert_int_equal(xbd_lists_read(&s->conf, &caps, &s->lists, NULL, err, sizeof(err)), 0);
}

static void free_side(struct side *s)
{
	xbd_lists_free(&s->lists);
	xbd_conf_free(&s->conf);
}

/* The members the diff adds, as one JSON line, with the scratch directory written as D. */
static void assert_diff(void **state, const struct side *old, const struct side *next,
			const char *want)
{
	const struct tmpdir *d = *state;
	struct json_object *o = json_object_new_object();
	char got[4096], *at;
	const char *line;
	size_t dlen = strlen(d->path);

	assert_int_equal(xbd_conf_diff_json(&(struct xbd_conf_side){ &old->conf, &old->lists },
					    &(struct xbd_conf_side){ &next->conf, &next->lists }, o),
			 0);
	line = xb_json_line(o);
	got[0] = '\0';
	while ((at = strstr(line, d->path))) {
		strncat(got, line, (size_t)(at - line));
		strcat(got, "D");
		line = at + dlen;
	}
	strcat(got, line);
	assert_string_equal(got, want);
	json_object_put(o);
}

static void settings_lists_and_restart_keys_that_changed(void **state)
{
	struct side a, b;

	assert_int_equal(tmpdir_write_text(*state, "d.list", "192.0.2.0/24\n198.51.100.7\n", NULL), 0);
	assert_int_equal(tmpdir_write_text(*state, "t.list", "203.0.113.0/24\n", NULL), 0);
	assert_int_equal(tmpdir_write_text(*state, "n.list", "192.0.2.1\n", NULL), 0);
	read_side(state, "a.conf",
		  "[xdp]\ninterfaces = eth1\n[bans]\nlimit = 10\nerrors = malformed\n"
		  "[lists]\ndeny = d.list\ntrusted = t.list\nnever-ban = n.list\n", &a);
	/* the same number of prefixes in d.list, one of them another; t.list reordered only */
	assert_int_equal(tmpdir_write_text(*state, "d.list", "192.0.2.0/24\n198.51.100.8\n", NULL), 0);
	assert_int_equal(tmpdir_write_text(*state, "a.list", "192.0.2.0/24\n", NULL), 0);
	read_side(state, "b.conf",
		  "[xdp]\ninterfaces = eth1\nmode = native\n[bans]\nlimit = 3\nerrors = malformed,probe\n"
		  "limit.probe = 2\nban-time.probe = 1w\n"
		  "bans-max = 100\n[escalation]\nfactor = 1.5\n[ports]\nopen-tcp = 22,8000-8100\n"
		  "[lists]\ndeny = d.list\ntrusted = t.list\nallow = a.list\n", &b);
	assert_diff(state, &a, &b,
		    "{\"changed\":[{\"key\":\"[bans] limit\",\"old\":\"10\",\"new\":\"3\"},"
		    "{\"key\":\"[bans] limit.*, window.*, ban-time.*\",\"old\":\"none\","
		    "\"new\":\"limit.probe 2, ban-time.probe 7d\"},"
		    "{\"key\":\"[bans] errors\",\"old\":\"malformed\",\"new\":\"malformed,probe\"},"
		    "{\"key\":\"[escalation] factor\",\"old\":\"2\",\"new\":\"1.5\"},"
		    "{\"key\":\"[ports] open-tcp\",\"old\":\"none\",\"new\":\"22,8000-8100\"}],"
		    "\"lists_changed\":[{\"layer\":\"deny\",\"file\":\"D/d.list\",\"before\":2,\"after\":2},"
		    "{\"layer\":\"allow\",\"file\":\"D/a.list\",\"before\":null,\"after\":1},"
		    "{\"layer\":\"never-ban\",\"file\":\"D/n.list\",\"before\":1,\"after\":null}],"
		    "\"restart\":[\"mode\",\"bans-max\"]}");
	free_side(&a);
	free_side(&b);
}

/* The same file read twice, its list's lines reordered in between: nothing changed. */
static void a_file_read_again_changes_nothing(void **state)
{
	const char *conf = "[xdp]\ninterfaces = eth1\n[lists]\ntrusted = t.list\n";
	struct side a, b;

	assert_int_equal(tmpdir_write_text(*state, "t.list", "203.0.113.0/24\n192.0.2.9\n", NULL), 0);
	read_side(state, "a.conf", conf, &a);
	assert_int_equal(tmpdir_write_text(*state, "t.list", "192.0.2.9\n203.0.113.0/24\n", NULL), 0);
	read_side(state, "a.conf", conf, &b);
	assert_diff(state, &a, &b, "{\"changed\":[],\"lists_changed\":[],\"restart\":[]}");
	free_side(&a);
	free_side(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(settings_lists_and_restart_keys_that_changed,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(a_file_read_again_changes_nothing, tmpdir_setup,
						tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
