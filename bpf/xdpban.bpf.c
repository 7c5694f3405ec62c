// SPDX-License-Identifier: GPL-2.0
/* xdpban.bpf.c - the xdpban data path. The XDP program reads as its list of stages
 * (docs/datapath.md, section 2); each stage lives in its own header. The report program lets
 * userspace add application-seen errors through the same counter and threshold.
 * This file must never hold parsing or counting logic itself. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "allow.h"
#include "classify.h"
#include "count.h"
#include "exempt.h"
#include "narrow.h"
#include "observed.h"
#include "parse.h"
#include "policy.h"
#include "stats.h"
#include "verify.h"

/* The bench's stage breakdown builds this file again with XDPBAN_BENCH_CUT
 * set to a stage of enum bench_cut: the program then stops right after that stage and skips
 * the statistics, so bench/RESULTS.md can show what each stage adds. The product is built
 * without it, and every STAGE_END below compiles to nothing. */
#ifndef XDPBAN_BENCH_CUT
#define XDPBAN_BENCH_CUT 0
#endif
enum bench_cut { CUT_NONE, CUT_PARSE, CUT_KEY, CUT_POLICY, CUT_BAN, CUT_CLASSIFY, CUT_COUNT };
/* Ends a cut build after `stage`. The empty asm takes what the stage found as an input, so
 * the compiler must compute it; a cut build then drops the packet. */
#define STAGE_END(stage, work)                                                                 \
	do {                                                                                   \
		if (XDPBAN_BENCH_CUT == (stage)) {                                             \
			__u32 found__ = (work);                                                \
			asm volatile("" : : "r"(found__));                                     \
			return 0;                                                              \
		}                                                                              \
	} while (0)

static __always_inline __u32 error_verdict(const struct xdpban_config *cfg, __u32 classes)
{
	__u32 dropping = classes & cfg->drop_mask;

	if (!dropping)
		return XDPBAN_STAT_PASSED;
	return dropping & XDPBAN_CLASS_MALFORMED ? XDPBAN_STAT_DROP_MALFORMED
						 : XDPBAN_STAT_DROP_ERROR;
}

/* The verdict of a packet a ban or a list would drop (drop: its XDPBAN_STAT_DROP_* row). In
 * observe mode it passes, counted under its observed row, unless its errors are dropped as
 * the config says (a probe is not confirmed yet at this point: it passes). */
static __always_inline __u32 list_or_ban_drop(const struct xdpban_config *cfg, __u32 drop,
					      __u32 classes, __u64 bytes)
{
	if (cfg->mode == XDPBAN_MODE_ENFORCE)
		return drop;
	stat_add(XDPBAN_STAT_OBSERVED_OF(drop), 1, bytes);
	return error_verdict(cfg, classes & ~XDPBAN_CLASS_PROBE);
}

/* Runs the stages; returns the verdict as a statistics reason, and the frame's length (every
 * buffer of it) in *bytes. */
static __always_inline __u32 run_stages(struct xdp_md *ctx, __u32 *bytes)
{
	const struct xdpban_config *cfg;
	struct xdpban_key key;
	struct pkt p = {};
	__u32 classes, count = 0, verdict;
	__u64 seed, hash = 0;
	int banned;

	parse_packet(ctx, &p);
	*bytes = p.bytes;
	STAGE_END(CUT_PARSE, p.family + p.malformed);
	if (!p.family || p.ndp)
		return XDPBAN_STAT_PASSED;
	cfg = config_get();
	classes = classify(ctx, &p, cfg);
	if (!p.attributed) {
		stat_classes(classes, 1, p.bytes);
		return error_verdict(cfg, classes);
	}
	source_key(&key, p.family, p.saddr, cfg->v6_prefix);
	seed = table_seed();
	/* One hash of the key for the warm-up and the ban check; a source the policy stops
	 * (most denied ones are clean) is not hashed at all. */
	if (classes) {
		hash = xdpban_key_hash(seed, &key);
		counter_warm(hash); /* stage 6 will read it: start the miss now */
	}
	STAGE_END(CUT_KEY, key.addr[0] + classes);

	verdict = policy_lookup(p.family, p.saddr, cfg->policy & XDPBAN_CFG_ALLOW_ONLY);
	STAGE_END(CUT_POLICY, verdict);
	switch (verdict) {
	case XDPBAN_POLICY_TRUSTED:
		return XDPBAN_STAT_PASSED_TRUSTED;
	case XDPBAN_POLICY_DENY:
		return list_or_ban_drop(cfg, XDPBAN_STAT_DROP_DENY, classes, p.bytes);
	case XDPBAN_POLICY_NOT_ALLOWED:
		if (!allow_exempt(ctx, &p))
			return list_or_ban_drop(cfg, XDPBAN_STAT_DROP_NOT_ALLOWED, classes,
						p.bytes);
	}
	/* Passed on by the policy: an observed deny list only counts what it would drop. */
	observed_count(cfg, p.family, p.saddr, p.bytes);

	if (!classes)
		hash = xdpban_key_hash(seed, &key);
	banned = ban_check(&key, seed, hash, p.bytes, 1);
	STAGE_END(CUT_BAN, banned);
	if (banned)
		return list_or_ban_drop(cfg, XDPBAN_STAT_DROP_BANNED, classes, p.bytes);

	classes = probe_confirm(ctx, &p, classes);
	STAGE_END(CUT_CLASSIFY, classes);
	if (!classes) {
		learn_hop(ctx, &p, cfg, &key, seed);
		return XDPBAN_STAT_PASSED;
	}
	stat_classes(classes, 1, p.bytes);
	if (exempt(p.family, p.saddr)) {
		stat_add(XDPBAN_STAT_ERRORS_EXEMPT, 1, p.bytes);
	} else {
		struct count_req r = { .bytes = p.bytes, .n = 1, .classes = classes,
				       .reason = XDPBAN_REASON_ERRORS, .hop = p.hop,
				       .proto = error_proto(&p) };

		if (r.proto == IPPROTO_TCP || r.proto == IPPROTO_UDP)
			r.port = bpf_ntohs(p.dport);

		count_and_ban(&key, seed, &r);
		count = r.count;
	}
	STAGE_END(CUT_COUNT, count);
	return error_verdict(cfg, classes);
}

