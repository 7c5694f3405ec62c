#!/usr/bin/env bash
# e2e_lists_runtime.sh BUILD - `xdpban lists load|clear|show` and the file and line `query`
# names, in a private pair of namespaces (names with "lists" in them): lists loaded at run
# time beside a config list, with the daemon and without it (on the pinned maps); the values
# of `lists show --json`; a restart restores exactly what was loaded (even after the file
# changed), SIGHUP keeps it, clear drops it for good; every bad input (missing file, bad line,
# unknown layer, no files, a load that does not fit) is one line, a non-zero exit, and changes
# nothing; a list that needs more IPv6 lines and hosts than policy-lines6-max says what to
# raise it to, on the CLI and in the log. The acceptance case loads zmap's shipped blocklist
# unedited as a deny list with a trusted hole in 203.0.113.0/24 and checks the verdicts on the
# wire (a UDP socket in the receiver namespace, and `xdpban stats`) and in `query`. With the
# 64 runtime lists in force, a 65th is refused before it is read (a FIFO: never read).
# Standard input (`-`, /dev/stdin) loads as the list `<stdin>`, with the daemon (its packets
# dropped) and without it; a bad line on it is `<stdin>:N:`, and `-` twice is refused. Every
# file goes to the daemon open, with the request: a request that names a file it does not
# send, sends one that is not a regular file, or sends more than 64 is refused, and files sent
# with a request that takes none are closed.
# Single entries (`lists add|del`, the layer's list <entries>): a deny entry's packets are
# dropped, trusted and allow entries are named by query with their comment and shown by
# `lists show`, a never-ban entry keeps a source that sends errors from being counted or banned
# (errors_exempt) until deleted, all of them survive a restart; `lists clear deny FILE` drops
# that one list; a missing entry or list is exit 1, bad input exit 2, both changing nothing;
# without a daemon a deny entry is added on the maps and a never-ban one is refused.
#
# Everything it makes is removed on any exit (the daemon helpers' cleanup in tests/e2e/e2e_lib.sh). Needs root.
# shellcheck disable=SC2317 # the case functions are called through e2e_case
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

CASES=(load_with_daemon show_values restart_and_sighup_keep_them clear_drops_them
	small_lines_say_so corrupt_store_set_aside bad_inputs_change_nothing stdin_with_daemon
	files_sent_open single_entries never_ban_entry entries_kept_and_deleted clear_one_file
	entry_bad_inputs load_without_daemon zmap_blocklist_on_the_wire limit_checked_before_reading)
XBD_NS_TAG=lists-
xbd_begin R "${CASES[@]}"
readonly D=$XBD_TMP/lists
# Room for 64 IPv6 lines and hosts: small_lines_say_so fills it.
CONF_LISTS=("[lists]" "policy-lines6-max = 64" "deny = $D/conf_deny.txt" "[metrics]" "listen = off")
ZMAP=/etc/zmap/blocklist.conf
[[ -f $ZMAP ]] || ZMAP=/etc/zmap/blacklist.conf # Debian 12's zmap 2.1 ships the old name

q() { xbd_query "$1" "$2"; }
source_of() { q "$1" 'd["policy"] + " " + d["policy_match"] + " " + d.get("policy_file", "-") + ":" + str(d.get("policy_line", "-")) + " " + d.get("policy_origin", "-")'; }
show() { xbd_cli --config "$XBD_CONF" lists show --json; } # with a daemon or without

setup_files() {
	mkdir -p "$D" || return 1
	printf '%s\n' "# config deny" 198.51.100.0/24 >"$D/conf_deny.txt"
	printf '%s\n' "# runtime deny" 203.0.113.0/24 "2001:db8:bad::/48 ; SBL1" >"$D/rt_deny.txt"
	printf '%s\n' 203.0.113.64/26 >"$D/hole.txt"
	for ((i = 0; i < 100; i++)); do printf '2001:db8:%02x00::1\n' "$i"; done >"$D/hosts6.txt"
	xbd_write_conf "${CONF_LISTS[@]}"
}

