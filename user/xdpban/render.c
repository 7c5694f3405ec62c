/* render.c - the text output of the CLI, drawn from the same reply objects that --json prints,
 * so the two can never disagree. Only formatting: no decisions, no state.
 */
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "control_fields.h"
#include "runlists.h"

static struct json_object *member(struct json_object *obj, const char *name)
{
	struct json_object *v = NULL;

	json_object_object_get_ex(obj, name, &v);
	return v;
}

static const char *str(struct json_object *obj, const char *name)
{
	struct json_object *v = member(obj, name);

	return v && !json_object_is_type(v, json_type_null) ? json_object_get_string(v) : NULL;
}

static int64_t num(struct json_object *obj, const char *name)
{
	return json_object_get_int64(member(obj, name));
}

/* Appends the decimal digits of v at p without printf (a listing prints a million rows);
 * returns the end. */
static char *put_decimal(char *p, long long v)
{
	char digits[24], *d = digits + sizeof(digits);
	unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
	size_t n;

	do
		*--d = '0' + u % 10;
	while ((u /= 10));
	if (v < 0)
		*--d = '-';
	n = digits + sizeof(digits) - d;
	memcpy(p, d, n);
	return p + n;
}

/* A time left or past in the one duration format (xb_duration_format), or "permanent" for a
 * negative count (a ban without expiry). buf holds XB_DURATION_TEXT_MAX bytes. */
const char *render_duration(int64_t s, char *buf, size_t len)
{
	if (s < 0)
		return "permanent";
	return xb_duration_format((unsigned long long)s, buf, len) ? "?" : buf;
}

/* A JSON array of strings as "a,b", or "none". */
static const char *joined(struct json_object *arr, char *buf, size_t len)
{
	size_t used = 0, n = json_object_array_length(arr);

	buf[0] = '\0';
	for (size_t i = 0; i < n && used < len; i++)
		used += snprintf(buf + used, len - used, "%s%s", i ? "," : "",
				 json_object_get_string(json_object_array_get_idx(arr, i)));
	if (!n)
		snprintf(buf, len, "none");
	return buf;
}

/* One line: easy to pipe into jq, and a million bans print without pretty-printing costs. */
void render_json(struct json_object *r)
{
	puts(xb_json_line(r));
}

/* A line per rule of limits with values of its own: what it gives, and which are its own. */
static void render_rules(struct json_object *rules)
{
	char win[XB_DURATION_TEXT_MAX], ban[XB_DURATION_TEXT_MAX], own[64];

	for (size_t i = 0; rules && i < json_object_array_length(rules); i++) {
		struct json_object *r = json_object_array_get_idx(rules, i);

		printf("rule %s: limit %" PRId64 ", window %s, ban-time %s (own: %s)\n",
		       str(r, XB_F(RULE)) ?: "?", num(r, XB_F(LIMIT)),
		       render_duration(num(r, XB_F(WINDOW)), win, sizeof(win)),
		       render_duration(num(r, XB_F(BAN_TIME)), ban, sizeof(ban)),
		       joined(member(r, XB_F(OWN)), own, sizeof(own)));
	}
}

/* The settings as `xdpban set` takes them; a daemon's reply without the spoof settings (an
 * older one) shows none. */
void render_config(struct json_object *c)
{
	char win[XB_DURATION_TEXT_MAX], ban[XB_DURATION_TEXT_MAX], errors[64], drop[64];

	printf("limit %" PRId64 ", window %s, ban-time %s, ipv6-prefix /%" PRId64
	       ", errors %s, drop %s",
	       num(c, XB_F(LIMIT)), render_duration(num(c, XB_F(WINDOW)), win, sizeof(win)),
	       render_duration(num(c, XB_F(BAN_TIME)), ban, sizeof(ban)), num(c, XB_F(IPV6_PREFIX)),
	       joined(member(c, XB_F(ERRORS)), errors, sizeof(errors)),
	       joined(member(c, XB_F(DROP)), drop, sizeof(drop)));
	if (str(c, XB_F(SPOOF)))
		printf(", spoof %s, hop-tolerance %" PRId64 ", learn %s", str(c, XB_F(SPOOF)),
		       num(c, XB_F(HOP_TOLERANCE)), str(c, XB_F(LEARN)) ?: "?");
	if (json_object_get_boolean(member(c, XB_F(ALLOW_ONLY))))
		printf(", allow-only mode");
	if (str(c, XB_F(MODE)) && !strcmp(str(c, XB_F(MODE)), "observe"))
		printf(", observe mode");
	printf("%s\n", json_object_get_boolean(member(c, XB_F(DEFAULTS))) ? " (defaults)" : "");
	render_rules(member(c, XB_F(RULES)));
}

