/* fuzz_history.c - libFuzzer harness for xbd_evhistory_read (user/common/evhistory.c), the
 * reader of the event history file the daemon appends to and reads back for `xdpban events`,
 * on the file's contents. No seam: the input is a memfd, read by its /proc/self/fd path, as
 * the daemon reads the file.
 *
 * Checked: the return is 0 or -ENOMEM (a line that is not an event is skipped, never the whole
 * file refused); every event kept is a JSON object with an integer time_unix, the kept and the
 * skipped are no more than the lines; a second reading that keeps the last 3 gives the last 3
 * of the first; a third with a time keeps exactly the events of the first at or after it.
 */
#include <errno.h>
#include <json-c/json.h>
#include <string.h>
#include "evhistory.h"
#include "log.h"
#include "support.h"

static struct json_object *pick(const char *path, time_t since, size_t keep, int *ret,
				unsigned int *bad, unsigned int *lines)
{
	struct xbd_evpick p;
	char err[256] = "";

	*ret = xbd_evpick_init(&p, since, keep);
	if (*ret)
		return NULL;
	*ret = xbd_evhistory_read(path, &p, err, sizeof(err));
	fz_check(*ret == 0 || *ret == -ENOMEM, "returned %d: %s", *ret, err);
	*bad = p.bad;
	*lines = p.lines;
	if (*ret) {
		xbd_evpick_free(&p);
		return NULL;
	}
	return xbd_evpick_take(&p);
}

static int64_t time_of(struct json_object *events, size_t i)
{
	struct json_object *t;

	fz_check(json_object_object_get_ex(json_object_array_get_idx(events, i), "time_unix", &t) &&
			 json_object_is_type(t, json_type_int),
		 "event %zu has no integer time_unix", i);
	return json_object_get_int64(t);
}

static bool same(struct json_object *a, size_t i, struct json_object *b, size_t j)
{
	return json_object_equal(json_object_array_get_idx(a, i), json_object_array_get_idx(b, j));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_file(0, data, size);
	struct json_object *all, *last, *late;
	unsigned int bad, lines, bad2, lines2;
	size_t n, n_last, n_late = 0;
	int64_t cut;
	int ret;

	xbd_log_init(false, false);
	all = pick(path, 0, 0, &ret, &bad, &lines);
	if (!all)
		return 0;
	n = json_object_array_length(all);
	fz_check(n + bad <= lines, "%zu events and %u skipped from %u lines", n, bad, lines);
	for (size_t i = 0; i < n; i++)
		time_of(all, i);
	last = pick(path, 0, 3, &ret, &bad2, &lines2);
	if (last) {
		n_last = json_object_array_length(last);
		fz_check(n_last == (n < 3 ? n : 3), "kept %zu of %zu, not the last 3", n_last, n);
		for (size_t i = 0; i < n_last; i++)
			fz_check(same(last, i, all, n - n_last + i), "kept event %zu is not the same", i);
	}
	cut = n ? time_of(all, n / 2) : 0;
	late = cut > 0 ? pick(path, (time_t)cut, 0, &ret, &bad2, &lines2) : NULL;
	if (late) {
		for (size_t i = 0; i < n; i++)
			n_late += time_of(all, i) >= cut;
		fz_check(json_object_array_length(late) == n_late, "%zu events at or after %lld, not %zu",
			 json_object_array_length(late), (long long)cut, n_late);
	}
	json_object_put(all);
	json_object_put(last);
	json_object_put(late);
	return 0;
}
