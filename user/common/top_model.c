/* top_model.c - the computation behind `xdpban top` (top_model.h): rates from two snapshots,
 * the ranking of sources by their errors in the interval, the bans by drop rate, and the
 * folding of the reasons table to the lines it may take. Pure: it never reads a map, a
 * clock or a terminal.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "top_model.h"

static const char *const sort_names[TOP_SORT__COUNT] = {
	[TOP_SORT_ERRORS] = "errors",
	[TOP_SORT_COUNT] = "count",
	[TOP_SORT_SOURCE] = "source",
};

const char *top_sort_name(enum top_sort s)
{
	return (unsigned int)s < TOP_SORT__COUNT ? sort_names[s] : "?";
}

int top_sort_parse(const char *text, enum top_sort *out)
{
	for (int s = 0; s < TOP_SORT__COUNT; s++) {
		if (!strcmp(text, sort_names[s])) {
			*out = s;
			return 0;
		}
	}
	return -EINVAL;
}

/* Family (IPv4 first), then address, then prefix length. */
static int key_cmp(const struct xdpban_key *a, const struct xdpban_key *b)
{
	int d = (a->family == XDPBAN_FAMILY_INET6) - (b->family == XDPBAN_FAMILY_INET6);

	if (d)
		return d;
	d = memcmp(a->addr, b->addr, sizeof(a->addr));
	return d ? d : (int)a->prefixlen - (int)b->prefixlen;
}

static int source_cmp(const void *a, const void *b)
{
	return key_cmp(&((const struct top_source *)a)->key, &((const struct top_source *)b)->key);
}

/* Room for one more of n elements of `size` in *arr (of *cap), doubling. 0 or -ENOMEM. */
static int grow(void **arr, size_t *cap, size_t n, size_t size)
{
	size_t more_cap = *cap ? *cap * 2 : 64;
	void *more;

	if (n < *cap)
		return 0;
	more = realloc(*arr, more_cap * size);
	if (!more)
		return -ENOMEM;
	*arr = more;
	*cap = more_cap;
	return 0;
}

int top_snapshot_add(struct top_snapshot *s, const struct top_source *src)
{
	int ret = grow((void **)&s->sources, &s->cap_sources, s->n_sources, sizeof(*src));

	if (!ret)
		s->sources[s->n_sources++] = *src;
	return ret;
}

int top_snapshot_add_ban(struct top_snapshot *s, const struct top_ban *ban)
{
	int ret = grow((void **)&s->bans, &s->cap_bans, s->n_bans, sizeof(*ban));

	if (!ret)
		s->bans[s->n_bans++] = *ban;
	return ret;
}

static int ban_key_cmp(const void *a, const void *b)
{
	return key_cmp(&((const struct top_ban *)a)->key, &((const struct top_ban *)b)->key);
}

void top_snapshot_finish(struct top_snapshot *s)
{
	if (s->n_sources)
		qsort(s->sources, s->n_sources, sizeof(*s->sources), source_cmp);
	if (s->n_bans)
		qsort(s->bans, s->n_bans, sizeof(*s->bans), ban_key_cmp);
}

void top_snapshot_free(struct top_snapshot *s)
{
	free(s->sources);
	s->sources = NULL;
	s->n_sources = s->cap_sources = 0;
	free(s->bans);
	s->bans = NULL;
	s->n_bans = s->cap_bans = 0;
}

__u32 top_errors_since(const struct top_snapshot *prev, const struct top_source *src)
{
	const struct top_source *was = NULL;

	if (prev->n_sources)
		was = bsearch(src, prev->sources, prev->n_sources, sizeof(*src), source_cmp);
	if (!was || was->start_s != src->start_s || was->count > src->count)
		return src->count;
	return src->count - was->count;
}

double top_per_second(__u64 before, __u64 after, double seconds)
{
	return after >= before && seconds > 0 ? (double)(after - before) / seconds : 0;
}

/* Most first; ties by address, so that the order is stable from frame to frame. */
static int by_errors(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	if (x->errors != y->errors)
		return x->errors < y->errors ? 1 : -1;
	if (x->src.count != y->src.count)
		return x->src.count < y->src.count ? 1 : -1;
	return key_cmp(&x->src.key, &y->src.key);
}

static int by_count(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	if (x->src.count != y->src.count)
		return x->src.count < y->src.count ? 1 : -1;
	return by_errors(a, b);
}

static int by_source(const void *a, const void *b)
{
	return key_cmp(&((const struct top_row *)a)->src.key, &((const struct top_row *)b)->src.key);
}

static int (*const sort_cmp[TOP_SORT__COUNT])(const void *, const void *) = {
	[TOP_SORT_ERRORS] = by_errors,
	[TOP_SORT_COUNT] = by_count,
	[TOP_SORT_SOURCE] = by_source,
};

/* Every source of cur with errors in its window, in the order of sort. */
static int rank(const struct top_snapshot *prev, const struct top_snapshot *cur,
		enum top_sort sort, struct top_row **out, size_t *n)
{
	struct top_row *rows = calloc(cur->n_sources ? cur->n_sources : 1, sizeof(*rows));

	if (!rows)
		return -ENOMEM;
	*n = 0;
	for (size_t i = 0; i < cur->n_sources; i++) {
		if (!cur->sources[i].count)
			continue;
		rows[*n].src = cur->sources[i];
		rows[*n].errors = top_errors_since(prev, &cur->sources[i]);
		(*n)++;
	}
	if (*n)
		qsort(rows, *n, sizeof(*rows), sort_cmp[sort]);
	*out = rows;
	return 0;
}

/* The highest drop rate first: the banned sources still sending lead; then newest first,
 * the ban an operator has not seen yet; ties by address. */
