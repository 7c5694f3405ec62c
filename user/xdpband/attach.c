/* attach.c - see attach.h. "Ours" means: a program on the interface (on its dispatcher, or
 * attached directly when the kernel refuses the dispatcher) that uses our pinned ban table.
 * It is current when its tag (a hash of its instructions) is the tag of the program this
 * daemon loaded, and outdated otherwise, e.g. after an upgrade that kept the old program
 * attached with detach-on-exit = no. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h> /* XDP_FLAGS_* */
#include "xdpban_config.h" /* before the skeleton */
#include "xdpban.skel.h"
#include "attach.h"
#include "ifinfo.h"
#include "log.h"

/* veth's limits for native XDP on the peer's MTU, on 4 KiB pages (drivers/net/veth.c): a page
 * less XDP's headroom, skb_shared_info and the Ethernet header without multi-buffer; 17 pages
 * (MAX_SKB_FRAGS) more with it. xdpban is loaded multi-buffer aware. */
#define VETH_MTU_SINGLE 3506
#define VETH_MTU_FRAGS (VETH_MTU_SINGLE + 17 * 4096)

/* What one interface has before we attach. */
struct iface_scan {
	bool dispatcher;                /* libxdp's dispatcher is attached: we must use its mode */
	bool legacy;                    /* one program attached directly, without a dispatcher */
	enum xdp_attach_mode mode;
	__u32 current_id;               /* our program, current: reuse it */
	__u32 outdated_id[8];           /* our programs, outdated: replace them */
	int n_outdated;
};

const char *xbd_xdp_mode_name(enum xdp_attach_mode mode)
{
	switch (mode) {
	case XDP_MODE_NATIVE:
		return "native";
	case XDP_MODE_SKB:
		return "skb";
	case XDP_MODE_HW:
		return "hw";
	default:
		return "unknown";
	}
}

/* True when the program with this id uses the map with map_id. */
static bool prog_uses_map(__u32 prog_id, __u32 map_id)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), ids[64], n;
	int fd = bpf_prog_get_fd_by_id(prog_id);
	bool found = false;

	if (fd < 0)
		return false;
	if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
		n = info.nr_map_ids < 64 ? info.nr_map_ids : 64;
		memset(&info, 0, sizeof(info));
		info.nr_map_ids = n;
		info.map_ids = (__u64)(unsigned long)ids;
		len = sizeof(info);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len))
			for (__u32 i = 0; i < n && !found; i++)
				found = ids[i] == map_id;
	}
	close(fd);
	return found;
}

/* Sorts one attached program: a stranger's, ours and current, or ours and outdated. 0, or
 * -errno with one line in err when this build's tag cannot be had. */
static int classify_prog(struct xbd_attach *at, const struct xdp_program *p,
			 struct iface_scan *scan, char *err, size_t errlen)
{
	__u32 id = xdp_program__id(p);
	int ret;

	if (!prog_uses_map(id, at->ld->bans_map_id))
		return 0;
	if (!at->tag_known) {
		ret = xbd_load_prog_tag(at->ld, at->tag, err, errlen);
		if (ret)
			return ret;
		at->tag_known = true;
	}
	if (!scan->current_id && !memcmp(xdp_program__tag(p), at->tag, sizeof(at->tag)))
		scan->current_id = id;
	else if (scan->n_outdated < (int)(sizeof(scan->outdated_id) / sizeof(__u32)))
		scan->outdated_id[scan->n_outdated++] = id;
	return 0;
}

static int scan_iface(struct xbd_attach *at, const struct xbd_iface *ifc,
		      struct iface_scan *scan, char *err, size_t errlen)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifc->ifindex);
	struct xdp_program *p;
	long ret = libxdp_get_error(mp);

	memset(scan, 0, sizeof(*scan));
	if (ret == -ENOENT || (!ret && !mp))
		return 0; /* no XDP program there */
	if (ret) {
		snprintf(err, errlen, "%s: cannot read its XDP programs: %s", ifc->name,
			 strerror((int)-ret));
		return (int)ret;
	}
	scan->mode = xdp_multiprog__attach_mode(mp);
	if (xdp_multiprog__is_legacy(mp)) {
		/* One program attached directly: ours (then reused or replaced), or a stranger's. */
		p = xdp_multiprog__main_prog(mp);
		if (p)
			ret = classify_prog(at, p, scan, err, errlen);
		if (!ret && p && !scan->current_id && !scan->n_outdated) {
			snprintf(err, errlen,
				 "%s: XDP program %s (id %u) is attached without libxdp's dispatcher; remove it first (ip link set dev %s xdp off)",
				 ifc->name, xdp_program__name(p), xdp_program__id(p), ifc->name);
			ret = -EEXIST;
		}
		scan->legacy = true;
	} else {
		scan->dispatcher = true;
		for (p = xdp_multiprog__next_prog(NULL, mp); p && !ret;
		     p = xdp_multiprog__next_prog(p, mp))
			ret = classify_prog(at, p, scan, err, errlen);
	}
	xdp_multiprog__close(mp);
	return (int)ret;
}

