/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kiwi: the per-QP state of the data path (RDMAP/DDP over an MPA stream).
 * Embedded in struct kiwi_qp; see Documentation/datapath.md for the design.
 *
 * Contexts:
 *  - TX runs only in the QP's work item (kiwi_qp_tx.work), which the
 *    workqueue never runs twice at once. It owns every field marked "TX".
 *  - RX runs under the socket lock: in kiwi_qp_rx_ready() (sk_data_ready:
 *    softirq, or the process that releases the socket lock and so runs
 *    its backlog) for a segment alone, in the LLP's read work (rx.read_work
 *    for TCP) under lock_sock() for more, and under lock_sock() in
 *    kiwi_qp_llp_attach() and the CM's kiwi_qp_rx_read_rest(). The socket
 *    lock serialises them; RX owns every field marked "RX".
 *  - Fields marked "qp->lock" are shared: read and written only with
 *    qp->lock held (spin_lock_irqsave).
 * Neither side holds a lock while it calls into the socket, so RX run from
 * release_sock() inside TX's kernel_sendmsg() cannot deadlock.
 */
#ifndef KIWI_QP_DP_H
#define KIWI_QP_DP_H

#include <linux/mutex.h>
#include <linux/workqueue.h>

#include "proto/mpa.h"
#include "proto/ddp.h"
#include "proto/ddp_runs.h"
#include "proto/rdmap.h"
#include "proto/term.h"

struct kiwi_ep;
struct kiwi_sctp_conn;
struct kiwi_mr;
struct socket;

/* Kernel-only SQ opcodes: never accepted from a user ring. */
#define KIWI_WR_KREG_MR		0x80	/* IB_WR_REG_MR */
#define KIWI_WR_KREAD_INV	0x81	/* IB_WR_RDMA_READ_WITH_INV */
/* IB_WR_MASKED_ATOMIC_*: complete as IB_WC_MASKED_* (the SQE has masks) */
#define KIWI_WR_KMASKED_CMP_SWAP	0x82
#define KIWI_WR_KMASKED_FETCH_ADD	0x83

/*
 * Octets of FPDUs TX frames before it hands them to TCP in one call: one
 * compound page (tx_buf.c), which holds the largest FPDU.
 */
#define KIWI_TX_BUF_ORDER	4
#define KIWI_TX_BUF_LEN		(PAGE_SIZE << KIWI_TX_BUF_ORDER)
/* Fewer octets than this go to TCP by copy, more by reference (llp_tcp.c). */
#define KIWI_TX_COPY_MAX	4096
/* How long TX waits to try again for a chunk when memory is short. */
#define KIWI_TX_BUF_RETRY_MS	10
/* What a doorbell's run sends in the poster's system call (tx.c). */
#define KIWI_TX_DOORBELL_LEN	(16 * 1024)
/* How long a streaming poster's worker waits for more WRs (tx.c). */
#define KIWI_TX_LINGER_US	50

/**
 * struct kiwi_swqe - the engine's private copy of one send WR
 * @sqe: the SQE, copied out of the ring when TX starts it (TX), or by the
 *       kernel post_send for kernel QPs
 * @reg_mr: IB_WR_REG_MR: the MR (kernel QPs only; written by post_send)
 * @reg_key: IB_WR_REG_MR: the new key
 * @reg_access: IB_WR_REG_MR: the access rights
 * @status: completion status (qp->lock)
 * @probe: an Immediate Data WR sent before the peer was known to support
 *         RFC 7306: it completes when the zero-length Read that follows
 *         it is answered, not when TCP took it (qp->lock; set when TX takes
 *         the WR)
 * @done: complete; retired in SQ order (qp->lock)
 * @gp_wait: a Local Invalidate or a Read with Invalidate executed, or a
 *           Local Invalidate flushed; done once the RCU
 *           grace period of @gp_cookie elapsed (qp->lock)
 * @gp_cookie: get_state_synchronize_rcu() at the invalidation or the
 *             flush, whichever came last (qp->lock)
 * @len: message length (TX)
 */
