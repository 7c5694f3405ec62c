/* exempt.h - the one writer of the exempt tries xdpban_exempt4/6 (docs/datapath.md, section
 * 8), for xdpband: sets of exempt entries (the never-ban lists, the host's addresses), the
 * plan that turns what the tries hold into a set, and the sync that carries it out. Nothing
 * else writes the tries. The rule it keeps: an address that is exempt before and after a sync
 * is exempt at every instant of it, because every entry that comes or changes is written before
 * any entry that goes is deleted (unless a trie cannot hold both at once: xb_exempt_sync).
 * Also the reading of the host's addresses from rtnetlink messages (ifaddr.c), so that the
 * daemon's netlink code only moves bytes. Pure functions except xb_exempt_read and _sync.
 */
#ifndef XB_EXEMPT_H
#define XB_EXEMPT_H

#include <stddef.h>
#include <linux/netlink.h>
#include <linux/types.h>
#include "libxdpban.h"

/* The i-th prefix of the table that names the built-in set for messages ("224.0.0.0/4"), NULL
 * past the last; tests/kernel/test_exempt.c holds the table to xdpban_builtin_exempt(). */
const char *xb_exempt_builtin_prefix(size_t i);

struct xb_exempt_set {
	struct xb_exempt_entry *v;
	size_t n, cap;
};

/* Appends an entry (no check, no order: xb_exempt_set_finish sorts). 0 or -ENOMEM. */
int xb_exempt_set_add(struct xb_exempt_set *s, const struct xb_prefix *p, __u32 origin,
		      __u32 ifindex);
/* Appends every entry of src. 0 or -ENOMEM. */
int xb_exempt_set_add_all(struct xb_exempt_set *s, const struct xb_exempt_set *src);
/* Sorts by family, length and address, and keeps one entry per prefix: a host address over a
 * never-ban entry (it names its interface), then the lower ifindex. */
void xb_exempt_set_finish(struct xb_exempt_set *s);
void xb_exempt_set_free(struct xb_exempt_set *s);
/* Entries of a family in a set. */
size_t xb_exempt_set_count(const struct xb_exempt_set *s, __u8 family);

/* The difference between two finished sets. */
struct xb_exempt_plan {
	struct xb_exempt_set put; /* entries of want that have lacks, or holds with another value */
	struct xb_exempt_set del; /* entries of have whose prefix want does not name */
};
/* want and have must be finished; the plan's sets come out finished. 0 or -ENOMEM. */
int xb_exempt_plan_make(const struct xb_exempt_set *want, const struct xb_exempt_set *have,
			struct xb_exempt_plan *plan);
void xb_exempt_plan_free(struct xb_exempt_plan *plan);

struct xb_exempt_sync_result {
	size_t put;     /* entries written (new, or with a new value) */
	size_t removed; /* entries deleted */
};

/* Where a plan is carried out: the tries for xb_exempt_sync, anything for a test. Each returns
 * 0 or -errno; put returns -ENOSPC when the trie is full. */
struct xb_exempt_ops {
	int (*put)(void *ctx, const struct xb_exempt_entry *e);
	int (*del)(void *ctx, const struct xb_exempt_entry *e);
	void *ctx;
};
/* Every put of the plan, then every del; when a put finds the trie full, every del at that
 * point, then the rest of the puts. Stops at the first error and returns it; res counts what
 * was done. */
int xb_exempt_apply(const struct xb_exempt_plan *plan, const struct xb_exempt_ops *ops,
		    struct xb_exempt_sync_result *res);

/* What the tries hold, as a finished set. 0 or -errno. */
int xb_exempt_read(const struct xb_maps *m, struct xb_exempt_set *out);
/* Makes the tries hold exactly want (a finished set). A set that a trie cannot hold is refused
 * (-ENOSPC, the count and the trie's size in err) before anything changes. Then every entry to
 * write is written, and only then the entries that go are deleted; when a trie is found full
 * midway (it cannot hold the old and the new entries at once) the entries that go are deleted
 * at that point and the rest written after (an address that only a prefix still to be written
 * would hold, inside one that goes, is then not exempt for that moment). A sync that fails midway is rolled back to what the
 * tries held, and err says so. res may be NULL. 0 or -errno with one line in err. */
int xb_exempt_sync(const struct xb_maps *m, const struct xb_exempt_set *want,
		   struct xb_exempt_sync_result *res, char *err, size_t errlen);

/* The exempt entries one rtnetlink address message stands for (RTM_NEWADDR, as a dump or an
 * event delivers it), when its interface is one of ifindexes[0..n): the host address (IFA_LOCAL,
 * else IFA_ADDRESS) with origin XDPBAN_EXEMPT_HOST (an IPv6 one with its subnet's length in
 * link_plen), and for IPv4 the broadcast addresses: the
 * one configured (IFA_BROADCAST) and, for prefixes of /30 and shorter, the subnet's, which the
 * kernel treats as broadcast too. Any other message or interface adds nothing. 0, -EINVAL for a
 * message cut short, or -ENOMEM. */
int xb_ifaddr_parse(const struct nlmsghdr *nh, const int *ifindexes, int n,
		    struct xb_exempt_set *out);

#endif /* XB_EXEMPT_H */
