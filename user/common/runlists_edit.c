/* runlists_edit.c - `xdpban lists add|del` through a list context (runlists.h): a change is
 * made on a copy of the layer's XBD_LIST_ENTRIES (runentries.c) and put in force through
 * xbd_lists_ctx_replace, so that a refused change leaves the tries, the store and the lists in
 * memory as they were. Writes no map itself. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "control_fields.h"
#include "exempt.h"
#include "runlists.h"

int xbd_runtime_never_ban(const struct xbd_runtime *rt, struct xb_exempt_set *out)
{
	int ret = 0;

	for (size_t i = 0; i < rt->n && !ret; i++) {
		const struct xbd_rt_list *l = &rt->v[i];

		for (size_t j = 0; l->verdict == XBD_LIST_NEVER_BAN && j < l->e.n && !ret; j++)
			ret = xb_exempt_set_add(out, &l->e.v[j].prefix, XDPBAN_EXEMPT_LIST, 0);
	}
	return ret;
}

/* A copy of from (NULL: none yet) into to, a fresh XBD_LIST_ENTRIES of the layer. 0 or
 * -ENOMEM (to then freed). */
static int entries_copy(const struct xbd_rt_list *from, __u32 verdict, struct xbd_rt_list *to)
{
	size_t n = from ? from->e.n : 0;
	int ret = 0;

	memset(to, 0, sizeof(*to));
	to->verdict = verdict;
	to->path = strdup(XBD_LIST_ENTRIES);
	to->comments = calloc(n ? n : 1, sizeof(*to->comments));
	if (!to->path || !to->comments)
		ret = -ENOMEM;
	/* Entry and comment in step, so that a partial copy frees as a list. */
	for (size_t i = 0; i < n && !ret; i++) {
		char *text = strdup(from->comments[i]);

		ret = text ? xbd_list_entries_push(&to->e, &from->e.v[i], n) : -ENOMEM;
		if (!ret)
			to->comments[i] = text;
		else
			free(text);
	}
	if (ret)
		xbd_rt_list_free(to);
	return ret;
}

/* The place of the layer's XBD_LIST_ENTRIES in rt, or -1. */
static int entries_of(const struct xbd_runtime *rt, __u32 verdict)
{
	for (size_t i = 0; i < rt->n; i++)
		if (rt->v[i].verdict == verdict && xbd_rt_is_entries(&rt->v[i]))
			return (int)i;
	return -1;
}

/* next: the lists of c->rt, shared, but for the layer's entries, a copy of their own (a new
 * list when there were none) at *at. 0 or -errno with err. */
