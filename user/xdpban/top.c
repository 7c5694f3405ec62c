/* top.c - `xdpban top`: a live view of the data path, read from the pinned maps once per
 * interval: rates per reason, table fill, the sources with the most errors and the bans (the
 * computation is top_model.c's, the text top_view.c's). It only reads: it never changes a map,
 * and never goes through the daemon for its data (a daemon only tells where its maps are
 * pinned). Left open, it follows the pins: maps pinned anew (a restarted daemon) are reopened,
 * and while none are pinned it waits. Full screen (curses) when stdout is a terminal;
 * otherwise a line, or a JSON object, per interval.
 */
#include <curses.h>
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "control_fields.h"
#include "table.h"
#include "top.h"
#include "top_view.h"
#include "xdpban_time.h"

#define TOP_COUNT_DEFAULT 10
#define MS_PER_S 1000
#define NOTICE_REFRESHES 5 /* how long "maps reopened" stays on the screen */
#define NOTICE_LEN (PATH_MAX + 64) /* a sentence about the pin directory */

const struct param top_params[] = {
	{ "--interval", 0, P_DURATION, false, offsetof(struct top_args, interval_s), "SECONDS",
	  "time between refreshes: seconds, or a number with s, m, h, d or w (default 1)" },
	{ "--count", 0, P_COUNT, false, offsetof(struct top_args, count), "N",
	  "how many sources, and bans, to show (default 10; on a terminal, those that fit)" },
	{ "--sort", 0, P_STRING, false, offsetof(struct top_args, sort), "COLUMN",
	  "order of the sources: errors (in the interval; the default), count (in the window) "
	  "or source" },
	{ "--once", 0, P_FLAG, false, offsetof(struct top_args, once), NULL,
	  "print one frame, one interval after the start, and exit" },
	{ "--json", 0, P_FLAG, false, offsetof(struct top_args, json), NULL,
	  "print each frame as one JSON object a line" },
	{ NULL },
};

/* What a run holds: the maps, the last two snapshots and the frame between them. */
struct top_run {
	const struct xb_maps *m; /* NULL while no maps are pinned */
	char dir[PATH_MAX];      /* where they are pinned */
	struct xb_maps own; /* the maps when opened here (owned) */
	struct backend b;   /* the maps when the backend found no daemon */
	struct top_snapshot snap[2];
	int last;           /* the index of the latest snapshot; -1: none */
	bool have_frame;
	struct top_frame frame;
	time_t wall;        /* of the latest snapshot */
	__u32 counters_max, bans_max;
	enum top_sort sort;
	size_t count;
	unsigned int interval_s;
	bool paused;
	char err[XB_ERRLEN]; /* why a refresh failed */
	char notice[NOTICE_LEN]; /* what happened to the maps, or "" */
	int notice_left;        /* refreshes it stays; -1: until the maps are back */
	bool notice_new;        /* not shown yet */
};

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	stopping = 1;
}

/* The daemon's pin directory from its status reply, into dir. EXIT_OK or EXIT_FAIL. */
static int daemon_pin_dir(struct backend *b, char *dir, size_t len)
{
	struct json_object *req = json_object_new_object(), *reply = NULL, *d, *p;
	int ret;

	if (!req) {
		pr_warn("out of memory");
		return EXIT_FAIL;
	}
	json_object_object_add(req, XB_F(CMD), json_object_new_string(XB_CMD(STATUS)));
	ret = backend_call(b, req, &reply);
	json_object_put(req);
	if (ret)
		return ret;
	if (!json_object_object_get_ex(reply, XB_F(XDPBAND), &d) ||
	    !json_object_object_get_ex(d, XB_F(PIN_DIR), &p)) {
		pr_warn("the daemon's status does not say where its maps are pinned: use --pin-dir");
		ret = EXIT_FAIL;
	} else {
		snprintf(dir, len, "%s", json_object_get_string(p));
	}
	json_object_put(reply);
	return ret;
}

/* The pinned maps: under --pin-dir; else where the daemon that answers has them; else
 * wherever the CLI finds them without a daemon. */
