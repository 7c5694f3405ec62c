/* actions.c - what both the loop (main.c) and the control socket's hooks (hooks.c) ask of
 * the daemon as a whole (xdpband.h): start a reload, save the state file. Below both, so that
 * neither calls the other for them. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "log.h"
#include "xdpband.h"

int xbd_reload_request(struct xbd *d, char *err, size_t errlen)
{
	struct xbd_list_caps caps;
	int ret;

	if (d->reading.job.running) {
		d->reload_again = true;
		return 0;
	}
	err[0] = '\0';
	ret = xbd_list_caps_of(&d->maps, &caps, err, errlen);
	if (!ret)
		ret = xbd_reading_start(&d->reading, d->conf.path, &caps);
	if (ret && !err[0])
		snprintf(err, errlen, "cannot start reading %s: %s", d->conf.path, strerror(-ret));
	return ret;
}

int xbd_save_state(struct xbd *d, char *err, size_t errlen)
{
	struct xbd_state_fleet fleet = { 0 };
	struct xbd_state_records rec = { &fleet, &d->comments, &d->setvals };
	struct xbd_state_counts c;
	int ret;

	if (!d->conf.state_file)
		return 0;
	/* With the fleet off, what the file held of it is written back as it was: the remote
	 * bans stay remote, for the day the fleet is on again. */
	if (d->fleet.on && xbd_fleet_state(&d->fleet, &fleet))
		pr_warn("out of memory: the origins of remote bans are not saved");
	xbd_comments_prune(&d->comments, &d->maps); /* those of bans over are not kept */
	if (!d->fleet.on)
		rec.fleet = &d->fleet_saved;
	ret = xbd_state_save(d->conf.state_file, &d->maps, &d->history, &rec, &c, err, errlen);
	xbd_state_fleet_free(&fleet);
	if (!ret) {
		d->state_dirty = false;
		pr_debug("state saved to %s: %zu %s, %zu prefix %s, %zu %s, %zu %s in progress (%zu lower ones left out)",
			 d->conf.state_file, c.bans, xb_plural(c.bans, "ban", "bans"), c.prefixes,
			 xb_plural(c.prefixes, "ban", "bans"), c.offences,
			 xb_plural(c.offences, "offence", "offences"), c.counters,
			 xb_plural(c.counters, "count", "counts"), c.counters_left);
	}
	return ret;
}
