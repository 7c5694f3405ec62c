/* main.c - xdpband, the xdpban daemon: loads the data path with its maps pinned, attaches it
 * to the configured interfaces, and then serves the control socket, the ban events, the
 * sweep, the state file and the metrics from one poll loop. Signals only set flags; all work
 * happens in the loop. It must never leave a half-applied configuration. At a stop it leaves
 * the program attached and the maps pinned, so that the interfaces stay filtered until the
 * next daemon takes them over, unless told otherwise (detach-on-exit = yes, or --detach
 * afterwards). */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <json-c/json.h>
#include "conf_diff.h"
#include "conf_load.h"
#include "lists.h"
#include "log.h"
#include "progress.h"
#include "state.h"
#include "xdpband.h"

#define POLL_MAX_MS 1000

static volatile sig_atomic_t stop_signal;    /* SIGTERM or SIGINT: which one */
static volatile sig_atomic_t reload_pending; /* SIGHUP */

struct args {
	const char *config;
	char *ifaces[XBD_MAX_IFACES];
	int n_ifaces;
	bool check_only;
	bool detach;
	bool verbose;
};

/* The options: one table for getopt_long and for the help, so that the two cannot differ. */
static const struct {
	struct option opt;
	const char *metavar; /* of the value; NULL for a flag */
	const char *help;
} options[] = {
	{ { "config", required_argument, NULL, 'c' }, "FILE",
	  "configuration file (default " XBD_CONF_DEFAULT ")" },
	{ { "interface", required_argument, NULL, 'i' }, "IFACE",
	  "attach to IFACE instead of the configured interfaces (repeatable)" },
	{ { "check", no_argument, NULL, 't' }, NULL,
	  "check the config, its list and state files and the interfaces; then exit" },
	{ { "detach", no_argument, NULL, 'D' }, NULL,
	  "with no daemon running: detach what a stopped one left attached, remove its pins; exit" },
	{ { "verbose", no_argument, NULL, 'v' }, NULL,
	  "verbose: debug lines, and libbpf's and libxdp's messages" },
	{ { "help", no_argument, NULL, 'h' }, NULL, "this help" },
	{ { "version", no_argument, NULL, 'V' }, NULL, "print the version and exit" },
};
#define N_OPTIONS (sizeof(options) / sizeof(options[0]))

static void usage(FILE *out)
{
	fprintf(out, "Usage: xdpband [-c FILE] [-i IFACE]... [-t | -D] [-v] | -h | -V\n"
		     "The xdpban daemon: attaches the XDP firewall and serves its control socket.\n");
	for (size_t i = 0; i < N_OPTIONS; i++) {
		char left[40];

		snprintf(left, sizeof(left), "-%c, --%s%s%s", options[i].opt.val,
			 options[i].opt.name, options[i].metavar ? " " : "",
			 options[i].metavar ? options[i].metavar : "");
		fprintf(out, "  %-24s %s\n", left, options[i].help);
	}
	fprintf(out, "Signals: SIGHUP reloads the configuration; SIGTERM and SIGINT stop, leaving the program\n"
		     "attached and the maps pinned (unless detach-on-exit = yes) for the next daemon.\n"
		     "See xdpband(8) and xdpban.conf(5).\n");
}

/* The option getopt stopped at, as it was written ("--frob", "-x"). */
static const char *bad_option(char **argv)
{
	return argv[optind - 1] ? argv[optind - 1] : "?";
}

/* 0, or 2 (the usage exit status) with a message printed; -1 after --help or --version. */
static int parse_args(int argc, char **argv, struct args *a)
{
	struct option longopts[N_OPTIONS + 1] = { { NULL } };
	char shortopts[2 * N_OPTIONS + 2] = ":", *p = shortopts + 1;
	int opt;

	for (size_t i = 0; i < N_OPTIONS; i++) {
		longopts[i] = options[i].opt;
		*p++ = (char)options[i].opt.val;
		if (options[i].metavar)
			*p++ = ':';
	}
	*a = (struct args){ .config = XBD_CONF_DEFAULT };
	opterr = 0; /* our own one-line messages */
	while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			a->config = optarg;
			break;
		case 'i':
			if (a->n_ifaces == XBD_MAX_IFACES) {
				fprintf(stderr, "xdpband: more than %d -i options\n", XBD_MAX_IFACES);
				return 2;
			}
			if (!optarg[0] || strlen(optarg) >= IFNAMSIZ) {
				fprintf(stderr, "xdpband: -i '%s': not an interface name\n", optarg);
				return 2;
			}
			a->ifaces[a->n_ifaces++] = optarg;
			break;
		case 't':
			a->check_only = true;
			break;
		case 'D':
			a->detach = true;
			break;
		case 'v':
			a->verbose = true;
			break;
		case 'h':
			usage(stdout);
			return -1;
		case 'V':
			printf("xdpband %s\n", XDPBAN_VERSION);
			return -1;
		case ':':
			fprintf(stderr, "xdpband: option %s needs a value (see xdpband --help)\n",
				bad_option(argv));
			return 2;
		default:
			if (optopt)
				fprintf(stderr, "xdpband: unknown option -%c (see xdpband --help)\n",
					optopt);
			else
				fprintf(stderr, "xdpband: unknown option %s (see xdpband --help)\n",
					bad_option(argv));
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "xdpband: unexpected argument '%s' (see xdpband --help)\n",
			argv[optind]);
		return 2;
	}
	return 0;
}

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reload_pending = 1;
	else
		stop_signal = sig;
}

