/* test_control_fields.c - docs/control.md against the control protocol's table of names
 * (user/common/control_fields.h). The doc's field tables ("Fields") are made from the table:
 * the test fails while the doc's text differs from what the table makes, and
 * `build/tests/test_control_fields --doc` prints what it should be. The command tables of the
 * doc name every command of the table and no other, and every field they name is a row of it.
 * Run from the top of the tree. No root, no maps.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "control_fields.h"

#define DOC "docs/control.md"
#define BEGIN_MARK                                                                            \
	"<!-- Made from user/common/control_fields.h: build/tests/test_control_fields --doc " \
	"prints it. -->\n"
#define END_MARK "<!-- End of the tables made from user/common/control_fields.h. -->\n"

/* The objects a row is in: its `in`, split at "; ". */
static size_t objects_of(const struct xb_control_name *f, char out[][64], size_t max)
{
	const char *p = f->in;
	size_t n = 0;

	while (*p && n < max) {
		size_t len = strcspn(p, ";");

		snprintf(out[n++], 64, "%.*s", (int)len, p);
		p += len;
		p += strspn(p, "; ");
	}
	return n;
}

#define OBJECT_NAME_(name) name,
static const char *const objects[] = { XB_CONTROL_OBJECTS(OBJECT_NAME_) };
#define OBJECTS_N (sizeof(objects) / sizeof(objects[0]))

static bool in_object(const struct xb_control_name *f, const char *object)
{
	char in[8][64];
	size_t k = objects_of(f, in, 8);

	for (size_t j = 0; j < k; j++)
		if (!strcmp(in[j], object))
			return true;
	return false;
}

/* The field tables of docs/control.md: one per object, its rows in the table's order. */
static void write_tables(FILE *out)
{
	for (size_t o = 0; o < OBJECTS_N; o++) {
		fprintf(out, "\n### %s\n\n| field | type | meaning |\n|---|---|---|\n", objects[o]);
		for (int i = 0; i < XB_FIELD__COUNT; i++) {
			const struct xb_control_name *f = &xb_control_fields[i];

			if (in_object(f, objects[o]))
				fprintf(out, "| `%s` | %s | %s |\n", f->name, f->type, f->meaning);
		}
	}
	fprintf(out, "\n");
}

static char *read_doc(void)
{
	FILE *f = fopen(DOC, "r");
	char *text = NULL;
	size_t len = 0;
	FILE *mem;
	int c;

	if (!f)
		fail_msg("cannot open " DOC ": run the test from the top of the tree");
	mem = open_memstream(&text, &len);
	assert_non_null(mem);
	while ((c = fgetc(f)) != EOF)
		fputc(c, mem);
	fclose(f);
	fclose(mem);
	return text;
}

static void doc_tables_are_the_tables(void **state)
{
	char *doc = read_doc(), *made = NULL, *begin, *end;
	size_t len = 0;
	FILE *mem = open_memstream(&made, &len);

	assert_non_null(mem);
	write_tables(mem);
	fclose(mem);
	begin = strstr(doc, BEGIN_MARK);
	end = begin ? strstr(begin, END_MARK) : NULL;
	if (!begin || !end)
		fail_msg(DOC " has no tables made from user/common/control_fields.h (its markers)");
	begin += strlen(BEGIN_MARK);
	if ((size_t)(end - begin) != len || memcmp(begin, made, len))
		fail_msg(DOC "'s field tables differ from user/common/control_fields.h: "
			 "build/tests/test_control_fields --doc prints what they should be");
	free(made);
	free(doc);
}

static bool is_field(const char *name, size_t len)
{
	for (int i = 0; i < XB_FIELD__COUNT; i++)
		if (xb_control_fields[i].len == len && !memcmp(xb_control_fields[i].name, name, len))
			return true;
	return false;
}

/* The names in backquotes of a cell, leaving out what is in parentheses (values, notes). */
static int unknown_fields_in(const char *cell, size_t len, const char *cmd)
{
	int depth = 0, unknown = 0;

	for (size_t i = 0; i < len; i++) {
		size_t n;

		if (cell[i] == '(' || cell[i] == ')') {
			depth += cell[i] == '(' ? 1 : -1;
			continue;
		}
		if (cell[i] != '`' || depth)
			continue;
		n = strcspn(cell + i + 1, "`");
		if (i + 1 + n >= len)
			break;
		bool name = n > 0 && islower((unsigned char)cell[i + 1]);

		for (size_t k = 1; k <= n && name; k++)
			name = islower((unsigned char)cell[i + k]) || isdigit((unsigned char)cell[i + k]) ||
			       cell[i + k] == '_';
		if (name && !is_field(cell + i + 1, n)) {
			print_message("%s: the row of `%s` names the field `%.*s`, which "
				      "user/common/control_fields.h lacks\n", DOC, cmd, (int)n,
				      cell + i + 1);
			unknown++;
		}
		i += n + 1;
	}
	return unknown;
}

