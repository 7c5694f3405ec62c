/* conf_keys.c - every key of the config file (deploy/xdpban.conf.5): one table row per key,
 * with its section, its parser and whether it may be repeated, and the defaults. A parser
 * stores one value or says in one phrase what is wrong with it; conf_load.c puts the file, the
 * line and the key around it. The data path's settings go through the library's `set` parser, so
 * that the file and `xdpban set` accept the same values. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <math.h>
#include <net/if.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include "conf_fleet.h"
#include "conf_keys.h"
#include "control.h"
#include "xdpban_flat.h"
#include "xdpban_maps.h"
#include "xdpban_policy.h"

static bool parse_u64_digits(const char *s, __u64 *out, const char **end)
{
	__u64 v = 0;

	if (!isdigit((unsigned char)*s))
		return false;
	for (; isdigit((unsigned char)*s); s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (*s - '0');
	}
	*out = v;
	*end = s;
	return true;
}

#define FIELD(p, k, type) ((type *)((char *)(p)->conf + (k)->off))

static int parse_bool(struct conf_parse *p, const struct conf_key *k, const char *value,
		      char *why)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(value, yes[i]) || !strcasecmp(value, no[i])) {
			*FIELD(p, k, bool) = !strcasecmp(value, yes[i]);
			return 0;
		}
	}
	snprintf(why, WHY_LEN, "not yes or no");
	return -EINVAL;
}

/* The data path thresholds go through the library's `set` parser, so that the file and
 * `xdpban set` accept the same values and refuse the same ones. */
static int set_threshold(struct conf_parse *p, const char *key, const char *value, char *why)
{
	char err[XB_ERRLEN] = "";
	int ret = xb_config_set(&p->conf->dp, key, value, err, sizeof(err));

	if (ret)
		snprintf(why, WHY_LEN, "%s", err[0] ? err : strerror(-ret));
	return ret;
}

static int parse_threshold(struct conf_parse *p, const struct conf_key *k, const char *value,
			   char *why)
{
	return set_threshold(p, k->name, value, why);
}

/* limit.CLASS, window.PORT, ...: the rules of limits, named as `xdpban set` names them. */
static int parse_rule(struct conf_parse *p, const struct conf_key *k, const char *value,
		      char *why)
{
	char seen[XB_ERRLEN];
	int ret;

	if (!xb_config_rule_text(&p->conf->dp, p->key, seen, sizeof(seen)) &&
	    strcmp(seen, XB_RULE_INHERIT)) {
		snprintf(why, WHY_LEN, "already set");
		return -EINVAL;
	}
	ret = set_threshold(p, p->key, value, why);
	for (__u32 i = 0; !ret && i < XDPBAN_PORT_RULES; i++) /* for the guard check's message */
		if (p->conf->dp.port_rule[i].port && !p->port_rule_line[i])
			p->port_rule_line[i] = p->line;
	return ret;
}

/* [spoof] mode is `xdpban set spoof`; hop-tolerance and learn have one name in both. */
static int parse_spoof_mode(struct conf_parse *p, const struct conf_key *k, const char *value,
			    char *why)
{
	return set_threshold(p, "spoof", value, why);
}

/* The same parser as `xdpban set` and `xdpban ban --for`, so that a duration written in one
 * place is accepted everywhere. */
static int parse_duration_field(struct conf_parse *p, const struct conf_key *k,
				const char *value, char *why)
{
	char err[XB_ERRLEN] = "";
	int ret = xb_duration_parse(k->name, value, FIELD(p, k, __u32), err, sizeof(err));

	if (ret)
		snprintf(why, WHY_LEN, "%s", err[0] ? err : strerror(-ret));
	return ret;
}

static int parse_table_size(struct conf_parse *p, const struct conf_key *k, const char *value,
			    char *why)
{
	const char *end;
	__u64 n;

	if (!parse_u64_digits(value, &n, &end) || *end || n < 1 || n > XBD_TABLE_MAX) {
		snprintf(why, WHY_LEN, "not a number of entries from 1 to %u", XBD_TABLE_MAX);
		return -EINVAL;
	}
	*FIELD(p, k, __u32) = n;
	return 0;
}

static bool valid_ifname(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len >= IFNAMSIZ || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	for (; *name; name++)
		if (*name == '/' || *name == ':' || isspace((unsigned char)*name))
			return false;
	return true;
}

