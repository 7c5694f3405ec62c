/* host6_live.h - the IPv6 hosts in xdpban_host6 while the data path reads them (host6_live.c),
 * by the lines' rules (flat_live.c): a permanent /128 entry of the trie as a hash entry holding
 * its code. Written only from policy.c and flat6_live.c, never from outside the policy module.
 */
#ifndef XB_HOST6_LIVE_H
#define XB_HOST6_LIVE_H

#include <stddef.h>
#include <linux/types.h>
#include "libxdpban.h"
#include "policy_plan.h"
#include "xdpban_flat.h"

/* An entry of xdpban_host6: a permanent /128 and its code. */
struct xb_h6_host {
	struct xdpban_host6_key key;
	__u32 code;
};
/* Every IPv6 host entry xdpban_host6 holds now, in the map's order, in *hosts (free() it). 0
 * or -errno. */
int xb_h6_read(const struct xb_maps *m, struct xb_h6_host **hosts, size_t *n);

/* Rule 1 for the /128 entry at p (nothing for any other prefix): its host entry deleted, the
 * step before the trie's entry changes. 0, or -errno: then the caller turns the IPv6 lines off
 * (rule 3), since the walk that reads the hosts is theirs. */
int xb_h6_forget(const struct xb_maps *m, const struct xb_prefix *p);
/* Rule 2, after the trie holds set: exactly a host entry for each of its permanent IPv6 /128
 * entries, counted in res (one that does not fit is left to the trie). 0, or -errno when an
 * entry set does not give could not be deleted: then the caller turns the IPv6 lines off. */
int xb_h6_write(const struct xb_maps *m, const struct xb_entry_list *set,
		struct xb_compile_result *res);

#endif /* XB_HOST6_LIVE_H */
