/* evhistory.h - the event history file (deploy/xdpband.8, "EVENT HISTORY"): every event of
 * the stream (evstream.h) appended as it happens, one line each, the very text a subscriber is
 * sent, so that `xdpban events` shows the events from before a restart. It is bounded: past its
 * number of events the oldest quarter is dropped by an atomic rewrite. Each line is one write(2)
 * to a file opened for appending, so a crash leaves at most a cut last line, which the reader
 * skips and the writer cuts off at the next start, each with a warning. The file is made like
 * the state file: mode 0600, owned by the daemon, in the state file's directory. Knows the
 * lines only as JSON objects with a time: never what an event holds. */
#ifndef XDPBAND_EVHISTORY_H
#define XDPBAND_EVHISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <linux/types.h>

struct json_object;

/* The longest line kept, without its '\n': an event with a comment of 200 bytes, all escaped
 * as \uXXXX, is under 2 KiB. A longer line ends the reading, with a warning. */
#define XBD_EVHISTORY_LINE_MAX 8192

struct xbd_evhistory {
	char *path;        /* NULL: no history (a zeroed struct is one) */
	int fd;            /* open for appending; -1 when closed */
	__u32 max_events;  /* the bound: past it the oldest quarter is dropped */
	__u32 held;        /* lines in the file */
	bool failing;      /* the last append failed (said once, until one succeeds) */
};

/* The history's path: the state file's directory and name, or NULL (none: either is NULL, or
 * out of memory). Free it. */
char *xbd_evhistory_path(const char *state_file, const char *name);
/* Opens (making it, and its directory, when missing) the history at path, counts its lines,
 * cuts off a last line without its '\n' (a warning) and trims it to max_events. 0, or -errno
 * with one line in err. */
int xbd_evhistory_open(struct xbd_evhistory *h, const char *path, __u32 max_events, char *err,
		       size_t errlen);
/* Appends line (one line of JSON, without '\n'); trims past the bound. A failure is logged
 * (once until an append succeeds again) and leaves the file as it was. 0 or -errno. */
int xbd_evhistory_append(struct xbd_evhistory *h, const char *line);
void xbd_evhistory_close(struct xbd_evhistory *h);

/* What a reading keeps: the events at or after a time, the last ones only. */
struct xbd_evpick {
	time_t since;                /* Unix seconds: earlier events are left out; 0: none */
	size_t keep;                 /* at most this many, the newest; 0: every one */
	struct json_object *events;  /* a JSON array of them, oldest first */
	unsigned int bad;            /* lines that were not an event, skipped */
	unsigned int first_bad;      /* the number of the first of them (1 for the first line) */
	unsigned int lines;          /* lines seen */
	bool last_bad;               /* the last line seen was not an event */
};

/* 0 or -ENOMEM. */
int xbd_evpick_init(struct xbd_evpick *pick, time_t since, size_t keep);
/* Takes one line: an event (a JSON object with an integer "time_unix") is kept when it is
 * not before since; anything else is counted in bad. 0, or -ENOMEM. */
int xbd_evpick_line(struct xbd_evpick *pick, const char *line, size_t len);
/* Hands pick->events over (the caller owns it) and frees the rest. */
struct json_object *xbd_evpick_take(struct xbd_evpick *pick);
void xbd_evpick_free(struct xbd_evpick *pick);

/* Reads the history at path into pick; a missing file is an empty history. Lines that are not
 * events are skipped, with one warning that counts them. 0, or -errno with one line in err. */
int xbd_evhistory_read(const char *path, struct xbd_evpick *pick, char *err, size_t errlen);

#endif /* XDPBAND_EVHISTORY_H */
