#!/usr/bin/env bash
# e2e_libapi.sh BUILD - the application library as an application gets it: `make install`
# into a temporary DESTDIR puts the shared and static libraries, the headers, the pkg-config
# file and the man page in place, the shared library exports exactly the public API under its
# soname, and the example service docs/examples/udp_cookie.c builds against the installed copy
# through `pkg-config --cflags --libs xdpban` (and statically). Then, with xdpband running in a
# private pair of namespaces (limit 3), the example serves UDP on a veth: good cookies pass,
# the 4th bad cookie of a source bans it (reported by the library, logged by the daemon, its
# packets dropped at XDP), and after the daemon restarts with new maps the example reopens its
# handle (-ESTALE) and bans a second source in them.
#
# Everything it makes (the install tree, the namespaces, the daemon, the example, the pins) is
# removed on any exit, through the daemon helpers' cleanup (tests/e2e/e2e_lib.sh). Needs root; skips without it.
# shellcheck disable=SC2317 # the case functions are called through e2e_case
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

CASES=(install_lays_out_the_library exports_only_the_api example_builds_with_pkg_config
	example_builds_static good_cookies_pass fourth_bad_cookie_bans is_banned_from_the_example
	reopens_after_daemon_restart)
xbd_begin l "${CASES[@]}"
readonly ROOT=$XBD_TMP/root LIBDIR=$XBD_TMP/root/usr/lib
readonly PORT=6969
readonly API=(xdpban_close xdpban_is_banned xdpban_open xdpban_report xdpban_status_name
	xdpban_strerror)

# pkg-config on the installed tree: DESTDIR is the sysroot of its paths. Its words, trimmed.
pc() {
	local out words
	out=$(PKG_CONFIG_PATH=$LIBDIR/pkgconfig PKG_CONFIG_SYSROOT_DIR=$ROOT pkg-config "$@") || return 1
	read -ra words <<<"$out"
	echo "${words[*]}"
}

case_install() {
	local f
	e2e_run make --no-print-directory -s install BUILD="$build" DESTDIR="$ROOT" PREFIX=/usr \
		SYSCONFDIR=/etc || return 1
	for f in usr/lib/libxdpban.so.1 usr/lib/libxdpban.so usr/lib/libxdpban.a \
		usr/lib/pkgconfig/xdpban.pc usr/include/xdpban.h usr/include/xdpban_report.h \
		usr/share/man/man3/libxdpban.3 usr/sbin/xdpband; do
		[[ -e $ROOT/$f ]] || { E2E_WHY="make install did not install $f"; return 1; }
	done
	e2e_expect "libxdpban.so" libxdpban.so.1 "$(readlink "$LIBDIR/libxdpban.so")" &&
		e2e_expect "pkg-config --libs" "-L$LIBDIR -lxdpban" "$(pc --libs xdpban)" &&
		e2e_expect "pkg-config --cflags" "-I$ROOT/usr/include" "$(pc --cflags xdpban)"
}

