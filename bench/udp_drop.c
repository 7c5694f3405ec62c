/* udp_drop.c - the application-level ban. A UDP receiver that reads
 * datagrams with recvmmsg() and drops those whose source is banned after a hash lookup, which
 * is what a tracker that bans in user space pays for every datagram of a banned client.
 *
 *   udp_drop PORT BANNED_FILE
 *
 * Reads the banned addresses (one IPv4 address a line), binds 0.0.0.0:PORT, prints "ready",
 * and counts until SIGTERM or SIGINT; then prints
 *   "udp_drop received N banned B passed P span_ns T cpu_ns C"
 * where span is first to last datagram and cpu its own user + system time. It never
 * answers a datagram.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "bench.h"

#define BATCH 64
#define RCVBUF (8 << 20) /* what a busy tracker would ask for */

/* An open-addressing set of IPv4 addresses (network order); 0 marks an empty slot, so the
 * address 0.0.0.0 is never banned. */
struct addr_set {
	uint32_t *slot;
	uint32_t mask;
};

static uint32_t addr_hash(uint32_t a)
{
	return (uint32_t)(((uint64_t)a * 0x9e3779b97f4a7c15ull) >> 32);
}

static int set_init(struct addr_set *s, uint32_t n)
{
	uint32_t size = 1024;

	while (size < 2 * n)
		size *= 2;
	s->slot = calloc(size, sizeof(*s->slot));
	s->mask = size - 1;
	return s->slot ? 0 : -ENOMEM;
}

static void set_add(struct addr_set *s, uint32_t a)
{
	uint32_t i = addr_hash(a) & s->mask;

	while (s->slot[i] && s->slot[i] != a)
		i = (i + 1) & s->mask;
	s->slot[i] = a;
}

static bool set_has(const struct addr_set *s, uint32_t a)
{
	for (uint32_t i = addr_hash(a) & s->mask; s->slot[i]; i = (i + 1) & s->mask)
		if (s->slot[i] == a)
			return true;
	return false;
}

static int load_banned(const char *path, struct addr_set *s)
{
	FILE *f = fopen(path, "r");
	uint32_t n = 0, line_no = 0, *addrs = NULL, cap = 0;
	char line[64];
	int err = 0;

	if (!f)
		return fprintf(stderr, "udp_drop: cannot read %s: %s\n", path, strerror(errno)),
		       -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		struct in_addr a;

		line_no++;
		line[strcspn(line, "\r\n")] = '\0';
		if (inet_pton(AF_INET, line, &a) != 1 || a.s_addr == 0) {
			fprintf(stderr, "udp_drop: %s: line %u is not an IPv4 address\n", path,
				line_no);
			err = -EINVAL;
		} else if (n == cap) {
			uint32_t *more = realloc(addrs, (cap = cap ? 2 * cap : 1024) * sizeof(*addrs));

			err = more ? 0 : -ENOMEM;
			addrs = more ? more : addrs;
		}
		if (!err)
			addrs[n++] = a.s_addr;
	}
	fclose(f);
	if (!err)
		err = set_init(s, n);
	for (uint32_t i = 0; !err && i < n; i++)
		set_add(s, addrs[i]);
	free(addrs);
	return err;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

static int open_socket(uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0), size = RCVBUF;

	if (fd < 0)
		return -errno;
	/* FORCE: the receiver runs as root in the bench; a tracker would raise rmem_max. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

static uint64_t cpu_ns_self(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

struct counts {
	uint64_t received, banned, passed, first_ns, last_ns;
};

/* Reads batches until told to stop; a signal interrupts the blocking recvmmsg. */
static int receive(int fd, const struct addr_set *banned, struct counts *c)
{
	static char bufs[BATCH][2048];
	struct sockaddr_in from[BATCH];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];

	for (int i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){ bufs[i], sizeof(bufs[i]) };
		msgs[i].msg_hdr = (struct msghdr){ .msg_name = &from[i],
						   .msg_namelen = sizeof(from[i]),
						   .msg_iov = &iov[i],
						   .msg_iovlen = 1 };
	}
	while (!stop) {
		int n = recvmmsg(fd, msgs, BATCH, MSG_WAITFORONE, NULL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!c->received)
			c->first_ns = bench_mono_ns();
		c->last_ns = bench_mono_ns();
		for (int i = 0; i < n; i++) {
			if (set_has(banned, from[i].sin_addr.s_addr))
				c->banned++; /* dropped: nothing is answered */
			else
				c->passed++;
			msgs[i].msg_hdr.msg_namelen = sizeof(from[i]);
		}
		c->received += n;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: stop a blocked read */
	struct addr_set banned = { 0 };
	struct counts c = { 0 };
	uint64_t port, cpu0;
	int fd, err;

	if (argc != 3 || bench_parse_u64(argv[1], 1, 65535, &port)) {
		fprintf(stderr, "usage: udp_drop PORT BANNED_FILE (PORT 1..65535)\n");
		return 2;
	}
	if (load_banned(argv[2], &banned))
		return 1;
	fd = open_socket(port);
	if (fd < 0) {
		fprintf(stderr, "udp_drop: UDP port %llu: %s\n", (unsigned long long)port,
			strerror(-fd));
		return 1;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	printf("ready\n");
	fflush(stdout);
	cpu0 = cpu_ns_self();
	err = receive(fd, &banned, &c);
	close(fd);
	free(banned.slot);
	if (err) {
		fprintf(stderr, "udp_drop: recvmmsg: %s\n", strerror(-err));
		return 1;
	}
	printf("udp_drop received %llu banned %llu passed %llu span_ns %llu cpu_ns %llu\n",
	       (unsigned long long)c.received, (unsigned long long)c.banned,
	       (unsigned long long)c.passed, (unsigned long long)(c.last_ns - c.first_ns),
	       (unsigned long long)(cpu_ns_self() - cpu0));
	return 0;
}
