#!/usr/bin/env bash
# e2e_daemon_restart.sh - end-to-end tests of xdpband across its lifetime: SIGKILL and
# restart keep every ban, counter, setting and the attachment; SIGHUP applies a changed
# config (a new limit, a new deny list, port rules) without losing a ban, and refuses a bad
# one whole; a stopped daemon (detach-on-exit at its default) leaves the program dropping the
# banned and the denied, until `xdpband --detach` removes attachment and pins; a full stop
# and start restores the bans from the state file, the counts in progress, and the values
# `xdpban set` changed, which `set KEY --reset` gives back to the file; a corrupt state file
# is set aside; a state file with more bans than the table holds restores what fits and says
# how many it left out and what bans-max would take them all; a repeat offender's second ban
# is longer; detach-on-exit = no leaves the program attached; another build's program
# attached directly is replaced in one step, the interface never without a program; a
# configured group may read but not change; a pinned flat table of another version's size is
# refused by name. Uses the daemon's helpers of tests/e2e/e2e_lib.sh.
#
# Usage: tests/e2e/e2e_daemon_restart.sh BUILD_DIR
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

CASES=(sigkill_restart_keeps_state sighup_applies_new_config sighup_keeps_old_on_bad_config
	sighup_applies_port_rules stopped_daemon_still_filters socket_mode_refuses_non_root escalated_second_ban full_stop_start_restores_bans
	set_value_survives_restart counts_survive_restart corrupt_state_set_aside oversized_state_says_why detach_on_exit_no_keeps_attachment
	restart_replaces_old_build_in_one_step group_is_read_only old_flat_table_pin_refused)
xbd_require "${CASES[@]}"
if ! xbd_setup b; then
	for c in "${CASES[@]}"; do echo "FAIL: $c (cannot create the test namespaces)"; done
	exit 1
fi
XBD_DENY=$XBD_TMP/deny.list
XBD_CONF_FACTOR=3 xbd_write_conf "[metrics]" "listen = off"

# --- SIGKILL, then a restart on the same pins: nothing is lost, nothing re-attached ---
case_sigkill() {
	local id_before id_after
	xbd_send synfin 192.0.2.66 4
	xbd_send synfin 192.0.2.67 2
	xbd_cli set limit 5 >/dev/null
	xbd_wait_until xbd_banned 192.0.2.66 && xbd_wait_until xbd_count_is 192.0.2.67 2
	id_before=$(xbd_prog_id)
	xbd_stop KILL
	if ! xbd_start; then
		xbd_fail sigkill_restart_keeps_state "xdpband did not restart"
		return
	fi
	id_after=$(xbd_prog_id)
	if [[ $(xbd_ban_of 192.0.2.66) != "4 errors" ]]; then
		xbd_fail sigkill_restart_keeps_state "ban of 192.0.2.66 is '$(xbd_ban_of 192.0.2.66)'"
	elif ! xbd_count_is 192.0.2.67 2; then
		xbd_fail sigkill_restart_keeps_state "192.0.2.67's count is not 2 any more"
	elif ! xbd_limit_is 5; then
		xbd_fail sigkill_restart_keeps_state "the limit set at run time (5) was lost"
	elif [[ -z $id_before || $id_before != "$id_after" ]]; then
		xbd_fail sigkill_restart_keeps_state "program $id_before was not reused (now '$id_after')"
	elif ! xbd_log_has "our program is already attached"; then
		xbd_fail sigkill_restart_keeps_state "no log line about reusing the attachment"
	else
		xbd_pass sigkill_restart_keeps_state
	fi
}