/* The width of the REASON column: the longest name of the stats (XDPBAN_STATS), or of a reply
 * that has one longer (a newer daemon's), so that every value starts in the same column. */
static int stat_name_width(struct json_object *stats)
{
	size_t width = strlen("REASON");

	for (int i = 0; i < XDPBAN_STAT__MAX; i++)
		if (strlen(xb_stat_name(i)) > width)
			width = strlen(xb_stat_name(i));
	json_object_object_foreach(stats, name, v)
	{
		(void)v;
		if (strlen(name) > width)
			width = strlen(name);
	}
	return (int)width;
}

void render_stats(struct json_object *stats)
{
	int width = stat_name_width(stats);

	printf("%-*s %16s %20s\n", width, "REASON", "PACKETS", "BYTES");
	json_object_object_foreach(stats, name, v)
	{
		printf("%-*s %16" PRIu64 " %20" PRIu64 "\n", width, name,
		       json_object_get_uint64(member(v, XB_F(PACKETS))),
		       json_object_get_uint64(member(v, XB_F(BYTES))));
	}
}

/* The port rules in force, as the [ports] keys write them: "guard 6969/bep15; open-tcp 22,80;
 * probe-icmp yes", or "none". A reply without them (an older daemon) shows nothing. */
static void render_ports(struct json_object *ports)
{
	static const struct {
		enum xb_control_field field;
		const char *key;
	} lists[] = { { XB_FIELD_GUARDS, "guard" },
		      { XB_FIELD_OPEN_TCP, "open-tcp" },
		      { XB_FIELD_OPEN_UDP, "open-udp" } };
	bool any = false;

	if (!ports)
		return;
	printf("%-13s", "ports:");
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		struct json_object *arr = member(ports, xb_control_fields[lists[i].field].name);
		size_t n = json_object_array_length(arr);

		if (!n)
			continue;
		printf("%s%s ", any ? "; " : " ", lists[i].key);
		for (size_t j = 0; j < n; j++) /* a list of any length: no buffer to cut it */
			printf("%s%s", j ? "," : "",
			       json_object_get_string(json_object_array_get_idx(arr, j)));
		any = true;
	}
	if (json_object_get_boolean(member(ports, XB_F(PROBE_ICMP)))) {
		printf("%sprobe-icmp yes", any ? "; " : " ");
		any = true;
	}
	printf("%s\n", any ? "" : " none");
}

static void render_interfaces(struct json_object *ifaces)
{
	size_t n = json_object_array_length(ifaces);

	printf("%-13s", "interfaces:");
	for (size_t i = 0; i < n; i++) {
		struct json_object *it = json_object_array_get_idx(ifaces, i);

		struct json_object *mtu = member(it, XB_F(MTU));

		printf(" %s (%s", str(it, XB_F(NAME)) ?: "?", str(it, XB_F(MODE)) ?: "?");
		if (mtu)
			printf(", MTU %" PRId64, json_object_get_int64(mtu));
		printf(")");
	}
	printf("%s\n", n ? "" : " none");
}

/* The list files of the configuration, one line each under the first: "deny FILE (N entries)". */
static void render_daemon_lists(struct json_object *lists)
{
	size_t n = json_object_array_length(lists);

	printf("%-13s", "lists:");
	for (size_t i = 0; i < n; i++) {
		struct json_object *l = json_object_array_get_idx(lists, i);

		printf("%s %s %s (%" PRId64 " %s)\n", i ? "             " : "",
		       str(l, XB_F(VERDICT)) ?: "?", str(l, XB_F(FILE)) ?: "?",
		       num(l, XB_F(ENTRIES)), xb_plural(num(l, XB_F(ENTRIES)), "entry", "entries"));
	}
	if (!n)
		printf(" none\n");
}

static void render_escalation(struct json_object *e)
{
	char max[XB_DURATION_TEXT_MAX], period[XB_DURATION_TEXT_MAX];

	if (!json_object_get_boolean(member(e, XB_F(ENABLED)))) {
		printf("%-13s off\n", "escalation:");
		return;
	}
	printf("%-13s on: ban time x%g per repeat within %s, at most %s; %" PRId64 " %s, %" PRId64
	       " %s lengthened\n",
	       "escalation:", json_object_get_double(member(e, XB_F(FACTOR))),
	       render_duration(num(e, XB_F(PERIOD_S)), period, sizeof(period)),
	       render_duration(num(e, XB_F(MAX_BAN_TIME_S)), max, sizeof(max)),
	       num(e, XB_F(OFFENDERS)), xb_plural(num(e, XB_F(OFFENDERS)), "offender", "offenders"),
	       num(e, XB_F(ESCALATED)), xb_plural(num(e, XB_F(ESCALATED)), "ban", "bans"));
}