/* The handled signals stay blocked except inside ppoll(), so a signal can never slip in
 * between the flag check and the wait. *wait_mask is the mask to wait with. */
static int setup_signals(sigset_t *wait_mask)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block;

	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &block, wait_mask))
		return -errno;
	sigdelset(wait_mask, SIGTERM);
	sigdelset(wait_mask, SIGINT);
	sigdelset(wait_mask, SIGHUP);
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) || sigaction(SIGINT, &sa, NULL) ||
	    sigaction(SIGHUP, &sa, NULL) || signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		return -errno;
	return 0;
}

/* ---- configuration ---- */

static int replace_ifaces(struct xbd_conf *c, char *const *names, int n)
{
	for (int i = 0; i < c->n_ifaces; i++)
		free(c->ifaces[i]);
	c->n_ifaces = 0;
	for (int i = 0; i < n; i++) {
		c->ifaces[i] = strdup(names[i]);
		if (!c->ifaces[i])
			return -ENOMEM;
		c->n_ifaces++;
	}
	return 0;
}

/* Every interface must exist before anything is loaded or pinned. */
static int check_ifaces(const struct xbd_conf *c, char *err, size_t errlen)
{
	if (!c->n_ifaces) {
		snprintf(err, errlen, "no interface to attach to: set [xdp] interfaces in %s or use -i",
			 c->path);
		return -EINVAL;
	}
	for (int i = 0; i < c->n_ifaces; i++) {
		if (!if_nametoindex(c->ifaces[i])) {
			snprintf(err, errlen, "interface %s: %s", c->ifaces[i],
				 errno == ENODEV ? "no such interface in this network namespace"
						 : strerror(errno));
			return -ENODEV;
		}
	}
	return 0;
}

/* What the lists in force hold, and the log lines of what their reading skipped or painted. */
static void remember_list_sizes(struct xbd *d, const struct xbd_lists *lists)
{
	size_t skipped = 0;

	memcpy(d->list_entries, lists->entries, sizeof(d->list_entries));
	memcpy(d->list_skipped, lists->skipped, sizeof(d->list_skipped));
	for (int i = 0; i < d->conf.n_lists; i++) {
		const struct xbd_list_conf *l = &d->conf.lists[i];

		skipped += lists->skipped[l->id];
		if (lists->skipped[l->id])
			pr_warn("list %s: %zu bad %s skipped ([lists] ignore-errors = yes)", l->path,
				lists->skipped[l->id],
				xb_plural(lists->skipped[l->id], "line", "lines"));
	}
	for (size_t i = 0; i < XBD_LIST_ERRORS_SHOWN && i < skipped; i++)
		pr_warn("skipped: %s", lists->skipped_first[i]);
	if (lists->painted)
		pr_info("policy lists: %zu %s on or inside entries of a later layer (allow, deny, trusted), which wins there",
			lists->painted, xb_plural(lists->painted, "entry lies", "entries lie"));
}

/* The settings of c, and whether its lists (read into lists) hold an allow list. */
static void log_settings(const char *what, const struct xbd_conf *c,
			 const struct xbd_lists *lists)
{
	char window[XB_DURATION_TEXT_MAX], ban[XB_DURATION_TEXT_MAX], learn[16] = "?";
	char rules[256] = "?";

	xb_duration_format(c->dp.window_s, window, sizeof(window));
	xb_duration_format(c->dp.ban_s, ban, sizeof(ban));
	xb_learn_format(c->dp.learn_shift, learn, sizeof(learn));
	xb_config_rules_format(&c->dp, rules, sizeof(rules));
	pr_info("%s: limit %u errors per %s, ban %s, limit rules %s, IPv6 per /%u, spoof %s (hop-tolerance %u, learn %s), %d list %s%s, escalation %s%s",
		what, c->dp.limit, window, ban, rules, c->dp.v6_prefix, xb_spoof_name(c->dp.spoof),
		c->dp.hop_tolerance, learn, c->n_lists, xb_plural(c->n_lists, "file", "files"),
		lists->allow_list ? " (allow-only mode)" : "",
		c->esc.enabled ? "on" : "off",
		c->dp.mode == XDPBAN_MODE_OBSERVE ? ", observe mode: bans and lists drop nothing" : "");
}

