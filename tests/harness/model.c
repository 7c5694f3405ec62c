/* model.c - the reference model of the xdpban data path; see model.h.
 *
 * Every rule here is taken from docs/datapath.md and cites its section. It must never be
 * "fixed" to agree with the BPF program: when the two disagree, the spec decides which is wrong.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <linux/bpf.h>
#include "xdpban_maps.h"
#include "model.h"
#include "xdpban_time.h"

/* ---- Parsing (section 1) ------------------------------------------------------------- */

#define ETH_HDR_LEN 14
#define VLAN_TAG_LEN 4
#define VLAN_TAGS_MAX 2
#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_IPV6 0x86dd
#define ETHERTYPE_VLAN 0x8100
#define ETHERTYPE_QINQ 0x88a8
#define IPV4_HDR_MIN 20
#define IPV6_HDR_LEN 40
#define IPV6_EXT_MAX 8
#define LEN_FIELD_MAX 65535u /* what a 16-bit length field can say */

#define PROTO_ICMP 1
#define PROTO_TCP 6
#define PROTO_UDP 17
#define PROTO_ICMPV6 58
#define NH_HOPOPTS 0
#define NH_ROUTING 43
#define NH_FRAGMENT 44
#define NH_AUTH 51
#define NH_NONE 59
#define NH_DSTOPTS 60

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_PSH 0x08
#define TCP_ACK 0x10
#define TCP_URG 0x20

/* A bounded view of bytes: every read goes through it, so no read can leave the frame. */
struct bytes {
	const __u8 *p;
	__u32 len;
};

static bool has(const struct bytes *b, __u32 off, __u32 n)
{
	return off <= b->len && n <= b->len - off;
}

static __u16 be16_at(const struct bytes *b, __u32 off)
{
	return (__u16)(b->p[off] << 8 | b->p[off + 1]);
}

/* The L4 region and the protocol in it, when the L3 layer hands one over. */
struct l4_region {
	bool present; /* false for fragments, No Next Header, a too-long extension chain */
	__u8 proto;
	struct bytes bytes;
};

static bool tcp_flags_impossible(__u8 flags)
{
	flags &= TCP_FIN | TCP_SYN | TCP_RST | TCP_PSH | TCP_ACK | TCP_URG;
	if ((flags & TCP_SYN) && (flags & TCP_FIN))
		return true;
	if ((flags & TCP_SYN) && (flags & TCP_RST))
		return true;
	if (flags == 0)
		return true;
	return (flags & (TCP_FIN | TCP_PSH | TCP_URG)) == (TCP_FIN | TCP_PSH | TCP_URG) &&
	       !(flags & TCP_ACK);
}

static bool tcp_malformed(const struct bytes *l4)
{
	__u32 doff;

	if (l4->len < 20)
		return true;
	doff = l4->p[12] >> 4;
	if (doff < 5 || doff * 4 > l4->len)
		return true;
	return tcp_flags_impossible(l4->p[13]);
}

static bool udp_malformed(const struct bytes *l4)
{
	__u16 udp_len;

	if (l4->len < 8)
		return true;
	udp_len = be16_at(l4, 4);
	return udp_len < 8 || udp_len > l4->len;
}

/* What section 9 reads of a packet whose L4 checks passed. */
static void record_ports(__u8 family, const struct l4_region *l4, struct model_parsed *out)
{
	const struct bytes *b = &l4->bytes;

	switch (l4->proto) {
	case PROTO_TCP:
	case PROTO_UDP:
		out->l4 = l4->proto == PROTO_TCP ? MODEL_L4_TCP : MODEL_L4_UDP;
		out->sport = be16_at(b, 0);
		out->dport = be16_at(b, 2);
		if (l4->proto == PROTO_TCP) {
			out->tcp_flags = b->p[13];
		} else {
			out->payload = b->p + 8;
			out->payload_len = be16_at(b, 4) - 8u;
		}
		break;
	case PROTO_ICMP:
		if (family == XDPBAN_FAMILY_INET && b->p[0] == 8)
			out->l4 = MODEL_L4_ECHO;
		break;
	case PROTO_ICMPV6:
		if (family == XDPBAN_FAMILY_INET6 && b->p[0] == 128)
			out->l4 = MODEL_L4_ECHO;
		break;
	}
}

/* L4 checks (section 1, last list), against the L4 region only. */
static void check_l4(__u8 family, const struct l4_region *l4, struct model_parsed *out)
{
	if (!l4->present)
		return;
	switch (l4->proto) {
	case PROTO_TCP:
		out->malformed = tcp_malformed(&l4->bytes);
		break;
	case PROTO_UDP:
		out->malformed = udp_malformed(&l4->bytes);
		break;
	case PROTO_ICMP:
		if (family == XDPBAN_FAMILY_INET)
			out->malformed = l4->bytes.len < 8;
		break;
	case PROTO_ICMPV6:
		if (family != XDPBAN_FAMILY_INET6)
			break;
		if (l4->bytes.len < 4)
			out->malformed = true;
		else
			out->ndp = l4->bytes.p[0] >= 133 && l4->bytes.p[0] <= 137;
		break;
	default:
		break;
	}
}

