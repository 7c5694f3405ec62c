/* flood.c - the programs behind the flood workload (bench/flood.sh): a spoofed flood of
 * malformed frames from millions of distinct sources, with a banned offender, a forged victim
 * and a clean source inside it.
 *
 *   flood gen DIR --sources N --offenders K --offender A --victim A --clean A [--seed S]
 *       writes the tables, from the seed: DIR/flood.src, one pass of the flood (at least N
 *       distinct random sources, the victim, the clean source and the offenders laid out by
 *       slot_kind() below); DIR/offenders.src, the K offenders (A first, the rest random);
 *       DIR/offenders.txt, the same as text; DIR/flood.counts, the frames of one pass of each
 *       kind, as shell assignments (n_frames=..., n_spoofed=..., ...);
 *   flood send IFNAME DST_MAC DIR flood|offenders
 *       sends one pass of the flood, each frame shaped by its kind (TTL, malformed or valid
 *       UDP), or each offender's limit + 1 malformed frames, through the wire sender
 *       (bench_live.h);
 *   flood bans PIN_DIR
 *       every ban in the pinned ban table, one a line: "KEY START_NS EXPIRES_NS COUNT REASON";
 *   flood source PIN_DIR ADDR
 *       what the data path holds for ADDR (xb_query): "banned B count C verified V hop H
 *       disputed D".
 *
 * Every command takes --build DIR. Tables are binary arrays of IPv4 addresses (u32, host
 * order). It reads the pinned maps only through the library (user/lib); it never writes them.
 */
#include <sys/stat.h>
#include "bench_live.h"
#include "libxdpban.h"
#include "table.h"

static const char *build_dir = "build";

/* One pass of the flood is made of periods of FLOOD_PERIOD frames, laid out by slot. */
#define FLOOD_PERIOD 1000
#define FLOOD_TTL 64        /* every genuine frame: the senders are one hop from nowhere */
#define FLOOD_FORGED_TTL 50 /* the forged victim frames: hop count 14, not the victim's 0 */
#define FLOOD_TABLE_MAX (1u << 28) /* sources in one table */

enum flood_kind {
	FLOOD_SPOOFED,       /* malformed, from a source never seen before */
	FLOOD_VICTIM_FORGED, /* malformed, from the victim's address at a TTL it never has */
	FLOOD_VICTIM,        /* a valid datagram from the victim */
	FLOOD_CLEAN,         /* a valid datagram from the clean source */
	FLOOD_OFFENDER,      /* a valid datagram from a banned offender: must be dropped */
	FLOOD_KINDS,
};

static const char *const kind_names[FLOOD_KINDS] = {
	"spoofed", "victim_forged", "victim", "clean", "offender",
};

/* The kind of slot `slot` of a period: 1% forged victim frames, two offender frames, one
 * datagram each from the victim and the clean source, the rest the flood. */
static enum flood_kind slot_kind(uint32_t slot)
{
	if (slot % 100 == 0)
		return FLOOD_VICTIM_FORGED;
	if (slot == 50)
		return FLOOD_VICTIM;
	if (slot == 550)
		return FLOOD_CLEAN;
	if (slot == 250 || slot == 750)
		return FLOOD_OFFENDER;
	return FLOOD_SPOOFED;
}

static struct srcdrv_shape kind_shape(enum flood_kind k)
{
	bool bad = k == FLOOD_SPOOFED || k == FLOOD_VICTIM_FORGED;

	return (struct srcdrv_shape){
		.ttl = k == FLOOD_VICTIM_FORGED ? FLOOD_FORGED_TTL : FLOOD_TTL,
		.udp_len = bench_udp_len(BENCH_UDP4_PAYLOAD,
					 bad ? BENCH_FRAME_MALFORMED : BENCH_FRAME_VALID),
	};
}

static int usage(void)
{
	fprintf(stderr,
		"usage: flood [--build DIR] gen DIR --sources N --offenders K --offender A --victim A\n"
		"                           --clean A [--seed S]\n"
		"       flood [--build DIR] send IFNAME DST_MAC DIR flood|offenders\n"
		"       flood [--build DIR] bans PIN_DIR\n"
		"       flood [--build DIR] source PIN_DIR ADDR\n");
	return 2;
}

