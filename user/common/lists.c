/* lists.c - see lists.h. The layers are painted (docs/datapath.md, "Policy lists"): an entry
 * on or inside an entry of a later layer (allow, then deny, then trusted) is dropped before
 * the compile, since the later layer wins over its whole prefix whatever the lengths, and the
 * tries, which take the longest match, then give every address the painted verdict; in
 * allow-only mode (the plan's, runlists.h) the default layer is an entry of its own, /0 not
 * allowed. The policy lists reach the maps only through a plan's compile (policy.h), which
 * also sets allow-only mode's flag in the config map; the never-ban lists are read the same
 * way, into entries of their own, with capacities of their own, and go to the exempt tries
 * through the daemon (exempt.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "bigmem.h"
#include "exempt.h"
#include "files.h"
#include "lists.h"
#include "policy.h"
#include "progress.h"
#include "xdpban_policy.h"

/* The order of a list's entries: by family, then start address, then the shorter prefix
 * first (every prefix after the prefixes that hold it), which painting needs and files in
 * address order already have. */
static int entry_cmp_key(const struct xbd_list_entry *a, const struct xbd_list_entry *b)
{
	return xb_prefix_order(&a->prefix, &b->prefix);
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

int xbd_list_entries_push(struct xbd_list_entries *l, const struct xbd_list_entry *e, size_t max)
{
	if (l->n == l->cap) {
		/* Past 64K entries, sixteen times the room: each step copies a large array into
		 * fresh pages, and only the pages it fills are ever touched. */
		size_t cap = !l->cap ? 1024 : l->cap * (l->cap >= 65536 ? 16 : 2);
		struct xbd_list_entry *v;

		cap = cap > max ? max : cap;
		v = xb_big_realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *e;
	return 0;
}

/* The painting order of a policy verdict: a later layer wins over an earlier one. */
enum { LAYER_ALLOW = 1, LAYER_DENY, LAYER_TRUSTED, N_LAYERS };

static int layer_of(__u32 verdict)
{
	return verdict == XDPBAN_POLICY_TRUSTED ? LAYER_TRUSTED
	       : verdict == XDPBAN_POLICY_DENY	? LAYER_DENY
						: LAYER_ALLOW;
}

/* Sorts and drops repeats of a prefix: within one verdict the first list keeps it; a prefix
 * in two layers stays in the later one (*painted counts the entries dropped). */
static void dedup(struct xbd_list_entries *l, size_t *painted)
{
	size_t kept = 0, i = 1;

	if (!l->n)
		return; /* no list files: nothing to sort (qsort must not get NULL) */
	while (i < l->n && entry_cmp(&l->v[i - 1], &l->v[i]) <= 0)
		i++;
	if (i < l->n) /* a sorted file, or lists merged again, need no sort */
		qsort(l->v, l->n, sizeof(*l->v), entry_cmp);
	for (size_t i = 0; i < l->n; i++) {
		struct xbd_list_entry *e = &l->v[i], *prev = kept ? &l->v[kept - 1] : NULL;

		if (prev && !entry_cmp_key(prev, e)) {
			if (prev->verdict == e->verdict)
				continue;
			(*painted)++;
			if (layer_of(e->verdict) > layer_of(prev->verdict))
				*prev = *e;
			continue;
		}
		l->v[kept++] = *e;
	}
	l->n = kept;
}

int xbd_list_entry_start_cmp(const void *a, const void *b)
{
	return entry_cmp_key(a, b);
}

/* The last address of a prefix (network order). */
static void prefix_last(const struct xb_prefix *p, __u8 last[16])
{
	unsigned int bits = p->family == XDPBAN_FAMILY_INET ? 32 : 128;

	memcpy(last, p->addr, 16);
	for (unsigned int b = p->plen; b < bits; b++)
		last[b / 8] |= (__u8)(0x80 >> (b % 8));
}

/* Drops every entry inside an entry of a later layer, from entries deduplicated (in their
 * order, which stays). Prefixes nest or are
 * disjoint, so in start order an entry lies inside a kept entry of layer L or later exactly
 * when it starts before the farthest end of those seen so far: cover[L] (deny and trusted
 * entries for an allow entry, trusted ones for a deny entry). The prefixes are unique here. */
static void paint_layers(struct xbd_list_entries *l, size_t *painted)
{
	__u8 cover[N_LAYERS][16], last[16];
	bool covered[N_LAYERS] = {};
	__u8 family = 0;
	size_t kept = 0;

	for (size_t i = 0; i < l->n; i++) {
		const struct xbd_list_entry *e = &l->v[i];
		int layer = layer_of(e->verdict);

		if (e->prefix.family != family) {
			family = e->prefix.family;
			memset(covered, 0, sizeof(covered));
		}
		if (layer + 1 < N_LAYERS && covered[layer + 1] &&
		    memcmp(e->prefix.addr, cover[layer + 1], sizeof(cover[0])) <= 0) {
			(*painted)++;
			continue;
		}
		prefix_last(&e->prefix, last);
		for (int under = LAYER_ALLOW; under <= layer; under++) {
			if (!covered[under] || memcmp(last, cover[under], sizeof(last)) > 0)
				memcpy(cover[under], last, sizeof(last));
			covered[under] = true;
		}
		l->v[kept++] = *e;
	}
	l->n = kept;
}

/* ---- capacity ---- */

/* What an exempt trie of max entries leaves to the never-ban lists. */
static size_t never_ban_room(size_t max)
{
	return max > XBD_EXEMPT_HOST_ROOM ? max - XBD_EXEMPT_HOST_ROOM : 0;
}

void xbd_list_caps_default(struct xbd_list_caps *caps)
{
	caps->ipv4 = XDPBAN_LISTED4_MAX;
	caps->ipv6 = XDPBAN_LISTED6_MAX;
	caps->never_ban4 = never_ban_room(XDPBAN_DEFAULT_EXEMPT_MAX);
	caps->never_ban6 = never_ban_room(XDPBAN_DEFAULT_EXEMPT_MAX);
}

int xbd_list_caps_of(const struct xb_maps *m, struct xbd_list_caps *caps, char *err,
		     size_t errlen)
{
	__u32 v4, v6, e4, e6;
	int ret = xb_map_capacity(m->policy4, &v4);

	if (!ret)
		ret = xb_map_capacity(m->policy6, &v6);
	if (!ret)
		ret = xb_map_capacity(m->exempt4, &e4);
	if (!ret)
		ret = xb_map_capacity(m->exempt6, &e6);
	if (ret) {
		snprintf(err, errlen, "cannot read the size of the policy and exempt tries: %s",
			 strerror(-ret));
		return ret;
	}
	/* Tries pinned by a release before the room for reloads keep their whole size for lists
	 * (reloads on them are not atomic, and the log says so). */
	caps->ipv4 = v4 < XDPBAN_LISTED4_MAX ? v4 : XDPBAN_LISTED4_MAX;
	caps->ipv6 = v6 < XDPBAN_LISTED6_MAX ? v6 : XDPBAN_LISTED6_MAX;
	caps->never_ban4 = never_ban_room(e4);
	caps->never_ban6 = never_ban_room(e6);
	return 0;
}

/* The lists of one kind as they are read: trusted and deny lists for the policy tries,
 * never-ban lists for the exempt tries, or observed deny lists for the observed tries. */
enum { KIND_POLICY, KIND_NEVER_BAN, KIND_OBSERVED, N_KINDS };

struct read_kind {
	const char *table;  /* what the messages say holds them */
	size_t cap[2];      /* [0] IPv4, [1] IPv6: distinct entries the tries can take */
	size_t store_max;   /* entries held at most; then repeats are dropped to make room */
	bool over;          /* a family went over its capacity: entries are counted, not kept */
	struct xbd_list_entries *out;
};

/* One read of every list file. */
struct read_state {
	const struct xbd_list_conf *files;
	size_t n_files;
	const struct xbd_list_read_opts *opts;
	struct read_kind kinds[N_KINDS];
	size_t raw[XBD_MAX_LISTS + 1][2]; /* entry lines per list id and family */
	struct xbd_lists *out;
	off_t left;  /* of XBD_LISTS_READ_MAX, for the files not read yet */
	char *err;
	size_t errlen;
};

static const char *list_path(const struct read_state *r, __u32 id)
{
	for (size_t i = 0; i < r->n_files; i++)
		if (r->files[i].id == id)
			return r->files[i].path;
	return "?";
}

static int family_index(const struct xb_prefix *p)
{
	return p->family == XDPBAN_FAMILY_INET6;
}

static int kind_of(__u32 verdict)
{
	return verdict == XBD_LIST_NEVER_BAN  ? KIND_NEVER_BAN
	       : verdict == XBD_LIST_OBSERVED ? KIND_OBSERVED
					      : KIND_POLICY;
}

/* The list of a kind at which the distinct entries of a family, counted in list order, first
 * go over its capacity; false when every family fits. *before: that family's entries in the
 * lists before it. The entries must be deduplicated: each is then counted for the first list
 * that names it. */
static bool find_overflow(const struct read_state *r, const struct read_kind *k, int *family,
			  __u32 *list_id, size_t *before)
{
	size_t per[XBD_MAX_LISTS + 1][2] = {};

	for (size_t i = 0; i < k->out->n; i++)
		per[k->out->v[i].list_id][family_index(&k->out->v[i].prefix)]++;
	for (int f = 0; f < 2; f++) {
		size_t sum = 0;

		for (size_t i = 0; i < r->n_files; i++) {
			__u32 id = r->files[i].id;

			if (sum + per[id][f] > k->cap[f]) {
				*family = f;
				*list_id = id;
				*before = sum;
				return true;
			}
			sum += per[id][f];
		}
	}
	return false;
}

static int overflow_error(const struct read_state *r, const struct read_kind *k)
{
	int f, v;
	__u32 id;
	size_t before;

	if (!find_overflow(r, k, &f, &id, &before))
		return 0;
	v = f ? 6 : 4;
	if (before)
		snprintf(r->err, r->errlen,
			 "%s: %zu IPv%d entries, after %zu in the lists before it: more than the IPv%d %s holds (%zu)",
			 list_path(r, id), r->raw[id][f], v, before, v, k->table, k->cap[f]);
	else
		snprintf(r->err, r->errlen,
			 "%s: %zu IPv%d entries: more than the IPv%d %s holds (%zu)",
			 list_path(r, id), r->raw[id][f], v, v, k->table, k->cap[f]);
	return -ENOSPC;
}

/* Keeps an entry; when the array is at store_max, drops repeats first, and stops keeping
 * entries once the distinct ones are more than the tries can take (they are still counted,
 * so that the error can say how many a file holds). */
static int keep(struct read_state *r, const struct xbd_list_entry *e)
{
	struct read_kind *k = &r->kinds[kind_of(e->verdict)];
	int f;
	__u32 id;
	size_t before;

	if (k->over)
		return 0;
	if (k->out->n == k->store_max) {
		dedup(k->out, &r->out->painted);
		if (find_overflow(r, k, &f, &id, &before) || k->out->n == k->store_max) {
			k->over = true;
			return 0;
		}
	}
	if (xbd_list_entries_push(k->out, e, k->store_max)) {
		snprintf(r->err, r->errlen, "%s:%u: out of memory", list_path(r, e->list_id),
			 e->line);
		return -ENOMEM;
	}
	return 0;
}

/* ---- reading ---- */

/* The first whitespace-separated token before any '#' or ';' (a Spamhaus DROP comment), or
 * NULL for a blank line. */
static char *first_token(char *line)
{
	char *comment = strpbrk(line, "#;"), *save = NULL;

	if (comment)
		*comment = '\0';
	return strtok_r(line, " \t\r\n", &save);
}

/* One line: its bytes must be text (a NUL would cut "192.0.2.1\0junk" to 192.0.2.1), its
 * entry an address or a prefix of at least one bit. 0 and e->prefix, 1 for a line without an
 * entry, or -EINVAL with "FILE:LINE: ..." in err. */
static int parse_line(const char *path, char *line, size_t len, struct xbd_list_entry *e,
		      char *err, size_t errlen)
{
	char why[XB_ERRLEN] = "", *tok;

	for (size_t i = 0; i < len; i++) {
		if (xbd_byte_not_text(line[i])) {
			snprintf(err, errlen, "%s:%u: byte 0x%02x is not text (a binary file?)", path,
				 e->line, (unsigned char)line[i]);
			return -EINVAL;
		}
	}
	tok = first_token(line);
	if (!tok)
		return 1;
	if (xb_prefix_parse(tok, &e->prefix, why, sizeof(why))) {
		if (why[0])
			snprintf(err, errlen, "%s:%u: %s", path, e->line, why);
		else
			snprintf(err, errlen, "%s:%u: '%s' is not an address or prefix", path,
				 e->line, tok);
		return -EINVAL;
	}
	if (e->prefix.plen == 0) {
		snprintf(err, errlen,
			 "%s:%u: '%s' is every IPv%d address: a list entry must be /1 or longer, as for xdpban ban",
			 path, e->line, tok, e->prefix.family == XDPBAN_FAMILY_INET ? 4 : 6);
		return -EINVAL;
	}
	return 0;
}

static void read_error(const char *path, const struct xbd_lines *lines, int ret, char *err,
		       size_t errlen)
{
	/* A gzipped file is checked against the limit by what it holds, not by its size. */
	bool all_files = ret == -EFBIG && lines->max_size < XBD_LIST_FILE_MAX;

	if (ret == -EMSGSIZE)
		snprintf(err, errlen, "%s:%u: line longer than %d bytes", path, lines->line,
			 XBD_LIST_LINE_MAX);
	else if (ret == -EBADMSG)
		snprintf(err, errlen, "list %s: its gzip data is corrupt or cut short (after line %u)",
			 path, lines->line);
	else if (all_files)
		snprintf(err, errlen,
			 "list %s: the lists read together hold more than %lld bytes of text (at line %u)",
			 path, (long long)XBD_LISTS_READ_MAX, lines->line);
	else if (ret == -EFBIG)
		snprintf(err, errlen, "list %s holds more than %d bytes of text (at line %u)",
			 path, XBD_LIST_FILE_MAX, lines->line);
	else
		snprintf(err, errlen, "cannot read list %s: %s", path, strerror(-ret));
}

/* [lists] ignore-errors: the bad line (its message in r->err) is counted, the first quoted. */
static void skip_line(struct read_state *r, __u32 list_id)
{
	size_t shown = 0;

	for (__u32 id = 0; id <= XBD_MAX_LISTS; id++)
		shown += r->out->skipped[id];
	if (shown < XBD_LIST_ERRORS_SHOWN)
		snprintf(r->out->skipped_first[shown], sizeof(r->out->skipped_first[0]), "%s",
			 r->err);
	r->out->skipped[list_id]++;
	r->err[0] = '\0';
}

/* The display hears where the reading is every PROGRESS_LINES lines: often enough for its
 * interval, rarely enough to cost nothing. */
#define PROGRESS_LINES 4096

/* Bytes of the file consumed so far: the offset of fd, which a gzip reader shares (its dup),
 * so that a gzipped file counts the compressed bytes, against the size of the file. */
static void show_reading(struct xb_progress *p, const char *path, const struct xbd_lines *lines,
			 off_t size, bool phase)
{
	char n[XB_PROGRESS_NUM_MAX], at[XB_PROGRESS_NUM_MAX], all[XB_PROGRESS_NUM_MAX],
		text[XB_PROGRESS_LINE_MAX];
	const char *name = strrchr(path, '/');
	off_t pos;

	if (!p)
		return;
	pos = lseek(lines->fd, 0, SEEK_CUR);
	snprintf(text, sizeof(text), "reading %s: %s lines (%s of %s)", name ? name + 1 : path,
		 xb_progress_count(lines->line, n), xb_progress_bytes(pos > 0 ? pos : 0, at),
		 xb_progress_bytes(size, all));
	if (phase)
		xb_progress_phase(p, "%s", text);
	else
		xb_progress_show(p, "%s", text);
}

/* A prefix's part of its file's digest: summed, so the order of the lines does not count; a
 * 64-bit mix (splitmix64's finaliser) of each word, so that two sets of prefixes of the same
 * size almost never sum alike. */
static __u64 prefix_digest(const struct xb_prefix *p)
{
	__u64 words[3] = { (__u64)p->family << 8 | p->plen }, h = 0;

	memcpy(&words[1], p->addr, sizeof(words) - sizeof(words[0]));
	for (size_t i = 0; i < 3; i++) {
		__u64 z = h + words[i] + 0x9e3779b97f4a7c15ull;

		z = (z ^ z >> 30) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ z >> 27) * 0x94d049bb133111ebull;
		h = z ^ z >> 31;
	}
	return h;
}

/* The file of lc: the one sent open, or its path opened here. */
static int list_fd(struct read_state *r, const struct xbd_list_conf *lc, int *fd)
{
	if (!r->opts->fds)
		return xbd_open_regular(lc->path, "list", XBD_LIST_FILE_MAX, fd, r->err, r->errlen);
	*fd = r->opts->fds[lc - r->files];
	return xbd_fd_regular(*fd, lc->path, "list", XBD_LIST_FILE_MAX, r->err, r->errlen);
}

static int read_one(struct read_state *r, const struct xbd_list_conf *lc)
{
	struct xbd_list_entry e = { .verdict = lc->verdict, .list_id = lc->id };
	struct xbd_lines lines;
	struct stat st;
	off_t size = 0;
	char *line;
	size_t len;
	int fd, ret = list_fd(r, lc, &fd);

	if (ret)
		return ret;
	/* At least a byte: 0 would be no limit. */
	ret = xbd_lines_open(&lines, fd, XBD_LIST_LINE_MAX,
			     r->left < 1 ? 1 : r->left < XBD_LIST_FILE_MAX ? r->left : XBD_LIST_FILE_MAX);
	if (!ret)
		ret = xbd_lines_gunzip(&lines);
	if (r->opts->progress && !fstat(fd, &st))
		size = st.st_size;
	if (!ret)
		show_reading(r->opts->progress, lc->path, &lines, size, true);
	while (!ret && (ret = xbd_lines_next(&lines, &line, &len)) > 0) {
		e.line = lines.line;
		if (e.line % PROGRESS_LINES == 0)
			show_reading(r->opts->progress, lc->path, &lines, size, false);
		ret = parse_line(lc->path, line, len, &e, r->err, r->errlen);
		if (ret == -EINVAL && r->opts->ignore_errors) {
			skip_line(r, lc->id);
			ret = 0;
			continue;
		}
		if (ret == 1) {
			ret = 0;
			continue;
		}
		if (ret)
			break;
		r->raw[lc->id][family_index(&e.prefix)]++;
		r->out->entries[lc->id]++;
		r->out->digest[lc->id] += prefix_digest(&e.prefix);
		ret = keep(r, &e);
	}
	if (ret < 0 && ret != -EINVAL && ret != -ENOMEM)
		read_error(lc->path, &lines, ret, r->err, r->errlen);
	r->left -= lines.read;
	xbd_lines_close(&lines);
	if (!r->opts->fds)
		close(fd);
	return ret;
}

/* The room a reading of these files leaves for entries of each kind; an allow list among them
 * takes one place of each family for the default layer's /0, which the plan adds
 * (xbd_lists_policy_set). */
static void read_room(struct read_state *r, const struct xbd_list_caps *caps)
{
	r->kinds[KIND_POLICY] = (struct read_kind){ "policy table", { caps->ipv4, caps->ipv6 },
						    0, false, &r->out->policy };
	r->kinds[KIND_NEVER_BAN] = (struct read_kind){ "never-ban room of the exempt trie",
						       { caps->never_ban4, caps->never_ban6 },
						       0, false, &r->out->never_ban };
	r->kinds[KIND_OBSERVED] = (struct read_kind){ "observed trie",
						      { XDPBAN_OBSERVED_MAX, XDPBAN_OBSERVED_MAX },
						      0, false, &r->out->observed };
	for (size_t i = 0; i < r->n_files; i++)
		r->out->allow_list = r->out->allow_list ||
				     r->files[i].verdict == XDPBAN_POLICY_ALLOWED;
	for (int f = 0; r->out->allow_list && f < 2; f++)
		r->kinds[KIND_POLICY].cap[f] -= r->kinds[KIND_POLICY].cap[f] > 0;
	for (int k = 0; k < N_KINDS; k++) {
		size_t max = r->kinds[k].cap[0] + r->kinds[k].cap[1];

		r->kinds[k].store_max = max + max / 2 + 1024; /* room that dropping repeats makes */
	}
}

int xbd_lists_read_files(const struct xbd_list_conf *files, size_t n,
			 const struct xbd_list_read_opts *opts, struct xbd_lists *out, char *err,
			 size_t errlen)
{
	struct read_state r = { .files = files, .n_files = n, .opts = opts, .out = out,
				.left = XBD_LISTS_READ_MAX, .err = err, .errlen = errlen };
	char count[XB_PROGRESS_NUM_MAX];
	size_t read_entries = 0;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	read_room(&r, opts->caps);
	for (size_t i = 0; i < n && !ret; i++)
		ret = read_one(&r, &files[i]);
	for (__u32 id = 0; id <= XBD_MAX_LISTS; id++)
		read_entries += out->entries[id];
	if (!ret && n) /* sorting them, dropping repeats, painting */
		xb_progress_phase(opts->progress, "checking %s list entries",
				  xb_progress_count(read_entries, count));
	for (int k = 0; k < N_KINDS && !ret; k++) {
		dedup(r.kinds[k].out, &out->painted);
		ret = overflow_error(&r, &r.kinds[k]);
	}
	if (!ret)
		paint_layers(&out->policy, &out->painted);
	if (ret)
		xbd_lists_free(out);
	return ret;
}

int xbd_lists_read(const struct xbd_conf *conf, const struct xbd_list_caps *caps,
		   struct xbd_lists *out, struct xb_progress *progress, char *err, size_t errlen)
{
	const struct xbd_list_read_opts opts = { .caps = caps,
						 .ignore_errors = conf->lists_ignore_errors,
						 .progress = progress };

	return xbd_lists_read_files(conf->lists, (size_t)conf->n_lists, &opts, out, err, errlen);
}

void xbd_lists_free(struct xbd_lists *l)
{
	free(l->policy.v);
	free(l->never_ban.v);
	free(l->observed.v);
	memset(l, 0, sizeof(*l));
}

int xbd_lists_never_ban(const struct xbd_lists *l, struct xb_exempt_set *out)
{
	int ret = 0;

	for (size_t i = 0; i < l->never_ban.n && !ret; i++)
		ret = xb_exempt_set_add(out, &l->never_ban.v[i].prefix, XDPBAN_EXEMPT_LIST, 0);
	return ret;
}

/* The trie's changes as they are made, then the flat tables (the steps after them are quick). */
static void show_compile(__u8 family, enum xb_compile_step step, size_t done, size_t total,
			 void *ctx)
{
	char text[XB_PROGRESS_LINE_MAX], n[XB_PROGRESS_NUM_MAX], all[XB_PROGRESS_NUM_MAX];
	int v = family == XDPBAN_FAMILY_INET ? 4 : 6;

	if (step == XB_COMPILE_TRIE_DONE) {
		xb_progress_phase(ctx, "compiling IPv%d: flat tables", v);
		return;
	}
	if ((step != XB_COMPILE_TOUCHED && step != XB_COMPILE_TRIE_STEP) || !total)
		return; /* a trie with nothing to change says nothing */
	snprintf(text, sizeof(text), "compiling IPv%d: trie %s of %s prefixes", v,
		 xb_progress_count(done, n), xb_progress_count(total, all));
	if (step == XB_COMPILE_TOUCHED)
		xb_progress_phase(ctx, "%s", text);
	else
		xb_progress_show(ctx, "%s", text);
}

int xbd_lists_policy_set(const struct xbd_list_plan *l, struct xb_policy_set *set)
{
	static const __u8 families[] = { XDPBAN_FAMILY_INET, XDPBAN_FAMILY_INET6 };
	const struct xdpban_policy dflt = { .verdict = XDPBAN_POLICY_NOT_ALLOWED,
					    .list_id = XDPBAN_LIST_DEFAULT };
	int ret = xb_policy_set_reserve(set, l->policy.n + (l->allow_only ? 2 : 0));

	for (size_t i = 0; i < l->policy.n && !ret; i++) {
		const struct xbd_list_entry *e = &l->policy.v[i];
		struct xdpban_policy val = { .verdict = e->verdict, .list_id = e->list_id };

		ret = xb_policy_set_add(set, &e->prefix, &val);
	}
	for (size_t f = 0; l->allow_only && f < 2 && !ret; f++) {
		struct xb_prefix all = { .family = families[f] }; /* /0 */

		ret = xb_policy_set_add(set, &all, &dflt);
	}
	return ret;
}

void xbd_lists_left_out(const struct xb_compile_result *res, char *buf, size_t len)
{
	__u32 lines6 = res->lines6 + res->lines6_full, hosts6 = res->hosts6 + res->hosts6_full;
	int at = 0;

	buf[0] = '\0';
	if (res->lines4_full)
		at = snprintf(buf, len, "%u IPv4 /24 lines did not fit: policy-lines-max wants at least %u",
			      res->lines4_full, res->lines4 + res->lines4_full);
	if ((res->lines6_full || res->hosts6_full) && at >= 0 && (size_t)at < len)
		at += snprintf(buf + at, len - (size_t)at,
			       "%s%u IPv6 lines and %u IPv6 hosts did not fit: policy-lines6-max wants at least %u",
			       at ? "; " : "", res->lines6_full, res->hosts6_full,
			       lines6 > hosts6 ? lines6 : hosts6);
	if (at > 0 && (size_t)at < len)
		snprintf(buf + at, len - (size_t)at,
			 " (the trie answers those sources, right but slower; the sizes apply when the maps are created)");
}

/* Allow-only mode's flag in the config map (xdpban_config.h) set to on; *was gets what it was. */
static int set_allow_only(const struct xb_maps *m, bool on, bool *was, char *err, size_t errlen)
{
	struct xdpban_config cfg;
	int ret = xb_config_read(m, &cfg);

	if (ret) {
		snprintf(err, errlen, "cannot read the config map: %s", strerror(-ret));
		return ret;
	}
	*was = cfg.policy & XDPBAN_CFG_ALLOW_ONLY;
	if (*was == on)
		return 0;
	cfg.policy = on ? cfg.policy | XDPBAN_CFG_ALLOW_ONLY : cfg.policy & ~XDPBAN_CFG_ALLOW_ONLY;
	return xb_config_write(m, &cfg, err, errlen);
}

/* One compile (policy.h): a list entry on the prefix of a manual ban replaces it, entries no
 * list holds any more go, and the flat table is exact again afterwards. */
static int compile_plan(const struct xb_maps *m, const struct xbd_list_plan *l,
			struct xb_progress *progress, struct xb_compile_result *res, char *err,
			size_t errlen)
{
	const struct xb_compile_opts opts = { .keep = xb_keep_manual_bans,
					      .observe = progress ? show_compile : NULL,
					      .ctx = progress };
	char count[XB_PROGRESS_NUM_MAX];
	struct xb_policy_set set = {};
	int ret = xbd_lists_policy_set(l, &set);

	if (ret)
		snprintf(err, errlen, "out of memory for %zu policy entries", l->policy.n);
	else {
		xb_progress_phase(progress, "compiling %s policy entries",
				  xb_progress_count(set.n, count));
		ret = xb_policy_compile(m, &set, &opts, res, err, errlen);
	}
	xb_policy_set_free(&set);
	return ret;
}

/* The observed deny lists into the observed tries, emptied and filled (libxdpban.h): they
 * only count, so no packet's verdict can see the change. */
static int apply_observed(const struct xb_maps *m, const struct xbd_list_entries *observed,
			  char *err, size_t errlen)
{
	struct xb_observed_entry *v = calloc(observed->n ? observed->n : 1, sizeof(*v));
	int ret;

	if (!v) {
		snprintf(err, errlen, "out of memory for %zu observed entries", observed->n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < observed->n; i++)
		v[i] = (struct xb_observed_entry){ .prefix = observed->v[i].prefix,
						   .list_id = observed->v[i].list_id };
	ret = xb_observed_replace(m, v, observed->n, err, errlen);
	free(v);
	return ret;
}

/* The policy's flag goes on before the default layer's entries can be met, and off only once
 * they are gone, so that the data path always tells not allowed from deny; a compile that
 * fails leaves it as it was, as it leaves the tries. */
static int apply_policy(const struct xb_maps *m, const struct xbd_list_plan *l,
			struct xb_progress *progress, struct xb_compile_result *res, char *err,
			size_t errlen)
{
	char ignored[XB_ERRLEN];
	bool was = false;
	int ret;

	if (!l->allow_only) {
		ret = compile_plan(m, l, progress, res, err, errlen);
		return ret ? ret : set_allow_only(m, false, &was, err, errlen);
	}
	ret = set_allow_only(m, true, &was, err, errlen);
	if (!ret)
		ret = compile_plan(m, l, progress, res, err, errlen);
	if (ret && !was)
		set_allow_only(m, false, &was, ignored, sizeof(ignored));
	return ret;
}

int xbd_lists_apply(const struct xb_maps *m, const struct xbd_list_plan *l,
		    struct xb_progress *progress, struct xb_compile_result *res, char *err,
		    size_t errlen)
{
	int ret = apply_policy(m, l, progress, res, err, errlen);

	return ret ? ret : apply_observed(m, &l->observed, err, errlen);
}

int xbd_list_entries_merge(struct xbd_list_entries *into, const struct xbd_list_entries *more)
{
	size_t n = into->n + more->n, painted = 0;

	if (n > into->cap) {
		struct xbd_list_entry *v = xb_big_realloc(into->v, (n ? n : 1) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		into->v = v;
		into->cap = n;
	}
	if (more->n)
		memcpy(into->v + into->n, more->v, more->n * sizeof(*more->v));
	into->n = n;
	dedup(into, &painted);
	paint_layers(into, &painted);
	return 0;
}

void xbd_list_plan_free(struct xbd_list_plan *plan)
{
	free(plan->policy.v);
	free(plan->observed.v);
	memset(plan, 0, sizeof(*plan));
}

const struct xbd_list_entry *xbd_lists_find(const struct xbd_list_entries *l,
					    const struct xb_prefix *p)
{
	struct xbd_list_entry key = { .prefix = *p };
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = entry_cmp_key(&l->v[mid], &key);

		if (!c)
			return &l->v[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void xbd_list_entries_sort(struct xbd_list_entries *l)
{
	size_t painted = 0;

	dedup(l, &painted);
}
