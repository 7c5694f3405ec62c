/* reload.c - a reload of 1M prefixes while traffic flows, wrong verdicts
 * counted. For each family, a fresh unpinned xdpban in allow-only mode compiles set A
 * (user/lib/policy.h, as xdpband's list loader does: allow, deny and trusted entries over the
 * /0 not-allowed default entry of user/common/lists.c), then set B, then A again, while
 * worker threads run frames from sampled sources through the real program (BPF_PROG_TEST_RUN)
 * without a pause. B is A with entries removed, added and changing verdict, and above all
 * covering entries whose change must not show through the longer entries inside them (the
 * /8s of tests/e2e/e2e_reload.sh): a removed inner entry whose cover takes the inner's verdict, a
 * removed cover whose verdict a new inner entry takes over. Each source's verdict under A and
 * under B comes from a reference longest-prefix match in userspace (sorted entries, one
 * search per length); a packet is wrong when what the program did fits neither.
 *
 * What one packet shows: a valid datagram passes unless the verdict drops it (deny, not
 * allowed); a malformed one passes only when trusted (else it is dropped as malformed, never
 * counted to a ban: the limit is set to its maximum). So every packet is checked against three
 * classes: dropped by the policy, passed on to counting (no entry, allowed), trusted.
 * Outside a reload a packet must fit the set in force; while one runs, either set.
 *
 * Prints a markdown section on stdout and its targets on stderr; a wrong verdict is named
 * (source, the entries of A and B that decide it, what the program did). Never attaches,
 * never pins.
 */
#include <pthread.h>
#include <stdatomic.h>
#include "bench_bpf.h"

enum { CLASS_DROP, CLASS_COUNTED, CLASS_TRUSTED };
#define PHASES 5      /* stable A, A to B, stable B, B to A, stable A */
#define WRONG_SHOWN 5 /* wrong verdicts named on stderr */

struct ref_entry {
	uint8_t addr[16]; /* network order; IPv4 in the first 4 bytes */
	uint8_t len;
	uint8_t verdict; /* enum xdpban_verdict */
};

/* One prefix of the run: its verdict in A and in B (NONE: not in that set). */
struct item {
	struct ref_entry e;
	uint8_t in_b;
};

/* A set sorted by length (longest first) then address, with where each length starts. */
struct ref_set {
	struct ref_entry *v;
	uint32_t n;
	uint32_t start[130]; /* start[len]..start[len-1]: entries of length len (desc order) */
};

struct source {
	uint8_t addr[16];
	uint8_t cls[2];   /* class under A and under B */
	uint32_t hit[2];  /* the entry deciding it in A and in B, or UINT32_MAX */
};

struct wrong {
	uint32_t source, phase;
	uint8_t kind, action;
};

struct run {
	struct bench_opts o;
	struct bench_check check;
	struct bench_rng rng;
	uint32_t entries, sources;
	int threads;
	uint64_t settle_ns;
};

struct family_run {
	struct run *r;
	uint8_t family, alen; /* XDPBAN_FAMILY_*, address bytes */
	const char *name;
	struct ref_set set[2];
	struct source *src;
	struct dp dp;
	_Atomic int phase;
	_Atomic int stop;
	_Atomic uint64_t packets[PHASES], wrong[PHASES];
	_Atomic uint32_t wrong_seen;
	struct wrong shown[WRONG_SHOWN];
	_Atomic uint32_t next;
	int err;
};

static int ref_cmp(const void *a, const void *b)
{
	const struct ref_entry *x = a, *y = b;

	if (x->len != y->len)
		return (int)y->len - (int)x->len;
	return memcmp(x->addr, y->addr, sizeof(x->addr));
}

static int item_cmp(const void *a, const void *b)
{
	return ref_cmp(&((const struct item *)a)->e, &((const struct item *)b)->e);
}

static uint8_t verdict_class(uint8_t v)
{
	return v == XDPBAN_POLICY_DENY || v == XDPBAN_POLICY_NOT_ALLOWED ? CLASS_DROP
	       : v == XDPBAN_POLICY_TRUSTED				 ? CLASS_TRUSTED
									 : CLASS_COUNTED;
}

