#!/usr/bin/env bash
# e2e_lists.sh BUILD - the policy list files as an operator feeds them to xdpband, in a private
# pair of namespaces: a Spamhaus DROP file (';' comments), a FireHOL netset and a gzipped list
# are read, IPv4 and IPv6 mixed; trusted is painted over deny (a trusted hole inside a denied
# range passes on the wire, a deny entry inside a trusted range or on the same prefix is
# overridden, and the daemon says how many); a hostname or a bad length refuses the file with
# FILE:LINE at start (-t) and at reload, which keeps the old lists; with [lists]
# ignore-errors = yes the bad lines are skipped, counted in status and quoted in the log;
# corrupt gzip data is refused in one line.
#
# Everything it makes (namespaces, daemon, pins, files) is removed on any exit, through
# the daemon helpers' cleanup in tests/e2e/e2e_lib.sh. Needs root; skips without it.
# shellcheck disable=SC2317 # the case functions are called through e2e_case
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

CASES=(formats_are_read trusted_painted_over_deny painting_on_the_wire bad_line_refuses_the_file
	reload_keeps_old_lists ignore_errors_skips_and_counts corrupt_gzip_refused)
xbd_begin L "${CASES[@]}"
readonly D=$XBD_TMP/lists

policy_of() { xbd_query "$1" 'd["policy"] + " " + str(d["policy_match"])'; }

# The lists: DROP-style deny with an IPv6 line, a netset of trusted entries, and a gzipped
# deny list; 203.0.113.0/24 is denied with a trusted /25 hole and a trusted /32 on a denied one.
write_lists() {
	mkdir -p "$D" || return 1
	cat >"$D/drop.txt" <<-'EOF'
		; Spamhaus DROP List 2026/12/01 - (c) 2026 The Spamhaus Project
		; Last-Modified: Tue, 01 Dec 2026 12:00:00 GMT
		203.0.113.0/24 ; SBL000001
		2001:db8:bad::/48 ; SBL000002
		192.0.2.77/32 ; SBL000003
	EOF
	cat >"$D/office.netset" <<-'EOF'
		#
		# office - the FireHOL netset format: comments and one entry a line
		#
		203.0.113.128/25
		192.0.2.77
		2001:db8:bad:1::/64
	EOF
	printf '%s\n' "# gzipped" 203.0.113.150/32 192.0.2.88 | gzip -c >"$D/more.list.gz"
}

lists_conf() {
	xbd_write_conf "[lists]" "deny = $D/drop.txt" "trusted = $D/office.netset" \
		"deny = $D/more.list.gz" "$@" "[metrics]" "listen = off"
}

list_field() { xbd_cli status --json | xbd_json "[l['$1'] for l in d['xdpband']['lists']]"; }

case_formats() {
	e2e_expect "entries per list" "[3, 3, 2]" "$(list_field entries)" &&
		e2e_expect "a DROP line" "deny 203.0.113.0/24" "$(policy_of 203.0.113.5)" &&
		e2e_expect "a DROP line, IPv6" "deny 2001:db8:bad::/48" "$(policy_of 2001:db8:bad:2::1)" &&
		e2e_expect "a gzipped line" "deny 192.0.2.88" "$(policy_of 192.0.2.88)" &&
		e2e_expect "skipped lines" "[0, 0, 0]" "$(list_field skipped)"
}

case_painting() {
	e2e_expect "the trusted hole" "trusted 203.0.113.128/25" "$(policy_of 203.0.113.130)" &&
		e2e_expect "deny inside trusted" "trusted 203.0.113.128/25" "$(policy_of 203.0.113.150)" &&
		e2e_expect "the same prefix in both" "trusted 192.0.2.77" "$(policy_of 192.0.2.77)" &&
		e2e_expect "an IPv6 hole" "trusted 2001:db8:bad:1::/64" "$(policy_of 2001:db8:bad:1::9)" &&
		e2e_wait 50 xbd_log_has "policy lists: 2 entries lie on or inside entries of a later layer (allow, deny, trusted), which wins there"
}

