/* floor.h - the contract between the bench's memory floors (floor.bpf.c) and the benchmarks
 * that load them: program names and array sizes. Holds no code. */
#ifndef XDPBAN_BENCH_FLOOR_H
#define XDPBAN_BENCH_FLOOR_H

/* Each program makes one random load from its own array, named after it with "_words"
 * (floor.bpf.c's FLOOR), of the size below. */
#define FLOOR_PROG_L2 "floor_l2"   /* FLOOR_L2_BYTES */
#define FLOOR_PROG_MEM "floor_mem" /* FLOOR_MEM_BYTES */
#define FLOOR_PROG_4M "floor_4m"   /* FLOOR_4M_BYTES */
#define FLOOR_PROG_16M "floor_16m" /* FLOOR_16M_BYTES */

#define FLOOR_L2_BYTES (1u << 20)   /* 1 MiB: what a table that fits the cache costs */
#define FLOOR_MEM_BYTES (128u << 20) /* 128 MiB: one miss to memory, as a table of a million
				      * sources must cost at least once */
/* Between the two, for tables of a million prefixes (bench/policy6.c): past the L2 cache, and
 * perhaps within the L3. */
#define FLOOR_4M_BYTES (4u << 20)   /* 4 MiB: a million prefixes in 4 bytes each, a compact
				     * table */
#define FLOOR_16M_BYTES (16u << 20) /* 16 MiB: a million entries of 16 bytes, 8 of key and 8
				     * of answer */

#endif /* XDPBAN_BENCH_FLOOR_H */
