/* cli.h - the pieces of the xdpban CLI: option tables and their parser (params.c), the way a
 * request reaches the state (backend.c: the daemon's socket, or the pinned maps in-process),
 * text rendering of replies (render.c) and the commands (commands.c). Never shared with other
 * programs: what they need is in user/lib.
 */
#ifndef XDPBAN_CLI_H
#define XDPBAN_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>
#include "libxdpban.h"

struct json_object;

enum exit_code {
	EXIT_OK = 0,
	EXIT_FAIL = 1,  /* the request was understood but failed */
	EXIT_USAGE = 2, /* bad command line: nothing was done */
};

/* Global options, accepted before the command and among its own options. */
struct cli {
	const char *pin_dir;     /* NULL: find the pinned maps */
	const char *socket_path; /* the daemon's control socket; NULL until found (backend.c) */
	const char *socket_from; /* where socket_path came from, for messages */
	const char *config;      /* the daemon's config, read for its socket; NULL: the default */
	char *socket_owned;      /* socket_path when taken from the config (freed at exit) */
	bool verbose;
	bool help;
	bool version;
};

#define XDPBAN_SOCKET_ENV "XDPBAN_SOCKET" /* the socket, when --socket is not given */

enum param_type {
	P_FLAG,     /* --name */
	P_STRING,   /* any text */
	P_PREFIX,   /* ADDR or ADDR/LEN, strict (struct xb_prefix) */
	P_ADDRESS,  /* one address (struct xb_prefix with full length) */
	P_DURATION, /* seconds, or with s/m/h/d/w (xb_duration_parse); 1 s..10 years (__u32) */
	P_COUNT,    /* 1..1000000000 (__u32) */
	P_FILES,    /* the rest of the positionals (struct cli_files), at least one if required */
	P_SINCE,    /* an event's sequence number, 0..INT64_MAX, or a time (struct cli_since) */
};

/* Where `events` starts: after an event's sequence number (digits only), or at a time
 * (xb_time_parse: RFC 3339, a duration ago with its unit, @UNIX-SECONDS); set: given at all
 * (0 is a sequence number). */
struct cli_since {
	__u64 seq;
	time_t wall;
	bool is_time;
	bool set;
};

#define CLI_FILES_MAX 64 /* files in one `lists load`: a [lists] section's worth */
struct cli_files {
	const char *v[CLI_FILES_MAX];
	size_t n;
};

/* One row of a command's option table. A row without "--" in its name is positional. */
struct param {
	const char *name;  /* "--json", or a positional's metavar "ADDR" */
	char short_name;   /* 'v' for -v; 0: none */
	enum param_type type;
	bool required;     /* positionals only */
	size_t offset;     /* where the value goes in the args struct */
	const char *metavar; /* of an option's value: "SECONDS" */
	const char *help;
};

struct command {
	const char *name;
	int (*run)(const struct cli *cli, const void *args);
	const struct param *params; /* ends with a row whose name is NULL */
	size_t args_size;
	const char *summary;
	const char *(*keys)(size_t i); /* the words of its KEY, for help and completion; or NULL */
};

extern const struct command cli_commands[];
const struct command *cli_find_command(const char *name);
/* The command argv[i] names, or the subcommand argv[i] argv[i + 1] names ("lists load"). */
const struct command *cli_find_sub(int argc, char **argv, int i);

/* Parses argv (after the command name) into args and cli; prints one line and returns
 * EXIT_USAGE on any error. */
int params_parse(const struct command *cmd, int argc, char **argv, void *args, struct cli *cli);
int params_parse_global(int argc, char **argv, int *i, struct cli *cli);
void params_usage(const struct command *cmd, FILE *out);
void params_global_usage(FILE *out);

/* Where requests go: the daemon when its control socket answers, else this process, working
 * on the pinned maps (locked for a change, with a note on stderr). */
struct backend_opts {
	bool changes;      /* requests will change state */
	bool needs_report; /* load the report program when working on the maps directly */
	bool daemon_only;  /* only the daemon can do it: no daemon is an error, not the maps */
	int timeout_ms;    /* for each reply; 0: the default */
	const char *prefix; /* begins each error line ("reload: "); NULL: nothing */
};

