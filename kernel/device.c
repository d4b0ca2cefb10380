// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: the ib_device: creation and registration, device and port
 * queries, and following the bound net_device (link state, MTU, address,
 * name, removal).
 */
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>

#include "kiwi.h"

/* Largest message: the 32-bit length of a work completion. */
#define KIWI_MAX_MSG_SIZE	0x80000000U

static enum ib_port_state kiwi_port_state(struct net_device *ndev)
{
	return netif_running(ndev) && netif_carrier_ok(ndev) ?
	       IB_PORT_ACTIVE : IB_PORT_DOWN;
}

static int kiwi_query_device(struct ib_device *ibdev,
			     struct ib_device_attr *attr,
			     struct ib_udata *udata)
{
	if (udata->inlen || udata->outlen)
		return -EINVAL;
	memset(attr, 0, sizeof(*attr));
	attr->sys_image_guid = ibdev->node_guid;
	attr->vendor_id = KIWI_VENDOR_ID;
	attr->fw_ver = KIWI_FW_VERSION_NUM;
	attr->max_mr_size = KIWI_MAX_MR_SIZE;
	attr->page_size_cap = PAGE_SIZE;
	attr->max_qp = KIWI_MAX_QP;
	attr->max_qp_wr = KIWI_MAX_QP_WR;
	/* Memory windows: type 1 and type 2B (PD and QP association). */
	attr->device_cap_flags = IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	attr->max_send_sge = KIWI_MAX_SGE;
	attr->max_recv_sge = KIWI_MAX_SGE;
	attr->max_sge_rd = KIWI_MAX_SGE_RD;
	attr->max_cq = KIWI_MAX_CQ;
	attr->max_cqe = KIWI_MAX_CQE;
	attr->max_mr = KIWI_MAX_MR;
	attr->max_mw = KIWI_MAX_MW;
	attr->max_pd = KIWI_MAX_PD;
	attr->max_qp_rd_atom = KIWI_MAX_IRD;
	attr->max_qp_init_rd_atom = KIWI_MAX_ORD;
	attr->max_res_rd_atom = KIWI_MAX_QP * KIWI_MAX_IRD;
	/*
	 * RFC 7306 atomics run as a compare-and-exchange on the target's
	 * page (kiwi_mr_atomic()): atomic against the host's CPUs too. The
	 * masked forms are the kernel's IB_WR_MASKED_ATOMIC_* (libibverbs
	 * has no verb with masks).
	 */
	attr->atomic_cap = IB_ATOMIC_GLOB;
	attr->masked_atomic_cap = IB_ATOMIC_GLOB;
	attr->max_srq = KIWI_MAX_SRQ;
	attr->max_srq_wr = KIWI_MAX_SRQ_WR;
	attr->max_srq_sge = KIWI_MAX_SGE;
	attr->max_fast_reg_page_list_len = KIWI_MAX_FRMR_PAGES;
	attr->max_pkeys = 1;
	return 0;
}

/* IB lane speed and width closest above an Ethernet speed (Mb/s). */
static const struct {
	u32 mbps;
	u16 speed;
	u8 width;
} kiwi_speeds[] = {
	{ 2500, IB_SPEED_SDR, IB_WIDTH_1X },
	{ 5000, IB_SPEED_DDR, IB_WIDTH_1X },
	{ 10000, IB_SPEED_QDR, IB_WIDTH_1X },
	{ 25000, IB_SPEED_EDR, IB_WIDTH_1X },
	{ 40000, IB_SPEED_QDR, IB_WIDTH_4X },
	{ 50000, IB_SPEED_HDR, IB_WIDTH_1X },
	{ 100000, IB_SPEED_EDR, IB_WIDTH_4X },
	{ 200000, IB_SPEED_HDR, IB_WIDTH_4X },
	{ U32_MAX, IB_SPEED_NDR, IB_WIDTH_4X },
};

/*
 * Port speed from ethtool. Virtual links (virtio, veth, loopback) report no
 * speed; they show as 1 Gb/s (SDR 1X), quietly: query_port runs often.
 */
