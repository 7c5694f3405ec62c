/* fleet.c - the fleet's two figures, on the daemons bench/fleet.sh starts
 * (the bed of tests/e2e/fleet_lib.sh: three xdpband nodes and redis-server, each in a namespace).
 *
 *   fleet latency N SOCK_A PIN_A PIN_B PIN_C
 *     N manual bans made on node A through its control socket, one after the other. Each ban's
 *     time is read from the ban tables themselves (mapped, user/lib/table.h): the start time a
 *     node writes with the ban (CLOCK_BOOTTIME, one clock for every process of this machine)
 *     is taken just before the write that puts it in force. Propagation = the later of B's
 *     and C's start minus A's. The tables are also polled (every 50 us) to know when both have
 *     it; the next ban is made only then, so that each sample is one ban alone in the fleet.
 *   fleet burst N HOST PORT USER PASSWORD_FILE STREAM MAXLEN PIN
 *     N bans from a node "node-burst" that is not running, XADDed in pipelines of 1000 (the
 *     fields as every node writes them, fleet_entry.c; MAXLEN ~ as the publisher does) as fast
 *     as Redis takes them, while the node whose maps are at PIN applies them. Apply rate = N
 *     over the time from the first XADD sent to the last ban in force there (entries are
 *     applied in stream order: the last in force means all are); the publishing time is
 *     printed beside it, so a publisher slower than the node would show.
 * Prints a markdown section on stdout; its target on stderr; any failed check, no number.
 * Needs the daemons running; never attaches, never pins.
 */
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#include <hiredis/hiredis.h>
#include "bench.h"
#include "control.h"
#include "fleet_entry.h"
#include "table.h"

#define POLL_NS 50000ull
#define LATENCY_TIMEOUT_NS (10 * NS_PER_SEC)
#define BURST_TIMEOUT_NS (120 * NS_PER_SEC)
#define PIPELINE 1000
#define BAN_SECONDS 3600

static struct bench_check check; /* .bench: "fleet latency" or "fleet burst" */

static uint64_t boot_ns(void)
{
	return bench_clock_ns(CLOCK_BOOTTIME);
}

static void nap(uint64_t ns)
{
	struct timespec ts = { .tv_sec = ns / NS_PER_SEC, .tv_nsec = ns % NS_PER_SEC };

	nanosleep(&ts, NULL);
}

/* One node's maps and its mapped ban table. */
struct node {
	struct xb_maps maps;
	struct xb_bans bans;
	bool open, mapped;
};

static int node_open(struct node *n, const char *pin)
{
	char err[XB_ERRLEN];
	int ret = xb_maps_open_pinned(&n->maps, pin, err, sizeof(err));

	if (!ret) {
		n->open = true;
		ret = xb_bans_of(&n->bans, &n->maps, err, sizeof(err));
		n->mapped = !ret;
	}
	if (ret)
		fprintf(stderr, "fleet: %s: %s\n", pin, err);
	return ret;
}

static void node_close(struct node *n)
{
	if (n->mapped)
		xb_bans_close(&n->bans);
	if (n->open)
		xb_maps_close(&n->maps);
}

/* The start time of key's ban on n, or 0 when it has none. */
static uint64_t ban_start(const struct node *n, const struct xdpban_key *key)
{
	struct xdpban_ban ban;

	return xb_bans_get(&n->bans, key, &ban) ? 0 : ban.start_ns;
}

/* The i-th source: 203.0.113.1 to .200 first, then IPv6 /64s, the daemons' default key (a
 * longer IPv6 prefix would be a policy ban, not one of the ban table). */
