/* fleet_link.c - see fleet_link.h: the reader's thread and the loop's side of the queues (the
 * publisher is fleet_publish.c, the connections fleet_conn.c). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "fleet_conn.h"
#include "log.h"

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
static void decode_entry(const redisReply *r, const struct xbd_fleet_secret *key,
			 struct xbd_fleet_item *it)
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
	it->status = xbd_fleet_decode(raw, n, key, &it->e, it->why, sizeof(it->why));
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
		it.status = xbd_fleet_snapshot_decode(&raw, &l->conf.key, &it.e, it.why,
						      sizeof(it.why));
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

		if (xbd_fleet_reply_failed(r) || r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
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

/* One XREAD: hands over what came and moves from. 0, 1 when nothing came within BLOCK_MS, or
 * -EIO when Redis failed. */
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
		return 1;
	}
	entries = r->element[0]->element[1];
	for (size_t i = 0; i < entries->elements; i++) {
		struct xbd_fleet_item it;

		decode_entry(entries->element[i], &l->conf.key, &it);
		if (!xbd_fleet_id_valid(it.id))
			continue; /* without an id it cannot be read past either */
		snprintf(from, XBD_FLEET_ID_MAX, "%s", it.id);
		if (!hand_over(l, &it))
			break;
	}
	freeReplyObject(r);
	return 0;
}

static bool password_changed(struct xbd_fleet_link *l, unsigned int gen)
{
	bool changed;

	pthread_mutex_lock(&l->lock);
	changed = gen != l->auth_gen;
	pthread_mutex_unlock(&l->lock);
	return changed;
}

static void *reader_main(void *arg)
{
	struct xbd_fleet_link *l = arg;
	char from[XBD_FLEET_ID_MAX];
	redisContext *c = NULL;
	int backoff = BACKOFF_MIN_MS;
	bool positioned = false;
	unsigned int gen = 0;
	int ret;

	pthread_mutex_lock(&l->lock);
	snprintf(from, sizeof(from), "%s", l->read_from);
	pthread_mutex_unlock(&l->lock);
	while (!xbd_fleet_stopping(l)) {
		if (c && password_changed(l, gen)) {
			pr_info("fleet: reader: the password changed: connecting again");
			pthread_mutex_lock(&l->lock);
			l->reader_fd = -1;
			pthread_mutex_unlock(&l->lock);
			redisFree(c);
			c = NULL;
		}
		if (!c) {
			c = xbd_fleet_connect(l, "reader", &gen);
			if (!c) {
				xbd_fleet_backoff(l, &l->inbox_cond, &backoff);
				continue;
			}
			pthread_mutex_lock(&l->lock);
			l->reader_fd = c->fd;
			pthread_mutex_unlock(&l->lock);
			xbd_fleet_set_up(l, &l->reader_up, true, "reader");
			positioned = false; /* Redis may have lost or trimmed the stream meanwhile */
		}
		ret = positioned ? 0 : position(l, c, from);
		if (!ret)
			ret = read_once(l, c, from);
		if (ret < 0) {
			if (!xbd_fleet_stopping(l)) {
				xbd_fleet_drop(l, &c, &l->reader_up, "reader");
				xbd_fleet_backoff(l, &l->inbox_cond, &backoff);
			}
			continue;
		}
		/* A quiet stream may be one that went back under this reader: deleted and made
		 * anew, or added to at an id past every other (it would wait there for ever).
		 * Its place is checked again before the next read. */
		positioned = ret == 0;
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
				       .queue_size = from->queue_size,
				       .remote_share = from->remote_share, .key = from->key };
	if (dup_field(&to->redis, from->redis) || dup_field(&to->redis_host, from->redis_host) ||
	    dup_field(&to->stream, from->stream) || dup_field(&to->snapshot, from->snapshot) ||
	    dup_field(&to->node, from->node) || dup_field(&to->user, from->user) ||
	    dup_field(&to->password_file, from->password_file)) {
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
	l->publisher_fd = -1;
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
	pthread_cond_init(&l->done_cond, NULL);
	ret = -pthread_create(&l->publisher, NULL, xbd_fleet_publisher_main, l);
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
		.publish_failed = l->publish_failed, .rebuilds = l->rebuilds, .pruned = l->pruned,
	};
	snprintf(out->error, sizeof(out->error), "%s", l->error);
	snprintf(out->publish_error, sizeof(out->publish_error), "%s", l->publish_error);
	pthread_mutex_unlock(&l->lock);
}

int xbd_fleet_link_reauth(struct xbd_fleet_link *l, char *err, size_t errlen)
{
	char fresh[sizeof(l->password)];
	int ret;

	if (!l->conf.password_file)
		return 0;
	ret = xbd_fleet_password_read(l->conf.password_file, fresh, sizeof(fresh), err, errlen);
	if (ret)
		return ret;
	pthread_mutex_lock(&l->lock);
	ret = strcmp(fresh, l->password) != 0;
	if (ret) {
		snprintf(l->password, sizeof(l->password), "%s", fresh);
		l->auth_gen++;
		pthread_cond_broadcast(&l->queue_cond); /* the publisher sees it at once */
	}
	pthread_mutex_unlock(&l->lock);
	explicit_bzero(fresh, sizeof(fresh));
	return ret;
}

/* Waits for the publisher's end until the flush's time is up, then cuts its connection. */
static void wait_publisher(struct xbd_fleet_link *l)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += XBD_FLEET_FLUSH_MS / 1000;
	until.tv_nsec += (long)(XBD_FLEET_FLUSH_MS % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&l->lock);
	while (!l->publisher_done &&
	       pthread_cond_timedwait(&l->done_cond, &l->lock, &until) != ETIMEDOUT)
		;
	if (!l->publisher_done && l->publisher_fd >= 0)
		shutdown(l->publisher_fd, SHUT_RDWR); /* a reply that never came ends now */
	pthread_mutex_unlock(&l->lock);
	pthread_join(l->publisher, NULL);
}

void xbd_fleet_link_stop(struct xbd_fleet_link *l)
{
	size_t queued;

	pthread_mutex_lock(&l->lock);
	l->stopping = true;
	l->flush_until_ms = xbd_fleet_mono_ms() + XBD_FLEET_FLUSH_MS;
	queued = l->queue_n;
	if (l->reader_fd >= 0)
		shutdown(l->reader_fd, SHUT_RDWR); /* ends a waiting XREAD now */
	pthread_cond_broadcast(&l->queue_cond);
	pthread_cond_broadcast(&l->inbox_cond);
	pthread_mutex_unlock(&l->lock);
	wait_publisher(l);
	if (l->started)
		pthread_join(l->reader, NULL);
	if (l->queue_n)
		pr_warn("fleet: %zu of the %zu entries queued at stop not confirmed by redis %s within %d ms: they may be lost",
			l->queue_n, queued, l->conf.redis, XBD_FLEET_FLUSH_MS);
	else if (queued)
		pr_info("fleet: the %zu entries queued at stop published", queued);
	close(l->wake_fd);
	free(l->queue);
	free(l->inbox);
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->queue_cond);
	pthread_cond_destroy(&l->inbox_cond);
	pthread_cond_destroy(&l->done_cond);
	explicit_bzero(l->password, sizeof(l->password));
	xbd_conf_fleet_free(&l->conf);
	memset(l, 0, sizeof(*l));
	l->wake_fd = -1;
}
