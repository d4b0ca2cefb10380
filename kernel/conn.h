/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kiwi: the contracts of the data path between connection management
 * (cm*.c: endpoints, sockets, MPA startup, iw_cm events), the QP engine
 * (qp*.c, tx.c, rx.c: RDMAP/DDP/MPA on an established stream) and memory
 * access (mem*.c: STag lookup, checks, placement).
 *
 * Ownership: a struct kiwi_ep owns its TCP socket from creation to
 * sock_release(). While a QP is attached it holds a reference on the ep
 * and may use the socket; the CM calls kiwi_qp_llp_detach() before it
 * releases the socket, and after detach returns the engine never touches
 * the socket again. The ep holds a QP reference (kiwi_qp_get) from attach
 * until after detach.
 */
#ifndef KIWI_CONN_H
#define KIWI_CONN_H

#include "kiwi.h"
#include "proto/mpa_hs.h"

struct kiwi_ep;
struct kiwi_llp_ops;
struct kiwi_sctp_conn;

/**
 * struct kiwi_llp_params - what the LLP startup agreed, for the QP engine
 * @ops: the lower layer the stream runs (llp.h)
 * @mpa: negotiated MPA parameters: CRC, markers per direction, revision,
 *       IRD/ORD and, in peer-to-peer mode, the RTR type
 * @initiator: this side sent the MPA Request
 * @tx_gated: responder: send no FPDU before the first valid FPDU from the
 *            initiator arrived (RFC 5044 section 7.1.2; RFC 6581 RTR)
 * @send_rtr: initiator in peer-to-peer mode: the first FPDU is the
 *            zero-length RTR message of type @mpa.rtr (KIWI_MPA_RTR_*)
 * @expect_rtr: responder in peer-to-peer mode: the first FPDU from the
 *              initiator is an RTR message, consumed without a completion
 * @sctp: DDP over SCTP: the association (llp_sctp.h); NULL on MPA/TCP
 */
struct kiwi_llp_params {
	const struct kiwi_llp_ops *ops;
	struct kiwi_mpa_params mpa;
	bool initiator;
	bool tx_gated;
	bool send_rtr;
	bool expect_rtr;
	struct kiwi_sctp_conn *sctp;
};

/* --- QP engine, called by the CM --- */

/**
 * kiwi_qp_llp_attach - bind an established MPA stream to a QP
 * @qp: the QP (from iw_cm's get_qp); the caller holds a reference
 * @ep: the endpoint; the engine takes its own reference
 * @sock: the connected socket, positioned at the first FPDU octet
 * @p: the agreed parameters
 *
 * Process context. Moves the QP to RTS and starts receive and transmit;
 * octets already queued on the socket are processed.
 *
 * Return: 0, or -EINVAL when the QP cannot take a connection (wrong state,
 * already attached).
 */
int kiwi_qp_llp_attach(struct kiwi_qp *qp, struct kiwi_ep *ep,
		       struct socket *sock, const struct kiwi_llp_params *p);

/**
 * kiwi_qp_llp_detach - the stream under a QP is closing or gone
 * @qp: an attached QP
 *
 * Process context, may sleep. Waits until no receive or transmit work uses
 * the socket, moves the QP to ERROR (flushing outstanding work) unless it
 * is there already, and drops the ep reference. Idempotent.
 *
 * Return: true if the stream ends between frames: TX handed TCP the whole
 * of every frame it began (or was not attached any more); false if it
 * stopped inside one, which only a reset may end.
 */
bool kiwi_qp_llp_detach(struct kiwi_qp *qp);

/**
 * kiwi_qp_llp_reply_sent - a responder's MPA Reply is on the wire
 * @qp: an attached QP (responder)
 *
 * Any context. Until then TX sends nothing: not even a Terminate for an
 * FPDU that arrived with the Request may precede the Reply.
 */
void kiwi_qp_llp_reply_sent(struct kiwi_qp *qp);

