#!/usr/bin/env bash
# e2e_completion.sh BUILD - the bash completion of xdpban and xdpband (deploy/xdpban.bash) as
# `make install` installs it: sourced into this shell, driven the way bash drives it
# (COMP_WORDS, COMP_CWORD, then the function), with COMPREPLY checked: the commands, the
# options of a command and the global ones (and `-`, standard input, after `lists load`), the
# layers after `lists clear|add|del` and the files after `lists clear LAYER`, the
# keys of `set` (the same list the CLI names when a key is unknown, and the rules of limits of
# each class), a command's option value
# (files, interfaces), the daemon's options, and after `unban` the prefixes a daemon lists,
# from a fake daemon found through $XDPBAN_SOCKET. Needs no root; installs into, and listens
# in, a directory of its own under /tmp, and removes it and the fake daemon at exit.
set -uo pipefail
build=$(realpath "${1:-build}")
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

tmp=$(mktemp -d /tmp/xbcomp.XXXXXX) || exit 1
e2e_defer rm -rf "$tmp"
completions=$tmp/root/usr/share/bash-completion/completions

# complete_words WORD...: COMPREPLY, sorted, one line, for the command line WORD... whose
# last word is the one being completed.
complete_words() {
	local fn=_$1
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	"$fn" || return 1
	printf '%s\n' "${COMPREPLY[@]}" | sort | xargs
}

expect_words() { # WANT WORD...
	local want=$1 got
	shift
	got=$(complete_words "$@")
	e2e_expect "completion of '$*'" "$want" "$got"
}

case_installed() {
	e2e_run make --no-print-directory -s install BUILD="$build" DESTDIR="$tmp/root" \
		PREFIX=/usr SYSCONFDIR=/etc || return 1
	[[ -f $completions/xdpban && $(readlink "$completions/xdpband") == xdpban ]] ||
		{ E2E_WHY="make install did not install $completions/xdpban and its xdpband link"; return 1; }
	# shellcheck source=deploy/xdpban.bash
	source "$completions/xdpban" && complete -p xdpban xdpband >/dev/null ||
		{ E2E_WHY="sourcing the completion did not register both programs"; return 1; }
	PATH=$tmp/root/usr/sbin:$PATH
	[[ $(command -v xdpban) == "$tmp/root/usr/sbin/xdpban" ]]
}

case_commands() {
	expect_words "ban bans events help lists query reload report set stats status top unban" xdpban "" &&
		expect_words "set stats status" xdpban s &&
		expect_words "reload report" xdpban re &&
		expect_words "--json" xdpban reload --j &&
		expect_words "unban" xdpban unb &&
		expect_words "ban bans" xdpban help ba &&
		expect_words "add clear del load show" xdpban lists "" &&
		expect_words "allow deny never-ban trusted" xdpban lists clear "" &&
		expect_words "allow deny never-ban trusted" xdpban lists add "" &&
		expect_words "never-ban" xdpban lists del n &&
		expect_words "--comment --config" xdpban lists add deny 192.0.2.1 --co &&
		expect_words "" xdpban lists add deny "" &&
		touch "$tmp/one.list" && expect_words "$tmp/one.list" xdpban lists clear deny "$tmp/one." &&
		expect_words "--allow" xdpban lists load --al &&
		expect_words "--ignore-errors" xdpban lists load --deny --ig &&
		expect_words "- --allow --config --deny --help --ignore-errors --pin-dir --socket --trusted --verbose --version" \
			xdpban lists load --deny - &&
		expect_words "--config --help --json --pin-dir --socket --verbose --version" xdpban lists show -
}

case_options() {
	expect_words "--config --help --pin-dir --socket --verbose --version" xdpban -- &&
		expect_words "--comment --config --for --help --pin-dir --socket --verbose --version" \
			xdpban ban 192.0.2.1 -- &&
		expect_words "--config --help --json --pin-dir --socket --verbose --version" \
			xdpban --socket /x.sock query -- &&
		expect_words "--for" xdpban ban --f &&
		expect_words "--since --socket" xdpban events --s &&
		expect_words "" xdpban events --since "" # a time or a number: nothing to offer
}

