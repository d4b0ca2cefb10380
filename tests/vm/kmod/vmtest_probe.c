// SPDX-License-Identifier: GPL-2.0
/*
 * kiwi_vmtest: kprobes on kiwi.ko and on the TCP functions it calls.
 *
 * Delays: one rule at a time spins (mdelay) at the entry or the return of
 * a kiwi function, so another CPU can run into the window the rule holds
 * open. Checks, always on while the module is loaded:
 *  - tcp_read_sock() with a kiwi actor must run on a socket its caller
 *    locked (owned by a process, or its spinlock held in softirq);
 *  - sock_release() must never see kiwi's socket callbacks installed: a
 *    released socket lives on as an orphan, possibly after kiwi.ko is gone.
 */
#include <linux/delay.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <net/sock.h>

#include "vmtest.h"

bool vmtest_probes;
atomic_t vmtest_delays = ATOMIC_INIT(0);
atomic_t vmtest_bad_reads = ATOMIC_INIT(0);
atomic_t vmtest_bad_releases = ATOMIC_INIT(0);

static DEFINE_MUTEX(vmtest_delay_lock);	/* registration of the rule */
static struct vmtest_delay vmtest_rule;
static atomic_t vmtest_left;		/* calls still to delay */
static atomic_t vmtest_started;		/* delays begun since the rule was set */
static struct kprobe vmtest_kp;
static struct kretprobe vmtest_krp;
static bool vmtest_kp_on, vmtest_krp_on;

/* Does code address @addr belong to kiwi.ko (optionally: function @fn)? */
static bool vmtest_is_kiwi(unsigned long addr, const char *fn)
{
	char buf[KSYM_SYMBOL_LEN];

	sprint_symbol(buf, addr);
	if (!strstr(buf, " [kiwi]"))
		return false;
	return !fn || !strncmp(buf, fn, strlen(fn));
}

static void vmtest_spin(void)
{
	if (atomic_dec_if_positive(&vmtest_left) < 0)
		return;
	atomic_inc(&vmtest_started);
	mdelay(vmtest_rule.ms);
	atomic_inc(&vmtest_delays);
}

static bool vmtest_match(struct pt_regs *regs)
{
	if (vmtest_rule.arg0 && regs_get_kernel_argument(regs, 0) !=
	    vmtest_rule.arg0)
		return false;
	return atomic_read(&vmtest_left) > 0;
}

static int vmtest_entry_pre(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long ret = *(unsigned long *)kernel_stack_pointer(regs);

	if (!vmtest_match(regs))
		return 0;
	if (vmtest_rule.caller[0] && !vmtest_is_kiwi(ret, vmtest_rule.caller))
		return 0;
	vmtest_spin();
	return 0;
}

static int vmtest_ret_entry(struct kretprobe_instance *ri,
			    struct pt_regs *regs)
{
	return vmtest_match(regs) ? 0 : 1;
}

static int vmtest_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	vmtest_spin();
	return 0;
}

/* Under vmtest_delay_lock: no more delays, and the probe removed. */
static void vmtest_unprobe(void)
{
	atomic_set(&vmtest_left, 0);
	if (vmtest_kp_on)
		unregister_kprobe(&vmtest_kp);
	if (vmtest_krp_on)
		unregister_kretprobe(&vmtest_krp);
	vmtest_kp_on = false;
	vmtest_krp_on = false;
}

void vmtest_delay_clear(void)
{
	mutex_lock(&vmtest_delay_lock);
	vmtest_unprobe();
	mutex_unlock(&vmtest_delay_lock);
}

/*
 * Stop delaying but keep the probe: a rule for the same place reuses it.
 * vt_rerace sets and ends a rule per round while kiwi calls the probed
 * function on another CPU; one registration for the run instead of one
 * per round (a run that registered and unregistered a kretprobe on
 * kiwi_mr_page each round once oopsed at a call into it, RIP 0, cause not
 * found).
 */
void vmtest_delay_pause(void)
{
	atomic_set(&vmtest_left, 0);
}

/* Under vmtest_delay_lock: is @d's probe the one registered? */
static bool vmtest_probe_kept(const struct vmtest_delay *d)
{
	if (!(d->at_return ? vmtest_krp_on : vmtest_kp_on))
		return false;
	return !strcmp(vmtest_rule.sym, d->sym);
}

/* Under vmtest_delay_lock: probe the place vmtest_rule names. */
static int vmtest_probe(void)
{
	int rv;

	if (vmtest_rule.at_return) {
		memset(&vmtest_krp, 0, sizeof(vmtest_krp));
		vmtest_krp.kp.symbol_name = vmtest_rule.sym;
		vmtest_krp.entry_handler = vmtest_ret_entry;
		vmtest_krp.handler = vmtest_ret;
		vmtest_krp.maxactive = 8;
		rv = register_kretprobe(&vmtest_krp);
		vmtest_krp_on = !rv;
	} else {
		memset(&vmtest_kp, 0, sizeof(vmtest_kp));
		vmtest_kp.symbol_name = vmtest_rule.sym;
		vmtest_kp.pre_handler = vmtest_entry_pre;
		rv = register_kprobe(&vmtest_kp);
		vmtest_kp_on = !rv;
	}
	return rv;
}

