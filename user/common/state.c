/* state.c - see state.h. The format is line-based text, easy to read and to check:
 *
 *   xdpban-state 1
 *   ban 192.0.2.7 start=1764498000 expires=1764501600 count=11 reason=errors classes=1
 *   ban 192.0.2.9 start=1764498000 expires=1764501600 count=3 reason=errors classes=4 proto=17 port=6969 rule=128
 *   prefix 198.51.100.0/24 expires=0
 *   offence 192.0.2.7 last=1764498000 until=1764501600 repeats=1
 *   counter 203.0.113.5 start=1764497400 count=5 classes=1
 *   fleet last=1764498000123-0 epoch=5f0c3e9a41d27b86c0e1f3a2b4d5c6e7
 *   origin 198.51.100.9 node=web-2
 *   comment 198.51.100.0/24 text=scanner%20of%20port%2022
 *   set limit 15
 *   end 8
 *
 * Times are Unix seconds; expires=0 and until=0 mean permanent. "end N" closes the file with
 * the number of records, so a truncated file is recognised (the first and last lines are the
 * frame, frame.h). A ban's last three fields, the IP protocol, destination port and rule of limits
of the error that crossed the limit, are there only when it has one. A counter is an error count in progress: its window's start, its count and
 * the classes of its errors (the spoof defence's record of the source is learnt again). The
 * whole file is parsed before anything is restored. Prefix bans are
 * restored through policy.h, never into the tries directly, and the flat table is recompiled
 * after them. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "files.h"
#include "xdpban_time.h"
#include "frame.h"
#include "table.h"
#include "log.h"
#include "policy.h"
#include "state.h"
#include "xdpban_policy.h"

#define MAX_TOKENS 10 /* a ban with its last error */
#define STATE_LINE_MAX 1024 /* bytes; the longest record xdpband writes, a comment, is under 700 */

/* The file's first and last lines (frame.h). */
static const struct xbd_frame state_frame = { .magic = XBD_STATE_MAGIC,
					      .version = XBD_STATE_VERSION };

/* One saved ban, in wall-clock time. */
struct saved_ban {
	struct xdpban_key key;
	time_t start, expires; /* expires 0 = permanent */
	__u32 count;
	__u8 reason, classes;
	__u8 proto, rule; /* the last error's (struct xdpban_ban); proto 0 and rule 0: none */
	__u16 port;
};

/* One saved counter, in wall-clock time. */
struct saved_counter {
	struct xdpban_key key;
	time_t start;
	__u32 count;
	__u8 classes;
};

struct saved_prefix {
	struct xb_prefix prefix;
	time_t expires;
};

/* Everything a state file holds, parsed. */
struct saved_state {
	struct saved_ban *bans;
	size_t n_bans, cap_bans;
	struct saved_prefix *prefixes;
	size_t n_prefixes, cap_prefixes;
	struct xbd_offence *offences;
	size_t n_offences, cap_offences;
	struct saved_counter *counters;
	size_t n_counters, cap_counters;
	struct xbd_state_fleet fleet;
	struct xbd_comments comments;
	struct xbd_setvals set;
};

/* Reasons are saved by name (xb_reason_name), the names the CLI shows; a ban of a reason
 * without a name is not saved. */
static bool known_reason(__u8 reason)
{
	return strcmp(xb_reason_name(reason), "?") != 0;
}

/* ---- writing ---- */

static bool expired(__u64 expires_ns, __u64 now_ns)
{
	return expires_ns && expires_ns <= now_ns;
}

struct ban_writer {
	FILE *f;
	__u64 now_ns;
	size_t n;
};

