// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// libkiwi's provider objects and the C++ implementations of the verbs. The
// C entry points libibverbs calls are in shim.cc; everything here may throw
// (std::bad_alloc), the shim turns that into errno.
//
// Each object embeds the libibverbs object first, so the pointer libibverbs
// hands back converts to ours (the classes are standard-layout).
#pragma once

#include "mapping.h"
#include "queues.h"
#include "send_batch.h"
#include "verbs_private.h"

#include <infiniband/verbs.h>
#include <rdma/kiwi-abi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace kiwi {

// A core uverbs response directly followed by kiwi's driver response: the
// one buffer libibverbs' command helpers fill. (The core structs end in a
// flexible array, so this cannot be a plain struct of the two in C++.)
// Only the driver part is read back: when libibverbs talks ioctl to the
// kernel it returns the core results through the helpers' other output
// arguments and leaves the core response untouched.
template <typename Core, typename Drv> class RespBuffer {
public:
	Core *core() noexcept { return reinterpret_cast<Core *>(bytes_); }
	[[nodiscard]] size_t size() const noexcept { return sizeof(bytes_); }

	[[nodiscard]] Drv drv() const noexcept
	{
		Drv drv;

		std::memcpy(&drv, bytes_ + sizeof(Core), sizeof(drv));
		return drv;
	}

private:
	static_assert(sizeof(Core) % 8 == 0,
		      "driver data must follow without padding");
	alignas(8) unsigned char bytes_[sizeof(Core) + sizeof(Drv)] = {};
};

// The send doorbell: a legacy write() POST_SEND command (header plus
// struct ib_uverbs_post_send) that carries no work requests.
struct PostSendDoorbell {
	ib_uverbs_cmd_hdr hdr;
	uint64_t response;
	uint32_t qp_handle;
	uint32_t wr_count;
	uint32_t sge_count;
	uint32_t wqe_size;
};
static_assert(sizeof(PostSendDoorbell) ==
	      sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_post_send));
static_assert(offsetof(PostSendDoorbell, qp_handle) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_post_send, qp_handle));
static_assert(offsetof(PostSendDoorbell, wqe_size) ==
	      sizeof(ib_uverbs_cmd_hdr) +
		      offsetof(ib_uverbs_post_send, wqe_size));

// Allocated (zeroed) and initialised by _verbs_init_and_alloc_context.
struct Context {
	verbs_context vctx;
	uint32_t max_inline; // from the kernel, <= KIWI_MAX_INLINE
	uint32_t features;   // KIWI_CTX_FEAT_* in use (ctx_features.h)
};

struct Cq {
	pabi::verbs_cq vcq;
	Mapping ring_map;
	CompletionQueue queue;
	ibv_wc current; // ibv_cq_ex polling: the completion read_*() report
};

struct Qp {
	pabi::verbs_qp vqp;
	Mapping sq_map;
	Mapping rq_map; // unused when the QP takes receives from an SRQ
	SendQueue sq;
	RecvQueue rq;	 // not attached with an SRQ: post_recv fails
	SendBatch batch; // the ibv_qp_ex builders; unused without them
	int cmd_fd;
	PostSendDoorbell doorbell;
	ib_uverbs_post_send_resp doorbell_resp; // written by the kernel, unread
};

struct Srq {
	pabi::verbs_srq vsrq;
	Mapping ring_map;
	RecvQueue rq;
};

static_assert(std::is_standard_layout_v<Context> &&
	      offsetof(Context, vctx) == 0);
static_assert(std::is_standard_layout_v<Cq> && offsetof(Cq, vcq) == 0);
static_assert(std::is_standard_layout_v<Qp> && offsetof(Qp, vqp) == 0);
static_assert(std::is_standard_layout_v<Srq> && offsetof(Srq, vsrq) == 0);

inline Context *to_context(ibv_context *ctx) noexcept
{
	return reinterpret_cast<Context *>(verbs_get_ctx(ctx));
}

