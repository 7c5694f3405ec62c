/* policy_write.h - the policy tries xdpban_policy4/6 as a compile writes them (policy_write.c):
 * which trie is a family's (xb_policy_trie_name here, xb_policy_fd in libxdpban.h), and a
 * plan's changes carried into it. Only policy.c calls it; nothing declared here touches the
 * flat table, its lines or xdpban_nodeny16.
 */
#ifndef XB_POLICY_WRITE_H
#define XB_POLICY_WRITE_H

#include <stddef.h>
#include <linux/types.h>
#include "libxdpban.h"
#include "policy_plan.h"

#define XB_TRIE_ENOMEM_RETRIES 5 /* an LPM trie update can fail with ENOMEM while it grows */

/* xdpban_policy4 or xdpban_policy6, for messages. */
const char *xb_policy_trie_name(__u8 family);

static inline void xb_plan_observe(const struct xb_compile_opts *opts, const struct xb_plan *p,
				   enum xb_compile_step step, size_t done)
{
	if (opts && opts->observe)
		opts->observe(p->family, step, done, p->write.n + p->remove.n, opts->ctx);
}

/* Writes the plan's new and changed entries into its family's trie, then removes its doomed
 * ones (the removals first when p->remove_first), so that every entry of old or next is in
 * force throughout. 0 or -errno with one line in err; the trie holds part of the change. */
int xb_plan_apply_trie(const struct xb_plan *p, const struct xb_maps *m,
		       const struct xb_compile_opts *opts, char *err, size_t errlen);

#endif /* XB_POLICY_WRITE_H */
