/* banfilter.c - see banfilter.h. The counters are shared with the data path through mmap, so
 * every change is one atomic operation on that memory, never a read-modify-write of the map. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "banfilter.h"
#include "xdpban_banfilter.h"

int xb_banfilter_open(struct xb_banfilter *bf, int filter_fd, int bans_fd)
{
	struct bpf_map_info info = {};
	__u32 info_len = sizeof(info);
	long page = sysconf(_SC_PAGESIZE);
	void *mem;

	memset(bf, 0, sizeof(*bf));
	if (bpf_obj_get_info_by_fd(filter_fd, &info, &info_len))
		return -errno;
	if (info.max_entries != XDPBAN_BANFILTER_SLOTS || info.value_size != sizeof(__u64))
		return -EINVAL; /* a map of another layout: refuse rather than corrupt it */
	bf->len = ((size_t)info.max_entries * sizeof(__u64) + page - 1) / page * page;
	mem = mmap(NULL, bf->len, PROT_READ | PROT_WRITE, MAP_SHARED, filter_fd, 0);
	if (mem == MAP_FAILED)
		return -errno;
	bf->slots = mem;
	bf->bans_fd = bans_fd;
	return 0;
}

void xb_banfilter_close(struct xb_banfilter *bf)
{
	if (bf->slots)
		munmap(bf->slots, bf->len);
	memset(bf, 0, sizeof(*bf));
}

static void slot_get(const struct xb_banfilter *bf, const struct xdpban_key *key)
{
	__atomic_fetch_add(&bf->slots[xdpban_banfilter_slot(key)], 1, __ATOMIC_SEQ_CST);
}

static void slot_put(const struct xb_banfilter *bf, const struct xdpban_key *key)
{
	__u64 *slot = &bf->slots[xdpban_banfilter_slot(key)];
	__u64 old = __atomic_load_n(slot, __ATOMIC_SEQ_CST);

	while (old && !__atomic_compare_exchange_n(slot, &old, old - 1, false, __ATOMIC_SEQ_CST,
						   __ATOMIC_SEQ_CST))
		;
}

int xb_ban_insert(const struct xb_banfilter *bf, const struct xdpban_key *key,
		  const struct xdpban_ban *ban, __u64 flags)
{
	struct xdpban_ban old;
	int err;

	/* Replacing an existing ban does not change how many bans the slot counts. */
	if (flags != BPF_NOEXIST && bpf_map_lookup_elem(bf->bans_fd, key, &old) == 0) {
		if (bpf_map_update_elem(bf->bans_fd, key, ban, BPF_EXIST) == 0)
			return 0;
		if (errno != ENOENT)
			return -errno;
		/* deleted in between (expired on the wire): insert it afresh below */
	}
	if (flags == BPF_EXIST)
		return -ENOENT;
	slot_get(bf, key);
	if (bpf_map_update_elem(bf->bans_fd, key, ban, BPF_NOEXIST)) {
		err = -errno;
		slot_put(bf, key);
		return err;
	}
	return 0;
}

int xb_ban_remove(const struct xb_banfilter *bf, const struct xdpban_key *key)
{
	if (bpf_map_delete_elem(bf->bans_fd, key))
		return -errno;
	slot_put(bf, key);
	return 0;
}
