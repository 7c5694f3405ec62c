/* fleet_link.c - see fleet_link.h: the reader's thread and the loop's side of the queues (the
 * publisher is fleet_publish.c, the connections fleet_conn.c). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "conf_fleet.h"
#include "fleet_conn.h"
#include "fleet_link.h"
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

/* The bytes of an entry's field names and values, those read so far when kv is a part. */
static size_t entry_bytes(const redisReply *kv)
{
	size_t n = 0;

	for (size_t i = 0; kv && kv->type == REDIS_REPLY_ARRAY && i < kv->elements; i++)
		if (is_string(kv->element[i]))
			n += kv->element[i]->len;
	return n;
}

static void refuse_oversized(struct xbd_fleet_item *it, size_t bytes, bool whole)
{
	it->status = -E2BIG;
	snprintf(it->why, sizeof(it->why), "%s%zu bytes of fields and values: over the %d allowed",
		 whole ? "" : "over ", bytes, XBD_FLEET_ENTRY_MAX);
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
	if (entry_bytes(kv) > XBD_FLEET_ENTRY_MAX)
		return refuse_oversized(it, entry_bytes(kv), true);
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

/* The value of name in a flat [name, value, ...] reply (XINFO STREAM), or NULL; r may be a
 * reply cut short, whose elements not read are NULL. */
static const redisReply *info_field(const redisReply *r, const char *name)
{
	for (size_t i = 0; r && r->type == REDIS_REPLY_ARRAY && i + 1 < r->elements; i += 2)
		if (is_string(r->element[i]) && !strcmp(r->element[i]->str, name))
			return r->element[i + 1];
	return NULL;
}

/* The reader's connection, and its fd for a stop to cut: hung up without a fault noted. */
static void reader_hang_up(struct xbd_fleet_link *l, redisContext **c)
{
	pthread_mutex_lock(&l->lock);
	l->reader_fd = -1;
	pthread_mutex_unlock(&l->lock);
	redisFree(*c);
	*c = NULL;
}

/* 0, or -EIO with the problem noted by xbd_fleet_connect. */
static int reader_connect(struct xbd_fleet_link *l, redisContext **c, unsigned int *gen)
{
	*c = xbd_fleet_connect(l, "reader", gen);
	if (!*c)
		return -EIO;
	pthread_mutex_lock(&l->lock);
	l->reader_fd = (*c)->fd;
	pthread_mutex_unlock(&l->lock);
	return 0;
}

/* Drops a connection whose reply was cut short (xbd_fleet_command_bounded) and makes a new
 * one: a refusal of a hostile entry, not a fault of the link, so nothing is noted. */
static int reconnect_after_cut(struct xbd_fleet_link *l, redisContext **c, unsigned int *gen)
{
	reader_hang_up(l, c);
	return reader_connect(l, c, gen);
}

/* The pairs of one HSCAN page; a page cut short ends at its first field not read whole. */
static int hand_snapshot_page(struct xbd_fleet_link *l, const redisReply *kv)
{
	struct xbd_fleet_item it = { .kind = XBD_FLEET_ITEM_SNAPSHOT };

	for (size_t i = 0; kv && i + 1 < kv->elements; i += 2) {
		struct xbd_fleet_raw raw;

		if (!kv->element[i] || !kv->element[i + 1])
			break;
		if (!is_string(kv->element[i]) || !is_string(kv->element[i + 1]) ||
		    !strcmp(kv->element[i]->str, XBD_FLEET_EPOCH_FIELD))
			continue;
		raw = (struct xbd_fleet_raw){ kv->element[i]->str, kv->element[i + 1]->str,
					      kv->element[i]->len, kv->element[i + 1]->len };
		it.status = xbd_fleet_snapshot_decode(&raw, &l->conf.key, &it.e, it.why,
						      sizeof(it.why));
		if (!hand_over(l, &it))
			return -ECANCELED;
	}
	return 0;
}

/* A page of the snapshot cut short: its pairs read whole are taken, the field that overflowed
 * is refused, and what followed it on the page is not seen, so the rebuild must not lift the
 * remote bans it did not find. */
static int cut_snapshot_page(struct xbd_fleet_link *l, const redisReply *r, bool *lift)
{
	struct xbd_fleet_item it = { .kind = XBD_FLEET_ITEM_SNAPSHOT, .status = -E2BIG };

	snprintf(it.why, sizeof(it.why),
		 "a field of the snapshot is over %zu bytes: the rest of its page of %d is skipped "
		 "and no remote ban is lifted by this rebuild", SCAN_BYTES_MAX, SCAN_COUNT);
	*lift = false;
	if (r && r->elements == 2 && r->element[1] && hand_snapshot_page(l, r->element[1]))
		return -ECANCELED;
	return hand_over(l, &it) ? 0 : -ECANCELED;
}

/* Every ban of the snapshot hash, between a BEGIN and an END that stands for id `upto`. */
static int rebuild(struct xbd_fleet_link *l, redisContext **c, unsigned int *gen,
		   const char *upto, bool lift)
{
	struct xbd_fleet_item it = { .kind = XBD_FLEET_ITEM_SNAPSHOT_BEGIN };
	char cursor[32] = "0";
	int ret = 0;

	if (!hand_over(l, &it))
		return -ECANCELED;
	do {
		redisReply *r;
		int got = xbd_fleet_command_bounded(*c, SCAN_BYTES_MAX, &r, "HSCAN %s %s COUNT %d",
						    l->conf.snapshot, cursor, SCAN_COUNT);

		if (got == -EIO || !r || r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
		    !is_string(r->element[0])) {
			if (!got)
				freeReplyObject(r);
			return -EIO;
		}
		snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
		if (got == -E2BIG) {
			ret = cut_snapshot_page(l, r, &lift);
			if (!ret)
				ret = reconnect_after_cut(l, c, gen);
			continue;
		}
		ret = r->element[1]->type == REDIS_REPLY_ARRAY ? hand_snapshot_page(l, r->element[1])
							      : -EIO;
		freeReplyObject(r);
	} while (!ret && strcmp(cursor, "0"));
	it = (struct xbd_fleet_item){ .kind = XBD_FLEET_ITEM_SNAPSHOT_END, .status = lift };
	snprintf(it.id, sizeof(it.id), "%s", upto);
	pthread_mutex_lock(&l->lock);
	l->rebuilds++;
	pthread_mutex_unlock(&l->lock);
	return ret ? ret : hand_over(l, &it) ? 0 : -ECANCELED;
}

/* The epoch of the data in Redis now (XBD_FLEET_EPOCH_FIELD), set to a new one when missing;
 * "" when the field holds anything but an epoch (a writer's, read with a bound). 0, or -EIO
 * when Redis failed. */
static int read_epoch(struct xbd_fleet_link *l, redisContext **c, unsigned int *gen,
		      char *epoch)
{
	unsigned char rnd[XBD_FLEET_EPOCH_HEX / 2];
	char fresh[XBD_FLEET_EPOCH_HEX + 1];
	redisReply *r;
	int got;

	epoch[0] = '\0';
	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		return -EIO;
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(fresh + 2 * i, 3, "%02x", rnd[i]);
	r = redisCommand(*c, "HSETNX %s %s %s", l->conf.snapshot, XBD_FLEET_EPOCH_FIELD, fresh);
	got = xbd_fleet_reply_failed(r) ? -EIO : 0;
	freeReplyObject(r);
	if (!got)
		got = xbd_fleet_command_bounded(*c, 256, &r, "HGET %s %s", l->conf.snapshot,
						XBD_FLEET_EPOCH_FIELD);
	if (got == -E2BIG)
		return reconnect_after_cut(l, c, gen);
	if (got)
		return got;
	if (is_string(r) && r->len == XBD_FLEET_EPOCH_HEX &&
	    strspn(r->str, "0123456789abcdef") == XBD_FLEET_EPOCH_HEX)
		memcpy(epoch, r->str, r->len + 1);
	freeReplyObject(r);
	return 0;
}

/* Tells the loop the epoch read from now on (for the state file) when it is not the one
 * known; true when one was known and this is another, or no epoch at all: Redis lost its
 * data since, or a writer meddled with the field, and either way no remote ban is lifted. */
static bool epoch_changed(struct xbd_fleet_link *l, const char *epoch)
{
	struct xbd_fleet_item it = { .kind = XBD_FLEET_ITEM_EPOCH };
	bool changed = l->epoch[0] && strcmp(l->epoch, epoch);

	if (!epoch[0] || !strcmp(l->epoch, epoch))
		return changed;
	snprintf(l->epoch, sizeof(l->epoch), "%s", epoch);
	snprintf(it.id, sizeof(it.id), "%s", epoch);
	hand_over(l, &it);
	return changed;
}

/* What XINFO STREAM says of the stream: its last id ("0-0" when there is none) and its first
 * entry's id ("" when empty). Read with a bound, since it holds the first and last entries
 * whole: a cut reply still has both ids, which come before them. */
struct stream_ends {
	char last[XBD_FLEET_ID_MAX], first[XBD_FLEET_ID_MAX];
};

static void copy_id(char *to, const redisReply *r)
{
	if (is_string(r) && r->len < XBD_FLEET_ID_MAX)
		memcpy(to, r->str, r->len + 1);
}

static int stream_ends(struct xbd_fleet_link *l, redisContext **c, unsigned int *gen,
		       struct stream_ends *out)
{
	redisReply *r;
	const redisReply *first;
	int got = xbd_fleet_command_bounded(*c, INFO_BYTES_MAX, &r, "XINFO STREAM %s",
					    l->conf.stream);

	snprintf(out->last, sizeof(out->last), "0-0");
	out->first[0] = '\0';
	if (got == -EIO)
		return -EIO;
	if (!got && r->type == REDIS_REPLY_ERROR && strstr(r->str, "no such key")) {
		freeReplyObject(r); /* no stream yet: nothing trimmed, but maybe a snapshot */
		return 0;
	}
	if (!r || r->type != REDIS_REPLY_ARRAY) {
		if (!got)
			freeReplyObject(r);
		return -EIO;
	}
	copy_id(out->last, info_field(r, "last-generated-id"));
	/* Redis 7 keeps the first id apart; before, it is only in the first entry. */
	copy_id(out->first, info_field(r, "recorded-first-entry-id"));
	first = info_field(r, "first-entry");
	if (!out->first[0] && first && first->type == REDIS_REPLY_ARRAY && first->elements == 2)
		copy_id(out->first, first->element[0]);
	if (!strcmp(out->first, "0-0"))
		out->first[0] = '\0'; /* Redis 7's recorded id of an empty stream */
	if (!got)
		freeReplyObject(r);
	return got ? reconnect_after_cut(l, c, gen) : 0;
}

/* Where to read from: after `from` when the stream still holds what follows it; else from
 * the snapshot, then after the stream's last id. -EIO when Redis failed. */
static int position(struct xbd_fleet_link *l, redisContext **c, unsigned int *gen, char *from)
{
	char epoch[XBD_FLEET_EPOCH_HEX + 1];
	struct stream_ends ends;
	bool trimmed, lost, renewed;
	int ret;

	ret = read_epoch(l, c, gen, epoch);
	if (!ret)
		ret = stream_ends(l, c, gen, &ends);
	if (ret)
		return ret;
	/* A new epoch: Redis lost its data and another node's publish may already have made a
	 * new stream and snapshot, which look like a trimmed one but hold none of the bans in
	 * force. */
	renewed = epoch_changed(l, epoch);
	/* Past the last id: the stream was lost and made anew (a Redis without persistence);
	 * the snapshot went with it, so the remote bans in force here are kept, not lifted. */
	lost = from[0] && (renewed || xbd_fleet_id_cmp(from, ends.last) > 0);
	/* Entries came after from, and the first one left is later: some may be gone. */
	trimmed = from[0] && !lost && xbd_fleet_id_cmp(from, ends.last) < 0 &&
		  (!ends.first[0] || xbd_fleet_id_cmp(from, ends.first) < 0);
	if (from[0] && !lost && !trimmed)
		return 0;
	pr_info("fleet: %s: rebuilding from snapshot %s, then reading after %s",
		!from[0] ? "no entry applied yet"
		: renewed ? "Redis lost its data (the snapshot's epoch changed)"
		: lost	 ? "the stream is older than the last entry applied (Redis lost it)"
			 : "the stream was trimmed past the last entry applied",
		l->conf.snapshot, ends.last);
	ret = rebuild(l, c, gen, ends.last, trimmed);
	if (!ret)
		snprintf(from, XBD_FLEET_ID_MAX, "%s", ends.last);
	return ret;
}

/* An XREAD reply cut short: the entries read whole are handed over; the one cut is refused
 * when what was read of it already passes the limit (with the bytes still in the parser's
 * buffer, the value being read), else it is read again after a new connection. */
static void hand_cut_entries(struct xbd_fleet_link *l, redisContext *c, const redisReply *r,
			     char *from)
{
	const redisReply *entries;

	if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 1 || !r->element[0] ||
	    r->element[0]->type != REDIS_REPLY_ARRAY || r->element[0]->elements != 2 ||
	    !r->element[0]->element[1])
		return;
	entries = r->element[0]->element[1];
	for (size_t i = 0; i < entries->elements && entries->element[i]; i++) {
		const redisReply *e = entries->element[i];
		const redisReply *kv = e->elements == 2 ? e->element[1] : NULL;
		struct xbd_fleet_item it;
		size_t bytes;

		if (kv && kv->elements && kv->element[kv->elements - 1]) {
			decode_entry(e, &l->conf.key, &it); /* read whole */
		} else {
			bytes = entry_bytes(kv) + (c->reader->len - c->reader->pos);
			if (e->elements != 2 || !is_string(e->element[0]) ||
			    e->element[0]->len >= sizeof(it.id) || bytes <= XBD_FLEET_ENTRY_MAX)
				return;
			memset(&it, 0, sizeof(it));
			it.kind = XBD_FLEET_ITEM_ENTRY;
			memcpy(it.id, e->element[0]->str, e->element[0]->len);
			refuse_oversized(&it, bytes, false);
		}
		if (!xbd_fleet_id_valid(it.id))
			continue;
		snprintf(from, XBD_FLEET_ID_MAX, "%s", it.id);
		if (!hand_over(l, &it))
			return;
	}
}