static void ref_index(struct ref_set *s)
{
	uint32_t i = 0;

	for (int len = 128; len >= 0; len--) {
		s->start[len + 1] = i;
		while (i < s->n && s->v[i].len == len)
			i++;
	}
	s->start[0] = i;
}

/* The entry of s that decides addr (the longest holding it), or UINT32_MAX. */
static uint32_t ref_lookup(const struct ref_set *s, const uint8_t addr[16])
{
	for (int len = 128; len >= 0; len--) {
		uint32_t lo = s->start[len + 1], hi = s->start[len];
		struct ref_entry want = { .len = len };

		if (lo == hi)
			continue;
		memcpy(want.addr, addr, 16);
		bench_mask6(want.addr, len);
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			int c = memcmp(s->v[mid].addr, want.addr, 16);

			if (!c)
				return mid;
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	return UINT32_MAX;
}

static uint8_t random_verdict(struct bench_rng *r, uint8_t not)
{
	static const uint8_t v[10] = { 1, 1, 1, 1, 3, 3, 3, 3, 2, 2 }; /* deny, allow, trusted */
	uint8_t pick;

	do
		pick = v[bench_rng_below(r, 10)];
	while (pick == not);
	return pick;
}

/* A random prefix of the family, of real-looking length (IPv6 in 2001::/16). */
static void random_prefix(struct family_run *fr, struct ref_entry *e)
{
	struct bench_rng *r = &fr->r->rng;

	memset(e, 0, sizeof(*e));
	if (fr->family == XDPBAN_FAMILY_INET) {
		uint32_t a = (uint32_t)bench_rng_next(r);

		e->len = bench_random_plen(r);
		a = htonl(a);
		memcpy(e->addr, &a, 4);
	} else {
		e->len = bench_random_plen6(r);
		bench_addr6_in_2001(r, e->addr);
	}
	bench_mask6(e->addr, e->len);
}

/* A random address inside e. */
static void addr_in(struct bench_rng *r, const struct ref_entry *e, int alen, uint8_t out[16])
{
	memset(out, 0, 16);
	for (int b = 0; b < alen; b++)
		out[b] = (uint8_t)bench_rng_next(r);
	bench_addr6_into(out, e->addr, e->len);
}

/* A shorter prefix holding e (at least /8 for IPv4, /16 for IPv6). */
static void cover_of(struct family_run *fr, const struct ref_entry *e, struct ref_entry *c)
{
	int min = fr->family == XDPBAN_FAMILY_INET ? 8 : 16, len;

	len = (int)e->len - 1 - (int)bench_rng_below(&fr->r->rng, 12);
	*c = *e;
	c->len = len < min ? min : len;
	bench_mask6(c->addr, c->len);
}

/* The items of both sets (see the top of the file), sorted, one per prefix; tricky[] gets the
 * items whose sources must keep their verdict across a cover's change. */
static int make_items(struct family_run *fr, struct item **out, uint32_t *count,
		      uint32_t **tricky, uint32_t *n_tricky)
{
	struct bench_rng *r = &fr->r->rng;
	uint32_t n = fr->r->entries, leaves = n - n / 5, covers = n / 5 - 1, added = n / 7;
	uint32_t cap = n + added + covers, have = 0, kept = 0, t = 0;
	struct item *it = calloc(cap, sizeof(*it));
	uint8_t *mark = calloc(cap, 1); /* 1: a tricky item, before sorting */

	*tricky = calloc(cap, sizeof(**tricky));
	if (!it || !mark || !*tricky) {
		free(it);
		free(mark);
		free(*tricky);
		return -ENOMEM;
	}
	/* the default layer of allow-only mode, as lists.c adds it */
	it[have].e.verdict = XDPBAN_POLICY_NOT_ALLOWED;
	it[have++].in_b = XDPBAN_POLICY_NOT_ALLOWED;
	for (uint32_t i = 0; i < leaves; i++, have++) {
		uint32_t roll = bench_rng_below(r, 100);

		random_prefix(fr, &it[have].e);
		it[have].e.verdict = random_verdict(r, 0);
		it[have].in_b = roll < 15 ? XDPBAN_POLICY_NONE
				: roll < 27 ? random_verdict(r, it[have].e.verdict)
					    : it[have].e.verdict;
	}
	for (uint32_t i = 0; i < covers; i++) {
		struct item *leaf = &it[1 + bench_rng_below(r, leaves)], *c = &it[have++];
		uint32_t roll = bench_rng_below(r, 100);
		uint8_t x = random_verdict(r, 0);

		cover_of(fr, &leaf->e, &c->e);
		if (roll < 30) { /* the inner goes, the cover takes its verdict */
			leaf->e.verdict = x;
			leaf->in_b = XDPBAN_POLICY_NONE;
			c->e.verdict = random_verdict(r, x);
			c->in_b = x;
			mark[leaf - it] = 1;
		} else if (roll < 40) { /* the cover goes, a new inner entry takes its verdict */
			struct item *in = &it[have++];

			c->e.verdict = x;
			c->in_b = XDPBAN_POLICY_NONE;
			in->e = c->e;
			in->e.len = c->e.len + 1 + bench_rng_below(r, leaf->e.len - c->e.len);
			addr_in(r, &leaf->e, fr->alen, in->e.addr);
			bench_mask6(in->e.addr, in->e.len);
			in->e.verdict = XDPBAN_POLICY_NONE;
			in->in_b = x;
			mark[in - it] = 1;
		} else { /* the cover changes or stays; the entries inside it stay */
			c->e.verdict = x;
			c->in_b = roll < 70 ? random_verdict(r, x) : x;
		}
	}
	for (uint32_t i = 0; i < added && have < cap; i++, have++) {
		random_prefix(fr, &it[have].e);
		it[have].e.verdict = XDPBAN_POLICY_NONE;
		it[have].in_b = random_verdict(r, 0);
	}
	/* one item per prefix, the first made kept (its role is the one that stands) */
	{
		struct { struct item it; uint32_t order; uint8_t mark; } *tmp = calloc(have, sizeof(*tmp));

		if (!tmp) {
			free(it);
			free(mark);
			free(*tricky);
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < have; i++)
			tmp[i].it = it[i], tmp[i].order = i, tmp[i].mark = mark[i];
		/* sorted by prefix, then made order: a stable pick of the first */
		qsort(tmp, have, sizeof(*tmp), item_cmp);
		for (uint32_t i = 0; i < have; i++) {
			uint32_t j = i, first = i;

			while (j + 1 < have && !ref_cmp(&tmp[j + 1].it.e, &tmp[i].it.e) &&
			       tmp[j + 1].it.e.len == tmp[i].it.e.len)
				j++;
			for (uint32_t k = i; k <= j; k++)
				if (tmp[k].order < tmp[first].order)
					first = k;
			if (tmp[first].it.e.verdict || tmp[first].it.in_b) {
				if (tmp[first].mark)
					(*tricky)[t++] = kept;
				it[kept++] = tmp[first].it;
			}
			i = j;
		}
		free(tmp);
	}
	free(mark);
	*out = it;
	*count = kept;
	*n_tricky = t;
	return 0;
}

/* Set `which` (0: A, 1: B) of the items, sorted for the reference. */
static int make_set(const struct item *it, uint32_t n, int which, struct ref_set *s)
{
	s->v = malloc((n ? n : 1) * sizeof(*s->v));
	s->n = 0;
	if (!s->v)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t v = which ? it[i].in_b : it[i].e.verdict;

		if (v) {
			s->v[s->n] = it[i].e;
			s->v[s->n++].verdict = v;
		}
	}
	ref_index(s); /* items are sorted as ref_cmp sorts */
	return 0;
}