struct kiwi_swqe {
	struct kiwi_sqe sqe;
	struct ib_mr *reg_mr;
	u32 reg_key;
	int reg_access;
	u8 status;
	bool probe;
	bool done;
	bool gp_wait;
	unsigned long gp_cookie;
	u32 len;
};

/**
 * struct kiwi_orq_ent - an RDMA Read or RFC 7306 atomic this QP issued;
 * both count against the ORD (qp->lock)
 * @idx: SQ index of the Read or atomic WR
 * @rtr: the zero-length RTR Read of RFC 6581: no WR
 * @probe: the zero-length Read after Immediate Data WR @idx (tx_imm.c):
 *         its Response shows the peer accepted the Immediate Data
 * @inv: Read with Invalidate: @stag is invalidated when the Read completes
 * @atomic: an Atomic Request, answered by an Atomic Response (QN 3) whose
 *          Request Identifier is @idx; the original value goes to the
 *          8 octets at @stag/@to
 * @stag: Data Sink STag (a Read) or the result SGE's lkey (an atomic)
 * @to: Data Sink TO (a Read) or the result SGE's address (an atomic)
 * @len: Read size (8 for an atomic)
 * @msn: MSN of its Request on QN 1, set as TX frames it (a Terminate
 *       names the Request it refuses by it, kiwi_tx_orq_refused())
 * @framed: TX framed its Request (with @msn): until then the entry only
 *          reserves its place in the ORD, and no Response, Terminate or
 *          early segment may concern it (kiwi_orq_sent()). An Immediate
 *          Data WR's probe is framed after all of its Write: a Response
 *          taken for it before would complete the WR while TX still reads
 *          the Write's source.
 */
struct kiwi_orq_ent {
	u32 idx;
	u32 msn;
	bool framed;
	bool rtr;
	bool probe;
	bool inv;
	bool atomic;
	u32 stag;
	u64 to;
	u32 len;
};

/**
 * struct kiwi_irq_ent - an inbound RDMA Read or RFC 7306 Atomic Request
 * to serve; both share QN 1 and the IRD (RFC 7306 section 5.2)
 * @mr: the checked Data Source or atomic target (reference held), NULL
 *      for a Read of size 0
 * @atomic: an Atomic Request (@areq), else a Read Request (@rreq)
 * @rreq: the Read Request
 * @areq: the Atomic Request
 */
struct kiwi_irq_ent {
	struct kiwi_mr *mr;
	bool atomic;
	union {
		struct kiwi_rdmap_rreq rreq;
		struct kiwi_rdmap_areq areq;
	};
};

/**
 * struct kiwi_tx_msg - the message TX is segmenting (TX)
 * @active: a message is in progress
 * @rresp: it answers an inbound request: a Read Response or an Atomic
 *         Response (else an SQE or RTR)
 * @idx: SQ index of the WR
 * @op: RDMAP opcode
 * @stag: Data Sink STag (tagged) or the STag to invalidate
 * @msn: MSN (untagged)
 * @it: DDP segmentation
 * @rreq: Read Request header octets (Read Request)
 * @sge: local SGEs of the payload (points into the swqe)
 * @mr: the references on the MRs of @sge
 * @nsge: entries in @sge
 * @len: message length
 * @inline_data: inline payload, or NULL
 * @src: Read Response: the source MR
 * @src_to: Read Response: TO of the first octet
 * @then: KIWI_TX_THEN_* messages of the same WR still to send after this
 *        one (tx_imm.c)
 * @imm: the Immediate Data message's 8 octets
 * @atomic: the Atomic Request or Atomic Response header octets
 */
