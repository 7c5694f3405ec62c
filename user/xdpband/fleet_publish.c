/* fleet_publish.c - the publisher of fleet_link.h: this node's entries from the queue to the
 * stream and the snapshot hash, the snapshot's pruning between publishes, and the flush of
 * the queue at stop. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "fleet_conn.h"
#include "fleet_prune.h"
#include "log.h"

#define REFUSED_LOG_MS 60000


/* MULTI, XADD, HSET or HDEL, EXEC: appended, not sent. */
static int append_entry(redisContext *c, const struct xbd_fleet_conf *f,
			const struct xbd_fleet_entry *e)
{
	const char *argv[6 + 2 * XBD_FLEET_FIELDS];
	struct xbd_fleet_fields fields;
	char maxlen[16], key[XBD_FLEET_VALUE_MAX], snap[XBD_SNAPSHOT_VALUE_MAX];
	int argc = 0;

	if (xbd_fleet_encode(e, &f->key, &fields) || xb_prefix_format(&e->who, key, sizeof(key)) ||
	    xbd_fleet_snapshot_value(e, &f->key, snap, sizeof(snap)))
		return -EINVAL;
	snprintf(maxlen, sizeof(maxlen), "%u", f->maxlen);
	redisAppendCommand(c, "MULTI");
	argv[argc++] = "XADD";
	argv[argc++] = f->stream;
	argv[argc++] = "MAXLEN";
	argv[argc++] = "~";
	argv[argc++] = maxlen;
	argv[argc++] = "*";
	for (size_t i = 0; i < fields.n; i++) {
		argv[argc++] = fields.names[i];
		argv[argc++] = fields.values[i];
	}
	redisAppendCommandArgv(c, argc, argv, NULL);
	if (e->kind == XBD_FLEET_BAN)
		redisAppendCommand(c, "HSET %s %s %s", f->snapshot, key, snap);
	else
		redisAppendCommand(c, "HDEL %s %s", f->snapshot, key);
	redisAppendCommand(c, "EXEC");
	return 0;
}

/* What Redis said against an EXEC's commands (an error reply), into why; "" when nothing. */
static void refusal_text(const redisReply *r, char *why, size_t len)
{
	for (size_t i = 0; r && r->type == REDIS_REPLY_ARRAY && i < r->elements; i++)
		if (r->element[i] && r->element[i]->type == REDIS_REPLY_ERROR) {
			snprintf(why, len, "%s", r->element[i]->str);
			return;
		}
	if (r && r->type == REDIS_REPLY_ERROR)
		snprintf(why, len, "%s", r->str);
}

/* What became of a batch: the entries from the queue's head that are over (published, or
 * never to be: one that does not encode), and whether Redis refused the one after them,
 * which stays queued with all that follows it, to be sent again in order. */
struct batch_outcome {
	size_t done, published, unencodable;
	bool refused;
};

/* Sends n entries in one pipeline. 0 with *out, or -EIO when the connection failed (all of
 * them stay queued). why: the reason of a refusal. */
static int send_batch(redisContext *c, const struct xbd_fleet_conf *f,
		      const struct xbd_fleet_entry *batch, size_t n, struct batch_outcome *out,
		      char *why, size_t whylen)
{
	int sent[PUBLISH_BATCH];

	*out = (struct batch_outcome){ 0 };
	for (size_t i = 0; i < n; i++)
		sent[i] = append_entry(c, f, &batch[i]) == 0;
	for (size_t i = 0; i < n; i++) {
		redisReply *r = NULL;
		bool ok = true;

		for (int k = 0; sent[i] && k < 4; k++) { /* MULTI, XADD, HSET/HDEL, EXEC */
			if (redisGetReply(c, (void **)&r) != REDIS_OK)
				return -EIO;
			if (k == 3) {
				ok = r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
				     !xbd_fleet_reply_failed(r->element[0]) && !xbd_fleet_reply_failed(r->element[1]);
				if (!ok && !out->refused)
					refusal_text(r, why, whylen);
			}
			freeReplyObject(r);
		}
		if (out->refused)
			continue; /* sent again after the refused one, whatever came of it */
		if (!ok) {
			out->refused = true;
			continue;
		}
		out->done++;
		if (sent[i])
			out->published++;
		else
			out->unencodable++;
	}
	return 0;
}