static int write_ban(const struct xdpban_key *key, const struct xdpban_ban *ban, void *ctx)
{
	struct ban_writer *w = ctx;
	char text[64];

	if (expired(ban->expires_ns, w->now_ns) || !known_reason(ban->reason) ||
	    xb_key_format(key, text, sizeof(text)))
		return 0;
	fprintf(w->f, "ban %s start=%lld expires=%lld count=%u reason=%s classes=%u", text,
		(long long)xb_boot_to_wall(ban->start_ns),
		ban->expires_ns ? (long long)xb_boot_to_wall(ban->expires_ns) : 0LL, ban->count,
		xb_reason_name(ban->reason), ban->classes);
	if (ban->proto || ban->rule)
		fprintf(w->f, " proto=%u port=%u rule=%u", ban->proto, ban->port, ban->rule);
	fputc('\n', w->f);
	w->n++;
	return 0;
}

/* Manual prefix bans live in the policy tries next to the lists; only they are state. */
static int write_prefix(const struct xb_policy_entry *e, void *ctx)
{
	struct ban_writer *w = ctx;
	char text[64];

	if (e->policy.list_id != XDPBAN_LIST_MANUAL_BAN || e->policy.verdict != XDPBAN_POLICY_DENY ||
	    e->expired || xb_prefix_format(&e->prefix, text, sizeof(text)))
		return 0;
	fprintf(w->f, "prefix %s expires=%lld\n", text,
		e->policy.expires_ns ? (long long)xb_boot_to_wall(e->policy.expires_ns) : 0LL);
	w->n++;
	return 0;
}

struct offence_writer {
	FILE *f;
	size_t n;
};

static void write_offence(const struct xbd_offence *o, void *ctx)
{
	struct offence_writer *w = ctx;
	char text[64];

	if (xb_key_format(&o->key, text, sizeof(text)))
		return;
	fprintf(w->f, "offence %s last=%lld until=%lld repeats=%u\n", text, (long long)o->last_ban,
		(long long)o->last_until, o->repeats);
	w->n++;
}

/* The fleet's records (fleet.h); the number written. */
static size_t write_fleet(FILE *f, const struct xbd_state_fleet *fleet)
{
	size_t n = 0;
	char text[64];

	if (!fleet)
		return 0;
	if (fleet->last_id[0]) {
		fprintf(f, "fleet last=%s%s%s\n", fleet->last_id, fleet->epoch[0] ? " epoch=" : "",
			fleet->epoch);
		n++;
	}
	for (size_t i = 0; i < fleet->n_origins; i++) {
		if (xb_prefix_format(&fleet->origins[i].who, text, sizeof(text)))
			continue;
		fprintf(f, "origin %s node=%s\n", text, fleet->origins[i].node);
		n++;
	}
	return n;
}

/* A comment as one token: the tokens are split at spaces, and '%' starts an escape. */
static void write_comment(const struct xb_prefix *p, const char *text, void *ctx)
{
	struct offence_writer *w = ctx;
	char key[64];

	if (xb_prefix_format(p, key, sizeof(key)))
		return;
	fprintf(w->f, "comment %s text=", key);
	for (; *text; text++) {
		if (*text == ' ' || *text == '%')
			fprintf(w->f, "%%%02X", (unsigned char)*text);
		else
			fputc(*text, w->f);
	}
	fputc('\n', w->f);
	w->n++;
}

static int grow(void **v, size_t *cap, size_t n, size_t size);

/* The counters of a walk, in wall-clock time, to be cut to the highest counts. */
struct counter_list {
	struct saved_counter *v;
	size_t n, cap;
};

static int collect_counter(const struct xdpban_key *key, const struct xb_counter *ctr, void *ctx)
{
	struct counter_list *l = ctx;

	if (!ctr->count)
		return 0;
	if (grow((void **)&l->v, &l->cap, l->n, sizeof(*l->v)))
		return -ENOMEM;
	l->v[l->n++] = (struct saved_counter){
		.key = *key,
		.start = xb_boot_to_wall((__u64)ctr->start_s * NS_PER_SEC),
		.count = ctr->count,
		.classes = ctr->classes,
	};
	return 0;
}

