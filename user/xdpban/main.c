/* main.c - xdpban, the command line of the xdpban firewall: global options, the command
 * dispatch and help. Exit status 0 on success, 1 when a request failed, 2 for a bad command
 * line (then nothing was done). It never attaches or detaches programs: that is xdpband's
 * (or iproute2's) job.
 */
#include <bpf/libbpf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "control.h"

#define ARGS_MAX_SIZE 1024 /* the largest args struct of any command */

static bool libbpf_verbose;

/* libbpf's own log only with -v: without it, a failure is reported once, by the caller. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return libbpf_verbose ? vfprintf(stderr, fmt, ap) : 0;
}

static void usage(FILE *out)
{
	fprintf(out, "Usage: xdpban [OPTIONS] COMMAND [ARGS]\n\nCommands:\n");
	for (const struct command *c = cli_commands; c->name; c++) /* subcommands indented */
		fprintf(out, strchr(c->name, ' ') ? "    %-12s %s\n" : "  %-8s %s\n", c->name,
			c->summary);
	fprintf(out, "  %-8s %s\n", "help", "Show the help of a command: xdpban help CMD");
	fprintf(out, "\nOptions:\n");
	params_global_usage(out);
	fprintf(out, "\nSee xdpban(8).\n");
}

static int do_help(int argc, char **argv)
{
	const struct command *c;

	if (argc == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	c = cli_find_sub(argc, argv, 0);
	if (!c) {
		pr_warn("help: unknown command '%s' (see 'xdpban help')", argv[0]);
		return EXIT_USAGE;
	}
	if (argc > (strchr(c->name, ' ') ? 2 : 1)) {
		pr_warn("help: unexpected argument '%s'", argv[argc - 1]);
		return EXIT_USAGE;
	}
	params_usage(c, stdout);
	return EXIT_OK;
}

static int print_version(void)
{
	printf("xdpban %s\n", XDPBAN_VERSION);
	return EXIT_OK;
}

/* Parses the command line and runs the command it names. */
static int run(int argc, char **argv, struct cli *cli)
{
	_Alignas(max_align_t) unsigned char args[ARGS_MAX_SIZE] = { 0 };
	const struct command *cmd;
	int i = 1, ret;

	ret = params_parse_global(argc, argv, &i, cli);
	if (ret)
		return ret;
	if (cli->version)
		return print_version();
	if (i >= argc) {
		if (cli->help) {
			usage(stdout);
			return EXIT_OK;
		}
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[i], "help"))
		return do_help(argc - i - 1, argv + i + 1);
	cmd = cli_find_sub(argc, argv, i);
	if (cmd && strchr(cmd->name, ' '))
		i++; /* "lists load": the subcommand's word */
	if (!cmd) {
		pr_warn("unknown command '%s' (see 'xdpban help')", argv[i]);
		return EXIT_USAGE;
	}
	if (cmd->args_size > sizeof(args)) {
		pr_warn("internal error: %s's arguments do not fit", cmd->name);
		return EXIT_FAIL;
	}
	ret = params_parse(cmd, argc - i - 1, argv + i + 1, args, cli);
	if (ret)
		return ret;
	if (cli->help) {
		params_usage(cmd, stdout);
		return EXIT_OK;
	}
	if (cli->version)
		return print_version();
	ret = backend_find_socket(cli);
	if (ret)
		return ret;
	libbpf_verbose = cli->verbose;
	libbpf_set_print(libbpf_print);
	return cmd->run(cli, args);
}

int main(int argc, char **argv)
{
	struct cli cli = { .socket_path = NULL };
	int ret = run(argc, argv, &cli);

	free(cli.socket_owned);
	return ret;
}
