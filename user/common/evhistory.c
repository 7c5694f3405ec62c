/* evhistory.c - see evhistory.h. */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "control_fields.h"
#include "evhistory.h"
#include "files.h"
#include "log.h"

#define WHAT "the event history"
#define READ_CHUNK 65536

char *xbd_evhistory_path(const char *state_file, const char *name)
{
	const char *slash;
	char *path;

	if (!state_file || !name)
		return NULL;
	slash = strrchr(state_file, '/');
	if (asprintf(&path, "%.*s%s", slash ? (int)(slash - state_file + 1) : 0, state_file,
		     name) < 0)
		return NULL;
	return path;
}

static int write_nothing(FILE *f, void *ctx)
{
	return 0;
}

/* Made through the state file's atomic save, so that the file and its directory get the same
 * modes (0600 and 0700) and owner as the state file's. */
static int open_append(const char *path, int *fd, char *err, size_t errlen)
{
	struct stat st;
	int ret = 0;

	*fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (*fd < 0 && errno == ENOENT) {
		ret = xbd_file_save(path, WHAT, write_nothing, NULL, err, errlen);
		if (ret)
			return ret; /* said in err: "cannot save the event history to PATH: ..." */
		*fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	}
	if (*fd < 0 || fstat(*fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "cannot open %s %s: %s", WHAT, path, strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		snprintf(err, errlen, "%s %s is %s, not a regular file", WHAT, path,
			 xbd_file_kind(st.st_mode));
	}
	if (ret && *fd >= 0)
		close(*fd);
	if (ret)
		*fd = -1;
	return ret;
}

/* The lines of the file (its '\n's) and the length of its whole lines. 0 or -errno. */
static int count_lines(const char *path, __u32 *lines, off_t *whole, char *err, size_t errlen)
{
	char *buf = malloc(READ_CHUNK);
	off_t pos = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	*lines = 0;
	*whole = 0;
	if (fd < 0 || !buf) {
		int ret = fd < 0 ? -errno : -ENOMEM;

		snprintf(err, errlen, "cannot read %s %s: %s", WHAT, path, strerror(-ret));
		free(buf);
		if (fd >= 0)
			close(fd);
		return ret;
	}
	while ((n = read(fd, buf, READ_CHUNK)) > 0) {
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] == '\n') {
				(*lines)++;
				*whole = pos + i + 1;
			}
		pos += n;
	}
	if (n < 0)
		snprintf(err, errlen, "cannot read %s %s: %s", WHAT, path, strerror(errno));
	n = n < 0 ? -errno : 0;
	free(buf);
	close(fd);
	return (int)n;
}

/* The copy a trim writes: every line of from after the first skip ones. */
struct trim {
	int from;
	__u32 skip;
};

static int write_kept(FILE *f, void *ctx)
{
	struct trim *t = ctx;
	char *buf = malloc(READ_CHUNK);
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	while ((n = read(t->from, buf, READ_CHUNK)) > 0) {
		ssize_t i = 0;

		for (; t->skip && i < n; i++)
			if (buf[i] == '\n')
				t->skip--;
		if (i < n && fwrite(buf + i, 1, n - i, f) != (size_t)(n - i))
			break;
	}
	free(buf);
	return n < 0 ? -errno : ferror(f) ? -EIO : 0;
}

/* Drops the oldest quarter of the bound, and anything past it (a bound made smaller), by an
 * atomic rewrite: a crash leaves the old file or the new one. */
static int trim(struct xbd_evhistory *h, char *err, size_t errlen)
{
	__u32 keep = h->max_events - h->max_events / 4;
	struct trim t = { .skip = h->held - keep };
	int ret, fd;

	t.from = open(h->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (t.from < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot read %s %s: %s", WHAT, h->path, strerror(errno));
		return ret;
	}
	ret = xbd_file_save(h->path, WHAT, write_kept, &t, err, errlen);
	close(t.from);
	if (ret)
		return ret;
	ret = open_append(h->path, &fd, err, errlen);
	close(h->fd); /* the file it was open on is gone: never append there */
	h->fd = ret ? -1 : fd;
	h->held = keep;
	return ret;
}

int xbd_evhistory_open(struct xbd_evhistory *h, const char *path, __u32 max_events, char *err,
		       size_t errlen)
{
	off_t whole;
	struct stat st;
	int ret;

	*h = (struct xbd_evhistory){ .fd = -1, .max_events = max_events };
	h->path = strdup(path);
	if (!h->path) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = open_append(path, &h->fd, err, errlen);
	if (!ret)
		ret = count_lines(path, &h->held, &whole, err, errlen);
	if (!ret && !fstat(h->fd, &st) && st.st_size > whole) {
		pr_warn("%s %s: its last line is cut short (%lld bytes without an end of line, "
			"left by a crash): dropped", WHAT, path, (long long)(st.st_size - whole));
		if (ftruncate(h->fd, whole)) {
			ret = -errno;
			snprintf(err, errlen, "cannot cut the torn last line off %s %s: %s", WHAT,
				 path, strerror(errno));
		}
	}
	if (!ret && h->held > max_events)
		ret = trim(h, err, errlen);
	if (ret)
		xbd_evhistory_close(h);
	return ret;
}

/* Puts the file back as it was before a write that failed midway: a torn line would glue the
 * next one onto it. */
static int write_line(int fd, const char *line, size_t len)
{
	off_t end = lseek(fd, 0, SEEK_END);
	ssize_t n;
	int ret;

	do
		n = write(fd, line, len);
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)len)
		return 0;
	ret = n < 0 ? -errno : -ENOSPC; /* a short write: the disk is full */
	if (end >= 0 && ftruncate(fd, end))
		pr_warn("%s: cannot remove a line written in part: %s", WHAT, strerror(errno));
	return ret;
}

