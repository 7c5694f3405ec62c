/* ifinfo.h - what the daemon reads of an interface to explain how it attached: its MTU and its
 * driver. Reads only; never changes an interface. */
#ifndef XDPBAND_IFINFO_H
#define XDPBAND_IFINFO_H

#include <stddef.h>
#include <linux/types.h>

/* The interface's MTU (bytes of IP a frame carries). 0 or -errno. */
int xbd_if_mtu(const char *name, __u32 *mtu);
/* The interface's driver name (ethtool's), e.g. "veth". 0 or -errno. */
int xbd_if_driver(const char *name, char *buf, size_t len);

#endif /* XDPBAND_IFINFO_H */
