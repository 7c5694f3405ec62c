/* maps.c - opening the data path's pinned maps, checking that each pin really is the map the
 * contract in include/ describes, and walking a map with batch lookups. Never creates, pins or
 * unpins a map: that is the loader's job (xdpband or iproute2).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "libxdpban.h"
#include "table.h"
#include "xdpban_config.h" /* before the skeleton: its .rodata holds the defaults */
#include "xdpban.skel.h"

#define BATCH_ENTRIES 16384u /* entries per batch syscall: ~700 KiB of buffers for bans */
#define ENOTSUPP_ERRNO 524 /* the kernel-internal ENOTSUPP some map types return */

/* What a pinned map must look like, and where its fd goes in struct xb_maps. */
struct map_spec {
	const char *name;
	__u32 type;
	__u32 key_size, value_size; /* 0: not checked (ring buffer) */
	size_t fd_offset;
};

/* One spec per row of XDPBAN_MAPS. */
#define MAP_SPEC(name, field, kind, key_type, value_type, max)                                     \
	XDPBAN_KIND(kind, MAP_SPEC_AS, name, field, key_type, value_type)
#define MAP_SPEC_AS(map_type, flags, entries, name, field, key_type, value_type)                   \
	{ #name, map_type, ENTRY_SIZES_##entries(key_type, value_type),                            \
	  offsetof(struct xb_maps, field) },
#define ENTRY_SIZES_KV(key_type, value_type) sizeof(key_type), sizeof(value_type)
#define ENTRY_SIZES_NO_KV(key_type, value_type) 0, 0
static const struct map_spec map_specs[] = { XDPBAN_MAPS(MAP_SPEC) };

static int *map_fd_slot(struct xb_maps *m, const struct map_spec *spec)
{
	return (int *)((char *)m + spec->fd_offset);
}

static void maps_reset(struct xb_maps *m)
{
	for (size_t i = 0; i < sizeof(map_specs) / sizeof(map_specs[0]); i++)
		*map_fd_slot(m, &map_specs[i]) = -1;
	m->report_prog = -1;
	m->ncpus = 0;
	m->owned = false;
	m->mapped = NULL;
	m->ban_run = NULL;
	m->views = NULL;
}

/* A pin with the right name but another shape is refused rather than misread. */
static int check_map(int fd, const struct map_spec *spec, const char *path, char *err,
		     size_t errlen)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		int ret = -errno;

		snprintf(err, errlen, "%s: cannot read map info: %s", path, strerror(-ret));
		return ret;
	}
	if (info.type != spec->type ||
	    (spec->key_size && (info.key_size != spec->key_size ||
				info.value_size != spec->value_size))) {
		snprintf(err, errlen,
			 "%s is not the xdpban map it should be (type %u, key %u, value %u bytes)",
			 path, info.type, info.key_size, info.value_size);
		return -EPROTO;
	}
	return 0;
}

static int open_in_dir(struct xb_maps *m, const char *dir, char *err, size_t errlen)
{
	char path[512];
	int ret;

	for (size_t i = 0; i < sizeof(map_specs) / sizeof(map_specs[0]); i++) {
		const struct map_spec *spec = &map_specs[i];
		int fd;

		snprintf(path, sizeof(path), "%s/%s", dir, spec->name);
		fd = bpf_obj_get(path);
		if (fd < 0) {
			ret = -errno;
			snprintf(err, errlen, "cannot open pinned map %s: %s", path, strerror(-ret));
			return ret;
		}
		*map_fd_slot(m, spec) = fd;
		ret = check_map(fd, spec, path, err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}

static bool dir_has_config(const char *dir)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, XDPBAN_MAP_NAME(xdpban_config));
	return access(path, F_OK) == 0;
}

const char *xb_pin_dir_find(void)
{
	if (dir_has_config(XDPBAN_PIN_DIR_DEFAULT))
		return XDPBAN_PIN_DIR_DEFAULT;
	if (dir_has_config(XDPBAN_PIN_DIR_IPROUTE2))
		return XDPBAN_PIN_DIR_IPROUTE2;
	return NULL;
}