/**
 * kiwi_qp_llp_ungate - open a responder's transmit side
 * @qp: an attached QP whose MPA Reply has been sent
 *
 * Any context. RX calls it at the first valid FPDU (RFC 5044 7.1.2); the
 * CM right after the Reply when the admin lets a responder outside
 * peer-to-peer mode send first (module parameter mpa_responder_waits=N).
 */
void kiwi_qp_llp_ungate(struct kiwi_qp *qp);

/*
 * Socket callbacks, forwarded by the CM's sk_data_ready / sk_write_space
 * (softirq or process context, @sk's sk_callback_lock held for reading).
 * @sk is the socket whose callback fired: the engine acts only if it is
 * the socket attached to @qp, so a callback of another connection that
 * names the same QP (before its attach fails, or after a detach) never
 * touches the attached stream.
 */
void kiwi_qp_rx_ready(struct kiwi_qp *qp, struct sock *sk);
void kiwi_qp_tx_space(struct kiwi_qp *qp, struct sock *sk);
/*
 * The CM, before it lets go of a stream the peer closed: RX reads what
 * @sk still holds, now (@sk owned, its sk_callback_lock held for reading).
 */
void kiwi_qp_rx_read_rest(struct kiwi_qp *qp, struct sock *sk);

/* --- CM, called by the QP engine --- */

void kiwi_ep_get(struct kiwi_ep *ep);
void kiwi_ep_put(struct kiwi_ep *ep);

/**
 * kiwi_ep_llp_close - ask the CM to close the stream under a QP
 * @ep: the endpoint
 * @abortive: end the stream at once (the QP went to ERR or failed): our FIN
 *            after what TCP holds if TX stopped between frames, else a
 *            reset; false: a graceful close, FIN after what was queued
 *            (e.g. a Terminate message)
 *
 * Any context; the work is deferred. The CM later calls
 * kiwi_qp_llp_detach() and reports the close to iw_cm. Idempotent.
 */
void kiwi_ep_llp_close(struct kiwi_ep *ep, bool abortive);

/**
 * kiwi_ep_llp_drain - the QP began a graceful close
 * @ep: the endpoint
 *
 * Any context. Modify to SQD, or a local error that queued a Terminate:
 * the engine asks for the close (kiwi_ep_llp_close()) once what is queued
 * went out. If that does not happen within drain_timeout seconds (the
 * peer does not read, never answers a Read, keeps sending Read Requests),
 * the CM resets the connection and the QP's work requests are flushed.
 */
void kiwi_ep_llp_drain(struct kiwi_ep *ep);

/* --- Memory access, used by the QP engine --- */

/**
 * enum kiwi_mem_status - outcome of an STag check
 * @KIWI_MEM_OK: access allowed
 * @KIWI_MEM_STAG: no such STag, key mismatch, or the STag is invalidated
 * @KIWI_MEM_PD: the STag belongs to another protection domain
 * @KIWI_MEM_ACCESS: the registration lacks the access right
 * @KIWI_MEM_BOUNDS: the range is not inside the registration
 */
enum kiwi_mem_status {
	KIWI_MEM_OK = 0,
	KIWI_MEM_STAG,
	KIWI_MEM_PD,
	KIWI_MEM_ACCESS,
	KIWI_MEM_BOUNDS,
};

/*
 * Look an STag up; takes a reference (RCU-safe against dereg). NULL unless
 * the MR is valid under exactly @stag; an invalid or stale STag takes no
 * reference. A reference keeps the structure, not the registration:
 * dereg_mr and invalidation do not wait for holders, and every later
 * check, page lookup or copy of an invalidated MR fails. While an old
 * holder remains, a fast-register of that MR fails (-EBUSY).
 */
struct kiwi_mr *kiwi_mr_get(struct kiwi_device *kdev, u32 stag);
void kiwi_mr_put(struct kiwi_mr *mr);

/*
 * Check that @mr (from kiwi_mr_get of @stag) is valid under @stag's key,
 * belongs to @pd, allows @access (IB_ACCESS_* bits; 0 = local read) and
 * covers [@addr, @addr + @len).
 */