# The keys offered are the keys `set` takes: the same list the CLI gives for a wrong key, and
# a rule of limits of each class.
case_set_keys() {
	local known classes field class
	known=$(xdpban --socket "$tmp/none.sock" set frob 1 2>&1 | sed -n 's/.*(known: \(.*\))$/\1/p' |
		tr -d ',' | xargs -n1 | sort | xargs)
	[[ -n $known ]] || { E2E_WHY="set frob 1 named no known keys"; return 1; }
	# and the rules of limits of each class, named as `set errors` names the classes
	classes=$(xdpban --socket "$tmp/none.sock" set errors frob 2>&1 |
		sed -n 's/.*(one of \(.*\), or none alone)$/\1/p' | tr -d ',')
	[[ -n $classes ]] || { E2E_WHY="set errors frob named no classes"; return 1; }
	for field in limit window ban-time; do
		for class in $classes; do known+=" $field.$class"; done
	done
	known=$(xargs -n1 <<<"$known" | sort | xargs)
	expect_words "$known" xdpban set "" &&
		expect_words "limit.malformed limit.probe limit.protocol limit.reported" xdpban set limit. &&
		expect_words "hop-tolerance" xdpban set ho &&
		expect_words "" xdpban set limit ""
}

case_values() {
	: >"$tmp/sock-a" && : >"$tmp/sock-b" || return 1
	expect_words "$tmp/sock-a $tmp/sock-b" xdpban --socket "$tmp/sock-" &&
		expect_words "" xdpban ban 192.0.2.1 --for ""
}

case_daemon_options() {
	expect_words "--check --config --detach --help --interface --verbose --version" xdpband -- &&
		expect_words "lo" xdpband -i l &&
		expect_words "$tmp/sock-a" xdpband --config "$tmp/sock-a"
}

# After `unban`, the prefixes that `xdpban bans` lists: here a fake daemon's two bans, found
# through $XDPBAN_SOCKET as the CLI finds a real one.
case_unban_addresses() {
	local sock=$tmp/fake.sock
	"$E2E_PY" - "$sock" >"$tmp/fake.log" 2>&1 <<-'EOF' &
		import json, socket, sys
		s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
		s.bind(sys.argv[1]); s.listen(4)
		ban = {"reason": "errors", "count": 11, "seconds_left": 3600, "started": None}
		reply = {"ok": True, "bans": [dict(ban, prefix="192.0.2.7"),
		                              dict(ban, prefix="2001:db8:1::/64")]}
		while True:
		    c, _ = s.accept()
		    req = json.loads(c.makefile("rb").readline())
		    c.sendall((json.dumps(reply if req["cmd"] == "bans" else {"ok": False, "error": "no"}) + "\n").encode())
		    c.close()
	EOF
	e2e_defer e2e__kill "$!"
	e2e_wait 100 test -S "$sock" || { E2E_WHY="the fake daemon never listened"; return 1; }
	XDPBAN_SOCKET=$sock expect_words "192.0.2.7 2001:db8:1::/64" xdpban unban "" &&
		XDPBAN_SOCKET=$sock expect_words "2001:db8:1::/64" xdpban unban 2001 &&
		expect_words "192.0.2.7 2001:db8:1::/64" xdpban --socket "$sock" unban "" &&
		expect_words "" xdpban --socket "$tmp/none.sock" --pin-dir "$tmp" unban ""
}

if ! e2e_case installed_by_make_install case_installed; then
	for c in commands options set_keys option_values daemon_options unban_addresses; do
		e2e_fail "$c" "the completion is not installed"
	done
	e2e_finish
fi
e2e_case commands case_commands
e2e_case options case_options
e2e_case set_keys case_set_keys
e2e_case option_values case_values
e2e_case daemon_options case_daemon_options
e2e_case unban_addresses case_unban_addresses
e2e_finish
