#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make deb: the Debian packages (debian/) into build/deb/, then lintian.
#
# Built with dpkg-buildpackage -us -uc -b in a copy of the tree's files
# (build/deb/src: git's files, tracked or new, or the whole tree without
# git), so the checkout stays clean. debian/changelog is written there
# from VERSION, the release number's one definition, and the maintainer
# of debian/control. lintian's errors fail the build; its warnings are
# printed (and kept in build/deb/lintian.txt).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/build/deb
SRC=$OUT/src

die() { echo "make deb: error: $*" >&2; exit 1; }

for tool in dpkg-buildpackage dh dh_dkms dh_python3 lintian; do
	command -v "$tool" > /dev/null ||
		die "$tool not found (make deps installs debhelper, dh-dkms, dh-python, lintian)"
done

rm -rf "$OUT"
mkdir -p "$SRC"
if git -C "$ROOT" rev-parse --git-dir > /dev/null 2>&1; then
	git -C "$ROOT" ls-files -z --cached --others --exclude-standard |
		(cd "$ROOT" && xargs -0 cp -a --parents -t "$SRC" 2> /dev/null || true)
else
	tar -C "$ROOT" --exclude=./build --exclude=./.cache -cf - . | tar -C "$SRC" -xf -
fi
[ -f "$SRC/debian/control" ] || die "no debian/control copied into $SRC"

version=$(cat "$ROOT/VERSION")
maintainer=$(sed -n 's/^Maintainer: *//p' "$ROOT/debian/control")
when=$(git -C "$ROOT" log -1 --format=%cD 2> /dev/null || date -R)
cat > "$SRC/debian/changelog" <<EOT
esa ($version) unstable; urgency=medium

  * ESA $version.

 -- $maintainer  $when
EOT

(cd "$SRC" && dpkg-buildpackage -us -uc -b) > "$OUT/build.log" 2>&1 ||
	{ tail -30 "$OUT/build.log"; die "dpkg-buildpackage failed (log: $OUT/build.log)"; }
changes=$(ls "$OUT"/esa_*.changes)
lintian --tag-display-limit 0 "$changes" > "$OUT/lintian.txt" 2>&1 || true
cat "$OUT/lintian.txt"
if grep -q '^E: ' "$OUT/lintian.txt"; then
	die "lintian reports errors (above)"
fi
ls "$OUT"/*.deb
