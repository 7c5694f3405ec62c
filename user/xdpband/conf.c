/* conf.c - see conf.h. One table row per key: its section, its parser and whether it may be
 * repeated; parsing, the error messages and the man page's key list follow that table.
 * inih reads the file, a regular text file only, through our reader, which counts lines (every
 * error names its line) and refuses bytes that are not text and indented keys. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <math.h>
#include <net/if.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>
#include <ini.h>
#include "conf.h"
#include "files.h"
#include "libxdpban.h"
#include "xdpban_flat.h"
#include "xdpban_maps.h"
#include "xdpban_policy.h"
#include "control.h"

#define WHY_LEN XB_ERRLEN

struct conf_key;
struct conf_parse;
/* A parser stores the value in p->conf, or explains in why (WHY_LEN) what is wrong with it. */
typedef int (*conf_parse_fn)(struct conf_parse *p, const struct conf_key *k, const char *value,
			     char *why);

struct conf_key {
	const char *section;
	const char *name;
	conf_parse_fn parse;
	size_t off;      /* the field, for the generic parsers */
	bool repeatable; /* list files: each line adds one */
};

/* State of one parse: the config being filled, where we are, and the first error. */
struct conf_parse {
	struct xbd_conf *conf;
	const char *path;
	char dir[PATH_MAX];            /* the config file's directory, for relative paths */
	FILE *file;
	int line;
	bool line_too_long;
	int bad_byte;                  /* a byte that is not text, on line bad_byte_line */
	int bad_byte_line;
	int read_errno;                /* the read failed */
	int indented_line;             /* a key or section that does not start the line */
	int first_line[64];            /* per table row: line it was first set on, 0 = not yet */
	char err[XB_ERRLEN];
	int err_line;
	bool failed;
};

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

/* An absolute path, or one relative to the config file's directory. */
static int resolve_path(const struct conf_parse *p, const char *value, char **out, char *why)
{
	char buf[PATH_MAX];
	int n;

	if (!value[0]) {
		snprintf(why, WHY_LEN, "empty path");
		return -EINVAL;
	}
	n = value[0] == '/' ? snprintf(buf, sizeof(buf), "%s", value)
			    : snprintf(buf, sizeof(buf), "%s/%s", p->dir, value);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		snprintf(why, WHY_LEN, "path too long");
		return -ENAMETOOLONG;
	}
	free(*out);
	*out = strdup(buf);
	return *out ? 0 : -ENOMEM;
}

static int parse_path(struct conf_parse *p, const struct conf_key *k, const char *value,
		      char *why)
{
	return resolve_path(p, value, FIELD(p, k, char *), why);
}

static int parse_path_or_off(struct conf_parse *p, const struct conf_key *k, const char *value,
			     char *why)
{
	char **field = FIELD(p, k, char *);

	if (strcmp(value, "off"))
		return resolve_path(p, value, field, why);
	free(*field);
	*field = NULL;
	return 0;
}

