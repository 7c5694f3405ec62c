/* fuzz_control.c - libFuzzer harness for xb_control_handle (user/common/control.c), the function
 * that turns one control-socket request line into one reply line. The daemon's server
 * (user/xdpband/server.c) only frames lines and checks peers; every byte a client sends
 * reaches this function, so this is where parsing and validation are fuzzed.
 *
 * The seam is a stub backend, made at link time, with no change to the library: this file
 * defines bpf_map_lookup_elem and bpf_map_update_elem, which take the place of libbpf's for
 * the whole binary. They keep the config map (xdpban_config) in memory, under an fd number no
 * real file can have, and every other map is absent (fd -1: each call on it fails with EBADF,
 * as the kernel would). So no BPF map is needed, nothing touches the kernel, and each request
 * is parsed and validated in full: `set` reads, changes, writes and renders the config, and
 * the commands that need other maps stop at their first map access, after their fields were
 * checked. The daemon's own commands go to a stub command hook that knows "reload".
 *
 * Each input is one request line, handled twice: read-write and read-only. Checked: the
 * handler always returns 0 with a reply; the reply is one line of printable ASCII that parses
 * as a JSON object with a boolean "ok"; a failure is exactly {"ok": false, "error": "..."}
 * with a message; a read-only connection changes nothing and calls no hook that reports a
 * change; with the maps absent, only `set` and "reload" can succeed, each reported once, and
 * a `set` leaves a valid config.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <json-c/json.h>
#include "control.h"
#include "support.h"

#define STUB_CONFIG_FD INT_MAX /* above fs.nr_open's limit: no file has it, a syscall fails */

/* ---- the stub backend ---- */

static struct xdpban_config stub_config; /* all zero: unset, the data path's defaults */

static bool stub_key_ok(const void *key)
{
	__u32 index;

	memcpy(&index, key, sizeof(index));
	return index == 0;
}

int bpf_map_lookup_elem(int fd, const void *key, void *value)
{
	if (fd != STUB_CONFIG_FD) {
		errno = EBADF;
		return -EBADF;
	}
	if (!stub_key_ok(key)) {
		errno = ENOENT;
		return -ENOENT;
	}
	memcpy(value, &stub_config, sizeof(stub_config));
	return 0;
}

int bpf_map_update_elem(int fd, const void *key, const void *value, __u64 flags)
{
	if (fd != STUB_CONFIG_FD) {
		errno = EBADF;
		return -EBADF;
	}
	if (!stub_key_ok(key) || flags > BPF_EXIST) {
		errno = stub_key_ok(key) ? EINVAL : E2BIG;
		return -errno;
	}
	memcpy(&stub_config, value, sizeof(stub_config));
	return 0;
}

/* ---- the stub daemon: hooks that count what they are told ---- */

struct stub_daemon {
	bool read_only;
	int changes; /* banned, unbanned, config_changed, reload */
	int config_changed;
};

static void on_banned(const struct xb_prefix *p, __u32 seconds, const char *comment,
		      void *user)
{
	((struct stub_daemon *)user)->changes++;
}

static void on_unbanned(const struct xb_prefix *p, void *user)
{
	((struct stub_daemon *)user)->changes++;
}

static void on_config_changed(const struct xdpban_config *cfg, const char *key, bool reset,
			      void *user)
{
	struct stub_daemon *d = user;

	(void)reset;
	fz_check(xdpban_config_valid(cfg), "config_changed with an invalid config");
	fz_check(xb_config_key(0) && key, "config_changed without its key");
	d->changes++;
	d->config_changed++;
}

static int on_command(const char *cmd, struct json_object *request, struct json_object *reply,
		      char *err, size_t errlen, void *user)
{
	struct stub_daemon *d = user;

	if (strcmp(cmd, "reload"))
		return -ENOENT;
	if (d->read_only) {
		snprintf(err, errlen, "\"reload\" changes state and this connection is read-only");
		return -EPERM;
	}
	d->changes++;
	return 0;
}

static const struct xb_control_hooks stub_hooks = {
	.banned = on_banned,
	.unbanned = on_unbanned,
	.config_changed = on_config_changed,
	.command = on_command,
};

/* ---- the checks ---- */

/* The reply's "ok", after checking that it is a JSON object of the documented shape. */
static bool check_reply(const char *reply)
{
	struct json_object *obj = json_tokener_parse(reply), *ok, *error;
	bool result;

	fz_check(fz_printable(reply), "the reply is not one line of printable ASCII: %s", reply);
	fz_check(obj && json_object_is_type(obj, json_type_object), "not a JSON object: %s",
		 reply);
	fz_check(json_object_object_get_ex(obj, "ok", &ok) &&
			 json_object_is_type(ok, json_type_boolean),
		 "no boolean \"ok\": %s", reply);
	result = json_object_get_boolean(ok);
	if (!result) {
		fz_check(json_object_object_length(obj) == 2 &&
				 json_object_object_get_ex(obj, "error", &error) &&
				 json_object_is_type(error, json_type_string) &&
				 json_object_get_string_len(error) > 0,
			 "a failure is not {\"ok\": false, \"error\": \"...\"}: %s", reply);
	}
	json_object_put(obj);
	return result;
}

static void handle(const uint8_t *data, size_t size, bool read_only)
{
	struct xb_maps maps = { XB_MAPS_NONE, .ncpus = 1 };
	struct stub_daemon d = { .read_only = read_only };
	const struct xb_control_ctx ctx = {
		.maps = &maps, .hooks = &stub_hooks, .user = &d, .read_only = read_only,
	};
	struct xdpban_config before;
	char *reply = NULL;
	bool ok;

	maps.config = STUB_CONFIG_FD; /* the one map the stub has */
	memset(&stub_config, 0, sizeof(stub_config));
	before = stub_config;
	fz_check(!xb_control_handle(&ctx, (const char *)data, size, &reply) && reply,
		 "no reply to a %zu-byte request", size);
	ok = check_reply(reply);
	if (read_only) {
		fz_check(!d.changes && !memcmp(&before, &stub_config, sizeof(before)),
			 "a read-only request changed state: %s", reply);
		fz_check(!ok, "a read-only request succeeded without maps: %s", reply);
	} else {
		/* Without maps only `set` and the stub's "reload" can succeed, each with one notice. */
		fz_check(ok == (d.changes == 1) && d.changes <= 1, "%d notices: %s", d.changes, reply);
		fz_check(!d.config_changed || xdpban_config_valid(&stub_config),
			 "set left an invalid config: %s", reply);
	}
	free(reply);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	handle(data, size, false);
	handle(data, size, true);
	return 0;
}
