#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: scripts/build-deb.sh [OUTDIR]
#
# `make deb`: builds the Debian packages kiwi-dkms and libkiwi with
# dpkg-buildpackage (debhelper, dh-dkms) from a copy of this tree's
# tracked and untracked, not ignored files, so the checkout gets no build
# droppings, and runs lintian on the result. The .deb, .buildinfo and
# .changes files go to OUTDIR (default build/deb). Exit status 0 only if
# the build worked and lintian reports no error or warning.

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$(realpath -m "${1:-$REPO/build/deb}")
version=$(cd "$REPO" && dpkg-parsechangelog -SVersion)
work=$out/src
src=$work/kiwi-$version

rm -rf "$out"
mkdir -p "$src"
(cd "$REPO" && git ls-files -co --exclude-standard -z |
	xargs -0 -I{} find {} -maxdepth 0 -type f -print0 |
	tar --null -T - -cf -) | tar -xf - -C "$src"
start=$(date +%s)
(cd "$src" && dpkg-buildpackage -b -us -uc) > "$out/build.log" 2>&1 || {
	tail -n 40 "$out/build.log"
	echo "build-deb: dpkg-buildpackage failed (log: $out/build.log)" >&2
	exit 1
}
echo "build-deb: packages built in $(($(date +%s) - start)) s"
mv "$work"/*.deb "$work"/*.buildinfo "$work"/*.changes "$out/"
rm -rf "$work"
ls -l "$out"/*.deb
echo "build-deb: lintian"
lintian --fail-on error,warning --display-info --pedantic "$out"/*.changes
echo "build-deb: lintian clean"
