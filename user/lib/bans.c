/* bans.c - manual bans and unbans, and the listing of every active ban.
 *
 * A ban at the data path's key granularity (an IPv4 address, an IPv6 prefix of exactly
 * v6_prefix bits) goes into xdpban_bans; any other prefix becomes a timed deny entry in the
 * policy tries with list XDPBAN_LIST_MANUAL_BAN. The data path treats an expired timed entry as
 * "no entry" without falling back to a shorter prefix, so a manual prefix ban must never leave
 * a hole when it expires: it is refused inside a deny prefix that outlasts it, and it replaces
 * the manual bans inside it that would expire first. It never overrides a trusted prefix and
 * never touches a list's own entries. Prefix bans are written through policy.h, which keeps the
 * flat table in front of the tries right; never write the tries directly. Nothing that is
 * exempt (never counted or banned: built in, never-ban list, host address) is banned by hand
 * either. The listing reads
 * the ban table in a thread of its own, but calls its callback only from the caller's thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include "libxdpban.h"
#include "narrow.h"
#include "policy.h"
#include "table.h"
#include "xdpban_time.h"

/* True when the ban belongs in xdpban_bans rather than in a policy trie. */
static bool at_key_granularity(const struct xb_prefix *p, __u8 v6_prefix)
{
	return p->family == XDPBAN_FAMILY_INET ? p->plen == 32 : p->plen == v6_prefix;
}

static void key_from_prefix(const struct xb_prefix *p, struct xdpban_key *key)
{
	memset(key, 0, sizeof(*key));
	key->family = p->family;
	key->prefixlen = p->plen;
	memcpy(key->addr, p->addr, p->family == XDPBAN_FAMILY_INET ? 4 : 16);
}

/* A ban that ends at `expires` (0 = never) outlasts one that ends at `other`. */
static bool outlasts(__u64 expires, __u64 other)
{
	return expires == 0 || (other != 0 && expires >= other);
}

static void describe_entry(const struct xb_policy_entry *e, char *buf, size_t len)
{
	char prefix[64];

	xb_prefix_format(&e->prefix, prefix, sizeof(prefix));
	if (e->policy.list_id == XDPBAN_LIST_MANUAL_BAN)
		snprintf(buf, len, "%s (a manual ban)", prefix);
	else
		snprintf(buf, len, "%s (list %u)", prefix, e->policy.list_id);
}

/* What the policy trie of the target's family holds around a prospective ban. */
struct survey {
	struct xb_prefix target;
	__u64 expires; /* of the new ban; 0 = permanent */
	bool has_cover, has_exact, has_trusted;
	struct xb_policy_entry cover;   /* the longest active entry containing the target */
	struct xb_policy_entry exact;   /* an entry at exactly the target */
	struct xb_policy_entry trusted; /* a trusted entry inside the target */
	struct xb_prefix *doomed;       /* manual bans inside that would end first */
	size_t n_doomed, cap_doomed;
};

/* Makes room for one more of the n elements of size bytes at *v. 0 or -ENOMEM. */
static int grow_array(void **v, size_t *cap, size_t n, size_t size)
{
	size_t bigger = *cap ? 2 * *cap : 64;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*v, bigger * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = bigger;
	return 0;
}

static int survey_doom(struct survey *s, const struct xb_prefix *p)
{
	if (grow_array((void **)&s->doomed, &s->cap_doomed, s->n_doomed, sizeof(*s->doomed)))
		return -ENOMEM;
	s->doomed[s->n_doomed++] = *p;
	return 0;
}

static int survey_entry(const struct xb_policy_entry *e, void *ctx)
{
	struct survey *s = ctx;
	bool manual = e->policy.list_id == XDPBAN_LIST_MANUAL_BAN;

	if (e->prefix.plen == s->target.plen && xb_prefix_contains(&e->prefix, &s->target)) {
		s->has_exact = true;
		s->exact = *e;
		return 0;
	}
	if (xb_prefix_contains(&e->prefix, &s->target)) {
		if (!e->expired && (!s->has_cover || e->prefix.plen > s->cover.prefix.plen)) {
			s->has_cover = true;
			s->cover = *e;
		}
		return 0;
	}
	if (!xb_prefix_contains(&s->target, &e->prefix))
		return 0;
	if (e->policy.verdict == XDPBAN_POLICY_TRUSTED && !s->has_trusted) {
		s->has_trusted = true;
		s->trusted = *e;
	}
	if (manual && (e->expired || !outlasts(e->policy.expires_ns, s->expires)))
		return survey_doom(s, &e->prefix);
	return 0;
}