/* The port rules as the [ports] keys write them, cut with "..." past a log line. */
static void log_ports(const char *what, const struct xbd_conf *c)
{
	static const struct {
		__u8 mask;
		const char *key;
	} lists[] = { { XDPBAN_PORT_GUARD_MASK, "guard" },
		      { XDPBAN_PORT_TCP_OPEN, "open-tcp" },
		      { XDPBAN_PORT_UDP_OPEN, "open-udp" } };
	char line[800] = "", text[240];
	size_t used;

	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		int cut = xb_ports_format(c->ports, lists[i].mask, text, sizeof(text));

		used = strlen(line); /* below sizeof(line): every piece fits */
		if (text[0])
			snprintf(line + used, sizeof(line) - used, "%s%s %s%s", used ? "; " : "",
				 lists[i].key, text, cut ? "..." : "");
	}
	used = strlen(line);
	if (c->dp.ports & XDPBAN_PORTS_PROBE_ICMP)
		snprintf(line + used, sizeof(line) - used, "; probe-icmp yes");
	pr_info("%s: port rules: %s", what, line[0] ? line : "none");
}

/* The port rules, then the thresholds, which carry the same config.ports: the table is in
 * place before a rule is in force (ports.h). config.policy stays as the lists in force put it
 * (xbd_lists_apply). */
static int write_settings(struct xbd *d, const struct xbd_conf *c, char *err, size_t errlen)
{
	struct xdpban_config dp = c->dp, in_force;
	int ret = xb_ports_write(&d->maps, c->ports, err, errlen);

	if (!ret && (ret = xb_config_read(&d->maps, &in_force)))
		snprintf(err, errlen, "cannot read the config map: %s", strerror(-ret));
	if (ret)
		return ret;
	dp.policy = in_force.policy;
	return xb_config_write(&d->maps, &dp, err, errlen);
}

/* Applies the thresholds and the lists of next, the never-ban entries before the policy; on
 * failure puts back the old thresholds and never-ban entries (the policy rolls itself back). */
static int apply_reloaded(struct xbd *d, const struct xbd_conf *next,
			  const struct xbd_lists *lists, char *err, size_t errlen)
{
	struct xb_exempt_set never_ban;
	char ignored[XB_ERRLEN];
	int ret = xbd_never_ban_set(&d->conf, lists, &d->runtime, &never_ban, err, errlen);

	if (ret)
		return ret;
	ret = write_settings(d, next, err, errlen);
	if (!ret)
		ret = xbd_exemptions_swap(&d->exempt, &d->maps, &never_ban, err, errlen);
	if (!ret) {
		ret = xbd_apply_lists(d, lists, &d->reading.progress, err, errlen);
		if (ret) /* never_ban holds the entries in force before */
			xbd_exemptions_swap(&d->exempt, &d->maps, &never_ban, ignored,
					    sizeof(ignored));
	}
	if (ret)
		write_settings(d, &d->conf, ignored, sizeof(ignored));
	xb_exempt_set_free(&never_ban);
	return ret;
}

/* What a reload from the configuration in force to next changes (conf_diff.h), as the reply's
 * members; NULL when out of memory (the reload goes on: it is only not told). The thresholds
 * before are the config map's, which `xdpban set` may have changed since the file was read. */
static struct json_object *reload_changes(struct xbd *d, const struct xbd_conf *next,
					  const struct xbd_lists *lists)
{
	struct xbd_conf before = d->conf; /* a view: nothing of it is freed */
	struct json_object *changes = json_object_new_object();

	if (xb_config_read(&d->maps, &before.dp))
		before.dp = d->conf.dp;
	if (changes && xbd_conf_diff_json(&(struct xbd_conf_side){ &before, &d->config_lists },
					  &(struct xbd_conf_side){ next, lists }, changes)) {
		json_object_put(changes);
		changes = NULL;
	}
	if (!changes)
		pr_warn("reload: out of memory for the list of what it changes");
	return changes;
}

/* A reload gives every setting back to the file: the values set at run time are forgotten,
 * in the state file too, so that a restart after it does not bring them back. */
