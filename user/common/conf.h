/* conf.h - the daemon's configuration (deploy/xdpban.conf.5) as it is held: struct xbd_conf,
 * its defaults and ranges. Only structures and constants: reading a file into it is
 * conf_load.h's. */
#ifndef XB_CONF_H
#define XB_CONF_H

#include <stdbool.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <linux/types.h>
#include "ports.h"
#include "xdpban_config.h"

#define XBD_CONF_DEFAULT "/etc/xdpban/xdpban.conf"
#define XBD_STATE_FILE_DEFAULT "/var/lib/xdpban/state"
/* [events] history: a file name in the state file's directory; history-max: its bound in
 * events (about 300 bytes each: some 3 MiB at the default). */
#define XBD_HISTORY_DEFAULT "events"
#define XBD_HISTORY_MAX_DEFAULT 10000u
#define XBD_HISTORY_MAX_MIN 100u
#define XBD_HISTORY_MAX_MAX 1000000u
#define XBD_METRICS_DEFAULT "127.0.0.1:9433"
#define XBD_MAX_IFACES 32
#define XBD_MAX_LISTS 64
#define XBD_TABLE_MAX (1u << 24) /* largest counters-max / bans-max accepted */
#define XBD_CONF_SIZE_MAX (1 << 20) /* bytes: a larger config file is refused */

enum xbd_mode {
	XBD_MODE_AUTO,   /* native, falling back to generic (skb) */
	XBD_MODE_NATIVE, /* native only: fail if the driver cannot */
	XBD_MODE_SKB,    /* generic only */
};

/* The verdict of a never-ban list, outside enum xdpban_verdict: its entries go to the exempt
 * tries (never counted or banned), never to the policy. */
#define XBD_LIST_NEVER_BAN 0x100u
/* The verdict of an observed deny list (`deny = FILE observe`): its entries go to the observed
 * tries (counted under observed_deny, never dropped), never to the policy. */
#define XBD_LIST_OBSERVED 0x200u
#define XBD_LIST_OBSERVE_WORD "observe" /* the word after the file */

struct xbd_list_conf {
	char *path;     /* absolute; relative paths are taken from the config file's directory */
	__u32 verdict;  /* XDPBAN_POLICY_ALLOWED, _TRUSTED, _DENY, XBD_LIST_NEVER_BAN or _OBSERVED */
	__u32 id;       /* the list id: 1, 2, ... in file order (list_id in the policy tries) */
};

struct xbd_escalation {
	bool enabled;
	double factor;    /* ban time multiplier per repeat, > 1 */
	__u32 max_ban_s;  /* an escalated ban never lasts longer */
	__u32 period_s;   /* a ban within this long of the previous one is a repeat */
};

/* [fleet]: sharing bans through a Redis stream (docs/fleet.md). Off while redis_host is NULL.
 * The defaults and ranges of its keys, beside the table row of each in conf_keys.c. */
#define XBD_FLEET_STREAM_DEFAULT "xdpban:bans"
#define XBD_FLEET_SNAPSHOT_DEFAULT "xdpban:active"
#define XBD_FLEET_MAXLEN_DEFAULT 100000u
#define XBD_FLEET_MAXLEN_MIN 100u
#define XBD_FLEET_MAXLEN_MAX 100000000u
#define XBD_FLEET_QUEUE_DEFAULT 4096u
#define XBD_FLEET_QUEUE_MIN 1u
#define XBD_FLEET_QUEUE_MAX 1048576u
/* The share of the ban table remote bans may hold, in percent (remote-share). */
#define XBD_FLEET_REMOTE_SHARE_DEFAULT 50u
#define XBD_FLEET_REMOTE_SHARE_MIN 1u
#define XBD_FLEET_REMOTE_SHARE_MAX 100u
#define XBD_FLEET_NAME_MAX 64   /* a node name: letters, digits, '.', '_', '-' */
#define XBD_FLEET_KEY_MAX 128   /* a stream or hash name: those and ':', '{', '}' */
/* The fleet's signing key (key-file): this many bytes, the file's content without a final
 * newline. Every node holds the same one. */
#define XBD_FLEET_SECRET_MIN 32
#define XBD_FLEET_SECRET_MAX 256
struct xbd_fleet_secret {
	unsigned char bytes[XBD_FLEET_SECRET_MAX];
	size_t len;
};

