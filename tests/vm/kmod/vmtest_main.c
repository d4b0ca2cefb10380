// SPDX-License-Identifier: GPL-2.0
/*
 * kiwi_vmtest: module parameters, the test module's whole interface.
 *
 *   dev, addr, port   the kiwi device and the address:port the kernel-ULP
 *                     tests listen on and connect to (set at load time)
 *   delay             write "SYM[@ret],MS[,COUNT[,CALLER]]" to delay the
 *                     next COUNT calls of kiwi's SYM; "off" ends it (the probe
 *                     stays for the next rule at the same place)
 *   probes            Y when the kernel has kprobes (else no delays and no
 *                     socket checks: the kernel-ULP tests still run)
 *   delays            delays run so far (read-only)
 *   bad_reads         tcp_read_sock() calls of kiwi on an unlocked socket
 *   bad_releases      sockets kiwi released with its callbacks installed
 *   run               write a test name (vmtest_ulp.c): it runs in the
 *                     write; read the result from "result"
 */
#include <linux/module.h>

#include "vmtest.h"

char *vmtest_dev = "kiwi0";
module_param_named(dev, vmtest_dev, charp, 0444);
MODULE_PARM_DESC(dev, "kiwi device of the kernel-ULP tests");
char *vmtest_addr = "10.77.0.1";
module_param_named(addr, vmtest_addr, charp, 0444);
MODULE_PARM_DESC(addr, "IPv4 address of that device's netdev");
int vmtest_port = 7490;
module_param_named(port, vmtest_port, int, 0444);
MODULE_PARM_DESC(port, "TCP port of the kernel-ULP tests");

static char vmtest_result[256] = "none";
module_param_string(result, vmtest_result, sizeof(vmtest_result), 0444);
MODULE_PARM_DESC(result, "result of the last test run");

static int vmtest_get_count(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read((atomic_t *)kp->arg));
}

static const struct kernel_param_ops vmtest_count_ops = {
	.get = vmtest_get_count,
};

module_param_named(probes, vmtest_probes, bool, 0444);
MODULE_PARM_DESC(probes, "kprobes work: delays and socket checks are on");
module_param_cb(delays, &vmtest_count_ops, &vmtest_delays, 0444);
MODULE_PARM_DESC(delays, "delays that ran");
module_param_cb(bad_reads, &vmtest_count_ops, &vmtest_bad_reads, 0444);
MODULE_PARM_DESC(bad_reads, "kiwi socket reads without the socket's lock");
module_param_cb(bad_releases, &vmtest_count_ops, &vmtest_bad_releases, 0444);
MODULE_PARM_DESC(bad_releases, "sockets released with kiwi's callbacks");

static int vmtest_set_delay(const char *val, const struct kernel_param *kp)
{
	struct vmtest_delay d;
	int rv;

	if (sysfs_streq(val, "off")) {
		vmtest_delay_pause();
		return 0;
	}
	rv = vmtest_delay_parse(val, &d);
	return rv ? rv : vmtest_delay_set(&d);
}

static const struct kernel_param_ops vmtest_delay_ops = {
	.set = vmtest_set_delay,
};

module_param_cb(delay, &vmtest_delay_ops, NULL, 0200);
MODULE_PARM_DESC(delay, "SYM[@ret],MS[,COUNT[,CALLER]] or off");

static int vmtest_set_run(const char *val, const struct kernel_param *kp)
{
	char name[32];
	int rv;

	strscpy(name, val, sizeof(name));
	strim(name);
	rv = vmtest_ulp_run(name, vmtest_result, sizeof(vmtest_result));
	if (rv < 0)
		return rv;
	pr_info("kiwi_vmtest: %s: %s\n", name, vmtest_result);
	return 0;
}

static const struct kernel_param_ops vmtest_run_ops = {
	.set = vmtest_set_run,
};

module_param_cb(run, &vmtest_run_ops, NULL, 0200);
MODULE_PARM_DESC(run, "run a kernel-ULP test: ulp, inval, regmr, rresp, sendinv, readinv, linvflush, sendinvflush, kqp, kqp-free, dropreq");

static int __init vmtest_init(void)
{
	return vmtest_probe_init();
}

static void __exit vmtest_exit(void)
{
	vmtest_ulp_exit();
	vmtest_probe_exit();
}

module_init(vmtest_init);
module_exit(vmtest_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kiwi VM test helper: race windows, invariants, kernel-ULP tests");