/* Opens our attachable program on first use. libxdp loads it at its first attach, as an
 * extension of the dispatcher; later attaches link the same program to other dispatchers. */
static int ensure_prog(struct xbd_attach *at, char *err, size_t errlen)
{
	DECLARE_LIBXDP_OPTS(xdp_program_opts, opts, .prog_name = "xdpban");
	long ret;

	if (at->prog)
		return 0;
	at->skel = xbd_load_open_attachable(at->ld, at->vlog, err, errlen);
	if (!at->skel)
		return -EINVAL;
	opts.obj = at->skel->obj;
	at->prog = xdp_program__create(&opts);
	ret = libxdp_get_error(at->prog);
	if (!ret)
		ret = xdp_program__set_run_prio(at->prog, XBD_RUN_PRIO);
	if (ret) {
		snprintf(err, errlen, "cannot prepare the program for libxdp: %s",
			 strerror((int)-ret));
		at->prog = NULL;
		return (int)ret;
	}
	return 0;
}

/* What the kernel's error means for native mode, on this interface. */
static const char *native_hint(int err, const char *driver, __u32 mtu)
{
	static char hint[200];

	if (err == -EOPNOTSUPP)
		return "the driver has no native XDP";
	if (!strcmp(driver, "veth") && err == -ERANGE) {
		snprintf(hint, sizeof(hint),
			 "veth refuses native XDP when its peer's MTU is above %u bytes without multi-buffer, %u with; the program has multi-buffer: check the peer's MTU",
			 VETH_MTU_SINGLE, VETH_MTU_FRAGS);
		return hint;
	}
	if (!strcmp(driver, "veth") && err == -ENOSPC)
		return "veth needs at least as many RX queues as its peer has TX queues";
	if (err == -ERANGE || err == -EINVAL || err == -E2BIG) {
		snprintf(hint, sizeof(hint),
			 "drivers refuse native XDP above the MTU one buffer holds unless they support multi-buffer XDP, which the program does: this driver does not at MTU %u, or not at all",
			 mtu);
		return hint;
	}
	return "";
}

/* One line on why native mode was refused: the error, the driver and MTU, and what they mean. */
static void native_refusal(const struct xbd_iface *ifc, int err, char *buf, size_t len)
{
	char driver[32] = "unknown";
	const char *hint;
	__u32 mtu = 0;

	xbd_if_mtu(ifc->name, &mtu);
	xbd_if_driver(ifc->name, driver, sizeof(driver));
	hint = native_hint(err, driver, mtu);
	snprintf(buf, len, "%s (driver %s, MTU %u)%s%s", strerror(-err), driver, mtu,
		 *hint ? ": " : "", hint);
}

/* Whether the kernel refused to load the program: its verifier ran (the log has its counts)
 * and the program has no fd. No other mode would take it. */
static bool load_refused(const struct xbd_attach *at)
{
	struct xb_vstats st;

	return bpf_program__fd(at->skel->progs.xdpban) < 0 && !xb_vstats_parse(at->vlog, &st);
}

static int attach_in_mode(struct xbd_attach *at, struct xbd_iface *ifc, enum xdp_attach_mode m)
{
	int ret = xdp_program__attach(at->prog, ifc->ifindex, m, 0);

	if (ret)
		pr_debug("%s: %s mode attach failed: %s", ifc->name, xbd_xdp_mode_name(m),
			 strerror(-ret));
	else
		ifc->mode = m;
	return ret;
}

/* libxdp falls back to attaching the program alone when the kernel cannot run its dispatcher
 * (it needs freplace programs, which some kernels refuse). */