case_load() {
	local out
	out=$(xbd_cli lists load --deny "$D/rt_deny.txt" 2>&1) || { E2E_WHY="load: $out"; return 1; }
	e2e_expect "load's answer" "loaded 1 file into the deny layer: 2 entries" "$out" &&
		e2e_expect "a runtime entry" "deny 203.0.113.0/24 $D/rt_deny.txt:2 runtime" \
			"$(source_of 203.0.113.9)" &&
		e2e_expect "a runtime IPv6 entry" "deny 2001:db8:bad::/48 $D/rt_deny.txt:3 runtime" \
			"$(source_of 2001:db8:bad:1::1)" &&
		e2e_expect "the config entry" "deny 198.51.100.0/24 $D/conf_deny.txt:2 config" \
			"$(source_of 198.51.100.7)" &&
		e2e_expect "text query" "policy:       deny (203.0.113.0/24, $D/rt_deny.txt:2, runtime deny list)" \
			"$(xbd_cli query 203.0.113.9 | grep '^policy:')"
}

case_show() {
	local j
	j=$(show) || { E2E_WHY="lists show failed"; return 1; }
	e2e_expect "deny files" "[('$D/conf_deny.txt', 'config', 1, 256, '0'), ('$D/rt_deny.txt', 'runtime', 2, 256, '1208925819614629174706176')]" \
		"$(xbd_json '[(f["file"], f["origin"], f["entries"], f["ipv4_addresses"], f["ipv6_addresses"]) for f in d["layers"][1]["files"]]' <<<"$j")" &&
		e2e_expect "denied" "512 1208925819614629174706176" \
			"$(xbd_json 'str(d["totals"]["denied"]["ipv4_addresses"]) + " " + d["totals"]["denied"]["ipv6_addresses"]' <<<"$j")" &&
		e2e_expect "allowed" "4294966784 $(((1 << 32) - 512)) True" \
			"$(xbd_json 'str(d["totals"]["allowed"]["ipv4_addresses"]) + " " + str(2**32 - 512) + " " + str(int(d["totals"]["allowed"]["ipv6_addresses"]) == 2**128 - 2**80)' <<<"$j")" &&
		e2e_expect "default" "pass 4294966784" "$(xbd_json 'd["default"]["verdict"] + " " + str(d["default"]["ipv4_addresses"])' <<<"$j")" &&
		xbd_cli lists show | grep -Eq "^deny +runtime +2 +256 1208925819614629174706176 .*$D/rt_deny.txt$" ||
		{ E2E_WHY="${E2E_WHY:-the text table lacks the runtime row: $(xbd_cli lists show)}"; return 1; }
}

case_restart() {
	echo 192.0.2.200 >"$D/rt_deny.txt" # what was loaded is restored, not the file as it is now
	xbd_stop TERM
	xbd_start || { E2E_WHY="no restart"; return 1; }
	e2e_expect "after a restart" "deny 203.0.113.0/24 $D/rt_deny.txt:2 runtime" \
		"$(source_of 203.0.113.9)" &&
		e2e_expect "the changed file is not read" "none" "$(q 192.0.2.200 'd["policy"]')" &&
		e2e_wait 50 xbd_log_has "restoring 1 runtime list (2 entries) from $XBD_STATE.lists" &&
		kill -HUP "$XBD_PID" && sleep 1 &&
		e2e_expect "after SIGHUP" "deny 203.0.113.0/24 $D/rt_deny.txt:2 runtime" \
			"$(source_of 203.0.113.9)" &&
		e2e_expect "the config's list after SIGHUP" "deny 198.51.100.0/24 $D/conf_deny.txt:2 config" \
			"$(source_of 198.51.100.7)"
}

case_clear() {
	local out
	out=$(xbd_cli lists clear deny 2>&1) || { E2E_WHY="clear: $out"; return 1; }
	e2e_expect "clear's answer" "cleared 1 runtime list of the deny layer (the config's lists stay)" "$out" &&
		e2e_expect "cleared" "none" "$(q 203.0.113.9 'd["policy"]')" &&
		e2e_expect "the config's stays" "deny" "$(q 198.51.100.7 'd["policy"]')" &&
		[[ ! -e $XBD_STATE.lists ]] || { E2E_WHY="${E2E_WHY:-the store is still there}"; return 1; }
	xbd_stop TERM
	xbd_start || { E2E_WHY="no restart"; return 1; }
	e2e_expect "cleared after a restart" "none" "$(q 203.0.113.9 'd["policy"]')"
}