int xbd_evhistory_append(struct xbd_evhistory *h, const char *line)
{
	size_t len = strlen(line);
	char *text = malloc(len + 1), err[XBD_LOG_LINE_MAX];
	int ret;

	if (!h->path || h->fd < 0)
		return 0;
	if (!text)
		return -ENOMEM;
	memcpy(text, line, len);
	text[len] = '\n';
	ret = write_line(h->fd, text, len + 1);
	free(text);
	if (ret) {
		if (!h->failing)
			pr_warn("cannot append to %s %s: %s (said once, until it works again)", WHAT,
				h->path, strerror(-ret));
		h->failing = true;
		return ret;
	}
	if (h->failing)
		pr_info("appending to %s %s again", WHAT, h->path);
	h->failing = false;
	if (++h->held <= h->max_events)
		return 0;
	ret = trim(h, err, sizeof(err));
	if (ret)
		pr_warn("%s", err);
	return ret;
}

void xbd_evhistory_close(struct xbd_evhistory *h)
{
	if (!h->path)
		return; /* never opened: fd may be 0 of a zeroed struct */
	if (h->fd >= 0)
		close(h->fd);
	free(h->path);
	*h = (struct xbd_evhistory){ .fd = -1 };
}

int xbd_evpick_init(struct xbd_evpick *pick, time_t since, size_t keep)
{
	*pick = (struct xbd_evpick){ .since = since, .keep = keep };
	pick->events = json_object_new_array();
	return pick->events ? 0 : -ENOMEM;
}

/* The object of one whole line: junk after it, or before it, makes it no event. */
static struct json_object *parse_whole(const char *line, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *o;

	if (!tok || len > INT_MAX)
		return NULL;
	o = json_tokener_parse_ex(tok, line, (int)len);
	if (o && (json_tokener_get_error(tok) != json_tokener_success ||
		  json_tokener_get_parse_end(tok) != len || !json_object_is_type(o, json_type_object))) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

int xbd_evpick_line(struct xbd_evpick *pick, const char *line, size_t len)
{
	struct json_object *o = parse_whole(line, len), *t;

	pick->lines++;
	pick->last_bad = false;
	if (!o || !json_object_object_get_ex(o, XB_F(TIME_UNIX), &t) ||
	    !json_object_is_type(t, json_type_int)) {
		if (!pick->bad++)
			pick->first_bad = pick->lines;
		pick->last_bad = true;
		json_object_put(o);
		return 0;
	}
	if (json_object_get_int64(t) < (int64_t)pick->since) {
		json_object_put(o);
		return 0;
	}
	if (json_object_array_add(pick->events, o)) {
		json_object_put(o);
		return -ENOMEM;
	}
	if (pick->keep && json_object_array_length(pick->events) > pick->keep)
		json_object_array_del_idx(pick->events, 0, 1);
	return 0;
}

struct json_object *xbd_evpick_take(struct xbd_evpick *pick)
{
	struct json_object *events = pick->events;

	pick->events = NULL;
	return events;
}

void xbd_evpick_free(struct xbd_evpick *pick)
{
	json_object_put(pick->events);
	pick->events = NULL;
}

static int read_lines(int fd, const char *path, struct xbd_evpick *pick, char *err,
		      size_t errlen)
{
	struct xbd_lines r;
	size_t len;
	char *line;
	int ret = xbd_lines_open(&r, fd, XBD_EVHISTORY_LINE_MAX, 0);

	while (!ret && (ret = xbd_lines_next(&r, &line, &len)) == 1)
		ret = xbd_evpick_line(pick, line, len);
	if (ret == -EMSGSIZE) {
		pr_warn("%s %s: line %u is longer than %d bytes: the lines after it are left out",
			WHAT, path, r.line, XBD_EVHISTORY_LINE_MAX);
		ret = 0;
	} else if (ret) {
		snprintf(err, errlen, "cannot read %s %s: %s", WHAT, path, strerror(-ret));
	}
	xbd_lines_close(&r);
	return ret;
}

/* The file does not end with '\n': a crash cut its last line short. */
static bool ends_torn(int fd)
{
	struct stat st;
	char last;

	return !fstat(fd, &st) && st.st_size > 0 && pread(fd, &last, 1, st.st_size - 1) == 1 &&
	       last != '\n';
}

/* One warning for the torn last line, one for the other lines skipped. */
static void warn_skipped(const char *path, const struct xbd_evpick *pick, bool torn)
{
	unsigned int bad = pick->bad;

	if (torn && pick->last_bad) {
		pr_warn("%s %s: its last line (%u) is cut short, left by a crash: skipped", WHAT,
			path, pick->lines);
		bad--;
	}
	if (bad)
		pr_warn("%s %s: %u %s, skipped (the first: line %u)", WHAT, path, bad,
			bad == 1 ? "line is not an event" : "lines are not events", pick->first_bad);
}

int xbd_evhistory_read(const char *path, struct xbd_evpick *pick, char *err, size_t errlen)
{
	int fd, ret = xbd_open_regular(path, WHAT, 0, &fd, err, errlen);
	bool torn;

	if (ret == -ENOENT)
		return 0;
	if (ret)
		return ret;
	torn = ends_torn(fd);
	ret = read_lines(fd, path, pick, err, errlen);
	close(fd);
	if (!ret)
		warn_skipped(path, pick, torn);
	return ret;
}