static int by_count_down(const void *a, const void *b)
{
	const struct saved_counter *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

int xbd_state_write_counters(FILE *f, const struct xb_maps *m, size_t max, size_t *n,
			     size_t *left)
{
	struct counter_list l = { 0 };
	char text[64];
	int ret = xb_counters_walk_in(m, (__u32)(xb_boot_ns() / NS_PER_SEC), collect_counter, &l);

	*n = *left = 0;
	if (!ret && l.n > max) { /* the counts nearest a ban matter most */
		qsort(l.v, l.n, sizeof(*l.v), by_count_down);
		*left = l.n - max;
		l.n = max;
	}
	for (size_t i = 0; !ret && i < l.n; i++) {
		if (xb_key_format(&l.v[i].key, text, sizeof(text)))
			continue;
		fprintf(f, "counter %s start=%lld count=%u classes=%u\n", text,
			(long long)l.v[i].start, l.v[i].count, l.v[i].classes);
		++*n;
	}
	free(l.v);
	return ret;
}

size_t xbd_state_write_set(FILE *f, const struct xbd_setvals *set)
{
	size_t n = 0;

	for (int i = 0; set && i < XBD_SETVALS_KEYS; i++) {
		if (!set->key[i][0])
			continue;
		fprintf(f, "set %s %s\n", set->key[i], set->text[i]);
		n++;
	}
	return n;
}

static int write_all(FILE *f, const struct xb_maps *m, const struct xbd_history *h,
		     const struct xbd_state_records *rec, struct xbd_state_counts *c)
{
	size_t fleet_records;
	struct ban_writer bans = { .f = f, .now_ns = xb_boot_ns() };
	struct ban_writer prefixes = { .f = f };
	struct offence_writer offences = { .f = f }, notes = { .f = f };
	char now[40];
	int ret;

	xbd_format_wall(time(NULL), now, sizeof(now));
	xbd_frame_write_header(f, &state_frame);
	fprintf(f, "# written by xdpband at %s; times are Unix seconds, 0 = permanent\n", now);
	ret = xb_bans_walk_in(m, write_ban, &bans);
	if (!ret)
		ret = xb_policy_foreach(m, write_prefix, &prefixes);
	if (ret)
		return ret;
	xbd_history_foreach(h, write_offence, &offences);
	ret = xbd_state_write_counters(f, m, XBD_STATE_COUNTERS_MAX, &c->counters,
				       &c->counters_left);
	if (ret)
		return ret;
	fleet_records = write_fleet(f, rec->fleet);
	if (rec->comments)
		xbd_comments_foreach(rec->comments, write_comment, &notes);
	c->settings = xbd_state_write_set(f, rec->set);
	c->bans = bans.n;
	c->prefixes = prefixes.n;
	c->offences = offences.n;
	c->comments = notes.n;
	xbd_frame_write_end(f, c->bans + c->prefixes + c->offences + c->counters + fleet_records +
				       c->comments + c->settings);
	return ferror(f) ? -EIO : 0;
}

/* The file's lines, for xbd_file_save. */
struct save_ctx {
	const struct xb_maps *m;
	const struct xbd_history *h;
	const struct xbd_state_records *rec;
	struct xbd_state_counts *c;
};

static int write_state(FILE *f, void *ctx)
{
	struct save_ctx *s = ctx;

	return write_all(f, s->m, s->h, s->rec, s->c);
}

int xbd_state_save(const char *path, const struct xb_maps *m, const struct xbd_history *h,
		   const struct xbd_state_records *rec, struct xbd_state_counts *c, char *err,
		   size_t errlen)
{
	static const struct xbd_state_records none;
	struct save_ctx s = { m, h, rec ? rec : &none, c };

	memset(c, 0, sizeof(*c));
	return xbd_file_save(path, "state", write_state, &s, err, errlen);
}

int xbd_state_check(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (stat(path, &st)) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "state file %s: %s", path, strerror(errno));
		return -errno;
	}
	if (S_ISREG(st.st_mode))
		return 0;
	snprintf(err, errlen, "state file %s is %s, not a regular file", path,
		 xbd_file_kind(st.st_mode));
	return -EINVAL;
}

