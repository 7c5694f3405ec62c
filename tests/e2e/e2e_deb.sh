#!/usr/bin/env bash
# e2e_deb.sh BUILD - the Debian package and `make uninstall`. `make deb BUILD=BUILD` builds
# BUILD/deb/xdpban_VERSION_ARCH.deb from the source tree (nothing of BUILD reused), lintian
# finds no error in it, `apt-get install` puts every piece where Debian wants it with the unit
# neither enabled nor started, the installed daemon checks the installed config and the CLI
# prints the Makefile's VERSION, the BPF object under /usr/lib/xdpban is the one xdpband
# embeds and the kernel verifies it (loaded into a private bpffs, attached nowhere), an edit
# of the conffile survives a reinstall and an upgrade, and a purge leaves nothing. Then
# `make install` and `make uninstall` into a DESTDIR: only the config is left, and a file
# that is not xdpban's stays.
#
# It installs a package on this machine: it refuses (every case fails, saying why) when xdpban
# is installed already or its files are there, rather than replace or purge someone's install,
# and purges the package it installed on any exit. Needs root; skips without it.
# shellcheck disable=SC2317 # the case functions are called through e2e_case
set -uo pipefail
build=$(realpath -m "${1:-build}")
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

CASES=(make_deb_builds_the_package lintian_finds_no_error package_installs
	installed_programs_run bpf_object_installed_and_verifies conffile_kept_on_reinstall
	conffile_kept_on_upgrade purge_leaves_nothing make_uninstall_leaves_only_the_config)
e2e_require_root deb
export DEBIAN_FRONTEND=noninteractive

VERSION=$(sed -n 's/^VERSION *:= *//p' Makefile)
ARCH=$(dpkg --print-architecture)
MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
readonly VERSION ARCH MULTIARCH
readonly DEB=$build/deb/xdpban_${VERSION}_$ARCH.deb
readonly CONF=/etc/xdpban/xdpban.conf
readonly OBJ=/usr/lib/xdpban/xdpban.bpf.o
# What the package installs that must not be on the machine before, nor after the purge.
readonly OWNED=(/usr/sbin/xdpband /usr/sbin/xdpban /usr/lib/xdpban /etc/xdpban
	/lib/systemd/system/xdpband.service /usr/lib/"$MULTIARCH"/libxdpban.so.1
	/usr/lib/"$MULTIARCH"/libxdpban.so /usr/include/xdpban.h /usr/share/doc/xdpban
	/usr/share/man/man8/xdpband.8.gz /usr/share/bash-completion/completions/xdpban)
readonly EDIT="# e2e_deb.sh: the admin's edit $$"

tmp=$(mktemp -d /tmp/xbdeb.XXXXXX) || exit 1
e2e_defer rm -rf "$tmp"

# present PATH...: the ones of PATH... that exist, on one line.
present() {
	local p found=()
	for p in "$@"; do [[ -e $p || -L $p ]] && found+=("$p"); done
	echo "${found[*]}"
}

# Someone's xdpban, from the package or from `make install PREFIX=/usr`: never touched.
refuse_existing() {
	local there
	if dpkg-query -W -f='${Status}' xdpban >/dev/null 2>&1; then
		e2e_fail_all "xdpban is known to dpkg ($(dpkg-query -W -f='${Status} ${Version}' xdpban)): refusing to replace or purge it; 'apt-get purge xdpban' first"
	fi
	there=$(present "${OWNED[@]}")
	[[ -z $there ]] ||
		e2e_fail_all "$there already on this machine, not from a package: refusing to overwrite or purge them"
}

case_build() {
	rm -f "$DEB"
	e2e_run make --no-print-directory -s deb BUILD="$build" || return 1
	[[ -f $DEB ]] || { E2E_WHY="make deb made no $DEB: $(echo "$build"/deb/*)"; return 1; }
	e2e_expect "the package's version" "$VERSION" "$(dpkg-deb -f "$DEB" Version)" &&
		e2e_expect "the package's name" xdpban "$(dpkg-deb -f "$DEB" Package)"
}

