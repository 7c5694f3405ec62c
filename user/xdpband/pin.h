/* pin.h - the pin directory on bpffs: making sure it is one, and holding the exclusive lock
 * that keeps a second daemon off the same state. The pins themselves are the loader's
 * (load.h); this module never creates or removes a pin. */
#ifndef XDPBAND_PIN_H
#define XDPBAND_PIN_H

#include <stddef.h>

struct xbd_pin_lock {
	int fd; /* the pin directory, flock'ed; -1 when not held */
};

/* Creates the directory if missing (its parent must be on bpffs), checks it is on bpffs and
 * takes the lock without waiting. -EWOULDBLOCK with a one-line message when another process
 * holds it. */
int xbd_pin_lock(struct xbd_pin_lock *lock, const char *dir, char *err, size_t errlen);
void xbd_pin_unlock(struct xbd_pin_lock *lock);
/* dir/name into buf; -ENAMETOOLONG if it does not fit. */
int xbd_pin_path(char *buf, size_t len, const char *dir, const char *name);

#endif /* XDPBAND_PIN_H */
