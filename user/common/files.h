/* files.h - how the daemon opens and reads the files it is given (the config file, the list
 * files, those a client sends open among them, the state file): regular files only, opened without blocking (a FIFO or a device is
 * refused before a byte is read), at most a given size, and line by line with a bounded line
 * length, so that no file can hang the daemon or make it grow without limit. It only reads;
 * what a line means is the caller's business. */
#ifndef XDPBAND_FILES_H
#define XDPBAND_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* "a directory", "a device", "a FIFO", "a socket" or "a special file". */
const char *xbd_file_kind(mode_t mode);

/* Opens path read-only, without waiting (O_NONBLOCK: a FIFO with no writer is not waited for)
 * and refuses anything but a regular file of at most max_size bytes (0: any size), with one
 * line in err: "WHAT PATH is a FIFO, not a regular file", "WHAT PATH is N bytes, more than
 * the limit of M", or "cannot read WHAT PATH: ...". 0 and *fd, or -errno. */
int xbd_open_regular(const char *path, const char *what, off_t max_size, int *fd, char *err,
		     size_t errlen);
/* The open alone, for a file that is read elsewhere (the CLI's list files, which the daemon
 * reads from the descriptor and checks with xbd_fd_regular): what it is is not checked, a
 * failed open is said as xbd_open_regular says it. */
int xbd_open_read(const char *path, const char *what, int *fd, char *err, size_t errlen);
/* The check of xbd_open_regular on a file open already (one a client sent), named name in
 * err. fd stays the caller's. 0 or -errno. */
int xbd_fd_regular(int fd, const char *name, const char *what, off_t max_size, char *err,
		   size_t errlen);

/* A byte no text file holds: NUL and the other control characters except tab, CR and LF,
 * and DEL. Bytes from 0x80 up are text (UTF-8 in comments). */
bool xbd_byte_not_text(unsigned char c);

/* Reads an open file line by line through a fixed buffer. */
struct xbd_lines {
	int fd;
	size_t max_line;  /* longest line accepted, in bytes, not counting its '\n' */
	off_t max_size;   /* stop with -EFBIG past this many bytes (the file grew); 0: none */
	unsigned int line; /* number of the line returned last, or of the line that failed */
	off_t read;        /* bytes read so far */
	char *buf;
	size_t len, off, cap;
	bool eof;
	struct gzFile_s *gz; /* reading through zlib (xbd_lines_gunzip), or NULL */
};

/* Starts reading fd (which stays the caller's to close). 0 or -ENOMEM. */
int xbd_lines_open(struct xbd_lines *r, int fd, size_t max_line, off_t max_size);
/* The next line, without its '\n' and NUL-terminated in place (*len excludes the NUL; the
 * line may hold NUL bytes of its own, which the caller checks). 1 for a line, 0 at the end,
 * -EMSGSIZE for a line longer than max_line (r->line is its number), -EFBIG when the file
 * grew past max_size, or the read's -errno. A last line without '\n' is a line. */
int xbd_lines_next(struct xbd_lines *r, char **line, size_t *len);
/* Right after xbd_lines_open: if the file starts with gzip's magic bytes, its lines are read
 * from the decompressed data (max_size then bounds that). 0, or -errno; corrupt gzip data
 * later makes xbd_lines_next return -EBADMSG. */
int xbd_lines_gunzip(struct xbd_lines *r);
void xbd_lines_close(struct xbd_lines *r);

/* Writes a file atomically: write_fn (0 or -errno) fills a temporary file in the same
 * directory (made, mode 0700, if missing), which is synced and renamed over path. 0, or -errno
 * with "cannot save WHAT to PATH: ..." in err; path is then as it was. */
int xbd_file_save(const char *path, const char *what, int (*write_fn)(FILE *f, void *ctx),
		  void *ctx, char *err, size_t errlen);
/* Moves a corrupt file to PATH.corrupt-TIMESTAMP, kept for a look but never read again; err
 * says "WHAT PATH: WHY; moved aside to ...". */
void xbd_file_set_aside(const char *path, const char *what, char *err, size_t errlen,
			const char *why);

#endif /* XDPBAND_FILES_H */