static int parse_addr(const char *what, const char *text, uint32_t *out)
{
	struct in_addr a;

	if (inet_pton(AF_INET, text, &a) != 1)
		return fprintf(stderr, "flood: %s: '%s' is not an IPv4 address\n", what, text),
		       -EINVAL;
	*out = ntohl(a.s_addr);
	return 0;
}

static int write_table(const char *dir, const char *name, const uint32_t *addr, uint32_t n)
{
	char path[512];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fwrite(addr, sizeof(*addr), n, f) != n)
		err = -EIO;
	if (f && fclose(f))
		err = -EIO;
	if (err)
		fprintf(stderr, "flood: cannot write %s: %s\n", path, strerror(errno));
	return err;
}

/* Reads a table written by write_table into *out (free() it). */
static int read_table(const char *dir, const char *name, uint32_t **out, uint32_t *n)
{
	char path[512];
	struct stat st;
	uint32_t *addr = NULL;
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f || fstat(fileno(f), &st) || st.st_size == 0 || st.st_size % sizeof(*addr) ||
	    st.st_size / sizeof(*addr) > UINT32_MAX)
		err = -EIO;
	if (!err) {
		*n = st.st_size / sizeof(*addr);
		addr = malloc(st.st_size);
		if (!addr || fread(addr, sizeof(*addr), *n, f) != *n)
			err = -EIO;
	}
	if (f)
		fclose(f);
	if (err) {
		fprintf(stderr, "flood: cannot read %s\n", path);
		free(addr);
		return err;
	}
	*out = addr;
	return 0;
}

static void shuffle(struct bench_rng *r, uint32_t *v, uint32_t n)
{
	for (uint32_t i = n; i > 1; i--) {
		uint32_t j = bench_rng_below(r, i), t = v[i - 1];

		v[i - 1] = v[j];
		v[j] = t;
	}
}

struct gen_args {
	const char *dir;
	uint32_t sources, offenders, offender, victim, clean;
	uint64_t seed;
};

static int parse_count(const char *what, const char *text, uint32_t *out)
{
	uint64_t v;

	if (bench_parse_u64(text, 1, FLOOD_TABLE_MAX, &v))
		return fprintf(stderr, "flood: %s: '%s' is not a number from 1 to %u\n", what, text,
			       FLOOD_TABLE_MAX), -EINVAL;
	*out = v;
	return 0;
}

static int parse_gen(int argc, char **argv, struct gen_args *g)
{
	int err = 0;

	if (argc < 1 || argc % 2 == 0)
		return -EINVAL;
	g->dir = argv[0];
	g->seed = BENCH_SEED_DEFAULT;
	for (int i = 1; !err && i + 1 < argc; i += 2) {
		const char *opt = argv[i], *val = argv[i + 1];

		if (!strcmp(opt, "--sources")) {
			err = parse_count(opt, val, &g->sources);
		} else if (!strcmp(opt, "--offenders")) {
			err = parse_count(opt, val, &g->offenders);
		} else if (!strcmp(opt, "--offender")) {
			err = parse_addr(opt, val, &g->offender);
		} else if (!strcmp(opt, "--victim")) {
			err = parse_addr(opt, val, &g->victim);
		} else if (!strcmp(opt, "--clean")) {
			err = parse_addr(opt, val, &g->clean);
		} else if (!strcmp(opt, "--seed")) {
			err = bench_parse_u64(val, 0, UINT64_MAX, &g->seed);
			if (err)
				fprintf(stderr, "flood: --seed: '%s' is not a number\n", val);
		} else {
			fprintf(stderr, "flood: gen: unknown option '%s'\n", opt);
			err = -EINVAL;
		}
	}
	if (!err && (!g->sources || !g->offenders || !g->offender || !g->victim || !g->clean)) {
		fprintf(stderr, "flood: gen needs --sources, --offenders, --offender, --victim and --clean\n");
		err = -EINVAL;
	}
	return err;
}

/* Lays out one pass of the flood over `periods` periods: the spoofed sources in order, the
 * offenders in turn, the victim and the clean source in their slots. count[] gets the frames
 * of each kind. */
