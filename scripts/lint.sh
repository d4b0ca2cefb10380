#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make lint: static checks of kiwi's code.
#
#   1. checkpatch.pl --strict (from Debian's linux-source-6.1, cached in
#      /var/cache/kiwi/checkpatch/ with spelling.txt and
#      const_structs.checkpatch) on every kernel C file and header of kiwi;
#   2. a W=1 build of kiwi.ko with sparse on every file (C=2), in a private
#      copy of the tree so the shared tree's objects are not touched and
#      every file really is compiled;
#   3. clang-format (.clang-format) on the C++ of userlib/, tests/unit/ and
#      tests/bench/, and
#      clang-tidy (userlib/.clang-tidy, findings are errors) on libkiwi's
#      sources, from a private CMake configure for compile_commands.json;
#   4. Documentation/checklist.md matches the checklist items the tests
#      name (scripts/checklist.sh --check, also a check-unit test): a test
#      that names a new item without the table regenerated fails CI.
#
# Exits non-zero on any finding in kiwi's files or if the build fails.
# Environment: KDIR (kernel build tree), KIWI_CACHE (default /var/cache/kiwi),
# LINT_JOBS (default 2).
set -u -o pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${KIWI_CACHE:-/var/cache/kiwi}
CP_DIR=$CACHE/checkpatch
SRC_TAR=/usr/src/linux-source-6.1.tar.xz
JOBS=${LINT_JOBS:-2}
KDIR=${KDIR:-$(ls -d /lib/modules/"$(uname -r)"/build 2>/dev/null ||
	ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n1)}

die() {
	echo "lint: $*" >&2
	exit 2
}

# Extract checkpatch and its data files once; concurrent runs race benignly
# because each extracts into its own directory and renames it into place.
ensure_checkpatch() {
	local tmp f

	[ -x "$CP_DIR/checkpatch.pl" ] && [ -f "$CP_DIR/spelling.txt" ] &&
		[ -f "$CP_DIR/const_structs.checkpatch" ] && return 0
	[ -f "$SRC_TAR" ] || die "$SRC_TAR missing (apt-get install linux-source-6.1)"
	mkdir -p "$CACHE" || die "cannot create $CACHE"
	tmp=$(mktemp -d "$CACHE/checkpatch.XXXXXX") || die "mktemp failed"
	tar -xJf "$SRC_TAR" -C "$tmp" --strip-components=2 \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch ||
		die "cannot extract checkpatch from $SRC_TAR"
	for f in checkpatch.pl spelling.txt const_structs.checkpatch; do
		[ -f "$tmp/$f" ] || die "$f missing in $SRC_TAR"
	done
	chmod +x "$tmp/checkpatch.pl"
	rm -rf "$CP_DIR"
	mv "$tmp" "$CP_DIR" 2>/dev/null || rm -rf "$tmp"
	[ -x "$CP_DIR/checkpatch.pl" ] || die "checkpatch not installed in $CP_DIR"
}

