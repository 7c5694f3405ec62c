/* metrics.c - see metrics.h. libmicrohttpd runs in epoll mode without a thread of its own:
 * its epoll fd joins the daemon's poll, so every map read happens on the daemon's thread. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include "log.h"
#include "metrics.h"
#include "table.h"
#include "xdpban_time.h"

/* libmicrohttpd's own idle timeout: only a backstop behind XBD_METRICS_REQUEST_MS. */
#define METRICS_CONN_TIMEOUT_S 10
#define METRICS_SLOW_LOG_MS 60000 /* at most one line a minute about slow clients */

static void counter_header(FILE *out, const char *name, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
}

static void gauge(FILE *out, const char *name, const char *help, long long value)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s gauge\n%s %lld\n", name, help, name, name, value);
}

static void per_verdict(FILE *out, const char *name, const char *help,
			const struct xdpban_stat_value *stats, int bytes)
{
	counter_header(out, name, help);
	for (int i = 0; i < XDPBAN_STAT__VERDICTS; i++)
		fprintf(out, "%s{reason=\"%s\"} %llu\n", name, xb_stat_name(i),
			(unsigned long long)(bytes ? stats[i].bytes : stats[i].packets));
}

/* The stat's name in a metric's: Prometheus refuses a metric name holding a type ("counter"),
 * so counter_full is the tracking table's (the per-source error counts) being full. */
static const char *event_metric_name(enum xdpban_stat s)
{
	return s == XDPBAN_STAT_COUNTER_FULL ? "tracking_full" : xb_stat_name(s);
}

/* One counter per event: xdpban_NAME_total, with the help text of the list of stats. */
static void event_counter(FILE *out, enum xdpban_stat s, const struct xdpban_stat_value *stats)
{
	char name[64];

	snprintf(name, sizeof(name), "xdpban_%s_total", event_metric_name(s));
	counter_header(out, name, xb_stat_help(s));
	fprintf(out, "%s %llu\n", name, (unsigned long long)stats[s].packets);
}

/* The per-class rows (XDPBAN_STAT_CLASS_*) as one counter labelled by class, named by
 * XDPBAN_CLASSES: one family is what a query sums or splits, not four metrics. */
static bool class_row(int s)
{
	return s >= XDPBAN_STAT_OF_CLASS_BITNO(0) &&
	       s < XDPBAN_STAT_OF_CLASS_BITNO(XDPBAN_CLASS__COUNT);
}

static void per_class(FILE *out, const struct xdpban_stat_value *stats)
{
	const char *name = "xdpban_class_errors_total";

	counter_header(out, name,
		       "Errors of each class from sources neither trusted, denied nor banned, "
		       "counted towards a ban or not.");
	for (unsigned int i = 0; i < XDPBAN_CLASS__COUNT; i++)
		fprintf(out, "%s{class=\"%s\"} %llu\n", name, xb_class_name(1u << i),
			(unsigned long long)stats[XDPBAN_STAT_OF_CLASS_BITNO(i)].packets);
}

/* Slots holding a counter or a ban: what the table fill gauges divide by the capacity. */
static int count_counter(const struct xdpban_key *key, const struct xb_counter *ctr, void *ctx)
{
	(*(long long *)ctx)++;
	return 0;
}

static int count_ban(const struct xdpban_key *key, const struct xdpban_ban *ban, void *ctx)
{
	(*(long long *)ctx)++;
	return 0;
}

/* The gauges, read from the maps (and the offence history) at scrape time. */
struct gauges {
	int tracked, banned, prefix_bans;
	long long counters_used, bans_used;
	__u32 counters_max, bans_max;
	bool observe;
};

static int observe_read(const struct xb_maps *maps, bool *observe)
{
	struct xdpban_config cfg;
	int ret = xb_config_read(maps, &cfg);

	*observe = !ret && cfg.mode == XDPBAN_MODE_OBSERVE;
	return ret;
}

static int gauges_read(const struct xb_maps *maps, struct gauges *g)
{
	int ret;

	*g = (struct gauges){ 0 };
	g->tracked = xb_count_tracked(maps);
	g->banned = xb_count_banned(maps, xb_boot_ns());
	g->prefix_bans = xb_count_prefix_bans(maps);
	if (g->tracked < 0 || g->banned < 0 || g->prefix_bans < 0)
		return g->tracked < 0 ? g->tracked : g->banned < 0 ? g->banned : g->prefix_bans;
	ret = xb_capacity(maps, &g->counters_max, &g->bans_max);
	if (!ret)
		ret = observe_read(maps, &g->observe);
	if (!ret)
		ret = xb_counters_walk_in(maps, xb_boot_ns() / NS_PER_SEC, count_counter,
					  &g->counters_used);
	if (!ret)
		ret = xb_bans_walk_in(maps, count_ban, &g->bans_used);
	return ret;
}

