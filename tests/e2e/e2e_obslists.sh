#!/usr/bin/env bash
# e2e_obslists.sh BUILD - an observed deny list (`deny = FILE observe`) end to end, in a
# private pair of namespaces, with the rest of xdpban enforcing: the frames of a source in the
# observed list pass (counted as passed) and count under observed_deny; its malformed frames
# are still counted and banned as anyone's; `query` names the observed list and its line;
# `lists`, `lists show` and `status` mark it observed; a source in an enforced deny list as
# well is dropped as drop_deny; removing the word and `xdpban reload` makes the list deny (the
# reload names it), its frames then dropped under drop_deny; a word after an allow list is
# refused in one line.
#
# Everything it makes (namespaces, daemon, pins, files) is removed on any exit, through the
# daemon helpers' cleanup in tests/e2e/e2e_lib.sh. Needs root; skips without it.
# shellcheck disable=SC2317 # the case functions are called through e2e_case
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

CASES=(observed_passes_and_counts observed_still_banned query_names_observed
	lists_mark_observed enforced_wins reload_makes_it_deny observe_on_allow_refused)
XBD_NS_TAG=xbol xbd_begin L "${CASES[@]}"
readonly WATCHED=203.0.113.9 BOTH=203.0.113.77 ERRING=203.0.113.40

lists_conf() {
	printf '%s\n' "# watched" "203.0.113.0/24" >"$XBD_TMP/watch.list" &&
		printf '%s\n' "$BOTH/32" >"$XBD_TMP/deny.list" &&
		xbd_write_conf "[lists]" "deny = $XBD_TMP/deny.list" "deny = $XBD_TMP/watch.list $1"
}


case_passes() {
	local passed observed deny
	passed=$(xbd_stat passed) observed=$(xbd_stat observed_deny) deny=$(xbd_stat drop_deny)
	xbd_send udp "$WATCHED" 4 || { E2E_WHY="cannot send"; return 1; }
	e2e_wait 50 eval '[[ $(xbd_stat_delta observed_deny "$observed") == 4 ]]' ||
		{ E2E_WHY="observed_deny +$(xbd_stat_delta observed_deny "$observed"), expected +4"; return 1; }
	e2e_expect "passed" 4 "$(xbd_stat_delta passed "$passed")" &&
		e2e_expect "drop_deny" 0 "$(xbd_stat_delta drop_deny "$deny")" &&
		e2e_expect "the mode" "enforce" \
			"$(xbd_cli status --json | xbd_json 'd["config"]["mode"]')"
}

# Malformed frames over the limit of 3 ban it, as if the list were not there; then dropped.
case_banned() {
	local banned
	xbd_send synfin "$ERRING" 4 || { E2E_WHY="cannot send"; return 1; }
	e2e_wait 100 xbd_banned "$ERRING" || { E2E_WHY="$ERRING was not banned"; return 1; }
	banned=$(xbd_stat drop_banned)
	xbd_send udp "$ERRING" 3 || { E2E_WHY="cannot send"; return 1; }
	e2e_wait 50 eval '[[ $(xbd_stat_delta drop_banned "$banned") == 3 ]]' ||
		{ E2E_WHY="drop_banned +$(xbd_stat_delta drop_banned "$banned"), expected +3"; return 1; }
}

case_query() {
	e2e_expect "query --json" "none 203.0.113.0/24 $XBD_TMP/watch.list 2" \
		"$(xbd_query "$WATCHED" 'd["policy"], d["observed_match"], d["observed_file"], d["observed_line"]' | tr -d "(),'")" &&
		e2e_expect "query" "observed in:  203.0.113.0/24 ($XBD_TMP/watch.list:2, observed deny list: would be denied)" \
			"$(xbd_cli query "$WATCHED" | grep '^observed in:')" &&
		e2e_expect "query of a source in no list" "None" \
			"$(xbd_query 198.51.100.3 'd["observed_match"]')"
}

case_lists() {
	e2e_expect "lists --json" "observed-deny 1 0" "$(xbd_cli lists --json |
		xbd_json "[' '.join(str(x) for x in (l['verdict'], l['ipv4'], l['ipv6'])) for l in d['lists'] if l['list'] == 2][0]")" &&
		e2e_expect "lists show" "observed-deny config 1 256" \
			"$(xbd_cli lists show | awk -v f="$XBD_TMP/watch.list" '$NF == f { print $1, $2, $3, $4 }')" &&
		e2e_expect "status --json" "observed-deny 1" "$(xbd_cli status --json |
			xbd_json "[' '.join(str(x) for x in (l['verdict'], l['entries'])) for l in d['xdpband']['lists'] if l['id'] == 2][0]")"
}

# dropped_as_deny ADDR N: N frames from ADDR are dropped under drop_deny, none observed, and
# `query` says deny with no observed list.
dropped_as_deny() {
	local observed deny want=$2
	observed=$(xbd_stat observed_deny) deny=$(xbd_stat drop_deny)
	xbd_send udp "$1" "$want" || { E2E_WHY="cannot send"; return 1; }
	e2e_wait 50 eval '[[ $(xbd_stat_delta drop_deny "$deny") == "$want" ]]' ||
		{ E2E_WHY="drop_deny +$(xbd_stat_delta drop_deny "$deny"), expected +$want"; return 1; }
	e2e_expect "observed_deny" 0 "$(xbd_stat_delta observed_deny "$observed")" &&
		e2e_expect "query" "deny None" "$(xbd_query "$1" 'd["policy"], d["observed_match"]' | tr -d "(),'")"
}

case_enforced_wins() { dropped_as_deny "$BOTH" 3; }

case_reload() {
	local out
	lists_conf "" || { E2E_WHY="cannot write the config"; return 1; }
	out=$(xbd_cli reload 2>&1) || { E2E_WHY="reload failed: $out"; return 1; }
	[[ $out == *"observed-deny list $XBD_TMP/watch.list: dropped"* &&
		$out == *"deny list $XBD_TMP/watch.list: added, 1 prefix"* ]] ||
		{ E2E_WHY="reload said: $out"; return 1; }
	dropped_as_deny "$WATCHED" 5
}

case_allow_refused() {
	local out rc
	xbd_write_conf "[lists]" "allow = $XBD_TMP/watch.list observe" || return 1
	out=$(xbd_cli reload 2>&1)
	rc=$?
	((rc != 0)) || { E2E_WHY="reload of an observed allow list exited 0"; return 1; }
	[[ $out == *"'observe' applies to deny lists only"* && $out != *$'\n'* ]] ||
		{ E2E_WHY="reload said: $out"; return 1; }
	e2e_expect "the deny list still in force" "deny" "$(xbd_query "$WATCHED" 'd["policy"]')"
}

if ! lists_conf observe || ! xbd_start; then
	for c in "${CASES[@]}"; do xbd_fail "$c" "xdpband did not start with an observed list"; done
	e2e_finish
fi
e2e_case observed_passes_and_counts case_passes
e2e_case observed_still_banned case_banned
e2e_case query_names_observed case_query
e2e_case lists_mark_observed case_lists
e2e_case enforced_wins case_enforced_wins
e2e_case reload_makes_it_deny case_reload
e2e_case observe_on_allow_refused case_allow_refused
e2e_finish