static bool attached_directly(const struct xbd_iface *ifc)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifc->ifindex);
	bool legacy;

	if (libxdp_get_error(mp) || !mp)
		return false;
	legacy = xdp_multiprog__is_legacy(mp);
	xdp_multiprog__close(mp);
	return legacy;
}

static int attach_new(struct xbd_attach *at, struct xbd_iface *ifc, const struct iface_scan *scan,
		      enum xbd_mode mode, char *err, size_t errlen)
{
	char why[400];
	int ret = ensure_prog(at, err, errlen);

	if (ret)
		return ret;
	if (scan->dispatcher) /* one dispatcher per interface: join it in its mode */
		ret = attach_in_mode(at, ifc, scan->mode);
	else if (mode == XBD_MODE_SKB)
		ret = attach_in_mode(at, ifc, XDP_MODE_SKB);
	else if ((ret = attach_in_mode(at, ifc, XDP_MODE_NATIVE)) && !load_refused(at)) {
		native_refusal(ifc, ret, why, sizeof(why));
		if (mode == XBD_MODE_NATIVE) {
			snprintf(err, errlen, "%s: native mode refused: %s", ifc->name, why);
			return ret;
		}
		pr_warn("%s: native mode refused: %s; falling back to generic (skb) mode, slower, where the program also sees the stack's GSO/GRO aggregates",
			ifc->name, why);
		ret = attach_in_mode(at, ifc, XDP_MODE_SKB);
	}
	if (ret && load_refused(at)) {
		xbd_load_failure("cannot load the XDP program", "xdpban", at->vlog, ret, err, errlen);
		return ret;
	}
	if (ret) {
		snprintf(err, errlen, "%s: cannot attach the XDP program: %s (run with -v for libxdp's log)",
			 ifc->name, strerror(-ret));
		return ret;
	}
	ifc->prog = at->prog;
	if (attached_directly(ifc))
		pr_info("%s: attached in %s mode (program id %u), directly: this kernel refuses libxdp's dispatcher",
			ifc->name, xbd_xdp_mode_name(ifc->mode), xdp_program__id(at->prog));
	else
		pr_info("%s: attached in %s mode (program id %u) through libxdp's dispatcher, priority %d",
			ifc->name, xbd_xdp_mode_name(ifc->mode), xdp_program__id(at->prog),
			XBD_RUN_PRIO);
	return 0;
}

static int reuse(struct xbd_iface *ifc, const struct iface_scan *scan, char *err, size_t errlen)
{
	struct xdp_program *p = xdp_program__from_id(scan->current_id);
	long ret = libxdp_get_error(p);

	if (ret) {
		snprintf(err, errlen, "%s: cannot open our attached program %u: %s", ifc->name,
			 scan->current_id, strerror((int)-ret));
		return (int)ret;
	}
	ifc->prog = p;
	ifc->mode = scan->mode;
	ifc->reused = true;
	pr_info("%s: our program is already attached in %s mode (program id %u); keeping it",
		ifc->name, xbd_xdp_mode_name(ifc->mode), scan->current_id);
	return 0;
}

/* Detaches the programs ids (what names them in the log) from the interface. */
static void detach_ids(const struct xbd_iface *ifc, const __u32 *ids, int n, const char *what)
{
	for (int i = 0; i < n; i++) {
		struct xdp_program *old = xdp_program__from_id(ids[i]);
		int ret = libxdp_get_error(old);

		if (!ret)
			ret = xdp_program__detach(old, ifc->ifindex, ifc->mode, 0);
		if (ret)
			pr_warn("%s: cannot detach %s %u: %s", ifc->name, what, ids[i],
				strerror(-ret));
		else
			pr_info("%s: detached %s %u", ifc->name, what, ids[i]);
		if (!libxdp_get_error(old))
			xdp_program__close(old);
	}
}

/* On a dispatcher, outdated programs go only after ours is in place, so the interface is
 * never unfiltered. A program attached directly must go first: an interface holds one. */
static void remove_outdated(struct xbd_iface *ifc, const struct iface_scan *scan)
{
	detach_ids(ifc, scan->outdated_id, scan->n_outdated, "the outdated program");
}

