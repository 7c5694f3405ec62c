/* daemon_lists.c - the daemon's half of the policy lists (xdpband.h): the config's lists
 * compiled with the runtime ones (runlists.h), at start (with the store a former run left) and
 * at every reload; and the never-ban entries of both, which it keeps in the exempt tries
 * beside the host's addresses (exemptions.h). */
#include <stdio.h>
#include <string.h>
#include "log.h"
#include "policy.h"
#include "xdpband.h"

int xbd_never_ban_set(const struct xbd_conf *conf, const struct xbd_lists *lists,
		      const struct xbd_runtime *rt, struct xb_exempt_set *out, char *err,
		      size_t errlen)
{
	int ret;

	memset(out, 0, sizeof(*out));
	ret = xbd_lists_never_ban(lists, out);
	if (!ret)
		ret = xbd_runtime_never_ban(rt, out);
	if (!ret)
		ret = xbd_fleet_endpoint_exempt(&conf->fleet, out);
	if (ret) {
		xb_exempt_set_free(out);
		snprintf(err, errlen, "out of memory for %zu never-ban entries", lists->never_ban.n);
		return ret;
	}
	xb_exempt_set_finish(out);
	return 0;
}

/* A `lists add|del|clear` of the never-ban layer: the config's entries with rt's in force. */
static int put_never_ban(void *user, const struct xbd_runtime *rt, char *err, size_t errlen)
{
	struct xbd *d = user;
	struct xb_exempt_set set;
	int ret = xbd_never_ban_set(&d->conf, &d->config_lists, rt, &set, err, errlen);

	if (!ret)
		ret = xbd_exemptions_swap(&d->exempt, &d->maps, &set, err, errlen);
	xb_exempt_set_free(&set);
	return ret;
}

struct xbd_lists_ctx xbd_lists_ctx_of(struct xbd *d, const struct xbd_lists *config)
{
	return (struct xbd_lists_ctx){ .maps = &d->maps, .conf = &d->conf,
				       .config = config ? config : &d->config_lists,
				       .rt = &d->runtime, .store = d->runtime_store,
				       .never_ban = put_never_ban, .user = d };
}

/* The config's lists composed with the runtime ones, and the plan put in force (the tries and
 * allow-only mode's flag: xbd_lists_ctx_apply). */
int xbd_apply_lists(struct xbd *d, const struct xbd_lists *lists, struct xb_progress *progress,
		       char *err, size_t errlen)
{
	const struct xbd_lists_ctx ctx = xbd_lists_ctx_of(d, lists);
	struct xb_compile_result res = {};
	int ret = xbd_lists_ctx_apply(&ctx, progress, &res, err, errlen);
	char left[512];

	if (ret)
		return ret;
	xbd_lists_left_out(&res, left, sizeof(left));
	if (*left)
		pr_warn("policy lists: %s", left);
	if (res.removals_first)
		pr_warn("policy lists: the policy tries (pinned by an older release) could not hold the "
			"old and the new entries at once, so the old went first and sources in them met "
			"shorter entries meanwhile; a start on fresh pins makes reloads atomic per source");
	pr_debug("policy lists: %zu entries written, %zu old entries removed, %zu manual bans kept; "
		 "flat table: %u of 65536 /16, %u of 4194304 /22 and %u of 16777216 /24 IPv4 "
		 "regions answered without the trie",
		 res.written, res.removed, res.kept, res.pure_l1[0], res.pure_mid[0], res.pure_l2[0]);
	return 0;
}

/* The runtime lists a former run left (runlists.h). A corrupt store is logged (and moved
 * aside): the config's lists are enforced whatever the store holds. */
static void restore_runtime_lists(struct xbd *d)
{
	char err[XB_ERRLEN];
	size_t entries = 0;

	d->runtime_store = xbd_runtime_store(d->conf.state_file);
	if (xbd_runtime_load(d->runtime_store, &d->runtime, err, sizeof(err))) {
		pr_err("%s; enforcing the config's lists only", err);
		return;
	}
	for (size_t i = 0; i < d->runtime.n; i++)
		entries += d->runtime.v[i].e.n;
	if (d->runtime.n)
		pr_info("restoring %zu runtime %s (%zu %s) from %s", d->runtime.n,
			xb_plural(d->runtime.n, "list", "lists"), entries,
			xb_plural(entries, "entry", "entries"), d->runtime_store);
}

/* At start: the lists with the runtime ones, or, when those no longer fit beside the
 * config's (a smaller trie, a longer list), the config's alone. */
int xbd_start_lists(struct xbd *d, const struct xbd_lists *lists, struct xb_progress *progress,
		       char *err, size_t errlen)
{
	int ret;

	restore_runtime_lists(d);
	ret = xbd_apply_lists(d, lists, progress, err, errlen);
	if (!ret || !d->runtime.n)
		return ret;
	pr_err("runtime lists of %s not restored: %s; enforcing the config's lists only",
	       d->runtime_store, err);
	xbd_runtime_free(&d->runtime);
	return xbd_apply_lists(d, lists, progress, err, errlen);
}
