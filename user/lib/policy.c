/* policy.c - the policy tries: reading them (every prefix with its verdict and list, the counts
 * per list that `xdpban lists` shows), single changes, and the compile of a whole set
 * (policy.h), which makes its plan in policy_plan.c, has policy_write.c write the tries, and
 * writes the flat table and its lines through flat_live.c and flat6_live.c, from codes
 * computed in flat.c. The top of the policy module: with the files below it, which never call
 * it, the only place that writes xdpban_policy4/6, xdpban_flat4/6 or the lines in
 * xdpban_flat4x/6x: lists (xdpband), manual prefix bans (bans.c), the sweep and the state file
 * all come through here. It must never store a pure code that the tries do not back at that
 * instant (policy.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "bigmem.h"
#include "bancache.h"
#include "nodeny.h"
#include "policy.h"
#include "policy_write.h"

/* ==== reading the tries ==================================================================== */

const char *xb_verdict_name(__u32 verdict)
{
	switch (verdict) {
	case XDPBAN_POLICY_NONE:
		return "none";
	case XDPBAN_POLICY_DENY:
		return "deny";
	case XDPBAN_POLICY_TRUSTED:
		return "trusted";
	case XDPBAN_POLICY_ALLOWED:
		return "allowed";
	case XDPBAN_POLICY_NOT_ALLOWED:
		return "not allowed";
	case XB_VERDICT_OBSERVED:
		return "observed-deny";
	}
	return "?";
}

struct policy_walk {
	__u8 family;
	__u64 now_ns;
	xb_policy_cb cb;
	void *ctx;
};

static int policy_entry(const void *key, const void *value, void *ctx)
{
	const struct policy_walk *walk = ctx;
	struct xb_policy_entry e = {};

	xb_lpm_key_to_prefix(walk->family, key, &e.prefix);
	memcpy(&e.policy, value, sizeof(e.policy));
	e.expired = e.policy.expires_ns && walk->now_ns >= e.policy.expires_ns;
	return walk->cb(&e, walk->ctx);
}

static int walk_family(const struct xb_maps *m, __u8 family, xb_policy_cb cb, void *ctx)
{
	struct policy_walk walk = { family, xb_boot_ns(), cb, ctx };

	if (family == XDPBAN_FAMILY_INET)
		return xb_map_foreach(m->policy4, sizeof(struct xdpban_lpm4_key),
				      sizeof(struct xdpban_policy), policy_entry, &walk);
	if (family == XDPBAN_FAMILY_INET6)
		return xb_map_foreach(m->policy6, sizeof(struct xdpban_lpm6_key),
				      sizeof(struct xdpban_policy), policy_entry, &walk);
	return -EAFNOSUPPORT;
}

static int run_collect(const struct xb_policy_entry *e, void *ctx)
{
	return xb_run_push(ctx, e, sizeof(*e));
}

static int run_load(const struct xb_maps *m, __u8 family, struct xb_run_trie *t)
{
	return walk_family(m, family, run_collect, t);
}

/* From a run's copy when one is on (bancache.h). */
int xb_policy_foreach_family(const struct xb_maps *m, __u8 family, xb_policy_cb cb, void *ctx)
{
	const struct xb_policy_entry *v;
	size_t n;
	int ret = 0;

	if (!m->ban_run ||
	    !xb_run_entries(m, m->ban_run->policy, family, run_load, (const void **)&v, &n))
		return walk_family(m, family, cb, ctx);
	for (size_t i = 0; !ret && i < n; i++)
		ret = cb(&v[i], ctx);
	return ret;
}

/* A write of the family's trie: a run's copy of it is stale. */
static void run_changed(const struct xb_maps *m, __u8 family)
{
	struct xb_run_trie *t = m->ban_run ? xb_run_trie(m->ban_run->policy, m, family) : NULL;

	if (t)
		t->loaded = false;
}

int xb_policy_foreach(const struct xb_maps *m, xb_policy_cb cb, void *ctx)
{
	int ret = xb_policy_foreach_family(m, XDPBAN_FAMILY_INET, cb, ctx);

	return ret ? ret : xb_policy_foreach_family(m, XDPBAN_FAMILY_INET6, cb, ctx);
}

struct list_tally {
	struct xb_list_count *rows;
	size_t n, cap;
};

static struct xb_list_count *tally_row(struct list_tally *t, __u32 list_id, __u32 verdict)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->rows[i].list_id == list_id && t->rows[i].verdict == verdict)
			return &t->rows[i];
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		struct xb_list_count *rows = realloc(t->rows, cap * sizeof(*rows));

		if (!rows)
			return NULL;
		t->rows = rows;
		t->cap = cap;
	}
	t->rows[t->n] = (struct xb_list_count){ .list_id = list_id, .verdict = verdict };
	return &t->rows[t->n++];
}

