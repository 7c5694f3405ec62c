/* table.c - see table.h. Every change is a compare-and-swap or an ordered store on the memory
 * the data path reads, in the order include/xdpban_table.h prescribes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "libxdpban.h"
#include "table.h"

static size_t page_round(size_t bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (bytes + page - 1) / page * page;
}

/* Maps the whole of an mmapable array whose values are `value_size` bytes. The kernel lays
 * an array's values out 8-byte aligned, so only a multiple of 8 is laid out as a C array. */
int xb_array_map(int fd, size_t value_size, void **mem, size_t *len, __u32 *entries)
{
	struct bpf_map_info info = {};
	__u32 info_len = sizeof(info);
	void *p;

	if (bpf_obj_get_info_by_fd(fd, &info, &info_len))
		return -errno;
	if (value_size % 8 || info.type != BPF_MAP_TYPE_ARRAY || info.value_size != value_size ||
	    !(info.map_flags & BPF_F_MMAPABLE) || info.max_entries == 0)
		return -EPROTO;
	*len = page_round((size_t)info.max_entries * value_size);
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	*mem = p;
	*entries = info.max_entries;
	return 0;
}

int xb_table_map(struct xb_table *t, int fd)
{
	void *mem;
	int ret;

	memset(t, 0, sizeof(*t));
	ret = xb_array_map(fd, sizeof(struct xdpban_group), &mem, &t->len, &t->n);
	if (ret)
		return ret;
	t->groups = mem;
	return 0;
}

void xb_table_unmap(struct xb_table *t)
{
	if (t->groups && t->len)
		munmap(t->groups, t->len);
	memset(t, 0, sizeof(*t));
}

int xb_seed_get(int seed_fd, __u64 *seed)
{
	__u64 *word, fresh = 0;
	size_t len;
	__u32 n;
	int ret = xb_array_map(seed_fd, sizeof(__u64), (void **)&word, &len, &n);

	if (ret)
		return ret;
	*seed = __atomic_load_n(word, __ATOMIC_SEQ_CST);
	while (*seed == 0) {
		if (getrandom(&fresh, sizeof(fresh), 0) != sizeof(fresh)) {
			ret = -errno;
			break;
		}
		if (fresh == 0)
			continue;
		/* Whoever comes first, the data path or we, chooses it for good. */
		__sync_val_compare_and_swap(word, 0, fresh);
		*seed = __atomic_load_n(word, __ATOMIC_SEQ_CST);
	}
	munmap(word, len);
	return ret;
}

/* ---- bans ---- */

int xb_bans_open(struct xb_bans *b, int bans_fd, int idx_fd, int info_fd, int seed_fd)
{
	__u32 n;
	int ret;

	memset(b, 0, sizeof(*b));
	ret = xb_table_map(&b->tab, bans_fd);
	if (!ret)
		ret = xb_array_map(idx_fd, sizeof(__u64), (void **)&b->tab.idx, &b->tab.idx_len,
				   &n);
	if (!ret && n < b->tab.n)
		ret = -EPROTO; /* the index must have a word for every group */
	if (!ret)
		ret = xb_array_map(info_fd, sizeof(struct xdpban_ban_info), (void **)&b->info,
				   &b->info_len, &n);
	if (!ret && n < b->tab.n * XDPBAN_GROUP_SLOTS)
		ret = -EPROTO; /* the cold data must have a record for every slot */
	if (!ret)
		ret = xb_seed_get(seed_fd, &b->seed);
	if (ret)
		xb_bans_close(b);
	return ret;
}

void xb_bans_init(struct xb_bans *b, struct xdpban_group *groups, __u32 n, __u64 *idx,
		  struct xdpban_ban_info *info, __u64 seed)
{
	memset(b, 0, sizeof(*b));
	b->tab.groups = groups;
	b->tab.n = n;
	b->tab.idx = idx;
	b->info = info;
	b->seed = seed;
}

void xb_bans_close(struct xb_bans *b)
{
	if (b->tab.idx && b->tab.idx_len)
		munmap(b->tab.idx, b->tab.idx_len);
	xb_table_unmap(&b->tab);
	if (b->info && b->info_len)
		munmap(b->info, b->info_len);
	memset(b, 0, sizeof(*b));
}

