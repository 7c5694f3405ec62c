/* reload.c - see reload.h. The thread owns r->conf, r->lists and r->err from the start until
 * it is done (job.h); the main thread reads them only after it has joined the thread. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "conf_load.h"
#include "reload.h"

int xbd_reading_init(struct xbd_reading *r)
{
	memset(r, 0, sizeof(*r));
	return xbd_job_init(&r->job);
}

static void *reading_main(void *arg)
{
	struct xbd_reading *r = arg;

	r->ret = xbd_conf_load(r->path, &r->conf, r->err, sizeof(r->err));
	if (!r->ret) {
		r->ret = xbd_lists_read(&r->conf, &r->caps, &r->lists, &r->progress, r->err,
					sizeof(r->err));
		if (r->ret)
			xbd_conf_free(&r->conf);
	}
	xbd_job_done(&r->job);
	return NULL;
}

int xbd_reading_start(struct xbd_reading *r, const char *path, const struct xbd_list_caps *caps)
{
	int ret;

	if (r->job.running)
		return -EBUSY;
	r->path = strdup(path);
	if (!r->path)
		return -ENOMEM;
	r->caps = *caps;
	r->ret = 0;
	r->err[0] = '\0';
	xb_progress_end(&r->progress);
	xb_progress_begin(&r->progress);
	ret = xbd_job_start(&r->job, reading_main, r);
	if (ret) {
		free(r->path);
		r->path = NULL;
	}
	return ret;
}

int xbd_reading_finish(struct xbd_reading *r, struct xbd_conf *conf, struct xbd_lists *lists,
		       char *err, size_t errlen)
{
	if (!xbd_job_finish(&r->job))
		return -ENOENT;
	free(r->path);
	r->path = NULL;
	if (r->ret) {
		snprintf(err, errlen, "%s", r->err);
		return r->ret;
	}
	*conf = r->conf;
	*lists = r->lists;
	return 0;
}

void xbd_reading_close(struct xbd_reading *r)
{
	struct xbd_conf conf;
	struct xbd_lists lists;
	char err[XB_ERRLEN];

	if (r->job.running && !xbd_reading_finish(r, &conf, &lists, err, sizeof(err))) {
		xbd_lists_free(&lists);
		xbd_conf_free(&conf);
	}
	xb_progress_end(&r->progress);
	xbd_job_close(&r->job);
}