static int tally_entry(const struct xb_policy_entry *e, void *ctx)
{
	struct xb_list_count *row;

	if (e->expired)
		return 0;
	row = tally_row(ctx, e->policy.list_id, e->policy.verdict);
	if (!row)
		return -ENOMEM;
	if (e->prefix.family == XDPBAN_FAMILY_INET)
		row->ipv4++;
	else
		row->ipv6++;
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct xb_list_count *x = a, *y = b;

	if (x->list_id != y->list_id)
		return x->list_id < y->list_id ? -1 : 1;
	return x->verdict < y->verdict ? -1 : x->verdict > y->verdict;
}

/* An entry of the observed tries, tallied under its list as XB_VERDICT_OBSERVED. */
static int tally_observed(const struct xb_observed_entry *e, void *ctx)
{
	const struct xb_policy_entry as_policy = {
		.prefix = e->prefix,
		.policy = { .verdict = XB_VERDICT_OBSERVED, .list_id = e->list_id },
	};

	return tally_entry(&as_policy, ctx);
}

int xb_lists_count(const struct xb_maps *m, struct xb_list_count **out, size_t *n)
{
	struct list_tally t = {};
	int ret = xb_policy_foreach(m, tally_entry, &t);

	if (!ret)
		ret = xb_observed_foreach(m, tally_observed, &t);

	if (ret) {
		free(t.rows);
		return ret;
	}
	if (t.n)
		qsort(t.rows, t.n, sizeof(*t.rows), row_cmp);
	*out = t.rows;
	*n = t.n;
	return 0;
}

/* ==== writing: the tries =================================================================== */

#define FAMILIES 2

static int family_index(__u8 family)
{
	return family == XDPBAN_FAMILY_INET ? 0 : 1;
}

static bool prefix_valid(const struct xb_prefix *p)
{
	return (p->family == XDPBAN_FAMILY_INET || p->family == XDPBAN_FAMILY_INET6) &&
	       p->plen <= xb_family_bits(p->family);
}

static const char *flat_name(__u8 family)
{
	return family == XDPBAN_FAMILY_INET ? XDPBAN_MAP_NAME(xdpban_flat4)
					    : XDPBAN_MAP_NAME(xdpban_flat6);
}

/* ==== single changes ======================================================================= */

static int trie_update(int fd, const void *key, const void *value, __u64 flags)
{
	for (int i = 0;; i++) {
		if (!bpf_map_update_elem(fd, key, value, flags))
			return 0;
		if (errno != ENOMEM || i == XB_TRIE_ENOMEM_RETRIES)
			return -errno;
		usleep(1000 << i);
	}
}

/* LOOKUP in every region the entry at p touches, and no line there (or no lines read at all):
 * the step before any single change of a trie. 0 or -errno (the table not mapped). */
static int flat_touch_live(const struct xb_maps *m, const struct xb_prefix *p)
{
	struct xb_flat t;
	int ret = xb_flat_open(&t, m, p->family);

	if (ret)
		return ret;
	xb_flat_touch(t.words, p);
	if (p->family == XDPBAN_FAMILY_INET6)
		xb_l6_touch_live(m, &t, p);
	if (p->family == XDPBAN_FAMILY_INET)
		xb_l3_touch_live(m, &t, p);
	xb_flat_close(&t);
	return 0;
}

int xb_policy_put(const struct xb_maps *m, const struct xb_prefix *p,
		  const struct xdpban_policy *val, __u64 flags)
{
	struct xb_policy_entry e = { .prefix = *p, .policy = *val };
	struct xb_entry_list one = { .v = &e, .n = 1 };
	union xb_lpm_key key;
	int ret;

	if (!prefix_valid(p) || val->verdict > XDPBAN_POLICY_VERDICT_MAX)
		return -EINVAL;
	ret = flat_touch_live(m, p);
	if (!ret && val->verdict == XDPBAN_POLICY_DENY)
		ret = xb_nodeny_clear_denies(m, &one);
	if (ret)
		return ret;
	xb_lpm_key_make(p, &key);
	run_changed(m, p->family);
	return trie_update(xb_policy_fd(m, p->family), &key, val, flags);
}

int xb_policy_delete(const struct xb_maps *m, const struct xb_prefix *p)
{
	union xb_lpm_key key;
	int ret;

	if (!prefix_valid(p))
		return -EINVAL;
	ret = flat_touch_live(m, p);
	if (ret)
		return ret;
	xb_lpm_key_make(p, &key);
	run_changed(m, p->family);
	if (bpf_map_delete_elem(xb_policy_fd(m, p->family), &key))
		return -errno;
	return 0;
}

