// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: module parameters of the connection manager and the MPA startup
 * policy built from them (Documentation/cm.md lists them). Each write is
 * validated; a bad value is refused with -EINVAL and the old one stays.
 */
#include <linux/moduleparam.h>

#include "cm_ep.h"

#define KIWI_CM_TIMEOUT_MAX	600
#define KIWI_CM_DRAIN_MAX	60

static unsigned int mpa_timeout = 10;
static unsigned int drain_timeout = 3;
static unsigned int mpa_rev = KIWI_MPA_REV_2;
static bool mpa_crc_off;
static bool mpa_markers;
static bool mpa_p2p = true;
static bool mpa_responder_waits = true;

static int kiwi_param_set_range(const char *val, const struct kernel_param *kp,
				unsigned int lo, unsigned int hi)
{
	unsigned int v;
	int rv;

	rv = kstrtouint(val, 0, &v);
	if (rv)
		return rv;
	if (v < lo || v > hi)
		return -EINVAL;
	WRITE_ONCE(*(unsigned int *)kp->arg, v);
	return 0;
}

static int kiwi_param_set_timeout(const char *val,
				  const struct kernel_param *kp)
{
	return kiwi_param_set_range(val, kp, 1, KIWI_CM_TIMEOUT_MAX);
}

static int kiwi_param_set_drain(const char *val, const struct kernel_param *kp)
{
	return kiwi_param_set_range(val, kp, 1, KIWI_CM_DRAIN_MAX);
}

static int kiwi_param_set_rev(const char *val, const struct kernel_param *kp)
{
	return kiwi_param_set_range(val, kp, KIWI_MPA_REV_1, KIWI_MPA_REV_2);
}

static const struct kernel_param_ops kiwi_timeout_ops = {
	.set = kiwi_param_set_timeout,
	.get = param_get_uint,
};

static const struct kernel_param_ops kiwi_drain_ops = {
	.set = kiwi_param_set_drain,
	.get = param_get_uint,
};

static const struct kernel_param_ops kiwi_rev_ops = {
	.set = kiwi_param_set_rev,
	.get = param_get_uint,
};

module_param_cb(mpa_timeout, &kiwi_timeout_ops, &mpa_timeout, 0644);
MODULE_PARM_DESC(mpa_timeout,
		 "Seconds for TCP connect plus MPA Request/Reply, and for the peer's FIN after ours (1-600, default 10)");
module_param_cb(drain_timeout, &kiwi_drain_ops, &drain_timeout, 0644);
MODULE_PARM_DESC(drain_timeout,
		 "Seconds a graceful close (SQD, or the Terminate after a local error) may take to send what is queued before the connection is reset (1-60, default 3)");
module_param_cb(mpa_rev, &kiwi_rev_ops, &mpa_rev, 0644);
MODULE_PARM_DESC(mpa_rev,
		 "Highest MPA revision: 2 = RFC 6581 IRD/ORD and RTR (default), 1 = RFC 5044 only");
module_param(mpa_crc_off, bool, 0644);
MODULE_PARM_DESC(mpa_crc_off,
		 "Prefer no MPA CRC; used only if the peer also asks for none (default N)");
module_param(mpa_markers, bool, 0644);
MODULE_PARM_DESC(mpa_markers,
		 "Ask the peer for MPA markers (default N; Linux siw refuses them)");
module_param(mpa_p2p, bool, 0644);
MODULE_PARM_DESC(mpa_p2p,
		 "Initiator asks for RFC 6581 peer-to-peer mode with an RTR message (revision 2 only, default Y)");

module_param(mpa_responder_waits, bool, 0644);
MODULE_PARM_DESC(mpa_responder_waits,
		 "Responder sends no FPDU before the initiator's first (RFC 5044 7.1.2, default Y); N lets servers that send first work with initiators that send no RTR");

unsigned int kiwi_cm_mpa_timeout(void)
{
	return READ_ONCE(mpa_timeout);
}

unsigned int kiwi_cm_drain_timeout(void)
{
	return READ_ONCE(drain_timeout);
}

/* Does a responder outside peer-to-peer mode wait for the first FPDU? */
bool kiwi_cm_responder_waits(void)
{
	return READ_ONCE(mpa_responder_waits);
}

/**
 * kiwi_cm_policy - the MPA startup policy for one connection
 * @pol: output
 * @ird: inbound RDMA Read depth the ULP asks for
 * @ord: outbound RDMA Read depth the ULP asks for
 *
 * IRD and ORD are capped at what a kiwi QP serves (KIWI_MAX_IRD/ORD), as
 * RFC 6581 negotiation lowers them anyway. Every RTR type is accepted and
 * offered: an initiator sends a Write RTR when the responder allows it,
 * which is what Linux siw prefers.
 */
void kiwi_cm_policy(struct kiwi_mpa_policy *pol, u32 ird, u32 ord)
{
	u8 rev = READ_ONCE(mpa_rev);

	memset(pol, 0, sizeof(*pol));
	pol->rev = rev;
	pol->crc_off = READ_ONCE(mpa_crc_off);
	pol->markers = READ_ONCE(mpa_markers);
	pol->enhanced = rev == KIWI_MPA_REV_2;
	pol->p2p = pol->enhanced && READ_ONCE(mpa_p2p);
	pol->rtr = KIWI_MPA_RTR_ALL;
	pol->ird = min_t(u32, ird, KIWI_MAX_IRD);
	pol->ord = min_t(u32, ord, KIWI_MAX_ORD);
	pol->ird_max = KIWI_MAX_IRD;
}
