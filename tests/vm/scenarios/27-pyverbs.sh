#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rdma-core's pyverbs suite (object and query modules) against kiwi0
# through libkiwi (userlib/test/vm-pyverbs.sh).

exec bash "$(dirname "$0")/../../../userlib/test/vm-pyverbs.sh"