/* ==== compiling ============================================================================ */

static int collect_old(const struct xb_policy_entry *e, void *ctx)
{
	return xb_entry_list_push(ctx, e);
}

static int plan_make(struct xb_plan *p, const struct xb_maps *m, const struct xb_policy_set *set,
		     const struct xb_compile_opts *opts, char *err, size_t errlen)
{
	__u32 max = 0;
	int ret = xb_plan_take_set(p, set, err, errlen);

	if (ret)
		return ret;
	/* Room for a full trie read back: only the pages it fills are touched, where growing the
	 * list step by step would copy it into fresh pages each time. */
	if (!xb_map_capacity(xb_policy_fd(m, p->family), &max) && max > 65536)
		(void)xb_entry_list_reserve(&p->old, max);
	ret = xb_policy_foreach_family(m, p->family, collect_old, &p->old);
	if (ret) {
		snprintf(err, errlen, "cannot read %s: %s", xb_policy_trie_name(p->family), strerror(-ret));
		return ret;
	}
	xb_entry_list_sort(&p->old);
	ret = xb_plan_keep_old(p, opts);
	if (!ret)
		ret = xb_plan_diff(p);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory compiling %zu policy entries", p->next.n);
	return ret;
}

/* Copies words [first, first + nwords) of the exact table into the live one; only words that
 * differ are stored. */
static void table_store(__u64 *live, const __u64 *exact, __u32 first, __u32 nwords)
{
	for (__u32 i = first; i < first + nwords; i++)
		if (word_load(&live[i]) != exact[i])
			word_store(&live[i], exact[i]);
}

/* Every level, finest first: a coarser code turns pure only when the finer levels under it
 * are exact already, so that the data path never meets a pure code over finer codes that
 * say otherwise (each level is right on its own; this keeps them agreeing at every instant).
 * The observer sees level 2 done, then the middle level. */
static void table_store_levels(__u64 *live, const __u64 *exact, const struct xb_plan *p,
			       const struct xb_compile_opts *opts)
{
	static const enum xb_compile_step done[XB_FLAT_LEVELS] = {
		[1] = XB_COMPILE_MID_DONE, [2] = XB_COMPILE_L2_DONE,
	};

	for (int i = XB_FLAT_LEVELS - 1; i >= 0; i--) {
		table_store(live, exact, xb_flat_levels[i].base, xb_flat_levels[i].words);
		if (i)
			xb_plan_observe(opts, p, done[i], p->write.n + p->remove.n);
	}
}

static __u32 level_pure(const __u64 *exact, int level)
{
	return xb_flat_count_pure(exact + xb_flat_levels[level].base, xb_flat_levels[level].words);
}

/* What the family's codes and lines will be, computed in plain memory from the plan's next
 * set alone: on a thread of its own while the trie is written (the kernel's work, which takes
 * about as long), or in line where no thread can be had. */
struct codes {
	const struct xb_plan *p;
	bool want_lines4, want_lines6; /* the level-3 lines or the IPv6 lines are written */
	__u64 *exact;
	struct xb_flat_line *lines;
	struct xb_flat6_line *lines6;
	size_t n_lines;
	int ret;
	pthread_t thread;
	bool threaded;
};

static void *codes_compute(void *arg)
{
	struct codes *c = arg;
	const struct xb_entry_list *next = &c->p->next;

	c->exact = xb_big_malloc(XDPBAN_FLAT_WORDS * sizeof(*c->exact));
	c->ret = c->exact ? xb_flat_build(next->v, next->n, c->p->family, c->exact) : -ENOMEM;
	if (!c->ret && c->want_lines4)
		c->ret = xb_flat_lines_build(next->v, next->n, &c->lines, &c->n_lines);
	else if (!c->ret && c->want_lines6)
		c->ret = xb_flat6_lines_build(next->v, next->n, &c->lines6, &c->n_lines);
	return NULL;
}

static void codes_start(struct codes *c)
{
	c->threaded = !pthread_create(&c->thread, NULL, codes_compute, c);
	if (!c->threaded)
		codes_compute(c);
}

/* Waits for the computation: 0 or -errno (-ENOMEM). */
static int codes_finish(struct codes *c)
{
	if (c->threaded)
		pthread_join(c->thread, NULL);
	c->threaded = false;
	return c->ret;
}

static void codes_free(struct codes *c)
{
	codes_finish(c);
	free(c->exact);
	free(c->lines);
	free(c->lines6);
}

