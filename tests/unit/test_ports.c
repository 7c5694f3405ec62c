/* test_ports.c - unit tests of the port rules from userspace (user/lib/ports.c): the parsers of
 * port lists and guards with the exact text of every refusal, the table and the config.ports
 * flags they build, the description status shows and its round trip through the parsers, and
 * the writing and reading of xdpban_ports and config.ports against the real data path (those
 * skip without root). Never touches pinned state or an interface.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include "libxdpban.h"
#include "maps_fixture.h"
#include "ports.h"

static struct xb_ports *table_new(void)
{
	struct xb_ports *t = malloc(sizeof(*t));

	assert_non_null(t);
	xb_ports_clear(t);
	return t;
}

static void open_ok(struct xb_ports *t, __u8 bit, const char *text)
{
	char err[XB_ERRLEN] = "";

	if (xb_ports_add_open(t, bit, "open-tcp", text, err, sizeof(err)))
		fail_msg("'%s' refused: %s", text, err);
}

static void guards_ok(struct xb_ports *t, const char *text)
{
	char err[XB_ERRLEN] = "";

	if (xb_ports_add_guards(t, "guard", text, err, sizeof(err)))
		fail_msg("'%s' refused: %s", text, err);
}

static void open_list_sets_bytes_and_probe(void **state)
{
	struct xb_ports *t = table_new();

	open_ok(t, XDPBAN_PORT_TCP_OPEN, "22,80,443,8000-8100");
	assert_int_equal(t->flags, XDPBAN_PORTS_PROBE);
	assert_int_equal(xb_ports_byte(t, 22), XDPBAN_PORT_TCP_OPEN);
	assert_int_equal(xb_ports_byte(t, 80), XDPBAN_PORT_TCP_OPEN);
	assert_int_equal(xb_ports_byte(t, 443), XDPBAN_PORT_TCP_OPEN);
	assert_int_equal(xb_ports_byte(t, 8000), XDPBAN_PORT_TCP_OPEN);
	assert_int_equal(xb_ports_byte(t, 8050), XDPBAN_PORT_TCP_OPEN);
	assert_int_equal(xb_ports_byte(t, 8100), XDPBAN_PORT_TCP_OPEN);
	assert_int_equal(xb_ports_byte(t, 21), 0);
	assert_int_equal(xb_ports_byte(t, 23), 0);
	assert_int_equal(xb_ports_byte(t, 7999), 0);
	assert_int_equal(xb_ports_byte(t, 8101), 0);
	/* port 22 is byte 6 of word 2, port 80 byte 0 of word 10 */
	assert_true(t->words[2] == (__u64)XDPBAN_PORT_TCP_OPEN << 48);
	assert_true(t->words[10] == XDPBAN_PORT_TCP_OPEN);

	/* UDP beside TCP on one port, blanks around pieces, the extremes, a port twice */
	open_ok(t, XDPBAN_PORT_UDP_OPEN, " 22 ,\t1, 65535 ,1-1,65535");
	assert_int_equal(xb_ports_byte(t, 22), XDPBAN_PORT_TCP_OPEN | XDPBAN_PORT_UDP_OPEN);
	assert_int_equal(xb_ports_byte(t, 1), XDPBAN_PORT_UDP_OPEN);
	assert_int_equal(xb_ports_byte(t, 65535), XDPBAN_PORT_UDP_OPEN);
	assert_int_equal(xb_ports_byte(t, 0), 0);
	assert_true(t->words[XDPBAN_PORTS_WORDS - 1] == (__u64)XDPBAN_PORT_UDP_OPEN << 56);
	assert_int_equal(t->flags, XDPBAN_PORTS_PROBE);
	free(t);
}

