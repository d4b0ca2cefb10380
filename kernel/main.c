// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: module entry, "rdma link add NAME type kiwi netdev DEV" and the
 * list of kiwi devices that follows net_device events.
 *
 * kiwi keeps its own device list: the RDMA core's lookups by driver id
 * cannot tell kiwi devices from other RDMA_DRIVER_UNKNOWN drivers.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_arp.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rtnetlink.h>
#include <net/net_namespace.h>
#include <rdma/rdma_netlink.h>

#include "kiwi.h"

/* All kiwi devices from newlink until dealloc_driver. */
static LIST_HEAD(kiwi_devices);
/* Protects kiwi_devices; nests inside RTNL (netdev notifier). */
static DEFINE_MUTEX(kiwi_devices_lock);

static struct kiwi_device *kiwi_find_by_netdev(struct net_device *ndev)
{
	struct kiwi_device *kdev;

	lockdep_assert_held(&kiwi_devices_lock);
	list_for_each_entry(kdev, &kiwi_devices, list)
		if (kdev->netdev == ndev)
			return kdev;
	return NULL;
}

/**
 * kiwi_device_list_add - enter a new device before it registers
 * @kdev: the device, bound to kdev->netdev
 *
 * Return: 0 or -EEXIST if the net_device already has a kiwi device.
 */
int kiwi_device_list_add(struct kiwi_device *kdev)
{
	int rv = -EEXIST;

	mutex_lock(&kiwi_devices_lock);
	if (!kiwi_find_by_netdev(kdev->netdev)) {
		list_add_tail(&kdev->list, &kiwi_devices);
		rv = 0;
	}
	mutex_unlock(&kiwi_devices_lock);
	return rv;
}

/* Called from dealloc_driver; a device that was never listed is fine. */
void kiwi_device_unlist(struct kiwi_device *kdev)
{
	mutex_lock(&kiwi_devices_lock);
	list_del_init(&kdev->list);
	mutex_unlock(&kiwi_devices_lock);
}

/* Take a registration reference on @ndev's kiwi device, if any. */
static struct kiwi_device *kiwi_get_by_netdev(struct net_device *ndev)
{
	struct kiwi_device *kdev;

	mutex_lock(&kiwi_devices_lock);
	kdev = kiwi_find_by_netdev(ndev);
	if (kdev && !ib_device_try_get(&kdev->ibdev))
		kdev = NULL;
	mutex_unlock(&kiwi_devices_lock);
	return kdev;
}

/**
 * kiwi_device_recheck - catch up with events missed during registration
 * @kdev: a device that ib_register_device() just registered; it may have
 *        been unregistered and freed already, so it is only used if it is
 *        still on the list
 *
 * Notifier events that ran before the device was registered found no
 * registered device; replay the current state, including removal.
 */
void kiwi_device_recheck(struct kiwi_device *kdev)
{
	struct net_device *ndev = NULL;
	struct kiwi_device *cur;

	rtnl_lock();
	mutex_lock(&kiwi_devices_lock);
	list_for_each_entry(cur, &kiwi_devices, list)
		if (cur == kdev && ib_device_try_get(&kdev->ibdev))
			ndev = kdev->netdev;
	mutex_unlock(&kiwi_devices_lock);
	if (ndev) {
		kiwi_device_netdev_event(kdev,
					 ndev->reg_state == NETREG_REGISTERED ?
					 NETDEV_CHANGE : NETDEV_UNREGISTER);
		ib_device_put(&kdev->ibdev);
	}
	rtnl_unlock();
}

static int kiwi_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct kiwi_device *kdev;

	kdev = kiwi_get_by_netdev(ndev);
	if (!kdev)
		return NOTIFY_DONE;
	kiwi_device_netdev_event(kdev, event);
	ib_device_put(&kdev->ibdev);
	return NOTIFY_OK;
}

static struct notifier_block kiwi_netdev_nb = {
	.notifier_call = kiwi_netdev_event,
};

static bool kiwi_netdev_supported(struct net_device *ndev)
{
	return ndev->type == ARPHRD_ETHER || ndev->type == ARPHRD_LOOPBACK;
}

static int kiwi_newlink(const char *name, struct net_device *ndev)
{
	struct ib_device *ibdev;

	if (!kiwi_netdev_supported(ndev)) {
		pr_info_ratelimited("%s on %s: not an Ethernet or loopback net_device\n",
				    name, ndev->name);
		return -EOPNOTSUPP;
	}
	ibdev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (ibdev) {
		ib_device_put(ibdev);
		return -EEXIST;
	}
	return kiwi_device_create(name, ndev);
}

static struct rdma_link_ops kiwi_link_ops = {
	.type = "kiwi",
	.newlink = kiwi_newlink,
};

/*
 * Unregister every kiwi device. ib_unregister_device() also waits for an
 * unregistration queued by the netdev notifier that is running already,
 * so when the list is empty no kiwi op can run any more.
 */
static void kiwi_unregister_all(void)
{
	struct kiwi_device *kdev;

	for (;;) {
		mutex_lock(&kiwi_devices_lock);
		kdev = list_first_entry_or_null(&kiwi_devices,
						struct kiwi_device, list);
		if (kdev)
			get_device(&kdev->ibdev.dev);
		mutex_unlock(&kiwi_devices_lock);
		if (!kdev)
			break;
		ib_unregister_device(&kdev->ibdev);
		put_device(&kdev->ibdev.dev);
	}
}

struct workqueue_struct *kiwi_wq;

static int __init kiwi_init(void)
{
	int rv;

	rv = kiwi_tx_wq_init();
	if (rv)
		return rv;
	kiwi_wq = alloc_workqueue("kiwi", WQ_MEM_RECLAIM, 0);
	if (!kiwi_wq) {
		rv = -ENOMEM;
		goto out_tx;
	}
	rv = kiwi_cm_init();
	if (rv)
		goto out_wq;
	rv = register_netdevice_notifier(&kiwi_netdev_nb);
	if (rv)
		goto out_cm;
	rdma_link_register(&kiwi_link_ops);
	return 0;

out_cm:
	kiwi_cm_exit();
out_wq:
	destroy_workqueue(kiwi_wq);
out_tx:
	kiwi_tx_wq_exit();
	return rv;
}

static void __exit kiwi_exit(void)
{
	rdma_link_unregister(&kiwi_link_ops);
	kiwi_unregister_all();
	unregister_netdevice_notifier(&kiwi_netdev_nb);
	kiwi_cm_exit();
	destroy_workqueue(kiwi_wq);
	kiwi_tx_wq_exit();
	/* MRs are freed by RCU callbacks (mem.c). */
	rcu_barrier();
}

module_init(kiwi_init);
module_exit(kiwi_exit);

MODULE_DESCRIPTION("kiwi software iWARP RNIC");
MODULE_AUTHOR("kiwi developers");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_VERSION(KIWI_FW_VERSION);
MODULE_ALIAS_RDMA_LINK("kiwi");