/* ---- reading ---- */

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	void *bigger;

	if (n < *cap)
		return 0;
	bigger = realloc(*v, (*cap ? *cap * 2 : 64) * size);
	if (!bigger)
		return -ENOMEM;
	*v = bigger;
	*cap = *cap ? *cap * 2 : 64;
	return 0;
}

static bool parse_uint(const char *s, __u64 max, __u64 *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return !errno && !*end && *out <= max;
}

/* "name=NUMBER" with the expected name. */
static bool parse_field(const char *tok, const char *name, __u64 max, __u64 *out)
{
	size_t len = strlen(name);

	return tok && !strncmp(tok, name, len) && tok[len] == '=' &&
	       parse_uint(tok + len + 1, max, out);
}

static bool parse_key(const char *text, struct xdpban_key *key)
{
	struct xb_prefix p;
	char err[XB_ERRLEN];

	if (!text || xb_prefix_parse_saved(text, &p, err, sizeof(err)))
		return false;
	if (p.family == XDPBAN_FAMILY_INET ? p.plen != 32 : p.plen < XDPBAN_V6_PREFIX_MIN)
		return false;
	memset(key, 0, sizeof(*key));
	key->family = p.family;
	key->prefixlen = p.plen;
	memcpy(key->addr, p.addr, sizeof(key->addr));
	return true;
}

static bool parse_reason(const char *tok, __u8 *reason)
{
	char ignored[XB_ERRLEN];

	return tok && !strncmp(tok, "reason=", 7) &&
	       !xb_reason_parse(tok + 7, reason, ignored, sizeof(ignored));
}

#define TIME_MAX_WALL 253402300799ull /* 9999-12-31: anything later is corruption */

/* A ban's optional "proto=P port=N rule=R": its last error, with a rule xb_rule_name knows. */
static bool parse_last_error(char **t, struct saved_ban *b)
{
	__u64 proto, port, rule;

	if (!parse_field(t[0], "proto", UINT8_MAX, &proto) ||
	    !parse_field(t[1], "port", UINT16_MAX, &port) ||
	    !parse_field(t[2], "rule", UINT8_MAX, &rule) || !xb_rule_known((__u8)rule))
		return false;
	b->proto = proto;
	b->port = port;
	b->rule = rule;
	return true;
}

static int parse_ban(char **t, int n, struct saved_state *s)
{
	struct saved_ban b = {};
	__u64 start, expires, count, classes;

	if ((n != 7 && n != 10) || !parse_key(t[1], &b.key) ||
	    !parse_field(t[2], "start", TIME_MAX_WALL, &start) ||
	    !parse_field(t[3], "expires", TIME_MAX_WALL, &expires) ||
	    !parse_field(t[4], "count", UINT32_MAX, &count) || !parse_reason(t[5], &b.reason) ||
	    !parse_field(t[6], "classes", XDPBAN_CLASS_ALL, &classes) ||
	    (n == 10 && !parse_last_error(&t[7], &b)))
		return -EINVAL;
	b.start = start;
	b.expires = expires;
	b.count = count;
	b.classes = classes;
	if (grow((void **)&s->bans, &s->cap_bans, s->n_bans, sizeof(b)))
		return -ENOMEM;
	s->bans[s->n_bans++] = b;
	return 0;
}

static int parse_prefix(char **t, int n, struct saved_state *s)
{
	struct saved_prefix p = {};
	char err[XB_ERRLEN];
	__u64 expires;

	if (n != 3 || xb_prefix_parse_saved(t[1], &p.prefix, err, sizeof(err)) ||
	    !parse_field(t[2], "expires", TIME_MAX_WALL, &expires))
		return -EINVAL;
	p.expires = expires;
	if (grow((void **)&s->prefixes, &s->cap_prefixes, s->n_prefixes, sizeof(p)))
		return -ENOMEM;
	s->prefixes[s->n_prefixes++] = p;
	return 0;
}

