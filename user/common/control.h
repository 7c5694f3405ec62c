/* control.h - the xdpban control protocol (docs/control.md): one JSON request per line on a
 * Unix stream socket, one JSON reply per line. The request handler lives here so that the
 * daemon's socket server and the tests share one implementation; the client side is here too.
 * This module never accepts connections, never checks peer credentials and never prints: the
 * daemon owns the server, the caller prints. The names of the commands and fields are in
 * control_fields.h, the one table both sides spell them from.
 *
 * CONTRACT between the CLI/library owner and the daemon owner: change a signature here only
 * together with every caller.
 */
#ifndef XDPBAN_CONTROL_H
#define XDPBAN_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>
#include "libxdpban.h"

struct json_object; /* json-c; only the hooks see it */

#define XB_CONTROL_SOCKET_DEFAULT "/run/xdpban/xdpban.sock"
/* A request is at most this many bytes, not counting its terminating '\n'. The server must
 * refuse a longer line (reply with an error and close); the handler refuses one too. */
#define XB_CONTROL_REQUEST_MAX 4096
/* A reply can be long (`bans` with every ban); the client refuses more than this. */
#define XB_CONTROL_REPLY_MAX (256u << 20)
/* Default client timeout for one reply, in milliseconds. */
#define XB_CONTROL_TIMEOUT_MS 5000
/* A request the daemon answers when its work is over (`reload`) gets its answer, or an error
 * saying it did not come in time, within this many milliseconds. */
#define XB_CONTROL_HELD_MS 60000

/* What the daemon plugs into the handler. Every member may be NULL. Hooks run in the caller's
 * thread, inside xb_control_handle(); `user` is xb_control_ctx.user. */
struct xb_control_hooks {
	/* Adds the daemon's own fields to the `status` reply object (e.g. "interfaces":
	 * [{"name", "ifindex", "mode"}], "config_file"). 0 or -errno. */
	int (*status)(struct json_object *reply, void *user);
	/* Called after a manual ban was written to the maps (seconds 0 = permanent; comment
	 * NULL: none, checked by xb_ban_comment_check), so the daemon can see it for escalation
	 * and persistence, and keep its comment. Without it a ban with a comment is refused. */
	void (*banned)(const struct xb_prefix *p, __u32 seconds, const char *comment, void *user);
	/* Called after a manual unban removed an entry. */
	void (*unbanned)(const struct xb_prefix *p, void *user);
	/* Called after `unban` with "all" lifted n bans (lifted: each, as unbanned would be told
	 * of it), of one reason (enum xdpban_ban_reason) or of every reason (-1): one call, so
	 * that the daemon can say it once. */
	void (*unbanned_all)(const struct xb_prefix *lifted, size_t n, int reason, void *user);
	/* Called after `set` wrote a new config to the map: key's new value, or (reset) the
	 * value setting_of_file gave it back. */
	void (*config_changed)(const struct xdpban_config *cfg, const char *key, bool reset,
			       void *user);
	/* The config file's value of a `set` key, as the file writes it, for `set` with
	 * `reset`. 0, or -errno with a one-line message in err. NULL: no file (`reset` is
	 * refused). */
	int (*setting_of_file)(const char *key, char *buf, size_t len, char *err, size_t errlen,
			       void *user);
	/* A display name for a policy list id in the `lists` reply ("name"); NULL: none. */
	const char *(*list_name)(__u32 list_id, void *user);
	/* Adds the daemon's own fields to a `query` reply (the file and line of the policy
	 * entry that matched). */
	void (*queried)(struct json_object *reply, void *user);
	/* Adds the daemon's own fields to a `bans` reply (the fleet node of remote bans). */
	void (*listed)(struct json_object *reply, void *user);
	/* The commands of the protocol (control_fields.h) the library does not run come here:
	 * return 0 after filling reply (the handler adds "ok": true), or -errno with a one-line
	 * message in err, which is the reply's error whatever the errno. A name outside the
	 * protocol never comes here. */
	int (*command)(const char *cmd, struct json_object *request, struct json_object *reply,
		       char *err, size_t errlen, void *user);
};