/* IPv4 (section 1). ip: from the IPv4 header to the end of the frame. */
static void parse_ipv4(const struct bytes *ip, struct model_parsed *out, struct l4_region *l4)
{
	__u32 ihl_bytes, total_len;
	__u16 frag;

	if (ip->len < IPV4_HDR_MIN) {
		out->kind = MODEL_FRAME_UNATTRIBUTED;
		return;
	}
	out->kind = MODEL_FRAME_IP;
	out->family = XDPBAN_FAMILY_INET;
	memcpy(out->src, ip->p + 12, 4);
	memcpy(out->dst, ip->p + 16, 4);
	out->ttl = ip->p[8];

	ihl_bytes = (ip->p[0] & 0x0f) * 4u;
	total_len = be16_at(ip, 2);
	if (total_len == 0 && ip->len > LEN_FIELD_MAX)
		total_len = ip->len; /* an aggregate (section 1, "Aggregates") */
	if ((ip->p[0] >> 4) != 4 || ihl_bytes < IPV4_HDR_MIN || ihl_bytes > ip->len ||
	    total_len < ihl_bytes || total_len > ip->len) {
		out->malformed = true;
		return;
	}
	frag = be16_at(ip, 6);
	if (frag & 0x3fff) /* MF, or a fragment offset: no L4 checks */
		return;
	l4->present = true;
	l4->proto = ip->p[9];
	l4->bytes.p = ip->p + ihl_bytes;
	l4->bytes.len = total_len - ihl_bytes;
}

static bool is_ipv6_ext(__u8 nh)
{
	return nh == NH_HOPOPTS || nh == NH_ROUTING || nh == NH_DSTOPTS || nh == NH_AUTH ||
	       nh == NH_FRAGMENT || nh == NH_NONE;
}

/* Walks the extension headers of an IPv6 payload; fills l4, or sets malformed. */
static void walk_ipv6_ext(__u8 nh, const struct bytes *payload, struct model_parsed *out,
			  struct l4_region *l4)
{
	__u32 off = 0, hdr_len;

	for (int walked = 0; is_ipv6_ext(nh); walked++) {
		if (walked == IPV6_EXT_MAX || nh == NH_NONE)
			return; /* no L4 checks */
		if (!has(payload, off, 2)) {
			out->malformed = true;
			return;
		}
		if (nh == NH_FRAGMENT)
			hdr_len = 8;
		else if (nh == NH_AUTH)
			hdr_len = (payload->p[off + 1] + 2u) * 4;
		else
			hdr_len = (payload->p[off + 1] + 1u) * 8;
		if (!has(payload, off, hdr_len)) {
			out->malformed = true;
			return;
		}
		if (nh == NH_FRAGMENT)
			return; /* a fragment: no L4 checks */
		nh = payload->p[off];
		off += hdr_len;
	}
	l4->present = true;
	l4->proto = nh;
	l4->bytes.p = payload->p + off;
	l4->bytes.len = payload->len - off;
}

/* IPv6 (section 1). ip: from the IPv6 header to the end of the frame. */
static void parse_ipv6(const struct bytes *ip, struct model_parsed *out, struct l4_region *l4)
{
	struct bytes payload;
	__u32 payload_len;

	if (ip->len < IPV6_HDR_LEN) {
		out->kind = MODEL_FRAME_UNATTRIBUTED;
		return;
	}
	out->kind = MODEL_FRAME_IP;
	out->family = XDPBAN_FAMILY_INET6;
	memcpy(out->src, ip->p + 8, 16);
	memcpy(out->dst, ip->p + 24, 16);
	out->ttl = ip->p[7]; /* the hop limit */

	payload_len = be16_at(ip, 4);
	if (payload_len == 0 && ip->len - IPV6_HDR_LEN > LEN_FIELD_MAX)
		payload_len = ip->len - IPV6_HDR_LEN; /* an aggregate (section 1, "Aggregates") */
	if ((ip->p[0] >> 4) != 6 || IPV6_HDR_LEN + payload_len > ip->len) {
		out->malformed = true;
		return;
	}
	payload.p = ip->p + IPV6_HDR_LEN;
	payload.len = payload_len;
	walk_ipv6_ext(ip->p[6], &payload, out, l4);
}

void model_parse(const __u8 *frame, __u32 len, struct model_parsed *out)
{
	struct bytes eth = { .p = frame, .len = len }, ip;
	struct l4_region l4 = { 0 };
	__u32 off = ETH_HDR_LEN;
	__u16 ethertype;

	memset(out, 0, sizeof(*out));
	out->kind = MODEL_FRAME_NOT_IP;
	if (!has(&eth, 0, ETH_HDR_LEN))
		return;
	ethertype = be16_at(&eth, 12);
	for (int tags = 0; ethertype == ETHERTYPE_VLAN || ethertype == ETHERTYPE_QINQ; tags++) {
		if (tags == VLAN_TAGS_MAX || !has(&eth, off, VLAN_TAG_LEN))
			return; /* a third tag, or a tag cut short: not IP */
		ethertype = be16_at(&eth, off + 2);
		off += VLAN_TAG_LEN;
	}
	ip.p = frame + off;
	ip.len = len - off;
	if (ethertype == ETHERTYPE_IPV4)
		parse_ipv4(&ip, out, &l4);
	else if (ethertype == ETHERTYPE_IPV6)
		parse_ipv6(&ip, out, &l4);
	if (out->kind == MODEL_FRAME_IP && !out->malformed)
		check_l4(out->family, &l4, out);
	if (out->kind == MODEL_FRAME_IP && !out->malformed && l4.present)
		record_ports(out->family, &l4, out);
}

/* ---- Tables (section 4) --------------------------------------------------------------- */

#define GROUP 4
#define BAN_WINDOW 16 /* groups a ban may live in, from its home on */
#define VERIFIED_KEEP_S 86400u
#define STAMP_PERIOD_S 64u

static struct model_ctr_slot *ctr_find(const struct model *m, const struct xdpban_key *key)
{
	__u32 home = xdpban_key_home(m->seed, key, m->ctr_groups);

