/* runlists.c - see runlists.h. The store is line-based text:
 *
 *   xdpban-runtime-lists 1
 *   list deny 2 /srv/feeds/drop.txt      (layer, lines skipped, the name: the rest of the line)
 *   192.0.2.0/24 17                      (an entry and its line in that file)
 *   list never-ban 0 <entries>           (a layer's single entries, in the order added:)
 *   198.51.100.9/32 1 lab host           (an entry, its place, and its comment, if any)
 *   end 2                                (the number of entries: a cut file is recognised)
 *
 * (the first and the last line are the frame, frame.h). The runtime lists are read with the
 * config's reader (lists.h), and composed with the config's lists into the plan the maps get,
 * which decides allow-only mode (xbd_lists_compose).
 *
 * A change is read, compiled and saved before it is kept: a load or clear that fails at any
 * step leaves the tries, the store and the lists in memory as they were. */
#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "control_fields.h"
#include "files.h"
#include "frame.h"
#include "policy.h"
#include "runlists.h"
#include "xdpban_policy.h"

static const struct {
	const char *name;
	__u32 verdict;
} layers[] = { { "allow", XDPBAN_POLICY_ALLOWED },
	       { "deny", XDPBAN_POLICY_DENY },
	       { "trusted", XDPBAN_POLICY_TRUSTED },
	       { "never-ban", XBD_LIST_NEVER_BAN } };
#define N_LAYERS (sizeof(layers) / sizeof(layers[0]))

int xbd_layer_parse(const char *name, __u32 *verdict)
{
	for (size_t i = 0; i < N_LAYERS; i++) {
		if (!strcmp(name, layers[i].name)) {
			*verdict = layers[i].verdict;
			return 0;
		}
	}
	return -EINVAL;
}

const char *xbd_layer_nth(size_t i)
{
	return i < N_LAYERS ? layers[i].name : NULL;
}

const char *xbd_layer_name(__u32 verdict)
{
	if (verdict == XBD_LIST_OBSERVED) /* the config's only: no runtime list is observed */
		return XBD_LAYER_OBSERVED;
	for (size_t i = 0; i < N_LAYERS; i++)
		if (layers[i].verdict == verdict)
			return layers[i].name;
	return "?";
}

char *xbd_runtime_store(const char *state_file)
{
	char *path = NULL;

	if (state_file && asprintf(&path, "%s%s", state_file, XBD_RUNTIME_SUFFIX) < 0)
		path = NULL;
	return path;
}

void xbd_rt_list_free(struct xbd_rt_list *l)
{
	for (size_t i = 0; l->comments && i < l->e.n; i++)
		free(l->comments[i]);
	free(l->comments);
	free(l->path);
	free(l->e.v);
	memset(l, 0, sizeof(*l));
}

void xbd_runtime_free(struct xbd_runtime *rt)
{
	for (size_t i = 0; i < rt->n; i++)
		xbd_rt_list_free(&rt->v[i]);
	rt->n = 0;
}

/* A runtime list's id is its place: renumbered after every change. */
static void renumber(struct xbd_runtime *rt)
{
	for (size_t i = 0; i < rt->n; i++)
		for (size_t j = 0; j < rt->v[i].e.n; j++)
			rt->v[i].e.v[j].list_id = XBD_RUNTIME_LIST_BASE + (__u32)i;
}

/* ---- the store ---- */

#define STORE_LINE_MAX (PATH_MAX + 64)

/* The store's first and last lines (frame.h). */
static const struct xbd_frame store_frame = { .magic = XBD_RUNTIME_MAGIC,
					      .version = XBD_RUNTIME_VERSION };

static void store_write_entry(FILE *f, const struct xbd_rt_list *l, const struct xbd_list_entry *e)
{
	const char *comment = xbd_rt_entry_comment(l, e);
	char text[64];

	xb_prefix_format(&e->prefix, text, sizeof(text));
	fprintf(f, "%s %u%s%s\n", text, e->line, *comment ? " " : "", comment);
}

/* A list's entries; single entries in the order added, so that their lines read back as
 * 1, 2, 3... (store_line). */