int xb_maps_open_pinned(struct xb_maps *m, const char *pin_dir, char *err, size_t errlen)
{
	int ret;

	maps_reset(m);
	m->owned = true;
	if (!pin_dir)
		pin_dir = xb_pin_dir_find();
	if (!pin_dir) {
		snprintf(err, errlen, "no xdpban maps pinned in %s or %s (is xdpban loaded?)",
			 XDPBAN_PIN_DIR_DEFAULT, XDPBAN_PIN_DIR_IPROUTE2);
		return -ENOENT;
	}
	ret = open_in_dir(m, pin_dir, err, errlen);
	if (ret) {
		xb_maps_close(m);
		return ret;
	}
	m->ncpus = libbpf_num_possible_cpus();
	if (m->ncpus < 0) {
		ret = m->ncpus;
		snprintf(err, errlen, "cannot count possible CPUs: %s", strerror(-ret));
		xb_maps_close(m);
		return ret;
	}
	return 0;
}

static int map_id(int fd, __u32 *id)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	*id = info.id;
	return 0;
}

/* A pin names the map it was made for until it is removed: only the id tells a new one. */
int xb_maps_pinned_same(const struct xb_maps *m, const char *pin_dir)
{
	char path[512];
	int ret = 0;

	for (size_t i = 0; i < sizeof(map_specs) / sizeof(map_specs[0]) && !ret; i++) {
		int held = *(const int *)((const char *)m + map_specs[i].fd_offset), pinned;
		__u32 held_id = 0, pinned_id = 0;

		snprintf(path, sizeof(path), "%s/%s", pin_dir, map_specs[i].name);
		pinned = bpf_obj_get(path);
		if (pinned < 0)
			return -errno;
		ret = map_id(held, &held_id);
		if (!ret)
			ret = map_id(pinned, &pinned_id);
		if (!ret && held_id != pinned_id)
			ret = -ESTALE;
		close(pinned);
	}
	return ret;
}

void xb_maps_close(struct xb_maps *m)
{
	xb_maps_unmap_tables(m);
	xb_ban_run_end(m);
	if (m->owned) {
		for (size_t i = 0; i < sizeof(map_specs) / sizeof(map_specs[0]); i++) {
			int fd = *map_fd_slot(m, &map_specs[i]);

			if (fd >= 0)
				close(fd);
		}
		if (m->report_prog >= 0)
			close(m->report_prog);
	}
	maps_reset(m);
}

/* The slow path, for map types without batch operations. */
static int foreach_next_key(int fd, size_t key_size, size_t value_size, xb_entry_cb cb,
			    void *ctx)
{
	void *key = calloc(2, key_size), *value = malloc(value_size);
	void *next = (char *)key + key_size;
	bool first = true;
	int ret = 0;

	if (!key || !value) {
		ret = -ENOMEM;
		goto out;
	}
	while (bpf_map_get_next_key(fd, first ? NULL : key, next) == 0) {
		first = false;
		memcpy(key, next, key_size);
		if (bpf_map_lookup_elem(fd, key, value))
			continue; /* deleted meanwhile */
		ret = cb(key, value, ctx);
		if (ret)
			goto out;
	}
	ret = errno == ENOENT ? 0 : -errno;
out:
	free(key);
	free(value);
	return ret;
}

static int batch_deliver(const char *keys, const char *values, __u32 n, size_t key_size,
			 size_t value_size, xb_entry_cb cb, void *ctx)
{
	for (__u32 i = 0; i < n; i++) {
		int ret = cb(keys + i * key_size, values + i * value_size, ctx);

		if (ret)
			return ret;
	}
	return 0;
}

static int batch_grow(char **keys, char **values, __u32 *capacity, size_t key_size,
		      size_t value_size)
{
	char *k = realloc(*keys, 2 * *capacity * key_size);
	char *v;

	if (!k)
		return -ENOMEM;
	*keys = k;
	v = realloc(*values, 2 * *capacity * value_size);
	if (!v)
		return -ENOMEM;
	*values = v;
	*capacity *= 2;
	return 0;
}