# A list that needs more IPv6 lines and hosts than the maps hold (100 hosts in distinct /40s:
# a /40, /48 and /56 line each, beside the /24's and the /32's) loads, and says which key to
# raise and to what, on the CLI and, after SIGHUP compiles it again, in the daemon's log;
# its sources get their verdicts from the trie. Clearing it says nothing more.
case_small_lines() {
	local out want="302 (the trie answers those sources, right but slower; the sizes apply when the maps are created)"
	out=$(xbd_cli lists load --deny "$D/hosts6.txt" 2>&1) || { E2E_WHY="load: $out"; return 1; }
	e2e_expect "load's answer" "loaded 1 file into the deny layer: 100 entries
xdpban: 238 IPv6 lines and 36 IPv6 hosts did not fit: policy-lines6-max wants at least $want" "$out" &&
		e2e_expect "a host past the room" "deny" "$(q 2001:db8:6300::1 'd["policy"]')" &&
		kill -HUP "$XBD_PID" &&
		e2e_wait 50 xbd_log_has "policy lists: 238 IPv6 lines and 36 IPv6 hosts did not fit: policy-lines6-max wants at least $want" &&
		out=$(xbd_cli lists clear deny 2>&1) &&
		e2e_expect "clear's answer" "cleared 1 runtime list of the deny layer (the config's lists stay)" "$out" &&
		e2e_expect "cleared" "none" "$(q 2001:db8:6300::1 'd["policy"]')"
}

# A store that does not parse is reported, moved aside, and the config's lists are enforced.
case_corrupt() {
	printf '%s\n' "xdpban-runtime-lists 1" "list deny 0 $D/rt_deny.txt" "203.0.113.0/24 2" >"$XBD_STATE.lists"
	xbd_stop TERM
	xbd_start || { E2E_WHY="no start beside a corrupt store"; return 1; }
	e2e_wait 50 xbd_log_has "runtime lists $XBD_STATE.lists: cut short: no end line (after line 3); moved aside to $XBD_STATE.lists.corrupt-" &&
		xbd_log_has "enforcing the config's lists only" &&
		e2e_expect "the config's list" "deny" "$(q 198.51.100.7 'd["policy"]')" &&
		e2e_expect "nothing of the store" "none" "$(q 203.0.113.9 'd["policy"]')" &&
		[[ ! -e $XBD_STATE.lists ]] || { E2E_WHY="${E2E_WHY:-the log lacks the error, or the store stayed}"; return 1; }
}

# refused WHY_PATTERN EXIT CMD...: one line matching the pattern, that exit, and the same
# `lists show` before and after.
refused() {
	local want=$1 code=$2 before after out rc
	shift 2
	before=$(show)
	out=$(xbd_cli "$@" 2>&1)
	rc=$?
	after=$(show)
	# shellcheck disable=SC2053 # the pattern is meant
	[[ $rc == "$code" && $out == $want && $out != *$'\n'* && $before == "$after" ]] && return 0
	E2E_WHY="$*: exit $rc, '$out'$([[ $before == "$after" ]] || echo ', state changed')"
	return 1
}

case_bad() {
	printf '%s\n' 192.0.2.0/24 example.com >"$D/bad.txt"
	# One more distinct IPv6 entry than the lists may hold (the listed room where the header
	# has one, else the trie's size).
	local cap
	cap=$(sed -n 's/^#define XDPBAN_LISTED6_MAX \([0-9]*\)$/\1/p' include/xdpban_maps.h)
	[[ -n $cap ]] || cap=$(sed -n 's/^#define XDPBAN_DEFAULT_POLICY6_MAX \([0-9]*\)$/\1/p' include/xdpban_maps.h)
	"$E2E_PY" -c 'import sys
for i in range(int(sys.argv[1]) + 1): print("2001:db8:%x:%x::/64" % (i >> 16, i & 0xffff))' "$cap" >"$D/big6.txt"
	xbd_cli lists load --trusted "$D/hole.txt" >/dev/null || { E2E_WHY="cannot load the hole"; return 1; }
	refused "xdpban: cannot read list $D/missing.txt: No such file or directory" 1 \
		lists load --deny "$D/missing.txt" &&
		refused "xdpban: $D/bad.txt:2: *'example.com'*" 1 lists load --deny "$D/bad.txt" &&
		refused "xdpban: lists clear: unknown layer 'bogus': allow, deny, trusted or never-ban" 2 lists clear bogus &&
		refused "xdpban: lists load: missing FILE... *" 2 lists load --deny &&
		refused "xdpban: lists load: give one of --allow, --deny or --trusted" 2 lists load "$D/hole.txt" &&
		refused "xdpban: $D/big6.txt: $((cap + 1)) IPv6 entries: more than the IPv6 policy table holds ($cap)" 1 \
			lists load --deny "$D/big6.txt" &&
		e2e_expect "the hole stays" "trusted" "$(q 203.0.113.70 'd["policy"]')" &&
		out=$(xbd_cli lists load --deny --ignore-errors "$D/bad.txt" 2>&1) &&
		e2e_expect "ignore-errors" "loaded 1 file into the deny layer: 1 entry, 1 bad line skipped
xdpban: skipped: $D/bad.txt:2: not an IPv4 or IPv6 address: 'example.com'" "$out" &&
		xbd_cli lists clear deny >/dev/null && xbd_cli lists clear trusted >/dev/null
}