# kiwi's kernel sources: kernel/ and kernel/proto/ (not proto/user/, which
# is user-space glue) plus the uAPI header.
kernel_files() {
	cd "$ROOT" &&
		ls kernel/*.[ch] kernel/proto/*.[ch] include/uapi/rdma/kiwi-abi.h \
			2>/dev/null
}

TRACE_HDR=kernel/kiwi_trace.h
TRACE_IGNORE=OPEN_ENDED_LINE,PARENTHESIS_ALIGNMENT,COMPLEX_MACRO,TRAILING_SEMICOLON,MACRO_ARG_REUSE

run_checkpatch() {
	local out

	mapfile -t files < <(kernel_files | grep -vx "$TRACE_HDR")
	[ "${#files[@]}" -gt 0 ] || die "no kernel files found under $ROOT"
	out=$(cd "$ROOT" && perl "$CP_DIR/checkpatch.pl" --strict --no-tree \
		--terse --no-summary --show-types -f "${files[@]}" 2>&1)
	# The tracepoint header is written in the TRACE_EVENT() language of
	# include/trace/events/, which breaks these rules by design.
	out+=$(cd "$ROOT" && perl "$CP_DIR/checkpatch.pl" --strict --no-tree \
		--terse --no-summary --show-types --ignore "$TRACE_IGNORE" \
		-f "$TRACE_HDR" 2>&1)
	if [ -n "$out" ]; then
		echo "$out"
		echo "lint: checkpatch --strict: findings above" >&2
		return 1
	fi
	echo "lint: checkpatch --strict: ${#files[@]} files clean"
}

# W=1 + sparse build in a scratch copy; report diagnostics in kiwi files.
run_build() {
	local tmp log rc findings

	[ -n "$KDIR" ] && [ -d "$KDIR" ] || die "no kernel build tree (set KDIR)"
	command -v sparse >/dev/null || die "sparse not installed"
	tmp=$(mktemp -d /tmp/kiwi-lint.XXXXXX) || die "mktemp failed"
	# shellcheck disable=SC2064
	trap "rm -rf '$tmp'" RETURN
	(cd "$ROOT" && tar -cf - Kbuild kernel include) | tar -xf - -C "$tmp" ||
		die "cannot copy the tree"
	find "$tmp" \( -name '*.o' -o -name '.*.cmd' -o -name '*.mod' \
		-o -name '*.mod.c' -o -name '*.ko' \) -delete
	log=$tmp/build.log
	make -C "$KDIR" M="$tmp" W=1 C=2 -j"$JOBS" modules >"$log" 2>&1
	rc=$?
	findings=$(grep -E '(warning|error):' "$log" |
		grep -E "^$tmp/(kernel|include)/" | sed "s|$tmp/||")
	if [ -n "$findings" ]; then
		echo "$findings"
		echo "lint: W=1/sparse: findings above" >&2
		return 1
	fi
	if [ "$rc" -ne 0 ]; then
		sed "s|$tmp/||g" "$log" | tail -n 30
		echo "lint: kernel build failed" >&2
		return 1
	fi
	echo "lint: W=1 build + sparse (C=2): clean"
}

# C++: formatting of all C++ sources, clang-tidy on the provider itself.
run_cxx() {
	local tmp files rc=0

	command -v clang-format >/dev/null && command -v clang-tidy >/dev/null ||
		die "clang-format/clang-tidy not installed (make deps)"
	mapfile -t files < <(cd "$ROOT" && find userlib tests/unit tests/bench \
		\( -name '*.cc' -o -name '*.h' \) | sort)
	if ! (cd "$ROOT" && clang-format --style=file \
		--dry-run -Werror "${files[@]}"); then
		echo "lint: clang-format: findings above" >&2
		rc=1
	else
		echo "lint: clang-format: ${#files[@]} files clean"
	fi
	tmp=$(mktemp -d /tmp/kiwi-tidy.XXXXXX) || die "mktemp failed"
	# shellcheck disable=SC2064
	trap "rm -rf '$tmp'" RETURN
	cmake -S "$ROOT" -B "$tmp" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
		>"$tmp/cmake.log" 2>&1 || {
		tail -n 20 "$tmp/cmake.log"
		die "cmake configure failed"
	}
	if ! (cd "$ROOT" && clang-tidy -p "$tmp" --quiet --warnings-as-errors='*' \
		userlib/src/*.cc 2>"$tmp/tidy.err"); then
		grep -v 'warnings generated' "$tmp/tidy.err" >&2
		echo "lint: clang-tidy: findings above" >&2
		return 1
	fi
	echo "lint: clang-tidy: libkiwi clean"
	return $rc
}

ensure_checkpatch
status=0
run_checkpatch || status=1
run_build || status=1
run_cxx || status=1
bash "$ROOT/scripts/checklist.sh" --check || status=1
exit $status