/* The signing key from the n bytes of its file (a final newline is not part of it): 0, or
 * -EINVAL with why when it is shorter than XBD_FLEET_SECRET_MIN or the file held more than
 * XBD_FLEET_SECRET_MAX - 1 bytes. Inline: the benchmark that signs as the nodes do reads it
 * too, without the config's code. */
static inline int xbd_fleet_secret_parse(const void *bytes, size_t n,
					 struct xbd_fleet_secret *out, char *why, size_t whylen)
{
	size_t len = n && ((const char *)bytes)[n - 1] == '\n' ? n - 1 : n;

	explicit_bzero(out, sizeof(*out));
	if (len < XBD_FLEET_SECRET_MIN || n >= XBD_FLEET_SECRET_MAX) {
		snprintf(why, whylen,
			 "%zu bytes: a key is %d to %d bytes (head -c 48 /dev/urandom | base64)", n,
			 XBD_FLEET_SECRET_MIN, XBD_FLEET_SECRET_MAX - 1);
		return -EINVAL;
	}
	memcpy(out->bytes, bytes, len);
	out->len = len;
	return 0;
}

struct xbd_fleet_conf {
	char *redis;       /* HOST:PORT as written; NULL: fleet sharing off */
	char *redis_host;  /* an address or a host name */
	__u16 redis_port;
	char *stream;      /* the stream of ban entries */
	char *snapshot;    /* the hash of active bans: key -> "EXPIRES ORIGIN" */
	char *node;        /* this node's name in the entries (default: the host name) */
	char *user;        /* Redis ACL user; NULL: AUTH with the password alone, or none */
	char *password_file; /* owned by root, mode 0600 or tighter; NULL: no AUTH */
	char *key_file;    /* owned by root, mode 0600 or tighter; required with redis */
	struct xbd_fleet_secret key; /* its content, read with the config */
	__u32 maxlen;      /* XADD MAXLEN ~ this */
	__u32 queue_size;  /* entries waiting to be published, at most */
	__u32 remote_share; /* percent of the ban table remote bans may hold */
};

struct xbd_conf {
	char *path;
	/* [xdp] */
	char *ifaces[XBD_MAX_IFACES];
	int n_ifaces;
	enum xbd_mode mode;
	char *pin_dir;
	bool detach_on_exit;
	/* [bans] */
	/* Thresholds written to the xdpban_config map; not its policy flags, which follow the
	 * lists in force (xbd_lists_apply, lists.h). */
	struct xdpban_config dp;
	__u32 counters_max, bans_max;
	__u32 policy_lines_max; /* IPv4 /24 regions with a line of /32 codes (xdpban_flat4x) */
	__u32 policy_lines6_max; /* IPv6 stride lines (xdpban_flat6x) */
	/* [lists] */
	bool lists_ignore_errors; /* skip (and count) bad lines instead of refusing the file */
	struct xbd_list_conf lists[XBD_MAX_LISTS];
	int n_lists;
	/* [control] */
	char *socket_path;
	mode_t socket_mode;
	bool has_group;
	gid_t group;
	bool group_full; /* the group may change state, not only read it */
	/* [metrics] */
	char *metrics_listen; /* as written; NULL when "off" */
	struct sockaddr_storage metrics_addr;
	socklen_t metrics_addrlen;
	/* [state] */
	char *state_file; /* NULL when "off" */
	__u32 save_interval_s;
	/* [events] */
	char *history;       /* the history file's name, beside the state file; NULL: "off" */
	__u32 history_max;   /* events it holds at most */
	/* [escalation] */
	struct xbd_escalation esc;
	/* [ports]: the table of the port rules (user/lib/ports.h), allocated with the defaults;
	 * dp.ports holds its flags once the file is read */
	struct xb_ports *ports;
	bool probe_icmp;
	/* [fleet] */
	struct xbd_fleet_conf fleet;
};

/* The name of a mode as the config writes it. */
static inline const char *xbd_mode_name(enum xbd_mode mode)
{
	switch (mode) {
	case XBD_MODE_NATIVE:
		return "native";
	case XBD_MODE_SKB:
		return "skb";
	default:
		return "auto";
	}
}

#endif /* XB_CONF_H */
