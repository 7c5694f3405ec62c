/* top_view.c - how `xdpban top` shows a frame (top_model.h): the lines of the full view (drawn
 * by curses on a terminal, printed by --once), the plain line per interval, and the JSON
 * object. Only formatting: the frame holds every number.
 */
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "top_view.h"
#include "xdpban_time.h"

#define TOP_LINE_LEN 256 /* wider than any line of the view */
#define KEYS_LINE "keys: s next sort (e errors, c count, a source), p or space pause, q quit"

#define SUMMARY_PIECES 4
#define SOURCE_MIN_ROWS 2 /* the sources table keeps these before the reasons take more */
#define BLANK_SLOTS 4     /* after the summary, the reasons, the sources; before the keys */
#define KEY_TEXT 64       /* an address or prefix as text */

static double pct(__u32 used, __u32 max)
{
	return max ? 100.0 * used / max : 0;
}

static size_t max_len(size_t a, const char *text)
{
	size_t n = strlen(text);

	return n > a ? n : a;
}

/* The summary's pieces, as many to a line as the width takes. Returns the lines. */
static size_t summary_lines(const struct top_frame *f, unsigned int width,
			    char lines[SUMMARY_PIECES][TOP_LINE_LEN])
{
	static const char *const sep[SUMMARY_PIECES] = { "", ", ", "; ", ", " };
	char piece[SUMMARY_PIECES][96];
	size_t n = 0;

	snprintf(piece[0], sizeof(piece[0]), "errors %.1f/s", f->rates[XDPBAN_STAT_ERRORS].packets);
	snprintf(piece[1], sizeof(piece[1]), "bans %.1f/s",
		 f->rates[XDPBAN_STAT_BANS_CREATED].packets);
	snprintf(piece[2], sizeof(piece[2]),
		 "counter table %" PRIu32 "/%" PRIu32 " (%.1f%%)", f->counters_used,
		 f->counters_max, pct(f->counters_used, f->counters_max));
	snprintf(piece[3], sizeof(piece[3]), "ban table %" PRIu32 "/%" PRIu32 " (%.1f%%)",
		 f->bans_used, f->bans_max, pct(f->bans_used, f->bans_max));
	lines[0][0] = '\0';
	for (int i = 0; i < SUMMARY_PIECES; i++) {
		size_t len = strlen(lines[n]);

		if (len && width && len + strlen(sep[i]) + strlen(piece[i]) > width) {
			lines[++n][0] = '\0';
			len = 0;
		}
		snprintf(lines[n] + len, TOP_LINE_LEN - len, "%s%s", len ? sep[i] : "", piece[i]);
	}
	return n + 1;
}

/* How many lines each part of a frame gets. */
struct layout {
	struct top_reasons reasons;
	size_t reason_lines; /* below the table's header, the fold line included */
	size_t sources;      /* rows of the sources table */
	size_t bans;         /* rows of the ban table (0: not even its header) */
	size_t blanks;       /* blank lines, given to BLANK_SLOTS in order */
	bool keys;
};

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* Within v->height, `fixed` lines being taken: the reasons table may not push the sources
 * table below SOURCE_MIN_ROWS rows, the sources table takes what is left, then the bans, the
 * keys and the blank lines. */
static void plan(const struct top_view *v, size_t fixed, struct layout *l)
{
	const struct top_frame *f = v->frame;
	size_t left = v->height > fixed ? v->height - fixed : 0,
	       src_min = min_size(f->n_rows, SOURCE_MIN_ROWS);

	memset(l, 0, sizeof(*l));
	if (!v->height) {
		l->reason_lines = top_reasons_fold(f, 0, &l->reasons);
		l->sources = f->n_rows;
		l->bans = f->n_bans;
		l->blanks = BLANK_SLOTS;
		l->keys = v->keys;
		return;
	}
	l->reason_lines = top_reasons_fold(f, left > src_min ? left - src_min : 1, &l->reasons);
	left -= min_size(left, l->reason_lines);
	l->sources = min_size(f->n_rows, left);
	left -= l->sources;
	if (f->n_bans && left >= 2) {
		l->bans = min_size(f->n_bans, left - 1);
		left -= l->bans + 1;
	}
	l->keys = v->keys && left;
	left -= l->keys;
	l->blanks = min_size(left, BLANK_SLOTS);
}

