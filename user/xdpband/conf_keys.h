/* conf_keys.h - what the two halves of the config parser share: conf.c reads the file
 * (lines, sections, errors) and conf_keys.c knows the keys (the table of every key, its parser,
 * its default). Private to them: nothing else includes it. */
#ifndef XDPBAND_CONF_KEYS_H
#define XDPBAND_CONF_KEYS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "conf.h"
#include "libxdpban.h"

#define WHY_LEN XB_ERRLEN
#define XBD_CONF_KEYS_MAX 64 /* rows of the key table at most */

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
	int first_line[XBD_CONF_KEYS_MAX]; /* per table row: line it was first set on, 0 = not yet */
	char err[XB_ERRLEN];
	int err_line;
	bool failed;
};

/* The table of every key, in the order of the man page. */
extern const struct conf_key xbd_conf_keys[];
extern const size_t xbd_conf_n_keys;
/* The row of [section] name, or NULL; *section_known tells an unknown key from an unknown
 * section. */
const struct conf_key *xbd_conf_find_key(const char *section, const char *name,
					 bool *section_known);
/* An absolute path, or one relative to the config file's directory, into *out (freed first). */
int xbd_conf_resolve_path(const struct conf_parse *p, const char *value, char **out, char *why);

/* conf_fleet.c: the [fleet] keys. */
int xbd_conf_parse_fleet_redis(struct conf_parse *p, const struct conf_key *k,
			       const char *value, char *why);
int xbd_conf_parse_fleet_name(struct conf_parse *p, const struct conf_key *k, const char *value,
			      char *why);
int xbd_conf_parse_fleet_key(struct conf_parse *p, const struct conf_key *k, const char *value,
			     char *why);
int xbd_conf_parse_fleet_key_file(struct conf_parse *p, const struct conf_key *k,
				  const char *value, char *why);
int xbd_conf_parse_fleet_secret(struct conf_parse *p, const struct conf_key *k,
				const char *value, char *why);
int xbd_conf_parse_fleet_maxlen(struct conf_parse *p, const struct conf_key *k,
				const char *value, char *why);
int xbd_conf_parse_fleet_queue(struct conf_parse *p, const struct conf_key *k,
			       const char *value, char *why);
int xbd_conf_parse_fleet_share(struct conf_parse *p, const struct conf_key *k,
			       const char *value, char *why);
int xbd_conf_fleet_defaults(struct xbd_fleet_conf *f);
/* What the keys say together (a user needs a password file). 0, or -EINVAL with why. */
int xbd_conf_fleet_check(const struct xbd_fleet_conf *f, char *why, size_t len);

/* Every key at its default, and conf->path. 0 or -ENOMEM. */
int xbd_conf_defaults(struct xbd_conf *conf, const char *path);

#endif /* XDPBAND_CONF_KEYS_H */
