/* test_table.c - the ban and counter tables of include/xdpban_table.h as plain memory, through
 * user/lib/table.h: what the data path and userspace both run, tested without the kernel.
 * Lookups, probing past full groups and the overflow counts, capacity, eviction, the spoof
 * defence's rules, and threads counting and inserting at once. The same code runs in the BPF
 * program; test_state.c and test_diff.c hold the kernel's copy to the same rules. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include "table.h"

#define SEED 0x5eed5eed12345678ull

static struct xdpban_group *groups_new(__u32 n)
{
	struct xdpban_group *g = aligned_alloc(128, n * sizeof(*g));

	assert_non_null(g);
	memset(g, 0, n * sizeof(*g));
	return g;
}

static void key4(__u32 addr, struct xdpban_key *k)
{
	memset(k, 0, sizeof(*k));
	k->family = XDPBAN_FAMILY_INET;
	k->prefixlen = 32;
	memcpy(k->addr, &addr, 4);
}

static void key6(__u32 a, __u32 b, struct xdpban_key *k)
{
	memset(k, 0, sizeof(*k));
	k->family = XDPBAN_FAMILY_INET6;
	k->prefixlen = 64;
	memcpy(k->addr, &a, 4);
	memcpy(k->addr + 4, &b, 4);
}

/* Key i of a test: IPv4 and IPv6 mixed, all distinct. */
static void key_n(__u32 i, struct xdpban_key *k)
{
	if (i % 3 == 2)
		key6(0x20010db8u ^ i, i * 2654435761u, k);
	else
		key4(0xc0000200u + i * 7919u, k);
}

struct bans_fixture {
	struct xdpban_group *g;
	__u64 *idx;
	struct xdpban_ban_info *info;
	struct xb_bans b;
	__u32 n;
};

static struct bans_fixture *bans_new(__u32 n)
{
	struct bans_fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->n = n;
	f->g = groups_new(n);
	f->idx = calloc(n, sizeof(*f->idx));
	f->info = calloc(n * XDPBAN_GROUP_SLOTS, sizeof(*f->info));
	assert_non_null(f->idx);
	assert_non_null(f->info);
	xb_bans_init(&f->b, f->g, n, f->idx, f->info, SEED);
	return f;
}

static void bans_free(struct bans_fixture *f)
{
	free(f->g);
	free(f->idx);
	free(f->info);
	free(f);
}

static struct xdpban_ban ban_of(__u32 i)
{
	struct xdpban_ban b = { .start_ns = 1000 + i, .expires_ns = 5000000 + i, .count = 11 + i,
				.reason = XDPBAN_REASON_ERRORS, .classes = XDPBAN_CLASS_MALFORMED };
	return b;
}

static __u32 total_overflow(const struct bans_fixture *f)
{
	__u32 sum = 0;

	for (__u32 i = 0; i < f->n; i++)
		sum += xb_bans_overflow(&f->b, i);
	return sum;
}

/* Bans go in, are found with every field, and come out; the overflow counts return to 0. */
static void bans_put_get_remove(void **state)
{
	struct bans_fixture *f = bans_new(1024);
	const __u32 n = 1500;
	struct xdpban_key k;
	struct xdpban_ban got, want;

	for (__u32 i = 0; i < n; i++) {
		key_n(i, &k);
		want = ban_of(i);
		assert_int_equal(xb_bans_put(&f->b, &k, &want, BPF_NOEXIST), 0);
	}
	for (__u32 i = 0; i < n + 500; i++) {
		key_n(i, &k);
		if (i >= n) {
			assert_int_equal(xb_bans_get(&f->b, &k, &got), -ENOENT);
			continue;
		}
		want = ban_of(i);
		assert_int_equal(xb_bans_get(&f->b, &k, &got), 0);
		assert_memory_equal(&got, &want, sizeof(got));
	}
	key_n(0, &k);
	want = ban_of(0);
	assert_int_equal(xb_bans_put(&f->b, &k, &want, BPF_NOEXIST), -EEXIST);
	for (__u32 i = 0; i < n; i += 2) {
		key_n(i, &k);
		assert_int_equal(xb_bans_remove(&f->b, &k), 0);
		assert_int_equal(xb_bans_remove(&f->b, &k), -ENOENT);
	}
	for (__u32 i = 0; i < n; i++) {
		key_n(i, &k);
		assert_int_equal(xb_bans_get(&f->b, &k, &got), i % 2 ? 0 : -ENOENT);
	}
	for (__u32 i = 1; i < n; i += 2) {
		key_n(i, &k);
		assert_int_equal(xb_bans_remove(&f->b, &k), 0);
	}
	assert_int_equal(total_overflow(f), 0);
	bans_free(f);
}