static int store_write_list(FILE *f, const struct xbd_rt_list *l)
{
	const struct xbd_list_entry **by_line;

	fprintf(f, "list %s %zu %s\n", xbd_layer_name(l->verdict), l->skipped, l->path);
	if (!xbd_rt_is_entries(l)) {
		for (size_t j = 0; j < l->e.n; j++)
			store_write_entry(f, l, &l->e.v[j]);
		return 0;
	}
	by_line = xbd_rt_entries_by_line(l);
	if (!by_line)
		return -ENOMEM;
	for (size_t j = 0; j < l->e.n; j++)
		store_write_entry(f, l, by_line[j]);
	free(by_line);
	return 0;
}

static int store_write(FILE *f, void *ctx)
{
	const struct xbd_runtime *rt = ctx;
	size_t total = 0;
	int ret = 0;

	xbd_frame_write_header(f, &store_frame);
	for (size_t i = 0; i < rt->n && !ret; i++) {
		ret = store_write_list(f, &rt->v[i]);
		total += rt->v[i].e.n;
	}
	xbd_frame_write_end(f, total);
	return ret ? ret : ferror(f) ? -EIO : 0;
}

int xbd_runtime_save(const char *path, const struct xbd_runtime *rt, char *err, size_t errlen)
{
	if (!path)
		return 0;
	if (!rt->n) { /* nothing loaded: no file, as before the first load */
		if (unlink(path) && errno != ENOENT) {
			snprintf(err, errlen, "cannot remove %s: %s", path, strerror(errno));
			return -errno;
		}
		return 0;
	}
	return xbd_file_save(path, "the runtime lists", store_write, (void *)rt, err, errlen);
}

/* What the frame makes of line no, in the store's words: 1 for a record, 0 for the first or
 * the end line, or -EINVAL with why. */
static int frame_line(struct xbd_frame *fr, const char *line, unsigned int no, char *why,
		      size_t whylen)
{
	switch (xbd_frame_line(fr, no, line)) {
	case XBD_FRAME_RECORD:
		return 1;
	case XBD_FRAME_EDGE:
		return 0;
	case XBD_FRAME_BAD_HEADER:
		snprintf(why, whylen, "line 1: not '%s %d'", fr->magic, fr->version);
		break;
	case XBD_FRAME_BAD_END:
		snprintf(why, whylen, "line %u: the end line does not say %zu entries", no,
			 fr->records);
		break;
	case XBD_FRAME_AFTER_END:
		snprintf(why, whylen, "line %u: text after the end line", no);
		break;
	}
	return -EINVAL;
}

/* A "list" line of the store into rt: 0, or -EINVAL (the caller says why). The never-ban
 * layer holds single entries only. */
static int store_list_line(const char *line, struct xbd_runtime *rt)
{
	struct xbd_rt_list *l = &rt->v[rt->n];
	unsigned long long n;
	char layer[16];
	int off = 0;

	if (rt->n == XBD_RUNTIME_LISTS_MAX ||
	    sscanf(line, "list %15s %llu %n", layer, &n, &off) != 2 || !off ||
	    xbd_layer_parse(layer, &l->verdict))
		return -EINVAL;
	if (strcmp(line + off, XBD_LIST_ENTRIES) &&
	    (!xbd_list_name_ok(line + off) || l->verdict == XBD_LIST_NEVER_BAN))
		return -EINVAL;
	l->skipped = n;
	l->path = strdup(line + off);
	if (!l->path)
		return -ENOMEM;
	rt->n++;
	return 0;
}

/* An entry line into the last list of rt: "PREFIX LINE", and for a single entry its place
 * (the next in the order added) and " COMMENT" after it. 0, or -EINVAL (with why when the
 * prefix is what is wrong). */