# `-` and /dev/stdin: one list named <stdin> (a second load of it replaces the first), its
# packets dropped; a bad line and `-` twice are refused and change nothing.
case_stdin() {
	local out deny
	out=$(printf '%s\n' "# from a pipe" 192.0.2.0/25 | xbd_cli lists load --deny - 2>&1) ||
		{ E2E_WHY="load -: $out"; return 1; }
	e2e_expect "load's answer" "loaded 1 file into the deny layer: 1 entry" "$out" &&
		e2e_expect "query names <stdin>" "deny 192.0.2.0/25 <stdin>:2 runtime" "$(source_of 192.0.2.7)" &&
		e2e_expect "lists show names <stdin>" "['$D/conf_deny.txt', '<stdin>']" \
			"$(show | xbd_json '[f["file"] for f in d["layers"][1]["files"]]')" || return 1
	deny=$(xbd_stat drop_deny)
	xbd_send udp 192.0.2.7 3 || { E2E_WHY="cannot send"; return 1; }
	e2e_expect "dropped as denied" 3 "$(xbd_stat_delta drop_deny "$deny")" &&
		refused "xdpban: <stdin>:2: *'x'*" 1 lists load --deny - < <(printf '%s\n' 192.0.2.0/24 x) &&
		refused "xdpban: lists load: standard input ('-' or /dev/stdin) can be read only once" 2 \
			lists load --deny - "$D/hole.txt" /dev/stdin </dev/null &&
		e2e_expect "after the refusals" "deny 192.0.2.0/25 <stdin>:2 runtime" "$(source_of 192.0.2.7)" &&
		out=$(xbd_cli lists load --deny /dev/stdin <<<192.0.2.0/26 2>&1) &&
		e2e_expect "/dev/stdin replaces <stdin>" "deny 192.0.2.0/26 <stdin>:1 runtime|none" \
			"$(source_of 192.0.2.7)|$(q 192.0.2.100 'd["policy"]')" &&
		e2e_run xbd_cli lists clear deny
}

# The protocol under the CLI, from a raw client: the file a request names must come open with
# it, as a regular file, at most 64 of them; files sent with `status` are closed once it is
# answered (the pipe's read end then sees its end).
case_sent_open() {
	local got
	got=$("$E2E_PY" - "$XBD_SOCK" "$D/hole.txt" <<'EOF'
import json, os, socket, sys
def ask(req, fds):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(sys.argv[1])
    socket.send_fds(s, [json.dumps(req).encode() + b"\n"], fds)
    line = s.makefile().readline()
    s.close()
    return json.loads(line).get("error", "ok")
load = lambda files: {"cmd": "lists_load", "layer": "deny", "files": files}
r, w = os.pipe()
out = [ask({"cmd": "status"}, [w])]
os.close(w)
os.set_blocking(r, False)
out.append("closed" if os.read(r, 1) == b"" else "kept")
out.append(ask(load([sys.argv[2]]), []))
out.append(ask(load(["<stdin>"]), [r]))
f = os.open(sys.argv[2], os.O_RDONLY)
out.append(ask(load([sys.argv[2]]), [f] * 65))
print("\n".join(out))
EOF
)
	e2e_expect "the raw client's answers" "ok
closed
1 file named but 0 sent open with the request: each list file goes with it as an open file (SCM_RIGHTS)
list <stdin> is a FIFO, not a regular file
more than 64 open files sent with one request" "$got" &&
		e2e_expect "nothing loaded" "none" "$(q 203.0.113.70 'd["policy"]')"
}

entry_of() { q "$1" 'd["policy"] + " " + d["policy_match"] + " " + d.get("policy_file", "-") + ":" + str(d.get("policy_line", "-")) + " " + d.get("policy_origin", "-") + " [" + d.get("policy_comment", "-") + "]"'; }
exempt_of() { q "$1" 'str(d["exempt"]) + " " + str(d["exempt_why"]) + " " + d.get("exempt_file", "-") + ":" + str(d.get("exempt_line", "-")) + " [" + d.get("exempt_comment", "-") + "]"'; }

