# SPDX-License-Identifier: GPL-2.0
#
# kiwi top-level build. `make` builds kernel/kiwi.ko and userlib (CMake,
# C++20) into build/. `make help` lists the targets.

KDIR ?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
		    $(lastword $(sort $(wildcard /usr/src/linux-headers-*-amd64))))
BUILD ?= $(CURDIR)/build
CMAKE_BUILD := $(BUILD)/user
JOBS ?= $(shell nproc)
DESTDIR ?=
PREFIX ?= /usr
MULTIARCH := $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
PROVIDER_DIR ?= $(PREFIX)/lib/$(MULTIARCH)/libibverbs
KVER = $(shell $(MAKE) -s -C $(KDIR) kernelrelease 2>/dev/null)

.PHONY: all kernel userlib deps install uninstall deb dkms dkms-remove test \
	check-unit check-kunit check-asan check-tsan check-sanitize check-fuzz \
	check-fuzz-long check-vm check-vm-debug check-debug check-pkg check-pkg-full \
	check-pair check-pair-ci check-pair-full \
	check-soak soak check-ulp check-ulp-full check-ulp-debug check-ulp-removal ci-fresh bench bench-sweep bench-profile bench-ulp bench-ulp-profile demo lint clean help

all: kernel userlib

help:
	@echo "make            build kiwi.ko (KDIR=$(KDIR)) and libkiwi into build/"
	@echo "make deps       install the Debian packages make test needs"
	@echo "make ci-fresh   time .ci/run in a freshly bootstrapped Debian 12 (chroot, about 45 min)"
	@echo "make deb        Debian packages kiwi-dkms and libkiwi into build/deb (lintian-checked)"
	@echo "make dkms       this host: kiwi.ko sources to /usr/src/kiwi-VER, dkms add/build/install"
	@echo "make dkms-remove  undo make dkms"
	@echo "make install    install kiwi.ko, libkiwi and its libibverbs config (DESTDIR-aware)"
	@echo "make uninstall  remove what make install installed"
	@echo "make test       run every test tier CI runs"
	@echo "make check-unit | check-kunit | check-fuzz | check-vm   one tier"
	@echo "make check-asan | check-tsan   unit tests under ASan+UBSan / TSan (check-sanitize: both)"
	@echo "make check-fuzz-long  every fuzz target for 10^7 executions (not in CI)"
	@echo "make check-vm-debug  check-vm under the KASAN/lockdep kernel (DEBUG_VM=scenarios)"
	@echo "make check-debug     check-kunit and check-vm-debug in one debug boot (DEBUG_VM=scenarios)"
	@echo "make check-pkg  build the packages; on a fresh Debian 12 root: install (apt resolves Depends, DKMS natively), a second kernel's headers (DKMS hook), use in a guest, purge"
	@echo "make check-pkg-full  check-pkg also booting the second kernel and running make dkms; then all in a guest (DKMS under TCG)"
	@echo "make check-pair two guests: kiwi<->kiwi, kiwi<->siw, every case in short runs (not in make test)"
	@echo "make check-pair-ci  the subset of check-pair that make test runs (one boot plus the short soak and the ULP smoke cases)"
	@echo "make check-pair-full  every combination and flavour, long sweeps (not in CI)"
	@echo "make check-soak netem loss, connection churn, faults mid-transfer, short (soak: long, not in CI)"
	@echo "make check-ulp  NVMe-oF, NFS/RDMA, iSER over kiwi and siw, device removal (make test runs a smoke version kiwi<->kiwi)"
	@echo "make check-ulp-full  the same with normal sizes and every removal step (not in CI)"
	@echo "make check-ulp-debug  check-ulp on the debug kernel's ULP flavour (not in CI)"
	@echo "make check-ulp-removal  kiwi removed under NVMe-oF, NFS over RDMA and iSER I/O; NVMe-oF error recovery and teardown races (kiwi-kiwi, ~14 min, not in make test)"
	@echo "make bench      benchmarks: wire library, then kiwi/siw/TCP in two guests (~20 min)"
	@echo "make bench-sweep  two-guest bench plus rxe, 8 B-1 MiB, -q 16, -b (~1 h)"
	@echo "make bench-profile  perf in both guests: 64 KiB ib_write_bw, then iperf3 moving as many octets (kiwi-kiwi)"
	@echo "make bench-ulp  fio over NVMe-oF and NFS: kiwi, siw and the TCP transports"
	@echo "make bench-ulp-profile  context switches per I/O and perf profiles of both guests: fio over NVMe-oF with kiwi and nvme-tcp"
	@echo "make demo       boot QEMU guests and show kiwi working"
	@echo "make lint       checkpatch --strict, sparse, W=1; clang-format, clang-tidy"

