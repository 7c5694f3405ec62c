/* conf_load.c - see conf_load.h. Reading the file: inih reads it, a regular text file only, through our
 * reader, which counts lines (every error names its line) and refuses bytes that are not text
 * and indented keys; each key goes to its row of the table in conf_keys.c, and the first error
 * becomes one line naming file, line, key and value. Also what a reload may change. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ini.h>
#include "conf_fleet.h"
#include "conf_keys.h"
#include "conf_load.h"
#include "evhistory.h"
#include "files.h"
#include "runlists.h"

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
	k = xbd_conf_find_key(section, name, &section_known);
	if (!k && !section[0])
		return parse_error(p, "key '%s' is outside any [section]", name);
	if (!k) /* its section is known: read_line refused an unknown one at its header */
		return parse_error(p, "unknown key '%s' in section [%s]", name, section);
	first = &p->first_line[k - xbd_conf_keys];
	if (*first && !k->repeatable)
		return parse_error(p, "[%s] %s = '%s': already set on line %d", section, name,
				   value, *first);
	if (!*first)
		*first = p->line;
	if (has_inline_hash(value))
		return parse_error(p, "[%s] %s = '%s': '#' starts a comment only at the start of a line; after a value write ' ;' instead",
				   section, name, value);
	p->key = name;
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

/* A section header ("[name]", as inih reads it: the name up to the first ']') naming no section
 * of the key table: refused at the header, so that an unknown section without keys (a typo of a
 * section whose keys are all commented out) is refused too, not skipped. */
static bool unknown_section(struct conf_parse *p, const char *line)
{
	const char *end = line[0] == '[' ? strchr(line + 1, ']') : NULL;
	char name[INI_MAX_LINE];
	bool known;

	if (!end)
		return false; /* not a header, or one inih calls a syntax error */
	snprintf(name, sizeof(name), "%.*s", (int)(end - line - 1), line + 1);
	xbd_conf_find_key(name, "", &known); /* no key is named "": only whether the section is */
	if (!known)
		parse_error(p, "unknown section [%s]", name);
	return !known;
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
	return unknown_section(p, buf) ? NULL : buf;
}

static int key_line(const struct conf_parse *p, const char *name)
{
	for (size_t i = 0; i < xbd_conf_n_keys; i++)
		if (!strcmp(xbd_conf_keys[i].name, name))
			return p->first_line[i];
	return 0;
}

/* The [fleet] keys together, with FILE:LINE of the user key. */
static int check_fleet(struct conf_parse *p)
{
	char why[WHY_LEN / 2]; /* the message is short; FILE:LINE goes before it */

	if (!xbd_conf_fleet_check(&p->conf->fleet, why, sizeof(why)))
		return 0;
	snprintf(p->err, sizeof(p->err), "%s:%d: %s", p->path, key_line(p, "user"), why);
	return -EINVAL;
}

/* The history beside the state file must not be the state file or its store of runtime lists,
 * which its appends would spoil. */
static int check_history(struct conf_parse *p)
{
	const struct xbd_conf *c = p->conf;
	char *path = xbd_evhistory_path(c->state_file, c->history), *store;
	bool clash;

	if (!path)
		return 0;
	store = xbd_runtime_store(c->state_file);
	clash = !strcmp(path, c->state_file) || (store && !strcmp(path, store));
	if (clash)
		snprintf(p->err, sizeof(p->err),
			 "%s:%d: [events] history = '%s' is a file of [state] file (%s)", p->path,
			 key_line(p, "history"), c->history, path);
	free(path);
	free(store);
	return clash ? -EINVAL : 0;
}

static int check_cross_keys(struct conf_parse *p)
{
	const struct xbd_conf *c = p->conf;
	int line = key_line(p, "max-ban-time") ?: key_line(p, "ban-time");
	char a[XB_DURATION_TEXT_MAX], b[XB_DURATION_TEXT_MAX];

	if (c->esc.enabled && c->esc.max_ban_s < c->dp.ban_s) {
		xb_duration_format(c->esc.max_ban_s, a, sizeof(a));
		xb_duration_format(c->dp.ban_s, b, sizeof(b));
		snprintf(p->err, sizeof(p->err),
			 "%s:%d: [escalation] max-ban-time = '%s' is shorter than [bans] ban-time = '%s'",
			 p->path, line, a, b);
		return -EINVAL;
	}
	return check_history(p) ?: check_fleet(p);
}

/* A port's limits apply to its guard's protocol errors: a port without a guard has none, and
 * its limits would never apply. Checked once [ports] is read, wherever it is in the file. */