static int add_iface(struct xbd_conf *c, const char *name, char *why)
{
	if (!valid_ifname(name)) {
		snprintf(why, WHY_LEN, "'%s' is not an interface name", name);
		return -EINVAL;
	}
	for (int i = 0; i < c->n_ifaces; i++) {
		if (!strcmp(c->ifaces[i], name)) {
			snprintf(why, WHY_LEN, "interface %s is named twice", name);
			return -EINVAL;
		}
	}
	if (c->n_ifaces == XBD_MAX_IFACES) {
		snprintf(why, WHY_LEN, "more than %d interfaces", XBD_MAX_IFACES);
		return -E2BIG;
	}
	c->ifaces[c->n_ifaces] = strdup(name);
	return c->ifaces[c->n_ifaces++] ? 0 : -ENOMEM;
}

/* "eth1 eth2" or "eth1, eth2". */
static int parse_ifaces(struct conf_parse *p, const struct conf_key *k, const char *value,
			char *why)
{
	char *copy = strdup(value), *save = NULL, *name;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	for (name = strtok_r(copy, " \t,", &save); name && !ret;
	     name = strtok_r(NULL, " \t,", &save))
		ret = add_iface(p->conf, name, why);
	free(copy);
	if (!ret && p->conf->n_ifaces == 0) {
		snprintf(why, WHY_LEN, "no interface named");
		ret = -EINVAL;
	}
	return ret;
}

static int parse_mode(struct conf_parse *p, const struct conf_key *k, const char *value,
		      char *why)
{
	for (int m = XBD_MODE_AUTO; m <= XBD_MODE_SKB; m++) {
		if (!strcmp(value, xbd_mode_name(m))) {
			p->conf->mode = m;
			return 0;
		}
	}
	snprintf(why, WHY_LEN, "not native, skb or auto");
	return -EINVAL;
}

static int parse_path(struct conf_parse *p, const struct conf_key *k, const char *value,
		      char *why)
{
	return xbd_conf_resolve_path(p, value, FIELD(p, k, char *), why);
}

static int parse_path_or_off(struct conf_parse *p, const struct conf_key *k, const char *value,
			     char *why)
{
	char **field = FIELD(p, k, char *);

	if (strcmp(value, "off"))
		return xbd_conf_resolve_path(p, value, field, why);
	free(*field);
	*field = NULL;
	return 0;
}

/* A name, not a path: the history lives beside the state file, with its modes and owner. */
static int parse_history(struct conf_parse *p, const struct conf_key *k, const char *value,
			 char *why)
{
	char **field = FIELD(p, k, char *), *copy;

	if (!strcmp(value, "off")) {
		free(*field);
		*field = NULL;
		return 0;
	}
	if (!*value || strchr(value, '/') || !strcmp(value, ".") || !strcmp(value, "..") ||
	    strlen(value) > NAME_MAX) {
		snprintf(why, WHY_LEN,
			 "not a file name (the file is in the state file's directory) or off");
		return -EINVAL;
	}
	copy = strdup(value);
	if (!copy)
		return -ENOMEM;
	free(*field);
	*field = copy;
	return 0;
}

static int parse_history_max(struct conf_parse *p, const struct conf_key *k, const char *value,
			     char *why)
{
	char err[XB_ERRLEN] = "";
	int ret = xb_u32_parse(k->name, value, XBD_HISTORY_MAX_MIN, XBD_HISTORY_MAX_MAX,
			       FIELD(p, k, __u32), err, sizeof(err));

	if (ret)
		snprintf(why, WHY_LEN, "%s", err[0] ? err : strerror(-ret));
	return ret;
}

/* The length of the file in a list value "FILE" or "FILE observe"; *observe says which. */
static size_t list_file_len(const char *value, bool *observe)
{
	const size_t word = strlen(XBD_LIST_OBSERVE_WORD);
	size_t len = strlen(value);

	*observe = len > word && !strcmp(value + len - word, XBD_LIST_OBSERVE_WORD) &&
		   isspace((unsigned char)value[len - word - 1]);
	if (!*observe)
		return len;
	len -= word;
	while (len && isspace((unsigned char)value[len - 1]))
		len--;
	return len;
}

