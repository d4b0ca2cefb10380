# SPDX-License-Identifier: GPL-2.0
#
# The frame of tests/vm/pkg/run.sh (sourced): the verdict lines, one 'PASS
# STEP (Ns)' or 'FAIL STEP (Ns)' per step, then 'N passed, N failed'; and
# the chroot the packages are installed in ($root).

passed=0 failed=0

# summary: the last line; status 0 only if every step passed.
summary() {
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
}

# step NAME CMD...: run CMD as the step NAME and print its verdict.
step() {
	local name=$1 t0=$SECONDS
	shift
	echo "===== check-pkg: $name"
	if "$@"; then
		passed=$((passed + 1))
		echo "PASS $name ($((SECONDS - t0))s)"
		return 0
	fi
	failed=$((failed + 1))
	echo "FAIL $name ($((SECONDS - t0))s)"
	return 1
}

# running_kernel: in the chroot `uname -r` says $kver, the kernel the guest
# boots, as on a machine running it: Debian's DKMS postinst builds for the
# running and the newest kernel then (the host's own release, which has no
# modules in the root, would make it build for all of them), and
# kiwi-dkms's for the rest. apt runs dpkg with its own PATH (DPkg::Path),
# so the wrapper's folder goes there too, by APT_CONFIG. Both live in /tmp,
# which upper_clean ignores.
running_kernel() {
	local bin=$root/tmp/kiwi-pkg-bin

	mkdir -p "$bin" &&
		printf '#!/bin/sh\n[ "$*" = -r ] && echo %s && exit 0\nexec /usr/bin/uname "$@"\n' \
			"$kver" > "$bin/uname" &&
		chmod 0755 "$bin/uname" &&
		echo 'DPkg::Path "/tmp/kiwi-pkg-bin:/usr/sbin:/usr/bin:/sbin:/bin";' > "$bin/apt.conf"
}

# in_root_run CMD...: run CMD in the chroot $root at nice 10 (DKMS builds
# there), in the lab's clean environment; the packages in $DEBS, the kernels
# $kver, $kver2, $boot_kver2 and $reinstall, the base root's package list
# $BASE_PKGS.
in_root_run() {
	nice -n 10 chroot "$root" env -i \
		PATH=/tmp/kiwi-pkg-bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root TERM=dumb LANG=C.UTF-8 APT_CONFIG=/tmp/kiwi-pkg-bin/apt.conf \
		DEBIAN_FRONTEND=noninteractive KIWI_SRC="$REPO" KIWI_BUILD="$REPO/build" \
		PKG_DEBS="$DEBS" PKG_KVER="$kver" PKG_KVER2="${kver2:-}" \
		PKG_KVER2_IMAGE="${boot_kver2:-}" PKG_REINSTALL="${reinstall:-}" \
		PKG_BASE_PKGS="${BASE_PKGS:-}" "$@" < /dev/null
}

# in_root SCRIPT: run the bash SCRIPT so.
in_root() {
	in_root_run bash "$1"
}
