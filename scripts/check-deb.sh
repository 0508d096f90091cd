#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The Debian packages on a fresh Debian 12, as a newcomer installs them:
# make deb, apt-get install ./build/deb/*.deb from nothing, the installed
# tools, library and Python package answer, then apt-get purge leaves
# none of their files (nor DKMS's copy of the module). Prints TAP.
#
#   make check-deb      runs this in a fresh Debian 12 root
#                       (fresh-root-check, FRESH_ROOT_CHECK=PATH)
#   scripts/check-deb.sh --fresh-root
#                       runs it here: only on a disposable machine, since
#                       it installs the build dependencies and the
#                       packages and purges the packages again.
#
# dkms builds no module here: the root runs the host's kernel, whose
# headers are not installed; the headers apt pulls in (dkms recommends
# them) are a 6.1 that is not running, which dkms.conf skips saying why
# (selftests/kmod/test_dkms_vm.sh builds and loads it in the VM).
set -u
cd "$(dirname "$0")/.." || exit 1
. selftests/kmod/lib.sh		# TAP, expect
[ "${1:-}" = --fresh-root ] || {
	echo "usage: $0 --fresh-root (installs and purges packages: see the header)" >&2
	exit 2
}
export DEBIAN_FRONTEND=noninteractive
PACKAGES="esa-dkms esa-tools libesa0 libesa-dev python3-esa"

# The build dependencies, from debian/control (one list of them).
build_deps=$(awk '/^Build-Depends:/ { on = 1; sub(/^Build-Depends:/, ""); print; next }
	on && /^[^ \t]/ { exit } on' debian/control | tr -d '\n' | tr -s ' ')
check "apt-get update" apt-get update -q
# (and pkg-config, which the check below runs as a user of libesa-dev would)
check "build dependencies (debian/control)" apt-get satisfy -y -q \
	"build-essential, dpkg-dev, lintian, pkg-config, $build_deps"
check "make deb" make deb
check "apt-get install ./build/deb/*.deb" apt-get install -y -q ./build/deb/*.deb
version=$(cat VERSION)
expect "aggctl --version" 0 "^aggctl .*$version" aggctl --version
expect "pkg-config --modversion libesa" 0 "^$version\$" pkg-config --modversion libesa
expect "python3 -c 'import esa'" 0 '^/usr/lib/.*/libesa.so.0$' \
	python3 -c 'import esa; print(esa.library_path)'
expect "esa-switch.service is installed" 0 'ExecStart=/usr/libexec/esa/esa-switch start' \
	cat /lib/systemd/system/esa-switch.service
expect "DKMS has the module source" 0 "esa/$version: added|esa/$version, .*" dkms status esa

# Every file the packages installed, then purge: none may remain.
# (not directories, nor symlinks to them: /lib is one, merged /usr)
files=$(dpkg -L $PACKAGES | sort -u | while read -r f; do
	[ ! -d "$f" ] && { [ -f "$f" ] || [ -L "$f" ]; } && echo "$f"; done)
[ -n "$files" ] && ok "the packages installed $(wc -l <<< "$files") files" ||
	not_ok "the packages installed no files"
check "apt-get purge" apt-get purge -y -q $PACKAGES
left=$(while read -r f; do [ -e "$f" ] || [ -L "$f" ] && echo "$f"; done <<< "$files")
[ -z "$left" ] && ok "no installed file remains" ||
	not_ok "files remain after purge: $(tr '\n' ' ' <<< "$left")"
[ ! -e /var/lib/dkms/esa ] && [ ! -e "/usr/src/esa-$version" ] &&
	ok "DKMS's copy of the module is gone" ||
	not_ok "DKMS's copy remains: $(ls -d /var/lib/dkms/esa /usr/src/esa-"$version" 2>&1 | tr '\n' ' ')"
expect "no esa unit left enabled" 1 '' \
	bash -c 'ls /etc/systemd/system/*/esa-* 2> /dev/null | grep .'
tap_done