# --- SIGHUP with a changed file: limit 2 and a new deny list apply; the ban stays ---
case_sighup() {
	printf '# test deny list\n198.51.100.0/24   # documentation range\n203.0.113.7\n' >"$XBD_DENY"
	XBD_CONF_LIMIT=2 XBD_CONF_FACTOR=3 xbd_write_conf "[metrics]" "listen = off" \
		"[lists]" "deny = $XBD_DENY"
	xbd_stop_hup_and_wait_limit 2
	xbd_send udp 198.51.100.7 1
	if ! xbd_limit_is 2; then
		xbd_fail sighup_applies_new_config "limit is not 2 after SIGHUP"
	elif [[ $(xbd_query 198.51.100.7 'd["policy"]') != deny ]]; then
		xbd_fail sighup_applies_new_config "198.51.100.7 is not denied by the new list"
	elif [[ $(xbd_query 203.0.113.7 'd["policy_match"]') != 203.0.113.7* ]]; then
		xbd_fail sighup_applies_new_config "the bare address 203.0.113.7 is not in the policy"
	elif ! xbd_wait_until xbd_stat_is drop_deny 1; then
		xbd_fail sighup_applies_new_config "the denied packet was not dropped as drop_deny"
	elif [[ $(xbd_ban_of 192.0.2.66) != "4 errors" ]]; then
		xbd_fail sighup_applies_new_config "the ban of 192.0.2.66 was lost"
	elif ! xbd_alive; then
		xbd_fail sighup_applies_new_config "the daemon died"
	else
		xbd_pass sighup_applies_new_config
	fi
}

xbd_stop_hup_and_wait_limit() {
	kill -HUP "$XBD_PID"
	xbd_wait_until xbd_limit_is "$1"
}

# --- SIGHUP with a bad value: one error line naming file, line, key and value; nothing changes ---
case_bad_sighup() {
	cp "$XBD_CONF" "$XBD_TMP/good.conf"
	sed -i 's/^limit = 2$/limit = lots/' "$XBD_CONF"
	local line
	line=$(grep -n '^limit = lots' "$XBD_CONF" | cut -d: -f1)
	kill -HUP "$XBD_PID"
	if ! xbd_wait_until xbd_log_has "$XBD_CONF:$line: [bans] limit = 'lots'"; then
		xbd_fail sighup_keeps_old_on_bad_config "no error line naming $XBD_CONF:$line, limit and 'lots'"
	elif ! xbd_log_has "keeping the old configuration"; then
		xbd_fail sighup_keeps_old_on_bad_config "the error does not say the old config is kept"
	elif ! xbd_alive || ! xbd_limit_is 2 || [[ $(xbd_query 198.51.100.7 'd["policy"]') != deny ]]; then
		xbd_fail sighup_keeps_old_on_bad_config "the old config was not kept whole"
	else
		xbd_pass sighup_keeps_old_on_bad_config
	fi
	cp "$XBD_TMP/good.conf" "$XBD_CONF"
}

# --- SIGHUP puts [ports] in force and takes it away again; status shows it both ways ---
xbd_ports_are() { [[ $(xbd_cli status --json | xbd_json 'd["ports"]') == "$1" ]]; }

case_sighup_ports() {
	local none="{'guards': [], 'open_tcp': [], 'open_udp': [], 'probe_icmp': False}" text
	cp "$XBD_CONF" "$XBD_TMP/before-ports.conf"
	{ echo "[ports]"; echo "guard = 6969/bep15,53/dns"; echo "open-tcp = 22"; echo "open-tcp = 8000-8100"
		echo "open-udp = 6969"; echo "probe-icmp = yes"; } >>"$XBD_CONF"
	kill -HUP "$XBD_PID"
	if ! xbd_wait_until xbd_ports_are "{'guards': ['53/dns', '6969/bep15'], 'open_tcp': ['22', '8000-8100'], 'open_udp': ['6969'], 'probe_icmp': True}"; then
		xbd_fail sighup_applies_port_rules "status shows $(xbd_cli status --json | xbd_json 'd["ports"]')"
	elif ! text=$(xbd_cli status) || [[ $text != *$'\nports:        guard 53/dns,6969/bep15; open-tcp 22,8000-8100; open-udp 6969; probe-icmp yes\n'* ]]; then
		xbd_fail sighup_applies_port_rules "status text: $(grep '^ports:' <<<"$text")"
	elif ! xbd_log_has "reloaded: port rules: guard 53/dns,6969/bep15; open-tcp 22,8000-8100; open-udp 6969; probe-icmp yes"; then
		xbd_fail sighup_applies_port_rules "no log line with the port rules"
	elif ! cp "$XBD_TMP/before-ports.conf" "$XBD_CONF" || ! kill -HUP "$XBD_PID" ||
		! xbd_wait_until xbd_ports_are "$none"; then
		xbd_fail sighup_applies_port_rules "the rules stay after a reload without [ports]"
	elif ! text=$(xbd_cli status) || [[ $text != *$'\nports:        none\n'* ]]; then
		xbd_fail sighup_applies_port_rules "status text without rules: $(grep '^ports:' <<<"$text")"
	elif ! xbd_alive || ! xbd_limit_is 2; then
		xbd_fail sighup_applies_port_rules "the daemon died or lost its limit"
	else
		xbd_pass sighup_applies_port_rules
	fi
	cp "$XBD_TMP/before-ports.conf" "$XBD_CONF"
}