/* [fleet]: the link, then what became of the entries. The link's error (Redis's words, which
 * may hold a newline) stays on the line: quoted as a message quotes, cut at XB_ERRLEN. */
static void render_fleet(struct json_object *f)
{
	const char *error = str(f, XB_F(FLEET_ERROR));
	char quoted[XB_ERRLEN];

	printf("%-13s node %s, redis %s, stream %s: %s", "fleet:", str(f, XB_F(NODE)) ?: "?",
	       str(f, XB_F(REDIS)) ?: "?", str(f, XB_F(STREAM)) ?: "?",
	       json_object_get_boolean(member(f, XB_F(CONNECTED))) ? "connected" : "not connected");
	if (error)
		printf(" (%s)", xb_quote(error, quoted, sizeof(quoted)));
	printf("\n");
	printf("%-13s %" PRId64 " published, %" PRId64 " queued, %" PRId64 " overflowed; last %s, lag %" PRId64
	       " ms\n", "", num(f, XB_F(PUBLISHED)), num(f, XB_F(QUEUED)), num(f, XB_F(OVERFLOWED)),
	       str(f, XB_F(LAST_ID)) ?: "none", num(f, XB_F(LAG_MS)));
	printf("%-13s %" PRId64 " applied (%" PRId64 " remote bans in force), refused %" PRId64
	       " malformed, %" PRId64 " expired, %" PRId64 " by policy; skipped %" PRId64
	       " own, %" PRId64 " local\n",
	       "", num(f, XB_F(APPLIED)), num(f, XB_F(REMOTE_BANS)),
	       num(f, XB_F(REFUSED_MALFORMED)), num(f, XB_F(REFUSED_EXPIRED)),
	       num(f, XB_F(REFUSED_POLICY)), num(f, XB_F(SKIPPED_OWN)),
	       num(f, XB_F(SKIPPED_LOCAL)));
}

/* The settings `xdpban set` changed, which are in force over the config file's: "limit 15,
 * ban-time 2h". An older daemon's reply, without them, shows nothing. */
static void render_set_values(struct json_object *set)
{
	bool first = true;

	if (!set)
		return;
	printf("%-13s", "set values:");
	json_object_object_foreach(set, key, v)
	{
		printf("%s %s %s", first ? "" : ",", key, json_object_get_string(v));
		first = false;
	}
	printf("%s\n", first ? " none (the config file's are in force)"
			      : " (xdpban set, over the config file's until a reload)");
}

/* What the daemon reports of itself (the "xdpband" member): everything --json has. */
static void render_daemon(struct json_object *x)
{
	struct json_object *hosts = member(x, XB_F(HOST_ADDRESSES));
	size_t n = json_object_array_length(hosts);

	printf("%-13s running (pid %" PRId64 ", since %s)\n", "daemon:", num(x, XB_F(PID)),
	       str(x, XB_F(STARTED)) ?: "?");
	printf("%-13s %s (%s at exit)\n", "pin dir:", str(x, XB_F(PIN_DIR)) ?: "?",
	       json_object_get_boolean(member(x, XB_F(DETACH_ON_EXIT))) ? "detached and removed"
								   : "left attached");
	printf("%-13s %s\n", "state file:", str(x, XB_F(STATE_FILE)) ?: "off");
	render_set_values(member(x, XB_F(SET_VALUES)));
	render_daemon_lists(member(x, XB_F(DAEMON_LISTS)));
	printf("%-13s", "host addrs:");
	for (size_t i = 0; i < n; i++) {
		struct json_object *h = json_object_array_get_idx(hosts, i);

		printf(" %s (%s)%s", str(h, XB_F(ADDRESS)) ?: "?", str(h, XB_F(INTERFACE)) ?: "?",
		       i + 1 < n ? "," : "");
	}
	printf("%s\n", n ? "" : " none");
	render_escalation(member(x, XB_F(ESCALATION)));
	if (member(x, XB_F(FLEET)))
		render_fleet(member(x, XB_F(FLEET)));
}

