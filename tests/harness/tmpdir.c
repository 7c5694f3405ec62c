/* tmpdir.c - see tmpdir.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tmpdir.h"

int tmpdir_make(struct tmpdir *d)
{
	const char *base = getenv("TMPDIR");

	snprintf(d->path, sizeof(d->path), "%s/xdpban-unit-XXXXXX", base && *base ? base : "/tmp");
	return mkdtemp(d->path) ? 0 : -errno;
}

char *tmpdir_path(const struct tmpdir *d, const char *name, char *out)
{
	snprintf(out, PATH_MAX, "%s/%s", d->path, name);
	return out;
}

int tmpdir_write(const struct tmpdir *d, const char *name, const void *data, size_t len,
		 char *out)
{
	char path[PATH_MAX];
	int fd = open(tmpdir_path(d, name, path), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, data, len);
	if (close(fd) || n != (ssize_t)len)
		return n < 0 ? -errno : -EIO;
	if (out)
		snprintf(out, PATH_MAX, "%s", path);
	return 0;
}

int tmpdir_write_text(const struct tmpdir *d, const char *name, const char *text, char *out)
{
	return tmpdir_write(d, name, text, strlen(text), out);
}

int tmpdir_count(const struct tmpdir *d, const char *prefix)
{
	DIR *dir = opendir(d->path);
	struct dirent *e;
	int n = 0;

	if (!dir)
		return -errno;
	while ((e = readdir(dir)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(dir);
	return n;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path) && errno != ENOENT ? -1 : 0;
}

void tmpdir_remove(struct tmpdir *d)
{
	if (d->path[0])
		nftw(d->path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	d->path[0] = '\0';
}

int tmpdir_setup(void **state)
{
	struct tmpdir *d = calloc(1, sizeof(*d));

	*state = d;
	return !d || tmpdir_make(d);
}

int tmpdir_teardown(void **state)
{
	if (*state)
		tmpdir_remove(*state);
	free(*state);
	return 0;
}
