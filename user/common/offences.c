/* offences.c - see offences.h. The history is a tsearch tree keyed by the ban key; offence times
 * are wall clock so that they mean the same after a reboot, when they come back from the
 * state file. */
#include <errno.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "log.h"
#include "offences.h"
#include "table.h"
#include "xdpban_time.h"

static int offence_cmp(const void *a, const void *b)
{
	return memcmp(&((const struct xbd_offence *)a)->key, &((const struct xbd_offence *)b)->key,
		      sizeof(struct xdpban_key));
}

int xbd_history_put(struct xbd_history *h, const struct xbd_offence *o)
{
	struct xbd_offence *copy = malloc(sizeof(*copy)), **node;

	if (!copy)
		return -ENOMEM;
	*copy = *o;
	node = tsearch(copy, &h->root, offence_cmp);
	if (!node) {
		free(copy);
		return -ENOMEM;
	}
	if (*node != copy) { /* already known: update in place */
		**node = *o;
		free(copy);
	} else {
		h->n++;
	}
	return 0;
}

static const struct xbd_offence *history_get(const struct xbd_history *h,
					     const struct xdpban_key *key)
{
	struct xbd_offence probe = { .key = *key };
	struct xbd_offence **node = tfind(&probe, &h->root, offence_cmp);

	return node ? *node : NULL;
}

void xbd_history_forget(struct xbd_history *h, const struct xdpban_key *key)
{
	struct xbd_offence probe = { .key = *key };
	struct xbd_offence **node = tfind(&probe, &h->root, offence_cmp), *o;

	if (!node)
		return;
	o = *node;
	tdelete(&probe, &h->root, offence_cmp);
	free(o);
	h->n--;
}

struct walk_ctx {
	xbd_offence_cb cb;
	void *ctx;
};

static void walk_action(const void *nodep, VISIT which, void *closure)
{
	struct walk_ctx *w = closure;

	if (which == postorder || which == leaf)
		w->cb(*(const struct xbd_offence *const *)nodep, w->ctx);
}

void xbd_history_foreach(const struct xbd_history *h, xbd_offence_cb cb, void *ctx)
{
	struct walk_ctx w = { .cb = cb, .ctx = ctx };

	twalk_r(h->root, walk_action, &w);
}

void xbd_history_free(struct xbd_history *h)
{
	tdestroy(h->root, free);
	h->root = NULL;
	h->n = 0;
}

/* The escalated length of a ban: base x factor^repeats, capped, never below base. */
static __u64 escalated_ns(__u64 base_ns, __u32 repeats, const struct xbd_escalation *esc,
			  double *multiplier)
{
	double max_ns = (double)esc->max_ban_s * NS_PER_SEC;
	double ns = (double)base_ns;

	/* factor^repeats by hand: stops as soon as the cap is reached, however many repeats */
	for (__u32 i = 0; i < repeats && ns < max_ns; i++)
		ns *= esc->factor;

	if (ns > max_ns)
		ns = max_ns;
	if (ns <= (double)base_ns) {
		*multiplier = 1;
		return base_ns;
	}
	*multiplier = ns / (double)base_ns;
	return (__u64)ns;
}

/* A ban is a repeat when it comes less than period after the previous one ended; a permanent
 * ban that was lifted by hand and comes back is a repeat too. */
static bool is_repeat(const struct xbd_offence *prev, time_t banned_at, __u32 period_s)
{
	return !prev->last_until || banned_at - prev->last_until < (time_t)period_s;
}

/* Lengthens the ban the event announced, if it is still that ban: its expiry changes in
 * place (table.h), so the data path never sees the source unbanned. 1 when it was lengthened,
 * 0 when there was nothing to lengthen (lifted, or replaced by a newer ban), or -errno. */
static int lengthen_ban(const struct xb_maps *m, const struct xdpban_event *ev, __u64 ban_ns)
{
	struct xdpban_ban ban;
	char why[XB_ERRLEN];
	struct xb_bans b;
	int ret = xb_bans_of(&b, m, why, sizeof(why));

	if (ret)
		return ret;
	ret = xb_bans_get(&b, &ev->key, &ban);
	if (ret == 0 && ban.start_ns == ev->time_ns) { /* else a newer ban replaced it */
		ban.expires_ns = ev->time_ns + ban_ns;
		ret = xb_bans_put(&b, &ev->key, &ban, BPF_EXIST);
		if (!ret)
			ret = 1;
	}
	xb_bans_close(&b);
	return ret == -ENOENT ? 0 : ret; /* already lifted: nothing to lengthen */
}

int xbd_escalate(struct xbd_history *h, const struct xb_maps *m,
		 const struct xbd_escalation *esc, const struct xdpban_event *ev,
		 struct xbd_escalated *out)
{
	time_t banned_at = xb_boot_to_wall(ev->time_ns);
	const struct xbd_offence *prev = history_get(h, &ev->key);
	struct xbd_offence now = { .key = ev->key, .last_ban = banned_at };
	__u64 base_ns = ev->expires_ns ? ev->expires_ns - ev->time_ns : 0;
	int ret = 0;

	if (prev && is_repeat(prev, banned_at, esc->period_s))
		now.repeats = prev->repeats + 1;
	out->repeats = now.repeats;
	out->ban_ns = base_ns;
	out->multiplier = 1;
	if (esc->enabled && now.repeats && base_ns) {
		out->ban_ns = escalated_ns(base_ns, now.repeats, esc, &out->multiplier);
		if (out->ban_ns != base_ns) {
			ret = lengthen_ban(m, ev, out->ban_ns);
			if (ret > 0) {
				h->escalated++;
				ret = 0;
			} else { /* an error, or no ban of this event left to lengthen */
				out->ban_ns = base_ns;
				out->multiplier = 1;
			}
		}
	}
	now.last_until = out->ban_ns ? banned_at + (time_t)((out->ban_ns + NS_PER_SEC - 1) / NS_PER_SEC) : 0;
	if (xbd_history_put(h, &now))
		pr_warn("out of memory recording an offence");
	return ret;
}

struct prune_ctx {
	time_t cutoff;
	struct xdpban_key *old;
	size_t n, cap;
};

static void collect_old(const struct xbd_offence *o, void *ctx)
{
	struct prune_ctx *p = ctx;

	if (!o->last_until || o->last_until >= p->cutoff || p->n == p->cap)
		return;
	p->old[p->n++] = o->key;
}

/* An offence whose ban ended more than a period ago can no longer make a repeat: forget it. */
static void prune_history(struct xbd_history *h, __u32 period_s)
{
	struct prune_ctx p = { .cutoff = time(NULL) - (time_t)period_s, .cap = h->n };

	if (!h->n)
		return;
	p.old = calloc(p.cap, sizeof(*p.old));
	if (!p.old)
		return;
	xbd_history_foreach(h, collect_old, &p);
	for (size_t i = 0; i < p.n; i++)
		xbd_history_forget(h, &p.old[i]);
	free(p.old);
}

int xbd_sweep(struct xbd_history *h, const struct xb_maps *m, const struct xbd_escalation *esc)
{
	int removed = xb_sweep(m, xb_boot_ns());

	prune_history(h, esc->period_s);
	return removed;
}