static void forget_set_values(struct xbd *d)
{
	char set[256], err[XB_ERRLEN];

	xbd_setvals_format(&d->setvals, set, sizeof(set));
	if (!set[0])
		return;
	memset(&d->setvals, 0, sizeof(d->setvals));
	pr_info("reload: the values set at run time (%s) give way to the file's", set);
	if (xbd_save_state(d, err, sizeof(err)))
		pr_err("%s", err);
}

/* Applies a configuration that was read and checked whole; on failure nothing changed.
 * *changes: what it changed, for the reply (NULL when out of memory). */
static int reload_apply(struct xbd *d, struct xbd_conf *next, struct xbd_lists *lists,
			struct json_object **changes, char *err, size_t errlen)
{
	char restart_keys[256];
	int ret;

	if (d->ifaces_from_args && replace_ifaces(next, d->conf.ifaces, d->conf.n_ifaces)) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	*changes = reload_changes(d, next, lists);
	ret = apply_reloaded(d, next, lists, err, errlen);
	if (ret) {
		json_object_put(*changes);
		*changes = NULL;
		return ret;
	}
	forget_set_values(d);
	xbd_conf_restart_keys(&d->conf, next, restart_keys, sizeof(restart_keys));
	if (restart_keys[0])
		pr_warn("reload: %s changed; that takes effect at the next restart", restart_keys);
	xbd_conf_keep_restart_keys(next, &d->conf);
	xbd_conf_free(&d->conf);
	d->conf = *next; /* in place: the events module keeps pointing at d->conf.esc */
	remember_list_sizes(d, lists); /* of the new config's lists */
	xbd_lists_free(&d->config_lists);
	d->config_lists = *lists; /* taken: query and lists show name their files and lines */
	memset(lists, 0, sizeof(*lists));
	log_settings("reloaded", &d->conf, &d->config_lists);
	log_ports("reloaded", &d->conf);
	xbd_fleet_reread_password(&d->fleet); /* the [fleet] section itself waits for a restart */
	return 0;
}

/* The reading is done: apply it (or read again, when a reload was asked for meanwhile), log,
 * and answer the reload requests that wait. */
static void reload_finish(struct xbd *d)
{
	struct json_object *changes = NULL;
	struct xbd_lists lists = {};
	struct xbd_conf next;
	char err[XB_ERRLEN] = "";
	int ret = xbd_reading_finish(&d->reading, &next, &lists, err, sizeof(err));

	if (d->reload_again) {
		d->reload_again = false;
		if (!ret) {
			xbd_lists_free(&lists);
			xbd_conf_free(&next);
		}
		pr_info("reload asked for again while reading %s: reading it again", d->conf.path);
		ret = xbd_reload_request(d, err, sizeof(err));
		if (!ret)
			return;
	} else if (!ret) {
		ret = reload_apply(d, &next, &lists, &changes, err, sizeof(err));
		xbd_lists_free(&lists);
		if (ret)
			xbd_conf_free(&next);
	}
	xb_progress_end(&d->reading.progress);
	if (ret)
		pr_err("reload: %s; keeping the old configuration", err);
	xbd_hooks_reload_done(d, ret, err, changes);
}

/* At a start the thresholds are the file's with the values `xdpban set` changed over them
 * (setvals.h), which the state file keeps: those are read with it, after the lists, so the
 * thresholds are written twice on fresh maps, where nothing runs yet (here the file's, at
 * apply_start_values the final ones), and once on reused pins, where the program runs with
 * the pinned ones meanwhile. The port rules always come from the file (`set` cannot change
 * them). */
static int apply_settings(struct xbd *d, char *err, size_t errlen)
{
	if (d->ld.maps_created)
		return write_settings(d, &d->conf, err, errlen);
	return xb_ports_write(&d->maps, d->conf.ports, err, errlen);
}

/* The thresholds in force at start: the file's, and the values set at run time over them. */
static int apply_start_values(struct xbd *d, char *err, size_t errlen)
{
	struct xbd_conf final = d->conf; /* a view: only its thresholds are written */
	char why[XB_ERRLEN], set[256];

	if (xbd_setvals_apply(&d->setvals, &final.dp, why, sizeof(why)))
		pr_warn("state: a value set at run time is not taken any more, the file's applies: %s",
			why);
	xbd_setvals_format(&d->setvals, set, sizeof(set));
	if (set[0])
		pr_info("settings set at run time (xdpban set), over %s's: %s", d->conf.path, set);
	return write_settings(d, &final, err, errlen);
}

/* ---- state file (saving it: actions.c) ---- */

