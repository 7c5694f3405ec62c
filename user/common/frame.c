/* frame.c - see frame.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "frame.h"

#define BLANKS " \t\n"

void xbd_frame_write_header(FILE *f, const struct xbd_frame *fr)
{
	fprintf(f, "%s %d\n", fr->magic, fr->version);
}

void xbd_frame_write_end(FILE *f, size_t records)
{
	fprintf(f, "end %zu\n", records);
}

/* The next word at *s (its length in *len, *s moved past it), or NULL when none is left. */
static const char *next_word(const char **s, size_t *len)
{
	const char *w = *s + strspn(*s, BLANKS);

	*len = strcspn(w, BLANKS);
	*s = w + *len;
	return *len ? w : NULL;
}

static bool word_is(const char *w, size_t len, const char *text)
{
	return w && len == strlen(text) && !memcmp(w, text, len);
}

/* A count in decimal digits, at most SIZE_MAX. */
static bool parse_count(const char *w, size_t len, size_t *out)
{
	char digits[24], *end;
	unsigned long long n;

	if (!w || len >= sizeof(digits) || w[0] < '0' || w[0] > '9')
		return false;
	memcpy(digits, w, len);
	digits[len] = '\0';
	errno = 0;
	n = strtoull(digits, &end, 10);
	if (errno || *end || n > SIZE_MAX)
		return false;
	*out = (size_t)n;
	return true;
}

static bool is_header(const struct xbd_frame *fr, const char *line)
{
	char version[16];
	const char *magic, *ver;
	size_t magic_len, ver_len, rest;

	snprintf(version, sizeof(version), "%d", fr->version);
	magic = next_word(&line, &magic_len);
	ver = next_word(&line, &ver_len);
	return word_is(magic, magic_len, fr->magic) && word_is(ver, ver_len, version) &&
	       !next_word(&line, &rest);
}

enum xbd_frame_line xbd_frame_line(struct xbd_frame *fr, unsigned int no, const char *line)
{
	const char *first, *count;
	size_t first_len, count_len, rest, declared;

	if (no == 1)
		return is_header(fr, line) ? XBD_FRAME_EDGE : XBD_FRAME_BAD_HEADER;
	if (fr->ended)
		return XBD_FRAME_AFTER_END;
	first = next_word(&line, &first_len);
	if (!word_is(first, first_len, "end"))
		return XBD_FRAME_RECORD;
	count = next_word(&line, &count_len);
	if (!parse_count(count, count_len, &declared) || next_word(&line, &rest) ||
	    declared != fr->records)
		return XBD_FRAME_BAD_END;
	fr->ended = true;
	return XBD_FRAME_EDGE;
}
