/* deep6.c - the IPv6 hash past the flat table (include/xdpban_deep6.h) while the data path
 * reads it: xdpban_deep6 holds the entries of xdpban_policy6, xdpban_deep6_lens (mapped) the
 * lengths present and whether the hash is in force. policy.c calls it after every change of
 * the IPv6 trie. The rule: while the state says EXACT, the hash holds what the trie holds; a
 * length's bit is set before an entry of that length is written and cleared only after its
 * last entry is gone. A change that fails half-way takes the hash out of force (the trie then
 * answers, right and slower), and the next compile rebuilds it whole. Never writes a trie.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "policy_internal.h"

#define DELETE_CHUNK 4096u /* keys per delete batch of a rebuild */

int xb_deep6_open(struct xb_deep6 *d, const struct xb_maps *m)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	d->lens = NULL;
	d->fd = m->deep6;
	d->size = page > 0 ? (size_t)page : 4096;
	if (d->fd < 0 || m->deep6_lens < 0)
		return -EBADF;
	if (bpf_obj_get_info_by_fd(m->deep6_lens, &info, &len))
		return -errno;
	if (info.type != BPF_MAP_TYPE_ARRAY || info.value_size != sizeof(*d->lens) ||
	    info.max_entries != 1 || !(info.map_flags & BPF_F_MMAPABLE))
		return -EPROTO;
	p = mmap(NULL, d->size, PROT_READ | PROT_WRITE, MAP_SHARED, m->deep6_lens, 0);
	if (p == MAP_FAILED)
		return -errno;
	d->lens = p;
	return 0;
}

void xb_deep6_close(struct xb_deep6 *d)
{
	if (d->lens)
		munmap(d->lens, d->size);
	d->lens = NULL;
}

bool xb_deep6_in_force(const struct xb_deep6 *d)
{
	return d->lens && word_load(&d->lens->state) == XDPBAN_DEEP6_EXACT;
}

void xb_deep6_off(struct xb_deep6 *d)
{
	if (d->lens && word_load(&d->lens->state) != 0)
		word_store(&d->lens->state, 0);
}

/* The hash key of an IPv6 prefix: its trie key with the bits past the length cleared. */
static void deep6_key(const struct xb_prefix *p, struct xdpban_lpm6_key *key)
{
	__u32 words[4];

	memcpy(words, p->addr, sizeof(words));
	for (__u32 j = 0; j < 4; j++)
		words[j] &= xdpban_deep6_mask_word(p->plen, j);
	key->prefixlen = p->plen;
	memcpy(key->addr, words, sizeof(key->addr));
}

static void lens_add(__u64 present[XDPBAN_DEEP6_LEN_WORDS], __u32 plen)
{
	__u32 bit = xdpban_deep6_len_bit(plen);

	present[bit / 64] |= 1ull << (bit % 64);
}

static int lens_count(const __u64 present[XDPBAN_DEEP6_LEN_WORDS])
{
	int n = 0;

	for (int w = 0; w < XDPBAN_DEEP6_LEN_WORDS; w++)
		n += __builtin_popcountll(present[w]);
	return n;
}

/* Stores the lengths present; with `widen`, only adds bits (the step before writes). */
static void lens_store(struct xb_deep6 *d, const __u64 present[XDPBAN_DEEP6_LEN_WORDS],
		       bool widen)
{
	for (int w = 0; w < XDPBAN_DEEP6_LEN_WORDS; w++) {
		__u64 now = word_load(&d->lens->present[w]), want = widen ? now | present[w]
									      : present[w];

		if (now != want)
			word_store(&d->lens->present[w], want);
	}
}

static void lens_of(const struct xb_entry_list *l, __u64 present[XDPBAN_DEEP6_LEN_WORDS])
{
	memset(present, 0, XDPBAN_DEEP6_LEN_WORDS * sizeof(*present));
	for (size_t i = 0; i < l->n; i++)
		lens_add(present, l->v[i].prefix.plen);
}

