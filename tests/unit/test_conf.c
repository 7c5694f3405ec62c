/* test_conf.c - the config file's reader (user/common/conf_load.h, deploy/xdpban.conf.5) on
 * files written to a scratch directory: a file of no keys holds the man page's defaults; each
 * kind of value sets its field; every kind of bad file (unknown key or section, a number out
 * of range, a bad duration, a key set twice, a '#' after a value, an indented key, a binary
 * byte, a directory) is refused with one line naming FILE:LINE, the key and the value; list
 * paths are taken from the config file's folder; and a reload's restart-only keys are named
 * and kept, those and no others. No kernel, no root.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "conf_load.h"
#include "xdpban_policy.h"
#include "tmpdir.h"

/* Writes text as NAME in the test's directory and loads it: the return of xbd_conf_load. */
static int load(void **state, const char *name, const char *text, struct xbd_conf *c,
		char *path, char *err)
{
	assert_int_equal(tmpdir_write_text(*state, name, text, path), 0);
	err[0] = '\0';
	return xbd_conf_load(path, c, err, XB_ERRLEN);
}

/* The defaults of deploy/xdpban.conf.5, each key absent from the file. */
static void file_of_no_keys_holds_the_documented_defaults(void **state)
{
	char path[PATH_MAX], err[XB_ERRLEN];
	struct xbd_conf c;

	assert_int_equal(load(state, "a.conf", "# nothing but a comment\n\n", &c, path, err), 0);
	assert_string_equal(err, "");
	assert_string_equal(c.path, path);
	assert_int_equal(c.n_ifaces, 0);
	assert_int_equal(c.mode, XBD_MODE_AUTO);
	assert_string_equal(c.pin_dir, "/sys/fs/bpf/xdpban");
	assert_false(c.detach_on_exit); /* a stop leaves the interfaces filtered */
	assert_int_equal(c.dp.limit, 10);
	assert_int_equal(c.dp.window_s, 86400);   /* 1d */
	assert_int_equal(c.dp.ban_s, 86400);      /* 1d */
	assert_int_equal(c.dp.v6_prefix, 64);
	assert_int_equal(c.dp.hop_tolerance, 1);
	assert_int_equal(c.counters_max, 262144);
	assert_int_equal(c.bans_max, 65536);
	assert_int_equal(c.n_lists, 0);
	assert_false(c.lists_ignore_errors);
	assert_string_equal(c.socket_path, "/run/xdpban/xdpban.sock");
	assert_int_equal(c.socket_mode, 0600);
	assert_false(c.has_group);
	assert_string_equal(c.metrics_listen, "127.0.0.1:9433");
	assert_string_equal(c.state_file, "/var/lib/xdpban/state");
	assert_int_equal(c.save_interval_s, 60);  /* 1m */
	assert_string_equal(c.history, "events");
	assert_int_equal(c.history_max, 10000);
	assert_true(c.esc.enabled);
	assert_true(c.esc.factor == 2.0);
	assert_int_equal(c.esc.max_ban_s, 7 * 86400); /* 1w */
	assert_int_equal(c.esc.period_s, 7 * 86400);
	assert_null(c.fleet.redis);
	xbd_conf_free(&c);
}