static void source(uint32_t i, char *text, size_t len, struct xdpban_key *key)
{
	struct xb_prefix p;
	char err[XB_ERRLEN];

	if (i < 200)
		snprintf(text, len, "203.0.113.%u", i + 1);
	else
		snprintf(text, len, "2001:db8:f1:%x::/64", i);
	if (xb_prefix_parse(text, &p, err, sizeof(err)))
		abort(); /* the texts above always parse */
	xb_key_from_addr(NULL, &p, 64, key);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The q-quantile (0..1) of n sorted values, nearest rank. */
static double quantile_ms(const uint64_t *sorted, size_t n, double q)
{
	size_t rank = (size_t)(q * n + 0.999999);

	rank = rank < 1 ? 1 : rank > n ? n : rank;
	return sorted[rank - 1] / 1e6;
}

struct dist {
	const char *what;
	uint64_t *v;
};

static void dist_row(const struct dist *d, size_t n)
{
	qsort(d->v, n, sizeof(*d->v), cmp_u64);
	printf("| %s | %.2f | %.2f | %.2f | %.2f |\n", d->what, quantile_ms(d->v, 1, 0),
	       quantile_ms(d->v, n, 0.5), quantile_ms(d->v, n, 0.99), d->v[n - 1] / 1e6);
}

/* Makes one ban on A and waits for B and C; fills the four delays of sample i. */
static int one_ban(int fd, struct node nodes[3], uint32_t i, uint64_t *out[4])
{
	char text[64], request[160], err[XB_ERRLEN], *reply = NULL;
	uint64_t a, b = 0, c = 0, asked, until;
	struct xdpban_key key;
	int ret;

	source(i, text, sizeof(text), &key);
	snprintf(request, sizeof(request), "{\"cmd\":\"ban\",\"prefix\":\"%s\",\"seconds\":%d}",
		 text, BAN_SECONDS);
	asked = boot_ns();
	ret = xb_control_call(fd, request, 5000, &reply, err, sizeof(err));
	if (ret || !strstr(reply, "\"ok\":true")) {
		bench_check_fail(&check, "latency", "ban %s on A: %s", text, ret ? err : reply);
		free(reply);
		return -EIO;
	}
	free(reply);
	for (until = asked + LATENCY_TIMEOUT_NS; (!b || !c) && boot_ns() < until; nap(POLL_NS)) {
		b = b ? b : ban_start(&nodes[1], &key);
		c = c ? c : ban_start(&nodes[2], &key);
	}
	a = ban_start(&nodes[0], &key);
	if (!a || !b || !c || b < a || c < a) {
		bench_check_fail(&check, "latency", "ban %s: start on A %llu, B %llu, C %llu ns", text,
				 (unsigned long long)a, (unsigned long long)b, (unsigned long long)c);
		return -EIO;
	}
	out[0][i] = (b > c ? b : c) - a;
	out[1][i] = b - a;
	out[2][i] = c - a;
	out[3][i] = a - asked;
	return 0;
}

static int cmd_latency(int argc, char **argv)
{
	struct node nodes[3] = {};
	uint64_t n, *v[4] = {};
	char err[XB_ERRLEN];
	int fd = -1, ret = -ENOMEM;

	if (argc != 5 || bench_parse_u64(argv[0], 1, 100000, &n)) {
		fprintf(stderr, "usage: fleet latency N SOCK_A PIN_A PIN_B PIN_C\n");
		return 2;
	}
	for (int k = 0; k < 4; k++)
		if (!(v[k] = calloc(n, sizeof(uint64_t))))
			goto out;
	for (int k = 0; k < 3; k++)
		if ((ret = node_open(&nodes[k], argv[2 + k])))
			goto out;
	fd = xb_control_connect(argv[1], err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "fleet: node A's socket %s: %s\n", argv[1], err);
		ret = fd;
		goto out;
	}
	for (uint32_t i = 0; i < n && !ret; i++)
		ret = one_ban(fd, nodes, i, v);
	if (ret)
		goto out;
	check.checks += (int)n;
	printf("### Ban propagation, %llu bans\n\n", (unsigned long long)n);
	printf("Manual bans made one at a time on node A (its control socket, `{\"cmd\":\"ban\"}`; "
	       "200 IPv4 addresses, then IPv6 /64s), each made only once the one before was in "
	       "force on B and C. The times are the bans' own start times in each node's ban table "
	       "(CLOCK_BOOTTIME, the same clock for the three daemons of this machine), each "
	       "taken just before the node's write that puts the ban in force: A's ban, its "
	       "publish (MULTI/XADD/HSET/EXEC), Redis, B's and C's XREAD BLOCK, their checks "
	       "and their writes. Every ban was checked in force on B and C (the tables were "
	       "polled every 50 us).\n\n");
	printf("| from A's ban to | min ms | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|\n");
	dist_row(&(struct dist){ "the last of B and C in force (propagation)", v[0] }, n);
	dist_row(&(struct dist){ "B in force", v[1] }, n);
	dist_row(&(struct dist){ "C in force", v[2] }, n);
	dist_row(&(struct dist){ "(before it: the request on A's socket to A's ban)", v[3] }, n);
	printf("\n");
	if (n >= 1000)
		fprintf(stderr, "bench-target: ban propagation p99, A's ban to the last of 3 nodes "
				"enforcing (%llu bans) under 100 ms = %.2f ms: %s\n",
			(unsigned long long)n, quantile_ms(v[0], n, 0.99),
			quantile_ms(v[0], n, 0.99) < 100 ? "met" : "not met");
out:
	if (fd >= 0)
		close(fd);
	for (int k = 0; k < 3; k++)
		node_close(&nodes[k]);
	for (int k = 0; k < 4; k++)
		free(v[k]);
	return ret ? 1 : 0;
}

/* ---- the burst ---- */