/* Every kind of bad list, with the whole message, and the table as it was. */
static void open_list_refusals_name_the_piece(void **state)
{
	static const struct {
		const char *text, *says;
	} rows[] = {
		{ "", "bad open-tcp '': expected a comma list of ports 1..65535 and ranges LO-HI" },
		{ "  ", "bad open-tcp '  ': expected a comma list of ports 1..65535 and ranges LO-HI" },
		{ "22,,80", "bad open-tcp '22,,80': piece 2 is empty" },
		{ ",22", "bad open-tcp ',22': piece 1 is empty" },
		{ "22, ", "bad open-tcp '22, ': piece 2 is empty" },
		{ "0", "bad open-tcp '0': '0' is out of range: ports are 1..65535" },
		{ "22,65536", "bad open-tcp '22,65536': '65536' is out of range: ports are 1..65535" },
		{ "99999999999999999999",
		  "bad open-tcp '99999999999999999999': '99999999999999999999' is out of range: "
		  "ports are 1..65535" },
		{ "0-10", "bad open-tcp '0-10': '0-10' is out of range: ports are 1..65535" },
		{ "90-80", "bad open-tcp '90-80': range '90-80' is reversed: LO must not be above HI" },
		{ "ssh", "bad open-tcp 'ssh': 'ssh' is not a port 1..65535 or a range LO-HI" },
		{ "80 - 90", "bad open-tcp '80 - 90': '80 - 90' is not a port 1..65535 or a range LO-HI" },
		{ "-80", "bad open-tcp '-80': '-80' is not a port 1..65535 or a range LO-HI" },
		{ "80-", "bad open-tcp '80-': '80-' is not a port 1..65535 or a range LO-HI" },
		{ "1-2-3", "bad open-tcp '1-2-3': '1-2-3' is not a port 1..65535 or a range LO-HI" },
		{ "+80", "bad open-tcp '+80': '+80' is not a port 1..65535 or a range LO-HI" },
		{ "0x50", "bad open-tcp '0x50': '0x50' is not a port 1..65535 or a range LO-HI" },
		{ "80;90", "bad open-tcp '80;90': '80;90' is not a port 1..65535 or a range LO-HI" },
		{ "8\xff", "bad open-tcp '8\\xff': '8\\xff' is not a port 1..65535 or a range LO-HI" },
		{ "6969/bep15",
		  "bad open-tcp '6969/bep15': '6969/bep15' is not a port 1..65535 or a range LO-HI" },
	};
	struct xb_ports *t = table_new(), *before = table_new();
	char err[XB_ERRLEN];

	open_ok(t, XDPBAN_PORT_TCP_OPEN, "443");
	*before = *t;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		err[0] = '\0';
		assert_int_equal(xb_ports_add_open(t, XDPBAN_PORT_TCP_OPEN, "open-tcp", rows[i].text,
						   err, sizeof(err)),
				 -EINVAL);
		assert_string_equal(err, rows[i].says);
		assert_memory_equal(t, before, sizeof(*t));
	}
	/* a good piece before the bad one is not applied either */
	assert_int_equal(xb_ports_add_open(t, XDPBAN_PORT_TCP_OPEN, "open-tcp", "22,x", err,
					   sizeof(err)),
			 -EINVAL);
	assert_int_equal(xb_ports_byte(t, 22), 0);
	/* a fresh table stays without flags after a refusal */
	xb_ports_clear(t);
	assert_int_equal(xb_ports_add_open(t, XDPBAN_PORT_UDP_OPEN, "open-udp", "0", err,
					   sizeof(err)),
			 -EINVAL);
	assert_int_equal(t->flags, 0);
	free(before);
	free(t);
}

static void guards_set_profiles_and_guard_flag(void **state)
{
	struct xb_ports *t = table_new();

	guards_ok(t, "6969/bep15, 53/dns");
	assert_int_equal(t->flags, XDPBAN_PORTS_GUARD);
	assert_int_equal(xb_ports_byte(t, 6969), XDPBAN_GUARD_BEP15);
	assert_int_equal(xb_ports_byte(t, 53), XDPBAN_GUARD_DNS);
	assert_int_equal(xb_ports_byte(t, 6968), 0);
	/* the same guard twice changes nothing; a range; open beside a guard keeps both */
	guards_ok(t, "6969/bep15");
	guards_ok(t, "1337-1339/bep15");
	assert_int_equal(xb_ports_byte(t, 1338), XDPBAN_GUARD_BEP15);
	open_ok(t, XDPBAN_PORT_UDP_OPEN, "53");
	assert_int_equal(xb_ports_byte(t, 53), XDPBAN_GUARD_DNS | XDPBAN_PORT_UDP_OPEN);
	assert_int_equal(t->flags, XDPBAN_PORTS_GUARD | XDPBAN_PORTS_PROBE);
	assert_string_equal(xb_guard_name(XDPBAN_GUARD_BEP15), "bep15");
	assert_string_equal(xb_guard_name(XDPBAN_GUARD_DNS), "dns");
	assert_null(xb_guard_name(0));
	assert_null(xb_guard_name(15));
	assert_null(xb_guard_name(16));
	free(t);
}