struct kiwi_tx_msg {
	bool active;
	bool rresp;
	u32 idx;
	u8 op;
	u32 stag;
	u32 msn;
	struct kiwi_ddp_seg_iter it;
	u8 rreq[KIWI_RDMAP_RREQ_LEN];
	const struct kiwi_sge *sge;
	struct kiwi_mr *mr[KIWI_MAX_SGE];
	u32 nsge;
	u32 len;
	const u8 *inline_data;
	struct kiwi_mr *src;
	u64 src_to;
	u8 then;
	u8 imm[KIWI_RDMAP_IMM_LEN];
	u8 atomic[KIWI_RDMAP_AREQ_LEN];
};

/* kiwi_tx_msg.then: what follows the message, in this order */
#define KIWI_TX_THEN_IMM	0x1	/* the Immediate Data message */
#define KIWI_TX_THEN_PROBE	0x2	/* a zero-length Read Request */
#define KIWI_TX_THEN_SE		0x4	/* Immediate Data with Solicited Event */

/**
 * struct kiwi_qp_tx - transmit side of an attached QP
 * @work: the TX work item
 * @run_lock: held while TX runs, in @work or in a user QP's doorbell, so
 *            TX never runs twice at once; detach takes it once to wait for
 *            a run in progress
 * @run_task: the task running TX, NULL between runs (qp->lock): while set,
 *	      completions of send WRs made elsewhere wait for the run's end
 *	      (kiwi_sq_retire()), since TX may be copying from a WR's
 *	      source, or from a memory region a flushed Local Invalidate
 *	      leaves valid, until it next looks at the QP's state
 * @retire_held: such a completion waits for the run's end (qp->lock)
 * @llp_mutex: serialises attach, detach and the LLP close of modify_qp, so
 *             @ep stays valid for modify_qp; TX and RX read @ep without it
 *             (detach stops them before it clears @ep)
 * @sock: the socket while attached (written under qp->lock and
 *        @llp_mutex; TX reads it at work start, RX with READ_ONCE)
 * @ep: the endpoint while attached (written under @llp_mutex)
 * @llp: the lower layer's operations (llp.h), set at attach before @ep
 *       and kept after detach (a static table)
 * @swq: shadow of the SQ ring, sq.num entries, from create to destroy
 * @gp_rcu: completes Local Invalidates after a grace period (qp_sq.c)
 * @gp_armed: @gp_rcu is queued and holds a QP reference (qp->lock)
 * @next: next SQ index TX starts (qp->lock)
 * @flushed_to: SQ index up to which Sends and Writes are handed to TCP (TX)
 * @framed_to: SQ index up to which messages are framed into @buf (TX)
 * @mpa: MPA framing state (TX; MPA/TCP LLP)
 * @plan: FPDU plan of the segment being framed (TX)
 * @pieces: plan entries (TX)
 * @mulpdu: MULPDU now: the LLP sets it at attach and may change it at
 *	    the start of each batch (llp.h, batch), read by restrack with
 *	    READ_ONCE (TX)
 * @seg: where the FPDUs framed in @buf fall in TCP's segments: a batch
 *	 stops before an FPDU that would cross a segment boundary and starts
 *	 a segment of its own, or with MPA joins TCP's unsent one whole
 *	 (llp_tcp.c; TX; reset by the LLP's batch operation,
 *	 proto/mpa_seg.c)
 * @sctp: DDP over SCTP: the association's state (llp_sctp.h), owned by
 *	  the CM's endpoint; NULL on MPA/TCP (set at attach)
 * @chunk: the compound page @buf is, which TCP may still hold references
 *	   on after it took its octets (TX; tx_buf.c)
 * @base: where the batch in @buf begins in @chunk: octets before it may
 *	  still be TCP's (TX; tx_buf.c)
 * @buf: the batch's framed FPDUs, at @chunk's address plus @base; room
 *	 for KIWI_TX_BUF_LEN - @base octets (TX)
 * @len: octets framed in @buf (TX)
 * @sent: octets of @buf TCP took (TX)
 * @stalled: TCP took less than offered and TX waits for the write-space
 *	wakeup, which runs TX again (written by TX under @run_lock; a
 *	doorbell reads it without the lock, see kiwi_tx_kick_now())
 * @linger: a doorbell's run left a message to the worker: a poster is
 *	    streaming, so the worker waits once for more WRs before it
 *	    parks (TX, under @run_lock; kiwi_tx_run())
 * @cur: message in progress (TX)
 * @sqe: TX's copy of the SQE of the WR in @cur, made under qp->lock as TX
 *	 takes the WR; @cur's SGEs and inline data point into it. A flush
 *	 completes a started WR while TX may still be framing it, and may
 *	 then copy a later WR into its @swq slot: TX never reads that slot
 *	 unlocked (it writes the byte count there, which a completion with
 *	 an error status does not define) (TX)
 * @sqe_probe: the WR in @cur is followed by a probe Read (tx_imm.c),
 *	       copied with @sqe (TX)
 * @msn_send: next MSN on QN 0 (TX)
 * @msn_rreq: next MSN on QN 1 (TX): Read and Atomic Requests
 * @msn_aresp: next MSN on QN 3 (TX): Atomic Responses
 * @term_sent: the Terminate was framed: nothing more is sent (TX)
 * @closed: TX asked the CM to close the stream (TX)
 * @term_pending: a Terminate waits in @term (qp->lock; TX also reads it
 *		  without, once per FPDU, see kiwi_tx_term())
 * @term_len: octets in @term (qp->lock)
 * @term: the Terminate ULPDU (qp->lock)
 * @gated: responder: wait for the first valid FPDU (written under
 *	   qp->lock, only ever cleared after attach; TX reads it without)
 * @held: responder: the MPA Reply is not on the wire yet; TX sends
 *        nothing at all, not even a Terminate (as @gated)
 * @drain_to: SQD: the SQ index up to which WRs are sent before the
 *            stream closes; WRs posted later wait for the flush (qp->lock)
 * @close_req: modify_qp (SQD) or a local error (SQE) asked for a graceful
 *             close: TX closes the stream once the SQ (or the Terminate)
 *             went out (qp->lock)
 * @rtr: initiator: the RTR message of this KIWI_MPA_RTR_* type is still
 *       to be sent, 0 if none (TX)
 * @peer_imm: a Read sent after Immediate Data was answered: the peer
 *            supports RFC 7306 Immediate Data (qp->lock)
 * @orq: outstanding Reads, @orq_slots entries (qp->lock); at most @ord in use
 * @orq_head: oldest outstanding Read (qp->lock)
 * @orq_tail: next free ORQ entry (qp->lock)
 * @ord: ORD in force (qp->lock)
 * @orq_slots: @ord rounded up to a power of two (kiwi_orq_slot())
 * @irq: inbound Read and Atomic Requests, @irq_slots entries (qp->lock); at
 *       most @ird in use
 * @irq_head: next Read or Atomic Response to send (qp->lock)
 * @irq_tail: next free IRQ entry (qp->lock)
 * @ird: IRD in force (qp->lock)
 * @irq_slots: @ird rounded up to a power of two (kiwi_irq_slot())
 *
 * The ORQ and IRQ counters run on for the life of the connection and start
 * KIWI_TX_RQ_START short of wrapping, so that every connection that sends
 * or serves a few Reads takes them across the wrap (as jiffies start near
 * theirs): a slot is the counter modulo a power of two, which stays in
 * step across the wrap where modulo ORD or IRD (any number up to 128,
 * which the peer's MPA parameters choose) would not.
 */