int vmtest_delay_set(const struct vmtest_delay *d)
{
	bool kept;
	int rv;

	if (!vmtest_probes)
		return -EOPNOTSUPP;
	mutex_lock(&vmtest_delay_lock);
	kept = vmtest_probe_kept(d);
	if (!kept)
		vmtest_unprobe();
	/* No delay starts while the rule changes. */
	atomic_set(&vmtest_left, 0);
	vmtest_rule = *d;
	atomic_set(&vmtest_started, 0);
	atomic_set(&vmtest_left, d->count);
	rv = kept ? 0 : vmtest_probe();
	if (rv)
		atomic_set(&vmtest_left, 0);
	mutex_unlock(&vmtest_delay_lock);
	if (rv)
		pr_err("kiwi_vmtest: cannot probe %s: %d\n", d->sym, rv);
	return rv;
}

/* "SYM[@ret],MS[,COUNT[,CALLER]]" */
int vmtest_delay_parse(const char *spec, struct vmtest_delay *d)
{
	char buf[192], *s = buf, *tok;
	int field = 0;

	memset(d, 0, sizeof(*d));
	d->count = 1;
	strscpy(buf, spec, sizeof(buf));
	strim(buf);
	while ((tok = strsep(&s, ","))) {
		switch (field++) {
		case 0:
			if (strlen(tok) > 4 && !strcmp(tok + strlen(tok) - 4,
						       "@ret")) {
				tok[strlen(tok) - 4] = 0;
				d->at_return = true;
			}
			strscpy(d->sym, tok, sizeof(d->sym));
			break;
		case 1:
			if (kstrtouint(tok, 0, &d->ms) || d->ms > 5000)
				return -EINVAL;
			break;
		case 2:
			if (kstrtouint(tok, 0, &d->count))
				return -EINVAL;
			break;
		case 3:
			strscpy(d->caller, tok, sizeof(d->caller));
			break;
		default:
			return -EINVAL;
		}
	}
	return d->sym[0] && d->ms ? 0 : -EINVAL;
}

/* Wait until a delay of the current rule has begun. */
bool vmtest_delay_wait_started(unsigned int timeout_ms)
{
	unsigned int i;

	for (i = 0; i < timeout_ms; i += 5) {
		if (atomic_read(&vmtest_started))
			return true;
		usleep_range(5000, 6000);
	}
	return atomic_read(&vmtest_started);
}

/* tcp_read_sock(sk, desc, actor) */
static int vmtest_read_sock_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct sock *sk = (struct sock *)regs_get_kernel_argument(regs, 0);
	unsigned long actor = regs_get_kernel_argument(regs, 2);

	if (!vmtest_is_kiwi(actor, NULL))
		return 0;
	/* Held by anyone, not by us: a check of kiwi's caller, not a lock. */
	if (sk->sk_lock.owned || spin_is_locked(&sk->sk_lock.slock))
		return 0;
	atomic_inc(&vmtest_bad_reads);
	pr_err("kiwi_vmtest: kiwi reads socket %p without its lock (%pS)\n",
	       sk, (void *)actor);
	return 0;
}

/* sock_release(sock) */
static int vmtest_release_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct socket *sock = (struct socket *)regs_get_kernel_argument(regs,
									0);
	struct sock *sk = sock ? sock->sk : NULL;

	if (!sk)
		return 0;
	if (!vmtest_is_kiwi((unsigned long)sk->sk_data_ready, NULL) &&
	    !vmtest_is_kiwi((unsigned long)sk->sk_write_space, NULL) &&
	    !vmtest_is_kiwi((unsigned long)sk->sk_state_change, NULL))
		return 0;
	atomic_inc(&vmtest_bad_releases);
	pr_err("kiwi_vmtest: socket %p released with %pS/%pS/%pS user_data %p\n",
	       sk, sk->sk_data_ready, sk->sk_write_space, sk->sk_state_change,
	       sk->sk_user_data);
	return 0;
}

static struct kprobe vmtest_read_kp = {
	.symbol_name = "tcp_read_sock",
	.pre_handler = vmtest_read_sock_pre,
};

static struct kprobe vmtest_release_kp = {
	.symbol_name = "sock_release",
	.pre_handler = vmtest_release_pre,
};

/*
 * A kernel without kprobes (the debug kernel's minimal config) still gets
 * the kernel-ULP tests that need none; "probes" tells the scenario.
 * register_kprobe() is then the stub that returns -EOPNOTSUPP.
 */
int vmtest_probe_init(void)
{
	int rv;

	rv = register_kprobe(&vmtest_read_kp);
	if (rv == -EOPNOTSUPP)
		return 0;
	if (rv)
		return rv;
	rv = register_kprobe(&vmtest_release_kp);
	if (rv) {
		unregister_kprobe(&vmtest_read_kp);
		return rv;
	}
	vmtest_probes = true;
	return 0;
}

void vmtest_probe_exit(void)
{
	if (!vmtest_probes)
		return;
	vmtest_delay_clear();
	unregister_kprobe(&vmtest_release_kp);
	unregister_kprobe(&vmtest_read_kp);
}