struct burst {
	redisContext *c;
	struct xbd_fleet_secret key;
	const char *stream, *maxlen;
	uint32_t n;
	__s64 expires;
	uint64_t sent_ns, acked_ns; /* boot clock: the first XADD sent, the last reply */
	int ret;
	char why[XB_ERRLEN];
};

static void burst_entry(const struct burst *b, uint32_t i, struct xbd_fleet_entry *e)
{
	char text[64], err[XB_ERRLEN];

	snprintf(text, sizeof(text), "2001:db8:%x:%x::", 0xb000 | (i >> 16), i & 0xffff);
	*e = (struct xbd_fleet_entry){ .kind = XBD_FLEET_BAN, .reason = XDPBAN_REASON_ERRORS,
				       .classes = 1, .count = 4, .expires = b->expires };
	snprintf(e->origin, sizeof(e->origin), "node-burst");
	if (xb_prefix_parse(text, &e->who, err, sizeof(err)))
		abort(); /* the text above always parses */
	e->who.plen = 64;
}

static void burst_key(uint32_t i, struct xdpban_key *key)
{
	struct xbd_fleet_entry e;
	struct burst b = { 0 };

	burst_entry(&b, i, &e);
	xb_key_from_addr(NULL, &e.who, 64, key);
}

/* The fleet's signing key, as the nodes read it ([fleet] key-file). 0 or 1, said on stderr. */
static int read_key(const char *path, struct xbd_fleet_secret *key)
{
	unsigned char buf[XBD_FLEET_SECRET_MAX];
	char why[XB_ERRLEN];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf));

	if (fd >= 0)
		close(fd);
	if (n < 0) {
		fprintf(stderr, "fleet: key file %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (xbd_fleet_secret_parse(buf, (size_t)n, key, why, sizeof(why))) {
		fprintf(stderr, "fleet: key file %s: %s\n", path, why);
		return 1;
	}
	return 0;
}

/* Appends the XADD of entry i. */
static int append_xadd(struct burst *b, uint32_t i)
{
	const char *argv[6 + 2 * XBD_FLEET_FIELDS] = { "XADD", b->stream, "MAXLEN", "~",
						       b->maxlen, "*" };
	struct xbd_fleet_entry e;
	struct xbd_fleet_fields f;
	int argc = 6;

	burst_entry(b, i, &e);
	if (xbd_fleet_encode(&e, &b->key, &f))
		return -EINVAL;
	for (size_t k = 0; k < f.n; k++) {
		argv[argc++] = f.names[k];
		argv[argc++] = f.values[k];
	}
	return redisAppendCommandArgv(b->c, argc, argv, NULL) == REDIS_OK ? 0 : -ENOMEM;
}

static void *publish(void *arg)
{
	struct burst *b = arg;

	b->sent_ns = boot_ns();
	for (uint32_t i = 0; i < b->n && !b->ret; i += PIPELINE) {
		uint32_t end = i + PIPELINE < b->n ? i + PIPELINE : b->n;

		for (uint32_t k = i; k < end && !b->ret; k++)
			b->ret = append_xadd(b, k);
		for (uint32_t k = i; k < end && !b->ret; k++) {
			redisReply *r = NULL;

			if (redisGetReply(b->c, (void **)&r) != REDIS_OK || !r ||
			    r->type != REDIS_REPLY_STRING) {
				snprintf(b->why, sizeof(b->why), "XADD %u: %s", k,
					 r && r->type == REDIS_REPLY_ERROR ? r->str : b->c->errstr);
				b->ret = -EIO;
			}
			freeReplyObject(r);
		}
	}
	b->acked_ns = boot_ns();
	return NULL;
}

static int read_line(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, len - 1);

	if (fd >= 0)
		close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	return 0;
}

static redisContext *burst_connect(const char *host, int port, const char *user,
				   const char *pass_file)
{
	char password[256];
	redisContext *c = redisConnect(host, port);
	redisReply *r;

	if (!c || c->err || read_line(pass_file, password, sizeof(password))) {
		fprintf(stderr, "fleet: redis %s:%d: %s\n", host, port,
			c && c->err ? c->errstr : "cannot connect or read the password file");
		redisFree(c);
		return NULL;
	}
	r = redisCommand(c, "AUTH %s %s", user, password);
	if (!r || r->type == REDIS_REPLY_ERROR) {
		fprintf(stderr, "fleet: AUTH: %s\n", r ? r->str : c->errstr);
		freeReplyObject(r);
		redisFree(c);
		return NULL;
	}
	freeReplyObject(r);
	return c;
}

