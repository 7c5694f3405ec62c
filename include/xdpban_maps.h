/* xdpban_maps.h - the list of the data path's maps, with their types, pinning and default sizes.
 *
 * XDPBAN_MAPS is the one list: bpf/maps.h makes the BTF map definitions from it, user/lib the
 * fds of struct xb_maps, the check of every pin (maps.c) and the reuse of the pins by the
 * report program (report.c), and tests/tools/xb_maps.py reads its rows. Adding a map is a row
 * here and the code that uses it.
 *
 * Every map is pinned by name (LIBBPF_PIN_BY_NAME) so that every attachment shares one state
 * and the state outlives the loader. Memory per entry is documented in docs/datapath.md
 * ("Tables and memory"). Never reorder the rows: their order is the object's.
 */
#ifndef XDPBAN_MAPS_H
#define XDPBAN_MAPS_H

#include <linux/bpf.h>
#include <linux/types.h>
#include "xdpban_config.h"
#include "xdpban_event.h"
#include "xdpban_flat.h"
#include "xdpban_narrow.h"
#include "xdpban_policy.h"
#include "xdpban_ports.h"
#include "xdpban_state.h"
#include "xdpban_stats.h"
#include "xdpban_table.h"
#include "xdpban_time.h"

/* Where `ip link set dev X xdp obj ...` (iproute2 with libbpf) pins maps by name. */
#define XDPBAN_PIN_DIR_IPROUTE2 "/sys/fs/bpf/xdp/globals"
/* Where xdpband pins them. */
#define XDPBAN_PIN_DIR_DEFAULT "/sys/fs/bpf/xdpban"

/* Compiled-in capacities; xdpband can change some of them before load. */
#define XDPBAN_DEFAULT_COUNTERS_MAX 262144 /* counter slots */
#define XDPBAN_DEFAULT_BANS_MAX 65536 /* bans; the table has twice as many slots */
/* List entries xdpband takes per family. The tries hold twice as many, so that a reload holds
 * the old and the new entries at once and stays atomic per source (user/lib/policy.h); an LPM
 * trie takes memory per entry only, so the room costs nothing until a reload uses it. */
#define XDPBAN_LISTED4_MAX 1048576
#define XDPBAN_LISTED6_MAX 1048576
#define XDPBAN_DEFAULT_POLICY4_MAX (2 * XDPBAN_LISTED4_MAX)
#define XDPBAN_DEFAULT_POLICY6_MAX (2 * XDPBAN_LISTED6_MAX)
#define XDPBAN_DEFAULT_FLAT4X_MAX 262144 /* IPv4 /24 lines; 32 MiB of slots */
/* IPv6 stride lines; 9 MiB of slots: about 26,000 real-looking prefixes that seldom nest (up
 * to 2.5 lines each, fewer where they nest), more than IPv6 blocklists hold today; as many
 * IPv6 hosts (permanent /128s, xdpban_host6); policy-lines6-max raises both. */
#define XDPBAN_DEFAULT_FLAT6X_MAX 65536
#define XDPBAN_DEFAULT_EVENTS_BYTES (256 * 1024)
#define XDPBAN_DEFAULT_EXEMPT_MAX 4096 /* never-ban prefixes and host addresses, per family */
/* Prefixes of the observed deny lists, per family: they only count, so a reload clears and
 * fills the tries (no room for two sets); an LPM trie takes memory per entry held. */
#define XDPBAN_OBSERVED_MAX 262144

/* X(name, field, kind, key, value, max_entries), one row per map:
 *   name         the map's C identifier in bpf/maps.h, which is also its pinned name;
 *   field        its fd in struct xb_maps (user/lib/libxdpban.h);
 *   kind         one of the XDPBAN_KIND_* below: the map type and its map_flags;
 *   key, value   the types of an entry; a ring buffer has no entries: key void, and value
 *                the type of its records;
 *   max_entries  the compiled-in capacity (for a ring buffer, in bytes).
 * Each row has a one-line purpose comment above it. */
