/* banfilter.h - writing xdpban_bans from userspace while keeping the ban filter exact
 * (include/xdpban_banfilter.h). Every userspace insert or delete of a ban goes through here;
 * never write xdpban_bans directly. */
#ifndef XB_BANFILTER_H
#define XB_BANFILTER_H

#include <stddef.h>
#include <linux/types.h>
#include "xdpban_state.h"

struct xb_banfilter {
	__u64 *slots; /* the mmapped xdpban_banfilt array, shared with the data path */
	size_t len;   /* bytes mapped */
	int bans_fd;  /* xdpban_bans */
};

/* Maps the filter array; 0 or -errno. */
int xb_banfilter_open(struct xb_banfilter *bf, int filter_fd, int bans_fd);
void xb_banfilter_close(struct xb_banfilter *bf);

/* Inserts or replaces the key's ban (flags: BPF_ANY, BPF_NOEXIST or BPF_EXIST). 0 or -errno;
 * -E2BIG or -ENOMEM when the table is full, -EEXIST/-ENOENT per flags. */
int xb_ban_insert(const struct xb_banfilter *bf, const struct xdpban_key *key,
		  const struct xdpban_ban *ban, __u64 flags);
/* Deletes the key's ban; -ENOENT if there was none. */
int xb_ban_remove(const struct xb_banfilter *bf, const struct xdpban_key *key);

#endif /* XB_BANFILTER_H */
