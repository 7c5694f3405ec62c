#!/usr/bin/env bash
# e2e_observe.sh BUILD - observe mode end to end, in a private pair of namespaces: with
# [bans] mode = observe a source over the limit is banned yet its frames pass, and `bans`,
# `query`, the events, the log and the metrics say the ban is observed; `xdpban set mode
# enforce` puts that ban in force at once (its frames are dropped), and --reset gives the mode
# back to the file; a deny list's sources pass in observe mode, counted as observed_deny; a bad
# mode is refused in one line and changes nothing; a statistics pin of an older, shorter
# layout is carried over at the start, its counts kept. The ban's drop count (`bans`, `query`)
# rises with every frame of the banned source, observed or dropped.
#
# Everything it makes (namespaces, daemon, pins, files) is removed on any exit, through
# the daemon helpers' cleanup in tests/e2e/e2e_lib.sh. Needs root; skips without it.
# shellcheck disable=SC2317 # the case functions are called through e2e_case
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

CASES=(older_stats_pin_carried observe_bans_nothing observed_ban_reported
	observed_deny_passes bad_mode_refused enforce_applies_the_ban reset_gives_back_observe)
XBD_NS_TAG=xbob xbd_begin O "${CASES[@]}"
readonly METRICS=127.0.0.1:9433 BANNED=192.0.2.50 DENIED=203.0.113.9
readonly OLD_PASSED=1000 # what the older pin's passed row holds on each CPU

scrape() { nsenter --net="/run/netns/$XBD_NS_R" curl -sf --max-time 5 "http://$METRICS/metrics"; }
# metric NAME: its value in a scrape, or nothing.
metric() { scrape | awk -v n="$1" '$1 == n { print $2 }'; }
mode_is() { [[ $(xbd_cli status --json | xbd_json 'd["config"]["mode"]') == "$1" ]]; }
# drops_of ADDR: the drops of ADDR's ban in `xdpban bans --json`, then in `xdpban query`.
drops_of() {
	echo "$(xbd_cli bans --json | xbd_json "[b['drops'] for b in d['bans'] if b['prefix'] == '$1'][0]")" \
		"$(xbd_query "$1" 'd["drops"]')"
}

# An xdpban_stats pin of the layout before the observed rows (three rows fewer), its passed
# row at OLD_PASSED on every CPU, where the daemon will look for its pins.
make_older_stats_pin() {
	local rows
	rows=$(grep -cE '^\s+[VE]\([A-Z_]+,' include/xdpban_stats.h) || return 1
	mkdir -p "$XBD_PIN" &&
		bpftool map create "$XBD_PIN/xdpban_stats" type percpu_array key 4 value 16 \
			entries $((rows - 3)) name xdpban_stats &&
		bpftool map update pinned "$XBD_PIN/xdpban_stats" key 0 0 0 0 \
			value $(printf '%s ' $((OLD_PASSED & 255)) $((OLD_PASSED >> 8)) 0 0 0 0 0 0 \
				0 0 0 0 0 0 0 0)
}

observe_conf() {
	printf '%s\n' "$DENIED/32" >"$XBD_TMP/deny.list"
	xbd_write_conf "[bans]" "mode = observe" "[lists]" "deny = $XBD_TMP/deny.list" \
		"[metrics]" "listen = $METRICS"
}

case_older_stats() {
	xbd_log_has "xdpban_stats: carried the $(($(grep -cE '^\s+[VE]\([A-Z_]+,' include/xdpban_stats.h) - 3)) rows of the older pin over" ||
		{ E2E_WHY="the log does not say the older pin was carried over"; return 1; }
	(($(xbd_stat passed) >= OLD_PASSED)) ||
		{ E2E_WHY="passed is $(xbd_stat passed) after the start, expected at least $OLD_PASSED"; return 1; }
	e2e_expect "observed_banned on the new rows" 0 "$(xbd_stat observed_banned)"
}

# Four malformed frames over the limit of 3 ban the source; its UDP frames then pass.
case_observe_bans_nothing() {
	local passed banned
	xbd_send synfin "$BANNED" 4 || { E2E_WHY="cannot send"; return 1; }
	e2e_wait 100 xbd_banned "$BANNED" || { E2E_WHY="$BANNED was not banned"; return 1; }
	passed=$(xbd_stat passed) banned=$(xbd_stat drop_banned)
	xbd_send udp "$BANNED" 5 || { E2E_WHY="cannot send"; return 1; }
	e2e_wait 50 eval '[[ $(xbd_stat observed_banned) == 5 ]]' ||
		{ E2E_WHY="observed_banned is $(xbd_stat observed_banned), expected 5"; return 1; }
	e2e_expect "passed" 5 "$(xbd_stat_delta passed "$passed")" &&
		e2e_expect "drop_banned" 0 "$(xbd_stat_delta drop_banned "$banned")" &&
		e2e_expect "the count after the ban (not counted again)" 0 \
			"$(xbd_query "$BANNED" 'd["count"]')"
}

