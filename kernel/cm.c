// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: iWARP connection manager operations (struct ib_device_ops iw_*).
 *
 * The work is in cm_*.c: endpoints and their lifetime (cm_ep.c), the
 * initiator (cm_active.c), listener and responder (cm_passive.c), the
 * connected state and close (cm_close.c), socket helpers (cm_sock.c) and
 * the device's settings (cm_param.c). Documentation/cm.md describes the state
 * machine.
 */
#include "kiwi.h"
#include "cm_ep.h"

int kiwi_iw_connect(struct iw_cm_id *id, struct iw_cm_conn_param *param)
{
	return kiwi_cm_connect(id, param);
}

/* @id is the id iw_cm made for a CONNECT_REQUEST; provider_data the ep. */
int kiwi_iw_accept(struct iw_cm_id *id, struct iw_cm_conn_param *param)
{
	struct kiwi_ep *ep = id->provider_data;

	if (!ep)
		return -EINVAL;
	return kiwi_cm_accept(ep, id, param);
}

int kiwi_iw_reject(struct iw_cm_id *id, const void *pdata, u8 pdata_len)
{
	struct kiwi_ep *ep = id->provider_data;

	if (!ep)
		return -EINVAL;
	id->provider_data = NULL;
	kiwi_cm_count(id->device, KIWI_STAT_MPA_REJ_SENT);
	return kiwi_cm_reject(ep, pdata, pdata_len);
}

int kiwi_iw_create_listen(struct iw_cm_id *id, int backlog)
{
	return kiwi_cm_listen(id, backlog);
}

/*
 * iw_cm only calls this for a listener that create_listen set up; one
 * without an endpoint is a wildcard listen of another namespace.
 */
int kiwi_iw_destroy_listen(struct iw_cm_id *id)
{
	struct kiwi_ep *ep = id->provider_data;

	if (!ep)
		return 0;
	id->provider_data = NULL;
	kiwi_cm_unlisten(ep);
	return 0;
}

/* The CM holds the QP while a connection uses it; destroy waits. */
void kiwi_iw_add_ref(struct ib_qp *ibqp)
{
	kiwi_qp_get(to_kqp(ibqp));
}

void kiwi_iw_rem_ref(struct ib_qp *ibqp)
{
	kiwi_qp_put(to_kqp(ibqp));
}

/**
 * kiwi_iw_get_qp - look a QP up by number for the iWARP CM
 * @ibdev: the device
 * @qpn: QP number from the ULP
 *
 * iw_cm calls this and then iw_add_ref() under its cm_id's spinlock with
 * interrupts disabled: no reference is taken here. The QP is marked, so
 * that destroy, having unpublished the number, waits one RCU grace period
 * for such a caller to take its reference (kiwi_destroy_qp()). Whether
 * the caller may use the QP is checked by iw_connect/iw_accept.
 *
 * Return: the QP or NULL.
 */
struct ib_qp *kiwi_iw_get_qp(struct ib_device *ibdev, int qpn)
{
	struct kiwi_qp *qp = kiwi_qp_lookup(to_kdev(ibdev), qpn, false);

	return qp ? &qp->ibqp : NULL;
}