void render_status(struct json_object *r)
{
	if (member(r, XB_F(XDPBAND)))
		render_daemon(member(r, XB_F(XDPBAND)));
	else if (json_object_get_boolean(member(r, XB_F(DAEMON))))
		printf("%-13s running\n", "daemon:");
	else
		printf("%-13s none answered (maps read directly from %s)\n", "daemon:",
		       str(r, XB_F(PIN_DIR)) ?: "?");
	if (member(r, XB_F(INTERFACES)))
		render_interfaces(member(r, XB_F(INTERFACES)));
	if (str(r, XB_F(CONFIG_FILE)))
		printf("%-13s %s\n", "config file:", str(r, XB_F(CONFIG_FILE)));
	printf("%-13s ", "config:");
	render_config(member(r, XB_F(CONFIG)));
	render_ports(member(r, XB_F(PORTS)));
	printf("%-13s %" PRId64 " %s (counter table of %" PRId64 ")\n", "tracked:",
	       num(r, XB_F(TRACKED)), xb_plural(num(r, XB_F(TRACKED)), "source", "sources"),
	       num(r, XB_F(COUNTERS_MAX)));
	if (member(r, XB_F(VERIFIED_N)))
		printf("%-13s %" PRId64 " %s with a hop count proved by a TCP connection\n",
		       "verified:", num(r, XB_F(VERIFIED_N)),
		       xb_plural(num(r, XB_F(VERIFIED_N)), "source", "sources"));
	printf("%-13s %" PRId64 " in the ban table (of %" PRId64 "), %" PRId64 " prefix %s\n",
	       "banned:", num(r, XB_F(BANNED_N)), num(r, XB_F(BANS_MAX)),
	       num(r, XB_F(PREFIX_BANS)), xb_plural(num(r, XB_F(PREFIX_BANS)), "ban", "bans"));
	printf("%-13s %" PRId64 " IPv4 and %" PRId64 " IPv6 prefixes\n", "policy:",
	       num(r, XB_F(POLICY_IPV4)), num(r, XB_F(POLICY_IPV6)));
	printf("\n");
	render_stats(member(r, XB_F(STATS)));
}

/* text padded with spaces to width (at most 48), on the right (left-aligned) or on the left:
 * what printf's %-Ns and %Ns print, without parsing a format a million times. A missing text
 * (a daemon's reply without the field) shows as "?". */
static void put_padded(const char *text, size_t width, bool align_left)
{
	static const char spaces[] = "                                                ";
	size_t len, pad;

	if (!text)
		text = "?";
	len = strlen(text);
	pad = len < width ? width - len : 0;
	if (pad > sizeof(spaces) - 1)
		pad = sizeof(spaces) - 1;

	if (!align_left)
		fwrite_unlocked(spaces, 1, pad, stdout);
	fwrite_unlocked(text, 1, len, stdout);
	if (align_left)
		fwrite_unlocked(spaces, 1, pad, stdout);
}

/* "%-44s %-8s %10lld %12s %-14s %s\n", with the header before the first row; with the fleet
 * on (origin not NULL), "%-20s " more before the newline: the node a remote ban came from;
 * with comments (comment not NULL), each column before padded and the comment last ("-":
 * none). */
void render_ban_row(bool *header_done, const struct ban_row *row)
{
	char left[XB_DURATION_TEXT_MAX], number[24], drops[24] = "-";
	const char *origin = row->origin, *started = row->started, *comment = row->comment;

	if (!*header_done) {
		const char *last = origin ? "ORIGIN" : "STARTED";

		printf("%-44s %-8s %10s %12s %-14s ", "PREFIX", "REASON", "COUNT", "DROPS", "LEFT");
		if (origin)
			printf("%-20s ", "STARTED");
		if (comment)
			printf("%-20s %s\n", last, "COMMENT");
		else
			printf("%s\n", last);
		*header_done = true;
	}
	*put_decimal(number, row->count) = '\0';
	if (row->drops >= 0)
		*put_decimal(drops, row->drops) = '\0';
	put_padded(row->prefix, 44, true);
	putchar_unlocked(' ');
	put_padded(row->reason, 8, true);
	putchar_unlocked(' ');
	put_padded(number, 10, false);
	putchar_unlocked(' ');
	put_padded(drops, 12, false);
	putchar_unlocked(' ');
	put_padded(render_duration(row->seconds_left, left, sizeof(left)), 14, true);
	putchar_unlocked(' ');
	if (origin) {
		put_padded(started ? started : "-", 20, true);
		putchar_unlocked(' ');
	}
	put_padded(origin ? origin : started ? started : "-", comment ? 20 : 0, true);
	if (comment) {
		putchar_unlocked(' ');
		fputs_unlocked(comment, stdout);
	}
	putchar_unlocked('\n');
}