static void values_set_their_fields(void **state)
{
	static const char text[] = "[xdp]\n"
				   "interfaces = eth1, eth2 eth3\n"
				   "mode = skb\n"
				   "detach-on-exit = yes\n"
				   "[bans]\n"
				   "limit = 20 ; more lenient\n"
				   "window = 15m\n"
				   "ban-time = 1d12h\n"
				   "ipv6-prefix = 56\n"
				   "counters-max = 4096\n"
				   "limit.probe = 2\n"
				   "ban-time.probe = 1w\n"
				   "window.6969 = 1h\n"
				   "[ports]\n"
				   "guard = 6969/bep15\n"
				   "[control]\n"
				   "socket = /run/other/x.sock\n"
				   "socket-mode = 0660\n"
				   "group-access = full\n"
				   "[metrics]\n"
				   "listen = [::1]:9500\n"
				   "[state]\n"
				   "file = off\n"
				   "save-interval = 90\n"
				   "[events]\n"
				   "history-max = 100\n"
				   "history = off\n"
				   "[escalation]\n"
				   "factor = 1.5\n"
				   "max-ban-time = 2w\n"
				   "period = 3d\n";
	char path[PATH_MAX], err[XB_ERRLEN];
	struct xbd_conf c;

	assert_int_equal(load(state, "b.conf", text, &c, path, err), 0);
	assert_int_equal(c.n_ifaces, 3);
	assert_string_equal(c.ifaces[0], "eth1");
	assert_string_equal(c.ifaces[2], "eth3");
	assert_int_equal(c.mode, XBD_MODE_SKB);
	assert_true(c.detach_on_exit);
	assert_int_equal(c.dp.limit, 20);
	assert_int_equal(c.dp.window_s, 900);
	assert_int_equal(c.dp.ban_s, 86400 + 12 * 3600);
	assert_int_equal(c.dp.v6_prefix, 56);
	assert_int_equal(c.counters_max, 4096);
	assert_int_equal(c.dp.class_rule[XDPBAN_CLASS_BITNO_PROBE].own,
			 XDPBAN_OWN_LIMIT | XDPBAN_OWN_BAN);
	assert_int_equal(c.dp.class_rule[XDPBAN_CLASS_BITNO_PROBE].limit, 2);
	assert_int_equal(c.dp.class_rule[XDPBAN_CLASS_BITNO_PROBE].ban_s, 7 * 86400);
	assert_int_equal(c.dp.class_rule[XDPBAN_CLASS_BITNO_PROTOCOL].own, 0);
	assert_int_equal(c.dp.port_rule[0].port, 6969);
	assert_int_equal(c.dp.port_rule[0].own, XDPBAN_OWN_WINDOW);
	assert_int_equal(c.dp.port_rule[0].window_s, 3600);
	assert_string_equal(c.socket_path, "/run/other/x.sock");
	assert_int_equal(c.socket_mode, 0660);
	assert_true(c.group_full);
	assert_string_equal(c.metrics_listen, "[::1]:9500");
	assert_int_equal(c.metrics_addr.ss_family, AF_INET6);
	assert_null(c.state_file);
	assert_int_equal(c.save_interval_s, 90);
	assert_null(c.history);
	assert_int_equal(c.history_max, 100);
	assert_true(c.esc.factor == 1.5);
	assert_int_equal(c.esc.max_ban_s, 14 * 86400);
	assert_int_equal(c.esc.period_s, 3 * 86400);
	xbd_conf_free(&c);
}

