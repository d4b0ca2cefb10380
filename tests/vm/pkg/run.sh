#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check-pkg`: build the Debian packages kiwi-dkms and libkiwi from
# this tree with scripts/build-deb.sh (dpkg-buildpackage, lintian must be
# clean), then boot a QEMU guest without kiwi (--kiwi-ko none) that
# installs, uses and purges them (tests/vm/pkg/packages.sh). Options go to
# scripts/lab/run-scenario. Ends with 'N passed, N failed'.

set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)

if ! bash "$REPO/scripts/build-deb.sh" "$REPO/build/deb"; then
	echo "check-pkg: the packages do not build cleanly"
	echo "0 passed, 1 failed"
	exit 1
fi
"$REPO/scripts/lab/run-scenario" --kiwi-ko none "$@" \
	"$REPO/tests/vm/pkg/packages.sh"
