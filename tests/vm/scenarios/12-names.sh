#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Any device name, and no foreign device claimed. kiwi on eth0 named
# eth0_kiwi, Linux siw (scripts/siw.sh) and rxe on veths in the same guest:
# - the kiwi device is served by libkiwi under that name and, after
#   `rdma dev set ... name`, under its new one (kiwi_provider_smoke, rping);
# - with only /etc/libibverbs.d/kiwi.driver configured, libkiwi claims the
#   kiwi device and neither siw nor rxe, not even a siw device renamed
#   kiwi_siw (libkiwi matches kiwi/abi_version, never a name);
# - with every provider configured each device works with its own.
# kiwi-lab: timeout=420

. "$(dirname "$0")/lib/common.bash"

IP=${KIWI_MY_IP:-10.77.0.1}
SMOKE=$KIWI_BUILD/user/userlib/kiwi_provider_smoke
KIWI_VENDOR=0x6b6977

vt_clean_links
grep -q '^kiwi ' /proc/modules || vt_check "modprobe kiwi" modprobe kiwi

# 1. A kiwi device named like an interface.
vt_link_add eth0_kiwi eth0 || vt_die "rdma link add eth0_kiwi"
vt_eq "eth0_kiwi/kiwi/abi_version" \
	"$(cat /sys/class/infiniband/eth0_kiwi/kiwi/abi_version)" 4
vt_eq "vt_kiwi_devs finds it" "$(vt_kiwi_devs | tr '\n' ' ')" "eth0_kiwi "

# 2. Foreign devices: siw and rxe, each on a veth.
siw_ko=$("$KIWI_SRC/scripts/siw.sh" --quiet) || vt_die "cannot build siw"
modprobe -a ib_core libcrc32c rdma_rxe || vt_die "modprobe rdma_rxe"
insmod "$siw_ko" || vt_die "insmod $siw_ko"
vt_veth_pair vsiw0 vsiw1 || vt_die "veth vsiw"
vt_veth_pair vrxe0 vrxe1 || vt_die "veth vrxe"
vt_check "rdma link add siw0" rdma link add siw0 type siw netdev vsiw0
vt_check "rdma link add rxe0" rdma link add rxe0 type rxe netdev vrxe0
vt_check "rename siw0 to kiwi_siw" rdma dev set siw0 name kiwi_siw
vt_eq "kiwi devices among all" "$(vt_kiwi_devs | tr '\n' ' ')" "eth0_kiwi "

# only_kiwi CMD...: CMD with kiwi.driver as libibverbs' only configuration.
only_kiwi() {
	mkdir -p "$VT_TMP/ibvd"
	cp /etc/libibverbs.d/kiwi.driver "$VT_TMP/ibvd/"
	unshare -m sh -c 'mount --bind "$0" /etc/libibverbs.d && exec "$@"' \
		"$VT_TMP/ibvd" env IBV_SHOW_WARNINGS=1 "$@"
}

# 3. libkiwi alone: the kiwi device and nothing else.
out=$(only_kiwi ibv_devices 2>&1)
vt_log "$out"
# The device table (libibverbs' warnings name the unclaimed devices too).
table=$(grep -v 'libibverbs: Warning' <<<"$out")
vt_check "libkiwi claims eth0_kiwi" grep -qw eth0_kiwi <<<"$table"
vt_check "libkiwi leaves kiwi_siw (siw) alone" \
	test -z "$(grep -w kiwi_siw <<<"$table")"
vt_check "libkiwi leaves rxe0 alone" test -z "$(grep -w rxe0 <<<"$table")"
vt_eq "devices libibverbs found no provider for (siw, rxe)" \
	"$(grep -c 'no userspace device-specific driver' <<<"$out")" 2

# 4. Every provider: each device served by its own.
info=$(ibv_devinfo -d eth0_kiwi 2>&1)
vt_check "eth0_kiwi: iWARP, kiwi's vendor id" \
	grep -q "vendor_id:[[:space:]]*$KIWI_VENDOR" <<<"$info"
info=$(ibv_devinfo -d kiwi_siw 2>&1)
if grep -q 'transport:[[:space:]]*iWARP' <<<"$info" &&
	! grep -q "$KIWI_VENDOR" <<<"$info"; then
	vt_pass "kiwi_siw works with libsiw (iWARP, not kiwi's vendor id)"
else
	vt_fail "kiwi_siw with every provider: $info"
fi
info=$(ibv_devinfo -d rxe0 2>&1)
vt_check "rxe0 works with librxe (InfiniBand transport)" \
	grep -q 'transport:[[:space:]]*InfiniBand' <<<"$info"
vt_check "kiwi_provider_smoke on eth0_kiwi" "$SMOKE" eth0_kiwi

vt_rping "over eth0_kiwi" 7201 3

# 5. Rename the kiwi device: everything follows the new name.
vt_check "rename eth0_kiwi to rnic_b" rdma dev set eth0_kiwi name rnic_b
vt_eq "rnic_b/kiwi/abi_version" \
	"$(cat /sys/class/infiniband/rnic_b/kiwi/abi_version 2>&1)" 4
vt_check "rdma link show rnic_b/1 on eth0" \
	grep -q 'rnic_b/1 state ACTIVE.*netdev eth0' <<<"$(rdma link show rnic_b/1)"
out=$(only_kiwi ibv_devices 2>&1)
vt_check "libkiwi claims rnic_b" grep -qw rnic_b <<<"$out"
vt_check "kiwi_provider_smoke on rnic_b" "$SMOKE" rnic_b
vt_rping "over rnic_b" 7202 3

# 6. Clean up.
vt_link_del rnic_b
rdma link delete kiwi_siw || vt_fail "rdma link delete kiwi_siw"
rdma link delete rxe0 || vt_fail "rdma link delete rxe0"
ip link del vsiw0
ip link del vrxe0
rmmod siw || vt_fail "rmmod siw"
rmmod rdma_rxe || vt_fail "rmmod rdma_rxe"
vt_finish