struct kiwi_qp_tx {
	struct work_struct work;
	struct mutex run_lock;	/* see kernel-doc above */
	struct mutex llp_mutex;	/* see kernel-doc above */
	struct task_struct *run_task;
	bool retire_held;
	struct socket *sock;
	struct kiwi_ep *ep;
	const struct kiwi_llp_ops *llp;
	struct kiwi_swqe *swq;
	struct rcu_head gp_rcu;
	bool gp_armed;
	u32 next;
	u32 flushed_to;
	u32 framed_to;
	struct kiwi_mpa_tx mpa;
	struct kiwi_mpa_plan plan;
	struct kiwi_mpa_piece pieces[KIWI_MPA_PLAN_PIECES(1)];
	u32 mulpdu;
	struct kiwi_mpa_seg seg;
	struct kiwi_sctp_conn *sctp;
	struct page *chunk;
	u32 base;
	u8 *buf;
	u32 len;
	u32 sent;
	bool stalled;
	bool linger;
	struct kiwi_tx_msg cur;
	struct kiwi_sqe sqe;
	bool sqe_probe;
	u32 msn_send;
	u32 msn_rreq;
	u32 msn_aresp;
	bool term_sent;
	bool closed;
	bool term_pending;
	u32 term_len;
	u8 term[KIWI_TERM_MSG_MAX];
	bool gated;
	bool held;
	u32 drain_to;
	bool close_req;
	u8 rtr;
	bool peer_imm;
	struct kiwi_orq_ent *orq;
	u32 orq_head;
	u32 orq_tail;
	u32 ord;
	u32 orq_slots;
	struct kiwi_irq_ent *irq;
	u32 irq_head;
	u32 irq_tail;
	u32 ird;
	u32 irq_slots;
};

