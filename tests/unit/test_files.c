/* test_files.c - how the daemon opens, reads and writes its files (user/common/files.h), on
 * files in a scratch directory: the bounded line reader numbers its lines, takes a last line
 * without '\n', refuses a line past its limit with that line's number and a file that grew
 * past its size, and hands NUL bytes back for the caller, whose test xbd_byte_not_text is;
 * a gzipped file reads the same lines as the plain one, and corrupt or cut gzip data is
 * refused; only regular files open (a directory, a FIFO, a socket, a link to a directory are
 * named as such, a link to a file is followed, a file over the size limit is refused), and a
 * file sent open is held to the same rules under the name it came with; a save
 * leaves the old file or the new one, never a part or a temporary file; a corrupt file is
 * moved aside. No kernel, no root.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <zlib.h>
#include <cmocka.h>
#include "files.h"
#include "libxdpban.h"
#include "tmpdir.h"

/* Opens path and reads every line into out joined by '|'; the return of the last
 * xbd_lines_next (0 at the end), the reader's line number in *line_no. */
static int read_all(const char *path, size_t max_line, off_t max_size, bool gunzip, char *out,
		    size_t outlen, unsigned int *line_no)
{
	struct xbd_lines r;
	char *line;
	size_t len, used = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	assert_true(fd >= 0);
	assert_int_equal(xbd_lines_open(&r, fd, max_line, max_size), 0);
	if (gunzip)
		assert_int_equal(xbd_lines_gunzip(&r), 0);
	out[0] = '\0';
	while ((ret = xbd_lines_next(&r, &line, &len)) > 0) {
		assert_int_equal(strlen(line), len);
		used += snprintf(out + used, outlen - used, "%s%s", used ? "|" : "", line);
		assert_true(used < outlen);
	}
	*line_no = r.line;
	xbd_lines_close(&r);
	close(fd);
	return ret;
}

static void lines_are_numbered_and_a_last_line_needs_no_newline(void **state)
{
	char path[PATH_MAX], got[256];
	unsigned int n;

	assert_int_equal(tmpdir_write_text(*state, "l", "one\ntwo\n\r\n\nlast", path), 0);
	assert_int_equal(read_all(path, 16, 0, false, got, sizeof(got), &n), 0);
	assert_string_equal(got, "one|two|\r||last");
	assert_int_equal(n, 5);
	assert_int_equal(tmpdir_write_text(*state, "e", "", path), 0);
	assert_int_equal(read_all(path, 16, 0, false, got, sizeof(got), &n), 0);
	assert_string_equal(got, "");
	assert_int_equal(n, 0);
}

static void line_longer_than_the_limit_is_refused_with_its_number(void **state)
{
	char path[PATH_MAX], got[256], *big;
	unsigned int n;

	/* four bytes is the limit: "abcd" is taken, "abcde" on line 3 is not */
	assert_int_equal(tmpdir_write_text(*state, "l", "ab\nabcd\nabcde\nx\n", path), 0);
	assert_int_equal(read_all(path, 4, 0, false, got, sizeof(got), &n), -EMSGSIZE);
	assert_string_equal(got, "ab|abcd");
	assert_int_equal(n, 3);
	/* a line with no end, far longer than a read: refused without reading it all */
	big = malloc(300000);
	assert_non_null(big);
	memset(big, 'x', 300000);
	memcpy(big, "a\n", 2);
	assert_int_equal(tmpdir_write(*state, "big", big, 300000, path), 0);
	free(big);
	assert_int_equal(read_all(path, 1024, 0, false, got, sizeof(got), &n), -EMSGSIZE);
	assert_string_equal(got, "a");
	assert_int_equal(n, 2);
}

static void file_past_its_size_is_refused(void **state)
{
	char path[PATH_MAX], got[256];
	unsigned int n;

	assert_int_equal(tmpdir_write_text(*state, "l", "0123456789\n0123456789\n", path), 0);
	assert_int_equal(read_all(path, 64, 21, false, got, sizeof(got), &n), -EFBIG);
	assert_int_equal(read_all(path, 64, 22, false, got, sizeof(got), &n), 0);
	assert_string_equal(got, "0123456789|0123456789");
}