#define XDPBAN_MAPS(X)                                                                             \
	/* Runtime configuration; all-zero (or invalid) means the compiled-in defaults. */         \
	X(xdpban_config, config, ARRAY, __u32, struct xdpban_config, 1)                            \
	/* IPv4 policy: the longest matching prefix decides trusted or deny. */                    \
	X(xdpban_policy4, policy4, LPM_TRIE, struct xdpban_lpm4_key, struct xdpban_policy,         \
	  XDPBAN_DEFAULT_POLICY4_MAX)                                                              \
	/* IPv6 policy, likewise. */                                                               \
	X(xdpban_policy6, policy6, LPM_TRIE, struct xdpban_lpm6_key, struct xdpban_policy,         \
	  XDPBAN_DEFAULT_POLICY6_MAX)                                                              \
	/* IPv4 policy compiled to 2-bit codes per /16, /22, /24 (xdpban_flat.h); 0 is LOOKUP. */  \
	X(xdpban_flat4, flat4, MMAP_ARRAY, __u32, __u64, XDPBAN_FLAT_ENTRIES)                      \
	/* The same over the top 32 bits of IPv6 sources. */                                       \
	X(xdpban_flat6, flat6, MMAP_ARRAY, __u32, __u64, XDPBAN_FLAT_ENTRIES)                      \
	/* Level 3 of the IPv4 table: slots of a /24 key and its /32 codes (xdpban_flat.h). */     \
	X(xdpban_flat4x, flat4x, MMAP_ARRAY, __u32, struct xdpban_flat_slot,                       \
	  XDPBAN_FLAT_SLOTS(XDPBAN_DEFAULT_FLAT4X_MAX))                                            \
	/* Error counters: groups of four slots (xdpban_table.h); a new source evicts the cheapest. */\
	X(xdpban_counts, counts, MMAP_ARRAY, __u32, struct xdpban_group,                           \
	  XDPBAN_CTR_GROUPS(XDPBAN_DEFAULT_COUNTERS_MAX))                                          \
	/* Bans: groups of four slots; never evicted, a ban that finds no room is counted. */      \
	X(xdpban_bans, bans, MMAP_ARRAY, __u32, struct xdpban_group,                               \
	  XDPBAN_BAN_GROUPS(XDPBAN_DEFAULT_BANS_MAX))                                              \
	/* The ban table's index: per group, its slots' tags and overflow count. */                \
	X(xdpban_banidx, banidx, MMAP_ARRAY, __u32, __u64,                                         \
	  XDPBAN_BAN_GROUPS(XDPBAN_DEFAULT_BANS_MAX))                                              \
	/* Start and count of each ban slot, the fields only userspace reads. */                   \
	X(xdpban_baninfo, baninfo, MMAP_ARRAY, __u32, struct xdpban_ban_info,                      \
	  XDPBAN_BAN_GROUPS(XDPBAN_DEFAULT_BANS_MAX) * XDPBAN_GROUP_SLOTS)                         \
	/* IPv4 sources never counted or banned besides the built-in ones (never-ban, host). */   \
	X(xdpban_exempt4, exempt4, LPM_TRIE, struct xdpban_lpm4_key, struct xdpban_exempt,         \
	  XDPBAN_DEFAULT_EXEMPT_MAX)                                                               \
	/* The same for IPv6. */                                                                   \
	X(xdpban_exempt6, exempt6, LPM_TRIE, struct xdpban_lpm6_key, struct xdpban_exempt,         \
	  XDPBAN_DEFAULT_EXEMPT_MAX)                                                               \
	/* The seed of the tables' hash, chosen at random by the first to need it. */              \
	X(xdpban_seed, seed, MMAP_ARRAY, __u32, __u64, 1)                                          \
	/* Per-CPU packets and bytes per reason (enum xdpban_stat). */                             \
	X(xdpban_stats, stats, PERCPU_ARRAY, __u32, struct xdpban_stat_value, XDPBAN_STAT__MAX)    \
	/* One struct xdpban_event per ban created, for the controller. */                         \
	X(xdpban_events, events, RINGBUF, void, struct xdpban_event, XDPBAN_DEFAULT_EVENTS_BYTES) \
	/* Per-CPU, the clock reading of the current tick (xdpban_time.h). */                      \
	X(xdpban_clock, clock, PERCPU_ARRAY, __u32, struct xdpban_clock, 1)                        \
	/* One byte per port: UDP guard profile, UDP and TCP open (xdpban_ports.h). */             \
	X(xdpban_ports, ports, MMAP_ARRAY, __u32, __u64, XDPBAN_PORTS_WORDS)                       \
	/* Allow-only mode's reasons: a bit per /16 that no deny entry touches (xdpban_flat.h). */ \
	X(xdpban_nodeny16, nodeny16, MMAP_ARRAY, __u32, __u64, XDPBAN_NODENY_WORDS)             \
	/* IPv6 lines past level 2: a key and 256 codes of 8 more bits (xdpban_flat.h). */        \
	X(xdpban_flat6x, flat6x, MMAP_ARRAY, __u32, struct xdpban_flat6_slot,                     \
	  XDPBAN_FLAT_SLOTS(XDPBAN_DEFAULT_FLAT6X_MAX))                                            \
	/* IPv6 hosts past the lines: a permanent /128's code (enum xdpban_flat_code). */          \
	X(xdpban_host6, host6, GROWN_HASH, struct xdpban_host6_key, __u32,                         \
	  XDPBAN_DEFAULT_FLAT6X_MAX)                                                               \
	/* Per CPU, packets each ban slot dropped (or observed), tagged by its ban (xdpban_table.h). */\
	X(xdpban_bandrops, bandrops, PERCPU_ARRAY, __u32, __u64,                                  \
	  XDPBAN_BAN_GROUPS(XDPBAN_DEFAULT_BANS_MAX) * XDPBAN_GROUP_SLOTS)                         \
	/* IPv6 networks whose sources are keyed past ipv6-prefix (xdpban_narrow.h). */           \
	X(xdpban_narrow6, narrow6, LPM_TRIE, struct xdpban_lpm6_key, struct xdpban_narrow,        \
	  XDPBAN_DEFAULT_NARROW_MAX)                                                               \
	/* Its gate: a bit per hash of a source's top 32 bits that an entry may hold. */          \
	X(xdpban_narrow6_gate, narrow6_gate, MMAP_ARRAY, __u32, __u64, XDPBAN_NARROW_GATE_WORDS) \
	/* IPv4 prefixes of the observed deny lists: the value is the list id; counts, never drops. */\
	X(xdpban_observed4, observed4, LPM_TRIE, struct xdpban_lpm4_key, __u32,                   \
	  XDPBAN_OBSERVED_MAX)                                                                     \
	/* The same for IPv6. */                                                                   \
	X(xdpban_observed6, observed6, LPM_TRIE, struct xdpban_lpm6_key, __u32,                   \
	  XDPBAN_OBSERVED_MAX)

