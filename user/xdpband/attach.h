/* attach.h - attaching the data path to interfaces through libxdp, which puts it behind its
 * dispatcher (priority 10) so that it coexists with other XDP programs, or attaches it directly
 * where the kernel refuses the dispatcher; native mode first, generic (skb) mode as fallback.
 * An attachment of our own program that uses our pinned state is reused at a restart; an
 * outdated one (another build of the program) is replaced. Never touches programs that are
 * not ours, and never an interface the caller did not name. */
#ifndef XDPBAND_ATTACH_H
#define XDPBAND_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <net/if.h>
#include <xdp/libxdp.h>
#include "conf.h"
#include "load.h"

#define XBD_RUN_PRIO 10 /* a packet filter runs before other dispatcher programs */

struct xbd_iface {
	char name[IFNAMSIZ];
	int ifindex;
	enum xdp_attach_mode mode;
	struct xdp_program *prog; /* what runs there: our program, or our earlier one reused */
	bool reused;
};

struct xbd_attach {
	const struct xbd_loader *ld;
	struct xdpban *skel;      /* attachable instance, opened when an attach is needed */
	struct xdp_program *prog; /* its xdpban program, loaded by libxdp at the first attach */
	char vlog[XB_VLOG_SIZE];  /* the verifier's counts and reason for its xdpban */
	__u8 tag[BPF_TAG_SIZE];   /* of this build's xdpban, once tag_known */
	bool tag_known;
	struct xbd_iface ifaces[XBD_MAX_IFACES];
	int n;
};

/* Attaches to every named interface, or to none: on failure what this call attached is
 * detached again. 0, or -errno with one line in err. */
int xbd_attach_all(struct xbd_attach *at, const struct xbd_loader *ld, char *const *names,
		   int n, enum xbd_mode mode, char *err, size_t errlen);
/* Detaches from every interface, then frees; or only frees, leaving the program attached. */
void xbd_attach_close(struct xbd_attach *at, bool detach);
const char *xbd_xdp_mode_name(enum xdp_attach_mode mode);
/* For `xdpband --detach`: detaches every program that uses the ban table bans_map_id (ours,
 * with our pinned state) from every interface of this network namespace. A detach that
 * fails is logged; the others go on. 0, or -errno with one line in err when the interfaces
 * cannot be listed. */
int xbd_detach_ours(__u32 bans_map_id, char *err, size_t errlen);

#endif /* XDPBAND_ATTACH_H */
