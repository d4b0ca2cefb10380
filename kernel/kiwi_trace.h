/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kiwi: tracepoints (trace system "kiwi"), defined in trace.c. They follow
 * a connection's life: CM endpoint states and the events iw_cm hears, the
 * MPA negotiation, QP states, Terminates, and work requests from posting
 * to completion. kiwi(7) shows how to record them:
 *
 *   trace-cmd record -e kiwi rping -c -a 10.0.0.2 -C 1
 *   perf trace -a --libtraceevent_print -e 'kiwi:*' -- rping ...
 *
 * (-a: most events fire in work context, not in the traced command).
 *
 * Every event names its ib_device as it is called when the event fires;
 * "-" for an endpoint no device is known for: a responder's connection
 * before its QP is attached, or one whose QP has gone.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM kiwi

#if !defined(_KIWI_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _KIWI_TRACE_H

#include <linux/in6.h>
#include <linux/socket.h>
#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>
#include <rdma/iw_cm.h>
#include <rdma/kiwi-abi.h>

#include "cm_ep.h"

/* The name of @ibdev for an event, "-" for none. */
#define kiwi_trace_dev(ibdev) ((ibdev) ? dev_name(&(ibdev)->dev) : "-")

#define KIWI_EP_STATE_LIST				\
	kiwi_ep_state(IDLE)				\
	kiwi_ep_state(LISTEN)				\
	kiwi_ep_state(CONNECTING)			\
	kiwi_ep_state(WAIT_REP)				\
	kiwi_ep_state(WAIT_REQ)				\
	kiwi_ep_state(RECVD_REQ)			\
	kiwi_ep_state(CONNECTED)			\
	kiwi_ep_state(CLOSING)				\
	kiwi_ep_state_end(CLOSED)

#define KIWI_QP_STATE_LIST				\
	kiwi_qp_state(RESET)				\
	kiwi_qp_state(INIT)				\
	kiwi_qp_state(RTR)				\
	kiwi_qp_state(RTS)				\
	kiwi_qp_state(SQD)				\
	kiwi_qp_state(SQE)				\
	kiwi_qp_state_end(ERR)

#define KIWI_IW_EVENT_LIST				\
	kiwi_iw_event(CONNECT_REQUEST)			\
	kiwi_iw_event(CONNECT_REPLY)			\
	kiwi_iw_event(ESTABLISHED)			\
	kiwi_iw_event(DISCONNECT)			\
	kiwi_iw_event_end(CLOSE)

#define KIWI_MPA_ST_LIST				\
	kiwi_mpa_st(OK)					\
	kiwi_mpa_st(NEED_MORE)				\
	kiwi_mpa_st(BAD_KEY)				\
	kiwi_mpa_st(INIT_INIT)				\
	kiwi_mpa_st(RESP_RESP)				\
	kiwi_mpa_st(BAD_PDLEN)				\
	kiwi_mpa_st(BAD_REV)				\
	kiwi_mpa_st(BAD_ENH)				\
	kiwi_mpa_st(REJECTED)				\
	kiwi_mpa_st(IRD)				\
	kiwi_mpa_st(NO_RTR)				\
	kiwi_mpa_st_end(NO_ULPF)

#undef kiwi_ep_state
#undef kiwi_ep_state_end
#undef kiwi_qp_state
#undef kiwi_qp_state_end
#undef kiwi_iw_event
#undef kiwi_iw_event_end
#undef kiwi_mpa_st
#undef kiwi_mpa_st_end
#define kiwi_ep_state(x)	TRACE_DEFINE_ENUM(KIWI_EP_##x);
#define kiwi_ep_state_end(x)	TRACE_DEFINE_ENUM(KIWI_EP_##x);
#define kiwi_qp_state(x)	TRACE_DEFINE_ENUM(IB_QPS_##x);
#define kiwi_qp_state_end(x)	TRACE_DEFINE_ENUM(IB_QPS_##x);
#define kiwi_iw_event(x)	TRACE_DEFINE_ENUM(IW_CM_EVENT_##x);
#define kiwi_iw_event_end(x)	TRACE_DEFINE_ENUM(IW_CM_EVENT_##x);
#define kiwi_mpa_st(x)		TRACE_DEFINE_ENUM(KIWI_MPA_ST_##x);
#define kiwi_mpa_st_end(x)	TRACE_DEFINE_ENUM(KIWI_MPA_ST_##x);