static int restore_state(struct xbd *d, char *err, size_t errlen)
{
	struct xbd_state_records rec = { &d->fleet_saved, &d->comments, &d->setvals };
	struct xbd_state_counts c;
	bool corrupt;
	int ret;

	if (!d->conf.state_file)
		return 0;
	ret = xbd_state_load(d->conf.state_file, &d->maps, &d->history, d->ld.maps_created, &rec,
			     &c, &corrupt, err, errlen);
	if (ret)
		return ret;
	if (corrupt)
		pr_err("%s", err);
	else if (!c.present)
		pr_info("no state file %s yet: starting with no saved bans", d->conf.state_file);
	else if (d->ld.maps_created)
		pr_info("restored from %s: %zu %s, %zu prefix %s, %zu %s, %zu %s in progress (%zu expired, %zu not restored)",
			d->conf.state_file, c.bans, xb_plural(c.bans, "ban", "bans"), c.prefixes,
			xb_plural(c.prefixes, "ban", "bans"), c.offences,
			xb_plural(c.offences, "offence", "offences"), c.counters,
			xb_plural(c.counters, "count", "counts"), c.expired,
			c.failed + c.full + c.refused);
	else
		pr_info("state kept in the pinned maps; %zu %s restored from %s", c.offences,
			xb_plural(c.offences, "offence", "offences"), d->conf.state_file);
	if (c.refused)
		pr_warn("state: %zu saved %s refused, the first: %s", c.refused,
			xb_plural(c.refused, "ban", "bans"), c.refused_why);
	if (c.full)
		pr_err("state: %zu saved %s not restored: the ban table is full ([bans] bans-max = %u); raise bans-max to at least %zu to restore them all",
		       c.full, xb_plural(c.full, "ban", "bans"), d->conf.bans_max, c.bans + c.full);
	return 0;
}

/* ---- start and stop ---- */

/* Everything a start reads and checks before it makes anything, and all that -t checks
 * (with the table sizes a start creates). */
static int load_config(struct xbd *d, const struct args *a, struct xbd_lists *lists,
		       struct xb_progress *progress, char *err, size_t errlen)
{
	struct xbd_list_caps caps;
	int ret = xbd_conf_load(a->config, &d->conf, err, errlen);

	if (ret)
		return ret;
	if (a->n_ifaces) {
		d->ifaces_from_args = true;
		ret = replace_ifaces(&d->conf, a->ifaces, a->n_ifaces);
		if (ret) {
			snprintf(err, errlen, "out of memory");
			return ret;
		}
	}
	xbd_list_caps_default(&caps);
	ret = xbd_lists_read(&d->conf, &caps, lists, progress, err, errlen);
	if (!ret && d->conf.state_file)
		ret = xbd_state_check(d->conf.state_file, err, errlen);
	return ret;
}

/* The history file beside the state file: none without a state file. One that cannot be
 * opened is said and done without, as a state file that cannot be written is: the filtering
 * must not wait for a record of it. */
static void open_history(struct xbd *d)
{
	char *path = xbd_evhistory_path(d->conf.state_file, d->conf.history);
	char err[XB_ERRLEN];

	if (!path)
		return;
	if (xbd_evstream_history(&d->evs, path, d->conf.history_max, err, sizeof(err)))
		pr_warn("%s; running without the event history", err);
	else
		pr_info("event history in %s (at most %u events)", path, d->conf.history_max);
	free(path);
}

static int start_services(struct xbd *d, char *err, size_t errlen)
{
	struct xb_control_ctx ctx = { .maps = &d->maps, .hooks = &d->hooks, .user = d };
	int ret;

	ret = xbd_evstream_init(&d->evs);
	if (ret) {
		snprintf(err, errlen, "cannot make the event stream's ring: %s", strerror(-ret));
		return ret;
	}
	open_history(d);
	ret = xbd_evstream_seed(&d->evs, &d->maps);
	if (ret)
		pr_warn("cannot read the bans in force: their expiry will not be in the event stream: %s",
			strerror(-ret));
	ret = xbd_events_open(&d->events, &d->maps, &d->history, &d->conf.esc, &d->state_dirty,
			      &d->evs);
	if (ret) {
		snprintf(err, errlen, "cannot open the ring buffer: %s", strerror(-ret));
		return ret;
	}
	ret = xbd_reading_init(&d->reading);
	if (ret) {
		snprintf(err, errlen, "cannot create an eventfd for reloads: %s", strerror(-ret));
		return ret;
	}
	ret = xbd_list_load_init(&d->list_load);
	if (ret) {
		snprintf(err, errlen, "cannot create an eventfd for list loads: %s", strerror(-ret));
		return ret;
	}
	xbd_hooks_init(d);
	ret = xbd_server_open(&d->server, &d->conf, &ctx, err, errlen);
	if (!ret)
		ret = xbd_metrics_start(&d->metrics, &d->conf, &d->maps, &d->history, err, errlen);
	if (!ret)
		ret = xbd_fleet_start(&d->fleet, &d->conf.fleet, &d->maps, &d->evs, &d->state_dirty,
				      &d->fleet_saved, err, errlen);
	if (d->fleet.on) /* else kept, to be saved again (xbd_save_state) */
		xbd_state_fleet_free(&d->fleet_saved);
	d->evs.tap = xbd_fleet_tap;
	d->evs.tap_ctx = &d->fleet;
	d->metrics.extra = xbd_fleet_metrics;
	d->metrics.extra_ctx = &d->fleet;
	return ret;
}

