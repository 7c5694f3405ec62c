/* verifier.c - see verifier.h. The verifier's log is read line by line: a line is a count (its
 * words are the kernel's, print_verification_stats in kernel/bpf/verifier.c) or part of the
 * reason of a refusal. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <bpf/libbpf.h>
#include "verifier.h"

#define VLOG_LEVEL_STATS 4 /* BPF_LOG_STATS */
#define REASON_LINES 3

int xb_vlog_set(struct bpf_program *prog, char *buf, size_t size)
{
	int ret;

	buf[0] = '\0';
	ret = bpf_program__set_log_buf(prog, buf, size);
	return ret ? ret : bpf_program__set_log_level(prog, VLOG_LEVEL_STATS);
}

static bool starts_with(const char *line, const char *word)
{
	return !strncmp(line, word, strlen(word));
}

/* Whether the line (up to its '\n') is one of the verifier's counts. */
static bool is_count(const char *line)
{
	return starts_with(line, "processed ") || starts_with(line, "verification time ") ||
	       starts_with(line, "stack depth ");
}

/* The number after word in the line [line, end), or -1. */
static long long number_after(const char *line, const char *end, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = line; p + n <= end; p++)
		if (!strncmp(p, word, n))
			return strtoll(p + n, NULL, 10);
	return -1;
}

static void parse_line(const char *line, const char *end, struct xb_vstats *st, bool *found)
{
	if (starts_with(line, "processed ")) {
		*found = true;
		st->insns = strtoll(line + strlen("processed "), NULL, 10);
		st->limit = number_after(line, end, "(limit ");
		st->max_states_per_insn = number_after(line, end, "max_states_per_insn ");
		st->total_states = number_after(line, end, "total_states ");
		st->peak_states = number_after(line, end, "peak_states ");
	} else if (starts_with(line, "verification time ")) {
		st->time_usec = strtoll(line + strlen("verification time "), NULL, 10);
	}
}

int xb_vstats_parse(const char *log, struct xb_vstats *st)
{
	bool found = false;
	const char *end;

	*st = (struct xb_vstats){ -1, -1, -1, -1, -1, -1 };
	for (const char *line = log; *line; line = *end ? end + 1 : end) {
		end = strchrnul(line, '\n');
		parse_line(line, end, st, &found);
	}
	return found ? 0 : -ENOENT;
}

void xb_vlog_reason(const char *log, char *out, size_t len)
{
	const char *start[REASON_LINES], *stop[REASON_LINES], *end;
	int n = 0;
	size_t at = 0;

	for (const char *line = log; *line; line = *end ? end + 1 : end) {
		end = strchrnul(line, '\n');
		if (end == line || is_count(line))
			continue;
		if (starts_with(line, "Validating "))
			n = 0; /* a global function: what came before it was verified */
		if (n == REASON_LINES) {
			memmove(start, start + 1, sizeof(start[0]) * (REASON_LINES - 1));
			memmove(stop, stop + 1, sizeof(stop[0]) * (REASON_LINES - 1));
			n--;
		}
		start[n] = line;
		stop[n++] = end;
	}
	out[0] = '\0';
	for (int i = 0; i < n && at < len; i++)
		at += snprintf(out + at, len - at, "%s%.*s", i ? "; " : "",
			       (int)(stop[i] - start[i]), start[i]);
}

void xb_kernel_release(char *buf, size_t len)
{
	struct utsname u;

	snprintf(buf, len, "%s", uname(&u) ? "?" : u.release);
}

void xb_vlog_refusal(const char *prog, const char *log, int err, char *out, size_t len)
{
	char release[65], reason[512], counts[64] = "", limit[32] = "";
	struct xb_vstats st;

	xb_kernel_release(release, sizeof(release));
	xb_vlog_reason(log, reason, sizeof(reason));
	if (!reason[0])
		snprintf(reason, sizeof(reason), "%s", strerror(-err));
	if (!xb_vstats_parse(log, &st)) {
		if (st.limit >= 0)
			snprintf(limit, sizeof(limit), " (limit %lld)", st.limit);
		snprintf(counts, sizeof(counts), "; processed %lld insns%s", st.insns, limit);
	}
	snprintf(out, len, "the kernel refused BPF program %s (Linux %s): %s%s; xdpban needs Linux %s or later",
		 prog, release, reason, counts, XB_KERNEL_MIN);
}

bool xb_vlog_explain(const char *prog, const char *log, int err, char *out, size_t len)
{
	struct xb_vstats st;

	if (xb_vstats_parse(log, &st))
		return false;
	xb_vlog_refusal(prog, log, err, out, len);
	return true;
}