__u32 xb_bans_overflow(const struct xb_bans *b, __u32 gi)
{
	return (__u32)((__atomic_load_n(&b->tab.idx[gi], __ATOMIC_SEQ_CST) & XDPBAN_IDX_OVF_MASK) >>
		       XDPBAN_IDX_OVF_SHIFT);
}

__u32 xb_bans_tag(const struct xb_bans *b, __u32 gi, __u32 i)
{
	return XDPBAN_IDX_TAG(__atomic_load_n(&b->tab.idx[gi], __ATOMIC_SEQ_CST), i);
}

int xb_bans_of(struct xb_bans *b, const struct xb_maps *m, char *err, size_t errlen)
{
	int ret;

	if (m->mapped) { /* lent: the lengths at 0 keep xb_bans_close off it */
		*b = m->mapped->bans;
		b->tab.len = b->tab.idx_len = b->info_len = 0;
		return 0;
	}
	ret = xb_bans_open(b, m->bans, m->banidx, m->baninfo, m->seed);

	if (ret)
		snprintf(err, errlen, "cannot map the ban table %s: %s", XDPBAN_MAP_NAME(xdpban_bans),
			 ret == -EPROTO ? "it is not a table of this version" : strerror(-ret));
	return ret;
}

/* The drops of the ban whose slot has index and ctl: the CPUs' words of its generation. */
static __u64 drops_sum(const struct xb_ban_drops *d, __u32 index, __u64 ctl)
{
	__u64 sum = 0;

	for (int c = 0; index < d->slots && c < d->ncpus; c++)
		sum += xdpban_drops_of(d->words[(size_t)index * d->ncpus + c], ctl);
	return sum;
}

#define DROPS_BATCH 4096 /* slots a batch lookup reads at once */

/* Reads every slot's words of the per-CPU array fd, in batches. 0 or -errno. */
static int drops_read(int fd, size_t slots, struct xb_ban_drops *d)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 keys[DROPS_BATCH], out_batch = 0, count;
	size_t done = 0;
	int ret = 0;

	d->ncpus = libbpf_num_possible_cpus();
	d->slots = slots;
	d->words = d->ncpus > 0 ? calloc(slots ? slots : 1, (size_t)d->ncpus * sizeof(__u64)) : NULL;
	if (!d->words)
		return d->ncpus < 0 ? d->ncpus : -ENOMEM;
	while (done < slots) {
		count = (__u32)(slots - done < DROPS_BATCH ? slots - done : DROPS_BATCH);
		ret = bpf_map_lookup_batch(fd, done ? &out_batch : NULL, &out_batch, keys,
					   d->words + done * d->ncpus, &count, &opts);
		done += count;
		if (ret == -ENOENT || (!ret && !count))
			return 0; /* the last batch */
		if (ret)
			break;
	}
	if (ret) {
		free(d->words);
		d->words = NULL;
	}
	return ret;
}

int xb_bans_get_in(const struct xb_maps *m, const struct xdpban_key *key,
		   struct xdpban_ban *out)
{
	char why[XB_ERRLEN];
	struct xb_bans b;
	int ret = xb_bans_of(&b, m, why, sizeof(why));

	if (ret)
		return ret;
	ret = xb_bans_get(&b, key, out);
	xb_bans_close(&b);
	return ret;
}

int xb_bans_walk_in(const struct xb_maps *m, xb_ban_entry_cb cb, void *ctx)
{
	char why[XB_ERRLEN];
	struct xb_bans b;
	int ret = xb_bans_of(&b, m, why, sizeof(why));

	if (ret)
		return ret;
	ret = xb_bans_walk(&b, cb, ctx);
	xb_bans_close(&b);
	return ret;
}

int xb_bans_walk_drops_in(const struct xb_maps *m, xb_ban_entry_cb cb, void *ctx)
{
	struct xb_ban_drops d = { 0 };
	char why[XB_ERRLEN];
	struct xb_bans b;
	int ret = xb_bans_of(&b, m, why, sizeof(why));

	if (ret)
		return ret;
	ret = drops_read(m->bandrops, xb_bans_slots(&b), &d);
	if (!ret) {
		b.drops = &d;
		ret = xb_bans_walk(&b, cb, ctx);
	}
	free(d.words);
	xb_bans_close(&b);
	return ret;
}

