/* fuzz_conf.c - libFuzzer harness for xbd_conf_load (user/common/conf_load.c), the daemon's
 * config file reader, on the file's contents. No seam is needed: the loader only reads the
 * file it is given (it never touches maps, interfaces or list contents), so each input is
 * written to a memfd and its /proc/self/fd path is loaded, as `xdpband -t -c PATH` would.
 *
 * Checked: a refusal is -errno with one line that names the file, and frees everything
 * (LeakSanitizer sees the rest); an accepted config holds only what its parsers allow
 * (interface names, absolute list paths with their ids in order, a socket mode that keeps the
 * owner's rights, an escalation factor above 1, thresholds the data path accepts, a maximum
 * ban time not below the ban time, port bytes of the contract's bits with the flags they
 * imply, described in text that reads back to the same table); a config differs from itself
 * in no restart-only key.
 */
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include "conf_load.h"
#include "libxdpban.h"
#include "support.h"

static void check_accepted(const struct xbd_conf *c)
{
	char keys[256];

	fz_check(c->n_ifaces >= 0 && c->n_ifaces <= XBD_MAX_IFACES, "%d interfaces", c->n_ifaces);
	for (int i = 0; i < c->n_ifaces; i++)
		fz_check(c->ifaces[i][0] && strlen(c->ifaces[i]) < IFNAMSIZ &&
				 !strpbrk(c->ifaces[i], "/: \t"),
			 "interface name '%s'", c->ifaces[i]);
	fz_check(c->n_lists >= 0 && c->n_lists <= XBD_MAX_LISTS, "%d lists", c->n_lists);
	for (int i = 0; i < c->n_lists; i++)
		fz_check(c->lists[i].path[0] == '/' && c->lists[i].id == (__u32)i + 1 &&
				 (c->lists[i].verdict == XDPBAN_POLICY_TRUSTED ||
				  c->lists[i].verdict == XDPBAN_POLICY_ALLOWED ||
				  c->lists[i].verdict == XDPBAN_POLICY_DENY ||
				  c->lists[i].verdict == XBD_LIST_NEVER_BAN),
			 "list %d: %s, id %u, verdict %u", i, c->lists[i].path, c->lists[i].id,
			 c->lists[i].verdict);
	fz_check(c->socket_path && c->socket_path[0] == '/', "socket '%s'",
		 c->socket_path ? c->socket_path : "(none)");
	fz_check((c->socket_mode & 0600) == 0600 && c->socket_mode <= 0777, "socket mode %o",
		 c->socket_mode);
	fz_check(xdpban_config_valid(&c->dp), "thresholds the data path would refuse");
	fz_check(c->esc.factor > 1.0 && c->esc.factor <= 1000.0, "factor %g", c->esc.factor);
	fz_check(!c->esc.enabled || c->esc.max_ban_s >= c->dp.ban_s,
		 "max-ban-time %u below ban-time %u", c->esc.max_ban_s, c->dp.ban_s);
	fz_check(c->counters_max >= 1 && c->counters_max <= XBD_TABLE_MAX &&
			 c->bans_max >= 1 && c->bans_max <= XBD_TABLE_MAX,
		 "table sizes %u and %u", c->counters_max, c->bans_max);
	fz_check(!c->state_file || c->state_file[0] == '/', "state file '%s'", c->state_file);
	fz_check(!c->metrics_listen || c->metrics_addrlen > 0, "metrics '%s' without an address",
		 c->metrics_listen);
	xbd_conf_restart_keys(c, c, keys, sizeof(keys));
	fz_check(!keys[0], "a config differs from itself in %s", keys);
}

/* Each port's byte holds only the bits of xdpban_ports.h (port 0 none), and a guard a known
 * profile; the flags are those the bytes imply. */
static void check_port_bytes(const struct xbd_conf *c)
{
	__u8 any = 0, byte;

	for (__u32 port = 0; port < XDPBAN_PORTS_PORTS; port++) {
		byte = xb_ports_byte(c->ports, port);
		fz_check(!(byte & ~XDPBAN_PORT_VALID_MASK) && (port || !byte), "port %u: byte %#x",
			 port, byte);
		fz_check(!(byte & XDPBAN_PORT_GUARD_MASK) ||
				 xb_guard_name(byte & XDPBAN_PORT_GUARD_MASK),
			 "port %u: profile %u", port, byte & XDPBAN_PORT_GUARD_MASK);
		any |= byte;
	}
	fz_check(!!(any & XDPBAN_PORT_GUARD_MASK) == !!(c->ports->flags & XDPBAN_PORTS_GUARD) &&
			 !!(any & (XDPBAN_PORT_TCP_OPEN | XDPBAN_PORT_UDP_OPEN)) ==
				 !!(c->ports->flags & XDPBAN_PORTS_PROBE) &&
			 (!(c->ports->flags & XDPBAN_PORTS_PROBE_ICMP) ||
			  c->ports->flags & XDPBAN_PORTS_PROBE) &&
			 c->dp.ports == c->ports->flags,
		 "port flags %#x, config.ports %#x, bytes %#x", c->ports->flags, c->dp.ports, any);
}

/* What status describes reads back to the same table, when it fits a small buffer. */
static void check_port_text(const struct xbd_conf *c)
{
	static const __u8 masks[] = { XDPBAN_PORT_GUARD_MASK, XDPBAN_PORT_TCP_OPEN,
				      XDPBAN_PORT_UDP_OPEN };
	struct xb_ports *back = calloc(1, sizeof(*back));
	char text[2048], err[XB_ERRLEN];
	bool whole = true;

	fz_check(back != NULL, "out of memory");
	for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		if (xb_ports_format(c->ports, masks[i], text, sizeof(text))) {
			whole = false;
			continue;
		}
		if (!text[0])
			continue;
		fz_check(!(masks[i] == XDPBAN_PORT_GUARD_MASK
				   ? xb_ports_add_guards(back, "guard", text, err, sizeof(err))
				   : xb_ports_add_open(back, masks[i], "open", text, err, sizeof(err))),
			 "'%s' does not parse back: %s", text, err);
	}
	fz_check(!whole || !memcmp(back->words, c->ports->words, sizeof(back->words)),
		 "the description does not read back to the same table");
	free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_file(0, data, size);
	char err[XB_ERRLEN] = "";
	struct xbd_conf conf;
	int ret = xbd_conf_load(path, &conf, err, sizeof(err));

	if (ret) {
		fz_check(ret < 0, "returned %d", ret);
		fz_check_message(err, sizeof(err), "xbd_conf_load");
		fz_check(strstr(err, path), "the message does not name the file: %s", err);
		return 0;
	}
	check_accepted(&conf);
	check_port_bytes(&conf);
	check_port_text(&conf);
	xbd_conf_free(&conf);
	return 0;
}