static int parse_list(struct conf_parse *p, const struct conf_key *k, const char *value,
		      char *why)
{
	struct xbd_conf *c = p->conf;
	struct xbd_list_conf *l = &c->lists[c->n_lists];
	int ret;

	if (c->n_lists == XBD_MAX_LISTS) {
		snprintf(why, WHY_LEN, "more than %d list files", XBD_MAX_LISTS);
		return -E2BIG;
	}
	l->path = NULL;
	ret = resolve_path(p, value, &l->path, why);
	if (ret)
		return ret;
	l->verdict = !strcmp(k->name, "trusted") ? XDPBAN_POLICY_TRUSTED : XDPBAN_POLICY_DENY;
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

#define F(field) offsetof(struct xbd_conf, field)
static const struct conf_key conf_keys[] = {
	{ "xdp", "interfaces", parse_ifaces, 0, false },
	{ "xdp", "mode", parse_mode, 0, false },
	{ "xdp", "pin-dir", parse_path, F(pin_dir), false },
	{ "xdp", "detach-on-exit", parse_bool, F(detach_on_exit), false },
	{ "bans", "limit", parse_threshold, 0, false },
	{ "bans", "window", parse_threshold, 0, false },
	{ "bans", "ban-time", parse_threshold, 0, false },
	{ "bans", "ipv6-prefix", parse_threshold, 0, false },
	{ "bans", "errors", parse_threshold, 0, false },
	{ "bans", "drop", parse_threshold, 0, false },
	{ "bans", "counters-max", parse_table_size, F(counters_max), false },
	{ "bans", "bans-max", parse_table_size, F(bans_max), false },
	{ "lists", "policy-lines-max", parse_table_size, F(policy_lines_max), false },
	{ "lists", "trusted", parse_list, 0, true },
	{ "lists", "deny", parse_list, 0, true },
	{ "control", "socket", parse_socket, F(socket_path), false },
	{ "control", "socket-mode", parse_socket_mode, 0, false },
	{ "control", "group", parse_group, 0, false },
	{ "control", "group-access", parse_group_access, 0, false },
	{ "metrics", "listen", parse_listen, 0, false },
	{ "state", "file", parse_path_or_off, F(state_file), false },
	{ "state", "save-interval", parse_duration_field, F(save_interval_s), false },
	{ "escalation", "enabled", parse_bool, F(esc.enabled), false },
	{ "escalation", "factor", parse_factor, 0, false },
	{ "escalation", "max-ban-time", parse_duration_field, F(esc.max_ban_s), false },
	{ "escalation", "period", parse_duration_field, F(esc.period_s), false },
};
#undef F
#define N_KEYS (sizeof(conf_keys) / sizeof(conf_keys[0]))
_Static_assert(N_KEYS <= 64, "conf_parse.first_line is too small");

static const struct conf_key *find_key(const char *section, const char *name, bool *section_known)
{
	*section_known = false;
	for (size_t i = 0; i < N_KEYS; i++) {
		if (strcmp(conf_keys[i].section, section))
			continue;
		*section_known = true;
		if (!strcmp(conf_keys[i].name, name))
			return &conf_keys[i];
	}
	return NULL;
}

/* Records the first error as "FILE:LINE: ..."; returns 0, which tells inih it failed. */
__attribute__((format(printf, 2, 3))) static int parse_error(struct conf_parse *p,
							      const char *fmt, ...)
{
	int n = snprintf(p->err, sizeof(p->err), "%s:%d: ", p->path, p->line);
	va_list ap;

	if (n > 0 && (size_t)n < sizeof(p->err)) {
		va_start(ap, fmt);
		vsnprintf(p->err + n, sizeof(p->err) - n, fmt, ap);
		va_end(ap);
	}
	p->failed = true;
	p->err_line = p->line;
	return 0;
}

/* '#' starts a comment only at the start of a line. inih keeps a '#' after a value in the
 * value, where "eth1  # uplink" would name a second interface "#": refused, not guessed at. */
static bool has_inline_hash(const char *value)
{
	for (const char *h = strchr(value, '#'); h; h = strchr(h + 1, '#'))
		if (h == value || isspace((unsigned char)h[-1]))
			return true;
	return false;
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
	struct conf_parse *p = user;
	char why[WHY_LEN] = "";
	const struct conf_key *k;
	bool section_known;
	int *first;

	if (p->failed)
		return 0;
	k = find_key(section, name, &section_known);
	if (!k && !section[0])
		return parse_error(p, "key '%s' is outside any [section]", name);
	if (!k && !section_known)
		return parse_error(p, "unknown section [%s]", section);
	if (!k)
		return parse_error(p, "unknown key '%s' in section [%s]", name, section);
	first = &p->first_line[k - conf_keys];
	if (*first && !k->repeatable)
		return parse_error(p, "[%s] %s = '%s': already set on line %d", section, name,
				   value, *first);
	if (!*first)
		*first = p->line;
	if (has_inline_hash(value))
		return parse_error(p, "[%s] %s = '%s': '#' starts a comment only at the start of a line; after a value write ' ;' instead",
				   section, name, value);
	if (k->parse(p, k, value, why))
		return parse_error(p, "[%s] %s = '%s': %s", section, name, value,
				   why[0] ? why : "invalid value");
	return 1;
}

/* inih joins a line that starts with a space or a tab to the previous value (a continuation
 * line), so "  mode = skb" would become a second value of the key above it. Only comments and
 * blank lines may be indented. */
static bool indented_entry(const char *line)
{
	const char *first = line + strspn(line, " \t");

	return first != line && !strchr("#;\r\n", *first);
}

/* inih's reader: one line into buf, like fgets, but it counts lines for the error messages,
 * stops at a byte that is not text (fgets would hand inih a line cut at a NUL), refuses a line
 * inih would silently cut, and stops the parse at the first error. */
static char *read_line(char *buf, int size, void *stream)
{
	struct conf_parse *p = stream;
	int n = 0, c = 0;

	if (p->failed)
		return NULL;
	while (n < size - 1 && c != '\n' && (c = getc(p->file)) != EOF) {
		if (xbd_byte_not_text(c)) {
			p->bad_byte = c;
			p->bad_byte_line = p->line + 1;
			return NULL;
		}
		buf[n++] = (char)c;
	}
	if (c == EOF && ferror(p->file))
		p->read_errno = errno ?: EIO;
	if (n == 0)
		return NULL;
	buf[n] = '\0';
	p->line++;
	if (c != '\n' && c != EOF && (c = getc(p->file)) != '\n' && c != EOF) {
		p->line_too_long = true;
		return NULL;
	}
	if (indented_entry(buf)) {
		p->indented_line = p->line;
		return NULL;
	}
	return buf;
}

static int key_line(const struct conf_parse *p, const char *name)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (!strcmp(conf_keys[i].name, name))
			return p->first_line[i];
	return 0;
}

