/* api.c - the public library for applications (include/xdpban.h): a handle over the pinned
 * maps with the report program loaded once, so that a report is one BPF_PROG_TEST_RUN and a
 * ban check a read of the mapped ban table. It only translates: the counting is the report
 * program's (report.c), the table reads are table.h's, the policy lookup is the trie's. It must
 * never count, ban or write a map itself, and never print.
 *
 * A handle never changes after xdpban_open but for two atomics (when to look at the pins next,
 * and whether they were replaced), so any number of threads may use it at once.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "xdpban.h"
#include "libxdpban.h"
#include "table.h"

_Static_assert(XDPBAN_REPORT_COUNT_MAX == XDPBAN_LIMIT_MAX,
	       "a report adds at most what the highest limit can be");

/* How often the pins are looked at (a stat), to notice that a restarted daemon made new
 * maps: more often would cost every call a syscall, less would lose more reports. */
#define PIN_CHECK_NS 1000000000ull

struct xdpban_handle {
	struct xb_maps maps; /* owned, with the report program */
	struct xb_bans bans; /* mapped once: a ban check reads it with no syscall */
	char pin[512];       /* the config map's pin, whose inode names the maps */
	dev_t pin_dev;
	ino_t pin_ino;
	__u64 next_check_ns; /* atomic: CLOCK_MONOTONIC_COARSE ns of the next look at the pin */
	bool stale;          /* atomic: the pin is gone or names other maps */
};

/* What xdpban_strerror(-ENOENT) says: the directory this thread's last xdpban_open found no
 * maps in, named (a message of its own per thread, as strerror_r's buffer would be). */
static _Thread_local char no_maps_msg[sizeof(((struct xdpban_handle *)0)->pin) + 96];

#define NO_MAPS_HINT "(is xdpband running, or xdpban attached?)"
#define NO_MAPS_DEFAULT                                                                        \
	"no xdpban maps are pinned in the directory given to xdpban_open, nor (given NULL) in "  \
	"$" XDPBAN_PIN_DIR_ENV ", " XDPBAN_PIN_DIR_DEFAULT " or " XDPBAN_PIN_DIR_IPROUTE2 " "    \
	NO_MAPS_HINT

static void no_maps_in(const char *dir)
{
	if (dir)
		snprintf(no_maps_msg, sizeof(no_maps_msg), "no xdpban maps are pinned in %.*s %s",
			 (int)sizeof(((struct xdpban_handle *)0)->pin), dir, NO_MAPS_HINT);
	else
		snprintf(no_maps_msg, sizeof(no_maps_msg), "%s", NO_MAPS_DEFAULT);
}

/* The directory xdpban_open(NULL) uses; NULL when none holds the maps. */
static const char *default_pin_dir(void)
{
	const char *env = getenv(XDPBAN_PIN_DIR_ENV);

	return env && *env ? env : xb_pin_dir_find();
}

