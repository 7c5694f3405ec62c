/* lists.c - see lists.h. A prefix named in both a trusted and a deny list is an error rather
 * than a silent precedence rule: the tries are longest-prefix-match, and for the same prefix
 * only one verdict can exist. The lists reach the maps only through a compile (policy.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lists.h"
#include "log.h"
#include "policy.h"
#include "xdpban_policy.h"

static int entry_cmp_key(const struct xbd_list_entry *a, const struct xbd_list_entry *b)
{
	if (a->prefix.family != b->prefix.family)
		return a->prefix.family < b->prefix.family ? -1 : 1;
	if (a->prefix.plen != b->prefix.plen)
		return a->prefix.plen < b->prefix.plen ? -1 : 1;
	return memcmp(a->prefix.addr, b->prefix.addr, sizeof(a->prefix.addr));
}

/* Same prefix: the first list, then the first line, comes first; it is the one kept. */
static int entry_cmp(const void *pa, const void *pb)
{
	const struct xbd_list_entry *a = pa, *b = pb;
	int c = entry_cmp_key(a, b);

	if (c)
		return c;
	if (a->list_id != b->list_id)
		return a->list_id < b->list_id ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

static int entries_push(struct xbd_lists *l, const struct xbd_list_entry *e)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 1024;
		struct xbd_list_entry *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *e;
	return 0;
}

/* The first whitespace-separated token before any '#', or NULL for a blank line. */
static char *first_token(char *line)
{
	char *hash = strchr(line, '#'), *save = NULL;

	if (hash)
		*hash = '\0';
	return strtok_r(line, " \t\r\n", &save);
}

static int read_one(const struct xbd_list_conf *lc, struct xbd_lists *out, char *err,
		    size_t errlen)
{
	struct xbd_list_entry e = { .verdict = lc->verdict, .list_id = lc->id };
	char why[XB_ERRLEN], *line = NULL, *tok;
	size_t cap = 0;
	FILE *f = fopen(lc->path, "re");
	int ret = 0;

	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "cannot read list %s: %s", lc->path, strerror(errno));
		return ret;
	}
	while (getline(&line, &cap, f) >= 0) {
		e.line++;
		tok = first_token(line);
		if (!tok)
			continue;
		why[0] = '\0';
		ret = xb_prefix_parse(tok, &e.prefix, why, sizeof(why));
		if (ret) {
			if (why[0])
				snprintf(err, errlen, "%s:%u: %s", lc->path, e.line, why);
			else
				snprintf(err, errlen, "%s:%u: '%s' is not an address or prefix",
					 lc->path, e.line, tok);
			break;
		}
		ret = entries_push(out, &e);
		if (ret) {
			snprintf(err, errlen, "%s:%u: out of memory", lc->path, e.line);
			break;
		}
		out->entries[lc->id]++;
	}
	if (!ret && ferror(f)) {
		ret = -EIO;
		snprintf(err, errlen, "cannot read list %s: %s", lc->path, strerror(EIO));
	}
	free(line);
	fclose(f);
	return ret;
}

static const char *list_path(const struct xbd_conf *conf, __u32 id)
{
	return id >= 1 && id <= (__u32)conf->n_lists ? conf->lists[id - 1].path : "?";
}

/* Sorts, drops repeats of a prefix within one verdict (the first list keeps it), and refuses
 * a prefix that is both trusted and denied. */
static int dedup(const struct xbd_conf *conf, struct xbd_lists *l, char *err, size_t errlen)
{
	size_t kept = 0;

	if (!l->n)
		return 0; /* no list files: nothing to sort (qsort must not get NULL) */
	qsort(l->v, l->n, sizeof(*l->v), entry_cmp);
	for (size_t i = 0; i < l->n; i++) {
		const struct xbd_list_entry *e = &l->v[i], *prev = kept ? &l->v[kept - 1] : NULL;
		char text[64];

		if (prev && !entry_cmp_key(prev, e)) {
			if (prev->verdict == e->verdict)
				continue;
			xb_prefix_format(&e->prefix, text, sizeof(text));
			snprintf(err, errlen, "%s:%u and %s:%u: %s is in both a trusted and a deny list",
				 list_path(conf, prev->list_id), prev->line,
				 list_path(conf, e->list_id), e->line, text);
			return -EINVAL;
		}
		l->v[kept++] = *e;
	}
	l->n = kept;
	return 0;
}

int xbd_lists_read(const struct xbd_conf *conf, struct xbd_lists *out, char *err,
		   size_t errlen)
{
	int ret = 0;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < conf->n_lists && !ret; i++)
		ret = read_one(&conf->lists[i], out, err, errlen);
	if (!ret)
		ret = dedup(conf, out, err, errlen);
	if (ret)
		xbd_lists_free(out);
	return ret;
}

void xbd_lists_free(struct xbd_lists *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* Manual prefix bans live next to the lists and are not the lists' to change. */
static bool keep_manual(const struct xb_policy_entry *old, void *ctx)
{
	return old->policy.list_id == XDPBAN_LIST_MANUAL_BAN;
}

/* One compile (policy.h): a list entry on the prefix of a manual ban replaces it, entries no
 * list holds any more go, and the flat table is exact again afterwards. */
int xbd_lists_apply(const struct xb_maps *m, const struct xbd_lists *l, char *err,
		    size_t errlen)
{
	const struct xb_compile_opts opts = { .keep = keep_manual };
	struct xb_policy_set set = {};
	struct xb_compile_result res;
	int ret = 0;

	for (size_t i = 0; i < l->n && !ret; i++) {
		const struct xbd_list_entry *e = &l->v[i];
		struct xdpban_policy val = { .verdict = e->verdict, .list_id = e->list_id };

		ret = xb_policy_set_add(&set, &e->prefix, &val);
	}
	if (ret)
		snprintf(err, errlen, "out of memory for %zu policy entries", l->n);
	else
		ret = xb_policy_compile(m, &set, &opts, &res, err, errlen);
	xb_policy_set_free(&set);
	if (ret)
		return ret;
	pr_debug("policy lists: %zu entries written, %zu old entries removed, %zu manual bans kept; "
		 "flat table: %u of 65536 /16 and %u of 16777216 /24 IPv4 regions answered without "
		 "the trie",
		 res.written, res.removed, res.kept, res.pure_l1[0], res.pure_l2[0]);
	return 0;
}
