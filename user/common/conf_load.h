/* conf_load.h - reading the daemon's configuration file (deploy/xdpban.conf.5) into struct
 * xbd_conf (conf.h), with one error line naming file, line, key and value for anything wrong,
 * and what a reload may change of it. It only reads the file: it never touches the maps, the
 * interfaces or the lists' contents, so a bad file can always be refused with everything left
 * as it was. */
#ifndef XB_CONF_LOAD_H
#define XB_CONF_LOAD_H

#include <stddef.h>
#include "conf.h"

/* Fills conf from the file at path; every key not in the file keeps its default.
 * 0, or -errno with one line in err (conf is freed then). */
int xbd_conf_load(const char *path, struct xbd_conf *conf, char *err, size_t errlen);
/* The same, but a file that does not exist (nor its folder) stands for every default: what
 * a daemon started without one would hold. For the CLI without a daemon on a plain `ip link`
 * attachment, where the default config need not exist. */
int xbd_conf_load_or_defaults(const char *path, struct xbd_conf *conf, char *err,
			      size_t errlen);
void xbd_conf_free(struct xbd_conf *conf);

/* Names of the keys that only take effect at a restart and differ between a and b, as
 * "pin-dir, socket", or "" when none differ. */
void xbd_conf_restart_keys(const struct xbd_conf *a, const struct xbd_conf *b, char *buf,
			   size_t len);
/* Moves the restart-only settings of old into next (and next's into old, to be freed), so
 * that a reload applies the rest and keeps those. */
void xbd_conf_keep_restart_keys(struct xbd_conf *next, struct xbd_conf *old);

#endif /* XB_CONF_LOAD_H */