static int open_maps(const struct cli *cli, struct top_run *r)
{
	static const struct backend_opts reads = { 0 };
	char dir[PATH_MAX], err[XB_ERRLEN];
	const char *pin_dir = cli->pin_dir;
	int ret;

	if (!pin_dir) {
		ret = backend_open(&r->b, cli, &reads);
		if (ret)
			return ret;
		if (backend_direct(&r->b)) {
			snprintf(r->dir, sizeof(r->dir), "%s", r->b.pin_dir);
			r->m = &r->b.maps;
			return EXIT_OK;
		}
		ret = daemon_pin_dir(&r->b, dir, sizeof(dir));
		backend_close(&r->b);
		if (ret)
			return ret;
		pin_dir = dir;
	}
	pr_debug(cli, "reading the maps pinned in %s", pin_dir);
	snprintf(r->dir, sizeof(r->dir), "%s", pin_dir);
	if (xb_maps_open_pinned(&r->own, pin_dir, err, sizeof(err))) {
		pr_warn("%s", err);
		return EXIT_FAIL;
	}
	r->m = &r->own;
	return EXIT_OK;
}

struct walk {
	struct top_snapshot *s;
	__u32 now_s, window_s;
};

static int add_counter(const struct xdpban_key *key, const struct xb_counter *ctr, void *ctx)
{
	struct walk *w = ctx;
	struct top_source src = { .key = *key, .count = ctr->count, .start_s = ctr->start_s,
				  .classes = ctr->classes };

	w->s->counters_used++;
	if (!ctr->count || w->now_s - ctr->start_s >= w->window_s)
		return 0; /* no errors, or a window that has passed */
	return top_snapshot_add(w->s, &src);
}

struct ban_walk {
	struct top_snapshot *s;
	__u64 now_ns;
};

static int add_ban(const struct xdpban_key *key, const struct xdpban_ban *ban, void *ctx)
{
	struct ban_walk *w = ctx;
	struct top_ban b = { .key = *key, .start_ns = ban->start_ns, .expires_ns = ban->expires_ns,
			     .count = ban->count, .reason = ban->reason, .drops = ban->drops };

	if (ban->expires_ns && ban->expires_ns <= w->now_ns)
		return 0; /* expired: lifted by the next packet or sweep */
	return top_snapshot_add_ban(w->s, &b);
}

/* Reads a snapshot into s (reusing its memory). 0 or -errno, with the reason in r->err. */
static int snapshot_read(struct top_run *r, struct top_snapshot *s)
{
	struct xdpban_config cfg;
	struct walk w = { .s = s };
	struct ban_walk bw = { .s = s };
	int ret = xb_config_read(r->m, &cfg);

	s->n_sources = 0;
	s->n_bans = 0;
	s->counters_used = 0;
	s->counters_max = r->counters_max;
	s->bans_max = r->bans_max;
	if (!ret)
		ret = xb_stats_read(r->m, s->stats);
	s->time_ns = xb_boot_ns();
	w.now_s = s->time_ns / NS_PER_SEC;
	w.window_s = cfg.window_s;
	bw.now_ns = s->time_ns;
	if (!ret)
		ret = xb_counters_walk_in(r->m, w.now_s, add_counter, &w);
	if (!ret)
		ret = xb_bans_walk_drops_in(r->m, add_ban, &bw);
	if (ret < 0) {
		snprintf(r->err, sizeof(r->err), "cannot read the maps: %s", strerror(-ret));
		return ret;
	}
	s->bans_used = s->n_bans;
	top_snapshot_finish(s);
	return 0;
}

/* The ban state of the rows shown, as `xdpban query` finds it (prefix bans included). */
static void annotate(const struct top_run *r, struct top_frame *f)
{
	for (size_t i = 0; i < f->n_rows; i++) {
		struct top_row *row = &f->rows[i];
		struct xb_query_info q;
		struct xb_prefix p;

		xb_key_to_prefix(&row->src.key, &p);
		p.plen = xb_family_bits(p.family);
		if (xb_query(r->m, &p, &q) || !q.banned)
			continue;
		row->banned = true;
		row->ban_reason = q.ban_reason;
		row->ban_left_s = q.seconds_left;
	}
}

/* The frame between the last two snapshots, in the current order. */
static int remake(struct top_run *r)
{
	int ret;

	if (r->have_frame)
		top_frame_free(&r->frame);
	r->have_frame = false;
	ret = top_frame_make(&r->snap[!r->last], &r->snap[r->last], r->sort, r->count, &r->frame);
	if (ret) {
		snprintf(r->err, sizeof(r->err), "cannot make a frame: %s", strerror(-ret));
		return ret;
	}
	annotate(r, &r->frame);
	r->have_frame = true;
	return 0;
}

static void set_notice(struct top_run *r, int refreshes, const char *text)
{
	r->notice_new = strcmp(r->notice, text) != 0;
	snprintf(r->notice, sizeof(r->notice), "%s", text);
	r->notice_left = refreshes;
}

