/* load.c - see load.h. Pinned maps are checked before the load: a pinned table whose size
 * differs from the config keeps its size (sizes apply only when a map is created), and one
 * whose layout differs is refused with a message, rather than libbpf's bare -EINVAL. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "xdpban_config.h" /* before the skeleton: its .rodata holds the defaults */
#include "xdpban.skel.h"
#include "load.h"
#include "table.h"
#include "log.h"
#include "pin.h"
#include "xdpban_maps.h"

static int set_pin_paths(struct xdpban *skel, const char *dir)
{
	char path[PATH_MAX];
	struct bpf_map *map;
	int ret;

	bpf_object__for_each_map(map, skel->obj) {
		if (bpf_map__is_internal(map))
			continue;
		ret = xbd_pin_path(path, sizeof(path), dir, bpf_map__name(map));
		if (!ret)
			ret = bpf_map__set_pin_path(map, path);
		if (ret)
			return ret;
	}
	return 0;
}

/* The flat tables' size is their layout (xdpban_flat.h: where each level begins), and so is
 * the statistics array's (a row is a slot, xdpban_stats.h): a pin of another size is another
 * version's map, not a smaller one. */
static bool size_is_layout(const char *name)
{
	return !strcmp(name, XDPBAN_MAP_NAME(xdpban_flat4)) ||
	       !strcmp(name, XDPBAN_MAP_NAME(xdpban_flat6)) ||
	       !strcmp(name, XDPBAN_MAP_NAME(xdpban_stats));
}

/* A statistics pin of an older version: fewer rows, each where this layout has it (rows are
 * only ever added at the end, xdpban_stats.h). */
static bool older_stats(const char *name, const struct bpf_map_info *info,
			const struct bpf_map *map)
{
	return !strcmp(name, XDPBAN_MAP_NAME(xdpban_stats)) && info->max_entries > 0 &&
	       info->max_entries < bpf_map__max_entries(map);
}

/* Reads an older statistics pin's rows (every CPU's slot) into ld->carried and removes the
 * pin, so that the load creates the map of this layout; carry_stats_in writes them back. */
static int carry_stats_out(struct xbd_loader *ld, int fd, const char *path, __u32 rows,
			   char *err, size_t errlen)
{
	size_t row = (size_t)libbpf_num_possible_cpus() * sizeof(struct xdpban_stat_value);
	int ret = 0;

	ld->carried = calloc(rows, row);
	if (!ld->carried)
		return -ENOMEM;
	for (__u32 i = 0; i < rows && !ret; i++)
		if (bpf_map_lookup_elem(fd, &i, ld->carried + i * row))
			ret = -errno;
	if (!ret && unlink(path))
		ret = -errno;
	if (ret) {
		snprintf(err, errlen, "cannot carry the statistics of the older pin %s over: %s",
			 path, strerror(-ret));
		free(ld->carried);
		ld->carried = NULL;
		return ret;
	}
	ld->carried_rows = rows;
	return 0;
}

/* Writes the rows carry_stats_out read into the new statistics map. The packets the old
 * program counted between the two, until it is replaced, are not carried. */
static void carry_stats_in(struct xbd_loader *ld)
{
	size_t row = (size_t)libbpf_num_possible_cpus() * sizeof(struct xdpban_stat_value);
	int fd = bpf_map__fd(ld->skel->maps.xdpban_stats);

	for (__u32 i = 0; i < ld->carried_rows; i++)
		if (bpf_map_update_elem(fd, &i, ld->carried + i * row, BPF_ANY))
			pr_warn("cannot carry statistics row %u over: %s", i, strerror(errno));
	pr_info("%s: carried the %u rows of the older pin over to %u rows",
		XDPBAN_MAP_NAME(xdpban_stats), ld->carried_rows,
		bpf_map__max_entries(ld->skel->maps.xdpban_stats));
	free(ld->carried);
	ld->carried = NULL;
	ld->carried_rows = 0;
}