case_wire() {
	local trusted deny
	trusted=$(xbd_stat passed_trusted) deny=$(xbd_stat drop_deny)
	xbd_send udp 203.0.113.130 3 && xbd_send udp 203.0.113.5 2 || { E2E_WHY="cannot send"; return 1; }
	e2e_wait 50 eval '[[ $(xbd_stat_delta passed_trusted "$trusted") == 3 ]]' ||
		{ E2E_WHY="passed_trusted +$(xbd_stat_delta passed_trusted "$trusted"), expected +3"; return 1; }
	e2e_expect "drop_deny" 2 "$(xbd_stat_delta drop_deny "$deny")"
}

# xdpband -t on a config whose list holds LINE at line 2: one error naming the file, the
# line and the bad entry.
refused_line() {
	local out
	printf '%s\n' 198.51.100.0/24 "$1" >"$D/bad.list"
	xbd_write_conf "[lists]" "deny = $D/bad.list" "[metrics]" "listen = off"
	out=$("$XBD_BIN/xdpband" -t -c "$XBD_CONF" 2>&1)
	[[ $out == "xdpband: error: $D/bad.list:2: "*"'$1'"* && $out != *$'\n'* ]] && return 0
	E2E_WHY="xdpband -t on '$1': $out"
	return 1
}

case_bad_line() {
	refused_line example.com && refused_line 192.0.2.0/33 && refused_line 2001:db8::/129
}

# A reload that meets a bad line answers with it and keeps every list as it was.
case_reload() {
	local reply
	echo "example.org" >>"$D/office.netset"
	lists_conf
	reply=$(xbd_request '{"cmd":"reload"}')
	e2e_expect "the reload's answer" \
		"{\"ok\":false,\"error\":\"$D/office.netset:7: not an IPv4 or IPv6 address: 'example.org'; the old configuration is kept\"}" \
		"$reply" &&
		e2e_expect "the hole after the refused reload" "trusted 203.0.113.128/25" \
			"$(policy_of 203.0.113.130)" &&
		e2e_expect "entries after the refused reload" "[3, 3, 2]" "$(list_field entries)"
}

case_ignore_errors() {
	local reply
	printf '%s\n' "2001:db8:bad:1::/129" 203.0.113.200/32 >>"$D/office.netset"
	lists_conf "ignore-errors = yes"
	reply=$(xbd_request '{"cmd":"reload"}')
	[[ $reply == '{"ok":true,'* ]] || { E2E_WHY="reload: $reply"; return 1; }
	e2e_expect "skipped lines" "[0, 2, 0]" "$(list_field skipped)" &&
		e2e_expect "entries" "[3, 4, 2]" "$(list_field entries)" &&
		e2e_expect "the good line after the bad ones" "trusted 203.0.113.200" \
			"$(policy_of 203.0.113.200)" &&
		e2e_wait 50 xbd_log_has "list $D/office.netset: 2 bad lines skipped ([lists] ignore-errors = yes)" &&
		xbd_log_has "skipped: $D/office.netset:7: not an IPv4 or IPv6 address: 'example.org'" ||
		{ E2E_WHY="${E2E_WHY:-the log does not quote the skipped lines}"; return 1; }
}

case_corrupt_gzip() {
	local out
	head -c 30 "$D/more.list.gz" >"$D/cut.list.gz"
	xbd_write_conf "[lists]" "deny = $D/cut.list.gz" "[metrics]" "listen = off"
	out=$("$XBD_BIN/xdpband" -t -c "$XBD_CONF" 2>&1)
	[[ $out == "xdpband: error: list $D/cut.list.gz: its gzip data is corrupt or cut short"* && $out != *$'\n'* ]] ||
		{ E2E_WHY="xdpband -t said: $out"; return 1; }
}

if ! write_lists || ! lists_conf || ! xbd_start; then
	for c in "${CASES[@]}"; do xbd_fail "$c" "xdpband did not start with the lists"; done
	e2e_finish
fi
e2e_case formats_are_read case_formats
e2e_case trusted_painted_over_deny case_painting
e2e_case painting_on_the_wire case_wire
e2e_case bad_line_refuses_the_file case_bad_line
e2e_case reload_keeps_old_lists case_reload
e2e_case ignore_errors_skips_and_counts case_ignore_errors
e2e_case corrupt_gzip_refused case_corrupt_gzip
e2e_finish
