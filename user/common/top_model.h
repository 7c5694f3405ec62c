/* top_model.h - the pure part of `xdpban top`: two snapshots of the data path make one frame
 * (rates per second, table fill, the sources ranked). No maps, no clock, no terminal: top.c
 * reads the snapshots, top_view.c draws the frames, tests/unit/test_top.c feeds it by hand.
 *
 * "Errors in the interval" of a source: its count now minus its count at the previous
 * snapshot when the same counting window was open then; its whole count now when it had no
 * counter then, or its window began since, or its count went down (a ban stored for it starts
 * its counter over: only the errors since are known). A ban's drop rate is the same for its
 * drop count: the drops since the previous snapshot's reading of the same ban (same key and
 * start), else all of them.
 */
#ifndef XDPBAN_TOP_MODEL_H
#define XDPBAN_TOP_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "xdpban_state.h"
#include "xdpban_stats.h"

enum top_sort {
	TOP_SORT_ERRORS, /* errors in the interval, most first */
	TOP_SORT_COUNT,  /* errors in the current window, most first */
	TOP_SORT_SOURCE, /* address, IPv4 first */
	TOP_SORT__COUNT,
};
const char *top_sort_name(enum top_sort s); /* "errors", "count", "source" */
int top_sort_parse(const char *text, enum top_sort *out); /* 0 or -EINVAL */

/* One source of the counter table, with an open window. */
struct top_source {
	struct xdpban_key key;
	__u32 count;   /* errors in its current window */
	__u32 start_s; /* CLOCK_BOOTTIME s when that window began */
	__u8 classes;  /* enum xdpban_class bits of those errors */
};

/* One unexpired ban of the ban table. */
struct top_ban {
	struct xdpban_key key;
	__u64 start_ns, expires_ns; /* CLOCK_BOOTTIME; expires_ns 0: permanent */
	__u32 count;                /* the errors that caused it (0 for manual bans) */
	__u8 reason;                /* enum xdpban_ban_reason */
	__u64 drops;                /* packets it dropped (or observed) since it began */
	double drop_rate;           /* per second over a frame's interval (top_frame_make) */
};

struct top_snapshot {
	__u64 time_ns; /* CLOCK_BOOTTIME when it was read */
	struct xdpban_stat_value stats[XDPBAN_STAT__MAX];
	__u32 counters_used, counters_max; /* live slots of the counter table, its slots */
	__u32 bans_used, bans_max;         /* unexpired bans, the bans the table is sized for */
	struct top_source *sources;        /* in key order after top_snapshot_finish */
	size_t n_sources, cap_sources;
	struct top_ban *bans;              /* the unexpired bans, in key order after finish */
	size_t n_bans, cap_bans;
};

/* 0 or -ENOMEM. */
int top_snapshot_add(struct top_snapshot *s, const struct top_source *src);
int top_snapshot_add_ban(struct top_snapshot *s, const struct top_ban *ban);
void top_snapshot_finish(struct top_snapshot *s); /* sorts the sources and bans by key */
void top_snapshot_free(struct top_snapshot *s);

struct top_row {
	struct top_source src;
	__u32 errors; /* in the interval */
	/* the ban state, filled in by the reader (top.c) for the rows it shows */
	bool banned;
	const char *ban_reason; /* "errors", "manual", "reported" */
	__s64 ban_left_s;       /* -1 permanent */
};

struct top_rate {
	double packets, bytes; /* per second */
};

struct top_frame {
	double seconds; /* between the two snapshots */
	struct top_rate rates[XDPBAN_STAT__MAX];
	__u32 counters_used, counters_max, bans_used, bans_max; /* of the later snapshot */
	size_t n_active;      /* sources ranked: those with errors in their window */
	struct top_row *rows; /* the first n_rows of the ranking */
	size_t n_rows;
	enum top_sort sort;
	__u64 time_ns;        /* of the later snapshot, for the bans' times */
	struct top_ban *bans; /* the first n_bans of the later snapshot's bans, the highest drop
			       * rate first (sources still sending), then newest first */
	size_t n_bans;
};

/* The reasons table of a frame, folded to fit: the verdicts with packets in the interval, then
 * the events with packets in it (but errors and bans_created, which the summary shows), in the
 * order of the statistics; the verdicts left out are one line of their own. */
struct top_reasons {
	int shown[XDPBAN_STAT__MAX]; /* enum xdpban_stat, n_shown of them */
	size_t n_shown;
	size_t n_folded;        /* verdicts left out: 0 means no fold line */
	double folded_packets, folded_bytes; /* their rates per second, together */
};

/* Errors of src (from the later snapshot) in the interval since prev (in key order). */
__u32 top_errors_since(const struct top_snapshot *prev, const struct top_source *src);
/* Per second between two readings of a counter that only grows; 0 when it went down (the maps
 * were made anew). */
double top_per_second(__u64 before, __u64 after, double seconds);
/* The frame from prev to cur, its rows the first `count` sources in the order of sort, its
 * bans the first `count` of cur's by drop rate, then newest first.
 * 0, -EINVAL (cur is not later than prev) or -ENOMEM; free with top_frame_free. */
int top_frame_make(const struct top_snapshot *prev, const struct top_snapshot *cur,
		   enum top_sort sort, size_t count, struct top_frame *f);
void top_frame_free(struct top_frame *f);
/* The reasons of f in at most `lines` lines, the fold line included (0: no limit). Verdicts with
 * packets come first, the busiest kept when they do not all fit; events only fill what is
 * left. At least one line whatever `lines` says. Returns the lines used. */
size_t top_reasons_fold(const struct top_frame *f, size_t lines, struct top_reasons *out);

#endif /* XDPBAN_TOP_MODEL_H */
