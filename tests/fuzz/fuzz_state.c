/* fuzz_state.c - libFuzzer harness for xbd_state_load (user/common/state.c), the reader of
 * the state file the daemon saves at stop and reads at start, on the file's contents. The
 * seam is the function's own restore_bans flag: with it false, the file is parsed in full and
 * only the offence history is restored, so no map is needed (every fd is -1, and a map access
 * would fail rather than touch anything). Each input is written to a memfd and its
 * /proc/self/fd path is loaded; a corrupt file cannot be moved aside there, which the loader
 * reports in its message, so nothing is left behind.
 *
 * Checked: the return is 0 (a corrupt file is reported, not fatal) or -ENOMEM; a corrupt
 * file gets a one-line message naming it and restores nothing; a good file restores at most
 * one history entry per offence record, and the history is freed (LeakSanitizer sees the
 * rest).
 */
#include <errno.h>
#include <string.h>
#include "state.h"
#include "support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct xb_maps maps = { XB_MAPS_NONE, .ncpus = 1 };
	const char *path = fz_file(0, data, size);
	struct xbd_history h = {};
	struct xbd_state_fleet fleet = {};
	struct xbd_comments comments = {};
	struct xbd_state_counts c;
	char err[XB_ERRLEN] = "";
	bool corrupt;
	struct xbd_setvals set = { 0 };
	struct xbd_state_records rec = { &fleet, &comments, &set };
	int ret = xbd_state_load(path, &maps, &h, false, &rec, &c, &corrupt, err, sizeof(err));

	fz_check(ret == 0 || ret == -ENOMEM, "returned %d: %s", ret, err);
	fz_check(c.present, "the file was not seen");
	if (corrupt) {
		fz_check_message(err, sizeof(err), "xbd_state_load");
		fz_check(strstr(err, path), "the message does not name the file: %s", err);
		fz_check(!h.n && !c.bans && !c.prefixes && !c.offences && !fleet.n_origins &&
			 !fleet.last_id[0] && !comments.n, "a corrupt file restored something");
	} else if (!ret) {
		fz_check(!err[0], "a good file with a message: %s", err);
		fz_check(h.n <= c.offences && !c.bans && !c.prefixes,
			 "%zu history entries from %zu offences; %zu bans and %zu prefixes restored "
			 "without restore_bans",
			 h.n, c.offences, c.bans, c.prefixes);
	}
	xbd_history_free(&h);
	xbd_state_fleet_free(&fleet);
	xbd_comments_free(&comments);
	return 0;
}