/* The rows of the tables headed "| cmd |": `NAME` | fields | changes state | reply fields. */
static void doc_commands_are_the_commands(void **state)
{
	char *doc = read_doc(), *line = doc;
	bool in_table = false, seen[XB_CMD__COUNT] = {};
	int bad = 0;

	for (char *next; line && *line; line = next) {
		size_t len = strcspn(line, "\n");
		const char *cell[5];
		char cmd[64];
		int id, k = 0;

		next = line[len] ? line + len + 1 : NULL;

		if (!strncmp(line, "| cmd |", 7)) {
			in_table = true;
			continue;
		}
		if (!in_table || strncmp(line, "| `", 3)) {
			in_table = in_table && !strncmp(line, "|", 1);
			continue;
		}
		for (const char *p = line; p < line + len && k < 5; p++)
			if (*p == '|')
				cell[k++] = p + 1;
		if (k < 5)
			fail_msg("%s: a row of a command table without four cells: %.*s", DOC,
				 (int)len, line);
		snprintf(cmd, sizeof(cmd), "%.*s", (int)strcspn(line + 3, "`"), line + 3);
		id = xb_control_cmd_of(cmd);
		if (id < 0) {
			print_message(
				"%s: the command `%s` is not in user/common/control_fields.h\n",
				DOC, cmd);
			bad++;
			continue;
		}
		seen[id] = true;
		bad += unknown_fields_in(cell[1], cell[2] - cell[1], cmd);
		bad += unknown_fields_in(cell[3], cell[4] - cell[3], cmd);
	}
	for (int i = 0; i < XB_CMD__COUNT; i++)
		if (!seen[i]) {
			print_message("%s: no command table has a row of `%s`\n", DOC,
				      xb_control_commands[i].name);
			bad++;
		}
	free(doc);
	assert_int_equal(bad, 0);
}

/* Names a client can write as they are, types the doc's tables use, a meaning for each; one
 * row per name and object. */
static void table_rows_are_well_formed(void **state)
{
	static const char *const types[] = { "string", "integer", "boolean", "number", "array",
					     "object", "string or null", "integer or null",
					     "array or null", "string or integer" };

	for (int i = 0; i < XB_FIELD__COUNT; i++) {
		const struct xb_control_name *f = &xb_control_fields[i];
		bool typed = false;
		char in[8][64];
		size_t k = objects_of(f, in, 8);

		assert_int_equal(strlen(f->name), f->len);
		assert_int_equal(strspn(f->name, "abcdefghijklmnopqrstuvwxyz0123456789_"), f->len);
		for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
			typed |= !strcmp(f->type, types[t]);
		if (!typed)
			fail_msg("field `%s`: type '%s' is none of the doc's", f->name, f->type);
		assert_true(f->meaning[0] && k > 0);
		for (size_t o = 0; o < k; o++) {
			size_t known = 0;

			while (known < OBJECTS_N && strcmp(objects[known], in[o]))
				known++;
			if (known == OBJECTS_N)
				fail_msg("field `%s`: '%s' is not in XB_CONTROL_OBJECTS", f->name,
					 in[o]);
		}
		for (int j = 0; j < i; j++)
			for (size_t o = 0; o < k; o++)
				if (!strcmp(xb_control_fields[j].name, f->name) &&
				    in_object(&xb_control_fields[j], in[o]))
					fail_msg("field `%s` has two rows in %s", f->name, in[o]);
	}
	for (size_t o = 0; o < OBJECTS_N; o++) {
		int rows = 0;

		for (int i = 0; i < XB_FIELD__COUNT; i++)
			rows += in_object(&xb_control_fields[i], objects[o]);
		if (!rows)
			fail_msg("object '%s' holds no field", objects[o]);
	}
	for (int i = 0; i < XB_CMD__COUNT; i++)
		assert_int_equal(xb_control_cmd_of(xb_control_commands[i].name), i);
	assert_int_equal(xb_control_cmd_of("lists_"), -1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table_rows_are_well_formed),
		cmocka_unit_test(doc_tables_are_the_tables),
		cmocka_unit_test(doc_commands_are_the_commands),
	};

	if (argc == 2 && !strcmp(argv[1], "--doc")) {
		fputs(BEGIN_MARK, stdout);
		write_tables(stdout);
		fputs(END_MARK, stdout);
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