static int store_entry_line(const char *line, struct xbd_runtime *rt, char *why, size_t whylen)
{
	struct xbd_rt_list *l = &rt->v[rt->n - 1];
	struct xbd_list_entry e = { .verdict = l->verdict };
	const char *comment = NULL;
	unsigned long long n;
	bool added = false;
	char rest[64];
	int off = 0, ret;

	if (sscanf(line, "%63s %llu%n", rest, &n, &off) != 2 || !n || n > 0xffffffffull ||
	    xb_prefix_parse(rest, &e.prefix, why, whylen) || !e.prefix.plen)
		return -EINVAL;
	if (xbd_rt_is_entries(l) && line[off] == ' ')
		comment = line + off + 1;
	else if (line[off])
		return -EINVAL;
	e.line = (__u32)n;
	if (!xbd_rt_is_entries(l))
		return xbd_list_entries_push(&l->e, &e, SIZE_MAX);
	if (e.line != l->e.n + 1 || xbd_entry_check(&e.prefix, comment, why, whylen))
		return -EINVAL;
	ret = xbd_rt_entries_put(l, &e.prefix, comment, &added);
	return !ret && !added ? -EINVAL : ret; /* a prefix twice */
}

/* One line of the store into rt. 0, or -EINVAL with why. */
static int store_line(char *line, unsigned int no, struct xbd_runtime *rt, struct xbd_frame *fr,
		      char *why, size_t whylen)
{
	char word[16];
	int ret = frame_line(fr, line, no, why, whylen);

	if (ret <= 0)
		return ret;
	if (sscanf(line, "%15s", word) != 1)
		goto bad;
	if (!strcmp(word, "list"))
		ret = store_list_line(line, rt);
	else
		ret = rt->n ? store_entry_line(line, rt, why, whylen) : -EINVAL;
	if (ret != -EINVAL) {
		fr->records += ret == 0 && strcmp(word, "list");
		return ret;
	}
bad:
	snprintf(why, whylen, "line %u: not a list or entry line: '%.60s'", no, line);
	return -EINVAL;
}

int xbd_runtime_load(const char *path, struct xbd_runtime *rt, char *err, size_t errlen)
{
	struct xbd_frame frame = store_frame;
	struct xbd_lines lines;
	char why[XB_ERRLEN] = "", *line;
	size_t len;
	int fd, ret;

	memset(rt, 0, sizeof(*rt));
	if (!path)
		return 0;
	ret = xbd_open_regular(path, "runtime lists", 0, &fd, err, errlen);
	if (ret)
		return ret == -ENOENT ? 0 : ret;
	ret = xbd_lines_open(&lines, fd, STORE_LINE_MAX, 0);
	while (!ret && (ret = xbd_lines_next(&lines, &line, &len)) > 0) {
		ret = strlen(line) == len ? store_line(line, lines.line, rt, &frame, why,
						       sizeof(why))
					  : -EINVAL;
		if (ret == -EINVAL && !why[0])
			snprintf(why, sizeof(why), "line %u: a NUL byte", lines.line);
	}
	if (ret == -EMSGSIZE)
		snprintf(why, sizeof(why), "line %u: longer than %d bytes", lines.line,
			 STORE_LINE_MAX);
	if (!ret && !frame.ended)
		snprintf(why, sizeof(why), "cut short: no end line (after line %u)", lines.line);
	xbd_lines_close(&lines);
	close(fd);
	if (why[0]) {
		xbd_runtime_free(rt);
		xbd_file_set_aside(path, "runtime lists", err, errlen, why);
		return -EBADMSG;
	}
	if (ret) {
		xbd_runtime_free(rt);
		snprintf(err, errlen, "cannot read runtime lists %s: %s", path, strerror(-ret));
		return ret;
	}
	for (size_t i = 0; i < rt->n; i++)
		xbd_list_entries_sort(&rt->v[i].e);
	renumber(rt);
	return 0;
}

/* ---- composing and applying ---- */

/* Allow-only mode, decided here alone: an allow list, the config's or one loaded at run time,
 * even an empty one, puts the default layer under every list. */
static bool allow_only(const struct xbd_lists *config, const struct xbd_runtime *rt)
{
	bool on = config->allow_list;

	for (size_t i = 0; i < rt->n; i++)
		on = on || rt->v[i].verdict == XDPBAN_POLICY_ALLOWED;
	return on;
}

int xbd_lists_compose(const struct xbd_lists *config, const struct xbd_runtime *rt,
		      struct xbd_list_plan *out)
{
	int ret = 0;

