/* fleet_shared.c - see fleet_shared.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fleet_shared.h"

int xbd_fleet_password_read(const char *path, char *buf, size_t len, char *err, size_t errlen)
{
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), ret = 0;

	if (fd < 0 || fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "[fleet] password-file %s: %s", path, strerror(errno));
	} else if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 077)) {
		ret = -EPERM;
		snprintf(err, errlen, "[fleet] password-file %s: must be a regular file owned by root, mode 0600 or 0400",
			 path);
	} else if ((n = read(fd, buf, len - 1)) < 0) {
		ret = -errno;
		snprintf(err, errlen, "[fleet] password-file %s: %s", path, strerror(errno));
	} else {
		buf[n] = '\0';
		buf[strcspn(buf, "\r\n")] = '\0';
	}
	if (fd >= 0)
		close(fd);
	return ret;
}
