/* runlists_show.c - what `lists show` and `query` say of the lists (runlists.h): the
 * addresses each file decides once the layers are painted, the totals allowed and denied as
 * zmap prints them, the single entries with their comments, and the file and line of the
 * entry that decided an address (or made it exempt). IPv6 counts are exact: 128-bit integers,
 * and "2^128" for every address. The never-ban layer is shown beside the policy's three, with
 * counts of its own: its entries are in no policy verdict. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "control_fields.h"
#include "runlists.h"
#include "xdpban_policy.h"

typedef unsigned __int128 u128;

static void count_add(struct xbd_count *to, const struct xbd_count *c)
{
	u128 sum = to->n + c->n;

	/* Disjoint sets of one family: the sum reaches 2^128 at most, so a wrap is 2^128. */
	to->all = to->all || c->all || sum < to->n;
	to->n = to->all ? 0 : sum;
}

const char *xbd_count_format(const struct xbd_count *c, char *buf, size_t len)
{
	char digits[48];
	size_t i = sizeof(digits) - 1;
	u128 n = c->n;

	if (c->all) {
		snprintf(buf, len, "2^128");
		return buf;
	}
	digits[i] = '\0';
	do {
		digits[--i] = (char)('0' + (int)(n % 10));
		n /= 10;
	} while (n);
	snprintf(buf, len, "%s", digits + i);
	return buf;
}

static unsigned int family_bits(__u8 family)
{
	return family == XDPBAN_FAMILY_INET ? 32 : 128;
}

/* The first and last address of a prefix as integers (IPv4 in the low 32 bits). */
static void prefix_span(const struct xb_prefix *p, u128 *first, u128 *last)
{
	unsigned int bits = family_bits(p->family), bytes = bits / 8;
	u128 v = 0, host;

	for (unsigned int i = 0; i < bytes; i++)
		v = v << 8 | p->addr[i];
	host = p->plen >= bits ? 0 : ((u128)1 << (bits - p->plen)) - 1;
	*first = v & ~host;
	*last = *first | host;
}

int xbd_count_own(struct xbd_list_entry *e, size_t n, struct xbd_count *own,
		  struct xbd_count rest[2])
{
	size_t *stack = malloc((n ? n : 1) * sizeof(*stack)), depth = 0;
	struct xbd_count top[2] = {};
	__u8 family = 0;

	if (!stack)
		return -ENOMEM;
	if (n)
		qsort(e, n, sizeof(*e), xbd_list_entry_start_cmp);
	for (size_t i = 0; i < n; i++) {
		int f = e[i].prefix.family == XDPBAN_FAMILY_INET6;
		u128 first, last, pfirst, plast;

		if (e[i].prefix.family != family) {
			family = e[i].prefix.family;
			depth = 0;
		}
		prefix_span(&e[i].prefix, &first, &last);
		own[i] = (struct xbd_count){ .n = last - first + 1 };
		while (depth) {
			prefix_span(&e[stack[depth - 1]].prefix, &pfirst, &plast);
			if (plast >= first)
				break;
			depth--;
		}
		if (depth)
			own[stack[depth - 1]].n -= own[i].n; /* the parent decides the rest of its span */
		else
			count_add(&top[f], &own[i]);
		stack[depth++] = i;
	}
	free(stack);
	for (int f = 0; f < 2; f++) {
		unsigned int bits = f ? 128 : 32;

		if (top[f].all)
			rest[f] = (struct xbd_count){ .n = 0 };
		else if (bits == 128)
			rest[f] = (struct xbd_count){ .n = -top[f].n, .all = top[f].n == 0 };
		else
			rest[f] = (struct xbd_count){ .n = ((u128)1 << 32) - top[f].n };
	}
	return 0;
}

/* IPv4 counts as integers, IPv6 as decimal strings (they pass 2^64). */
static struct json_object *count_json(const struct xbd_count *c, bool v6)
{
	char text[48];

