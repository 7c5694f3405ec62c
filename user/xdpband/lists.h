/* lists.h - the trusted and deny list files, in zmap's blocklist format (one address or
 * prefix per line, first token only, '#' comments, no hostnames), compiled into the policy
 * tries with one list id per file. Reading and applying are separate steps, so a bad file is
 * refused before any map changes. Never touches manual bans (list XDPBAN_LIST_MANUAL_BAN). */
#ifndef XDPBAND_LISTS_H
#define XDPBAND_LISTS_H

#include <stddef.h>
#include <linux/types.h>
#include "conf.h"
#include "libxdpban.h"

struct xbd_list_entry {
	struct xb_prefix prefix;
	__u32 verdict; /* enum xdpban_verdict */
	__u32 list_id; /* struct xbd_list_conf.id of the file it came from */
	__u32 line;
};

struct xbd_lists {
	struct xbd_list_entry *v; /* sorted by family, length, address; no duplicates */
	size_t n, cap;
	size_t entries[XBD_MAX_LISTS + 1]; /* by list id: entries the file contributed */
};

/* Reads every list file the config names. 0, or -errno with "FILE:LINE: ..." in err. */
int xbd_lists_read(const struct xbd_conf *conf, struct xbd_lists *out, char *err,
		   size_t errlen);
/* Makes the policy tries hold exactly these list entries (manual bans stay). */
int xbd_lists_apply(const struct xb_maps *m, const struct xbd_lists *lists, char *err,
		    size_t errlen);
void xbd_lists_free(struct xbd_lists *lists);

#endif /* XDPBAND_LISTS_H */