static int check_cross_keys(struct conf_parse *p)
{
	const struct xbd_conf *c = p->conf;
	int line = key_line(p, "max-ban-time") ?: key_line(p, "ban-time");
	char a[32], b[32];

	if (c->esc.enabled && c->esc.max_ban_s < c->dp.ban_s) {
		xbd_format_duration(c->esc.max_ban_s, a, sizeof(a));
		xbd_format_duration(c->dp.ban_s, b, sizeof(b));
		snprintf(p->err, sizeof(p->err),
			 "%s:%d: [escalation] max-ban-time = '%s' is shorter than [bans] ban-time = '%s'",
			 p->path, line, a, b);
		return -EINVAL;
	}
	return 0;
}

static int set_defaults(struct xbd_conf *c, const char *path)
{
	const struct xdpban_config dp = XDPBAN_CONFIG_DEFAULTS;
	char why[WHY_LEN];

	memset(c, 0, sizeof(*c));
	c->path = strdup(path);
	c->mode = XBD_MODE_AUTO;
	c->pin_dir = strdup(XDPBAN_PIN_DIR_DEFAULT);
	c->detach_on_exit = true;
	c->dp = dp;
	c->counters_max = XDPBAN_DEFAULT_COUNTERS_MAX;
	c->bans_max = XDPBAN_DEFAULT_BANS_MAX;
	c->policy_lines_max = XDPBAN_DEFAULT_FLAT4X_MAX;
	c->socket_path = strdup(XB_CONTROL_SOCKET_DEFAULT);
	c->socket_mode = 0600;
	c->state_file = strdup(XBD_STATE_FILE_DEFAULT);
	c->save_interval_s = 60;
	c->esc = (struct xbd_escalation){
		.enabled = true, .factor = 2.0, .max_ban_s = 7 * 86400, .period_s = 7 * 86400,
	};
	if (!c->path || !c->pin_dir || !c->socket_path || !c->state_file)
		return -ENOMEM;
	return set_listen(c, XBD_METRICS_DEFAULT, why);
}

