/* narrow.h - the narrowing of IPv6 keys in userspace (include/xdpban_narrow.h): which networks
 * are keyed at /128, the one writer of xdpban_narrow6 and its gate, and the key length the
 * data path gives an address (and the key itself, xb_key_from_addr in libxdpban.h), so that
 * query, ban, unban and the library key a source as the data path does.
 */
#ifndef XB_NARROW_H
#define XB_NARROW_H

#include <stddef.h>
#include <linux/types.h>
#include "exempt.h"
#include "libxdpban.h"

/* Prefixes whose sources are keyed at /128, sorted (xb_prefix_cmp), one each. */
struct xb_narrow_set {
	struct xb_prefix *v;
	size_t n, cap;
};
void xb_narrow_set_free(struct xb_narrow_set *s);

/* The networks to key at /128 under ipv6-prefix v6_prefix: the /v6_prefix of every IPv6 entry
 * of protected (never-ban entries, host addresses) and of the built-in exempt set that is
 * longer than v6_prefix, and the subnet (link_plen) of every IPv6 host address. 0 or -ENOMEM. */
int xb_narrow_plan(const struct xb_exempt_set *protected, __u8 v6_prefix,
		   struct xb_narrow_set *out);

/* Makes xdpban_narrow6 hold exactly want, with no moment at which a source of an entry that
 * stays is keyed otherwise: the gate gets the bits of the old and the new entries, then the
 * new entries are written, the old ones deleted, and the gate left with the new bits only.
 * A set larger than the trie is refused before anything changes. 0 or -errno with one line in
 * err. */
int xb_narrow_sync(const struct xb_maps *m, const struct xb_narrow_set *want, char *err,
		   size_t errlen);

/* What the trie holds, as a set. 0 or -errno. */
int xb_narrow_read(const struct xb_maps *m, struct xb_narrow_set *out);

/* The prefix length the data path keys the IPv6 address addr (16 bytes, network order) at. */
__u8 xb_narrow_key_plen(const struct xb_maps *m, const __u8 *addr, __u8 v6_prefix);

#endif /* XB_NARROW_H */