/* Whether any ban of the listing has a comment: then the listing has a COMMENT column. */
static bool any_comment(struct json_object *bans)
{
	for (size_t i = 0; i < json_object_array_length(bans); i++)
		if (member(json_object_array_get_idx(bans, i), XB_F(COMMENT)))
			return true;
	return false;
}

void render_bans(struct json_object *reply)
{
	struct json_object *bans = member(reply, XB_F(BANS)),
			   *origins = member(reply, XB_F(ORIGINS));
	size_t n = json_object_array_length(bans);
	bool header_done = false, comments = any_comment(bans), observed = false;

	for (size_t i = 0; i < n; i++) {
		struct json_object *b = json_object_array_get_idx(bans, i);
		const char *origin =
			origins ? str(origins, str(b, XB_F(PREFIX)) ?: "") ?: "-" : NULL;

		observed |= json_object_get_boolean(member(b, XB_F(OBSERVED)));
		struct ban_row row = {
			.prefix = str(b, XB_F(PREFIX)), .reason = str(b, XB_F(REASON)),
			.count = num(b, XB_F(COUNT)),
			.drops = json_object_is_type(member(b, XB_F(DROPS)), json_type_int)
					 ? num(b, XB_F(DROPS))
					 : -1,
			.seconds_left = num(b, XB_F(SECONDS_LEFT)), .started = str(b, XB_F(STARTED)),
			.origin = origin, .comment = comments ? str(b, XB_F(COMMENT)) ?: "-" : NULL,
		};

		render_ban_row(&header_done, &row);
	}
	if (!n)
		printf("no bans\n");
	if (observed)
		render_observed_note();
}

void render_observed_note(void)
{
	printf("observe mode: these bans drop nothing; they show what would have been dropped\n");
}

/* Why an exempt source is never banned, in the words of a refused ban. */
/* ', "COMMENT"' after the entry a query names, or "" when it has none. */
static const char *comment_text(const char *comment, char *buf, size_t len)
{
	buf[0] = '\0';
	if (comment && *comment)
		snprintf(buf, len, ", \"%s\"", comment);
	return buf;
}

static void render_exempt(struct json_object *r)
{
	const char *why = str(r, XB_F(EXEMPT_WHY)) ?: "?",
		   *match = str(r, XB_F(EXEMPT_MATCH)) ?: "?";
	char text[XB_COMMENT_MAX + 8];

	if (!json_object_get_boolean(member(r, XB_F(EXEMPT))))
		printf("%-13s no\n", "exempt:");
	else if (!strcmp(why, "host") && str(r, XB_F(EXEMPT_INTERFACE)))
		printf("%-13s yes (host address of %s)\n",
		       "exempt:", str(r, XB_F(EXEMPT_INTERFACE)));
	else if (!strcmp(why, "host"))
		printf("%-13s yes (host address of ifindex %" PRId64 ")\n", "exempt:",
		       num(r, XB_F(EXEMPT_IFINDEX)));
	else if (!strcmp(why, "built-in"))
		printf("%-13s yes (built in: %s)\n", "exempt:", match);
	else if (str(r, XB_F(EXEMPT_FILE)))
		printf("%-13s yes (never-ban %s, %s:%" PRId64 "%s)\n", "exempt:", match,
		       str(r, XB_F(EXEMPT_FILE)), num(r, XB_F(EXEMPT_LINE)),
		       comment_text(str(r, XB_F(EXEMPT_COMMENT)), text, sizeof(text)));
	else if (strcmp(match, str(r, XB_F(ADDRESS)) ?: ""))
		printf("%-13s yes (never-ban list %s)\n", "exempt:", match);
	else
		printf("%-13s yes (never-ban list)\n", "exempt:");
}

/* The exempt line, the reference hop count and the dispute (docs/datapath.md, section 8). */
static void render_query_spoof(struct json_object *r)
{
	char ago[XB_DURATION_TEXT_MAX];

	render_exempt(r);
	if (!member(r, XB_F(HOP)) || json_object_is_type(member(r, XB_F(HOP)), json_type_null))
		printf("%-13s none yet\n", "hop count:");
	else if (json_object_get_boolean(member(r, XB_F(VERIFIED))))
		printf("%-13s %" PRId64 ", verified by a TCP connection %s ago\n",
		       "hop count:", num(r, XB_F(HOP)),
		       render_duration(num(r, XB_F(VERIFIED_AGO_S)), ago, sizeof(ago)));
	else
		printf("%-13s %" PRId64 ", from the first error of the window (not verified)\n",
		       "hop count:", num(r, XB_F(HOP)));
	if (json_object_get_boolean(member(r, XB_F(DISPUTED))))
		printf("%-13s yes: an error disagreed with the hop count; none is counted until the window ends\n",
		       "disputed:");
	else
		printf("%-13s no\n", "disputed:");
}

