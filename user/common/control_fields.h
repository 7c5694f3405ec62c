/* control_fields.h - the names of the control protocol (docs/control.md): every command and every
 * field of its requests, replies and events, with its JSON type and meaning.
 *
 * XB_CONTROL_COMMANDS and XB_CONTROL_FIELDS are the one list of them: the server (control.c,
 * json.c, the daemon's hooks, event stream and fleet), the client (the CLI) and the field tables
 * of docs/control.md ("Fields", made by `build/tests/test_control_fields --doc` and held to
 * this list by that test) all take the names from here. Spell a name in code as XB_F(ID) or
 * XB_CMD(ID), never as a literal. The names are a contract: add rows, never rename or retype
 * one. Two rows may share a name when they are fields of different objects with different
 * types or meanings (the ID then says which); a field of one meaning in several objects is
 * one row. Nothing here ever depends on json-c.
 */
#ifndef XDPBAN_CONTROL_FIELDS_H
#define XDPBAN_CONTROL_FIELDS_H

#include <stddef.h>

/* C(ID, name, meaning): the values of "cmd". The library's handler answers the first nine
 * (control.c), the daemon's command hook the rest (user/xdpband/hooks.c). */
#define XB_CONTROL_COMMANDS(C)                                                                     \
	C(STATUS, "status", "the state, the settings, the statistics and the daemon's own state")  \
	C(STATS, "stats", "the statistics")                                                        \
	C(BANS, "bans", "every ban in force")                                                      \
	C(LISTS, "lists", "the policy lists and the entries of the exempt tries")                  \
	C(QUERY, "query", "what xdpban knows of one address")                                      \
	C(BAN, "ban", "bans a prefix")                                                             \
	C(UNBAN, "unban", "lifts a ban")                                                           \
	C(REPORT, "report", "counts errors against an address, as the data path would")            \
	C(SET, "set", "changes one setting of the config map")                                     \
	C(RELOAD, "reload", "the daemon rereads its configuration and lists")                      \
	C(SAVE, "save", "the daemon writes its state file now")                                    \
	C(EVENTS, "events", "the event stream's backlog, and with follow every later event")       \
	C(LISTS_LOAD, "lists_load", "loads list files into a layer at runtime")                    \
	C(LISTS_CLEAR, "lists_clear", "drops the runtime lists of a layer, or one of them")        \
	C(LISTS_SHOW, "lists_show", "the lists in force, by layer and file")                       \
	C(LISTS_ADD, "lists_add", "adds a single entry to a layer at runtime")                     \
	C(LISTS_DEL, "lists_del", "deletes a single entry of a layer")

/* O(name): the objects fields are in, in the order of docs/control.md's tables. */
#define XB_CONTROL_OBJECTS(O)                                                                      \
	O("request")                                                                               \
	O("every reply")                                                                           \
	O("`status` reply")                                                                        \
	O("`stats` reply")                                                                         \
	O("`bans` reply")                                                                          \
	O("`lists` reply")                                                                         \
	O("`query` reply")                                                                         \
	O("`ban` reply")                                                                           \
	O("`unban` reply")                                                                         \
	O("`report` reply")                                                                        \
	O("`set` reply")                                                                           \
	O("`reload` reply")                                                                        \
	O("a changed setting")                                                                     \
	O("a changed list")                                                                        \
	O("`save` reply")                                                                          \
	O("`events` reply")                                                                        \
	O("a subscriber's last line")                                                              \
	O("`lists_load` reply")                                                                    \
	O("`lists_clear` reply")                                                                   \
	O("`lists_show` reply")                                                                    \
	O("`lists_add` reply")                                                                     \
	O("`lists_del` reply")                                                                     \
	O("`config`")                                                                              \
	O("a rule")                                                                                \
	O("`ports`")                                                                               \
	O("a member of `stats`")                                                                   \
	O("a ban")                                                                                 \
	O("a list")                                                                                \
	O("`exempt` of `lists`")                                                                   \
	O("`never_ban` and `host` of `exempt`")                                                    \
	O("`interfaces[]`")                                                                        \
	O("`xdpband`")                                                                             \
	O("`xdpband.lists[]`")                                                                     \
	O("`xdpband.host_addresses[]`")                                                            \
	O("`xdpband.escalation`")                                                                  \
	O("`xdpband.events`")                                                                      \
	O("`xdpband.fleet`")                                                                       \
	O("an event")                                                                              \
	O("a layer")                                                                               \
	O("a layer's file")                                                                        \
	O("an entry of `<entries>`")                                                               \
	O("`default` of `lists_show`")                                                             \
	O("`totals` of `lists_show`")                                                              \
	O("a member of `totals`")

