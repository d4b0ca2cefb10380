// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * MPA startup negotiation (RFC 5044 section 7.1, RFC 6581 sections 9-10):
 * local policy + the peer's frame -> agreed parameters or a precise refusal.
 */
#include "mpa_hs.h"
#include "mpa.h"

#define DDP_VERSION_IETF 1

/**
 * kiwi_mpa_policy_check() - validate a local startup policy.
 * @pol: policy.
 *
 * Return: 0 or -EINVAL: @rev not 1 or 2, enhanced or p2p without revision 2
 * (p2p also needs @enhanced), revision 2 without an RTR type (RFC 6581 9.2:
 * a responder supports at least one), unknown RTR bits, or IRD/ORD values
 * above 14 bits or an @ird above @ird_max.
 */
int kiwi_mpa_policy_check(const struct kiwi_mpa_policy *pol)
{
	if (pol->rev != KIWI_MPA_REV_1 && pol->rev != KIWI_MPA_REV_2)
		return -EINVAL;
	if (pol->enhanced && pol->rev < KIWI_MPA_REV_2)
		return -EINVAL;
	if (pol->p2p && !pol->enhanced)
		return -EINVAL;
	if (pol->rtr & ~KIWI_MPA_RTR_ALL)
		return -EINVAL;
	if (pol->rev == KIWI_MPA_REV_2 && !pol->rtr)
		return -EINVAL;
	if (pol->ird > KIWI_MPA_IRD_ORD_MASK || pol->ord > KIWI_MPA_IRD_ORD_MASK ||
	    pol->ird_max > KIWI_MPA_IRD_ORD_MASK ||
	    pol->ord_min > KIWI_MPA_IRD_ORD_MASK)
		return -EINVAL;
	if (pol->ird != KIWI_MPA_IRD_ORD_NONE && pol->ird > pol->ird_max)
		return -EINVAL;
	return 0;
}

/**
 * kiwi_mpa_ird_grant() - the IRD to grant for an asked depth.
 * @want: inbound RDMA Read depth asked for (by the ULP or the peer's ORD).
 * @max: the most this side serves.
 *
 * Peers that keep their ORQ in a power of two slots (Linux siw rounds the
 * ORD it agreed up) keep that many Reads outstanding, more than an IRD of
 * exactly @want would allow. RFC 6581 section 9.1 lets a responder raise
 * its IRD, and an IRD this side can serve costs nothing more, so the
 * grant is @want rounded up to a power of two where that is at most @max.
 *
 * Return: the IRD: that power of two, else the lower of @want and @max;
 * 0 and KIWI_MPA_IRD_ORD_NONE are returned unchanged.
 */
u16 kiwi_mpa_ird_grant(u16 want, u16 max)
{
	u32 ird = 1;

	if (want == 0 || want == KIWI_MPA_IRD_ORD_NONE)
		return want;
	while (ird < want)
		ird <<= 1;
	if (ird <= max)
		return ird;
	return want < max ? want : max;
}

/**
 * kiwi_mpa_make_request() - the initiator's Request from its policy.
 * @pol: policy (checked with kiwi_mpa_policy_check()).
 * @pdata: ULP private data, may be NULL if @pdata_len is 0.
 * @pdata_len: octets of @pdata.
 * @req: output frame, ready for kiwi_mpa_frame_build().
 *
 * Revision 2 and the enhanced field are sent only if @pol->enhanced; without
 * an enhanced feature the Request is a plain revision 1 frame (ECE-15).
 *
 * Return: 0, -EINVAL for a bad policy, -EMSGSIZE for too much private data.
 */
int kiwi_mpa_make_request(const struct kiwi_mpa_policy *pol,
			  const u8 *pdata, u16 pdata_len,
			  struct kiwi_mpa_frame *req)
{
	u32 room = KIWI_MPA_PD_MAX;

	if (kiwi_mpa_policy_check(pol))
		return -EINVAL;
	if (pol->enhanced)
		room -= KIWI_MPA_ENH_LEN;
	if (pol->ulpf)
		room -= KIWI_ULPF_PD_LEN;
	if (pdata_len > room)
		return -EMSGSIZE;
	memset(req, 0, sizeof(*req));
	req->ulpf = pol->ulpf;
	memcpy(req->ulpf_key, pol->ulpf_key, KIWI_ULPF_KEY_LEN);
	req->markers = pol->markers;
	req->crc = !pol->crc_off;
	req->enhanced = pol->enhanced;
	req->rev = pol->enhanced ? KIWI_MPA_REV_2 : KIWI_MPA_REV_1;
	if (pol->enhanced) {
		req->p2p = pol->p2p;
		req->rtr = pol->p2p ? pol->rtr : 0;
		req->ird = pol->ird;
		req->ord = pol->ord;
	}
	req->pdata = pdata;
	req->pdata_len = pdata_len;
	return 0;
}

