/* files.c - see files.h. The only reads are read(2) on a regular file, which never waits
 * for a writer; the buffer is fixed, so a line with no end costs max_line bytes, not the file. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <sys/stat.h>
#include "files.h"

#define READ_CHUNK 65536
#define ASIDE_PER_SECOND_MAX 100 /* copies of one file set aside in one second */

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

static int kind_error(const char *name, const char *what, const struct stat *st, char *err,
		      size_t errlen)
{
	snprintf(err, errlen, "%s %s is %s, not a regular file", what, name,
		 xbd_file_kind(st->st_mode));
	return -EINVAL;
}

int xbd_fd_regular(int fd, const char *name, const char *what, off_t max_size, char *err,
		   size_t errlen)
{
	struct stat st;
	int ret;

	if (fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "cannot read %s %s: %s", what, name, strerror(-ret));
		return ret;
	}
	if (!S_ISREG(st.st_mode))
		return kind_error(name, what, &st, err, errlen);
	if (max_size && st.st_size > max_size) {
		snprintf(err, errlen, "%s %s is %lld bytes, more than the limit of %lld", what,
			 name, (long long)st.st_size, (long long)max_size);
		return -EFBIG;
	}
	return 0;
}

/* O_NONBLOCK keeps the open from waiting on a FIFO; it changes nothing for a regular file. A
 * socket cannot be opened at all: its kind comes from stat. */
int xbd_open_read(const char *path, const char *what, int *fd, char *err, size_t errlen)
{
	struct stat st;
	int ret;

	*fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (*fd >= 0)
		return 0;
	ret = -errno;
	if (!stat(path, &st) && !S_ISREG(st.st_mode))
		return kind_error(path, what, &st, err, errlen);
	snprintf(err, errlen, "cannot read %s %s: %s", what, path, strerror(-ret));
	return ret;
}

int xbd_open_regular(const char *path, const char *what, off_t max_size, int *fd, char *err,
		     size_t errlen)
{
	int ret = xbd_open_read(path, what, fd, err, errlen);

	if (!ret)
		ret = xbd_fd_regular(*fd, path, what, max_size, err, errlen);
	if (ret && *fd >= 0)
		close(*fd);
	if (ret)
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

/* ---- saving ---- */

static int ensure_dir(const char *path)
{
	char dir[PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

static void fsync_dir(const char *path)
{
	char dir[PATH_MAX];
	char *slash;
	int fd;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		slash[slash == dir ? 1 : 0] = '\0';
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

/* The temporary file as a stream that keeps the errno of a failed write: stdio only says
 * that a write failed, and a full disk must be reported as ENOSPC, not as EIO. */
struct sink {
	int fd;
	int err;
};

static ssize_t sink_write(void *cookie, const char *buf, size_t n)
{
	struct sink *s = cookie;
	size_t done = 0;

	while (done < n) {
		ssize_t w = write(s->fd, buf + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			s->err = w < 0 ? errno : EIO;
			return done ? (ssize_t)done : -1;
		}
		done += w;
	}
	return n;
}

/* Writes everything into fd and flushes it to disk: 0 or -errno, the write's own. */
static int write_synced(int fd, int (*write_fn)(FILE *f, void *ctx), void *ctx)
{
	static const cookie_io_functions_t io = { .write = sink_write };
	struct sink sink = { .fd = fd };
	FILE *f = fopencookie(&sink, "w", io);
	int ret;

	if (!f)
		return -errno;
	ret = write_fn(f, ctx);
	if (fclose(f) && !ret)
		ret = -EIO;
	if (sink.err)
		ret = -sink.err;
	if (!ret && fsync(fd))
		ret = -errno;
	return ret;
}

int xbd_file_save(const char *path, const char *what, int (*write_fn)(FILE *f, void *ctx),
		  void *ctx, char *err, size_t errlen)
{
	char tmp[PATH_MAX];
	int fd, ret;

	ret = ensure_dir(path);
	if (ret || snprintf(tmp, sizeof(tmp), "%s.tmp-XXXXXX", path) >= (int)sizeof(tmp)) {
		snprintf(err, errlen, "cannot save %s to %s: %s", what, path,
			 strerror(ret ? -ret : ENAMETOOLONG));
		return ret ?: -ENAMETOOLONG;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
		return ret;
	}
	ret = write_synced(fd, write_fn, ctx);
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret) {
		snprintf(err, errlen, "cannot save %s to %s: %s", what, path, strerror(-ret));
		unlink(tmp);
		return ret;
	}
	fsync_dir(path);
	return 0;
}

void xbd_file_set_aside(const char *path, const char *what, char *err, size_t errlen,
			const char *why)
{
	char aside[PATH_MAX], stamp[32];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(aside, sizeof(aside), "%s.corrupt-%s", path, stamp);
	/* Never over an earlier copy: a second corrupt file in the same second gets "-2", ... */
	for (int n = 2; renameat2(AT_FDCWD, path, AT_FDCWD, aside, RENAME_NOREPLACE); n++) {
		if (errno == EEXIST && n <= ASIDE_PER_SECOND_MAX) {
			snprintf(aside, sizeof(aside), "%s.corrupt-%s-%d", path, stamp, n);
			continue;
		}
		if (errno == EINVAL && !rename(path, aside)) /* no RENAME_NOREPLACE here */
			break;
		snprintf(err, errlen, "%s %s: %s; cannot move it aside (%s), ignoring it",
			 what, path, why, strerror(errno));
		return;
	}
	snprintf(err, errlen, "%s %s: %s; moved aside to %s, starting without it", what, path, why,
		 aside);
}