# A deny entry drops at once; trusted entries (one inside the config's deny list, whose
# comment a second add changes) and an allow entry (which turns allow-only mode on) are named
# by query and lists show with their comments.
case_entries() {
	local out deny j
	out=$(xbd_cli lists add deny 192.0.2.77 --comment "noisy scanner" 2>&1) || { E2E_WHY="add: $out"; return 1; }
	e2e_expect "add's answer" "added 192.0.2.77 to the deny layer" "$out" &&
		e2e_expect "query names the entry" "deny 192.0.2.77 <entries>:1 runtime [noisy scanner]" \
			"$(entry_of 192.0.2.77)" || return 1
	deny=$(xbd_stat drop_deny)
	xbd_send udp 192.0.2.77 3 || { E2E_WHY="cannot send"; return 1; }
	e2e_expect "dropped as denied" 3 "$(xbd_stat_delta drop_deny "$deny")" &&
		e2e_run xbd_cli lists add trusted 198.51.100.7 --comment partner &&
		e2e_run xbd_cli lists add trusted 2001:db8:7::/48 &&
		out=$(xbd_cli lists add trusted 198.51.100.7 --comment "partner, new" 2>&1) &&
		e2e_expect "a second add" "changed the comment of 198.51.100.7 in the trusted layer" "$out" &&
		e2e_expect "trusted over the config's deny" "trusted 198.51.100.7 <entries>:1 runtime [partner, new]" \
			"$(entry_of 198.51.100.7)" &&
		e2e_expect "text query" 'policy:       trusted (198.51.100.7, <entries>:1, runtime trusted list, "partner, new")' \
			"$(xbd_cli query 198.51.100.7 | grep '^policy:')" &&
		j=$(show) &&
		e2e_expect "lists show" "[('<entries>', 'runtime', 2, 1, [{'prefix': '198.51.100.7', 'comment': 'partner, new'}, {'prefix': '2001:db8:7::/48', 'comment': ''}])]" \
			"$(xbd_json '[(f["file"], f["origin"], f["entries"], f["ipv4_addresses"], f["prefixes"]) for f in d["layers"][2]["files"]]' <<<"$j")" &&
		{ xbd_cli lists show | grep -qx '  198.51.100.7  # partner, new' ||
			{ E2E_WHY="the text lacks the entry: $(xbd_cli lists show)"; false; }; } &&
		e2e_run xbd_cli lists add allow 203.0.113.9 --comment office &&
		e2e_expect "an allow entry" "allowed 203.0.113.9 <entries>:1 runtime [office] True" \
			"$(entry_of 203.0.113.9) $(show | xbd_json 'd["allow_only"]')" &&
		e2e_run xbd_cli lists del allow 203.0.113.9 &&
		e2e_expect "allow-only mode ends with it" "False" "$(show | xbd_json 'd["allow_only"]')"
}

# A never-ban entry: a source's errors are counted as errors_exempt, never against it; query
# names the entry. Deleted (after the next case's restart) it is counted and banned again.
case_never_ban() {
	local out before
	out=$(xbd_cli lists add never-ban 192.0.2.150 --comment monitoring 2>&1) || { E2E_WHY="add: $out"; return 1; }
	e2e_expect "add's answer" "added 192.0.2.150 to the never-ban layer" "$out" &&
		e2e_expect "query" "True never-ban <entries>:1 [monitoring]" "$(exempt_of 192.0.2.150)" &&
		e2e_expect "text query" 'exempt:       yes (never-ban 192.0.2.150, <entries>:1, "monitoring")' \
			"$(xbd_cli query 192.0.2.150 | grep '^exempt:')" &&
		e2e_expect "lists show" "never-ban ['192.0.2.150']" \
			"$(show | xbd_json 'd["layers"][3]["layer"] + " " + str([e["prefix"] for f in d["layers"][3]["files"] for e in f.get("prefixes", [])])')" || return 1
	before=$(xbd_stat errors_exempt)
	xbd_send synfin 192.0.2.150 5 || { E2E_WHY="cannot send"; return 1; }
	xbd_wait_until xbd_stat_is errors_exempt $((before + 5))
	e2e_expect "errors_exempt" 5 "$(xbd_stat_delta errors_exempt "$before")" &&
		e2e_expect "not counted or banned" "0 False" "$(q 192.0.2.150 'str(d["count"]) + " " + str(d["banned"])')"
}

