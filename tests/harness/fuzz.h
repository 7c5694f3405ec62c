/* fuzz.h - deterministic frames for the differential test: a seeded PRNG, a builder of valid
 * Ethernet/VLAN/IPv4/IPv6/L4 frames from a spec, and a generator that picks random templates
 * and mutates them (bit flips, edge-value length fields, impossible TCP flags, truncation,
 * padding). Sources come from small pools, so that counts cross the threshold and bans happen,
 * and from documentation ranges only.
 *
 * Everything follows from the seed: the same seed gives the same frames on every machine. It
 * must never read a clock, /dev/urandom or any other hidden input.
 */
#ifndef XDPBAN_TEST_FUZZ_H
#define XDPBAN_TEST_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#define FUZZ_FRAME_MAX 1600 /* well under what BPF_PROG_TEST_RUN takes for XDP */
#define FUZZ_FRAME_MIN 14   /* BPF_PROG_TEST_RUN refuses less than an Ethernet header */
#define FUZZ_EXT_MAX 10     /* IPv6 extension headers a spec may hold: past the walk limit */
#define FUZZ_VLAN_MAX 3     /* one more than the data path walks */
#define FUZZ_FIELDS_MAX 24
#define FUZZ_BOUNDS_MAX 40

/* ---- PRNG: splitmix64 ---- */
struct fuzz_rng {
	__u64 state;
};

void fuzz_rng_seed(struct fuzz_rng *rng, __u64 seed);
__u64 fuzz_rng_next(struct fuzz_rng *rng);
__u32 fuzz_rng_below(struct fuzz_rng *rng, __u32 bound); /* 0..bound-1; bound >= 1 */
bool fuzz_rng_percent(struct fuzz_rng *rng, __u32 percent);

/* ---- The builder ---- */
enum fuzz_l3 {
	FUZZ_L3_IPV4,
	FUZZ_L3_IPV6,
	FUZZ_L3_ARP,
	FUZZ_L3_RAW, /* the EtherType in spec.ethertype and random bytes */
};

struct fuzz_spec {
	enum fuzz_l3 l3;
	__u16 ethertype; /* FUZZ_L3_RAW only */
	__u8 nvlans;     /* 0..FUZZ_VLAN_MAX */
	__u16 vlan_tpid[FUZZ_VLAN_MAX];
	__u8 src[16];    /* network order; IPv4 in src[0..3] */
	__u8 dst[16];
	__u8 proto;      /* L4 protocol (IPv4 protocol, last IPv6 next header) */
	__u8 ipv4_opt_words; /* 0..10 words of IPv4 options */
	__u16 ipv4_frag;     /* the flags/fragment-offset field, host order */
	__u8 next;           /* IPv6 extension headers, 0..FUZZ_EXT_MAX */
	__u8 ext_type[FUZZ_EXT_MAX];
	__u8 ext_units[FUZZ_EXT_MAX]; /* the length byte hdr[1] */
	__u8 tcp_flags;
	__u8 tcp_opt_words; /* 0..10 */
	__u8 icmp_type;
	__u16 payload_len; /* bytes after the L4 header (or after the IP headers for others) */
	__u8 payload_byte; /* fill; the generator randomises bytes itself */
	__u8 ttl;          /* IPv4 TTL or IPv6 hop limit; 0 means 64 */
};

/* A length field the builder wrote, so a mutation can set it to an edge value. */
enum fuzz_field_kind {
	FUZZ_FIELD_U8,
	FUZZ_FIELD_BE16,
	FUZZ_FIELD_LO_NIBBLE, /* IPv4 IHL */
	FUZZ_FIELD_HI_NIBBLE, /* TCP data offset */
};

struct fuzz_field {
	__u16 off;
	enum fuzz_field_kind kind;
	__u32 exact; /* the value that was right */
};

struct fuzz_frame {
	__u8 data[FUZZ_FRAME_MAX];
	__u32 len;
	__u32 hdr_end;      /* bytes that are headers, where flips do the most harm */
	__s32 l3_off;       /* -1 when not IP */
	__s32 l3_len_off;   /* the IPv4 total length or IPv6 payload length field; -1 when not IP */
	__s32 l4_off;       /* where the L4 header starts (after IPv6 extensions); -1 when not IP */
	__s32 tcp_flags_off; /* -1 when not TCP */
	__s32 ipv4_frag_off; /* -1 when not IPv4 */
	struct fuzz_field fields[FUZZ_FIELDS_MAX];
	__u32 nfields;
	__u16 bounds[FUZZ_BOUNDS_MAX]; /* header boundaries, for truncation */
	__u32 nbounds;
	const char *template; /* a short name, for printing */
	__u32 mutations;      /* how many were applied */
};

/* Builds a valid frame from a spec (all length fields exact). 0 or -E2BIG. */
int fuzz_build(const struct fuzz_spec *spec, struct fuzz_frame *out);

/* ---- Sources and the policy that covers some of them ---- */
#define FUZZ_POOL4 40
#define FUZZ_POOL6 40 /* over 10 /64s */

void fuzz_pool4(__u32 i, __u8 addr[4]);
void fuzz_pool6(__u32 i, __u8 addr[16]);

struct fuzz_policy {
	const char *cidr;
	__u32 verdict; /* enum xdpban_verdict */
};
extern const struct fuzz_policy fuzz_policy[];
extern const size_t fuzz_policy_count;

/* ---- The generator ---- */
struct fuzz_gen {
	struct fuzz_rng rng;
	__u32 random_source_pct; /* share of sources outside the pools (default 15) */
	__u32 mutate_pct;        /* share of frames that get mutated (default 55) */
};

void fuzz_gen_init(struct fuzz_gen *g, __u64 seed);
/* One frame: a random template, built valid, maybe mutated. 0 or -errno. */
int fuzz_gen_frame(struct fuzz_gen *g, struct fuzz_frame *out);
/* A source for a report: a pool address mostly, sometimes a random one. */
void fuzz_gen_source(struct fuzz_gen *g, __u8 *family, __u8 addr[16]);

/* Writes the frame as hex, 32 bytes a line, to a stream. */
void fuzz_frame_hex(const struct fuzz_frame *f, FILE *out);

#endif /* XDPBAN_TEST_FUZZ_H */
