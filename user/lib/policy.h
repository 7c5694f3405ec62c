/* policy.h - the one writer of the policy: the LPM tries and the flat table in front of them
 * (include/xdpban_flat.h). Every userspace write or delete of a policy entry goes through
 * here; never write xdpban_policy4/6 directly (a prefix written past this module may go
 * unenforced where the table holds a pure code).
 *
 * The rule that keeps the data path right at every instant: a code goes from pure to LOOKUP
 * only before the trie changes, and from LOOKUP to pure only after the trie holds the entries
 * the code stands for. So:
 *   - put/delete of one entry first sets LOOKUP in every region the entry touches, then changes
 *     the trie; the table stays correct, only slower there until the next compile;
 *   - compile makes the tries hold exactly a given set (LOOKUP first where the set changes
 *     anything), then writes exact codes for every region, finest level first (level 2, the
 *     middle level, level 1), computed from a sorted copy of the set, never from lookups in
 *     the trie; then the guard word, which tells the data path to read the codes at all.
 * A compile is atomic per source: at every instant, each address gets from the tries either
 * the verdict of the old set or that of the new one, never a third (a denied source that the
 * new set denies too is never passed, an allowed one never dropped). The new and changed
 * entries go in each after every entry inside it (longest first along every chain of nested
 * prefixes, otherwise in address order), then the doomed ones go in address order, each
 * before the entries inside it (policy_plan.c says why that suffices). The one exception is a trie too small to hold the old and the new entries at
 * once: removals go first, and the result says so (removals_first).
 * Level 3 (the IPv4 lines in xdpban_flat4x) and the IPv6 lines (xdpban_flat6x, flat6_live.c)
 * have their own rule, written out in flat_live.c: every line in the map is exact for the trie
 * at every instant; a line is deleted before the trie changes in its region and written only
 * after; a writer that cannot reach the lines turns the family's guard from
 * XDPBAN_FLAT_COMPILED_L3 back to XDPBAN_FLAT_COMPILED before it changes the trie.
 * Writers must be serialised by the caller: while xdpband runs it is the only writer; the CLI
 * writes directly only under the pin-directory lock.
 *
 * The module's files call one way, each only the ones below it, and each header includes only
 * the headers below it: prefix.c (libxdpban.h: prefixes and LPM keys) under everything; in
 * plain memory policy_plan.c, then flat.c; the writers policy_write.c (the tries) and nodeny.c;
 * the live tables, lines_live.c under flat_live.c and flat6_live.c, which reaches host6_live.c;
 * policy.c on top, the one the rest of the program calls. This header is policy.c's and
 * gathers what the module hands out.
 */
#ifndef XB_POLICY_H
#define XB_POLICY_H

#include <stddef.h>
#include <linux/types.h>
#include "flat.h"
#include "flat6_live.h"
#include "flat_live.h"
#include "host6_live.h"
#include "libxdpban.h"
#include "policy_plan.h"
#include "xdpban_flat.h"

/* ---- single changes ---- */

/* Adds or replaces one entry (flags: BPF_ANY, BPF_NOEXIST, BPF_EXIST), LOOKUP first. 0 or
 * -errno: -EINVAL for a bad prefix or verdict, the trie's error otherwise. */
int xb_policy_put(const struct xb_maps *m, const struct xb_prefix *p,
		  const struct xdpban_policy *val, __u64 flags);
/* Deletes the entry at exactly p, LOOKUP first. 0, -ENOENT or -errno. */
int xb_policy_delete(const struct xb_maps *m, const struct xb_prefix *p);

/* ---- compiling a whole set (the set, options and result: policy_plan.h) ---- */

/* Makes the tries of both families hold exactly `set` (plus what opts->keep keeps; an entry
 * of the set wins over a kept one with the same prefix), then writes exact codes. A bad set (a
 * prefix twice, a bad length, family or verdict) is refused with one line in err before
 * anything changes, and so is a set that a trie cannot hold (-ENOSPC, naming the count and the
 * trie's max_entries). Entries are written before the ones that go are removed, unless the
 * trie cannot hold both at once. A compile that fails midway (a trie full or out of memory)
 * is rolled back: every family it changed is compiled back to the entries it held before, and
 * err says "rolled back" (or, if that failed too, that the tries hold part of the new set,
 * with LOOKUP wherever they may differ: right for what they hold, slower until the next
 * compile). opts and res may be NULL. 0 or -errno. */
int xb_policy_compile(const struct xb_maps *m, const struct xb_policy_set *set,
		      const struct xb_compile_opts *opts, struct xb_compile_result *res,
		      char *err, size_t errlen);
/* Writes exact codes for the tries as they are (after single changes, e.g. when timed entries
 * have gone). 0 or -errno with one line in err. */
int xb_policy_recompile(const struct xb_maps *m, struct xb_compile_result *res, char *err,
			size_t errlen);

#endif /* XB_POLICY_H */
