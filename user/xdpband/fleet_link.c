/* fleet_link.c - see fleet_link.h. hiredis' blocking API, each connection used by one thread
 * only, with timeouts on connect and on every reply, so that a thread never hangs for good. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <hiredis/hiredis.h>
#include "fleet_link.h"
#include "log.h"

#define CONNECT_TIMEOUT_MS 1000
#define BLOCK_MS 1000               /* XREAD BLOCK: the reader looks at `stopping` this often */
#define REPLY_TIMEOUT_MS (BLOCK_MS + 2000)
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000
#define READ_COUNT 512              /* entries per XREAD */
#define PUBLISH_BATCH 64            /* entries per pipeline */
#define SCAN_COUNT 1000             /* fields per HSCAN */
#define IDLE_MS 1000                /* the publisher PINGs an idle connection this often */

static struct timeval tv_of(int ms)
{
	return (struct timeval){ .tv_sec = ms / 1000, .tv_usec = ms % 1000 * 1000 };
}

/* Records a connection problem and logs it when it is a new one. Called with l->lock held. */
static void note_error(struct xbd_fleet_link *l, const char *who, const char *what)
{
	char line[XBD_FLEET_WHY_MAX];

	snprintf(line, sizeof(line), "%s: %s", who, what);
	if (strcmp(line, l->error))
		pr_warn("fleet: redis %s: %s; retrying with backoff", l->conf.redis, line);
	snprintf(l->error, sizeof(l->error), "%s", line);
}

static void set_up(struct xbd_fleet_link *l, bool *up, bool value, const char *who)
{
	pthread_mutex_lock(&l->lock);
	if (value && !*up)
		pr_info("fleet: %s connected to redis %s", who, l->conf.redis);
	*up = value;
	if (value && l->publisher_up && l->reader_up)
		l->error[0] = '\0';
	pthread_mutex_unlock(&l->lock);
}

static bool stopping(struct xbd_fleet_link *l)
{
	bool s;

	pthread_mutex_lock(&l->lock);
	s = l->stopping;
	pthread_mutex_unlock(&l->lock);
	return s;
}

/* Waits ms on cond (stop wakes it) and doubles *backoff. */
static void backoff_wait(struct xbd_fleet_link *l, pthread_cond_t *cond, int *backoff)
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

static bool reply_failed(const redisReply *r)
{
	return !r || r->type == REDIS_REPLY_ERROR;
}

