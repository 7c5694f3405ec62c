/* report.c - errors an application saw, added through the report program so that they meet the
 * same atomic counter and threshold as errors counted on the wire (docs/datapath.md, 7); and
 * loading that program onto already pinned maps for callers that have no loaded object.
 * Never attaches anything and never loads the XDP data path program itself.
 */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "libxdpban.h"
#include "xdpban_config.h" /* before the skeleton: its .rodata holds the defaults */
#include "xdpban.skel.h"
#include "xdpban_report.h"
#include "verifier.h"

const char *xb_report_status_name(__u32 status)
{
	static const char *const names[] = {
		[XDPBAN_REPORT_COUNTED] = "counted",
		[XDPBAN_REPORT_BANNED] = "banned",
		[XDPBAN_REPORT_ALREADY_BANNED] = "already_banned",
		[XDPBAN_REPORT_TRUSTED] = "trusted",
		[XDPBAN_REPORT_DENIED] = "denied",
		[XDPBAN_REPORT_DISABLED] = "disabled",
		[XDPBAN_REPORT_TABLE_FULL] = "table_full",
		[XDPBAN_REPORT_INVALID] = "invalid",
		[XDPBAN_REPORT_NOT_COUNTED] = "not_counted",
		[XDPBAN_REPORT_EXEMPT] = "exempt",
	};

	if (status >= sizeof(names) / sizeof(names[0]))
		return "?";
	return names[status];
}

/* How often a report that found no counter slot is run again. A report runs in a test run,
 * which the scheduler may preempt (a packet in softirq never is): while one report holds a
 * group's insert lock to create a source's counter, another for the same source finds neither
 * the counter nor the lock, and writes nothing but counter_full. Run again, it counts; a group
 * that is really full answers the same each time. */
#define REPORT_FULL_RETRIES 8

int xb_report(const struct xb_maps *m, const struct xb_prefix *addr, __u32 count,
	      __u32 *status, __u32 *new_count)
{
	struct xdpban_report_req req = { .family = addr->family, .count = count }, out = {};
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = &req, .data_size_in = sizeof(req),
		    .data_out = &out, .data_size_out = sizeof(out), .repeat = 1);

	if (m->report_prog < 0)
		return -ENOENT;
	if (!xb_prefix_is_addr(addr) || count == 0)
		return -EINVAL;
	memcpy(req.addr, addr->addr, sizeof(req.addr));
	for (int tries = 0; tries <= REPORT_FULL_RETRIES; tries++) {
		if (tries)
			sched_yield(); /* let the inserter finish */
		run.data_size_out = sizeof(out);
		if (bpf_prog_test_run_opts(m->report_prog, &run))
			return -errno;
		if (run.data_size_out < sizeof(out))
			return -EPROTO;
		if (out.status != XDPBAN_REPORT_NOT_COUNTED)
			break;
	}
	*status = out.status;
	*new_count = out.new_count;
	return 0;
}

/* Makes the object's map use the pinned one it stands for. */
static int reuse_map(const struct xdpban *skel, struct bpf_map *map, const struct xb_maps *m)
{
	/* Never pin: the maps are there already, and a pin made by us would be a second state. */
	bpf_map__set_pin_path(map, NULL);
#define REUSE_PINNED(name, field, ...)                                                             \
	if (map == skel->maps.name)                                                                \
		return bpf_map__reuse_fd(map, m->field);
	XDPBAN_MAPS(REUSE_PINNED)
#undef REUSE_PINNED
	return 0; /* an internal map (.rodata): the program's own */
}

int xb_report_prog_load(struct xb_maps *m, char *err, size_t errlen)
{
	char vlog[XB_VLOG_SIZE]; /* the verifier's counts, and its reason if it refuses */
	struct xdpban *skel;
	struct bpf_map *map;
	int fd, ret;

	if (!m->owned) {
		snprintf(err, errlen, "the report program needs maps opened by xb_maps_open_pinned");
		return -EINVAL;
	}
	skel = xdpban__open();
	if (!skel) {
		ret = -errno;
		snprintf(err, errlen, "cannot open the embedded xdpban object: %s", strerror(-ret));
		return ret;
	}
	bpf_object__for_each_map(map, skel->obj) {
		ret = reuse_map(skel, map, m);
		if (ret) {
			snprintf(err, errlen, "cannot reuse pinned map %s: %s", bpf_map__name(map),
				 strerror(-ret));
			goto out;
		}
	}
	bpf_program__set_autoload(skel->progs.xdpban, false);
	bpf_program__set_autoload(skel->progs.xdpban_report, true);
	ret = xb_vlog_set(skel->progs.xdpban_report, vlog, sizeof(vlog));
	if (!ret)
		ret = xdpban__load(skel);
	if (ret) {
		if (!xb_vlog_explain("xdpban_report", vlog, ret, err, errlen))
			snprintf(err, errlen, "cannot load the report program: %s", strerror(-ret));
		goto out;
	}
	fd = fcntl(bpf_program__fd(skel->progs.xdpban_report), F_DUPFD_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot keep the report program: %s", strerror(-ret));
		goto out;
	}
	if (m->report_prog >= 0)
		close(m->report_prog);
	m->report_prog = fd;
out:
	xdpban__destroy(skel);
	return ret;
}