static int parse_list(struct conf_parse *p, const struct conf_key *k, const char *value,
		      char *why)
{
	struct xbd_conf *c = p->conf;
	struct xbd_list_conf *l = &c->lists[c->n_lists];
	bool observe;
	size_t len = list_file_len(value, &observe);
	char *file;
	int ret;

	if (c->n_lists == XBD_MAX_LISTS) {
		snprintf(why, WHY_LEN, "more than %d list files", XBD_MAX_LISTS);
		return -E2BIG;
	}
	if (observe && strcmp(k->name, "deny")) {
		snprintf(why, WHY_LEN, "'%s' applies to deny lists only", XBD_LIST_OBSERVE_WORD);
		return -EINVAL;
	}
	file = strndup(value, len);
	if (!file)
		return -ENOMEM;
	l->path = NULL;
	ret = xbd_conf_resolve_path(p, file, &l->path, why);
	free(file);
	if (ret)
		return ret;
	l->verdict = !strcmp(k->name, "trusted") ? XDPBAN_POLICY_TRUSTED
		     : observe			 ? XBD_LIST_OBSERVED
		     : !strcmp(k->name, "deny")	 ? XDPBAN_POLICY_DENY
		     : !strcmp(k->name, "allow") ? XDPBAN_POLICY_ALLOWED
						 : XBD_LIST_NEVER_BAN;
	l->id = ++c->n_lists;
	return 0;
}

static int parse_socket(struct conf_parse *p, const struct conf_key *k, const char *value,
			char *why)
{
	const size_t max = sizeof(((struct sockaddr_un *)0)->sun_path) - 1;
	int ret = parse_path(p, k, value, why);

	if (!ret && strlen(p->conf->socket_path) > max) {
		snprintf(why, WHY_LEN, "longer than %zu characters, the limit of a Unix socket path",
			 max);
		ret = -ENAMETOOLONG;
	}
	return ret;
}

static int parse_socket_mode(struct conf_parse *p, const struct conf_key *k, const char *value,
			     char *why)
{
	unsigned long mode;
	char *end;

	errno = 0;
	mode = strtoul(value, &end, 8);
	if (errno || end == value || *end || mode > 0777 || (mode & 0600) != 0600) {
		snprintf(why, WHY_LEN,
			 "not an octal mode from 0600 to 0777 (the owner keeps read and write)");
		return -EINVAL;
	}
	p->conf->socket_mode = mode;
	return 0;
}

static int parse_group(struct conf_parse *p, const struct conf_key *k, const char *value,
		       char *why)
{
	struct group *gr = getgrnam(value);
	unsigned long gid;
	char *end;

	if (gr) {
		gid = gr->gr_gid;
	} else {
		errno = 0;
		gid = strtoul(value, &end, 10);
		if (errno || end == value || *end || gid >= (gid_t)-1) {
			snprintf(why, WHY_LEN, "no such group");
			return -ENOENT;
		}
	}
	p->conf->group = gid;
	p->conf->has_group = true;
	return 0;
}

static int parse_group_access(struct conf_parse *p, const struct conf_key *k, const char *value,
			      char *why)
{
	if (strcmp(value, "read-only") && strcmp(value, "full")) {
		snprintf(why, WHY_LEN, "not read-only or full");
		return -EINVAL;
	}
	p->conf->group_full = !strcmp(value, "full");
	return 0;
}

/* "127.0.0.1:9433" or "[::1]:9433" into a socket address. */
static int parse_sockaddr(const char *value, struct sockaddr_storage *ss, socklen_t *sslen)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	const char *colon = strrchr(value, ':'), *end;
	char host[INET6_ADDRSTRLEN];
	size_t hostlen;
	__u64 port;

	if (!colon || !parse_u64_digits(colon + 1, &port, &end) || *end || port < 1 ||
	    port > 65535)
		return -EINVAL;
	hostlen = colon - value;
	if (hostlen >= 2 && value[0] == '[' && value[hostlen - 1] == ']') {
		value++;
		hostlen -= 2;
	}
	if (hostlen == 0 || hostlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, value, hostlen);
	host[hostlen] = '\0';
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		*sslen = sizeof(*sin);
	} else if (colon[-1] == ']' && inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		*sslen = sizeof(*sin6);
	} else {
		return -EINVAL;
	}
	return 0;
}

static int set_listen(struct xbd_conf *c, const char *value, char *why)
{
	free(c->metrics_listen);
	c->metrics_listen = NULL;
	if (!strcmp(value, "off"))
		return 0;
	if (parse_sockaddr(value, &c->metrics_addr, &c->metrics_addrlen)) {
		snprintf(why, WHY_LEN, "not ADDRESS:PORT (e.g. 127.0.0.1:9433 or [::1]:9433) or off");
		return -EINVAL;
	}
	c->metrics_listen = strdup(value);
	return c->metrics_listen ? 0 : -ENOMEM;
}

