/* banview.h - the bans an operator asks to see: a `bans` reply (docs/control.md) cut down to
 * the bans of one reason, one origin or inside one prefix, and put in the order asked. The CLI
 * applies it to the daemon's reply and to its own alike, so that both list the same bans in
 * the same order. It only reads and rearranges the reply: never a map, never a socket. */
#ifndef XDPBAN_BANVIEW_H
#define XDPBAN_BANVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include "fleet_entry.h"
#include "libxdpban.h"

struct json_object;

/* The orders of a listing. Each puts what an operator looks at first on top, and breaks ties
 * by prefix (IPv4 before IPv6, then by address and length), so the order is always the same. */
enum xb_ban_sort {
	XB_BAN_SORT_NONE,  /* as the tables give them */
	XB_BAN_SORT_TIME,  /* newest first; bans whose start is not recorded last */
	XB_BAN_SORT_COUNT, /* most errors first */
	XB_BAN_SORT_LEFT,  /* least time left first; permanent bans last */
};

/* Where a ban came from: made here by the data path or a report, by hand here, or from the
 * fleet (any node, or the node of that name). */
enum xb_ban_origin { XB_ORIGIN_ANY, XB_ORIGIN_LOCAL, XB_ORIGIN_MANUAL, XB_ORIGIN_REMOTE,
		     XB_ORIGIN_NODE };

struct xb_ban_view {
	bool by_reason;
	__u8 reason;               /* enum xdpban_ban_reason, with by_reason */
	enum xb_ban_origin origin;
	char node[XBD_FLEET_NAME_MAX + 1]; /* with XB_ORIGIN_NODE */
	bool by_prefix;
	struct xb_prefix within;   /* with by_prefix: bans inside it (it included) */
	enum xb_ban_sort sort;
};

/* "time", "count" or "left". 0, or -EINVAL with one line in err. */
int xb_ban_sort_parse(const char *text, enum xb_ban_sort *sort, char *err, size_t errlen);
/* "local", "manual", "remote", or a fleet node's name. 0, or -EINVAL with one line in err. */
int xb_ban_origin_parse(const char *text, struct xb_ban_view *v, char *err, size_t errlen);
/* Whether v leaves out or reorders anything at all. */
bool xb_ban_view_active(const struct xb_ban_view *v);
/* Replaces the "bans" array of reply with the bans v selects, in its order. "origins" (the
 * fleet node of each remote ban) is read for the origin. 0 or -ENOMEM. */
int xb_ban_view_apply(struct json_object *reply, const struct xb_ban_view *v);

/* Moves each comment of the reply's "comments" (the daemon's, by prefix) into its ban as
 * "comment", where a listing reads it beside the ban's other fields. 0 or -ENOMEM. */
int xb_ban_view_comments(struct json_object *reply);

#endif /* XDPBAN_BANVIEW_H */