# The entries of the two cases above survive a restart; deleted, they are gone (the others of
# the layer move up a line), and the source no longer exempt is banned by its errors.
case_entries_kept() {
	xbd_stop TERM
	xbd_start || { E2E_WHY="no restart"; return 1; }
	e2e_expect "deny after a restart" "deny 192.0.2.77 <entries>:1 runtime [noisy scanner]" "$(entry_of 192.0.2.77)" &&
		e2e_expect "never-ban after a restart" "True never-ban <entries>:1 [monitoring]" "$(exempt_of 192.0.2.150)" &&
		e2e_expect "the store's line" "192.0.2.150 1 monitoring" "$(grep -x '192.0.2.150 .*' "$XBD_STATE.lists")" &&
		e2e_expect "del" "deleted 192.0.2.77 from the deny layer" "$(xbd_cli lists del deny 192.0.2.77 2>&1)" &&
		e2e_expect "deleted" "none" "$(q 192.0.2.77 'd["policy"]')" &&
		e2e_run xbd_cli lists del trusted 198.51.100.7 &&
		e2e_expect "the next moves up" "trusted 2001:db8:7::/48 <entries>:1 runtime []" "$(entry_of 2001:db8:7::1)" &&
		e2e_expect "back under the config's deny" "deny" "$(q 198.51.100.7 'd["policy"]')" &&
		e2e_run xbd_cli lists del never-ban 192.0.2.150 &&
		e2e_expect "no longer exempt" "False" "$(q 192.0.2.150 'd["exempt"]')" || return 1
	xbd_send synfin 192.0.2.150 4 || { E2E_WHY="cannot send"; return 1; }
	xbd_wait_until xbd_banned 192.0.2.150 || { E2E_WHY="192.0.2.150 not banned after its never-ban entry went"; return 1; }
	xbd_cli unban 192.0.2.150 >/dev/null && e2e_run xbd_cli lists clear trusted
}

# `lists clear deny FILE`: that file's prefixes go, the layer's other list and entries stay.
case_clear_one() {
	local out
	printf '%s\n' 192.0.2.10 >"$D/one.txt"
	printf '%s\n' 192.0.2.20 >"$D/two.txt"
	xbd_cli lists load --deny "$D/one.txt" "$D/two.txt" >/dev/null && xbd_cli lists add deny 192.0.2.30 >/dev/null ||
		{ E2E_WHY="cannot load"; return 1; }
	out=$(cd "$D" && xbd_cli lists clear deny one.txt 2>&1)
	e2e_expect "clear's answer" "cleared runtime list $D/one.txt of the deny layer" "$out" &&
		e2e_expect "one file gone" "none|deny 192.0.2.20 $D/two.txt:1 runtime|deny <entries>" \
			"$(q 192.0.2.10 'd["policy"]')|$(source_of 192.0.2.20)|$(q 192.0.2.30 'd["policy"] + " " + d["policy_file"]')" &&
		e2e_run xbd_cli lists clear deny '<entries>' &&
		e2e_expect "the entries gone" "none deny" "$(q 192.0.2.30 'd["policy"]') $(q 192.0.2.20 'd["policy"]')" &&
		e2e_run xbd_cli lists clear deny
}

# A missing entry or list: exit 1; bad input: exit 2 (raw requests: an error); both change
# nothing, the store included.
case_entry_bad() {
	local long store
	long=$(printf 'x%.0s' {1..201})
	xbd_cli lists add deny 192.0.2.40 --comment kept >/dev/null || { E2E_WHY="cannot add"; return 1; }
	store=$(cat "$XBD_STATE.lists")
	refused "xdpban: no single entry 192.0.2.99 in the deny layer" 1 lists del deny 192.0.2.99 &&
		refused "xdpban: no single entry 192.0.2.40 in the trusted layer" 1 lists del trusted 192.0.2.40 &&
		refused "xdpban: no runtime list $D/nothere.txt in the deny layer" 1 lists clear deny "$D/nothere.txt" &&
		refused "xdpban: lists add: unknown layer 'bogus': allow, deny, trusted or never-ban" 2 lists add bogus 192.0.2.1 &&
		refused "xdpban: lists del: unknown layer 'drop': *" 2 lists del drop 192.0.2.40 &&
		refused "xdpban: host bits set in '192.0.2.1/24' (the prefix is 192.0.2.0/24)" 2 lists add deny 192.0.2.1/24 &&
		refused "xdpban: *example.com*" 2 lists add deny example.com &&
		refused "xdpban: lists add: ::/0: a whole address family is not an entry" 2 lists add deny ::/0 &&
		refused "xdpban: lists add: comment of 201 bytes: at most 200" 2 lists add deny 192.0.2.41 --comment "$long" &&
		refused "xdpban: lists add: comment holds a control character (0x0a at byte 2)" 2 \
			lists add deny 192.0.2.41 --comment $'a\nb' &&
		refused "xdpban: lists add: missing PREFIX *" 2 lists add deny &&
		e2e_expect "raw requests" '{"ok":false,"error":"comment holds a control character (0x01 at byte 1)"}
{"ok":false,"error":"the never-ban layer takes single entries (lists add), not files"}' \
			"$(xbd_request '{"cmd": "lists_add", "layer": "deny", "prefix": "192.0.2.41", "comment": "\u0001"}'
			xbd_request '{"cmd": "lists_load", "layer": "never-ban", "files": ["/x"]}')" &&
		e2e_expect "the store" "$store" "$(cat "$XBD_STATE.lists")" &&
		e2e_run xbd_cli lists del deny 192.0.2.40
}

