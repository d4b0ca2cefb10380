#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
#
# Runs provider_load_test against a fake RDMA device tree: a private mount
# namespace with a tmpfs /dev whose /dev/infiniband/uverbsN nodes are
# /dev/null (1:3), and a SYSFS_PATH tree of RNICs: kiwi devices carry
# kiwi/abi_version (KIWI_SYSFS_ABI_FILE) whatever their name ("kiwi0",
# "eth0_kiwi"); "kiwi1" has another uverbs ABI version, "kiwi2" a kiwi/
# abi_version of another ABI; "kiwi_fake" is named like a kiwi device but
# has no kiwi/ group, "other0" is foreign. libibverbs enumerates through
# sysfs when netlink has no RDMA devices and loads libkiwi through
# RDMAV_DRIVERS.
#
# usage: run_load_test.sh TEST_BINARY LIBKIWI_DIR   (exit 77: skipped)
set -eu

bin=$1
libdir=$(realpath "$2") # RDMAV_DRIVERS needs an absolute path

if ! unshare -m true 2>/dev/null; then
	echo "SKIP: cannot create a mount namespace (needs root)"
	exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sys=$tmp/sys
mkdir -p "$sys/class/infiniband_verbs"
echo 6 >"$sys/class/infiniband_verbs/abi_version"
n=0
# NAME:UVERBS_ABI:KIWI_ABI ("-": no kiwi/ group)
# kiwi1 has another uverbs ABI, kiwi2 is a kiwi.ko of ABI 3 (before
# memory windows): neither is claimed.
for dev in kiwi0:4:4 kiwi1:3:4 other0:4:- eth0_kiwi:4:4 kiwi_fake:4:- \
	kiwi2:4:3; do
	IFS=: read -r name uabi kabi <<<"$dev"
	v=$sys/class/infiniband_verbs/uverbs$n
	d=$sys/class/infiniband/$name
	mkdir -p "$v" "$d"
	echo "$name" >"$v/ibdev"
	echo 1:3 >"$v/dev"
	echo "$uabi" >"$v/abi_version"
	echo "4: RNIC" >"$d/node_type"
	if [ "$kabi" != - ]; then
		mkdir "$d/kiwi"
		echo "$kabi" >"$d/kiwi/abi_version"
	fi
	n=$((n + 1))
done

rc=0
unshare -m /bin/bash -c '
	set -e
	mount -t tmpfs kiwi-load-test /dev
	mknod -m 666 /dev/null c 1 3
	mkdir /dev/infiniband
	for i in 0 1 2 3 4 5; do
		mknod -m 666 /dev/infiniband/uverbs$i c 1 3
	done
	exec env KIWI_FAKE_SYSFS=1 SYSFS_PATH="$1" RDMAV_DRIVERS="$2/libkiwi" \
		"$3" </dev/null
' load-test "$sys" "$libdir" "$bin" || rc=$?
exit $rc
