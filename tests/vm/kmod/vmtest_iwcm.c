// SPDX-License-Identifier: GPL-2.0
/*
 * kiwi_vmtest: a listener straight on iw_cm, for what rdma_cm hides.
 *
 *   dropreq  listen on addr:port; the handler holds the first
 *            CONNECT_REQUEST for VT_HOLD_MS, then refuses it. Meanwhile,
 *            VT_DESTROY_MS after that first request, the listener is
 *            destroyed. A second Request kiwi reported in between waits
 *            behind the first in iw_cm's (ordered) queue, and iw_cm drops
 *            it because its listener is being destroyed
 *            (IWCM_F_DROP_EVENTS): that connection is neither accepted
 *            nor rejected, and only kiwi can end it. The scenario's raw
 *            peers (76-cm-dropped-request.sh) see how and when it ends.
 *
 * rdma_cm cannot set this up on purpose: its listener's handler_mutex,
 * held around the handler, serialises the listener's destruction with it.
 * The result says "PASS requests=N" (N: requests the handler saw) or
 * "FAIL ...".
 */
#include <linux/delay.h>
#include <linux/inet.h>
#include <rdma/ib_verbs.h>
#include <rdma/iw_cm.h>

#include "vmtest.h"

#define VT_HOLD_MS	5000	/* the handler holds the first request */
#define VT_DESTROY_MS	2500	/* after the first request: destroy */
#define VT_FIRST_MS	60000	/* wait this long for a first request */

static struct {
	struct completion first;	/* the handler saw a request */
	struct completion held;		/* and let it go */
	atomic_t requests;
} vt_drop;

/* iw_cm's handler, called on the child id iw_cm made for the request. */
static int vt_drop_handler(struct iw_cm_id *cm_id, struct iw_cm_event *ev)
{
	if (ev->event != IW_CM_EVENT_CONNECT_REQUEST)
		return 0;
	if (atomic_inc_return(&vt_drop.requests) > 1)
		return -ECONNREFUSED;
	complete(&vt_drop.first);
	msleep(VT_HOLD_MS);
	complete(&vt_drop.held);
	return -ECONNREFUSED;	/* iw_cm rejects it and frees the id */
}

static int vt_drop_listen(struct iw_cm_id *id)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&id->local_addr;

	sin->sin_family = AF_INET;
	sin->sin_port = htons(vmtest_port);
	if (!in4_pton(vmtest_addr, -1, (u8 *)&sin->sin_addr, -1, NULL))
		return -EINVAL;
	return iw_cm_listen(id, 8);
}

int vmtest_iwcm_dropreq(char *res, size_t len)
{
	struct ib_device *dev;
	struct iw_cm_id *id;
	int rv;

	init_completion(&vt_drop.first);
	init_completion(&vt_drop.held);
	atomic_set(&vt_drop.requests, 0);
	dev = ib_device_get_by_name(vmtest_dev, RDMA_DRIVER_UNKNOWN);
	if (!dev)
		return scnprintf(res, len, "FAIL no device %s", vmtest_dev);
	id = iw_create_cm_id(dev, vt_drop_handler, NULL);
	if (IS_ERR(id)) {
		ib_device_put(dev);
		return scnprintf(res, len, "FAIL iw_create_cm_id: %ld",
				 PTR_ERR(id));
	}
	rv = vt_drop_listen(id);
	if (rv) {
		iw_destroy_cm_id(id);
		ib_device_put(dev);
		return scnprintf(res, len, "FAIL iw_cm_listen: %d", rv);
	}
	pr_info("kiwi_vmtest: dropreq: listening on %s:%d\n", vmtest_addr,
		vmtest_port);
	if (!wait_for_completion_timeout(&vt_drop.first,
					 msecs_to_jiffies(VT_FIRST_MS))) {
		iw_destroy_cm_id(id);
		ib_device_put(dev);
		return scnprintf(res, len, "FAIL no request within %d ms",
				 VT_FIRST_MS);
	}
	msleep(VT_DESTROY_MS);
	iw_destroy_cm_id(id);
	/* The handler runs in iw_cm's work: this module must outlive it. */
	wait_for_completion(&vt_drop.held);
	ib_device_put(dev);
	return scnprintf(res, len, "PASS requests=%d",
			 atomic_read(&vt_drop.requests));
}
