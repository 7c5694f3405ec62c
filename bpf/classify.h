/* classify.h - error classes of a parsed packet. One function per class; classify() ORs them.
 * A new class is a bit in include/xdpban_config.h and one function here. Never counts. */
#ifndef XDPBAN_BPF_CLASSIFY_H
#define XDPBAN_BPF_CLASSIFY_H

#include "parse.h"
#include "xdpban_config.h"

static __always_inline __u32 class_malformed(const struct pkt *p)
{
	return p->malformed ? XDPBAN_CLASS_MALFORMED : 0;
}

/* The enabled error classes of the packet; 0 means it is not an error. */
static __always_inline __u32 classify(const struct pkt *p, __u32 class_mask)
{
	return (class_malformed(p)) & class_mask;
}

#endif /* XDPBAN_BPF_CLASSIFY_H */
