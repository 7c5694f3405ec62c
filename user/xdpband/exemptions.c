/* exemptions.c - see exemptions.h. The tries always get the union of the never-ban entries and
 * the host's addresses (a host address wins for a prefix in both: it names its interface), so
 * that a change of either never drops the other. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "exemptions.h"
#include "log.h"
#include "narrow.h"

int xbd_exemptions_fd(const struct xbd_exemptions *x)
{
	return x->events.fd;
}

const char *xbd_exemptions_ifname(const struct xbd_exemptions *x, __u32 ifindex)
{
	for (int i = 0; i < x->n_ifaces; i++)
		if ((__u32)x->ifindex[i] == ifindex)
			return x->ifname[i];
	return NULL;
}

/* Keys at /128 the networks that hold an entry of all (narrow.h), under the ipv6-prefix in
 * force, which it keeps in *v6_prefix. 0 or -errno with one line in err. */
static int write_narrow(const struct xb_maps *m, const struct xb_exempt_set *all,
			__u8 *v6_prefix, char *err, size_t errlen)
{
	struct xb_narrow_set want = {};
	struct xdpban_config cfg;
	int ret = xb_config_read(m, &cfg);

	if (ret) {
		snprintf(err, errlen, "cannot read %s: %s", XDPBAN_MAP_NAME(xdpban_config),
			 strerror(-ret));
		return ret;
	}
	ret = xb_narrow_plan(all, cfg.v6_prefix, &want);
	if (ret) {
		snprintf(err, errlen, "out of memory for the networks of %zu exempt entries",
			 all->n);
		return ret;
	}
	ret = xb_narrow_sync(m, &want, err, errlen);
	if (!ret && *v6_prefix != cfg.v6_prefix)
		pr_debug("narrow: %zu networks keyed per address under ipv6-prefix %u", want.n,
			 cfg.v6_prefix);
	if (!ret)
		*v6_prefix = cfg.v6_prefix;
	xb_narrow_set_free(&want);
	return ret;
}

/* Writes never_ban and host together, the networks they make keyed per address first (so that
 * no source is keyed wider than its network allows while an entry comes). 0 or -errno with one
 * line in err. */
static int write_union(struct xbd_exemptions *x, const struct xb_maps *m,
		       const struct xb_exempt_set *never_ban, const struct xb_exempt_set *host,
		       char *err, size_t errlen)
{
	struct xb_exempt_sync_result res;
	struct xb_exempt_set all = {};
	int ret = xb_exempt_set_add_all(&all, never_ban);

	if (!ret)
		ret = xb_exempt_set_add_all(&all, host);
	if (ret) {
		snprintf(err, errlen, "out of memory for %zu exempt entries", never_ban->n + host->n);
	} else {
		xb_exempt_set_finish(&all);
		ret = write_narrow(m, &all, &x->narrow_prefix, err, errlen);
		if (!ret)
			ret = xb_exempt_sync(m, &all, &res, err, errlen);
	}
	if (!ret && (res.put || res.removed))
		pr_debug("exempt tries: %zu entries written, %zu removed", res.put, res.removed);
	xb_exempt_set_free(&all);
	return ret;
}

static void log_change(const struct xbd_exemptions *x, const struct xb_exempt_entry *e,
		       bool added)
{
	const char *name = xbd_exemptions_ifname(x, e->val.ifindex);
	char text[64] = "?";

	xb_prefix_format(&e->prefix, text, sizeof(text));
	if (added)
		pr_info("exempt: host address %s on %s: never counted or banned", text,
			name ? name : "?");
	else
		pr_info("exempt: host address %s on %s is gone: counted again", text,
			name ? name : "?");
}