static void kiwi_port_speed(struct net_device *ndev, struct ib_port_attr *attr)
{
	struct ethtool_link_ksettings ks;
	u32 mbps = SPEED_1000;
	int i;

	rtnl_lock();
	if (!__ethtool_get_link_ksettings(ndev, &ks) &&
	    ks.base.speed != (u32)SPEED_UNKNOWN && ks.base.speed)
		mbps = ks.base.speed;
	rtnl_unlock();
	for (i = 0; mbps > kiwi_speeds[i].mbps; i++)
		;
	attr->active_speed = kiwi_speeds[i].speed;
	attr->active_width = kiwi_speeds[i].width;
}

static int kiwi_query_port(struct ib_device *ibdev, u32 port,
			   struct ib_port_attr *attr)
{
	struct net_device *ndev = to_kdev(ibdev)->netdev;

	kiwi_port_speed(ndev, attr);
	attr->state = kiwi_port_state(ndev);
	attr->phys_state = attr->state == IB_PORT_ACTIVE ?
			   IB_PORT_PHYS_STATE_LINK_UP :
			   IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = ib_mtu_int_to_enum(READ_ONCE(ndev->mtu));
	attr->gid_tbl_len = 1;
	attr->pkey_tbl_len = 1;
	attr->port_cap_flags = IB_PORT_CM_SUP | IB_PORT_DEVICE_MGMT_SUP;
	attr->max_msg_sz = KIWI_MAX_MSG_SIZE;
	return 0;
}

static int kiwi_get_port_immutable(struct ib_device *ibdev, u32 port,
				   struct ib_port_immutable *immutable)
{
	immutable->core_cap_flags = RDMA_CORE_PORT_IWARP;
	immutable->gid_tbl_len = 1;
	immutable->pkey_tbl_len = 1;
	return 0;
}

/* iWARP: the one GID is the MAC address of the net_device. */
static int kiwi_query_gid(struct ib_device *ibdev, u32 port, int index,
			  union ib_gid *gid)
{
	if (index)
		return -EINVAL;
	memset(gid, 0, sizeof(*gid));
	memcpy(gid->raw, to_kdev(ibdev)->netdev->dev_addr, ETH_ALEN);
	return 0;
}

static int kiwi_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			   u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = 0xffff;
	return 0;
}

static void kiwi_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%s", KIWI_FW_VERSION);
}

/* Last op the core calls on a device: release what newlink took. */
static void kiwi_dealloc_driver(struct ib_device *ibdev)
{
	struct kiwi_device *kdev = to_kdev(ibdev);

	/* It put its device reference, its last act: let it return. */
	cancel_delayed_work_sync(&kdev->gone_work);
	kiwi_device_unlist(kdev);
	xa_destroy(&kdev->qp_xa);
	xa_destroy(&kdev->mr_xa);
	kiwi_stats_dev_fini(&kdev->stats);
	netdev_put(kdev->netdev, &kdev->netdev_tracker);
}