/* Every gauge, from this one table: deploy/xdpband.8 (METRICS) lists them, and
 * tests/e2e/e2e_prometheus.sh checks the list against what a scrape returns. */
static void gauges_emit(FILE *out, const struct gauges *g, const struct xbd_history *history)
{
	const struct {
		const char *name, *help;
		long long value;
	} rows[] = {
		{ "xdpban_tracked_sources",
		  "Sources whose counting window is open (errors, or a dispute).", g->tracked },
		{ "xdpban_offenders", "Sources in the offence history used for escalation.",
		  (long long)history->n },
		{ "xdpban_tracking_table_used",
		  "Slots of the tracking table (the per-source error counts) holding a counter, "
		  "with a counting window or not.",
		  g->counters_used },
		{ "xdpban_tracking_table_capacity",
		  "Slots of the tracking table (the per-source error counts): the most sources it "
		  "can count at once.",
		  g->counters_max },
		{ "xdpban_ban_table_used",
		  "Bans in the ban table, expired ones not yet lifted included.", g->bans_used },
		{ "xdpban_ban_table_capacity",
		  "Bans the ban table is sized for (half its slots): past it, new bans may find no "
		  "room.",
		  g->bans_max },
		{ "xdpban_observe_mode",
		  "1 in observe mode: bans and lists drop nothing, the observed_* counters count "
		  "what they would have dropped; 0 when they drop.",
		  g->observe },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		gauge(out, rows[i].name, rows[i].help, rows[i].value);
	/* By the table the ban lives in, as `xdpban bans --json` names it: every ban is in one. */
	fprintf(out, "# HELP xdpban_banned_sources Unexpired bans at scrape time, by table: bans "
		     "(one source key each), policy (manual prefix bans, one per prefix).\n"
		     "# TYPE xdpban_banned_sources gauge\n"
		     "xdpban_banned_sources{table=\"bans\"} %d\n"
		     "xdpban_banned_sources{table=\"policy\"} %d\n",
		g->banned, g->prefix_bans);
}

int xbd_metrics_render(FILE *out, const struct xb_maps *maps, const struct xbd_history *history)
{
	struct xdpban_stat_value stats[XDPBAN_STAT__MAX];
	struct gauges g;
	int ret = xb_stats_read(maps, stats);

	if (!ret)
		ret = gauges_read(maps, &g);
	if (ret)
		return ret;
	per_verdict(out, "xdpban_packets_total", "Packets seen by the XDP program, by verdict.",
		    stats, 0);
	per_verdict(out, "xdpban_bytes_total", "Bytes (frame lengths) seen, by verdict.", stats, 1);
	for (int i = XDPBAN_STAT__VERDICTS; i < XDPBAN_STAT__MAX; i++)
		if (!class_row(i))
			event_counter(out, i, stats);
	per_class(out, stats);
	counter_header(out, "xdpban_bans_escalated_total",
		       "Bans lengthened for repeat offenders since the daemon started.");
	fprintf(out, "xdpban_bans_escalated_total %llu\n", (unsigned long long)history->escalated);
	gauges_emit(out, &g, history);
	return ferror(out) ? -EIO : 0;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, char *body,
			     size_t len, const char *type)
{
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (!resp) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned int status,
				  const char *text)
{
	char *body = strdup(text);

	return body ? reply(conn, status, body, strlen(body), "text/plain") : MHD_NO;
}

static __u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + (__u64)ts.tv_nsec / 1000000;
}

static struct xbd_metrics_conn *conn_slot(struct xbd_metrics *mt,
					  const struct MHD_Connection *conn)
{
	for (size_t i = 0; i < XBD_METRICS_CONN_LIMIT; i++)
		if (mt->conns[i].conn == conn)
			return &mt->conns[i];
	return NULL;
}

/* A connection opened (its request deadline starts) or closed (its slot frees). One that finds
 * no slot is past the limit, which libmicrohttpd refuses anyway. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_ctx,
			  enum MHD_ConnectionNotificationCode code)
{
	struct xbd_metrics *mt = cls;
	struct xbd_metrics_conn *slot;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		slot = conn_slot(mt, NULL);
		if (slot)
			*slot = (struct xbd_metrics_conn){ .conn = conn, .since_ms = now_ms() };
	} else if ((slot = conn_slot(mt, conn))) {
		*slot = (struct xbd_metrics_conn){ 0 };
	}
}

/* An answer went out (or failed): a kept-alive connection waits for its next request anew. */
static void on_completed(void *cls, struct MHD_Connection *conn, void **req_ctx,
			 enum MHD_RequestTerminationCode code)
{
	struct xbd_metrics_conn *slot = conn_slot(cls, conn);

	if (slot) {
		slot->answering = false;
		slot->since_ms = now_ms();
	}
}

/* Shuts down every connection whose request is overdue; libmicrohttpd then sees it closed and
 * frees it. Logged at most once a minute, with how many. */