static int survey_policy(const struct xb_maps *m, struct survey *s)
{
	return xb_policy_foreach_family(m, s->target.family, survey_entry, s);
}

/* Refuses a ban that would override or be overridden by a trusted prefix. */
static int check_trust(const struct survey *s, const char *text, char *err, size_t errlen)
{
	char what[96];

	if (s->has_exact && s->exact.policy.verdict == XDPBAN_POLICY_TRUSTED) {
		describe_entry(&s->exact, what, sizeof(what));
		snprintf(err, errlen, "refusing to ban %s: it is trusted by %s", text, what);
		return -EPERM;
	}
	if (s->has_cover && s->cover.policy.verdict == XDPBAN_POLICY_TRUSTED) {
		describe_entry(&s->cover, what, sizeof(what));
		snprintf(err, errlen, "refusing to ban %s: it is inside trusted %s", text, what);
		return -EPERM;
	}
	if (s->has_trusted) {
		describe_entry(&s->trusted, what, sizeof(what));
		snprintf(err, errlen, "refusing to ban %s: it contains trusted %s", text, what);
		return -EPERM;
	}
	return 0;
}

/* Refuses a prefix ban that a deny entry already covers for at least as long. */
static int check_redundant(const struct survey *s, const char *text, char *err, size_t errlen)
{
	char what[96];

	if (s->has_exact && s->exact.policy.list_id != XDPBAN_LIST_MANUAL_BAN) {
		describe_entry(&s->exact, what, sizeof(what));
		snprintf(err, errlen, "%s is already denied by %s", text, what);
		return -EEXIST;
	}
	if (s->has_cover && s->cover.policy.verdict == XDPBAN_POLICY_DENY &&
	    outlasts(s->cover.policy.expires_ns, s->expires)) {
		describe_entry(&s->cover, what, sizeof(what));
		snprintf(err, errlen, "%s is already denied by %s for at least as long", text, what);
		return -EEXIST;
	}
	return 0;
}

/* The fast path for a single address: one trie lookup finds what the data path would find. */
static int check_trust_address(const struct xb_maps *m, const struct xb_prefix *p,
			       const char *text, char *err, size_t errlen)
{
	struct xdpban_policy pol;
	union xb_lpm_key key;

	xb_lpm_key_make(p, &key);
	if (bpf_map_lookup_elem(xb_policy_fd(m, p->family), &key, &pol))
		return 0;
	if (pol.verdict != XDPBAN_POLICY_TRUSTED)
		return 0;
	snprintf(err, errlen, "refusing to ban %s: it is trusted (list %u)", text, pol.list_id);
	return -EPERM;
}

/* Refuses a ban of what is never banned: an address or prefix an exempt prefix holds (the
 * built-in set, a never-ban list, a host address), or a prefix holding a never-ban entry or a
 * host address. A prefix that merely holds built-in addresses (224.0.0.0/3) may be banned:
 * no real source has them. */
static int check_exempt(const struct xb_maps *m, const struct xb_prefix *p, const char *text,
			char *err, size_t errlen)
{
	char why[96], inner[64] = "?";
	struct xb_exempt_entry e;
	bool inside;
	int ret = xb_exempt_find(m, p, &e, &inside);

	if (ret == -ENOENT)
		return 0;
	if (ret) {
		snprintf(err, errlen, "cannot read the exempt tries: %s", strerror(-ret));
		return ret;
	}
	xb_exempt_describe(&e, p, why, sizeof(why));
	if (!inside) {
		snprintf(err, errlen, "refusing to ban %s: it is never banned (%s)", text, why);
		return -EPERM;
	}
	xb_prefix_format(&e.prefix, inner, sizeof(inner));
	snprintf(err, errlen, "refusing to ban %s: it contains %s, which is never banned (%s)", text,
		 inner, why);
	return -EPERM;
}