/* After the trie holds the set: the lines (any order against level 2 is right, see rule 2 in
 * flat_live.c) and the IPv6 hosts the walk ends in, the levels, then the guard that says
 * whether the lines are read. */
static void plan_write_codes(const struct xb_plan *p, const struct xb_maps *m,
			     const struct codes *c, struct xb_flat *t,
			     struct xb_l3_live *l3, struct xb_l6_live *l6,
			     const struct xb_compile_opts *opts, struct xb_compile_result *res)
{
	__u64 guard = XDPBAN_FLAT_COMPILED;
	bool lines = false;

	if (c->want_lines4)
		lines = xb_l3_write(l3, t, c->lines, c->n_lines, res);
	else if (c->want_lines6)
		lines = xb_l6_write(l6, t, c->lines6, c->n_lines, res);
	if (lines && c->want_lines6 && xb_h6_write(m, &p->next, res)) {
		xb_lines_disable(t); /* a stale host entry is left: no walk may reach it */
		lines = false;
	}
	if (lines)
		guard = XDPBAN_FLAT_COMPILED_L3;
	table_store_levels(t->words, c->exact, p, opts);
	/* Last: from now on the data path reads the codes, which are exact. */
	if (word_load(&t->words[XDPBAN_FLAT_GUARD]) != guard)
		word_store(&t->words[XDPBAN_FLAT_GUARD], guard);
	res->pure_l1[family_index(p->family)] = level_pure(c->exact, 0);
	res->pure_mid[family_index(p->family)] = level_pure(c->exact, 1);
	res->pure_l2[family_index(p->family)] = level_pure(c->exact, 2);
}

/* One family: LOOKUP where anything changes, the trie (the codes computed beside it), then the
 * exact codes. */
static int compile_family(struct xb_plan *p, const struct xb_maps *m,
			  const struct xb_compile_opts *opts, struct xb_compile_result *res,
			  char *err, size_t errlen)
{
	struct xb_l3_live l3 = { .fd = -1 };
	struct xb_l6_live l6 = { .fd = -1 };
	struct codes codes = { .p = p };
	struct xb_flat t;
	int ret = xb_flat_open(&t, m, p->family);

	if (ret) {
		snprintf(err, errlen, "cannot map the flat table %s: %s", flat_name(p->family),
			 ret == -EPROTO ? "not an xdpban flat table" : strerror(-ret));
		return ret;
	}
	if (p->family == XDPBAN_FAMILY_INET)
		xb_l3_live_open(&l3, m, &t);
	else
		xb_l6_live_open(&l6, m, &t);
	p->changed = true;
	for (size_t i = 0; i < p->touch.n; i++) {
		xb_flat_touch(t.words, xb_plan_touched(p, i));
		xb_l3_forget(&l3, xb_plan_touched(p, i));
		xb_l6_forget(&l6, xb_plan_touched(p, i));
	}
	xb_l6_flush(&l6);
	ret = xb_nodeny_clear_denies(m, &p->next);
	if (ret)
		snprintf(err, errlen, "cannot map %s: %s", XDPBAN_MAP_NAME(xdpban_nodeny16),
			 strerror(-ret));
	xb_plan_observe(opts, p, XB_COMPILE_TOUCHED, 0);
	run_changed(m, p->family); /* the trie changes below: a run's copy of it is stale */
	codes.want_lines4 = l3.fd >= 0;
	codes.want_lines6 = l6.fd >= 0;
	if (!ret) {
		codes_start(&codes);
		ret = xb_plan_apply_trie(p, m, opts, err, errlen);
	}
	if (!ret) {
		xb_plan_observe(opts, p, XB_COMPILE_TRIE_DONE, p->write.n + p->remove.n);
		ret = codes_finish(&codes);
		if (ret)
			snprintf(err, errlen, "cannot compute the %s codes: %s",
				 flat_name(p->family), strerror(-ret));
	}
	if (!ret)
		plan_write_codes(p, m, &codes, &t, &l3, &l6, opts, res);
	if (!ret) {
		ret = xb_nodeny_write(m, p->family, &p->next);
		if (ret)
			snprintf(err, errlen, "cannot map %s: %s", XDPBAN_MAP_NAME(xdpban_nodeny16),
				 strerror(-ret));
	}
	codes_free(&codes);
	xb_l3_live_free(&l3);
	xb_l6_live_free(&l6);
	xb_flat_close(&t);
	res->written += p->write.n;
	res->removed += p->remove.n;
	res->removals_first |= p->remove_first && p->write.n && p->remove.n;
	res->kept += p->kept;
	res->entries += p->next.n;
	return ret;
}