static int parse_listen(struct conf_parse *p, const struct conf_key *k, const char *value,
			char *why)
{
	return set_listen(p->conf, value, why);
}

/* Digits, then at most one '.' and more digits: strtod alone would also take "0x2", "1e1",
 * "inf" and leading spaces, which no other number of the file accepts. */
static bool plain_decimal(const char *s)
{
	size_t whole = strspn(s, "0123456789"), frac;

	if (!whole)
		return false;
	if (s[whole] != '.')
		return !s[whole];
	frac = strspn(s + whole + 1, "0123456789");
	return frac && !s[whole + 1 + frac];
}

static int parse_factor(struct conf_parse *p, const struct conf_key *k, const char *value,
			char *why)
{
	char *end;
	double f;

	errno = 0;
	f = plain_decimal(value) ? strtod(value, &end) : NAN;
	if (errno || isnan(f) || *end || f <= 1.0 || f > 1000.0) {
		snprintf(why, WHY_LEN, "not a decimal number above 1 and at most 1000 (like 2 or 1.5)");
		return -EINVAL;
	}
	p->conf->esc.factor = f;
	return 0;
}

/* The library's parsers, so that status describes the rules in the text the file takes. */
static int parse_open_ports(struct conf_parse *p, const struct conf_key *k, const char *value,
			    char *why)
{
	__u8 bit = !strcmp(k->name, "open-tcp") ? XDPBAN_PORT_TCP_OPEN : XDPBAN_PORT_UDP_OPEN;

	return xb_ports_add_open(p->conf->ports, bit, k->name, value, why, WHY_LEN);
}

static int parse_guards(struct conf_parse *p, const struct conf_key *k, const char *value,
			char *why)
{
	return xb_ports_add_guards(p->conf->ports, k->name, value, why, WHY_LEN);
}

#define F(field) offsetof(struct xbd_conf, field)
const struct conf_key xbd_conf_keys[] = {
	{ "xdp", "interfaces", parse_ifaces, 0, false },
	{ "xdp", "mode", parse_mode, 0, false },
	{ "xdp", "pin-dir", parse_path, F(pin_dir), false },
	{ "xdp", "detach-on-exit", parse_bool, F(detach_on_exit), false },
	{ "bans", "limit", parse_threshold, 0, false },
	{ "bans", "window", parse_threshold, 0, false },
	{ "bans", "ban-time", parse_threshold, 0, false },
	{ "bans", "limit.*", parse_rule, 0, true },
	{ "bans", "window.*", parse_rule, 0, true },
	{ "bans", "ban-time.*", parse_rule, 0, true },
	{ "bans", "ipv6-prefix", parse_threshold, 0, false },
	{ "bans", "errors", parse_threshold, 0, false },
	{ "bans", "drop", parse_threshold, 0, false },
	{ "bans", "mode", parse_threshold, 0, false },
	{ "bans", "counters-max", parse_table_size, F(counters_max), false },
	{ "bans", "bans-max", parse_table_size, F(bans_max), false },
	{ "spoof", "mode", parse_spoof_mode, 0, false },
	{ "spoof", "hop-tolerance", parse_threshold, 0, false },
	{ "spoof", "learn", parse_threshold, 0, false },
	{ "lists", "policy-lines-max", parse_table_size, F(policy_lines_max), false },
	{ "lists", "policy-lines6-max", parse_table_size, F(policy_lines6_max), false },
	{ "lists", "allow", parse_list, 0, true },
	{ "lists", "trusted", parse_list, 0, true },
	{ "lists", "deny", parse_list, 0, true },
	{ "lists", "never-ban", parse_list, 0, true },
	{ "lists", "ignore-errors", parse_bool, F(lists_ignore_errors), false },
	{ "control", "socket", parse_socket, F(socket_path), false },
	{ "control", "socket-mode", parse_socket_mode, 0, false },
	{ "control", "group", parse_group, 0, false },
	{ "control", "group-access", parse_group_access, 0, false },
	{ "metrics", "listen", parse_listen, 0, false },
	{ "state", "file", parse_path_or_off, F(state_file), false },
	{ "state", "save-interval", parse_duration_field, F(save_interval_s), false },
	{ "events", "history", parse_history, F(history), false },
	{ "events", "history-max", parse_history_max, F(history_max), false },
	{ "escalation", "enabled", parse_bool, F(esc.enabled), false },
	{ "escalation", "factor", parse_factor, 0, false },
	{ "escalation", "max-ban-time", parse_duration_field, F(esc.max_ban_s), false },
	{ "escalation", "period", parse_duration_field, F(esc.period_s), false },
	{ "ports", "guard", parse_guards, 0, true },
	{ "ports", "open-tcp", parse_open_ports, 0, true },
	{ "ports", "open-udp", parse_open_ports, 0, true },
	{ "ports", "probe-icmp", parse_bool, F(probe_icmp), false },
	{ "fleet", "redis", xbd_conf_parse_fleet_redis, 0, false },
	{ "fleet", "stream", xbd_conf_parse_fleet_key, F(fleet.stream), false },
	{ "fleet", "snapshot", xbd_conf_parse_fleet_key, F(fleet.snapshot), false },
	{ "fleet", "node", xbd_conf_parse_fleet_name, F(fleet.node), false },
	{ "fleet", "user", xbd_conf_parse_fleet_name, F(fleet.user), false },
	{ "fleet", "password-file", xbd_conf_parse_fleet_secret, F(fleet.password_file), false },
	{ "fleet", "key-file", xbd_conf_parse_fleet_key_file, F(fleet.key_file), false },
	{ "fleet", "maxlen", xbd_conf_parse_fleet_maxlen, 0, false },
	{ "fleet", "queue-size", xbd_conf_parse_fleet_queue, 0, false },
	{ "fleet", "remote-share", xbd_conf_parse_fleet_share, 0, false },
};
#undef F
#define N_KEYS (sizeof(xbd_conf_keys) / sizeof(xbd_conf_keys[0]))
_Static_assert(N_KEYS <= XBD_CONF_KEYS_MAX, "conf_parse.first_line is too small");
const size_t xbd_conf_n_keys = N_KEYS;