int xb_bans_drops_in(const struct xb_maps *m, const struct xdpban_key *key, __u64 *drops)
{
	int ncpus = libbpf_num_possible_cpus();
	struct xdpban_ban_ref ref = { 0 };
	struct xb_ban_drops d = { .slots = 1, .ncpus = ncpus };
	char why[XB_ERRLEN];
	struct xb_bans b;
	__u32 index;
	int ret;

	*drops = 0;
	if (ncpus < 0)
		return ncpus;
	ret = xb_bans_of(&b, m, why, sizeof(why));
	if (ret)
		return ret;
	if (xdpban_ban_find(&b.tab, b.tab.n, b.seed, key, &ref)) {
		d.words = calloc((size_t)ncpus, sizeof(__u64));
		index = xdpban_ban_info_index(&ref);
		if (!d.words)
			ret = -ENOMEM;
		else if (bpf_map_lookup_elem(m->bandrops, &index, d.words))
			ret = -errno;
		else
			*drops = drops_sum(&d, 0, ref.ctl);
	}
	free(d.words);
	xb_bans_close(&b);
	return ret;
}

size_t xb_bans_slots(const struct xb_bans *b)
{
	return (size_t)b->tab.n * XDPBAN_GROUP_SLOTS;
}

static struct xdpban_slot *ban_slot(const struct xb_bans *b, const struct xdpban_ban_ref *ref)
{
	return &b->tab.groups[ref->group].slot[ref->slot];
}

/* The whole ban behind a reference, read consistently: 0, or -EAGAIN if it changed. */
static int ban_read(const struct xb_bans *b, const struct xdpban_ban_ref *ref,
		    struct xdpban_ban *out)
{
	const struct xdpban_ban_info *info = &b->info[xdpban_ban_info_index(ref)];
	__u32 aux = xdpban_ctl_aux(ref->ctl);

	memset(out, 0, sizeof(*out));
	out->start_ns = __atomic_load_n(&info->start_ns, __ATOMIC_SEQ_CST);
	out->count = __atomic_load_n(&info->count, __ATOMIC_SEQ_CST);
	out->port = __atomic_load_n(&info->port, __ATOMIC_SEQ_CST);
	out->proto = __atomic_load_n(&info->proto, __ATOMIC_SEQ_CST);
	out->rule = __atomic_load_n(&info->rule, __ATOMIC_SEQ_CST);
	out->expires_ns = ref->expires_ns;
	out->reason = XDPBAN_BAN_AUX_REASON(aux);
	out->classes = XDPBAN_BAN_AUX_CLASSES(aux);
	out->drops = b->drops ? drops_sum(b->drops, xdpban_ban_info_index(ref), ref->ctl) : 0;
	return xdpban_ctl_same(ban_slot(b, ref), ref->ctl) ? 0 : -EAGAIN;
}

int xb_bans_get(const struct xb_bans *b, const struct xdpban_key *key, struct xdpban_ban *out)
{
	struct xdpban_ban_ref ref = { 0 };

	for (int tries = 0; tries < 8; tries++) {
		if (!xdpban_ban_find(&b->tab, b->tab.n, b->seed, key, &ref))
			return -ENOENT;
		if (ban_read(b, &ref, out) == 0)
			return 0;
	}
	return -EAGAIN;
}

static void info_write(const struct xb_bans *b, const struct xdpban_ban_ref *ref,
		       const struct xdpban_ban *ban)
{
	struct xdpban_ban_info *info = &b->info[xdpban_ban_info_index(ref)];

	__atomic_store_n(&info->start_ns, ban->start_ns, __ATOMIC_SEQ_CST);
	__atomic_store_n(&info->count, ban->count, __ATOMIC_SEQ_CST);
	__atomic_store_n(&info->port, ban->port, __ATOMIC_SEQ_CST);
	__atomic_store_n(&info->proto, ban->proto, __ATOMIC_SEQ_CST);
	__atomic_store_n(&info->rule, ban->rule, __ATOMIC_SEQ_CST);
}