/* Keys that all share one home group spill into the following groups, are all found, and a
 * lookup stops at home only when nothing lives beyond it. */
static void bans_spill_past_full_groups(void **state)
{
	struct bans_fixture *f = bans_new(64);
	struct xdpban_key keys[20], k;
	struct xdpban_ban got, want = ban_of(0);
	__u32 home = 0, found = 0;

	for (__u32 i = 0; found < 20; i++) {
		key4(0x0a000000u + i, &k);
		if (found == 0)
			home = xdpban_key_home(SEED, &k, f->n);
		if (xdpban_key_home(SEED, &k, f->n) == home)
			keys[found++] = k;
	}
	for (int i = 0; i < 20; i++)
		assert_int_equal(xb_bans_put(&f->b, &keys[i], &want, BPF_NOEXIST), 0);
	/* 20 bans, 4 per group: home and the 4 groups after it */
	assert_int_equal(xb_bans_overflow(&f->b, home), 16);
	assert_int_equal(xb_bans_overflow(&f->b, (home + 1) % f->n), 12);
	assert_int_equal(xb_bans_overflow(&f->b, (home + 4) % f->n), 0);
	for (int i = 0; i < 4; i++) /* empty the home group: the rest must still be found */
		assert_int_equal(xb_bans_remove(&f->b, &keys[i]), 0);
	for (int i = 4; i < 20; i++)
		assert_int_equal(xb_bans_get(&f->b, &keys[i], &got), 0);
	/* a new key of the same home takes a freed slot at home */
	key4(0xdead0000u, &k);
	for (__u32 i = 0; xdpban_key_home(SEED, &k, f->n) != home; i++)
		key4(0xdead0000u + i, &k);
	assert_int_equal(xb_bans_put(&f->b, &k, &want, BPF_NOEXIST), 0);
	for (int i = 4; i < 20; i++)
		assert_int_equal(xb_bans_remove(&f->b, &keys[i]), 0);
	assert_int_equal(xb_bans_remove(&f->b, &k), 0);
	assert_int_equal(total_overflow(f), 0);
	bans_free(f);
}

/* At least half the slots take bans before any probe window is full (the documented
 * capacity); a full window is -ENOSPC and changes nothing. */
static void bans_capacity(void **state)
{
	struct bans_fixture *f = bans_new(4096);
	struct xdpban_ban want = ban_of(1), got;
	struct xdpban_key k;
	__u32 i;

	for (i = 0;; i++) {
		int ret;

		key_n(i, &k);
		ret = xb_bans_put(&f->b, &k, &want, BPF_NOEXIST);
		if (ret) {
			assert_int_equal(ret, -ENOSPC);
			break;
		}
	}
	assert_true(i >= xb_bans_slots(&f->b) / 2);
	assert_int_equal(xb_bans_get(&f->b, &k, &got), -ENOENT);
	bans_free(f);
}

/* ---- counters ---- */

static struct xdpban_error err_of(__u32 now_s, __u8 hop, __u8 spoof)
{
	struct xdpban_error e = { .n = 1, .now_s = now_s, .window_s = 100, .hop = hop,
				  .spoof = spoof, .tolerance = 1 };
	return e;
}

static int count1(struct xdpban_group *g, const struct xdpban_key *k, __u32 now_s, __u8 hop,
		  __u8 spoof, __u32 *count)
{
	struct xdpban_error e = err_of(now_s, hop, spoof);
	struct xdpban_ctr_ref ref = { 0 };

	return xdpban_ctr_count(g, k, &e, count, &ref);
}