/* "manual 59m59s", "errors permanent", or "-". */
static const char *ban_text(const struct top_row *r, char *buf, size_t len)
{
	char left[48];

	if (!r->banned)
		return "-";
	snprintf(buf, len, "%s %s", r->ban_reason ? r->ban_reason : "?",
		 render_duration(r->ban_left_s, left, sizeof(left)));
	return buf;
}

/* The texts of a source row, which set the widths of its columns. */
struct row_text {
	char src[KEY_TEXT], classes[XB_CLASSES_TEXT_MAX], ban[96];
	const char *ban_shown;
};

static void row_text(const struct top_row *r, struct row_text *t)
{
	snprintf(t->src, sizeof(t->src), "?");
	snprintf(t->classes, sizeof(t->classes), "?");
	xb_key_format(&r->src.key, t->src, sizeof(t->src));
	xb_classes_format(r->src.classes, t->classes, sizeof(t->classes));
	t->ban_shown = ban_text(r, t->ban, sizeof(t->ban));
}

/* Column widths of the sources table; the classes go first when the width is short. */
struct source_cols {
	int src, classes; /* classes 0: not shown */
};

static void source_cols(const struct top_frame *f, size_t rows, unsigned int width,
			struct source_cols *c)
{
	size_t src = strlen("SOURCE"), classes = strlen("CLASSES"), ban = strlen("BAN");
	struct row_text t;

	for (size_t i = 0; i < rows; i++) {
		row_text(&f->rows[i], &t);
		src = max_len(src, t.src);
		classes = max_len(classes, t.classes);
		ban = max_len(ban, t.ban_shown);
	}
	c->src = (int)src;
	c->classes = (int)classes;
	if (width && src + 1 + 7 + 1 + 8 + 2 + classes + 1 + ban > width)
		c->classes = 0;
}

static void source_line(const struct top_row *r, const struct source_cols *c, char *line,
			size_t len)
{
	struct row_text t;

	row_text(r, &t);
	if (c->classes)
		snprintf(line, len, "%-*s %7" PRIu32 " %8" PRIu32 "  %-*s %s", c->src, t.src,
			 r->errors, r->src.count, c->classes, t.classes, t.ban_shown);
	else
		snprintf(line, len, "%-*s %7" PRIu32 " %8" PRIu32 "  %s", c->src, t.src, r->errors,
			 r->src.count, t.ban_shown);
}

static void sources_table(const struct top_view *v, const struct layout *l, top_line_cb cb,
			  void *ctx)
{
	const struct top_frame *f = v->frame;
	char line[TOP_LINE_LEN];
	struct source_cols c;

	snprintf(line, sizeof(line),
		 "top sources: %zu with errors; ERRORS in the last %.1fs",
		 f->n_active, f->seconds);
	cb(line, false, ctx);
	source_cols(f, l->sources, v->width, &c);
	if (c.classes)
		snprintf(line, sizeof(line), "%-*s %7s %8s  %-*s %s", c.src, "SOURCE", "ERRORS",
			 "COUNT", c.classes, "CLASSES", "BAN");
	else
		snprintf(line, sizeof(line), "%-*s %7s %8s  %s", c.src, "SOURCE", "ERRORS",
			 "COUNT", "BAN");
	cb(line, true, ctx);
	for (size_t i = 0; i < l->sources; i++) {
		source_line(&f->rows[i], &c, line, sizeof(line));
		cb(line, false, ctx);
	}
}

