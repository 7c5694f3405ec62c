/* runentries.c - see runentries.h: a layer's XBD_LIST_ENTRIES, whose entry of line i is the
 * i-th added and has comments[i - 1]; the checks of an entry. Pure: the store reads and writes
 * them (runlists.c), the context changes them (runlists_edit.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runentries.h"

bool xbd_rt_is_entries(const struct xbd_rt_list *l)
{
	return l->path && !strcmp(l->path, XBD_LIST_ENTRIES);
}

int xbd_entry_check(const struct xb_prefix *p, const char *comment, char *err, size_t errlen)
{
	char text[64] = "?";

	if (!p->plen) {
		xb_prefix_format(p, text, sizeof(text));
		snprintf(err, errlen, "%s: a whole address family is not an entry", text);
		return -EINVAL;
	}
	/* A comment is one line of the store and of `lists show`: no byte may break either. */
	return comment ? xb_ban_comment_check(comment, err, errlen) : 0;
}

/* Where e goes in l's order (xbd_list_entry_start_cmp): the first entry not before it. */
static size_t place_of(const struct xbd_list_entries *l, const struct xbd_list_entry *e)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (xbd_list_entry_start_cmp(&l->v[mid], e) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool holds_at(const struct xbd_list_entries *l, size_t at, const struct xbd_list_entry *e)
{
	return at < l->n && !xbd_list_entry_start_cmp(&l->v[at], e);
}

int xbd_rt_entries_put(struct xbd_rt_list *l, const struct xb_prefix *p, const char *comment,
		       bool *added)
{
	struct xbd_list_entry e = { .prefix = *p, .verdict = l->verdict,
				    .line = (__u32)l->e.n + 1 };
	size_t at = place_of(&l->e, &e);
	char *text = strdup(comment ? comment : ""), **comments;

	if (!text)
		return -ENOMEM;
	*added = !holds_at(&l->e, at, &e);
	if (!*added) {
		free(l->comments[l->e.v[at].line - 1]);
		l->comments[l->e.v[at].line - 1] = text;
		return 0;
	}
	comments = l->e.n < XBD_RUNTIME_ENTRIES_MAX
			   ? realloc(l->comments, (l->e.n + 1) * sizeof(*comments))
			   : NULL;
	if (comments)
		l->comments = comments;
	if (!comments || xbd_list_entries_push(&l->e, &e, XBD_RUNTIME_ENTRIES_MAX)) {
		free(text);
		return l->e.n < XBD_RUNTIME_ENTRIES_MAX ? -ENOMEM : -ENOSPC;
	}
	e.list_id = l->e.v[0].list_id;
	memmove(&l->e.v[at + 1], &l->e.v[at], (l->e.n - 1 - at) * sizeof(e));
	l->e.v[at] = e;
	l->comments[l->e.n - 1] = text;
	return 0;
}

int xbd_rt_entries_del(struct xbd_rt_list *l, const struct xb_prefix *p)
{
	struct xbd_list_entry key = { .prefix = *p };
	size_t at = place_of(&l->e, &key);
	__u32 line;

	if (!holds_at(&l->e, at, &key))
		return -ENOENT;
	line = l->e.v[at].line;
	free(l->comments[line - 1]);
	memmove(&l->comments[line - 1], &l->comments[line], (l->e.n - line) * sizeof(char *));
	memmove(&l->e.v[at], &l->e.v[at + 1], (l->e.n - at - 1) * sizeof(key));
	l->e.n--;
	for (size_t i = 0; i < l->e.n; i++) /* the later ones move up a line */
		l->e.v[i].line -= l->e.v[i].line > line;
	return 0;
}

const struct xbd_list_entry **xbd_rt_entries_by_line(const struct xbd_rt_list *l)
{
	const struct xbd_list_entry **v = calloc(l->e.n ? l->e.n : 1, sizeof(*v));

	for (size_t j = 0; v && j < l->e.n; j++)
		v[l->e.v[j].line - 1] = &l->e.v[j];
	return v;
}

const char *xbd_rt_entry_comment(const struct xbd_rt_list *l, const struct xbd_list_entry *e)
{
	if (!l->comments || e->line < 1 || e->line > l->e.n)
		return "";
	return l->comments[e->line - 1];
}
