/* xdpban_ports.h - the port rules: which UDP ports are guarded by a protocol profile, and which
 * TCP and UDP ports are open (docs/datapath.md, section 9). Shared by the data path, which
 * reads them, and userspace (user/lib/ports.c), which compiles the config into them.
 *
 * xdpban_ports is an mmapable array of u64 words holding one byte per port, 8 ports to a
 * word: port p (host order) is byte p % 8 of word p / 8, bits (p % 8) * 8 up. 8,192 words,
 * 64 KiB: small enough to stay in the cache beside the hot words of the other tables. A byte:
 *   bits 0-3  the UDP guard profile of the port (enum xdpban_guard; 0: not guarded);
 *   bit 4     the UDP port is open;
 *   bit 5     the TCP port is open;
 *   bits 6-7  zero.
 * The data path reads the table only as far as config.ports (xdpban_config.h) says rules are
 * in force, so an all-zero table and an all-zero config (a plain `ip link` load) mean the
 * same: no port rules. A writer turns a rule on by writing the table before config.ports, and
 * off by clearing config.ports before the table; while it rewrites a table in force, a packet
 * may meet some ports old and some new, each byte whole (docs/datapath.md says so).
 */
#ifndef XDPBAN_PORTS_H
#define XDPBAN_PORTS_H

#include <linux/types.h>

#define XDPBAN_PORTS_PORTS 65536u
#define XDPBAN_PORTS_PER_WORD 8u
#define XDPBAN_PORTS_WORDS (XDPBAN_PORTS_PORTS / XDPBAN_PORTS_PER_WORD) /* map's max_entries */

#define XDPBAN_PORT_GUARD_MASK 0x0fu
#define XDPBAN_PORT_UDP_OPEN 0x10u
#define XDPBAN_PORT_TCP_OPEN 0x20u
#define XDPBAN_PORT_VALID_MASK 0x3fu

/* The guard profiles: G(ENUM, value, name, what it checks). The one list: the enum, the config
 * word (`guard = PORT/NAME`) and the docs' table are made from it. A new protocol is a row here
 * and one function in bpf/guard.h. Values fit the 4 bits of a port's byte; 0 is "none". */
#define XDPBAN_GUARDS(G)                                                                       \
	G(BEP15, 1, "bep15", "BitTorrent UDP tracker requests (BEP 15)")                       \
	G(DNS, 2, "dns", "DNS query headers")

#define XDPBAN_GUARD_ENUM_(id, value, name, what) XDPBAN_GUARD_##id = value,
enum xdpban_guard {
	XDPBAN_GUARD_NONE = 0,
	XDPBAN_GUARDS(XDPBAN_GUARD_ENUM_)
};

/* The byte of port `port` (host order) in its word. */
static inline __u32 xdpban_port_word(__u32 port)
{
	return port / XDPBAN_PORTS_PER_WORD;
}

static inline __u32 xdpban_port_shift(__u32 port)
{
	return (port % XDPBAN_PORTS_PER_WORD) * 8;
}

static inline __u8 xdpban_port_byte(__u64 word, __u32 port)
{
	return (__u8)(word >> xdpban_port_shift(port));
}

/* BEP 15 (beps/bep_0015.rst): offsets into the UDP payload, big-endian fields. */
#define XDPBAN_BEP15_HEADER 16u          /* connection_id or protocol_id, action, transaction */
#define XDPBAN_BEP15_MAGIC 0x41727101980ull /* a connect's protocol_id */
#define XDPBAN_BEP15_ANNOUNCE_MIN 98u
#define XDPBAN_BEP15_EVENT_OFF 80u        /* announce: event, u32, 0..3 */
#define XDPBAN_BEP15_EVENT_MAX 3u
#define XDPBAN_BEP15_PORT_OFF 96u         /* announce: port, u16, not 0 */
#define XDPBAN_BEP15_HASH 20u             /* scrape: one info_hash */
enum { XDPBAN_BEP15_CONNECT = 0, XDPBAN_BEP15_ANNOUNCE = 1, XDPBAN_BEP15_SCRAPE = 2 };

/* DNS (RFC 1035 section 4.1.1): the 12-byte header, and the shortest query (the root name,
 * a type and a class). */
#define XDPBAN_DNS_HEADER 12u
#define XDPBAN_DNS_QUERY_MIN 17u

#endif /* XDPBAN_PORTS_H */