struct xb_control_ctx {
	const struct xb_maps *maps;         /* report needs maps->report_prog >= 0 */
	const struct xb_control_hooks *hooks; /* NULL: no hooks */
	void *user;                         /* passed to every hook */
	bool read_only; /* refuse commands that change state (e.g. for a peer that is not root) */
};

/* Handles one request (the line without its '\n'; it need not be NUL-terminated) and sets
 * *reply to a malloc'ed, NUL-terminated reply line without the '\n', which the caller frees
 * and sends followed by '\n'. Malformed, oversized or unknown requests get an
 * {"ok": false, "error": "..."} reply and return 0. Returns -ENOMEM (and *reply NULL) only
 * when no reply could be built at all. */
int xb_control_handle(const struct xb_control_ctx *ctx, const char *request, size_t len,
		      char **reply);

/* {"ok": false, "error": message} as a reply line without its '\n', every byte of message
 * that is not printable ASCII written as \xNN: for replies the server makes itself (refusals,
 * answers given later). malloc'ed; NULL when out of memory. */
char *xb_control_error_reply(const char *message);

/* Client. Connects to the control socket at path (NULL: XB_CONTROL_SOCKET_DEFAULT).
 * Returns the fd, or -errno: -ENOENT or -ECONNREFUSED mean no daemon is listening. */
int xb_control_connect(const char *path, char *err, size_t errlen);
/* Sends request (one line, no '\n'; one is added) and reads one reply line, waiting at most
 * timeout_ms for each read. *reply is malloc'ed, NUL-terminated, without the '\n'.
 * 0, or -errno with a one-line message (-ETIMEDOUT, -EMSGSIZE, -ECONNRESET, ...). */
int xb_control_call(int fd, const char *request, int timeout_ms, char **reply, char *err,
		    size_t errlen);

/* Open files sent with a request (SCM_RIGHTS, docs/control.md): `lists_load` reads its list
 * files from them, so that the daemon never opens a path for a client; any other request
 * has them closed. At most this many come with one request, its files' worth. */
#define XB_CONTROL_FDS_MAX 64
struct xb_control_fds {
	int v[XB_CONTROL_FDS_MAX];
	size_t n;
	bool over; /* more came than v holds, or the kernel could not pass them all */
};
/* send(2) of up to len bytes with fds (n of them, at most XB_CONTROL_FDS_MAX) on their first
 * byte; no SIGPIPE. The bytes sent, or -errno. */
ssize_t xb_control_send_fds(int sock, const void *buf, size_t len, const int *fds, size_t n);
/* recv(2) of up to len bytes, and the descriptors that came with them added to fds
 * (close-on-exec); those past its room are closed and fds->over set. The bytes read (0: the
 * peer closed), or -errno. */
ssize_t xb_control_recv_fds(int sock, void *buf, size_t len, struct xb_control_fds *fds);
/* Closes every descriptor of fds and empties it. */
void xb_control_fds_close(struct xb_control_fds *fds);
/* xb_control_call with fds (n of them) sent with the request; they stay the caller's. */
int xb_control_call_fds(int fd, const char *request, const int *fds, size_t n, int timeout_ms,
			char **reply, char *err, size_t errlen);

/* A connection that takes more than one line per request: the "events" subscription. */
struct xb_control_stream {
	int fd;
	char *data;         /* what was read and not yet handed out */
	size_t len, cap, taken;
};

/* Sends request on fd and gets st ready to read its lines. 0 or -errno with a line in err. */
int xb_control_subscribe(int fd, const char *request, int timeout_ms, struct xb_control_stream *st,
			 char *err, size_t errlen);
/* The next line (NUL-terminated, without its '\n'; valid until the next call), waiting at
 * most timeout_ms (-1: for ever). 0, or -errno with a line in err (-ECONNRESET: closed). */
int xb_control_next_line(struct xb_control_stream *st, int timeout_ms, const char **line,
			 char *err, size_t errlen);
void xb_control_stream_free(struct xb_control_stream *st);

#endif /* XDPBAN_CONTROL_H */