	if (!v6)
		return json_object_new_int64((int64_t)c->n);
	return json_object_new_string(xbd_count_format(c, text, sizeof(text)));
}

static void add_counts(struct json_object *o, const struct xbd_count c[2])
{
	json_object_object_add(o, XB_F(IPV4_ADDRESSES), count_json(&c[0], false));
	json_object_object_add(o, XB_F(IPV6_ADDRESSES), count_json(&c[1], true));
}

/* One file's row: where it comes from, its entries and the addresses it decides. */
struct file_row {
	const char *path;
	const struct xbd_rt_list *rt; /* a runtime list's */
	__u32 id, verdict;
	size_t entries, skipped;
	struct xbd_count addrs[2];
};

/* The single entries of l, in the order added, with their comments. */
static struct json_object *entries_json(const struct xbd_rt_list *l)
{
	const struct xbd_list_entry **by_line = xbd_rt_entries_by_line(l);
	struct json_object *arr = by_line ? json_object_new_array() : NULL;
	char text[64];

	for (size_t i = 0; arr && i < l->e.n; i++) {
		struct json_object *o = json_object_new_object();

		xb_prefix_format(&by_line[i]->prefix, text, sizeof(text));
		json_object_object_add(o, XB_F(PREFIX), json_object_new_string(text));
		json_object_object_add(o, XB_F(COMMENT),
				       json_object_new_string(xbd_rt_entry_comment(l, by_line[i])));
		json_object_array_add(arr, o);
	}
	free(by_line);
	return arr;
}

static struct json_object *file_json(const struct file_row *r)
{
	struct json_object *o = json_object_new_object();
	bool runtime = r->rt != NULL;

	json_object_object_add(o, XB_F(FILE), json_object_new_string(r->path));
	json_object_object_add(o, XB_F(FILE_ORIGIN), json_object_new_string(runtime ? "runtime"
									   : "config"));
	json_object_object_add(o, XB_F(LIST), json_object_new_int64(r->id));
	json_object_object_add(o, XB_F(ENTRIES), json_object_new_int64((int64_t)r->entries));
	json_object_object_add(o, XB_F(SKIPPED), json_object_new_int64((int64_t)r->skipped));
	add_counts(o, r->addrs);
	if (runtime && xbd_rt_is_entries(r->rt))
		json_object_object_add(o, XB_F(ENTRY_LIST), entries_json(r->rt));
	return o;
}

static size_t collect_rows(const struct xbd_lists_ctx *c, struct file_row *rows)
{
	size_t n = 0;

	for (int i = 0; i < c->conf->n_lists; i++) {
		const struct xbd_list_conf *l = &c->conf->lists[i];

		rows[n++] = (struct file_row){ .path = l->path, .id = l->id, .verdict = l->verdict,
					       .entries = c->config->entries[l->id],
					       .skipped = c->config->skipped[l->id] };
	}
	for (size_t i = 0; i < c->rt->n; i++) {
		const struct xbd_rt_list *l = &c->rt->v[i];

		rows[n++] = (struct file_row){ .path = l->path, .rt = l,
					       .id = XBD_RUNTIME_LIST_BASE + (__u32)i,
					       .verdict = l->verdict, .entries = l->e.n,
					       .skipped = l->skipped };
	}
	return n;
}

static struct file_row *row_of(struct file_row *rows, size_t n, __u32 id)
{
	for (size_t i = 0; i < n; i++)
		if (rows[i].id == id)
			return &rows[i];
	return NULL;
}

/* The layers of `lists show`, in its order: the policy's three, never-ban, then the observed
 * deny lists. */
static const __u32 show_order[] = { XDPBAN_POLICY_ALLOWED, XDPBAN_POLICY_DENY,
				    XDPBAN_POLICY_TRUSTED, XBD_LIST_NEVER_BAN,
				    XBD_LIST_OBSERVED };
#define N_SHOWN (sizeof(show_order) / sizeof(show_order[0]))