static __u32 mode_flags(enum xdp_attach_mode mode)
{
	return mode == XDP_MODE_SKB ? XDP_FLAGS_SKB_MODE
	       : mode == XDP_MODE_HW ? XDP_FLAGS_HW_MODE
				     : XDP_FLAGS_DRV_MODE;
}

/* Puts the program loaded in skel where the program old_id is attached directly, in one step
 * (XDP_FLAGS_REPLACE: the kernel swaps them only if old_id is still the one there). */
static int swap_direct(struct xdpban *skel, struct xbd_iface *ifc, __u32 old_id,
		       enum xdp_attach_mode mode, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts, .old_prog_fd = bpf_prog_get_fd_by_id(old_id));
	int ret = opts.old_prog_fd < 0 ? -errno : 0;

	if (!ret)
		ret = bpf_xdp_attach(ifc->ifindex, bpf_program__fd(skel->progs.xdpban),
				     mode_flags(mode) | XDP_FLAGS_REPLACE, &opts);
	if (opts.old_prog_fd >= 0)
		close(opts.old_prog_fd);
	if (ret)
		snprintf(err, errlen, "%s: cannot replace the outdated program %u: %s", ifc->name,
			 old_id, strerror(-ret));
	return ret;
}

/* Opens the program swap_direct put in place, by its id, for status and a later detach. */
static int open_swapped(struct xdpban *skel, struct xbd_iface *ifc, char *err, size_t errlen)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	long ret = 0;

	if (bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.xdpban), &info, &len)) {
		ret = -errno;
	} else {
		ifc->prog = xdp_program__from_id(info.id);
		ret = libxdp_get_error(ifc->prog);
	}
	if (ret) {
		ifc->prog = NULL;
		snprintf(err, errlen, "%s: the new program is in place, but cannot be opened: %s",
			 ifc->name, strerror((int)-ret));
	}
	return (int)ret;
}

/* An outdated program of ours attached directly (no dispatcher): this build's takes its place
 * in one step, so that the interface never passes a packet unfiltered meanwhile, as it would
 * between a detach and an attach. The pinned maps are the same (load.c refused any of another
 * layout), so the new program goes on with the old one's bans, counters and lists. */
static int replace_direct(struct xbd_attach *at, struct xbd_iface *ifc,
			  const struct iface_scan *scan, char *err, size_t errlen)
{
	struct xdpban *skel = xbd_load_open_attachable(at->ld, at->vlog, err, errlen);
	int ret;

	if (!skel)
		return -EINVAL;
	ret = xdpban__load(skel);
	if (ret)
		xbd_load_failure("cannot load the XDP program", "xdpban", at->vlog, ret, err, errlen);
	else
		ret = swap_direct(skel, ifc, scan->outdated_id[0], scan->mode, err, errlen);
	if (!ret)
		ret = open_swapped(skel, ifc, err, errlen);
	if (!ret) {
		ifc->mode = scan->mode;
		ifc->reused = true; /* opened by id, and kept if a later interface fails */
		pr_info("%s: replaced the outdated program %u with this build's (program id %u) in one step, in %s mode, directly",
			ifc->name, scan->outdated_id[0], xdp_program__id(ifc->prog),
			xbd_xdp_mode_name(ifc->mode));
	}
	xdpban__destroy(skel); /* the attachment holds the program, the pins the maps */
	return ret;
}

/* True when an attachment in this mode satisfies the configured mode. */
static bool mode_fits(enum xdp_attach_mode have, enum xbd_mode want)
{
	return want == XBD_MODE_AUTO || (want == XBD_MODE_NATIVE && have == XDP_MODE_NATIVE) ||
	       (want == XBD_MODE_SKB && have == XDP_MODE_SKB);
}

static int attach_one(struct xbd_attach *at, struct xbd_iface *ifc, enum xbd_mode mode,
		      char *err, size_t errlen)
{
	struct iface_scan scan;
	int ret = scan_iface(at, ifc, &scan, err, errlen);

	if (ret)
		return ret;
	if (scan.current_id && mode_fits(scan.mode, mode))
		return reuse(ifc, &scan, err, errlen);
	if (scan.current_id) {
		snprintf(err, errlen, "%s: our program is attached in %s mode but mode = %s; detach it or change mode",
			 ifc->name, xbd_xdp_mode_name(scan.mode), xbd_mode_name(mode));
		return -EEXIST;
	}
	if (scan.legacy && scan.n_outdated == 1 && mode_fits(scan.mode, mode))
		return replace_direct(at, ifc, &scan, err, errlen);
	if (scan.legacy) { /* in another mode than configured: it goes before ours comes */
		ifc->mode = scan.mode;
		remove_outdated(ifc, &scan);
		scan.legacy = false; /* the interface is free now */
	}
	ret = attach_new(at, ifc, &scan, mode, err, errlen);
	if (!ret && scan.dispatcher)
		remove_outdated(ifc, &scan);
	return ret;
}

