/* comments.c - see comments.h. */
#include <errno.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "comments.h"
#include "table.h"
#include "xdpban_time.h"

struct comment {
	struct xb_prefix who;
	char text[XB_COMMENT_MAX + 1];
};

static int comment_cmp(const void *a, const void *b)
{
	return xb_prefix_cmp(&((const struct comment *)a)->who, &((const struct comment *)b)->who);
}

static void comment_forget(struct xbd_comments *c, const struct xb_prefix *p)
{
	struct comment probe = { .who = *p }, **node = tfind(&probe, &c->tree, comment_cmp), *t;

	if (!node)
		return;
	t = *node;
	tdelete(&probe, &c->tree, comment_cmp);
	free(t);
	c->n--;
}

int xbd_comments_set(struct xbd_comments *c, const struct xb_prefix *p, const char *text)
{
	struct comment *t, **node;

	if (!text || !*text) {
		comment_forget(c, p);
		return 0;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->who = *p;
	snprintf(t->text, sizeof(t->text), "%s", text);
	node = tsearch(t, &c->tree, comment_cmp);
	if (!node) {
		free(t);
		return -ENOMEM;
	}
	if (*node != t) { /* banned again, with a new comment */
		memcpy((*node)->text, t->text, sizeof(t->text));
		free(t);
		return 0;
	}
	c->n++;
	return 0;
}

const char *xbd_comments_get(const struct xbd_comments *c, const struct xb_prefix *p)
{
	struct comment probe = { .who = *p }, **node = tfind(&probe, &c->tree, comment_cmp);

	return node ? (*node)->text : NULL;
}

struct walk {
	xbd_comment_cb cb;
	void *ctx;
};

static void visit(const void *node, VISIT which, void *ctx)
{
	const struct comment *t = *(const struct comment *const *)node;
	struct walk *w = ctx;

	if (which == postorder || which == leaf)
		w->cb(&t->who, t->text, w->ctx);
}

void xbd_comments_foreach(const struct xbd_comments *c, xbd_comment_cb cb, void *ctx)
{
	struct walk w = { cb, ctx };

	twalk_r(c->tree, visit, &w);
}

/* A manual ban in force at exactly p: its key in the ban table, or a manual prefix ban (the
 * trie's answer at p's own length is p's entry when there is one). */
static bool manual_ban_holds(const struct xb_maps *m, const struct xb_prefix *p, __u64 now)
{
	struct xdpban_policy pol;
	struct xdpban_key key = { .family = p->family, .prefixlen = p->plen };
	struct xdpban_ban ban;
	union xb_lpm_key lpm;

	memcpy(key.addr, p->addr, sizeof(key.addr));
	if (!xb_bans_get_in(m, &key, &ban))
		return ban.reason == XDPBAN_REASON_MANUAL && (!ban.expires_ns || now < ban.expires_ns);
	xb_lpm_key_make(p, &lpm);
	if (bpf_map_lookup_elem(xb_policy_fd(m, p->family), &lpm, &pol))
		return false;
	return pol.list_id == XDPBAN_LIST_MANUAL_BAN && pol.verdict == XDPBAN_POLICY_DENY &&
	       (!pol.expires_ns || now < pol.expires_ns);
}

/* twalk_r cannot change the tree it walks: the prefixes to drop are gathered first. */
struct over {
	const struct xb_maps *m;
	__u64 now;
	struct xb_prefix *v;
	size_t n;
};

static void note_over(const struct xb_prefix *p, const char *text, void *ctx)
{
	struct over *o = ctx;

	if (!manual_ban_holds(o->m, p, o->now))
		o->v[o->n++] = *p;
}

void xbd_comments_prune(struct xbd_comments *c, const struct xb_maps *m)
{
	struct over o = { .m = m, .now = xb_boot_ns() };

	if (!c->n)
		return;
	o.v = calloc(c->n, sizeof(*o.v));
	if (!o.v)
		return; /* kept until the next prune */
	xbd_comments_foreach(c, note_over, &o);
	for (size_t i = 0; i < o.n; i++)
		comment_forget(c, &o.v[i]);
	free(o.v);
}

void xbd_comments_free(struct xbd_comments *c)
{
	tdestroy(c->tree, free);
	memset(c, 0, sizeof(*c));
}