void render_query(struct json_object *r)
{
	char left[XB_DURATION_TEXT_MAX], classes[64], comment[XB_COMMENT_MAX + 8];
	struct json_object *window = member(r, XB_F(CLASSES)),
			   *crossed = member(r, XB_F(BAN_CLASSES));

	printf("%-13s %s\n", "address:", str(r, XB_F(ADDRESS)));
	printf("%-13s %s\n", "key:", str(r, XB_F(QUERY_KEY)));
	if (window && json_object_array_length(window))
		printf("%-13s %" PRId64 " errors in the current window (%s)\n", "count:",
		       num(r, XB_F(COUNT)), joined(window, classes, sizeof(classes)));
	else
		printf("%-13s %" PRId64 " errors in the current window\n",
		       "count:", num(r, XB_F(COUNT)));
	if (str(r, XB_F(RULE)))
		printf("%-13s %" PRId64 " (rule %s)\n", "limit:", num(r, XB_F(LIMIT)),
		       str(r, XB_F(RULE)));
	if (json_object_get_boolean(member(r, XB_F(BANNED))) && crossed &&
	    json_object_array_length(crossed))
		printf("%-13s yes (%s: %s, %s)\n", "banned:", str(r, XB_F(BAN_REASON)),
		       joined(crossed, classes, sizeof(classes)),
		       render_duration(num(r, XB_F(SECONDS_LEFT)), left, sizeof(left)));
	else if (json_object_get_boolean(member(r, XB_F(BANNED))))
		printf("%-13s yes (%s, %s)\n", "banned:", str(r, XB_F(BAN_REASON)),
		       render_duration(num(r, XB_F(SECONDS_LEFT)), left, sizeof(left)));
	else
		printf("%-13s no\n", "banned:");
	if (str(r, XB_F(LAST_ERROR)))
		printf("%-13s %s at %s (rule %s)\n", "last error:", str(r, XB_F(LAST_ERROR)),
		       str(r, XB_F(STARTED)) ?: "?", str(r, XB_F(BAN_RULE)) ?: "?");
	if (json_object_is_type(member(r, XB_F(DROPS)), json_type_int))
		printf("%-13s %" PRId64 " %s since the ban began\n", "drops:", num(r, XB_F(DROPS)),
		       xb_plural(num(r, XB_F(DROPS)), "packet", "packets"));
	if (str(r, XB_F(COMMENT)))
		printf("%-13s %s\n", "comment:", str(r, XB_F(COMMENT)));
	if (str(r, XB_F(BAN_ORIGIN)))
		printf("%-13s fleet node %s\n", "origin:", str(r, XB_F(BAN_ORIGIN)));
	if (str(r, XB_F(POLICY_MATCH)) && (__u32)num(r, XB_F(POLICY_LIST)) == XDPBAN_LIST_DEFAULT)
		printf("%-13s %s (allow-only mode: in no allow list)\n", "policy:",
		       str(r, XB_F(POLICY)));
	else if (str(r, XB_F(POLICY_MATCH)) &&
		 (__u32)num(r, XB_F(POLICY_LIST)) == XDPBAN_LIST_MANUAL_BAN)
		printf("%-13s %s (%s, manual)\n", "policy:", str(r, XB_F(POLICY)),
		       str(r, XB_F(POLICY_MATCH)));
	else if (str(r, XB_F(POLICY_FILE)))
		printf("%-13s %s (%s, %s:%" PRId64 ", %s %s list%s)\n",
		       "policy:", str(r, XB_F(POLICY)), str(r, XB_F(POLICY_MATCH)),
		       str(r, XB_F(POLICY_FILE)), num(r, XB_F(POLICY_LINE)),
		       str(r, XB_F(POLICY_ORIGIN)), str(r, XB_F(POLICY_LAYER)),
		       comment_text(str(r, XB_F(POLICY_COMMENT)), comment, sizeof(comment)));
	else if (str(r, XB_F(POLICY_MATCH)))
		printf("%-13s %s (%s, list %" PRId64 ")\n", "policy:", str(r, XB_F(POLICY)),
		       str(r, XB_F(POLICY_MATCH)), num(r, XB_F(POLICY_LIST)));
	else
		printf("%-13s %s\n", "policy:", str(r, XB_F(POLICY)));
	if (json_object_get_boolean(member(r, XB_F(OBSERVED))))
		printf("%-13s yes (observe mode: passed; would have been dropped)\n", "observed:");
	if (str(r, XB_F(OBSERVED_FILE)))
		printf("%-13s %s (%s:%" PRId64 ", observed deny list: would be denied)\n",
		       "observed in:", str(r, XB_F(OBSERVED_MATCH)), str(r, XB_F(OBSERVED_FILE)),
		       num(r, XB_F(OBSERVED_LINE)));
	else if (str(r, XB_F(OBSERVED_MATCH)))
		printf("%-13s %s (list %" PRId64 ", observed deny list: would be denied)\n",
		       "observed in:", str(r, XB_F(OBSERVED_MATCH)), num(r, XB_F(OBSERVED_LIST)));
	if (member(r, XB_F(EXEMPT)))
		render_query_spoof(r);
}