# --- with detach-on-exit at its default: between a stop and the next start the program still
# drops the banned source and the denied prefix; `xdpband --detach` then leaves no attachment
# and no pin; the next start restores from the state file ---
reloads_past() { (($(grep -c reloaded "$XBD_LOG") > $1)); }
xbd_detach_default() {
	local reloads
	reloads=$(grep -c reloaded "$XBD_LOG")
	sed -i '/^detach-on-exit = /d' "$XBD_CONF"
	kill -HUP "$XBD_PID" && xbd_wait_until reloads_past "$reloads"
}
xbd_detach_yes() { sed -i '/^detach-on-exit = /d; s|^pin-dir = .*|&\ndetach-on-exit = yes|' "$XBD_CONF"; }
xbd_attached_nowhere() { [[ -z $(xbd_prog_id) && -z $(xbd_prog_id "$XBD_IF_R2") ]]; }

case_stopped_filters() {
	local banned deny out
	xbd_detach_default && xbd_stop TERM
	banned=$(xbd_stat drop_banned) deny=$(xbd_stat drop_deny)
	xbd_send udp 192.0.2.66 3
	xbd_send udp 198.51.100.7 3
	if xbd_alive || [[ -z $(xbd_prog_id) ]]; then
		xbd_fail stopped_daemon_still_filters "no daemon and a program attached: alive=$(xbd_alive && echo yes), program '$(xbd_prog_id)'"
	elif ! xbd_wait_until xbd_stat_is drop_banned $((banned + 3)); then
		xbd_fail stopped_daemon_still_filters "drop_banned went from $banned to $(xbd_stat drop_banned), not +3, with no daemon"
	elif ! xbd_wait_until xbd_stat_is drop_deny $((deny + 3)); then
		xbd_fail stopped_daemon_still_filters "drop_deny went from $deny to $(xbd_stat drop_deny), not +3, with no daemon"
	elif ! out=$(nsenter --net="/run/netns/$XBD_NS_R" "$XBD_BIN/xdpband" -c "$XBD_CONF" --detach 2>&1); then
		xbd_fail stopped_daemon_still_filters "xdpband --detach failed: $out"
	elif ! xbd_attached_nowhere || [[ -e $XBD_PIN ]]; then
		xbd_fail stopped_daemon_still_filters "after --detach: programs '$(xbd_prog_id)' '$(xbd_prog_id "$XBD_IF_R2")', pins $(ls "$XBD_PIN" 2>&1 | head -3 | xargs)"
	elif ! xbd_detach_yes || ! xbd_start; then
		xbd_fail stopped_daemon_still_filters "xdpband did not start after --detach"
	elif [[ $(xbd_ban_of 192.0.2.66) != "4 errors" ]]; then
		xbd_fail stopped_daemon_still_filters "the ban of 192.0.2.66 was not restored from the state file"
	else
		xbd_pass stopped_daemon_still_filters
	fi
	xbd_detach_yes
	xbd_alive || xbd_start || echo "# xdpband did not start again after stopped_daemon_still_filters"
}

# --- socket-mode 0600 (the default): nobody cannot even connect ---
case_socket_mode() {
	local out
	if out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$XBD_BIN/xdpban" --socket "$XBD_SOCK" status 2>&1); then
		xbd_fail socket_mode_refuses_non_root "nobody got a status: $out"
	elif [[ $out != *"ermission denied"* ]]; then
		xbd_fail socket_mode_refuses_non_root "unexpected refusal: $out"
	elif [[ $(stat -c %a "$XBD_SOCK") != 600 ]]; then
		xbd_fail socket_mode_refuses_non_root "socket mode is $(stat -c %a "$XBD_SOCK")"
	else
		xbd_pass socket_mode_refuses_non_root
	fi
}