static int compile_set(struct family_run *fr, const struct ref_set *s,
		       struct xb_compile_result *res)
{
	struct xb_policy_set set = { 0 };
	int err = 0;

	for (uint32_t i = 0; !err && i < s->n; i++) {
		struct xdpban_policy val = {
			.verdict = s->v[i].verdict,
			.list_id = s->v[i].verdict == XDPBAN_POLICY_NOT_ALLOWED ? XDPBAN_LIST_DEFAULT
										 : 1u + s->v[i].verdict,
		};
		struct xb_prefix pre = { .family = fr->family, .plen = s->v[i].len };

		memcpy(pre.addr, s->v[i].addr, 16);
		err = xb_policy_set_add(&set, &pre, &val);
	}
	if (!err)
		err = dp_policy_compile(&fr->dp, &set, NULL, res);
	xb_policy_set_free(&set);
	return err;
}

/* 40% of the sources in the tricky items, 40% in any item, 20% anywhere. */
static int make_sources(struct family_run *fr, const struct item *it, uint32_t n,
			const uint32_t *tricky, uint32_t n_tricky)
{
	struct bench_rng *r = &fr->r->rng;
	uint32_t moving = 0, held = 0;

	fr->src = calloc(fr->r->sources, sizeof(*fr->src));
	if (!fr->src)
		return -ENOMEM;
	for (uint32_t i = 0; i < fr->r->sources; i++) {
		struct source *s = &fr->src[i];
		uint32_t roll = bench_rng_below(r, 5);

		do {
			if (roll < 2 && n_tricky)
				addr_in(r, &it[tricky[bench_rng_below(r, n_tricky)]].e, fr->alen,
					s->addr);
			else if (roll < 4)
				addr_in(r, &it[bench_rng_below(r, n)].e, fr->alen, s->addr);
			else if (fr->family == XDPBAN_FAMILY_INET)
				addr_in(r, &(struct ref_entry){ .len = 0 }, 4, s->addr);
			else
				bench_addr6_in_2001(r, s->addr);
		} while (xdpban_builtin_exempt(fr->family, s->addr) || s->addr[0] == 0);
		for (int w = 0; w < 2; w++) {
			s->hit[w] = ref_lookup(&fr->set[w], s->addr);
			s->cls[w] = verdict_class(s->hit[w] == UINT32_MAX
							  ? XDPBAN_POLICY_NONE
							  : fr->set[w].v[s->hit[w]].verdict);
		}
		moving += s->cls[0] != s->cls[1];
		held += s->cls[0] == s->cls[1] &&
			ref_cmp(&fr->set[0].v[s->hit[0]], &fr->set[1].v[s->hit[1]]);
	}
	/* held: decided by another entry in B, with the same verdict class: the sources a
	 * reload in the wrong order would show a third verdict */
	bench_note(&fr->r->o, "%s: %u sources, %u change verdict class, %u keep it under another "
		   "entry", fr->name, fr->r->sources, moving, held);
	return 0;
}