/* Polls the node's table until the last entry's ban is in force; *first_ns: the first's. */
static int wait_applied(const struct node *node, uint32_t n, uint64_t *first_ns,
			uint64_t *last_ns)
{
	struct xdpban_key first, last;
	uint64_t until = boot_ns() + BURST_TIMEOUT_NS;

	burst_key(0, &first);
	burst_key(n - 1, &last);
	*first_ns = *last_ns = 0;
	while (!*last_ns && boot_ns() < until) {
		*first_ns = *first_ns ? *first_ns : ban_start(node, &first);
		*last_ns = ban_start(node, &last);
		if (!*last_ns)
			nap(POLL_NS * 4);
	}
	return *last_ns ? 0 : -ETIMEDOUT;
}

static void burst_report(const struct burst *b, uint64_t first_ns, uint64_t last_ns)
{
	double apply_s = (last_ns - b->sent_ns) / 1e9, pub_s = (b->acked_ns - b->sent_ns) / 1e9;
	double rate = b->n / apply_s;
	char nb[32];

	bench_thousands(b->n, nb, sizeof(nb));
	printf("### Apply throughput, a burst of %s bans\n\n", nb);
	printf("%s entries of a node that is not running (`node-burst`: IPv6 /64s, the fields "
	       "every node writes, fleet_entry.c) XADDed with MAXLEN ~ in pipelines of %d, as "
	       "fast as Redis takes them, while node B alone runs (A and C stopped, so that "
	       "B is not sharing the 2 cores with them). From the first XADD sent to the last "
	       "ban in force in B's ban table (entries are applied in stream order; B's applied "
	       "counter is checked to have grown by exactly %s).\n\n", nb, PIPELINE, nb);
	printf("| step | seconds | bans/s |\n|---|---|---|\n");
	printf("| publishing: first XADD sent to the last reply | %.3f | %.0f |\n", pub_s,
	       b->n / pub_s);
	printf("| first XADD sent to the first ban in force on B | %.3f | |\n",
	       (first_ns - b->sent_ns) / 1e9);
	printf("| first XADD sent to the last ban in force on B (apply throughput) | %.3f | %.0f |\n\n",
	       apply_s, rate);
	if (b->n >= 100000)
		fprintf(stderr, "bench-target: apply throughput of one daemon, a burst of %s bans, "
				"at least 50,000 bans/s = %.0f bans/s: %s\n", nb, rate,
			rate >= 50000 ? "met" : "not met");
}

static int cmd_burst(int argc, char **argv)
{
	struct burst b = { 0 };
	struct node node = {};
	uint64_t n, port, first_ns, last_ns;
	pthread_t t;
	int ret;

	if (argc != 9 || bench_parse_u64(argv[0], 1, 1000000, &n) ||
	    bench_parse_u64(argv[2], 1, 65535, &port)) {
		fprintf(stderr, "usage: fleet burst N HOST PORT USER PASSWORD_FILE KEY_FILE STREAM MAXLEN PIN\n");
		return 2;
	}
	b = (struct burst){ .n = (uint32_t)n, .stream = argv[6], .maxlen = argv[7],
			    .expires = time(NULL) + BAN_SECONDS };
	if (read_key(argv[5], &b.key) || node_open(&node, argv[8]))
		return 1;
	b.c = burst_connect(argv[1], (int)port, argv[3], argv[4]);
	if (!b.c) {
		node_close(&node);
		return 1;
	}
	ret = -pthread_create(&t, NULL, publish, &b);
	if (!ret) {
		ret = wait_applied(&node, b.n, &first_ns, &last_ns);
		pthread_join(t, NULL);
	}
	if (b.ret)
		bench_check_fail(&check, "burst", "publishing: %s", b.why);
	else if (ret)
		bench_check_fail(&check, "burst", "the last of %u bans not in force on B within %llu s",
				 b.n, (unsigned long long)(BURST_TIMEOUT_NS / NS_PER_SEC));
	else {
		check.checks++;
		burst_report(&b, first_ns, last_ns);
	}
	redisFree(b.c);
	node_close(&node);
	return b.ret || ret ? 1 : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: fleet latency N SOCK_A PIN_A PIN_B PIN_C\n"
			"       fleet burst N HOST PORT USER PASSWORD_FILE KEY_FILE STREAM MAXLEN PIN\n");
	return 2;
}

int main(int argc, char **argv)
{
	static const struct bench_cmd cmds[] = {
		{ "latency", cmd_latency }, { "burst", cmd_burst }, { NULL, NULL },
	};
	int ret;

	check.bench = argc > 1 && !strcmp(argv[1], "burst") ? "fleet burst" : "fleet latency";
	ret = bench_dispatch(argc, argv, cmds, NULL, usage);

	if (ret == 2)
		return ret;
	return ret ? ret : bench_finish(&check);
}
