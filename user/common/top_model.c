/* top_model.c - the computation behind `xdpban top` (top_model.h): rates from two snapshots,
 * and the ranking of sources by their errors in the interval. Pure: it never reads a map, a
 * clock or a terminal.
 */
#include <errno.h>
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

int top_snapshot_add(struct top_snapshot *s, const struct top_source *src)
{
	if (s->n_sources == s->cap_sources) {
		size_t cap = s->cap_sources ? s->cap_sources * 2 : 64;
		struct top_source *more = realloc(s->sources, cap * sizeof(*more));

		if (!more)
			return -ENOMEM;
		s->sources = more;
		s->cap_sources = cap;
	}
	s->sources[s->n_sources++] = *src;
	return 0;
}

void top_snapshot_finish(struct top_snapshot *s)
{
	if (s->n_sources)
		qsort(s->sources, s->n_sources, sizeof(*s->sources), source_cmp);
}

void top_snapshot_free(struct top_snapshot *s)
{
	free(s->sources);
	s->sources = NULL;
	s->n_sources = s->cap_sources = 0;
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
	ret = rank(prev, cur, sort, &f->rows, &f->n_active);
	if (ret)
		return ret;
	f->n_rows = f->n_active < count ? f->n_active : count;
	return 0;
}

void top_frame_free(struct top_frame *f)
{
	free(f->rows);
	f->rows = NULL;
	f->n_rows = f->n_active = 0;
}