/* Maps whose whole content the daemon writes at every start: a pin of an older layout holds
 * nothing to keep, and is replaced (the configuration entry grew with the rules of limits). */
static bool rewritten_at_start(const char *name)
{
	return !strcmp(name, XDPBAN_MAP_NAME(xdpban_config));
}

/* Removes the pin of a map rewritten at start that has another layout, for the load to create
 * this version's; the program attached keeps the old map until this load's replaces it. */
static int replace_rewritten(const char *path, const char *name, bool *exists, char *err,
			     size_t errlen)
{
	*exists = false;
	if (unlink(path) && errno != ENOENT) {
		int ret = -errno;

		snprintf(err, errlen, "cannot remove pin %s of an older layout: %s", path,
			 strerror(errno));
		return ret;
	}
	pr_info("%s: the pin had another version's layout; replaced (its content is written at every start)",
		name);
	return 0;
}

/* Fits the object's map definition to an existing pin: the pinned size wins; a different
 * layout is an error, but for an older statistics layout, carried over, and for a map
 * rewritten at start, replaced. *exists tells whether there was a pin (kept). */
static int fit_to_pin(struct xbd_loader *ld, struct bpf_map *map, bool *exists, char *err,
		      size_t errlen)
{
	const char *path = bpf_map__pin_path(map), *name = bpf_map__name(map);
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd = bpf_obj_get(path), ret = 0;

	*exists = fd >= 0;
	if (fd < 0) {
		if (errno == ENOENT)
			return 0; /* created by the load */
		ret = -errno;
		snprintf(err, errlen, "cannot open pin %s: %s", path, strerror(errno));
		return ret;
	}
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.type != bpf_map__type(map) ||
	    info.key_size != bpf_map__key_size(map) ||
	    info.value_size != bpf_map__value_size(map) ||
	    info.map_flags != bpf_map__map_flags(map)) {
		ret = -EINVAL;
	} else if (older_stats(name, &info, map)) {
		ret = carry_stats_out(ld, fd, path, info.max_entries, err, errlen);
		close(fd);
		return ret;
	}
	if (ret || (size_is_layout(name) && info.max_entries != bpf_map__max_entries(map))) {
		if (rewritten_at_start(name)) {
			close(fd);
			return replace_rewritten(path, name, exists, err, errlen);
		}
		snprintf(err, errlen,
			 "pin %s is not this version's %s map; remove %s to start over (bans are kept in the state file)",
			 path, name, path);
		ret = -EINVAL;
	} else if (info.max_entries != bpf_map__max_entries(map)) {
		if (!strcmp(name, XDPBAN_MAP_NAME(xdpban_counts)) ||
		    !strcmp(name, XDPBAN_MAP_NAME(xdpban_bans)))
			pr_info("%s: the pinned table has %u entries, the config asks for %u; keeping %u (table sizes apply only when the maps are created)",
				name, info.max_entries, bpf_map__max_entries(map), info.max_entries);
		ret = bpf_map__set_max_entries(map, info.max_entries);
	}
	close(fd);
	return ret;
}

static int fit_all_to_pins(struct xbd_loader *ld, char *err, size_t errlen)
{
	struct bpf_map *map;
	bool exists, drops_pinned = false;
	int ret;

	bpf_object__for_each_map(map, ld->skel->obj) {
		if (bpf_map__is_internal(map))
			continue;
		ret = fit_to_pin(ld, map, &exists, err, errlen);
		if (ret)
			return ret;
		if (map == ld->skel->maps.xdpban_bans)
			ld->maps_created = !exists;
		if (map == ld->skel->maps.xdpban_bandrops)
			drops_pinned = exists;
	}
	/* A release before the drop counts left a ban table of its own size: the new array
	 * takes one word per slot of it. */
	if (drops_pinned)
		return 0;
	return bpf_map__set_max_entries(ld->skel->maps.xdpban_bandrops,
					bpf_map__max_entries(ld->skel->maps.xdpban_baninfo));
}