/*
 * The ULP framing draft-00 profile, both roles: with the profile on,
 * the peer's frame must carry the field; both directions then use it, in
 * place of CRC and markers.
 */
static enum kiwi_mpa_status nego_ulpf(const struct kiwi_mpa_policy *pol,
				      const struct kiwi_mpa_frame *peer,
				      struct kiwi_mpa_params *out)
{
	if (!pol->ulpf)
		return KIWI_MPA_ST_OK;
	if (!peer->ulpf)
		return KIWI_MPA_ST_NO_ULPF;
	out->ulpf = true;
	out->crc = false;
	out->tx_markers = false;
	out->rx_markers = false;
	memcpy(out->ulpf_tx_key, pol->ulpf_key, KIWI_ULPF_KEY_LEN);
	memcpy(out->ulpf_rx_key, peer->ulpf_key, KIWI_ULPF_KEY_LEN);
	return KIWI_MPA_ST_OK;
}

/* Framing part, common to both roles. */
static void nego_framing(const struct kiwi_mpa_frame *req,
			 const struct kiwi_mpa_frame *rep, bool initiator,
			 struct kiwi_mpa_params *out)
{
	const struct kiwi_mpa_frame *peer = initiator ? rep : req;
	const struct kiwi_mpa_frame *mine = initiator ? req : rep;

	memset(out, 0, sizeof(*out));
	/* Markers go where the receiving side asked for them (MPA-053). */
	out->tx_markers = peer->markers;
	out->rx_markers = mine->markers;
	/* CRC unless both prefer none (MPA-026/029/030/054). */
	out->crc = req->crc || rep->crc;
	out->rev = peer->rev;
	out->ddp_version = DDP_VERSION_IETF;
	out->peer_ird = KIWI_MPA_IRD_ORD_NONE;
	out->peer_ord = KIWI_MPA_IRD_ORD_NONE;
}

/* Responder IRD/ORD (RFC 6581 9.1); returns false to refuse for IRD. */
static bool resp_ird_ord(const struct kiwi_mpa_policy *pol,
			 const struct kiwi_mpa_frame *req,
			 struct kiwi_mpa_frame *rep,
			 struct kiwi_mpa_params *out)
{
	out->peer_ird = req->ird;
	out->peer_ord = req->ord;
	if (pol->ord_min && req->ird != KIWI_MPA_IRD_ORD_NONE &&
	    req->ird < pol->ord_min) {
		rep->ird = pol->ird;
		rep->ord = pol->ord_min;	/* the ORD we would need */
		return false;
	}
	/* Our ORD must not exceed the initiator's IRD. */
	if (req->ird == KIWI_MPA_IRD_ORD_NONE || pol->ord == KIWI_MPA_IRD_ORD_NONE)
		rep->ord = KIWI_MPA_IRD_ORD_NONE;
	else
		rep->ord = min_t(u16, pol->ord, req->ird);
	out->ord = req->ird == KIWI_MPA_IRD_ORD_NONE ? pol->ord : rep->ord;
	/* Raise our IRD towards the initiator's ORD, up to our maximum. */
	if (req->ord == KIWI_MPA_IRD_ORD_NONE || pol->ird == KIWI_MPA_IRD_ORD_NONE)
		rep->ird = KIWI_MPA_IRD_ORD_NONE;
	else
		rep->ird = kiwi_mpa_ird_grant(max_t(u16, pol->ird, req->ord),
					      pol->ird_max);
	out->ird = req->ord == KIWI_MPA_IRD_ORD_NONE ? pol->ird : rep->ird;
	return true;
}

/* Responder RTR choice (RFC 6581 9.2): copy A, offer what we accept. */
static void resp_rtr(const struct kiwi_mpa_policy *pol,
		     const struct kiwi_mpa_frame *req,
		     struct kiwi_mpa_frame *rep, struct kiwi_mpa_params *out)
{
	u8 common = req->rtr & pol->rtr;

	rep->p2p = req->p2p;
	if (!req->p2p)
		return;
	rep->rtr = common ? common : pol->rtr;
	/* A Read RTR takes one inbound Read slot. */
	if ((rep->rtr & KIWI_MPA_RTR_READ) && rep->ird == 0) {
		rep->ird = 1;
		out->ird = 1;
	}
	out->p2p = true;
	out->rtr = rep->rtr;
}

