/* cli.c - the messages of every command (cli.h): one line on stderr, prefixed with the
 * program's name; debug lines only with -v. */
#include <stdarg.h>
#include <stdio.h>
#include "cli.h"

void pr_warn(const char *fmt, ...)
{
	va_list ap;

	fputs("xdpban: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void pr_debug(const struct cli *cli, const char *fmt, ...)
{
	va_list ap;

	if (!cli->verbose)
		return;
	fputs("xdpban: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
