/* support.c - see support.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "support.h"

static int files[FZ_FILES_MAX] = { -1, -1, -1, -1 };
static char paths[FZ_FILES_MAX][32];

void fz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%d: check failed: %s: ", file, line, cond);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

char *fz_text(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);

	fz_check(text, "out of memory for %zu bytes", size);
	memcpy(text, data, size);
	text[size] = '\0';
	return text;
}

const char *fz_file(int slot, const void *data, size_t size)
{
	fz_check(slot >= 0 && slot < FZ_FILES_MAX, "slot %d", slot);
	if (files[slot] < 0) {
		files[slot] = memfd_create("xdpban-fuzz", MFD_CLOEXEC);
		fz_check(files[slot] >= 0, "memfd_create: %s", strerror(errno));
		snprintf(paths[slot], sizeof(paths[slot]), "/proc/self/fd/%d", files[slot]);
	}
	fz_check(!ftruncate(files[slot], 0), "ftruncate: %s", strerror(errno));
	fz_check(size == 0 || pwrite(files[slot], data, size, 0) == (ssize_t)size, "pwrite: %s",
		 strerror(errno));
	return paths[slot];
}

int fz_split(const uint8_t *data, size_t size, const char *sep, const uint8_t **part,
	     size_t *len)
{
	size_t seplen = strlen(sep), start = 0;
	int n = 0;

	for (size_t i = 0; i + seplen <= size && n < FZ_FILES_MAX - 1; i++) {
		bool line_start = i == 0 || data[i - 1] == '\n';
		bool line_end = i + seplen == size || data[i + seplen] == '\n';

		if (!line_start || !line_end || memcmp(data + i, sep, seplen))
			continue;
		part[n] = data + start;
		len[n++] = i - start;
		start = i + seplen + (i + seplen < size); /* past the separator and its '\n' */
		i = start - 1;
	}
	part[n] = data + start;
	len[n++] = size - start;
	return n;
}

void fz_check_message(const char *err, size_t errlen, const char *what)
{
	size_t len = strnlen(err, errlen);

	fz_check(len < errlen, "%s: the message is not terminated", what);
	fz_check(len > 0, "%s: failed without a message", what);
	fz_check(!memchr(err, '\n', len), "%s: the message is more than one line: %s", what, err);
}

bool fz_printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			return false;
	return true;
}
