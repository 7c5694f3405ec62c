/* params.c - the CLI's option tables: one table per command describes every option and
 * positional argument with its type, so that parsing, validation and help all come from the
 * same rows. A bad argument gets one line on stderr and EXIT_USAGE, before anything is done.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "conf.h"
#include "control.h"

#define ARG_ERRLEN XB_ERRLEN

static const struct param global_params[] = {
	{ "--pin-dir", 0, P_STRING, false, offsetof(struct cli, pin_dir), "DIR",
	  "the pinned maps (default: " XDPBAN_PIN_DIR_DEFAULT ", then " XDPBAN_PIN_DIR_IPROUTE2 ")" },
	{ "--socket", 0, P_STRING, false, offsetof(struct cli, socket_path), "PATH",
	  "the daemon's control socket (default $" XDPBAN_SOCKET_ENV ", else the config's "
	  "[control] socket, else " XB_CONTROL_SOCKET_DEFAULT ")" },
	{ "--config", 0, P_STRING, false, offsetof(struct cli, config), "FILE",
	  "the daemon's config, read for its socket and, without a daemon, for the lists and the state file of the list commands (default " XBD_CONF_DEFAULT
	  ", if it exists)" },
	{ "--verbose", 'v', P_FLAG, false, offsetof(struct cli, verbose), NULL,
	  "say what is done, and show libbpf's messages" },
	{ "--help", 'h', P_FLAG, false, offsetof(struct cli, help), NULL, "show this help" },
	{ "--version", 'V', P_FLAG, false, offsetof(struct cli, version), NULL,
	  "print the version and exit" },
	{ NULL },
};

static bool is_positional(const struct param *p)
{
	return strncmp(p->name, "--", 2) != 0;
}

/* A sequence number as JSON carries it: digits only, at most INT64_MAX; anything else is a
 * time. 0 or -EINVAL/-ERANGE. */
static int parse_since(const char *what, const char *text, struct cli_since *out, char *err,
		       size_t errlen)
{
	char quoted[XB_ERRLEN];
	size_t len = strlen(text);
	unsigned long long v;
	int ret;

	if (!len || strspn(text, "0123456789") != len) {
		ret = xb_time_parse(what, text, time(NULL), &out->wall, err, errlen);
		if (ret == -EINVAL) /* neither form: say both */
			snprintf(err, errlen,
				 "bad %s '%s': expected a sequence number (0..%lld, with --follow) or a "
				 "time: RFC 3339 (2026-12-05T06:00:00Z), a duration ago (10m, 2h, 1d) or "
				 "@UNIX-SECONDS",
				 what, xb_quote(text, quoted, sizeof(quoted)), (long long)INT64_MAX);
		out->is_time = out->set = !ret;
		return ret;
	}
	errno = 0;
	v = strtoull(text, NULL, 10);
	if (errno || v > INT64_MAX) {
		snprintf(err, errlen, "bad %s '%s': a sequence number is 0..%lld", what,
			 xb_quote(text, quoted, sizeof(quoted)), (long long)INT64_MAX);
		return -ERANGE;
	}
	out->seq = v;
	out->set = true;
	return 0;
}

/* Converts text to the param's type and stores it; 0, or EXIT_USAGE after one line. */
static int store_value(const struct param *p, const char *text, void *dst)
{
	char err[ARG_ERRLEN];
	const char *what = p->name; /* "--for", "COUNT": as the command line wrote it */
	int ret = 0;

	switch (p->type) {
	case P_FLAG:
		*(bool *)dst = true;
		return 0;
	case P_STRING:
		if (!*text) {
			pr_warn("empty value for %s", p->name);
			return EXIT_USAGE;
		}
		*(const char **)dst = text;
		return 0;
	case P_PREFIX:
		ret = xb_prefix_parse(text, dst, err, sizeof(err));
		break;
	case P_ADDRESS:
		ret = xb_prefix_parse(text, dst, err, sizeof(err));
		if (!ret && !xb_prefix_is_addr(dst)) {
			snprintf(err, sizeof(err), "%s must be a single address, not a prefix: '%s'",
				 p->name, text);
			ret = -1;
		}
		break;
	case P_DURATION:
		ret = xb_duration_parse(what, text, dst, err, sizeof(err));
		break;
	case P_COUNT:
		ret = xb_u32_parse(what, text, 1, XDPBAN_LIMIT_MAX, dst, err, sizeof(err));
		break;
	case P_SINCE:
		ret = parse_since(what, text, dst, err, sizeof(err));
		break;
	case P_FILES: {
		struct cli_files *f = dst;

		if (!*text || f->n == CLI_FILES_MAX) {
			pr_warn(*text ? "at most %d files" : "empty file name", CLI_FILES_MAX);
			return EXIT_USAGE;
		}
		f->v[f->n++] = text;
		return 0;
	}
	}
	if (ret) {
		pr_warn("%s", err);
		return EXIT_USAGE;
	}
	return 0;
}

/* The option named by arg ("--for", "--for=1h", "-v") in table, or NULL. */
static const struct param *find_option(const struct param *table, const char *arg,
				       const char **inline_value)
{
	const char *eq = strchr(arg, '=');
	size_t len = eq ? (size_t)(eq - arg) : strlen(arg);

	*inline_value = NULL;
	for (const struct param *p = table; p && p->name; p++) {
		if (is_positional(p))
			continue;
		if (arg[0] == '-' && arg[1] == p->short_name && p->short_name && !arg[2])
			return p;
		if (strlen(p->name) == len && !strncmp(p->name, arg, len)) {
			*inline_value = eq ? eq + 1 : NULL;
			return p;
		}
	}
	return NULL;
}

