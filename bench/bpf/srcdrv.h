/* srcdrv.h - the contract between the bench's source driver (srcdrv.bpf.c) and the benchmarks
 * that load it: map names and the state record. Holds no code. */
#ifndef XDPBAN_BENCH_SRCDRV_H
#define XDPBAN_BENCH_SRCDRV_H

#include <linux/types.h>

#define SRCDRV_MAP_STATE "srcdrv_state"   /* array[1] of struct srcdrv_state */
#define SRCDRV_MAP_SRC4 "srcdrv_src4"     /* array of __u32 IPv4 sources, network byte order */
#define SRCDRV_MAP_SRC6 "srcdrv_src6"     /* array of struct srcdrv_addr6 */
#define SRCDRV_MAP_TARGET "srcdrv_target" /* prog array[1]: the program under test */

#define SRCDRV_PROG_TAIL "srcdrv_tail"         /* writes the source, tail-calls the target */
#define SRCDRV_PROG_REDIRECT "srcdrv_redirect" /* writes the source, redirects (wire sender) */

struct srcdrv_state {
	__u32 next;    /* index of the source the next run writes */
	__u32 count;   /* sources in the table; the index wraps to 0 at count */
	__u64 runs;    /* frames the driver has seen, so userspace can check the run count */
	__u32 ifindex; /* srcdrv_redirect only: the device frames are redirected into */
	__u32 pad;
};

struct srcdrv_addr6 {
	__u8 addr[16]; /* network byte order */
};

#endif /* XDPBAN_BENCH_SRCDRV_H */
