#!/usr/bin/env bash
# e2e_readme.sh BUILD [README] - every command of the README still runs as written. It reads the
# README's fenced code blocks (README.md, or the file given) and checks each command line of
# the shell blocks (```sh), one result line each:
#   xdpban ...    runs BUILD/xdpban with those words against a socket, a pin directory and a
#                 config that do not exist (any the command names are replaced by them), so
#                 nothing can change: it must get as far as asking the daemon or the maps
#                 (exit 1, "no daemon answers" or "cannot open pinned map"), never to a usage
#                 error (exit 2: an unknown command or option, a bad argument); 0 for help;
#   xdpband ...   runs BUILD/xdpband with -t (it loads nothing) and a config that does not
#                 exist: it must get as far as reading the config (exit 1, "cannot read
#                 config"), never to a usage error (exit 2); 0 for -h and -V;
#   make ...      `make -n` with the same targets and variables succeeds (the targets exist);
#   anything else its program is installed (a path: the file is there and executable).
# Each config block (```ini) must pass `xdpband -t -i lo`, with every list, key and password
# file it names replaced by a file of the test's own and the state file by one that does not
# exist. A code block with no language fails: it would go unchecked. Before the README, the
# checks are run on commands that must fail (an unknown option, command and target), so that
# a checker that cannot fail fails.
#
# It needs no root and changes nothing: no daemon is started, no map is opened, make only
# prints. Everything it writes is in a temporary directory, removed at exit.
# shellcheck disable=SC2317 # the check functions are called through e2e_case
set -uo pipefail
build=$(realpath -- "${1:-build}")
readme=$(realpath -- "${2:-$(dirname "$0")/../../README.md}")
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

readonly RUN_TIMEOUT=10 # seconds any one command may take
# What xdpban says once its command line is parsed and it looks for the daemon or the maps.
readonly REACHED_XDPBAN='no daemon answers|does not answer|cannot open pinned map'
readonly REACHED_XDPBAND='cannot read config'

if [[ ! -x $build/xdpban || ! -x $build/xdpband ]]; then
	e2e_fail readme "$build/xdpban and $build/xdpband are not built (make)"
	exit 1
fi
if [[ ! -f $readme ]]; then
	e2e_fail readme "no file $readme"
	exit 1
fi
tmp=$(mktemp -d /tmp/xbreadme.XXXXXX) || exit 1
e2e_defer rm -rf "$tmp"
readonly NO_SOCKET=$tmp/no-daemon.sock NO_PINS=$tmp/no-pins NO_CONFIG=$tmp/no-config.conf

# Runs CMD... with a time limit and no input; sets rc, out (stdout and stderr) and first (the
# first line of stderr).
run() {
	timeout "$RUN_TIMEOUT" env -u XDPBAN_SOCKET "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
	out=$(cat "$tmp/out" "$tmp/err")
	first=$(head -n 1 "$tmp/err")
}

# The words of a command, with the value of each option named in $1 (a |-list) replaced by the
# value that follows it in $2, ... as "OPT VALUE" or "OPT=VALUE"; sets args and replaced (the
# options that were there).
swap_options() {
	local -n swaps=$1
	shift
	local w opt next=''
	args=() replaced=' '
	for w in "$@"; do
		if [[ -n $next ]]; then
			args+=("${swaps[$next]}")
			next=''
			continue
		fi
		for opt in "${!swaps[@]}"; do
			if [[ $w == "$opt" ]]; then
				next=$opt
			elif [[ $w == "$opt="* ]]; then
				w="$opt=${swaps[$opt]}"
				replaced+="$opt "
			fi
		done
		[[ -n $next ]] && replaced+="$next "
		args+=("$w")
	done
}

