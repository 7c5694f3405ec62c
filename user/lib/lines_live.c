/* lines_live.c - what the two writers of live lines share (flat_live.c, the IPv4 level-3 lines in
 * xdpban_flat4x; flat6_live.c, the IPv6 lines in xdpban_flat6x): an array of line slots mapped
 * for writing, the guard turned back so that the data path reads no line (rule 3 of
 * flat_live.c), and the grace period before a deleted slot is written again (rule 4). Knows no
 * line's layout and decides nothing: the writers above it say when each step runs. Never
 * writes a trie, a code or a line.
 */
#include <errno.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "flat.h"
#include "lines_live.h"
#include "views.h"

int xb_slots_map(struct xb_map_views *vs, int fd, size_t value_size, void **slots, __u32 *n)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	void *p;

	*slots = NULL;
	*n = 0;
	if (fd < 0)
		return -EBADF;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.type != BPF_MAP_TYPE_ARRAY || info.value_size != value_size ||
	    !(info.map_flags & BPF_F_MMAPABLE) || !info.max_entries)
		return -EPROTO;
	p = xb_map_view(vs, fd, (size_t)info.max_entries * value_size);
	if (!p)
		return -errno;
	*slots = p;
	*n = info.max_entries;
	return 0;
}

void xb_slots_unmap(struct xb_map_views *vs, void **slots, __u32 *n, size_t value_size)
{
	if (*slots)
		xb_map_unview(vs, *slots, (size_t)*n * value_size);
	*slots = NULL;
	*n = 0;
}

void xb_lines_disable(struct xb_flat *t)
{
	if (word_load(&t->words[XDPBAN_FLAT_GUARD]) == XDPBAN_FLAT_COMPILED_L3)
		word_store(&t->words[XDPBAN_FLAT_GUARD], XDPBAN_FLAT_COMPILED);
}

/* The kernel runs synchronize_rcu() after a userspace update
 * of a map-in-map slot (maybe_wait_bpf_programs() in kernel/bpf/syscall.c), so that it can
 * promise no program still uses the old value. Rule 4 borrows that promise. */
int xb_rcu_wait(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	__u32 zero = 0;
	int inner, outer, ret = 0;

	inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, sizeof(__u32), sizeof(__u32), 1, NULL);
	if (inner < 0)
		return -errno;
	opts.inner_map_fd = inner;
	outer = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, NULL, sizeof(__u32), sizeof(__u32), 1,
			       &opts);
	if (outer < 0 || bpf_map_update_elem(outer, &zero, &inner, BPF_ANY))
		ret = -errno;
	if (outer >= 0)
		close(outer);
	close(inner);
	return ret;
}