/* The window: errors add up, a passed window starts over, a reset means no window. */
static void counters_window(void **state)
{
	struct xdpban_group *g = groups_new(1);
	struct xdpban_error e = err_of(1000, XDPBAN_HOP_NONE, XDPBAN_SPOOF_OFF);
	struct xdpban_ctr_ref ref = { 0 };
	struct xdpban_key k;
	__u32 count = 0;

	key4(0x01020304, &k);
	for (__u32 i = 1; i <= 5; i++) {
		assert_int_equal(xdpban_ctr_count(g, &k, &e, &count, &ref), XDPBAN_COUNT_COUNTED);
		assert_int_equal(count, i);
	}
	e.now_s = 1099; /* 99 s into a 100 s window */
	assert_int_equal(xdpban_ctr_count(g, &k, &e, &count, &ref), XDPBAN_COUNT_COUNTED);
	assert_int_equal(count, 6);
	e.now_s = 1100;
	assert_int_equal(xdpban_ctr_count(g, &k, &e, &count, &ref), XDPBAN_COUNT_COUNTED);
	assert_int_equal(count, 1);
	xdpban_ctr_reset(g, &ref, 1100);
	e.now_s = 1150; /* no window since the reset: this error starts one at 1150 */
	assert_int_equal(xdpban_ctr_count(g, &k, &e, &count, &ref), XDPBAN_COUNT_COUNTED);
	assert_int_equal(count, 1);
	e.now_s = 1249;
	assert_int_equal(xdpban_ctr_count(g, &k, &e, &count, &ref), XDPBAN_COUNT_COUNTED);
	assert_int_equal(count, 2);
	e.n = 0xfffffff0u; /* saturates */
	assert_int_equal(xdpban_ctr_count(g, &k, &e, &count, &ref), XDPBAN_COUNT_COUNTED);
	assert_int_equal(xdpban_ctr_count(g, &k, &e, &count, &ref), XDPBAN_COUNT_COUNTED);
	assert_int_equal(count, 0xffffffffu);
	free(g);
}

/* Eviction: a free slot, else an ended window, else the lowest count (oldest first); never a
 * recently verified source for an unverified newcomer. */
static void counters_eviction(void **state)
{
	struct xdpban_group *g = groups_new(1);
	struct xb_counters c;
	struct xb_counter ctr = { 0 };
	struct xdpban_key k[6];
	__u32 count;

	xb_counters_init(&c, g, 1, SEED);
	for (int i = 0; i < 6; i++)
		key4(0x0a000001u + i, &k[i]);
	for (int i = 0; i < 4; i++) /* counts 5, 1, 3, 7 */
		for (int n = 0; n < (int[]){ 5, 1, 3, 7 }[i]; n++)
			assert_int_equal(count1(g, &k[i], 1000, 5, XDPBAN_SPOOF_OFF, &count), 0);
	assert_int_equal(count1(g, &k[4], 1000, 5, XDPBAN_SPOOF_OFF, &count), 0);
	assert_int_equal(xb_counters_get(&c, &k[1], 1000, &ctr), -ENOENT); /* count 1 went */
	for (int i = 0; i < 5; i++)
		if (i != 1)
			assert_int_equal(xb_counters_get(&c, &k[i], 1000, &ctr), 0);
	/* k[0] is verified now: protected from an unverified newcomer even with a low count */
	assert_int_equal(xdpban_ctr_verify(g, &k[4], 5, 1000, 100, 1), 1);
	assert_int_equal(count1(g, &k[5], 1000, 5, XDPBAN_SPOOF_OFF, &count), 0);
	assert_int_equal(xb_counters_get(&c, &k[4], 1000, &ctr), 0);
	assert_int_equal(ctr.flags & XDPBAN_CTR_VERIFIED, XDPBAN_CTR_VERIFIED);
	assert_int_equal(xb_counters_get(&c, &k[2], 1000, &ctr), -ENOENT); /* count 3 went */
	/* every window ended: the first slot with an ended window goes, whatever its count */
	assert_int_equal(count1(g, &k[2], 2000, 5, XDPBAN_SPOOF_OFF, &count), 0);
	assert_int_equal(xb_counters_get(&c, &k[2], 2000, &ctr), 0);
	assert_int_equal(ctr.count, 1);
	free(g);
}

/* The spoof defence on one source: a window's first error sets the reference hop count; a
 * disagreeing error is not counted and disputes the source for the rest of the window; a
 * verified hop count is the reference for good; mode `verified` counts only verified
 * sources; reports (no hop count) always count. */
