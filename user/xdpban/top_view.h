/* top_view.h - the views of one frame of `xdpban top` (top_view.c): the full screen's lines,
 * the plain line per interval and the JSON object. Pure: they draw what the model
 * (top_model.h) holds and read nothing else. */
#ifndef XDPBAN_TOP_VIEW_H
#define XDPBAN_TOP_VIEW_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include "top_model.h"

/* What the full view shows besides the frame. */
struct top_view {
	const struct top_frame *frame; /* NULL: none yet */
	time_t wall;
	unsigned int interval_s;
	enum top_sort sort;
	bool paused;
	bool keys;          /* the line of keys (on a terminal) */
	const char *notice; /* NULL, or a line under the header: what happened to the maps */
	bool waiting;       /* no maps to read: no frame is coming until they are back */
	/* The terminal's size: the lines fit in it, the sources table taking the rows the rest
	 * leaves. 0: no limit (--once). */
	unsigned int width, height;
};
typedef void (*top_line_cb)(const char *line, bool bold, void *ctx);
/* The lines of the full view, one cb call each, none wider than v->width (the widest
 * addresses aside) and no more than v->height. */
void top_view_lines(const struct top_view *v, top_line_cb cb, void *ctx);
/* One line per interval, when stdout is not a terminal. */
void top_view_plain(const struct top_frame *f, time_t wall, FILE *out);
struct json_object *top_view_json(const struct top_frame *f, time_t wall);

#endif /* XDPBAN_TOP_VIEW_H */