/* Seconds between two CLOCK_BOOTTIME readings, as the duration text ("?" when to > from). */
static const char *ns_duration(__u64 from, __u64 to, char *buf, size_t len)
{
	return to >= from ? render_duration((int64_t)((to - from) / NS_PER_SEC), buf, len) : "?";
}

/* The title of the bans: their drop rate together, and the fastest ban's when it fits (a
 * terminal too small for the table still shows the source that sends most). */
static void bans_title(const struct top_view *v, char *line, size_t len)
{
	const struct top_frame *f = v->frame;
	char src[KEY_TEXT] = "?", top[KEY_TEXT + 40];
	size_t used;

	used = (size_t)snprintf(line, len, "bans in force: %" PRIu32 ", drop_banned %.1f/s",
				f->bans_used, f->rates[XDPBAN_STAT_DROP_BANNED].packets);
	if (!f->n_bans || f->bans[0].drop_rate <= 0 || used >= len)
		return;
	xb_key_format(&f->bans[0].key, src, sizeof(src));
	snprintf(top, sizeof(top), "; top %s %.1f/s", src, f->bans[0].drop_rate);
	if (!v->width || used + strlen(top) <= v->width)
		snprintf(line + used, len - used, "%s", top);
}

/* The bans, the banned sources still sending first, with their drop rates. */
static void bans_table(const struct top_view *v, const struct layout *l, top_line_cb cb,
		       void *ctx)
{
	const struct top_frame *f = v->frame;
	char line[TOP_LINE_LEN], src[KEY_TEXT], age[48], left[48];
	size_t w = strlen("BANNED");

	bans_title(v, line, sizeof(line));
	cb(line, false, ctx);
	if (!l->bans)
		return;
	for (size_t i = 0; i < l->bans; i++) {
		xb_key_format(&f->bans[i].key, src, sizeof(src));
		w = max_len(w, src);
	}
	snprintf(line, sizeof(line), "%-*s %-8s %9s %9s %10s", (int)w, "BANNED", "REASON", "DROPS/s",
		 "AGE", "LEFT");
	cb(line, true, ctx);
	for (size_t i = 0; i < l->bans; i++) {
		const struct top_ban *b = &f->bans[i];

		snprintf(src, sizeof(src), "?");
		xb_key_format(&b->key, src, sizeof(src));
		snprintf(line, sizeof(line), "%-*s %-8s %9.1f %9s %10s", (int)w, src,
			 xb_reason_name(b->reason), b->drop_rate,
			 ns_duration(b->start_ns, f->time_ns, age, sizeof(age)),
			 b->expires_ns ? ns_duration(f->time_ns, b->expires_ns, left, sizeof(left))
				       : "permanent");
		cb(line, false, ctx);
	}
}

static void reasons_table(const struct layout *l, const struct top_frame *f, top_line_cb cb,
			  void *ctx)
{
	char line[TOP_LINE_LEN], name[48];

	snprintf(line, sizeof(line), "%-20s %14s %16s", "REASON", "PACKETS/s", "BYTES/s");
	cb(line, true, ctx);
	for (size_t i = 0; i < l->reasons.n_shown; i++) {
		int s = l->reasons.shown[i];

		snprintf(line, sizeof(line), "%-20s %14.1f %16.1f", xb_stat_name(s),
			 f->rates[s].packets, f->rates[s].bytes);
		cb(line, false, ctx);
	}
	if (!l->reasons.n_folded)
		return;
	snprintf(name, sizeof(name), "other verdicts (%zu)", l->reasons.n_folded);
	snprintf(line, sizeof(line), "%-20s %14.1f %16.1f", name, l->reasons.folded_packets,
		 l->reasons.folded_bytes);
	cb(line, false, ctx);
}

/* The blank line of slot `slot` (BLANK_SLOTS), when the layout has room for it. */
static void blank(const struct layout *l, size_t slot, top_line_cb cb, void *ctx)
{
	if (slot < l->blanks)
		cb("", false, ctx);
}

