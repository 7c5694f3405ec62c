/* bancache.c - see bancache.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "bancache.h"

int xb_run_push(struct xb_run_trie *t, const void *e, size_t size)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		void *v = realloc(t->v, cap * size);

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	memcpy((char *)t->v + t->n * size, e, size);
	t->n++;
	return 0;
}

bool xb_run_entries(const struct xb_maps *m, struct xb_run_trie tries[2], __u8 family,
		    xb_run_load load, const void **v, size_t *n)
{
	struct xb_run_trie *t = xb_run_trie(tries, m, family);

	if (!t)
		return false;
	if (!t->loaded) {
		t->n = 0;
		t->loaded = load(m, family, t) == 0;
	}
	*v = t->v;
	*n = t->n;
	return t->loaded;
}

int xb_ban_run_begin(struct xb_maps *m)
{
	if (m->ban_run)
		return 0;
	m->ban_run = calloc(1, sizeof(*m->ban_run));
	return m->ban_run ? 0 : -ENOMEM;
}

void xb_ban_run_end(struct xb_maps *m)
{
	if (!m->ban_run)
		return;
	for (int i = 0; i < 2; i++) {
		free(m->ban_run->policy[i].v);
		free(m->ban_run->exempt[i].v);
	}
	free(m->ban_run);
	m->ban_run = NULL;
}
