/* files.c - see files.h. The only reads are read(2) on a regular file, which never waits
 * for a writer; the buffer is fixed, so a line with no end costs max_line bytes, not the file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <sys/stat.h>
#include "files.h"

#define READ_CHUNK 65536

const char *xbd_file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "a device";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	return "a special file";
}

/* O_NONBLOCK keeps the open from waiting on a FIFO; it changes nothing for a regular file. A
 * socket cannot be opened at all: its kind comes from stat. */
int xbd_open_regular(const char *path, const char *what, off_t max_size, int *fd, char *err,
		     size_t errlen)
{
	struct stat st;
	int ret, open_errno;

	*fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	open_errno = errno;
	if (*fd >= 0 ? fstat(*fd, &st) : stat(path, &st))
		ret = -errno;
	else if (!S_ISREG(st.st_mode))
		ret = -EINVAL;
	else if (*fd < 0)
		ret = -open_errno;
	else if (max_size && st.st_size > max_size)
		ret = -EFBIG;
	else
		return 0;
	if (ret == -EINVAL)
		snprintf(err, errlen, "%s %s is %s, not a regular file", what, path,
			 xbd_file_kind(st.st_mode));
	else if (ret == -EFBIG)
		snprintf(err, errlen, "%s %s is %lld bytes, more than the limit of %lld", what, path,
			 (long long)st.st_size, (long long)max_size);
	else
		snprintf(err, errlen, "cannot read %s %s: %s", what, path, strerror(-ret));
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
	return ret;
}

bool xbd_byte_not_text(unsigned char c)
{
	return (c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7f;
}

int xbd_lines_gunzip(struct xbd_lines *r)
{
	unsigned char magic[2];
	ssize_t n = pread(r->fd, magic, sizeof(magic), 0);
	int fd;

	if (n < 0)
		return -errno;
	if (n < 2 || magic[0] != 0x1f || magic[1] != 0x8b)
		return 0;
	fd = dup(r->fd); /* gzclose closes it; the caller keeps its own */
	if (fd < 0)
		return -errno;
	r->gz = gzdopen(fd, "rb");
	if (!r->gz) {
		close(fd);
		return -ENOMEM;
	}
	return 0;
}

int xbd_lines_open(struct xbd_lines *r, int fd, size_t max_line, off_t max_size)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->max_line = max_line;
	r->max_size = max_size;
	/* a whole longest line, its '\n' and the NUL always fit after a compaction */
	r->cap = max_line + 2 > READ_CHUNK ? max_line + 2 + READ_CHUNK : READ_CHUNK;
	r->buf = malloc(r->cap);
	return r->buf ? 0 : -ENOMEM;
}

/* Moves the unread bytes to the front and reads more behind them. */
static int fill(struct xbd_lines *r)
{
	ssize_t n;

	memmove(r->buf, r->buf + r->off, r->len - r->off);
	r->len -= r->off;
	r->off = 0;
	if (r->gz) {
		int zerr = Z_OK;

		n = gzread(r->gz, r->buf + r->len, (unsigned int)(r->cap - 1 - r->len));
		if (n == 0)
			gzerror(r->gz, &zerr); /* a stream cut short ends without an error of its own */
		if (n < 0 || (zerr != Z_OK && zerr != Z_STREAM_END))
			return -EBADMSG;
	} else {
		do
			n = read(r->fd, r->buf + r->len, r->cap - 1 - r->len);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return -errno;
	}
	if (n == 0)
		r->eof = true;
	r->len += n;
	r->read += n;
	return r->max_size && r->read > r->max_size ? -EFBIG : 0;
}

static int take(struct xbd_lines *r, char *end, char **line, size_t *len)
{
	*line = r->buf + r->off;
	*len = end - *line;
	r->line++;
	if (*len > r->max_line)
		return -EMSGSIZE;
	*end = '\0';
	r->off = end - r->buf + (end < r->buf + r->len ? 1 : 0);
	return 1;
}

int xbd_lines_next(struct xbd_lines *r, char **line, size_t *len)
{
	for (;;) {
		char *start = r->buf + r->off;
		char *nl = memchr(start, '\n', r->len - r->off);
		int ret;

		if (nl)
			return take(r, nl, line, len);
		if (r->len - r->off > r->max_line) {
			r->line++;
			return -EMSGSIZE;
		}
		if (r->eof)
			return r->off == r->len ? 0 : take(r, r->buf + r->len, line, len);
		ret = fill(r);
		if (ret)
			return ret;
	}
}

void xbd_lines_close(struct xbd_lines *r)
{
	free(r->buf);
	r->buf = NULL;
	if (r->gz)
		gzclose(r->gz);
	r->gz = NULL;
}
