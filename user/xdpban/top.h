/* top.h - `xdpban top` (top.c): the command, its options, and the views of a frame
 * (top_view.c) over the pure model (top_model.h).
 */
#ifndef XDPBAN_TOP_H
#define XDPBAN_TOP_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include "cli.h"
#include "top_model.h"

struct top_args {
	__u32 interval_s; /* 0: the default, 1 s */
	__u32 count;      /* 0: the default */
	const char *sort;
	bool once;
	bool json;
};
extern const struct param top_params[];
int do_top(const struct cli *cli, const void *args);

/* What the full view shows besides the frame. */
struct top_view {
	const struct top_frame *frame; /* NULL: none yet */
	time_t wall;
	unsigned int interval_s;
	enum top_sort sort;
	bool paused;
	bool keys; /* the line of keys (on a terminal) */
};
typedef void (*top_line_cb)(const char *line, bool bold, void *ctx);
/* The lines of the full view, one cb call each. */
void top_view_lines(const struct top_view *v, top_line_cb cb, void *ctx);
/* One line per interval, when stdout is not a terminal. */
void top_view_plain(const struct top_frame *f, time_t wall, FILE *out);
struct json_object *top_view_json(const struct top_frame *f, time_t wall);

#endif /* XDPBAN_TOP_H */
