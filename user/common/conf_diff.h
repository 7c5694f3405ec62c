/* conf_diff.h - what a reload changes, between the configuration in force and the one read:
 * the settings a reload applies (each with its old and new value, written as the config file
 * takes them), the list files whose contents changed (with their prefixes before and after),
 * and the keys that wait for a restart. Made as the members of the `reload` reply
 * (docs/control.md), which `xdpban reload` prints. It only compares: it changes nothing. */
#ifndef XB_CONF_DIFF_H
#define XB_CONF_DIFF_H

#include "conf.h"
#include "lists.h"

struct json_object;

/* The configuration on one side of a reload: conf with the thresholds in force (after an
 * `xdpban set`, the config map's, not the file's), and lists, its list files as read. */
struct xbd_conf_side {
	const struct xbd_conf *conf;
	const struct xbd_lists *lists;
};

/* Adds to reply "changed" (an array of {"key", "old", "new"}, in the man page's order of the
 * keys), "lists_changed" (an array of {"layer", "file", "before", "after"}; before or after
 * null for a file added or dropped) and "restart" (an array of names): every one of them,
 * empty when nothing changed. 0 or -ENOMEM. */
int xbd_conf_diff_json(const struct xbd_conf_side *old, const struct xbd_conf_side *next,
		       struct json_object *reply);

/* The value of the setting `xdpban set` names set_key in c (its thresholds), as the config
 * file writes it: "15", "1h", "malformed,probe". 0, or -ENOENT for a key `set` does not know. */
int xbd_conf_setting_text(const struct xbd_conf *c, const char *set_key, char *buf, size_t len);

#endif /* XB_CONF_DIFF_H */
