/* test_pkt.c - the packet builder (tests/harness/pkt.h) builds what the other tests think it
 * builds: default frames that an independent parser (Debian's scapy) finds valid, with every
 * length and checksum right; each override in exactly its own field; the layout offsets that
 * fixtures cut at; and a clear error, with the buffer untouched, for every bad spec.
 * Needs no root and never touches the kernel.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "pkt.h"

#define ETH PKT_ETH_LEN
#define V4 PKT_IP4_LEN
#define V6 PKT_IP6_LEN
#define SCAPY_PYTHON "/usr/bin/python3"

static unsigned int get16(const __u8 *p)
{
	return (unsigned int)p[0] << 8 | p[1];
}

/* --- default frames against scapy ------------------------------------------------------ */

struct scapy_case {
	const char *name;
	struct pkt_spec spec;
	const char *layers; /* scapy's layer classes, up to the payload */
};

static const struct scapy_case scapy_cases[] = {
	{ "v4_tcp", { .src = "192.0.2.10", .l4 = PKT_L4_TCP, .payload_len = 5 }, "Ether/IP/TCP" },
	{ "v4_udp", { .src = "192.0.2.10", .l4 = PKT_L4_UDP, .payload_len = 16 }, "Ether/IP/UDP" },
	{ "v4_icmp", { .src = "192.0.2.10", .l4 = PKT_L4_ICMP, .payload_len = 3 },
	  "Ether/IP/ICMP" },
	{ "v4_opts_tcp",
	  { .src = "192.0.2.10", .ip4 = { .opts_len = 8 }, .l4 = PKT_L4_TCP, .payload_len = 1 },
	  "Ether/IP/TCP" },
	{ "v4_udp_padded", { .src = "192.0.2.10", .l4 = PKT_L4_UDP, .payload_len = 2, .pad = 12 },
	  "Ether/IP/UDP" },
	{ "v4_vlans_udp",
	  { .src = "192.0.2.10", .n_vlan = 2, .vlan = { { 0x88a8, 100 }, { 0x8100, 200 } },
	    .l4 = PKT_L4_UDP, .payload_len = 4 },
	  "Ether/Dot1AD/Dot1Q/IP/UDP" },
	{ "v6_tcp", { .src = "2001:db8::10", .l4 = PKT_L4_TCP, .payload_len = 7 },
	  "Ether/IPv6/TCP" },
	{ "v6_udp", { .src = "2001:db8::10", .l4 = PKT_L4_UDP, .payload_len = 9 },
	  "Ether/IPv6/UDP" },
	{ "v6_echo", { .src = "2001:db8::10", .l4 = PKT_L4_ICMP6, .payload_len = 4 },
	  "Ether/IPv6/ICMPv6EchoRequest" },
	{ "v6_neighbor_solicitation",
	  { .src = "2001:db8::10", .l4 = PKT_L4_ICMP6, .icmp.type = PKT_SET(135),
	    .payload_len = 16 },
	  "Ether/IPv6/ICMPv6ND_NS" },
	{ "v6_ext_chain_udp",
	  { .src = "2001:db8::10",
	    .ip6 = { PKT_EXTS({ .type = PKT_EXT_HOP }, { .type = PKT_EXT_ROUTING },
			      { .type = PKT_EXT_DEST, .hdrlen = PKT_SET(1) }) },
	    .l4 = PKT_L4_UDP, .payload_len = 6 },
	  "Ether/IPv6/IPv6ExtHdrHopByHop/IPv6ExtHdrRouting/IPv6ExtHdrDestOpt/UDP" },
	/* scapy leaves what follows an AH undissected: this checks the AH and IPv6 lengths */
	{ "v6_ah_udp",
	  { .src = "2001:db8::10", .ip6 = { PKT_EXTS({ .type = PKT_EXT_AH }) }, .l4 = PKT_L4_UDP },
	  "Ether/IPv6/AH" },
	{ "v6_fragment_udp",
	  { .src = "2001:db8::10", .ip6 = { PKT_EXTS({ .type = PKT_EXT_FRAG, .more = true }) },
	    .l4 = PKT_L4_UDP, .payload_len = 8 },
	  "Ether/IPv6/IPv6ExtHdrFragment/UDP" },
	{ "arp", { .src = "192.0.2.10", .dst = "192.0.2.1", .l3 = PKT_L3_ARP }, "Ether/ARP" },
	{ "not_ip", { .l3 = PKT_L3_NONE, .ethertype = PKT_SET(0x88b5), .payload_len = 30 },
	  "Ether" },
};