/* Each bad file, and its message after "PATH:". */
static const struct bad_row {
	const char *text, *msg;
} bad_rows[] = {
	{ "[bans]\nlimmit = 5\n", "2: unknown key 'limmit' in section [bans]" },
	{ "[bans]\nlimit = 5\n[banz]\nlimit = 6\n", "3: unknown section [banz]" },
	{ "[bans]\nlimit = 5\n[foo]\n", "3: unknown section [foo]" },
	{ "[foo]\n# limit = 6\n[bans]\nlimit = 5\n", "1: unknown section [foo]" },
	{ "[bans]\nlimit = 5\n[foo] ; a comment\n", "3: unknown section [foo]" },
	{ "limit = 5\n", "1: key 'limit' is outside any [section]" },
	{ "[lists]\nallow = a.list observe\n",
	  "2: [lists] allow = 'a.list observe': 'observe' applies to deny lists only" },
	{ "[lists]\nnever-ban = n.list  observe\n",
	  "2: [lists] never-ban = 'n.list  observe': 'observe' applies to deny lists only" },
	{ "[bans]\nlimit = 1000000001\n",
	  "2: [bans] limit = '1000000001': limit 1000000001 out of range: must be 0..1000000000" },
	{ "[bans]\nlimit = -1\n",
	  "2: [bans] limit = '-1': bad limit '-1': expected a whole number 0..1000000000" },
	{ "[bans]\nwindow = 5x\n",
	  "2: [bans] window = '5x': bad window '5x': a duration is seconds (90) or numbers with "
	  "units w, d, h, m, s, largest first (15m, 2h, 1d12h, 1w)" },
	{ "[bans]\nban-time = 0\n",
	  "2: [bans] ban-time = '0': ban-time 0 out of range: must be 1s..3650d (10 years)" },
	{ "[bans]\ncounters-max = 16777217\n",
	  "2: [bans] counters-max = '16777217': not a number of entries from 1 to 16777216" },
	{ "[bans]\nlimit = 5\n\n[xdp]\nmode = skb\n[bans]\nlimit = 6\n",
	  "7: [bans] limit = '6': already set on line 2" },
	{ "[bans]\nlimit.probe = 2\nwindow.probe = 1h\nlimit.probe = 3\n",
	  "4: [bans] limit.probe = '3': already set" },
	{ "[bans]\nlimit.probe = 2\nlimit.6970 = 1\n[ports]\nguard = 6969/bep15\n",
	  "3: [bans] the limits of port 6970: it has no [ports] guard, so they would never apply" },
	{ "[bans]\nlimit.bogus = 1\n",
	  "2: [bans] limit.bogus = '1': bad setting 'limit.bogus': after the '.' an error class (one of "
	  "malformed, reported, protocol, probe, or a UDP port 1..65535)" },
	{ "[bans]\nlimit. = 1\n", "2: unknown key 'limit.' in section [bans]" },
	{ "[bans]\nwindow.probe = 0\n",
	  "2: [bans] window.probe = '0': window.probe 0 out of range: must be 1s..3650d (10 years), or "
	  "inherit" },
	{ "[escalation]\nfactor = 1\n",
	  "2: [escalation] factor = '1': not a decimal number above 1 and at most 1000 (like 2 or 1.5)" },
	{ "[escalation]\nfactor = 0x2\n",
	  "2: [escalation] factor = '0x2': not a decimal number above 1 and at most 1000 (like 2 or 1.5)" },
	{ "[xdp]\ninterfaces = eth1 # uplink\n",
	  "2: [xdp] interfaces = 'eth1 # uplink': '#' starts a comment only at the start of a line; after a value write ' ;' instead" },
	{ "[xdp]\ninterfaces = eth1 eth1\n", "2: [xdp] interfaces = 'eth1 eth1': interface eth1 is named twice" },
	{ "[xdp]\nmode = fast\n", "2: [xdp] mode = 'fast': not native, skb or auto" },
	{ "[bans]\nban-time = 2d\n[escalation]\nmax-ban-time = 1d\n",
	  "4: [escalation] max-ban-time = '1d' is shorter than [bans] ban-time = '2d'" },
	{ "[bans]\n  limit = 5\n",
	  "2: indented line: start keys and sections at the first column (only comments may be indented)" },
	{ "[events]\nhistory = ../events\n",
	  "2: [events] history = '../events': not a file name (the file is in the state file's directory) or off" },
	{ "[events]\nhistory-max = 99\n",
	  "2: [events] history-max = '99': history-max 99 out of range: must be 100..1000000" },
	{ "[events]\nhistory-max = 1e6\n",
	  "2: [events] history-max = '1e6': bad history-max '1e6': expected a whole number 100..1000000" },
	{ "[state]\nfile = /var/lib/x/state\n[events]\nhistory = state.lists\n",
	  "4: [events] history = 'state.lists' is a file of [state] file (/var/lib/x/state.lists)" },
	{ "[bans]\nlimit = 5\nwindow 7\n", "3: syntax error: expected 'key = value' or '[section]'" },
	{ "[bans]\nlimit = 5\nwindow = 1\x01" "d\n", "3: byte 0x01 is not text (a binary file?)" },
};

