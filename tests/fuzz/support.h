/* support.h - what the libFuzzer harnesses in tests/fuzz share: the input as a C string or as
 * a file with a path, and checks that abort with one line naming what broke, so that libFuzzer
 * saves the input as a crash artifact. Test support only; never linked into a program.
 */
#ifndef XDPBAN_FUZZ_SUPPORT_H
#define XDPBAN_FUZZ_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FZ_FILES_MAX 4 /* files one input can be split into */

/* A NUL-terminated copy of the input (cut at its first NUL, as C callers see it); free it. */
char *fz_text(const uint8_t *data, size_t size);

/* Makes file `slot` (0..FZ_FILES_MAX-1) hold exactly these bytes and returns a path that opens
 * it ("/proc/self/fd/N" of a memfd, a regular file). The path stays valid until the next call
 * for the same slot. */
const char *fz_file(int slot, const void *data, size_t size);

/* Splits the input at every line that is exactly `sep` (the separator lines are dropped), into
 * at most FZ_FILES_MAX parts; the last part takes the rest. Returns the number of parts. */
int fz_split(const uint8_t *data, size_t size, const char *sep, const uint8_t **part,
	     size_t *len);

__attribute__((noreturn, format(printf, 4, 5))) void fz_fail(const char *file, int line,
							      const char *cond, const char *fmt,
							      ...);
/* Aborts with "FILE:LINE: check failed: COND: message" when cond is false. */
#define fz_check(cond, ...)                                                                    \
	do {                                                                                   \
		if (!(cond))                                                                   \
			fz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);                       \
	} while (0)

/* The project's rule for an error message: one line, not empty, terminated within errlen. */
void fz_check_message(const char *err, size_t errlen, const char *what);
/* True when s holds only printable ASCII (0x20..0x7e). */
bool fz_printable(const char *s);

#endif /* XDPBAN_FUZZ_SUPPORT_H */