inline Cq *to_cq(ibv_cq *cq) noexcept
{
	return reinterpret_cast<Cq *>(cq);
}
inline Cq *to_cq(ibv_cq_ex *cq) noexcept
{
	return reinterpret_cast<Cq *>(cq);
}
inline Qp *to_qp(ibv_qp *qp) noexcept
{
	return reinterpret_cast<Qp *>(qp);
}
inline Qp *to_qp(ibv_qp_ex *qp) noexcept
{
	return reinterpret_cast<Qp *>(qp);
}

// Rings qp's send doorbell (qp.cc). Returns 0 or the errno of write(2):
// the kernel refused the doorbell.
int ring_doorbell(Qp &qp) noexcept;

// Fills the ibv_qp_ex builders of a QP created with
// IBV_QP_INIT_ATTR_SEND_OPS_FLAGS (qp_ex.cc).
void init_qp_ex(Qp &qp) noexcept;
inline Srq *to_srq(ibv_srq *srq) noexcept
{
	return reinterpret_cast<Srq *>(srq);
}

namespace verbs {

// Functions returning a pointer return NULL with errno set on failure;
// int functions return 0 or an errno value unless noted.

// Device and context (context.cc).
verbs_context *alloc_context(ibv_device *device, int cmd_fd);
void free_context(ibv_context *ctx) noexcept;
int query_device_ex(ibv_context *ctx, const ibv_query_device_ex_input *input,
		    ibv_device_attr_ex *attr, size_t attr_size);
int query_port(ibv_context *ctx, uint8_t port, ibv_port_attr *attr);
ibv_pd *alloc_pd(ibv_context *ctx);
int dealloc_pd(ibv_pd *pd);
ibv_mr *reg_mr(ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
	       int access);
// ibv_rereg_mr: the kernel replaces the MR under new keys (kiwi(7)).
int rereg_mr(pabi::verbs_mr *vmr, int flags, ibv_pd *pd, void *addr,
	     size_t length, int access);
int dereg_mr(pabi::verbs_mr *vmr);

// Memory windows (mw.cc).
ibv_mw *alloc_mw(ibv_pd *pd, ibv_mw_type type);
int dealloc_mw(ibv_mw *mw);
int bind_mw(ibv_qp *qp, ibv_mw *mw, ibv_mw_bind *mw_bind) noexcept;

// Completion queues (cq.cc).
ibv_cq *create_cq(ibv_context *ctx, int cqe, ibv_comp_channel *channel,
		  int comp_vector);
int destroy_cq(ibv_cq *cq);
int resize_cq(ibv_cq *cq, int cqe);
ibv_cq_ex *create_cq_ex(ibv_context *ctx, ibv_cq_init_attr_ex *attr);
int poll_cq(ibv_cq *cq, int num_entries,
	    ibv_wc *wc) noexcept; // count or -errno
int req_notify_cq(ibv_cq *cq, int solicited_only) noexcept;

// Queue pairs (qp.cc).
ibv_qp *create_qp(ibv_pd *pd, ibv_qp_init_attr *attr);
ibv_qp *create_qp_ex(ibv_context *ctx, ibv_qp_init_attr_ex *attr);
int query_qp(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask,
	     ibv_qp_init_attr *init_attr);
int modify_qp(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask);
int destroy_qp(ibv_qp *qp);
int post_send(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad_wr) noexcept;
int post_recv(ibv_qp *qp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept;

// Shared receive queues (srq.cc).
ibv_srq *create_srq(ibv_pd *pd, ibv_srq_init_attr *attr);
int modify_srq(ibv_srq *srq, ibv_srq_attr *attr, int attr_mask);
int query_srq(ibv_srq *srq, ibv_srq_attr *attr);
int destroy_srq(ibv_srq *srq);
int post_srq_recv(ibv_srq *srq, ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept;

} // namespace verbs
} // namespace kiwi
