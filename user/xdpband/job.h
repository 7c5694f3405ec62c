/* job.h - a piece of work run in a thread of its own beside the poll loop (a reload's reading,
 * reload.h; a list load's, listload.h), which tells the loop it is done through an eventfd in
 * the poll set. The thread owns what it works on from its start until it calls
 * xbd_job_done; the loop reads it only after xbd_job_finish has joined the thread. */
#ifndef XDPBAND_JOB_H
#define XDPBAND_JOB_H

#include <pthread.h>
#include <stdbool.h>

struct xbd_job {
	int fd;       /* eventfd: readable once the thread is done; -1 none */
	bool running; /* a thread runs, or has run and was not finished yet */
	pthread_t thread;
};

/* 0 or -errno. */
int xbd_job_init(struct xbd_job *j);
/* Runs fn(arg) in a thread; fn calls xbd_job_done(j) last. 0, -EBUSY when one runs, or
 * -errno. */
int xbd_job_start(struct xbd_job *j, void *(*fn)(void *), void *arg);
/* The thread's last word. */
void xbd_job_done(struct xbd_job *j);
/* Joins the thread (waiting for it when fd is not readable yet). false when none ran. */
bool xbd_job_finish(struct xbd_job *j);
/* Joins a thread that runs, and closes fd. */
void xbd_job_close(struct xbd_job *j);

#endif /* XDPBAND_JOB_H */