/* The reader hands a NUL back inside the line; the callers refuse it with xbd_byte_not_text. */
static void nul_bytes_come_back_and_control_bytes_are_not_text(void **state)
{
	static const char data[] = "a\0b\nok\n";
	static const unsigned char not_text[] = { 0x00, 0x01, 0x08, 0x0b, 0x0c, 0x1b, 0x1f, 0x7f };
	static const unsigned char text[] = { '\t', '\n', '\r', ' ', 'a', '~', 0x80, 0xc3, 0xff };
	char path[PATH_MAX], *line;
	struct xbd_lines r;
	size_t len;
	int fd;

	assert_int_equal(tmpdir_write(*state, "nul", data, sizeof(data) - 1, path), 0);
	fd = open(path, O_RDONLY);
	assert_int_equal(xbd_lines_open(&r, fd, 16, 0), 0);
	assert_int_equal(xbd_lines_next(&r, &line, &len), 1);
	assert_int_equal(len, 3);
	assert_memory_equal(line, "a\0b", 3);
	assert_true(xbd_byte_not_text((unsigned char)line[1]));
	assert_int_equal(xbd_lines_next(&r, &line, &len), 1);
	assert_string_equal(line, "ok");
	assert_int_equal(xbd_lines_next(&r, &line, &len), 0);
	xbd_lines_close(&r);
	close(fd);
	for (size_t i = 0; i < sizeof(not_text); i++)
		assert_true(xbd_byte_not_text(not_text[i]));
	for (size_t i = 0; i < sizeof(text); i++)
		assert_false(xbd_byte_not_text(text[i]));
}

static void gzip(const struct tmpdir *d, const char *name, const char *text, char *path)
{
	gzFile gz = gzopen(tmpdir_path(d, name, path), "wb");

	assert_non_null(gz);
	assert_int_equal(gzwrite(gz, text, (unsigned int)strlen(text)), (int)strlen(text));
	assert_int_equal(gzclose(gz), Z_OK);
}

static void gzipped_file_reads_the_same_lines_as_the_plain_one(void **state)
{
	static const char text[] = "# a list\n192.0.2.0/24\n\n2001:db8::/32 ; doc\nlast";
	char plain[PATH_MAX], gz[PATH_MAX], a[256], b[256];
	unsigned int na, nb;

	assert_int_equal(tmpdir_write_text(*state, "plain", text, plain), 0);
	gzip(*state, "z.gz", text, gz);
	/* gunzip on a plain file changes nothing */
	assert_int_equal(read_all(plain, 64, 0, true, a, sizeof(a), &na), 0);
	assert_int_equal(read_all(gz, 64, 0, true, b, sizeof(b), &nb), 0);
	assert_string_equal(a, "# a list|192.0.2.0/24||2001:db8::/32 ; doc|last");
	assert_string_equal(b, a);
	assert_int_equal(nb, na);
	/* max_size bounds the decompressed bytes, and the line limit holds inside gzip too */
	assert_int_equal(read_all(gz, 64, 20, true, b, sizeof(b), &nb), -EFBIG);
	assert_int_equal(read_all(gz, 12, 0, true, b, sizeof(b), &nb), -EMSGSIZE);
	assert_int_equal(nb, 4); /* "2001:db8::/32 ; doc" */
}

static void corrupt_or_cut_gzip_is_refused(void **state)
{
	char path[PATH_MAX], got[256], *data;
	unsigned int n;
	struct stat st;
	FILE *f;

	gzip(*state, "z.gz", "192.0.2.1\n192.0.2.2\n192.0.2.3\n", path);
	assert_int_equal(stat(path, &st), 0);
	data = malloc(st.st_size);
	f = fopen(path, "rb");
	assert_int_equal(fread(data, 1, st.st_size, f), st.st_size);
	fclose(f);
	/* the deflate data garbled after the header */
	memset(data + 12, 0xff, 6);
	assert_int_equal(tmpdir_write(*state, "bad.gz", data, st.st_size, path), 0);
	assert_int_equal(read_all(path, 64, 0, true, got, sizeof(got), &n), -EBADMSG);
	/* the stream cut before its end: no line of it is trusted whole */
	gzip(*state, "z.gz", "192.0.2.1\n192.0.2.2\n192.0.2.3\n", path);
	f = fopen(path, "rb");
	assert_int_equal(fread(data, 1, st.st_size, f), st.st_size);
	fclose(f);
	assert_int_equal(tmpdir_write(*state, "cut.gz", data, st.st_size - 10, path), 0);
	assert_int_equal(read_all(path, 64, 0, true, got, sizeof(got), &n), -EBADMSG);
	free(data);
}