static void lay_out(uint32_t *table, uint32_t periods, const uint32_t *spoofed,
		    const struct gen_args *g, const uint32_t *offenders, uint64_t count[FLOOD_KINDS])
{
	uint64_t next_spoofed = 0, next_offender = 0;

	for (uint64_t i = 0; i < (uint64_t)periods * FLOOD_PERIOD; i++) {
		enum flood_kind k = slot_kind(i % FLOOD_PERIOD);

		count[k]++;
		switch (k) {
		case FLOOD_SPOOFED:
			table[i] = spoofed[next_spoofed++];
			break;
		case FLOOD_VICTIM_FORGED:
		case FLOOD_VICTIM:
			table[i] = g->victim;
			break;
		case FLOOD_CLEAN:
			table[i] = g->clean;
			break;
		default:
			table[i] = offenders[next_offender++ % g->offenders];
			break;
		}
	}
}

static int write_counts(const struct gen_args *g, const uint64_t count[FLOOD_KINDS],
			uint64_t frames, const uint32_t *offenders)
{
	char path[512], text[INET_ADDRSTRLEN];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "%s/flood.counts", g->dir);
	f = fopen(path, "w");
	if (!f)
		return fprintf(stderr, "flood: cannot write %s\n", path), -EIO;
	fprintf(f, "n_frames=%llu\n", (unsigned long long)frames);
	for (int k = 0; k < FLOOD_KINDS; k++)
		fprintf(f, "n_%s=%llu\n", kind_names[k], (unsigned long long)count[k]);
	fprintf(f, "n_offenders=%u\nn_offender_frames=%llu\n", g->offenders,
		(unsigned long long)g->offenders * (XDPBAN_DEFAULT_LIMIT + 1));
	if (fclose(f))
		err = -EIO;
	snprintf(path, sizeof(path), "%s/offenders.txt", g->dir);
	f = fopen(path, "w");
	if (!f)
		return fprintf(stderr, "flood: cannot write %s\n", path), -EIO;
	for (uint32_t i = 0; i < g->offenders; i++) {
		struct in_addr a = { htonl(offenders[i]) };

		fprintf(f, "%s\n", inet_ntop(AF_INET, &a, text, sizeof(text)));
	}
	if (fclose(f))
		err = -EIO;
	return err;
}

static int do_gen(int argc, char **argv)
{
	struct bench_prefix4 link = { .addr = 0xc6336400, .len = 24 }; /* the veth's 198.51.100/24 */
	uint32_t named[3], per_period = 0, periods, *table = NULL, *offenders = NULL;
	struct bench_set4 specials = { named, 0 }, others = { 0 }, spoofed = { 0 };
	struct bench_avoid4 avoid = { &link, 1, { &specials } };
	uint64_t count[FLOOD_KINDS] = { 0 };
	struct bench_rng rng;
	struct gen_args g = { 0 };
	int err;

	if (parse_gen(argc, argv, &g))
		return usage();
	for (uint32_t s = 0; s < FLOOD_PERIOD; s++)
		per_period += slot_kind(s) == FLOOD_SPOOFED;
	periods = (g.sources + per_period - 1) / per_period;
	if ((uint64_t)periods * FLOOD_PERIOD > FLOOD_TABLE_MAX)
		return fprintf(stderr, "flood: --sources %u makes too large a table\n", g.sources), 2;
	/* Random sources outside the veth's subnet (the receiver's own addresses are never
	 * counted), and none of them the offender, the victim or the clean source. */
	named[0] = g.offender;
	named[1] = g.victim;
	named[2] = g.clean;
	specials.n = bench_unique_sorted(named, 3);
	bench_rng_init(&rng, g.seed);
	offenders = malloc(g.offenders * sizeof(*offenders));
	err = offenders ? bench_set4_random(&rng, g.offenders - 1, &avoid, &others) : -ENOMEM;
	if (!err) {
		offenders[0] = g.offender;
		memcpy(offenders + 1, others.addr, (g.offenders - 1) * sizeof(*offenders));
		avoid.sets[1] = &others;
		err = bench_set4_random(&rng, periods * per_period, &avoid, &spoofed);
	}
	if (!err) {
		table = malloc((size_t)periods * FLOOD_PERIOD * sizeof(*table));
		err = table ? 0 : -ENOMEM;
	}
	if (!err) {
		shuffle(&rng, spoofed.addr, spoofed.n);
		lay_out(table, periods, spoofed.addr, &g, offenders, count);
		err = write_table(g.dir, "flood.src", table, periods * FLOOD_PERIOD);
	}
	if (!err)
		err = write_table(g.dir, "offenders.src", offenders, g.offenders);
	if (!err)
		err = write_counts(&g, count, (uint64_t)periods * FLOOD_PERIOD, offenders);
	if (err == -ENOMEM)
		fprintf(stderr, "flood: out of memory\n");
	free(table);
	free(offenders);
	bench_set4_free(&others);
	bench_set4_free(&spoofed);
	return err ? 1 : 0;
}

