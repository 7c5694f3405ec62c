/* fuzz_lists.c - libFuzzer harness for xbd_lists_read (user/common/lists.c), the reader of
 * the list files, on their contents. No seam is needed: reading is a step of its own, before
 * anything reaches a map (xbd_lists_apply, and the daemon's exemptions for never-ban lists).
 * Each input is split at lines that are exactly "--" into up to four files (memfds, named by
 * their /proc/self/fd paths), given to the reader as lists 1..4 of a config, in turn trusted,
 * deny, allow and never-ban, so that duplicates, a prefix in two layers, and one in a
 * never-ban list too are reached.
 *
 * Checked: a refusal is -errno with one line of printable ASCII (the paths here are) that
 * names a list file, and leaves no entries; an accepted set holds, for the policy and for the
 * never-ban lists apart, entries sorted by family, length and address without repeats, each a
 * valid prefix with its list's verdict and id and a line number, no list contributed fewer
 * entries than it kept, no entry is left on or inside an entry of a later layer (allow, deny,
 * trusted: the later is painted over the earlier), and an allow list puts the set in
 * allow-only mode.
 */
#include <errno.h>
#include <string.h>
#include "lists.h"
#include "support.h"

/* struct xb_prefix is family, length, address, with no padding: memcmp orders it as the
 * reader must (lists.h). */
_Static_assert(sizeof(struct xb_prefix) == 18, "struct xb_prefix has padding");

/* The painting order: allow, deny, trusted. */
static int layer(__u32 verdict)
{
	return verdict == XDPBAN_POLICY_TRUSTED ? 3 : verdict == XDPBAN_POLICY_DENY ? 2 : 1;
}

/* A later layer is painted over an earlier one: no entry may lie on or inside an entry of a
 * later layer. */
static void check_painted(const struct xbd_list_entries *l)
{
	for (size_t i = 0; i < l->n; i++)
		for (size_t j = 0; j < l->n; j++)
			fz_check(layer(l->v[j].verdict) >= layer(l->v[i].verdict) ||
					 !xb_prefix_contains(&l->v[i].prefix, &l->v[j].prefix),
				 "entry %zu (verdict %u) lies inside entry %zu (verdict %u)", j,
				 l->v[j].verdict, i, l->v[i].verdict);
}

/* One kind of entries; kept counts them per list. */
static void check_entries(const struct xbd_conf *conf, const struct xbd_list_entries *l,
			  bool never_ban, size_t kept[XBD_MAX_LISTS + 1])
{
	for (size_t i = 0; i < l->n; i++) {
		const struct xbd_list_entry *e = &l->v[i];
		char text[64], err[XB_ERRLEN];
		struct xb_prefix again;

		fz_check(e->list_id >= 1 && e->list_id <= (__u32)conf->n_lists,
			 "entry %zu: list %u", i, e->list_id);
		fz_check(e->verdict == conf->lists[e->list_id - 1].verdict && e->line >= 1,
			 "entry %zu: verdict %u, line %u", i, e->verdict, e->line);
		fz_check((e->verdict == XBD_LIST_NEVER_BAN) == never_ban,
			 "entry %zu of verdict %u among the %s entries", i, e->verdict,
			 never_ban ? "never-ban" : "policy");
		fz_check(i == 0 || xbd_list_entry_start_cmp(&l->v[i - 1], e) < 0,
			 "entries %zu and %zu out of order or repeated", i - 1, i);
		fz_check(!xb_prefix_format(&e->prefix, text, sizeof(text)) &&
				 !xb_prefix_parse(text, &again, err, sizeof(err)) &&
				 !memcmp(&again, &e->prefix, sizeof(again)),
			 "entry %zu is not a valid prefix", i);
		kept[e->list_id]++;
	}
}

static void check_accepted(const struct xbd_conf *conf, const struct xbd_lists *l)
{
	size_t kept[XBD_MAX_LISTS + 1] = {};

	check_entries(conf, &l->policy, false, kept);
	check_entries(conf, &l->never_ban, true, kept);
	check_painted(&l->policy);
	fz_check(l->allow_list == (conf->n_lists > 2), "allow list %d with %d lists", l->allow_list,
		 conf->n_lists);
	for (int id = 1; id <= conf->n_lists; id++)
		fz_check(l->entries[id] >= kept[id], "list %d: %zu entries read, %zu kept", id,
			 l->entries[id], kept[id]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const __u32 verdicts[] = { XDPBAN_POLICY_TRUSTED, XDPBAN_POLICY_DENY,
					  XDPBAN_POLICY_ALLOWED, XBD_LIST_NEVER_BAN };
	const uint8_t *part[FZ_FILES_MAX];
	size_t len[FZ_FILES_MAX];
	struct xbd_conf conf = {};
	struct xbd_lists lists;
	char err[XB_ERRLEN] = "";
	struct xbd_list_caps caps;
	bool named = false;
	int ret;

	conf.n_lists = fz_split(data, size, "--", part, len);
	for (int i = 0; i < conf.n_lists; i++) {
		conf.lists[i] = (struct xbd_list_conf){
			.path = (char *)fz_file(i, part[i], len[i]),
			.verdict = verdicts[i % 4],
			.id = i + 1,
		};
	}
	xbd_list_caps_default(&caps);
	ret = xbd_lists_read(&conf, &caps, &lists, NULL, err, sizeof(err));
	if (!ret) {
		check_accepted(&conf, &lists);
		xbd_lists_free(&lists);
		return 0;
	}
	fz_check(ret < 0, "returned %d", ret);
	fz_check_message(err, sizeof(err), "xbd_lists_read");
	fz_check(fz_printable(err), "the message quotes a byte as it is: %s", err);
	for (int i = 0; i < conf.n_lists; i++)
		named = named || strstr(err, conf.lists[i].path);
	fz_check(named, "the message names no list file: %s", err);
	fz_check(!lists.policy.v && !lists.policy.n && !lists.never_ban.v && !lists.never_ban.n,
		 "refused, but %zu entries are left", lists.policy.n + lists.never_ban.n);
	return 0;
}