case_lintian() {
	local out rc
	out=$(lintian "$DEB" 2>&1)
	rc=$?
	if grep -q '^E: ' <<<"$out" || ((rc != 0)); then
		E2E_WHY="lintian (exit $rc): $(grep '^E: ' <<<"$out" | head -3 | xargs)"
		return 1
	fi
	echo "lintian: $(grep -c '^W: ' <<<"$out") warnings"
	grep '^W: ' <<<"$out"
	return 0
}

case_install() {
	local conffiles want
	e2e_defer dpkg --purge xdpban
	e2e_run apt-get install -y -q "$DEB" </dev/null || return 1
	e2e_expect "dpkg's status" "install ok installed $VERSION" \
		"$(dpkg-query -W -f='${Status} ${Version}' xdpban)" || return 1
	want=$(printf '%s ' "${OWNED[@]}")
	e2e_expect "the installed files" "${want% }" "$(present "${OWNED[@]}")" || return 1
	conffiles=$(dpkg-query -W -f='${Conffiles}' xdpban | awk '{print $1}' | xargs)
	e2e_expect "the conffiles" "$CONF" "$conffiles" || return 1
	e2e_expect "the fail2ban files, as examples only" \
		"/usr/share/doc/xdpban/examples/fail2ban/action.d/xdpban.conf /usr/share/doc/xdpban/examples/fail2ban/jail.d/xdpban.conf.example" \
		"$(dpkg -L xdpban | grep fail2ban | while read -r f; do [[ -f $f ]] && echo "$f"; done | sort | xargs)" || return 1
	e2e_expect "the unit's ExecStart" "ExecStart=/usr/sbin/xdpband -c $CONF" \
		"$(grep '^ExecStart=' /lib/systemd/system/xdpband.service)" || return 1
	e2e_expect "the unit's ExecReload" "ExecReload=/usr/sbin/xdpban --socket /run/xdpban/xdpban.sock reload" \
		"$(grep '^ExecReload=' /lib/systemd/system/xdpband.service)" || return 1
	# A firewall with the sample config must not start: no unit enabled, no daemon running.
	e2e_expect "the unit's wants links" "" \
		"$(find /etc/systemd/system -name xdpband.service -printf '%p ' 2>/dev/null)" || return 1
	# The installed daemon's, not the test daemons other tests run from their own copies.
	e2e_expect "a running /usr/sbin/xdpband" "" "$(pgrep -f '^/usr/sbin/xdpband( |$)' | xargs)"
}

case_programs() {
	local out rc
	out=$(timeout 20 /usr/sbin/xdpband -t -c "$CONF" -i lo 2>&1)
	rc=$?
	e2e_expect "xdpband -t: exit status" 0 "$rc" || return 1
	e2e_expect "xdpband -t" "$CONF: configuration OK (1 interface, 0 list files, 0 list entries)" \
		"$out" || return 1
	e2e_expect "xdpban --version" "xdpban $VERSION" "$(/usr/sbin/xdpban --version 2>&1)" || return 1
	e2e_expect "the library's pkg-config version" "$VERSION" \
		"$(pkg-config --modversion xdpban 2>&1)"
}