static int next_with_copy(const struct xbd_lists_ctx *c, __u32 verdict, struct xbd_runtime *next,
			  size_t *at, char *err, size_t errlen)
{
	int i = entries_of(c->rt, verdict);

	*next = *c->rt;
	if (i < 0 && next->n == XBD_RUNTIME_LISTS_MAX) {
		snprintf(err, errlen, "at most %d runtime lists at once, and single entries are one "
				      "more in the %s layer: clear a list first",
			 XBD_RUNTIME_LISTS_MAX, xbd_layer_name(verdict));
		return -ENOSPC;
	}
	*at = i < 0 ? next->n++ : (size_t)i;
	if (entries_copy(i < 0 ? NULL : &c->rt->v[i], verdict, &next->v[*at])) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* The exempt tries leave the never-ban entries room for so many of a family (lists.h); the
 * config's and the runtime ones share it. 0, or -ENOSPC with err. */
static int never_ban_room(const struct xbd_lists_ctx *c, const struct xbd_runtime *next,
			  __u8 family, char *err, size_t errlen)
{
	struct xbd_list_caps caps;
	size_t n = 0, cap;
	int ret = xbd_list_caps_of(c->maps, &caps, err, errlen);

	if (ret)
		return ret;
	for (size_t i = 0; i < c->config->never_ban.n; i++)
		n += c->config->never_ban.v[i].prefix.family == family;
	for (size_t i = 0; i < next->n; i++)
		for (size_t j = 0; next->v[i].verdict == XBD_LIST_NEVER_BAN && j < next->v[i].e.n; j++)
			n += next->v[i].e.v[j].prefix.family == family;
	cap = family == XDPBAN_FAMILY_INET ? caps.never_ban4 : caps.never_ban6;
	if (n <= cap)
		return 0;
	snprintf(err, errlen, "the exempt trie has room for %zu never-ban IPv%d entries, the "
			      "config's and the runtime ones together",
		 cap, family == XDPBAN_FAMILY_INET ? 4 : 6);
	return -ENOSPC;
}

static void entry_reply(struct json_object *reply, __u32 verdict, const struct xb_prefix *p,
			const char *comment)
{
	char text[64] = "?";

	xb_prefix_format(p, text, sizeof(text));
	json_object_object_add(reply, XB_F(LAYER), json_object_new_string(xbd_layer_name(verdict)));
	json_object_object_add(reply, XB_F(PREFIX), json_object_new_string(text));
	json_object_object_add(reply, XB_F(COMMENT), json_object_new_string(comment ? comment : ""));
}

int xbd_lists_ctx_add(struct xbd_lists_ctx *c, __u32 verdict, const struct xb_prefix *p,
		      const char *comment, struct json_object *reply, char *err, size_t errlen)
{
	struct xbd_runtime *next = calloc(1, sizeof(*next));
	bool added = false;
	size_t at = 0;
	int ret = next ? xbd_entry_check(p, comment, err, errlen) : -ENOMEM;

	if (!ret)
		ret = next_with_copy(c, verdict, next, &at, err, errlen);
	if (ret) {
		free(next);
		return ret;
	}
	ret = xbd_rt_entries_put(&next->v[at], p, comment, &added);
	if (ret)
		snprintf(err, errlen, ret == -ENOSPC ? "the %s layer holds %d single entries, the most it may"
						     : "out of memory",
			 xbd_layer_name(verdict), XBD_RUNTIME_ENTRIES_MAX);
	if (!ret && verdict == XBD_LIST_NEVER_BAN)
		ret = never_ban_room(c, next, p->family, err, errlen);
	if (ret)
		xbd_rt_list_free(&next->v[at]);
	else
		ret = xbd_lists_ctx_replace(c, next, reply, err, errlen);
	if (!ret) {
		entry_reply(reply, verdict, p, comment);
		json_object_object_add(reply, XB_F(ADDED), json_object_new_boolean(added));
	}
	free(next);
	return ret;
}

/* An XBD_LIST_ENTRIES left empty goes: it would keep a list's place (and, in the allow layer,
 * allow-only mode) for nothing. */
static void drop_if_empty(struct xbd_runtime *next, size_t at)
{
	if (next->v[at].e.n)
		return;
	xbd_rt_list_free(&next->v[at]);
	memmove(&next->v[at], &next->v[at + 1], (next->n - at - 1) * sizeof(next->v[0]));
	next->n--;
}

int xbd_lists_ctx_del(struct xbd_lists_ctx *c, __u32 verdict, const struct xb_prefix *p,
		      struct json_object *reply, char *err, size_t errlen)
{
	struct xbd_runtime *next = calloc(1, sizeof(*next));
	struct xbd_list_entry key = { .prefix = *p };
	const struct xbd_list_entry *e;
	int i = entries_of(c->rt, verdict), ret;
	char *comment = NULL, text[64] = "?";
	size_t at = 0;

	e = i < 0 ? NULL : xbd_lists_find(&c->rt->v[i].e, &key.prefix);
	if (!next || !e) {
		xb_prefix_format(p, text, sizeof(text));
		snprintf(err, errlen, next ? "no single entry %s in the %s layer" : "out of memory",
			 text, xbd_layer_name(verdict));
		free(next);
		return next ? -ENOENT : -ENOMEM;
	}
	comment = strdup(xbd_rt_entry_comment(&c->rt->v[i], e));
	ret = comment ? next_with_copy(c, verdict, next, &at, err, errlen) : -ENOMEM;
	if (!ret) {
		xbd_rt_entries_del(&next->v[at], p);
		drop_if_empty(next, at);
		ret = xbd_lists_ctx_replace(c, next, reply, err, errlen);
	} else if (!comment) {
		snprintf(err, errlen, "out of memory");
	}
	if (!ret)
		entry_reply(reply, verdict, p, comment);
	free(comment);
	free(next);
	return ret;
}
