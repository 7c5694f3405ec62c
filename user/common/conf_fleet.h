/* conf_fleet.h - the parsers of the [fleet] keys (conf_fleet.c), their defaults, what they
 * say together, and freeing what they hold. */
#ifndef XB_CONF_FLEET_H
#define XB_CONF_FLEET_H

#include <stddef.h>
#include "conf.h"
#include "conf_parse.h"

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

void xbd_conf_fleet_free(struct xbd_fleet_conf *f); /* its strings, then zeroes it */

#endif /* XB_CONF_FLEET_H */