/* The kinds of map a row can be. XDPBAN_KIND(kind, M, ...) expands M(type, flags, entries, ...):
 * the BPF map type, its map_flags (0 or one flag), and KV when every entry is a key and a value
 * or NO_KV for a ring buffer. bpf/maps.h makes a BTF map definition of it, user/lib/maps.c the
 * shape a pinned map must have. */
#define XDPBAN_KIND(kind, M, ...) XDPBAN_KIND_##kind(M, __VA_ARGS__)
#define XDPBAN_KIND_ARRAY(M, ...) M(BPF_MAP_TYPE_ARRAY, 0, KV, __VA_ARGS__)
#define XDPBAN_KIND_MMAP_ARRAY(M, ...) M(BPF_MAP_TYPE_ARRAY, BPF_F_MMAPABLE, KV, __VA_ARGS__)
#define XDPBAN_KIND_PERCPU_ARRAY(M, ...) M(BPF_MAP_TYPE_PERCPU_ARRAY, 0, KV, __VA_ARGS__)
#define XDPBAN_KIND_HASH(M, ...) M(BPF_MAP_TYPE_HASH, 0, KV, __VA_ARGS__) /* preallocated */
/* A hash that takes memory per entry held, for a table sized for the worst case and mostly
 * empty; written only from userspace. */
#define XDPBAN_KIND_GROWN_HASH(M, ...) M(BPF_MAP_TYPE_HASH, BPF_F_NO_PREALLOC, KV, __VA_ARGS__)
#define XDPBAN_KIND_LPM_TRIE(M, ...) M(BPF_MAP_TYPE_LPM_TRIE, BPF_F_NO_PREALLOC, KV, __VA_ARGS__)
#define XDPBAN_KIND_RINGBUF(M, ...) M(BPF_MAP_TYPE_RINGBUF, 0, NO_KV, __VA_ARGS__)

/* The pinned name of the map whose C identifier (first column) is name, as a string literal:
 * XDPBAN_MAP_NAME(xdpban_bans) is "xdpban_bans". */
#define XDPBAN_MAP_NAME(name) #name

#endif /* XDPBAN_MAPS_H */