# --- escalation: ban-time 3s, factor 3; a second ban after the first ended lasts 9 s (3 s, not
# less: the first ban's length is read while it lasts, on a machine that may be busy) ---
case_escalation() {
	local first second
	xbd_cli set ban-time 3 >/dev/null
	xbd_send synfin 192.0.2.90 3
	xbd_wait_until xbd_banned 192.0.2.90
	first=$(xbd_ban_length_ns 192.0.2.90)
	xbd_wait_until xbd_not_banned 192.0.2.90
	xbd_send synfin 192.0.2.90 3
	xbd_wait_until xbd_banned 192.0.2.90
	xbd_wait_until xbd_log_has "ban 192.0.2.90 for 9s"
	second=$(xbd_ban_length_ns 192.0.2.90)
	if [[ $first != 3000000000 ]]; then
		xbd_fail escalated_second_ban "first ban lasts ${first}ns, not 3 s"
	elif [[ $second != 9000000000 ]]; then
		xbd_fail escalated_second_ban "second ban lasts ${second}ns, not 3 s x 3"
	elif ! xbd_log_has "repeat offence 1, ban time x3"; then
		xbd_fail escalated_second_ban "no log line for the escalation"
	else
		xbd_pass escalated_second_ban
	fi
	xbd_cli set ban-time --reset >/dev/null # the file's 1h, and no value set left
}

# --- SIGTERM detaches and unpins; the next start restores the bans from the state file (and
# the limit set before the stop, which case_set_survives checks) ---
case_full_stop() {
	local rc
	xbd_cli set limit 15 >/dev/null
	xbd_stop TERM
	rc=$?
	if ((rc != 0)); then
		xbd_fail full_stop_start_restores_bans "SIGTERM exit status $rc"
	elif [[ -n $(xbd_prog_id) || -e $XBD_PIN ]]; then
		xbd_fail full_stop_start_restores_bans "program or pins left behind after SIGTERM"
	elif ! grep -q '^ban 192.0.2.66 .*count=4 reason=errors' "$XBD_STATE"; then
		xbd_fail full_stop_start_restores_bans "state file lacks the ban of 192.0.2.66"
	elif ! xbd_start; then
		xbd_fail full_stop_start_restores_bans "xdpband did not start again"
	elif ! xbd_log_has "maps created and pinned"; then
		xbd_fail full_stop_start_restores_bans "the maps were not created fresh"
	elif [[ $(xbd_ban_of 192.0.2.66) != "4 errors" ]]; then
		xbd_fail full_stop_start_restores_bans "ban of 192.0.2.66 after restore: '$(xbd_ban_of 192.0.2.66)'"
	elif (($(xbd_query 192.0.2.66 'd["seconds_left"]') <= 0)); then
		xbd_fail full_stop_start_restores_bans "restored ban has no time left"
	elif ! xbd_send udp 192.0.2.66 1 || ! xbd_wait_until xbd_stat_is drop_banned 1; then
		xbd_fail full_stop_start_restores_bans "the restored ban is listed but not enforced"
	else
		xbd_pass full_stop_start_restores_bans
	fi
}

# --- `set limit 15` before case_full_stop's stop is in force after its start, on new maps, and
# status says it is set; --reset gives it back to the file (limit 2) and the state file drops it ---
xbd_set_values_are() { [[ $(xbd_cli status --json | xbd_json 'd["xdpband"]["set_values"]') == "$1" ]]; }

case_set_survives() {
	local text
	text=$(xbd_cli status)
	if ! xbd_limit_is 15; then
		xbd_fail set_value_survives_restart "limit after the restart: $(xbd_cli status --json | xbd_json 'd["config"]["limit"]')"
	elif ! xbd_set_values_are "{'limit': '15'}"; then
		xbd_fail set_value_survives_restart "set_values: $(xbd_cli status --json | xbd_json 'd["xdpband"]["set_values"]')"
	elif [[ $text != *$'\nset values:   limit 15 (xdpban set, over the config file\'s until a reload)\n'* ]]; then
		xbd_fail set_value_survives_restart "status text: $(grep '^set values:' <<<"$text")"
	elif ! xbd_cli set limit --reset >/dev/null || ! xbd_limit_is 2 || ! xbd_set_values_are "{}"; then
		xbd_fail set_value_survives_restart "--reset did not give the limit back to the file's 2"
	elif grep -q '^set ' "$XBD_STATE"; then
		xbd_fail set_value_survives_restart "the state file keeps $(grep '^set ' "$XBD_STATE") after --reset"
	else
		xbd_pass set_value_survives_restart
	fi
}

