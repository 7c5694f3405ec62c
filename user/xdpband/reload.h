/* reload.h - the reading half of a reload, in a thread of its own: the config file and every
 * list file are read and checked there (xbd_conf_load and xbd_lists_read only read files), so
 * that a reload of large lists never holds up the poll loop; the main thread then applies what
 * was read. Nothing here touches the maps or any other state of the daemon. */
#ifndef XDPBAND_RELOAD_H
#define XDPBAND_RELOAD_H

#include <stdbool.h>
#include <stddef.h>
#include "conf.h"
#include "job.h"
#include "libxdpban.h"
#include "lists.h"
#include "progress.h"

struct xbd_reading {
	struct xbd_job job; /* job.fd: readable once the reading is done */
	char *path;
	struct xbd_list_caps caps;
	int ret;
	struct xbd_conf conf;
	struct xbd_lists lists;
	char err[XB_ERRLEN];
	/* On a terminal: the reading's progress, then the compile's, ended by whoever applies
	 * what was read (or by the next start and by close). */
	struct xb_progress progress;
};

/* 0 or -errno. */
int xbd_reading_init(struct xbd_reading *r);
/* Starts reading the config at path, and its lists against caps. 0 or -errno (-EBUSY: a
 * reading runs already). */
int xbd_reading_start(struct xbd_reading *r, const char *path, const struct xbd_list_caps *caps);
/* The outcome of the reading, once r->job.fd is readable (waits for it otherwise): 0 with *conf
 * and *lists, which are the caller's to free, or -errno with one line in err. */
int xbd_reading_finish(struct xbd_reading *r, struct xbd_conf *conf, struct xbd_lists *lists,
		       char *err, size_t errlen);
/* Waits for a reading that runs and frees everything. */
void xbd_reading_close(struct xbd_reading *r);

#endif /* XDPBAND_RELOAD_H */
