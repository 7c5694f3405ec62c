/* hostaddr.h - the host's own addresses on the protected interfaces, read from rtnetlink in
 * the daemon's network namespace (a dump of RTM_GETADDR), and the address events
 * (RTMGRP_IPV4_IFADDR, RTMGRP_IPV6_IFADDR) that say when to read them again. It reads the
 * kernel's answers and nothing else: what the addresses mean is exempt.h's (user/lib), what
 * the daemon does with them exemptions.h's. */
#ifndef XDPBAND_HOSTADDR_H
#define XDPBAND_HOSTADDR_H

#include <stdbool.h>
#include <stddef.h>

struct xb_exempt_set;

struct xbd_hostaddr {
	int fd; /* subscribed to address events, non-blocking; -1 when closed */
};

/* Subscribes to the address events. 0, or -errno with one line in err. */
int xbd_hostaddr_open(struct xbd_hostaddr *h, char *err, size_t errlen);
/* Reads every address of the interfaces ifindexes[0..n) into out (finished: sorted, one entry
 * per address), through a dump on a socket of its own that waits at most a second for the
 * kernel. 0, or -errno with one line in err (out is then empty). */
int xbd_hostaddr_read(const int *ifindexes, int n, struct xb_exempt_set *out, char *err,
		      size_t errlen);
/* Takes every event that waits; true when an address was added or removed anywhere, or when
 * events were lost (the socket's buffer overran): either way the addresses must be read again. */
bool xbd_hostaddr_changed(struct xbd_hostaddr *h);
void xbd_hostaddr_close(struct xbd_hostaddr *h);

#endif /* XDPBAND_HOSTADDR_H */
