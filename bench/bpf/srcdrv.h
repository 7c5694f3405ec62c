/* srcdrv.h - the contract between the bench's source driver (srcdrv.bpf.c) and the benchmarks
 * that load it: map names and the state record. Holds no code. */
#ifndef XDPBAN_BENCH_SRCDRV_H
#define XDPBAN_BENCH_SRCDRV_H

#include <linux/types.h>

#define SRCDRV_MAP_STATE "srcdrv_state"   /* array[1] of struct srcdrv_state */
#define SRCDRV_MAP_SRC4 "srcdrv_src4"     /* array of __u32 IPv4 sources, network byte order */
#define SRCDRV_MAP_SRC6 "srcdrv_src6"     /* array of struct srcdrv_addr6 */
#define SRCDRV_MAP_TARGET "srcdrv_target" /* prog array[1]: the program under test */
#define SRCDRV_MAP_SHAPE "srcdrv_shape"   /* array[SRCDRV_SHAPES_MAX] of struct srcdrv_shape */

#define SRCDRV_SHAPES_MAX 1024

#define SRCDRV_PROG_TAIL "srcdrv_tail"         /* writes the source, tail-calls the target */
#define SRCDRV_PROG_REDIRECT "srcdrv_redirect" /* writes the source, redirects (wire sender) */

struct srcdrv_state {
	__u32 next;    /* index of the source the next run writes */
	__u32 count;   /* sources in the table; the index wraps to 0 at count */
	__u64 runs;    /* frames the driver has seen, so userspace can check the run count */
	__u32 ifindex; /* srcdrv_redirect only: the device frames are redirected into */
	__u32 shape_period; /* 0: every frame keeps the TTL and UDP length it was built with;
			     * else the frame of source i gets those of srcdrv_shape[i % period] */
};

/* What an IPv4 UDP frame of the bench (20-byte IPv4 header) is given besides its source, so
 * that one table can mix malformed and valid datagrams and forged TTLs. */
struct srcdrv_shape {
	__u8 ttl;
	__u8 pad;
	__u16 udp_len; /* the UDP length field, network byte order */
};

struct srcdrv_addr6 {
	__u8 addr[16]; /* network byte order */
};

#endif /* XDPBAN_BENCH_SRCDRV_H */