static void stop_services(struct xbd *d)
{
	xbd_fleet_stop(&d->fleet); /* before the event stream its tap feeds on */
	d->evs.tap = NULL;
	xbd_reading_close(&d->reading);
	xbd_list_load_close(&d->list_load);
	xbd_metrics_stop(&d->metrics);
	if (d->server.ctx.maps)
		xbd_server_close(&d->server);
	if (d->events.rb)
		xbd_events_close(&d->events);
	xbd_evstream_free(&d->evs);
}

/* The never-ban entries and the host's addresses, exempt before the program is attached. */
static int start_exemptions(struct xbd *d, const struct xbd_lists *lists, char *err,
			    size_t errlen)
{
	struct xb_exempt_set never_ban;
	int ret = xbd_never_ban_set(&d->conf, lists, &d->runtime, &never_ban, err, errlen);

	if (!ret)
		ret = xbd_exemptions_start(&d->exempt, &d->maps, d->conf.ifaces, d->conf.n_ifaces,
					   &never_ban, err, errlen);
	xb_exempt_set_free(&never_ban);
	return ret;
}

/* Everything up to a running daemon; on failure, undoes what it did. */
static int start(struct xbd *d, const struct xbd_lists *lists, struct xb_progress *progress,
		 char *err, size_t errlen)
{
	int ret = xbd_pin_lock(&d->lock, d->conf.pin_dir, err, errlen);

	if (ret)
		return ret;
	xb_progress_phase(progress, "loading the XDP program");
	ret = xbd_load(&d->ld, &d->conf, &d->maps, err, errlen);
	if (ret)
		goto unlock;
	ret = apply_settings(d, err, errlen);
	if (!ret)
		ret = xbd_start_lists(d, lists, progress, err, errlen);
	xb_progress_end(progress); /* the rest of a start is quick, and says what it does */
	if (!ret)
		ret = start_exemptions(d, lists, err, errlen);
	if (!ret)
		ret = restore_state(d, err, errlen);
	if (!ret)
		ret = apply_start_values(d, err, errlen);
	if (!ret)
		ret = xbd_attach_all(&d->att, &d->ld, d->conf.ifaces, d->conf.n_ifaces,
				     d->conf.mode, err, errlen);
	if (ret)
		goto unload;
	ret = start_services(d, err, errlen);
	if (ret)
		goto detach;
	remember_list_sizes(d, lists);
	d->state_dirty = true; /* reused maps may hold bans made after the last save */
	return 0;
detach:
	stop_services(d);
	xbd_fleet_free(&d->fleet);
	xbd_state_fleet_free(&d->fleet_saved);
	xbd_attach_close(&d->att, true);
unload:
	xbd_exemptions_close(&d->exempt);
	/* Pins this start created would make the next start skip the state file. */
	if (d->ld.maps_created)
		xbd_load_unpin(&d->ld);
	xbd_load_close(&d->ld);
unlock:
	xbd_pin_unlock(&d->lock);
	return ret;
}

static void stop(struct xbd *d)
{
	char err[XB_ERRLEN];
	bool detach = d->conf.detach_on_exit;

	stop_services(d);
	xbd_exemptions_close(&d->exempt);
	if (xbd_save_state(d, err, sizeof(err)))
		pr_err("%s", err);
	else if (d->conf.state_file)
		pr_info("state saved to %s", d->conf.state_file);
	xbd_fleet_free(&d->fleet);
	xbd_state_fleet_free(&d->fleet_saved);
	xbd_attach_close(&d->att, detach);
	if (detach)
		xbd_load_unpin(&d->ld);
	else
		pr_info("detach-on-exit = no: the program stays attached and the maps pinned under %s, for the next start (xdpband --detach removes them)",
			d->ld.pin_dir);
	xbd_load_close(&d->ld);
	xbd_pin_unlock(&d->lock);
	xbd_history_free(&d->history);
	xbd_comments_free(&d->comments);
	xbd_lists_free(&d->config_lists);
	xbd_runtime_free(&d->runtime);
	free(d->runtime_store);
	xbd_conf_free(&d->conf);
}