static int by_rate(const void *a, const void *b)
{
	const struct top_ban *x = a, *y = b;

	if (x->drop_rate != y->drop_rate)
		return x->drop_rate < y->drop_rate ? 1 : -1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? 1 : -1;
	return key_cmp(&x->key, &y->key);
}

/* The drops of ban since prev (in key order) read it: all of them when prev has no ban of
 * that key and start. */
static __u64 drops_before(const struct top_snapshot *prev, const struct top_ban *ban)
{
	const struct top_ban *was = prev->n_bans ? bsearch(ban, prev->bans, prev->n_bans,
							    sizeof(*ban), ban_key_cmp)
						 : NULL;

	return was && was->start_ns == ban->start_ns ? was->drops : 0;
}

/* The first `count` bans of cur by drop rate (a copy: cur stays in key order). */
static int ranked_bans(const struct top_snapshot *prev, const struct top_snapshot *cur,
		       size_t count, struct top_frame *f)
{
	f->bans = malloc((cur->n_bans ? cur->n_bans : 1) * sizeof(*f->bans));
	if (!f->bans)
		return -ENOMEM;
	for (size_t i = 0; i < cur->n_bans; i++) {
		f->bans[i] = cur->bans[i];
		f->bans[i].drop_rate = top_per_second(drops_before(prev, &cur->bans[i]),
						      cur->bans[i].drops, f->seconds);
	}
	if (cur->n_bans)
		qsort(f->bans, cur->n_bans, sizeof(*f->bans), by_rate);
	f->n_bans = cur->n_bans < count ? cur->n_bans : count;
	return 0;
}

int top_frame_make(const struct top_snapshot *prev, const struct top_snapshot *cur,
		   enum top_sort sort, size_t count, struct top_frame *f)
{
	int ret;

	memset(f, 0, sizeof(*f));
	if (cur->time_ns <= prev->time_ns || (unsigned int)sort >= TOP_SORT__COUNT)
		return -EINVAL;
	f->seconds = (double)(cur->time_ns - prev->time_ns) / 1e9;
	for (int i = 0; i < XDPBAN_STAT__MAX; i++) {
		f->rates[i].packets = top_per_second(prev->stats[i].packets, cur->stats[i].packets,
						     f->seconds);
		f->rates[i].bytes = top_per_second(prev->stats[i].bytes, cur->stats[i].bytes,
						   f->seconds);
	}
	f->counters_used = cur->counters_used;
	f->counters_max = cur->counters_max;
	f->bans_used = cur->bans_used;
	f->bans_max = cur->bans_max;
	f->sort = sort;
	f->time_ns = cur->time_ns;
	ret = rank(prev, cur, sort, &f->rows, &f->n_active);
	if (!ret)
		ret = ranked_bans(prev, cur, count, f);
	if (ret) {
		top_frame_free(f);
		return ret;
	}
	f->n_rows = f->n_active < count ? f->n_active : count;
	return 0;
}

void top_frame_free(struct top_frame *f)
{
	free(f->rows);
	f->rows = NULL;
	f->n_rows = f->n_active = 0;
	free(f->bans);
	f->bans = NULL;
	f->n_bans = 0;
}

/* The events the reasons table may show: errors and bans created are on the summary line. */
static bool event_listed(const struct top_frame *f, int i)
{
	if (i == XDPBAN_STAT_ERRORS || i == XDPBAN_STAT_BANS_CREATED)
		return false;
	return f->rates[i].packets > 0 || f->rates[i].bytes > 0;
}

/* Busiest first; ties in the order of the statistics. */
static int by_rate_desc(const struct top_frame *f, int a, int b)
{
	if (f->rates[a].packets != f->rates[b].packets)
		return f->rates[a].packets < f->rates[b].packets ? 1 : -1;
	return a - b;
}

/* The n busiest of the verdicts that moved, in the order of the statistics; the others go to
 * the fold. Seven verdicts at most: a selection by hand is enough. */
static void keep_busiest(const struct top_frame *f, const int *moved, size_t n_moved, size_t n,
			 struct top_reasons *out)
{
	for (size_t i = 0; i < n_moved; i++) {
		size_t busier = 0;

		for (size_t j = 0; j < n_moved; j++)
			busier += j != i && by_rate_desc(f, moved[j], moved[i]) < 0;
		if (busier < n) {
			out->shown[out->n_shown++] = moved[i];
		} else {
			out->n_folded++;
			out->folded_packets += f->rates[moved[i]].packets;
			out->folded_bytes += f->rates[moved[i]].bytes;
		}
	}
}

size_t top_reasons_fold(const struct top_frame *f, size_t lines, struct top_reasons *out)
{
	int moved[XDPBAN_STAT__VERDICTS];
	size_t n_moved = 0, room, used;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < XDPBAN_STAT__VERDICTS; i++) {
		if (f->rates[i].packets > 0 || f->rates[i].bytes > 0)
			moved[n_moved++] = i;
		else
			out->n_folded++;
	}
	if (!lines)
		lines = SIZE_MAX;
	room = lines > 1 ? lines : 1;
	/* When the verdicts that moved do not fit, the fold line takes one of their lines. */
	if (n_moved + (out->n_folded > 0) > room)
		keep_busiest(f, moved, n_moved, room > 1 ? room - 1 : 0, out);
	else
		keep_busiest(f, moved, n_moved, n_moved, out);
	used = out->n_shown + (out->n_folded > 0);
	for (int i = XDPBAN_STAT__VERDICTS; i < XDPBAN_STAT__MAX && used < room; i++) {
		if (event_listed(f, i)) {
			out->shown[out->n_shown++] = i;
			used++;
		}
	}
	return used ? used : 1;
}