/* True when the publisher is done: the daemon stops, and the queue is empty or the flush's
 * time is up. Called with l->lock held. */
static bool publisher_ends(const struct xbd_fleet_link *l)
{
	return l->stopping && (!l->queue_n || xbd_fleet_mono_ms() >= l->flush_until_ms);
}

/* Up to PUBLISH_BATCH entries from the head of the queue, left there; 0 after IDLE_MS with
 * nothing queued. *stop: the publisher is done (publisher_ends). */
static size_t peek_batch(struct xbd_fleet_link *l, struct xbd_fleet_entry *out, bool *stop)
{
	struct timespec until;
	size_t n = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += IDLE_MS / 1000;
	pthread_mutex_lock(&l->lock);
	if (!l->stopping && !l->queue_n)
		pthread_cond_timedwait(&l->queue_cond, &l->lock, &until);
	*stop = publisher_ends(l);
	for (; !*stop && n < l->queue_n && n < PUBLISH_BATCH; n++)
		out[n] = l->queue[(l->queue_head + n) % l->conf.queue_size];
	pthread_mutex_unlock(&l->lock);
	return n;
}

/* An idle connection is checked, so that `connected` tells the truth between bans. */
static int ping(redisContext *c)
{
	redisReply *r = redisCommand(c, "PING");
	int ret = xbd_fleet_reply_failed(r) ? -EIO : 0;

	freeReplyObject(r);
	return ret;
}

/* The publisher's connection and what it keeps between turns. */
struct publisher {
	redisContext *c;
	unsigned int gen;     /* of the password it authenticated with */
	bool flushing;        /* the daemon stops: the reply timeout is the flush's */
	__u64 next_prune_ms;
	char cursor[32];      /* of the snapshot's HSCAN, across passes */
};

/* A connection, made anew when there is none or the password changed. false: none now. */
static bool publisher_connected(struct xbd_fleet_link *l, struct publisher *p)
{
	bool stale;

	pthread_mutex_lock(&l->lock);
	stale = p->c && p->gen != l->auth_gen;
	pthread_mutex_unlock(&l->lock);
	if (stale) {
		pr_info("fleet: publisher: the password changed: connecting again");
		redisFree(p->c);
		p->c = NULL;
	}
	if (!p->c) {
		p->c = xbd_fleet_connect(l, "publisher", &p->gen);
		p->flushing = false;
		pthread_mutex_lock(&l->lock);
		l->publisher_fd = p->c ? p->c->fd : -1;
		pthread_mutex_unlock(&l->lock);
	}
	if (p->c)
		xbd_fleet_set_up(l, &l->publisher_up, true, "publisher");
	return p->c != NULL;
}

/* What to do with the connection when nothing is to be published: prune the snapshot once a
 * second, else check it. 0 or -EIO. */
static int idle_work(struct xbd_fleet_link *l, struct publisher *p)
{
	size_t deleted;
	int ret;

	if (xbd_fleet_mono_ms() < p->next_prune_ms || xbd_fleet_stopping(l))
		return ping(p->c);
	p->next_prune_ms = xbd_fleet_mono_ms() + XBD_FLEET_PRUNE_MS;
	ret = xbd_fleet_prune_pass(p->c, l->conf.snapshot, p->cursor, sizeof(p->cursor),
				   time(NULL), &deleted);
	if (!ret && deleted) {
		pthread_mutex_lock(&l->lock);
		l->pruned += deleted;
		pthread_mutex_unlock(&l->lock);
	}
	return ret;
}

/* At stop, the replies may take only what is left of the flush's time. */
static void flush_timeout(struct xbd_fleet_link *l, struct publisher *p)
{
	__u64 now = xbd_fleet_mono_ms(), until;

	if (p->flushing || !xbd_fleet_stopping(l))
		return;
	pthread_mutex_lock(&l->lock);
	until = l->flush_until_ms;
	pthread_mutex_unlock(&l->lock);
	redisSetTimeout(p->c, xbd_fleet_tv(until > now ? (int)(until - now) : 1));
	p->flushing = true;
}