static const struct ib_device_ops kiwi_device_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = KIWI_ABI_VERSION,
	.device_group = &kiwi_settings_group,

	.alloc_hw_port_stats = kiwi_alloc_hw_port_stats,
	.alloc_mr = kiwi_alloc_mr,
	.alloc_mw = kiwi_alloc_mw,
	.alloc_pd = kiwi_alloc_pd,
	.alloc_ucontext = kiwi_alloc_ucontext,
	.counter_alloc_stats = kiwi_counter_alloc_stats,
	.counter_bind_qp = kiwi_counter_bind_qp,
	.counter_dealloc = kiwi_counter_dealloc,
	.counter_unbind_qp = kiwi_counter_unbind_qp,
	.counter_update_stats = kiwi_counter_update_stats,
	.create_cq = kiwi_create_cq,
	.create_qp = kiwi_create_qp,
	.create_srq = kiwi_create_srq,
	.dealloc_driver = kiwi_dealloc_driver,
	.dealloc_mw = kiwi_dealloc_mw,
	.dealloc_pd = kiwi_dealloc_pd,
	.dealloc_ucontext = kiwi_dealloc_ucontext,
	.dereg_mr = kiwi_dereg_mr,
	.disassociate_ucontext = kiwi_disassociate_ucontext,
	.destroy_cq = kiwi_destroy_cq,
	.destroy_qp = kiwi_destroy_qp,
	.destroy_srq = kiwi_destroy_srq,
	.fill_res_cq_entry = kiwi_fill_res_cq_entry,
	.fill_res_cm_id_entry = kiwi_fill_res_cm_id_entry,
	.fill_res_qp_entry = kiwi_fill_res_qp_entry,
	.get_dev_fw_str = kiwi_get_dev_fw_str,
	.get_dma_mr = kiwi_get_dma_mr,
	.get_hw_stats = kiwi_get_hw_stats,
	.get_port_immutable = kiwi_get_port_immutable,
	.iw_accept = kiwi_iw_accept,
	.iw_add_ref = kiwi_iw_add_ref,
	.iw_connect = kiwi_iw_connect,
	.iw_create_listen = kiwi_iw_create_listen,
	.iw_destroy_listen = kiwi_iw_destroy_listen,
	.iw_get_qp = kiwi_iw_get_qp,
	.iw_reject = kiwi_iw_reject,
	.iw_rem_ref = kiwi_iw_rem_ref,
	.map_mr_sg = kiwi_map_mr_sg,
	.mmap = kiwi_mmap,
	.mmap_free = kiwi_mmap_free,
	.modify_qp = kiwi_modify_qp,
	.modify_srq = kiwi_modify_srq,
	.poll_cq = kiwi_poll_cq,
	.post_recv = kiwi_post_recv,
	.post_send = kiwi_post_send,
	.post_srq_recv = kiwi_post_srq_recv,
	.query_device = kiwi_query_device,
	.query_gid = kiwi_query_gid,
	.query_pkey = kiwi_query_pkey,
	.query_port = kiwi_query_port,
	.query_qp = kiwi_query_qp,
	.query_srq = kiwi_query_srq,
	.reg_user_mr = kiwi_reg_user_mr,
	.req_notify_cq = kiwi_req_notify_cq,
	.rereg_user_mr = kiwi_rereg_user_mr,
	.resize_cq = kiwi_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_cq, kiwi_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, kiwi_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, kiwi_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, kiwi_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, kiwi_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, kiwi_ucontext, ibuc),
};

/* How long a device whose net_device goes waits for its ULPs' QPs. */
#define KIWI_GONE_GRACE		(3 * HZ)
#define KIWI_GONE_POLL		(HZ / 20)

/* A QP of @kdev that a connection used: past INIT (RTS, SQD, SQE, ERR). */
static bool kiwi_device_has_used_qps(struct kiwi_device *kdev)
{
	struct kiwi_qp *qp;
	unsigned long qpn;
	bool used = false;

	/* destroy_qp erases the QP under this lock before it is freed. */
	xa_lock(&kdev->qp_xa);
	xa_for_each(&kdev->qp_xa, qpn, qp) {
		if (READ_ONCE(qp->state) > IB_QPS_INIT) {
			used = true;
			break;
		}
	}
	xa_unlock(&kdev->qp_xa);
	return used;
}

static void kiwi_device_gone_work(struct work_struct *work)
{
	struct kiwi_device *kdev = container_of(to_delayed_work(work),
						struct kiwi_device, gone_work);

	if (kiwi_device_has_used_qps(kdev) &&
	    time_before(jiffies, kdev->gone_deadline)) {
		queue_delayed_work(system_wq, &kdev->gone_work, KIWI_GONE_POLL);
		return;
	}
	ib_unregister_device_queued(&kdev->ibdev);
	ib_device_put(&kdev->ibdev);
}

/*
 * Under RTNL: the net_device is being unregistered and its addresses are
 * gone, so no peer of the device's connections can be reached again.
 * They are ended first, and the device is unregistered once the QPs they
 * used are destroyed (or KIWI_GONE_GRACE passed): a ULP then sees its
 * connections fail before it sees the device go. nvme-rdma's error
 * recovery cancels the commands in flight at once, where its removal of a
 * controller with live queues would wait out its I/O and admin timeouts
 * on connections that can never answer (Documentation/ulps.md). The
 * device reference taken here holds a concurrent unregistration
 * (`rdma link delete`, module unload) until the work is done. Only the
 * first NETDEV_UNREGISTER counts: the core repeats it every second while
 * the net_device's references remain, ours among them until the device
 * is gone, and a deadline moved each time would never come.
 */
static void kiwi_device_netdev_gone(struct kiwi_device *kdev)
{
	if (kdev->gone || !ib_device_try_get(&kdev->ibdev))
		return;
	kdev->gone = true;
	kiwi_cm_abort_device(&kdev->ibdev);
	kdev->gone_deadline = jiffies + KIWI_GONE_GRACE;
	queue_delayed_work(system_wq, &kdev->gone_work, 0);
}

