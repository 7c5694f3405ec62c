/* bench_addr.h - the addresses and frames the benchmarks feed the data path: random prefix
 * lists, sets of source addresses drawn from a seeded generator, a reference longest-prefix
 * lookup to know each source's expected verdict, and Ethernet/IP/UDP frames.
 *
 * Addresses are host byte order in here (so that they sort and mask naturally) and converted
 * to network order only where they enter a frame or a map. Header-only (see bench.h); nothing
 * here touches the kernel.
 */
#ifndef XDPBAN_BENCH_ADDR_H
#define XDPBAN_BENCH_ADDR_H

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include "bench.h"
#include "xdpban_policy.h"
#include "xdpban_ports.h"

/* An IPv4 prefix; the bits past len are zero. */
struct bench_prefix4 {
	uint32_t addr; /* host byte order */
	uint8_t len;
};

static inline uint32_t bench_hostmask4(uint8_t len)
{
	return len == 0 ? 0xffffffffu : len >= 32 ? 0 : 0xffffffffu >> len;
}

static inline uint32_t bench_prefix4_last(const struct bench_prefix4 *p)
{
	return p->addr | bench_hostmask4(p->len);
}

/* Prefix lengths shaped like a real blocklist: half single hosts, 30% /24s, the rest /20 to
 * /31. With a million prefixes this covers about 5% of the IPv4 space, so random sources
 * mostly miss but still walk deep into the trie. */
static inline uint8_t bench_random_plen(struct bench_rng *r)
{
	uint32_t pick = bench_rng_below(r, 10);

	if (pick < 5)
		return 32;
	if (pick < 8)
		return 24;
	return 20 + bench_rng_below(r, 12);
}

static inline int bench_prefix4_cmp(const void *a, const void *b)
{
	const struct bench_prefix4 *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (int)x->len - (int)y->len;
}

/* Sorts p[0..n) and keeps only prefixes that overlap none kept before them. Returns the count
 * kept. Two prefixes either nest or are disjoint, so in start order a prefix overlaps the kept
 * set exactly when it starts inside the last kept one. */
static inline uint32_t bench_prefix4_disjoint(struct bench_prefix4 *p, uint32_t n)
{
	uint32_t kept = 0;

	qsort(p, n, sizeof(*p), bench_prefix4_cmp);
	for (uint32_t i = 0; i < n; i++) {
		if (kept && p[i].addr <= bench_prefix4_last(&p[kept - 1]))
			continue;
		p[kept++] = p[i];
	}
	return kept;
}

#define BENCH_PLEN_GONE 0xff /* marks a prefix being dropped */

/* n random disjoint prefixes, sorted by address, in *out (free() it). Disjoint, so every
 * filter (LPM trie, nftables interval set, ipset hash:net) holds exactly the same list and a
 * source's verdict does not depend on precedence rules. 0 or -ENOMEM. */
static inline int bench_prefix4_random(struct bench_rng *r, uint32_t n, struct bench_prefix4 **out)
{
	uint32_t have = 0, cap = n + n / 8 + 64;
	struct bench_prefix4 *p = malloc(cap * sizeof(*p));

	if (!p)
		return -ENOMEM;
	while (have < n) {
		uint32_t want = n - have + (n - have) / 16 + 16;

		if (have + want > cap)
			want = cap - have;
		for (uint32_t i = 0; i < want; i++) {
			uint8_t len = bench_random_plen(r);

			p[have + i].len = len;
			p[have + i].addr = (uint32_t)bench_rng_next(r) & ~bench_hostmask4(len);
		}
		have = bench_prefix4_disjoint(p, have + want);
	}
	/* Drop random extras; removing prefixes keeps the rest disjoint and sorted. */
	for (uint32_t extra = have - n; extra;) {
		uint32_t victim = bench_rng_below(r, have);

		if (p[victim].len != BENCH_PLEN_GONE) {
			p[victim].len = BENCH_PLEN_GONE;
			extra--;
		}
	}
	for (uint32_t i = 0, kept = 0; i < have; i++)
		if (p[i].len != BENCH_PLEN_GONE)
			p[kept++] = p[i];
	*out = p;
	return 0;
}

/* The reference longest-prefix lookup over a sorted disjoint list: the index of the prefix
 * holding addr, or -1. */