/* ---- the loop ---- */

enum { PFD_EVENTS, PFD_METRICS, PFD_RELOAD, PFD_LISTS, PFD_ADDRS, PFD_FLEET, PFD_SERVER,
       PFD_COUNT = PFD_SERVER + XBD_SERVER_POLLFDS };

static int min_timeout(int a, int b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	return a < b ? a : b;
}

static int timer_ms(__u64 due, __u64 now)
{
	return due <= now ? 0 : (int)(due - now);
}

static void run_timers(struct xbd *d, __u64 now)
{
	char err[XB_ERRLEN];
	int removed;

	if (now >= d->next_sweep_ms) {
		removed = xbd_sweep(&d->history, &d->maps, &d->conf.esc);
		if (removed < 0)
			pr_warn("sweep failed: %s", strerror(-removed));
		else if (removed > 0)
			pr_debug("sweep removed %d expired %s", removed,
				 xb_plural(removed, "entry", "entries"));
		xbd_evstream_expire(&d->evs, xb_boot_ns());
		d->next_sweep_ms = now + XBD_SWEEP_INTERVAL_MS;
		xbd_exemptions_refresh(&d->exempt, &d->maps); /* when the last one failed */
	}
	/* Only a ban, a manual change or an offence makes the file stale; bans that merely
	 * expired are skipped at restore anyway. */
	if (now >= d->next_save_ms) {
		if (d->state_dirty && xbd_save_state(d, err, sizeof(err)))
			pr_err("%s", err);
		d->next_save_ms = now + (__u64)d->conf.save_interval_s * 1000;
	}
}

static void handle_reload(struct xbd *d)
{
	char err[XB_ERRLEN];

	reload_pending = 0;
	pr_info("SIGHUP: reloading %s", d->conf.path);
	if (xbd_reload_request(d, err, sizeof(err)))
		pr_err("reload: %s; keeping the old configuration", err);
}

static void loop(struct xbd *d, const sigset_t *wait_mask)
{
	struct pollfd pfds[PFD_COUNT];
	struct timespec ts;
	__u64 now;
	int timeout;

	d->next_sweep_ms = xbd_now_ms() + XBD_SWEEP_INTERVAL_MS;
	d->next_save_ms = xbd_now_ms() + (__u64)d->conf.save_interval_s * 1000;
	while (!stop_signal) {
		if (reload_pending)
			handle_reload(d);
		now = xbd_now_ms();
		run_timers(d, now);
		pfds[PFD_EVENTS] = (struct pollfd){ .fd = xbd_events_fd(&d->events), .events = POLLIN };
		pfds[PFD_METRICS] = (struct pollfd){ .fd = xbd_metrics_fd(&d->metrics), .events = POLLIN };
		pfds[PFD_RELOAD] = (struct pollfd){ .fd = d->reading.job.fd, .events = POLLIN };
		pfds[PFD_LISTS] = (struct pollfd){ .fd = d->list_load.job.fd, .events = POLLIN };
		pfds[PFD_ADDRS] = (struct pollfd){ .fd = xbd_exemptions_fd(&d->exempt), .events = POLLIN };
		pfds[PFD_FLEET] = (struct pollfd){ .fd = xbd_fleet_fd(&d->fleet), .events = POLLIN };
		xbd_server_pollfds(&d->server, &pfds[PFD_SERVER]);
		timeout = min_timeout(POLL_MAX_MS, timer_ms(d->next_sweep_ms, now));
		timeout = min_timeout(timeout, timer_ms(d->next_save_ms, now));
		timeout = min_timeout(timeout, xbd_server_timeout_ms(&d->server));
		timeout = min_timeout(timeout, xbd_metrics_timeout_ms(&d->metrics));
		ts = (struct timespec){ .tv_sec = timeout / 1000, .tv_nsec = timeout % 1000 * 1000000L };
		if (ppoll(pfds, PFD_COUNT, &ts, wait_mask) < 0) {
			if (errno != EINTR)
				pr_warn("poll: %s", strerror(errno));
			continue;
		}
		if (pfds[PFD_EVENTS].revents)
			xbd_events_consume(&d->events);
		if (pfds[PFD_ADDRS].revents)
			xbd_exemptions_refresh(&d->exempt, &d->maps);
		if (pfds[PFD_FLEET].revents)
			xbd_fleet_run(&d->fleet);
		xbd_metrics_run(&d->metrics);
		xbd_server_serve(&d->server, &pfds[PFD_SERVER]);
		if (pfds[PFD_RELOAD].revents)
			reload_finish(d);
		if (pfds[PFD_LISTS].revents)
			xbd_hooks_lists_loaded(d);
	}
	/* Bans made just before the signal still get their escalation and their log line. */
	xbd_events_consume(&d->events);
	pr_info("%s: stopping", strsignal(stop_signal));
}

