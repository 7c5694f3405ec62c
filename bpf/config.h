/* config.h - the configuration in force for the data path (xdpban_config, or the compiled-in
 * defaults). Every stage that reads the configuration takes it from here. Never writes. */
#ifndef XDPBAN_BPF_CONFIG_H
#define XDPBAN_BPF_CONFIG_H

#include "maps.h"

const struct xdpban_config config_defaults = XDPBAN_CONFIG_DEFAULTS;

/* The configuration in force: the map entry if userspace wrote a valid one, else the
 * defaults. Checked on every packet so that no entry written behind userspace's back (bpftool)
 * can, say, key IPv6 bans on a /20. */
static __always_inline const struct xdpban_config *config_get(void)
{
	__u32 zero = 0;
	const struct xdpban_config *cfg = bpf_map_lookup_elem(&xdpban_config, &zero);

	if (!cfg || !xdpban_config_valid(cfg))
		return &config_defaults;
	return cfg;
}

#endif /* XDPBAN_BPF_CONFIG_H */