/* Loaded with BPF_F_XDP_HAS_FRAGS by xdpband (a plain `ip link ... sec xdp` load has no
 * frags): the parser reads multi-buffer frames whole either way. */
SEC("xdp")
int xdpban(struct xdp_md *ctx)
{
	__u32 bytes = 0, verdict = run_stages(ctx, &bytes);

	if (XDPBAN_BENCH_CUT)
		return XDP_DROP;
	stat_add(verdict, 1, bytes);
	return verdict <= XDPBAN_STAT_PASSED_TRUSTED ? XDP_PASS : XDP_DROP;
}

static __always_inline __u32 report(struct xdpban_report_req *req)
{
	const struct xdpban_config *cfg = config_get();
	struct count_req r = { .classes = XDPBAN_CLASS_REPORTED, .reason = XDPBAN_REASON_REPORTED,
			       .hop = XDPBAN_HOP_NONE };
	struct xdpban_key key;
	__u8 saddr[16];
	__u64 seed;
	int ret;

	if ((req->family != XDPBAN_FAMILY_INET && req->family != XDPBAN_FAMILY_INET6) ||
	    req->count == 0)
		return XDPBAN_REPORT_INVALID;
	__builtin_memcpy(saddr, req->addr, sizeof(saddr));

	switch (policy_check(req->family, (const struct policy_addr *)saddr, false)) {
	case XDPBAN_POLICY_TRUSTED:
		return XDPBAN_REPORT_TRUSTED;
	case XDPBAN_POLICY_DENY:
	case XDPBAN_POLICY_NOT_ALLOWED: /* its packets are dropped: nothing to count */
		return XDPBAN_REPORT_DENIED;
	}
	source_key(&key, req->family, saddr, cfg->v6_prefix);
	seed = table_seed();
	if (ban_check(&key, seed, xdpban_key_hash(seed, &key), 0, 0))
		return XDPBAN_REPORT_ALREADY_BANNED;
	if (!(cfg->class_mask & XDPBAN_CLASS_REPORTED))
		return XDPBAN_REPORT_DISABLED;
	stat_classes(XDPBAN_CLASS_REPORTED, req->count, 0);
	if (exempt(req->family, saddr)) {
		stat_add(XDPBAN_STAT_ERRORS_EXEMPT, req->count, 0);
		return XDPBAN_REPORT_EXEMPT;
	}
	r.n = req->count;
	ret = count_and_ban(&key, seed, &r);
	req->new_count = r.count;
	return ret;
}

/* Run by userspace with BPF_PROG_TEST_RUN, the request as the packet data (in and out). The
 * '?' keeps it from loading unless asked for, so `ip link ... sec xdp` never picks it. */
SEC("?xdp")
int xdpban_report(struct xdp_md *ctx)
{
	struct xdpban_report_req *req = (void *)(long)ctx->data;

	if ((void *)(req + 1) > (void *)(long)ctx->data_end)
		return XDP_ABORTED;
	req->new_count = 0;
	req->status = report(req);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
