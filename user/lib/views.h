/* views.h - the mappings of the mmapable maps a compile writes (the flat tables and the line
 * slots), kept from one compile to the next for a process that asks (views.c,
 * xb_maps_keep_views). Knows nothing of what the maps hold.
 */
#ifndef XB_VIEWS_H
#define XB_VIEWS_H

#include <stddef.h>
#include "libxdpban.h"

/* len bytes of the mmapable map fd, mapped for writing: vs's mapping of it when vs is not
 * NULL (made and kept on first use), else a fresh one. NULL with errno. */
void *xb_map_view(struct xb_map_views *vs, int fd, size_t len);
/* Unmaps p unless vs keeps it. */
void xb_map_unview(struct xb_map_views *vs, void *p, size_t len);

#endif /* XB_VIEWS_H */
