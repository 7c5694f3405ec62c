/* events.c - `xdpban events`: the daemon's backlog of ban events (or every one from a given
 * time) and, with --follow, its stream, from the start or after a given event
 * (docs/control.md, "events"). Only the daemon
 * has events: without it this fails. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>
#include <unistd.h>
#include "cli.h"
#include "control.h"
#include "control_fields.h"

#define EVENTS_REPLY_TIMEOUT_MS 30000

const struct param events_params[] = {
	{ "--follow", 'f', P_FLAG, false, offsetof(struct events_args, follow), NULL,
	  "go on printing each event as it happens, until interrupted" },
	{ "--json", 0, P_FLAG, false, offsetof(struct events_args, json), NULL,
	  "print each event as one JSON object a line" },
	{ "--since", 0, P_SINCE, false, offsetof(struct events_args, since), "WHEN",
	  "a time (2026-12-05T06:00:00Z; 10m, 2h, 1d ago; @UNIX-SECONDS): every event from then "
	  "on, also from before a restart, not only the last 256; or a sequence number (digits, "
	  "with --follow): no backlog, every event after that one" },
	{ NULL },
};

static const char *str(struct json_object *o, const char *name)
{
	struct json_object *v;

	return json_object_object_get_ex(o, name, &v) ? json_object_get_string(v) : "?";
}

static long long num(struct json_object *o, const char *name)
{
	struct json_object *v;

	return json_object_object_get_ex(o, name, &v) ? json_object_get_int64(v) : 0;
}

/* "2026-12-01T22:10:03Z ban 192.0.2.7 for 1d0h: 11 errors (malformed), reason errors", and
 * "; comment: TEXT" after a manual ban's with one. */
static void render_event(struct json_object *e)
{
	char when[32] = "?", length[XB_DURATION_TEXT_MAX], classes[XB_CLASSES_TEXT_MAX] = "";
	const char *kind = str(e, XB_F(EVENT));
	struct json_object *arr;

	xb_time_format((time_t)num(e, XB_F(TIME_UNIX)), when, sizeof(when));
	printf("%s %s %s", when, kind, str(e, XB_F(SOURCE)));
	if (strcmp(kind, "ban")) {
		printf("\n");
		return;
	}
	if (json_object_object_get_ex(e, XB_F(CLASSES), &arr) && json_object_array_length(arr)) {
		size_t used = 0;

		for (size_t i = 0; i < json_object_array_length(arr); i++)
			used += snprintf(classes + used, sizeof(classes) - used, "%s%s", i ? "," : "",
					 json_object_get_string(json_object_array_get_idx(arr, i)));
	}
	printf(" for %s", num(e, XB_F(SECONDS)) ? render_duration(num(e, XB_F(SECONDS)), length,
								sizeof(length))
					    : "ever");
	if (num(e, XB_F(COUNT)))
		printf(": %lld %s (%s)", num(e, XB_F(COUNT)),
		       xb_plural(num(e, XB_F(COUNT)), "error", "errors"), classes);
	if (str(e, XB_F(LAST_ERROR)))
		printf(", last error %s", str(e, XB_F(LAST_ERROR)));
	printf(", reason %s", str(e, XB_F(REASON)));
	if (num(e, XB_F(REPEAT)))
		printf("; repeat offence %lld, ban time x%g", num(e, XB_F(REPEAT)),
		       json_object_get_double(json_object_object_get(e, XB_F(MULTIPLIER))));
	if (json_object_object_get_ex(e, XB_F(COMMENT), NULL))
		printf("; comment: %s", str(e, XB_F(COMMENT)));
	if (json_object_get_boolean(json_object_object_get(e, XB_F(OBSERVED))))
		printf("; observed: would have dropped");
	printf("\n");
}

static void print_event(struct json_object *e, bool json)
{
	if (json)
		printf("%s\n", json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN));
	else
		render_event(e);
	fflush(stdout);
}

/* The reply: the backlog. EXIT_OK, or one line and EXIT_FAIL. */
static int print_backlog(const char *line, bool json)
{
	struct json_object *reply = NULL, *events;
	int ret = backend_take_reply(line, &reply);

	if (ret)
		return ret;
	if (json_object_object_get_ex(reply, XB_F(EVENTS), &events) &&
	    json_object_is_type(events, json_type_array))
		for (size_t i = 0; i < json_object_array_length(events); i++)
			print_event(json_object_array_get_idx(events, i), json);
	json_object_put(reply);
	return EXIT_OK;
}

/* The daemon's last line to a follower it drops: its error, and the event to resume after. */
static int follow_dropped(struct json_object *e)
{
	struct json_object *since;

	if (json_object_object_get_ex(e, XB_F(SINCE), &since))
		pr_warn("%s: resume with --since %lld", str(e, XB_F(ERROR)), num(e, XB_F(SINCE)));
	else
		pr_warn("%s", str(e, XB_F(ERROR)));
	return EXIT_FAIL;
}

/* Every later line is one event (events have no "ok"), until the daemon ends the stream. */
static int follow(struct xb_control_stream *st, bool json)
{
	char err[XB_ERRLEN];
	const char *line;
	int ret;

	while (!xb_control_next_line(st, -1, &line, err, sizeof(err))) {
		struct json_object *e = json_tokener_parse(line);

		if (!e || !json_object_is_type(e, json_type_object)) {
			pr_warn("malformed event from the daemon: %.80s", line);
			json_object_put(e);
			return EXIT_FAIL;
		}
		if (json_object_object_get_ex(e, XB_F(OK), NULL)) {
			ret = follow_dropped(e);
			json_object_put(e);
			return ret;
		}
		print_event(e, json);
		json_object_put(e);
	}
	pr_warn("%s", err);
	return EXIT_FAIL;
}

int do_events(const struct cli *cli, const void *args)
{
	const struct events_args *a = args;
	struct json_object *req = json_object_new_object();
	struct xb_control_stream st;
	char err[XB_ERRLEN];
	const char *line;
	int fd, ret;

	if (a->since.set && !a->since.is_time && !a->follow) {
		pr_warn("events: --since SEQ needs --follow (a time needs a unit, a date or @)");
		json_object_put(req);
		return EXIT_USAGE;
	}
	if (!req) {
		pr_warn("out of memory");
		return EXIT_FAIL;
	}
	json_object_object_add(req, XB_F(CMD), json_object_new_string(XB_CMD(EVENTS)));
	json_object_object_add(req, XB_F(FOLLOW), json_object_new_boolean(a->follow));
	if (a->since.is_time)
		json_object_object_add(req, XB_F(SINCE_UNIX),
				       json_object_new_int64((int64_t)a->since.wall));
	else if (a->since.set)
		json_object_object_add(req, XB_F(SINCE),
				       json_object_new_int64((int64_t)a->since.seq));
	fd = xb_control_connect(cli->socket_path, err, sizeof(err));
	if (fd < 0) {
		pr_warn("events come from the daemon, and it does not answer: %s", err);
		json_object_put(req);
		return EXIT_FAIL;
	}
	ret = xb_control_subscribe(fd, json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN),
				   EVENTS_REPLY_TIMEOUT_MS, &st, err, sizeof(err));
	json_object_put(req);
	if (!ret)
		ret = xb_control_next_line(&st, EVENTS_REPLY_TIMEOUT_MS, &line, err, sizeof(err));
	if (ret) {
		pr_warn("%s", err);
		ret = EXIT_FAIL;
	} else {
		ret = print_backlog(line, a->json);
		if (!ret && a->follow)
			ret = follow(&st, a->json);
	}
	xb_control_stream_free(&st);
	close(fd);
	return ret;
}