/* Which classes a packet of `kind` that got `action` may have come from (bits). */
static unsigned int observed(enum bench_frame_kind kind, uint32_t action)
{
	if (kind == BENCH_FRAME_VALID)
		return action == XDP_PASS ? 1u << CLASS_COUNTED | 1u << CLASS_TRUSTED : 1u << CLASS_DROP;
	return action == XDP_PASS ? 1u << CLASS_TRUSTED : 1u << CLASS_DROP | 1u << CLASS_COUNTED;
}

static void *worker(void *arg)
{
	struct family_run *fr = arg;
	uint64_t packets[PHASES] = { 0 }, wrong[PHASES] = { 0 };
	uint32_t i = atomic_fetch_add(&fr->next, 7919);

	while (!atomic_load(&fr->stop)) {
		const struct source *s = &fr->src[i++ % fr->r->sources];
		enum bench_frame_kind kind = i & 1 ? BENCH_FRAME_VALID : BENCH_FRAME_MALFORMED;
		struct bench_frame_addrs a = { 0 };
		struct bench_frame f;
		unsigned int want;
		uint32_t action;
		int p0, p1, idx;

		if (fr->family == XDPBAN_FAMILY_INET) {
			memcpy(&a.saddr4, s->addr, 4);
			a.saddr4 = ntohl(a.saddr4);
			bench_frame4(&f, &a, kind);
		} else {
			memcpy(a.saddr6, s->addr, 16);
			bench_frame6(&f, &a, kind);
		}
		p0 = atomic_load(&fr->phase);
		fr->err = dp_run(&fr->dp, f.data, f.len, &action);
		if (fr->err)
			break;
		p1 = atomic_load(&fr->phase);
		idx = p0 % 2 ? p0 : p1; /* a packet that saw a reload counts in it */
		/* stable phases are even: A at 0 and 4, B at 2 */
		want = p0 == p1 && p0 % 2 == 0 ? 1u << s->cls[p0 == 2]
					       : 1u << s->cls[0] | 1u << s->cls[1];
		packets[idx]++;
		if (!(observed(kind, action) & want)) {
			uint32_t k = atomic_fetch_add(&fr->wrong_seen, 1);

			wrong[idx]++;
			if (k < WRONG_SHOWN)
				fr->shown[k] = (struct wrong){ .source = (uint32_t)(s - fr->src),
							       .phase = idx, .kind = kind,
							       .action = action };
		}
	}
	for (int p = 0; p < PHASES; p++) {
		atomic_fetch_add(&fr->packets[p], packets[p]);
		atomic_fetch_add(&fr->wrong[p], wrong[p]);
	}
	return NULL;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { ns / NS_PER_SEC, ns % NS_PER_SEC };

	nanosleep(&ts, NULL);
}