# The object is the program xdpband loads (its skeleton embeds the same bytes), and the kernel
# verifies it: loaded in a mount namespace of its own, onto a private bpffs whose pins go with
# the namespace, attached to nothing.
case_bpf_object() {
	local out
	[[ -f $OBJ ]] || { E2E_WHY="no $OBJ"; return 1; }
	"$E2E_PY" -c 'import sys; sys.exit(open(sys.argv[1], "rb").read() not in open(sys.argv[2], "rb").read())' \
		"$OBJ" /usr/sbin/xdpband ||
		{ E2E_WHY="$OBJ is not the object /usr/sbin/xdpband embeds"; return 1; }
	# shellcheck disable=SC2016 # $1 is the inner shell's
	out=$(unshare --mount --propagation private sh -c '
		mount -t bpf bpf /sys/fs/bpf && mkdir /sys/fs/bpf/xbdeb &&
		bpftool prog loadall "$1" /sys/fs/bpf/xbdeb type xdp && ls /sys/fs/bpf/xbdeb' sh "$OBJ" 2>&1)
	[[ $out == *xdpban* ]] || { E2E_WHY="bpftool prog loadall $OBJ: ${out:0:300}"; return 1; }
}

case_reinstall() {
	echo "$EDIT" >>"$CONF" || return 1
	e2e_run dpkg -i "$DEB" </dev/null || return 1
	e2e_expect "the conffile's last line after a reinstall" "$EDIT" "$(tail -n 1 "$CONF")"
}

# The same package as the next version: a conffile the package did not change is not asked
# about, and the admin's copy stays.
case_upgrade() {
	local next=$VERSION+e2e
	e2e_run dpkg-deb -R "$DEB" "$tmp/pkg" || return 1
	sed -i "s/^Version: .*/Version: $next/" "$tmp/pkg/DEBIAN/control" &&
		e2e_run dpkg-deb -b "$tmp/pkg" "$tmp/next.deb" || return 1
	e2e_run dpkg -i "$tmp/next.deb" </dev/null || return 1
	e2e_expect "the version after the upgrade" "$next" "$(dpkg-query -W -f='${Version}' xdpban)" &&
		e2e_expect "the conffile's last line after an upgrade" "$EDIT" "$(tail -n 1 "$CONF")"
}

case_purge() {
	local left
	e2e_run apt-get purge -y -q xdpban </dev/null || return 1
	left=$(present "${OWNED[@]}" /usr/sbin/xdpban*)
	e2e_expect "what the purge left" "" "$left" || return 1
	e2e_expect "dpkg's status after the purge" "" \
		"$(dpkg-query -W -f='${db:Status-Abbrev}' xdpban 2>/dev/null | xargs)"
}

# `make uninstall` removes what `make install` put with the same variables: the config stays,
# said in one line, and so does a file of someone else's in a directory they share.
case_make_uninstall() {
	local root=$tmp/root out
	mkdir -p "$root/usr/sbin" && echo other >"$root/usr/sbin/other" || return 1
	e2e_run make --no-print-directory -s install BUILD="$build" DESTDIR="$root" PREFIX=/usr \
		SYSCONFDIR=/etc || return 1
	[[ -f $root$OBJ && -f $root/etc/fail2ban/action.d/xdpban.conf ]] ||
		{ E2E_WHY="make install put no $OBJ or fail2ban action under $root"; return 1; }
	out=$(make --no-print-directory -s uninstall BUILD="$build" DESTDIR="$root" PREFIX=/usr \
		SYSCONFDIR=/etc 2>&1) || { E2E_WHY="make uninstall: $out"; return 1; }
	e2e_expect "make uninstall's word on the config" \
		"xdpban: kept $root$CONF, the admin's: remove it by hand" "$(grep -v '^  ' <<<"$out")" &&
		e2e_expect "the files left" "etc/xdpban/xdpban.conf usr/sbin/other" \
			"$(cd "$root" && find . \( -type f -o -type l \) -printf '%P\n' | sort | xargs)"
}

# e2e_case_ok NAME FUNC: e2e_case, returning 0 if it passed.
e2e_case_ok() {
	local failed=$E2E_FAILED
	e2e_case "$@"
	((E2E_FAILED == failed))
}

refuse_existing
if ! e2e_case_ok make_deb_builds_the_package case_build; then
	for c in "${CASES[@]:1:7}"; do e2e_fail "$c" "no package was built"; done
else
	e2e_case lintian_finds_no_error case_lintian
	e2e_case package_installs case_install
	# The cases after it run on what dpkg installed, even if a detail of the install was wrong.
	if [[ $(dpkg-query -W -f='${Status}' xdpban 2>/dev/null) == "install ok installed" ]]; then
		e2e_case installed_programs_run case_programs
		e2e_case bpf_object_installed_and_verifies case_bpf_object
		e2e_case conffile_kept_on_reinstall case_reinstall
		e2e_case conffile_kept_on_upgrade case_upgrade
		e2e_case purge_leaves_nothing case_purge
	else
		for c in installed_programs_run bpf_object_installed_and_verifies \
			conffile_kept_on_reinstall conffile_kept_on_upgrade purge_leaves_nothing; do
			e2e_fail "$c" "the package did not install"
		done
	fi
fi
e2e_case make_uninstall_leaves_only_the_config case_make_uninstall
e2e_finish
