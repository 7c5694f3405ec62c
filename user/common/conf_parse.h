/* conf_parse.h - what every parser of a config key is given: the state of one parse (the
 * config being filled, where the reader is, the first error) and the row of its key; and the
 * resolution of a path value against the config file's folder. Below the key table
 * (conf_keys.c) and the [fleet] parsers (conf_fleet.c), which both fill it. */
#ifndef XB_CONF_PARSE_H
#define XB_CONF_PARSE_H

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
	const char *name;  /* "NAME.*": every key NAME.SOMETHING (the parser gets p->key) */
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
	const char *key;               /* the key being parsed, as written */
	bool line_too_long;
	int bad_byte;                  /* a byte that is not text, on line bad_byte_line */
	int bad_byte_line;
	int read_errno;                /* the read failed */
	int indented_line;             /* a key or section that does not start the line */
	int first_line[XBD_CONF_KEYS_MAX]; /* per table row: line it was first set on, 0 = not yet */
	int port_rule_line[XDPBAN_PORT_RULES]; /* per entry of conf->dp.port_rule: its first line */
	char err[XB_ERRLEN];
	int err_line;
	bool failed;
};

/* An absolute path, or one relative to the config file's directory, into *out (freed first). */
int xbd_conf_resolve_path(const struct conf_parse *p, const char *value, char **out, char *why);

#endif /* XB_CONF_PARSE_H */