/* dir must hold PATH_MAX bytes. */
static int config_dir(const char *path, char *dir)
{
	char buf[PATH_MAX];
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(buf, sizeof(buf), ".");
	else if (slash == path)
		snprintf(buf, sizeof(buf), "/");
	else
		snprintf(buf, sizeof(buf), "%.*s", (int)(slash - path), path);
	return realpath(buf, dir) ? 0 : -errno;
}

/* Only a regular file (files.h): a directory would read as an empty file (a config of
 * defaults), and a FIFO or a device could block or never end. */
static int open_config(const char *path, FILE **file, char *err, size_t errlen)
{
	int fd, ret = xbd_open_regular(path, "config", XBD_CONF_SIZE_MAX, &fd, err, errlen);

	if (ret)
		return ret;
	*file = fdopen(fd, "r");
	if (*file)
		return 0;
	ret = -errno;
	snprintf(err, errlen, "cannot read config %s: %s", path, strerror(-ret));
	close(fd);
	return ret;
}

/* The first problem of a parse as one line in err, or 0. A byte that is not text is named
 * before anything else: a binary file makes a syntax error of nearly every line. */
static int parse_outcome(struct conf_parse *p, int ini_ret, char *err, size_t errlen)
{
	if (p->read_errno) {
		snprintf(err, errlen, "cannot read config %s: %s", p->path, strerror(p->read_errno));
		return -p->read_errno;
	}
	if (p->bad_byte_line) {
		snprintf(err, errlen, "%s:%d: byte 0x%02x is not text (a binary file?)", p->path,
			 p->bad_byte_line, p->bad_byte);
		return -EINVAL;
	}
	if (ini_ret > 0 && p->failed && ini_ret < p->err_line)
		p->failed = false; /* a syntax error came first: report that one */
	if (p->failed) {
		snprintf(err, errlen, "%s", p->err);
		return -EINVAL;
	}
	if (p->line_too_long) {
		snprintf(err, errlen, "%s:%d: line longer than %d characters", p->path, p->line,
			 INI_MAX_LINE - 1);
		return -EINVAL;
	}
	if (ini_ret) {
		snprintf(err, errlen, "%s:%d: syntax error: expected 'key = value' or '[section]'",
			 p->path, ini_ret > 0 ? ini_ret : p->line);
		return -EINVAL;
	}
	if (p->indented_line) {
		snprintf(err, errlen, "%s:%d: indented line: start keys and sections at the first column (only comments may be indented)",
			 p->path, p->indented_line);
		return -EINVAL;
	}
	return 0;
}

int xbd_conf_load(const char *path, struct xbd_conf *conf, char *err, size_t errlen)
{
	struct conf_parse p = { .conf = conf, .path = path };
	int ret;

	ret = set_defaults(conf, path);
	if (ret) {
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		goto fail;
	}
	ret = config_dir(path, p.dir);
	if (ret) {
		snprintf(err, errlen, "cannot read config %s: %s", path, strerror(-ret));
		goto fail;
	}
	ret = open_config(path, &p.file, err, errlen);
	if (ret)
		goto fail;
	ret = ini_parse_stream(read_line, &p, on_key, &p);
	fclose(p.file);
	ret = parse_outcome(&p, ret, err, errlen);
	if (!ret && check_cross_keys(&p)) {
		snprintf(err, errlen, "%s", p.err);
		ret = -EINVAL;
	}
	if (!ret)
		return 0;
fail:
	xbd_conf_free(conf);
	return ret;
}

void xbd_conf_free(struct xbd_conf *c)
{
	for (int i = 0; i < c->n_ifaces; i++)
		free(c->ifaces[i]);
	for (int i = 0; i < c->n_lists; i++)
		free(c->lists[i].path);
	free(c->path);
	free(c->pin_dir);
	free(c->socket_path);
	free(c->metrics_listen);
	free(c->state_file);
	memset(c, 0, sizeof(*c));
}