	memset(out, 0, sizeof(*out));
	out->allow_only = allow_only(config, rt);
	ret = xbd_list_entries_merge(&out->policy, &config->policy);
	if (!ret)
		ret = xbd_list_entries_merge(&out->observed, &config->observed);
	for (size_t i = 0; i < rt->n && !ret; i++)
		if (rt->v[i].verdict != XBD_LIST_NEVER_BAN) /* the exempt tries' */
			ret = xbd_list_entries_merge(&out->policy, &rt->v[i].e);
	if (ret)
		xbd_list_plan_free(out);
	return ret;
}

int xbd_lists_ctx_apply(const struct xbd_lists_ctx *c, struct xb_progress *progress,
			struct xb_compile_result *res, char *err, size_t errlen)
{
	struct xbd_list_plan plan;
	int ret = xbd_lists_compose(c->config, c->rt, &plan);

	if (ret) {
		snprintf(err, errlen, "out of memory composing the policy lists");
		return ret;
	}
	ret = xbd_lists_apply(c->maps, &plan, progress, res, err, errlen);
	xbd_list_plan_free(&plan);
	return ret;
}

/* Whether a and b hold other never-ban lists (a list changed is a new one: runentries.c). */
static bool never_ban_differs(const struct xbd_runtime *a, const struct xbd_runtime *b)
{
	size_t na = 0, nb = 0, same = 0;

	for (size_t i = 0; i < a->n; i++) {
		if (a->v[i].verdict != XBD_LIST_NEVER_BAN)
			continue;
		na++;
		for (size_t j = 0; j < b->n; j++)
			same += a->v[i].path == b->v[j].path;
	}
	for (size_t j = 0; j < b->n; j++)
		nb += b->v[j].verdict == XBD_LIST_NEVER_BAN;
	return na != nb || same != na;
}

/* The never-ban entries of next in force. 0 or -errno with err. */
static int switch_never_ban(const struct xbd_lists_ctx *c, const struct xbd_runtime *next,
			    char *err, size_t errlen)
{
	if (!c->never_ban) {
		snprintf(err, errlen, "the never-ban layer needs the daemon: xdpband alone writes "
				      "the exempt tries");
		return -EOPNOTSUPP;
	}
	return c->never_ban(c->user, next, err, errlen);
}

/* Puts next in force (the exempt tries when its never-ban entries changed, the policy tries,
 * then the store); on failure puts *c->rt back in force. The reply says what the compile left
 * to the trie for room, if anything. */
static int switch_to(struct xbd_lists_ctx *c, struct xbd_runtime *next, struct json_object *reply,
		     char *err, size_t errlen)
{
	struct xbd_lists_ctx n = *c;
	struct xb_compile_result res = {};
	char ignored[XB_ERRLEN], left[512];
	bool exempt = never_ban_differs(c->rt, next);
	int ret = exempt ? switch_never_ban(c, next, err, errlen) : 0;

	if (ret)
		return ret;
	n.rt = next;
	renumber(next);
	ret = xbd_lists_ctx_apply(&n, NULL, &res, err, errlen);
	xbd_lists_left_out(&res, left, sizeof(left));
	if (!ret && *left)
		json_object_object_add(reply, XB_F(LEFT_OUT), json_object_new_string(left));
	if (!ret) {
		ret = xbd_runtime_save(c->store, next, err, errlen);
		if (ret)
			xbd_lists_ctx_apply(c, NULL, NULL, ignored, sizeof(ignored));
	}
	renumber(c->rt);
	if (ret && exempt)
		c->never_ban(c->user, c->rt, ignored, sizeof(ignored));
	return ret;
}

/* Frees the lists of a that b does not share, and empties a. */
static void free_unshared(struct xbd_runtime *a, const struct xbd_runtime *b)
{
	for (size_t i = 0; i < a->n; i++) {
		bool shared = false;

		for (size_t j = 0; j < b->n && !shared; j++)
			shared = a->v[i].path == b->v[j].path;
		if (!shared)
			xbd_rt_list_free(&a->v[i]);
	}
	a->n = 0;
}

int xbd_lists_ctx_replace(struct xbd_lists_ctx *c, struct xbd_runtime *next,
			  struct json_object *reply, char *err, size_t errlen)
{
	int ret = switch_to(c, next, reply, err, errlen);

