// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: iWARP connection manager operations (struct ib_device_ops iw_*).
 *
 * The QP reference and lookup operations are complete. Connection setup
 * (MPA over TCP) arrives with kiwi's data path: until then connect,
 * accept, reject and listen fail with -EOPNOTSUPP, which rdma_cm reports
 * to its caller, and destroy_listen has no listener to tear down.
 */
#include "kiwi.h"

int kiwi_iw_connect(struct iw_cm_id *id, struct iw_cm_conn_param *param)
{
	return -EOPNOTSUPP;
}

int kiwi_iw_accept(struct iw_cm_id *id, struct iw_cm_conn_param *param)
{
	return -EOPNOTSUPP;
}

int kiwi_iw_reject(struct iw_cm_id *id, const void *pdata, u8 pdata_len)
{
	return -EOPNOTSUPP;
}

int kiwi_iw_create_listen(struct iw_cm_id *id, int backlog)
{
	return -EOPNOTSUPP;
}

/* iw_cm only calls this for a listener that create_listen set up. */
int kiwi_iw_destroy_listen(struct iw_cm_id *id)
{
	return -EOPNOTSUPP;
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
 * A QP being destroyed is already gone from the table. The caller takes
 * its reference with iw_add_ref.
 *
 * Return: the QP or NULL.
 */
struct ib_qp *kiwi_iw_get_qp(struct ib_device *ibdev, int qpn)
{
	struct kiwi_qp *qp;

	if (qpn <= 0)
		return NULL;
	qp = xa_load(&to_kdev(ibdev)->qp_xa, qpn);
	return qp ? &qp->ibqp : NULL;
}