/* xbd_open_regular's message for path, with the return in *ret. */
static const char *open_message(const char *path, off_t max, int *ret)
{
	static char err[XB_ERRLEN];
	int fd = 123;

	err[0] = '\0';
	*ret = xbd_open_regular(path, "list", max, &fd, err, sizeof(err));
	if (*ret)
		assert_int_equal(fd, -1);
	else
		close(fd);
	return err;
}

static void only_regular_files_open(void **state)
{
	const struct tmpdir *d = *state;
	char file[PATH_MAX], path[PATH_MAX], want[3 * PATH_MAX];
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int ret, s;

	assert_int_equal(tmpdir_write_text(d, "f", "192.0.2.1\n", file), 0);
	assert_string_equal(open_message(file, 0, &ret), "");
	assert_int_equal(ret, 0);
	assert_string_equal(open_message(file, 10, &ret), "");
	snprintf(want, sizeof(want), "list %s is 10 bytes, more than the limit of 9", file);
	assert_string_equal(open_message(file, 9, &ret), want);
	assert_int_equal(ret, -EFBIG);

	snprintf(want, sizeof(want), "list %s is a directory, not a regular file", d->path);
	assert_string_equal(open_message(d->path, 0, &ret), want);
	assert_int_equal(ret, -EINVAL);

	assert_int_equal(mkfifo(tmpdir_path(d, "fifo", path), 0600), 0);
	snprintf(want, sizeof(want), "list %s is a FIFO, not a regular file", path);
	assert_string_equal(open_message(path, 0, &ret), want); /* returns: no writer waited for */
	assert_int_equal(ret, -EINVAL);

	tmpdir_path(d, "sock", sun.sun_path);
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(s, (struct sockaddr *)&sun, sizeof(sun)), 0);
	snprintf(want, sizeof(want), "list %s is a socket, not a regular file", sun.sun_path);
	assert_string_equal(open_message(sun.sun_path, 0, &ret), want);
	assert_int_equal(ret, -EINVAL);
	close(s);

	/* a link is followed: to a file it opens, to a directory it is the directory */
	assert_int_equal(symlink(file, tmpdir_path(d, "to-file", path)), 0);
	assert_string_equal(open_message(path, 0, &ret), "");
	assert_int_equal(ret, 0);
	assert_int_equal(symlink(d->path, tmpdir_path(d, "to-dir", path)), 0);
	snprintf(want, sizeof(want), "list %s is a directory, not a regular file", path);
	assert_string_equal(open_message(path, 0, &ret), want);

	snprintf(want, sizeof(want), "cannot read list %s: No such file or directory",
		 tmpdir_path(d, "missing", path));
	assert_string_equal(open_message(path, 0, &ret), want);
	assert_int_equal(ret, -ENOENT);
}

/* A file a client sent open is held to the same rules under the name it was sent with; a FIFO
 * is opened by name without a check and without waiting, for the reader to refuse. */