static int check_port_rules(struct conf_parse *p)
{
	const struct xbd_conf *c = p->conf;

	for (__u32 i = 0; i < XDPBAN_PORT_RULES; i++) {
		__u16 port = c->dp.port_rule[i].port;

		if (port && !(xb_ports_byte(c->ports, port) & XDPBAN_PORT_GUARD_MASK)) {
			snprintf(p->err, sizeof(p->err),
				 "%s:%d: [bans] the limits of port %u: it has no [ports] guard, so they would never apply",
				 p->path, p->port_rule_line[i], port);
			return -EINVAL;
		}
	}
	return 0;
}

/* probe-icmp needs an open port list, which may come after it in the file: checked once the
 * whole file is read. Then the thresholds carry the flags of the port rules. */
static int finish_ports(struct conf_parse *p)
{
	struct xbd_conf *c = p->conf;
	char why[WHY_LEN / 2]; /* the message is short; FILE:LINE goes before it */

	if (c->probe_icmp && xb_ports_probe_icmp(c->ports, "[ports] probe-icmp", why, sizeof(why))) {
		snprintf(p->err, sizeof(p->err), "%s:%d: %s", p->path, key_line(p, "probe-icmp"),
			 why);
		return -EINVAL;
	}
	c->dp.ports = c->ports->flags;
	return check_port_rules(p);
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

/* Reads the file into conf; with missing_ok, a file (or folder) that does not exist is read as
 * an empty one: every key at its default. */
static int load(const char *path, bool missing_ok, struct xbd_conf *conf, char *err,
		size_t errlen)
{
	struct conf_parse p = { .conf = conf, .path = path };
	int ret;

	ret = xbd_conf_defaults(conf, path);
	if (ret) {
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		goto fail;
	}
	ret = config_dir(path, p.dir);
	if (ret) {
		snprintf(err, errlen, "cannot read config %s: %s", path, strerror(-ret));
	} else {
		ret = open_config(path, &p.file, err, errlen);
		if (!ret) {
			ret = ini_parse_stream(read_line, &p, on_key, &p);
			fclose(p.file);
			ret = parse_outcome(&p, ret, err, errlen);
		}
	}
	if (ret == -ENOENT && missing_ok)
		ret = 0;
	if (!ret && (check_cross_keys(&p) || finish_ports(&p))) {
		snprintf(err, errlen, "%s", p.err);
		ret = -EINVAL;
	}
	if (!ret)
		return 0;
fail:
	xbd_conf_free(conf);
	return ret;
}

int xbd_conf_load(const char *path, struct xbd_conf *conf, char *err, size_t errlen)
{
	return load(path, false, conf, err, errlen);
}

int xbd_conf_load_or_defaults(const char *path, struct xbd_conf *conf, char *err,
			      size_t errlen)
{
	return load(path, true, conf, err, errlen);
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
	free(c->history);
	free(c->ports);
	xbd_conf_fleet_free(&c->fleet);
	memset(c, 0, sizeof(*c));
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

static bool fleet_differs(const struct xbd_fleet_conf *a, const struct xbd_fleet_conf *b)
{
	return str_differs(a->redis, b->redis) || str_differs(a->stream, b->stream) ||
	       str_differs(a->snapshot, b->snapshot) || str_differs(a->node, b->node) ||
	       str_differs(a->user, b->user) || str_differs(a->password_file, b->password_file) ||
	       a->maxlen != b->maxlen || a->queue_size != b->queue_size;
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
	if (a->policy_lines6_max != b->policy_lines6_max)
		add_name(buf, len, "policy-lines6-max");
	if (str_differs(a->socket_path, b->socket_path) || a->socket_mode != b->socket_mode ||
	    a->has_group != b->has_group || a->group != b->group || a->group_full != b->group_full)
		add_name(buf, len, "[control]");
	if (str_differs(a->metrics_listen, b->metrics_listen))
		add_name(buf, len, "[metrics] listen");
	if (str_differs(a->state_file, b->state_file))
		add_name(buf, len, "[state] file");
	if (str_differs(a->history, b->history) || a->history_max != b->history_max)
		add_name(buf, len, "[events]");
	if (fleet_differs(&a->fleet, &b->fleet))
		add_name(buf, len, "[fleet]");
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
	SWAP(next->policy_lines6_max, old->policy_lines6_max);
	SWAP(next->socket_path, old->socket_path);
	SWAP(next->socket_mode, old->socket_mode);
	SWAP(next->has_group, old->has_group);
	SWAP(next->group, old->group);
	SWAP(next->group_full, old->group_full);
	SWAP(next->metrics_listen, old->metrics_listen);
	SWAP(next->metrics_addr, old->metrics_addr);
	SWAP(next->metrics_addrlen, old->metrics_addrlen);
	SWAP(next->state_file, old->state_file);
	SWAP(next->history, old->history);
	SWAP(next->history_max, old->history_max);
	SWAP(next->fleet, old->fleet); /* the fleet's threads keep pointing at its strings */
}