/* Sets *unsupported when the map type has no batch lookup (nothing was delivered then). */
static int foreach_batch(int fd, size_t key_size, size_t value_size, xb_entry_cb cb, void *ctx,
			 bool *unsupported)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 capacity = BATCH_ENTRIES, n;
	size_t token_size = key_size > 8 ? key_size : 8; /* hash: a bucket index; others: a key */
	char *keys = NULL, *values = NULL, *in = NULL, *out = NULL;
	bool first = true, done = false;
	int ret = 0, err;

	in = calloc(1, token_size);
	out = calloc(1, token_size);
	keys = malloc(capacity * key_size);
	values = malloc(capacity * value_size);
	if (!in || !out || !keys || !values) {
		ret = -ENOMEM;
		goto out;
	}
	while (!done) {
		n = capacity;
		err = bpf_map_lookup_batch(fd, first ? NULL : in, out, keys, values, &n, &opts);
		if (err == -ENOENT)
			done = true; /* the last (maybe empty) chunk */
		else if (err == -ENOSPC && n == 0) {
			/* a hash bucket holds more than capacity entries: grow and retry */
			ret = batch_grow(&keys, &values, &capacity, key_size, value_size);
			if (ret)
				goto out;
			continue;
		} else if (err) {
			*unsupported = first && (err == -EINVAL || err == -EOPNOTSUPP ||
						 err == -ENOTSUPP_ERRNO);
			ret = *unsupported ? 0 : err;
			goto out;
		}
		first = false;
		memcpy(in, out, token_size);
		ret = batch_deliver(keys, values, n, key_size, value_size, cb, ctx);
		if (ret)
			goto out;
	}
out:
	free(in);
	free(out);
	free(keys);
	free(values);
	return ret;
}

int xb_map_capacity(int fd, __u32 *max_entries)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	*max_entries = info.max_entries;
	return 0;
}

int xb_map_foreach(int fd, size_t key_size, size_t value_size, xb_entry_cb cb, void *ctx)
{
	bool unsupported = false;
	int ret = foreach_batch(fd, key_size, value_size, cb, ctx, &unsupported);

	if (unsupported)
		return foreach_next_key(fd, key_size, value_size, cb, ctx);
	return ret;
}

int xb_lines6_size(struct xdpban *skel, __u32 lines6_max)
{
	int ret = bpf_map__set_max_entries(skel->maps.xdpban_flat6x, XDPBAN_FLAT_SLOTS(lines6_max));

	/* As many hosts as lines: a host is read only at the end of its lines, and a sparse host
	 * takes up to five of them, so the lines run out first. */
	return ret ? ret : bpf_map__set_max_entries(skel->maps.xdpban_host6, lines6_max);
}

int xb_tables_size(struct xdpban *skel, __u32 counters_max, __u32 ban_groups)
{
	int ret = 0;

	if (counters_max)
		ret = bpf_map__set_max_entries(skel->maps.xdpban_counts,
					       XDPBAN_CTR_GROUPS(counters_max));
	if (!ret && ban_groups)
		ret = bpf_map__set_max_entries(skel->maps.xdpban_bans, ban_groups);
	if (!ret && ban_groups)
		ret = bpf_map__set_max_entries(skel->maps.xdpban_banidx, ban_groups);
	if (!ret && ban_groups)
		ret = bpf_map__set_max_entries(skel->maps.xdpban_baninfo,
					       ban_groups * XDPBAN_GROUP_SLOTS);
	if (!ret && ban_groups)
		ret = bpf_map__set_max_entries(skel->maps.xdpban_bandrops,
					       ban_groups * XDPBAN_GROUP_SLOTS);
	return ret;
}

int xb_datapath_frags(struct xdpban *skel)
{
	struct bpf_program *prog = skel->progs.xdpban;

	return bpf_program__set_flags(prog, bpf_program__flags(prog) | BPF_F_XDP_HAS_FRAGS);
}

void xb_maps_from_skel(struct xb_maps *m, const struct xdpban *skel)
{
#define FD_FROM_SKEL(name, field, ...) .field = bpf_map__fd(skel->maps.name),
	*m = (struct xb_maps){
		XDPBAN_MAPS(FD_FROM_SKEL)
		.report_prog = bpf_program__fd(skel->progs.xdpban_report),
		.ncpus = libbpf_num_possible_cpus(),
		.owned = false,
	};
#undef FD_FROM_SKEL
}
