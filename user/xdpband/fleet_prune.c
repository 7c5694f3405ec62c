/* fleet_prune.c - see fleet_prune.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <hiredis/hiredis.h>
#include "fleet_conn.h"
#include "fleet_entry.h"
#include "fleet_prune.h"

static bool is_string(const redisReply *r)
{
	return r && r->type == REDIS_REPLY_STRING;
}

/* The reply of one command of the pass; -EIO (the connection failed or Redis refused). */
static int get(redisContext *c, redisReply **r)
{
	*r = NULL;
	if (redisGetReply(c, (void **)r) != REDIS_OK || !*r)
		return -EIO;
	return (*r)->type == REDIS_REPLY_ERROR ? -EIO : 0;
}

/* MULTI, HDEL of the n fields, EXEC: the deleted count, or 0 when the hash changed after the
 * WATCH (EXEC answers nil and deletes nothing). */
static int delete_fields(redisContext *c, const char *snapshot, const char **fields,
			 const size_t *lens, size_t n, size_t *deleted)
{
	const char *argv[2 + XBD_FLEET_PRUNE_COUNT];
	size_t argl[2 + XBD_FLEET_PRUNE_COUNT];
	redisReply *r;
	int ret;

	argv[0] = "HDEL";
	argl[0] = 4;
	argv[1] = snapshot;
	argl[1] = strlen(snapshot);
	for (size_t i = 0; i < n; i++) {
		argv[2 + i] = fields[i];
		argl[2 + i] = lens[i];
	}
	redisAppendCommand(c, "MULTI");
	redisAppendCommandArgv(c, (int)(2 + n), argv, argl);
	redisAppendCommand(c, "EXEC");
	for (int k = 0; k < 3; k++) {
		ret = get(c, &r);
		if (!ret && k == 2 && r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
		    r->element[0]->type == REDIS_REPLY_INTEGER)
			*deleted = (size_t)r->element[0]->integer;
		freeReplyObject(r);
		if (ret)
			return ret;
	}
	return 0;
}

int xbd_fleet_prune_pass(redisContext *c, const char *snapshot, char *cursor, size_t cursor_len,
			 time_t now, size_t *deleted)
{
	const char *fields[XBD_FLEET_PRUNE_COUNT];
	size_t lens[XBD_FLEET_PRUNE_COUNT], n = 0;
	const redisReply *kv;
	redisReply *r = NULL;
	int ret;

	*deleted = 0;
	r = redisCommand(c, "WATCH %s", snapshot);
	ret = r && r->type != REDIS_REPLY_ERROR ? 0 : -EIO;
	freeReplyObject(r);
	if (ret)
		return ret;
	ret = xbd_fleet_command_bounded(c, SCAN_BYTES_FOR(XBD_FLEET_PRUNE_COUNT), &r,
					"HSCAN %s %s COUNT %d", snapshot, cursor,
					XBD_FLEET_PRUNE_COUNT);
	if (ret == -E2BIG && r && r->elements == 2 && is_string(r->element[0]))
		snprintf(cursor, cursor_len, "%s", r->element[0]->str); /* past the page */
	if (ret)
		return ret; /* a cut reply is c's to free */
	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 || !is_string(r->element[0]) ||
	    r->element[1]->type != REDIS_REPLY_ARRAY) {
		freeReplyObject(r);
		return -EIO;
	}
	snprintf(cursor, cursor_len, "%s", r->element[0]->str);
	kv = r->element[1];
	for (size_t i = 0; i + 1 < kv->elements && n < XBD_FLEET_PRUNE_COUNT; i += 2) {
		struct xbd_fleet_raw raw;

		if (!is_string(kv->element[i]) || !is_string(kv->element[i + 1]))
			continue;
		raw = (struct xbd_fleet_raw){ kv->element[i]->str, kv->element[i + 1]->str,
					      kv->element[i]->len, kv->element[i + 1]->len };
		if (xbd_fleet_snapshot_expired(&raw, now)) {
			fields[n] = raw.name;
			lens[n++] = raw.name_len;
		}
	}
	if (n) {
		ret = delete_fields(c, snapshot, fields, lens, n, deleted);
	} else {
		redisReply *u = redisCommand(c, "UNWATCH");

		ret = u && u->type != REDIS_REPLY_ERROR ? 0 : -EIO;
		freeReplyObject(u);
	}
	freeReplyObject(r);
	return ret;
}