#define KIWI_TX_RQ_START	((u32)-16)

/* The ORQ entry of Read (or Atomic) number @i (qp->lock). */
static inline struct kiwi_orq_ent *kiwi_orq_slot(struct kiwi_qp_tx *tx, u32 i)
{
	return &tx->orq[i & (tx->orq_slots - 1)];
}

/*
 * Under qp->lock: the ORQ entry @i (in [orq_head, orq_tail)) whose Request
 * went out, so a Response or Terminate may concern it; NULL if TX has not
 * framed it yet (struct kiwi_orq_ent, @framed).
 */
static inline struct kiwi_orq_ent *kiwi_orq_sent(struct kiwi_qp_tx *tx, u32 i)
{
	struct kiwi_orq_ent *e = kiwi_orq_slot(tx, i);

	return e->framed ? e : NULL;
}

/* Under qp->lock: the oldest ORQ entry if its Request went out, or NULL. */
static inline struct kiwi_orq_ent *kiwi_orq_head_sent(struct kiwi_qp_tx *tx)
{
	if (tx->orq_head == tx->orq_tail)
		return NULL;
	return kiwi_orq_sent(tx, tx->orq_head);
}

/* The IRQ entry of inbound Request number @i (qp->lock). */
static inline struct kiwi_irq_ent *kiwi_irq_slot(struct kiwi_qp_tx *tx, u32 i)
{
	return &tx->irq[i & (tx->irq_slots - 1)];
}

/**
 * struct kiwi_rx_gp_ent - a receive completion held back (rx_gp.c)
 * @cqe: the completion
 * @cookie: get_state_synchronize_rcu() at the invalidation (@gp)
 * @gp: a Send with Invalidate: pushed once the grace period of @cookie
 *      elapsed; else only after the completions before it
 * @srq: its receive WR came from the SRQ (counted in kiwi_srq.held)
 * @srq_slot: a kernel SRQ's slot for that WR (else KIWI_SRQ_NO_SLOT)
 */
struct kiwi_rx_gp_ent {
	struct kiwi_cqe cqe;
	unsigned long cookie;
	bool gp;
	bool srq;
	u32 srq_slot;
};

/**
 * struct kiwi_rx_gp - receive completions waiting for an RCU grace period
 * @ent: ring of @cap entries; NULL for user QPs, which hold no fast-
 *       register MR (no user MR can be invalidated) and so never wait
 * @cap: entries in @ent: the RQ's ring size, or the SRQ's
 * @head: oldest held completion (qp->lock)
 * @n: completions held (qp->lock); the RQ's flush waits until none is
 * @rcu: pushes them once their grace period is over
 * @armed: @rcu is queued and holds a QP reference (qp->lock)
 */
