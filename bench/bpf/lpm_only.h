/* lpm_only.h - the contract of lpm_only.bpf.c: its map names and verdict slots. No code. */
#ifndef XDPBAN_BENCH_LPM_ONLY_H
#define XDPBAN_BENCH_LPM_ONLY_H

#define LPM_ONLY_MAP_TRIE "lpm_only_v4"     /* LPM trie xdpban_lpm4_key -> xdpban_policy */
#define LPM_ONLY_MAP_TRIE6 "lpm_only_v6"    /* LPM trie xdpban_lpm6_key -> xdpban_policy */
#define LPM_ONLY_PROG4 "lpm_only"           /* the IPv4 program */
#define LPM_ONLY_PROG6 "lpm_only6"          /* the IPv6 program */
#define LPM_ONLY_MAP_STATS "lpm_only_stats" /* per-CPU array[LPM_ONLY_STAT__MAX] of __u64 */

enum lpm_only_stat {
	LPM_ONLY_STAT_PASSED = 0,  /* no prefix matched */
	LPM_ONLY_STAT_DROPPED = 1, /* a prefix matched */
	LPM_ONLY_STAT__MAX = 2,
};

#endif /* XDPBAN_BENCH_LPM_ONLY_H */