/**
 * kiwi_mpa_respond() - responder: evaluate a parsed Request.
 * @pol: local policy (checked).
 * @req: the Request (kiwi_mpa_frame_parse() with want_reply false).
 * @rep: output: the accepting Reply, without private data (the caller sets
 *	@rep->pdata; the ULP may still turn it into a reject by setting
 *	@rep->reject after looking at the Request's private data, MPA-063).
 * @out: output: agreed parameters, valid with KIWI_MPA_ST_OK.
 *
 * Revision: 1 is always accepted, 2 if @pol->rev is 2, the Reply uses the
 * lower of the two. Revision 0 (RDMAC) and unknown ones give
 * KIWI_MPA_ST_BAD_REV; @rep is then a revision 1 Reply the caller may send
 * before closing (RFC 5044 C.2.1). An S=1 Request gets an S=1 Reply
 * (ECE-15), with IRD/ORD per RFC 6581 9.1 including the 0x3FFF rules (ECE-06,
 * ECE-10) and the RTR choice per 9.2 (ECE-12). KIWI_MPA_ST_IRD: the
 * initiator's IRD is below @pol->ord_min; @rep is a Reject carrying the ORD
 * needed.
 *
 * Return: enum kiwi_mpa_status.
 */
enum kiwi_mpa_status kiwi_mpa_respond(const struct kiwi_mpa_policy *pol,
				      const struct kiwi_mpa_frame *req,
				      struct kiwi_mpa_frame *rep,
				      struct kiwi_mpa_params *out)
{
	memset(rep, 0, sizeof(*rep));
	rep->reply = true;
	rep->markers = pol->markers;
	rep->crc = !pol->crc_off;
	rep->rev = KIWI_MPA_REV_1;
	nego_framing(req, rep, false, out);
	out->ird = pol->ird;
	out->ord = pol->ord;
	if (req->rev == KIWI_MPA_REV_RDMAC || req->rev > pol->rev ||
	    (req->enhanced && req->rev < KIWI_MPA_REV_2))
		return KIWI_MPA_ST_BAD_REV;
	rep->rev = req->rev;
	if (nego_ulpf(pol, req, out)) {
		rep->reject = true;
		return KIWI_MPA_ST_NO_ULPF;
	}
	rep->ulpf = pol->ulpf;
	memcpy(rep->ulpf_key, pol->ulpf_key, KIWI_ULPF_KEY_LEN);
	if (!req->enhanced)
		return KIWI_MPA_ST_OK;
	rep->enhanced = true;
	out->enhanced = true;
	if (!resp_ird_ord(pol, req, rep, out)) {
		rep->reject = true;
		return KIWI_MPA_ST_IRD;
	}
	resp_rtr(pol, req, rep, out);
	return KIWI_MPA_ST_OK;
}

/* Initiator IRD/ORD on an Accept (RFC 6581 9.1). */
static bool init_ird_ord(const struct kiwi_mpa_policy *pol,
			 const struct kiwi_mpa_frame *rep,
			 struct kiwi_mpa_params *out)
{
	/* Our IRD must cover the responder's ORD. */
	out->ird = pol->ird;
	if (rep->ord != KIWI_MPA_IRD_ORD_NONE && pol->ird != KIWI_MPA_IRD_ORD_NONE) {
		if (rep->ord > pol->ird_max)
			return false;
		out->ird = kiwi_mpa_ird_grant(max_t(u16, pol->ird, rep->ord),
					      pol->ird_max);
	}
	/* Our ORD must not exceed the responder's IRD. */
	if (rep->ird == KIWI_MPA_IRD_ORD_NONE || pol->ord == KIWI_MPA_IRD_ORD_NONE)
		out->ord = pol->ord;
	else
		out->ord = min_t(u16, pol->ord, rep->ird);
	return true;
}

/* Pick the one RTR to send: Write, then Read, then Send. */
static u8 init_pick_rtr(u8 common)
{
	if (common & KIWI_MPA_RTR_WRITE)
		return KIWI_MPA_RTR_WRITE;
	if (common & KIWI_MPA_RTR_READ)
		return KIWI_MPA_RTR_READ;
	return common & KIWI_MPA_RTR_SEND;
}