case_exports() {
	local soname exported
	soname=$(readelf -d "$LIBDIR/libxdpban.so.1" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
	exported=$(nm -D --defined-only "$LIBDIR/libxdpban.so.1" | awk '{print $3}' | sort | xargs)
	e2e_expect soname libxdpban.so.1 "$soname" &&
		e2e_expect "exported symbols" "${API[*]}" "$exported" &&
		e2e_expect "global symbols of the archive" "${API[*]}" \
			"$(nm --defined-only "$LIBDIR/libxdpban.a" | awk '$2 ~ /^[A-Z]$/ {print $3}' | sort | xargs)"
}

# shellcheck disable=SC2046 # pkg-config's words are meant to split
case_build() {
	e2e_run gcc -std=gnu11 -Wall -Wextra -Werror docs/examples/udp_cookie.c \
		$(pc --cflags --libs xdpban) -o "$XBD_TMP/udp_cookie" || return 1
	e2e_expect "the example's libxdpban" "$LIBDIR/libxdpban.so.1" \
		"$(LD_LIBRARY_PATH=$LIBDIR ldd "$XBD_TMP/udp_cookie" | awk '$1 == "libxdpban.so.1" {print $3}')"
}

# shellcheck disable=SC2046
case_build_static() {
	e2e_run gcc -std=gnu11 -Wall -Wextra -Werror docs/examples/udp_cookie.c \
		$(pc --cflags xdpban) "$LIBDIR/libxdpban.a" $(pc --libs --static libbpf) \
		-o "$XBD_TMP/udp_cookie_static" || return 1
	! ldd "$XBD_TMP/udp_cookie_static" | grep -q libxdpban ||
		{ E2E_WHY="the static build needs libxdpban.so"; return 1; }
}

# client SRC_ADDR DST_ADDR [bad]: a HELLO then a REQ with the cookie (or a wrong one) from the
# sender namespace; prints the reply, or "timeout".
client() {
	ip netns exec "$XBD_NS_S" "$XBD_PY" - "$1" "$2" "$PORT" "${3:-good}" <<'EOF'
import socket, sys
src, dst, port, kind = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((src, 0))
s.settimeout(3) # an example reopening its handle (about a second) answers late
try:
    s.sendto(b"HELLO", (dst, port))
    cookie = s.recv(64)
    if kind == "bad":
        cookie = bytes(b ^ 0xff for b in cookie)
    s.sendto(b"REQ" + cookie, (dst, port))
    print(s.recv(64).decode() if kind == "good" else "sent")
except socket.timeout:
    print("timeout")
EOF
}

example_said() { grep -qF -- "$1" "$XBD_TMP/example.log"; }

case_good() {
	e2e_expect "good cookie" OK "$(client 192.0.2.2 192.0.2.1)" &&
		e2e_expect "good cookie again" OK "$(client 192.0.2.2 192.0.2.1)" || return 1
	xbd_count_is 192.0.2.2 0 || { E2E_WHY="a good cookie was counted"; return 1; }
}

# bad_cookies SRC DST N: N bad cookies from SRC.
bad_cookies() {
	local i
	for ((i = 0; i < $3; i++)); do
		e2e_expect "bad cookie $i from $1" sent "$(client "$1" "$2" bad)" || return 1
	done
}

case_ban() {
	bad_cookies 192.0.2.2 192.0.2.1 3 || return 1
	if ! e2e_wait 50 example_said "bad cookie from ::ffff:192.0.2.2: counted (count 3)" ||
		! xbd_not_banned 192.0.2.2; then
		E2E_WHY="not counted to 3 unbanned"
		return 1
	fi
	bad_cookies 192.0.2.2 192.0.2.1 1 || return 1
	e2e_wait 50 example_said "bad cookie from ::ffff:192.0.2.2: banned (count 4)" ||
		{ E2E_WHY="the 4th bad cookie did not ban: $(tail -1 "$XBD_TMP/example.log")"; return 1; }
	xbd_banned 192.0.2.2 || { E2E_WHY="xdpban query does not show the ban"; return 1; }
	e2e_expect "ban in xdpban bans" "4 reported" "$(xbd_ban_of 192.0.2.2)" &&
		e2e_wait 50 xbd_log_has 192.0.2.2 &&
		e2e_expect "a banned client's HELLO" timeout "$(client 192.0.2.2 192.0.2.1)"
}

case_is_banned() {
	e2e_expect "is_banned, banned" "192.0.2.2 banned" \
		"$("$XBD_TMP/udp_cookie_static" -d "$XBD_PIN" -q 192.0.2.2 2>&1)" &&
		e2e_expect "is_banned, not banned" "198.51.100.2 not banned" \
			"$(LD_LIBRARY_PATH=$LIBDIR "$XBD_TMP/udp_cookie" -d "$XBD_PIN" -q 198.51.100.2 2>&1)"
}

# A stop removes the pins and a start makes new maps (restoring the bans from the state file):
# the example's next report meets -ESTALE, reopens, and counts in the new maps.
case_reopen() {
	xbd_stop TERM
	xbd_start || { E2E_WHY="xdpband did not start again"; return 1; }
	xbd_banned 192.0.2.2 || { E2E_WHY="the ban was not restored"; return 1; }
	bad_cookies 198.51.100.2 198.51.100.1 4 || return 1
	e2e_wait 50 example_said "bad cookie from ::ffff:198.51.100.2: banned (count 4)" ||
		{ E2E_WHY="no ban in the new maps: $(tail -1 "$XBD_TMP/example.log")"; return 1; }
	xbd_banned 198.51.100.2 || E2E_WHY="xdpban query does not show the new ban"
}

e2e_case install_lays_out_the_library case_install
e2e_case exports_only_the_api case_exports
e2e_case example_builds_with_pkg_config case_build
e2e_case example_builds_static case_build_static
xbd_write_conf "[metrics]" "listen = off"
if ! xbd_start; then
	for c in good_cookies_pass fourth_bad_cookie_bans is_banned_from_the_example \
		reopens_after_daemon_restart; do
		xbd_fail "$c" "xdpband did not start"
	done
	e2e_finish
fi
# nsenter, not `ip netns exec`: that mounts a sysfs of its own, without the bpffs and its pins.
nsenter --net="/run/netns/$XBD_NS_R" env LD_LIBRARY_PATH="$LIBDIR" "$XBD_TMP/udp_cookie" \
	-d "$XBD_PIN" "$PORT" >"$XBD_TMP/example.log" 2>&1 &
e2e_defer e2e__kill "$!"
e2e_wait 100 example_said "listening on" || echo "# the example did not start: $(cat "$XBD_TMP/example.log")"
e2e_case good_cookies_pass case_good
e2e_case fourth_bad_cookie_bans case_ban
e2e_case is_banned_from_the_example case_is_banned
e2e_case reopens_after_daemon_restart case_reopen
e2e_finish
