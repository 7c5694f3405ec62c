/* clock.h - the data path's clock: CLOCK_BOOTTIME, read once per scheduler tick and CPU
 * (docs/datapath.md, "The clock", says why). Every stage that needs the time takes it
 * from here. */
#ifndef XDPBAN_BPF_CLOCK_H
#define XDPBAN_BPF_CLOCK_H

#include "maps.h"

/* Now, in CLOCK_BOOTTIME ns, at most a tick old. bpf_jiffies64() is inlined by the JIT into
 * one load; only the first call of a tick on a CPU pays for the clock itself. The entry is
 * this CPU's alone: a program that interrupts another on the same CPU (a packet during a
 * report's test run) may rewrite it between the two stores below, which leaves a reading taken
 * during the stored jiffy either way. */
static __always_inline __u64 clock_now_ns(void)
{
	__u32 zero = 0;
	struct xdpban_clock *c = bpf_map_lookup_elem(&xdpban_clock, &zero);
	__u64 jiffies = bpf_jiffies64(), now;

	if (!c)
		return bpf_ktime_get_boot_ns();
	if (c->jiffies == jiffies)
		return c->boot_ns;
	now = bpf_ktime_get_boot_ns();
	c->boot_ns = now;
	c->jiffies = jiffies;
	return now;
}

#endif /* XDPBAN_BPF_CLOCK_H */