/* xdpband --detach: what a daemon stopped with detach-on-exit = no left goes, our program from
 * every interface of this namespace, then the pins (the state file stays). The pin lock makes
 * it refuse while a daemon runs on them. */
static int detach_left(const struct xbd_conf *c, char *err, size_t errlen)
{
	struct xbd_pin_lock lock;
	__u32 bans_id;
	int ret;

	if (access(c->pin_dir, F_OK) && errno == ENOENT) {
		pr_info("nothing to detach: no pin directory %s", c->pin_dir);
		return 0;
	}
	ret = xbd_pin_lock(&lock, c->pin_dir, err, errlen);
	if (ret)
		return ret;
	ret = xbd_load_pinned_bans_id(c->pin_dir, &bans_id);
	if (!ret)
		ret = xbd_detach_ours(bans_id, err, errlen);
	else if (ret == -ENOENT)
		ret = 0; /* no ban table: no program can be ours */
	else
		snprintf(err, errlen, "cannot open the pinned ban table under %s: %s", c->pin_dir,
			 strerror(-ret));
	if (!ret)
		ret = xbd_load_unpin_dir(c->pin_dir, err, errlen);
	xbd_pin_unlock(&lock);
	return ret;
}

static int check_config(const struct xbd *d, const struct xbd_lists *lists)
{
	size_t entries = lists->policy.n + lists->never_ban.n + lists->observed.n;

	printf("%s: configuration OK (%d %s, %d list %s, %zu list %s)\n", d->conf.path,
	       d->conf.n_ifaces, xb_plural(d->conf.n_ifaces, "interface", "interfaces"),
	       d->conf.n_lists, xb_plural(d->conf.n_lists, "file", "files"), entries,
	       xb_plural(entries, "entry", "entries"));
	return 0;
}

int main(int argc, char **argv)
{
	static struct xbd d; /* large (the server's buffers): not on the stack */
	struct xbd_lists lists = {};
	struct xb_progress progress; /* of the lists, from their reading to their compile */
	char err[2 * XB_ERRLEN] = ""; /* room for the verifier's reason of a refused program */
	sigset_t wait_mask;
	struct args a;
	int ret = parse_args(argc, argv, &a);

	if (ret)
		return ret < 0 ? 0 : ret;
	d.reading.job.fd = d.list_load.job.fd = -1; /* no eventfd before start_services() */
	d.exempt.events.fd = -1; /* no netlink socket before start_exemptions() */
	d.fleet.link.wake_fd = -1; /* no fleet before start_services() */
	xbd_log_init(a.verbose, !a.check_only);
	if (a.detach) {
		ret = xbd_conf_load(a.config, &d.conf, err, sizeof(err));
		if (!ret)
			ret = detach_left(&d.conf, err, sizeof(err));
		if (ret)
			pr_err("%s", err);
		xbd_conf_free(&d.conf);
		return ret ? 1 : 0;
	}
	xb_progress_begin(&progress);
	/* -t stops after the checks a start makes before it loads anything, so that a
	 * configuration -t accepts does not then fail at start for a reason -t could see. */
	if (load_config(&d, &a, &lists, &progress, err, sizeof(err)) ||
	    check_ifaces(&d.conf, err, sizeof(err)))
		goto fail_config;
	if (a.check_only) {
		xb_progress_end(&progress);
		check_config(&d, &lists);
		xbd_lists_free(&lists);
		xbd_conf_free(&d.conf);
		return 0;
	}
	ret = setup_signals(&wait_mask);
	if (ret) {
		snprintf(err, sizeof(err), "cannot set up signals: %s", strerror(-ret));
		goto fail_config;
	}
	d.started = time(NULL);
	if (start(&d, &lists, &progress, err, sizeof(err)))
		goto fail_config;
	d.config_lists = lists; /* kept: query and lists show name their files and lines */
	log_settings("running", &d.conf, &d.config_lists);
	log_ports("running", &d.conf);
	loop(&d, &wait_mask);
	stop(&d);
	return 0;
fail_config:
	xb_progress_end(&progress);
	pr_err("%s", err);
	xbd_lists_free(&lists);
	xbd_conf_free(&d.conf);
	return 1;
}