static int read_ids(struct xbd_loader *ld)
{
	struct bpf_map_info minfo = {};
	__u32 mlen = sizeof(minfo);

	if (bpf_obj_get_info_by_fd(bpf_map__fd(ld->skel->maps.xdpban_bans), &minfo, &mlen))
		return -errno;
	ld->bans_map_id = minfo.id;
	return 0;
}

int xbd_load(struct xbd_loader *ld, const struct xbd_conf *conf, struct xb_maps *maps,
	     char *err, size_t errlen)
{
	int ret;

	memset(ld, 0, sizeof(*ld));
	snprintf(ld->pin_dir, sizeof(ld->pin_dir), "%s", conf->pin_dir);
	ld->skel = xdpban__open();
	if (!ld->skel) {
		ret = -errno;
		snprintf(err, errlen, "cannot open the embedded BPF object: %s", strerror(errno));
		return ret;
	}
	ret = set_pin_paths(ld->skel, conf->pin_dir);
	if (!ret)
		ret = xb_tables_size(ld->skel, conf->counters_max, XDPBAN_BAN_GROUPS(conf->bans_max));
	if (!ret)
		ret = bpf_map__set_max_entries(ld->skel->maps.xdpban_flat4x,
						XDPBAN_FLAT_SLOTS(conf->policy_lines_max));
	if (!ret)
		ret = xb_lines6_size(ld->skel, conf->policy_lines6_max);
	if (ret) {
		snprintf(err, errlen, "cannot set up the maps: %s", strerror(-ret));
		goto fail;
	}
	ret = fit_all_to_pins(ld, err, errlen);
	if (ret)
		goto fail;
	/* The state object loads the report program only: the verifier takes about a second
	 * over xdpban, and the program xdpband attaches is the attachable instance's, which
	 * libxdp loads (xbd_load_prog_tag reads xdpban's tag when one is needed). */
	bpf_program__set_autoload(ld->skel->progs.xdpban, false);
	bpf_program__set_autoload(ld->skel->progs.xdpban_report, true);
	ret = xb_vlog_set(ld->skel->progs.xdpban_report, ld->vlog, sizeof(ld->vlog));
	if (!ret)
		ret = xdpban__load(ld->skel);
	if (ret) {
		xbd_load_failure("cannot load the BPF programs", "xdpban_report", ld->vlog, ret, err,
				 errlen);
		goto fail;
	}
	ret = read_ids(ld);
	if (ret) {
		snprintf(err, errlen, "cannot read the loaded program's info: %s", strerror(-ret));
		goto fail;
	}
	if (ld->carried)
		carry_stats_in(ld);
	xb_maps_from_skel(maps, ld->skel);
	ret = xb_maps_map_tables(maps, err, errlen); /* once: a ban or query maps nothing */
	if (ret)
		goto fail;
	ld->maps = maps;
	pr_info("maps %s under %s (%u counter slots, room for %u bans)",
		ld->maps_created ? "created and pinned" : "reused from the pins", ld->pin_dir,
		bpf_map__max_entries(ld->skel->maps.xdpban_counts) * XDPBAN_GROUP_SLOTS,
		bpf_map__max_entries(ld->skel->maps.xdpban_bans) * XDPBAN_GROUP_SLOTS / 2);
	return 0;
fail:
	free(ld->carried);
	ld->carried = NULL;
	xdpban__destroy(ld->skel);
	ld->skel = NULL;
	return ret;
}

void xbd_load_close(struct xbd_loader *ld)
{
	if (ld->maps)
		xb_maps_unmap_tables(ld->maps);
	ld->maps = NULL;
	xdpban__destroy(ld->skel); /* closes the fds; the pins keep the maps */
	ld->skel = NULL;
}