static void detach_one(struct xbd_attach *at, struct xbd_iface *ifc)
{
	int ret = xdp_program__detach(ifc->prog, ifc->ifindex, ifc->mode, 0);

	if (ret)
		pr_warn("%s: cannot detach: %s", ifc->name, strerror(-ret));
	else
		pr_info("%s: detached", ifc->name);
}

static void release_one(struct xbd_attach *at, struct xbd_iface *ifc)
{
	if (ifc->reused)
		xdp_program__close(ifc->prog);
	ifc->prog = NULL;
}

int xbd_attach_all(struct xbd_attach *at, const struct xbd_loader *ld, char *const *names,
		   int n, enum xbd_mode mode, char *err, size_t errlen)
{
	int ret = 0;

	memset(at, 0, sizeof(*at));
	at->ld = ld;
	for (int i = 0; i < n && !ret; i++) {
		struct xbd_iface *ifc = &at->ifaces[i];

		snprintf(ifc->name, sizeof(ifc->name), "%s", names[i]);
		ifc->ifindex = if_nametoindex(names[i]);
		if (!ifc->ifindex) {
			snprintf(err, errlen, "no interface %s in this network namespace", names[i]);
			ret = -ENODEV;
			break;
		}
		ret = attach_one(at, ifc, mode, err, errlen);
		if (!ret)
			at->n++;
	}
	if (ret) {
		/* All or nothing: undo what this call attached; reused attachments stay. */
		for (int i = 0; i < at->n; i++)
			if (!at->ifaces[i].reused)
				detach_one(at, &at->ifaces[i]);
		xbd_attach_close(at, false);
	}
	return ret;
}

void xbd_attach_close(struct xbd_attach *at, bool detach)
{
	for (int i = 0; i < at->n; i++) {
		if (detach)
			detach_one(at, &at->ifaces[i]);
		release_one(at, &at->ifaces[i]);
	}
	at->n = 0;
	if (at->prog)
		xdp_program__close(at->prog);
	at->prog = NULL;
	/* Closing our fds leaves libxdp's pinned links: an attachment outlives us unless detached. */
	xdpban__destroy(at->skel);
	at->skel = NULL;
}

/* The programs on one interface that use the ban table map_id, at most max, and its mode. */
static int ours_on(struct xbd_iface *ifc, __u32 map_id, __u32 *ids, int max)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifc->ifindex);
	struct xdp_program *p;
	int n = 0;

	if (libxdp_get_error(mp) || !mp)
		return 0;
	ifc->mode = xdp_multiprog__attach_mode(mp);
	if (xdp_multiprog__is_legacy(mp)) {
		p = xdp_multiprog__main_prog(mp);
		if (p && prog_uses_map(xdp_program__id(p), map_id))
			ids[n++] = xdp_program__id(p);
	} else {
		for (p = xdp_multiprog__next_prog(NULL, mp); p && n < max;
		     p = xdp_multiprog__next_prog(p, mp))
			if (prog_uses_map(xdp_program__id(p), map_id))
				ids[n++] = xdp_program__id(p);
	}
	xdp_multiprog__close(mp);
	return n;
}

int xbd_detach_ours(__u32 bans_map_id, char *err, size_t errlen)
{
	struct if_nameindex *ifs = if_nameindex();
	__u32 ids[8];

	if (!ifs) {
		snprintf(err, errlen, "cannot list the interfaces: %s", strerror(errno));
		return -errno;
	}
	for (struct if_nameindex *i = ifs; i->if_index; i++) {
		struct xbd_iface ifc = { .ifindex = (int)i->if_index };

		snprintf(ifc.name, sizeof(ifc.name), "%s", i->if_name);
		detach_ids(&ifc, ids, ours_on(&ifc, bans_map_id, ids, 8), "program");
	}
	if_freenameindex(ifs);
	return 0;
}
