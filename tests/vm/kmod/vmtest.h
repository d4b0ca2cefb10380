/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kiwi_vmtest.ko: a test module for the VM scenarios (never part of the
 * product). It widens race windows of kiwi.ko with kprobe delays, checks
 * invariants of kiwi's socket use, and runs kernel-ULP tests over rdma_cm
 * with kernel QPs (fast-register, Local Invalidate) that user space cannot
 * drive. tests/vm/kmod/README.md describes the interface.
 */
#ifndef KIWI_VMTEST_H
#define KIWI_VMTEST_H

#include <linux/atomic.h>
#include <linux/types.h>

/* vmtest_probe.c */
extern bool vmtest_probes;		/* the kernel has kprobes */
extern atomic_t vmtest_delays;		/* delays that ran */
extern atomic_t vmtest_bad_reads;	/* kiwi read a socket it did not lock */
extern atomic_t vmtest_bad_releases;	/* kiwi released a socket with its callbacks */

int vmtest_probe_init(void);
void vmtest_probe_exit(void);

/**
 * struct vmtest_delay - one busy-wait injected into a kiwi function
 * @sym: the function (kallsyms name)
 * @at_return: delay when it returns, else when it is entered
 * @ms: milliseconds to spin
 * @count: how many calls to delay (then the rule is spent)
 * @caller: entry delays only: the caller's symbol must start with this
 * @arg0: if not 0, only calls whose first argument is this value
 */
struct vmtest_delay {
	char sym[64];
	bool at_return;
	unsigned int ms;
	unsigned int count;
	char caller[64];
	unsigned long arg0;
};

int vmtest_delay_set(const struct vmtest_delay *d);
int vmtest_delay_parse(const char *spec, struct vmtest_delay *d);
void vmtest_delay_clear(void);
void vmtest_delay_pause(void);
bool vmtest_delay_wait_started(unsigned int timeout_ms);

/* vmtest_main.c: where the kernel-ULP tests connect */
extern char *vmtest_dev;
extern char *vmtest_addr;
extern int vmtest_port;

/* vmtest_iwcm.c */
int vmtest_iwcm_dropreq(char *result, size_t len);

/* vmtest_ulp.c */
int vmtest_ulp_run(const char *test, char *result, size_t len);
void vmtest_ulp_exit(void);

#endif