/* An IPv6 prefix wider than the key its addresses get here (narrow.h): its network holds a
 * protected address or lies on a protected link, so its sources are banned one by one. The
 * lookup of its first address finds every such network: one longer than ipv6-prefix is a link,
 * which holds a host address, whose /ipv6-prefix is an entry too. */
static int check_narrow(const struct xb_maps *m, const struct xb_prefix *p, const char *text,
			char *err, size_t errlen)
{
	if (p->family != XDPBAN_FAMILY_INET6 || p->plen >= 128 ||
	    xb_narrow_key_plen(m, p->addr, p->plen) <= p->plen)
		return 0;
	snprintf(err, errlen, "refusing to ban %s: its addresses are banned one by one here (it "
		 "holds a protected address, or a protected interface's link); ban the offender's "
		 "address", text);
	return -EPERM;
}

int xb_ban_check(const struct xb_maps *m, const struct xb_prefix *p, char *err, size_t errlen)
{
	char text[64];
	int ret;

	if (xb_prefix_format(p, text, sizeof(text)))
		snprintf(text, sizeof(text), "(bad prefix)");
	ret = check_exempt(m, p, text, err, errlen);
	return ret ? ret : check_narrow(m, p, text, err, errlen);
}

static int ban_in_table(const struct xb_maps *m, const struct xb_prefix *p, __u64 now,
			__u64 expires, const char *text, char *err, size_t errlen)
{
	struct xdpban_ban ban = { .start_ns = now, .expires_ns = expires,
				  .reason = XDPBAN_REASON_MANUAL };
	struct xdpban_key key;
	struct xb_bans b;
	int ret;

	key_from_prefix(p, &key);
	ret = xb_bans_of(&b, m, err, errlen);
	if (ret)
		return ret;
	ret = xb_bans_put(&b, &key, &ban, BPF_ANY);
	xb_bans_close(&b);
	if (ret == 0)
		return 0;
	if (ret == -ENOSPC) {
		snprintf(err, errlen, "cannot ban %s: the ban table %s is full", text,
			 XDPBAN_MAP_NAME(xdpban_bans));
		return -ENOSPC;
	}
	snprintf(err, errlen, "cannot ban %s: %s: %s", text, XDPBAN_MAP_NAME(xdpban_bans),
		 strerror(-ret));
	return ret;
}

static int ban_in_policy(const struct xb_maps *m, const struct survey *s, const char *text,
			 char *err, size_t errlen)
{
	struct xdpban_policy pol = { .verdict = XDPBAN_POLICY_DENY,
				     .list_id = XDPBAN_LIST_MANUAL_BAN, .expires_ns = s->expires };
	int ret = xb_policy_put(m, &s->target, &pol, BPF_ANY);

	if (ret) {
		snprintf(err, errlen, "cannot ban %s: policy trie: %s", text, strerror(-ret));
		return ret;
	}
	/* Only now: the new entry already covers what the doomed ones covered. */
	for (size_t i = 0; i < s->n_doomed; i++)
		xb_policy_delete(m, &s->doomed[i]); /* gone already is fine */
	return 0;
}

int xb_ban_args_check(const struct xb_prefix *p, __u32 seconds, char *err, size_t errlen)
{
	char text[64];

	if (xb_prefix_format(p, text, sizeof(text)))
		snprintf(text, sizeof(text), "(bad prefix)");
	if (p->family != XDPBAN_FAMILY_INET && p->family != XDPBAN_FAMILY_INET6) {
		snprintf(err, errlen, "cannot ban: bad address family %u", p->family);
		return -EINVAL;
	}
	if (p->plen == 0 || p->plen > xb_family_bits(p->family)) {
		snprintf(err, errlen, "refusing to ban %s: prefix length must be 1..%u", text,
			 xb_family_bits(p->family));
		return -EINVAL;
	}
	if (seconds > XDPBAN_TIME_MAX_S) {
		snprintf(err, errlen, "ban time %u s out of range: must be 1..%u s, or permanent",
			 seconds, XDPBAN_TIME_MAX_S);
		return -ERANGE;
	}
	return 0;
}

