/* listload.c - see listload.h. The thread owns everything in l but its job from its start
 * until it is done (job.h); the loop reads them only after it has joined the thread. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "listload.h"
#include "runlists.h"

int xbd_list_load_init(struct xbd_list_load *l)
{
	memset(l, 0, sizeof(*l));
	return xbd_job_init(&l->job);
}

static void *load_main(void *arg)
{
	struct xbd_list_load *l = arg;

	l->ret = xbd_runtime_read(&l->caps, l->fds.v, l->verdict, (const char *const *)l->files,
				  l->n, l->ignore_errors, &l->read, l->err, sizeof(l->err));
	xbd_job_done(&l->job);
	return NULL;
}

void xbd_list_load_done(struct xbd_list_load *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->files[i]);
	l->n = 0;
	xb_control_fds_close(&l->fds);
	xbd_lists_free(&l->read);
}

int xbd_list_load_start(struct xbd_list_load *l, __u32 verdict, const char *const *files,
			struct xb_control_fds *fds, size_t n, bool ignore_errors,
			const struct xbd_list_caps *caps)
{
	int ret = 0;

	if (l->job.running)
		return -EBUSY;
	if (n > XBD_MAX_LISTS || fds->n != n)
		return -EINVAL;
	for (l->n = 0; l->n < n && !ret; l->n++) {
		l->files[l->n] = strdup(files[l->n]);
		ret = l->files[l->n] ? 0 : -ENOMEM;
	}
	l->verdict = verdict;
	l->ignore_errors = ignore_errors;
	l->caps = *caps;
	l->fds = *fds; /* the thread's from its start: the loop reads them only after the join */
	l->ret = 0;
	l->err[0] = '\0';
	if (!ret)
		ret = xbd_job_start(&l->job, load_main, l);
	if (ret) {
		l->fds.n = 0; /* still the caller's */
		xbd_list_load_done(l);
	} else {
		fds->n = 0;
	}
	return ret;
}

int xbd_list_load_finish(struct xbd_list_load *l)
{
	return xbd_job_finish(&l->job) ? l->ret : -ENOENT;
}

void xbd_list_load_close(struct xbd_list_load *l)
{
	xbd_job_close(&l->job);
	xbd_list_load_done(l);
}
