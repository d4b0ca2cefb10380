// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// Encoding of ibverbs work requests into kiwi queue elements and decoding of
// kiwi completions into ibv_wc. Pure functions over memory: no kernel, no
// libibverbs calls.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/kiwi-abi.h>

#include <cstdint>

namespace kiwi {

// Per-QP limits that apply to every send work request.
struct SendLimits {
	uint32_t max_sge;    // <= KIWI_MAX_SGE
	uint32_t max_inline; // <= KIWI_MAX_INLINE
	bool sig_all;	     // sq_sig_all: every WR completes signaled
};

// Maps an ibverbs send opcode (enum ibv_wr_opcode, taken as a plain
// integer: callers in C can store any value) to the kiwi one. Returns 0,
// EOPNOTSUPP for an ibverbs opcode iWARP/kiwi does not implement (TSO,
// ATOMIC_WRITE, DRIVER1) or EINVAL for a value that is no opcode at all.
int map_send_opcode(uint32_t op, uint8_t &kiwi_op) noexcept;

// Fills sqe from wr. Returns 0 or an errno value (EINVAL for a malformed
// request, an atomic without exactly one 8-octet SGE or a window bind
// whose rkey names another window among them; EOPNOTSUPP for an
// unsupported one, IBV_WR_SEND_WITH_IMM with payload or a zero-based
// window among them); sqe is garbage on error.
// Inline data is copied from the caller's buffers here, so they may be
// reused as soon as the post returns.
int encode_send(const ibv_send_wr &wr, const SendLimits &lim,
		kiwi_sqe &sqe) noexcept;

// Fills rqe from wr. Returns 0 or EINVAL (too many or missing SGEs).
int encode_recv(const ibv_recv_wr &wr, uint32_t max_sge,
		kiwi_rqe &rqe) noexcept;

// Fills wc from a kernel-written CQE. Values the ABI does not define come
// out as status IBV_WC_GENERAL_ERR instead of leaking through.
void decode_cqe(const kiwi_cqe &cqe, ibv_wc &wc) noexcept;

} // namespace kiwi