static void guard_refusals_name_the_piece(void **state)
{
	static const struct {
		const char *text, *says;
	} rows[] = {
		{ "", "bad guard '': expected PORT/PROFILE or a comma list of them (profiles: bep15, "
		      "dns)" },
		{ "6969", "bad guard '6969': '6969' is not PORT/PROFILE (profiles: bep15, dns)" },
		{ "6969/", "bad guard '6969/': '' is not a guard profile (known: bep15, dns)" },
		{ "6969/BEP15", "bad guard '6969/BEP15': 'BEP15' is not a guard profile (known: bep15, "
				"dns)" },
		{ "6969/bep", "bad guard '6969/bep': 'bep' is not a guard profile (known: bep15, dns)" },
		{ "/dns", "bad guard '/dns': '' is not a port 1..65535 or a range LO-HI" },
		{ "0/dns", "bad guard '0/dns': '0' is out of range: ports are 1..65535" },
		{ "70000/dns", "bad guard '70000/dns': '70000' is out of range: ports are 1..65535" },
		{ "60-50/dns", "bad guard '60-50/dns': range '60-50' is reversed: LO must not be above HI" },
		{ "53/dns,,", "bad guard '53/dns,,': piece 2 is empty" },
		{ "6969/dns", "bad guard '6969/dns': port 6969 is guarded as bep15 already" },
		{ "6960-6970/dns", "bad guard '6960-6970/dns': port 6969 is guarded as bep15 already" },
		{ "53/dns,53/bep15", "bad guard '53/dns,53/bep15': port 53 is guarded as dns already" },
	};
	struct xb_ports *t = table_new(), *before = table_new();
	char err[XB_ERRLEN];

	guards_ok(t, "6969/bep15");
	*before = *t;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		err[0] = '\0';
		assert_int_equal(xb_ports_add_guards(t, "guard", rows[i].text, err, sizeof(err)),
				 -EINVAL);
		assert_string_equal(err, rows[i].says);
		assert_memory_equal(t, before, sizeof(*t));
	}
	free(before);
	free(t);
}