# check_xdpban WORD...: the words after "xdpban".
check_xdpban() {
	local -A safe=([--socket]=$NO_SOCKET [--pin-dir]=$NO_PINS [--config]=$NO_CONFIG)
	local opt pre=()
	swap_options safe "$@"
	for opt in --socket --pin-dir --config; do
		[[ $replaced == *" $opt "* ]] || pre+=("$opt" "${safe[$opt]}")
	done
	run "$build/xdpban" "${pre[@]}" "${args[@]}"
	case $rc in
	0) return 0 ;;
	1) [[ $first =~ $REACHED_XDPBAN ]] && return 0
	   E2E_WHY="exit 1 before reaching the daemon or the maps: ${first:-no message}" ;;
	2) E2E_WHY="a usage error: ${first:-no message}" ;;
	124) E2E_WHY="still running after $RUN_TIMEOUT s" ;;
	*) E2E_WHY="exit $rc: ${first:-no message}" ;;
	esac
	return 1
}

# check_xdpband WORD...: the words after "xdpband"; run with -t unless they ask for help or
# the version.
check_xdpband() {
	local -A safe=([-c]=$NO_CONFIG [--config]=$NO_CONFIG)
	local w info=0 check=0 pre=()
	for w in "$@"; do
		case $w in
		-h | --help | -V | --version) info=1 ;;
		-t | --check) check=1 ;;
		esac
	done
	swap_options safe "$@"
	((info || check)) || pre+=(-t)
	[[ $replaced == *" -c "* || $replaced == *" --config "* ]] || pre+=(-c "$NO_CONFIG")
	((info)) && pre=()
	run "$build/xdpband" "${pre[@]}" "${args[@]}"
	case $rc in
	0) ((info)) && return 0
	   E2E_WHY="exit 0 on a config that does not exist: ${out%%$'\n'*}" ;;
	1) ((!info)) && [[ $first =~ $REACHED_XDPBAND ]] && return 0
	   E2E_WHY="exit 1 before reading the config: ${first:-no message}" ;;
	2) E2E_WHY="a usage error: ${first:-no message}" ;;
	124) E2E_WHY="still running after $RUN_TIMEOUT s" ;;
	*) E2E_WHY="exit $rc: ${first:-no message}" ;;
	esac
	return 1
}

# check_make WORD...: the targets and variables after "make".
check_make() {
	run make -n --no-print-directory "$@"
	((rc == 0)) && return 0
	E2E_WHY="make -n $* exited $rc: $(grep -m 1 -i 'error\|no rule' "$tmp/err" || echo "$first")"
	return 1
}

