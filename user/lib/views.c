/* views.c - the mappings of the mmapable maps a compile writes (the flat tables and the line
 * slots), kept from one compile to the next for a process that asks (xb_maps_keep_views).
 * Why: on this kind of VM the first store into each page of a fresh
 * mapping costs about 10 us, so a compile that maps a 288 MiB slot array afresh pays 0.7 s
 * before it writes anything; a mapping kept pays it once. Used by one thread at a time, as a
 * compile is.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "views.h"

#define VIEWS_MAX 8 /* the flat tables and line slots of both families, with room */

struct xb_map_views {
	struct view {
		int fd;
		__u32 id; /* the map's id: an fd number reused for another map is not it */
		size_t len;
		void *p;
	} v[VIEWS_MAX];
	int n;
};

int xb_maps_keep_views(struct xb_maps *m)
{
	if (m->views)
		return 0;
	m->views = calloc(1, sizeof(*m->views));
	return m->views ? 0 : -ENOMEM;
}

void xb_maps_drop_views(struct xb_maps *m)
{
	struct xb_map_views *vs = m->views;

	if (!vs)
		return;
	for (int i = 0; i < vs->n; i++)
		munmap(vs->v[i].p, vs->v[i].len);
	free(vs);
	m->views = NULL;
}

static __u32 map_id(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

static void *map_fresh(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

void *xb_map_view(struct xb_map_views *vs, int fd, size_t len)
{
	__u32 id = vs ? map_id(fd) : 0;
	struct view *slot = NULL;

	if (!id)
		return map_fresh(fd, len);
	for (int i = 0; i < vs->n; i++) {
		struct view *v = &vs->v[i];

		if (v->fd == fd && v->id == id && v->len == len)
			return v->p;
		if (v->fd == fd && !slot) { /* that fd holds another map now */
			munmap(v->p, v->len);
			slot = v;
		}
	}
	if (!slot && vs->n == VIEWS_MAX)
		return map_fresh(fd, len);
	if (!slot)
		slot = &vs->v[vs->n++];
	*slot = (struct view){ .fd = fd, .id = id, .len = len, .p = map_fresh(fd, len) };
	if (!slot->p) {
		*slot = vs->v[--vs->n]; /* no view: the last one takes its place */
		return NULL;
	}
	return slot->p;
}

void xb_map_unview(struct xb_map_views *vs, void *p, size_t len)
{
	for (int i = 0; vs && i < vs->n; i++)
		if (vs->v[i].p == p)
			return;
	munmap(p, len);
}