static const char *entry_text(const struct family_run *fr, int w, uint32_t hit, char *buf,
			      size_t len)
{
	static const char *const names[] = { "none", "deny", "trusted", "allowed", "not allowed" };
	char a[INET6_ADDRSTRLEN];
	const struct ref_entry *e = hit == UINT32_MAX ? NULL : &fr->set[w].v[hit];

	if (!e)
		return snprintf(buf, len, "no entry"), buf;
	inet_ntop(fr->family == XDPBAN_FAMILY_INET ? AF_INET : AF_INET6, e->addr, a, sizeof(a));
	snprintf(buf, len, "%s/%u %s", a, e->len, names[e->verdict]);
	return buf;
}

static void report_wrong(const struct family_run *fr)
{
	uint32_t n = atomic_load(&fr->wrong_seen);

	for (uint32_t k = 0; k < n && k < WRONG_SHOWN; k++) {
		const struct wrong *w = &fr->shown[k];
		const struct source *s = &fr->src[w->source];
		char a[INET6_ADDRSTRLEN], ea[96], eb[96];

		inet_ntop(fr->family == XDPBAN_FAMILY_INET ? AF_INET : AF_INET6, s->addr, a,
			  sizeof(a));
		fprintf(stderr, "reload: %s: wrong verdict in phase %u: source %s, A: %s, B: %s; a "
				"%s frame was %s\n", fr->name, w->phase, a,
			entry_text(fr, 0, s->hit[0], ea, sizeof(ea)),
			entry_text(fr, 1, s->hit[1], eb, sizeof(eb)),
			w->kind == BENCH_FRAME_VALID ? "valid" : "malformed",
			w->action == XDP_PASS ? "passed" : "dropped");
	}
}

