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

/* Sends n entries in one pipeline. The number Redis refused (not to be sent again), the
 * reason of the first in why, or -EIO when the connection failed (all of them stay queued). */
static int send_batch(redisContext *c, const struct xbd_fleet_conf *f,
		      const struct xbd_fleet_entry *batch, size_t n, char *why, size_t whylen)
{
	int refused = 0, sent[PUBLISH_BATCH];

	for (size_t i = 0; i < n; i++)
		sent[i] = append_entry(c, f, &batch[i]) == 0;
	for (size_t i = 0; i < n; i++) {
		redisReply *r = NULL;
		bool ok = true;

		if (!sent[i]) {
			if (!refused++)
				snprintf(why, whylen, "an entry that does not encode");
			continue;
		}
		for (int k = 0; k < 4; k++) { /* MULTI, XADD, HSET/HDEL, EXEC */
			if (redisGetReply(c, (void **)&r) != REDIS_OK)
				return -EIO;
			if (k == 3) {
				ok = r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
				     !xbd_fleet_reply_failed(r->element[0]) && !xbd_fleet_reply_failed(r->element[1]);
				if (!ok && !refused)
					refusal_text(r, why, whylen);
			}
			freeReplyObject(r);
		}
		refused += !ok;
	}
	return refused;
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
 * ACL that lost a command): logged at once, then at most once a minute with how many more. */
struct refused_log {
	__u64 last_ms;
	size_t unlogged;
};

static void log_refused(struct refused_log *rl, int refused, const char *why)
{
	__u64 now = xbd_fleet_mono_ms();

	rl->unlogged += (size_t)refused;
	if (rl->last_ms && now - rl->last_ms < REFUSED_LOG_MS)
		return;
	pr_err("fleet: publisher: Redis refused %zu entr%s, which are not shared: %s",
	       rl->unlogged, rl->unlogged == 1 ? "y" : "ies", why[0] ? why : "no reason given");
	rl->unlogged = 0;
	rl->last_ms = now;
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
		int refused;

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
		refused = n ? send_batch(p.c, &l->conf, batch, n, why, sizeof(why))
			    : idle_work(l, &p);
		if (refused < 0) {
			xbd_fleet_drop(l, &p.c, &l->publisher_up, "publisher");
			if (xbd_fleet_stopping(l))
				break;
			xbd_fleet_backoff(l, &l->queue_cond, &backoff);
			continue;
		}
		backoff = BACKOFF_MIN_MS;
		pthread_mutex_lock(&l->lock);
		l->queue_head = (l->queue_head + n) % l->conf.queue_size;
		l->queue_n -= n;
		l->published += n - refused;
		l->publish_failed += refused;
		if (refused > 0)
			snprintf(l->publish_error, sizeof(l->publish_error), "%s",
				 why[0] ? why : "refused by Redis");
		else if (n)
			l->publish_error[0] = '\0';
		pthread_mutex_unlock(&l->lock);
		if (refused > 0)
			log_refused(&refused_log, refused, why);
	}
	publisher_exit(l, &p);
	return NULL;
}