static int do_send(int argc, char **argv)
{
	struct srcdrv_shape shape[FLOOD_PERIOD];
	struct bench_live l = { .build = build_dir };
	uint32_t *addr;
	int rc;

	if (argc != 4 || (strcmp(argv[3], "flood") && strcmp(argv[3], "offenders")))
		return usage();
	l.ifname = argv[0];
	l.dst_mac = argv[1];
	if (!strcmp(argv[3], "flood")) {
		for (uint32_t s = 0; s < FLOOD_PERIOD; s++)
			shape[s] = kind_shape(slot_kind(s));
		l.shape = shape;
		l.period = FLOOD_PERIOD;
	}
	if (read_table(argv[2], l.period ? "flood.src" : "offenders.src", &addr, &l.n))
		return 1;
	l.addr = addr;
	/* The flood is one pass; each offender sends one error more than the default limit. */
	l.kind = l.period ? BENCH_FRAME_VALID : BENCH_FRAME_MALFORMED;
	l.frames = l.period ? l.n : l.n * (XDPBAN_DEFAULT_LIMIT + 1);
	rc = bench_live_send("flood", &l);
	free(addr);
	return rc;
}

static int open_pins(const char *pin_dir, struct xb_maps *m)
{
	char err[XB_ERRLEN];

	if (xb_maps_open_pinned(m, pin_dir, err, sizeof(err))) {
		fprintf(stderr, "flood: %s\n", err);
		return -ENOENT;
	}
	return 0;
}

static int print_ban(const struct xdpban_key *key, const struct xdpban_ban *ban, void *ctx)
{
	char text[64];

	xb_key_format(key, text, sizeof(text));
	printf("%s %llu %llu %u %s\n", text, (unsigned long long)ban->start_ns,
	       (unsigned long long)ban->expires_ns, ban->count, xb_reason_name(ban->reason));
	return 0;
}

static int do_bans(int argc, char **argv)
{
	struct xb_maps m;
	int err;

	if (argc != 1)
		return usage();
	if (open_pins(argv[0], &m))
		return 1;
	err = xb_bans_walk_in(&m, print_ban, NULL);
	xb_maps_close(&m);
	if (err)
		fprintf(stderr, "flood: reading the ban table: %s\n", strerror(-err));
	return err ? 1 : 0;
}

static int do_source(int argc, char **argv)
{
	char why[XB_ERRLEN];
	struct xb_query_info q;
	struct xb_prefix addr;
	struct xb_maps m;
	int err;

	if (argc != 2)
		return usage();
	if (xb_prefix_parse(argv[1], &addr, why, sizeof(why)))
		return fprintf(stderr, "flood: %s\n", why), 2;
	if (open_pins(argv[0], &m))
		return 1;
	err = xb_query(&m, &addr, &q);
	xb_maps_close(&m);
	if (err)
		return fprintf(stderr, "flood: query %s: %s\n", argv[1], strerror(-err)), 1;
	printf("banned %d count %u verified %d hop %d disputed %d\n", q.banned, q.count,
	       q.verified, q.has_hop ? q.hop : -1, q.disputed);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct bench_cmd cmds[] = {
		{ "gen", do_gen }, { "send", do_send }, { "bans", do_bans },
		{ "source", do_source }, { NULL, NULL },
	};

	libbpf_set_print(NULL);
	return bench_dispatch(argc, argv, cmds, &build_dir, usage);
}