static void frame_lines(const struct top_view *v, size_t above, top_line_cb cb, void *ctx)
{
	const struct top_frame *f = v->frame;
	char summary[SUMMARY_PIECES][TOP_LINE_LEN];
	size_t n_summary = summary_lines(f, v->width, summary);
	struct layout l;

	/* summary, reasons header, sources title and header, bans title */
	plan(v, above + n_summary + 3 + (f->bans_used > 0), &l);
	for (size_t i = 0; i < n_summary; i++)
		cb(summary[i], false, ctx);
	blank(&l, 0, cb, ctx);
	reasons_table(&l, f, cb, ctx);
	blank(&l, 1, cb, ctx);
	sources_table(v, &l, cb, ctx);
	if (f->bans_used) {
		blank(&l, 2, cb, ctx);
		bans_table(v, &l, cb, ctx);
	}
	if (l.keys) {
		blank(&l, 3, cb, ctx);
		cb(KEYS_LINE, false, ctx);
	}
}

/* The header, in the width: the date goes first, then the line is cut by the terminal. */
static void header_line(const struct top_view *v, char *line, size_t len)
{
	char when[32] = "?";
	const char *paused = v->paused ? " (paused)" : "";

	xb_time_format(v->wall, when, sizeof(when));
	snprintf(line, len, "xdpban top: %s, every %us, sorted by %s%s", when, v->interval_s,
		 top_sort_name(v->sort), paused);
	if (v->width && strlen(line) > v->width && strlen(when) > 11) /* "HH:MM:SSZ" */
		snprintf(line, len, "xdpban top: %s, every %us, sorted by %s%s", when + 11,
			 v->interval_s, top_sort_name(v->sort), paused);
}

void top_view_lines(const struct top_view *v, top_line_cb cb, void *ctx)
{
	char line[TOP_LINE_LEN];
	size_t above = 1;

	header_line(v, line, sizeof(line));
	cb(line, true, ctx);
	if (v->notice) {
		cb(v->notice, true, ctx);
		above++;
	}
	if (v->frame) {
		frame_lines(v, above, cb, ctx);
		return;
	}
	if (!v->waiting)
		cb("(the first interval is being measured)", false, ctx);
	if (v->keys) {
		cb("", false, ctx);
		cb(KEYS_LINE, false, ctx);
	}
}

/* "2026-12-01T22:10:03Z drop_malformed 30.0/s; errors 30.0/s, bans 0.0/s; counters 2/65536,
 * bans 0/32768; top 192.0.2.10 20 of 60, 198.51.100.10 10 of 30 banned" */
void top_view_plain(const struct top_frame *f, time_t wall, FILE *out)
{
	char when[32] = "?", src[64];
	bool any = false;

	xb_time_format(wall, when, sizeof(when));
	fprintf(out, "%s", when);
	for (int i = 0; i < XDPBAN_STAT__VERDICTS; i++) {
		if (f->rates[i].packets > 0) {
			fprintf(out, "%s %s %.1f/s", any ? "," : "", xb_stat_name(i),
				f->rates[i].packets);
			any = true;
		}
	}
	if (!any)
		fprintf(out, " no packets");
	fprintf(out, "; errors %.1f/s, bans %.1f/s; counters %" PRIu32 "/%" PRIu32 ", bans %" PRIu32
		"/%" PRIu32 "; top",
		f->rates[XDPBAN_STAT_ERRORS].packets, f->rates[XDPBAN_STAT_BANS_CREATED].packets,
		f->counters_used, f->counters_max, f->bans_used, f->bans_max);
	for (size_t i = 0; i < f->n_rows; i++) {
		xb_key_format(&f->rows[i].src.key, src, sizeof(src));
		fprintf(out, "%s %s %" PRIu32 " of %" PRIu32 "%s", i ? "," : "", src,
			f->rows[i].errors, f->rows[i].src.count, f->rows[i].banned ? " banned" : "");
	}
	fprintf(out, "%s\n", f->n_rows ? "" : " none");
	fflush(out);
}