KIWI_EP_STATE_LIST
KIWI_QP_STATE_LIST
KIWI_IW_EVENT_LIST
KIWI_MPA_ST_LIST

#undef kiwi_ep_state
#undef kiwi_ep_state_end
#undef kiwi_qp_state
#undef kiwi_qp_state_end
#undef kiwi_iw_event
#undef kiwi_iw_event_end
#undef kiwi_mpa_st
#undef kiwi_mpa_st_end
#define kiwi_ep_state(x)	{ KIWI_EP_##x, #x },
#define kiwi_ep_state_end(x)	{ KIWI_EP_##x, #x }
#define kiwi_qp_state(x)	{ IB_QPS_##x, #x },
#define kiwi_qp_state_end(x)	{ IB_QPS_##x, #x }
#define kiwi_iw_event(x)	{ IW_CM_EVENT_##x, #x },
#define kiwi_iw_event_end(x)	{ IW_CM_EVENT_##x, #x }
#define kiwi_mpa_st(x)		{ KIWI_MPA_ST_##x, #x },
#define kiwi_mpa_st_end(x)	{ KIWI_MPA_ST_##x, #x }

#define kiwi_show_ep_state(x)	__print_symbolic(x, KIWI_EP_STATE_LIST)
#define kiwi_show_qp_state(x)	__print_symbolic(x, KIWI_QP_STATE_LIST)
#define kiwi_show_iw_event(x)	__print_symbolic(x, KIWI_IW_EVENT_LIST)
#define kiwi_show_mpa_st(x)	__print_symbolic(x, KIWI_MPA_ST_LIST)

/**
 ** Connection management
 **/

TRACE_EVENT(kiwi_cm_state,
	TP_PROTO(const struct ib_device *ibdev, const void *ep, int old,
		 int state, const struct sockaddr_storage *laddr,
		 const struct sockaddr_storage *raddr),

	TP_ARGS(ibdev, ep, old, state, laddr, raddr),

	TP_STRUCT__entry(
		__string(dev, kiwi_trace_dev(ibdev))
		__field(const void *, ep)
		__field(int, old)
		__field(int, state)
		__array(u8, laddr, sizeof(struct sockaddr_in6))
		__array(u8, raddr, sizeof(struct sockaddr_in6))
	),

	TP_fast_assign(
		__assign_str(dev, kiwi_trace_dev(ibdev));
		__entry->ep = ep;
		__entry->old = old;
		__entry->state = state;
		memcpy(__entry->laddr, laddr, sizeof(struct sockaddr_in6));
		memcpy(__entry->raddr, raddr, sizeof(struct sockaddr_in6));
	),

	TP_printk("dev=%s ep=%p %s -> %s local=%pISpc remote=%pISpc",
		  __get_str(dev), __entry->ep,
		  kiwi_show_ep_state(__entry->old),
		  kiwi_show_ep_state(__entry->state),
		  __entry->laddr, __entry->raddr)
);

TRACE_EVENT(kiwi_cm_event,
	TP_PROTO(const struct ib_device *ibdev, const void *ep, int event,
		 int status),

	TP_ARGS(ibdev, ep, event, status),

	TP_STRUCT__entry(
		__string(dev, kiwi_trace_dev(ibdev))
		__field(const void *, ep)
		__field(int, event)
		__field(int, status)
	),

	TP_fast_assign(
		__assign_str(dev, kiwi_trace_dev(ibdev));
		__entry->ep = ep;
		__entry->event = event;
		__entry->status = status;
	),

	TP_printk("dev=%s ep=%p %s status=%d", __get_str(dev), __entry->ep,
		  kiwi_show_iw_event(__entry->event), __entry->status)
);