/* The entries of the exempt tries, after the lists (a reply without them shows nothing). */
static void render_exempt_counts(struct json_object *exempt)
{
	struct json_object *nb = member(exempt, XB_F(NEVER_BAN)),
			   *host = member(exempt, XB_F(HOST));

	if (!exempt)
		return;
	printf("\n%-12s %" PRId64 " IPv4 and %" PRId64 " IPv6 prefixes (never counted or banned)\n",
	       "never-ban:", num(nb, XB_F(IPV4)), num(nb, XB_F(IPV6)));
	printf("%-12s %" PRId64 " IPv4 and %" PRId64 " IPv6 addresses of the protected interfaces\n",
	       "host:", num(host, XB_F(IPV4)), num(host, XB_F(IPV6)));
}

void render_lists_reply(struct json_object *r)
{
	render_lists(member(r, XB_F(LISTS)));
	render_exempt_counts(member(r, XB_F(EXEMPT_COUNTS)));
}

void render_lists(struct json_object *lists)
{
	size_t n = json_object_array_length(lists);

	if (!n) {
		printf("no policy lists loaded\n");
		return;
	}
	/* 13: observed-deny, the widest verdict, fits its column. */
	printf("%-12s %-13s %10s %10s  %s\n", "LIST", "VERDICT", "IPV4", "IPV6", "NAME");
	for (size_t i = 0; i < n; i++) {
		struct json_object *l = json_object_array_get_idx(lists, i);
		bool manual = json_object_get_boolean(member(l, XB_F(MANUAL)));
		bool dflt = json_object_get_boolean(member(l, XB_F(DEFAULT)));
		char id[16];

		if (manual || dflt)
			snprintf(id, sizeof(id), manual ? "manual" : "default");
		else
			snprintf(id, sizeof(id), "%" PRId64, num(l, XB_F(LIST)));
		printf("%-12s %-13s %10" PRId64 " %10" PRId64 "  %s\n", id, str(l, XB_F(VERDICT)),
		       num(l, XB_F(IPV4)), num(l, XB_F(IPV6)),
		       str(l, XB_F(NAME)) ?: manual ? "manual prefix bans"
				 : dflt	  ? "allow-only mode: every address in no allow list"
					  : "-");
	}
}

/* A count of addresses: IPv4 an integer, IPv6 a decimal string (lists show --json). */
static const char *addrs(struct json_object *o, const char *name)
{
	return json_object_get_string(member(o, name)) ?: "?";
}

/* The single entries of a layer, under its <entries> row: "  PREFIX  # COMMENT". */
static void render_entries(struct json_object *entries)
{
	for (size_t i = 0; entries && i < json_object_array_length(entries); i++) {
		struct json_object *e = json_object_array_get_idx(entries, i);
		const char *comment = str(e, XB_F(COMMENT)) ?: "";

		printf("  %s%s%s\n", str(e, XB_F(PREFIX)) ?: "?", *comment ? "  # " : "", comment);
	}
}