/* A row "NAME.*" takes every "NAME.SOMETHING". */
static bool pattern_match(const char *row, const char *name)
{
	size_t len = strlen(row);

	return len > 2 && !strcmp(row + len - 2, ".*") && !strncmp(row, name, len - 1) &&
	       name[len - 1];
}

const struct conf_key *xbd_conf_find_key(const char *section, const char *name,
					 bool *section_known)
{
	*section_known = false;
	for (size_t i = 0; i < N_KEYS; i++) {
		if (strcmp(xbd_conf_keys[i].section, section))
			continue;
		*section_known = true;
		if (!strcmp(xbd_conf_keys[i].name, name) || pattern_match(xbd_conf_keys[i].name, name))
			return &xbd_conf_keys[i];
	}
	return NULL;
}

int xbd_conf_defaults(struct xbd_conf *c, const char *path)
{
	const struct xdpban_config dp = XDPBAN_CONFIG_DEFAULTS;
	char why[WHY_LEN];

	memset(c, 0, sizeof(*c));
	c->path = strdup(path);
	c->mode = XBD_MODE_AUTO;
	c->pin_dir = strdup(XDPBAN_PIN_DIR_DEFAULT);
	c->detach_on_exit = false; /* a stop or restart leaves the interfaces filtered */
	c->dp = dp;
	c->counters_max = XDPBAN_DEFAULT_COUNTERS_MAX;
	c->bans_max = XDPBAN_DEFAULT_BANS_MAX;
	c->policy_lines_max = XDPBAN_DEFAULT_FLAT4X_MAX;
	c->policy_lines6_max = XDPBAN_DEFAULT_FLAT6X_MAX;
	c->socket_path = strdup(XB_CONTROL_SOCKET_DEFAULT);
	c->socket_mode = 0600;
	c->state_file = strdup(XBD_STATE_FILE_DEFAULT);
	c->save_interval_s = 60;
	c->history = strdup(XBD_HISTORY_DEFAULT);
	c->history_max = XBD_HISTORY_MAX_DEFAULT;
	c->esc = (struct xbd_escalation){
		.enabled = true, .factor = 2.0, .max_ban_s = 7 * 86400, .period_s = 7 * 86400,
	};
	c->ports = calloc(1, sizeof(*c->ports)); /* 64 KiB: never on a stack */
	if (!c->path || !c->pin_dir || !c->socket_path || !c->state_file || !c->history ||
	    !c->ports ||
	    xbd_conf_fleet_defaults(&c->fleet))
		return -ENOMEM;
	return set_listen(c, XBD_METRICS_DEFAULT, why);
}