# --- a source at 5 errors is at 5 after a stop that detaches and a start on new maps (the state
# file's counter), with its classes, and is banned at its 11th error under limit 10 ---
case_counts_survive() {
	xbd_cli set limit 10 >/dev/null
	xbd_send synfin 192.0.2.55 5
	if ! xbd_wait_until xbd_count_is 192.0.2.55 5; then
		xbd_fail counts_survive_restart "192.0.2.55 did not reach 5 errors before the stop"
	elif ! xbd_stop TERM || [[ -e $XBD_PIN ]] || ! grep -q '^counter 192.0.2.55 start=[0-9]* count=5 classes=1$' "$XBD_STATE"; then
		xbd_fail counts_survive_restart "no 'counter 192.0.2.55 ... count=5 classes=1' in the state file after a detaching stop"
	elif ! xbd_start || ! xbd_count_is 192.0.2.55 5; then
		xbd_fail counts_survive_restart "192.0.2.55's count after the start: '$(xbd_query 192.0.2.55 'd["count"]')', not 5"
	elif [[ $(xbd_query 192.0.2.55 'd["classes"]') != "['malformed']" ]]; then
		xbd_fail counts_survive_restart "the classes of its count: $(xbd_query 192.0.2.55 'd["classes"]')"
	elif ! xbd_send synfin 192.0.2.55 5 || ! xbd_wait_until xbd_count_is 192.0.2.55 10 || xbd_banned 192.0.2.55; then
		xbd_fail counts_survive_restart "after 10 errors: count '$(xbd_query 192.0.2.55 'd["count"]')', banned $(xbd_query 192.0.2.55 'd["banned"]')"
	elif ! xbd_send synfin 192.0.2.55 1 || ! xbd_wait_until xbd_banned 192.0.2.55 ||
		[[ $(xbd_ban_of 192.0.2.55) != "11 errors" ]]; then
		xbd_fail counts_survive_restart "the 11th error did not ban it: ban '$(xbd_ban_of 192.0.2.55)'"
	else
		xbd_pass counts_survive_restart
	fi
	xbd_alive || xbd_start || echo "# xdpband did not start again after counts_survive_restart"
	xbd_cli set limit --reset >/dev/null
}

# --- a truncated state file is reported, moved aside and not used ---
case_corrupt_state() {
	xbd_stop TERM
	sed -i '/^end /d' "$XBD_STATE"
	if ! xbd_start; then
		xbd_fail corrupt_state_set_aside "xdpband did not start with a corrupt state file"
		return
	fi
	local aside=("$XBD_STATE".corrupt-*)
	if [[ ! -f ${aside[0]} ]]; then
		xbd_fail corrupt_state_set_aside "no $XBD_STATE.corrupt-* file"
	elif ! xbd_log_has "truncated: no end line" || ! xbd_log_has "moved aside to ${aside[0]}"; then
		xbd_fail corrupt_state_set_aside "no one-line report naming the problem and ${aside[0]}"
	elif [[ -n $(xbd_ban_of 192.0.2.66) ]]; then
		xbd_fail corrupt_state_set_aside "a ban from the corrupt file was restored"
	else
		xbd_pass corrupt_state_set_aside
	fi
}

# --- detach-on-exit = no: the program and the pins outlive the daemon, and are reused ---
case_no_detach() {
	local id
	XBD_CONF_DETACH=no xbd_write_conf "[metrics]" "listen = off"
	kill -HUP "$XBD_PID"
	xbd_wait_until xbd_log_has "reloaded"
	xbd_send synfin 192.0.2.77 4
	xbd_wait_until xbd_banned 192.0.2.77
	id=$(xbd_prog_id)
	xbd_stop TERM
	if [[ -z $id || $(xbd_prog_id) != "$id" || ! -e $XBD_PIN/xdpban_bans ]]; then
		xbd_fail detach_on_exit_no_keeps_attachment "program $id or the pins went away"
	elif ! xbd_start || [[ $(xbd_prog_id) != "$id" ]] || ! xbd_banned 192.0.2.77; then
		xbd_fail detach_on_exit_no_keeps_attachment "the restart did not reuse program $id and its bans"
	else
		xbd_pass detach_on_exit_no_keeps_attachment
	fi
}