struct kiwi_rx_gp {
	struct kiwi_rx_gp_ent *ent;
	u32 cap;
	u32 head;
	u32 n;
	struct rcu_head rcu;
	bool armed;
};

/**
 * enum kiwi_rx_kind - what RX does with the FPDU being received
 * @KIWI_RX_DROP: nothing (after an error, or a zero-length tagged segment)
 * @KIWI_RX_TAGGED: place into @mr at @to (RDMA Write)
 * @KIWI_RX_RRESP: place into @mr at @to; the last one completes the Read
 * @KIWI_RX_SEND: place into the receive WR
 * @KIWI_RX_RREQ: a Read Request (whole in the header)
 * @KIWI_RX_TERM: a Terminate (whole in the header)
 * @KIWI_RX_RTR: the RTR message: consumed without completion
 * @KIWI_RX_IMM: Immediate Data (whole in the header), completes a receive
 * @KIWI_RX_AREQ: an RFC 7306 Atomic Request (whole in the header)
 * @KIWI_RX_ARESP: an RFC 7306 Atomic Response (whole in the header),
 *                 completes the oldest outstanding atomic
 */
enum kiwi_rx_kind {
	KIWI_RX_DROP,
	KIWI_RX_TAGGED,
	KIWI_RX_RRESP,
	KIWI_RX_SEND,
	KIWI_RX_RREQ,
	KIWI_RX_TERM,
	KIWI_RX_RTR,
	KIWI_RX_IMM,
	KIWI_RX_AREQ,
	KIWI_RX_ARESP,
};

/* Untagged messages from the next one on that rx_early.c places into. */
#define KIWI_RX_EARLY_MSGS	64

/**
 * struct kiwi_rx_early_msg - octets of one Send placed on arrival
 * @msn: its MSN on QN 0
 * @runs: the octets placed
 */
struct kiwi_rx_early_msg {
	u32 msn;
	struct kiwi_ddp_runs runs;
};

/**
 * struct kiwi_rx_early - Sends placed ahead of a gap (RX; rx_early.c)
 * @msg: by MSN % KIWI_RX_EARLY_MSGS, for MSNs from msn_send on; an
 *	 entry of an earlier MSN is stale and free for reuse
 */
struct kiwi_rx_early {
	struct kiwi_rx_early_msg msg[KIWI_RX_EARLY_MSGS];
};

/**
 * struct kiwi_rx_ahead - MPA checks ahead of delivery (RX; llp_tcp_ahead.c)
 * @on: the stream carries CRCs to check
 * @mpa: a copy of the FPDU decoder that runs ahead of it over the octets
 *       queued on the socket, checking CRCs and markers only
 * @seq: TCP sequence number of the next octet @mpa reads
 * @good: the octets before this sequence number form whole FPDUs whose CRC
 *        and markers were found good
 * @err: the MPA error of the FPDU that starts at @good, 0 if none found
 */
struct kiwi_rx_ahead {
	bool on;
	struct kiwi_mpa_rx mpa;
	u32 seq;
	u32 good;
	u8 err;
};

