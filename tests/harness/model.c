/* model.c - the reference model of the xdpban data path; see model.h.
 *
 * Every rule here is taken from docs/datapath.md and cites its section. It must never be
 * "fixed" to agree with the BPF program: when the two disagree, the spec decides which is wrong.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
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

	ihl_bytes = (ip->p[0] & 0x0f) * 4u;
	total_len = be16_at(ip, 2);
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

	payload_len = be16_at(ip, 4);
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
}

/* ---- Tables -------------------------------------------------------------------------- */

struct model_slot {
	bool used;
	struct xdpban_key key;
	union {
		struct model_counter counter;
		struct xdpban_ban ban;
	} value;
};

static size_t key_hash(const struct xdpban_key *key)
{
	const __u8 *p = (const __u8 *)key;
	__u64 h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (size_t i = 0; i < sizeof(*key); i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return (size_t)h;
}

static struct model_slot *table_find(const struct model_table *t, const struct xdpban_key *key)
{
	if (!t->nslots)
		return NULL;
	for (size_t i = key_hash(key) & (t->nslots - 1);; i = (i + 1) & (t->nslots - 1)) {
		struct model_slot *s = &t->slots[i];

		if (!s->used)
			return NULL;
		if (!memcmp(&s->key, key, sizeof(*key)))
			return s;
	}
}

static struct model_slot *table_place(struct model_table *t, const struct xdpban_key *key)
{
	size_t i = key_hash(key) & (t->nslots - 1);

	while (t->slots[i].used)
		i = (i + 1) & (t->nslots - 1);
	t->slots[i].used = true;
	t->slots[i].key = *key;
	t->count++;
	return &t->slots[i];
}

/* Keeps the load at most one half, so probes stay short and an empty slot always exists. */
static int table_grow(struct model_table *t)
{
	size_t old_n = t->nslots, new_n = old_n ? old_n * 2 : 64;
	struct model_slot *old = t->slots;

	t->slots = calloc(new_n, sizeof(*t->slots));
	if (!t->slots) {
		t->slots = old;
		return -ENOMEM;
	}
	t->nslots = new_n;
	t->count = 0;
	for (size_t i = 0; i < old_n; i++) {
		if (old[i].used)
			table_place(t, &old[i].key)->value = old[i].value;
	}
	free(old);
	return 0;
}

/* Finds the key's slot, creating it (zeroed) when missing. -E2BIG when the table is full. */
static int table_get_or_add(struct model_table *t, const struct xdpban_key *key,
			    struct model_slot **slot)
{
	int err;

	*slot = table_find(t, key);
	if (*slot)
		return 0;
	if (t->max && t->count >= t->max)
		return -E2BIG;
	if ((t->count + 1) * 2 > t->nslots) {
		err = table_grow(t);
		if (err)
			return err;
	}
	*slot = table_place(t, key);
	memset(&(*slot)->value, 0, sizeof((*slot)->value));
	return 0;
}

/* Deletes by shifting later members of the probe run back, so no tombstones are needed. */
static void table_delete(struct model_table *t, struct model_slot *victim)
{
	size_t mask = t->nslots - 1, hole = (size_t)(victim - t->slots);

	for (size_t i = (hole + 1) & mask; t->slots[i].used; i = (i + 1) & mask) {
		size_t home = key_hash(&t->slots[i].key) & mask;

		/* The entry at i may move to the hole if its home is not in (hole, i]. */
		if (((i - home) & mask) >= ((i - hole) & mask)) {
			t->slots[hole] = t->slots[i];
			hole = i;
		}
	}
	t->slots[hole].used = false;
	t->count--;
}

/* ---- Setup and direct access --------------------------------------------------------- */

int model_init(struct model *m, __u32 bans_max)
{
	memset(m, 0, sizeof(*m));
	m->bans.max = bans_max ? bans_max : XDPBAN_DEFAULT_BANS_MAX;
	m->events_room = MODEL_EVENTS_UNLIMITED;
	return 0;
}

void model_free(struct model *m)
{
	free(m->policy);
	free(m->counters.slots);
	free(m->bans.slots);
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
	grown = realloc(m->policy, (m->npolicy + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	m->policy = grown;
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

int model_counter(const struct model *m, const struct xdpban_key *key, struct model_counter *c)
{
	struct model_slot *s = table_find(&m->counters, key);

	if (!s)
		return -ENOENT;
	*c = s->value.counter;
	return 0;
}

int model_ban(const struct model *m, const struct xdpban_key *key, struct xdpban_ban *ban)
{
	struct model_slot *s = table_find(&m->bans, key);

	if (!s)
		return -ENOENT;
	*ban = s->value.ban;
	return 0;
}

int model_put_counter(struct model *m, const struct xdpban_key *key, __u32 start_s, __u32 count)
{
	struct model_slot *s;
	int err = table_get_or_add(&m->counters, key, &s);

	if (err)
		return err;
	s->value.counter.start_s = start_s;
	s->value.counter.count = count;
	return 0;
}

int model_put_ban(struct model *m, const struct xdpban_key *key, const struct xdpban_ban *ban)
{
	struct model_slot *s;
	int err = table_get_or_add(&m->bans, key, &s);

	if (err)
		return err;
	s->value.ban = *ban;
	return 0;
}

int model_for_each_counter(const struct model *m, model_counter_fn fn, void *ctx)
{
	for (size_t i = 0; i < m->counters.nslots; i++) {
		const struct model_slot *s = &m->counters.slots[i];
		int ret = s->used ? fn(&s->key, &s->value.counter, ctx) : 0;

		if (ret)
			return ret;
	}
	return 0;
}

int model_for_each_ban(const struct model *m, model_ban_fn fn, void *ctx)
{
	for (size_t i = 0; i < m->bans.nslots; i++) {
		const struct model_slot *s = &m->bans.slots[i];
		int ret = s->used ? fn(&s->key, &s->value.ban, ctx) : 0;

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

/* The longest prefix holding the address; an entry whose time has come counts as no entry
 * (the trie answers with the longest match only, so a shorter one is not consulted). */
static __u32 policy_verdict(const struct model *m, __u8 family, const __u8 *addr, __u64 now)
{
	const struct model_prefix *best = NULL;

	for (size_t i = 0; i < m->npolicy; i++) {
		const struct model_prefix *p = &m->policy[i];

		if (p->family == family && prefix_match(addr, p->addr, p->plen) &&
		    (!best || p->plen > best->plen))
			best = p;
	}
	if (!best || (best->expires_ns && best->expires_ns <= now))
		return XDPBAN_POLICY_NONE;
	return best->verdict;
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
	key->prefixlen = cfg.v6_prefix;
	for (__u32 bit = 0; bit < cfg.v6_prefix; bit++)
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
	struct model_slot *s = table_find(&m->bans, key);

	*expired = 0;
	if (!s)
		return BAN_NONE;
	if (s->value.ban.expires_ns == 0 || s->value.ban.expires_ns > now)
		return BAN_ACTIVE;
	table_delete(&m->bans, s);
	*expired = 1;
	return BAN_NONE;
}

/* What counting did, for the caller to turn into stats and a status. */
struct count_result {
	__u32 new_count;
	bool over_limit;
	bool ban_created;
	bool table_full;
	bool event_sent;
	struct xdpban_ban ban;
};

static __u32 add_saturating(__u32 a, __u32 b)
{
	return a > 0xffffffffu - b ? 0xffffffffu : a + b;
}

/* Section 4: n errors of `classes` against key at now; a ban when the count passes the limit. */
static int count_errors(struct model *m, const struct xdpban_key *key, __u32 n, __u8 classes,
			__u8 reason, __u64 now, struct count_result *res)
{
	struct xdpban_config cfg;
	struct model_slot *cs, *bs;
	__u32 now_s = (__u32)(now / NS_PER_SEC);
	bool fresh;
	int err;

	memset(res, 0, sizeof(*res));
	model_effective_config(m, &cfg);
	fresh = !table_find(&m->counters, key);
	err = table_get_or_add(&m->counters, key, &cs);
	if (err)
		return err;
	if (fresh || now_s - cs->value.counter.start_s >= cfg.window_s) {
		cs->value.counter.start_s = now_s;
		cs->value.counter.count = n;
	} else {
		cs->value.counter.count = add_saturating(cs->value.counter.count, n);
	}
	res->new_count = cs->value.counter.count;
	if (res->new_count <= cfg.limit)
		return 0;

	res->over_limit = true;
	err = table_get_or_add(&m->bans, key, &bs);
	if (err == -E2BIG) {
		res->table_full = true; /* the counter keeps its count */
		return 0;
	}
	if (err)
		return err;
	bs->value.ban = (struct xdpban_ban){
		.start_ns = now,
		.expires_ns = now + (__u64)cfg.ban_s * NS_PER_SEC,
		.count = res->new_count,
		.reason = reason,
		.classes = classes,
	};
	res->ban = bs->value.ban;
	res->ban_created = true;
	res->event_sent = m->events_room > 0;
	if (res->event_sent && m->events_room != MODEL_EVENTS_UNLIMITED)
		m->events_room--;
	cs->value.counter.start_s = now_s; /* the source starts over when the ban ends */
	cs->value.counter.count = 0;
	return 0;
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

/* Stages 2 to 7 for a packet with a known source. */
static int attributed_packet(struct model *m, const struct xdpban_config *cfg, __u64 now,
			     struct model_verdict *v)
{
	struct count_result res;
	__u32 verdict = policy_verdict(m, v->parsed.family, v->parsed.src, now);
	__u8 classes;
	int err;

	if (verdict == XDPBAN_POLICY_TRUSTED) {
		set_verdict(v, XDPBAN_STAT_PASSED_TRUSTED);
		return 0;
	}
	if (verdict == XDPBAN_POLICY_DENY) {
		set_verdict(v, XDPBAN_STAT_DROP_DENY);
		return 0;
	}

	model_key(m, v->parsed.family, v->parsed.src, &v->key);
	if (check_ban(m, &v->key, now, &v->events[XDPBAN_STAT_BANS_EXPIRED]) == BAN_ACTIVE) {
		set_verdict(v, XDPBAN_STAT_DROP_BANNED);
		return 0;
	}

	classes = (v->parsed.malformed ? XDPBAN_CLASS_MALFORMED : 0) & cfg->class_mask;
	if (!classes) {
		set_verdict(v, XDPBAN_STAT_PASSED);
		return 0;
	}

	err = count_errors(m, &v->key, 1, classes, XDPBAN_REASON_ERRORS, now, &res);
	if (err)
		return err;
	v->counted = true;
	v->new_count = res.new_count;
	v->events[XDPBAN_STAT_ERRORS] = 1;
	v->events[XDPBAN_STAT_BANS_CREATED] = res.ban_created;
	v->events[XDPBAN_STAT_BAN_TABLE_FULL] = res.table_full;
	v->events[XDPBAN_STAT_EVENTS_LOST] = res.ban_created && !res.event_sent;
	v->ban_created = res.ban_created;
	v->event_sent = res.event_sent;
	v->ban = res.ban;
	set_verdict(v, error_verdict(cfg, classes));
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
	else if (out->parsed.kind == MODEL_FRAME_UNATTRIBUTED)
		set_verdict(out, unattributed_verdict(&cfg));
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
	struct xdpban_config cfg;
	struct count_result res;
	__u32 verdict, expired;
	int err;

	memset(out, 0, sizeof(*out));
	model_effective_config(m, &cfg);
	if ((family != XDPBAN_FAMILY_INET && family != XDPBAN_FAMILY_INET6) || count == 0) {
		out->status = XDPBAN_REPORT_INVALID;
		return 0;
	}
	verdict = policy_verdict(m, family, addr, now_ns);
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
	err = count_errors(m, &out->key, count, XDPBAN_CLASS_REPORTED, XDPBAN_REASON_REPORTED,
			   now_ns, &res);
	if (err)
		return err;
	report_stats(m, count, &res, expired);
	out->status = report_status(&res);
	out->new_count = res.new_count;
	out->ban_created = res.ban_created;
	out->event_sent = res.event_sent;
	out->ban = res.ban;
	return 0;
}
