/* pset.h - seeded random policy sets for the flat-table tests: prefixes of a chosen family and
 * length range, spread over the space or crowded into one prefix, some of them timed, each
 * prefix once; and random addresses, half of them inside an entry of the set. Test support
 * only: everything follows from the seed, nothing reads a clock or touches the kernel.
 */
#ifndef XDPBAN_TEST_PSET_H
#define XDPBAN_TEST_PSET_H

#include <stddef.h>
#include <linux/types.h>
#include "fuzz.h"
#include "model.h"
#include "policy.h"

/* How a random set is drawn. */
struct pset_shape {
	__u8 family;            /* XDPBAN_FAMILY_INET or XDPBAN_FAMILY_INET6 */
	size_t n;               /* prefixes drawn (fewer remain when some repeat) */
	unsigned int min_len, max_len;
	const char *within;     /* every prefix inside this one; NULL or "" for anywhere */
	unsigned int timed_pct; /* share of timed entries: half expired_ns, half live_ns */
	__u64 expired_ns, live_ns;
};

/* A shape without times (timed entries get them from the caller). */
#define PSET_SHAPE(fam, count, lo, hi, in, pct)                                            \
	{                                                                                  \
		.family = (fam), .n = (count), .min_len = (lo), .max_len = (hi),           \
		.within = (in), .timed_pct = (pct)                                         \
	}

/* Appends the drawn entries to s (list id 1; verdicts deny, trusted and now and then none),
 * then leaves each prefix once. 0, -EINVAL (bad shape) or -ENOMEM. */
int pset_random(struct fuzz_rng *rng, const struct pset_shape *shape, struct xb_policy_set *s);
/* Sorts s by prefix and keeps the first entry of each prefix. */
void pset_dedup(struct xb_policy_set *s);
/* A random address of the family: anywhere, or (half the time) inside a random entry of s of
 * that family. addr gets 16 bytes; IPv4 in the first 4. */
void pset_address(struct fuzz_rng *rng, const struct xb_policy_set *s, __u8 family,
		  __u8 addr[16]);
/* A random address inside p. */
void pset_address_in(struct fuzz_rng *rng, const struct xb_prefix *p, __u8 addr[16]);
/* The code the data path reads for an address (top: its top 32 bits, host order) from computed
 * codes and IPv4 lines: level 1, the middle level, level 2, then the line (IPv4); LOOKUP when
 * the trie decides. */
__u32 pset_flat_code(const __u64 *words, const struct xb_flat_line *lines, size_t nlines,
		     __u8 family, __u32 top);
/* Makes the model's policy exactly s. 0 or -errno. */
int pset_to_model(const struct xb_policy_set *s, struct model *m);

#endif /* XDPBAN_TEST_PSET_H */
