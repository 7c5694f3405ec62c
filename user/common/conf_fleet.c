/* conf_fleet.c - the parsers of the [fleet] keys (their table rows are in conf_keys.c, their
 * defaults and ranges in conf.h). Like every parser, each stores one value or says in one
 * phrase what is wrong with it. The password file is only looked at (owner, mode), never
 * read: fleet.c reads it at start. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "conf_fleet.h"

#define FIELD(p, k) ((char **)((char *)(p)->conf + (k)->off))

static int set_string(char **field, const char *value)
{
	char *copy = strdup(value);

	if (!copy)
		return -ENOMEM;
	free(*field);
	*field = copy;
	return 0;
}

static bool host_name_char(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == '-';
}

/* An IPv4 address, a bracketed IPv6 address or a host name (letters, digits, '.', '-'). */
static int split_host(const char *host, size_t len, char *out, size_t outlen)
{
	struct in6_addr a6;

	if (len >= 2 && host[0] == '[' && host[len - 1] == ']') {
		if (len - 2 >= outlen)
			return -EINVAL;
		memcpy(out, host + 1, len - 2);
		out[len - 2] = '\0';
		return inet_pton(AF_INET6, out, &a6) == 1 ? 0 : -EINVAL;
	}
	if (!len || len >= outlen)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (!host_name_char(host[i]))
			return -EINVAL;
	memcpy(out, host, len);
	out[len] = '\0';
	return 0;
}

/* "HOST:PORT", "[V6]:PORT", with or without "redis://"; or off. */
int xbd_conf_parse_fleet_redis(struct conf_parse *p, const struct conf_key *k,
			       const char *value, char *why)
{
	struct xbd_fleet_conf *f = &p->conf->fleet;
	const char *v = strncmp(value, "redis://", 8) ? value : value + 8;
	const char *colon = strrchr(v, ':');
	char host[256], *end;
	unsigned long port;

	free(f->redis);
	free(f->redis_host);
	f->redis = f->redis_host = NULL;
	if (!strcmp(value, "off"))
		return 0;
	errno = 0;
	port = colon ? strtoul(colon + 1, &end, 10) : 0;
	if (!colon || errno || !isdigit((unsigned char)colon[1]) || *end || port < 1 ||
	    port > 65535 || split_host(v, colon - v, host, sizeof(host))) {
		snprintf(why, WHY_LEN, "not HOST:PORT (like 192.0.2.10:6379 or [2001:db8::10]:6379) or off");
		return -EINVAL;
	}
	f->redis_port = (__u16)port;
	if (set_string(&f->redis, value) || set_string(&f->redis_host, host))
		return -ENOMEM;
	return 0;
}

static bool name_ok(const char *s, size_t max, const char *extra)
{
	size_t len = strlen(s);

	if (!len || len > max)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._-", *s) && !strchr(extra, *s))
			return false;
	return true;
}

/* node and user: 1 to 64 of letters, digits, '.', '_' and '-'. */
int xbd_conf_parse_fleet_name(struct conf_parse *p, const struct conf_key *k, const char *value,
			      char *why)
{
	if (!name_ok(value, XBD_FLEET_NAME_MAX, "")) {
		snprintf(why, WHY_LEN, "not 1 to %d letters, digits, '.', '_' or '-'",
			 XBD_FLEET_NAME_MAX);
		return -EINVAL;
	}
	return set_string(FIELD(p, k), value);
}

/* stream and snapshot: Redis key names, 1 to 128 of those and ':', '{', '}' (hash tags). */
int xbd_conf_parse_fleet_key(struct conf_parse *p, const struct conf_key *k, const char *value,
			     char *why)
{
	if (!name_ok(value, XBD_FLEET_KEY_MAX, ":{}")) {
		snprintf(why, WHY_LEN, "not 1 to %d letters, digits, '.', '_', '-', ':', '{' or '}'",
			 XBD_FLEET_KEY_MAX);
		return -EINVAL;
	}
	return set_string(FIELD(p, k), value);
}

/* A secret (the password, the signing key) must stay root's: a regular file owned by root
 * that neither its group nor others can read or write. */
int xbd_conf_parse_fleet_secret(struct conf_parse *p, const struct conf_key *k,
				const char *value, char *why)
{
	char **field = FIELD(p, k);
	struct stat st;
	int ret = xbd_conf_resolve_path(p, value, field, why);

	if (ret)
		return ret;
	if (stat(*field, &st)) {
		ret = -errno;
		snprintf(why, WHY_LEN, "%s", strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		snprintf(why, WHY_LEN, "not a regular file");
	} else if (st.st_uid != 0) {
		ret = -EPERM;
		snprintf(why, WHY_LEN, "owned by uid %u: it must be owned by root",
			 (unsigned int)st.st_uid);
	} else if (st.st_mode & 077) {
		ret = -EPERM;
		snprintf(why, WHY_LEN, "mode %04o lets its group or others at it: chmod 600 it",
			 (unsigned int)(st.st_mode & 07777));
	}
	return ret;
}

/* The signing key: a secret file as the password's, read whole now, XBD_FLEET_SECRET_MIN to
 * _MAX bytes without its final newline. */
int xbd_conf_parse_fleet_key_file(struct conf_parse *p, const struct conf_key *k,
				  const char *value, char *why)
{
	unsigned char buf[XBD_FLEET_SECRET_MAX];
	char **field = FIELD(p, k);
	int fd, ret = xbd_conf_parse_fleet_secret(p, k, value, why);
	ssize_t n;

	if (ret)
		return ret;
	fd = open(*field, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf));
	ret = n < 0 ? -errno : 0;
	if (fd >= 0)
		close(fd);
	if (ret)
		snprintf(why, WHY_LEN, "%s", strerror(-ret));
	else
		ret = xbd_fleet_secret_parse(buf, (size_t)n, &p->conf->fleet.key, why, WHY_LEN);
	explicit_bzero(buf, sizeof(buf));
	return ret;
}