static void bad_values_are_refused_with_file_line_key_and_value(void **state)
{
	for (size_t i = 0; i < sizeof(bad_rows) / sizeof(bad_rows[0]); i++) {
		char path[PATH_MAX], err[XB_ERRLEN], want[XB_ERRLEN + PATH_MAX];
		struct xbd_conf c;

		assert_int_equal(load(state, "bad.conf", bad_rows[i].text, &c, path, err), -EINVAL);
		snprintf(want, sizeof(want), "%s:%s", path, bad_rows[i].msg);
		assert_string_equal(err, want);
		assert_null(c.path); /* freed on failure */
		assert_null(c.socket_path);
	}
}

static void line_too_long_and_directory_are_refused(void **state)
{
	char path[PATH_MAX], err[XB_ERRLEN], want[XB_ERRLEN + PATH_MAX], text[400];
	struct xbd_conf c;

	snprintf(text, sizeof(text), "[state]\nfile = /%0300d\n", 7);
	assert_int_equal(load(state, "long.conf", text, &c, path, err), -EINVAL);
	snprintf(want, sizeof(want), "%s:2: line longer than 199 characters", path);
	assert_string_equal(err, want);

	tmpdir_path(*state, "dir.conf", path);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(xbd_conf_load(path, &c, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "config %s is a directory, not a regular file", path);
	assert_string_equal(err, want);
}

/* Paths of lists, the state file and pin-dir: absolute as written, relative from the config
 * file's folder (resolved, so a "/tmp" that is a link still compares). */
static void relative_paths_resolve_against_the_config_folder(void **state)
{
	static const char text[] = "[lists]\n"
				   "deny = deny.list\n"
				   "allow = /etc/xdpban/allow.list\n"
				   "never-ban = ../up.list\n"
				   "trusted = t/x.list\n"
				   "deny = new.list   observe\n"
				   "deny = observe\n"
				   "[state]\n"
				   "file = saved/state\n";
	char path[PATH_MAX], err[XB_ERRLEN], sub[PATH_MAX], real[PATH_MAX], want[PATH_MAX * 2];
	struct xbd_conf c;

	assert_int_equal(mkdir(tmpdir_path(*state, "etc", sub), 0700), 0);
	assert_non_null(realpath(sub, real));
	assert_int_equal(load(state, "etc/xdpban.conf", text, &c, path, err), 0);
	assert_int_equal(c.n_lists, 6);
	snprintf(want, sizeof(want), "%s/deny.list", real);
	assert_string_equal(c.lists[0].path, want);
	assert_int_equal(c.lists[0].verdict, XDPBAN_POLICY_DENY);
	assert_int_equal(c.lists[0].id, 1);
	assert_string_equal(c.lists[1].path, "/etc/xdpban/allow.list");
	assert_int_equal(c.lists[1].verdict, XDPBAN_POLICY_ALLOWED);
	assert_int_equal(c.lists[1].id, 2);
	/* Allow-only mode is the lists' composition's to decide (xbd_lists_compose), not the
	 * reader's: the config read leaves the flag alone. */
	assert_false(c.dp.policy & XDPBAN_CFG_ALLOW_ONLY);
	snprintf(want, sizeof(want), "%s/../up.list", real);
	assert_string_equal(c.lists[2].path, want);
	assert_int_equal(c.lists[2].verdict, XBD_LIST_NEVER_BAN);
	snprintf(want, sizeof(want), "%s/t/x.list", real);
	assert_string_equal(c.lists[3].path, want);
	assert_int_equal(c.lists[3].verdict, XDPBAN_POLICY_TRUSTED);
	/* the word after the file observes the list; a file named like the word is a file */
	snprintf(want, sizeof(want), "%s/new.list", real);
	assert_string_equal(c.lists[4].path, want);
	assert_int_equal(c.lists[4].verdict, XBD_LIST_OBSERVED);
	snprintf(want, sizeof(want), "%s/observe", real);
	assert_string_equal(c.lists[5].path, want);
	assert_int_equal(c.lists[5].verdict, XDPBAN_POLICY_DENY);
	snprintf(want, sizeof(want), "%s/saved/state", real);
	assert_string_equal(c.state_file, want);
	xbd_conf_free(&c);
}

static void restart_keys_name_the_keys_that_differ_and_only_those(void **state)
{
	char path[PATH_MAX], err[XB_ERRLEN], names[256];
	struct xbd_conf a, b, d;

	assert_int_equal(load(state, "a.conf", "[xdp]\ninterfaces = eth1\n", &a, path, err), 0);
	/* thresholds, escalation and lists apply at a reload: none is named */
	assert_int_equal(load(state, "b.conf",
			      "[xdp]\ninterfaces = eth1\n[bans]\nlimit = 3\nwindow = 1h\n"
			      "[escalation]\nfactor = 3\n[lists]\ndeny = d.list\n",
			      &b, path, err), 0);
	xbd_conf_restart_keys(&a, &b, names, sizeof(names));
	assert_string_equal(names, "");
	xbd_conf_restart_keys(&a, &a, names, sizeof(names));
	assert_string_equal(names, "");
	assert_int_equal(load(state, "d.conf",
			      "[xdp]\ninterfaces = eth2\nmode = native\n[bans]\nbans-max = 10\n"
			      "[control]\nsocket-mode = 0640\n[state]\nfile = off\n"
			      "[events]\nhistory-max = 500\n",
			      &d, path, err), 0);
	xbd_conf_restart_keys(&a, &d, names, sizeof(names));
	assert_string_equal(names, "interfaces, mode, bans-max, [control], [state] file, [events]");
	xbd_conf_restart_keys(&b, &d, names, sizeof(names));
	assert_string_equal(names, "interfaces, mode, bans-max, [control], [state] file, [events]");
	xbd_conf_free(&a);
	xbd_conf_free(&b);
	xbd_conf_free(&d);
}

/* A reload keeps the old restart-only settings and takes the rest of the new file. */
static void keep_restart_keys_keeps_those_and_takes_the_rest(void **state)
{
	char path[PATH_MAX], err[XB_ERRLEN], names[256];
	struct xbd_conf old, next, ref;

	assert_int_equal(load(state, "old.conf", "[xdp]\ninterfaces = eth1\n", &old, path, err), 0);
	assert_int_equal(load(state, "old.conf", "[xdp]\ninterfaces = eth1\n", &ref, path, err), 0);
	assert_int_equal(load(state, "next.conf",
			      "[xdp]\ninterfaces = eth2 eth3\nmode = skb\n[bans]\nlimit = 4\n"
			      "[control]\nsocket = /run/y.sock\n[state]\nfile = /var/s\n",
			      &next, path, err), 0);
	xbd_conf_keep_restart_keys(&next, &old);
	xbd_conf_restart_keys(&ref, &next, names, sizeof(names));
	assert_string_equal(names, "");
	assert_int_equal(next.n_ifaces, 1);
	assert_string_equal(next.ifaces[0], "eth1");
	assert_string_equal(next.socket_path, "/run/xdpban/xdpban.sock");
	assert_int_equal(next.dp.limit, 4); /* a reloadable key: the new file's */
	/* old now holds the new file's restart keys, to be freed with it */
	assert_int_equal(old.n_ifaces, 2);
	assert_int_equal(old.mode, XBD_MODE_SKB);
	assert_string_equal(old.state_file, "/var/s");
	xbd_conf_free(&old);
	xbd_conf_free(&next);
	xbd_conf_free(&ref);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(file_of_no_keys_holds_the_documented_defaults, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(values_set_their_fields, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(bad_values_are_refused_with_file_line_key_and_value,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(line_too_long_and_directory_are_refused, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(relative_paths_resolve_against_the_config_folder,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(restart_keys_name_the_keys_that_differ_and_only_those,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(keep_restart_keys_keeps_those_and_takes_the_rest,
						tmpdir_setup, tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