case_direct() {
	local out
	xbd_write_conf "${CONF_LISTS[@]}"
	XBD_CONF_DETACH=no xbd_write_conf "${CONF_LISTS[@]}"
	xbd_stop TERM
	xbd_start || { E2E_WHY="no restart with detach-on-exit = no"; return 1; }
	xbd_stop TERM
	out=$(xbd_cli --config "$XBD_CONF" lists load --trusted "$D/hole.txt" 2>&1) ||
		{ E2E_WHY="direct load: $out"; return 1; }
	e2e_expect "direct load" "xdpban: note: no daemon answers on $XBD_SOCK; changed the maps in $XBD_PIN directly
loaded 1 file into the trusted layer: 1 entry" "$out" &&
		e2e_expect "direct query" "trusted 203.0.113.64/26 $D/hole.txt:1 runtime" \
			"$(xbd_cli --config "$XBD_CONF" query 203.0.113.70 --json | xbd_json 'd["policy"] + " " + d["policy_match"] + " " + d["policy_file"] + ":" + str(d["policy_line"]) + " " + d["policy_origin"]')" &&
		e2e_expect "direct show" "[1]" "$(xbd_cli --config "$XBD_CONF" lists show --json | xbd_json '[f["entries"] for f in d["layers"][2]["files"]]')" &&
		refused "xdpban: cannot read list $D/missing.txt: No such file or directory" 1 \
			--config "$XBD_CONF" lists load --deny "$D/missing.txt" &&
		out=$(printf '%s\n' 192.0.2.0/25 | xbd_cli --config "$XBD_CONF" lists load --deny - 2>&1) &&
		e2e_expect "direct load of -" "xdpban: note: no daemon answers on $XBD_SOCK; changed the maps in $XBD_PIN directly
loaded 1 file into the deny layer: 1 entry" "$out" &&
		refused "xdpban: <stdin>:1: *'x'*" 1 --config "$XBD_CONF" lists load --deny - <<<x &&
		out=$(xbd_cli --config "$XBD_CONF" lists add deny 192.0.2.160 --comment direct 2>&1) &&
		e2e_expect "direct add" "xdpban: note: no daemon answers on $XBD_SOCK; changed the maps in $XBD_PIN directly
added 192.0.2.160 to the deny layer" "$out" &&
		refused "xdpban: the never-ban layer needs the daemon: xdpband alone writes the exempt tries" 1 \
			--config "$XBD_CONF" lists add never-ban 192.0.2.161 &&
		xbd_start && e2e_expect "the daemon finds it" "trusted 203.0.113.64/26 $D/hole.txt:1 runtime" \
			"$(source_of 203.0.113.70)" &&
		e2e_expect "and <stdin>" "deny 192.0.2.0/25 <stdin>:1 runtime" "$(source_of 192.0.2.7)" &&
		e2e_expect "and the entry" "deny 192.0.2.160 <entries>:1 runtime [direct]" "$(entry_of 192.0.2.160)" &&
		xbd_cli lists clear trusted >/dev/null && xbd_cli lists clear deny >/dev/null
}

# listen: counts UDP datagrams to port 53 in the receiver namespace, by source, until a
# second after $XBD_TMP/listen.done appears (at most 60 s).
listen() {
	nsenter --net="/run/netns/$XBD_NS_R" "$E2E_PY" -c '
import collections, json, os, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 53))
s.settimeout(0.2)
n = collections.Counter()
open(sys.argv[1] + ".ready", "w").close()
end = time.time() + 60
while time.time() < end:
    if os.path.exists(sys.argv[1] + ".done"):
        end = min(end, time.time() + 1)
    try:
        n[s.recvfrom(2048)[1][0]] += 1
    except socket.timeout:
        pass
