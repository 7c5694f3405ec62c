/* frame.h - the frame of the daemon's line-based files (the state file, state.h; the runtime
 * lists' store, runlists.h): a first line "MAGIC VERSION", the records, and a last line
 * "end N" with the number of records, so that a file cut short is recognised. It writes the
 * two lines and tells them apart from the records when reading; what a record means, and the
 * message that names what was wrong, are the file's own. It never reads a record. */
#ifndef XDPBAND_FRAME_H
#define XDPBAND_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct xbd_frame {
	const char *magic; /* the first word of the first line */
	int version;       /* its second word */
	/* Reading: */
	size_t records;    /* the records the file's parser has counted so far */
	bool ended;        /* the end line came */
};

/* "MAGIC VERSION\n". */
void xbd_frame_write_header(FILE *f, const struct xbd_frame *fr);
/* "end RECORDS\n". */
void xbd_frame_write_end(FILE *f, size_t records);

/* What a line of the file is to the frame. */
enum xbd_frame_line {
	XBD_FRAME_RECORD,     /* a record: the file's parser reads it, and counts it in records */
	XBD_FRAME_EDGE,       /* the first line or the end line, as they should be */
	XBD_FRAME_BAD_HEADER, /* line 1 is not "MAGIC VERSION" */
	XBD_FRAME_BAD_END,    /* an end line whose count is not records */
	XBD_FRAME_AFTER_END,  /* a line after the end line */
};
/* Line no (1 for the first) of the file; words are separated by spaces and tabs. Sets ended
 * at the end line. A file whose lines all passed is whole only when fr->ended. */
enum xbd_frame_line xbd_frame_line(struct xbd_frame *fr, unsigned int no, const char *line);

#endif /* XDPBAND_FRAME_H */