static void publisher_exit(struct xbd_fleet_link *l, struct publisher *p)
{
	pthread_mutex_lock(&l->lock);
	l->publisher_fd = -1;
	l->publisher_done = true;
	pthread_cond_broadcast(&l->done_cond);
	pthread_mutex_unlock(&l->lock);
	if (p->c)
		redisFree(p->c);
}

/* Entries Redis refused (a stream whose last id is the largest, a wrong type at the key, an
 * ACL that lost a command): logged at once, then at most once a minute with how many more
 * refusals came meanwhile. */
struct refused_log {
	__u64 last_ms;
	size_t unlogged;
};

static void log_refused(struct refused_log *rl, size_t queued, const char *why)
{
	__u64 now = xbd_fleet_mono_ms();

	rl->unlogged++;
	if (rl->last_ms && now - rl->last_ms < REFUSED_LOG_MS)
		return;
	pr_err("fleet: publisher: Redis refused this node's next entry (%zu %s since the last "
	       "line); it and the %zu after it stay queued and are sent again: %s",
	       rl->unlogged, xb_plural(rl->unlogged, "time", "times"), queued ? queued - 1 : 0,
	       why[0] ? why : "no reason given");
	rl->unlogged = 0;
	rl->last_ms = now;
}

/* What a batch's outcome does to the queue and the counters: the entries over leave it; a
 * refused entry is counted once, however often it is sent again. The entries queued. */
static size_t settle_batch(struct xbd_fleet_link *l, const struct batch_outcome *b,
			   const char *why)
{
	size_t queued;

	pthread_mutex_lock(&l->lock);
	l->queue_head = (l->queue_head + b->done) % l->conf.queue_size;
	l->queue_n -= b->done;
	l->published += b->published;
	l->publish_failed += b->unencodable;
	if (b->done)
		l->head_refused = false;
	if (b->refused && !l->head_refused) {
		l->publish_failed++;
		l->head_refused = true;
	}
	if (b->refused || b->unencodable)
		snprintf(l->publish_error, sizeof(l->publish_error), "%s",
			 why[0] ? why : "refused by Redis");
	else if (b->done)
		l->publish_error[0] = '\0';
	queued = l->queue_n;
	pthread_mutex_unlock(&l->lock);
	return queued;
}

void *xbd_fleet_publisher_main(void *arg)
{
	struct xbd_fleet_link *l = arg;
	struct xbd_fleet_entry batch[PUBLISH_BATCH];
	struct publisher p = { .cursor = "0" };
	struct refused_log refused_log = { 0 };
	char why[XBD_FLEET_WHY_MAX];
	int backoff = BACKOFF_MIN_MS;
	bool stop = false;
	size_t n;

	while (!stop) {
		struct batch_outcome b = { 0 };
		size_t queued;
		int ret;

		if (!publisher_connected(l, &p)) {
			if (xbd_fleet_stopping(l))
				break; /* no Redis at stop: what is queued stays unsent */
			xbd_fleet_backoff(l, &l->queue_cond, &backoff);
			continue;
		}
		flush_timeout(l, &p);
		n = peek_batch(l, batch, &stop);
		if (stop)
			break;
		why[0] = '\0';
		ret = n ? send_batch(p.c, &l->conf, batch, n, &b, why, sizeof(why))
			: idle_work(l, &p);
		if (ret < 0) {
			xbd_fleet_drop(l, &p.c, &l->publisher_up, "publisher");
			if (xbd_fleet_stopping(l))
				break;
			xbd_fleet_backoff(l, &l->queue_cond, &backoff);
			continue;
		}
		queued = settle_batch(l, &b, why);
		if (!b.refused) {
			backoff = BACKOFF_MIN_MS;
			continue;
		}
		/* Sent again after a pause: the operator may repair the stream meanwhile. */
		log_refused(&refused_log, queued, why);
		if (xbd_fleet_stopping(l))
			break;
		xbd_fleet_backoff(l, &l->refused_cond, &backoff);
	}
	publisher_exit(l, &p);
	return NULL;
}
