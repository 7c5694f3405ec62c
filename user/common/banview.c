/* banview.c - see banview.h. A listing may hold a million bans: each is read from the reply
 * once into a row, and the rows are filtered and sorted without touching JSON again. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "banview.h"
#include "control_fields.h"

int xb_ban_sort_parse(const char *text, enum xb_ban_sort *sort, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		enum xb_ban_sort sort;
	} keys[] = { { "time", XB_BAN_SORT_TIME },
		     { "count", XB_BAN_SORT_COUNT },
		     { "left", XB_BAN_SORT_LEFT } };

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!strcmp(text, keys[i].name)) {
			*sort = keys[i].sort;
			return 0;
		}
	}
	snprintf(err, errlen, "unknown sort key '%.40s': expected time, count or left", text);
	return -EINVAL;
}

int xb_ban_origin_parse(const char *text, struct xb_ban_view *v, char *err, size_t errlen)
{
	if (!strcmp(text, "local"))
		v->origin = XB_ORIGIN_LOCAL;
	else if (!strcmp(text, "manual"))
		v->origin = XB_ORIGIN_MANUAL;
	else if (!strcmp(text, "remote"))
		v->origin = XB_ORIGIN_REMOTE;
	else if (xbd_fleet_name_valid(text)) {
		v->origin = XB_ORIGIN_NODE;
		snprintf(v->node, sizeof(v->node), "%s", text);
	} else {
		snprintf(err, errlen, "bad origin '%.40s': expected local, manual, remote or a fleet "
			 "node's name", text);
		return -EINVAL;
	}
	return 0;
}

bool xb_ban_view_active(const struct xb_ban_view *v)
{
	return v->by_reason || v->origin != XB_ORIGIN_ANY || v->by_prefix ||
	       v->sort != XB_BAN_SORT_NONE;
}

/* What the view reads of one ban. */
struct row {
	struct json_object *ban;
	struct xb_prefix prefix;
	const char *started; /* RFC 3339 UTC, which sorts as the time does; NULL: not recorded */
	__s64 count, left;   /* left -1: permanent */
};

static const char *member_string(struct json_object *o, const char *name)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, name, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static __s64 member_int(struct json_object *o, const char *name)
{
	struct json_object *v;

	return json_object_object_get_ex(o, name, &v) ? json_object_get_int64(v) : 0;
}

static bool origin_matches(const struct xb_ban_view *v, struct json_object *b,
			   struct json_object *origins)
{
	const char *node = origins ? member_string(origins, member_string(b, XB_F(PREFIX)))
				   : NULL;
	const char *reason = member_string(b, XB_F(REASON));
	bool manual = reason && !strcmp(reason, xb_reason_name(XDPBAN_REASON_MANUAL));

	switch (v->origin) {
	case XB_ORIGIN_ANY:
		return true;
	case XB_ORIGIN_LOCAL:
		return !node && !manual;
	case XB_ORIGIN_MANUAL:
		return !node && manual;
	case XB_ORIGIN_REMOTE:
		return node;
	case XB_ORIGIN_NODE:
		return node && !strcmp(node, v->node);
	}
	return false;
}

/* Fills r from ban b; false when the view leaves it out (or its prefix does not parse). */
static bool take_row(const struct xb_ban_view *v, struct json_object *b,
		     struct json_object *origins, struct row *r)
{
	const char *prefix = member_string(b, XB_F(PREFIX)), *reason;
	char ignored[XB_ERRLEN];

	if (!prefix || xb_prefix_parse_saved(prefix, &r->prefix, ignored, sizeof(ignored)))
		return false;
	if (v->by_prefix && !xb_prefix_contains(&v->within, &r->prefix))
		return false;
	reason = member_string(b, XB_F(REASON));
	if (v->by_reason && (!reason || strcmp(reason, xb_reason_name(v->reason))))
		return false;
	if (!origin_matches(v, b, origins))
		return false;
	r->ban = b;
	r->started = member_string(b, XB_F(STARTED));
	r->count = member_int(b, XB_F(COUNT));
	r->left = member_int(b, XB_F(SECONDS_LEFT));
	return true;
}

static int by_prefix(const struct row *a, const struct row *b)
{
	return xb_prefix_order(&a->prefix, &b->prefix);
}

static int newest_first(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	int c;

	if (!a->started != !b->started)
		return a->started ? -1 : 1;
	c = a->started ? strcmp(b->started, a->started) : 0;
	return c ? c : by_prefix(a, b);
}

static int most_first(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return by_prefix(a, b);
}

/* A permanent ban (-1) has the most left of all. */
static int least_left_first(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	__u64 la = (__u64)a->left, lb = (__u64)b->left; /* -1 becomes the largest */

	if (la != lb)
		return la < lb ? -1 : 1;
	return by_prefix(a, b);
}

static void sort_rows(struct row *rows, size_t n, enum xb_ban_sort sort)
{
	int (*cmp)(const void *, const void *) = sort == XB_BAN_SORT_TIME    ? newest_first
						 : sort == XB_BAN_SORT_COUNT ? most_first
						 : sort == XB_BAN_SORT_LEFT  ? least_left_first
									     : NULL;

	if (cmp && n > 1)
		qsort(rows, n, sizeof(*rows), cmp);
}

static struct json_object *rows_array(const struct row *rows, size_t n)
{
	struct json_object *arr = json_object_new_array_ext((int)n);

	for (size_t i = 0; arr && i < n; i++) {
		if (json_object_array_add(arr, json_object_get(rows[i].ban))) {
			json_object_put(rows[i].ban);
			json_object_put(arr);
			return NULL;
		}
	}
	return arr;
}

int xb_ban_view_apply(struct json_object *reply, const struct xb_ban_view *v)
{
	struct json_object *bans = NULL, *origins = NULL, *selected;
	struct row *rows;
	size_t n = 0, total;

	json_object_object_get_ex(reply, XB_F(BANS), &bans);
	json_object_object_get_ex(reply, XB_F(ORIGINS), &origins);
	total = json_object_is_type(bans, json_type_array) ? json_object_array_length(bans) : 0;
	rows = calloc(total ? total : 1, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < total; i++)
		n += take_row(v, json_object_array_get_idx(bans, i), origins, &rows[n]);
	sort_rows(rows, n, v->sort);
	selected = rows_array(rows, n); /* holds its bans before the old array lets them go */
	free(rows);
	if (!selected)
		return -ENOMEM;
	json_object_object_add(reply, XB_F(BANS), selected);
	return 0;
}

int xb_ban_view_comments(struct json_object *reply)
{
	struct json_object *bans = NULL, *comments = NULL, *text;
	const char *prefix;

	if (!json_object_object_get_ex(reply, XB_F(COMMENTS), &comments))
		return 0;
	json_object_object_get_ex(reply, XB_F(BANS), &bans);
	for (size_t i = 0; json_object_is_type(bans, json_type_array) &&
			   i < json_object_array_length(bans); i++) {
		struct json_object *b = json_object_array_get_idx(bans, i);

		prefix = member_string(b, XB_F(PREFIX));
		if (!prefix || !json_object_object_get_ex(comments, prefix, &text))
			continue;
		if (json_object_object_add(b, XB_F(COMMENT), json_object_get(text))) {
			json_object_put(text);
			return -ENOMEM;
		}
	}
	json_object_object_del(reply, XB_F(COMMENTS));
	return 0;
}