# --- another build's program attached directly, on our pins (a program of its own that uses the
# ban table): the start puts ours in its place in one step, the interface attached at every
# poll of the start, its bans kept (xbd_old_build, tests/e2e/e2e_lib.sh) ---

# Writes the interface's program id after "id=" every poll until $XBD_TMP/polling goes: from
# ip's text, a poll every few milliseconds, where xbd_prog_id's JSON takes a tenth of a second.
xbd_poll_prog() {
	while [[ -e $XBD_TMP/polling ]]; do
		echo "id=$(ip -n "$XBD_NS_R" link show dev "$XBD_IF_R" | grep -o 'prog/xdp id [0-9]*' | grep -o '[0-9]*$')"
	done >"$XBD_TMP/polls"
}

case_old_build() {
	local old new gaps polls poller
	xbd_stop TERM # detach-on-exit = no since case_no_detach
	if ! xbd_old_build 2>"$XBD_TMP/old.err"; then
		xbd_fail restart_replaces_old_build_in_one_step "cannot attach another build's program: $(head -c 300 "$XBD_TMP/old.err")"
		xbd_start # for the cases that follow
		return
	fi
	old=$(xbd_prog_id)
	: >"$XBD_TMP/polling"
	xbd_poll_prog &
	poller=$!
	xbd_start
	rm -f "$XBD_TMP/polling" && wait "$poller"
	echo "# $(wc -l <"$XBD_TMP/polls") polls of $XBD_IF_R during the start"
	new=$(xbd_prog_id)
	polls=$(wc -l <"$XBD_TMP/polls") gaps=$(grep -c '^id=$' "$XBD_TMP/polls")
	if ! xbd_alive; then
		xbd_fail restart_replaces_old_build_in_one_step "xdpband did not start over program $old"
	elif ((gaps > 0 || polls < 5)); then
		xbd_fail restart_replaces_old_build_in_one_step "$gaps of $polls polls during the start saw no program on $XBD_IF_R"
	elif [[ -z $old || $new == "$old" ]] || ! xbd_log_has "$XBD_IF_R: replaced the outdated program $old with this build's (program id $new) in one step"; then
		xbd_fail restart_replaces_old_build_in_one_step "program $old, now '$new', and no log line of the replacement"
	elif ! xbd_banned 192.0.2.77; then
		xbd_fail restart_replaces_old_build_in_one_step "the ban of 192.0.2.77 did not outlive the replacement"
	else
		xbd_pass restart_replaces_old_build_in_one_step
	fi
}

# --- [control] group: its members may look (status) but not change (set) ---
case_group() {
	local look change
	xbd_stop TERM
	xbd_write_conf "[metrics]" "listen = off"
	sed -i "s/^socket-mode = .*/socket-mode = 0660\ngroup = nogroup/" "$XBD_CONF"
	if ! xbd_start; then
		xbd_fail group_is_read_only "xdpband did not start with a group"
		return
	fi
	look=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$XBD_BIN/xdpban" --socket "$XBD_SOCK" status --json 2>&1)
	change=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$XBD_BIN/xdpban" --socket "$XBD_SOCK" set limit 9 2>&1)
	if [[ $(stat -c '%a %G' "$XBD_SOCK") != "660 nogroup" ]]; then
		xbd_fail group_is_read_only "socket is $(stat -c '%a %G' "$XBD_SOCK"), not 660 nogroup"
	elif [[ $(xbd_json 'd["daemon"]' <<<"$look" 2>/dev/null) != True ]]; then
		xbd_fail group_is_read_only "a group member could not read the status: $look"
	elif [[ $change != *read-only* ]] || xbd_limit_is 9; then
		xbd_fail group_is_read_only "a group member's set was not refused: $change"
	else
		xbd_pass group_is_read_only
	fi
}

