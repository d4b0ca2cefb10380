# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by the tier scripts. Every lab boot and every tier ends its
# output with one line 'N passed, N failed'.

# last_summary FILE: "PASSED FAILED" from FILE's last such line; nothing if
# it has none (the run died before it could report).
last_summary() {
	grep -E '^[0-9]+ passed, [0-9]+ failed$' "$1" | tail -n 1 |
		awk '{ print $1, $3 }'
}
