/* load.h - the data path's object, embedded through the libbpf skeleton: map pinning (reused
 * when pins exist, so a restart keeps every counter, ban and setting), table sizes, and the
 * report program. Never attaches to an interface (attach.h does), never writes map contents. */
#ifndef XDPBAND_LOAD_H
#define XDPBAND_LOAD_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/bpf.h>
#include "conf.h"
#include "libxdpban.h"
#include "verifier.h"

struct xdpban;

struct xbd_loader {
	struct xdpban *skel;   /* the state object: the maps and the report program (xdpban
				* itself is not loaded there) */
	char pin_dir[PATH_MAX];
	bool maps_created;     /* no pinned ban table existed: this is a fresh state */
	__u32 bans_map_id;     /* to recognise programs that use our state */
	struct xb_maps *maps;  /* what xbd_load filled; its tables stay mapped until close */
	char vlog[XB_VLOG_SIZE]; /* the verifier's counts and reason for the report program */
	char *carried;         /* an older statistics pin's rows, per CPU, until the load */
	__u32 carried_rows;
};

/* Opens, pins under conf->pin_dir and loads; fills maps with the fds (owned by the loader),
 * its mappings kept from one compile to the next (xb_maps_keep_views). 0, or -errno with one
 * line in err. */
int xbd_load(struct xbd_loader *ld, const struct xbd_conf *conf, struct xb_maps *maps,
	     char *err, size_t errlen);
void xbd_load_close(struct xbd_loader *ld);
/* Removes the pins and the pin directory: only at a detaching exit. */
void xbd_load_unpin(struct xbd_loader *ld);
/* The same without a loader, for `xdpband --detach`: the pins of this build's maps under dir,
 * then dir. A pin that cannot be removed is logged. 0, or -errno with one line in err. */
int xbd_load_unpin_dir(const char *dir, char *err, size_t errlen);
/* The id of the ban table pinned under dir, which tells our programs. 0 or -errno (-ENOENT:
 * no such pin). */
int xbd_load_pinned_bans_id(const char *dir, __u32 *id);
/* A second, unloaded instance of the object sharing the same pins and sizes, for libxdp to
 * load as an extension of its dispatcher; the verifier writes its counts and reason for xdpban
 * into vlog (XB_VLOG_SIZE bytes, kept until the load). NULL with a message on failure. */
struct xdpban *xbd_load_open_attachable(const struct xbd_loader *ld, char *vlog, char *err,
					 size_t errlen);
/* The tag of this build's xdpban program, which tells our attachments current or outdated: a
 * copy is loaded (verified) and closed, so only a start that finds a program of ours attached
 * pays for it. 0, or -errno with one line in err. */
int xbd_load_prog_tag(const struct xbd_loader *ld, __u8 tag[BPF_TAG_SIZE], char *err,
		      size_t errlen);
/* One line in err on a failed load of prog (ret: -errno) with vlog as its log: the kernel's
 * refusal (xb_vlog_explain) when the verifier ran, else "what: " and the error. */
void xbd_load_failure(const char *what, const char *prog, const char *vlog, int ret, char *err,
		      size_t errlen);

#endif /* XDPBAND_LOAD_H */