/* Changes a present ban in place: the data path reads only the expiry, one word. */
static int ban_update(const struct xb_bans *b, struct xdpban_ban_ref *ref,
		      const struct xdpban_ban *ban)
{
	struct xdpban_slot *s = ban_slot(b, ref);
	__u64 next = xdpban_ctl_with_aux(ref->ctl, XDPBAN_BAN_AUX(ban->reason, ban->classes));

	info_write(b, ref, ban);
	__atomic_store_n(&s->val, ban->expires_ns, __ATOMIC_SEQ_CST);
	return xdpban_ctl_swap(s, ref->ctl, next) ? -EAGAIN : 0;
}

int xb_bans_put(const struct xb_bans *b, const struct xdpban_key *key,
		const struct xdpban_ban *ban, __u64 flags)
{
	struct xdpban_ban_ref ref = { 0 };

	for (int tries = 0; tries < 8; tries++) {
		if (xdpban_ban_find(&b->tab, b->tab.n, b->seed, key, &ref)) {
			if (flags == BPF_NOEXIST)
				return -EEXIST;
			if (ban_update(b, &ref, ban) == 0)
				return 0;
			continue; /* it changed (deleted or expired on the wire): look again */
		}
		if (flags == BPF_EXIST)
			return -ENOENT;
		if (xdpban_ban_claim(&b->tab, b->tab.n, b->seed, key, &ref))
			return -ENOSPC;
		info_write(b, &ref, ban);
		xdpban_ban_publish(&b->tab, &ref, key, ban->expires_ns,
				   XDPBAN_BAN_AUX(ban->reason, ban->classes));
		return 0;
	}
	return -EAGAIN;
}

int xb_bans_remove(const struct xb_bans *b, const struct xdpban_key *key)
{
	struct xdpban_ban_ref ref = { 0 };
	int removed = 0;

	/* More than one copy only if two writers raced to add the same ban. */
	for (int i = 0; i < XDPBAN_BAN_PROBE * XDPBAN_GROUP_SLOTS; i++) {
		if (!xdpban_ban_find(&b->tab, b->tab.n, b->seed, key, &ref))
			break;
		removed += xdpban_ban_delete(&b->tab, b->tab.n, b->seed, key, &ref);
	}
	return removed ? 0 : -ENOENT;
}

int xb_bans_remove_if(const struct xb_bans *b, const struct xdpban_key *key,
		      const struct xdpban_ban *seen)
{
	struct xdpban_ban_ref ref = { 0 };
	struct xdpban_ban now;

	if (!xdpban_ban_find(&b->tab, b->tab.n, b->seed, key, &ref))
		return -ENOENT;
	if (ban_read(b, &ref, &now) || memcmp(&now, seen, sizeof(now)))
		return -EAGAIN; /* changed since it was seen: leave it */
	return xdpban_ban_delete(&b->tab, b->tab.n, b->seed, key, &ref) ? 0 : -EAGAIN;
}