/* The pins of skel's maps (pin paths set), then the directory. */
static void unpin(struct xdpban *skel, const char *dir)
{
	int ret = skel ? bpf_object__unpin_maps(skel->obj, NULL) : 0;

	if (ret)
		pr_warn("cannot remove the pins under %s: %s", dir, strerror(-ret));
	if (rmdir(dir) && errno != ENOENT)
		pr_warn("cannot remove pin directory %s: %s", dir, strerror(errno));
}

void xbd_load_unpin(struct xbd_loader *ld)
{
	unpin(ld->skel, ld->pin_dir);
}

int xbd_load_unpin_dir(const char *dir, char *err, size_t errlen)
{
	struct xdpban *skel = xdpban__open(); /* not loaded: only the maps' names are needed */
	int ret = skel ? set_pin_paths(skel, dir) : -errno;

	if (ret) {
		snprintf(err, errlen, "cannot name the pins under %s: %s", dir, strerror(-ret));
	} else {
		unpin(skel, dir);
		pr_info("removed the pins under %s", dir);
	}
	xdpban__destroy(skel);
	return ret;
}

int xbd_load_pinned_bans_id(const char *dir, __u32 *id)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd, ret = xbd_pin_path(path, sizeof(path), dir, XDPBAN_MAP_NAME(xdpban_bans));

	if (ret)
		return ret;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	ret = bpf_obj_get_info_by_fd(fd, &info, &len) ? -errno : 0;
	*id = info.id;
	close(fd);
	return ret;
}

void xbd_load_failure(const char *what, const char *prog, const char *vlog, int ret, char *err,
		      size_t errlen)
{
	if (!xb_vlog_explain(prog, vlog, ret, err, errlen))
		snprintf(err, errlen, "%s: %s (run with -v for libbpf's log)", what, strerror(-ret));
}

struct xdpban *xbd_load_open_attachable(const struct xbd_loader *ld, char *vlog, char *err,
					 size_t errlen)
{
	struct xdpban *skel = xdpban__open();
	struct bpf_map *map, *loaded;
	int ret;

	if (!skel) {
		snprintf(err, errlen, "cannot open the embedded BPF object: %s", strerror(errno));
		return NULL;
	}
	ret = set_pin_paths(skel, ld->pin_dir);
	if (!ret)
		ret = xb_datapath_frags(skel); /* native attach above the driver's single-buffer MTU */
	if (!ret)
		ret = xb_vlog_set(skel->progs.xdpban, vlog, XB_VLOG_SIZE);
	/* Same sizes as the loaded state object, so that libbpf reuses every pinned map. */
	bpf_object__for_each_map(map, skel->obj) {
		loaded = bpf_object__find_map_by_name(ld->skel->obj, bpf_map__name(map));
		if (!ret && loaded && !bpf_map__is_internal(map))
			ret = bpf_map__set_max_entries(map, bpf_map__max_entries(loaded));
	}
	if (ret) {
		snprintf(err, errlen, "cannot set up the attachable object: %s", strerror(-ret));
		xdpban__destroy(skel);
		return NULL;
	}
	return skel;
}

int xbd_load_prog_tag(const struct xbd_loader *ld, __u8 tag[BPF_TAG_SIZE], char *err,
		      size_t errlen)
{
	static char vlog[XB_VLOG_SIZE];
	struct xdpban *skel = xbd_load_open_attachable(ld, vlog, err, errlen);
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int ret;

	if (!skel)
		return -EINVAL;
	ret = xdpban__load(skel);
	if (ret) {
		xbd_load_failure("cannot load the program to compare it with the one attached",
				 "xdpban", vlog, ret, err, errlen);
	} else if (bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.xdpban), &info, &len)) {
		ret = -errno;
		snprintf(err, errlen, "cannot read the loaded program's tag: %s", strerror(-ret));
	} else {
		memcpy(tag, info.tag, BPF_TAG_SIZE);
	}
	xdpban__destroy(skel);
	return ret;
}
