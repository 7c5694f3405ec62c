/* xdpband.h - the daemon as a whole: every module's state in one struct, shared by main.c
 * (start, the poll loop, reload, stop) and hooks.c (what the control handler may ask of the
 * daemon). Modules never see this struct; they get only the pieces they need. */
#ifndef XDPBAND_H
#define XDPBAND_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <linux/types.h>
#include "attach.h"
#include "conf.h"
#include "control.h"
#include "events.h"
#include "evstream.h"
#include "exemptions.h"
#include "fleet.h"
#include "libxdpban.h"
#include "listload.h"
#include "load.h"
#include "metrics.h"
#include "pin.h"
#include "reload.h"
#include "runlists.h"
#include "comments.h"
#include "server.h"
#include "offences.h"
#include "setvals.h"

#define XBD_SWEEP_INTERVAL_MS 5000

struct xbd {
	struct xbd_conf conf;
	bool ifaces_from_args;               /* -i replaced the config's interfaces */
	size_t list_entries[XBD_MAX_LISTS + 1]; /* by list id, as last applied */
	size_t list_skipped[XBD_MAX_LISTS + 1]; /* bad lines skipped (ignore-errors), likewise */
	struct xbd_lists config_lists;       /* the config's lists in force (query's file:line) */
	struct xbd_runtime runtime;          /* the lists `xdpban lists load` added */
	char *runtime_store;                 /* where they are kept (runlists.h); NULL: nowhere */
	struct xbd_pin_lock lock;
	struct xbd_loader ld;
	struct xb_maps maps;
	struct xbd_attach att;
	struct xbd_history history;
	struct xbd_comments comments;        /* of manual bans, by prefix (comments.h) */
	struct xbd_events events;
	struct xbd_exemptions exempt;        /* never-ban entries and host addresses */
	struct xbd_server server;
	struct xbd_evstream evs;             /* the ban events subscribers get */
	struct xbd_fleet fleet;              /* bans shared with other nodes ([fleet]) */
	struct xbd_state_fleet fleet_saved;  /* what the state file kept of it, until start */
	struct xbd_setvals setvals;          /* the settings `xdpban set` changed, over the
					      * file's (kept in the state file) */
	struct xbd_metrics metrics;
	struct xbd_reading reading;          /* the reading half of a reload */
	bool reload_again;                   /* asked for while reading: read again */
	struct xbd_list_load list_load;      /* the reading half of `lists load` */
	struct xb_control_hooks hooks;
	bool state_dirty;                    /* the state file is behind the maps */
	__u64 next_sweep_ms, next_save_ms;
	time_t started;
};

/* actions.c. Starts a reload: the config file and the lists are read in a thread (reload.h), then the
 * loop applies what can change at run time, or nothing if any of it is wrong, and calls
 * xbd_hooks_reload_done(). A reload asked for while one reads makes that one read again.
 * 0, or -errno with one line in err when it cannot start. */
int xbd_reload_request(struct xbd *d, char *err, size_t errlen);
/* Saves the state file now (if one is configured). 0 or -errno with one line in err. */
int xbd_save_state(struct xbd *d, char *err, size_t errlen);

/* daemon_lists.c. The never-ban entries of lists and rt and the address of the fleet's Redis
 * server (conf), as a finished exempt set. 0, or -ENOMEM with err. */
int xbd_never_ban_set(const struct xbd_conf *conf, const struct xbd_lists *lists,
		      const struct xbd_runtime *rt, struct xb_exempt_set *out, char *err,
		      size_t errlen);
/* daemon_lists.c. What a list command works on: the lists in force, or config in their place. */
struct xbd_lists_ctx xbd_lists_ctx_of(struct xbd *d, const struct xbd_lists *config);
/* Compiles the config's lists with the runtime ones. 0 or -errno with one line in err. */
int xbd_apply_lists(struct xbd *d, const struct xbd_lists *lists, struct xb_progress *progress,
		    char *err, size_t errlen);
/* At start: reads the runtime store, then compiles lists with it; or, when they no longer fit
 * beside the config's (a smaller trie, a longer list), with the config's lists alone. */
int xbd_start_lists(struct xbd *d, const struct xbd_lists *lists, struct xb_progress *progress,
		    char *err, size_t errlen);

/* The control handler's view of the daemon (hooks.c). */
void xbd_hooks_init(struct xbd *d);
struct json_object;
/* A reload is over (ret 0, or -errno and err): answers the reload requests that wait, with
 * the members of changes (conf_diff.h; taken; NULL: not known) when it was done. */
void xbd_hooks_reload_done(struct xbd *d, int ret, const char *err, struct json_object *changes);
/* The files of a `lists load` are read (d->list_load.job.fd is readable): puts them in force and
 * answers the request that waits. */
void xbd_hooks_lists_loaded(struct xbd *d);

#endif /* XDPBAND_H */