static int pin_identity(const char *path, dev_t *dev, ino_t *ino)
{
	struct stat st;

	if (stat(path, &st))
		return -errno;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

/* The messages of user/lib (why) are for the CLI's one line; the library returns the errno. */
static int handle_init(struct xdpban_handle *h, const char *dir)
{
	char why[XB_ERRLEN];
	int ret;

	if ((size_t)snprintf(h->pin, sizeof(h->pin), "%s/%s", dir, XDPBAN_MAP_NAME(xdpban_config)) >=
	    sizeof(h->pin))
		return -ENAMETOOLONG;
	ret = pin_identity(h->pin, &h->pin_dev, &h->pin_ino);
	if (ret)
		return ret;
	ret = xb_maps_open_pinned(&h->maps, dir, why, sizeof(why));
	if (ret)
		return ret;
	ret = xb_report_prog_load(&h->maps, why, sizeof(why));
	if (!ret)
		ret = xb_bans_of(&h->bans, &h->maps, why, sizeof(why));
	if (ret)
		xb_maps_close(&h->maps);
	return ret;
}

int xdpban_open(const char *pin_dir, struct xdpban_handle **out)
{
	struct xdpban_handle *h;
	libbpf_print_fn_t old;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!pin_dir)
		pin_dir = default_pin_dir();
	if (!pin_dir) {
		no_maps_in(NULL);
		return -ENOENT;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	/* libbpf logs through one callback per process, which the application may have set;
	 * the library must not print, so the load runs with it silenced and puts it back. */
	old = libbpf_set_print(NULL);
	ret = handle_init(h, pin_dir);
	libbpf_set_print(old);
	if (ret) {
		if (ret == -ENOENT)
			no_maps_in(pin_dir);
		free(h);
		return ret;
	}
	*out = h;
	return 0;
}

void xdpban_close(struct xdpban_handle *h)
{
	if (!h)
		return;
	xb_bans_close(&h->bans);
	xb_maps_close(&h->maps);
	free(h);
}

static __u64 coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* -ESTALE once the pin is gone or names other maps (xdpband stopped, or restarted and made
 * new ones), which the handle's descriptors no longer are: reports would count into maps no
 * program reads. Looked at once per PIN_CHECK_NS by whichever thread comes first. */
static int check_pins(struct xdpban_handle *h)
{
	__u64 now = coarse_ns(), due = __atomic_load_n(&h->next_check_ns, __ATOMIC_RELAXED);
	dev_t dev;
	ino_t ino;

	if (__atomic_load_n(&h->stale, __ATOMIC_RELAXED))
		return -ESTALE;
	if (now < due || !__atomic_compare_exchange_n(&h->next_check_ns, &due,
						      now + PIN_CHECK_NS, false, __ATOMIC_RELAXED,
						      __ATOMIC_RELAXED))
		return 0;
	if (pin_identity(h->pin, &dev, &ino) == 0 && dev == h->pin_dev && ino == h->pin_ino)
		return 0;
	__atomic_store_n(&h->stale, true, __ATOMIC_RELAXED);
	return -ESTALE;
}

/* The source the data path sees for a socket address, as a single address (/32 or /128). */
static int addr_of(const struct sockaddr *sa, struct xb_prefix *p)
{
	static const __u8 v4_mapped[12] = { [10] = 0xff, [11] = 0xff };

	memset(p, 0, sizeof(*p));
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		p->family = XDPBAN_FAMILY_INET;
		memcpy(p->addr, &in->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		const __u8 *a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;

		/* A dual-stack socket's IPv4 client: the packets are IPv4 on the wire. */
		p->family = memcmp(a, v4_mapped, 12) ? XDPBAN_FAMILY_INET6 : XDPBAN_FAMILY_INET;
		memcpy(p->addr, p->family == XDPBAN_FAMILY_INET ? a + 12 : a,
		       p->family == XDPBAN_FAMILY_INET ? 4 : 16);
	} else {
		return -EAFNOSUPPORT;
	}
	p->plen = xb_family_bits(p->family);
	return 0;
}

/* The checks every call makes first, in the order the errnos are documented. */
static int call_prepare(struct xdpban_handle *h, const struct sockaddr *sa, struct xb_prefix *p)
{
	int ret;

	if (!h || !sa)
		return -EINVAL;
	ret = addr_of(sa, p);
	return ret ? ret : check_pins(h);
}

int xdpban_report(struct xdpban_handle *h, const struct sockaddr *addr, unsigned int count,
		  struct xdpban_result *out)
{
	__u32 status, new_count = 0;
	struct xb_prefix p;
	int ret;

	if (count == 0)
		return -EINVAL;
	if (count > XDPBAN_REPORT_COUNT_MAX)
		return -ERANGE;
	ret = call_prepare(h, addr, &p);
	if (!ret)
		ret = xb_report(&h->maps, &p, count, &status, &new_count);
	if (!ret && out)
		*out = (struct xdpban_result){ .status = status, .count = new_count };
	return ret;
}

/* A manual prefix ban in the trie's longest match for the address, as the data path's policy
 * stage finds it: an expired one is no ban. */
static int prefix_banned(const struct xdpban_handle *h, const struct xb_prefix *p, __u64 now,
			 bool *banned)
{
	struct xdpban_policy val;
	union xb_lpm_key key;

	xb_lpm_key_make(p, &key);
	if (bpf_map_lookup_elem(xb_policy_fd(&h->maps, p->family), &key, &val))
		return errno == ENOENT ? 0 : -errno;
	*banned = val.verdict == XDPBAN_POLICY_DENY && val.list_id == XDPBAN_LIST_MANUAL_BAN &&
		  (!val.expires_ns || now < val.expires_ns);
	return 0;
}

/* An unexpired ban of the address's key in the ban table. */
static int key_banned(const struct xdpban_handle *h, const struct xb_prefix *p, __u64 now,
		      bool *banned)
{
	struct xdpban_config cfg = { .v6_prefix = 0 };
	struct xdpban_key key;
	struct xdpban_ban ban;
	int ret = 0;

	/* Only an IPv6 key depends on the config, and reading it costs a syscall. */
	if (p->family == XDPBAN_FAMILY_INET6)
		ret = xb_config_read(&h->maps, &cfg);
	if (ret)
		return ret;
	xb_key_from_addr(&h->maps, p, cfg.v6_prefix, &key);
	ret = xb_bans_get(&h->bans, &key, &ban);
	if (ret)
		return ret == -ENOENT ? 0 : ret;
	*banned = !ban.expires_ns || now < ban.expires_ns;
	return 0;
}

int xdpban_is_banned(struct xdpban_handle *h, const struct sockaddr *addr, bool *banned)
{
	struct xb_prefix p;
	__u64 now;
	int ret;

	if (!banned)
		return -EINVAL;
	ret = call_prepare(h, addr, &p);
	if (ret)
		return ret;
	*banned = false;
	now = xb_boot_ns();
	ret = prefix_banned(h, &p, now, banned);
	if (!ret && !*banned)
		ret = key_banned(h, &p, now, banned);
	return ret;
}

const char *xdpban_strerror(int err)
{
	switch (err) {
	case -EINVAL:
		return "invalid argument: a NULL handle, address or result, or a count of 0";
	case -ERANGE:
		return "the count is above XDPBAN_REPORT_COUNT_MAX";
	case -EAFNOSUPPORT:
		return "the address is neither AF_INET nor AF_INET6";
	case -ENOENT:
		return no_maps_msg[0] ? no_maps_msg : NO_MAPS_DEFAULT;
	case -EPROTO:
		return "the pinned maps are not those of this xdpban version";
	case -ESTALE:
		return "the pinned maps were replaced or removed (xdpband restarted or stopped): "
		       "close the handle and open it again";
	case -EPERM:
	case -EACCES:
		return "not permitted: opening needs root (CAP_BPF and CAP_NET_ADMIN)";
	}
	return err < 0 ? strerrordesc_np(-err) ?: "unknown error" : "not an error";
}

const char *xdpban_status_name(unsigned int status)
{
	return xb_report_status_name(status);
}
