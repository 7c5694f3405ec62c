/* xdpban_banfilter.h - the ban filter: a counting filter in front of the ban table, so that the
 * data path skips the ban-table lookup (a hash of a 20-byte key, the costliest step for the
 * common unbanned packet) for sources that cannot be banned.
 *
 * An mmapable array of XDPBAN_BANFILTER_SLOTS u64 counters. The counter at
 * xdpban_banfilter_slot(key) counts the bans in xdpban_bans whose key hashes there. Every writer
 * of xdpban_bans (the data path and libxdpban) keeps it exact with this protocol, so that a
 * zero counter proves "no ban" and a stale counter only costs a lookup:
 *   - insert: increment the counter, then insert the ban; if the insert fails, decrement;
 *   - delete: delete the ban; only if that succeeded, decrement;
 *   - a decrement never goes below zero (compare-and-swap), so a ban written behind the
 *     protocol's back can never drive a counter to zero while a ban it counts exists.
 * Writing xdpban_bans by other means (bpftool) is unsupported: such a ban may go unenforced.
 */
#ifndef XDPBAN_BANFILTER_H
#define XDPBAN_BANFILTER_H

#include <linux/types.h>
#include "xdpban_state.h"

#define XDPBAN_BANFILTER_BITS 16
#define XDPBAN_BANFILTER_SLOTS (1u << XDPBAN_BANFILTER_BITS) /* 512 KiB: stays in L2 */

/* Multiplicative hash of the key's five 32-bit words (host order as they lie in memory). */
static inline __u32 xdpban_banfilter_slot(const struct xdpban_key *key)
{
	const __u32 *w = (const __u32 *)key;
	__u64 h = 0;

	for (int i = 0; i < (int)(sizeof(*key) / 4); i++)
		h = (h ^ w[i]) * 0x9e3779b97f4a7c15ull;
	return (__u32)(h >> (64 - XDPBAN_BANFILTER_BITS));
}

#endif /* XDPBAN_BANFILTER_H */