static void counters_spoof_rules(void **state)
{
	struct xdpban_group *g = groups_new(1);
	struct xb_counters c;
	struct xb_counter ctr;
	struct xdpban_key k, v;
	__u32 count = 0;

	xb_counters_init(&c, g, 1, SEED);
	key4(0xcb007101, &k);
	assert_int_equal(count1(g, &k, 1000, 7, XDPBAN_SPOOF_HOP, &count), XDPBAN_COUNT_COUNTED);
	assert_int_equal(count1(g, &k, 1000, 8, XDPBAN_SPOOF_HOP, &count), XDPBAN_COUNT_COUNTED);
	assert_int_equal(count, 2); /* within the tolerance of 1 */
	assert_int_equal(count1(g, &k, 1001, 12, XDPBAN_SPOOF_HOP, &count), XDPBAN_COUNT_SUSPECT);
	assert_int_equal(xb_counters_get(&c, &k, 1001, &ctr), 0);
	assert_int_equal(ctr.count, 2);
	assert_true(ctr.flags & XDPBAN_CTR_DISPUTED);
	assert_int_equal(count1(g, &k, 1002, 7, XDPBAN_SPOOF_HOP, &count), XDPBAN_COUNT_SUSPECT);
	assert_int_equal(count1(g, &k, 1002, XDPBAN_HOP_NONE, XDPBAN_SPOOF_HOP, &count),
			 XDPBAN_COUNT_COUNTED); /* a report */
	assert_int_equal(count, 3);
	/* the window ends: a fresh start with a new reference */
	assert_int_equal(count1(g, &k, 1100, 12, XDPBAN_SPOOF_HOP, &count), XDPBAN_COUNT_COUNTED);
	assert_int_equal(count, 1);
	assert_int_equal(xb_counters_get(&c, &k, 1100, &ctr), 0);
	assert_int_equal(ctr.flags, XDPBAN_CTR_HOPREF);
	assert_int_equal(ctr.hop, 12);

	/* forged errors came first at hop 20; the source then proves hop 3: disputed */
	key4(0xc6336401, &v);
	assert_int_equal(count1(g, &v, 1000, 20, XDPBAN_SPOOF_HOP, &count), XDPBAN_COUNT_COUNTED);
	assert_int_equal(xdpban_ctr_verify(g, &v, 3, 1000, 100, 1), 1);
	assert_int_equal(xdpban_ctr_verify(g, &v, 3, 1000, 100, 1), 0); /* nothing new */
	assert_int_equal(count1(g, &v, 1001, 20, XDPBAN_SPOOF_HOP, &count), XDPBAN_COUNT_SUSPECT);
	assert_int_equal(count1(g, &v, 1001, 3, XDPBAN_SPOOF_HOP, &count), XDPBAN_COUNT_SUSPECT);
	/* next window: its own errors at hop 3 count, forged ones never do */
	assert_int_equal(count1(g, &v, 1200, 3, XDPBAN_SPOOF_HOP, &count), XDPBAN_COUNT_COUNTED);
	assert_int_equal(count, 1);
	assert_int_equal(count1(g, &v, 1201, 4, XDPBAN_SPOOF_VERIFIED, &count),
			 XDPBAN_COUNT_COUNTED);
	assert_int_equal(count, 2);
	assert_int_equal(count1(g, &v, 1202, 9, XDPBAN_SPOOF_HOP, &count), XDPBAN_COUNT_SUSPECT);
	/* a verified source with no window: a disagreeing error opens a disputed one */
	assert_int_equal(count1(g, &v, 1400, 9, XDPBAN_SPOOF_HOP, &count), XDPBAN_COUNT_SUSPECT);
	assert_int_equal(count1(g, &v, 1401, 3, XDPBAN_SPOOF_HOP, &count), XDPBAN_COUNT_SUSPECT);
	assert_int_equal(count1(g, &v, 1501, 3, XDPBAN_SPOOF_HOP, &count), XDPBAN_COUNT_COUNTED);
	/* mode verified: an unverified source is never counted, not even given a slot */
	key4(0xc6336402, &k);
	assert_int_equal(count1(g, &k, 1000, 3, XDPBAN_SPOOF_VERIFIED, &count),
			 XDPBAN_COUNT_UNVERIFIED);
	assert_int_equal(xb_counters_get(&c, &k, 1000, &ctr), -ENOENT);
	/* mode off: everything counts */
	assert_int_equal(count1(g, &v, 1502, 99, XDPBAN_SPOOF_OFF, &count), XDPBAN_COUNT_COUNTED);
	free(g);
}