case_observed_ban_reported() {
	e2e_expect "the ban's drops, observed" "5 5" "$(drops_of "$BANNED")" &&
		e2e_expect "bans --json" "True" "$(xbd_cli bans --json |
		xbd_json "[b['observed'] for b in d['bans'] if b['prefix'] == '$BANNED'][0]")" &&
		e2e_expect "bans, its note" \
			"observe mode: these bans drop nothing; they show what would have been dropped" \
			"$(xbd_cli bans | tail -1)" &&
		e2e_expect "query" "True True" "$(xbd_query "$BANNED" 'd["banned"], d["observed"]' | tr -d '(),')" &&
		e2e_expect "query, text" "observed:     yes (observe mode: passed; would have been dropped)" \
			"$(xbd_cli query "$BANNED" | grep '^observed:')" &&
		e2e_expect "the event" "ban $BANNED True" "$(xbd_cli events --json | "$XBD_PY" -c '
import json, sys
for line in sys.stdin:
    e = json.loads(line)
    print(e["event"], e["source"], e["observed"])')" &&
		e2e_wait 50 xbd_log_has "ban $BANNED for 1h" &&
		xbd_log_has "; observed: would have dropped" ||
		{ E2E_WHY=${E2E_WHY:-"the log does not mark the ban observed"}; return 1; }
	e2e_expect "xdpban_observed_banned_total" 5 "$(metric xdpban_observed_banned_total)" &&
		e2e_expect "xdpban_observe_mode" 1 "$(metric xdpban_observe_mode)" &&
		e2e_expect "status" "observe" "$(xbd_cli status --json | xbd_json 'd["config"]["mode"]')" &&
		[[ $(xbd_cli status) == *", observe mode"* ]] ||
		{ E2E_WHY=${E2E_WHY:-"status does not say observe mode"}; return 1; }
}

case_observed_deny() {
	local deny
	deny=$(xbd_stat drop_deny)
	xbd_send udp "$DENIED" 3 || { E2E_WHY="cannot send"; return 1; }
	e2e_wait 50 eval '[[ $(xbd_stat observed_deny) == 3 ]]' ||
		{ E2E_WHY="observed_deny is $(xbd_stat observed_deny), expected 3"; return 1; }
	e2e_expect "drop_deny" 0 "$(xbd_stat_delta drop_deny "$deny")" &&
		e2e_expect "query" "deny True" "$(xbd_query "$DENIED" 'd["policy"], d["observed"]' | tr -d "(),'")" &&
		e2e_expect "xdpban_observed_deny_total" 3 "$(metric xdpban_observed_deny_total)"
}

case_bad_mode() {
	local out rc
	out=$(xbd_cli set mode maybe 2>&1)
	rc=$?
	((rc != 0)) || { E2E_WHY="set mode maybe exited 0"; return 1; }
	[[ $out == *"bad mode 'maybe': expected enforce or observe"* && $out != *$'\n'* ]] ||
		{ E2E_WHY="set mode maybe said: $out"; return 1; }
	mode_is observe || { E2E_WHY="the mode changed"; return 1; }
}

case_enforce() {
	local banned observed
	e2e_run xbd_cli set mode enforce || return 1
	banned=$(xbd_stat drop_banned) observed=$(xbd_stat observed_banned)
	xbd_send udp "$BANNED" 4 || { E2E_WHY="cannot send"; return 1; }
	e2e_wait 50 eval '[[ $(xbd_stat_delta drop_banned "$banned") == 4 ]]' ||
		{ E2E_WHY="drop_banned +$(xbd_stat_delta drop_banned "$banned"), expected +4"; return 1; }
	e2e_expect "observed_banned" 0 "$(xbd_stat_delta observed_banned "$observed")" &&
		e2e_expect "the ban's drops, 5 observed and 4 dropped" "9 9" "$(drops_of "$BANNED")" &&
		e2e_expect "bans, text" "$BANNED errors 4 9" \
			"$(xbd_cli bans | awk -v a="$BANNED" '$1 == a { print $1, $2, $3, $4 }')" &&
		e2e_expect "query, text" "drops:        9 packets since the ban began" \
			"$(xbd_cli query "$BANNED" | grep '^drops:')" &&
		e2e_expect "bans --json" "False" "$(xbd_cli bans --json |
			xbd_json "[b['observed'] for b in d['bans'] if b['prefix'] == '$BANNED'][0]")" &&
		e2e_expect "the state file" "set mode enforce" "$(grep '^set mode' "$XBD_STATE")" &&
		e2e_expect "xdpban_observe_mode" 0 "$(metric xdpban_observe_mode)"
}

case_reset() {
	local observed
	e2e_run xbd_cli set mode --reset || return 1
	mode_is observe || { E2E_WHY="the mode is not the file's again"; return 1; }
	observed=$(xbd_stat observed_banned)
	xbd_send udp "$BANNED" 2 || { E2E_WHY="cannot send"; return 1; }
	e2e_wait 50 eval '[[ $(xbd_stat_delta observed_banned "$observed") == 2 ]]' ||
		{ E2E_WHY="observed_banned +$(xbd_stat_delta observed_banned "$observed"), expected +2"; return 1; }
}

if ! make_older_stats_pin || ! observe_conf || ! xbd_start; then
	for c in "${CASES[@]}"; do xbd_fail "$c" "xdpband did not start in observe mode"; done
	e2e_finish
fi
e2e_case older_stats_pin_carried case_older_stats
e2e_case observe_bans_nothing case_observe_bans_nothing
e2e_case observed_ban_reported case_observed_ban_reported
e2e_case observed_deny_passes case_observed_deny
e2e_case bad_mode_refused case_bad_mode
e2e_case enforce_applies_the_ban case_enforce
e2e_case reset_gives_back_observe case_reset
e2e_finish