static void probe_icmp_needs_open_ports(void **state)
{
	struct xb_ports *t = table_new();
	char err[XB_ERRLEN] = "";

	guards_ok(t, "6969/bep15"); /* a guarded port is not an open list */
	assert_int_equal(xb_ports_probe_icmp(t, "probe-icmp", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "probe-icmp needs open ports: without an open TCP or UDP port "
				 "list nothing is a probe");
	assert_int_equal(t->flags, XDPBAN_PORTS_GUARD);
	open_ok(t, XDPBAN_PORT_UDP_OPEN, "6969");
	assert_int_equal(xb_ports_probe_icmp(t, "probe-icmp", err, sizeof(err)), 0);
	assert_int_equal(t->flags, XDPBAN_PORTS_ALL);
	free(t);
}

static int count_run(__u32 lo, __u32 hi, __u8 value, void *ctx)
{
	return ++*(int *)ctx == 2 ? 77 : 0;
}

/* The description compacts runs, and the parsers read it back to the very same table. */
static void format_is_compact_and_parses_back(void **state)
{
	struct xb_ports *t = table_new(), *back = table_new();
	char buf[256], err[XB_ERRLEN];
	int runs = 0;

	open_ok(t, XDPBAN_PORT_TCP_OPEN, "443,22,80-81,82,8000-8100,65535");
	guards_ok(t, "6969/bep15,53/dns,6970/bep15,54/bep15");
	open_ok(t, XDPBAN_PORT_UDP_OPEN, "1");
	assert_int_equal(xb_ports_format(t, XDPBAN_PORT_TCP_OPEN, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "22,80-82,443,8000-8100,65535");
	assert_int_equal(xb_ports_add_open(back, XDPBAN_PORT_TCP_OPEN, "open-tcp", buf, err,
					   sizeof(err)),
			 0);
	assert_int_equal(xb_ports_format(t, XDPBAN_PORT_GUARD_MASK, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "53/dns,54/bep15,6969-6970/bep15");
	assert_int_equal(xb_ports_add_guards(back, "guard", buf, err, sizeof(err)), 0);
	assert_int_equal(xb_ports_format(t, XDPBAN_PORT_UDP_OPEN, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "1");
	assert_int_equal(xb_ports_add_open(back, XDPBAN_PORT_UDP_OPEN, "open-udp", buf, err,
					   sizeof(err)),
			 0);
	assert_memory_equal(t, back, sizeof(*t));

	xb_ports_clear(back);
	assert_int_equal(xb_ports_format(back, XDPBAN_PORT_TCP_OPEN, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	assert_int_equal(xb_ports_format(t, XDPBAN_PORT_TCP_OPEN, buf, 10), -ENOSPC);
	assert_string_equal(buf, "22,80-82");
	/* every other port: the longest list, and a stop asked for by the callback */
	for (__u32 p = 1; p < XDPBAN_PORTS_PORTS; p += 2)
		back->words[xdpban_port_word(p)] |= (__u64)XDPBAN_PORT_TCP_OPEN
						     << xdpban_port_shift(p);
	assert_int_equal(xb_ports_runs(back, XDPBAN_PORT_TCP_OPEN, count_run, &runs), 77);
	assert_int_equal(runs, 2);
	assert_int_equal(xb_ports_format_run(6969, 6969, XDPBAN_GUARD_BEP15, XDPBAN_PORT_GUARD_MASK,
					     buf, sizeof(buf)),
			 0);
	assert_string_equal(buf, "6969/bep15");
	assert_int_equal(xb_ports_format_run(1, 65535, XDPBAN_PORT_UDP_OPEN, XDPBAN_PORT_UDP_OPEN,
					     buf, 7),
			 -ENOSPC);
	free(back);
	free(t);
}

/* ---- on the maps ---- */

static int setup(void **state)
{
	return maps_fixture_open(state, NULL);
}

static int teardown(void **state)
{
	return maps_fixture_close(state);
}

static void read_config(struct maps_fixture *f, struct xdpban_config *cfg)
{
	assert_int_equal(xb_config_read(&f->m, cfg), 0);
}

/* Written, the table and config.ports are in force, the other settings kept; an empty table
 * turns them off again. */
static void write_then_read_back(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xb_ports *t = table_new(), *back = table_new();
	struct xdpban_config cfg;
	char err[XB_ERRLEN] = "";

	read_config(f, &cfg);
	assert_int_equal(cfg.ports, 0);
	assert_int_equal(xb_config_set(&cfg, "limit", "3", err, sizeof(err)), 0);
	assert_int_equal(xb_config_write(&f->m, &cfg, err, sizeof(err)), 0);
	guards_ok(t, "6969/bep15,53/dns");
	open_ok(t, XDPBAN_PORT_TCP_OPEN, "22,8000-8100");
	open_ok(t, XDPBAN_PORT_UDP_OPEN, "53,6969,7000");
	assert_int_equal(xb_ports_probe_icmp(t, "probe-icmp", err, sizeof(err)), 0);
	if (xb_ports_write(&f->m, t, err, sizeof(err)))
		fail_msg("write: %s", err);
	read_config(f, &cfg);
	assert_int_equal(cfg.ports, XDPBAN_PORTS_ALL);
	assert_int_equal(cfg.limit, 3);
	assert_int_equal(xb_ports_read(&f->m, back), 0);
	assert_memory_equal(back, t, sizeof(*t));

	xb_ports_clear(t);
	assert_int_equal(xb_ports_write(&f->m, t, err, sizeof(err)), 0);
	read_config(f, &cfg);
	assert_int_equal(cfg.ports, 0);
	assert_int_equal(cfg.limit, 3);
	assert_int_equal(xb_ports_read(&f->m, back), 0);
	assert_memory_equal(back, t, sizeof(*t));
	free(back);
	free(t);
}

/* Only what config.ports turns on is in force: guards without GUARD, or open ports without
 * PROBE, are not read back. */
static void read_shows_only_rules_in_force(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xb_ports *t = table_new(), *back = table_new();
	struct xdpban_config cfg;
	char err[XB_ERRLEN] = "";

	guards_ok(t, "6969/bep15");
	open_ok(t, XDPBAN_PORT_TCP_OPEN, "22");
	assert_int_equal(xb_ports_write(&f->m, t, err, sizeof(err)), 0);
	read_config(f, &cfg);
	cfg.ports = XDPBAN_PORTS_PROBE;
	assert_int_equal(xb_config_write(&f->m, &cfg, err, sizeof(err)), 0);
	assert_int_equal(xb_ports_read(&f->m, back), 0);
	assert_int_equal(back->flags, XDPBAN_PORTS_PROBE);
	assert_int_equal(xb_ports_byte(back, 6969), 0);
	assert_int_equal(xb_ports_byte(back, 22), XDPBAN_PORT_TCP_OPEN);
	cfg.ports = XDPBAN_PORTS_GUARD;
	assert_int_equal(xb_config_write(&f->m, &cfg, err, sizeof(err)), 0);
	assert_int_equal(xb_ports_read(&f->m, back), 0);
	assert_int_equal(xb_ports_byte(back, 6969), XDPBAN_GUARD_BEP15);
	assert_int_equal(xb_ports_byte(back, 22), 0);
	free(back);
	free(t);
}

static const char *array_text(struct json_object *obj, const char *name)
{
	struct json_object *arr;

	assert_true(json_object_object_get_ex(obj, name, &arr));
	return json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN);
}

/* status carries the rules in force, in the config file's text; none is empty arrays. */
static void status_json_shows_the_rules(void **state)
{
	struct maps_fixture *f = maps_fixture_need(state);
	struct xb_ports *t = table_new();
	struct json_object *status, *ports, *icmp;
	char err[XB_ERRLEN] = "";

	assert_int_equal(xb_json_status(&f->m, &status), 0);
	assert_true(json_object_object_get_ex(status, "ports", &ports));
	assert_string_equal(array_text(ports, "guards"), "[]");
	assert_string_equal(array_text(ports, "open_tcp"), "[]");
	assert_string_equal(array_text(ports, "open_udp"), "[]");
	assert_true(json_object_object_get_ex(ports, "probe_icmp", &icmp));
	assert_false(json_object_get_boolean(icmp));
	json_object_put(status);

	guards_ok(t, "6969/bep15");
	open_ok(t, XDPBAN_PORT_TCP_OPEN, "22,80,8000-8100");
	open_ok(t, XDPBAN_PORT_UDP_OPEN, "6969");
	assert_int_equal(xb_ports_probe_icmp(t, "probe-icmp", err, sizeof(err)), 0);
	assert_int_equal(xb_ports_write(&f->m, t, err, sizeof(err)), 0);
	assert_int_equal(xb_json_ports(&f->m, &ports), 0);
	assert_string_equal(json_object_to_json_string_ext(ports, JSON_C_TO_STRING_PLAIN |
									  JSON_C_TO_STRING_NOSLASHESCAPE),
			    "{\"guards\":[\"6969/bep15\"],\"open_tcp\":[\"22\",\"80\","
			    "\"8000-8100\"],\"open_udp\":[\"6969\"],\"probe_icmp\":true}");
	json_object_put(ports);
	free(t);
}

#define MAPS_TEST(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* no root needed */
		cmocka_unit_test(open_list_sets_bytes_and_probe),
		cmocka_unit_test(open_list_refusals_name_the_piece),
		cmocka_unit_test(guards_set_profiles_and_guard_flag),
		cmocka_unit_test(guard_refusals_name_the_piece),
		cmocka_unit_test(probe_icmp_needs_open_ports),
		cmocka_unit_test(format_is_compact_and_parses_back),
		/* the real data path */
		MAPS_TEST(write_then_read_back),
		MAPS_TEST(read_shows_only_rules_in_force),
		MAPS_TEST(status_json_shows_the_rules),
	};

	return cmocka_run_group_tests_name("ports", tests, NULL, NULL);
}