/* One XREAD: hands over what came and moves from. 0, 1 when nothing came within BLOCK_MS, or
 * -EIO when Redis failed. */
static int read_once(struct xbd_fleet_link *l, redisContext **c, unsigned int *gen, char *from)
{
	redisReply *r;
	const redisReply *entries;
	int got = xbd_fleet_command_bounded(*c, READ_BYTES_MAX, &r,
					    "XREAD COUNT %d BLOCK %d STREAMS %s %s", READ_COUNT,
					    BLOCK_MS, l->conf.stream, from);

	if (got == -EIO)
		return -EIO;
	if (got == -E2BIG) {
		hand_cut_entries(l, *c, r, from);
		return reconnect_after_cut(l, c, gen);
	}
	if (r->type == REDIS_REPLY_ERROR) {
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

/* After a quiet XREAD: whether the stream may have gone back under the reader (deleted and
 * made anew, or added to at an id past every other, where it would wait for ever), so that
 * its place must be checked again. A new length is the sign; a stream made anew with the
 * length of the old one is caught by the check every QUIET_CHECK_MS. XINFO STREAM reads the
 * first and last entries, which a hostile writer can make large, so it is not asked every
 * second. */
static bool quiet_moved(redisContext *c, const char *stream, long long *quiet_len)
{
	redisReply *r = redisCommand(c, "XLEN %s", stream);
	bool moved = !r || r->type != REDIS_REPLY_INTEGER || r->integer != *quiet_len;

	if (r && r->type == REDIS_REPLY_INTEGER)
		*quiet_len = r->integer;
	freeReplyObject(r);
	return moved;
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
	long long quiet_len = -1;
	__u64 checked_ms = 0;
	unsigned int gen = 0;
	int ret;

	pthread_mutex_lock(&l->lock);
	snprintf(from, sizeof(from), "%s", l->read_from);
	pthread_mutex_unlock(&l->lock);
	while (!xbd_fleet_stopping(l)) {
		if (c && password_changed(l, gen)) {
			pr_info("fleet: reader: the password changed: connecting again");
			reader_hang_up(l, &c);
		}
		if (!c) {
			if (reader_connect(l, &c, &gen)) {
				xbd_fleet_backoff(l, &l->inbox_cond, &backoff);
				continue;
			}
			xbd_fleet_set_up(l, &l->reader_up, true, "reader");
			positioned = false; /* Redis may have lost or trimmed the stream meanwhile */
		}
		ret = 0;
		if (!positioned) {
			ret = position(l, &c, &gen, from);
			checked_ms = xbd_fleet_mono_ms();
		}
		if (!ret)
			ret = read_once(l, &c, &gen, from);
		if (ret < 0) {
			if (!xbd_fleet_stopping(l)) {
				if (c)
					xbd_fleet_drop(l, &c, &l->reader_up, "reader");
				else /* a reconnection after a cut failed, and said why */
					xbd_fleet_set_up(l, &l->reader_up, false, "reader");
				xbd_fleet_backoff(l, &l->inbox_cond, &backoff);
			}
			continue;
		}
		positioned = ret == 0 || (!quiet_moved(c, l->conf.stream, &quiet_len) &&
					  xbd_fleet_mono_ms() - checked_ms < QUIET_CHECK_MS);
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
			 const char *password, const char *last_id, const char *epoch, char *err,
			 size_t errlen)
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
	snprintf(l->epoch, sizeof(l->epoch), "%s", epoch);
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
	pthread_cond_init(&l->refused_cond, NULL);
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
	pthread_cond_broadcast(&l->refused_cond);
	pthread_mutex_unlock(&l->lock);
	wait_publisher(l);
	if (l->started)
		pthread_join(l->reader, NULL);
	if (l->queue_n)
		pr_warn("fleet: %zu of the %zu %s queued at stop not confirmed by redis %s within %d ms: they may be lost",
			l->queue_n, queued, xb_plural(queued, "entry", "entries"), l->conf.redis,
			XBD_FLEET_FLUSH_MS);
	else if (queued)
		pr_info("fleet: the %zu %s queued at stop published", queued,
			xb_plural(queued, "entry", "entries"));
	close(l->wake_fd);
	free(l->queue);
	free(l->inbox);
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->queue_cond);
	pthread_cond_destroy(&l->inbox_cond);
	pthread_cond_destroy(&l->done_cond);
	pthread_cond_destroy(&l->refused_cond);
	explicit_bzero(l->password, sizeof(l->password));
	xbd_conf_fleet_free(&l->conf);
	memset(l, 0, sizeof(*l));
	l->wake_fd = -1;
}