static inline long bench_prefix4_find(const struct bench_prefix4 *p, uint32_t n, uint32_t addr)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) { /* first prefix starting after addr */
		uint32_t mid = lo + (hi - lo) / 2;

		if (p[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr > bench_prefix4_last(&p[lo - 1]))
		return -1;
	return lo - 1;
}

/* Reads a file of one IPv4 prefix ("A.B.C.D/LEN") or address a line into *out (free() it);
 * *n gets the count. 0, or -errno after one line naming the file and line. */
static inline int bench_prefix4_read(const char *path, struct bench_prefix4 **out, uint32_t *n)
{
	FILE *f = fopen(path, "r");
	uint32_t cap = 1024, have = 0;
	struct bench_prefix4 *p = malloc(cap * sizeof(*p));
	char line[128];

	if (!f || !p) {
		fprintf(stderr, "bench: cannot read %s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		free(p);
		return -EIO;
	}
	while (fgets(line, sizeof(line), f)) {
		char *slash = strchr(line, '/');
		struct in_addr a;
		unsigned len = 32;

		line[strcspn(line, "\r\n")] = '\0';
		if (slash) {
			*slash = '\0';
			if (sscanf(slash + 1, "%u", &len) != 1 || len > 32)
				len = 99;
		}
		if (inet_pton(AF_INET, line, &a) != 1 || len > 32) {
			fprintf(stderr, "bench: %s: line %u is not an IPv4 prefix\n", path, have + 1);
			fclose(f);
			free(p);
			return -EINVAL;
		}
		if (have == cap) {
			struct bench_prefix4 *more = realloc(p, 2 * cap * sizeof(*p));

			if (!more) {
				fclose(f);
				free(p);
				return -ENOMEM;
			}
			p = more;
			cap *= 2;
		}
		p[have].addr = ntohl(a.s_addr);
		p[have++].len = len;
	}
	fclose(f);
	*out = p;
	*n = have;
	return 0;
}

/* A random address inside prefix p. */
static inline uint32_t bench_addr_in_prefix(struct bench_rng *r, const struct bench_prefix4 *p)
{
	return p->addr | ((uint32_t)bench_rng_next(r) & bench_hostmask4(p->len));
}

/* Sources the IPv4 stack drops as martians before any filter or socket sees them (0/8,
 * 127/8, multicast and 240/4), and the bench's own veth subnet 198.51.100.0/24. */
static inline bool bench_addr4_unroutable(uint32_t addr)
{
	uint8_t first = addr >> 24;

	return first == 0 || first == 127 || first >= 224 || (addr >> 8) == 0xc63364;
}

/* A sorted set of distinct IPv4 addresses. */
struct bench_set4 {
	uint32_t *addr; /* host byte order, ascending */
	uint32_t n;
};

static inline int bench_u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static inline bool bench_set4_has(const struct bench_set4 *s, uint32_t addr)
{
	return s && s->n && bsearch(&addr, s->addr, s->n, sizeof(uint32_t), bench_u32_cmp);
}

static inline void bench_set4_free(struct bench_set4 *s)
{
	free(s->addr);
	s->addr = NULL;
	s->n = 0;
}

/* What a random "clean" source must stay out of: a deny list and sets already handed out. */
struct bench_avoid4 {
	const struct bench_prefix4 *prefixes;
	uint32_t n_prefixes;
	const struct bench_set4 *sets[4];
};

static inline bool bench_avoided(const struct bench_avoid4 *a, uint32_t addr)
{
	if (!a)
		return false;
	if (a->n_prefixes && bench_prefix4_find(a->prefixes, a->n_prefixes, addr) >= 0)
		return true;
	for (int i = 0; i < 4; i++)
		if (bench_set4_has(a->sets[i], addr))
			return true;
	return false;
}

/* A random IPv4 address a real host could send from (host order): none that xdpban never
 * counts (xdpban_builtin_exempt(): 0/8, 127/8, multicast, reserved). */
static inline uint32_t bench_source4(struct bench_rng *r)
{
	uint32_t addr;
	uint8_t be[4];

	do {
		addr = (uint32_t)bench_rng_next(r);
		be[0] = addr >> 24;
	} while (xdpban_builtin_exempt(XDPBAN_FAMILY_INET, be));
	return addr;
}

/* A random address that nothing in *a covers. */
static inline uint32_t bench_clean_addr4(struct bench_rng *r, const struct bench_avoid4 *a)
{
	uint32_t addr;

	do
		addr = bench_source4(r);
	while (bench_avoided(a, addr));
	return addr;
}

static inline uint32_t bench_unique_sorted(uint32_t *v, uint32_t n)
{
	uint32_t kept = 0;

	qsort(v, n, sizeof(*v), bench_u32_cmp);
	for (uint32_t i = 0; i < n; i++)
		if (!kept || v[i] != v[kept - 1])
			v[kept++] = v[i];
	return kept;
}

/* n distinct random addresses outside *a, sorted. 0 or -ENOMEM. */
static inline int bench_set4_random(struct bench_rng *r, uint32_t n, const struct bench_avoid4 *a,
				    struct bench_set4 *out)
{
	uint32_t have = 0, cap = n + n / 8 + 64;
	uint32_t *v = malloc(cap * sizeof(*v));

	if (!v)
		return -ENOMEM;
	while (have < n) {
		uint32_t want = n - have + 16;

		if (have + want > cap)
			want = cap - have;
		for (uint32_t i = 0; i < want; i++)
			v[have + i] = bench_clean_addr4(r, a);
		have = bench_unique_sorted(v, have + want);
	}
	/* Drop random extras: pick their indexes, then keep the rest in order. */
	if (have > n) {
		uint8_t *gone = calloc(have, 1);

		if (!gone) {
			free(v);
			return -ENOMEM;
		}
		for (uint32_t extra = have - n; extra;) {
			uint32_t victim = bench_rng_below(r, have);

			if (!gone[victim]) {
				gone[victim] = 1;
				extra--;
			}
		}
		for (uint32_t i = 0, kept = 0; i < have; i++)
			if (!gone[i])
				v[kept++] = v[i];
		free(gone);
	}
	out->addr = v;
	out->n = n;
	return 0;
}

/* A random 128-bit address; the top 64 bits are random, so distinct sources also differ under
 * xdpban's default /64 keying. */
static inline void bench_random_addr6(struct bench_rng *r, uint8_t addr[16])
{
	do {
		uint64_t hi = bench_rng_next(r), lo = bench_rng_next(r);

		for (int i = 0; i < 8; i++) {
			addr[i] = hi >> (56 - 8 * i);
			addr[8 + i] = lo >> (56 - 8 * i);
		}
	} while (xdpban_builtin_exempt(XDPBAN_FAMILY_INET6, addr)); /* never counted: not a host */
}

/* An IPv6 prefix; the bits past len are zero. */
struct bench_prefix6 {
	uint8_t addr[16]; /* network byte order */
	uint8_t len;
};

/* Clears the bits of addr past len. */
static inline void bench_mask6(uint8_t addr[16], uint8_t len)
{
	for (int i = 0; i < 16; i++) {
		int bits = (int)len - 8 * i;

		addr[i] &= bits >= 8 ? 0xff : bits <= 0 ? 0 : (uint8_t)(0xff00 >> bits);
	}
}

/* Puts the first len bits of prefix into addr, keeping addr's other bits: a random addr
 * becomes a random address inside the prefix. */
static inline void bench_addr6_into(uint8_t addr[16], const uint8_t prefix[16], uint8_t len)
{
	for (int i = 0; i < 16; i++) {
		int bits = (int)len - 8 * i;
		uint8_t keep = bits >= 8 ? 0xff : bits <= 0 ? 0 : (uint8_t)(0xff00 >> bits);

		addr[i] = (prefix[i] & keep) | (addr[i] & ~keep);
	}
}

/* Lengths as real IPv6 lists hold them: allocations (/32), sites (/48, the most), customer
 * networks (/56), host networks (/64), some /40 and /44, a few single hosts. */
static inline uint8_t bench_random_plen6(struct bench_rng *r)
{
	static const uint8_t lens[20] = { 32, 40, 44, 48, 48, 48, 48, 48, 48, 48,
					  48, 56, 56, 56, 56, 64, 64, 64, 64, 128 };

	return lens[bench_rng_below(r, 20)];
}

/* Order by length, then address: each length's prefixes one sorted run, for the reference. */
static inline int bench_prefix6_cmp(const void *a, const void *b)
{
	const struct bench_prefix6 *x = a, *y = b;

	if (x->len != y->len)
		return (int)x->len - (int)y->len;
	return memcmp(x->addr, y->addr, sizeof(x->addr));
}

/* A random address in 2001::/16, where real IPv6 lists lie: the flat table reads only the top
 * 32 bits, so with a list of any size every such source goes past it. */
static inline void bench_addr6_in_2001(struct bench_rng *r, uint8_t addr[16])
{
	bench_random_addr6(r, addr);
	addr[0] = 0x20;
	addr[1] = 0x01;
}

/* n distinct random prefixes in 2001::/16 (they may nest: every one is a deny, so a source's
 * verdict does not depend on which matches), sorted by length then address, in *out (free()
 * it). 0 or -ENOMEM. */
static inline int bench_prefix6_random(struct bench_rng *r, uint32_t n, struct bench_prefix6 **out)
{
	uint32_t have = 0;
	struct bench_prefix6 *p = malloc((n + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	while (have < n) {
		uint32_t kept = 0;

		for (uint32_t i = have; i < n; i++) {
			p[i].len = bench_random_plen6(r);
			bench_addr6_in_2001(r, p[i].addr);
			bench_mask6(p[i].addr, p[i].len);
		}
		qsort(p, n, sizeof(*p), bench_prefix6_cmp);
		for (uint32_t i = 0; i < n; i++)
			if (!kept || bench_prefix6_cmp(&p[kept - 1], &p[i]))
				p[kept++] = p[i];
		have = kept;
	}
	*out = p;
	return 0;
}

/* The reference: whether any of the sorted prefixes holds addr (one search per length). */
static inline bool bench_prefix6_holds(const struct bench_prefix6 *p, uint32_t n,
				       const uint8_t addr[16])
{
	for (uint32_t start = 0; start < n;) {
		struct bench_prefix6 want = { .len = p[start].len };
		uint32_t end = start, lo, hi;

		while (end < n && p[end].len == want.len)
			end++;
		memcpy(want.addr, addr, sizeof(want.addr));
		bench_mask6(want.addr, want.len);
		for (lo = start, hi = end; lo < hi;) {
			uint32_t mid = lo + (hi - lo) / 2;
			int c = bench_prefix6_cmp(&p[mid], &want);

			if (!c)
				return true;
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		start = end;
	}
	return false;
}

/* Frames. */
#define BENCH_FRAME_MAX 192
#define BENCH_UDP_SPORT 40000
#define BENCH_UDP_DPORT 6969 /* a BitTorrent tracker's port */

struct bench_frame {
	unsigned char data[BENCH_FRAME_MAX];
	uint32_t len;
};

enum bench_frame_kind {
	BENCH_FRAME_VALID = 0,     /* a well-formed UDP datagram: an xdpban pass */
	BENCH_FRAME_MALFORMED = 1, /* UDP length past the datagram: an xdpban error */
	BENCH_FRAME_TCP_ACK = 2,   /* IPv4 only: a bare ACK of no connection, what the spoof
				    * defence's learning looks at (docs/datapath.md, section 8) */
	BENCH_FRAME_ANNOUNCE = 3,  /* IPv4 only: a valid BEP 15 announce of 98 bytes, what a
				    * guarded tracker port sees (docs/datapath.md, section 9) */
};

struct bench_frame_addrs {
	uint8_t dst_mac[ETH_ALEN]; /* all zero: 02:00:00:00:00:02 */
	uint8_t src_mac[ETH_ALEN]; /* all zero: 02:00:00:00:00:01 */
	uint32_t saddr4, daddr4;   /* host byte order; 0: 192.0.2.1 and 198.51.100.2 */
	uint8_t saddr6[16], daddr6[16]; /* all zero: 2001:db8::1 and 2001:db8:1::2 */
};

static inline uint16_t bench_ip_csum(const void *hdr, uint32_t len)
{
	const uint16_t *w = hdr;
	uint32_t sum = 0;

	for (uint32_t i = 0; i < len / 2; i++)
		sum += w[i];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

static inline bool bench_all_zero(const uint8_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i])
			return false;
	return true;
}

static inline void bench_frame_eth(struct bench_frame *f, const struct bench_frame_addrs *a,
				   uint16_t proto)
{
	static const uint8_t dst[ETH_ALEN] = { 2, 0, 0, 0, 0, 2 }, src[ETH_ALEN] = { 2, 0, 0, 0, 0, 1 };
	struct ethhdr *eth = (struct ethhdr *)f->data;

	memcpy(eth->h_dest, a && !bench_all_zero(a->dst_mac, ETH_ALEN) ? a->dst_mac : dst, ETH_ALEN);
	memcpy(eth->h_source, a && !bench_all_zero(a->src_mac, ETH_ALEN) ? a->src_mac : src,
	       ETH_ALEN);
	eth->h_proto = htons(proto);
}

/* UDP payload bytes: a 60-byte IPv4 frame (the Ethernet minimum without FCS) and a 64-byte
 * IPv6 one. */
#define BENCH_UDP4_PAYLOAD 18
#define BENCH_UDP6_PAYLOAD 2

/* The UDP length field (network order) of a datagram of `kind` with `payload` bytes: a
 * malformed datagram claims more bytes than the IP packet holds. */
static inline uint16_t bench_udp_len(uint32_t payload, enum bench_frame_kind k)
{
	return htons(sizeof(struct udphdr) + payload + (k == BENCH_FRAME_MALFORMED ? 100 : 0));
}

static inline void bench_frame_udp(struct udphdr *udp, uint32_t payload, enum bench_frame_kind k)
{
	udp->source = htons(BENCH_UDP_SPORT);
	udp->dest = htons(BENCH_UDP_DPORT);
	udp->len = bench_udp_len(payload, k);
	udp->check = 0; /* no checksum: allowed for IPv4, and xdpban never checks it */
}

/* A valid announce (BEP 15): connection_id, action 1, a transaction, hashes,
 * event 2 (started), port 6881. */
static inline void bench_announce(uint8_t *p)
{
	static const uint8_t head[16] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 0, 0, 0, 1, 9, 9, 9, 9 };

	memcpy(p, head, sizeof(head));
	memset(p + 16, 0xab, 40);
	p[XDPBAN_BEP15_EVENT_OFF + 3] = 2;
	p[XDPBAN_BEP15_PORT_OFF] = 6881 >> 8;
	p[XDPBAN_BEP15_PORT_OFF + 1] = 6881 & 0xff;
}

static inline void bench_frame4(struct bench_frame *f, const struct bench_frame_addrs *a,
				enum bench_frame_kind k)
{
	struct iphdr *ip = (struct iphdr *)(f->data + sizeof(struct ethhdr));
	struct udphdr *udp = (struct udphdr *)(ip + 1);
	struct tcphdr *tcp = (struct tcphdr *)(ip + 1);
	uint32_t payload = k == BENCH_FRAME_ANNOUNCE ? XDPBAN_BEP15_ANNOUNCE_MIN : BENCH_UDP4_PAYLOAD;

	memset(f, 0, sizeof(*f));
	bench_frame_eth(f, a, ETH_P_IP);
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = k == BENCH_FRAME_TCP_ACK ? IPPROTO_TCP : IPPROTO_UDP;
	ip->tot_len = htons(sizeof(*ip) + (k == BENCH_FRAME_TCP_ACK ? sizeof(*tcp)
					  : sizeof(*udp) + payload));
	ip->saddr = htonl(a && a->saddr4 ? a->saddr4 : 0xc0000201u);
	ip->daddr = htonl(a && a->daddr4 ? a->daddr4 : 0xc6336402u);
	ip->check = bench_ip_csum(ip, sizeof(*ip));
	/* the same 60 bytes either way: a TCP frame carries Ethernet padding past its 40 */
	f->len = sizeof(struct ethhdr) + sizeof(*ip) + sizeof(*udp) + payload;
	if (k == BENCH_FRAME_ANNOUNCE)
		bench_announce((uint8_t *)(udp + 1));
	if (k != BENCH_FRAME_TCP_ACK) {
		bench_frame_udp(udp, payload, k);
		return;
	}
	tcp->source = htons(BENCH_UDP_SPORT);
	tcp->dest = htons(BENCH_UDP_DPORT);
	tcp->seq = htonl(0x12345678u);
	tcp->ack_seq = htonl(0x9abcdef0u);
	tcp->doff = 5;
	tcp->ack = 1;
	tcp->window = htons(65535);
}

static inline void bench_frame6(struct bench_frame *f, const struct bench_frame_addrs *a,
				enum bench_frame_kind k)
{
	static const uint8_t src[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	static const uint8_t dst[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 2 };
	struct ipv6hdr *ip6 = (struct ipv6hdr *)(f->data + sizeof(struct ethhdr));
	struct udphdr *udp = (struct udphdr *)(ip6 + 1);

	memset(f, 0, sizeof(*f));
	bench_frame_eth(f, a, ETH_P_IPV6);
	ip6->version = 6;
	ip6->nexthdr = IPPROTO_UDP;
	ip6->hop_limit = 64;
	ip6->payload_len = htons(sizeof(*udp) + BENCH_UDP6_PAYLOAD);
	memcpy(&ip6->saddr, a && !bench_all_zero(a->saddr6, 16) ? a->saddr6 : src, 16);
	memcpy(&ip6->daddr, a && !bench_all_zero(a->daddr6, 16) ? a->daddr6 : dst, 16);
	bench_frame_udp(udp, BENCH_UDP6_PAYLOAD, k);
	f->len = sizeof(struct ethhdr) + sizeof(*ip6) + sizeof(*udp) + BENCH_UDP6_PAYLOAD;
}

#endif /* XDPBAN_BENCH_ADDR_H */