static int parse_offence(char **t, int n, struct saved_state *s)
{
	struct xbd_offence o = {};
	__u64 last, until, repeats;

	if (n != 5 || !parse_key(t[1], &o.key) || !parse_field(t[2], "last", TIME_MAX_WALL, &last) ||
	    !parse_field(t[3], "until", TIME_MAX_WALL, &until) ||
	    !parse_field(t[4], "repeats", UINT32_MAX, &repeats))
		return -EINVAL;
	o.last_ban = last;
	o.last_until = until;
	o.repeats = repeats;
	if (grow((void **)&s->offences, &s->cap_offences, s->n_offences, sizeof(o)))
		return -ENOMEM;
	s->offences[s->n_offences++] = o;
	return 0;
}

static int parse_counter(char **t, int n, struct saved_state *s)
{
	struct saved_counter sc = {};
	__u64 start, count, classes;

	if (n != 5 || !parse_key(t[1], &sc.key) ||
	    !parse_field(t[2], "start", TIME_MAX_WALL, &start) ||
	    !parse_field(t[3], "count", UINT32_MAX, &count) ||
	    !parse_field(t[4], "classes", XDPBAN_CLASS_ALL, &classes))
		return -EINVAL;
	sc.start = start;
	sc.count = count;
	sc.classes = classes;
	if (grow((void **)&s->counters, &s->cap_counters, s->n_counters, sizeof(sc)))
		return -ENOMEM;
	s->counters[s->n_counters++] = sc;
	return 0;
}

int xbd_state_fleet_add(struct xbd_state_fleet *f, const struct xb_prefix *who, const char *node)
{
	if (grow((void **)&f->origins, &f->cap_origins, f->n_origins, sizeof(*f->origins)))
		return -ENOMEM;
	f->origins[f->n_origins].who = *who;
	snprintf(f->origins[f->n_origins].node, sizeof(f->origins->node), "%s", node);
	f->n_origins++;
	return 0;
}

void xbd_state_fleet_free(struct xbd_state_fleet *f)
{
	free(f->origins);
	memset(f, 0, sizeof(*f));
}

static bool epoch_valid(const char *s)
{
	return strlen(s) == XBD_FLEET_EPOCH_HEX && strspn(s, "0123456789abcdef") == strlen(s);
}

/* "fleet last=ID [epoch=HEX]", at most once. */
static int parse_fleet(char **t, int n, struct saved_state *s)
{
	if (n < 2 || n > 3 || strncmp(t[1], "last=", 5) || !xbd_fleet_id_valid(t[1] + 5) ||
	    s->fleet.last_id[0])
		return -EINVAL;
	if (n == 3 && (strncmp(t[2], "epoch=", 6) || !epoch_valid(t[2] + 6)))
		return -EINVAL;
	snprintf(s->fleet.last_id, sizeof(s->fleet.last_id), "%s", t[1] + 5);
	if (n == 3)
		snprintf(s->fleet.epoch, sizeof(s->fleet.epoch), "%s", t[2] + 6);
	return 0;
}

/* "origin KEY node=NAME". */
static int parse_origin(char **t, int n, struct saved_state *s)
{
	struct xb_prefix who;
	char err[XB_ERRLEN];

	if (n != 3 || xb_prefix_parse_saved(t[1], &who, err, sizeof(err)) ||
	    strncmp(t[2], "node=", 5) || !xbd_fleet_name_valid(t[2] + 5))
		return -EINVAL;
	return xbd_state_fleet_add(&s->fleet, &who, t[2] + 5);
}

/* "%XX" escapes back to their bytes, in place. false for a broken escape. */
static bool unescape(char *s)
{
	char *out = s, hex[3] = "";

	for (; *s; s++) {
		if (*s != '%') {
			*out++ = *s;
			continue;
		}
		if (!s[1] || !s[2] || strspn(s + 1, "0123456789ABCDEFabcdef") < 2)
			return false;
		memcpy(hex, s + 1, 2);
		*out++ = (char)strtoul(hex, NULL, 16);
		s += 2;
	}
	*out = '\0';
	return true;
}

