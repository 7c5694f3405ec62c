#!/usr/bin/env bash
# e2e_hostile_files.sh - end-to-end tests of what xdpband does with hostile or broken files:
# `xdpband -t` refuses, at once and in one line, a FIFO, a device, a directory or a socket as a
# list file, a NUL in a list line, a line or a file over the limits, 0.0.0.0/0 and ::/0, an
# IPv4-mapped IPv6 entry, factor = 0x2, [state] file = /tmp and an unknown section with no
# keys, and accepts a prefix both trusted and denied (trusted wins); a list larger than the policy
# table is refused by -t and by a reload, and `query` then answers exactly as before; a FIFO
# and /dev/zero are refused by a reload while the daemon keeps answering; a full disk is named
# ENOSPC when the state file is written (on a small tmpfs mounted for the test).
# Uses the daemon's helpers of tests/e2e/e2e_lib.sh; every namespace, daemon, pin, mount and file it
# makes is removed by the cleanup of tests/e2e/e2e_lib.sh, also on failure.
#
# Usage: tests/e2e/e2e_hostile_files.sh BUILD_DIR
set -uo pipefail
# shellcheck source=tests/e2e/e2e_lib.sh
source "$(dirname "$0")/e2e_lib.sh"

CASES=(check_refuses_hostile_files list_larger_than_the_table_refused_whole
	fifo_and_device_refused_by_reload full_disk_named_when_saving)
xbd_begin h "${CASES[@]}"
XBD_DENY=$XBD_TMP/deny.list
printf '198.51.100.0/24\n' >"$XBD_DENY"
xbd_write_conf "[metrics]" "listen = off" "[lists]" "deny = $XBD_DENY"

# xbd_conf_with FILE LINE...: the test config without its deny list, and LINEs at the end of
# its last section, [lists]. FILE may be the test config itself.
xbd_conf_with() {
	local out=$1
	shift
	{ grep -v '^deny = ' "$XBD_CONF"; printf '%s\n' "$@"; } >"$out.new" && mv "$out.new" "$out"
}

case_check_files() {
	local d=$XBD_TMP/files bad=() f
	mkdir -p "$d" && mkfifo "$d/fifo" || { xbd_fail check_refuses_hostile_files "cannot set up"; return; }
	"$E2E_PY" -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$d/sock"
	printf '192.0.2.7\n192.0.2.1\0junk\n' >"$d/nul.list"
	printf '192.0.2.0/24\n0.0.0.0/0\n' >"$d/all4.list"
	printf '2001:db8::/32\n::/0   # everything\n' >"$d/all6.list"
	printf '::ffff:192.0.2.1\n' >"$d/mapped.list"
	printf '192.0.2.7 # %s\n' "$(head -c 1100 /dev/zero | tr '\0' x)" >"$d/long.list"
	truncate -s 300M "$d/huge.list" # sparse: costs no disk
	{ printf '192.0.2.7 #'; head -c 1013 /dev/zero | tr '\0' x; printf '\n192.0.2.8'; } >"$d/longest.list"
	yes 2001:db8::1 | head -n 2500000 >"$d/repeats.list" # more lines than the table, one entry
	printf '198.51.100.0/24\n' | tee "$d/deny-both.list" >"$d/trusted-both.list"
	# the same prefix trusted and denied: trusted wins (xdpban.conf(5)), nothing to refuse
	xbd_conf_with "$d/both.conf" "deny = $d/deny-both.list" "trusted = $d/trusted-both.list"
	xbd_conf_with "$d/section.conf" "[foo]" # an unknown section, even without keys
	for f in fifo sock; do
		xbd_conf_with "$d/$f.conf" "deny = $d/$f"
	done
	xbd_conf_with "$d/zero.conf" "deny = /dev/zero"
	xbd_conf_with "$d/dir.conf" "trusted = $d"
	for f in nul all4 all6 mapped long huge longest repeats; do
		xbd_conf_with "$d/$f.conf" "deny = $d/$f.list"
	done
	sed 's/^factor = .*/factor = 0x2/' "$XBD_CONF" >"$d/hex.conf"
	sed "s|^file = .*|file = /tmp|" "$XBD_CONF" >"$d/state-dir.conf"
	# A start is tried on a directory of our own: a daemon that took /tmp for a corrupt state
	# file would move it aside.
	mkdir -p "$d/state.d" && sed "s|^file = .*|file = $d/state.d|" "$XBD_CONF" >"$d/own-state-dir.conf"
	xbd_check_t fifo 1 "list $d/fifo is a FIFO, not a regular file" -t -c "$d/fifo.conf"
	xbd_check_t socket 1 "list $d/sock is a socket, not a regular file" -t -c "$d/sock.conf"
	xbd_check_t dev-zero 1 "list /dev/zero is a device, not a regular file" -t -c "$d/zero.conf"
	xbd_check_t directory 1 "list $d is a directory, not a regular file" -t -c "$d/dir.conf"
	xbd_check_t nul 1 "$d/nul.list:2: byte 0x00 is not text" -t -c "$d/nul.conf"
	xbd_check_t all-ipv4 1 "$d/all4.list:2: '0.0.0.0/0' is every IPv4 address" -t -c "$d/all4.conf"
	xbd_check_t all-ipv6 1 "$d/all6.list:2: '::/0' is every IPv6 address" -t -c "$d/all6.conf"
	xbd_check_t mapped 1 "$d/mapped.list:1: '::ffff:192.0.2.1' is an IPv4-mapped IPv6 address" -t -c "$d/mapped.conf"
	xbd_check_t long-line 1 "$d/long.list:1: line longer than 1024 bytes" -t -c "$d/long.conf"
	xbd_check_t longest-line 0 "configuration OK (2 interfaces, 1 list file, 2 list entries)" -t -c "$d/longest.conf"
	xbd_check_t repeats 0 "configuration OK (2 interfaces, 1 list file, 1 list entry)" -t -c "$d/repeats.conf"
	xbd_check_t trusted-and-deny 0 "configuration OK (2 interfaces, 2 list files, 1 list entry)" -t -c "$d/both.conf"
	xbd_check_t empty-section 1 "$d/section.conf:$(wc -l <"$d/section.conf"): unknown section [foo]" -t -c "$d/section.conf"
	xbd_check_t huge 1 "list $d/huge.list is 314572800 bytes, more than the limit of 268435456" -t -c "$d/huge.conf"
	xbd_check_t hex-factor 1 "[escalation] factor = '0x2': not a decimal number" -t -c "$d/hex.conf"
	xbd_check_t state-dir 1 "state file /tmp is a directory, not a regular file" -t -c "$d/state-dir.conf"
	# a start refuses them the same way, before it makes anything
	xbd_check_t start-fifo 1 "list $d/fifo is a FIFO, not a regular file" -c "$d/fifo.conf"
	xbd_check_t start-state-dir 1 "state file $d/state.d is a directory, not a regular file" -c "$d/own-state-dir.conf"
	xbd_checks_done check_refuses_hostile_files
}

