/* verifier.h - what the kernel's verifier says about a program, read from its log at level 4
 * (BPF_LOG_STATS): the counts it writes at the end of every load, refused or not
 *
 *   processed 712499 insns (limit 1000000) max_states_per_insn 35 total_states 40110
 *   peak_states 9861 mark_read 1312
 *   verification time 4123456 usec
 *
 * and, when it refuses the program, its reason (the lines that are not counts, e.g. "BPF
 * program is too large. Processed 1000001 insn"). One place for every loader that explains a
 * refusal (xdpband) and for the tests that hold the counts to a budget (tests/kernel/). Never
 * loads a program and never prints.
 */
#ifndef XDPBAN_VERIFIER_H
#define XDPBAN_VERIFIER_H

#include <stdbool.h>
#include <stddef.h>

struct bpf_program;

/* Level 4 writes a few lines only: the reason of a refusal and the counts. */
#define XB_VLOG_SIZE 16384
/* The oldest kernel that loads every program of xdpban: every helper the data path calls is
 * there (bpf_loop 5.17, bpf_xdp_load_bytes 5.18), and the tests hold it under the verifier's
 * limit there (tests/e2e/e2e_kernels.sh boots Debian 12's 6.1). */
#define XB_KERNEL_MIN "6.1"

/* The counts of one load; -1 for what the log does not say (kernels before 5.2 print no
 * states; max_states_per_insn and peak_states came in 5.2 too). */
struct xb_vstats {
	long long insns;               /* instructions processed: the verifier refuses past limit */
	long long limit;               /* 1000000 for root since 5.2 */
	long long max_states_per_insn;
	long long total_states;
	long long peak_states;
	long long time_usec;           /* verification time */
};

/* Gives prog, before its load, a log of size bytes at level 4 in buf: the verifier writes its
 * counts there, and its reason when it refuses the program. buf must outlive the load.
 * 0 or -errno. */
int xb_vlog_set(struct bpf_program *prog, char *buf, size_t size);
/* Reads the counts in a log. 0, or -ENOENT when it has no "processed N insns" line (the load
 * never reached the verifier, or the log was not asked for). */
int xb_vstats_parse(const char *log, struct xb_vstats *st);
/* The last (at most three) lines of the log that are not counts, joined by "; ": why the
 * verifier refused the program ("Validating count_errors() func#8...; BPF program is too
 * large. Processed 1000001 insn"), from the global function it was verifying, if it says.
 * "" when there are none. */
void xb_vlog_reason(const char *log, char *out, size_t len);
/* The running kernel's release, as uname -r prints it ("?" if uname fails). */
void xb_kernel_release(char *buf, size_t len);
/* One line for a program the kernel refused with err (-errno), from the log of its load:
 * "the kernel refused BPF program NAME (Linux RELEASE): REASON; processed N insns (limit L);
 * xdpban needs Linux 6.1 or later". Without a reason in the log (a refusal before the
 * verifier ran, or after it passed), strerror(-err) stands for it; without counts, they are
 * left out. */
void xb_vlog_refusal(const char *prog, const char *log, int err, char *out, size_t len);
/* For a failed load: when its log shows that the verifier ran (it holds the counts), writes
 * xb_vlog_refusal's line into out and returns true; else returns false, out untouched (the
 * load failed before the verifier, and the caller says why). */
bool xb_vlog_explain(const char *prog, const char *log, int err, char *out, size_t len);

#endif /* XDPBAN_VERIFIER_H */
