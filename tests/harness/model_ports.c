/* model_ports.c - the reference model's port rules: docs/datapath.md section 9, written from
 * the text, never from bpf/. Part of the model (model.h). */
#include <string.h>
#include "model.h"
#include "xdpban_ports.h"

#define TCP_SYN 0x02
#define TCP_ACK 0x10

static __u32 be32(const __u8 *p)
{
	return (__u32)p[0] << 24 | (__u32)p[1] << 16 | (__u32)p[2] << 8 | p[3];
}

static __u16 be16(const __u8 *p)
{
	return (__u16)(p[0] << 8 | p[1]);
}

/* bep15: each bullet of section 9 in turn. */
static bool bep15_breaks(const __u8 *p, __u32 len)
{
	__u32 action;

	if (len < 16)
		return true;
	action = be32(p + 8);
	if (action == 0)
		return ((__u64)be32(p) << 32 | be32(p + 4)) != 0x41727101980ull;
	if (action == 1)
		return len < 98 || be32(p + 80) > 3 || be16(p + 96) == 0;
	if (action == 2)
		return len - 16 == 0 || (len - 16) % 20 != 0;
	return true;
}

/* dns: a query header. */
static bool dns_breaks(const __u8 *p, __u32 len)
{
	__u16 flags, opcode;

	if (len < 12)
		return true;
	flags = be16(p + 2);
	opcode = (flags >> 11) & 0xf;
	if (flags & 0x8000)
		return true;
	if (opcode == 0)
		return len < 17 || be16(p + 4) != 1 || be16(p + 6) != 0;
	return opcode != 4 && opcode != 5;
}

static bool guard_breaks(__u8 profile, const struct model_parsed *p)
{
	if (p->sport == 0)
		return true;
	switch (profile) {
	case XDPBAN_GUARD_BEP15:
		return bep15_breaks(p->payload, p->payload_len);
	case XDPBAN_GUARD_DNS:
		return dns_breaks(p->payload, p->payload_len);
	}
	return false;
}

static bool in_list(const __u16 *ports, size_t n, __u16 port)
{
	for (size_t i = 0; i < n; i++)
		if (ports[i] == port)
			return true;
	return false;
}

/* IPv4 224.0.0.0/4 and above; IPv6 ff00::/8. */
static bool to_multicast(const struct model_parsed *p)
{
	return p->family == XDPBAN_FAMILY_INET ? p->dst[0] >= 224 : p->dst[0] == 0xff;
}

__u8 model_port_classes(const struct model *m, const struct xdpban_config *cfg,
			const struct model_parsed *p)
{
	__u8 rules = p->l4 == MODEL_L4_TCP || p->l4 == MODEL_L4_UDP ? m->ports[p->dport] : 0;
	__u8 profile = rules & XDPBAN_PORT_GUARD_MASK;
	bool probes = cfg->ports & XDPBAN_PORTS_PROBE;

	switch (p->l4) {
	case MODEL_L4_ECHO:
		return (cfg->ports & XDPBAN_PORTS_PROBE_ICMP) ? XDPBAN_CLASS_PROBE : 0;
	case MODEL_L4_UDP:
		if (profile) /* a guarded port meets its guard only */
			return (cfg->ports & XDPBAN_PORTS_GUARD) && guard_breaks(profile, p)
				       ? XDPBAN_CLASS_PROTOCOL
				       : 0;
		if (!probes || (rules & XDPBAN_PORT_UDP_OPEN) || to_multicast(p) ||
		    in_list(m->udp_bound, m->n_udp_bound, p->dport))
			return 0;
		return XDPBAN_CLASS_PROBE;
	case MODEL_L4_TCP:
		if (!probes || (p->tcp_flags & (TCP_SYN | TCP_ACK)) != TCP_SYN ||
		    (rules & XDPBAN_PORT_TCP_OPEN) || in_list(m->tcp_bound, m->n_tcp_bound, p->dport))
			return 0;
		return XDPBAN_CLASS_PROBE;
	}
	return 0;
}