/* A rate with one decimal, as the text shows it. */
static struct json_object *rate_json(double v)
{
	char text[32];

	snprintf(text, sizeof(text), "%.1f", v);
	return json_object_new_double_s(v, text);
}

static struct json_object *table_json(__u32 used, __u32 max)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "used", json_object_new_int64(used));
	json_object_object_add(o, "max", json_object_new_int64(max));
	return o;
}

static struct json_object *row_json(const struct top_row *r)
{
	struct json_object *o = json_object_new_object();
	char src[64] = "?";

	xb_key_format(&r->src.key, src, sizeof(src));
	json_object_object_add(o, "source", json_object_new_string(src));
	json_object_object_add(o, "errors", json_object_new_int64(r->errors));
	json_object_object_add(o, "count", json_object_new_int64(r->src.count));
	json_object_object_add(o, "classes", xb_json_classes(r->src.classes));
	json_object_object_add(o, "banned", json_object_new_boolean(r->banned));
	if (r->banned) {
		json_object_object_add(o, "ban_reason", json_object_new_string(r->ban_reason ?: "?"));
		json_object_object_add(o, "ban_seconds_left", json_object_new_int64(r->ban_left_s));
	}
	return o;
}

static struct json_object *ban_json(const struct top_frame *f, const struct top_ban *b)
{
	struct json_object *o = json_object_new_object();
	char src[KEY_TEXT] = "?";

	xb_key_format(&b->key, src, sizeof(src));
	json_object_object_add(o, "source", json_object_new_string(src));
	json_object_object_add(o, "reason", json_object_new_string(xb_reason_name(b->reason)));
	json_object_object_add(o, "count", json_object_new_int64(b->count));
	json_object_object_add(o, "drops", json_object_new_int64((int64_t)b->drops));
	json_object_object_add(o, "drops_per_s", json_object_new_double(b->drop_rate));
	json_object_object_add(o, "seconds_ago",
			       json_object_new_int64(f->time_ns >= b->start_ns
							     ? (int64_t)((f->time_ns - b->start_ns) / NS_PER_SEC)
							     : 0));
	json_object_object_add(o, "seconds_left",
			       json_object_new_int64(!b->expires_ns ? -1
						     : b->expires_ns > f->time_ns
							     ? (int64_t)((b->expires_ns - f->time_ns) / NS_PER_SEC)
							     : 0));
	return o;
}

struct json_object *top_view_json(const struct top_frame *f, time_t wall)
{
	struct json_object *o = json_object_new_object(), *rates = json_object_new_object();
	struct json_object *sources = json_object_new_array(), *banned = json_object_new_array();
	char when[32] = "?";

	xb_time_format(wall, when, sizeof(when));
	json_object_object_add(o, "time", json_object_new_string(when));
	json_object_object_add(o, "seconds", rate_json(f->seconds));
	for (int i = 0; i < XDPBAN_STAT__MAX; i++) {
		struct json_object *r = json_object_new_object();

		json_object_object_add(r, "packets", rate_json(f->rates[i].packets));
		json_object_object_add(r, "bytes", rate_json(f->rates[i].bytes));
		json_object_object_add(rates, xb_stat_name(i), r);
	}
	json_object_object_add(o, "rates", rates);
	json_object_object_add(o, "counters", table_json(f->counters_used, f->counters_max));
	json_object_object_add(o, "bans", table_json(f->bans_used, f->bans_max));
	json_object_object_add(o, "sort", json_object_new_string(top_sort_name(f->sort)));
	json_object_object_add(o, "active_sources", json_object_new_int64(f->n_active));
	for (size_t i = 0; i < f->n_rows; i++)
		json_object_array_add(sources, row_json(&f->rows[i]));
	json_object_object_add(o, "sources", sources);
	for (size_t i = 0; i < f->n_bans; i++)
		json_object_array_add(banned, ban_json(f, &f->bans[i]));
	json_object_object_add(o, "banned", banned);
	return o;
}
