/* snapshot.c - see snapshot.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "snapshot.h"

int snapshot_flat_table(const struct xb_maps *m, __u8 family, __u64 *words)
{
	struct xb_flat t;
	int ret = xb_flat_open(&t, m, family);

	if (ret)
		return ret;
	memcpy(words, t.words, XDPBAN_FLAT_ENTRIES * sizeof(*words));
	xb_flat_close(&t);
	return 0;
}

static int collect_entry(const struct xb_policy_entry *e, void *ctx)
{
	return xb_policy_set_add(ctx, &e->prefix, &e->policy);
}

static int prefix_cmp(const void *pa, const void *pb)
{
	const struct xb_policy_entry *a = pa, *b = pb;

	if (a->prefix.family != b->prefix.family)
		return a->prefix.family < b->prefix.family ? -1 : 1;
	if (a->prefix.plen != b->prefix.plen)
		return a->prefix.plen < b->prefix.plen ? -1 : 1;
	return memcmp(a->prefix.addr, b->prefix.addr, sizeof(a->prefix.addr));
}

int policy_snapshot_take(const struct xb_maps *m, struct policy_snapshot *s)
{
	int ret;

	memset(s, 0, sizeof(*s));
	ret = xb_policy_foreach(m, collect_entry, &s->tries);
	if (ret)
		return ret;
	if (s->tries.n)
		qsort(s->tries.v, s->tries.n, sizeof(*s->tries.v), prefix_cmp);
	for (int f = 0; f < 2; f++) {
		s->flat[f] = malloc(XDPBAN_FLAT_ENTRIES * sizeof(__u64));
		if (!s->flat[f])
			return -ENOMEM;
		ret = snapshot_flat_table(m, f ? XDPBAN_FAMILY_INET6 : XDPBAN_FAMILY_INET,
					  s->flat[f]);
		if (ret)
			return ret;
	}
	return xb_flat_lines_read(m, &s->lines, &s->nlines);
}

void policy_snapshot_free(struct policy_snapshot *s)
{
	xb_policy_set_free(&s->tries);
	free(s->flat[0]);
	free(s->flat[1]);
	free(s->lines);
	memset(s, 0, sizeof(*s));
}

static bool entries_differ(const struct xb_policy_set *a, const struct xb_policy_set *b,
			   char *why, size_t len)
{
	char text[64];

	for (size_t i = 0; i < a->n && i < b->n; i++) {
		const struct xb_policy_entry *x = &a->v[i], *y = &b->v[i];

		if (!prefix_cmp(x, y) && x->policy.verdict == y->policy.verdict &&
		    x->policy.list_id == y->policy.list_id &&
		    x->policy.expires_ns == y->policy.expires_ns)
			continue;
		xb_prefix_format(&x->prefix, text, sizeof(text));
		snprintf(why, len, "trie entry %zu differs (%s, verdict %u, list %u)", i, text,
			 x->policy.verdict, x->policy.list_id);
		return true;
	}
	if (a->n == b->n)
		return false;
	snprintf(why, len, "the tries hold %zu entries, not %zu", b->n, a->n);
	return true;
}

bool policy_snapshot_differs(const struct policy_snapshot *a, const struct policy_snapshot *b,
			     char *why, size_t len)
{
	if (entries_differ(&a->tries, &b->tries, why, len))
		return true;
	for (int f = 0; f < 2; f++) {
		for (size_t i = 0; i < XDPBAN_FLAT_ENTRIES; i++) {
			if (a->flat[f][i] == b->flat[f][i])
				continue;
			snprintf(why, len, "IPv%d flat table word %zu differs", f ? 6 : 4, i);
			return true;
		}
	}
	if (a->nlines != b->nlines) {
		snprintf(why, len, "%zu level-3 lines, not %zu", b->nlines, a->nlines);
		return true;
	}
	for (size_t i = 0; i < a->nlines; i++) {
		if (a->lines[i].region == b->lines[i].region &&
		    !memcmp(&a->lines[i].line, &b->lines[i].line, sizeof(a->lines[i].line)))
			continue;
		snprintf(why, len, "level-3 line of region %u differs", a->lines[i].region);
		return true;
	}
	return false;
}