/* Connects and authenticates. NULL with the problem noted. */
static redisContext *fleet_connect(struct xbd_fleet_link *l, const char *who)
{
	const struct xbd_fleet_conf *f = &l->conf;
	redisContext *c = redisConnectWithTimeout(f->redis_host, f->redis_port,
						  tv_of(CONNECT_TIMEOUT_MS));
	redisReply *r = NULL;
	char what[XBD_FLEET_WHY_MAX];

	if (!c || c->err) {
		snprintf(what, sizeof(what), "%s", c ? c->errstr : "out of memory");
		goto fail;
	}
	redisSetTimeout(c, tv_of(REPLY_TIMEOUT_MS));
	if (!l->password[0])
		return c;
	r = f->user ? redisCommand(c, "AUTH %s %s", f->user, l->password)
		    : redisCommand(c, "AUTH %s", l->password);
	if (!reply_failed(r)) {
		freeReplyObject(r);
		return c;
	}
	snprintf(what, sizeof(what), "AUTH: %s", r ? r->str : c->errstr);
fail:
	freeReplyObject(r);
	redisFree(c);
	pthread_mutex_lock(&l->lock);
	note_error(l, who, what);
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

static void drop(struct xbd_fleet_link *l, redisContext **c, bool *up, const char *who)
{
	pthread_mutex_lock(&l->lock);
	note_error(l, who, (*c)->err ? (*c)->errstr : "unexpected reply");
	*up = false;
	if (up == &l->reader_up)
		l->reader_fd = -1;
	pthread_mutex_unlock(&l->lock);
	redisFree(*c);
	*c = NULL;
}

/* ---- publisher ---- */

/* MULTI, XADD, HSET or HDEL, EXEC: appended, not sent. */
static int append_entry(redisContext *c, const struct xbd_fleet_conf *f,
			const struct xbd_fleet_entry *e)
{
	const char *argv[6 + 2 * XBD_FLEET_FIELDS];
	struct xbd_fleet_fields fields;
	char maxlen[16], key[XBD_FLEET_VALUE_MAX], snap[XBD_FLEET_VALUE_MAX + 16];
	int argc = 0;

	if (xbd_fleet_encode(e, &fields) || xb_prefix_format(&e->who, key, sizeof(key)) ||
	    xbd_fleet_snapshot_value(e, snap, sizeof(snap)))
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

/* Sends n entries in one pipeline. The number Redis refused (not to be sent again), or
 * -EIO when the connection failed (all of them stay queued). */
static int send_batch(redisContext *c, const struct xbd_fleet_conf *f,
		      const struct xbd_fleet_entry *batch, size_t n)
{
	int refused = 0, sent[PUBLISH_BATCH];

	for (size_t i = 0; i < n; i++)
		sent[i] = append_entry(c, f, &batch[i]) == 0;
	for (size_t i = 0; i < n; i++) {
		redisReply *r = NULL;
		bool ok = true;

		if (!sent[i]) {
			refused++;
			continue;
		}
		for (int k = 0; k < 4; k++) { /* MULTI, XADD, HSET/HDEL, EXEC */
			if (redisGetReply(c, (void **)&r) != REDIS_OK)
				return -EIO;
			if (k == 3)
				ok = r && r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
				     !reply_failed(r->element[0]) && !reply_failed(r->element[1]);
			freeReplyObject(r);
		}
		refused += !ok;
	}
	return refused;
}

/* Up to PUBLISH_BATCH entries from the head of the queue, left there; 0 after IDLE_MS with
 * nothing queued. *stop: the daemon stops. */
static size_t peek_batch(struct xbd_fleet_link *l, struct xbd_fleet_entry *out, bool *stop)
{
	struct timespec until;
	size_t n = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += IDLE_MS / 1000;
	pthread_mutex_lock(&l->lock);
	if (!l->stopping && !l->queue_n)
		pthread_cond_timedwait(&l->queue_cond, &l->lock, &until);
	for (; !l->stopping && n < l->queue_n && n < PUBLISH_BATCH; n++)
		out[n] = l->queue[(l->queue_head + n) % l->conf.queue_size];
	*stop = l->stopping;
	pthread_mutex_unlock(&l->lock);
	return n;
}

/* An idle connection is checked, so that `connected` tells the truth between bans. */
static int ping(redisContext *c)
{
	redisReply *r = redisCommand(c, "PING");
	int ret = reply_failed(r) ? -EIO : 0;

	freeReplyObject(r);
	return ret;
}

static void *publisher_main(void *arg)
{
	struct xbd_fleet_link *l = arg;
	struct xbd_fleet_entry batch[PUBLISH_BATCH];
	redisContext *c = NULL;
	int backoff = BACKOFF_MIN_MS;
	bool stop = false;
	size_t n;

	while (!stop) {
		int refused;

		if (!c && !(c = fleet_connect(l, "publisher"))) {
			backoff_wait(l, &l->queue_cond, &backoff);
			stop = stopping(l);
			continue;
		}
		set_up(l, &l->publisher_up, true, "publisher");
		n = peek_batch(l, batch, &stop);
		if (stop)
			break;
		refused = n ? send_batch(c, &l->conf, batch, n) : ping(c);
		if (refused < 0) {
			drop(l, &c, &l->publisher_up, "publisher");
			backoff_wait(l, &l->queue_cond, &backoff);
			continue;
		}
		backoff = BACKOFF_MIN_MS;
		pthread_mutex_lock(&l->lock);
		l->queue_head = (l->queue_head + n) % l->conf.queue_size;
		l->queue_n -= n;
		l->published += n - refused;
		l->publish_failed += refused;
		pthread_mutex_unlock(&l->lock);
	}
	if (c)
		redisFree(c);
	return NULL;
}

/* ---- reader ---- */

static void wake(struct xbd_fleet_link *l)
{
	__u64 one = 1;

	if (write(l->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		pr_warn("fleet: cannot wake the loop: %s", strerror(errno));
}

/* Hands one item to the loop, waiting for room. false when stopping. */
static bool hand_over(struct xbd_fleet_link *l, const struct xbd_fleet_item *it)
{
	bool first;

	pthread_mutex_lock(&l->lock);
	while (!l->stopping && l->inbox_n == XBD_FLEET_INBOX)
		pthread_cond_wait(&l->inbox_cond, &l->lock);
	if (l->stopping) {
		pthread_mutex_unlock(&l->lock);
		return false;
	}
	l->inbox[(l->inbox_head + l->inbox_n) % XBD_FLEET_INBOX] = *it;
	first = l->inbox_n++ == 0;
	pthread_mutex_unlock(&l->lock);
	/* Only the first item of an empty inbox wakes the loop: it takes all there is, and
	 * wakes itself for what it left (xbd_fleet_link_take); a write per entry would cost a
	 * syscall on each side for every entry of a burst. */
	if (first)
		wake(l);
	return true;
}

static bool is_string(const redisReply *r)
{
	return r && r->type == REDIS_REPLY_STRING;
}

/* One element of an XREAD reply: [ID, [FIELD, VALUE, ...]]. */
static void decode_entry(const redisReply *r, struct xbd_fleet_item *it)
{
	struct xbd_fleet_raw raw[32];
	const redisReply *kv;
	size_t n = 0;

	memset(it, 0, sizeof(*it));
	it->kind = XBD_FLEET_ITEM_ENTRY;
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 || !is_string(r->element[0]) ||
	    r->element[0]->len >= sizeof(it->id)) {
		it->status = -EINVAL;
		snprintf(it->why, sizeof(it->why), "not a stream entry");
		return;
	}
	memcpy(it->id, r->element[0]->str, r->element[0]->len);
	kv = r->element[1];
	if (kv->type != REDIS_REPLY_ARRAY || kv->elements % 2 || kv->elements > 2 * 32) {
		it->status = -EINVAL;
		snprintf(it->why, sizeof(it->why), "%zu values: not pairs of at most 32 fields",
			 kv->type == REDIS_REPLY_ARRAY ? kv->elements : 0);
		return;
	}
	for (size_t i = 0; i < kv->elements; i += 2, n++) {
		if (!is_string(kv->element[i]) || !is_string(kv->element[i + 1])) {
			it->status = -EINVAL;
			snprintf(it->why, sizeof(it->why), "a field that is not a string");
			return;
		}
		raw[n] = (struct xbd_fleet_raw){ kv->element[i]->str, kv->element[i + 1]->str,
						 kv->element[i]->len, kv->element[i + 1]->len };
	}
	it->status = xbd_fleet_decode(raw, n, &it->e, it->why, sizeof(it->why));
}

/* The value of name in a flat [name, value, ...] reply (XINFO STREAM), or NULL. */
static const redisReply *info_field(const redisReply *r, const char *name)
{
	for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i + 1 < r->elements; i += 2)
		if (is_string(r->element[i]) && !strcmp(r->element[i]->str, name))
			return r->element[i + 1];
	return NULL;
}

static int hand_snapshot_page(struct xbd_fleet_link *l, const redisReply *kv)
{
	struct xbd_fleet_item it = { .kind = XBD_FLEET_ITEM_SNAPSHOT };

	for (size_t i = 0; i + 1 < kv->elements; i += 2) {
		struct xbd_fleet_raw raw = { kv->element[i]->str, kv->element[i + 1]->str,
					     kv->element[i]->len, kv->element[i + 1]->len };

		if (!is_string(kv->element[i]) || !is_string(kv->element[i + 1]))
			continue;
		it.status = xbd_fleet_snapshot_decode(&raw, &it.e, it.why, sizeof(it.why));
		if (!hand_over(l, &it))
			return -ECANCELED;
	}
	return 0;
}

/* Every ban of the snapshot hash, between a BEGIN and an END that stands for id `upto`. */
static int rebuild(struct xbd_fleet_link *l, redisContext *c, const char *upto, bool lift)
{
	struct xbd_fleet_item it = { .kind = XBD_FLEET_ITEM_SNAPSHOT_BEGIN };
	char cursor[32] = "0";
	int ret = 0;

	if (!hand_over(l, &it))
		return -ECANCELED;
	do {
		redisReply *r = redisCommand(c, "HSCAN %s %s COUNT %d", l->conf.snapshot, cursor,
					     SCAN_COUNT);

		if (reply_failed(r) || r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
		    !is_string(r->element[0]) || r->element[1]->type != REDIS_REPLY_ARRAY) {
			freeReplyObject(r);
			return -EIO;
		}
		snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
		ret = hand_snapshot_page(l, r->element[1]);
		freeReplyObject(r);
	} while (!ret && strcmp(cursor, "0"));
	it = (struct xbd_fleet_item){ .kind = XBD_FLEET_ITEM_SNAPSHOT_END, .status = lift };
	snprintf(it.id, sizeof(it.id), "%s", upto);
	pthread_mutex_lock(&l->lock);
	l->rebuilds++;
	pthread_mutex_unlock(&l->lock);
	return ret ? ret : hand_over(l, &it) ? 0 : -ECANCELED;
}

/* Where to read from: after `from` when the stream still holds what follows it; else from
 * the snapshot, then after the stream's last id. -EIO when Redis failed. */
static int position(struct xbd_fleet_link *l, redisContext *c, char *from)
{
	redisReply *r = redisCommand(c, "XINFO STREAM %s", l->conf.stream);
	const redisReply *last, *first;
	char last_id[XBD_FLEET_ID_MAX] = "0-0", first_id[XBD_FLEET_ID_MAX] = "";
	bool trimmed, lost;
	int ret;

	if (!r)
		return -EIO;
	if (r->type == REDIS_REPLY_ERROR && strstr(r->str, "no such key")) {
		freeReplyObject(r); /* no stream yet: nothing trimmed, but maybe a snapshot */
		r = NULL;
	} else if (r->type != REDIS_REPLY_ARRAY) {
		freeReplyObject(r);
		return -EIO;
	}
	last = r ? info_field(r, "last-generated-id") : NULL;
	first = r ? info_field(r, "first-entry") : NULL;
	if (is_string(last) && last->len < sizeof(last_id))
		snprintf(last_id, sizeof(last_id), "%s", last->str);
	if (first && first->type == REDIS_REPLY_ARRAY && first->elements == 2 &&
	    is_string(first->element[0]) && first->element[0]->len < sizeof(first_id))
		snprintf(first_id, sizeof(first_id), "%s", first->element[0]->str);
	freeReplyObject(r);
	/* Past the last id: the stream was lost and made anew (a Redis without persistence);
	 * the snapshot went with it, so the remote bans in force here are kept, not lifted. */
	lost = from[0] && xbd_fleet_id_cmp(from, last_id) > 0;
	/* Entries came after from, and the first one left is later: some may be gone. */
	trimmed = from[0] && xbd_fleet_id_cmp(from, last_id) < 0 &&
		  (!first_id[0] || xbd_fleet_id_cmp(from, first_id) < 0);
	if (from[0] && !lost && !trimmed)
		return 0;
	pr_info("fleet: %s: rebuilding from snapshot %s, then reading after %s",
		!from[0] ? "no entry applied yet"
		: lost	 ? "the stream is older than the last entry applied (Redis lost it)"
			 : "the stream was trimmed past the last entry applied",
		l->conf.snapshot, last_id);
	ret = rebuild(l, c, last_id, trimmed);
	if (!ret)
		snprintf(from, XBD_FLEET_ID_MAX, "%s", last_id);
	return ret;
}

/* One XREAD: hands over what came and moves from. -EIO when Redis failed. */
static int read_once(struct xbd_fleet_link *l, redisContext *c, char *from)
{
	redisReply *r = redisCommand(c, "XREAD COUNT %d BLOCK %d STREAMS %s %s", READ_COUNT,
				     BLOCK_MS, l->conf.stream, from);
	const redisReply *entries;

	if (!r || r->type == REDIS_REPLY_ERROR) {
		freeReplyObject(r);
		return -EIO;
	}
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 1 ||
	    r->element[0]->type != REDIS_REPLY_ARRAY || r->element[0]->elements != 2 ||
	    r->element[0]->element[1]->type != REDIS_REPLY_ARRAY) {
		freeReplyObject(r); /* nil: nothing came within BLOCK_MS */
		return 0;
	}
	entries = r->element[0]->element[1];
	for (size_t i = 0; i < entries->elements; i++) {
		struct xbd_fleet_item it;

		decode_entry(entries->element[i], &it);
		if (!xbd_fleet_id_valid(it.id))
			continue; /* without an id it cannot be read past either */
		snprintf(from, XBD_FLEET_ID_MAX, "%s", it.id);
		if (!hand_over(l, &it))
			break;
	}
	freeReplyObject(r);
	return 0;
}

static void *reader_main(void *arg)
{
	struct xbd_fleet_link *l = arg;
	char from[XBD_FLEET_ID_MAX];
	redisContext *c = NULL;
	int backoff = BACKOFF_MIN_MS;
	bool positioned = false;

	pthread_mutex_lock(&l->lock);
	snprintf(from, sizeof(from), "%s", l->read_from);
	pthread_mutex_unlock(&l->lock);
	while (!stopping(l)) {
		if (!c) {
			c = fleet_connect(l, "reader");
			if (!c) {
				backoff_wait(l, &l->inbox_cond, &backoff);
				continue;
			}
			pthread_mutex_lock(&l->lock);
			l->reader_fd = c->fd;
			pthread_mutex_unlock(&l->lock);
			set_up(l, &l->reader_up, true, "reader");
			positioned = false; /* Redis may have lost or trimmed the stream meanwhile */
		}
		if ((!positioned && position(l, c, from)) || read_once(l, c, from)) {
			if (!stopping(l)) {
				drop(l, &c, &l->reader_up, "reader");
				backoff_wait(l, &l->inbox_cond, &backoff);
			}
			continue;
		}
		positioned = true;
		backoff = BACKOFF_MIN_MS;
	}
	if (c)
		redisFree(c);
	return NULL;
}

/* ---- the loop's side ---- */

static int dup_field(char **to, const char *from)
{
	*to = from ? strdup(from) : NULL;
	return from && !*to ? -ENOMEM : 0;
}

static int conf_copy(struct xbd_fleet_conf *to, const struct xbd_fleet_conf *from)
{
	*to = (struct xbd_fleet_conf){ .redis_port = from->redis_port, .maxlen = from->maxlen,
				       .queue_size = from->queue_size };
	if (dup_field(&to->redis, from->redis) || dup_field(&to->redis_host, from->redis_host) ||
	    dup_field(&to->stream, from->stream) || dup_field(&to->snapshot, from->snapshot) ||
	    dup_field(&to->node, from->node) || dup_field(&to->user, from->user)) {
		xbd_conf_fleet_free(to);
		return -ENOMEM;
	}
	return 0;
}

int xbd_fleet_link_start(struct xbd_fleet_link *l, const struct xbd_fleet_conf *conf,
			 const char *password, const char *last_id, char *err, size_t errlen)
{
	int ret;

	memset(l, 0, sizeof(*l));
	l->reader_fd = -1;
	l->wake_fd = -1;
	ret = conf_copy(&l->conf, conf);
	if (ret) {
		snprintf(err, errlen, "fleet: cannot start: %s", strerror(-ret));
		goto fail;
	}
	snprintf(l->password, sizeof(l->password), "%s", password);
	snprintf(l->read_from, sizeof(l->read_from), "%s", last_id);
	l->queue = calloc(conf->queue_size, sizeof(*l->queue));
	l->inbox = calloc(XBD_FLEET_INBOX, sizeof(*l->inbox));
	l->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!l->queue || !l->inbox || l->wake_fd < 0) {
		ret = l->wake_fd < 0 ? -errno : -ENOMEM;
		snprintf(err, errlen, "fleet: cannot start: %s", strerror(-ret));
		goto fail;
	}
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->queue_cond, NULL);
	pthread_cond_init(&l->inbox_cond, NULL);
	ret = -pthread_create(&l->publisher, NULL, publisher_main, l);
	if (!ret) {
		ret = -pthread_create(&l->reader, NULL, reader_main, l);
		if (ret) {
			xbd_fleet_link_stop(l); /* joins the publisher */
			snprintf(err, errlen, "fleet: cannot start a thread: %s", strerror(-ret));
			return ret;
		}
		l->started = true;
		return 0;
	}
	snprintf(err, errlen, "fleet: cannot start a thread: %s", strerror(-ret));