static int parse_option(const struct param *p, const char *inline_value, void *base, int argc,
			char **argv, int *i)
{
	const char *value = inline_value;

	if (p->type == P_FLAG) {
		if (inline_value) {
			pr_warn("%s takes no value", p->name);
			return EXIT_USAGE;
		}
		return store_value(p, NULL, (char *)base + p->offset);
	}
	if (!value) {
		if (*i + 1 >= argc) {
			pr_warn("%s needs a value (%s)", p->name, p->metavar);
			return EXIT_USAGE;
		}
		value = argv[++*i];
	}
	return store_value(p, value, (char *)base + p->offset);
}

static const struct param *nth_positional(const struct param *table, int n)
{
	for (const struct param *p = table; p && p->name; p++)
		if (is_positional(p) && n-- == 0)
			return p;
	return NULL;
}

static int check_required(const struct command *cmd, int given)
{
	const struct param *p;

	for (int n = given; (p = nth_positional(cmd->params, n)); n++) {
		if (p->required) {
			pr_warn("%s: missing %s (see 'xdpban help %s')", cmd->name, p->name,
				cmd->name);
			return EXIT_USAGE;
		}
	}
	return 0;
}

int params_parse(const struct command *cmd, int argc, char **argv, void *args, struct cli *cli)
{
	bool options_done = false, files = false;
	int positionals = 0, ret;

	for (int i = 0; i < argc; i++) {
		const char *arg = argv[i], *inline_value;
		const struct param *p;

		if (!options_done && !strcmp(arg, "--")) {
			options_done = true;
			continue;
		}
		/* "-3" is a (bad) value, not an option: let its parser say what is wrong. */
		if (!options_done && arg[0] == '-' && arg[1] && !isdigit((unsigned char)arg[1])) {
			if ((p = find_option(cmd->params, arg, &inline_value)))
				ret = parse_option(p, inline_value, args, argc, argv, &i);
			else if ((p = find_option(global_params, arg, &inline_value)))
				ret = parse_option(p, inline_value, cli, argc, argv, &i);
			else {
				pr_warn("%s: unknown option '%s' (see 'xdpban help %s')", cmd->name,
					arg, cmd->name);
				return EXIT_USAGE;
			}
			if (ret)
				return ret;
			continue;
		}
		p = nth_positional(cmd->params, positionals);
		if (!p) {
			pr_warn("%s: unexpected argument '%s'", cmd->name, arg);
			return EXIT_USAGE;
		}
		ret = store_value(p, arg, (char *)args + p->offset);
		if (ret)
			return ret;
		if (p->type == P_FILES) /* takes every positional after it */
			files = true;
		else
			positionals++;
	}
	return cli->help ? 0 : check_required(cmd, positionals + files);
}

/* Global options before the command; *i ends at the command name. */
int params_parse_global(int argc, char **argv, int *i, struct cli *cli)
{
	for (; *i < argc; (*i)++) {
		const char *arg = argv[*i], *inline_value;
		const struct param *p;
		int ret;

		if (arg[0] != '-' || !arg[1])
			return 0;
		p = find_option(global_params, arg, &inline_value);
		if (!p) {
			pr_warn("unknown option '%s' (see 'xdpban --help')", arg);
			return EXIT_USAGE;
		}
		ret = parse_option(p, inline_value, cli, argc, argv, i);
		if (ret)
			return ret;
	}
	return 0;
}

static void print_rows(const struct param *table, FILE *out)
{
	for (const struct param *p = table; p && p->name; p++) {
		char left[48];

		if (is_positional(p))
			continue;
		if (p->short_name)
			snprintf(left, sizeof(left), "-%c, %s%s%s", p->short_name, p->name,
				 p->metavar ? " " : "", p->metavar ? p->metavar : "");
		else
			snprintf(left, sizeof(left), "    %s%s%s", p->name, p->metavar ? " " : "",
				 p->metavar ? p->metavar : "");
		fprintf(out, "  %-24s %s\n", left, p->help);
	}
}

void params_usage(const struct command *cmd, FILE *out)
{
	fprintf(out, "Usage: xdpban [OPTIONS] %s", cmd->name);
	for (const struct param *p = cmd->params; p && p->name; p++) {
		if (!is_positional(p))
			fprintf(out, " [%s%s%s]", p->name, p->metavar ? " " : "",
				p->metavar ? p->metavar : "");
	}
	for (const struct param *p = cmd->params; p && p->name; p++) {
		if (is_positional(p))
			fprintf(out, p->required ? " %s" : " [%s]", p->name);
	}
	fprintf(out, "\n\n%s\n", cmd->summary);
	for (const struct param *p = cmd->params; p && p->name; p++) {
		if (is_positional(p))
			fprintf(out, "  %-24s %s\n", p->name, p->help);
	}
	if (cmd->keys) {
		fprintf(out, "\nKeys:");
		for (size_t i = 0; cmd->keys(i); i++)
			fprintf(out, " %s", cmd->keys(i));
		fprintf(out, "\n");
	}
	fprintf(out, "\nOptions:\n");
	print_rows(cmd->params, out);
	print_rows(global_params, out);
}

void params_global_usage(FILE *out)
{
	print_rows(global_params, out);
}
