/* test_verifier.c - reading the verifier's log at level 4 (user/lib/verifier.c), on logs as
 * the kernels xdpban is checked on write them: the counts of a load that passed, the reason and
 * counts of one refused at the limit (6.18 names the global function it was verifying, 6.1
 * does not), and the one line xdpband, the library and the kernel check print for a
 * refusal. Pure functions: no root, no maps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "verifier.h"

/* Loads that passed, on 6.18 and 6.1. */
static const char passed_618[] =
	"verification time 531785 usec\n"
	"stack depth 200+8+40+64+40+40+104+40+256+0+0+0+0\n"
	"processed 802155 insns (limit 1000000) max_states_per_insn 64 total_states 40316 "
	"peak_states 5100 mark_read 0\n";
static const char passed_61[] =
	"verification time 2691483 usec\n"
	"stack depth 112+8+40+104+256+64+64\n"
	"processed 401468 insns (limit 1000000) max_states_per_insn 56 total_states 13740 "
	"peak_states 3085 mark_read 115\n";

/* Loads refused at the limit. */
static const char refused_618[] =
	"Validating ban_active() func#5...\n"
	"Validating count_errors() func#8...\n"
	"BPF program is too large. Processed 1000001 insn\n"
	"verification time 1994871 usec\n"
	"stack depth 200+8+40+64+40+40+104+40+280+0+0+0+0\n"
	"processed 1000001 insns (limit 1000000) max_states_per_insn 64 total_states 74297 "
	"peak_states 69221 mark_read 0\n";
static const char refused_61[] =
	"BPF program is too large. Processed 1000001 insn\n"
	"verification time 7601812 usec\n"
	"stack depth 200+8+40+64+40+40+104+40+256+64+64+120\n"
	"processed 1000001 insns (limit 1000000) max_states_per_insn 60 total_states 51897 "
	"peak_states 5111 mark_read 115\n";

static void counts_of_a_load_that_passed(void **state)
{
	struct xb_vstats st;

	assert_int_equal(xb_vstats_parse(passed_618, &st), 0);
	assert_int_equal(st.insns, 802155);
	assert_int_equal(st.limit, 1000000);
	assert_int_equal(st.max_states_per_insn, 64);
	assert_int_equal(st.total_states, 40316);
	assert_int_equal(st.peak_states, 5100);
	assert_int_equal(st.time_usec, 531785);
	assert_int_equal(xb_vstats_parse(passed_61, &st), 0);
	assert_int_equal(st.insns, 401468);
	assert_int_equal(st.total_states, 13740);
	assert_int_equal(st.time_usec, 2691483);
}

/* What a kernel without the states prints (before 5.2), and a log with no counts at all. */
static void counts_missing(void **state)
{
	struct xb_vstats st;

	assert_int_equal(xb_vstats_parse("processed 12 insns, stack depth 0\n", &st), 0);
	assert_int_equal(st.insns, 12);
	assert_int_equal(st.limit, -1);
	assert_int_equal(st.peak_states, -1);
	assert_int_equal(st.time_usec, -1);
	assert_int_equal(xb_vstats_parse("", &st), -ENOENT);
	assert_int_equal(xb_vstats_parse("libbpf: failed to find BTF\n", &st), -ENOENT);
	assert_int_equal(st.insns, -1);
}

static void reason_of_a_refusal(void **state)
{
	char out[256];

	xb_vlog_reason(refused_618, out, sizeof(out));
	assert_string_equal(out, "Validating count_errors() func#8...; "
				 "BPF program is too large. Processed 1000001 insn");
	xb_vlog_reason(refused_61, out, sizeof(out));
	assert_string_equal(out, "BPF program is too large. Processed 1000001 insn");
	xb_vlog_reason(passed_618, out, sizeof(out));
	assert_string_equal(out, "");
	/* the last three lines of a longer reason, cut to the buffer */
	xb_vlog_reason("a\nb\nc\nd\n", out, sizeof(out));
	assert_string_equal(out, "b; c; d");
	xb_vlog_reason("R1 invalid mem access 'scalar'\n", out, 10);
	assert_string_equal(out, "R1 invali");
}

static void refusal_line(void **state)
{
	char out[512], release[65], want[512];

	xb_kernel_release(release, sizeof(release));
	xb_vlog_refusal("xdpban", refused_61, -E2BIG, out, sizeof(out));
	snprintf(want, sizeof(want),
		 "the kernel refused BPF program xdpban (Linux %s): BPF program is too large. "
		 "Processed 1000001 insn; processed 1000001 insns (limit 1000000); xdpban needs "
		 "Linux 6.1 or later",
		 release);
	assert_string_equal(out, want);
	assert_null(strchr(out, '\n'));
	/* refused with nothing in the log: the error stands for the reason */
	xb_vlog_refusal("xdpban_report", "", -EPERM, out, sizeof(out));
	snprintf(want, sizeof(want),
		 "the kernel refused BPF program xdpban_report (Linux %s): %s; xdpban needs Linux "
		 "6.1 or later",
		 release, strerror(EPERM));
	assert_string_equal(out, want);
}

/* A load that failed before the verifier ran is not explained as a refusal. */
static void explain_only_what_the_verifier_said(void **state)
{
	char out[512] = "untouched";

	assert_false(xb_vlog_explain("xdpban", "", -ENOENT, out, sizeof(out)));
	assert_string_equal(out, "untouched");
	assert_true(xb_vlog_explain("xdpban", refused_618, -E2BIG, out, sizeof(out)));
	assert_non_null(strstr(out, "the kernel refused BPF program xdpban (Linux "));
	assert_non_null(strstr(out, "): Validating count_errors() func#8...; BPF program is too "
				    "large. Processed 1000001 insn; processed 1000001 insns (limit "
				    "1000000); xdpban needs Linux 6.1 or later"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counts_of_a_load_that_passed),
		cmocka_unit_test(counts_missing),
		cmocka_unit_test(reason_of_a_refusal),
		cmocka_unit_test(refusal_line),
		cmocka_unit_test(explain_only_what_the_verifier_said),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