/* "comment KEY text=TEXT": TEXT as xb_ban_comment_check takes it, and not empty. */
static int parse_comment(char **t, int n, struct saved_state *s)
{
	struct xb_prefix who;
	char err[XB_ERRLEN];

	if (n != 3 || xb_prefix_parse_saved(t[1], &who, err, sizeof(err)) ||
	    strncmp(t[2], "text=", 5) || !unescape(t[2] + 5) || !t[2][5] ||
	    xb_ban_comment_check(t[2] + 5, err, sizeof(err)))
		return -EINVAL;
	return xbd_comments_set(&s->comments, &who, t[2] + 5);
}

/* "set KEY VALUE", a key at most once. The value is checked where it is applied
 * (xbd_setvals_apply): one this version no longer takes costs that value, not the file. */
static int parse_set(char **t, int n, struct saved_state *s)
{
	if (n != 3 || !xb_config_key_known(t[1]) || xbd_setvals_index(&s->set, t[1]) >= 0)
		return -EINVAL;
	return xbd_setvals_put(&s->set, t[1], t[2]);
}

static int split(char *line, char **t)
{
	char *save = NULL;
	int n = 0;

	for (char *tok = strtok_r(line, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
		if (n == MAX_TOKENS)
			return MAX_TOKENS + 1;
		t[n++] = tok;
	}
	return n;
}

/* Where a parse is: its line, and in the frame the records seen so far and whether "end"
 * came. */
struct parse_pos {
	int line;
	struct xbd_frame frame;
};

static int parse_line(char *line, struct parse_pos *pos, struct saved_state *s)
{
	char *t[MAX_TOKENS];
	int n, ret;

	if (pos->line > 1 && line[0] == '#')
		return 0;
	switch (xbd_frame_line(&pos->frame, (unsigned int)pos->line, line)) {
	case XBD_FRAME_EDGE:
		return 0;
	case XBD_FRAME_BAD_HEADER:
		return -EPROTO;
	case XBD_FRAME_RECORD:
		break;
	default: /* a bad end line, or a line after it */
		return -EINVAL;
	}
	n = split(line, t);
	if (n == 0 || n > MAX_TOKENS)
		return -EINVAL;
	if (!strcmp(t[0], "ban"))
		ret = parse_ban(t, n, s);
	else if (!strcmp(t[0], "prefix"))
		ret = parse_prefix(t, n, s);
	else if (!strcmp(t[0], "offence"))
		ret = parse_offence(t, n, s);
	else if (!strcmp(t[0], "counter"))
		ret = parse_counter(t, n, s);
	else if (!strcmp(t[0], "fleet"))
		ret = parse_fleet(t, n, s);
	else if (!strcmp(t[0], "origin"))
		ret = parse_origin(t, n, s);
	else if (!strcmp(t[0], "comment"))
		ret = parse_comment(t, n, s);
	else if (!strcmp(t[0], "set"))
		ret = parse_set(t, n, s);
	else
		ret = -EINVAL;
	if (!ret)
		pos->frame.records++;
	return ret;
}

/* Parses the whole file. 0, or -errno with the line and the problem in why. */
static int parse_file(int fd, struct saved_state *s, char *why, size_t whylen)
{
	struct parse_pos pos = { .frame = state_frame };
	struct xbd_lines lines;
	char *line;
	size_t len;
	int ret = xbd_lines_open(&lines, fd, STATE_LINE_MAX, 0);

	while (!ret && (ret = xbd_lines_next(&lines, &line, &len)) > 0) {
		pos.line++;
		ret = memchr(line, '\0', len) ? -EINVAL : parse_line(line, &pos, s);
	}
	xbd_lines_close(&lines);
	if (ret == -EPROTO)
		snprintf(why, whylen, "line 1: not an xdpban state file of version %d",
			 XBD_STATE_VERSION);
	else if (ret == -ENOMEM)
		snprintf(why, whylen, "out of memory at line %d", pos.line);
	else if (ret == -EMSGSIZE)
		snprintf(why, whylen, "line %u: longer than %d bytes", lines.line, STATE_LINE_MAX);
	else if (ret == -EINVAL)
		snprintf(why, whylen, "line %d: not a valid record", pos.line);
	else if (ret)
		snprintf(why, whylen, "cannot read it: %s", strerror(-ret));
	if (!ret && !pos.frame.ended) {
		snprintf(why, whylen, "truncated: no end line after line %d", pos.line);
		ret = -EINVAL;
	}
	return ret;
}

static void saved_state_free(struct saved_state *s)
{
	free(s->bans);
	free(s->prefixes);
	free(s->offences);
	free(s->counters);
	xbd_state_fleet_free(&s->fleet);
	xbd_comments_free(&s->comments);
	memset(s, 0, sizeof(*s));
}

/* ---- restoring ---- */

/* Boot-clock time of a wall-clock time; a time before this boot becomes 1 ns after it, so it
 * never reads as 0 (permanent). */
static __u64 boot_ns_of(time_t wall)
{
	time_t booted = xb_boot_to_wall(0);

	return wall > booted ? xb_wall_to_boot(wall) : 1;
}

/* A saved ban that may not hold here (xb_ban_check): the exemptions or the networks keyed one
 * by one may have changed since it was saved. Counted, and the first reason kept. */
static bool restore_refused(const struct xb_maps *run, const struct xb_prefix *p,
			    struct xbd_state_counts *c)
{
	char why[XB_ERRLEN];

	if (xb_ban_check(run, p, why, sizeof(why)) != -EPERM)
		return false;
	if (!c->refused++)
		snprintf(c->refused_why, sizeof(c->refused_why), "%s", why);
	return true;
}

/* Through table.h, the one userspace writer of the ban table. */
static int restore_bans(const struct saved_state *s, const struct xb_maps *m, time_t now,
			struct xbd_state_counts *c)
{
	struct xb_maps run = *m; /* the checks read the tries once (xb_ban_run_begin) */
	char why[XB_ERRLEN];
	struct xb_bans bans;
	int ret = xb_bans_of(&bans, m, why, sizeof(why));

	if (ret)
		return ret;
	run.ban_run = NULL;
	xb_ban_run_begin(&run);
	for (size_t i = 0; i < s->n_bans; i++) {
		const struct saved_ban *b = &s->bans[i];
		struct xb_prefix p;
		struct xdpban_ban ban = {
			.start_ns = boot_ns_of(b->start < now ? b->start : now),
			.expires_ns = b->expires ? boot_ns_of(b->expires) : 0,
			.count = b->count,
			.reason = b->reason,
			.classes = b->classes,
			.proto = b->proto,
			.rule = b->rule,
			.port = b->port,
		};

		xb_key_to_prefix(&b->key, &p);
		if (b->expires && b->expires <= now)
			c->expired++;
		else if (restore_refused(&run, &p, c))
			continue;
		else if ((ret = xb_bans_put(&bans, &b->key, &ban, BPF_NOEXIST)) == -ENOSPC)
			c->full++;
		else if (ret)
			c->failed++; /* banned again meanwhile */
		else
			c->bans++;
	}
	xb_ban_run_end(&run);
	xb_bans_close(&bans);
	return 0;
}

static void restore_prefixes(const struct saved_state *s, const struct xb_maps *m, time_t now,
			     struct xbd_state_counts *c)
{
	char why[XB_ERRLEN];

	for (size_t i = 0; i < s->n_prefixes; i++) {
		const struct saved_prefix *p = &s->prefixes[i];
		struct xdpban_policy val = {
			.verdict = XDPBAN_POLICY_DENY,
			.list_id = XDPBAN_LIST_MANUAL_BAN,
			.expires_ns = p->expires ? boot_ns_of(p->expires) : 0,
		};

		if (p->expires && p->expires <= now)
			c->expired++;
		else if (restore_refused(m, &p->prefix, c))
			continue;
		else if (xb_policy_put(m, &p->prefix, &val, BPF_NOEXIST))
			c->failed++; /* a list holds that prefix now, or the trie is full */
		else
			c->prefixes++;
	}
	/* Each put left its regions on LOOKUP: correct, but slower until compiled. */
	if (c->prefixes && xb_policy_recompile(m, NULL, why, sizeof(why)))
		pr_warn("restored prefix bans are enforced through the trie only: %s", why);
}

/* Into the counter table, through table.h, before the program is attached (the maps are new):
 * a window over by now is dropped, one begun before this boot starts at the boot. The window
 * is the one in force, the file's (the values `xdpban set` changed come after). */
static int restore_counters(const struct saved_state *s, const struct xb_maps *m, time_t now,
			    struct xbd_state_counts *c)
{
	struct xdpban_config cfg = XDPBAN_CONFIG_DEFAULTS;
	time_t booted = xb_boot_to_wall(0);
	__u32 now_s = (__u32)(xb_boot_ns() / NS_PER_SEC);
	char why[XB_ERRLEN];
	struct xb_counters ctrs;
	int ret = xb_counters_of(&ctrs, m, why, sizeof(why));

	if (ret)
		return ret;
	xb_config_read(m, &cfg); /* the defaults' window when it cannot be read */
	for (size_t i = 0; i < s->n_counters; i++) {
		const struct saved_counter *sc = &s->counters[i];
		time_t start = sc->start < now ? sc->start : now;
		struct xb_counter in = {
			.count = sc->count,
			.start_s = start > booted ? (__u32)(start - booted) : 0,
			.classes = sc->classes,
		};

		if (start + (time_t)cfg.window_s <= now)
			c->expired++;
		else if (xb_counters_put(&ctrs, &sc->key, now_s, cfg.window_s, &in))
			c->failed++; /* its group is full */
		else
			c->counters++;
	}
	xb_counters_close(&ctrs);
	return 0;
}

static void restore_offences(const struct saved_state *s, struct xbd_history *h,
			     struct xbd_state_counts *c)
{
	for (size_t i = 0; i < s->n_offences; i++)
		if (!xbd_history_put(h, &s->offences[i]))
			c->offences++;
}

int xbd_state_load(const char *path, const struct xb_maps *m, struct xbd_history *h,
		   bool restore, const struct xbd_state_records *rec, struct xbd_state_counts *c,
		   bool *corrupt, char *err, size_t errlen)
{
	static const struct xbd_state_records none;
	struct saved_state s = {};
	char why[XB_ERRLEN];
	time_t now = time(NULL);
	int fd, ret;

	memset(c, 0, sizeof(*c));
	*corrupt = false;
	ret = xbd_open_regular(path, "state file", 0, &fd, err, errlen);
	if (ret)
		return ret == -ENOENT ? 0 : ret;
	c->present = true;
	ret = parse_file(fd, &s, why, sizeof(why));
	close(fd);
	if (ret == -EINVAL || ret == -EPROTO || ret == -EMSGSIZE) {
		*corrupt = true;
		xbd_file_set_aside(path, "state file", err, errlen, why);
		ret = 0;
	} else if (ret) { /* out of memory, or the read failed: the file may be fine */
		snprintf(err, errlen, "state file %s: %s", path, why);
	} else {
		if (restore)
			ret = restore_bans(&s, m, now, c);
		if (!ret && restore && (ret = restore_counters(&s, m, now, c)))
			snprintf(err, errlen, "cannot map the counter table to restore counts: %s",
				 strerror(-ret));
		else if (ret)
			snprintf(err, errlen, "cannot map the ban table to restore bans: %s",
				 strerror(-ret));
		else if (restore)
			restore_prefixes(&s, m, now, c);
		restore_offences(&s, h, c);
		if (!rec)
			rec = &none;
		if (rec->fleet) { /* taken */
			*rec->fleet = s.fleet;
			memset(&s.fleet, 0, sizeof(s.fleet));
		}
		c->comments = s.comments.n;
		if (rec->comments) { /* taken */
			*rec->comments = s.comments;
			memset(&s.comments, 0, sizeof(s.comments));
		}
		c->settings = xbd_setvals_count(&s.set);
		if (rec->set)
			*rec->set = s.set;
	}
	saved_state_free(&s);
	return ret;
}
