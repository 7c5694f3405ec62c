/* udp_cookie.c - an example UDP service that reports bad connection cookies to xdpban through
 * libxdpban (man libxdpban(3)), the way a BitTorrent UDP tracker bans clients that keep
 * sending invalid connection IDs. Build it against the installed library:
 *
 *     cc udp_cookie.c $(pkg-config --cflags --libs xdpban) -o udp_cookie
 *
 * Protocol, one datagram each way: "HELLO" gets an 8-byte cookie bound to the client's
 * address; "REQ" followed by that cookie gets "OK". A REQ with any other cookie is an error
 * only this service can see, so it is reported: once a source has sent more bad cookies than
 * the limit, xdpban drops its packets before they reach this socket.
 *
 *     udp_cookie [-d PIN_DIR] PORT       serve on [::]:PORT (IPv4 clients too)
 *     udp_cookie [-d PIN_DIR] -q ADDR    say whether ADDR is banned, and exit
 *
 * It must run as root (opening the library loads a BPF program). The cookie here is a keyed
 * mix, enough for an example; a real service would use SipHash or an HMAC.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include <xdpban.h>

static uint64_t secret;

/* A cookie for the client's address (not its port: a NAT may change that). */
static uint64_t cookie_of(const struct sockaddr_in6 *from)
{
	uint64_t h = secret;

	for (int i = 0; i < 16; i++) {
		h ^= from->sin6_addr.s6_addr[i];
		h *= 0x100000001b3ull;
	}
	return h ^ (h >> 29);
}

/* Reports one bad cookie. A daemon restart replaces the maps (-ESTALE): then reopen, and
 * report again; until an open works, every bad cookie tries once more. */
static void report_bad_cookie(struct xdpban_handle **h, const char *pin_dir,
			      const struct sockaddr_in6 *from)
{
	struct xdpban_result r;
	char text[INET6_ADDRSTRLEN];
	int err = *h ? xdpban_report(*h, (const struct sockaddr *)from, 1, &r) : -ESTALE;

	if (err == -ESTALE) {
		xdpban_close(*h);
		err = xdpban_open(pin_dir, h);
		if (!err)
			err = xdpban_report(*h, (const struct sockaddr *)from, 1, &r);
	}
	inet_ntop(AF_INET6, &from->sin6_addr, text, sizeof(text));
	if (err)
		printf("bad cookie from %s: not reported: %s\n", text, xdpban_strerror(err));
	else
		printf("bad cookie from %s: %s (count %u)\n", text, xdpban_status_name(r.status),
		       r.count);
	fflush(stdout);
}

static void answer(int fd, struct xdpban_handle **h, const char *pin_dir, const char *msg,
		   size_t len, const struct sockaddr_in6 *from)
{
	uint64_t cookie = cookie_of(from), got;

	if (len == 5 && !memcmp(msg, "HELLO", 5)) {
		sendto(fd, &cookie, sizeof(cookie), 0, (const struct sockaddr *)from, sizeof(*from));
		return;
	}
	if (len != 3 + sizeof(got) || memcmp(msg, "REQ", 3))
		return; /* not our protocol: not an error this service can vouch for */
	memcpy(&got, msg + 3, sizeof(got));
	if (got == cookie)
		sendto(fd, "OK", 2, 0, (const struct sockaddr *)from, sizeof(*from));
	else
		report_bad_cookie(h, pin_dir, from);
}

static int serve(struct xdpban_handle **h, const char *pin_dir, int port)
{
	struct sockaddr_in6 addr = { .sin6_family = AF_INET6, .sin6_port = htons(port),
				     .sin6_addr = IN6ADDR_ANY_INIT };
	int fd = socket(AF_INET6, SOCK_DGRAM, 0), off = 0;

	if (fd < 0 || setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) ||
	    bind(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		perror("udp_cookie: socket");
		return 1;
	}
	printf("listening on [::]:%d\n", port);
	fflush(stdout);
	for (;;) {
		struct sockaddr_in6 from;
		socklen_t fromlen = sizeof(from);
		char msg[64];
		ssize_t n = recvfrom(fd, msg, sizeof(msg), 0, (struct sockaddr *)&from, &fromlen);

		if (n >= 0 && from.sin6_family == AF_INET6)
			answer(fd, h, pin_dir, msg, n, &from);
	}
}

/* An address of either family, as a socket address. */
static int query(struct xdpban_handle *h, const char *text)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	bool banned;
	int err;

	if (inet_pton(AF_INET, text, &in->sin_addr) == 1)
		in->sin_family = AF_INET;
	else if (inet_pton(AF_INET6, text, &in6->sin6_addr) == 1)
		in6->sin6_family = AF_INET6;
	err = xdpban_is_banned(h, (struct sockaddr *)&ss, &banned);
	if (err) {
		fprintf(stderr, "udp_cookie: %s: %s\n", text, xdpban_strerror(err));
		return 1;
	}
	printf("%s %s\n", text, banned ? "banned" : "not banned");
	return 0;
}

int main(int argc, char **argv)
{
	const char *pin_dir = NULL, *query_addr = NULL;
	struct xdpban_handle *h;
	int opt, err;

	while ((opt = getopt(argc, argv, "d:q:")) != -1) {
		if (opt == 'd')
			pin_dir = optarg;
		else if (opt == 'q')
			query_addr = optarg;
		else
			return 2;
	}
	if (!query_addr && optind != argc - 1) {
		fprintf(stderr, "usage: udp_cookie [-d PIN_DIR] PORT | -q ADDR\n");
		return 2;
	}
	err = xdpban_open(pin_dir, &h);
	if (err) {
		fprintf(stderr, "udp_cookie: %s\n", xdpban_strerror(err));
		return 1;
	}
	if (query_addr)
		err = query(h, query_addr);
	else if (getrandom(&secret, sizeof(secret), 0) != sizeof(secret))
		err = 1;
	else
		err = serve(&h, pin_dir, atoi(argv[optind]));
	xdpban_close(h);
	return err;
}