# xbd_status_fast: the daemon answers `status` within 2 s.
xbd_status_fast() { timeout 2 "$XBD_BIN/xdpban" --socket "$XBD_SOCK" status --json >/dev/null; }

# xbd_queries: `xdpban query --json` of addresses in the old and in the refused list.
xbd_queries() {
	local a
	for a in 198.51.100.7 2001:db8::1 2001:db8:1:2::1 192.0.2.2; do xbd_cli query "$a" --json; done
}

# --- 3,000,000 IPv6 entries, more than ten times the table: refused whole, by -t, SIGHUP and
# the reload command, while the daemon keeps answering ---
case_big_list() {
	local big=$XBD_TMP/big.list conf=$XBD_TMP/big.conf before after out reply during
	awk 'BEGIN { for (i = 0; i < 3000000; i++) printf "2001:db8:%x:%x::/64\n", int(i / 65536), i % 65536 }' >"$big"
	before=$(xbd_queries)
	xbd_conf_with "$conf" "deny = $XBD_DENY" "deny = $big"
	out=$(nsenter --net="/run/netns/$XBD_NS_R" timeout 60 "$XBD_BIN/xdpband" -t -c "$conf" 2>&1)
	cp "$XBD_CONF" "$XBD_TMP/good.conf"
	cp "$conf" "$XBD_CONF"
	kill -HUP "$XBD_PID"
	# the files are read beside the loop: status answers while the reading goes on
	xbd_status_fast && ! xbd_log_has "reload: $big"
	during=$?
	xbd_wait_until xbd_log_has "reload: $big: 3000000 IPv6 entries"
	reply=$(xbd_request '{"cmd":"reload"}')
	after=$(xbd_queries)
	if [[ $(wc -l <<<"$out") != 1 || $out != *"$big: 3000000 IPv6 entries: more than the IPv6 policy table holds (1048576)"* ]]; then
		xbd_fail list_larger_than_the_table_refused_whole "-t said: ${out:0:200}"
	elif ((during != 0)); then
		xbd_fail list_larger_than_the_table_refused_whole "status did not answer while the list was read"
	elif ! xbd_log_has "reload: $big: 3000000 IPv6 entries: more than the IPv6 policy table holds (1048576); keeping the old configuration"; then
		xbd_fail list_larger_than_the_table_refused_whole "no log line refusing the reload"
	elif [[ $(xbd_json 'd["ok"]' <<<"$reply") != False || $reply != *"3000000 IPv6 entries"* ]]; then
		xbd_fail list_larger_than_the_table_refused_whole "reload command: $reply"
	elif [[ $before != "$after" ]]; then
		xbd_fail list_larger_than_the_table_refused_whole "query answers changed: $(diff <(echo "$before") <(echo "$after") | head -3 | tr '\n' ' ')"
	elif [[ $(xbd_query 198.51.100.7 'd["policy"]') != deny || $(xbd_query 2001:db8::1 'd["policy"]') != none ]]; then
		xbd_fail list_larger_than_the_table_refused_whole "the old deny list is not in force alone"
	else
		xbd_pass list_larger_than_the_table_refused_whole
	fi
	cp "$XBD_TMP/good.conf" "$XBD_CONF"
	rm -f "$big"
}