print(json.dumps(n))' "$XBD_TMP/listen" >"$XBD_TMP/listen.out"
}

case_zmap() {
	local line deny trusted heard
	[[ -f $ZMAP ]] || { E2E_WHY="no $ZMAP: install zmap (tests/deps.sh)"; return 1; }
	line=$(grep -n '^203\.0\.113\.0/24' "$ZMAP" | cut -d: -f1)
	xbd_cli lists load --deny "$ZMAP" >/dev/null && xbd_cli lists load --trusted "$D/hole.txt" >/dev/null ||
		{ E2E_WHY="cannot load $ZMAP"; return 1; }
	e2e_expect "query, denied" "deny 203.0.113.0/24 $ZMAP:$line runtime" "$(source_of 203.0.113.5)" &&
		e2e_expect "query, the hole" "trusted 203.0.113.64/26 $D/hole.txt:1 runtime" \
			"$(source_of 203.0.113.70)" || return 1
	ip -n "$XBD_NS_R" route add 203.0.113.0/24 dev "$XBD_IF_R" 2>/dev/null
	deny=$(xbd_stat drop_deny) trusted=$(xbd_stat passed_trusted)
	rm -f "$XBD_TMP/listen.ready" "$XBD_TMP/listen.done"
	listen &
	e2e_wait 50 test -e "$XBD_TMP/listen.ready" || { E2E_WHY="no listener"; return 1; }
	xbd_send udp 203.0.113.5 5 && xbd_send udp 203.0.113.70 4 || { E2E_WHY="cannot send"; return 1; }
	touch "$XBD_TMP/listen.done"
	wait $!
	heard=$(cat "$XBD_TMP/listen.out")
	e2e_expect "heard on the socket" "0 4" \
		"$(xbd_json 'str(d.get("203.0.113.5", 0)) + " " + str(d.get("203.0.113.70", 0))' <<<"$heard")" &&
		e2e_expect "drop_deny" 5 "$(xbd_stat_delta drop_deny "$deny")" &&
		e2e_expect "passed_trusted" 4 "$(xbd_stat_delta passed_trusted "$trusted")" &&
		e2e_expect "denied by the blocklist" "$(grep -v '^#' "$ZMAP" | grep -c '/')" \
			"$(show | xbd_json '[f["entries"] for f in d["layers"][1]["files"] if f["file"] == "'"$ZMAP"'"][0]')"
}

case_limit() {
	local i files=() out layer
	for layer in deny trusted; do
		xbd_cli lists clear "$layer" >/dev/null 2>&1
	done
	for ((i = 0; i < 64; i++)); do
		printf '192.0.2.%d\n' "$i" >"$D/many$i.txt"
		files+=("$D/many$i.txt")
	done
	out=$(xbd_cli lists load --deny "${files[@]}" 2>&1) || { E2E_WHY="64 lists: $out"; return 1; }
	mkfifo "$D/fifo.txt" || return 1
	out=$(timeout 10 "$XBD_BIN/xdpban" --socket "$XBD_SOCK" --pin-dir "$XBD_PIN" lists load \
		--trusted "$D/fifo.txt" 2>&1)
	e2e_expect "the 65th list" "xdpban: at most 64 runtime lists at once: clear a layer first" "$out" &&
		e2e_run xbd_cli lists clear deny
}

if ! setup_files || ! xbd_start; then
	for c in "${CASES[@]}"; do xbd_fail "$c" "xdpband did not start"; done
	e2e_finish
fi
e2e_case load_with_daemon case_load
e2e_case show_values case_show
e2e_case restart_and_sighup_keep_them case_restart
e2e_case clear_drops_them case_clear
e2e_case small_lines_say_so case_small_lines
e2e_case corrupt_store_set_aside case_corrupt
e2e_case bad_inputs_change_nothing case_bad
e2e_case stdin_with_daemon case_stdin
e2e_case files_sent_open case_sent_open
e2e_case single_entries case_entries
e2e_case never_ban_entry case_never_ban
e2e_case entries_kept_and_deleted case_entries_kept
e2e_case clear_one_file case_clear_one
e2e_case entry_bad_inputs case_entry_bad
e2e_case load_without_daemon case_direct
e2e_case zmap_blocklist_on_the_wire case_zmap
e2e_case limit_checked_before_reading case_limit
e2e_finish
