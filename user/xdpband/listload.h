/* listload.h - the reading half of `xdpban lists load`, in a thread of its own as a reload's
 * is (reload.h): the files the client sent open with its request (it opened them with its own
 * rights; the daemon opens no path for it) are read there, so that a load of large files never
 * holds up the poll loop, and root's `status` is answered meanwhile. The loop checks the limits before it starts one, and puts what was read in force
 * when l->job.fd is readable (runlists.h, xbd_lists_ctx_load_read). One load at a time. */
#ifndef XDPBAND_LISTLOAD_H
#define XDPBAND_LISTLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include "control.h"
#include "job.h"
#include "libxdpban.h"
#include "lists.h"

struct xbd_list_load {
	struct xbd_job job; /* job.fd: readable once the reading is done */
	/* What is read: the thread's until it is done; the loop's after it joined. */
	__u32 verdict;
	char *files[XBD_MAX_LISTS]; /* their names */
	struct xb_control_fds fds;  /* fds.v[i] is files[i] */
	size_t n;
	bool ignore_errors;
	struct xbd_list_caps caps;
	int ret;
	struct xbd_lists read;
	char err[XB_ERRLEN];
};

/* 0 or -errno. */
int xbd_list_load_init(struct xbd_list_load *l);
/* Starts reading files (n names) from fds (n of them) into layer verdict, and takes fds (left
 * empty) once it has begun. 0, or -EBUSY when a load runs already, or -errno (fds untouched). */
int xbd_list_load_start(struct xbd_list_load *l, __u32 verdict, const char *const *files,
			struct xb_control_fds *fds, size_t n, bool ignore_errors,
			const struct xbd_list_caps *caps);
/* Once l->job.fd is readable (waits for it otherwise): 0 with l->read, l->files and l->n for the
 * loop to put in force, or -errno with one line in l->err. xbd_list_load_done frees them. */
int xbd_list_load_finish(struct xbd_list_load *l);
void xbd_list_load_done(struct xbd_list_load *l);
/* Waits for a load that runs and frees everything. */
void xbd_list_load_close(struct xbd_list_load *l);

#endif /* XDPBAND_LISTLOAD_H */