/* One line per host address that came, went, or moved to another interface. */
static void log_changes(const struct xbd_exemptions *x, const struct xb_exempt_set *before,
			const struct xb_exempt_set *after)
{
	struct xb_exempt_plan diff;

	if (xb_exempt_plan_make(after, before, &diff)) {
		pr_info("exempt: the host's addresses changed (%zu now)", after->n);
		return;
	}
	for (size_t i = 0; i < diff.del.n; i++)
		log_change(x, &diff.del.v[i], false);
	for (size_t i = 0; i < diff.put.n; i++)
		log_change(x, &diff.put.v[i], true);
	xb_exempt_plan_free(&diff);
}

int xbd_exemptions_start(struct xbd_exemptions *x, const struct xb_maps *m,
			 char *const *ifaces, int n, struct xb_exempt_set *never_ban, char *err,
			 size_t errlen)
{
	struct xb_exempt_set none = {};
	int ret;

	memset(x, 0, sizeof(*x));
	x->events.fd = -1;
	for (int i = 0; i < n && i < XBD_MAX_IFACES; i++) {
		x->ifindex[i] = (int)if_nametoindex(ifaces[i]);
		snprintf(x->ifname[i], sizeof(x->ifname[i]), "%s", ifaces[i]);
		x->n_ifaces++;
	}
	/* Subscribed before the first read, so that no change can fall between the two. */
	ret = xbd_hostaddr_open(&x->events, err, errlen);
	if (!ret)
		ret = xbd_hostaddr_read(x->ifindex, x->n_ifaces, &x->host, err, errlen);
	if (!ret)
		ret = write_union(x, m, never_ban, &x->host, err, errlen);
	if (ret) {
		xbd_exemptions_close(x);
		return ret;
	}
	x->never_ban = *never_ban;
	memset(never_ban, 0, sizeof(*never_ban));
	log_changes(x, &none, &x->host);
	pr_info("exempt: %zu never-ban %s and %zu host %s of %d %s are never counted or banned",
		x->never_ban.n, xb_plural(x->never_ban.n, "entry", "entries"), x->host.n,
		xb_plural(x->host.n, "address", "addresses"), x->n_ifaces,
		xb_plural(x->n_ifaces, "interface", "interfaces"));
	return 0;
}

int xbd_exemptions_swap(struct xbd_exemptions *x, const struct xb_maps *m,
			struct xb_exempt_set *never_ban, char *err, size_t errlen)
{
	struct xb_exempt_set old = x->never_ban;
	int ret = write_union(x, m, never_ban, &x->host, err, errlen);

	if (ret)
		return ret;
	x->never_ban = *never_ban;
	*never_ban = old;
	return 0;
}

/* After a `set ipv6-prefix` on the control socket: the networks again, under the new length. */
static void refresh_narrow(struct xbd_exemptions *x, const struct xb_maps *m)
{
	struct xdpban_config cfg;
	char err[XB_ERRLEN];

	if (xb_config_read(m, &cfg) || cfg.v6_prefix == x->narrow_prefix)
		return;
	if (write_union(x, m, &x->never_ban, &x->host, err, sizeof(err)))
		pr_err("exempt: %s (trying again in a few seconds)", err);
}

void xbd_exemptions_refresh(struct xbd_exemptions *x, const struct xb_maps *m)
{
	struct xb_exempt_set host;
	char err[XB_ERRLEN];

	if (!xbd_hostaddr_changed(&x->events) && !x->stale) {
		refresh_narrow(x, m);
		return;
	}
	x->stale = xbd_hostaddr_read(x->ifindex, x->n_ifaces, &host, err, sizeof(err)) ||
		   write_union(x, m, &x->never_ban, &host, err, sizeof(err));
	if (x->stale) {
		pr_err("exempt: %s; the exempt tries keep the host addresses they had (trying again in a few seconds)",
		       err);
		xb_exempt_set_free(&host);
		return;
	}
	log_changes(x, &x->host, &host);
	xb_exempt_set_free(&x->host);
	x->host = host;
}

void xbd_exemptions_close(struct xbd_exemptions *x)
{
	xbd_hostaddr_close(&x->events);
	xb_exempt_set_free(&x->never_ban);
	xb_exempt_set_free(&x->host);
}
