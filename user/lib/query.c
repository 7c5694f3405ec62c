/* query.c - everything the data path knows about one address: its counter and the spoof
 * defence's record of it, its ban, the policy prefix that matches it and whether it is exempt,
 * judged the way the data path judges them now. Read-only.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include "libxdpban.h"
#include "table.h"
#include "xdpban_time.h"

/* Here, below bans.c, because a query names the reason of the ban it finds. */
const char *xb_reason_name(__u8 reason)
{
	switch (reason) {
	case XDPBAN_REASON_ERRORS:
		return "errors";
	case XDPBAN_REASON_MANUAL:
		return "manual";
	case XDPBAN_REASON_REPORTED:
		return "reported";
	}
	return "?";
}

/* Here too, below bans.c, because a query names the last error of the ban it finds. */
struct xb_last_error xb_last_error_of(const struct xdpban_ban *ban)
{
	return (struct xb_last_error){ .port = ban->proto ? ban->port : 0, .proto = ban->proto,
				       .rule = ban->proto || ban->count ? ban->rule : 0 };
}

int xb_last_error_format(const struct xb_last_error *e, char *buf, size_t len)
{
	const char *name = e->proto == IPPROTO_TCP	  ? "tcp"
			   : e->proto == IPPROTO_UDP	  ? "udp"
			   : e->proto == IPPROTO_ICMP	  ? "icmp"
			   : e->proto == IPPROTO_ICMPV6 ? "ipv6-icmp"
							  : NULL;
	int n;

	if (!e->proto)
		n = snprintf(buf, len, "%s", "");
	else if (!name)
		n = snprintf(buf, len, "proto %u", e->proto);
	else if (e->port)
		n = snprintf(buf, len, "%u/%s", e->port, name);
	else
		n = snprintf(buf, len, "%s", name);
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

/* The reasons a ban can have, in the order xdpban names them (--help, errors). */
static const __u8 reasons[] = { XDPBAN_REASON_ERRORS, XDPBAN_REASON_MANUAL,
				XDPBAN_REASON_REPORTED };

int xb_reason_parse(const char *name, __u8 *reason, char *err, size_t errlen)
{
	size_t used;

	for (size_t i = 0; i < sizeof(reasons); i++) {
		if (!strcmp(name, xb_reason_name(reasons[i]))) {
			*reason = reasons[i];
			return 0;
		}
	}
	used = snprintf(err, errlen, "unknown reason '%.40s': expected", name);
	for (size_t i = 0; i < sizeof(reasons) && used < errlen; i++)
		used += snprintf(err + used, errlen - used, "%s %s", i ? "," : "",
				 xb_reason_name(reasons[i]));
	return -EINVAL;
}

/* The longest policy entry containing the address, as the trie lookup would pick it. */
struct longest_match {
	struct xb_prefix addr;
	bool found, has_root;
	struct xb_policy_entry best;
	struct xb_policy_entry root; /* the /0 entry: allow-only mode's default */
};

static int match_entry(const struct xb_policy_entry *e, void *ctx)
{
	struct longest_match *lm = ctx;

	if (e->prefix.plen == 0) {
		lm->has_root = true;
		lm->root = *e;
	}
	if (xb_prefix_contains(&e->prefix, &lm->addr) &&
	    (!lm->found || e->prefix.plen > lm->best.prefix.plen)) {
		lm->found = true;
		lm->best = *e;
	}
	return 0;
}

static __s64 seconds_until(__u64 expires_ns, __u64 now_ns)
{
	if (!expires_ns)
		return -1;
	return (__s64)((expires_ns - now_ns + NS_PER_SEC - 1) / NS_PER_SEC);
}

static int query_policy(const struct xb_maps *m, const struct xb_prefix *addr, __u64 now_ns,
			struct xb_query_info *out)
{
	struct longest_match lm = { .addr = *addr };
	int ret = xb_policy_foreach_family(m, addr->family, match_entry, &lm);

	if (ret)
		return ret;
	/* An expired timed entry counts as no entry: the /0 entry (the default layer) answers,
	 * with no fallback to any other shorter one. */
	if (lm.found && lm.best.expired) {
		lm.found = lm.has_root && !lm.root.expired;
		lm.best = lm.root;
	}
	if (!lm.found)
		return 0;
	out->policy = lm.best.policy.verdict;
	out->policy_list = lm.best.policy.list_id;
	xb_prefix_format(&lm.best.prefix, out->policy_match, sizeof(out->policy_match));
	if (lm.best.policy.list_id == XDPBAN_LIST_MANUAL_BAN &&
	    lm.best.policy.verdict == XDPBAN_POLICY_DENY) {
		out->banned = true;
		out->seconds_left = seconds_until(lm.best.policy.expires_ns, now_ns);
		out->ban_reason = xb_reason_name(XDPBAN_REASON_MANUAL);
	}
	return 0;
}

/* The observed deny list entry that holds the address, read only where the data path reads it:
 * behind a policy that passes the source on. */
static int query_observed(const struct xb_maps *m, const struct xb_prefix *addr,
			  struct xb_query_info *out)
{
	struct xb_observed_entry e;
	int ret;

	if (out->policy != XDPBAN_POLICY_NONE && out->policy != XDPBAN_POLICY_ALLOWED)
		return 0;
	ret = xb_observed_find(m, addr, &e);
	if (ret <= 0)
		return ret;
	out->observed_list = e.list_id;
	xb_prefix_format(&e.prefix, out->observed_match, sizeof(out->observed_match));
	return 0;
}

/* The counter and the spoof defence's record of the source. */
static int query_counter(const struct xb_maps *m, const struct xdpban_key *key,
			 const struct xdpban_config *cfg, __u64 now_ns, struct xb_query_info *out)
{
	__u32 now_s = now_ns / NS_PER_SEC;
	struct xdpban_limits lim;
	struct xb_counter ctr;
	int ret = xb_counters_get_in(m, key, now_s, &ctr);

	xdpban_limits_of(cfg, 0, 0, &lim);
	out->limit = lim.limit;
	out->rule = lim.rule;
	if (ret)
		return ret == -ENOENT ? 0 : ret;
	xdpban_limits_of(cfg, ctr.classes, 0, &lim);
	if ((ctr.count > 0 || (ctr.flags & XDPBAN_CTR_DISPUTED)) &&
	    now_s - ctr.start_s < lim.window_s) {
		out->limit = lim.limit;
		out->rule = lim.rule;
		out->count = ctr.count;
		out->classes = ctr.classes;
		out->disputed = ctr.flags & XDPBAN_CTR_DISPUTED;
		if (ctr.flags & XDPBAN_CTR_HOPREF) {
			out->has_hop = true;
			out->hop = ctr.hop;
		}
	}
	if (ctr.flags & XDPBAN_CTR_VERIFIED) {
		out->verified = true;
		out->has_hop = true;
		out->hop = ctr.hop;
		out->verified_ago_s = now_s >= ctr.stamp_s ? now_s - ctr.stamp_s : 0;
	}
	return 0;
}

static int query_ban(const struct xb_maps *m, const struct xdpban_key *key, __u64 now_ns,
		     struct xb_query_info *out)
{
	struct xdpban_ban ban;
	int ret = xb_bans_get_in(m, key, &ban);

	if (ret)
		return ret == -ENOENT ? 0 : ret;
	if (ban.expires_ns && now_ns >= ban.expires_ns)
		return 0;
	out->banned = true;
	out->seconds_left = seconds_until(ban.expires_ns, now_ns);
	out->ban_reason = xb_reason_name(ban.reason);
	out->ban_classes = ban.classes;
	out->ban_last = xb_last_error_of(&ban);
	out->ban_started = xb_boot_to_wall(ban.start_ns);
	out->has_drops = true;
	return xb_bans_drops_in(m, key, &out->drops);
}

/* Whether the data path would never count or ban the address, why, and by which prefix. */
static int query_exempt(const struct xb_maps *m, const struct xb_prefix *addr,
			struct xb_query_info *out)
{
	int ret = xb_exempt_find(m, addr, &out->exempt_match, NULL);

	if (ret)
		return ret == -ENOENT ? 0 : ret;
	out->exempt = true;
	out->exempt_why = xb_exempt_origin_name(out->exempt_match.val.origin);
	return 0;
}

int xb_query(const struct xb_maps *m, const struct xb_prefix *addr, struct xb_query_info *out)
{
	__u64 now_ns = xb_boot_ns();
	struct xdpban_config cfg;
	struct xdpban_key key;
	int ret;

	if (!xb_prefix_is_addr(addr))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	ret = xb_config_read(m, &cfg);
	if (ret)
		return ret;
	xb_key_from_addr(m, addr, cfg.v6_prefix, &key);
	xb_key_format(&key, out->key, sizeof(out->key));
	ret = query_counter(m, &key, &cfg, now_ns, out);
	if (!ret)
		ret = query_exempt(m, addr, out);
	if (!ret)
		ret = query_policy(m, addr, now_ns, out);
	/* A policy deny comes first in the data path; a ban in the table shows only without one. */
	if (!ret && !out->banned)
		ret = query_ban(m, &key, now_ns, out);
	if (!ret)
		ret = query_observed(m, addr, out);
	out->observed = cfg.mode == XDPBAN_MODE_OBSERVE &&
			(out->banned || out->policy == XDPBAN_POLICY_DENY ||
			 out->policy == XDPBAN_POLICY_NOT_ALLOWED);
	return ret;
}
