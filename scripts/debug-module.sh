#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: scripts/debug-module.sh DIR [MAKE_VAR=VALUE...]
#
# Build kiwi's kernel modules against the debug kernel (scripts/debug-kernel.sh,
# built first if its cache entry is cold) in DIR, a copy of the sources
# (Kbuild, include/, kernel/, tests/) kept between runs so only what changed
# is rebuilt; the checkout's own objects are never touched. MAKE_VARs go to
# Kbuild (KIWI_KUNIT=1 builds kiwi_kunit.ko instead of kiwi.ko). Prints the
# debug kernel's kernel.env path on stdout; exit status non-zero if the
# kernel or the module does not build.

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JOBS=${JOBS:-2}
dir=${1:?usage: scripts/debug-module.sh DIR [MAKE_VAR=VALUE...]}
shift

env_file=$("$REPO/scripts/debug-kernel.sh")
# shellcheck source=/dev/null
. "$env_file"

mkdir -p "$dir"
(cd "$REPO" && rsync -a --delete --relative \
	--exclude='*.o' --exclude='*.ko' --exclude='*.mod' --exclude='*.mod.c' \
	--exclude='.*.cmd' --exclude='*.order' --exclude='*.symvers' \
	./Kbuild ./include ./kernel ./tests "$dir/")
echo "debug-module: building in $dir against $KIWI_DEBUG_RELEASE $*" >&2
nice make -s -C "$KIWI_DEBUG_KDIR" M="$dir" -j"$JOBS" "$@" modules >&2
echo "$env_file"
