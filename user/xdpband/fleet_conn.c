/* fleet_conn.c - see fleet_conn.h. hiredis' blocking API, each connection used by one thread
 * only, with timeouts on connect and on every reply, so that a thread never hangs for good. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "fleet_conn.h"
#include "log.h"

struct timeval xbd_fleet_tv(int ms)
{
	return (struct timeval){ .tv_sec = ms / 1000, .tv_usec = ms % 1000 * 1000 };
}

__u64 xbd_fleet_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + (__u64)ts.tv_nsec / 1000000;
}

/* Records a connection problem and logs it when it is a new one. Called with l->lock held. */
void xbd_fleet_note_error(struct xbd_fleet_link *l, const char *who, const char *what)
{
	char line[XBD_FLEET_WHY_MAX];

	snprintf(line, sizeof(line), "%s: %s", who, what);
	if (strcmp(line, l->error))
		pr_warn("fleet: redis %s: %s; retrying with backoff", l->conf.redis, line);
	snprintf(l->error, sizeof(l->error), "%s", line);
}

void xbd_fleet_set_up(struct xbd_fleet_link *l, bool *up, bool value, const char *who)
{
	pthread_mutex_lock(&l->lock);
	if (value && !*up)
		pr_info("fleet: %s connected to redis %s", who, l->conf.redis);
	*up = value;
	if (value && l->publisher_up && l->reader_up)
		l->error[0] = '\0';
	pthread_mutex_unlock(&l->lock);
}

bool xbd_fleet_stopping(struct xbd_fleet_link *l)
{
	bool s;

	pthread_mutex_lock(&l->lock);
	s = l->stopping;
	pthread_mutex_unlock(&l->lock);
	return s;
}

/* Waits ms on cond (stop wakes it) and doubles *backoff. */
void xbd_fleet_backoff(struct xbd_fleet_link *l, pthread_cond_t *cond, int *backoff)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += *backoff / 1000;
	until.tv_nsec += (long)(*backoff % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&l->lock);
	if (!l->stopping)
		pthread_cond_timedwait(cond, &l->lock, &until);
	pthread_mutex_unlock(&l->lock);
	*backoff = *backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : *backoff * 2;
}

bool xbd_fleet_reply_failed(const redisReply *r)
{
	return !r || r->type == REDIS_REPLY_ERROR;
}

/* Writes what redisAppendCommand queued. 0 or -EIO. */
static int flush_output(redisContext *c)
{
	int done = 0;

	while (!done)
		if (redisBufferWrite(c, &done) == REDIS_ERR)
			return -EIO;
	return 0;
}

/* The socket is read here, not by redisBufferRead, so that every byte is counted before the
 * parser keeps it. */
int xbd_fleet_command_bounded(redisContext *c, size_t max, redisReply **out, const char *fmt,
			      ...)
{
	char buf[16384];
	size_t got = 0;
	va_list ap;
	void *reply = NULL;
	int ret;

	*out = NULL;
	va_start(ap, fmt);
	ret = redisvAppendCommand(c, fmt, ap);
	va_end(ap);
	if (ret == REDIS_ERR || flush_output(c))
		return -EIO;
	for (;;) {
		ssize_t n;

		if (redisReaderGetReply(c->reader, &reply) == REDIS_ERR)
			return -EIO;
		if (reply) {
			*out = reply;
			return 0;
		}
		if (got > max) {
			*out = redisReaderGetObject(c->reader);
			snprintf(c->errstr, sizeof(c->errstr),
				 "a reply over %zu bytes: an entry or field over the limit", max);
			c->err = REDIS_ERR_OTHER;
			return -E2BIG;
		}
		n = read(c->fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) { /* EAGAIN: the reply timeout (SO_RCVTIMEO) ran out */
			snprintf(c->errstr, sizeof(c->errstr), "%s",
				 n ? strerror(errno) : "Server closed the connection");
			c->err = REDIS_ERR_IO;
			return -EIO;
		}
		got += (size_t)n;
		if (redisReaderFeed(c->reader, buf, (size_t)n) == REDIS_ERR)
			return -EIO;
	}
}

/* The password for a new connection: the file read now, so that a rotated one is taken up;
 * when the file cannot be read, the last one read (and the problem is noted). *gen: the
 * generation of the password it is. */
static void password_now(struct xbd_fleet_link *l, const char *who, char *out, size_t len,
			 unsigned int *gen)
{
	char fresh[sizeof(l->password)], why[XB_ERRLEN];
	int ret = l->conf.password_file ? xbd_fleet_password_read(l->conf.password_file, fresh,
								  sizeof(fresh), why, sizeof(why))
					: -ENOENT;

	pthread_mutex_lock(&l->lock);
	if (!ret && strcmp(fresh, l->password)) {
		snprintf(l->password, sizeof(l->password), "%s", fresh);
		l->auth_gen++;
	} else if (ret && l->conf.password_file) {
		xbd_fleet_note_error(l, who, why); /* kept: the last password read */
	}
	snprintf(out, len, "%s", l->password);
	*gen = l->auth_gen;
	pthread_mutex_unlock(&l->lock);
	explicit_bzero(fresh, sizeof(fresh));
}

/* Connects and authenticates. NULL with the problem noted. *gen: the password's generation. */
redisContext *xbd_fleet_connect(struct xbd_fleet_link *l, const char *who, unsigned int *gen)
{
	const struct xbd_fleet_conf *f = &l->conf;
	redisContext *c = redisConnectWithTimeout(f->redis_host, f->redis_port,
						  xbd_fleet_tv(CONNECT_TIMEOUT_MS));
	redisReply *r = NULL;
	char what[XBD_FLEET_WHY_MAX], password[sizeof(l->password)];

	if (!c || c->err) {
		snprintf(what, sizeof(what), "%s", c ? c->errstr : "out of memory");
		goto fail;
	}
	redisSetTimeout(c, xbd_fleet_tv(REPLY_TIMEOUT_MS));
	password_now(l, who, password, sizeof(password), gen);
	if (!password[0])
		return c;
	r = f->user ? redisCommand(c, "AUTH %s %s", f->user, password)
		    : redisCommand(c, "AUTH %s", password);
	explicit_bzero(password, sizeof(password));
	if (!xbd_fleet_reply_failed(r)) {
		freeReplyObject(r);
		return c;
	}
	snprintf(what, sizeof(what), "AUTH: %s", r ? r->str : c->errstr);
fail:
	freeReplyObject(r);
	redisFree(c);
	pthread_mutex_lock(&l->lock);
	xbd_fleet_note_error(l, who, what);
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

void xbd_fleet_drop(struct xbd_fleet_link *l, redisContext **c, bool *up, const char *who)
{
	pthread_mutex_lock(&l->lock);
	xbd_fleet_note_error(l, who, (*c)->err ? (*c)->errstr : "unexpected reply");
	*up = false;
	if (up == &l->reader_up)
		l->reader_fd = -1;
	else
		l->publisher_fd = -1;
	pthread_mutex_unlock(&l->lock);
	redisFree(*c);
	*c = NULL;
}
