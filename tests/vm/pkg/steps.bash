# SPDX-License-Identifier: GPL-2.0
#
# The verdict lines of tests/vm/pkg/run.sh and fresh.sh (sourced): one
# 'PASS STEP (Ns)' or 'FAIL STEP (Ns)' per step, then 'N passed, N failed'.

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