static void run_family(struct run *r, uint8_t family)
{
	static struct family_run fr; /* reused family by family */
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;
	struct xb_compile_result res[3] = { 0 };
	double seconds[3] = { 0 };
	pthread_t th[8];
	int started = 0, err;
	uint32_t n_items = 0, n_tricky = 0, *tricky = NULL;
	struct item *items = NULL;
	char what[64], a[32], b[32];

	memset(&fr, 0, sizeof(fr));
	fr.r = r;
	fr.family = family;
	fr.alen = family == XDPBAN_FAMILY_INET ? 4 : 16;
	fr.name = family == XDPBAN_FAMILY_INET ? "IPv4" : "IPv6";
	snprintf(what, sizeof(what), "%s reload", fr.name);
	bench_note(&r->o, "%s: making sets A and B of about %u entries", fr.name, r->entries);
	err = make_items(&fr, &items, &n_items, &tricky, &n_tricky);
	if (!err)
		err = make_set(items, n_items, 0, &fr.set[0]);
	if (!err)
		err = make_set(items, n_items, 1, &fr.set[1]);
	if (!err)
		err = make_sources(&fr, items, n_items, tricky, n_tricky);
	free(items);
	free(tricky);
	cfg.limit = XDPBAN_LIMIT_MAX; /* malformed frames never ban a source */
	cfg.policy = XDPBAN_CFG_ALLOW_ONLY;
	if (!err)
		err = dp_open(&fr.dp, NULL);
	if (!err)
		err = dp_set_config(&fr.dp, &cfg);
	if (err) {
		bench_check_fail(&r->check, what, "setting up: %s", strerror(-err));
		goto out;
	}
	bench_note(&r->o, "%s: compiling A (%u entries)", fr.name, fr.set[0].n);
	{
		uint64_t t0 = bench_mono_ns();

		err = compile_set(&fr, &fr.set[0], &res[0]);
		seconds[0] = (bench_mono_ns() - t0) / 1e9;
	}
	for (; !err && started < r->threads; started++)
		err = -pthread_create(&th[started], NULL, worker, &fr);
	for (int step = 0; !err && step < 2; step++) {
		uint64_t t0;

		sleep_ns(r->settle_ns);
		bench_note(&r->o, "%s: reloading %s to %s under traffic", fr.name, step ? "B" : "A",
			   step ? "A" : "B");
		atomic_store(&fr.phase, 2 * step + 1);
		t0 = bench_mono_ns();
		err = compile_set(&fr, &fr.set[!step], &res[1 + step]);
		seconds[1 + step] = (bench_mono_ns() - t0) / 1e9;
		atomic_store(&fr.phase, 2 * step + 2);
	}
	sleep_ns(r->settle_ns);
	atomic_store(&fr.stop, 1);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	if (!err)
		err = fr.err;
	if (err) {
		bench_check_fail(&r->check, what, "%s", strerror(-err));
		goto out;
	}
	report_wrong(&fr);
	for (int step = 0; step < 2; step++) {
		int p = 2 * step + 1;
		uint64_t during = atomic_load(&fr.packets[p]), bad = atomic_load(&fr.wrong[p]);

		printf("| %s | %s to %s | %s to %s | %zu written, %zu removed%s | %.2f | %llu | "
		       "%llu |\n", fr.name, step ? "B" : "A", step ? "A" : "B",
		       bench_thousands(fr.set[step].n, a, sizeof(a)),
		       bench_thousands(fr.set[!step].n, b, sizeof(b)), res[1 + step].written,
		       res[1 + step].removed,
		       res[1 + step].removals_first ? " (removals first: not atomic)" : "",
		       seconds[1 + step], (unsigned long long)during, (unsigned long long)bad);
		if (r->o.mode != BENCH_SMOKE)
			fprintf(stderr, "bench-target: 0 wrong verdicts during a reload of %s "
				"prefixes under traffic (%s, %s to %s) = %llu wrong of %llu packets: "
				"%s\n", fr.name, bench_thousands(fr.set[!step].n, b, sizeof(b)),
				step ? "B" : "A", step ? "A" : "B", (unsigned long long)bad,
				(unsigned long long)during, bad ? "not met" : "met");
	}
	if (!err) { /* the same reload with no traffic, for what the traffic costs it */
		uint64_t t0 = bench_mono_ns();

		err = compile_set(&fr, &fr.set[1], &res[0]);
		printf("| %s | A to B, no traffic | %s to %s | %zu written, %zu removed | %.2f | - | - "
		       "|\n", fr.name, bench_thousands(fr.set[0].n, a, sizeof(a)),
		       bench_thousands(fr.set[1].n, b, sizeof(b)), res[0].written, res[0].removed,
		       (bench_mono_ns() - t0) / 1e9);
		if (err)
			bench_check_fail(&r->check, what, "the reload with no traffic: %s",
					 strerror(-err));
	}
	{
		uint64_t stable = 0, stable_bad = 0, during = 0, bad = 0;

		for (int p = 0; p < PHASES; p++) {
			stable += p % 2 ? 0 : atomic_load(&fr.packets[p]);
			stable_bad += p % 2 ? 0 : atomic_load(&fr.wrong[p]);
			during += p % 2 ? atomic_load(&fr.packets[p]) : 0;
			bad += p % 2 ? atomic_load(&fr.wrong[p]) : 0;
		}
		fprintf(stderr, "reload: %s: A compiled afresh in %.2f s; outside the reloads %llu packets, "
				"%llu wrong\n", fr.name, seconds[0], (unsigned long long)stable,
			(unsigned long long)stable_bad);
		/* A run that checked nothing during a reload, or where the sets hold, checks
		 * nothing: both count as failures. */
		if (stable_bad || bad)
			bench_check_fail(&r->check, what, "%llu wrong verdicts during the reloads, "
					 "%llu outside them", (unsigned long long)bad,
					 (unsigned long long)stable_bad);
		else if (!during || !stable || res[1].removals_first || res[2].removals_first)
			bench_check_fail(&r->check, what, "%s",
					 !during || !stable ? "no packet checked in a phase"
							    : "the trie could not hold both sets");
		else
			r->check.checks++;
	}
out:
	if (fr.dp.skel)
		dp_close(&fr.dp);
	free(fr.set[0].v);
	free(fr.set[1].v);
	free(fr.src);
}

