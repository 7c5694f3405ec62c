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

#define TOP_LINE_LEN 256 /* wider than any line of the view */

/* The rows of the reasons table: every verdict, and the events that happened in the interval
 * (but errors and bans, which the summary line shows). */
static bool reason_shown(const struct top_frame *f, int i)
{
	if (i < XDPBAN_STAT__VERDICTS)
		return true;
	if (i == XDPBAN_STAT_ERRORS || i == XDPBAN_STAT_BANS_CREATED)
		return false;
	return f->rates[i].packets > 0 || f->rates[i].bytes > 0;
}

static double pct(__u32 used, __u32 max)
{
	return max ? 100.0 * used / max : 0;
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

static void source_line(const struct top_row *r, char *line, size_t len)
{
	char src[64] = "?", classes[XB_CLASSES_TEXT_MAX] = "?", ban[96];

	xb_key_format(&r->src.key, src, sizeof(src));
	xb_classes_format(r->src.classes, classes, sizeof(classes));
	snprintf(line, len, "%-40s %8" PRIu32 " %10" PRIu32 "  %-24s %s", src, r->errors,
		 r->src.count, classes, ban_text(r, ban, sizeof(ban)));
}

static void frame_lines(const struct top_frame *f, top_line_cb cb, void *ctx)
{
	char line[TOP_LINE_LEN];

	snprintf(line, sizeof(line),
		 "errors %.1f/s, bans %.1f/s; counter table %" PRIu32 "/%" PRIu32
		 " slots (%.1f%%), ban table %" PRIu32 "/%" PRIu32 " (%.1f%%)",
		 f->rates[XDPBAN_STAT_ERRORS].packets, f->rates[XDPBAN_STAT_BANS_CREATED].packets,
		 f->counters_used, f->counters_max, pct(f->counters_used, f->counters_max),
		 f->bans_used, f->bans_max, pct(f->bans_used, f->bans_max));
	cb(line, false, ctx);
	cb("", false, ctx);
	snprintf(line, sizeof(line), "%-20s %14s %16s", "REASON", "PACKETS/s", "BYTES/s");
	cb(line, true, ctx);
	for (int i = 0; i < XDPBAN_STAT__MAX; i++) {
		if (!reason_shown(f, i))
			continue;
		snprintf(line, sizeof(line), "%-20s %14.1f %16.1f", xb_stat_name(i),
			 f->rates[i].packets, f->rates[i].bytes);
		cb(line, false, ctx);
	}
	cb("", false, ctx);
	snprintf(line, sizeof(line),
		 "top sources: %zu with errors in their window; ERRORS in the last %.1fs",
		 f->n_active, f->seconds);
	cb(line, false, ctx);
	snprintf(line, sizeof(line), "%-40s %8s %10s  %-24s %s", "SOURCE", "ERRORS", "COUNT",
		 "CLASSES", "BAN");
	cb(line, true, ctx);
	for (size_t i = 0; i < f->n_rows; i++) {
		source_line(&f->rows[i], line, sizeof(line));
		cb(line, false, ctx);
	}
}

void top_view_lines(const struct top_view *v, top_line_cb cb, void *ctx)
{
	char line[TOP_LINE_LEN], when[32] = "?";

	xb_time_format(v->wall, when, sizeof(when));
	snprintf(line, sizeof(line), "xdpban top: %s, every %us, sorted by %s%s", when,
		 v->interval_s, top_sort_name(v->sort), v->paused ? " (paused)" : "");
	cb(line, true, ctx);
	if (v->frame)
		frame_lines(v->frame, cb, ctx);
	else
		cb("(the first interval is being measured)", false, ctx);
	if (v->keys) {
		cb("", false, ctx);
		cb("keys: s next sort (e errors, c count, a source), p or space pause, q quit",
		   false, ctx);
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

struct json_object *top_view_json(const struct top_frame *f, time_t wall)
{
	struct json_object *o = json_object_new_object(), *rates = json_object_new_object();
	struct json_object *sources = json_object_new_array();
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
	return o;
}