static void close_overdue(struct xbd_metrics *mt, __u64 now)
{
	for (size_t i = 0; i < XBD_METRICS_CONN_LIMIT; i++) {
		struct xbd_metrics_conn *c = &mt->conns[i];
		const union MHD_ConnectionInfo *info;

		if (!c->conn || c->answering || now - c->since_ms < XBD_METRICS_REQUEST_MS)
			continue;
		info = MHD_get_connection_info(c->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (info)
			shutdown(info->connect_fd, SHUT_RDWR);
		c->answering = true; /* shut: not again */
		mt->slow_closed++;
	}
	if (mt->slow_closed && now - mt->slow_logged_ms >= METRICS_SLOW_LOG_MS) {
		pr_warn("metrics: %zu %s closed that sent no whole request within %d ms",
			mt->slow_closed, xb_plural(mt->slow_closed, "connection", "connections"),
			XBD_METRICS_REQUEST_MS);
		mt->slow_closed = 0;
		mt->slow_logged_ms = now;
	}
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req_ctx)
{
	struct xbd_metrics *mt = cls;
	struct xbd_metrics_conn *slot = conn_slot(mt, conn);
	char *body = NULL;
	size_t len = 0;
	FILE *out;
	int ret;

	if (slot)
		slot->answering = true;
	if (strcmp(method, MHD_HTTP_METHOD_GET))
		return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET\n");
	if (strcmp(url, "/metrics"))
		return reply_text(conn, MHD_HTTP_NOT_FOUND, "see /metrics\n");
	out = open_memstream(&body, &len);
	if (!out)
		return MHD_NO;
	ret = xbd_metrics_render(out, mt->maps, mt->history);
	if (!ret && mt->extra)
		mt->extra(out, mt->extra_ctx);
	fclose(out);
	if (ret) {
		free(body);
		pr_warn("metrics: cannot read the maps: %s", strerror(-ret));
		return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read the maps\n");
	}
	return reply(conn, MHD_HTTP_OK, body, len, "text/plain; version=0.0.4");
}

/* libmicrohttpd's own errors (a bind failure, a bad request) into the daemon's log. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	xbd_vlog(XBD_LOG_WARN, fmt, ap);
}

int xbd_metrics_start(struct xbd_metrics *mt, const struct xbd_conf *conf,
		      const struct xb_maps *maps, const struct xbd_history *history, char *err,
		      size_t errlen)
{
	unsigned int flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;

	*mt = (struct xbd_metrics){ .maps = maps, .history = history };
	/* MHD's callbacks get mt itself: the caller's struct must not move after this. */
	if (!conf->metrics_listen)
		return 0;
	if (conf->metrics_addr.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	mt->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, mt,
				   MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, /* first: see its doc */
				   MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)&conf->metrics_addr,
				   MHD_OPTION_CONNECTION_LIMIT, (unsigned int)XBD_METRICS_CONN_LIMIT,
				   MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)METRICS_CONN_TIMEOUT_S,
				   MHD_OPTION_NOTIFY_CONNECTION, on_connection, mt,
				   MHD_OPTION_NOTIFY_COMPLETED, on_completed, mt,
				   MHD_OPTION_END);
	if (!mt->mhd) {
		snprintf(err, errlen, "metrics: cannot listen on %s", conf->metrics_listen);
		return -EADDRINUSE;
	}
	pr_info("metrics on http://%s/metrics", conf->metrics_listen);
	return 0;
}

int xbd_metrics_fd(const struct xbd_metrics *mt)
{
	const union MHD_DaemonInfo *info;

	if (!mt->mhd)
		return -1;
	info = MHD_get_daemon_info(mt->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	return info ? info->epoll_fd : -1;
}

int xbd_metrics_timeout_ms(const struct xbd_metrics *mt)
{
	MHD_UNSIGNED_LONG_LONG ms = 1000;
	__u64 now = now_ms();

	if (!mt->mhd)
		return -1;
	if (MHD_get_timeout(mt->mhd, &ms) != MHD_YES || ms > 1000)
		ms = 1000;
	for (size_t i = 0; i < XBD_METRICS_CONN_LIMIT; i++) {
		const struct xbd_metrics_conn *c = &mt->conns[i];
		__u64 due = c->since_ms + XBD_METRICS_REQUEST_MS;

		if (c->conn && !c->answering)
			ms = due <= now ? 0 : (due - now < ms ? due - now : ms);
	}
	return (int)ms;
}

void xbd_metrics_run(struct xbd_metrics *mt)
{
	if (!mt->mhd)
		return;
	close_overdue(mt, now_ms());
	MHD_run(mt->mhd);
}

void xbd_metrics_stop(struct xbd_metrics *mt)
{
	if (mt->mhd)
		MHD_stop_daemon(mt->mhd);
	mt->mhd = NULL;
}
