/* bancache.h - a run of bans and unbans served from one copy of what their checks read
 * (xb_ban_run_begin(), libxdpban.h): the config and each family's policy and exempt trie are
 * read the first time a check needs them and served from the copy until a write through the
 * library (xb_policy_put, xb_policy_delete, xb_config_write) drops it. Internal to user/lib:
 * policy.c, exempt.c and config.c consult it. */
#ifndef XB_BANCACHE_H
#define XB_BANCACHE_H

#include "libxdpban.h"

/* The copy of one trie: its entries as the walk gave them. */
struct xb_run_trie {
	bool loaded;
	void *v;     /* struct xb_policy_entry or struct xb_exempt_entry */
	size_t n, cap;
};

struct xb_ban_run {
	bool have_config;
	struct xdpban_config config;
	struct xb_run_trie policy[2], exempt[2]; /* [0] IPv4, [1] IPv6 */
};

/* The run's copy of a family's trie, or NULL when no run is on (or the family is neither). */
static inline struct xb_run_trie *xb_run_trie(struct xb_run_trie tries[2], const struct xb_maps *m,
					      __u8 family)
{
	if (!m->ban_run || (family != XDPBAN_FAMILY_INET && family != XDPBAN_FAMILY_INET6))
		return NULL;
	return &tries[family == XDPBAN_FAMILY_INET6];
}
/* Appends one entry of size bytes to the copy. 0 or -ENOMEM. */
int xb_run_push(struct xb_run_trie *t, const void *e, size_t size);
/* Fills a copy by walking the family's trie with xb_run_push. 0 or -errno. */
typedef int (*xb_run_load)(const struct xb_maps *m, __u8 family, struct xb_run_trie *t);
/* The entries of the run's copy of a family's trie (tries: the run's policy or exempt pair),
 * loaded first when needed: true with *v and *n, or false when no run is on or the copy
 * could not be made (the caller walks the trie itself). */
bool xb_run_entries(const struct xb_maps *m, struct xb_run_trie tries[2], __u8 family,
		    xb_run_load load, const void **v, size_t *n);

#endif /* XB_BANCACHE_H */
