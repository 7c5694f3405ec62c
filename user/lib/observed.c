/* observed.c - the observed deny lists' tries xdpban_observed4/6 (libxdpban.h): filled whole by
 * xdpband from the lists, read by query. Never touches the policy tries or a verdict.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include "libxdpban.h"

static int observed_fd(const struct xb_maps *m, __u8 family)
{
	return family == XDPBAN_FAMILY_INET ? m->observed4 : m->observed6;
}

/* The config's XDPBAN_CFG_OBSERVE_LISTS bit set to on. */
static int set_observe_bit(const struct xb_maps *m, bool on, char *err, size_t errlen)
{
	struct xdpban_config cfg;
	int ret = xb_config_read(m, &cfg);

	if (ret) {
		snprintf(err, errlen, "cannot read the config map: %s", strerror(-ret));
		return ret;
	}
	if (!(cfg.policy & XDPBAN_CFG_OBSERVE_LISTS) == !on)
		return 0;
	cfg.policy = on ? cfg.policy | XDPBAN_CFG_OBSERVE_LISTS
			: cfg.policy & ~XDPBAN_CFG_OBSERVE_LISTS;
	return xb_config_write(m, &cfg, err, errlen);
}

/* Deletes every entry of the trie of family. */
static int clear_trie(const struct xb_maps *m, __u8 family)
{
	union xb_lpm_key key;
	int fd = observed_fd(m, family);

	while (!bpf_map_get_next_key(fd, NULL, &key))
		if (bpf_map_delete_elem(fd, &key) && errno != ENOENT)
			return -errno;
	return errno == ENOENT ? 0 : -errno;
}

int xb_observed_replace(const struct xb_maps *m, const struct xb_observed_entry *v, size_t n,
			char *err, size_t errlen)
{
	int ret = set_observe_bit(m, false, err, errlen);

	if (ret)
		return ret;
	ret = clear_trie(m, XDPBAN_FAMILY_INET);
	if (!ret)
		ret = clear_trie(m, XDPBAN_FAMILY_INET6);
	if (ret)
		snprintf(err, errlen, "cannot empty the observed tries: %s", strerror(-ret));
	for (size_t i = 0; i < n && !ret; i++) {
		union xb_lpm_key key;

		xb_lpm_key_make(&v[i].prefix, &key);
		if (bpf_map_update_elem(observed_fd(m, v[i].prefix.family), &key, &v[i].list_id,
					BPF_ANY)) {
			ret = -errno;
			snprintf(err, errlen, "cannot fill the observed tries (%zu of %zu entries): %s",
				 i, n, strerror(errno));
		}
	}
	if (!ret && n)
		ret = set_observe_bit(m, true, err, errlen);
	return ret;
}

struct observed_walk {
	__u8 family;
	xb_observed_cb cb;
	void *ctx;
};

static int walk_entry(const void *key, const void *value, void *ctx)
{
	struct observed_walk *w = ctx;
	struct xb_observed_entry e;

	xb_lpm_key_to_prefix(w->family, key, &e.prefix);
	memcpy(&e.list_id, value, sizeof(e.list_id));
	return w->cb(&e, w->ctx);
}

int xb_observed_foreach(const struct xb_maps *m, xb_observed_cb cb, void *ctx)
{
	static const __u8 families[] = { XDPBAN_FAMILY_INET, XDPBAN_FAMILY_INET6 };
	int ret = 0;

	for (size_t f = 0; f < sizeof(families) && !ret; f++) {
		struct observed_walk w = { .family = families[f], .cb = cb, .ctx = ctx };

		ret = xb_map_foreach(observed_fd(m, families[f]), xb_lpm_key_size(families[f]),
				     sizeof(__u32), walk_entry, &w);
	}
	return ret;
}

struct longest_observed {
	const struct xb_prefix *addr;
	struct xb_observed_entry *best;
	int found;
};

static int match_observed(const struct xb_observed_entry *e, void *ctx)
{
	struct longest_observed *lo = ctx;

	if (xb_prefix_contains(&e->prefix, lo->addr) &&
	    (!lo->found || e->prefix.plen > lo->best->prefix.plen)) {
		lo->found = 1;
		*lo->best = *e;
	}
	return 0;
}

int xb_observed_find(const struct xb_maps *m, const struct xb_prefix *addr,
		     struct xb_observed_entry *found)
{
	struct longest_observed lo = { .addr = addr, .best = found };
	int ret = xb_observed_foreach(m, match_observed, &lo);

	return ret ? ret : lo.found;
}