/* The maps are closed and the frames forgotten: the next maps' counts are another story. */
static void release_maps(struct top_run *r)
{
	if (r->m == &r->own)
		xb_maps_close(&r->own);
	else if (r->m == &r->b.maps)
		backend_close(&r->b);
	r->m = NULL;
	if (r->have_frame)
		top_frame_free(&r->frame);
	r->have_frame = false;
	r->last = -1;
}

/* No maps (or not all of them yet) at r->dir: wait, and say so until they are back. */
static void wait_for_maps(struct top_run *r, int err)
{
	char text[NOTICE_LEN];

	if (err == -ENOENT)
		snprintf(text, sizeof(text), "no xdpban maps pinned at %s: waiting", r->dir);
	else
		snprintf(text, sizeof(text), "cannot open the maps at %s (%s): waiting", r->dir,
			 strerror(-err));
	set_notice(r, -1, text);
}

/* Opens the maps pinned at r->dir, sized anew (a new daemon may size them otherwise). */
static int reopen(struct top_run *r)
{
	char err[XB_ERRLEN], text[NOTICE_LEN], when[32] = "?";
	int ret = xb_maps_open_pinned(&r->own, r->dir, err, sizeof(err));

	if (!ret) {
		r->m = &r->own;
		ret = xb_capacity(r->m, &r->counters_max, &r->bans_max);
		if (ret)
			release_maps(r);
	}
	if (ret) {
		wait_for_maps(r, ret);
		return ret;
	}
	xb_time_format(time(NULL), when, sizeof(when));
	/* the time of day of "YYYY-MM-DDTHH:MM:SSZ" */
	snprintf(text, sizeof(text), "daemon restarted: maps reopened at %s",
		 strlen(when) > 11 ? when + 11 : when);
	set_notice(r, NOTICE_REFRESHES, text);
	return 0;
}

/* Before each refresh: are the maps held still the ones pinned? 0 when there are maps to read,
 * else the reason there are none (said in r->notice). */
static int follow_pins(struct top_run *r)
{
	int ret;

	if (r->notice_left > 0 && !--r->notice_left)
		r->notice[0] = '\0';
	if (!r->m)
		return reopen(r);
	ret = xb_maps_pinned_same(r->m, r->dir);
	if (!ret)
		return 0;
	release_maps(r);
	if (ret == -ESTALE)
		return reopen(r);
	wait_for_maps(r, ret);
	return ret;
}

/* One refresh: a new snapshot and, from the second one on, a frame. Missing maps are no
 * error: it waits for them. */
static int step(struct top_run *r)
{
	int next, ret;

	if (follow_pins(r))
		return 0;
	next = r->last < 0 ? 0 : !r->last;
	ret = snapshot_read(r, &r->snap[next]);
	if (ret)
		return ret;
	r->wall = time(NULL);
	if (r->last < 0) {
		r->last = next;
		return 0;
	}
	r->last = next;
	return remake(r);
}

static __u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * MS_PER_S + ts.tv_nsec / 1000000;
}

struct screen_pos {
	int y;
};

static void screen_line(const char *line, bool bold, void *ctx)
{
	struct screen_pos *pos = ctx;

	if (pos->y >= LINES)
		return;
	if (bold)
		attron(A_BOLD);
	mvaddnstr(pos->y++, 0, line, COLS);
	if (bold)
		attroff(A_BOLD);
}

static void draw(const struct top_run *r)
{
	struct top_view v = { .frame = r->have_frame ? &r->frame : NULL, .wall = r->wall,
			      .interval_s = r->interval_s, .sort = r->sort, .paused = r->paused,
			      .keys = true, .notice = r->notice[0] ? r->notice : NULL,
			      .waiting = !r->m, .width = COLS > 0 ? COLS : 1,
			      .height = LINES > 0 ? LINES : 1 };
	struct screen_pos pos = { 0 };

	erase();
	top_view_lines(&v, screen_line, &pos);
	refresh();
}

/* A key: false for quit. A new order applies to the frame shown at once. */
static bool on_key(struct top_run *r, int ch)
{
	enum top_sort sort = r->sort;

	switch (ch) {
	case 'q':
	case 'Q':
		return false;
	case 'p':
	case ' ':
		r->paused = !r->paused;
		break;
	case 's':
		sort = (r->sort + 1) % TOP_SORT__COUNT;
		break;
	case 'e':
		sort = TOP_SORT_ERRORS;
		break;
	case 'c':
		sort = TOP_SORT_COUNT;
		break;
	case 'a':
		sort = TOP_SORT_SOURCE;
		break;
	}
	if (sort != r->sort) {
		r->sort = sort;
		if (r->have_frame && remake(r))
			return false;
	}
	return true;
}

