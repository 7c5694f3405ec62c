/* table.h - the ban and counter tables (include/xdpban_table.h) from userspace: mapped into
 * memory and changed with the data path's own protocol, so that the data path never stops
 * and never sees half a write. Every userspace read or write of xdpban_bans, xdpban_baninfo
 * and xdpban_counts goes through here; never update those maps any other way.
 */
#ifndef XB_TABLE_H
#define XB_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "xdpban_state.h"

/* A table as plain memory: a mapped map, or (in tests) any array of groups; a ban table also
 * has its index, one word per group. */
struct xb_table {
	struct xdpban_group *groups;
	__u32 n;        /* groups */
	size_t len;     /* bytes mapped; 0 when the memory is not ours to unmap */
	__u64 *idx;     /* bans only: the index (xdpban_table.h), n words */
	size_t idx_len; /* bytes of it mapped; 0 when not ours */
};
#define XDPBAN_TAB struct xb_table
#define XDPBAN_TABLE_GROUP(tab, index) (&(tab)->groups[index])
#define XDPBAN_TABLE_BANIDX(tab, index) (&(tab)->idx[index])
#include "xdpban_table_ops.h"

/* Maps the whole of an mmapable array whose values are value_size bytes (a multiple of 8):
 * *mem and *len for munmap, *entries its max_entries. 0 or -errno (-EPROTO: a map of another
 * shape). Also what ports.c maps xdpban_ports with. */
int xb_array_map(int fd, size_t value_size, void **mem, size_t *len, __u32 *entries);
/* Maps an array of groups (checks value size and BPF_F_MMAPABLE). 0 or -errno (-EPROTO: a map
 * of another shape). */
int xb_table_map(struct xb_table *t, int fd);
void xb_table_unmap(struct xb_table *t);

/* The seed of the tables' hash (the one-entry array XDPBAN_MAP_SEED): read, and chosen at
 * random by whoever comes first, the data path or userspace. 0 or -errno. */
int xb_seed_get(int seed_fd, __u64 *seed);

/* ---- bans ---- */

struct xb_maps;

/* Every ban slot's per-CPU drop words (xdpban_bandrops), read at once for a listing. */
struct xb_ban_drops {
	__u64 *words; /* slot i, CPU c: words[i * ncpus + c] */
	size_t slots;
	int ncpus;
};

struct xb_bans {
	struct xb_table tab;
	struct xdpban_ban_info *info; /* the parallel cold data, one per slot */
	size_t info_len;
	__u64 seed;
	const struct xb_ban_drops *drops; /* NULL: a ban read has drops 0 */
};

/* Maps the ban table, its index and its cold data. 0 or -errno. */
int xb_bans_open(struct xb_bans *b, int bans_fd, int idx_fd, int info_fd, int seed_fd);
/* Over memory the caller owns (tests): idx has n words, info n * XDPBAN_GROUP_SLOTS entries. */
void xb_bans_init(struct xb_bans *b, struct xdpban_group *groups, __u32 n, __u64 *idx,
		  struct xdpban_ban_info *info, __u64 seed);
/* The overflow count of group gi, and the tag its index word holds for slot i
 * (include/xdpban_table.h). */
__u32 xb_bans_overflow(const struct xb_bans *b, __u32 gi);
__u32 xb_bans_tag(const struct xb_bans *b, __u32 gi, __u32 i);
void xb_bans_close(struct xb_bans *b);
/* Maps the ban table of a set of maps (libxdpban.h), with one line in err on failure; lends
 * m->mapped's instead when it is set (xb_bans_close then unmaps nothing). */
int xb_bans_of(struct xb_bans *b, const struct xb_maps *m, char *err, size_t errlen);


/* The key's ban, expired or not. 0 or -ENOENT. */
int xb_bans_get(const struct xb_bans *b, const struct xdpban_key *key, struct xdpban_ban *out);
/* Adds or replaces the key's ban; flags BPF_ANY, BPF_NOEXIST (-EEXIST) or BPF_EXIST (-ENOENT).
 * -ENOSPC when the key's probe window is full. */
int xb_bans_put(const struct xb_bans *b, const struct xdpban_key *key,
		const struct xdpban_ban *ban, __u64 flags);
/* Deletes the key's ban (every copy, should two writers have raced). 0 or -ENOENT. */
int xb_bans_remove(const struct xb_bans *b, const struct xdpban_key *key);
/* Deletes the ban if it is still exactly `seen` (expired bans, without losing a newer one). */
int xb_bans_remove_if(const struct xb_bans *b, const struct xdpban_key *key,
		      const struct xdpban_ban *seen);