	if (ret) {
		free_unshared(next, c->rt);
		return ret;
	}
	free_unshared(c->rt, next);
	*c->rt = *next;
	next->n = 0;
	renumber(c->rt);
	return 0;
}

/* ---- load and clear ---- */

bool xbd_list_name_ok(const char *name)
{
	return (name[0] == '/' || !strcmp(name, XBD_LIST_STDIN)) && !strchr(name, '\n');
}

int xbd_runtime_read(const struct xbd_list_caps *caps, const int *fds, __u32 verdict,
		     const char *const *files, size_t n, bool ignore_errors, struct xbd_lists *out,
		     char *err, size_t errlen)
{
	const struct xbd_list_read_opts opts = { .caps = caps, .fds = fds,
						 .ignore_errors = ignore_errors };
	struct xbd_list_conf lists[XBD_MAX_LISTS];

	if (n > XBD_MAX_LISTS) {
		snprintf(err, errlen, "at most %d files in one load", XBD_MAX_LISTS);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++)
		lists[i] = (struct xbd_list_conf){ .path = (char *)files[i], .verdict = verdict,
						   .id = (__u32)i + 1 };
	return xbd_lists_read_files(lists, n, &opts, out, err, errlen);
}

/* The entries of list id (1..n) of what was read, as a runtime list. */
static int take_list(const struct xbd_lists *read, __u32 id, struct xbd_rt_list *l)
{
	for (size_t i = 0; i < read->policy.n; i++) {
		const struct xbd_list_entry *e = &read->policy.v[i];

		if (e->list_id == id && xbd_list_entries_push(&l->e, e, SIZE_MAX))
			return -ENOMEM;
	}
	return 0;
}

static struct json_object *skipped_json(const struct xbd_lists *read)
{
	struct json_object *arr = json_object_new_array();
	size_t skipped = 0;

	for (size_t id = 0; id <= XBD_MAX_LISTS; id++)
		skipped += read->skipped[id];
	for (size_t i = 0; arr && i < skipped && i < XBD_LIST_ERRORS_SHOWN; i++)
		json_object_array_add(arr, json_object_new_string(read->skipped_first[i]));
	return arr;
}

/* The runtime lists a load of files into verdict's layer keeps, into next when not NULL
 * (shared with c->rt until the switch): all but those of the same paths and layer, which it
 * replaces (replaced[i] for each of c->rt). Their number. */
static size_t kept_lists(const struct xbd_lists_ctx *c, __u32 verdict, const char *const *files,
			 size_t n, bool *replaced, struct xbd_runtime *next)
{
	size_t kept = 0;

	for (size_t i = 0; i < c->rt->n; i++) {
		replaced[i] = false;
		for (size_t j = 0; j < n && !replaced[i]; j++)
			replaced[i] = c->rt->v[i].verdict == verdict &&
				      !strcmp(c->rt->v[i].path, files[j]);
		if (!replaced[i] && next)
			next->v[kept] = c->rt->v[i];
		kept += !replaced[i];
	}
	return kept;
}

int xbd_lists_ctx_load_check(const struct xbd_lists_ctx *c, __u32 verdict,
			     const char *const *files, size_t n, char *err, size_t errlen)
{
	bool replaced[XBD_RUNTIME_LISTS_MAX];

	if (!n || n > XBD_MAX_LISTS) {
		snprintf(err, errlen, n ? "at most %d files in one load" : "no files to load",
			 XBD_MAX_LISTS);
		return -EINVAL;
	}
	if (verdict == XBD_LIST_NEVER_BAN) {
		snprintf(err, errlen, "the never-ban layer takes single entries (lists add), not files");
		return -EINVAL;
	}
	if (kept_lists(c, verdict, files, n, replaced, NULL) + n > XBD_RUNTIME_LISTS_MAX) {
		snprintf(err, errlen, "at most %d runtime lists at once: clear a layer first",
			 XBD_RUNTIME_LISTS_MAX);
		return -ENOSPC;
	}
	return 0;
}

