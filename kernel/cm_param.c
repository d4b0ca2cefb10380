// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: the connection manager's view of a device's settings (settings.c)
 * and the MPA startup policy built from them. A connection takes the
 * settings of its device as they are when it starts.
 */
#include <linux/random.h>

#include "cm_ep.h"

unsigned int kiwi_cm_mpa_timeout(struct ib_device *ibdev)
{
	return kiwi_setting(&to_kdev(ibdev)->settings, KIWI_SET_MPA_TIMEOUT);
}

unsigned int kiwi_cm_drain_timeout(struct ib_device *ibdev)
{
	return kiwi_setting(&to_kdev(ibdev)->settings, KIWI_SET_DRAIN_TIMEOUT);
}

/* Does a responder outside peer-to-peer mode wait for the first FPDU? */
bool kiwi_cm_responder_waits(struct ib_device *ibdev)
{
	return kiwi_setting(&to_kdev(ibdev)->settings,
			    KIWI_SET_MPA_RESPONDER_WAITS);
}

/* The llp setting of @ibdev: true when new connections run over SCTP. */
bool kiwi_cm_uses_sctp(struct ib_device *ibdev)
{
	return kiwi_setting(&to_kdev(ibdev)->settings, KIWI_SET_LLP) ==
	       KIWI_LLP_SCTP;
}

/**
 * kiwi_cm_rdmac_graceful - the mpa_rdmac setting of @ibdev
 * @ibdev: a kiwi device
 *
 * Return: true when a revision 0 (RDMAC) peer gets RFC 5044 C.2.1/C.2.2:
 * a revision 1 Reply from a responder, a graceful close from both roles.
 */
bool kiwi_cm_rdmac_graceful(struct ib_device *ibdev)
{
	return kiwi_setting(&to_kdev(ibdev)->settings, KIWI_SET_MPA_RDMAC);
}

/**
 * kiwi_cm_ird - the IRD a kiwi QP grants for a ULP's responder resources
 * @ird: inbound RDMA Read depth the ULP asks for
 *
 * Return: @ird rounded up to a power of two, at most KIWI_MAX_IRD
 * (kiwi_mpa_ird_grant() says why); 0 stays 0.
 */
u16 kiwi_cm_ird(u32 ird)
{
	BUILD_BUG_ON_NOT_POWER_OF_2(KIWI_MAX_IRD);
	return kiwi_mpa_ird_grant(min_t(u32, ird, KIWI_MAX_IRD), KIWI_MAX_IRD);
}

/**
 * kiwi_cm_policy_depths - set the ULP's Read depths in a policy
 * @pol: a policy from kiwi_cm_policy()
 * @ird: inbound RDMA Read depth the ULP asks for
 * @ord: outbound RDMA Read depth the ULP asks for
 *
 * A responder learns them only at accept, after its policy judged the
 * Request with the settings of the time the connection started.
 */
void kiwi_cm_policy_depths(struct kiwi_mpa_policy *pol, u32 ird, u32 ord)
{
	pol->ird = kiwi_cm_ird(ird);
	pol->ord = min_t(u32, ord, KIWI_MAX_ORD);
}

/**
 * kiwi_cm_policy - the MPA startup policy for one connection
 * @pol: output
 * @ibdev: the kiwi device whose settings apply
 * @ird: inbound RDMA Read depth the ULP asks for
 * @ord: outbound RDMA Read depth the ULP asks for
 *
 * IRD and ORD are capped at what a kiwi QP serves (KIWI_MAX_IRD/ORD), as
 * RFC 6581 negotiation lowers them anyway; the IRD is granted in a power
 * of two (kiwi_cm_ird()). The RTR types of the mpa_rtr setting are
 * offered and accepted: an initiator sends a Write RTR when the responder
 * allows it, which is what Linux siw prefers. With the ulpf00 setting the
 * policy asks for the ULP framing draft-00 profile with a fresh 48-bit
 * transmit key from the kernel CSPRNG (ULPF-011, SEC-21), and for no CRC
 * and no markers, which the profile has not.
 */
void kiwi_cm_policy(struct kiwi_mpa_policy *pol, struct ib_device *ibdev,
		    u32 ird, u32 ord)
{
	const struct kiwi_settings *s = &to_kdev(ibdev)->settings;
	u8 rev = kiwi_setting(s, KIWI_SET_MPA_REV);

	memset(pol, 0, sizeof(*pol));
	pol->rev = rev;
	pol->crc_off = kiwi_setting(s, KIWI_SET_MPA_CRC_OFF);
	pol->markers = kiwi_setting(s, KIWI_SET_MPA_MARKERS);
	pol->enhanced = rev == KIWI_MPA_REV_2;
	pol->p2p = pol->enhanced && kiwi_setting(s, KIWI_SET_MPA_P2P);
	pol->rtr = kiwi_setting(s, KIWI_SET_MPA_RTR);
	kiwi_cm_policy_depths(pol, ird, ord);
	pol->ird_max = KIWI_MAX_IRD;
	pol->ulpf = kiwi_setting(s, KIWI_SET_ULPF00);
	if (!pol->ulpf)
		return;
	pol->crc_off = true;
	pol->markers = false;
	get_random_bytes(pol->ulpf_key, sizeof(pol->ulpf_key));
}