/* The length of the UTF-8 sequence at s (1..4), or 0 when it is not one, or one of the C1
 * controls (U+0080..U+009F), which a terminal may act on as it does on C0. */
static size_t utf8_char_len(const unsigned char *s)
{
	size_t n = s[0] >= 0xc2 && s[0] <= 0xdf   ? 2
		   : s[0] >= 0xe0 && s[0] <= 0xef ? 3
		   : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4
						  : 0;

	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((n == 3 && s[0] == 0xe0 && s[1] < 0xa0) || (n == 4 && s[0] == 0xf0 && s[1] < 0x90) ||
	    (n == 4 && s[0] == 0xf4 && s[1] >= 0x90) || (n == 3 && s[0] == 0xed && s[1] >= 0xa0))
		return 0; /* overlong, past U+10FFFF, or a surrogate */
	return n == 2 && s[0] == 0xc2 && s[1] < 0xa0 ? 0 : n;
}

int xb_ban_comment_check(const char *text, char *err, size_t errlen)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t len = strlen(text), n;

	if (len > XB_COMMENT_MAX) {
		snprintf(err, errlen, "comment of %zu bytes: at most %d", len, XB_COMMENT_MAX);
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i += n) {
		n = s[i] < 0x80 ? 1 : utf8_char_len(s + i);
		if (s[i] < 0x20 || s[i] == 0x7f) {
			snprintf(err, errlen, "comment holds a control character (0x%02x at byte %zu)",
				 s[i], i + 1);
			return -EINVAL;
		}
		if (!n) {
			snprintf(err, errlen, "comment is not UTF-8 text (byte %zu)", i + 1);
			return -EINVAL;
		}
	}
	return 0;
}

int xb_ban(const struct xb_maps *m, const struct xb_prefix *p, __u32 seconds, char *err,
	   size_t errlen)
{
	struct survey s = { .target = *p };
	struct xdpban_config cfg;
	char text[64];
	__u64 now;
	int ret;

	if (xb_prefix_format(p, text, sizeof(text)))
		snprintf(text, sizeof(text), "(bad prefix)");
	ret = xb_ban_args_check(p, seconds, err, errlen);
	if (ret)
		return ret;
	ret = xb_config_read(m, &cfg);
	if (ret) {
		snprintf(err, errlen, "cannot read %s: %s", XDPBAN_MAP_NAME(xdpban_config),
			 strerror(-ret));
		return ret;
	}
	now = xb_boot_ns();
	s.expires = seconds ? now + seconds * NS_PER_SEC : 0;
	if (at_key_granularity(p, cfg.v6_prefix) && xb_prefix_is_addr(p)) {
		ret = check_trust_address(m, p, text, err, errlen);
		if (!ret)
			ret = check_exempt(m, p, text, err, errlen);
		return ret ? ret : ban_in_table(m, p, now, s.expires, text, err, errlen);
	}
	ret = survey_policy(m, &s);
	if (ret) {
		snprintf(err, errlen, "cannot read the policy tries: %s", strerror(-ret));
		goto out;
	}
	ret = check_trust(&s, text, err, errlen);
	if (!ret)
		ret = check_exempt(m, p, text, err, errlen);
	if (ret)
		goto out;
	if (at_key_granularity(p, cfg.v6_prefix)) {
		ret = check_narrow(m, p, text, err, errlen);
		if (!ret)
			ret = ban_in_table(m, p, now, s.expires, text, err, errlen);
		goto out;
	}
	ret = check_redundant(&s, text, err, errlen);
	if (!ret)
		ret = ban_in_policy(m, &s, text, err, errlen);
out:
	free(s.doomed);
	return ret;
}

/* Deletes the manual entry at exactly p, leaving list entries alone. The trie lookup at p's
 * own length returns the longest entry containing p, which is p itself when it exists; so a
 * manual result there means "delete p if it exists", anything else means p is not manual. */
static int unban_policy(const struct xb_maps *m, const struct xb_prefix *p,
			struct xdpban_policy *seen)
{
	int fd = xb_policy_fd(m, p->family);
	union xb_lpm_key key;