struct backend {
	const struct cli *cli;
	int fd;              /* the daemon's control socket; -1 when working directly */
	int timeout_ms;      /* for each reply from the daemon */
	const char *prefix;  /* backend_opts.prefix, or "" */
	struct xb_maps maps; /* the pinned maps when working directly */
	const char *pin_dir;
	int lock;            /* the pin directory, locked for a change; -1 when not */
};

/* Sets cli->socket_path and socket_from: --socket, else $XDPBAN_SOCKET, else the [control]
 * socket of the daemon's config (--config, else XBD_CONF_DEFAULT when it exists), else the
 * default socket. EXIT_OK, or one line and EXIT_FAIL (a config that cannot be read). */
int backend_find_socket(struct cli *cli);
/* EXIT_OK, or one line and EXIT_FAIL. */
int backend_open(struct backend *b, const struct cli *cli, const struct backend_opts *opts);
bool backend_direct(const struct backend *b);
/* Sends a request; EXIT_OK with *reply (without "ok"), or one line and EXIT_FAIL. */
int backend_call(struct backend *b, struct json_object *request, struct json_object **reply);
/* The same with n open files sent along to the daemon (they stay the caller's). */
int backend_call_fds(struct backend *b, struct json_object *request, const int *fds, size_t n,
		     struct json_object **reply);
/* A reply line: EXIT_OK with the reply minus "ok", or its error on stderr and EXIT_FAIL. */
int backend_take_reply(const char *line, struct json_object **reply);
void backend_close(struct backend *b);

/* Text output. */
void render_status(struct json_object *r);
void render_stats(struct json_object *stats);
/* The whole `bans` reply: "bans", and "origins" (the fleet node of each remote ban). */
void render_bans(struct json_object *reply);
/* The line after a listing of bans in observe mode. */
void render_observed_note(void);
/* One row of the text listing of bans. */
struct ban_row {
	const char *prefix, *reason;
	long long count;
	long long drops;       /* packets dropped while in force; < 0: not counted (prefix bans) */
	long long seconds_left;
	const char *started;   /* NULL: not recorded */
	const char *origin;    /* NULL without a fleet (no ORIGIN column), "-" for a ban made here */
	const char *comment;   /* NULL without comments in the listing (no COMMENT column), "-"
				* for a ban without one */
};
void render_ban_row(bool *header_done, const struct ban_row *row);
void render_query(struct json_object *r);
void render_lists(struct json_object *lists);
void render_lists_reply(struct json_object *r); /* the lists, then the exempt entries */
void render_config(struct json_object *config);
void render_lists_show(struct json_object *r);
/* The `reload` reply: what the reload changed, or "no change". */
void render_reload(struct json_object *r);
void render_json(struct json_object *r);
/* A length of time in the one duration format ("permanent" when negative); len >= XB_DURATION_TEXT_MAX. */
const char *render_duration(int64_t s, char *buf, size_t len);

/* events.c: the daemon's event stream. */
struct events_args {
	bool json;
	bool follow;
	struct cli_since since; /* resume after this event, or start at this time */
};
extern const struct param events_params[];
int do_events(const struct cli *cli, const void *args);

/* listcmds.c: `lists load`, `lists clear`, `lists add`, `lists del`, `lists show`, and
 * query's file and line. */
extern const struct param lists_load_params[], lists_clear_params[], lists_add_params[],
	lists_del_params[];
struct lists_load_args {
	bool allow, deny, trusted, ignore_errors;
	struct cli_files files;
};
struct lists_clear_args {
	const char *layer;
	const char *file; /* NULL: every runtime list of the layer */
};
struct lists_entry_args {
	const char *layer;
	struct xb_prefix prefix;
	const char *comment; /* NULL: none */
};
int do_lists_load(const struct cli *cli, const void *args);
int do_lists_clear(const struct cli *cli, const void *args);
int do_lists_add(const struct cli *cli, const void *args);
int do_lists_del(const struct cli *cli, const void *args);
int do_lists_show(const struct cli *cli, const void *args);
/* Without a daemon: adds the file and line of the policy or never-ban entry to a query
 * reply. */
void lists_direct_source(const struct cli *cli, struct backend *b, struct json_object *reply);

void pr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_debug(const struct cli *cli, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* XDPBAN_CLI_H */
