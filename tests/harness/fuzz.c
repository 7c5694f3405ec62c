/* fuzz.c - seeded frame generator for the differential test; see fuzz.h.
 *
 * The builder writes valid frames and records where its length fields and header boundaries
 * are; the mutator then breaks exactly those places. It knows nothing of the verdict a frame
 * should get (that is the model's job) and must never depend on anything but the seed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "xdpban_policy.h"
#include "xdpban_state.h"
#include "fuzz.h"

/* ---- PRNG ---------------------------------------------------------------------------- */

void fuzz_rng_seed(struct fuzz_rng *rng, __u64 seed)
{
	rng->state = seed;
}

/* splitmix64: a Weyl sequence through a bijective mixer; every seed gives a full-period stream. */
__u64 fuzz_rng_next(struct fuzz_rng *rng)
{
	__u64 z = (rng->state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

__u32 fuzz_rng_below(struct fuzz_rng *rng, __u32 bound)
{
	return (__u32)(fuzz_rng_next(rng) % bound); /* the bias is irrelevant for a test */
}

bool fuzz_rng_percent(struct fuzz_rng *rng, __u32 percent)
{
	return fuzz_rng_below(rng, 100) < percent;
}

/* ---- Builder ------------------------------------------------------------------------- */

#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_IPV6 0x86dd
#define ETHERTYPE_ARP 0x0806
#define PROTO_ICMP 1
#define PROTO_TCP 6
#define PROTO_UDP 17
#define PROTO_ICMPV6 58
#define NH_FRAGMENT 44
#define NH_AUTH 51

struct builder {
	struct fuzz_frame *f;
	int err;
};

/* Appends n bytes (zeros when src is NULL); returns where they start. */
static __u32 put(struct builder *b, const void *src, __u32 n)
{
	__u32 at = b->f->len;

	if (n > FUZZ_FRAME_MAX - at) {
		b->err = -E2BIG;
		return at;
	}
	if (src)
		memcpy(b->f->data + at, src, n);
	else
		memset(b->f->data + at, 0, n);
	b->f->len += n;
	return at;
}

static void set_be16(struct fuzz_frame *f, __u32 off, __u16 v)
{
	f->data[off] = v >> 8;
	f->data[off + 1] = v & 0xff;
}

static void put_be16(struct builder *b, __u16 v)
{
	__u32 at = put(b, NULL, 2);

	if (!b->err)
		set_be16(b->f, at, v);
}

static void add_bound(struct fuzz_frame *f, __u32 off)
{
	if (f->nbounds < FUZZ_BOUNDS_MAX)
		f->bounds[f->nbounds++] = (__u16)off;
}

static struct fuzz_field *add_field(struct fuzz_frame *f, __u32 off, enum fuzz_field_kind kind,
				    __u32 exact)
{
	struct fuzz_field *field;

	if (f->nfields >= FUZZ_FIELDS_MAX)
		return NULL;
	field = &f->fields[f->nfields++];
	*field = (struct fuzz_field){ .off = (__u16)off, .kind = kind, .exact = exact };
	return field;
}

static __u16 inner_ethertype(const struct fuzz_spec *s)
{
	switch (s->l3) {
	case FUZZ_L3_IPV4:
		return ETHERTYPE_IPV4;
	case FUZZ_L3_IPV6:
		return ETHERTYPE_IPV6;
	case FUZZ_L3_ARP:
		return ETHERTYPE_ARP;
	default:
		return s->ethertype;
	}
}

static void build_ethernet(struct builder *b, const struct fuzz_spec *s)
{
	static const __u8 macs[12] = { 0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x02 };
	__u8 nvlans = s->nvlans > FUZZ_VLAN_MAX ? FUZZ_VLAN_MAX : s->nvlans;

	put(b, macs, sizeof(macs));
	put_be16(b, nvlans ? s->vlan_tpid[0] : inner_ethertype(s));
	add_bound(b->f, b->f->len);
	for (__u8 i = 0; i < nvlans; i++) {
		put_be16(b, 100 + i); /* TCI: VLAN id */
		put_be16(b, i + 1 < nvlans ? s->vlan_tpid[i + 1] : inner_ethertype(s));
		add_bound(b->f, b->f->len);
	}
}

static void build_ipv4(struct builder *b, const struct fuzz_spec *s)
{
	__u8 words = s->ipv4_opt_words > 10 ? 10 : s->ipv4_opt_words;
	__u8 ihl = 5 + words, hdr[20] = { 0 };
	__u32 l3 = b->f->len;

	hdr[0] = 0x40 | ihl;
	hdr[4] = 0x12; /* identification */
	hdr[6] = s->ipv4_frag >> 8;
	hdr[7] = s->ipv4_frag & 0xff;
	hdr[8] = s->ttl ? s->ttl : 64;
	hdr[9] = s->proto;
	memcpy(hdr + 12, s->src, 4);
	memcpy(hdr + 16, s->dst, 4);
	put(b, hdr, sizeof(hdr));
	for (__u32 i = 0; i < words * 4u; i++) {
		__u8 nop = i + 1 == words * 4u ? 0 : 1; /* NOPs, then End of Options */

		put(b, &nop, 1);
	}
	b->f->ipv4_frag_off = (__s32)(l3 + 6);
	add_field(b->f, l3, FUZZ_FIELD_LO_NIBBLE, ihl);
	add_field(b->f, l3 + 2, FUZZ_FIELD_BE16, 0); /* total length: fixed up at the end */
	add_bound(b->f, l3 + 1);
	add_bound(b->f, l3 + 19);
	add_bound(b->f, l3 + 20);
	add_bound(b->f, b->f->len);
}

static __u32 ext_len(__u8 type, __u8 units)
{
	if (type == NH_FRAGMENT)
		return 8;
	if (type == NH_AUTH)
		return (units + 2u) * 4;
	return (units + 1u) * 8;
}

static void build_ipv6_ext(struct builder *b, const struct fuzz_spec *s, __u8 i)
{
	__u8 type = s->ext_type[i];
	__u8 next = i + 1 < s->next ? s->ext_type[i + 1] : s->proto;
	__u32 at = put(b, NULL, ext_len(type, s->ext_units[i]));

	if (b->err)
		return;
	b->f->data[at] = next;
	if (type == NH_FRAGMENT) {
		set_be16(b->f, at + 2, 0x0001); /* offset 0, more fragments */
	} else {
		b->f->data[at + 1] = s->ext_units[i];
		add_field(b->f, at + 1, FUZZ_FIELD_U8, s->ext_units[i]);
	}
	add_bound(b->f, at + 2);
	add_bound(b->f, b->f->len);
}

static void build_ipv6(struct builder *b, const struct fuzz_spec *s)
{
	__u8 next = s->next > FUZZ_EXT_MAX ? FUZZ_EXT_MAX : s->next, hdr[40] = { 0 };
	__u32 l3 = b->f->len;

	hdr[0] = 0x60;
	hdr[6] = next ? s->ext_type[0] : s->proto;
	hdr[7] = s->ttl ? s->ttl : 64;
	memcpy(hdr + 8, s->src, 16);
	memcpy(hdr + 24, s->dst, 16);
	put(b, hdr, sizeof(hdr));
	add_field(b->f, l3 + 4, FUZZ_FIELD_BE16, 0); /* payload length: fixed up at the end */
	add_bound(b->f, l3 + 8);
	add_bound(b->f, l3 + 39);
	add_bound(b->f, l3 + 40);
	for (__u8 i = 0; i < next && !b->err; i++)
		build_ipv6_ext(b, s, i);
}

static void build_arp(struct builder *b, const struct fuzz_spec *s)
{
	__u8 arp[28] = { 0, 1, 0x08, 0x00, 6, 4, 0, 1, 0x02, 0, 0, 0, 0, 0x02 };

	memcpy(arp + 14, s->src, 4);
	memcpy(arp + 24, s->dst, 4);
	put(b, arp, sizeof(arp));
}

static void build_tcp(struct builder *b, const struct fuzz_spec *s)
{
	__u8 words = s->tcp_opt_words > 10 ? 10 : s->tcp_opt_words;
	__u8 doff = 5 + words, hdr[20] = { 0x9c, 0x40, 0x01, 0xbb, 0, 0, 0, 1 };
	__u32 l4 = b->f->len;

	hdr[12] = doff << 4;
	hdr[13] = s->tcp_flags;
	hdr[14] = 0xff; /* window */
	put(b, hdr, sizeof(hdr));
	for (__u32 i = 0; i < words * 4u; i++)
		put(b, "\x01", 1); /* NOP options */
	b->f->tcp_flags_off = (__s32)(l4 + 13);
	add_field(b->f, l4 + 12, FUZZ_FIELD_HI_NIBBLE, doff);
	add_bound(b->f, l4 + 13);
	add_bound(b->f, l4 + 20);
	add_bound(b->f, b->f->len);
}

static void build_udp(struct builder *b)
{
	static const __u8 hdr[8] = { 0x9c, 0x41, 0x1b, 0x39 }; /* ports 40001 -> 6969 */
	__u32 l4 = put(b, hdr, sizeof(hdr));

	add_field(b->f, l4 + 4, FUZZ_FIELD_BE16, 0); /* length: fixed up at the end */
	add_bound(b->f, l4 + 4);
	add_bound(b->f, l4 + 8);
}

static void build_icmp(struct builder *b, const struct fuzz_spec *s)
{
	__u8 hdr[8] = { s->icmp_type };
	__u32 l4 = put(b, hdr, sizeof(hdr));

	add_bound(b->f, l4 + 1);
	add_bound(b->f, l4 + 4);
	add_bound(b->f, l4 + 8);
}

static void build_l4(struct builder *b, const struct fuzz_spec *s)
{
	bool v4 = s->l3 == FUZZ_L3_IPV4;

	if (s->proto == PROTO_TCP)
		build_tcp(b, s);
	else if (s->proto == PROTO_UDP)
		build_udp(b);
	else if ((v4 && s->proto == PROTO_ICMP) || (!v4 && s->proto == PROTO_ICMPV6))
		build_icmp(b, s);
}

/* Writes the lengths the headers must carry now that the frame is complete. */
static void fix_lengths(struct fuzz_frame *f, __u32 l3, __u32 l4)
{
	for (__u32 i = 0; i < f->nfields; i++) {
		struct fuzz_field *field = &f->fields[i];

		if (field->kind != FUZZ_FIELD_BE16 || field->exact)
			continue;
		if (field->off == l3 + 2) /* IPv4 total length */
			field->exact = f->len - l3;
		else if (field->off == l3 + 4) /* IPv6 payload length */
			field->exact = f->len - l3 - 40;
		else /* UDP length */
			field->exact = f->len - l4;
		set_be16(f, field->off, (__u16)field->exact);
	}
}

int fuzz_build(const struct fuzz_spec *s, struct fuzz_frame *f)
{
	struct builder b = { .f = f };
	__u32 l3, l4;

	memset(f, 0, offsetof(struct fuzz_frame, fields));
	f->nfields = f->nbounds = 0;
	f->l3_off = f->l3_len_off = f->l4_off = f->tcp_flags_off = f->ipv4_frag_off = -1;
	f->template = "built";
	f->mutations = 0;
	build_ethernet(&b, s);
	l3 = f->len;
	if (s->l3 == FUZZ_L3_IPV4 || s->l3 == FUZZ_L3_IPV6)
		f->l3_off = (__s32)l3;
	if (s->l3 == FUZZ_L3_IPV4)
		build_ipv4(&b, s);
	else if (s->l3 == FUZZ_L3_IPV6)
		build_ipv6(&b, s);
	else if (s->l3 == FUZZ_L3_ARP)
		build_arp(&b, s);
	l4 = f->len;
	if (f->l3_off >= 0) {
		f->l3_len_off = (__s32)(l3 + (s->l3 == FUZZ_L3_IPV4 ? 2 : 4));
		f->l4_off = (__s32)l4;
		build_l4(&b, s);
	}
	f->hdr_end = f->len;
	for (__u32 i = 0; i < s->payload_len && !b.err; i++)
		put(&b, &s->payload_byte, 1);
	if (b.err)
		return b.err;
	fix_lengths(f, l3, l4);
	add_bound(f, f->len);
	return 0;
}

/* ---- Pools and policy ---------------------------------------------------------------- */

/* 24 plain addresses in 192.0.2.0/24, 8 denied and 8 trusted ones in 198.51.100.0/24. */
void fuzz_pool4(__u32 i, __u8 addr[4])
{
	i %= FUZZ_POOL4;
	if (i < 24) {
		memcpy(addr, (__u8[]){ 192, 0, 2, (__u8)(10 + i) }, 4);
	} else if (i < 32) {
		memcpy(addr, (__u8[]){ 198, 51, 100, (__u8)(1 + i - 24) }, 4);
	} else {
		memcpy(addr, (__u8[]){ 198, 51, 100, (__u8)(17 + i - 32) }, 4);
	}
}

/* Four hosts in each of 2001:db8:0:0::/64 .. 2001:db8:0:9::/64. */
void fuzz_pool6(__u32 i, __u8 addr[16])
{
	static const __u8 hosts[4][8] = {
		{ 0, 0, 0, 0, 0, 0, 0, 1 },
		{ 0, 0, 0, 0, 0, 0, 0, 2 },
		{ 0, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef },
		{ 0, 1, 0, 0, 0, 0, 0, 1 },
	};

	i %= FUZZ_POOL6;
	memset(addr, 0, 16);
	addr[0] = 0x20;
	addr[1] = 0x01;
	addr[2] = 0x0d;
	addr[3] = 0xb8;
	addr[7] = (__u8)(i / 4);
	memcpy(addr + 8, hosts[i % 4], 8);
}

/* Nested prefixes both ways, so the longest prefix must win in each direction. */
const struct fuzz_policy fuzz_policy[] = {
	{ "198.51.100.0/24", XDPBAN_POLICY_DENY },
	{ "198.51.100.16/28", XDPBAN_POLICY_TRUSTED },
	{ "192.0.2.32/30", XDPBAN_POLICY_TRUSTED },
	{ "192.0.2.33", XDPBAN_POLICY_DENY },
	{ "2001:db8:0:8::/63", XDPBAN_POLICY_DENY },
	{ "2001:db8:0:9::/64", XDPBAN_POLICY_TRUSTED },
	{ "2001:db8:0:7::2", XDPBAN_POLICY_TRUSTED },
	{ "2001:db8:0:6::/64", XDPBAN_POLICY_DENY },
};
const size_t fuzz_policy_count = sizeof(fuzz_policy) / sizeof(fuzz_policy[0]);

/* ---- Generator: templates ------------------------------------------------------------ */

void fuzz_gen_init(struct fuzz_gen *g, __u64 seed)
{
	fuzz_rng_seed(&g->rng, seed);
	g->random_source_pct = 15;
	g->mutate_pct = 55;
}

static void random_bytes(struct fuzz_rng *rng, __u8 *p, __u32 n)
{
	for (__u32 i = 0; i < n; i++)
		p[i] = (__u8)fuzz_rng_next(rng);
}

static void pick_source(struct fuzz_gen *g, bool v6, __u8 addr[16])
{
	memset(addr, 0, 16);
	if (!fuzz_rng_percent(&g->rng, g->random_source_pct)) {
		if (v6)
			fuzz_pool6(fuzz_rng_below(&g->rng, FUZZ_POOL6), addr);
		else
			fuzz_pool4(fuzz_rng_below(&g->rng, FUZZ_POOL4), addr);
		return;
	}
	if (v6) { /* anywhere in 2001:db8::/32 */
		memcpy(addr, (__u8[]){ 0x20, 0x01, 0x0d, 0xb8 }, 4);
		random_bytes(&g->rng, addr + 4, 12);
	} else { /* anywhere in 203.0.113.0/24 */
		memcpy(addr, (__u8[]){ 203, 0, 113, (__u8)fuzz_rng_next(&g->rng) }, 4);
	}
}

void fuzz_gen_source(struct fuzz_gen *g, __u8 *family, __u8 addr[16])
{
	bool v6 = fuzz_rng_percent(&g->rng, 50);

	*family = v6 ? XDPBAN_FAMILY_INET6 : XDPBAN_FAMILY_INET;
	pick_source(g, v6, addr);
}

static __u8 pick(struct fuzz_rng *rng, const __u8 *choices, __u32 n)
{
	return choices[fuzz_rng_below(rng, n)];
}

static void random_vlans(struct fuzz_gen *g, struct fuzz_spec *s)
{
	__u32 r = fuzz_rng_below(&g->rng, 100);

	s->nvlans = r < 70 ? 0 : r < 85 ? 1 : r < 96 ? 2 : 3;
	for (__u8 i = 0; i < s->nvlans; i++)
		s->vlan_tpid[i] = fuzz_rng_percent(&g->rng, 50) ? 0x8100 : 0x88a8;
}

/* Flag sets a real stack sends, plus ECE/CWR, which the rules ignore. */
static __u8 valid_tcp_flags(struct fuzz_rng *rng)
{
	static const __u8 sets[] = { 0x02, 0x12, 0x10, 0x18, 0x11, 0x04, 0x14, 0x30, 0x39, 0x19 };

	return pick(rng, sets, sizeof(sets)) | (fuzz_rng_percent(rng, 10) ? 0xc0 : 0);
}

static void random_l4(struct fuzz_gen *g, struct fuzz_spec *s, bool v6)
{
	static const __u8 others4[] = { 47, 50, 58, 132, 0, 255 };
	static const __u8 others6[] = { 1, 47, 132, 59, 135, 255 };
	static const __u8 icmp6_types[] = { 1, 2, 3, 4, 128, 129, 130, 132, 138, 139 };
	__u32 r = fuzz_rng_below(&g->rng, 100);

	if (r < 38) {
		s->proto = PROTO_TCP;
		s->tcp_flags = valid_tcp_flags(&g->rng);
		s->tcp_opt_words = fuzz_rng_percent(&g->rng, 30) ? fuzz_rng_below(&g->rng, 11) : 0;
	} else if (r < 70) {
		s->proto = PROTO_UDP;
	} else if (r < 88) {
		s->proto = v6 ? PROTO_ICMPV6 : PROTO_ICMP;
		s->icmp_type = v6 ? pick(&g->rng, icmp6_types, sizeof(icmp6_types)) :
				    (__u8)fuzz_rng_below(&g->rng, 20);
	} else {
		s->proto = v6 ? pick(&g->rng, others6, sizeof(others6)) :
				pick(&g->rng, others4, sizeof(others4));
	}
}

static void random_ipv6_exts(struct fuzz_gen *g, struct fuzz_spec *s)
{
	static const __u8 kinds[] = { 0, 43, 60, 60, 51, 0, 43, 44 };
	__u32 r = fuzz_rng_below(&g->rng, 100);

	s->next = r < 55 ? 0 : r < 90 ? 1 + fuzz_rng_below(&g->rng, 3) : 7 + fuzz_rng_below(&g->rng, 4);
	for (__u8 i = 0; i < s->next; i++) {
		s->ext_type[i] = pick(&g->rng, kinds, sizeof(kinds));
		s->ext_units[i] = (__u8)fuzz_rng_below(&g->rng, s->ext_type[i] == NH_AUTH ? 5 : 3);
	}
}

/* A chain that reaches the walk limit: eight headers the walk goes through, then one or two
 * more, often the kinds with their own rules (Fragment, AH). */
static void walk_limit_exts(struct fuzz_gen *g, struct fuzz_spec *s)
{
	static const __u8 walked[] = { 0, 43, 60, 51 };
	static const __u8 past[] = { 44, 44, 51, 0, 60, 59 };

	s->next = 8 + fuzz_rng_below(&g->rng, 3);
	for (__u8 i = 0; i < s->next; i++) {
		s->ext_type[i] = i < 8 ? pick(&g->rng, walked, sizeof(walked)) :
					 pick(&g->rng, past, sizeof(past));
		s->ext_units[i] = (__u8)fuzz_rng_below(&g->rng, s->ext_type[i] == NH_AUTH ? 5 : 3);
	}
}

static __u16 random_payload_len(struct fuzz_rng *rng)
{
	return (__u16)(fuzz_rng_percent(rng, 90) ? fuzz_rng_below(rng, 65) : fuzz_rng_below(rng, 400));
}

/* Mostly 64; sometimes a TTL whose hop count agrees (63) or disagrees (58, 50) with it, so
 * that the spoof defence's hop rules (docs/datapath.md section 8) meet every case. */
static __u8 random_ttl(struct fuzz_rng *rng)
{
	static const __u8 others[] = { 63, 58, 50 };

	return fuzz_rng_percent(rng, 85) ? 64 : others[fuzz_rng_below(rng, 3)];
}

static void spec_ipv4(struct fuzz_gen *g, struct fuzz_spec *s)
{
	s->l3 = FUZZ_L3_IPV4;
	s->ttl = random_ttl(&g->rng);
	pick_source(g, false, s->src);
	memcpy(s->dst, (__u8[]){ 192, 0, 2, 1 }, 4);
	s->ipv4_opt_words = fuzz_rng_percent(&g->rng, 20) ? 1 + fuzz_rng_below(&g->rng, 10) : 0;
	if (fuzz_rng_percent(&g->rng, 8))
		s->ipv4_frag = fuzz_rng_percent(&g->rng, 50) ? 0x2000 : fuzz_rng_below(&g->rng, 0x2000);
	else if (fuzz_rng_percent(&g->rng, 30))
		s->ipv4_frag = 0x4000; /* DF: not a fragment */
	random_l4(g, s, false);
}

static void spec_ipv6(struct fuzz_gen *g, struct fuzz_spec *s, bool walk_limit)
{
	s->l3 = FUZZ_L3_IPV6;
	s->ttl = random_ttl(&g->rng);
	pick_source(g, true, s->src);
	memcpy(s->dst, (__u8[]){ 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0xff }, 8);
	s->dst[15] = 1;
	if (walk_limit)
		walk_limit_exts(g, s);
	else
		random_ipv6_exts(g, s);
	random_l4(g, s, true);
}

static void spec_ndp(struct fuzz_gen *g, struct fuzz_spec *s)
{
	s->l3 = FUZZ_L3_IPV6;
	pick_source(g, true, s->src);
	s->dst[0] = 0xff; /* all-nodes multicast */
	s->dst[1] = 0x02;
	s->dst[15] = 1;
	if (fuzz_rng_percent(&g->rng, 25)) {
		s->next = 1;
		s->ext_type[0] = 0; /* hop-by-hop, as MLD-like traffic carries */
	}
	s->proto = PROTO_ICMPV6;
	s->icmp_type = 133 + fuzz_rng_below(&g->rng, 5);
}

static void spec_other(struct fuzz_gen *g, struct fuzz_spec *s)
{
	static const __u16 types[] = { 0x0806, 0x88cc, 0x8847, 0x88e5, 0x0000, 0xffff };

	if (fuzz_rng_percent(&g->rng, 50)) {
		s->l3 = FUZZ_L3_ARP;
		memcpy(s->src, (__u8[]){ 192, 0, 2, 10 }, 4);
		memcpy(s->dst, (__u8[]){ 192, 0, 2, 1 }, 4);
		return;
	}
	s->l3 = FUZZ_L3_RAW;
	s->ethertype = fuzz_rng_percent(&g->rng, 50) ? types[fuzz_rng_below(&g->rng, 6)] :
						       (__u16)fuzz_rng_next(&g->rng);
	s->payload_len = (__u16)(20 + fuzz_rng_below(&g->rng, 60));
}

static const char *random_spec(struct fuzz_gen *g, struct fuzz_spec *s)
{
	__u32 r = fuzz_rng_below(&g->rng, 100);

	memset(s, 0, sizeof(*s));
	random_vlans(g, s);
	if (r < 45) {
		spec_ipv4(g, s);
	} else if (r < 77) {
		spec_ipv6(g, s, false);
	} else if (r < 82) {
		spec_ipv6(g, s, true);
		s->payload_len = random_payload_len(&g->rng);
		return "ipv6-chain";
	} else if (r < 92) {
		spec_ndp(g, s);
		s->payload_len = (__u16)fuzz_rng_below(&g->rng, 33);
		return "ndp";
	} else {
		spec_other(g, s);
		return s->l3 == FUZZ_L3_ARP ? "arp" : "ethertype";
	}
	s->payload_len = random_payload_len(&g->rng);
	return s->l3 == FUZZ_L3_IPV4 ? "ipv4" : "ipv6";
}

/* ---- Generator: mutations ------------------------------------------------------------ */

static __u32 field_max(enum fuzz_field_kind kind)
{
	switch (kind) {
	case FUZZ_FIELD_U8:
		return 0xff;
	case FUZZ_FIELD_BE16:
		return 0xffff;
	default:
		return 0xf;
	}
}

static void field_write(struct fuzz_frame *f, const struct fuzz_field *field, __u32 v)
{
	__u8 *p = f->data + field->off;

	if (field->off >= f->len || (field->kind == FUZZ_FIELD_BE16 && field->off + 1u >= f->len))
		return; /* truncated away */
	switch (field->kind) {
	case FUZZ_FIELD_U8:
		*p = (__u8)v;
		break;
	case FUZZ_FIELD_BE16:
		set_be16(f, field->off, (__u16)v);
		break;
	case FUZZ_FIELD_LO_NIBBLE:
		*p = (*p & 0xf0) | (v & 0x0f);
		break;
	case FUZZ_FIELD_HI_NIBBLE:
		*p = (__u8)((*p & 0x0f) | (v & 0x0f) << 4);
		break;
	}
}

/* 0, just below, exact, just above, the maximum, or anything. */
static void mutate_length_field(struct fuzz_gen *g, struct fuzz_frame *f)
{
	const struct fuzz_field *field;
	__u32 max, v;

	if (!f->nfields)
		return;
	field = &f->fields[fuzz_rng_below(&g->rng, f->nfields)];
	max = field_max(field->kind);
	switch (fuzz_rng_below(&g->rng, 6)) {
	case 0:
		v = 0;
		break;
	case 1:
		v = field->exact ? field->exact - 1 : max;
		break;
	case 2:
		v = field->exact;
		break;
	case 3:
		v = field->exact < max ? field->exact + 1 : 0;
		break;
	case 4:
		v = max;
		break;
	default:
		v = fuzz_rng_below(&g->rng, max + 1);
		break;
	}
	field_write(f, field, v);
}

static void mutate_tcp_flags(struct fuzz_gen *g, struct fuzz_frame *f)
{
	static const __u8 impossible[] = { 0x03, 0x06, 0x07, 0x00, 0x29, 0x2b, 0xc0, 0x3f, 0x23 };

	if (f->tcp_flags_off < 0 || (__u32)f->tcp_flags_off >= f->len)
		return;
	f->data[f->tcp_flags_off] = fuzz_rng_percent(&g->rng, 80) ?
					    pick(&g->rng, impossible, sizeof(impossible)) :
					    (__u8)fuzz_rng_next(&g->rng);
}

static void mutate_flip(struct fuzz_gen *g, struct fuzz_frame *f)
{
	__u32 span = f->hdr_end < f->len ? f->hdr_end : f->len;
	__u32 flips = 1 + fuzz_rng_below(&g->rng, 3);

	for (__u32 i = 0; i < flips; i++) {
		__u32 bit = fuzz_rng_below(&g->rng, span * 8);

		f->data[bit / 8] ^= (__u8)(1u << (bit % 8));
	}
}

static void mutate_byte(struct fuzz_gen *g, struct fuzz_frame *f)
{
	__u32 span = f->hdr_end < f->len ? f->hdr_end : f->len;

	f->data[fuzz_rng_below(&g->rng, span)] = (__u8)fuzz_rng_next(&g->rng);
}

static void truncate_to(struct fuzz_frame *f, __u32 len)
{
	if (len < FUZZ_FRAME_MIN)
		len = FUZZ_FRAME_MIN;
	if (len < f->len)
		f->len = len;
}

static void mutate_truncate_at_boundary(struct fuzz_gen *g, struct fuzz_frame *f)
{
	__u32 at;

	if (!f->nbounds)
		return;
	at = f->bounds[fuzz_rng_below(&g->rng, f->nbounds)];
	truncate_to(f, at + fuzz_rng_below(&g->rng, 3) - 1); /* just before, at, just after */
}

/* Cuts the frame at `at` and rewrites the IP length to match, so that the L3 checks pass and
 * the cut lands in an extension header or the L4 header. */
static void cut_ip_payload(struct fuzz_frame *f, __u32 at)
{
	__u32 l3 = (__u32)f->l3_off;
	bool v4 = f->l3_len_off == f->l3_off + 2;

	if (at < l3 + (v4 ? 20 : 40) || at > f->len)
		return;
	f->len = at;
	set_be16(f, (__u32)f->l3_len_off, (__u16)(v4 ? at - l3 : at - l3 - 40));
}

/* Header boundaries from the end of the fixed IP header up to `hi`, in frame order. */
static __u32 payload_bounds(const struct fuzz_frame *f, __u32 hi, __u32 picks[FUZZ_BOUNDS_MAX])
{
	__u32 lo = (__u32)f->l3_off + (f->l3_len_off == f->l3_off + 2 ? 20 : 40), n = 0;

	for (__u32 i = 0; i < f->nbounds; i++) {
		if (f->bounds[i] >= lo && f->bounds[i] <= hi)
			picks[n++] = f->bounds[i];
	}
	return n;
}

static void mutate_truncate_consistently(struct fuzz_gen *g, struct fuzz_frame *f)
{
	__u32 picks[FUZZ_BOUNDS_MAX], n;

	if (f->l3_len_off < 0)
		return;
	n = payload_bounds(f, f->len, picks);
	if (n)
		cut_ip_payload(f, picks[fuzz_rng_below(&g->rng, n)] + fuzz_rng_below(&g->rng, 3) - 1);
}

/* Cuts a long extension chain just before, at or inside one of its last headers. */
static void cut_chain_tail(struct fuzz_gen *g, struct fuzz_frame *f)
{
	__u32 picks[FUZZ_BOUNDS_MAX], n = payload_bounds(f, (__u32)f->l4_off, picks);
	__u32 tail = n < 6 ? n : 6;

	if (tail)
		cut_ip_payload(f, picks[n - tail + fuzz_rng_below(&g->rng, tail)] +
					  fuzz_rng_below(&g->rng, 3) - 1);
}

static void mutate_pad(struct fuzz_gen *g, struct fuzz_frame *f)
{
	__u32 n = 1 + fuzz_rng_below(&g->rng, 64);

	if (n > FUZZ_FRAME_MAX - f->len)
		n = FUZZ_FRAME_MAX - f->len;
	if (fuzz_rng_percent(&g->rng, 50))
		memset(f->data + f->len, 0, n);
	else
		random_bytes(&g->rng, f->data + f->len, n);
	f->len += n;
}

static void mutate_ip_version(struct fuzz_gen *g, struct fuzz_frame *f)
{
	if (f->l3_off < 0 || (__u32)f->l3_off >= f->len)
		return;
	f->data[f->l3_off] = (__u8)((f->data[f->l3_off] & 0x0f) | fuzz_rng_below(&g->rng, 16) << 4);
}

static void mutate_ipv4_fragment(struct fuzz_gen *g, struct fuzz_frame *f)
{
	if (f->ipv4_frag_off < 0 || (__u32)f->ipv4_frag_off + 1 >= f->len)
		return;
	set_be16(f, f->ipv4_frag_off, (__u16)fuzz_rng_next(&g->rng));
}

static void mutate_once(struct fuzz_gen *g, struct fuzz_frame *f)
{
	switch (fuzz_rng_below(&g->rng, 14)) {
	case 0:
	case 1:
		mutate_flip(g, f);
		break;
	case 2:
		mutate_byte(g, f);
		break;
	case 3:
	case 4:
		mutate_length_field(g, f);
		break;
	case 5:
	case 6:
		mutate_tcp_flags(g, f);
		break;
	case 7:
		truncate_to(f, FUZZ_FRAME_MIN + fuzz_rng_below(&g->rng, f->len));
		break;
	case 8:
		mutate_truncate_at_boundary(g, f);
		break;
	case 9:
		mutate_pad(g, f);
		break;
	case 10:
		mutate_ip_version(g, f);
		break;
	case 11:
	case 12:
		mutate_truncate_consistently(g, f);
		break;
	default:
		mutate_ipv4_fragment(g, f);
		break;
	}
}

int fuzz_gen_frame(struct fuzz_gen *g, struct fuzz_frame *f)
{
	struct fuzz_spec spec;
	const char *template = random_spec(g, &spec);
	int err = fuzz_build(&spec, f);

	if (err)
		return err;
	f->template = template;
	random_bytes(&g->rng, f->data + f->hdr_end, f->len - f->hdr_end);
	if (spec.l3 == FUZZ_L3_RAW)
		f->hdr_end = f->len;
	if (!strcmp(template, "ipv6-chain") && fuzz_rng_percent(&g->rng, 50))
		cut_chain_tail(g, f);
	if (!fuzz_rng_percent(&g->rng, g->mutate_pct))
		return 0;
	f->mutations = 1 + fuzz_rng_below(&g->rng, 3);
	for (__u32 i = 0; i < f->mutations; i++)
		mutate_once(g, f);
	return 0;
}

void fuzz_frame_hex(const struct fuzz_frame *f, FILE *out)
{
	for (__u32 i = 0; i < f->len; i++)
		fprintf(out, "%02x%s", f->data[i], (i + 1) % 32 == 0 || i + 1 == f->len ? "\n" : "");
}