static void files_sent_open_are_checked(void **state)
{
	const struct tmpdir *d = *state;
	char err[XB_ERRLEN], file[PATH_MAX], path[PATH_MAX];
	int p[2], fd;

	assert_int_equal(pipe(p), 0);
	assert_int_equal(xbd_fd_regular(p[0], "<stdin>", "list", 0, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "list <stdin> is a FIFO, not a regular file");
	close(p[0]);
	close(p[1]);
	assert_int_equal(tmpdir_write_text(d, "f", "192.0.2.1\n", file), 0);
	fd = open(file, O_RDONLY);
	assert_int_equal(xbd_fd_regular(fd, "<stdin>", "list", 0, err, sizeof(err)), 0);
	assert_int_equal(xbd_fd_regular(fd, "<stdin>", "list", 9, err, sizeof(err)), -EFBIG);
	assert_string_equal(err, "list <stdin> is 10 bytes, more than the limit of 9");
	close(fd);
	assert_int_equal(mkfifo(tmpdir_path(d, "fifo", path), 0600), 0);
	assert_int_equal(xbd_open_read(path, "list", &fd, err, sizeof(err)), 0);
	assert_int_equal(xbd_fd_regular(fd, path, "list", 0, err, sizeof(err)), -EINVAL);
	close(fd);
	assert_int_equal(xbd_open_read(tmpdir_path(d, "missing", path), "list", &fd, err,
				       sizeof(err)),
			 -ENOENT);
	assert_int_equal(fd, -1);
}

static int write_text(FILE *f, void *ctx)
{
	fputs(ctx, f);
	return 0;
}

/* Writes half, then fails as a full disk would. */
static int write_half_then_fail(FILE *f, void *ctx)
{
	fputs("new first line\n", f);
	return -ENOSPC;
}

static void save_leaves_the_old_file_or_the_new_one(void **state)
{
	const struct tmpdir *d = *state;
	char path[PATH_MAX], dir[PATH_MAX], err[XB_ERRLEN] = "", want[3 * PATH_MAX], got[256];
	struct tmpdir sub = {};
	unsigned int n;
	struct stat st;

	/* the directory is made, mode 0700, and the file holds what was written */
	snprintf(path, sizeof(path), "%s/state", tmpdir_path(d, "sub", dir));
	assert_int_equal(xbd_file_save(path, "state", write_text, "old\n", err, sizeof(err)), 0);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(read_all(path, 64, 0, false, got, sizeof(got), &n), 0);
	assert_string_equal(got, "old");
	/* a failed write leaves the old file and no temporary one */
	assert_int_equal(xbd_file_save(path, "state", write_half_then_fail, NULL, err,
				       sizeof(err)), -ENOSPC);
	snprintf(want, sizeof(want), "cannot save state to %s: No space left on device", path);
	assert_string_equal(err, want);
	assert_int_equal(read_all(path, 64, 0, false, got, sizeof(got), &n), 0);
	assert_string_equal(got, "old");
	/* and a good one replaces it whole */
	assert_int_equal(xbd_file_save(path, "state", write_text, "new\nsecond\n", err,
				       sizeof(err)), 0);
	assert_int_equal(read_all(path, 64, 0, false, got, sizeof(got), &n), 0);
	assert_string_equal(got, "new|second");
	snprintf(sub.path, sizeof(sub.path), "%.240s/sub", d->path);
	assert_int_equal(tmpdir_count(&sub, "state.tmp-"), 0);
	assert_int_equal(tmpdir_count(&sub, "state"), 1);
}

static void corrupt_file_is_moved_aside(void **state)
{
	const struct tmpdir *d = *state;
	char path[PATH_MAX], err[XB_ERRLEN], want[3 * PATH_MAX], *aside;

	assert_int_equal(tmpdir_write_text(d, "state", "garbage\n", path), 0);
	xbd_file_set_aside(path, "state file", err, sizeof(err), "line 1: not a state file");
	snprintf(want, sizeof(want), "state file %s: line 1: not a state file; moved aside to %s.corrupt-",
		 path, path);
	assert_memory_equal(err, want, strlen(want));
	assert_true(strstr(err, ", starting without it") != NULL);
	aside = strstr(err, "moved aside to ") + strlen("moved aside to ");
	*strchr(aside, ',') = '\0';
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(access(aside, R_OK), 0);
	assert_int_equal(tmpdir_count(d, "state.corrupt-2"), 1);
	/* two more in the same second (or the next): every copy kept, none over another */
	assert_int_equal(tmpdir_write_text(d, "state", "second\n", path), 0);
	xbd_file_set_aside(path, "state file", err, sizeof(err), "bad");
	assert_int_equal(tmpdir_write_text(d, "state", "third\n", path), 0);
	xbd_file_set_aside(path, "state file", err, sizeof(err), "bad");
	assert_int_equal(tmpdir_count(d, "state.corrupt-"), 3);
	/* nothing there to move: said so, and nothing made */
	xbd_file_set_aside(path, "state file", err, sizeof(err), "bad");
	snprintf(want, sizeof(want),
		 "state file %s: bad; cannot move it aside (No such file or directory), ignoring it",
		 path);
	assert_string_equal(err, want);
	assert_int_equal(tmpdir_count(d, "state.corrupt-"), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(lines_are_numbered_and_a_last_line_needs_no_newline,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(line_longer_than_the_limit_is_refused_with_its_number,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(file_past_its_size_is_refused, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(nul_bytes_come_back_and_control_bytes_are_not_text,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(gzipped_file_reads_the_same_lines_as_the_plain_one,
						tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(corrupt_or_cut_gzip_is_refused, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(only_regular_files_open, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test_setup_teardown(files_sent_open_are_checked, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(save_leaves_the_old_file_or_the_new_one, tmpdir_setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(corrupt_file_is_moved_aside, tmpdir_setup, tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