static void kiwi_device_init(struct kiwi_device *kdev, struct net_device *ndev)
{
	struct ib_device *ibdev = &kdev->ibdev;

	INIT_LIST_HEAD(&kdev->list);
	INIT_DELAYED_WORK(&kdev->gone_work, kiwi_device_gone_work);
	xa_init_flags(&kdev->qp_xa, XA_FLAGS_ALLOC1);
	xa_init_flags(&kdev->mr_xa, XA_FLAGS_ALLOC1);
	kdev->port_state = kiwi_port_state(ndev);
	kiwi_settings_init(&kdev->settings);
	kiwi_stats_dev_init(&kdev->stats);
	ib_set_device_ops(ibdev, &kiwi_device_ops);
	ibdev->node_type = RDMA_NODE_RNIC;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = 1;
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND);
	ibdev->iw_driver_flags = IW_F_NO_PORT_MAP;
	strscpy(ibdev->iw_ifname, ndev->name, sizeof(ibdev->iw_ifname));
	strscpy(ibdev->node_desc, "kiwi software iWARP", sizeof(ibdev->node_desc));
	addrconf_addr_eui48((u8 *)&ibdev->node_guid, ndev->dev_addr);
}

/**
 * kiwi_device_create - create and register a kiwi device on a net_device
 * @name: ib_device name (already checked by the caller)
 * @ndev: the net_device; the caller holds a reference for the call
 *
 * Return: 0, -EEXIST if @ndev already has a kiwi device, or an error of
 * the RDMA core.
 */
int kiwi_device_create(const char *name, struct net_device *ndev)
{
	struct kiwi_device *kdev;
	int rv;

	kdev = ib_alloc_device(kiwi_device, ibdev);
	if (!kdev)
		return -ENOMEM;
	kiwi_device_init(kdev, ndev);
	netdev_hold(ndev, &kdev->netdev_tracker, GFP_KERNEL);
	kdev->netdev = ndev;
	rv = ib_device_set_netdev(&kdev->ibdev, ndev, 1);
	if (!rv)
		rv = kiwi_device_list_add(kdev);
	if (!rv)
		rv = ib_register_device(&kdev->ibdev, name, NULL);
	if (rv) {
		ib_dealloc_device(&kdev->ibdev);
		return rv;
	}
	/* kdev may be gone already: a parallel "rdma link delete". */
	kiwi_device_recheck(kdev);
	return 0;
}

static void kiwi_port_event(struct kiwi_device *kdev, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &kdev->ibdev,
		.element.port_num = 1,
		.event = type,
	};

	ib_dispatch_event(&ev);
}

/* Report a port state change once. */
static void kiwi_port_update(struct kiwi_device *kdev)
{
	enum ib_port_state state = kiwi_port_state(kdev->netdev);

	if (state == kdev->port_state)
		return;
	kdev->port_state = state;
	kiwi_port_event(kdev, state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
							IB_EVENT_PORT_ERR);
}

/**
 * kiwi_device_netdev_event - follow an event of the bound net_device
 * @kdev: the device; the caller holds RTNL and a device reference
 * @event: NETDEV_* notifier event
 *
 * Link and MTU are read live by query_port; the GID cache is refreshed by
 * IB_EVENT_GID_CHANGE. Unregistration is queued: it cannot run under RTNL
 * (kiwi_device_netdev_gone()).
 */
void kiwi_device_netdev_event(struct kiwi_device *kdev, unsigned long event)
{
	struct ib_device *ibdev = &kdev->ibdev;

	ASSERT_RTNL();
	switch (event) {
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		kiwi_port_update(kdev);
		break;
	case NETDEV_CHANGEADDR:
		kiwi_port_event(kdev, IB_EVENT_GID_CHANGE);
		break;
	case NETDEV_CHANGEMTU:
		ibdev_dbg(ibdev, "MTU now %u\n", kdev->netdev->mtu);
		break;
	case NETDEV_CHANGENAME:
		strscpy(ibdev->iw_ifname, kdev->netdev->name,
			sizeof(ibdev->iw_ifname));
		break;
	case NETDEV_UNREGISTER:
		kiwi_device_netdev_gone(kdev);
		break;
	default:
		break;
	}
}
