/* conf_keys.h - the table of every key of the config file, with its parser and its default
 * (conf_keys.c), for the reader (conf_load.c). Private to the config's reader: nothing else
 * includes it. */
#ifndef XB_CONF_KEYS_H
#define XB_CONF_KEYS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "conf.h"
#include "conf_parse.h"

/* The table of every key, in the order of the man page. */
extern const struct conf_key xbd_conf_keys[];
extern const size_t xbd_conf_n_keys;
/* The row of [section] name, or NULL; *section_known tells an unknown key from an unknown
 * section. */
const struct conf_key *xbd_conf_find_key(const char *section, const char *name,
					 bool *section_known);
/* Every key at its default, and conf->path. 0 or -ENOMEM. */
int xbd_conf_defaults(struct xbd_conf *conf, const char *path);

#endif /* XB_CONF_KEYS_H */
