/* job.c - see job.h. */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include "job.h"

int xbd_job_init(struct xbd_job *j)
{
	j->running = false;
	j->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return j->fd < 0 ? -errno : 0;
}

int xbd_job_start(struct xbd_job *j, void *(*fn)(void *), void *arg)
{
	int ret;

	if (j->running)
		return -EBUSY;
	ret = -pthread_create(&j->thread, NULL, fn, arg);
	if (!ret)
		j->running = true;
	return ret;
}

void xbd_job_done(struct xbd_job *j)
{
	const uint64_t one = 1;

	(void)!write(j->fd, &one, sizeof(one));
}

bool xbd_job_finish(struct xbd_job *j)
{
	uint64_t count;

	if (!j->running)
		return false;
	pthread_join(j->thread, NULL);
	(void)!read(j->fd, &count, sizeof(count));
	j->running = false;
	return true;
}

void xbd_job_close(struct xbd_job *j)
{
	xbd_job_finish(j);
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
}
