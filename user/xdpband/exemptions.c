/* exemptions.c - see exemptions.h. The tries always get the union of the never-ban entries and
 * the host's addresses (a host address wins for a prefix in both: it names its interface), so
 * that a change of either never drops the other. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "exemptions.h"
#include "log.h"

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

/* Writes never_ban and host together. 0 or -errno with one line in err. */
static int write_union(const struct xb_maps *m, const struct xb_exempt_set *never_ban,
		       const struct xb_exempt_set *host, char *err, size_t errlen)
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
		ret = write_union(m, never_ban, &x->host, err, errlen);
	if (ret) {
		xbd_exemptions_close(x);
		return ret;
	}
	x->never_ban = *never_ban;
	memset(never_ban, 0, sizeof(*never_ban));
	log_changes(x, &none, &x->host);
	pr_info("exempt: %zu never-ban entries and %zu host addresses of %d interface%s are never counted or banned",
		x->never_ban.n, x->host.n, x->n_ifaces, x->n_ifaces == 1 ? "" : "s");
	return 0;
}

int xbd_exemptions_swap(struct xbd_exemptions *x, const struct xb_maps *m,
			struct xb_exempt_set *never_ban, char *err, size_t errlen)
{
	struct xb_exempt_set old = x->never_ban;
	int ret = write_union(m, never_ban, &x->host, err, errlen);

	if (ret)
		return ret;
	x->never_ban = *never_ban;
	*never_ban = old;
	return 0;
}

void xbd_exemptions_refresh(struct xbd_exemptions *x, const struct xb_maps *m)
{
	struct xb_exempt_set host;
	char err[XB_ERRLEN];

	if (!xbd_hostaddr_changed(&x->events) && !x->stale)
		return;
	x->stale = xbd_hostaddr_read(x->ifindex, x->n_ifaces, &host, err, sizeof(err)) ||
		   write_union(m, &x->never_ban, &host, err, sizeof(err));
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