# check_program NAME: installed, or a file of the tree that can be run.
check_program() {
	if [[ $1 == */* ]]; then
		[[ -f $1 && -x $1 ]] && return 0
		E2E_WHY="$1 is not an executable file of the tree"
		return 1
	fi
	command -v "$1" >/dev/null && return 0
	E2E_WHY="$1 is not installed"
	return 1
}

# check_command WORD...: one command line of a shell block, split into words.
check_command() {
	case $1 in
	xdpban) check_xdpban "${@:2}" ;;
	xdpband) check_xdpband "${@:2}" ;;
	make) check_make "${@:2}" ;;
	*) check_program "$1" ;;
	esac
}

# check_config FILE: a config block, with the files it names made here.
check_config() {
	local conf=$tmp/config.conf
	"$E2E_PY" - "$1" "$tmp" >"$conf" <<'EOF' || { E2E_WHY="cannot rewrite $1"; return 1; }
import os, re, sys
block, tmp = sys.argv[1], sys.argv[2]
lists = ("allow", "trusted", "deny", "never-ban")
secrets = {"password-file": b"secret\n", "key-file": b"k" * 48}
section, state_seen, n = "", False, 0
for line in open(block):
    m = re.match(r"\[([a-z]+)\]", line)
    if m:
        section = m.group(1)
        state_seen |= section == "state"
    m = re.match(r"([a-z-]+)(\s*=\s*)(\S+)(.*)", line)
    if m and (m.group(1) in lists or m.group(1) in secrets or
              (section == "state" and m.group(1) == "file")):
        n += 1
        path = os.path.join(tmp, "file%d" % n)
        if m.group(1) in secrets:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.write(fd, secrets[m.group(1)])
            os.close(fd)
        elif m.group(1) in lists:
            open(path, "w").close()
        line = m.group(1) + m.group(2) + path + m.group(4) + "\n"
    sys.stdout.write(line)
if not state_seen:
    sys.stdout.write("\n[state]\nfile = %s\n" % os.path.join(tmp, "no-state"))
EOF
	run "$build/xdpband" -t -c "$conf" -i lo
	((rc == 0)) && return 0
	E2E_WHY="xdpband -t exited $rc: ${first:-${out%%$'\n'*}}"
	return 1
}

# A check that must fail: PASS when it does.
refuses() {
	if check_command "$@"; then
		E2E_WHY="the checker took '$*'"
		return 1
	fi
	E2E_WHY=
}

# --- the checker can fail ---------------------------------------------------------------------

e2e_case "readme checker refuses: xdpban ban --no-such-option 192.0.2.1" \
	refuses xdpban ban --no-such-option 192.0.2.1
e2e_case "readme checker refuses: xdpban no-such-command" refuses xdpban no-such-command
e2e_case "readme checker refuses: xdpban lists clear no-such-layer" \
	refuses xdpban lists clear no-such-layer
e2e_case "readme checker refuses: xdpband --no-such-option" refuses xdpband --no-such-option
e2e_case "readme checker refuses: make no-such-target" refuses make no-such-target
e2e_case "readme checker refuses: xb-no-such-program" refuses xb-no-such-program

# --- the README --------------------------------------------------------------------------------

# One record per item of the README, fields separated by the unit separator: "cmd", the line
# number, the command as written, then its words (shell-split, comments dropped, continued
# lines joined); "ini", the line number and the block's file; "bad", the line number and why.
"$E2E_PY" - "$readme" "$tmp" >"$tmp/items" <<'EOF' || { e2e_fail readme "cannot read $readme"; exit 1; }
import shlex, sys
path, tmp = sys.argv[1], sys.argv[2]
US = "\x1f"
SHELL = ("sh", "bash", "shell", "console")
lang, start, pending, pending_at, n_ini = None, 0, "", 0, 0
block = []
def emit(*fields):
    print(US.join(str(f) for f in fields))
for no, line in enumerate(open(path), 1):
    line = line.rstrip("\n")
    if line.lstrip().startswith("```"):
        if lang is None:
            lang, start, block = line.strip()[3:].strip(), no, []
            if not lang:
                emit("bad", no, "a code block with no language goes unchecked: mark it sh, ini or another")
            continue
        if lang == "ini":
            n_ini += 1
            name = "%s/block%d.ini" % (tmp, n_ini)
            open(name, "w").write("\n".join(block) + "\n")
            emit("ini", start, name)
        if pending:
            emit("bad", pending_at, "a line continued past the end of its block")
        lang, pending = None, ""
        continue
    if lang is None:
        continue
    block.append(line)
    if lang not in SHELL:
        continue
    if not pending:
        pending_at = no
    if line.endswith("\\"):
        pending += line[:-1] + " "
        continue
    text, pending = pending + line, ""
    try:
        words = shlex.split(text, comments=True)
    except ValueError as e:
        emit("bad", pending_at, "cannot split '%s': %s" % (text.strip(), e))
        continue
    if words:
        emit("cmd", pending_at, " ".join(words), *words)
if lang is not None:
    emit("bad", start, "a code block that is never closed")
EOF

n_cmd=0 n_ini=0
while IFS=$'\x1f' read -r -a rec; do
	case ${rec[0]} in
	cmd)
		n_cmd=$((n_cmd + 1))
		e2e_case "readme:${rec[1]}: ${rec[2]}" check_command "${rec[@]:3}" ;;
	ini)
		n_ini=$((n_ini + 1))
		e2e_case "readme:${rec[1]}: config block (xdpband -t)" check_config "${rec[2]}" ;;
	bad)
		e2e_fail "readme:${rec[1]}" "${rec[2]}" ;;
	esac
done <"$tmp/items"
((n_cmd > 0)) || e2e_fail readme "no command found in the shell blocks (\`\`\`sh) of $readme"
echo "readme: $n_cmd commands and $n_ini config blocks of $readme checked"
e2e_finish
