/* bench_live.h - the wire sender: frames pushed into a device the way
 * a NIC driver delivers them, as XDP frames from one BPF_PROG_TEST_RUN call with
 * BPF_F_TEST_XDP_LIVE_FRAMES of srcdrv_redirect (bench/bpf/srcdrv.bpf.c), each with the next
 * source of a table. Used by bench/wire.c and bench/flood.c.
 *
 * It only sends, into the device it is named: the scripts pass their own veth, never another
 * interface. Header-only (see bench.h); functions return 0 or -errno.
 */
#ifndef XDPBAN_BENCH_LIVE_H
#define XDPBAN_BENCH_LIVE_H

#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include "bench_bpf.h"

static inline int bench_parse_mac(const char *text, uint8_t mac[ETH_ALEN])
{
	unsigned v[ETH_ALEN];
	char tail;

	if (sscanf(text, "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
		   &tail) != ETH_ALEN)
		return -EINVAL;
	for (int i = 0; i < ETH_ALEN; i++) {
		if (v[i] > 0xff)
			return -EINVAL;
		mac[i] = v[i];
	}
	return 0;
}

/* The MAC of an interface of this namespace (asked through a socket: with nsenter, /sys is
 * still the host's). */
static inline int bench_own_mac(const char *ifname, uint8_t mac[ETH_ALEN])
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), err = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr))
		err = -errno;
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	close(fd);
	return err;
}

/* What to send: frames of `kind` from ifname to dst_mac (text, "02:..."), 198.51.100.2 as
 * the destination, each with the next of addr[0..n) (host order) as its source, and with
 * shape[i % period] when period is not 0 (srcdrv_shapes). */
struct bench_live {
	const char *build;
	const char *ifname;
	const char *dst_mac;
	const uint32_t *addr;
	uint32_t n;
	const struct srcdrv_shape *shape;
	uint32_t period;
	enum bench_frame_kind kind;
	uint32_t frames;
};

/* One live-frames test run of srcdrv_redirect, in batches of 64, as a NIC driver hands frames
 * to XDP. The frames' ingress device is lo: only the redirect target matters. */
static inline int bench_live_run(struct srcdrv *d, const struct bench_frame *f, uint32_t frames)
{
	struct xdp_md ctx_in = { .data_end = f->len, .ingress_ifindex = 1 };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f->data, .data_size_in = f->len,
		    .ctx_in = &ctx_in, .ctx_size_in = sizeof(ctx_in), .repeat = (int)frames,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = 64);

	return bpf_prog_test_run_opts(d->redirect_fd, &opts) ? -errno : 0;
}

/* Sends what *l says. Prints "sending" on stdout just before the send call (so a script can
 * act while it runs), then "sent RUNS ns NS start_ns S end_ns E": the frames the driver saw,
 * the time the call took (CLOCK_MONOTONIC), and its start and end in CLOCK_REALTIME ns. 1 after a message
 * on stderr (prefixed by `who`) when anything fails or fewer frames went out. */
static inline int bench_live_send(const char *who, const struct bench_live *l)
{
	struct bench_frame_addrs a = { .daddr4 = 0xc6336402 /* 198.51.100.2 */ };
	uint64_t start, end, mono, runs = 0;
	int ifindex = if_nametoindex(l->ifname), err;
	struct bench_frame f;
	struct srcdrv d;

	if (!ifindex)
		return fprintf(stderr, "%s: no interface '%s' in this namespace\n", who, l->ifname), 1;
	if (bench_parse_mac(l->dst_mac, a.dst_mac))
		return fprintf(stderr, "%s: '%s' is not a MAC address\n", who, l->dst_mac), 1;
	if (bench_own_mac(l->ifname, a.src_mac))
		return fprintf(stderr, "%s: cannot read the MAC of %s\n", who, l->ifname), 1;
	err = srcdrv_open(&d, l->build, l->n, 1);
	if (!err)
		err = srcdrv_sources4(&d, l->addr, l->n);
	if (!err && l->period)
		err = srcdrv_shapes(&d, l->shape, l->period);
	if (!err)
		err = srcdrv_reset(&d, l->n, ifindex);
	if (err) {
		if (d.obj)
			srcdrv_close(&d);
		return fprintf(stderr, "%s: loading the sender: %s\n", who, strerror(-err)), 1;
	}
	bench_frame4(&f, &a, l->kind);
	printf("sending\n");
	fflush(stdout);
	start = bench_real_ns();
	mono = bench_mono_ns();
	err = bench_live_run(&d, &f, l->frames);
	mono = bench_mono_ns() - mono;
	end = bench_real_ns();
	if (!err)
		err = srcdrv_runs(&d, &runs);
	srcdrv_close(&d);
	if (err)
		return fprintf(stderr, "%s: sending: %s\n", who, strerror(-err)), 1;
	printf("sent %llu ns %llu start_ns %llu end_ns %llu\n", (unsigned long long)runs,
	       (unsigned long long)mono, (unsigned long long)start,
	       (unsigned long long)end);
	return runs == l->frames ? 0 : 1;
}

#endif /* XDPBAN_BENCH_LIVE_H */