/**
 * struct kiwi_qp_rx - receive side of an attached QP (RX unless noted)
 * @active: RX may run: set at attach, cleared at detach under
 *          sk_callback_lock (written for writing, read under it)
 * @failed: an error was found: every later octet is dropped
 * @early_off: a segment that arrived ahead of a gap could not be placed
 *	       on arrival (rx_early.c): none after it is; each is placed
 *	       and judged in its turn
 * @seen_first: a valid FPDU arrived (opens the responder's TX gate)
 * @initiator: this end sent the MPA Request (set at attach)
 * @expect_rtr: responder in peer-to-peer mode: the first FPDU is the RTR
 * @rtr_types: KIWI_MPA_RTR_* types the responder accepts
 * @mpa: the FPDU decoder
 * @ahead: with CRC on, the decoder is fed only octets @ahead checked
 * @early: what rx_early.c placed of Sends ahead of a gap; NULL on LLPs
 *	   that deliver in order (set by the SCTP LLP's setup; the
 *	   association's endpoint owns it)
 * @kind: enum kiwi_rx_kind of the current FPDU
 * @h: DDP header of the current FPDU
 * @hdr: copy of the first ULPDU octets of the current FPDU
 * @hdr_len: octets in @hdr
 * @ulpdu_len: ULPDU length of the current FPDU
 * @plen: payload octets of the current FPDU
 * @mr: tagged target (reference held for the FPDU)
 * @to: TO of the first payload octet
 * @rreq: the Read Request being received
 * @areq: the Atomic Request being received
 * @aresp: the Atomic Response being received
 * @have_rqe: @rqe holds the receive WR of message @msn_send
 * @rqe_srq: @rqe was taken off the SRQ (else it is still at rq.cons)
 * @rqe_slot: a kernel SRQ's slot keeping a copy of @rqe (kiwi_srq_take()),
 *            else KIWI_SRQ_NO_SLOT
 * @rqe: the receive WR
 * @rqe_len: its total length
 * @rqe_mr: references on its SGEs' MRs
 * @msn_send: MSN of the next Send expected on QN 0
 * @msn_rreq: MSN of the next Read or Atomic Request expected on QN 1
 * @msn_term: MSN of the next Terminate expected on QN 2
 * @msn_aresp: MSN of the next Atomic Response expected on QN 3
 * @send_placed: payload octets of Send @msn_send placed so far (its next
 *               segment's MO)
 * @rresp_placed: payload octets of the oldest outstanding Read's Response
 *                placed so far
 * @write_len: payload octets of the RDMA Write being received, or of the
 *             last one received
 * @write_open: a Write's L = 1 segment has not arrived yet
 * @after_write: the peer's last message from its send queue was a whole
 *               RDMA Write: Immediate Data now completes as Write with
 *               Immediate (RFC 7306 section 6); a Send, Read or Atomic
 *               Request or Immediate Data clears it, Responses do not
 * @imm: the value of the Immediate Data being received
 * @read_work: TCP: reads the stream (llp_tcp_rx.c); queued by
 *             sk_data_ready, cancelled by detach once @active is clear
 * @read_sk: TCP: the socket @read_work reads; set at setup, before the
 *           socket's callbacks can reach the QP, and alive until detach
 */
struct kiwi_qp_rx {
	bool active;
	bool failed;
	bool early_off;
	bool seen_first;
	bool initiator;
	bool expect_rtr;
	u8 rtr_types;
	struct kiwi_mpa_rx mpa;
	struct kiwi_rx_ahead ahead;
	struct kiwi_rx_early *early;
	u8 kind;
	struct kiwi_ddp_hdr h;
	u8 hdr[KIWI_MPA_RX_HDR_MAX];
	u32 hdr_len;
	u32 ulpdu_len;
	u32 plen;
	struct kiwi_mr *mr;
	u64 to;
	struct kiwi_rdmap_rreq rreq;
	struct kiwi_rdmap_areq areq;
	struct kiwi_rdmap_aresp aresp;
	bool have_rqe;
	bool rqe_srq;
	u32 rqe_slot;
	struct kiwi_rqe rqe;
	u64 rqe_len;
	struct kiwi_mr *rqe_mr[KIWI_MAX_SGE];
	u32 msn_send;
	u32 msn_rreq;
	u32 msn_term;
	u32 msn_aresp;
	u32 send_placed;
	u32 rresp_placed;
	u32 write_len;
	bool write_open;
	bool after_write;
	__be32 imm;
	struct work_struct read_work;
	struct sock *read_sk;
};

#endif /* KIWI_QP_DP_H */
