/* pkt.h - readable test frames. pkt_build() writes an Ethernet frame into the caller's buffer,
 * layer by layer, from a struct pkt_spec: 0 to PKT_MAX_VLANS VLAN tags, then IPv4 (with
 * options), IPv6 (with extension headers), ARP or raw bytes, then TCP, UDP, ICMP or ICMPv6, a
 * payload, Ethernet padding, and an optional cut to any length.
 *
 * A spec that sets only the addresses (and the L4 layer) gives a valid packet: every length and
 * checksum is computed. Each override (a struct pkt_opt set with PKT_SET) writes exactly the
 * value given into one header field and nothing else adapts to it, so a fixture states the one
 * thing it makes wrong. Test support only: it never allocates, never fixes up what a caller
 * asked for, and reports bad input as -EINVAL with one line on stderr naming the field.
 */
#ifndef XDPBAN_TEST_PKT_H
#define XDPBAN_TEST_PKT_H

#include <stdbool.h>
#include <linux/types.h>

/* Header lengths, for fixtures that cut a frame at a boundary: ETH + V4 + 10. */
#define PKT_ETH_LEN 14
#define PKT_VLAN_LEN 4
#define PKT_IP4_LEN 20
#define PKT_IP6_LEN 40
#define PKT_TCP_LEN 20
#define PKT_UDP_LEN 8
#define PKT_ICMP_LEN 8  /* ICMP and ICMPv6 as built: type, code, checksum, 4 bytes of body */
#define PKT_ARP_LEN 28  /* Ethernet/IPv4 ARP */
#define PKT_FRAG_LEN 8  /* IPv6 fragment header */

/* One more than the data path reads, so that a third tag can be tested. */
#define PKT_MAX_VLANS 3
/* More than the data path walks (8), so that a too-deep chain can be tested. */
#define PKT_MAX_EXTS 10
#define PKT_IP4_OPTS_MAX 40

/* TCP flags, byte 13 of the header. */
#define PKT_FIN 0x01
#define PKT_SYN 0x02
#define PKT_RST 0x04
#define PKT_PSH 0x08
#define PKT_ACK 0x10
#define PKT_URG 0x20
#define PKT_ECE 0x40
#define PKT_CWR 0x80

/* IPv4 fragment field (flags and offset), host order. */
#define PKT_IP4_DF 0x4000
#define PKT_IP4_MF 0x2000

/* A field that is computed unless set: zero-initialised means "the right value". */
struct pkt_opt {
	bool set;
	__u32 val;
};
#define PKT_SET(x) { .set = true, .val = (x) }

enum pkt_l3 {
	PKT_L3_IP = 0, /* IPv4 or IPv6, from the address family of `src` */
	PKT_L3_ARP,    /* an Ethernet/IPv4 ARP request from `src` for `dst` */
	PKT_L3_NONE,   /* `ethertype` (required) and the payload only */
};

enum pkt_l4 {
	PKT_L4_NONE = 0, /* protocol 59 (IPv6 No Next Header) or 253 (IPv4, experimental) */
	PKT_L4_TCP,
	PKT_L4_UDP,
	PKT_L4_ICMP,
	PKT_L4_ICMP6,
};

struct pkt_vlan {
	__u16 tpid; /* 0x8100 (802.1Q, also when 0) or 0x88a8 (802.1ad) */
	__u16 vid;
};

struct pkt_ipv4 {
	struct pkt_opt version; /* 4 */
	struct pkt_opt ihl;     /* (20 + opts_len) / 4 */
	struct pkt_opt tot_len; /* header + L4 header + payload */
	__u16 frag;             /* host order: PKT_IP4_MF | PKT_IP4_DF | offset in 8-byte units */
	__u8 opts_len;          /* option bytes written, a multiple of 4, at most 40 */
	const __u8 *opts;       /* NULL: NOPs closed by an End of Options List */
};

enum pkt_ext_type {
	PKT_EXT_HOP = 0,
	PKT_EXT_ROUTING = 43,
	PKT_EXT_FRAG = 44,
	PKT_EXT_AH = 51,
	PKT_EXT_DEST = 60,
};