static size_t shown_layer(__u32 verdict)
{
	size_t i = 0;

	while (i + 1 < N_SHOWN && show_order[i] != verdict)
		i++;
	return i;
}

/* Adds the addresses each painted entry of l decides (own counts, xbd_count_own) to its row
 * and to its layer; rest gets those no entry holds. 0 or -ENOMEM. */
static int count_entries(struct xbd_list_entries *l, struct file_row *rows, size_t n,
			 struct xbd_count by_layer[N_SHOWN][2], struct xbd_count rest[2])
{
	struct xbd_count *own = calloc(l->n ? l->n : 1, sizeof(*own));
	int ret = own ? xbd_count_own(l->v, l->n, own, rest) : -ENOMEM;

	for (size_t i = 0; !ret && i < l->n; i++) {
		struct file_row *r = row_of(rows, n, l->v[i].list_id);
		int f = l->v[i].prefix.family == XDPBAN_FAMILY_INET6;

		if (r)
			count_add(&r->addrs[f], &own[i]);
		count_add(&by_layer[shown_layer(l->v[i].verdict)][f], &own[i]);
	}
	free(own);
	return ret;
}

/* The never-ban entries, the config's and the runtime ones, counted apart from the policy's. */
static int count_never_ban(const struct xbd_lists_ctx *c, struct file_row *rows, size_t n,
			   struct xbd_count by_layer[N_SHOWN][2])
{
	struct xbd_list_entries all = {};
	struct xbd_count rest[2];
	int ret = xbd_list_entries_merge(&all, &c->config->never_ban);

	for (size_t i = 0; i < c->rt->n && !ret; i++)
		if (c->rt->v[i].verdict == XBD_LIST_NEVER_BAN)
			ret = xbd_list_entries_merge(&all, &c->rt->v[i].e);
	if (!ret)
		ret = count_entries(&all, rows, n, by_layer, rest);
	free(all.v);
	return ret;
}

/* The observed deny lists, counted apart: they decide no verdict. */
static int count_observed(const struct xbd_lists_ctx *c, struct file_row *rows, size_t n,
			  struct xbd_count by_layer[N_SHOWN][2])
{
	struct xbd_list_entries all = {};
	struct xbd_count rest[2];
	int ret = xbd_list_entries_merge(&all, &c->config->observed);

	if (!ret)
		ret = count_entries(&all, rows, n, by_layer, rest);
	free(all.v);
	return ret;
}

static struct json_object *layers_json(const struct file_row *rows, size_t n,
				       struct xbd_count by_layer[N_SHOWN][2])
{
	struct json_object *arr = json_object_new_array();

	for (size_t layer = 0; arr && layer < N_SHOWN; layer++) {
		struct json_object *o = json_object_new_object(), *files = json_object_new_array();
		size_t entries = 0;

		for (size_t i = 0; i < n; i++) {
			if (rows[i].verdict != show_order[layer])
				continue;
			json_object_array_add(files, file_json(&rows[i]));
			entries += rows[i].entries;
		}
		json_object_object_add(o, XB_F(LAYER), json_object_new_string(xbd_layer_name(show_order[layer])));
		json_object_object_add(o, XB_F(LAYER_FILES), files);
		json_object_object_add(o, XB_F(ENTRIES), json_object_new_int64((int64_t)entries));
		add_counts(o, by_layer[layer]);
		json_object_array_add(arr, o);
	}
	return arr;
}

static struct json_object *totals_json(const struct xbd_list_plan *all,
				       struct xbd_count by_layer[N_SHOWN][2],
				       const struct xbd_count rest[2])
{
	struct json_object *totals = json_object_new_object();
	struct xbd_count allowed[2], denied[2];

	for (int f = 0; f < 2; f++) {
		allowed[f] = by_layer[0][f];
		denied[f] = by_layer[1][f];
		count_add(all->allow_only ? &denied[f] : &allowed[f], &rest[f]);
	}
	json_object_object_add(totals, XB_F(TOTAL_ALLOWED), json_object_new_object());
	json_object_object_add(totals, XB_F(TOTAL_DENIED), json_object_new_object());
	json_object_object_add(totals, XB_F(TOTAL_TRUSTED), json_object_new_object());
	add_counts(json_object_object_get(totals, XB_F(TOTAL_ALLOWED)), allowed);
	add_counts(json_object_object_get(totals, XB_F(TOTAL_DENIED)), denied);
	add_counts(json_object_object_get(totals, XB_F(TOTAL_TRUSTED)), by_layer[2]);
	return totals;
}

