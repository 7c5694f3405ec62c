/* xdpban_maps.h - names, pinning and default sizes of the data path's maps.
 *
 * Every map is pinned by name (LIBBPF_PIN_BY_NAME) so that every attachment shares one state
 * and the state outlives the loader. The names are also the C identifiers in bpf/maps.h.
 * Memory per entry is documented in docs/datapath.md ("Tables and memory").
 */
#ifndef XDPBAN_MAPS_H
#define XDPBAN_MAPS_H

#define XDPBAN_MAP_CONFIG "xdpban_config"   /* array[1] of struct xdpban_config */
#define XDPBAN_MAP_POLICY4 "xdpban_policy4" /* LPM trie xdpban_lpm4_key -> xdpban_policy */
#define XDPBAN_MAP_POLICY6 "xdpban_policy6" /* LPM trie xdpban_lpm6_key -> xdpban_policy */
#define XDPBAN_MAP_COUNTERS "xdpban_counts" /* LRU hash xdpban_key -> xdpban_counter */
#define XDPBAN_MAP_BANS "xdpban_bans"       /* hash xdpban_key -> xdpban_ban; never evicts */
#define XDPBAN_MAP_STATS "xdpban_stats"     /* per-CPU array[XDPBAN_STAT__MAX] of stat_value */
#define XDPBAN_MAP_EVENTS "xdpban_events"   /* ring buffer of struct xdpban_event */
#define XDPBAN_MAP_FLAT4 "xdpban_flat4"   /* mmapable array of u64 codes, xdpban_flat.h */
#define XDPBAN_MAP_FLAT6 "xdpban_flat6"   /* the same over the top 32 bits of IPv6 sources */
#define XDPBAN_MAP_BANFILTER "xdpban_banfilt" /* mmapable array of u64, xdpban_banfilter.h */

/* Where `ip link set dev X xdp obj ...` (iproute2 with libbpf) pins maps by name. */
#define XDPBAN_PIN_DIR_IPROUTE2 "/sys/fs/bpf/xdp/globals"
/* Where xdpband pins them. */
#define XDPBAN_PIN_DIR_DEFAULT "/sys/fs/bpf/xdpban"

/* Compiled-in capacities; xdpband can change them before load. */
#define XDPBAN_DEFAULT_COUNTERS_MAX 262144
#define XDPBAN_DEFAULT_BANS_MAX 65536
#define XDPBAN_DEFAULT_POLICY4_MAX 1048576
#define XDPBAN_DEFAULT_POLICY6_MAX 262144
#define XDPBAN_DEFAULT_EVENTS_BYTES (256 * 1024)

#endif /* XDPBAN_MAPS_H */
