/* observed.h - the observed deny lists (docs/datapath.md, section 2): whether a source the
 * policy passed on is in one of them, so that its packet is counted under observed_deny. Asked
 * only while the config says the tries hold entries (XDPBAN_CFG_OBSERVE_LISTS). Never decides a
 * verdict and never writes a map but the statistics. */
#ifndef XDPBAN_BPF_OBSERVED_H
#define XDPBAN_BPF_OBSERVED_H

#include "maps.h"
#include "stats.h"

/* Counts the packet of bytes under observed_deny when its source is in an observed list. */
static __always_inline void observed_count(const struct xdpban_config *cfg, __u8 family,
					   const __u8 *saddr, __u64 bytes)
{
	if ((cfg->policy & XDPBAN_CFG_OBSERVE_LISTS) &&
	    lpm_holds(&xdpban_observed4, &xdpban_observed6, family, saddr))
		stat_add(XDPBAN_STAT_OBSERVED_DENY, 1, bytes);
}

#endif /* XDPBAN_BPF_OBSERVED_H */
