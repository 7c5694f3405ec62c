/* quote.c - how a message quotes what a user, a client or a file wrote: printable ASCII as it
 * is, every other byte as \xNN. A message is one line of plain text whatever it quotes: no
 * newline, no terminal control sequence, no invalid UTF-8. And how it counts: "1 entry", never
 * "1 entries". Never allocates.
 */
#include <stdio.h>
#include "libxdpban.h"

const char *xb_quote(const char *text, char *out, size_t outlen)
{
	size_t used = 0;

	for (const unsigned char *c = (const unsigned char *)text; *c && used + 5 <= outlen; c++) {
		if (*c >= 0x20 && *c <= 0x7e)
			out[used++] = (char)*c;
		else
			used += snprintf(out + used, outlen - used, "\\x%02x", *c);
	}
	out[used] = '\0';
	return out;
}

const char *xb_plural(unsigned long long n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}
