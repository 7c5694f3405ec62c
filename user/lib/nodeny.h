/* nodeny.h - allow-only mode's reasons in xdpban_nodeny16 (nodeny.c), written only from
 * policy.c, for a single change or a compile: the bits a deny entry clears before it enters a
 * trie, and a family's bits set from the set its trie holds.
 */
#ifndef XB_NODENY_H
#define XB_NODENY_H

#include <linux/types.h>
#include "libxdpban.h"
#include "policy_plan.h"

/* Clears the bits of the regions every deny entry of l touches: the step before they enter a
 * trie (a deny entry already in it has its bits clear: clearing them again changes nothing).
 * 0 or -errno (the map not mapped). */
int xb_nodeny_clear_denies(const struct xb_maps *m, const struct xb_entry_list *l);
/* Sets the family's bits exactly for set (sorted or not), which the trie holds. 0 or -errno. */
int xb_nodeny_write(const struct xb_maps *m, __u8 family, const struct xb_entry_list *set);

#endif /* XB_NODENY_H */