int xbd_lists_ctx_load_read(struct xbd_lists_ctx *c, __u32 verdict, const char *const *files,
			    size_t n, const struct xbd_lists *read, struct json_object *reply,
			    char *err, size_t errlen)
{
	struct xbd_runtime *next = calloc(1, sizeof(*next));
	size_t kept, entries = 0, skipped = 0, added;
	bool replaced[XBD_RUNTIME_LISTS_MAX];
	int ret = 0;

	if (!next)
		return -ENOMEM;
	/* Checked again: what is in force may have changed while the files were read. */
	ret = xbd_lists_ctx_load_check(c, verdict, files, n, err, errlen);
	if (ret)
		goto out;
	kept = kept_lists(c, verdict, files, n, replaced, next);
	next->n = kept;
	for (size_t j = 0; j < n && !ret; j++) {
		struct xbd_rt_list *l = &next->v[next->n++];

		l->verdict = verdict;
		l->skipped = read->skipped[j + 1];
		l->path = strdup(files[j]);
		ret = l->path ? take_list(read, (__u32)j + 1, l) : -ENOMEM;
		entries += read->entries[j + 1];
		skipped += l->skipped;
	}
	added = next->n - kept;
	if (ret)
		snprintf(err, errlen, "out of memory");
	if (ret)
		free_unshared(next, c->rt);
	else
		ret = xbd_lists_ctx_replace(c, next, reply, err, errlen);
	if (!ret) {
		json_object_object_add(reply, XB_F(LOADED), json_object_new_int64((int64_t)added));
		json_object_object_add(reply, XB_F(LAYER), json_object_new_string(xbd_layer_name(verdict)));
		json_object_object_add(reply, XB_F(ENTRIES), json_object_new_int64((int64_t)entries));
		json_object_object_add(reply, XB_F(SKIPPED), json_object_new_int64((int64_t)skipped));
		json_object_object_add(reply, XB_F(SKIPPED_FIRST), skipped_json(read));
	}
out:
	free(next);
	return ret;
}

int xbd_lists_ctx_load(struct xbd_lists_ctx *c, __u32 verdict, const char *const *files,
		       const int *fds, size_t n, bool ignore_errors, struct json_object *reply,
		       char *err, size_t errlen)
{
	struct xbd_lists read = {};
	struct xbd_list_caps caps;
	int ret = xbd_lists_ctx_load_check(c, verdict, files, n, err, errlen);

	if (!ret)
		ret = xbd_list_caps_of(c->maps, &caps, err, errlen);
	if (!ret)
		ret = xbd_runtime_read(&caps, fds, verdict, files, n, ignore_errors, &read, err,
				       errlen);
	if (!ret)
		ret = xbd_lists_ctx_load_read(c, verdict, files, n, &read, reply, err, errlen);
	xbd_lists_free(&read);
	return ret;
}

/* The runtime lists of a layer `lists clear` drops: all of them, or the one named file. */
static bool cleared_by(const struct xbd_rt_list *l, __u32 verdict, const char *file)
{
	return l->verdict == verdict && (!file || !strcmp(l->path, file));
}

int xbd_lists_ctx_clear(struct xbd_lists_ctx *c, __u32 verdict, const char *file,
			struct json_object *reply, char *err, size_t errlen)
{
	struct xbd_runtime *next = calloc(1, sizeof(*next));
	size_t cleared = 0;
	int ret = 0;

	if (!next)
		return -ENOMEM;
	for (size_t i = 0; i < c->rt->n; i++)
		if (!cleared_by(&c->rt->v[i], verdict, file))
			next->v[next->n++] = c->rt->v[i];
	cleared = c->rt->n - next->n;
	if (file && !cleared) {
		snprintf(err, errlen, "no runtime list %s in the %s layer", file,
			 xbd_layer_name(verdict));
		ret = -ENOENT;
	} else if (cleared) {
		ret = xbd_lists_ctx_replace(c, next, reply, err, errlen);
	}
	if (!ret) {
		json_object_object_add(reply, XB_F(LAYER), json_object_new_string(xbd_layer_name(verdict)));
		json_object_object_add(reply, XB_F(CLEARED), json_object_new_int64((int64_t)cleared));
	}
	free(next);
	return ret;
}