	xb_lpm_key_make(p, &key);
	if (bpf_map_lookup_elem(fd, &key, seen))
		return -ENOENT;
	if (seen->list_id != XDPBAN_LIST_MANUAL_BAN)
		return -ENOENT;
	return xb_policy_delete(m, p);
}

/* An address that is not banned itself may lie in a ban: its source key (an IPv6 address is
 * counted and banned per /v6_prefix), which is lifted, as the address's own ban; or a manual
 * prefix ban, which is named, not lifted: it covers other sources too. */
static int unban_covering(const struct xb_maps *m, const struct xb_prefix *p, const char *text,
			  struct xb_prefix *lifted, char *err, size_t errlen)
{
	struct xb_query_info q;
	struct xdpban_config cfg;
	struct xdpban_key key;
	struct xb_bans b;
	int ret = xb_config_read(m, &cfg);

	if (ret) {
		snprintf(err, errlen, "cannot read %s: %s", XDPBAN_MAP_NAME(xdpban_config),
			 strerror(-ret));
		return ret;
	}
	xb_key_from_addr(m, p, cfg.v6_prefix, &key);
	if (key.prefixlen != p->plen) {
		ret = xb_bans_of(&b, m, err, errlen);
		if (ret)
			return ret;
		ret = xb_bans_remove(&b, &key);
		xb_bans_close(&b);
		if (ret == 0) {
			lifted->family = key.family;
			lifted->plen = key.prefixlen;
			memcpy(lifted->addr, key.addr, sizeof(lifted->addr));
			return 0;
		}
		if (ret != -ENOENT) {
			snprintf(err, errlen, "cannot unban %s: %s: %s", text,
				 XDPBAN_MAP_NAME(xdpban_bans), strerror(-ret));
			return ret;
		}
	}
	if (!xb_query(m, p, &q) && q.banned && q.policy_match[0] &&
	    q.policy_list == XDPBAN_LIST_MANUAL_BAN) {
		snprintf(err, errlen, "no ban on %s itself: it lies in the prefix ban %s (unban %s "
			 "to lift it)", text, q.policy_match, q.policy_match);
		return -ENOENT;
	}
	snprintf(err, errlen, "no ban on %s", text);
	return -ENOENT;
}

int xb_unban(const struct xb_maps *m, const struct xb_prefix *p, struct xb_prefix *lifted,
	     char *err, size_t errlen)
{
	struct xdpban_policy seen = {};
	struct xdpban_key key;
	bool removed = false;
	struct xb_bans b;
	char text[64];
	int ret;

	if (xb_prefix_format(p, text, sizeof(text))) {
		snprintf(err, errlen, "cannot unban: bad prefix");
		return -EINVAL;
	}
	ret = xb_bans_of(&b, m, err, errlen);
	if (ret)
		return ret;
	/* Either table may hold it: the key granularity may have changed since the ban. */
	key_from_prefix(p, &key);
	ret = xb_bans_remove(&b, &key);
	xb_bans_close(&b);
	if (ret == 0)
		removed = true;
	else if (ret != -ENOENT) {
		snprintf(err, errlen, "cannot unban %s: %s: %s", text, XDPBAN_MAP_NAME(xdpban_bans),
			 strerror(-ret));
		return ret;
	}
	ret = unban_policy(m, p, &seen);
	if (ret == 0)
		removed = true;
	else if (ret != -ENOENT) {
		snprintf(err, errlen, "cannot unban %s: policy trie: %s", text, strerror(-ret));
		return ret;
	}
	if (removed) {
		*lifted = *p;
		return 0;
	}
	if (seen.verdict == XDPBAN_POLICY_DENY && seen.list_id != XDPBAN_LIST_MANUAL_BAN) {
		snprintf(err, errlen, "no ban on %s (it is denied by list %u, which only the list "
				      "can change)", text, seen.list_id);
		return -ENOENT;
	}
	if (xb_prefix_is_addr(p))
		return unban_covering(m, p, text, lifted, err, errlen);
	snprintf(err, errlen, "no ban on %s", text);
	return -ENOENT;
}

/* The bans an unban of all of them (or of one reason) lifts, as the tables held them when
 * read: a ban the data path makes meanwhile is not lifted, nor one made again after. */