/* Reads each frame, names its layers, then rebuilds it with every length and checksum deleted:
 * scapy recomputes them, so the bytes match only if ours were right. */
static const char scapy_check[] =
	"import sys\n"
	"from scapy.all import Ether, Raw, Padding, NoPayload, IP, IPv6, TCP, UDP, ICMP\n"
	"from scapy.layers.inet6 import _ICMPv6\n"
	"derived = {IP: ('len', 'ihl', 'chksum'), IPv6: ('plen',), TCP: ('dataofs', 'chksum'),\n"
	"           UDP: ('len', 'chksum'), ICMP: ('chksum',)}\n"
	"for line in open(sys.argv[1]):\n"
	"    name, frame = line.split()\n"
	"    raw = bytes.fromhex(frame)\n"
	"    pkt, names = Ether(raw), []\n"
	"    layer = pkt\n"
	"    while not isinstance(layer, (NoPayload, Raw, Padding)):\n"
	"        names.append(type(layer).__name__)\n"
	"        icmp6 = isinstance(layer, _ICMPv6)\n"
	"        fields = derived.get(type(layer), ('cksum',) if icmp6 else ())\n"
	"        for f in fields:\n"
	"            delattr(layer, f)\n"
	"        layer = layer.payload\n"
	"    print(name, 'same' if bytes(pkt) == raw else 'differs:' + bytes(pkt).hex(),\n"
	"          '/'.join(names))\n";

static bool scapy_available(void)
{
	if (access(SCAPY_PYTHON, X_OK) == 0 &&
	    system(SCAPY_PYTHON " -c 'import scapy.all' >/dev/null 2>&1") == 0)
		return true;
	fprintf(stderr, "SKIP: scapy is not importable by %s (Debian package python3-scapy)\n",
		SCAPY_PYTHON);
	return false;
}

/* Appends to text[len], failing the test rather than overflowing. */
static void append(char *text, size_t len, size_t *used, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(text + *used, len - *used, fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < len - *used);
	*used += n;
}

/* One line per frame, "name hex", built before any file exists so that a failing build
 * leaves nothing behind. */
static void frames_as_text(char *text, size_t len)
{
	__u8 buf[512];
	struct pkt_layout at;
	size_t used = 0;

	for (size_t i = 0; i < sizeof(scapy_cases) / sizeof(scapy_cases[0]); i++) {
		assert_int_equal(pkt_build(&scapy_cases[i].spec, buf, sizeof(buf), &at), 0);
		append(text, len, &used, "%s ", scapy_cases[i].name);
		for (__u32 b = 0; b < at.len; b++)
			append(text, len, &used, "%02x", buf[b]);
		append(text, len, &used, "\n");
	}
}

static int write_temp(char *path, const char *text)
{
	int fd = mkstemp(path);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	if (n != (ssize_t)strlen(text)) {
		unlink(path);
		return -EIO;
	}
	return 0;
}

/* Runs the checker over the frames; out gets its output. Removes its files whatever happens.
 * 0 or -errno. */
static int run_scapy(const char *frames, char *out, size_t outlen)
{
	char script_path[] = "/tmp/xbpkt-scapy-XXXXXX", frames_path[] = "/tmp/xbpkt-frames-XXXXXX";
	char cmd[256];
	size_t n = 0;
	FILE *p;
	int err;

	err = write_temp(script_path, scapy_check);
	if (err)
		return err;
	err = write_temp(frames_path, frames);
	if (err) {
		unlink(script_path);
		return err;
	}
	snprintf(cmd, sizeof(cmd), "%s %s %s 2>&1", SCAPY_PYTHON, script_path, frames_path);
	p = popen(cmd, "r");
	if (p) {
		n = fread(out, 1, outlen - 1, p);
		pclose(p);
	}
	out[n] = '\0';
	unlink(script_path);
	unlink(frames_path);
	return p ? 0 : -errno;
}

static void defaults_are_valid_for_scapy(void **state)
{
	static char frames[16384], out[8192];
	char expect[256];

	if (!scapy_available())
		skip();
	frames_as_text(frames, sizeof(frames));
	assert_int_equal(run_scapy(frames, out, sizeof(out)), 0);
	for (size_t i = 0; i < sizeof(scapy_cases) / sizeof(scapy_cases[0]); i++) {
		snprintf(expect, sizeof(expect), "%s same %s\n", scapy_cases[i].name,
			 scapy_cases[i].layers);
		if (!strstr(out, expect))
			fail_msg("scapy on %s: expected \"%s\" in:\n%s", scapy_cases[i].name,
				 expect, out);
	}
}

/* --- overrides land in their field ---------------------------------------------------- */