const char *xbd_mode_name(enum xbd_mode mode)
{
	switch (mode) {
	case XBD_MODE_NATIVE:
		return "native";
	case XBD_MODE_SKB:
		return "skb";
	default:
		return "auto";
	}
}

static bool str_differs(const char *a, const char *b)
{
	return (a == NULL) != (b == NULL) || (a && strcmp(a, b));
}

static void add_name(char *buf, size_t len, const char *name)
{
	size_t used = strlen(buf);

	snprintf(buf + used, len - used, "%s%s", used ? ", " : "", name);
}

void xbd_conf_restart_keys(const struct xbd_conf *a, const struct xbd_conf *b, char *buf,
			   size_t len)
{
	bool ifaces = a->n_ifaces != b->n_ifaces;

	buf[0] = '\0';
	for (int i = 0; !ifaces && i < a->n_ifaces; i++)
		ifaces = strcmp(a->ifaces[i], b->ifaces[i]) != 0;
	if (ifaces)
		add_name(buf, len, "interfaces");
	if (a->mode != b->mode)
		add_name(buf, len, "mode");
	if (str_differs(a->pin_dir, b->pin_dir))
		add_name(buf, len, "pin-dir");
	if (a->counters_max != b->counters_max)
		add_name(buf, len, "counters-max");
	if (a->bans_max != b->bans_max)
		add_name(buf, len, "bans-max");
	if (a->policy_lines_max != b->policy_lines_max)
		add_name(buf, len, "policy-lines-max");
	if (str_differs(a->socket_path, b->socket_path) || a->socket_mode != b->socket_mode ||
	    a->has_group != b->has_group || a->group != b->group || a->group_full != b->group_full)
		add_name(buf, len, "[control]");
	if (str_differs(a->metrics_listen, b->metrics_listen))
		add_name(buf, len, "[metrics] listen");
	if (str_differs(a->state_file, b->state_file))
		add_name(buf, len, "[state] file");
}

#define SWAP(a, b)                                                                         \
	do {                                                                               \
		__typeof__(a) tmp_ = (a);                                                  \
		(a) = (b);                                                                 \
		(b) = tmp_;                                                                \
	} while (0)

void xbd_conf_keep_restart_keys(struct xbd_conf *next, struct xbd_conf *old)
{
	SWAP(next->n_ifaces, old->n_ifaces);
	for (int i = 0; i < XBD_MAX_IFACES; i++)
		SWAP(next->ifaces[i], old->ifaces[i]);
	SWAP(next->mode, old->mode);
	SWAP(next->pin_dir, old->pin_dir);
	SWAP(next->counters_max, old->counters_max);
	SWAP(next->bans_max, old->bans_max);
	SWAP(next->policy_lines_max, old->policy_lines_max);
	SWAP(next->socket_path, old->socket_path);
	SWAP(next->socket_mode, old->socket_mode);
	SWAP(next->has_group, old->has_group);
	SWAP(next->group, old->group);
	SWAP(next->group_full, old->group_full);
	SWAP(next->metrics_listen, old->metrics_listen);
	SWAP(next->metrics_addr, old->metrics_addr);
	SWAP(next->metrics_addrlen, old->metrics_addrlen);
	SWAP(next->state_file, old->state_file);
}

void xbd_format_duration(__u64 s, char *buf, size_t len)
{
	if (s && s % (7 * 86400) == 0)
		snprintf(buf, len, "%lluw", (unsigned long long)(s / (7 * 86400)));
	else if (s && s % 86400 == 0)
		snprintf(buf, len, "%llud", (unsigned long long)(s / 86400));
	else if (s && s % 3600 == 0)
		snprintf(buf, len, "%lluh", (unsigned long long)(s / 3600));
	else if (s && s % 60 == 0)
		snprintf(buf, len, "%llum", (unsigned long long)(s / 60));
	else
		snprintf(buf, len, "%llus", (unsigned long long)s);
}