struct doomed_ban {
	struct xdpban_key key;
	struct xdpban_ban seen; /* lifted only while it is still this ban */
};

struct doomed_bans {
	__u64 now_ns;
	int reason; /* -1: any */
	struct doomed_ban *bans;
	size_t n, cap;
	struct xb_prefix *prefixes; /* manual prefix bans */
	size_t n_prefixes, cap_prefixes;
};

static int doom_ban(const struct xdpban_key *key, const struct xdpban_ban *ban, void *ctx)
{
	struct doomed_bans *d = ctx;

	if ((ban->expires_ns && d->now_ns >= ban->expires_ns) ||
	    (d->reason >= 0 && ban->reason != d->reason))
		return 0;
	if (grow_array((void **)&d->bans, &d->cap, d->n, sizeof(*d->bans)))
		return -ENOMEM;
	d->bans[d->n++] = (struct doomed_ban){ .key = *key, .seen = *ban };
	return 0;
}

static int doom_prefix(const struct xb_policy_entry *e, void *ctx)
{
	struct doomed_bans *d = ctx;

	if (!xb_is_prefix_ban(e))
		return 0;
	if (grow_array((void **)&d->prefixes, &d->cap_prefixes, d->n_prefixes,
			sizeof(*d->prefixes)))
		return -ENOMEM;
	d->prefixes[d->n_prefixes++] = e->prefix;
	return 0;
}

static void doomed_free(struct doomed_bans *d)
{
	free(d->bans);
	free(d->prefixes);
}

/* Lifts what was read, telling cb of each; a ban gone meanwhile is skipped. */
static int lift_doomed(const struct xb_maps *m, const struct doomed_bans *d,
		       xb_unbanned_cb cb, void *ctx, size_t *lifted, char *err, size_t errlen)
{
	struct xb_prefix p;
	struct xb_bans b;
	int ret = xb_bans_of(&b, m, err, errlen);

	if (ret)
		return ret;
	for (size_t i = 0; i < d->n; i++) {
		if (xb_bans_remove_if(&b, &d->bans[i].key, &d->bans[i].seen))
			continue;
		xb_key_to_prefix(&d->bans[i].key, &p);
		(*lifted)++;
		if (cb)
			cb(&p, ctx);
	}
	xb_bans_close(&b);
	for (size_t i = 0; i < d->n_prefixes; i++) {
		ret = xb_policy_delete(m, &d->prefixes[i]);
		if (ret == -ENOENT)
			continue;
		if (ret) {
			snprintf(err, errlen, "lifted %zu %s, then the policy trie refused: %s",
				 *lifted, xb_plural(*lifted, "ban", "bans"), strerror(-ret));
			return ret;
		}
		(*lifted)++;
		if (cb)
			cb(&d->prefixes[i], ctx);
	}
	return 0;
}

int xb_unban_all(const struct xb_maps *m, int reason, xb_unbanned_cb cb, void *ctx,
		 size_t *lifted, char *err, size_t errlen)
{
	struct doomed_bans d = { .now_ns = xb_boot_ns(), .reason = reason };
	int ret = xb_bans_walk_in(m, doom_ban, &d);

	*lifted = 0;
	if (!ret && (reason < 0 || reason == XDPBAN_REASON_MANUAL))
		ret = xb_policy_foreach(m, doom_prefix, &d);
	if (ret)
		snprintf(err, errlen, "cannot read the bans: %s", strerror(-ret));
	else
		ret = lift_doomed(m, &d, cb, ctx, lifted, err, errlen);
	doomed_free(&d);
	return ret;
}

/* Shared by both walks: the clocks are read once, so a listing of a million bans costs two
 * clock reads, and every entry is judged against the same "now". */
struct ban_walk {
	__u64 now_ns;
	__s64 wall_minus_boot_ns; /* added to a boot time, gives the wall time */
	xb_ban_cb cb;
	void *ctx;
	bool observed; /* observe mode: no ban drops */
};

static __s64 seconds_left(__u64 expires_ns, __u64 now_ns)
{
	if (!expires_ns)
		return -1;
	return (__s64)((expires_ns - now_ns + NS_PER_SEC - 1) / NS_PER_SEC); /* round up */
}

