/* setvals.h - the settings changed at run time with `xdpban set`, by key (the names
 * xb_config_key gives, and the rule keys of ports), as the config file writes their values. The daemon keeps them in the
 * state file and puts them over the file's values at every start, until a reload or
 * `xdpban set KEY --reset` gives the key back to the file. Memory only: it never reads or
 * writes a map or a file. */
#ifndef XBD_SETVALS_H
#define XBD_SETVALS_H

#include <stdbool.h>
#include <stddef.h>
#include "libxdpban.h"

#define XBD_SETVALS_KEYS 64  /* room for every key of xb_config_key and the rule keys of
			      * XDPBAN_PORT_RULES ports, with spare */
#define XBD_SETVALS_KEY 24   /* a key with its NUL: the longest, ban-time.malformed, is 18 */
#define XBD_SETVALS_TEXT 64  /* a value's text with its NUL: the longest, a class list, is
			      * under 50 */

/* Entry i is unused while key[i] is "". */
struct xbd_setvals {
	char key[XBD_SETVALS_KEYS][XBD_SETVALS_KEY];
	char text[XBD_SETVALS_KEYS][XBD_SETVALS_TEXT];
};

/* The entry of key, or -ENOENT. */
int xbd_setvals_index(const struct xbd_setvals *s, const char *key);
/* Records key's value. -ENOENT for a key `set` does not know, -EINVAL for a text that is
 * empty, too long or holds a blank (a record of the state file is one line of words),
 * -ENOSPC when every entry is in use. */
int xbd_setvals_put(struct xbd_setvals *s, const char *key, const char *text);
/* Forgets key's value; true if there was one. */
bool xbd_setvals_drop(struct xbd_setvals *s, const char *key);
size_t xbd_setvals_count(const struct xbd_setvals *s);
/* Puts every recorded value over cfg. A value cfg does not take (a range this version
 * narrowed) is forgotten, and the first such named in err with -EINVAL; the others still
 * apply. 0 or -EINVAL. */
int xbd_setvals_apply(struct xbd_setvals *s, struct xdpban_config *cfg, char *err, size_t errlen);
/* "limit 15, ban-time 2h", or "" when none: for log lines. */
void xbd_setvals_format(const struct xbd_setvals *s, char *buf, size_t len);

#endif /* XBD_SETVALS_H */