int xbd_lists_ctx_show(const struct xbd_lists_ctx *c, struct json_object *reply, char *err,
		       size_t errlen)
{
	struct file_row rows[XBD_MAX_LISTS + XBD_RUNTIME_LISTS_MAX];
	struct xbd_count rest[2], by_layer[N_SHOWN][2] = {};
	struct json_object *dflt;
	struct xbd_list_plan all;
	size_t n = collect_rows(c, rows);
	int ret = xbd_lists_compose(c->config, c->rt, &all);

	if (!ret)
		ret = count_entries(&all.policy, rows, n, by_layer, rest);
	if (!ret)
		ret = count_never_ban(c, rows, n, by_layer);
	if (!ret)
		ret = count_observed(c, rows, n, by_layer);
	if (ret) {
		xbd_list_plan_free(&all);
		snprintf(err, errlen, "out of memory counting the lists");
		return -ENOMEM;
	}
	dflt = json_object_new_object();
	json_object_object_add(dflt, XB_F(VERDICT), json_object_new_string(all.allow_only ? "not-allowed"
										      : "pass"));
	add_counts(dflt, rest);
	json_object_object_add(reply, XB_F(LAYERS), layers_json(rows, n, by_layer));
	json_object_object_add(reply, XB_F(DEFAULT_LAYER), dflt);
	json_object_object_add(reply, XB_F(TOTALS), totals_json(&all, by_layer, rest));
	json_object_object_add(reply, XB_F(ALLOW_ONLY), json_object_new_boolean(all.allow_only));
	xbd_list_plan_free(&all);
	return 0;
}

/* The list of id in c: its entries, its name and, for a runtime list, the list itself. */
static const struct xbd_list_entries *list_of(const struct xbd_lists_ctx *c, __u32 id,
					      bool never_ban, const char **path,
					      const struct xbd_rt_list **rt)
{
	*rt = NULL;
	if (id >= 1 && id <= (__u32)c->conf->n_lists) {
		*path = c->conf->lists[id - 1].path;
		return never_ban ? &c->config->never_ban : &c->config->policy;
	}
	if (id < XBD_RUNTIME_LIST_BASE || id - XBD_RUNTIME_LIST_BASE >= c->rt->n)
		return NULL;
	*rt = &c->rt->v[id - XBD_RUNTIME_LIST_BASE];
	*path = (*rt)->path;
	return &(*rt)->e;
}

/* The prefix a string member of reply names. */
static bool prefix_member(struct json_object *reply, const char *field, struct xb_prefix *p)
{
	struct json_object *v;
	char ignored[XB_ERRLEN];

	return json_object_object_get_ex(reply, field, &v) && json_object_is_type(v, json_type_string) &&
	       !xb_prefix_parse(json_object_get_string(v), p, ignored, sizeof(ignored));
}

