/* exemptions.h - what xdpband keeps in the exempt tries (docs/datapath.md, section 8): the
 * never-ban entries of the lists in force and the addresses of the protected interfaces, read
 * at start and again whenever rtnetlink says an address changed, written together through the
 * library's one writer (user/lib/exempt.h), which adds before it deletes; and the networks
 * that holding them keys per address (user/lib/narrow.h), written first. One log line per host
 * address that comes or goes. Never touches the policy, the counters or the bans. */
#ifndef XDPBAND_EXEMPTIONS_H
#define XDPBAND_EXEMPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <net/if.h>
#include "conf.h"
#include "exempt.h"
#include "hostaddr.h"
#include "libxdpban.h"

struct xbd_exemptions {
	struct xbd_hostaddr events;
	int ifindex[XBD_MAX_IFACES]; /* the protected interfaces */
	char ifname[XBD_MAX_IFACES][IF_NAMESIZE];
	int n_ifaces;
	struct xb_exempt_set never_ban; /* in force: the lists' entries, finished */
	struct xb_exempt_set host;      /* in force: the host's addresses, finished */
	bool stale;                     /* the last refresh failed: the next one reads anyway */
	__u8 narrow_prefix;             /* the ipv6-prefix xdpban_narrow6 was written under */
};

/* Subscribes to address events, reads the addresses of the interfaces and writes them with
 * never_ban (finished; taken over, left empty) into the tries. 0, or -errno with one line in
 * err; then nothing is held (xbd_exemptions_close is still safe). */
int xbd_exemptions_start(struct xbd_exemptions *x, const struct xb_maps *m,
			 char *const *ifaces, int n, struct xb_exempt_set *never_ban, char *err,
			 size_t errlen);
/* Puts the never-ban entries of *never_ban (finished) in force beside the host's addresses,
 * and hands back in *never_ban those that were in force: the same call with them undoes it.
 * On failure nothing changed (the sync rolls back). 0 or -errno with one line in err. */
int xbd_exemptions_swap(struct xbd_exemptions *x, const struct xb_maps *m,
			struct xb_exempt_set *never_ban, char *err, size_t errlen);
/* The fd to poll for address events. */
int xbd_exemptions_fd(const struct xbd_exemptions *x);
/* When the fd was readable and an address changed, or the last refresh failed: reads them all
 * again and writes what changed, with a log line each. A failure is logged and keeps what the
 * tries hold; the next call tries again (the daemon calls it at every sweep too). When the
 * ipv6-prefix in force is not the one xdpban_narrow6 was written under, writes it again. */
void xbd_exemptions_refresh(struct xbd_exemptions *x, const struct xb_maps *m);
/* The interface's name, for an ifindex of x; NULL for another. */
const char *xbd_exemptions_ifname(const struct xbd_exemptions *x, __u32 ifindex);
void xbd_exemptions_close(struct xbd_exemptions *x);

#endif /* XDPBAND_EXEMPTIONS_H */
