#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
#
# Runs provider_load_test against a fake RDMA device tree: a private mount
# namespace with a tmpfs /dev whose /dev/infiniband/uverbsN nodes are
# /dev/null (1:3), and a SYSFS_PATH tree describing an RNIC "kiwi0", a
# "kiwi1" with another uverbs ABI version and a foreign "other0". libibverbs enumerates through sysfs when netlink has no
# RDMA devices and loads libkiwi through RDMAV_DRIVERS.
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
for dev in kiwi0:1 kiwi1:2 other0:1; do
	name=${dev%:*}
	v=$sys/class/infiniband_verbs/uverbs$n
	mkdir -p "$v" "$sys/class/infiniband/$name"
	echo "$name" >"$v/ibdev"
	echo 1:3 >"$v/dev"
	echo "${dev#*:}" >"$v/abi_version"
	echo "4: RNIC" >"$sys/class/infiniband/$name/node_type"
	n=$((n + 1))
done

rc=0
unshare -m /bin/bash -c '
	set -e
	mount -t tmpfs kiwi-load-test /dev
	mknod -m 666 /dev/null c 1 3
	mkdir /dev/infiniband
	mknod -m 666 /dev/infiniband/uverbs0 c 1 3
	mknod -m 666 /dev/infiniband/uverbs1 c 1 3
	mknod -m 666 /dev/infiniband/uverbs2 c 1 3
	exec env KIWI_FAKE_SYSFS=1 SYSFS_PATH="$1" RDMAV_DRIVERS="$2/libkiwi" \
		"$3" </dev/null
' load-test "$sys" "$libdir" "$bin" || rc=$?
exit $rc
