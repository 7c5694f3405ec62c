/* tmpdir.h - a scratch directory for the unit tests that read and write files (the config,
 * the state file, the bounded reader): made with mkdtemp under $TMPDIR or /tmp, filled with
 * files of given text, and removed with everything in it. Test support only: it never
 * touches a path outside the directory it made.
 */
#ifndef XDPBAN_TEST_TMPDIR_H
#define XDPBAN_TEST_TMPDIR_H

#include <limits.h>
#include <stddef.h>

struct tmpdir {
	char path[256]; /* $TMPDIR/xdpban-unit-XXXXXX */
};

/* 0, or -errno. */
int tmpdir_make(struct tmpdir *d);
/* PATH/NAME into out (PATH_MAX bytes); returns out. */
char *tmpdir_path(const struct tmpdir *d, const char *name, char *out);
/* Writes len bytes of data to PATH/NAME (replacing it) and puts its path in out (PATH_MAX
 * bytes, may be NULL). 0, or -errno. */
int tmpdir_write(const struct tmpdir *d, const char *name, const void *data, size_t len,
		 char *out);
/* The same for a NUL-terminated text. */
int tmpdir_write_text(const struct tmpdir *d, const char *name, const char *text, char *out);
/* How many entries of the directory start with prefix. */
int tmpdir_count(const struct tmpdir *d, const char *prefix);
/* Removes the directory and everything in it (without following links). */
void tmpdir_remove(struct tmpdir *d);
/* A cmocka setup and teardown giving each test a struct tmpdir of its own in *state. */
int tmpdir_setup(void **state);
int tmpdir_teardown(void **state);

#endif /* XDPBAN_TEST_TMPDIR_H */