/* Refuses, before anything changes, a set the trie cannot hold (with what the compile keeps),
 * and has the removals go first when the new entries do not fit beside the doomed ones. */
static int plan_check_capacity(struct xb_plan *p, const struct xb_maps *m, char *err,
			       size_t errlen)
{
	char kept[96];
	__u32 max;
	int ret = xb_map_capacity(xb_policy_fd(m, p->family), &max);

	if (ret) {
		snprintf(err, errlen, "cannot read the size of %s: %s", xb_policy_trie_name(p->family),
			 strerror(-ret));
		return ret;
	}
	if (p->next.n > max) {
		if (p->kept)
			snprintf(kept, sizeof(kept), " (%zu of them kept from the trie, such as manual prefix bans)",
				 p->kept);
		snprintf(err, errlen, "%zu policy entries%s do not fit in %s, which holds %u; nothing changed",
			 p->next.n, p->kept ? kept : "", xb_policy_trie_name(p->family), max);
		return -ENOSPC;
	}
	p->remove_first = p->old.n + p->added > max;
	return 0;
}

/* After a failed compile: makes the family's trie hold again what it held before (p->old),
 * with exact codes, through a compile of its own from what the trie holds now. Removals go
 * first, so that it fits wherever the failed compile stopped. 0 or -errno. */
static int plan_revert(const struct xb_plan *p, const struct xb_maps *m,
		       const struct xb_compile_opts *opts)
{
	struct xb_plan r = { .family = p->family, .remove_first = true };
	struct xb_compile_result ignored = {};
	char err[XB_ERRLEN];
	int ret = 0;

	for (size_t i = 0; i < p->old.n && !ret; i++)
		ret = xb_entry_list_push(&r.next, &p->old.v[i]);
	if (!ret)
		ret = xb_policy_foreach_family(m, p->family, collect_old, &r.old);
	if (!ret) {
		xb_entry_list_sort(&r.old);
		ret = xb_plan_diff(&r);
	}
	if (!ret)
		ret = compile_family(&r, m, opts, &ignored, err, sizeof(err));
	xb_plan_free(&r);
	return ret;
}

/* Every family whose compile began, the failed one included, goes back to where it was; err
 * (the failure) gets what came of that. */
static void plans_revert(struct xb_plan *plans, const struct xb_maps *m,
			 const struct xb_compile_opts *opts, char *err, size_t errlen)
{
	size_t used = strlen(err);
	int ret = 0, one;

	for (int f = FAMILIES - 1; f >= 0; f--) {
		one = plans[f].changed ? plan_revert(&plans[f], m, opts) : 0;
		ret = ret ? ret : one;
	}
	if (!ret)
		snprintf(err + used, errlen - used, "; rolled back: the policy is as it was");
	else
		snprintf(err + used, errlen - used,
			 "; the rollback failed too (%s): the tries hold part of the new set until a compile succeeds",
			 strerror(-ret));
}

int xb_policy_compile(const struct xb_maps *m, const struct xb_policy_set *set,
		      const struct xb_compile_opts *opts, struct xb_compile_result *res,
		      char *err, size_t errlen)
{
	static const __u8 families[FAMILIES] = { XDPBAN_FAMILY_INET, XDPBAN_FAMILY_INET6 };
	struct xb_compile_result ignored;
	struct xb_plan plans[FAMILIES] = {};
	int ret = xb_policy_set_check(set, err, errlen);

	if (!res)
		res = &ignored;
	memset(res, 0, sizeof(*res));
	/* Both plans are made and checked before either family changes: a bad set, or one that
	 * does not fit, changes nothing. */
	for (int f = 0; f < FAMILIES && !ret; f++) {
		plans[f].family = families[f];
		ret = plan_make(&plans[f], m, set, opts, err, errlen);
		if (!ret)
			ret = plan_check_capacity(&plans[f], m, err, errlen);
	}
	for (int f = 0; f < FAMILIES && !ret; f++)
		ret = compile_family(&plans[f], m, opts, res, err, errlen);
	if (ret && plans[0].changed) /* IPv4 goes first: if it changed nothing, nothing did */
		plans_revert(plans, m, opts, err, errlen);
	for (int f = 0; f < FAMILIES; f++)
		xb_plan_free(&plans[f]);
	return ret;
}

static bool keep_all(const struct xb_policy_entry *old, void *ctx)
{
	return true;
}

int xb_policy_recompile(const struct xb_maps *m, struct xb_compile_result *res, char *err,
			size_t errlen)
{
	const struct xb_policy_set none = {};
	const struct xb_compile_opts opts = { .keep = keep_all };

	return xb_policy_compile(m, &none, &opts, res, err, errlen);
}