enum kiwi_mem_status kiwi_mr_check(const struct kiwi_mr *mr, u32 stag,
				   const struct ib_pd *pd, int access,
				   u64 addr, u64 len);

/*
 * The page holding @addr of a checked range, the offset in it and how many
 * octets from there are contiguous in that page (at most @len). Call it and
 * use the page inside one RCU read-side section (rcu_read_lock() or bottom
 * halves disabled): dereg_mr releases the memory a grace period later.
 */
int kiwi_mr_page(const struct kiwi_mr *mr, u64 addr, u32 len,
		 struct page **page, u32 *offset, u32 *chunk);

/* The KIWI_DDP_ACC_* bits of IB_ACCESS_* remote rights and local write. */
static inline u32 kiwi_ddp_acc(int access)
{
	return (access & IB_ACCESS_LOCAL_WRITE ? KIWI_DDP_ACC_LOCAL_WRITE : 0) |
	       (access & IB_ACCESS_REMOTE_WRITE ? KIWI_DDP_ACC_REMOTE_WRITE : 0) |
	       (access & IB_ACCESS_REMOTE_READ ? KIWI_DDP_ACC_REMOTE_READ : 0) |
	       (access & IB_ACCESS_REMOTE_ATOMIC ? KIWI_DDP_ACC_REMOTE_ATOMIC :
						   0);
}

/* @mr (from kiwi_mr_get of @stag) as proto/'s validators see it. */
void kiwi_mr_stag_info(const struct kiwi_mr *mr, u32 stag,
		       struct kiwi_ddp_stag_info *st);

/* Copy to / from a checked range of @mr; -EFAULT once it is invalid. */
int kiwi_mr_write(const struct kiwi_mr *mr, u64 addr, const void *src,
		  u32 len);
int kiwi_mr_read(const struct kiwi_mr *mr, u64 addr, void *dst, u32 len);
int kiwi_mr_atomic(const struct kiwi_mr *mr, const struct kiwi_rdmap_areq *r,
		   u64 *orig);

/*
 * kiwi_mr_invalidate()'s @peer_qp of a Local Invalidate (no stream_id is
 * 0). A peer's Send with Invalidate passes the receiving QP's stream_id: a
 * type 2 window is invalidatable only from the QP it is bound to.
 */
#define KIWI_INV_LOCAL	0ULL

/*
 * Invalidate @stag (Local Invalidate WR when @peer_qp is KIWI_INV_LOCAL,
 * else a Send with Invalidate received on the QP of stream_id @peer_qp):
 * it must exist and
 * belong to @pd. Only fast-reg MRs and type 2 windows can be invalidated;
 * by a peer an MR only if registered with remote rights, a window only
 * from the QP it is bound to: KIWI_MEM_ACCESS means "STag cannot be
 * invalidated". A peer must name a valid STag; locally, invalidating an
 * invalid one again succeeds.
 */
enum kiwi_mem_status kiwi_mr_invalidate(struct kiwi_device *kdev, u32 stag,
					const struct ib_pd *pd, u64 peer_qp);

/*
 * After kiwi_mr_invalidate() of @stag: true if an access may still copy
 * into or out of its memory, so its completion waits a grace period; false
 * for a fast-reg MR no data-path holder holds.
 */
bool kiwi_mr_inval_busy(struct kiwi_device *kdev, u32 stag);

/*
 * Window @win (state_lock held, no longer VALID) drops its MR: reference
 * and bound-window count.
 */
void kiwi_mw_detach(struct kiwi_mr *win);

/*
 * IB_WR_REG_MR: make fast-reg @mr valid under @key (ib_reg_wr.key, the
 * whole STag) with @access, over the page list map_mr_sg filled in.
 * -EINVAL if @mr is not a fast-reg MR, is still valid or the key's index
 * is not @mr's; -EBUSY while a holder of the old registration remains.
 * The caller checks that @mr's PD is the QP's (ibmr.pd).
 */
int kiwi_mr_fast_reg(struct kiwi_mr *mr, u32 key, int access);

#endif /* KIWI_CONN_H */