static int parse_count(const char *value, __u32 min, __u32 max, __u32 *out, char *why)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = isdigit((unsigned char)value[0]) ? strtoull(value, &end, 10) : 0;
	if (!isdigit((unsigned char)value[0]) || errno || *end || v < min || v > max) {
		snprintf(why, WHY_LEN, "not a number from %u to %u", min, max);
		return -EINVAL;
	}
	*out = (__u32)v;
	return 0;
}

int xbd_conf_parse_fleet_maxlen(struct conf_parse *p, const struct conf_key *k,
				const char *value, char *why)
{
	return parse_count(value, XBD_FLEET_MAXLEN_MIN, XBD_FLEET_MAXLEN_MAX,
			   &p->conf->fleet.maxlen, why);
}

int xbd_conf_parse_fleet_queue(struct conf_parse *p, const struct conf_key *k,
			       const char *value, char *why)
{
	return parse_count(value, XBD_FLEET_QUEUE_MIN, XBD_FLEET_QUEUE_MAX,
			   &p->conf->fleet.queue_size, why);
}

/* "50%" (or "50"): a share of the ban table, 1 to 100 percent. */
int xbd_conf_parse_fleet_share(struct conf_parse *p, const struct conf_key *k,
			       const char *value, char *why)
{
	char digits[16];
	size_t len = strlen(value);

	if (len && value[len - 1] == '%')
		len--;
	if (!len || len >= sizeof(digits)) {
		snprintf(why, WHY_LEN, "not a share from %u%% to %u%%", XBD_FLEET_REMOTE_SHARE_MIN,
			 XBD_FLEET_REMOTE_SHARE_MAX);
		return -EINVAL;
	}
	memcpy(digits, value, len);
	digits[len] = '\0';
	if (parse_count(digits, XBD_FLEET_REMOTE_SHARE_MIN, XBD_FLEET_REMOTE_SHARE_MAX,
			&p->conf->fleet.remote_share, why)) {
		snprintf(why, WHY_LEN, "not a share from %u%% to %u%%", XBD_FLEET_REMOTE_SHARE_MIN,
			 XBD_FLEET_REMOTE_SHARE_MAX);
		return -EINVAL;
	}
	return 0;
}

/* The host name up to its first '.', cut to a valid node name; "xdpban" when there is none. */
static void default_node(char *buf, size_t len)
{
	size_t n;

	if (gethostname(buf, len) || !buf[0])
		snprintf(buf, len, "xdpban");
	buf[len - 1] = '\0';
	n = strcspn(buf, ".");
	buf[n] = '\0';
	for (char *c = buf; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-')
			*c = '-';
}

int xbd_conf_fleet_defaults(struct xbd_fleet_conf *f)
{
	char node[XBD_FLEET_NAME_MAX + 1];

	default_node(node, sizeof(node));
	*f = (struct xbd_fleet_conf){ .maxlen = XBD_FLEET_MAXLEN_DEFAULT,
				      .queue_size = XBD_FLEET_QUEUE_DEFAULT,
				      .remote_share = XBD_FLEET_REMOTE_SHARE_DEFAULT };
	f->stream = strdup(XBD_FLEET_STREAM_DEFAULT);
	f->snapshot = strdup(XBD_FLEET_SNAPSHOT_DEFAULT);
	f->node = strdup(node);
	return f->stream && f->snapshot && f->node ? 0 : -ENOMEM;
}

/* A user needs a password. 0, or -EINVAL with why. */
int xbd_conf_fleet_check(const struct xbd_fleet_conf *f, char *why, size_t len)
{
	if (f->redis && !f->key_file) {
		snprintf(why, len, "[fleet] redis = %s needs a key-file: every entry is signed with it (docs/fleet.md)",
			 f->redis);
		return -EINVAL;
	}
	if (f->user && !f->password_file) {
		snprintf(why, len, "[fleet] user = '%s' needs a password-file", f->user);
		return -EINVAL;
	}
	return 0;
}

void xbd_conf_fleet_free(struct xbd_fleet_conf *f)
{
	free(f->redis);
	free(f->redis_host);
	free(f->stream);
	free(f->snapshot);
	free(f->node);
	free(f->user);
	free(f->password_file);
	free(f->key_file);
	explicit_bzero(f, sizeof(*f));
}