	for (int i = 0; i < GROUP; i++) {
		struct model_ctr_slot *s = &m->ctrs[home * GROUP + i];

		if (s->used && !memcmp(&s->key, key, sizeof(*key)))
			return s;
	}
	return NULL;
}

/* A counter has a window while it holds errors or a dispute, for window_s seconds. */
static bool has_window(const struct model_counter *c, __u32 now_s, __u32 window_s)
{
	return (c->count > 0 || (c->flags & MODEL_DISPUTED)) && now_s - c->start_s < window_s;
}

/* Verified less than a day ago, counted in the 64-second periods stamps are kept in. */
static bool recently_verified(const struct model_counter *c, __u32 now_s)
{
	return (c->flags & MODEL_VERIFIED) &&
	       now_s / STAMP_PERIOD_S - c->stamp_s / STAMP_PERIOD_S <
		       VERIFIED_KEEP_S / STAMP_PERIOD_S;
}

/* Section 4, "Taking a slot for a new counter": ranks a slot (lower goes first); false when
 * it may not be taken. */
static bool slot_rank(const struct model_ctr_slot *s, __u32 now_s, __u32 window_s,
		      bool verified, __u64 *rank)
{
	if (!s->used) {
		*rank = 0;
		return true;
	}
	if (recently_verified(&s->c, now_s)) {
		if (!verified)
			return false;
		/* the stalest goes first, counted in 64-second periods as stamps are kept */
		*rank = (3ull << 60) + 0xffffu - (now_s / STAMP_PERIOD_S - s->c.stamp_s / STAMP_PERIOD_S);
		return true;
	}
	if (!has_window(&s->c, now_s, window_s)) {
		*rank = 1;
		return true;
	}
	*rank = (2ull << 60) + ((__u64)s->c.count << 27) + (0x7ffffffu - (now_s - s->c.start_s));
	return true;
}

/* The slot a new counter for key takes, or NULL when none may be taken. */
static struct model_ctr_slot *ctr_take(struct model *m, const struct xdpban_key *key,
				       __u32 now_s, __u32 window_s, bool verified)
{
	__u32 home = xdpban_key_home(m->seed, key, m->ctr_groups);
	int first = xdpban_key_spread(key);
	struct model_ctr_slot *best = NULL;
	__u64 best_rank = 0, rank;

	for (int j = 0; j < GROUP; j++) {
		struct model_ctr_slot *s = &m->ctrs[home * GROUP + (first + j) % GROUP];

		if (slot_rank(s, now_s, window_s, verified, &rank) && (!best || rank < best_rank)) {
			best = s;
			best_rank = rank;
		}
	}
	if (!best)
		return NULL;
	if (!best->used)
		m->n_counters++;
	best->used = true;
	best->key = *key;
	memset(&best->c, 0, sizeof(best->c));
	return best;
}

static struct model_ban_slot *ban_at(const struct model *m, __u32 home, __u32 step, int i)
{
	return &m->bans[((home + step) % m->ban_groups) * GROUP + i];
}

static __u32 ban_window(const struct model *m)
{
	return m->ban_groups < BAN_WINDOW ? m->ban_groups : BAN_WINDOW;
}

static struct model_ban_slot *ban_find(const struct model *m, const struct xdpban_key *key)
{
	__u32 home = xdpban_key_home(m->seed, key, m->ban_groups);

	for (__u32 step = 0; step < ban_window(m); step++)
		for (int i = 0; i < GROUP; i++) {
			struct model_ban_slot *s = ban_at(m, home, step, i);

			if (s->state == MODEL_SLOT_LIVE && !memcmp(&s->key, key, sizeof(*key)))
				return s;
		}
	return NULL;
}

/* The first free slot of the key's window (section 4, "Bans"), or NULL: the table is full. */
static struct model_ban_slot *ban_take(struct model *m, const struct xdpban_key *key)
{
	__u32 home = xdpban_key_home(m->seed, key, m->ban_groups);

	for (__u32 step = 0; step < ban_window(m); step++)
		for (int i = 0; i < GROUP; i++) {
			struct model_ban_slot *s = ban_at(m, home, step, i);

			if (s->state != MODEL_SLOT_LIVE) {
				s->state = MODEL_SLOT_LIVE;
				s->key = *key;
				m->n_bans++;
				return s;
			}
		}
	return NULL;
}

static void ban_free(struct model *m, struct model_ban_slot *s)
{
	s->state = MODEL_SLOT_FREED;
	m->n_bans--;
}

/* ---- Setup and direct access --------------------------------------------------------- */

int model_init(struct model *m, __u32 ctr_groups, __u32 ban_groups, __u64 seed)
{
	memset(m, 0, sizeof(*m));
	m->ctr_groups = ctr_groups ? ctr_groups : XDPBAN_CTR_GROUPS(XDPBAN_DEFAULT_COUNTERS_MAX);
	m->ban_groups = ban_groups ? ban_groups : XDPBAN_BAN_GROUPS(XDPBAN_DEFAULT_BANS_MAX);
	m->seed = seed ? seed : 0x6d6f64656c736565ull; /* "modelsee" */
	m->ctrs = calloc((size_t)m->ctr_groups * GROUP, sizeof(*m->ctrs));
	m->bans = calloc((size_t)m->ban_groups * GROUP, sizeof(*m->bans));
	m->events_room = MODEL_EVENTS_UNLIMITED;
	if (!m->ctrs || !m->bans) {
		model_free(m);
		return -ENOMEM;
	}
	return 0;
}

