/* snapshot.h - the policy as the data path sees it, taken whole so that a test can show that
 * something changed nothing: the tries' entries (sorted), both flat tables (codes and guard)
 * and the IPv4 level-3 lines (sorted by region). Test support only; it only reads the maps. */
#ifndef XDPBAN_TEST_SNAPSHOT_H
#define XDPBAN_TEST_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "libxdpban.h"
#include "policy.h"

struct policy_snapshot {
	struct xb_policy_set tries;
	__u64 *flat[2]; /* [0] IPv4, [1] IPv6: XDPBAN_FLAT_ENTRIES words each */
	struct xb_flat_line *lines;
	size_t nlines;
};

/* Copies the live flat table of a family (XDPBAN_FLAT_ENTRIES words). 0 or -errno. */
int snapshot_flat_table(const struct xb_maps *m, __u8 family, __u64 *words);
/* 0 or -errno; free it with policy_snapshot_free either way. */
int policy_snapshot_take(const struct xb_maps *m, struct policy_snapshot *s);
void policy_snapshot_free(struct policy_snapshot *s);
/* The first difference as one line in why, or false when a and b are the same. */
bool policy_snapshot_differs(const struct policy_snapshot *a, const struct policy_snapshot *b,
			     char *why, size_t len);

#endif /* XDPBAN_TEST_SNAPSHOT_H */