/**
 * kiwi_mpa_check_reply() - initiator: evaluate a parsed Reply.
 * @pol: local policy (checked).
 * @req: the Request this side sent.
 * @rep: the Reply (kiwi_mpa_frame_parse() with want_reply true).
 * @out: output: agreed parameters with KIWI_MPA_ST_OK; with
 *	KIWI_MPA_ST_REJECTED @out->peer_ird/peer_ord still carry the
 *	responder's values (ECE-09).
 *
 * Badly formed Replies (revision 0 or above ours, an unrequested enhanced
 * field, A not copied) come first and mean close (MPA-066); then R=1 means
 * rejected, TCP left open (MPA-067); then IRD (KIWI_MPA_ST_IRD: the
 * responder's ORD exceeds @pol->ird_max, ECE-08) and RTR (KIWI_MPA_ST_NO_RTR:
 * no common type, ECE-13), both answered with an MPA Terminate framed as
 * agreed; before these, with @pol->ulpf, KIWI_MPA_ST_NO_ULPF for a Reply
 * without the ULP framing field (nothing agreed: close).
 *
 * Return: enum kiwi_mpa_status.
 */
enum kiwi_mpa_status kiwi_mpa_check_reply(const struct kiwi_mpa_policy *pol,
					  const struct kiwi_mpa_frame *req,
					  const struct kiwi_mpa_frame *rep,
					  struct kiwi_mpa_params *out)
{
	enum kiwi_mpa_status st;
	u8 rtr;

	nego_framing(req, rep, true, out);
	out->ird = pol->ird;
	out->ord = pol->ord;
	if (rep->rev == KIWI_MPA_REV_RDMAC || rep->rev > pol->rev ||
	    (rep->enhanced && rep->rev < KIWI_MPA_REV_2))
		return KIWI_MPA_ST_BAD_REV;
	if (rep->enhanced && !req->enhanced)
		return KIWI_MPA_ST_BAD_ENH;
	if (rep->enhanced) {
		out->peer_ird = rep->ird;
		out->peer_ord = rep->ord;
		if (rep->p2p != req->p2p && !rep->reject)
			return KIWI_MPA_ST_BAD_ENH;
	}
	if (rep->reject)
		return KIWI_MPA_ST_REJECTED;
	st = nego_ulpf(pol, rep, out);
	if (st)
		return st;
	if (rep->enhanced) {
		out->enhanced = true;
		if (!init_ird_ord(pol, rep, out))
			return KIWI_MPA_ST_IRD;
	}
	if (rep->enhanced && req->p2p) {
		rtr = init_pick_rtr(req->rtr & rep->rtr);
		if (!rtr)
			return KIWI_MPA_ST_NO_RTR;
		out->p2p = true;
		out->rtr = rtr;
	}
	return KIWI_MPA_ST_OK;
}

/**
 * kiwi_mpa_status_action() - what to do after a status.
 * @st: status from parse or negotiation.
 *
 * Return: enum kiwi_mpa_action: invalid frames close TCP at once (error 4,
 * MPA-062/066/081); a reject exits MPA leaving TCP open (MPA-063/067); IRD and
 * RTR failures send an MPA Terminate (codes 6/7), then close.
 */
enum kiwi_mpa_action kiwi_mpa_status_action(enum kiwi_mpa_status st)
{
	switch (st) {
	case KIWI_MPA_ST_OK:
		return KIWI_MPA_ACT_PROCEED;
	case KIWI_MPA_ST_NEED_MORE:
		return KIWI_MPA_ACT_WAIT;
	case KIWI_MPA_ST_REJECTED:
		return KIWI_MPA_ACT_EXIT_OPEN;
	case KIWI_MPA_ST_IRD:
	case KIWI_MPA_ST_NO_RTR:
		return KIWI_MPA_ACT_TERM_CLOSE;
	default:
		return KIWI_MPA_ACT_CLOSE;
	}
}

/**
 * kiwi_mpa_status_ecode() - MPA error code to report for a status.
 * @st: status.
 *
 * Return: enum kiwi_mpa_err value; 0 for success, waiting and rejects.
 */
u8 kiwi_mpa_status_ecode(enum kiwi_mpa_status st)
{
	switch (st) {
	case KIWI_MPA_ST_OK:
	case KIWI_MPA_ST_NEED_MORE:
	case KIWI_MPA_ST_REJECTED:
		return KIWI_MPA_ERR_NONE;
	case KIWI_MPA_ST_IRD:
		return KIWI_MPA_ERR_IRD;
	case KIWI_MPA_ST_NO_RTR:
		return KIWI_MPA_ERR_NO_RTR;
	default:
		return KIWI_MPA_ERR_BAD_FRAME;
	}
}