struct field_case {
	const char *name;
	struct pkt_spec spec;
	__u32 offset;   /* into the frame */
	__u32 width;    /* 1 or 2 bytes */
	__u32 expected; /* the value there */
};

static const struct field_case field_cases[] = {
	{ "v4 version/ihl default", { .src = "192.0.2.1" }, ETH, 1, 0x45 },
	{ "v4 ihl", { .src = "192.0.2.1", .ip4.ihl = PKT_SET(4) }, ETH, 1, 0x44 },
	{ "v4 version", { .src = "192.0.2.1", .ip4.version = PKT_SET(6) }, ETH, 1, 0x65 },
	{ "v4 ihl with options", { .src = "192.0.2.1", .ip4.opts_len = 12 }, ETH, 1, 0x48 },
	{ "v4 tot_len default", { .src = "192.0.2.1", .l4 = PKT_L4_UDP, .payload_len = 3 },
	  ETH + 2, 2, V4 + 8 + 3 },
	{ "v4 tot_len", { .src = "192.0.2.1", .ip4.tot_len = PKT_SET(9) }, ETH + 2, 2, 9 },
	{ "v4 frag", { .src = "192.0.2.1", .ip4.frag = PKT_IP4_MF | 3 }, ETH + 6, 2, 0x2003 },
	{ "v4 proto default", { .src = "192.0.2.1", .l4 = PKT_L4_TCP }, ETH + 9, 1, 6 },
	{ "v4 proto", { .src = "192.0.2.1", .l4 = PKT_L4_TCP, .l4_proto = PKT_SET(47) }, ETH + 9,
	  1, 47 },
	{ "v6 version", { .src = "2001:db8::1", .ip6.version = PKT_SET(4) }, ETH, 1, 0x40 },
	{ "v6 payload_len default", { .src = "2001:db8::1", .l4 = PKT_L4_UDP, .payload_len = 2 },
	  ETH + 4, 2, 10 },
	{ "v6 payload_len", { .src = "2001:db8::1", .ip6.payload_len = PKT_SET(999) }, ETH + 4,
	  2, 999 },
	{ "v6 next header none", { .src = "2001:db8::1" }, ETH + 6, 1, 59 },
	{ "v6 next header is first ext",
	  { .src = "2001:db8::1", .ip6 = { PKT_EXTS({ .type = PKT_EXT_DEST }) } }, ETH + 6, 1,
	  60 },
	{ "ext chains to l4",
	  { .src = "2001:db8::1", .ip6 = { PKT_EXTS({ .type = PKT_EXT_DEST }) },
	    .l4 = PKT_L4_UDP },
	  ETH + V6, 1, 17 },
	{ "ext hdrlen", { .src = "2001:db8::1", .ip6 = { PKT_EXTS({ .type = PKT_EXT_HOP,
						 .hdrlen = PKT_SET(3) }) } },
	  ETH + V6 + 1, 1, 3 },
	{ "fragment offset and M",
	  { .src = "2001:db8::1", .ip6 = { PKT_EXTS({ .type = PKT_EXT_FRAG, .frag_off = 2,
						       .more = true }) } },
	  ETH + V6 + 2, 2, 2 << 3 | 1 },
	{ "tcp flags default", { .src = "192.0.2.1", .l4 = PKT_L4_TCP }, ETH + V4 + 13, 1,
	  PKT_ACK },
	{ "tcp flags", { .src = "192.0.2.1", .l4 = PKT_L4_TCP,
			 .tcp.flags = PKT_SET(PKT_SYN | PKT_FIN) },
	  ETH + V4 + 13, 1, PKT_SYN | PKT_FIN },
	{ "tcp doff", { .src = "192.0.2.1", .l4 = PKT_L4_TCP, .tcp.doff = PKT_SET(15) },
	  ETH + V4 + 12, 1, 0xf0 },
	{ "udp len default", { .src = "192.0.2.1", .l4 = PKT_L4_UDP, .payload_len = 4 },
	  ETH + V4 + 4, 2, 12 },
	{ "udp len", { .src = "192.0.2.1", .l4 = PKT_L4_UDP, .udp.len = PKT_SET(7) },
	  ETH + V4 + 4, 2, 7 },
	{ "udp ports", { .src = "192.0.2.1", .l4 = PKT_L4_UDP, .sport = PKT_SET(0) },
	  ETH + V4, 2, 0 },
	{ "icmp6 type", { .src = "2001:db8::1", .l4 = PKT_L4_ICMP6, .icmp.type = PKT_SET(136) },
	  ETH + V6, 1, 136 },
	{ "icmp type default", { .src = "192.0.2.1", .l4 = PKT_L4_ICMP }, ETH + V4, 1, 8 },
	{ "ethertype", { .src = "192.0.2.1", .ethertype = PKT_SET(0x86dd) }, 12, 2, 0x86dd },
	{ "arp ethertype", { .src = "192.0.2.1", .l3 = PKT_L3_ARP }, 12, 2, 0x0806 },
	{ "outer tag", { .src = "192.0.2.1", .n_vlan = 1, .vlan = { { 0x88a8, 5 } } }, 12, 2,
	  0x88a8 },
	{ "tag vid", { .src = "192.0.2.1", .n_vlan = 1, .vlan = { { 0x88a8, 5 } } }, 14, 2, 5 },
	{ "type after tags", { .src = "2001:db8::1", .n_vlan = 2 }, 12 + 2 * 4, 2, 0x86dd },
	{ "third tag", { .src = "192.0.2.1", .n_vlan = 3 }, 12 + 2 * 4, 2, 0x8100 },
	{ "first payload byte", { .src = "192.0.2.1", .l4 = PKT_L4_UDP, .payload_len = 3 },
	  ETH + V4 + 8 + 2, 1, 2 },
};