/* X(ID, name, in, type, meaning), one row per field: `in` names the objects of
 * XB_CONTROL_OBJECTS that hold it, separated by "; " (docs/control.md has a table per object,
 * its rows in this order), `type` its JSON type. */
#define XB_CONTROL_FIELDS(X)                                                                       \
	X(CMD, "cmd", "request", "string", "the command: every request has it")                    \
	X(ADDR, "addr", "request", "string", "one address (`query`, `report`)")                    \
	X(PREFIX, "prefix",                                                                        \
	  "request; `ban` reply; `unban` reply; `lists_add` reply; `lists_del` reply; a ban; an "  \
	  "entry of `<entries>`",                                                                  \
	  "string",                                                                                \
	  "an address or prefix to ban or unban, or of a single entry (`lists_add`, `lists_del`); " \
	  "in the `unban` reply what was lifted (for an address whose key is banned, such as an "  \
	  "IPv6 address under its /64 ban, the key)")                                              \
	X(SECONDS, "seconds", "request; `ban` reply; an event", "integer",                         \
	  "a ban's length in seconds, 0..315360000; 0 (or absent in a request) = permanent")       \
	X(COUNT, "count", "request; `query` reply; `report` reply; a ban; an event", "integer",    \
	  "errors: to report (request, 1..1000000000, default 1); counted against the source "     \
	  "(replies); that made the ban (a ban, an event; 0 for a manual ban)")                    \
	X(COMMENT, "comment",                                                                      \
	  "request; `ban` reply; `query` reply; a ban; an event; `lists_add` reply; `lists_del` "  \
	  "reply; an entry of `<entries>`",                                                        \
	  "string",                                                                                \
	  "an operator's note, up to 200 bytes of UTF-8 without control characters: on a manual "  \
	  "ban, kept by the daemon (`ban`; `query`, `xdpban bans --json` and ban events show it; " \
	  "absent: none), or on a single list entry (`lists_add`; \"\" for none)")                  \
	X(KEY, "key", "request", "string", "the setting `set` changes")                            \
	X(VALUE, "value", "request", "string or integer", "the setting's new value")               \
	X(RESET, "reset", "request", "boolean",                                                    \
	  "`set` without `value`: give the key back to the config file's value (xdpband only)")    \
	X(LAYER, "layer",                                                                          \
	  "request; `lists_load` reply; `lists_clear` reply; `lists_add` reply; `lists_del` "      \
	  "reply; a layer",                                                                        \
	  "string",                                                                                \
	  "`allow`, `deny` or `trusted`; also `never-ban`, but for `lists_load`")                  \
	X(CLEAR_FILE, "file", "request", "string",                                                 \
	  "`lists_clear`: the one runtime list of the layer to drop, as `lists_show` names it "    \
	  "(an absolute path, `<stdin>` or `<entries>`); absent: all of them")                     \
	X(FILES, "files", "request", "array",                                                      \
	  "the names of 1..64 list files sent open with the request (`lists_load`): absolute "     \
	  "paths, or `<stdin>`")                                                                   \
	X(IGNORE_ERRORS, "ignore_errors", "request", "boolean",                                    \
	  "`lists_load` skips bad lines instead of refusing them (default false)")                 \
	X(ALL, "all", "request", "boolean",                                                        \
	  "`unban`: lifts every ban, or with `reason` every ban of that reason, instead of "       \
	  "`prefix` (default false)")                                                              \
	X(FOLLOW, "follow", "request; `events` reply", "boolean",                                  \
	  "`events`: the connection follows the stream after the reply (default false)")           \
	X(SINCE, "since", "request; `events` reply; a subscriber's last line", "integer",          \
	  "the sequence number of the last event the follower has: it resumes after it")           \
	X(SINCE_UNIX, "since_unix", "request; `events` reply", "integer",                          \
	  "`events`: the backlog is every event at or after this time, Unix seconds "              \
	  "0..253402300799, not only the last 256 (with the history file, also from before a "     \
	  "restart); not with `since`")                                                            \
	X(OK, "ok", "every reply; a subscriber's last line", "boolean",                            \
	  "whether the request was done")                                                          \
	X(ERROR, "error", "every reply; a subscriber's last line", "string",                       \
	  "with `ok` false: why not, one line")                                                    \
	X(DAEMON, "daemon", "`status` reply", "boolean", "true from xdpband; false from the CLI "  \
	  "on the pinned maps")                                                                    \
	X(PIN_DIR, "pin_dir", "`status` reply; `xdpband`", "string",                               \
	  "where the maps are pinned")                                                             \
	X(CONFIG, "config", "`status` reply; `set` reply", "object", "the settings in force")      \
	X(PORTS, "ports", "`status` reply", "object", "the port rules in force")                   \
	X(TRACKED, "tracked", "`status` reply", "integer", "entries of the counter table in use")  \
	X(VERIFIED_N, "verified", "`status` reply", "integer",                                     \
	  "sources with a hop count proved by a TCP connection")                                   \
	X(COUNTERS_MAX, "counters_max", "`status` reply", "integer",                               \
	  "the size of the counter table, fixed when the maps were created")                       \
	X(BANNED_N, "banned", "`status` reply", "integer", "entries of the ban table in use")      \
	X(BANS_MAX, "bans_max", "`status` reply", "integer",                                       \
	  "the size of the ban table, fixed when the maps were created")                           \
	X(PREFIX_BANS, "prefix_bans", "`status` reply", "integer", "manual prefix bans")           \
	X(POLICY_IPV4, "policy_ipv4", "`status` reply", "integer", "IPv4 prefixes of the policy")  \
	X(POLICY_IPV6, "policy_ipv6", "`status` reply", "integer", "IPv6 prefixes of the policy")  \
	X(STATS, "stats", "`status` reply; `stats` reply", "object",                               \
	  "one member per reason named by `xb_stat_name()`")                                       \
	X(CONFIG_FILE, "config_file", "`status` reply; `reload` reply", "string",                  \
	  "the daemon's configuration file, as given to `-c`")                                     \
	X(INTERFACES, "interfaces", "`status` reply", "array",                                     \
	  "one object per interface the program is attached to")                                   \
	X(XDPBAND, "xdpband", "`status` reply", "object", "the daemon's own state")                \
	X(BANS, "bans", "`bans` reply", "array", "every ban in force")                             \
	X(ORIGINS, "origins", "`bans` reply", "object",                                            \
	  "with the daemon's `[fleet]` on: from each remote ban's prefix to the node it came "     \
	  "from")                                                                                  \
	X(COMMENTS, "comments", "`bans` reply", "object",                                          \
	  "with the daemon: from each commented manual ban's prefix to its comment (`xdpban bans "  \
	  "--json` moves each into its ban as `comment`)")                                         \
	X(LISTS, "lists", "`lists` reply", "array", "one object per policy list")                  \
	X(EXEMPT_COUNTS, "exempt", "`lists` reply", "object", "the entries of the exempt tries")   \
	X(ADDRESS, "address", "`query` reply; `xdpband.host_addresses[]`", "string",               \
	  "the address")                                                                           \
	X(QUERY_KEY, "key", "`query` reply", "string",                                             \
	  "the key the address is counted and banned under")                                       \
	X(CLASSES, "classes", "`query` reply; a ban; an event", "array",                           \
	  "class names: of the window's errors (`query`), of the error that crossed the limit (a " \
	  "ban, an event; empty for a manual ban)")                                                \
	X(BANNED, "banned", "`query` reply", "boolean", "whether the address is banned")           \
	X(SECONDS_LEFT, "seconds_left", "`query` reply; a ban", "integer",                         \
	  "what is left of the ban, in seconds (-1 = permanent)")                                  \
	X(BAN_REASON, "ban_reason", "`query` reply", "string or null",                             \
	  "`errors`, `manual` or `reported`; null when not banned")                                \
	X(BAN_CLASSES, "ban_classes", "`query` reply", "array or null",                            \
	  "the classes of the error that crossed the limit; null when not banned")                 \
	X(POLICY, "policy", "`query` reply", "string",                                             \
	  "the verdict of the policy for the address")                                             \
	X(POLICY_MATCH, "policy_match", "`query` reply", "string or null",                         \
	  "the policy entry that matched")                                                         \
	X(POLICY_LIST, "policy_list", "`query` reply", "integer or null",                          \
	  "the list of the entry that matched")                                                    \
	X(POLICY_LAYER, "policy_layer", "`query` reply", "string",                                 \
	  "the matching entry's layer, for an entry of a list (added by the daemon)")              \
	X(POLICY_ORIGIN, "policy_origin", "`query` reply", "string",                               \
	  "`config` or `runtime`, for an entry of a list (added by the daemon)")                   \
	X(POLICY_FILE, "policy_file", "`query` reply", "string",                                   \
	  "the file of the entry that matched (added by the daemon)")                              \
	X(POLICY_LINE, "policy_line", "`query` reply", "integer",                                  \
	  "its line in that file; for `<entries>`, its place in the order added (added by the "    \
	  "daemon)")                                                                               \
	X(POLICY_COMMENT, "policy_comment", "`query` reply", "string",                             \
	  "for a single entry (`policy_file` `<entries>`), its comment (added by the daemon)")     \
	X(OBSERVED_MATCH, "observed_match", "`query` reply", "string or null",                     \
	  "the entry of an observed deny list (`deny = FILE observe`) that holds the address, "    \
	  "when the policy passes it on: its packets count under `observed_deny`")                 \
	X(OBSERVED_LIST, "observed_list", "`query` reply", "integer or null",                      \
	  "the list of that entry")                                                                \
	X(OBSERVED_FILE, "observed_file", "`query` reply", "string",                               \
	  "the file of that entry (added by the daemon)")                                          \
	X(OBSERVED_LINE, "observed_line", "`query` reply", "integer",                              \
	  "its line in that file (added by the daemon)")                                           \
	X(EXEMPT, "exempt", "`query` reply", "boolean", "whether the address is never banned")     \
	X(EXEMPT_WHY, "exempt_why", "`query` reply", "string or null", "why it is exempt")         \
	X(EXEMPT_MATCH, "exempt_match", "`query` reply", "string or null",                         \
	  "the exempt prefix that makes it so")                                                    \
	X(EXEMPT_IFINDEX, "exempt_ifindex", "`query` reply", "integer or null",                    \
	  "for a host address, its interface's index")                                             \
	X(EXEMPT_INTERFACE, "exempt_interface", "`query` reply", "string or null",                 \
	  "for a host address, its interface's name in this network namespace")                    \
	X(EXEMPT_FILE, "exempt_file", "`query` reply", "string",                                   \
	  "for a never-ban entry, its list file, or `<entries>` for a single entry (added by the " \
	  "daemon)")                                                                               \
	X(EXEMPT_LINE, "exempt_line", "`query` reply", "integer",                                  \
	  "its line there, as `policy_line` (added by the daemon)")                                \
	X(EXEMPT_COMMENT, "exempt_comment", "`query` reply", "string",                             \
	  "for a single never-ban entry, its comment (added by the daemon)")                       \
	X(HOP, "hop", "`query` reply", "integer or null", "the source's reference hop count")      \
	X(HOP_FROM, "hop_from", "`query` reply", "string or null",                                 \
	  "where it came from: `verified` or `first_error`")                                       \
	X(VERIFIED, "verified", "`query` reply", "boolean",                                        \
	  "whether a TCP connection proved the hop count")                                         \
	X(VERIFIED_AGO_S, "verified_ago_s", "`query` reply", "integer or null",                    \
	  "seconds since it was proved")                                                           \
	X(DISPUTED, "disputed", "`query` reply", "boolean",                                        \
	  "whether the source is disputed (spoofing suspected)")                                   \
	X(BAN_ORIGIN, "ban_origin", "`query` reply", "string",                                     \
	  "with the daemon's `[fleet]` on: the node a remote ban came from")                       \
	X(UNBANNED, "unbanned", "`unban` reply", "integer",                                        \
	  "with `all`: the bans lifted (0: there were none)")                                      \
	X(RESULT, "result", "`report` reply", "string",                                            \
	  "`counted`, `banned`, `already_banned`, `trusted`, `denied`, `disabled`, `table_full` "  \
	  "or "                                                                                    \
	  "`invalid`")                                                                             \
	X(STATE_FILE, "state_file", "`save` reply; `xdpband`", "string or null",                   \
	  "the daemon's state file; null with `[state] file = off`")                               \
	X(EVENTS, "events", "`events` reply", "array", "the backlog, oldest first")                \
	X(LOADED, "loaded", "`lists_load` reply", "integer", "the files loaded")                   \
	X(ENTRIES, "entries",                                                                      \
	  "`lists_load` reply; `xdpband.lists[]`; a layer; a layer's file", "integer",             \
	  "lines read (`lists_load`), prefixes loaded at the last start or reload (`xdpband`)")    \
	X(SKIPPED, "skipped", "`lists_load` reply; `xdpband.lists[]`; a layer's file", "integer",  \
	  "bad lines skipped (`ignore_errors`, `[lists] ignore-errors = yes`)")                    \
	X(SKIPPED_FIRST, "skipped_first", "`lists_load` reply", "array",                           \
	  "up to 3 `FILE:LINE: ...` strings")                                                      \
	X(LEFT_OUT, "left_out", "`lists_load` reply; `lists_clear` reply", "string",               \
	  "only when lines or IPv6 hosts did not fit: one line naming the key to raise and to "    \
	  "what")                                                                                  \
	X(CLEARED, "cleared", "`lists_clear` reply", "integer",                                    \
	  "runtime lists dropped (a layer's single entries are one); the config's stay")           \
	X(ADDED, "added", "`lists_add` reply", "boolean",                                          \
	  "true for a new entry; false when the layer held the prefix and only its comment "       \
	  "changed")                                                                               \
	X(LAYERS, "layers", "`lists_show` reply", "array", "one object per layer")                 \
	X(DEFAULT_LAYER, "default", "`lists_show` reply", "object",                                \
	  "the addresses in no list, and their verdict")                                           \
	X(TOTALS, "totals", "`lists_show` reply", "object", "the addresses of each verdict")       \
	X(LIMIT, "limit", "`config`; a rule; `query` reply", "integer",                            \
	  "errors in a window that ban a source (global, or by the rule; in a `query`, the limit "  \
	  "of the window's classes)")                                                              \
	X(WINDOW, "window", "`config`; a rule", "integer", "the counting window, in seconds")      \
	X(BAN_TIME, "ban_time", "`config`; a rule", "integer", "the length of a ban, in seconds")  \
	X(RULES, "rules", "`config`", "array",                                                     \
	  "the rules of limits with values of their own, classes then ports: one object each "     \
	  "of rule, limit, window, ban_time and own")                                              \
	X(RULE, "rule", "a rule; `query` reply", "string",                                         \
	  "a rule of limits: global, a class name, or PORT/udp")                                   \
	X(OWN, "own", "a rule", "array",                                                           \
	  "the fields the rule sets (limit, window, ban_time); the others are the next rule's "    \
	  "down: the port's class protocol, then the global values")                               \
	X(IPV6_PREFIX, "ipv6_prefix", "`config`", "integer",                                       \
	  "the prefix IPv6 sources are keyed by")                                                  \
	X(ERRORS, "errors", "`config`", "array", "the class names counted")                        \
	X(DROP, "drop", "`config`", "array", "the class names dropped")                            \
	X(SPOOF, "spoof", "`config`", "string", "`off`, `hop` or `verified`")                      \
	X(HOP_TOLERANCE, "hop_tolerance", "`config`", "integer",                                   \
	  "the hop counts a source's errors may differ by")                                        \
	X(LEARN, "learn", "`config`", "string", "`1/N` or `off`")                                  \
	X(ALLOW_ONLY, "allow_only", "`config`; `lists_show` reply", "boolean",                     \
	  "true in allow-only mode")                                                               \
	X(DEFAULTS, "defaults", "`config`", "boolean", "true while the map entry is unset")        \
	X(GUARDS, "guards", "`ports`", "array", "`PORT/PROFILE` or `LO-HI/PROFILE` strings")       \
	X(OPEN_TCP, "open_tcp", "`ports`", "array", "`PORT` or `LO-HI` strings")                   \
	X(OPEN_UDP, "open_udp", "`ports`", "array", "`PORT` or `LO-HI` strings")                   \
	X(PROBE_ICMP, "probe_icmp", "`ports`", "boolean",                                          \
	  "echo requests are errors of class probe")                                               \
	X(PACKETS, "packets", "a member of `stats`", "integer", "packets")                         \
	X(BYTES, "bytes", "a member of `stats`", "integer", "bytes")                               \
	X(REASON, "reason", "request; a ban; an event", "string",                                  \
	  "`errors`, `manual` or `reported`: of a ban; the bans `unban` with `all` lifts "         \
	  "(request; default every reason)")                                                       \
	X(STARTED, "started", "a ban; `xdpband`; `query` reply", "string or null",                 \
	  "when it started, RFC 3339 UTC (`2026-11-30T10:17:53Z`); null for a ban when not "       \
	  "recorded (prefix bans, or a `query` of an address not banned)")                         \
	X(TABLE, "table", "a ban", "string", "`bans` or `policy`")                                 \
	X(LAST_ERROR, "last_error", "`query` reply; a ban; an event", "string or null",            \
	  "the destination port and protocol of the error that crossed the limit (`6969/udp`, "    \
	  "`22/tcp`, `icmp`, `ipv6-icmp`), at the ban's start (kept in the state file); null for " \
	  "a manual or remote ban, a report or a malformed packet")                                \
	X(BAN_RULE, "ban_rule", "`query` reply; a ban; an event", "string or null",                \
	  "the rule of limits that judged the error that crossed the limit (as `rule`); null for " \
	  "a manual or remote ban")                                                                \
	X(LIST, "list", "a list; a layer's file", "integer",                                       \
	  "the list id; 4294967295 = manual prefix bans, 4294967294 = allow-only mode's default "  \
	  "layer")                                                                                 \
	X(MANUAL, "manual", "a list", "boolean", "the list of manual prefix bans")                 \
	X(DEFAULT, "default", "a list", "boolean", "allow-only mode's default layer")              \
	X(VERDICT, "verdict", "a list; `xdpband.lists[]`; `default` of `lists_show`", "string",    \
	  "`deny`, `trusted`, `allowed`, `not allowed` (a list); `allow`, `trusted`, `deny` or "   \
	  "`never-ban` (`xdpband.lists[]`)")                                                       \
	X(IPV4, "ipv4", "a list; `never_ban` and `host` of `exempt`", "integer", "IPv4 entries")   \
	X(IPV6, "ipv6", "a list; `never_ban` and `host` of `exempt`", "integer", "IPv6 entries")   \
	X(NAME, "name", "a list; `interfaces[]`", "string",                                        \
	  "the list's name, when the daemon knows one; the interface's name")                      \
	X(NEVER_BAN, "never_ban", "`exempt` of `lists`", "object",                                 \
	  "never-ban prefixes (with the fleet's Redis server)")                                    \
	X(HOST, "host", "`exempt` of `lists`", "object", "host addresses of protected interfaces") \
	X(IFINDEX, "ifindex", "`interfaces[]`", "integer", "its index in the daemon's namespace")  \
	X(MODE, "mode", "`interfaces[]`; `config`", "string",                                      \
	  "`native`, `generic` or `offload`, as the kernel names them (`interfaces[]`); "          \
	  "`enforce`, or `observe`: bans and lists drop nothing and count what they would have "  \
	  "(`config`)")                                                                             \
	X(PROGRAM_ID, "program_id", "`interfaces[]`", "integer",                                   \
	  "the id of the XDP program running there (`bpftool prog`)")                              \
	X(MTU, "mtu", "`interfaces[]`", "integer",                                                 \
	  "the interface's MTU, read when the request is answered (absent if it cannot be read)")  \
	X(PID, "pid", "`xdpband`", "integer", "its process id")                                    \
	X(DETACH_ON_EXIT, "detach_on_exit", "`xdpband`", "boolean",                                \
	  "whether it detaches and unpins at exit")                                                \
	X(SET_VALUES, "set_values", "`xdpband`", "object",                                         \
	  "the settings changed with `set`, by key, as the config file writes them: they are in "  \
	  "force over the file's, kept across restarts, and given back to the file by a reload "   \
	  "or `set` with `reset`")                                                                 \
	X(DAEMON_LISTS, "lists", "`xdpband`", "array",                                             \
	  "one object per list file of the configuration")                                         \
	X(HOST_ADDRESSES, "host_addresses", "`xdpband`", "array",                                  \
	  "one object per address of a protected interface that is never counted or banned")       \
	X(ESCALATION, "escalation", "`xdpband`", "object", "the escalation settings and state")    \
	X(DAEMON_EVENTS, "events", "`xdpband`", "object", "the event stream")                      \
	X(FLEET, "fleet", "`xdpband`", "object", "with `[fleet]` on only (docs/fleet.md)")         \
	X(ID, "id", "`xdpband.lists[]`", "integer", "the list id, as in `lists` and `query`")      \
	X(FILE, "file", "`xdpband.lists[]`; a layer's file; a changed list", "string",             \
	  "the list file's path")                                                                  \
	X(INTERFACE, "interface", "`xdpband.host_addresses[]`", "string or null",                  \
	  "its interface's name")                                                                  \
	X(ENABLED, "enabled", "`xdpband.escalation`", "boolean", "`[escalation] enabled`")         \
	X(FACTOR, "factor", "`xdpband.escalation`", "number", "`[escalation] factor`")             \
	X(MAX_BAN_TIME_S, "max_ban_time_s", "`xdpband.escalation`", "integer",                     \
	  "`[escalation] max-ban-time`, in seconds")                                               \
	X(PERIOD_S, "period_s", "`xdpband.escalation`", "integer",                                 \
	  "`[escalation] period`, in seconds")                                                     \
	X(OFFENDERS, "offenders", "`xdpband.escalation`", "integer",                               \
	  "sources in the offence history")                                                        \
	X(ESCALATED, "escalated", "`xdpband.escalation`", "integer",                               \
	  "bans lengthened since the daemon started")                                              \
	X(SEQ, "seq", "`xdpband.events`; an event", "integer",                                     \
	  "an event's sequence number: 1 for the daemon's first, then one more for each (a gap "   \
	  "means a line was lost); in `xdpband.events` the last one's (0: none yet)")              \
	X(SUBSCRIBERS, "subscribers", "`xdpband.events`", "integer",                               \
	  "connections following the stream now")                                                  \
	X(SUBSCRIBERS_DROPPED, "subscribers_dropped", "`xdpband.events`", "integer",               \
	  "followers dropped since the daemon started, for falling more than 65,536 events "       \
	  "behind or taking nothing for 5 s")                                                      \
	X(NODE, "node", "`xdpband.fleet`", "string", "this node's name, from the config")          \
	X(REDIS, "redis", "`xdpband.fleet`", "string", "the Redis server, from the config")        \
	X(STREAM, "stream", "`xdpband.fleet`", "string", "the stream, from the config")            \
	X(CONNECTED, "connected", "`xdpband.fleet`", "boolean",                                    \
	  "both connections to Redis are up")                                                      \
	X(FLEET_ERROR, "error", "`xdpband.fleet`", "string or null",                               \
	  "the last connection problem")                                                           \
	X(LAST_ID, "last_id", "`xdpband.fleet`", "string or null",                                 \
	  "the last stream entry handled")                                                         \
	X(LAG_MS, "lag_ms", "`xdpband.fleet`", "integer",                                          \
	  "from Redis adding that entry to its handling here")                                     \
	X(REMOTE_BANS, "remote_bans", "`xdpband.fleet`", "integer",                                \
	  "bans in force here that came from the fleet")                                           \
	X(PUBLISHED, "published", "`xdpband.fleet`", "integer",                                    \
	  "this node's entries added to the stream")                                               \
	X(PUBLISH_FAILED, "publish_failed", "`xdpband.fleet`", "integer",                          \
	  "this node's entries refused by Redis (each once: it stays queued and is sent again)")   \
	X(PUBLISH_ERROR, "publish_error", "`xdpband.fleet`", "string or null",                     \
	  "what Redis said when it last refused an entry; null once an entry is taken again")      \
	X(QUEUED, "queued", "`xdpband.fleet`", "integer", "this node's entries waiting")           \
	X(OVERFLOWED, "overflowed", "`xdpband.fleet`", "integer",                                  \
	  "this node's entries dropped for a full queue")                                          \
	X(REBUILDS, "rebuilds", "`xdpband.fleet`", "integer", "rebuilds from the snapshot hash")   \
	X(PRUNED, "pruned", "`xdpband.fleet`", "integer",                                          \
	  "expired bans this node deleted from the snapshot hash")                                 \
	X(APPLIED, "applied", "`xdpband.fleet`", "integer",                                        \
	  "other nodes' bans and unbans put in force here")                                        \
	X(REFUSED_UNSIGNED, "refused_unsigned", "`xdpband.fleet`", "integer",                      \
	  "entries refused: not signed with the fleet's key")                                      \
	X(REFUSED_MALFORMED, "refused_malformed", "`xdpband.fleet`", "integer",                    \
	  "entries refused: junk")                                                                 \
	X(REFUSED_EXPIRED, "refused_expired", "`xdpband.fleet`", "integer",                        \
	  "entries refused: a time over or absurd")                                                \
	X(REFUSED_POLICY, "refused_policy", "`xdpband.fleet`", "integer",                          \
	  "entries refused: trusted or never banned here")                                         \
	X(REFUSED_QUOTA, "refused_quota", "`xdpband.fleet`", "integer",                            \
	  "entries refused: remote bans at their share of the ban table")                          \
	X(REFUSED_OVERSIZE, "refused_oversize", "`xdpband.fleet`", "integer",                      \
	  "entries refused: over 4096 bytes")                                                      \
	X(REMOTE_BANS_MAX, "remote_bans_max", "`xdpband.fleet`", "integer",                        \
	  "remote bans this node takes at most: `remote-share` of its ban table")                  \
	X(SKIPPED_OWN, "skipped_own", "`xdpband.fleet`", "integer",                                \
	  "entries left alone: this node's own")                                                   \
	X(SKIPPED_LOCAL, "skipped_local", "`xdpband.fleet`", "integer",                            \
	  "entries left alone: a local ban outlasts it or it unbans a local ban")                  \
	X(EVENT, "event", "an event", "string", "`ban`, `unban` or `expire`")                      \
	X(TIME, "time", "an event", "string", "when it happened, RFC 3339 in UTC")                 \
	X(TIME_UNIX, "time_unix", "an event", "integer", "when it happened, Unix seconds")         \
	X(SOURCE, "source", "an event", "string",                                                  \
	  "the banned key or prefix: `192.0.2.7`, `2001:db8::/64`, `203.0.113.0/24`")              \
	X(EXPIRES, "expires", "an event", "string or null",                                        \
	  "bans only: when it ends, RFC 3339 in UTC (null: never)")                                \
	X(EXPIRES_UNIX, "expires_unix", "an event", "integer",                                     \
	  "bans only: when it ends, Unix seconds (0: never)")                                      \
	X(REPEAT, "repeat", "an event", "integer",                                                 \
	  "bans only: earlier offences inside the escalation period (0: a first ban)")             \
	X(MULTIPLIER, "multiplier", "an event", "number",                                          \
	  "bans only: what escalation multiplied the ban time by (1: not at all)")                 \
	X(DROPS, "drops", "a ban; `query` reply", "integer or null",                               \
	  "packets of the source its ban dropped (in observe mode: passed, would have dropped) "   \
	  "since it began, over every CPU; null for a prefix ban (`table` `policy`), counted in "  \
	  "`drop_deny`; `query`: null when not banned")                                            \
	X(OBSERVED, "observed", "a ban; an event; `query` reply", "boolean",                       \
	  "true in observe mode (`mode`): the ban drops nothing, it shows what would have been "   \
	  "dropped; an event's: the ban was made in observe mode")                                 \
	X(ORIGIN, "origin", "an event", "string",                                                  \
	  "bans and unbans applied from the fleet only: the node they came from")                  \
	X(FILE_ORIGIN, "origin", "a layer's file", "string", "`config` or `runtime`")              \
	X(IPV4_ADDRESSES, "ipv4_addresses",                                                        \
	  "a layer's file; `default` of `lists_show`; a member of `totals`",                       \
	  "integer", "IPv4 addresses covered")                                                     \
	X(IPV6_ADDRESSES, "ipv6_addresses",                                                        \
	  "a layer's file; `default` of `lists_show`; a member of `totals`",                       \
	  "string", "IPv6 addresses covered, in decimal")                                          \
	X(LAYER_FILES, "files", "a layer", "array", "one object per file of the layer")            \
	X(ENTRY_LIST, "prefixes", "a layer's file", "array",                                       \
	  "for `<entries>` only: its entries in the order added, each an object")                  \
	X(TOTAL_ALLOWED, "allowed", "`totals` of `lists_show`", "object", "addresses allowed")     \
	X(TOTAL_DENIED, "denied", "`totals` of `lists_show`", "object", "addresses denied")        \
	X(TOTAL_TRUSTED, "trusted", "`totals` of `lists_show`", "object", "addresses trusted")     \
	X(CHANGED, "changed", "`reload` reply", "array",                                           \
	  "one object per setting the reload changed, in the order of xdpban.conf(5)")             \
	X(LISTS_CHANGED, "lists_changed", "`reload` reply", "array",                               \
	  "one object per list file of the config added, dropped or with other prefixes")          \
	X(RESTART, "restart", "`reload` reply", "array",                                           \
	  "the keys that changed but take effect at the next restart (`bans-max`, `[control]`)")   \
	X(SETTING, "key", "a changed setting", "string",                                           \
	  "the key as the config file names it: `[bans] limit`")                                   \
	X(OLD, "old", "a changed setting", "string",                                               \
	  "its value in force before (one `xdpban set` put there too), as the config file "        \
	  "writes it: `10`, `1h`, `malformed,probe`, `none`")                                      \
	X(NEW, "new", "a changed setting", "string", "its value now, written the same way")       \
	X(CHANGED_LAYER, "layer", "a changed list", "string",                                      \
	  "`allow`, `deny`, `trusted` or `never-ban`")                                             \
	X(BEFORE, "before", "a changed list", "integer or null",                                   \
	  "the prefixes the file held before; null when the config did not name it")              \
	X(AFTER, "after", "a changed list", "integer or null",                                     \
	  "the prefixes it holds now; null when the config no longer names it")

#define XB_CONTROL_CMD_ENUM_(id, name, meaning) XB_CMD_##id,
enum xb_control_cmd { XB_CONTROL_COMMANDS(XB_CONTROL_CMD_ENUM_) XB_CMD__COUNT };

#define XB_CONTROL_FIELD_ENUM_(id, name, in, type, meaning) XB_FIELD_##id,
enum xb_control_field { XB_CONTROL_FIELDS(XB_CONTROL_FIELD_ENUM_) XB_FIELD__COUNT };

struct xb_control_name {
	const char *name;
	size_t len; /* strlen(name) */
	const char *in, *type, *meaning;
};

extern const struct xb_control_name xb_control_commands[XB_CMD__COUNT];
extern const struct xb_control_name xb_control_fields[XB_FIELD__COUNT];

/* The wire names: XB_F(PREFIX) is "prefix", XB_CMD(LISTS_LOAD) is "lists_load". */
#define XB_F(id) (xb_control_fields[XB_FIELD_##id].name)
#define XB_CMD(id) (xb_control_commands[XB_CMD_##id].name)

/* The command named name, or -1. */
int xb_control_cmd_of(const char *name);

#endif /* XDPBAN_CONTROL_FIELDS_H */