kernel:
	@test -n "$(KDIR)" || { echo "no kernel build tree: run 'make deps' or set KDIR" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

userlib:
	cmake -S $(CURDIR) -B $(CMAKE_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(CMAKE_BUILD) -j $(JOBS)

deps:
	bash scripts/deps.sh

ci-fresh:
	bash scripts/ci-fresh.sh

install: all
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_PATH=$(DESTDIR) INSTALL_MOD_DIR=updates \
		modules_install
	-test -n "$(DESTDIR)" || depmod -a $(KVER)
	install -D -m 0644 $(CMAKE_BUILD)/userlib/libkiwi-rdmav34.so \
		$(DESTDIR)$(PROVIDER_DIR)/libkiwi-rdmav34.so
	install -D -m 0644 userlib/kiwi.driver $(DESTDIR)/etc/libibverbs.d/kiwi.driver

# Packages and DKMS: debian/, scripts/build-deb.sh, scripts/dkms-src.sh.
KIWI_VERSION = $(shell sed -n 's/^\#define KIWI_FW_VERSION "\(.*\)"$$/\1/p' kernel/kiwi.h)

deb:
	bash scripts/build-deb.sh $(BUILD)/deb

dkms:
	bash scripts/dkms-src.sh --dkms-conf /usr/src/kiwi-$(KIWI_VERSION)
	dkms add -m kiwi -v $(KIWI_VERSION)
	dkms build -m kiwi -v $(KIWI_VERSION)
	dkms install -m kiwi -v $(KIWI_VERSION)

dkms-remove:
	-dkms remove -m kiwi -v $(KIWI_VERSION) --all
	rm -rf /usr/src/kiwi-$(KIWI_VERSION)

uninstall:
	rm -f $(DESTDIR)/lib/modules/$(KVER)/updates/kiwi.ko
	-test -n "$(DESTDIR)" || depmod -a $(KVER)
	rm -f $(DESTDIR)$(PROVIDER_DIR)/libkiwi-rdmav34.so
	rm -f $(DESTDIR)/etc/libibverbs.d/kiwi.driver

test:
	bash scripts/run-tests.sh

check-unit: userlib
	ctest --test-dir $(CMAKE_BUILD) --output-on-failure

check-asan:
	JOBS=$(JOBS) bash scripts/check-sanitize.sh address

check-tsan:
	JOBS=$(JOBS) bash scripts/check-sanitize.sh thread

check-sanitize:
	JOBS=$(JOBS) bash scripts/check-sanitize.sh address thread

check-kunit:
	bash tests/kunit/run.sh

check-fuzz:
	bash tests/fuzz/run.sh

# Every parser for 10^7 executions (hours on two cores; not in CI).
check-fuzz-long:
	FUZZ_RUNS=10000000 bash tests/fuzz/run.sh

check-vm: all
	bash tests/vm/run.sh

# DEBUG_VM: scenarios for check-vm-debug (default: all of them).
check-vm-debug: all
	bash tests/vm/debug.sh $(DEBUG_VM)

# check-kunit and the DEBUG_VM scenarios in one boot of the debug kernel.
check-debug: all
	bash tests/vm/debug.sh --kunit $(DEBUG_VM)

check-pkg:
	bash tests/vm/pkg/run.sh

check-pkg-full:
	bash tests/vm/pkg/run.sh --boot-new-kernel --make-dkms --reinstall
	bash tests/vm/pkg/run.sh --full

check-pair: all
	bash tests/vm/pair/ci.sh

check-pair-ci: all
	bash tests/vm/pair/ci.sh --ci

check-pair-full: all
	bash tests/vm/pair/ci.sh --full

# The load and fault tests: check-soak is the short version, soak the long one.
check-soak: all
	bash tests/vm/soak/run.sh --quick

soak: all
	bash tests/vm/soak/run.sh

check-ulp: all
	bash tests/vm/pair/ulp.sh

check-ulp-full: all
	bash tests/vm/pair/ulp.sh --full

check-ulp-debug: all
	bash tests/vm/pair/ulp.sh --debug

check-ulp-removal: all
	bash tests/vm/pair/ulp.sh --removal

bench: all
	bash tests/bench/run.sh
	bash tests/bench/pair.sh

bench-sweep: all
	bash scripts/deps.sh --bench
	bash tests/bench/pair.sh --sweep

bench-profile: all
	bash tests/bench/profile.sh

bench-ulp: all
	bash tests/bench/ulp.sh

bench-ulp-profile: all
	bash tests/bench/ulp-profile.sh

demo: all
	bash scripts/demo.sh

lint:
	bash scripts/lint.sh

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -rf $(BUILD)