/* Every ban in the table, expired or not, in table order; a non-zero return of cb stops the
 * walk and is returned. Bans changed during the walk may be seen or not. */
typedef int (*xb_ban_entry_cb)(const struct xdpban_key *key, const struct xdpban_ban *ban,
			       void *ctx);
int xb_bans_walk(const struct xb_bans *b, xb_ban_entry_cb cb, void *ctx);
/* The same calls on a set of maps, mapping the table for the call. */
int xb_bans_get_in(const struct xb_maps *m, const struct xdpban_key *key,
		   struct xdpban_ban *out);
int xb_bans_walk_in(const struct xb_maps *m, xb_ban_entry_cb cb, void *ctx);
/* xb_bans_walk_in with each ban's drops read (one batch read of xdpban_bandrops first). */
int xb_bans_walk_drops_in(const struct xb_maps *m, xb_ban_entry_cb cb, void *ctx);
/* The drops of the key's ban (0 when it has none). 0 or -errno. */
int xb_bans_drops_in(const struct xb_maps *m, const struct xdpban_key *key, __u64 *drops);
/* Slots of the table (its capacity is about half of them, see docs/datapath.md). */
size_t xb_bans_slots(const struct xb_bans *b);

/* ---- counters ---- */

/* One counter as userspace shows it. */
struct xb_counter {
	__u32 count;    /* errors in the window; 0: no window */
	__u32 start_s;  /* CLOCK_BOOTTIME s when the window began (valid when count > 0) */
	__u8 hop;       /* the reference hop count, when flags say there is one */
	__u8 flags;     /* enum xdpban_ctr_flag */
	__u8 classes;   /* enum xdpban_class bits of the errors counted in the window */
	__u32 stamp_s;  /* CLOCK_BOOTTIME s (to 64 s) of the last verification, if verified */
};

struct xb_counters {
	struct xb_table tab;
	__u64 seed;
};

int xb_counters_open(struct xb_counters *c, int counts_fd, int seed_fd);
void xb_counters_init(struct xb_counters *c, struct xdpban_group *groups, __u32 n, __u64 seed);
void xb_counters_close(struct xb_counters *c);
int xb_counters_of(struct xb_counters *c, const struct xb_maps *m, char *err, size_t errlen);

/* Both tables mapped once, for a long-lived holder of the fds (the daemon): xb_bans_of() and
 * xb_counters_of() lend them; and the policy maps kept mapped (xb_maps_keep_views).
 * xb_maps_unmap_tables() (also done by xb_maps_close) undoes both. */
struct xb_mapped {
	struct xb_bans bans;
	struct xb_counters counters;
};
/* 0, or -errno with one line in err. */
int xb_maps_map_tables(struct xb_maps *m, char *err, size_t errlen);
void xb_maps_unmap_tables(struct xb_maps *m);
/* The key's counter as of now_s. 0 or -ENOENT. */
int xb_counters_get(const struct xb_counters *c, const struct xdpban_key *key, __u32 now_s,
		    struct xb_counter *out);
/* Writes the key's counter (inserting it, evicting as the data path would): for tests and
 * benchmarks that set up a state before traffic. 0, or -ENOSPC when its group has no slot it
 * may take. */
int xb_counters_put(const struct xb_counters *c, const struct xdpban_key *key, __u32 now_s,
		    __u32 window_s, const struct xb_counter *in);
/* Removes the key's counter: -ENOENT if none. Like put, for tests and tools, never while
 * the data path counts the key (it would lose its increment). */
int xb_counters_remove(const struct xb_counters *c, const struct xdpban_key *key);
typedef int (*xb_counter_entry_cb)(const struct xdpban_key *key, const struct xb_counter *ctr,
				   void *ctx);
/* Every live counter, as of now_s. */
int xb_counters_walk(const struct xb_counters *c, __u32 now_s, xb_counter_entry_cb cb,
		     void *ctx);
/* The same calls on a set of maps, mapping the table for the call. */
int xb_counters_get_in(const struct xb_maps *m, const struct xdpban_key *key, __u32 now_s,
		       struct xb_counter *out);
int xb_counters_walk_in(const struct xb_maps *m, __u32 now_s, xb_counter_entry_cb cb, void *ctx);

#endif /* XB_TABLE_H */
