// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: RFC 7306 Immediate Data on the receive side (RX context).
 *
 * An Immediate Data message consumes one receive WR on QN 0 and places
 * nothing in it (RFC 7306 section 6.3); its completion carries the 32-bit
 * verbs value (octets 0-3, proto/rdmap.c). Right after a whole RDMA Write
 * of the peer it is the second half of a Write with Immediate (section 6)
 * and completes as IB_WC_RECV_RDMA_WITH_IMM with the Write's length;
 * otherwise as IB_WC_RECV with length 0. The Write's octets were placed
 * before: TCP delivers the stream in order and RX places as it reads.
 */
#include "kiwi.h"

/**
 * kiwi_rx_imm - header of an Immediate Data message (whole in rx->hdr)
 * @qp: the QP
 *
 * kiwi_rdmap_check_hdr() accepted its shape (8 octets, QN 0, one
 * segment). Its value must fit a verbs completion, and it needs a receive
 * WR and the next MSN of QN 0 ("no buffer", "invalid MSN" otherwise),
 * like a Send, and that message must not have begun as a Send whose
 * segments already placed octets ("invalid MO"); nothing is placed into
 * the WR's buffers.
 *
 * Return: KIWI_TERM_ERR_NONE, or the error to report.
 */
enum kiwi_term_err kiwi_rx_imm(struct kiwi_qp *qp)
{
	struct kiwi_qp_rx *rx = &qp->rx;
	struct kiwi_ddp_queue_view q = {
		.msn_lo = rx->msn_send,
		.msn_win = 1,
		.mo_next = rx->send_placed,
		.buf_len = KIWI_RDMAP_IMM_LEN,
	};
	enum kiwi_term_err err;

	err = kiwi_rdmap_imm_decode(&rx->imm,
				    rx->hdr + KIWI_DDP_UNTAGGED_HDR_LEN);
	if (err)
		return err;
	err = kiwi_rx_take_rqe(qp);
	if (err)
		return err;
	q.has_buf = rx->have_rqe;
	rx->kind = KIWI_RX_IMM;
	return kiwi_ddp_check_untagged(&rx->h, rx->plen, &q);
}

/**
 * kiwi_rx_imm_done - an Immediate Data message ended with a good CRC:
 * complete its receive WR
 * @qp: the QP
 */
void kiwi_rx_imm_done(struct kiwi_qp *qp)
{
	struct kiwi_qp_rx *rx = &qp->rx;
	struct kiwi_cqe cqe = {
		.opcode = KIWI_WC_RECV,
		.flags = KIWI_CQE_WITH_IMM,
		.imm_data = rx->imm,
	};

	if (rx->after_write) {
		cqe.opcode = KIWI_WC_RECV_RDMA_WITH_IMM;
		cqe.byte_len = rx->write_len;
	}
	if (kiwi_rdmap_opcode(rx->h.ulp_ctrl) == KIWI_RDMAP_IMM_SE)
		cqe.flags |= KIWI_CQE_SOLICITED;
	rx->after_write = false;
	rx->msn_send++;
	kiwi_rx_complete_rqe(qp, &cqe);
}

/**
 * kiwi_rx_write_seen - a valid RDMA Write segment ended (not the RTR)
 * @qp: the QP
 *
 * Counts the Write's octets; its L = 1 segment makes the next Immediate
 * Data a Write with Immediate.
 */
void kiwi_rx_write_seen(struct kiwi_qp *qp)
{
	struct kiwi_qp_rx *rx = &qp->rx;

	if (!rx->write_open) {
		rx->write_open = true;
		rx->write_len = 0;
		rx->after_write = false;
	}
	rx->write_len += rx->plen;
	if (rx->h.last) {
		rx->write_open = false;
		rx->after_write = true;
	}
}