void render_lists_show(struct json_object *r)
{
	struct json_object *layers = member(r, XB_F(LAYERS)), *totals = member(r, XB_F(TOTALS));
	static const enum xb_control_field kinds[] = {XB_FIELD_TOTAL_ALLOWED, XB_FIELD_TOTAL_DENIED,
						      XB_FIELD_TOTAL_TRUSTED};

	/* 13: observed-deny, the widest layer, fits its column. */
	printf("%-13s %-8s %9s %12s %-40s %s\n", "LAYER", "ORIGIN", "ENTRIES", "IPV4 ADDRS",
	       "IPV6 ADDRS", "FILE");
	for (size_t i = 0; i < json_object_array_length(layers); i++) {
		struct json_object *l = json_object_array_get_idx(layers, i);
		struct json_object *files = member(l, XB_F(LAYER_FILES));

		for (size_t j = 0; j < json_object_array_length(files); j++) {
			struct json_object *f = json_object_array_get_idx(files, j);

			printf("%-13s %-8s %9" PRId64 " %12s %-40s %s", str(l, XB_F(LAYER)),
			       str(f, XB_F(FILE_ORIGIN)), num(f, XB_F(ENTRIES)),
			       addrs(f, XB_F(IPV4_ADDRESSES)), addrs(f, XB_F(IPV6_ADDRESSES)),
			       str(f, XB_F(FILE)));
			if (num(f, XB_F(SKIPPED)))
				printf(" (%" PRId64 " bad %s skipped)", num(f, XB_F(SKIPPED)),
				       xb_plural(num(f, XB_F(SKIPPED)), "line", "lines"));
			printf("\n");
			render_entries(member(f, XB_F(ENTRY_LIST)));
		}
	}
	printf("%-8s %-8s %9s %12s %-40s %s\n", "default",
	       json_object_get_boolean(member(r, XB_F(ALLOW_ONLY))) ? "dropped" : "passed", "-",
	       addrs(member(r, XB_F(DEFAULT_LAYER)), XB_F(IPV4_ADDRESSES)),
	       addrs(member(r, XB_F(DEFAULT_LAYER)), XB_F(IPV6_ADDRESSES)),
	       json_object_get_boolean(member(r, XB_F(ALLOW_ONLY)))
		       ? "(allow-only mode: in no allow list)"
		       : "(in no list)");
	for (size_t k = 0; k < 3; k++) {
		const char *kind = xb_control_fields[kinds[k]].name;
		struct json_object *t = member(totals, kind);

		printf("%-8s IPv4 %s, IPv6 %s\n", kind, addrs(t, XB_F(IPV4_ADDRESSES)),
		       addrs(t, XB_F(IPV6_ADDRESSES)));
	}
}

/* One list file a reload changed: its prefixes before and after, or that it came or went. */
static void render_list_change(struct json_object *l)
{
	struct json_object *before = member(l, XB_F(BEFORE)), *after = member(l, XB_F(AFTER));
	int64_t was = json_object_get_int64(before), now = json_object_get_int64(after);

	printf("  %s list %s: ", str(l, XB_F(CHANGED_LAYER)) ?: "?", str(l, XB_F(FILE)) ?: "?");
	if (!before)
		printf("added, %" PRId64 " %s\n", now, xb_plural(now, "prefix", "prefixes"));
	else if (!after)
		printf("dropped (had %" PRId64 " %s)\n", was, xb_plural(was, "prefix", "prefixes"));
	else if (was == now)
		printf("%" PRId64 " %s, other ones\n", now, xb_plural(now, "prefix", "prefixes"));
	else
		printf("%" PRId64 " -> %" PRId64 " prefixes\n", was, now);
}

/* "reloaded FILE: no change", or a line per setting and list file that changed, and the keys
 * that wait for a restart; "reloaded FILE" alone from a daemon that does not say what changed. */
void render_reload(struct json_object *r)
{
	struct json_object *settings = member(r, XB_F(CHANGED));
	struct json_object *lists = member(r, XB_F(LISTS_CHANGED));
	struct json_object *restart = member(r, XB_F(RESTART));
	size_t n_settings = json_object_array_length(settings);
	size_t n_lists = json_object_array_length(lists);
	char names[512];

	if (!settings && !lists && !restart) { /* the daemon could not tell (out of memory) */
		printf("reloaded %s\n", str(r, XB_F(CONFIG_FILE)) ?: "?");
		return;
	}
	if (!n_settings && !n_lists && !json_object_array_length(restart)) {
		printf("reloaded %s: no change\n", str(r, XB_F(CONFIG_FILE)) ?: "?");
		return;
	}
	printf("reloaded %s:\n", str(r, XB_F(CONFIG_FILE)) ?: "?");
	for (size_t i = 0; i < n_settings; i++) {
		struct json_object *s = json_object_array_get_idx(settings, i);

		printf("  %s: %s -> %s\n", str(s, XB_F(SETTING)) ?: "?", str(s, XB_F(OLD)) ?: "?",
		       str(s, XB_F(NEW)) ?: "?");
	}
	for (size_t i = 0; i < n_lists; i++)
		render_list_change(json_object_array_get_idx(lists, i));
	if (json_object_array_length(restart))
		printf("  changed, but waiting for a restart: %s\n",
		       joined(restart, names, sizeof(names)));
}
