// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: the MPA-layer Terminate an initiator sends when it cannot go on
 * after a valid accepting Reply: the responder's ORD is more than this side
 * can serve (RFC 6581 section 9.1, Layer 2 / EType 0 / ECode 6,
 * insufficient IRD), no RTR type is common to both (section 9.2, ECode 7,
 * no matching RTR option) or another local failure in this phase (section
 * 9.3, ECode 5). The Reply put the responder in Full Operation,
 * so the Terminate is the first FPDU of the stream: no QP is attached yet,
 * and the CM frames this one FPDU itself with the framing the startup
 * frames agreed (markers if the responder asked for them, CRC), then
 * closes gracefully so that the FIN follows it.
 */
#include <linux/net.h>
#include <linux/socket.h>

#include "cm_ep.h"
#include "kiwi_trace.h"
#include "proto/ddp.h"
#include "proto/mpa.h"
#include "proto/term.h"

/*
 * Plan entries for one small FPDU: at most two markers fall inside a
 * Terminate (KIWI_TERM_MSG_MAX + header, pad and CRC < 2 * 508 octets).
 */
#define KIWI_CM_TERM_PIECES	(1 + 2 * 2 + 3)

/**
 * kiwi_cm_send_mpa_term - an initiator's Terminate for a failed negotiation
 * @ep: an initiator endpoint whose Reply was judged, ep->lock held, its QP
 *	held; ep->llp.mpa holds the framing both frames agreed (MPA, or the
 *	ULP framing draft-00 profile)
 * @ecode: the MPA error (enum kiwi_mpa_err): KIWI_MPA_ERR_IRD,
 *	KIWI_MPA_ERR_NO_RTR or KIWI_MPA_ERR_LOCAL_CATA
 *
 * Frames the Terminate (MSN 1 on QN 2, no DDP or RDMAP header copied) at
 * stream offset 0 and queues it on the socket, which holds nothing else:
 * the Request went out whole and nothing follows it.
 *
 * Return: 0 when the whole FPDU was queued, else a negative errno (the
 * caller closes the connection either way).
 */
int kiwi_cm_send_mpa_term(struct kiwi_ep *ep, u8 ecode)
{
	struct kiwi_mpa_cfg cfg = {
		.profile = ep->llp.mpa.ulpf ? KIWI_FRAME_ULPF00 : KIWI_FRAME_MPA,
		.markers = ep->llp.mpa.tx_markers,
		.crc = ep->llp.mpa.crc,
	};
	struct msghdr msg = { .msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL };
	struct kiwi_mpa_piece piece[KIWI_CM_TERM_PIECES];
	struct kvec kv[KIWI_CM_TERM_PIECES];
	u8 ulpdu[KIWI_TERM_MSG_MAX];
	struct kiwi_mpa_frag frag;
	struct kiwi_mpa_plan *plan;
	struct kiwi_mpa_tx tx;
	struct kiwi_term t;
	u32 i;
	int rv;

	memcpy(cfg.ulpf_key, ep->llp.mpa.ulpf_tx_key, sizeof(cfg.ulpf_key));
	rv = kiwi_term_err_lookup(KIWI_TERM_LAYER_LLP, KIWI_TERM_ET_LLP_MPA,
				  ecode);
	if (rv >= 0)
		rv = kiwi_term_from_err(&t, rv, NULL, 0);
	if (rv)
		return rv;
	rv = kiwi_term_build_msg(&t, KIWI_DDP_MSN_INIT, ulpdu, sizeof(ulpdu));
	if (rv < 0)
		return rv;
	frag.base = ulpdu;
	frag.len = rv;
	plan = kzalloc(sizeof(*plan), GFP_KERNEL);
	if (!plan)
		return -ENOMEM;
	plan->piece = piece;
	plan->cap = ARRAY_SIZE(piece);
	rv = kiwi_mpa_tx_init(&tx, &cfg, 0);
	if (!rv)
		rv = kiwi_mpa_tx_plan(&tx, plan, &frag, 1);
	if (rv)
		goto out;
	for (i = 0; i < plan->cnt; i++) {
		kv[i].iov_base = (void *)piece[i].base;
		kv[i].iov_len = piece[i].len;
	}
	rv = kernel_sendmsg(ep->sock, &msg, kv, plan->cnt, plan->wire_len);
	if (rv >= 0)
		rv = rv == plan->wire_len ? 0 : -EIO;
	if (!rv) {
		/* A QP counter: kiwi_cm_count() takes device counters only. */
		kiwi_qp_stat_inc(&ep->qp->stats, KIWI_STAT_TERM_SENT_LLP);
		trace_kiwi_terminate(&ep->qp->ibqp, true, t.layer, t.etype,
				     t.ecode);
	}
out:
	kfree(plan);
	return rv;
}