# --- a FIFO (SIGHUP) and /dev/zero (reload command) as list files: refused at once ---
case_fifo_reload() {
	local fifo=$XBD_TMP/reload.fifo reply t0 t1 t2 t3
	mkfifo "$fifo" && cp "$XBD_CONF" "$XBD_TMP/good.conf"
	xbd_conf_with "$XBD_CONF" "deny = $fifo"
	t0=$(date +%s%N)
	kill -HUP "$XBD_PID"
	xbd_wait_until xbd_log_has "reload: list $fifo is a FIFO, not a regular file; keeping the old configuration"
	t1=$(date +%s%N)
	xbd_status_fast || { xbd_fail fifo_and_device_refused_by_reload "no status after the FIFO reload"; return; }
	xbd_conf_with "$XBD_CONF" "deny = /dev/zero"
	t2=$(date +%s%N)
	reply=$(xbd_request '{"cmd":"reload"}')
	t3=$(date +%s%N)
	if ((t1 - t0 > 3000000000 || t3 - t2 > 3000000000)); then
		xbd_fail fifo_and_device_refused_by_reload "a reload took $(((t1 - t0) / 1000000)) ms (FIFO), $(((t3 - t2) / 1000000)) ms (/dev/zero)"
	elif [[ $reply != *'"ok":false'*"list /dev/zero is a device, not a regular file"* ]]; then
		xbd_fail fifo_and_device_refused_by_reload "reload of /dev/zero: '$reply'"
	elif ! xbd_status_fast || [[ $(xbd_query 198.51.100.7 'd["policy"]') != deny ]]; then
		xbd_fail fifo_and_device_refused_by_reload "the daemon does not answer, or lost its deny list"
	else
		cp "$XBD_TMP/good.conf" "$XBD_CONF"
		reply=$(xbd_request '{"cmd":"reload"}')
		if [[ $reply != '{"ok":true,"config_file":"'"$XBD_CONF"'",'* ]]; then
			xbd_fail fifo_and_device_refused_by_reload "reload of the good file: '$reply'"
		else
			xbd_pass fifo_and_device_refused_by_reload
		fi
	fi
	cp "$XBD_TMP/good.conf" "$XBD_CONF"
}

# --- the state file on a 64 KiB tmpfs that is full: the save names ENOSPC ---
case_full_disk() {
	local mnt=$XBD_TMP/small reply
	mkdir -p "$mnt" && mount -t tmpfs -o size=64k xbd-e2e-full "$mnt" ||
		{ xbd_fail full_disk_named_when_saving "cannot mount a tmpfs"; return; }
	e2e_defer umount -l "$mnt"
	xbd_stop TERM
	sed -i "s|^file = .*|file = $mnt/state|" "$XBD_CONF"
	xbd_start || { xbd_fail full_disk_named_when_saving "xdpband did not start"; return; }
	xbd_cli ban 192.0.2.77 >/dev/null
	dd if=/dev/zero of="$mnt/filler" bs=4k 2>/dev/null # until the disk is full
	reply=$(xbd_request '{"cmd":"save"}')
	if [[ $reply != *"cannot save state to $mnt/state: No space left on device"* ]]; then
		xbd_fail full_disk_named_when_saving "save on a full disk: '$reply'"
	elif compgen -G "$mnt/state.tmp-*" >/dev/null; then
		xbd_fail full_disk_named_when_saving "the temporary file was left behind"
	else
		xbd_pass full_disk_named_when_saving
	fi
	rm -f "$mnt/filler"
	xbd_stop TERM
}

case_check_files
if xbd_start; then
	case_big_list
	case_fifo_reload
	case_full_disk
else
	for c in "${CASES[@]:1}"; do xbd_fail "$c" "the daemon did not start"; done
fi
xbd_stop TERM
((E2E_FAILED == 0))
