/* fleet_conn.h - what the fleet's two threads share (fleet_link.c's reader and the loop's
 * side, fleet_publish.c's publisher): connecting and authenticating with the password file
 * read anew each time, the link's connection state and its backoff. Internal to the link:
 * only fleet_link.c and fleet_publish.c include it. */
#ifndef XDPBAND_FLEET_CONN_H
#define XDPBAND_FLEET_CONN_H

#include <sys/time.h>
#include <hiredis/hiredis.h>
#include "fleet_shared.h"

#define CONNECT_TIMEOUT_MS 1000
#define BLOCK_MS 1000               /* XREAD BLOCK: the reader looks at `stopping` this often */
#define REPLY_TIMEOUT_MS (BLOCK_MS + 2000)
#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000
#define READ_COUNT 512              /* entries per XREAD */
#define QUIET_CHECK_MS 10000        /* a quiet reader checks its place at least this often */
#define PUBLISH_BATCH 64            /* entries per pipeline */
#define SCAN_COUNT 1000             /* fields per HSCAN */
/* The most the reader takes in of one reply. An entry on the wire is its fields and values
 * and, for its id and each of at most 64 strings, a framing of at most 16 bytes; a snapshot
 * field and value are far shorter than an entry, and HSCAN's COUNT is a hint that a page may
 * pass. Reading more than these means a longer entry or field is in the reply. */
#define ENTRY_WIRE_MAX (XBD_FLEET_ENTRY_MAX + 65 * 16)
#define READ_BYTES_MAX ((size_t)READ_COUNT * ENTRY_WIRE_MAX)
#define INFO_BYTES_MAX (2 * ENTRY_WIRE_MAX + 4096) /* XINFO STREAM: first and last entry */
#define SCAN_BYTES_FOR(count) ((size_t)4 * (count) * (XBD_SNAPSHOT_VALUE_MAX + 128))
#define SCAN_BYTES_MAX SCAN_BYTES_FOR(SCAN_COUNT)
#define IDLE_MS 1000                /* the publisher PINGs an idle connection this often */

struct timeval xbd_fleet_tv(int ms);
__u64 xbd_fleet_mono_ms(void);
/* Records a connection problem and logs it when it is a new one. Called with l->lock held. */
void xbd_fleet_note_error(struct xbd_fleet_link *l, const char *who, const char *what);
/* Marks a connection up or down (*up: publisher_up or reader_up), logging a new one. */
void xbd_fleet_set_up(struct xbd_fleet_link *l, bool *up, bool value, const char *who);
bool xbd_fleet_stopping(struct xbd_fleet_link *l);
/* Waits *backoff ms on cond (stop wakes it) and doubles *backoff up to BACKOFF_MAX_MS. */
void xbd_fleet_backoff(struct xbd_fleet_link *l, pthread_cond_t *cond, int *backoff);
bool xbd_fleet_reply_failed(const redisReply *r);
/* Sends a command and reads its reply, but never more than max bytes of it: a hostile writer
 * can put an entry of hundreds of megabytes in the stream, and hiredis would hold it whole.
 * 0 with *out the reply (the caller frees it); -E2BIG when the reply is longer, with *out what
 * was parsed of it (redisReaderGetObject: arrays of declared size whose elements not yet read
 * are NULL), owned by c and valid until c is freed, which the caller must do next since the
 * rest of the reply is still to come; -EIO when Redis failed or timed out (*out NULL). */
int xbd_fleet_command_bounded(redisContext *c, size_t max, redisReply **out, const char *fmt,
			      ...) __attribute__((format(printf, 4, 5)));
/* Connects and authenticates, with the password file read now (the last one read when it
 * cannot be). NULL with the problem noted. *gen: the password's generation (auth_gen). */
redisContext *xbd_fleet_connect(struct xbd_fleet_link *l, const char *who, unsigned int *gen);
/* Drops a failed connection: the problem noted, *up false, its fd forgotten. */
void xbd_fleet_drop(struct xbd_fleet_link *l, redisContext **c, bool *up, const char *who);
/* The publisher's thread (fleet_publish.c). */
void *xbd_fleet_publisher_main(void *arg);

#endif /* XDPBAND_FLEET_CONN_H */
