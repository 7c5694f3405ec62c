/* ports.h - the port rules (include/xdpban_ports.h, docs/datapath.md section 9) from userspace:
 * the parsers of port lists ("22,80,8000-8100") and guards ("6969/bep15"), the table they build
 * in memory with the config.ports flags it implies, its writing to xdpban_ports in the order the
 * contract prescribes, and reading back the rules in force for status. The only writer of
 * xdpban_ports and of config.ports. Never prints: errors are one line in err.
 *
 * The text, for the config file and the docs: a comma list of pieces, each a port 1..65535 or
 * a range LO-HI (LO <= HI); blanks around a piece are ignored, none is allowed inside one. A
 * guard piece is PORT/PROFILE or LO-HI/PROFILE, PROFILE a name of XDPBAN_GUARDS.
 */
#ifndef XB_PORTS_H
#define XB_PORTS_H

#include <stddef.h>
#include <linux/types.h>
#include "libxdpban.h"
#include "xdpban_ports.h"

/* The contents of xdpban_ports, and the config.ports bits that putting it in force sets. */
struct xb_ports {
	__u64 words[XDPBAN_PORTS_WORDS];
	__u8 flags; /* XDPBAN_PORTS_*: GUARD with any guard, PROBE with any open list, and
		     * PROBE_ICMP (only with PROBE) */
};

/* No rules: every byte 0, no flag. */
void xb_ports_clear(struct xb_ports *t);
/* -EINVAL with err when a port rule of cfg's (xdpban_config.h) that before does not hold as it
 * is names a port without a guard in force in the maps: the limits of a port judge its guard's
 * protocol errors only. 0, or -errno of the read. */
int xb_ports_check_rules(const struct xb_maps *m, const struct xdpban_config *before,
			 const struct xdpban_config *cfg, char *err, size_t errlen);
/* The byte of a port (xdpban_ports.h). */
__u8 xb_ports_byte(const struct xb_ports *t, __u32 port);

/* Marks every port of the list `text` open: open_bit XDPBAN_PORT_TCP_OPEN or
 * XDPBAN_PORT_UDP_OPEN; sets XDPBAN_PORTS_PROBE. A port already open stays so. 0, or -EINVAL
 * with a message naming `what` and the bad piece; t is untouched then. */
int xb_ports_add_open(struct xb_ports *t, __u8 open_bit, const char *what, const char *text,
		      char *err, size_t errlen);
/* Guards the ports of each piece of `text` with its profile; sets XDPBAN_PORTS_GUARD. A port
 * already guarded with another profile is an error (with the same one, nothing changes).
 * 0, or -EINVAL with a message as above; t untouched then. */
int xb_ports_add_guards(struct xb_ports *t, const char *what, const char *text, char *err,
			size_t errlen);
/* Makes ICMP and ICMPv6 echo requests probes too (XDPBAN_PORTS_PROBE_ICMP). -EINVAL with a
 * message naming `what` when no open port list was added: without open ports there are no
 * probes. */
int xb_ports_probe_icmp(struct xb_ports *t, const char *what, char *err, size_t errlen);

/* The name of a guard profile ("bep15", "dns"), NULL for 0 or an unknown value. */
const char *xb_guard_name(unsigned int profile);

/* Puts t in force: clears the config.ports bits that go, writes the words that change, then
 * sets config.ports to t->flags; the other fields of the config entry are kept. 0 or -errno
 * with a message. */
int xb_ports_write(const struct xb_maps *m, const struct xb_ports *t, char *err,
		   size_t errlen);
/* The rules in force: config.ports, and of each byte only what it turns on (the guard profile
 * with GUARD, the open bits with PROBE). 0 or -errno. */
int xb_ports_read(const struct xb_maps *m, struct xb_ports *t);

/* Calls cb for every maximal run of ports lo..hi whose bytes hold the same non-zero value
 * under mask (XDPBAN_PORT_GUARD_MASK: runs of one profile; an open bit: runs of open ports),
 * in port order; a non-zero return of cb stops the walk and is returned. */
typedef int (*xb_port_run_cb)(__u32 lo, __u32 hi, __u8 value, void *ctx);
int xb_ports_runs(const struct xb_ports *t, __u8 mask, xb_port_run_cb cb, void *ctx);
/* A run as a piece of the text the parsers take: "22", "8000-8100", "6969/bep15" (a guard
 * when mask is XDPBAN_PORT_GUARD_MASK). 0 or -ENOSPC. */
int xb_ports_format_run(__u32 lo, __u32 hi, __u8 value, __u8 mask, char *buf, size_t len);
/* Every run under mask as a comma list ("22,80,8000-8100", "53/dns,6969/bep15"), "" for none:
 * text the parsers read back to the same table. 0, or -ENOSPC (buf holds the pieces that
 * fitted). */
int xb_ports_format(const struct xb_ports *t, __u8 mask, char *buf, size_t len);

#endif /* XB_PORTS_H */