TRACE_EVENT(kiwi_mpa_nego,
	TP_PROTO(const struct ib_device *ibdev, const void *ep,
		 bool initiator, int status, const struct kiwi_mpa_params *p),

	TP_ARGS(ibdev, ep, initiator, status, p),

	TP_STRUCT__entry(
		__string(dev, kiwi_trace_dev(ibdev))
		__field(const void *, ep)
		__field(bool, initiator)
		__field(int, status)
		__field(u8, rev)
		__field(bool, crc)
		__field(bool, tx_markers)
		__field(bool, rx_markers)
		__field(bool, p2p)
		__field(u8, rtr)
		__field(u16, ird)
		__field(u16, ord)
	),

	TP_fast_assign(
		__assign_str(dev, kiwi_trace_dev(ibdev));
		__entry->ep = ep;
		__entry->initiator = initiator;
		__entry->status = status;
		__entry->rev = p->rev;
		__entry->crc = p->crc;
		__entry->tx_markers = p->tx_markers;
		__entry->rx_markers = p->rx_markers;
		__entry->p2p = p->p2p;
		__entry->rtr = p->rtr;
		__entry->ird = p->ird;
		__entry->ord = p->ord;
	),

	TP_printk("dev=%s ep=%p %s %s rev=%u crc=%u markers_tx=%u markers_rx=%u p2p=%u rtr=0x%x ird=%u ord=%u",
		  __get_str(dev), __entry->ep,
		  __entry->initiator ? "initiator" : "responder",
		  kiwi_show_mpa_st(__entry->status), __entry->rev,
		  __entry->crc, __entry->tx_markers, __entry->rx_markers,
		  __entry->p2p, __entry->rtr, __entry->ird, __entry->ord)
);

/**
 ** Queue pairs
 **/

/* Only real changes: modify_qp from INIT to INIT is no event. */
TRACE_EVENT_CONDITION(kiwi_qp_state,
	TP_PROTO(const struct ib_qp *ibqp, int old, int state),

	TP_ARGS(ibqp, old, state),

	TP_CONDITION(old != state),

	TP_STRUCT__entry(
		__string(dev, dev_name(&ibqp->device->dev))
		__field(u32, qpn)
		__field(int, old)
		__field(int, state)
	),

	TP_fast_assign(
		__assign_str(dev, dev_name(&ibqp->device->dev));
		__entry->qpn = ibqp->qp_num;
		__entry->old = old;
		__entry->state = state;
	),

	TP_printk("dev=%s qpn=%u %s -> %s", __get_str(dev), __entry->qpn,
		  kiwi_show_qp_state(__entry->old),
		  kiwi_show_qp_state(__entry->state))
);

TRACE_EVENT(kiwi_terminate,
	TP_PROTO(const struct ib_qp *ibqp, bool sent, u8 layer, u8 etype,
		 u8 ecode),

	TP_ARGS(ibqp, sent, layer, etype, ecode),

	TP_STRUCT__entry(
		__string(dev, dev_name(&ibqp->device->dev))
		__field(u32, qpn)
		__field(bool, sent)
		__field(u8, layer)
		__field(u8, etype)
		__field(u8, ecode)
	),

	TP_fast_assign(
		__assign_str(dev, dev_name(&ibqp->device->dev));
		__entry->qpn = ibqp->qp_num;
		__entry->sent = sent;
		__entry->layer = layer;
		__entry->etype = etype;
		__entry->ecode = ecode;
	),

	TP_printk("dev=%s qpn=%u %s layer=%u etype=%u ecode=0x%02x",
		  __get_str(dev), __entry->qpn,
		  __entry->sent ? "sent" : "received", __entry->layer,
		  __entry->etype, __entry->ecode)
);

/**
 ** Work requests
 **/

