#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# libkiwi's own smoke test in the guest (userlib/test/vm-provider.sh): every
# object kind and ring path through libibverbs, ibv_devices and ibv_devinfo.

exec bash "$(dirname "$0")/../../../userlib/test/vm-provider.sh"
