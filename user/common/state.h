/* state.h - the state file: bans (from the data path, manual, and timed manual prefix bans),
 * the offence history and the settings changed with `xdpban set` (setvals.h), saved with
 * wall-clock times so that they survive a reboot.
 * Saving is atomic (temp file in the same directory, fsync, rename). A file that does not
 * parse is never half-trusted: it is reported and moved aside, and nothing of it is used. */
#ifndef XDPBAND_STATE_H
#define XDPBAND_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "libxdpban.h"
#include "comments.h"
#include "fleet_entry.h"
#include "offences.h"
#include "setvals.h"

#define XBD_STATE_MAGIC "xdpban-state"
#define XBD_STATE_VERSION 1
/* The counts in progress saved at most: a file of a large counter table stays a few MiB, and
 * those nearest a ban (the highest) are kept. */
#define XBD_STATE_COUNTERS_MAX 65536

struct xbd_state_counts {
	bool present;                    /* at load: the file existed */
	size_t bans, prefixes, offences; /* saved, or restored */
	size_t comments;                 /* saved, or read */
	size_t settings;                 /* set at run time: saved, or read */
	size_t counters;                 /* error counts in progress: saved, or restored */
	size_t counters_left;            /* at save: left out past XBD_STATE_COUNTERS_MAX */
	size_t expired;                  /* skipped at restore: already over */
	size_t failed;                   /* not restored: already present */
	size_t full;                     /* not restored: the ban table had no room */
	size_t refused;                  /* not restored: exempt, or keyed one by one here */
	char refused_why[XB_ERRLEN];     /* the first refusal's reason */
};

/* What fleet sharing keeps in the file (fleet.h): the last stream entry applied and the epoch
 * of the Redis data it was read from, and the node each remote ban in force came from.
 * Records "fleet last=ID [epoch=HEX]" and "origin KEY node=NAME". */
struct xbd_state_origin {
	struct xb_prefix who;
	char node[XBD_FLEET_NAME_MAX + 1];
};
struct xbd_state_fleet {
	char last_id[XBD_FLEET_ID_MAX]; /* "" none */
	char epoch[XBD_FLEET_EPOCH_HEX + 1]; /* "" not known */
	struct xbd_state_origin *origins;
	size_t n_origins, cap_origins;
};
/* Adds one origin. 0 or -ENOMEM. */
int xbd_state_fleet_add(struct xbd_state_fleet *f, const struct xb_prefix *who, const char *node);
void xbd_state_fleet_free(struct xbd_state_fleet *f);

/* What the file holds beside the maps and the offence history, each part optional (NULL:
 * none written; at load, dropped): the fleet records, the comments of manual bans (records
 * "comment KEY text=TEXT", TEXT with '%' and ' ' written as %25 and %20) and the values set at
 * run time (records "set KEY VALUE"). A NULL struct is all three NULL. */
struct xbd_state_records {
	struct xbd_state_fleet *fleet;
	struct xbd_comments *comments;
	struct xbd_setvals *set;
};

int xbd_state_save(const char *path, const struct xb_maps *m, const struct xbd_history *h,
		   const struct xbd_state_records *rec, struct xbd_state_counts *counts,
		   char *err, size_t errlen);
/* The "counter" records of the counts in progress in m's counter table, at most max, the
 * highest; *n written, *left left out. Part of xbd_state_save, apart for the tests. 0 or
 * -errno. */
int xbd_state_write_counters(FILE *f, const struct xb_maps *m, size_t max, size_t *n,
			     size_t *left);
/* The "set KEY VALUE" records of set (NULL: none), one per value; the number written. Part of
 * xbd_state_save, apart for the tests. */
size_t xbd_state_write_set(FILE *f, const struct xbd_setvals *set);
/* At -t and at start: a state file that exists must be a regular file (a directory such as
 * /tmp would otherwise be "corrupt" and moved aside). 0, or -errno with one line in err. */
int xbd_state_check(const char *path, char *err, size_t errlen);
/* Reads the file; restores the offence history, and the bans and the counts in progress too
 * when restore_bans (the maps were created empty: pinned maps kept their own). A missing
 * file is not an error. A corrupt one is moved to PATH.corrupt-TIMESTAMP; *corrupt tells,
 * and err says why; the return is 0 then. */
/* rec's parts get the fleet records, the comments and the values set at run time of a file
 * that parses whole (each left alone otherwise); the comments whether or not the bans are
 * restored, as the offences. A file of an older xdpband, without comments, set values or
 * counters, reads as before. */
int xbd_state_load(const char *path, const struct xb_maps *m, struct xbd_history *h,
		   bool restore_bans, const struct xbd_state_records *rec,
		   struct xbd_state_counts *counts, bool *corrupt, char *err, size_t errlen);

#endif /* XDPBAND_STATE_H */