/* An IPv6 extension header. It is written at the length its byte 1 declares, so it is always
 * self-consistent; make it not fit with ip6.payload_len or with a cut. */
struct pkt_ext {
	__u8 type;             /* enum pkt_ext_type */
	struct pkt_opt hdrlen; /* byte 1: 0 (8 bytes), AH 4 (24 bytes); fragment header 0 */
	__u16 frag_off;        /* fragment header: offset in 8-byte units */
	bool more;             /* fragment header: more fragments follow */
};

struct pkt_ipv6 {
	struct pkt_opt version;     /* 6 */
	struct pkt_opt payload_len; /* extension headers + L4 header + payload */
	struct pkt_ext ext[PKT_MAX_EXTS];
	__u8 n_ext;
};
/* Fills ext[] and n_ext: .ip6 = { PKT_EXTS({ .type = PKT_EXT_HOP }, { .type = PKT_EXT_FRAG }) } */
#define PKT_EXTS(...)                                                                      \
	.ext = { __VA_ARGS__ },                                                            \
	.n_ext = sizeof((struct pkt_ext[]){ __VA_ARGS__ }) / sizeof(struct pkt_ext)

struct pkt_tcp {
	struct pkt_opt flags; /* PKT_ACK */
	struct pkt_opt doff;  /* 5; the header is written at 20 bytes whatever doff says */
};

struct pkt_udp {
	struct pkt_opt len; /* UDP header + payload */
};

struct pkt_icmp {
	struct pkt_opt type; /* echo request: 8 (ICMP), 128 (ICMPv6) */
	__u8 code;
};

struct pkt_spec {
	const char *src;       /* IP address as text; the family of the frame follows from it */
	const char *dst;       /* default 198.51.100.1 or 2001:db8:ffff::1 */
	const char *smac;      /* "02:00:00:00:00:01" */
	const char *dmac;      /* "02:00:00:00:00:02" */
	struct pkt_opt ethertype; /* the EtherType after the tags; default from l3 */
	struct pkt_vlan vlan[PKT_MAX_VLANS];
	__u8 n_vlan;
	enum pkt_l3 l3;
	struct pkt_ipv4 ip4;
	struct pkt_ipv6 ip6;
	enum pkt_l4 l4;
	struct pkt_opt l4_proto; /* the protocol the IP header (or the last extension header)
				  * declares; default from l4 */
	struct pkt_opt sport;    /* TCP/UDP, 40000 */
	struct pkt_opt dport;    /* TCP/UDP, 6969 */
	struct pkt_tcp tcp;
	struct pkt_udp udp;
	struct pkt_icmp icmp;    /* ICMP or ICMPv6 */
	__u32 payload_len;       /* bytes after the L4 header (or after ARP/EtherType); an IP
				  * packet longer than its length field can say (a GSO or GRO
				  * aggregate) must set that field, and UDP's */
	__u16 pad;               /* zero bytes after the IP packet, outside its lengths */
	struct pkt_opt cut;      /* keep only this many bytes of the frame; at most its length */
};

/* Where each layer of a built frame starts. Offsets are into the uncut frame. */
struct pkt_layout {
	__u32 len;               /* bytes in the frame as returned (after the cut) */
	__u32 full_len;          /* bytes before the cut */
	__u32 l3;                /* the IP or ARP header, after the VLAN tags */
	__u32 ext[PKT_MAX_EXTS]; /* the IPv6 extension headers */
	__u32 l4;                /* the L4 header; == payload when there is none */
	__u32 payload;           /* the L4 payload */
	__u32 ip_end;            /* the end of the IP packet; padding follows */
};

/* Builds the frame described by spec into buf (cap bytes). 0, -EINVAL for a bad spec,
 * -ENOSPC when cap is too small. */
int pkt_build(const struct pkt_spec *spec, void *buf, __u32 cap, struct pkt_layout *layout);

#endif /* XDPBAN_TEST_PKT_H */