DECLARE_EVENT_CLASS(kiwi_post_class,
	TP_PROTO(const struct ib_qp *ibqp, u64 wr_id, int opcode, u32 nsge),

	TP_ARGS(ibqp, wr_id, opcode, nsge),

	TP_STRUCT__entry(
		__string(dev, dev_name(&ibqp->device->dev))
		__field(u32, qpn)
		__field(u64, wr_id)
		__field(int, opcode)
		__field(u32, nsge)
	),

	TP_fast_assign(
		__assign_str(dev, dev_name(&ibqp->device->dev));
		__entry->qpn = ibqp->qp_num;
		__entry->wr_id = wr_id;
		__entry->opcode = opcode;
		__entry->nsge = nsge;
	),

	TP_printk("dev=%s qpn=%u wr_id=0x%llx opcode=%d num_sge=%u",
		  __get_str(dev), __entry->qpn, __entry->wr_id,
		  __entry->opcode, __entry->nsge)
);

/* A kernel ULP's send WR (opcode: enum ib_wr_opcode). */
DEFINE_EVENT(kiwi_post_class, kiwi_post_send,
	TP_PROTO(const struct ib_qp *ibqp, u64 wr_id, int opcode, u32 nsge),
	TP_ARGS(ibqp, wr_id, opcode, nsge));

/* A kernel ULP's receive WR (opcode: -1). */
DEFINE_EVENT(kiwi_post_class, kiwi_post_recv,
	TP_PROTO(const struct ib_qp *ibqp, u64 wr_id, int opcode, u32 nsge),
	TP_ARGS(ibqp, wr_id, opcode, nsge));

/* TX takes a send WR off the SQ, a kernel or user QP's (enum kiwi_wr_opcode). */
TRACE_EVENT(kiwi_wr_start,
	TP_PROTO(const struct ib_qp *ibqp, u32 idx,
		 const struct kiwi_sqe *sqe),

	TP_ARGS(ibqp, idx, sqe),

	TP_STRUCT__entry(
		__string(dev, dev_name(&ibqp->device->dev))
		__field(u32, qpn)
		__field(u32, idx)
		__field(u64, wr_id)
		__field(u8, opcode)
		__field(u32, flags)
	),

	TP_fast_assign(
		__assign_str(dev, dev_name(&ibqp->device->dev));
		__entry->qpn = ibqp->qp_num;
		__entry->idx = idx;
		__entry->wr_id = sqe->wr_id;
		__entry->opcode = sqe->opcode;
		__entry->flags = sqe->flags;
	),

	TP_printk("dev=%s qpn=%u sq_idx=%u wr_id=0x%llx opcode=%u flags=0x%x",
		  __get_str(dev), __entry->qpn, __entry->idx, __entry->wr_id,
		  __entry->opcode, __entry->flags)
);

/* A completion entered a CQ (opcode: enum kiwi_wc_opcode). */
TRACE_EVENT(kiwi_cqe,
	TP_PROTO(const struct ib_cq *ibcq, const struct kiwi_cqe *cqe),

	TP_ARGS(ibcq, cqe),

	TP_STRUCT__entry(
		__string(dev, dev_name(&ibcq->device->dev))
		__field(u32, qpn)
		__field(u64, wr_id)
		__field(u16, opcode)
		__field(u8, status)
		__field(u32, byte_len)
	),

	TP_fast_assign(
		__assign_str(dev, dev_name(&ibcq->device->dev));
		__entry->qpn = cqe->qp_num;
		__entry->wr_id = cqe->wr_id;
		__entry->opcode = cqe->opcode;
		__entry->status = cqe->status;
		__entry->byte_len = cqe->byte_len;
	),

	TP_printk("dev=%s qpn=%u wr_id=0x%llx opcode=%u status=%u byte_len=%u",
		  __get_str(dev), __entry->qpn, __entry->wr_id,
		  __entry->opcode, __entry->status, __entry->byte_len)
);

#endif /* _KIWI_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE kiwi_trace
#include <trace/define_trace.h>