static void overrides_land_in_their_field(void **state)
{
	__u8 buf[256];
	struct pkt_layout at;

	for (size_t i = 0; i < sizeof(field_cases) / sizeof(field_cases[0]); i++) {
		const struct field_case *c = &field_cases[i];
		__u32 got;

		assert_int_equal(pkt_build(&c->spec, buf, sizeof(buf), &at), 0);
		got = c->width == 2 ? get16(buf + c->offset) : buf[c->offset];
		if (got != c->expected)
			fail_msg("%s: byte %u is 0x%x, expected 0x%x", c->name, c->offset, got,
				 c->expected);
	}
}

/* An IPv4 header checksum recomputed over the header sums to zero. */
static void ipv4_header_checksum_holds_with_overrides(void **state)
{
	const struct pkt_spec spec = { .src = "203.0.113.9", .ip4 = { .ihl = PKT_SET(4),
								       .tot_len = PKT_SET(7) } };
	__u8 buf[128];
	struct pkt_layout at;
	__u32 sum = 0;

	assert_int_equal(pkt_build(&spec, buf, sizeof(buf), &at), 0);
	for (int i = 0; i < V4; i += 2)
		sum += get16(buf + ETH + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	assert_int_equal(sum, 0xffff);
}

/* --- layout, cut and padding ------------------------------------------------------------- */

static void layout_gives_each_layer(void **state)
{
	const struct pkt_spec spec = {
		.src = "2001:db8::1",
		.n_vlan = 1,
		.ip6 = { PKT_EXTS({ .type = PKT_EXT_HOP, .hdrlen = PKT_SET(1) },
				  { .type = PKT_EXT_AH }, { .type = PKT_EXT_FRAG }) },
		.l4 = PKT_L4_TCP,
		.payload_len = 10,
		.pad = 6,
	};
	__u8 buf[256];
	struct pkt_layout at;

	assert_int_equal(pkt_build(&spec, buf, sizeof(buf), &at), 0);
	assert_int_equal(at.l3, ETH + 4);
	assert_int_equal(at.ext[0], ETH + 4 + V6);
	assert_int_equal(at.ext[1], ETH + 4 + V6 + 16);
	assert_int_equal(at.ext[2], ETH + 4 + V6 + 16 + 24);
	assert_int_equal(at.l4, ETH + 4 + V6 + 16 + 24 + 8);
	assert_int_equal(at.payload, at.l4 + PKT_TCP_LEN);
	assert_int_equal(at.ip_end, at.payload + 10);
	assert_int_equal(at.full_len, at.ip_end + 6);
	assert_int_equal(at.len, at.full_len);
	/* the payload length counts the extension headers, not the padding */
	assert_int_equal(get16(buf + at.l3 + 4), at.ip_end - at.l3 - V6);
	for (__u32 i = at.ip_end; i < at.full_len; i++)
		assert_int_equal(buf[i], 0);
}

static void cut_keeps_the_declared_lengths(void **state)
{
	const struct pkt_spec spec = { .src = "192.0.2.1", .l4 = PKT_L4_TCP,
				       .cut = PKT_SET(ETH + V4 + 10) };
	__u8 buf[256];
	struct pkt_layout at;

	assert_int_equal(pkt_build(&spec, buf, sizeof(buf), &at), 0);
	assert_int_equal(at.len, ETH + V4 + 10);
	assert_int_equal(at.full_len, ETH + V4 + PKT_TCP_LEN);
	assert_int_equal(get16(buf + ETH + 2), V4 + PKT_TCP_LEN);
}

/* --- bad specs ------------------------------------------------------------------------ */

struct bad_case {
	const char *name;
	struct pkt_spec spec;
	__u32 cap;
	int err;
};

static const struct bad_case bad_cases[] = {
	{ "no source", { .l4 = PKT_L4_UDP }, 256, -EINVAL },
	{ "source not an address", { .src = "192.0.2.300" }, 256, -EINVAL },
	{ "hostname", { .src = "example.org" }, 256, -EINVAL },
	{ "families differ", { .src = "192.0.2.1", .dst = "2001:db8::1" }, 256, -EINVAL },
	{ "bad dst", { .src = "192.0.2.1", .dst = "192.0.2" }, 256, -EINVAL },
	{ "bad mac", { .src = "192.0.2.1", .smac = "02:00:00:00:00" }, 256, -EINVAL },
	{ "mac with trailing junk", { .src = "192.0.2.1", .dmac = "02:00:00:00:00:01x" }, 256,
	  -EINVAL },
	{ "arp over ipv6", { .src = "2001:db8::1", .l3 = PKT_L3_ARP }, 256, -EINVAL },
	{ "l4 over arp", { .src = "192.0.2.1", .l3 = PKT_L3_ARP, .l4 = PKT_L4_UDP }, 256,
	  -EINVAL },
	{ "raw frame without ethertype", { .l3 = PKT_L3_NONE }, 256, -EINVAL },
	{ "too many tags", { .src = "192.0.2.1", .n_vlan = PKT_MAX_VLANS + 1 }, 256, -EINVAL },
	{ "options not a multiple of 4", { .src = "192.0.2.1", .ip4.opts_len = 6 }, 256,
	  -EINVAL },
	{ "options too long", { .src = "192.0.2.1", .ip4.opts_len = 44 }, 256, -EINVAL },
	{ "options on ipv6", { .src = "2001:db8::1", .ip4.opts_len = 4 }, 256, -EINVAL },
	{ "ext on ipv4", { .src = "192.0.2.1", .ip6 = { PKT_EXTS({ .type = PKT_EXT_HOP }) } },
	  256, -EINVAL },
	{ "unknown ext", { .src = "2001:db8::1", .ip6 = { PKT_EXTS({ .type = 17 }) } }, 256,
	  -EINVAL },
	{ "too many exts", { .src = "2001:db8::1", .ip6 = { .n_ext = PKT_MAX_EXTS + 1 } }, 256,
	  -EINVAL },
	{ "ihl wider than 4 bits", { .src = "192.0.2.1", .ip4.ihl = PKT_SET(16) }, 256, -EINVAL },
	{ "doff wider than 4 bits", { .src = "192.0.2.1", .l4 = PKT_L4_TCP,
				      .tcp.doff = PKT_SET(16) }, 256, -EINVAL },
	{ "udp len wider than 16 bits", { .src = "192.0.2.1", .l4 = PKT_L4_UDP,
					  .udp.len = PKT_SET(65536) }, 256, -EINVAL },
	{ "cut beyond the frame", { .src = "192.0.2.1", .cut = PKT_SET(ETH + V4 + 1) }, 256,
	  -EINVAL },
	{ "buffer too small", { .src = "192.0.2.1", .payload_len = 100 }, 64, -ENOSPC },
};

static void bad_specs_are_refused_and_change_nothing(void **state)
{
	__u8 buf[256];
	struct pkt_layout at, untouched;

	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		int err;

		memset(buf, 0xee, sizeof(buf));
		memset(&at, 0xee, sizeof(at));
		untouched = at;
		err = pkt_build(&c->spec, buf, c->cap, &at);
		if (err != c->err)
			fail_msg("%s: pkt_build returned %d, expected %d", c->name, err, c->err);
		for (size_t b = 0; b < sizeof(buf); b++)
			if (buf[b] != 0xee)
				fail_msg("%s: byte %zu of the buffer was written", c->name, b);
		assert_memory_equal(&at, &untouched, sizeof(at));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults_are_valid_for_scapy),
		cmocka_unit_test(overrides_land_in_their_field),
		cmocka_unit_test(ipv4_header_checksum_holds_with_overrides),
		cmocka_unit_test(layout_gives_each_layer),
		cmocka_unit_test(cut_keeps_the_declared_lengths),
		cmocka_unit_test(bad_specs_are_refused_and_change_nothing),
	};

	return cmocka_run_group_tests_name("pkt", tests, NULL, NULL);
}