static int ban_entry(const struct xdpban_key *key, const struct xdpban_ban *ban, void *ctx)
{
	const struct ban_walk *w = ctx;
	struct xb_ban_info info;

	if (ban->expires_ns && w->now_ns >= ban->expires_ns)
		return 0;
	memset(&info, 0, sizeof(info));
	if (xb_key_format(key, info.prefix, sizeof(info.prefix)))
		return 0; /* not a key the data path makes */
	info.count = ban->count;
	info.reason = xb_reason_name(ban->reason);
	info.seconds_left = seconds_left(ban->expires_ns, w->now_ns);
	/* As xb_boot_to_wall() converts it: the same ban shows the same second in every listing
	 * (subtracting whole elapsed seconds from a wall "now" jittered by one). */
	info.started = (time_t)(((__s64)ban->start_ns + w->wall_minus_boot_ns) / (__s64)NS_PER_SEC);
	info.classes = ban->classes;
	info.table = "bans";
	info.observed = w->observed;
	info.has_drops = true;
	info.drops = ban->drops;
	info.last = xb_last_error_of(ban);
	return w->cb(&info, w->ctx);
}

static int prefix_ban_entry(const struct xb_policy_entry *e, void *ctx)
{
	const struct ban_walk *w = ctx;
	struct xb_ban_info info;

	if (e->expired || e->policy.list_id != XDPBAN_LIST_MANUAL_BAN ||
	    e->policy.verdict != XDPBAN_POLICY_DENY)
		return 0;
	memset(&info, 0, sizeof(info));
	xb_prefix_format(&e->prefix, info.prefix, sizeof(info.prefix));
	info.reason = xb_reason_name(XDPBAN_REASON_MANUAL);
	info.seconds_left = seconds_left(e->policy.expires_ns, w->now_ns);
	info.started = 0; /* a policy entry does not record its start */
	info.table = "policy";
	info.observed = w->observed;
	return w->cb(&info, w->ctx);
}

int xb_ban_foreach(const struct xb_maps *m, xb_ban_cb cb, void *ctx)
{
	struct ban_walk w = { .now_ns = xb_boot_ns(), .cb = cb, .ctx = ctx };
	struct xdpban_config cfg;
	struct timespec wall;
	int ret = xb_config_read(m, &cfg);

	if (ret)
		return ret;
	w.observed = cfg.mode == XDPBAN_MODE_OBSERVE;
	clock_gettime(CLOCK_REALTIME, &wall);
	w.wall_minus_boot_ns = (__s64)wall.tv_sec * (__s64)NS_PER_SEC + wall.tv_nsec -
			       (__s64)w.now_ns;
	/* mapped: a million bans, no syscalls but the drop counts' batch reads */
	ret = xb_bans_walk_drops_in(m, ban_entry, &w);
	if (ret)
		return ret;
	return xb_policy_foreach(m, prefix_ban_entry, &w);
}

struct active_count {
	__u64 now_ns;
	int n;
};

static int count_active(const struct xdpban_key *key, const struct xdpban_ban *ban, void *ctx)
{
	struct active_count *c = ctx;

	if (!ban->expires_ns || c->now_ns < ban->expires_ns)
		c->n++;
	return 0;
}

int xb_count_banned(const struct xb_maps *m, __u64 now_ns)
{
	struct active_count c = { .now_ns = now_ns };
	int ret = xb_bans_walk_in(m, count_active, &c);

	return ret ? ret : c.n;
}

bool xb_is_prefix_ban(const struct xb_policy_entry *e)
{
	return !e->expired && e->policy.list_id == XDPBAN_LIST_MANUAL_BAN &&
	       e->policy.verdict == XDPBAN_POLICY_DENY;
}

static int count_prefix_ban(const struct xb_policy_entry *e, void *ctx)
{
	*(int *)ctx += xb_is_prefix_ban(e);
	return 0;
}

int xb_count_prefix_bans(const struct xb_maps *m)
{
	int n = 0, ret = xb_policy_foreach(m, count_prefix_ban, &n);

	return ret ? ret : n;
}