int xb_bans_walk(const struct xb_bans *b, xb_ban_entry_cb cb, void *ctx)
{
	for (__u32 gi = 0; gi < b->tab.n; gi++) {
		for (__u32 i = 0; i < XDPBAN_GROUP_SLOTS; i++) {
			struct xdpban_slot *s = &b->tab.groups[gi].slot[i];
			struct xdpban_ban_ref ref = { .group = gi, .slot = i };
			struct xdpban_key key;
			struct xdpban_ban ban;
			int ret;

			ref.ctl = __atomic_load_n(&s->ctl, __ATOMIC_SEQ_CST);
			if (xdpban_ctl_state(ref.ctl) != XDPBAN_SLOT_LIVE)
				continue;
			xdpban_slot_read_key(s, ref.ctl, &key);
			ref.expires_ns = __atomic_load_n(&s->val, __ATOMIC_SEQ_CST);
			if (ban_read(b, &ref, &ban))
				continue; /* changed while read: gone, or seen in its new form later */
			ret = cb(&key, &ban, ctx);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* ---- counters ---- */

int xb_counters_open(struct xb_counters *c, int counts_fd, int seed_fd)
{
	int ret;

	memset(c, 0, sizeof(*c));
	ret = xb_table_map(&c->tab, counts_fd);
	if (!ret)
		ret = xb_seed_get(seed_fd, &c->seed);
	if (ret)
		xb_counters_close(c);
	return ret;
}

int xb_counters_of(struct xb_counters *c, const struct xb_maps *m, char *err, size_t errlen)
{
	int ret;

	if (m->mapped) { /* lent: the length at 0 keeps xb_counters_close off it */
		*c = m->mapped->counters;
		c->tab.len = 0;
		return 0;
	}
	ret = xb_counters_open(c, m->counts, m->seed);

	if (ret)
		snprintf(err, errlen, "cannot map the counter table %s: %s",
			 XDPBAN_MAP_NAME(xdpban_counts),
			 ret == -EPROTO ? "it is not a table of this version" : strerror(-ret));
	return ret;
}

int xb_maps_map_tables(struct xb_maps *m, char *err, size_t errlen)
{
	struct xb_mapped *t = m->mapped ? NULL : calloc(1, sizeof(*t));
	int ret;

	if (m->mapped)
		return 0;
	if (!t) {
		snprintf(err, errlen, "cannot map the tables: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	ret = xb_bans_of(&t->bans, m, err, errlen);
	if (!ret) {
		ret = xb_counters_of(&t->counters, m, err, errlen);
		if (ret)
			xb_bans_close(&t->bans);
	}
	if (!ret && xb_maps_keep_views(m)) {
		snprintf(err, errlen, "cannot keep the policy maps mapped: %s", strerror(ENOMEM));
		xb_bans_close(&t->bans);
		xb_counters_close(&t->counters);
		ret = -ENOMEM;
	}
	if (ret) {
		free(t);
		return ret;
	}
	m->mapped = t;
	return 0;
}

void xb_maps_unmap_tables(struct xb_maps *m)
{
	xb_maps_drop_views(m);
	if (!m->mapped)
		return;
	xb_bans_close(&m->mapped->bans);
	xb_counters_close(&m->mapped->counters);
	free(m->mapped);
	m->mapped = NULL;
}

void xb_counters_init(struct xb_counters *c, struct xdpban_group *groups, __u32 n, __u64 seed)
{
	memset(c, 0, sizeof(*c));
	c->tab.groups = groups;
	c->tab.n = n;
	c->seed = seed;
}

void xb_counters_close(struct xb_counters *c)
{
	xb_table_unmap(&c->tab);
	memset(c, 0, sizeof(*c));
}

static void counter_from(__u64 ctl, __u64 val, __u32 now_s, struct xb_counter *out)
{
	__u32 aux = xdpban_ctl_aux(ctl);
	__u16 stamp_age = (__u16)(xdpban_stamp(now_s) - XDPBAN_CTR_AUX_STAMP(aux));

	memset(out, 0, sizeof(*out));
	out->count = XDPBAN_CTR_COUNT(val);
	out->start_s = now_s - xdpban_ctr_age(val, now_s);
	out->hop = XDPBAN_CTR_AUX_HOP(aux);
	out->flags = XDPBAN_CTR_AUX_FLAGS(aux) & ~XDPBAN_CTR_CLASSES_FLAGS;
	out->classes = XDPBAN_CTR_FLAGS_CLASSES(XDPBAN_CTR_AUX_FLAGS(aux));
	if (out->flags & XDPBAN_CTR_VERIFIED)
		out->stamp_s = (now_s >> XDPBAN_STAMP_SHIFT << XDPBAN_STAMP_SHIFT) -
			       ((__u32)stamp_age << XDPBAN_STAMP_SHIFT);
}

static struct xdpban_group *home_group(const struct xb_counters *c, const struct xdpban_key *key)
{
	if (!c->tab.n)
		return NULL;
	return &c->tab.groups[xdpban_key_home(c->seed, key, c->tab.n)];
}

int xb_counters_get(const struct xb_counters *c, const struct xdpban_key *key, __u32 now_s,
		    struct xb_counter *out)
{
	struct xdpban_group *g = home_group(c, key);
	struct xdpban_ctr_ref ref = { 0 };

	if (!g || !xdpban_ctr_find(g, key, &ref))
		return -ENOENT;
	counter_from(ref.ctl, ref.val, now_s, out);
	return 0;
}

int xb_counters_put(const struct xb_counters *c, const struct xdpban_key *key, __u32 now_s,
		    __u32 window_s, const struct xb_counter *in)
{
	struct xdpban_group *g = home_group(c, key);
	__u32 stamp = (in->flags & XDPBAN_CTR_VERIFIED) ? xdpban_stamp(in->stamp_s) : 0;
	__u32 aux = XDPBAN_CTR_AUX(in->hop,
				   (in->flags & ~XDPBAN_CTR_CLASSES_FLAGS) |
					   XDPBAN_CTR_CLASSES_FLAG(in->classes),
				   stamp);
	struct xdpban_ctr_ref ref = { 0 };
	int ret;

	if (!g)
		return -ENOSPC;
	for (int tries = 0; tries < 8; tries++) {
		if (!xdpban_ctr_find(g, key, &ref)) {
			struct xdpban_ctr_new nw = {
				.now_s = now_s, .window_s = window_s, .aux = aux,
				.verified = !!(in->flags & XDPBAN_CTR_VERIFIED),
			};

			ret = xdpban_ctr_insert(g, key, &nw, &ref);
			if (ret < 0)
				return -ENOSPC;
		}
		if (xdpban_ctr_set_aux(g, &ref, aux))
			continue;
		if (xdpban_ctr_swap(g, &ref, XDPBAN_CTR_PACK(in->start_s, XDPBAN_CTL_GEN2(ref.ctl),
							  in->count)) == 0)
			return 0;
	}
	return -EAGAIN;
}

int xb_counters_remove(const struct xb_counters *c, const struct xdpban_key *key)
{
	struct xdpban_group *g = home_group(c, key);
	struct xdpban_ctr_ref ref = { 0 };

	if (!g || !xdpban_ctr_find(g, key, &ref))
		return -ENOENT;
	return xdpban_ctl_swap(xdpban_ctr_slot(g, &ref), ref.ctl,
			       (ref.ctl & ~XDPBAN_CTL_STATE_MASK) | XDPBAN_SLOT_TOMB) ? -EAGAIN : 0;
}

int xb_counters_walk(const struct xb_counters *c, __u32 now_s, xb_counter_entry_cb cb, void *ctx)
{
	for (__u32 gi = 0; gi < c->tab.n; gi++) {
		for (__u32 i = 0; i < XDPBAN_GROUP_SLOTS; i++) {
			struct xdpban_slot *s = &c->tab.groups[gi].slot[i];
			__u64 ctl = __atomic_load_n(&s->ctl, __ATOMIC_SEQ_CST), val;
			struct xb_counter ctr;
			struct xdpban_key key;
			int ret;

			if (xdpban_ctl_state(ctl) != XDPBAN_SLOT_LIVE)
				continue;
			xdpban_slot_read_key(s, ctl, &key);
			val = __atomic_load_n(&s->val, __ATOMIC_SEQ_CST);
			if (!xdpban_ctl_same(s, ctl))
				continue;
			counter_from(ctl, val, now_s, &ctr);
			ret = cb(&key, &ctr, ctx);
			if (ret)
				return ret;
		}
	}
	return 0;
}

int xb_counters_get_in(const struct xb_maps *m, const struct xdpban_key *key, __u32 now_s,
		       struct xb_counter *out)
{
	char why[XB_ERRLEN];
	struct xb_counters c;
	int ret = xb_counters_of(&c, m, why, sizeof(why));

	if (ret)
		return ret;
	ret = xb_counters_get(&c, key, now_s, out);
	xb_counters_close(&c);
	return ret;
}

int xb_counters_walk_in(const struct xb_maps *m, __u32 now_s, xb_counter_entry_cb cb, void *ctx)
{
	char why[XB_ERRLEN];
	struct xb_counters c;
	int ret = xb_counters_of(&c, m, why, sizeof(why));

	if (ret)
		return ret;
	ret = xb_counters_walk(&c, now_s, cb, ctx);
	xb_counters_close(&c);
	return ret;
}