static void policy_source(const struct xbd_lists_ctx *c, struct json_object *reply)
{
	const struct xbd_list_entries *entries;
	const struct xbd_list_entry *e = NULL;
	const struct xbd_rt_list *rt;
	struct json_object *id_obj;
	const char *path = NULL;
	struct xb_prefix p;
	__u32 id;

	if (!json_object_object_get_ex(reply, XB_F(POLICY_LIST), &id_obj) || !id_obj ||
	    !prefix_member(reply, XB_F(POLICY_MATCH), &p))
		return;
	id = (__u32)json_object_get_int64(id_obj);
	entries = list_of(c, id, false, &path, &rt);
	e = entries ? xbd_lists_find(entries, &p) : NULL;
	if (!e)
		return;
	json_object_object_add(reply, XB_F(POLICY_LAYER),
			       json_object_new_string(xbd_layer_name(e->verdict)));
	json_object_object_add(reply, XB_F(POLICY_ORIGIN),
			       json_object_new_string(rt ? "runtime" : "config"));
	json_object_object_add(reply, XB_F(POLICY_FILE), json_object_new_string(path));
	json_object_object_add(reply, XB_F(POLICY_LINE), json_object_new_int64(e->line));
	if (rt && xbd_rt_is_entries(rt))
		json_object_object_add(reply, XB_F(POLICY_COMMENT),
				       json_object_new_string(xbd_rt_entry_comment(rt, e)));
}

/* The never-ban entry that makes the address exempt: a runtime one first (the config's would
 * name it as well, but the runtime one is what a `lists del` would have to take away). */
static const struct xbd_list_entry *never_ban_entry(const struct xbd_lists_ctx *c,
						    const struct xb_prefix *p, const char **path,
						    const struct xbd_rt_list **rt)
{
	const struct xbd_list_entry *e;

	for (size_t i = 0; i < c->rt->n; i++) {
		*rt = &c->rt->v[i];
		*path = (*rt)->path;
		if ((*rt)->verdict == XBD_LIST_NEVER_BAN && (e = xbd_lists_find(&(*rt)->e, p)))
			return e;
	}
	*rt = NULL;
	e = xbd_lists_find(&c->config->never_ban, p);
	if (e && e->list_id >= 1 && e->list_id <= (__u32)c->conf->n_lists)
		*path = c->conf->lists[e->list_id - 1].path;
	return e && *path ? e : NULL;
}

static void exempt_source(const struct xbd_lists_ctx *c, struct json_object *reply)
{
	const struct xbd_list_entry *e;
	const struct xbd_rt_list *rt;
	const char *path = NULL;
	struct json_object *why;
	struct xb_prefix p;

	if (!json_object_object_get_ex(reply, XB_F(EXEMPT_WHY), &why) ||
	    !json_object_is_type(why, json_type_string) ||
	    strcmp(json_object_get_string(why), xb_exempt_origin_name(XDPBAN_EXEMPT_LIST)) ||
	    !prefix_member(reply, XB_F(EXEMPT_MATCH), &p) || !(e = never_ban_entry(c, &p, &path, &rt)))
		return;
	json_object_object_add(reply, XB_F(EXEMPT_FILE), json_object_new_string(path));
	json_object_object_add(reply, XB_F(EXEMPT_LINE), json_object_new_int64(e->line));
	if (rt)
		json_object_object_add(reply, XB_F(EXEMPT_COMMENT),
				       json_object_new_string(xbd_rt_entry_comment(rt, e)));
}

static void observed_source(const struct xbd_lists_ctx *c, struct json_object *reply)
{
	const struct xbd_list_entry *e;
	struct json_object *id_obj;
	struct xb_prefix p;
	__u32 id;

	if (!json_object_object_get_ex(reply, XB_F(OBSERVED_LIST), &id_obj) || !id_obj ||
	    !prefix_member(reply, XB_F(OBSERVED_MATCH), &p))
		return;
	id = (__u32)json_object_get_int64(id_obj);
	e = xbd_lists_find(&c->config->observed, &p);
	if (!e || id < 1 || id > (__u32)c->conf->n_lists)
		return;
	json_object_object_add(reply, XB_F(OBSERVED_FILE),
			       json_object_new_string(c->conf->lists[id - 1].path));
	json_object_object_add(reply, XB_F(OBSERVED_LINE), json_object_new_int64(e->line));
}

void xbd_lists_ctx_source(const struct xbd_lists_ctx *c, struct json_object *reply)
{
	policy_source(c, reply);
	observed_source(c, reply);
	exempt_source(c, reply);
}