/* The full view until 'q' or a signal. Paused, it reads nothing: the next frame after it
 * covers the time since the last one. Without --count, as many rows as the screen has lines
 * (the view shows those that fit). */
static int run_screen(struct top_run *r, bool fit)
{
	SCREEN *scr = newterm(NULL, stdout, stdin);
	__u64 deadline = now_ms() + (__u64)r->interval_s * MS_PER_S;
	int ret = 0;

	if (!scr) {
		pr_warn("cannot drive the terminal (TERM=%s); use --once or --json",
			getenv("TERM") ?: "");
		return EXIT_FAIL;
	}
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	draw(r);
	while (!stopping && !ret) {
		__u64 now = now_ms();
		int ch;

		timeout(deadline > now ? (int)(deadline - now) : 0);
		ch = getch();
		if (ch == ERR && now_ms() >= deadline) {
			if (fit)
				r->count = LINES > 0 ? (size_t)LINES : TOP_COUNT_DEFAULT;
			if (!r->paused)
				ret = step(r);
			deadline = now_ms() + (__u64)r->interval_s * MS_PER_S;
		} else if (ch != ERR && !on_key(r, ch)) {
			ret = r->err[0] ? -EIO : 0;
			break;
		}
		if (!ret)
			draw(r);
	}
	endwin();
	delscreen(scr);
	if (ret)
		pr_warn("%s", r->err);
	return ret ? EXIT_FAIL : EXIT_OK;
}

static void print_line(const char *line, bool bold, void *ctx)
{
	puts(line);
}

static void print_frame(const struct top_run *r, const struct top_args *a)
{
	struct top_view v = { .frame = &r->frame, .wall = r->wall, .interval_s = r->interval_s,
			      .sort = r->sort };
	struct json_object *o;

	if (a->json) {
		o = top_view_json(&r->frame, r->wall);
		render_json(o);
		json_object_put(o);
		fflush(stdout);
	} else if (a->once) {
		top_view_lines(&v, print_line, NULL);
	} else {
		top_view_plain(&r->frame, r->wall, stdout);
	}
}

/* Without a terminal (or with --once or --json): a frame per interval, until a signal. */
static int run_plain(struct top_run *r, const struct top_args *a)
{
	struct timespec at;

	clock_gettime(CLOCK_MONOTONIC, &at);
	while (!stopping) {
		at.tv_sec += r->interval_s;
		while (!stopping && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL))
			;
		if (stopping)
			break;
		if (step(r)) {
			pr_warn("%s", r->err);
			return EXIT_FAIL;
		}
		if (r->notice_new) /* beside the output, which stays one kind of line */
			pr_warn("top: %s", r->notice);
		r->notice_new = false;
		if (r->have_frame)
			print_frame(r, a);
		if (a->once)
			break;
	}
	return EXIT_OK;
}

static void run_close(struct top_run *r)
{
	release_maps(r);
	top_snapshot_free(&r->snap[0]);
	top_snapshot_free(&r->snap[1]);
}

int do_top(const struct cli *cli, const void *args)
{
	const struct top_args *a = args;
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: waits end early */
	struct top_run r = { .last = -1, .count = a->count ? a->count : TOP_COUNT_DEFAULT,
			     .interval_s = a->interval_s ? a->interval_s : 1 };
	int ret;

	if (a->sort && top_sort_parse(a->sort, &r.sort)) {
		pr_warn("top: unknown --sort '%s' (errors, count or source)", a->sort);
		return EXIT_USAGE;
	}
	ret = open_maps(cli, &r);
	if (ret)
		return ret;
	ret = xb_capacity(r.m, &r.counters_max, &r.bans_max);
	if (ret)
		snprintf(r.err, sizeof(r.err), "cannot size the tables: %s", strerror(-ret));
	else
		ret = step(&r);
	if (ret) {
		pr_warn("%s", r.err);
		run_close(&r);
		return EXIT_FAIL;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (isatty(STDOUT_FILENO) && !a->once && !a->json)
		ret = run_screen(&r, !a->count);
	else
		ret = run_plain(&r, a);
	run_close(&r);
	return ret;
}
