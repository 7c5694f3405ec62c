/* pin.c - see pin.h. The lock is an flock on the directory itself, as xdp-tools does: it goes
 * away with the process, so a crashed daemon never leaves a stale lock behind. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include "pin.h"

int xbd_pin_path(char *buf, size_t len, const char *dir, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", dir, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int check_bpffs(int fd, const char *dir, char *err, size_t errlen)
{
	struct statfs st;

	if (fstatfs(fd, &st)) {
		snprintf(err, errlen, "cannot stat pin directory %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (st.f_type != BPF_FS_MAGIC) {
		snprintf(err, errlen, "pin directory %s is not on a BPF filesystem (mount -t bpf bpf /sys/fs/bpf)",
			 dir);
		return -EINVAL;
	}
	return 0;
}

int xbd_pin_lock(struct xbd_pin_lock *lock, const char *dir, char *err, size_t errlen)
{
	int fd, ret;

	lock->fd = -1;
	if (mkdir(dir, 0700) && errno != EEXIST) {
		ret = -errno;
		snprintf(err, errlen, "cannot create pin directory %s: %s", dir, strerror(errno));
		return ret;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot open pin directory %s: %s", dir, strerror(errno));
		return ret;
	}
	ret = check_bpffs(fd, dir, err, errlen);
	if (ret)
		goto fail;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		ret = -errno;
		if (errno == EWOULDBLOCK)
			snprintf(err, errlen,
				 "another xdpband already runs on %s (its lock is held); stop it first",
				 dir);
		else
			snprintf(err, errlen, "cannot lock pin directory %s: %s", dir,
				 strerror(errno));
		goto fail;
	}
	lock->fd = fd;
	return 0;
fail:
	close(fd);
	return ret;
}

void xbd_pin_unlock(struct xbd_pin_lock *lock)
{
	if (lock->fd >= 0)
		close(lock->fd); /* releases the flock */
	lock->fd = -1;
}