fail:
	if (l->wake_fd >= 0)
		close(l->wake_fd);
	free(l->queue);
	free(l->inbox);
	xbd_conf_fleet_free(&l->conf);
	memset(l, 0, sizeof(*l));
	l->wake_fd = -1;
	return ret;
}

int xbd_fleet_link_push(struct xbd_fleet_link *l, const struct xbd_fleet_entry *e)
{
	int ret = 0;

	pthread_mutex_lock(&l->lock);
	if (l->queue_n == l->conf.queue_size) {
		l->overflowed++;
		ret = -ENOBUFS;
	} else {
		l->queue[(l->queue_head + l->queue_n) % l->conf.queue_size] = *e;
		l->queue_n++;
		pthread_cond_signal(&l->queue_cond);
	}
	pthread_mutex_unlock(&l->lock);
	return ret;
}

size_t xbd_fleet_link_take(struct xbd_fleet_link *l, struct xbd_fleet_item *out, size_t max)
{
	__u64 count;
	size_t n = 0;

	if (read(l->wake_fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		pr_warn("fleet: eventfd: %s", strerror(errno));
	pthread_mutex_lock(&l->lock);
	for (; n < max && l->inbox_n; n++) {
		out[n] = l->inbox[l->inbox_head];
		l->inbox_head = (l->inbox_head + 1) % XBD_FLEET_INBOX;
		l->inbox_n--;
	}
	if (n)
		pthread_cond_signal(&l->inbox_cond);
	pthread_mutex_unlock(&l->lock);
	if (l->inbox_n) /* more than max: the loop comes back for the rest */
		wake(l);
	return n;
}

void xbd_fleet_link_stats(struct xbd_fleet_link *l, struct xbd_fleet_link_stats *out)
{
	pthread_mutex_lock(&l->lock);
	*out = (struct xbd_fleet_link_stats){
		.publisher_up = l->publisher_up, .reader_up = l->reader_up, .queued = l->queue_n,
		.published = l->published, .overflowed = l->overflowed,
		.publish_failed = l->publish_failed, .rebuilds = l->rebuilds,
	};
	snprintf(out->error, sizeof(out->error), "%s", l->error);
	pthread_mutex_unlock(&l->lock);
}

void xbd_fleet_link_stop(struct xbd_fleet_link *l)
{
	pthread_mutex_lock(&l->lock);
	l->stopping = true;
	if (l->reader_fd >= 0)
		shutdown(l->reader_fd, SHUT_RDWR); /* ends a waiting XREAD now */
	pthread_cond_broadcast(&l->queue_cond);
	pthread_cond_broadcast(&l->inbox_cond);
	pthread_mutex_unlock(&l->lock);
	pthread_join(l->publisher, NULL);
	if (l->started)
		pthread_join(l->reader, NULL);
	if (l->queue_n)
		pr_info("fleet: %zu entries not yet published are dropped", l->queue_n);
	close(l->wake_fd);
	free(l->queue);
	free(l->inbox);
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->queue_cond);
	pthread_cond_destroy(&l->inbox_cond);
	xbd_conf_fleet_free(&l->conf);
	memset(l, 0, sizeof(*l));
	l->wake_fd = -1;
}