/* A slot that goes to another key between the find and the swap fails the swap. */
static void counters_reassigned_slot(void **state)
{
	struct xdpban_group *g = groups_new(1);
	struct xdpban_ctr_new nw = { .now_s = 1000, .window_s = 100, .count = 1 };
	struct xdpban_ctr_ref old = { 0 }, fresh = { 0 };
	struct xdpban_key k[5];
	__u32 count;

	for (int i = 0; i < 5; i++)
		key4(0x0b000001u + i, &k[i]);
	for (int i = 0; i < 4; i++)
		assert_int_equal(count1(g, &k[i], 1000, 5, XDPBAN_SPOOF_OFF, &count), 0);
	assert_int_equal(count1(g, &k[0], 1000, 5, XDPBAN_SPOOF_OFF, &count), 0); /* k0: 2 */
	assert_int_equal(count1(g, &k[2], 1000, 5, XDPBAN_SPOOF_OFF, &count), 0);
	assert_int_equal(count1(g, &k[3], 1000, 5, XDPBAN_SPOOF_OFF, &count), 0);
	assert_true(xdpban_ctr_find(g, &k[1], &old)); /* the one with count 1: the victim */
	assert_int_equal(xdpban_ctr_insert(g, &k[4], &nw, &fresh), 0);
	assert_int_equal(fresh.slot, old.slot);
	assert_int_equal(xdpban_ctr_swap(g, &old, XDPBAN_CTR_PACK(1000, XDPBAN_CTL_GEN2(old.ctl),
								 2)), -1);
	assert_int_equal(XDPBAN_CTR_COUNT(g->slot[old.slot].val), 1);
	free(g);
}

struct hammer {
	struct xdpban_group *g;
	__u32 groups;
	__u32 first, keys, rounds;
	__u32 failed;
};

static void *hammer_run(void *arg)
{
	struct hammer *h = arg;

	for (__u32 r = 0; r < h->rounds; r++) {
		for (__u32 i = 0; i < h->keys; i++) {
			struct xdpban_key k;
			__u32 count;

			key4(0x0c000000u + h->first + i, &k);
			if (count1(&h->g[xdpban_key_home(SEED, &k, h->groups)], &k, 1000,
				   XDPBAN_HOP_NONE, XDPBAN_SPOOF_OFF, &count))
				h->failed++;
		}
	}
	return NULL;
}

/* Two threads count the same source a million times each: not one increment is lost. */
static void counters_threads_no_lost_increment(void **state)
{
	struct xdpban_group *g = groups_new(1);
	struct hammer h[2] = { { g, 1, 0, 1, 1000000, 0 }, { g, 1, 0, 1, 1000000, 0 } };
	pthread_t t[2];
	struct xb_counters c;
	struct xb_counter ctr;
	struct xdpban_key k;

	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, hammer_run, &h[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	xb_counters_init(&c, g, 1, SEED);
	key4(0x0c000000u, &k);
	assert_int_equal(h[0].failed + h[1].failed, 0);
	assert_int_equal(xb_counters_get(&c, &k, 1000, &ctr), 0);
	assert_int_equal(ctr.count, 2000000);
	free(g);
}

static int count_key(const struct xdpban_key *key, const struct xb_counter *ctr, void *ctx)
{
	__u32 *seen = ctx;
	__u32 i;

	memcpy(&i, key->addr, 4);
	seen[i - 0x0c000000u]++;
	return 0;
}

/* Threads inserting the same new sources at once never put one source in a group twice. */
static void counters_threads_no_duplicate(void **state)
{
	const __u32 groups = 16, keys = 48;
	struct xdpban_group *g = groups_new(groups);
	struct hammer h[2] = { { g, groups, 0, keys, 2000, 0 }, { g, groups, 0, keys, 2000, 0 } };
	__u32 seen[48] = { 0 };
	struct xb_counters c;
	pthread_t t[2];

	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, hammer_run, &h[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	xb_counters_init(&c, g, groups, SEED);
	assert_int_equal(xb_counters_walk(&c, 1000, count_key, seen), 0);
	for (__u32 i = 0; i < keys; i++)
		assert_true(seen[i] <= 1);
	free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bans_put_get_remove),
		cmocka_unit_test(bans_spill_past_full_groups),
		cmocka_unit_test(bans_capacity),
		cmocka_unit_test(counters_window),
		cmocka_unit_test(counters_eviction),
		cmocka_unit_test(counters_spoof_rules),
		cmocka_unit_test(counters_reassigned_slot),
		cmocka_unit_test(counters_threads_no_lost_increment),
		cmocka_unit_test(counters_threads_no_duplicate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