# --- a pinned flat table of another size (an older version's layout) is refused, naming the
# pin to remove; once it is removed the next start makes a new one and keeps the bans ---
case_old_flat_pin() {
	local pin=$XBD_PIN/xdpban_flat4 entries reloads
	reloads=$(grep -c reloaded "$XBD_LOG")
	XBD_CONF_DETACH=no xbd_write_conf "[metrics]" "listen = off" # so that the pins stay
	kill -HUP "$XBD_PID"
	xbd_wait_until reloads_past "$reloads"
	xbd_stop TERM
	entries=$(bpftool -j map show pinned "$pin" | xbd_json 'd["max_entries"]')
	rm -f "$pin"
	if ! bpftool map create "$pin" type array key 4 value 8 entries $((entries - 1)) \
		name xdpban_flat4 flags 1024; then # BPF_F_MMAPABLE, as the real one
		xbd_fail old_flat_table_pin_refused "cannot make the old-size pin $pin (pinned size ${entries:-unknown})"
	elif xbd_start; then
		xbd_fail old_flat_table_pin_refused "xdpband started on a flat table of $((entries - 1)) words"
	elif ! xbd_log_has "pin $pin is not this version's xdpban_flat4 map; remove $pin"; then
		xbd_fail old_flat_table_pin_refused "no line naming $pin: $(tail -2 "$XBD_LOG")"
	elif ! rm -f "$pin" || ! xbd_start; then
		xbd_fail old_flat_table_pin_refused "xdpband did not start once the pin was removed"
	elif ! xbd_banned 192.0.2.77; then
		xbd_fail old_flat_table_pin_refused "the ban of 192.0.2.77 did not outlive the new table"
	else
		xbd_pass old_flat_table_pin_refused
	fi
}

# --- a state file with more bans than the table holds: what fits is restored, the rest said ---
case_oversized_state() {
	local now i line restored
	xbd_stop TERM
	cp "$XBD_STATE" "$XBD_TMP/state.kept" # put back after, for the cases that follow
	now=$(date +%s)
	{
		echo "xdpban-state 1"
		for ((i = 1; i <= 100; i++)); do
			echo "ban 203.0.113.$i start=$now expires=0 count=11 reason=errors classes=1"
		done
		echo "end 100"
	} >"$XBD_STATE"
	sed -i 's/^\[bans\]$/[bans]\nbans-max = 16/' "$XBD_CONF"
	if ! xbd_start; then
		xbd_fail oversized_state_says_why "xdpband did not start with bans-max 16"
		return
	fi
	line=$(grep -F "saved bans not restored: the ban table is full" "$XBD_LOG" | tail -1)
	restored=$(xbd_cli bans --json | xbd_json 'len(d["bans"])')
	if [[ $line != *"state: $((100 - restored)) saved bans not restored: the ban table is full ([bans] bans-max = 16); raise bans-max to at least 100 to restore them all" ]]; then
		xbd_fail oversized_state_says_why "restored $restored of 100; log: '$line'"
	elif ((restored < 1 || restored >= 100)); then
		xbd_fail oversized_state_says_why "restored $restored of 100 into a table of 16"
	else
		xbd_pass oversized_state_says_why
	fi
	xbd_stop TERM
	sed -i '/^bans-max = 16$/d' "$XBD_CONF"
	cp "$XBD_TMP/state.kept" "$XBD_STATE"
	xbd_start || echo "# xdpband did not start again after oversized_state_says_why"
}

# Each case needs the daemon that the cases before it left running.
xbd_run() {
	if xbd_alive; then "$2"; else xbd_fail "$1" "the daemon is not running"; fi
}

xbd_start || echo "# xdpband did not start: every case fails"
xbd_run sigkill_restart_keeps_state case_sigkill
xbd_run sighup_applies_new_config case_sighup
xbd_run sighup_keeps_old_on_bad_config case_bad_sighup
xbd_run sighup_applies_port_rules case_sighup_ports
xbd_run stopped_daemon_still_filters case_stopped_filters
xbd_run socket_mode_refuses_non_root case_socket_mode
xbd_run escalated_second_ban case_escalation
xbd_run full_stop_start_restores_bans case_full_stop
xbd_run set_value_survives_restart case_set_survives
xbd_run counts_survive_restart case_counts_survive
xbd_run corrupt_state_set_aside case_corrupt_state
xbd_run oversized_state_says_why case_oversized_state
xbd_run detach_on_exit_no_keeps_attachment case_no_detach
xbd_run restart_replaces_old_build_in_one_step case_old_build
xbd_run group_is_read_only case_group
xbd_run old_flat_table_pin_refused case_old_flat_pin
xbd_stop TERM
((E2E_FAILED == 0))