int xb_deep6_put(struct xb_deep6 *d, const struct xb_prefix *p, const struct xdpban_policy *val)
{
	__u64 present[XDPBAN_DEEP6_LEN_WORDS] = {};
	struct xdpban_lpm6_key key;

	if (!xb_deep6_in_force(d))
		return 0;
	lens_add(present, p->plen);
	lens_store(d, present, true);
	if (lens_count(d->lens->present) > XDPBAN_DEEP6_LENGTHS_MAX) {
		xb_deep6_off(d);
		return 0;
	}
	deep6_key(p, &key);
	if (bpf_map_update_elem(d->fd, &key, val, BPF_ANY)) {
		int ret = -errno;

		xb_deep6_off(d);
		return ret;
	}
	return 0;
}

int xb_deep6_delete(struct xb_deep6 *d, const struct xb_prefix *p)
{
	struct xdpban_lpm6_key key;

	if (!xb_deep6_in_force(d))
		return 0;
	deep6_key(p, &key);
	if (bpf_map_delete_elem(d->fd, &key) && errno != ENOENT) {
		int ret = -errno;

		xb_deep6_off(d);
		return ret;
	}
	/* The length's bit stays until the next compile: a probe too many, never a miss. */
	return 0;
}

/* Writes (or deletes) n entries. */
static int apply(struct xb_deep6 *d, const struct xb_policy_entry *v, size_t n, bool write)
{
	for (size_t i = 0; i < n; i++) {
		struct xdpban_lpm6_key key;

		deep6_key(&v[i].prefix, &key);
		if (write ? bpf_map_update_elem(d->fd, &key, &v[i].policy, BPF_ANY)
			  : bpf_map_delete_elem(d->fd, &key) && errno != ENOENT)
			return -errno;
	}
	return 0;
}

/* Empties the hash (out of force: no reader looks). */
static int clear(struct xb_deep6 *d)
{
	struct xdpban_lpm6_key keys[DELETE_CHUNK];
	int ret = 0;

	for (;;) {
		__u32 n = 0;
		void *prev = NULL;

		while (n < DELETE_CHUNK && !bpf_map_get_next_key(d->fd, prev, &keys[n])) {
			prev = &keys[n];
			n++;
		}
		if (n == 0)
			return errno == ENOENT ? 0 : -errno;
		for (__u32 i = 0; i < n && !ret; i++)
			if (bpf_map_delete_elem(d->fd, &keys[i]) && errno != ENOENT)
				ret = -errno;
		if (ret)
			return ret;
	}
}

void xb_deep6_begin(struct xb_deep6 *d, const struct xb_plan *p)
{
	__u64 adds[XDPBAN_DEEP6_LEN_WORDS];

	if (!xb_deep6_in_force(d))
		return;
	lens_of(&p->write, adds);
	lens_store(d, adds, true);
	if (lens_count(d->lens->present) > XDPBAN_DEEP6_LENGTHS_MAX)
		xb_deep6_off(d);
}

void xb_deep6_follow(struct xb_deep6 *d, const struct xb_policy_entry *v, size_t n, bool write)
{
	if (xb_deep6_in_force(d) && apply(d, v, n, write))
		xb_deep6_off(d);
}

int xb_deep6_end(struct xb_deep6 *d, const struct xb_plan *p)
{
	__u64 next[XDPBAN_DEEP6_LEN_WORDS];
	int ret;

	if (!d->lens)
		return -EBADF;
	lens_of(&p->next, next);
	if (lens_count(next) > XDPBAN_DEEP6_LENGTHS_MAX) {
		xb_deep6_off(d);
		return 0;
	}
	if (xb_deep6_in_force(d)) {
		lens_store(d, next, false); /* the lengths that went have no entry left */
		return 0;
	}
	/* Out of force the hash may hold anything: rebuilt whole, then put in force. */
	ret = clear(d);
	if (!ret)
		ret = apply(d, p->next.v, p->next.n, true);
	if (ret)
		return ret;
	lens_store(d, next, false);
	word_store(&d->lens->state, XDPBAN_DEEP6_EXACT);
	return 0;
}