void model_free(struct model *m)
{
	free(m->policy);
	free(m->exempt);
	free(m->ctrs);
	free(m->bans);
	memset(m, 0, sizeof(*m));
}

void model_set_config(struct model *m, const struct xdpban_config *cfg)
{
	m->config = *cfg;
}

/* Section 6: an entry that is missing or out of range means the defaults. */
void model_effective_config(const struct model *m, struct xdpban_config *out)
{
	static const struct xdpban_config defaults = XDPBAN_CONFIG_DEFAULTS;

	*out = xdpban_config_valid(&m->config) ? m->config : defaults;
}

static bool prefix_equal(const struct model_prefix *a, const struct model_prefix *b);

int model_policy_add(struct model *m, const struct model_prefix *prefix)
{
	struct model_prefix *grown;

	if ((prefix->family != XDPBAN_FAMILY_INET && prefix->family != XDPBAN_FAMILY_INET6) ||
	    prefix->plen > (prefix->family == XDPBAN_FAMILY_INET ? 32 : 128))
		return -EINVAL;
	for (size_t i = 0; i < m->npolicy; i++) {
		if (prefix_equal(&m->policy[i], prefix)) {
			m->policy[i] = *prefix;
			return 0;
		}
	}
	/* Room by doubling: one realloc an entry made a set of 20,000 cost minutes under ASan,
	 * whose realloc always moves the block. */
	if (m->npolicy == m->policy_cap) {
		size_t cap = m->policy_cap ? 2 * m->policy_cap : 64;

		grown = realloc(m->policy, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		m->policy = grown;
		m->policy_cap = cap;
	}
	m->policy[m->npolicy++] = *prefix;
	return 0;
}

int model_policy_del(struct model *m, const struct model_prefix *prefix)
{
	for (size_t i = 0; i < m->npolicy; i++) {
		if (prefix_equal(&m->policy[i], prefix)) {
			m->policy[i] = m->policy[--m->npolicy];
			return 0;
		}
	}
	return -ENOENT;
}

void model_policy_clear(struct model *m)
{
	m->npolicy = 0;
}

int model_exempt_add(struct model *m, const struct model_exempt *e)
{
	struct model_exempt *grown;

	if ((e->family != XDPBAN_FAMILY_INET && e->family != XDPBAN_FAMILY_INET6) ||
	    e->plen > (e->family == XDPBAN_FAMILY_INET ? 32 : 128))
		return -EINVAL;
	grown = realloc(m->exempt, (m->nexempt + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	m->exempt = grown;
	m->exempt[m->nexempt++] = *e;
	return 0;
}

int model_counter(const struct model *m, const struct xdpban_key *key, struct model_counter *c)
{
	struct model_ctr_slot *s = ctr_find(m, key);

	if (!s)
		return -ENOENT;
	*c = s->c;
	return 0;
}

int model_ban(const struct model *m, const struct xdpban_key *key, struct xdpban_ban *ban)
{
	struct model_ban_slot *s = ban_find(m, key);

	if (!s)
		return -ENOENT;
	*ban = s->ban;
	return 0;
}

int model_put_counter(struct model *m, const struct xdpban_key *key, __u32 now_s,
		      const struct model_counter *c)
{
	struct xdpban_config cfg;
	struct model_ctr_slot *s = ctr_find(m, key);

	model_effective_config(m, &cfg);
	if (!s)
		s = ctr_take(m, key, now_s, cfg.window_s, c->flags & MODEL_VERIFIED);
	if (!s)
		return -ENOSPC;
	s->c = *c;
	return 0;
}

int model_put_ban(struct model *m, const struct xdpban_key *key, const struct xdpban_ban *ban)
{
	struct model_ban_slot *s = ban_find(m, key);

	if (!s)
		s = ban_take(m, key);
	if (!s)
		return -ENOSPC;
	s->ban = *ban;
	return 0;
}

int model_del_ban(struct model *m, const struct xdpban_key *key)
{
	struct model_ban_slot *s = ban_find(m, key);

	if (!s)
		return -ENOENT;
	ban_free(m, s);
	return 0;
}

int model_for_each_counter(const struct model *m, model_counter_fn fn, void *ctx)
{
	for (size_t i = 0; i < (size_t)m->ctr_groups * GROUP; i++) {
		const struct model_ctr_slot *s = &m->ctrs[i];
		int ret = s->used ? fn(&s->key, &s->c, ctx) : 0;

		if (ret)
			return ret;
	}
	return 0;
}

int model_for_each_ban(const struct model *m, model_ban_fn fn, void *ctx)
{
	for (size_t i = 0; i < (size_t)m->ban_groups * GROUP; i++) {
		const struct model_ban_slot *s = &m->bans[i];
		int ret = s->state == MODEL_SLOT_LIVE ? fn(&s->key, &s->ban, ctx) : 0;

		if (ret)
			return ret;
	}
	return 0;
}

void model_events_drained(struct model *m, __u32 room)
{
	m->events_room = room;
}

/* ---- Policy (section 2, stage 2) ----------------------------------------------------- */

static bool prefix_match(const __u8 *addr, const __u8 *prefix, __u32 plen)
{
	for (__u32 bit = 0; bit < plen; bit++) {
		__u8 mask = 0x80 >> (bit % 8);

		if ((addr[bit / 8] & mask) != (prefix[bit / 8] & mask))
			return false;
	}
	return true;
}

static bool prefix_equal(const struct model_prefix *a, const struct model_prefix *b)
{
	return a->family == b->family && a->plen == b->plen &&
	       prefix_match(a->addr, b->addr, a->plen);
}

static bool policy_ran_out(const struct model_prefix *p, __u64 now)
{
	return p->expires_ns && p->expires_ns <= now;
}

/* The longest prefix holding the address; an entry whose time has come counts as no entry:
 * the default layer (the family's /0 entry, allow-only mode's) answers then, and no other
 * shorter prefix is consulted. */
static __u32 policy_verdict(const struct model *m, __u8 family, const __u8 *addr, __u64 now)
{
	const struct model_prefix *best = NULL, *root = NULL;

	for (size_t i = 0; i < m->npolicy; i++) {
		const struct model_prefix *p = &m->policy[i];

		if (p->family == family && p->plen == 0)
			root = p;
		if (p->family == family && prefix_match(addr, p->addr, p->plen) &&
		    (!best || p->plen > best->plen))
			best = p;
	}
	if (best && policy_ran_out(best, now))
		best = root;
	if (!best || policy_ran_out(best, now))
		return XDPBAN_POLICY_NONE;
	return best->verdict;
}

/* Section 8, "Exempt sources": the built-in set, written out here from the spec's list. */
static bool builtin_exempt(__u8 family, const __u8 *a)
{
	static const __u8 v6_loopback[16] = { [15] = 1 };
	static const __u8 v6_zero[16];

	if (family == XDPBAN_FAMILY_INET)
		return a[0] == 0 || a[0] == 127 || (a[0] & 0xf0) == 224 || (a[0] & 0xf0) == 240;
	if (a[0] == 0xff || !memcmp(a, v6_zero, 16) || !memcmp(a, v6_loopback, 16))
		return true;
	return !memcmp(a, v6_zero, 10) && a[10] == 0xff && a[11] == 0xff; /* ::ffff:0:0/96 */
}

static bool is_exempt(const struct model *m, __u8 family, const __u8 *addr)
{
	if (builtin_exempt(family, addr))
		return true;
	for (size_t i = 0; i < m->nexempt; i++)
		if (m->exempt[i].family == family &&
		    prefix_match(addr, m->exempt[i].addr, m->exempt[i].plen))
			return true;
	return false;
}

/* ---- Keys, bans and counting (section 2 stages 3-4, section 4) ---------------------------- */

void model_key(const struct model *m, __u8 family, const __u8 *addr, struct xdpban_key *key)
{
	struct xdpban_config cfg;

	model_effective_config(m, &cfg);
	memset(key, 0, sizeof(*key));
	key->family = family;
	if (family == XDPBAN_FAMILY_INET) {
		key->prefixlen = 32;
		memcpy(key->addr, addr, 4);
		return;
	}
	/* A link-local source is always a neighbour, keyed alone (docs/datapath.md, section 8);
	 * the model's host protects no other network. */
	key->prefixlen = addr[0] == 0xfe && (addr[1] & 0xc0) == 0x80 ? 128 : cfg.v6_prefix;
	for (__u32 bit = 0; bit < key->prefixlen; bit++)
		key->addr[bit / 8] |= addr[bit / 8] & (0x80 >> (bit % 8));
}

static void stat_add(struct model *m, enum xdpban_stat slot, __u64 packets, __u64 bytes)
{
	m->stats[slot].packets += packets;
	m->stats[slot].bytes += bytes;
}

enum ban_check {
	BAN_NONE,    /* no ban, or one that had expired and was lifted */
	BAN_ACTIVE,  /* drop */
};

/* Stage 4. An expired ban is deleted and counted in *expired. */
static enum ban_check check_ban(struct model *m, const struct xdpban_key *key, __u64 now,
				__u32 *expired)
{
	struct model_ban_slot *s = ban_find(m, key);

	*expired = 0;
	if (!s)
		return BAN_NONE;
	if (s->ban.expires_ns == 0 || s->ban.expires_ns > now)
		return BAN_ACTIVE;
	ban_free(m, s);
	*expired = 1;
	return BAN_NONE;
}

/* The error that crossed a limit, for its ban (struct xdpban_ban_info). */
struct model_error {
	__u8 classes, reason, proto;
	__u16 port; /* TCP or UDP */
};

/* What counting did, for the caller to turn into stats and a status. */
struct count_result {
	enum xdpban_stat uncounted; /* the event of an error that was not counted; 0: counted */
	__u32 new_count;
	bool ban_created;
	bool table_full;
	bool event_sent;
	struct xdpban_ban ban;
};

static __u32 add_saturating(__u32 a, __u32 b)
{
	return a > 0xffffffffu - b ? 0xffffffffu : a + b;
}

/* Section 8, "Hop counts". */
static __u8 hop_of_ttl(__u8 ttl)
{
	static const __u8 initial[] = { 30, 32, 60, 64, 128, 255 };

	for (size_t i = 0; i < sizeof(initial); i++)
		if (ttl <= initial[i])
			return (__u8)(initial[i] - ttl);
	return 0;
}

static bool hops_agree(__u8 a, __u8 b, __u8 tolerance)
{
	return (a > b ? a - b : b - a) <= tolerance;
}

/* Section 8, "Spoof modes", rules 2 and 3 for an existing counter: 0 count it, else the
 * event that stops it (the counter may become disputed). */
static enum xdpban_stat spoof_rules(struct model_counter *c, __u8 hop, __u32 now_s,
				    const struct xdpban_config *cfg)
{
	bool window = has_window(c, now_s, cfg->window_s);
	bool ref = (c->flags & MODEL_VERIFIED) || (window && (c->flags & MODEL_FIRST_ERR));

	if (window && (c->flags & MODEL_DISPUTED))
		return XDPBAN_STAT_ERRORS_SUSPECT;
	if (!ref || hops_agree(hop, c->hop, cfg->hop_tolerance))
		return 0;
	if (!window) { /* a dispute lasts window_s either way */
		c->start_s = now_s;
		c->count = 0;
		c->flags &= ~MODEL_FIRST_ERR;
	}
	c->flags |= MODEL_DISPUTED;
	return XDPBAN_STAT_ERRORS_SUSPECT;
}

/* Section 4 step 4: a ban, when the count passes the limit. */
static void ban_if_over(struct model *m, const struct xdpban_key *key, struct model_counter *c,
			const struct model_error *err, __u8 rule, __u64 now,
			const struct xdpban_config *cfg, struct count_result *res)
{
	struct model_ban_slot *bs;

	if (res->new_count <= cfg->limit)
		return;
	bs = ban_take(m, key);
	if (!bs) {
		res->table_full = true; /* the counter keeps its count */
		return;
	}
	bs->ban = (struct xdpban_ban){
		.start_ns = now,
		.expires_ns = now + (__u64)cfg->ban_s * NS_PER_SEC,
		.count = res->new_count,
		.reason = err->reason,
		.classes = err->classes,
		.proto = err->proto,
		.port = err->port,
		.rule = rule,
	};
	res->ban = bs->ban;
	res->ban_created = true;
	res->event_sent = m->events_room > 0;
	if (res->event_sent && m->events_room != MODEL_EVENTS_UNLIMITED)
		m->events_room--;
	c->count = 0; /* the source starts over: no window, no dispute, no classes */
	c->flags &= ~(MODEL_DISPUTED | MODEL_FIRST_ERR);
	c->classes = 0;
}

/* Section 4, "Rules of limits": puts a rule's owned fields over cfg's limit, window and ban
 * time; true if it owned any. An invalid rule owns nothing. */
static bool rule_over(struct xdpban_config *cfg, const struct xdpban_rule *r)
{
	if (!r->own || !xdpban_rule_valid(r))
		return false;
	if (r->own & XDPBAN_OWN_LIMIT)
		cfg->limit = r->limit;
	if (r->own & XDPBAN_OWN_WINDOW)
		cfg->window_s = r->window_s;
	if (r->own & XDPBAN_OWN_BAN)
		cfg->ban_s = r->ban_s;
	return true;
}

/* cfg with the limit, window and ban time of an error of `classes` to UDP port `port`, and the
 * rule that gave them: for each class the global values under its rule, under the port's rule
 * for a protocol error; of several classes the lowest limit, the first of equals. */
static __u8 rule_limits(struct xdpban_config *cfg, __u8 classes, __u16 port)
{
	struct xdpban_config best = *cfg;
	__u8 best_rule = XDPBAN_RULE_GLOBAL;
	bool found = false;

	for (unsigned int i = 0; i < XDPBAN_CLASS__COUNT; i++) {
		struct xdpban_config one = *cfg;
		__u8 rule = XDPBAN_RULE_GLOBAL;

		if (!(classes & 1u << i))
			continue;
		if (rule_over(&one, &cfg->class_rule[i]))
			rule = (__u8)(XDPBAN_RULE_CLASS + i);
		for (unsigned int j = 0; i == XDPBAN_CLASS_BITNO_PROTOCOL && port &&
					 j < XDPBAN_PORT_RULES; j++)
			if (cfg->port_rule[j].port == port && rule_over(&one, &cfg->port_rule[j]))
				rule = XDPBAN_RULE_PORT;
		if (!found || one.limit < best.limit) {
			best = one;
			best_rule = rule;
		}
		found = true;
	}
	*cfg = best;
	return best_rule;
}

/* The error of a packet of `classes`: its IP protocol and TCP or UDP destination port when it is
 * not malformed (section 4, "Bans"). */
static struct model_error packet_error(const struct model_parsed *pp, __u8 classes)
{
	struct model_error e = { .classes = classes, .reason = XDPBAN_REASON_ERRORS };

	if (pp->malformed)
		return e;
	switch (pp->l4) {
	case MODEL_L4_TCP:
		e.proto = IPPROTO_TCP;
		e.port = pp->dport;
		break;
	case MODEL_L4_UDP:
		e.proto = IPPROTO_UDP;
		e.port = pp->dport;
		break;
	case MODEL_L4_ECHO:
		e.proto = pp->family == XDPBAN_FAMILY_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6;
		break;
	}
	return e;
}

/* Sections 4 and 8: n errors `err` against key at now. hop is the packet's hop count, or -1
 * for a report (no hop rules). */
static void count_errors(struct model *m, const struct xdpban_key *key, __u32 n,
			 const struct model_error *err, int hop, __u64 now,
			 struct count_result *res)
{
	__u8 classes = err->classes, rule;
	struct xdpban_config cfg;
	__u32 now_s = (__u32)(now / NS_PER_SEC);
	bool hop_rules, fresh;
	struct model_ctr_slot *s;

	memset(res, 0, sizeof(*res));
	model_effective_config(m, &cfg);
	rule = rule_limits(&cfg, classes, err->port);
	hop_rules = hop >= 0 && cfg.spoof != XDPBAN_SPOOF_OFF;
	s = ctr_find(m, key);
	if (hop_rules && cfg.spoof == XDPBAN_SPOOF_VERIFIED &&
	    (!s || !(s->c.flags & MODEL_VERIFIED))) {
		res->uncounted = XDPBAN_STAT_ERRORS_UNVERIFIED; /* rule 1 */
		return;
	}
	if (s && hop_rules) {
		res->uncounted = spoof_rules(&s->c, (__u8)hop, now_s, &cfg);
		if (res->uncounted)
			return;
	}
	fresh = !s || !has_window(&s->c, now_s, cfg.window_s);
	if (!s)
		s = ctr_take(m, key, now_s, cfg.window_s, false);
	if (!s) {
		res->uncounted = XDPBAN_STAT_COUNTER_FULL;
		return;
	}
	if (fresh) { /* rule 4: a window starts, with this error's reference */
		s->c.start_s = now_s;
		s->c.count = n;
		s->c.classes = classes;
		s->c.flags &= ~(MODEL_DISPUTED | MODEL_FIRST_ERR);
		if (!(s->c.flags & MODEL_VERIFIED)) {
			s->c.hop = hop_rules ? (__u8)hop : 0;
			if (hop_rules)
				s->c.flags |= MODEL_FIRST_ERR;
		}
	} else {
		s->c.count = add_saturating(s->c.count, n);
		s->c.classes |= classes;
	}
	res->new_count = s->c.count;
	ban_if_over(m, key, &s->c, err, rule, now, &cfg, res);
}

/* ---- Packets (section 2, 3 and 5) ----------------------------------------------------- */

static void set_verdict(struct model_verdict *v, enum xdpban_stat reason)
{
	v->reason = reason;
	v->action = reason == XDPBAN_STAT_PASSED || reason == XDPBAN_STAT_PASSED_TRUSTED ?
			    XDP_PASS :
			    XDP_DROP;
}

/* Section 3: no trustworthy source; never counted, no policy. */
static enum xdpban_stat unattributed_verdict(const struct xdpban_config *cfg)
{
	if ((cfg->class_mask & XDPBAN_CLASS_MALFORMED) && (cfg->drop_mask & XDPBAN_CLASS_MALFORMED))
		return XDPBAN_STAT_DROP_MALFORMED;
	return XDPBAN_STAT_PASSED;
}

/* Section 5: an error packet records one packet of each of its classes. */
static void class_events(struct model_verdict *v, __u8 classes)
{
	for (int i = 0; i < XDPBAN_CLASS__COUNT; i++)
		if (classes & (1u << i))
			v->events[XDPBAN_STAT_OF_CLASS_BITNO(i)] = 1;
}

/* Stage 7. */
static enum xdpban_stat error_verdict(const struct xdpban_config *cfg, __u8 classes)
{
	__u8 dropping = classes & cfg->drop_mask;

	if (dropping & XDPBAN_CLASS_MALFORMED)
		return XDPBAN_STAT_DROP_MALFORMED;
	if (dropping)
		return XDPBAN_STAT_DROP_ERROR;
	return XDPBAN_STAT_PASSED;
}

/* Sections 2 and 11: a packet a list or a ban would drop (drop: its row). Observe mode passes
 * it and records the observed row, unless its errors are dropped as the config says; a
 * probe is not confirmed at that stage, so it never drops there. */
static void list_or_ban_drop(const struct xdpban_config *cfg, enum xdpban_stat drop,
			     __u8 classes, struct model_verdict *v)
{
	if (cfg->mode != XDPBAN_MODE_OBSERVE) {
		set_verdict(v, drop);
		return;
	}
	v->events[XDPBAN_STAT_OBSERVED_OF(drop)] = 1;
	set_verdict(v, error_verdict(cfg, classes & ~XDPBAN_CLASS_PROBE));
}

/* Stages 2 to 7 for a packet with a known source. */
static int attributed_packet(struct model *m, const struct xdpban_config *cfg, __u64 now,
			     struct model_verdict *v)
{
	struct count_result res;
	struct model_error err;
	__u32 verdict = policy_verdict(m, v->parsed.family, v->parsed.src, now);
	__u8 classes = (v->parsed.malformed ? XDPBAN_CLASS_MALFORMED
					    : model_port_classes(m, cfg, &v->parsed)) &
		       cfg->class_mask;

	if (verdict == XDPBAN_POLICY_TRUSTED) {
		set_verdict(v, XDPBAN_STAT_PASSED_TRUSTED);
		return 0;
	}
	if (verdict == XDPBAN_POLICY_DENY) {
		list_or_ban_drop(cfg, XDPBAN_STAT_DROP_DENY, classes, v);
		return 0;
	}
	/* Allow-only mode: the model's host has no sockets, so nothing is let through. */
	if (verdict == XDPBAN_POLICY_NOT_ALLOWED) {
		list_or_ban_drop(cfg, XDPBAN_STAT_DROP_NOT_ALLOWED, classes, v);
		return 0;
	}

	model_key(m, v->parsed.family, v->parsed.src, &v->key);
	if (check_ban(m, &v->key, now, &v->events[XDPBAN_STAT_BANS_EXPIRED]) == BAN_ACTIVE) {
		list_or_ban_drop(cfg, XDPBAN_STAT_DROP_BANNED, classes, v);
		return 0;
	}

	if (!classes) {
		set_verdict(v, XDPBAN_STAT_PASSED);
		return 0;
	}

	set_verdict(v, error_verdict(cfg, classes)); /* stage 7, counted or not */
	class_events(v, classes);
	if (is_exempt(m, v->parsed.family, v->parsed.src)) {
		v->events[XDPBAN_STAT_ERRORS_EXEMPT] = 1;
		return 0;
	}
	err = packet_error(&v->parsed, classes);
	count_errors(m, &v->key, 1, &err, hop_of_ttl(v->parsed.ttl), now, &res);
	if (res.uncounted) {
		v->events[res.uncounted] = 1;
		return 0;
	}
	v->counted = true;
	v->new_count = res.new_count;
	v->events[XDPBAN_STAT_ERRORS] = 1;
	v->events[XDPBAN_STAT_BANS_CREATED] = res.ban_created;
	v->events[XDPBAN_STAT_BAN_TABLE_FULL] = res.table_full;
	v->events[XDPBAN_STAT_EVENTS_LOST] = res.ban_created && !res.event_sent;
	v->ban_created = res.ban_created;
	v->event_sent = res.event_sent;
	v->ban = res.ban;
	return 0;
}

int model_packet(struct model *m, const __u8 *frame, __u32 len, __u64 now_ns,
		 struct model_verdict *out)
{
	struct xdpban_config cfg;
	int err = 0;

	memset(out, 0, sizeof(*out));
	model_effective_config(m, &cfg);
	model_parse(frame, len, &out->parsed);
	if (out->parsed.kind == MODEL_FRAME_NOT_IP || out->parsed.ndp)
		set_verdict(out, XDPBAN_STAT_PASSED); /* stage 1: NDP passes before all else */
	else if (out->parsed.kind == MODEL_FRAME_UNATTRIBUTED) {
		set_verdict(out, unattributed_verdict(&cfg));
		class_events(out, XDPBAN_CLASS_MALFORMED & cfg.class_mask);
	}
	else
		err = attributed_packet(m, &cfg, now_ns, out);
	if (err)
		return err;

	/* Section 5: one verdict per packet; events are recorded with the packet. */
	stat_add(m, out->reason, 1, len);
	for (int slot = XDPBAN_STAT__VERDICTS; slot < XDPBAN_STAT__MAX; slot++) {
		if (out->events[slot])
			stat_add(m, slot, out->events[slot], (__u64)out->events[slot] * len);
	}
	return 0;
}

/* ---- Reports (section 7) --------------------------------------------------------------- */

/* Section 5: a report records its error count as packets and no bytes; its other events
 * count one each. It is not a packet, so it has no verdict. */
static void report_stats(struct model *m, __u32 count, const struct count_result *res,
			 __u32 expired)
{
	if (expired)
		stat_add(m, XDPBAN_STAT_BANS_EXPIRED, 1, 0);
	stat_add(m, XDPBAN_STAT_ERRORS, count, 0);
	if (res->ban_created)
		stat_add(m, XDPBAN_STAT_BANS_CREATED, 1, 0);
	if (res->table_full)
		stat_add(m, XDPBAN_STAT_BAN_TABLE_FULL, 1, 0);
	if (res->ban_created && !res->event_sent)
		stat_add(m, XDPBAN_STAT_EVENTS_LOST, 1, 0);
}

static __u32 report_status(const struct count_result *res)
{
	if (res->ban_created)
		return XDPBAN_REPORT_BANNED;
	if (res->table_full)
		return XDPBAN_REPORT_TABLE_FULL;
	return XDPBAN_REPORT_COUNTED;
}

int model_report(struct model *m, __u8 family, const __u8 *addr, __u32 count, __u64 now_ns,
		 struct model_report_result *out)
{
	static const struct model_error report_error = { .classes = XDPBAN_CLASS_REPORTED,
							  .reason = XDPBAN_REASON_REPORTED };
	struct xdpban_config cfg;
	struct count_result res;
	__u32 verdict, expired;

	memset(out, 0, sizeof(*out));
	model_effective_config(m, &cfg);
	if ((family != XDPBAN_FAMILY_INET && family != XDPBAN_FAMILY_INET6) || count == 0) {
		out->status = XDPBAN_REPORT_INVALID;
		return 0;
	}
	verdict = policy_verdict(m, family, addr, now_ns);
	if (verdict == XDPBAN_POLICY_NOT_ALLOWED)
		verdict = XDPBAN_POLICY_DENY; /* its packets are dropped: nothing to count */
	if (verdict == XDPBAN_POLICY_TRUSTED || verdict == XDPBAN_POLICY_DENY) {
		out->status = verdict == XDPBAN_POLICY_TRUSTED ? XDPBAN_REPORT_TRUSTED :
								 XDPBAN_REPORT_DENIED;
		return 0;
	}
	model_key(m, family, addr, &out->key);
	if (check_ban(m, &out->key, now_ns, &expired) == BAN_ACTIVE) {
		out->status = XDPBAN_REPORT_ALREADY_BANNED;
		return 0;
	}
	if (!(cfg.class_mask & XDPBAN_CLASS_REPORTED)) {
		if (expired)
			stat_add(m, XDPBAN_STAT_BANS_EXPIRED, 1, 0);
		out->status = XDPBAN_REPORT_DISABLED;
		return 0;
	}
	stat_add(m, XDPBAN_STAT_CLASS_REPORTED, count, 0);
	if (is_exempt(m, family, addr)) {
		if (expired)
			stat_add(m, XDPBAN_STAT_BANS_EXPIRED, 1, 0);
		stat_add(m, XDPBAN_STAT_ERRORS_EXEMPT, count, 0);
		out->status = XDPBAN_REPORT_EXEMPT;
		return 0;
	}
	count_errors(m, &out->key, count, &report_error, -1, now_ns, &res);
	if (res.uncounted) { /* a report meets no hop rule: only a full group stops it */
		if (expired)
			stat_add(m, XDPBAN_STAT_BANS_EXPIRED, 1, 0);
		stat_add(m, res.uncounted, count, 0);
		out->status = XDPBAN_REPORT_NOT_COUNTED;
		return 0;
	}
	report_stats(m, count, &res, expired);
	out->status = report_status(&res);
	out->new_count = res.new_count;
	out->ban_created = res.ban_created;
	out->event_sent = res.event_sent;
	out->ban = res.ban;
	return 0;
}
