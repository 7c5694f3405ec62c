/* top.h - `xdpban top` (top.c): the command and its options. It draws with the views of a
 * frame (top_view.h) over the pure model (top_model.h).
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

#endif /* XDPBAN_TOP_H */