static int parse_extra(int opt, const char *arg, void *ctx)
{
	struct run *r = ctx;
	uint64_t v;

	if (opt != 't' || bench_parse_u64(arg, 1, 8, &v))
		return fprintf(stderr, "reload: --threads: '%s' is not a number from 1 to 8\n", arg),
		       -EINVAL;
	r->threads = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option extra[] = { { "threads", required_argument, NULL, 't' },
					       { NULL, 0, NULL, 0 } };
	static struct run r = { .o = { .name = "reload", .extra = extra,
				       .extra_parse = parse_extra, .extra_usage = "[--threads N]" },
				.check = { .bench = "reload" }, .threads = 2 };

	r.o.extra_ctx = &r;
	if (bench_parse_args(&r.o, argc, argv))
		return 2;
	if (!dp_can_load())
		return 77;
	r.entries = BENCH_BY_MODE(&r.o, 10000u, 1000000u, 1000000u);
	r.sources = BENCH_BY_MODE(&r.o, 4096u, 65536u, 262144u);
	r.settle_ns = BENCH_BY_MODE(&r.o, 50000000ull, 300000000ull, 500000000ull);
	bench_rng_init(&r.rng, r.o.seed);
	printf("## Reloading %u prefixes under traffic\n\n", r.entries);
	printf("Method: a fresh, unpinned xdpban in allow-only mode compiles set A (user/lib/policy.h"
	       ", the compile xdpband's list loader runs: deny, allow and trusted entries over the /0 "
	       "not-allowed default), then B, then A again, while %d threads run single frames from "
	       "%u sampled sources through the program (BPF_PROG_TEST_RUN) without a pause. B drops "
	       "15%% of A's entries, changes the verdict of 12%%, adds new ones, and changes covering "
	       "entries over longer ones that keep their sources' verdicts (a removed inner entry "
	       "whose cover takes its verdict; a removed cover whose verdict a new inner entry takes "
	       "over). Each source's verdict under A and under B comes from a reference "
	       "longest-prefix match; valid frames tell dropped from passed, malformed ones trusted "
	       "from the rest. A packet is wrong when it fits neither set's verdict while a reload "
	       "runs, or the set in force outside one. One run; the machine is shared, so the "
	       "seconds are noisy.\n\n", r.threads, r.sources);
	printf("| family | reload | entries | trie changes | seconds | packets checked during it "
	       "| wrong verdicts |\n");
	printf("|---|---|---|---|---|---|---|\n");
	run_family(&r, XDPBAN_FAMILY_INET);
	run_family(&r, XDPBAN_FAMILY_INET6);
	printf("\n");
	return bench_finish(&r.check);
}
