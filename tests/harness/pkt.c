/* pkt.c - builds the test frames described in pkt.h. First every size is computed from the spec,
 * so each header is written once, with its lengths already known; checksums come last, over the
 * bytes as written. It must never change an override to make a frame consistent: an override is
 * the point of the fixture that set it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include "pkt.h"

#define PROTO_ICMPV6 58
#define PROTO_NONE_V6 59  /* IPv6 No Next Header */
#define PROTO_NONE_V4 253 /* RFC 3692 experimentation: no header follows that we build */
#define DEFAULT_SPORT 40000
#define DEFAULT_DPORT 6969
#define ICMP_ECHO_REQUEST 8
#define ICMPV6_ECHO_REQUEST 128
#define DEFAULT_TTL 64

struct builder {
	const struct pkt_spec *spec;
	__u8 *buf;
	__u32 cap;
	struct pkt_layout *at;
	int family; /* AF_INET or AF_INET6 for IP and ARP frames, else 0 */
	__u8 src[16], dst[16];
	__u8 smac[6], dmac[6];
};

static int bad_spec(const char *fmt, ...)
{
	va_list ap;

	fputs("pkt: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -EINVAL;
}

/* The value of an optional field, or def when it is not set. */
static __u32 opt_or(const struct pkt_opt *opt, __u32 def)
{
	return opt->set ? opt->val : def;
}

static int check_width(const struct pkt_opt *opt, unsigned int bits, const char *name)
{
	if (opt->set && opt->val >> bits)
		return bad_spec("%s %u does not fit in %u bits", name, opt->val, bits);
	return 0;
}

static void put16(__u8 *p, __u16 v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static void put32(__u8 *p, __u32 v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

static __u32 csum_add(__u32 sum, const __u8 *p, __u32 len)
{
	for (__u32 i = 0; i + 1 < len; i += 2)
		sum += (__u32)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (__u32)p[len - 1] << 8;
	return sum;
}

static __u16 csum_fold(__u32 sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

static int parse_ip(const char *name, const char *text, int *family, __u8 addr[16])
{
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, text, addr) == 1)
		*family = AF_INET;
	else if (inet_pton(AF_INET6, text, addr) == 1)
		*family = AF_INET6;
	else
		return bad_spec("%s '%s' is not an IPv4 or IPv6 address", name, text);
	return 0;
}

static int parse_mac(const char *name, const char *text, const char *def, __u8 mac[6])
{
	unsigned int b[6];
	char tail;

	if (!text)
		text = def;
	if (sscanf(text, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &tail) != 6)
		return bad_spec("%s '%s' is not a MAC address like 02:00:00:00:00:01", name, text);
	for (int i = 0; i < 6; i++)
		mac[i] = b[i];
	return 0;
}

/* Source and destination addresses of IP and ARP frames: one family, dst defaulted. */
static int resolve_addresses(struct builder *b)
{
	const struct pkt_spec *s = b->spec;
	int dst_family;
	int err;

	if (s->l3 == PKT_L3_NONE)
		return 0;
	if (!s->src)
		return bad_spec("src is required for IP and ARP frames");
	err = parse_ip("src", s->src, &b->family, b->src);
	if (err)
		return err;
	if (s->l3 == PKT_L3_ARP && b->family != AF_INET)
		return bad_spec("ARP frames take IPv4 addresses, not '%s'", s->src);
	if (!s->dst) {
		return parse_ip("dst", b->family == AF_INET ? "198.51.100.1" : "2001:db8:ffff::1",
				&dst_family, b->dst);
	}
	err = parse_ip("dst", s->dst, &dst_family, b->dst);
	if (err)
		return err;
	if (dst_family != b->family)
		return bad_spec("src '%s' and dst '%s' are of different families", s->src, s->dst);
	return 0;
}

static int check_layers(const struct builder *b)
{
	const struct pkt_spec *s = b->spec;

	if (s->l3 > PKT_L3_NONE)
		return bad_spec("l3 %d is not an enum pkt_l3", s->l3);
	if (s->l4 > PKT_L4_ICMP6)
		return bad_spec("l4 %d is not an enum pkt_l4", s->l4);
	if (s->n_vlan > PKT_MAX_VLANS)
		return bad_spec("n_vlan %u is more than %d", s->n_vlan, PKT_MAX_VLANS);
	if (s->l3 == PKT_L3_NONE && !s->ethertype.set)
		return bad_spec("l3 PKT_L3_NONE needs an ethertype");
	if (s->l3 != PKT_L3_IP && s->l4 != PKT_L4_NONE)
		return bad_spec("l4 needs an IP layer");
	if (s->ip6.n_ext > PKT_MAX_EXTS)
		return bad_spec("ip6.n_ext %u is more than %d", s->ip6.n_ext, PKT_MAX_EXTS);
	if (s->ip6.n_ext && b->family != AF_INET6)
		return bad_spec("ip6.ext needs an IPv6 src");
	if (s->ip4.opts_len % 4 || s->ip4.opts_len > PKT_IP4_OPTS_MAX)
		return bad_spec("ip4.opts_len %u is not a multiple of 4 up to %d", s->ip4.opts_len,
				PKT_IP4_OPTS_MAX);
	if (s->ip4.opts_len && b->family != AF_INET)
		return bad_spec("ip4.opts needs an IPv4 src");
	for (int i = 0; i < s->ip6.n_ext; i++) {
		__u8 t = s->ip6.ext[i].type;

		if (t != PKT_EXT_HOP && t != PKT_EXT_ROUTING && t != PKT_EXT_FRAG &&
		    t != PKT_EXT_AH && t != PKT_EXT_DEST)
			return bad_spec("ip6.ext[%d].type %u is not an enum pkt_ext_type", i, t);
	}
	return 0;
}

/* Every override must fit the field it is written into: nothing is silently truncated. */
static int check_overrides(const struct pkt_spec *s)
{
	const struct {
		const struct pkt_opt *opt;
		unsigned int bits;
		const char *name;
	} fields[] = {
		{ &s->ethertype, 16, "ethertype" },
		{ &s->ip4.version, 4, "ip4.version" },
		{ &s->ip4.ihl, 4, "ip4.ihl" },
		{ &s->ip4.tot_len, 16, "ip4.tot_len" },
		{ &s->ip6.version, 4, "ip6.version" },
		{ &s->ip6.payload_len, 16, "ip6.payload_len" },
		{ &s->l4_proto, 8, "l4_proto" },
		{ &s->sport, 16, "sport" },
		{ &s->dport, 16, "dport" },
		{ &s->tcp.flags, 8, "tcp.flags" },
		{ &s->tcp.doff, 4, "tcp.doff" },
		{ &s->udp.len, 16, "udp.len" },
		{ &s->icmp.type, 8, "icmp.type" },
	};
	char name[32];
	int err;

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		err = check_width(fields[i].opt, fields[i].bits, fields[i].name);
		if (err)
			return err;
	}
	for (int i = 0; i < s->ip6.n_ext && i < PKT_MAX_EXTS; i++) {
		snprintf(name, sizeof(name), "ip6.ext[%d].hdrlen", i);
		err = check_width(&s->ip6.ext[i].hdrlen, 8, name);
		if (err)
			return err;
	}
	return 0;
}

static __u32 l4_header_len(enum pkt_l4 l4)
{
	switch (l4) {
	case PKT_L4_TCP:
		return PKT_TCP_LEN;
	case PKT_L4_UDP:
		return PKT_UDP_LEN;
	case PKT_L4_ICMP:
	case PKT_L4_ICMP6:
		return PKT_ICMP_LEN;
	default:
		return 0;
	}
}

/* The protocol number of the L4 layer as built. */
static __u8 l4_proto_default(const struct builder *b)
{
	switch (b->spec->l4) {
	case PKT_L4_TCP:
		return IPPROTO_TCP;
	case PKT_L4_UDP:
		return IPPROTO_UDP;
	case PKT_L4_ICMP:
		return IPPROTO_ICMP;
	case PKT_L4_ICMP6:
		return PROTO_ICMPV6;
	default:
		return b->family == AF_INET6 ? PROTO_NONE_V6 : PROTO_NONE_V4;
	}
}

static __u8 l4_proto(const struct builder *b)
{
	return opt_or(&b->spec->l4_proto, l4_proto_default(b));
}

/* Byte 1 of an extension header: the shortest valid length unless set. */
static __u8 ext_hdrlen(const struct pkt_ext *ext)
{
	return opt_or(&ext->hdrlen, ext->type == PKT_EXT_AH ? 4 : 0);
}

/* Bytes the extension header takes, from the length it declares. */
static __u32 ext_size(const struct pkt_ext *ext)
{
	if (ext->type == PKT_EXT_FRAG)
		return PKT_FRAG_LEN;
	if (ext->type == PKT_EXT_AH)
		return (ext_hdrlen(ext) + 2u) * 4;
	return (ext_hdrlen(ext) + 1u) * 8;
}

/* Fills in every offset of the layout from the spec alone. */
static int plan_layout(struct builder *b)
{
	const struct pkt_spec *s = b->spec;
	struct pkt_layout *at = b->at;
	__u32 off = PKT_ETH_LEN + s->n_vlan * PKT_VLAN_LEN;

	memset(at, 0, sizeof(*at));
	at->l3 = off;
	if (s->l3 == PKT_L3_ARP)
		off += PKT_ARP_LEN;
	else if (s->l3 == PKT_L3_IP && b->family == AF_INET)
		off += PKT_IP4_LEN + s->ip4.opts_len;
	else if (s->l3 == PKT_L3_IP)
		off += PKT_IP6_LEN;
	for (int i = 0; i < s->ip6.n_ext; i++) {
		at->ext[i] = off;
		off += ext_size(&s->ip6.ext[i]);
	}
	at->l4 = off;
	at->payload = off + l4_header_len(s->l4);
	at->ip_end = at->payload + s->payload_len;
	if (s->l3 == PKT_L3_IP && !(b->family == AF_INET6 ? s->ip6.payload_len : s->ip4.tot_len).set &&
	    at->ip_end - at->l3 > 0xffffu + (b->family == AF_INET6 ? PKT_IP6_LEN : 0))
		return bad_spec("the IP packet is too long for its length field (an aggregate sets it to 0)");
	at->full_len = at->ip_end + s->pad;
	at->len = at->full_len;
	if (s->cut.set) {
		if (s->cut.val > at->full_len)
			return bad_spec("cut %u is beyond the frame's %u bytes", s->cut.val,
					at->full_len);
		at->len = s->cut.val;
	}
	if (at->full_len > b->cap) {
		fprintf(stderr, "pkt: the frame needs %u bytes, the buffer has %u\n", at->full_len,
			b->cap);
		return -ENOSPC;
	}
	return 0;
}

static __u16 ethertype_after_tags(const struct builder *b)
{
	__u32 def = ETH_P_IP;

	if (b->spec->l3 == PKT_L3_ARP)
		def = ETH_P_ARP;
	else if (b->family == AF_INET6)
		def = ETH_P_IPV6;
	return opt_or(&b->spec->ethertype, def);
}

static void put_l2(struct builder *b)
{
	const struct pkt_spec *s = b->spec;
	__u8 *p = b->buf;

	memcpy(p, b->dmac, 6);
	memcpy(p + 6, b->smac, 6);
	p += 12;
	for (int i = 0; i < s->n_vlan; i++) {
		__u16 tpid = s->vlan[i].tpid ? s->vlan[i].tpid : 0x8100;

		put16(p, tpid);                           /* the previous header's type field */
		put16(p + 2, s->vlan[i].vid & 0x0fff);    /* TCI: priority 0, no DEI */
		p += PKT_VLAN_LEN;
	}
	put16(p, ethertype_after_tags(b));
}

static void put_ipv4(struct builder *b)
{
	const struct pkt_ipv4 *ip = &b->spec->ip4;
	__u32 hdr_len = PKT_IP4_LEN + ip->opts_len;
	__u8 *p = b->buf + b->at->l3;

	p[0] = opt_or(&ip->version, 4) << 4 | opt_or(&ip->ihl, hdr_len / 4);
	p[1] = 0;
	put16(p + 2, opt_or(&ip->tot_len, b->at->ip_end - b->at->l3));
	put16(p + 4, 1); /* identification */
	put16(p + 6, ip->frag);
	p[8] = DEFAULT_TTL;
	p[9] = l4_proto(b);
	put16(p + 10, 0);
	memcpy(p + 12, b->src, 4);
	memcpy(p + 16, b->dst, 4);
	if (ip->opts) {
		memcpy(p + PKT_IP4_LEN, ip->opts, ip->opts_len);
	} else if (ip->opts_len) {
		memset(p + PKT_IP4_LEN, 1, ip->opts_len - 1); /* NOP */
		p[hdr_len - 1] = 0;                             /* End of Options List */
	}
	put16(p + 10, csum_fold(csum_add(0, p, hdr_len)));
}

static void put_ipv6(struct builder *b)
{
	const struct pkt_ipv6 *ip = &b->spec->ip6;
	__u8 *p = b->buf + b->at->l3;

	put32(p, opt_or(&ip->version, 6) << 28); /* traffic class and flow label 0 */
	put16(p + 4, opt_or(&ip->payload_len, b->at->ip_end - b->at->l3 - PKT_IP6_LEN));
	p[6] = ip->n_ext ? ip->ext[0].type : l4_proto(b);
	p[7] = DEFAULT_TTL;
	memcpy(p + 8, b->src, 16);
	memcpy(p + 24, b->dst, 16);
}

/* Extension headers: next header, length, then zeros (Pad1 options, routing type 0 with no
 * segments left, an all-zero AH), or the fragment header's offset and M flag. */
static void put_ipv6_exts(struct builder *b)
{
	const struct pkt_ipv6 *ip = &b->spec->ip6;

	for (int i = 0; i < ip->n_ext; i++) {
		const struct pkt_ext *ext = &ip->ext[i];
		__u8 *p = b->buf + b->at->ext[i];

		memset(p, 0, ext_size(ext));
		p[0] = i + 1 < ip->n_ext ? ip->ext[i + 1].type : l4_proto(b);
		p[1] = ext_hdrlen(ext);
		if (ext->type == PKT_EXT_FRAG) {
			put16(p + 2, (ext->frag_off & 0x1fff) << 3 | (ext->more ? 1 : 0));
			put32(p + 4, 1); /* identification */
		}
	}
}

static void put_arp(struct builder *b)
{
	__u8 *p = b->buf + b->at->l3;

	put16(p, 1);       /* Ethernet */
	put16(p + 2, ETH_P_IP);
	p[4] = 6;
	p[5] = 4;
	put16(p + 6, 1);   /* request */
	memcpy(p + 8, b->smac, 6);
	memcpy(p + 14, b->src, 4);
	memset(p + 18, 0, 6);
	memcpy(p + 24, b->dst, 4);
}

static void put_ports(struct builder *b, __u8 *p)
{
	put16(p, opt_or(&b->spec->sport, DEFAULT_SPORT));
	put16(p + 2, opt_or(&b->spec->dport, DEFAULT_DPORT));
}

static void put_tcp(struct builder *b, __u8 *p)
{
	__u8 flags = opt_or(&b->spec->tcp.flags, PKT_ACK);

	put_ports(b, p);
	put32(p + 4, 1);                        /* sequence number */
	put32(p + 8, flags & PKT_ACK ? 1 : 0);  /* acknowledgement number */
	p[12] = opt_or(&b->spec->tcp.doff, PKT_TCP_LEN / 4) << 4;
	p[13] = flags;
	put16(p + 14, 65535);                   /* window */
	put16(p + 16, 0);
	put16(p + 18, 0);                       /* urgent pointer */
}

static void put_udp(struct builder *b, __u8 *p)
{
	put_ports(b, p);
	put16(p + 4, opt_or(&b->spec->udp.len, PKT_UDP_LEN + b->spec->payload_len));
	put16(p + 6, 0);
}

static void put_icmp(struct builder *b, __u8 *p, __u8 echo_request)
{
	p[0] = opt_or(&b->spec->icmp.type, echo_request);
	p[1] = b->spec->icmp.code;
	put16(p + 2, 0);
	put16(p + 4, 0x1234); /* echo identifier, or the unused word of other types */
	put16(p + 6, 1);
}

/* The pseudo header of the frame's family, for TCP, UDP and ICMPv6. */
static __u32 pseudo_header_sum(const struct builder *b, __u8 proto, __u32 l4_len)
{
	__u32 alen = b->family == AF_INET ? 4 : 16;
	__u32 sum = csum_add(0, b->src, alen);

	sum = csum_add(sum, b->dst, alen);
	return sum + proto + (l4_len & 0xffff) + (l4_len >> 16);
}

/* Over the bytes as written, with the protocol the IP layer declares. */
static void fill_l4_checksum(struct builder *b)
{
	__u8 *p = b->buf + b->at->l4;
	__u32 len = b->at->ip_end - b->at->l4;
	__u32 sum = 0, at;
	__u16 csum;

	switch (b->spec->l4) {
	case PKT_L4_TCP:
		at = 16;
		break;
	case PKT_L4_UDP:
		at = 6;
		break;
	case PKT_L4_ICMP:
	case PKT_L4_ICMP6:
		at = 2;
		break;
	default:
		return;
	}
	if (b->spec->l4 != PKT_L4_ICMP)
		sum = pseudo_header_sum(b, l4_proto(b), len);
	csum = csum_fold(csum_add(sum, p, len));
	if (b->spec->l4 == PKT_L4_UDP && csum == 0)
		csum = 0xffff; /* 0 would mean "no checksum" */
	put16(p + at, csum);
}

static void put_l4(struct builder *b)
{
	__u8 *p = b->buf + b->at->l4;

	switch (b->spec->l4) {
	case PKT_L4_TCP:
		put_tcp(b, p);
		break;
	case PKT_L4_UDP:
		put_udp(b, p);
		break;
	case PKT_L4_ICMP:
		put_icmp(b, p, ICMP_ECHO_REQUEST);
		break;
	case PKT_L4_ICMP6:
		put_icmp(b, p, ICMPV6_ECHO_REQUEST);
		break;
	default:
		break;
	}
}

/* A recognisable payload (0, 1, 2, ...), then zero padding. */
static void put_payload_and_pad(struct builder *b)
{
	__u8 *p = b->buf + b->at->payload;

	for (__u32 i = 0; i < b->spec->payload_len; i++)
		p[i] = i & 0xff;
	memset(b->buf + b->at->ip_end, 0, b->spec->pad);
}

static void put_l3(struct builder *b)
{
	if (b->spec->l3 == PKT_L3_ARP) {
		put_arp(b);
	} else if (b->spec->l3 == PKT_L3_IP && b->family == AF_INET) {
		put_ipv4(b);
	} else if (b->spec->l3 == PKT_L3_IP) {
		put_ipv6(b);
		put_ipv6_exts(b);
	}
}

int pkt_build(const struct pkt_spec *spec, void *buf, __u32 cap, struct pkt_layout *layout)
{
	struct pkt_layout at; /* copied out only on success: a bad spec changes nothing */
	struct builder b = { .spec = spec, .buf = buf, .cap = cap, .at = &at };
	int err;

	err = parse_mac("smac", spec->smac, "02:00:00:00:00:01", b.smac);
	if (!err)
		err = parse_mac("dmac", spec->dmac, "02:00:00:00:00:02", b.dmac);
	if (!err)
		err = resolve_addresses(&b);
	if (!err)
		err = check_layers(&b);
	if (!err)
		err = check_overrides(spec);
	if (!err)
		err = plan_layout(&b);
	if (err)
		return err;
	put_l2(&b);
	put_l3(&b);
	put_l4(&b);
	put_payload_and_pad(&b);
	fill_l4_checksum(&b);
	*layout = at;
	return 0;
}
