// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// The work request builders of the extended verbs API (ibv_wr_start(),
// ibv_wr_send(), ibv_wr_set_sge(), ..., ibv_wr_complete()) over a
// SendQueue. Each builder call fills an ibv_send_wr; the WR is encoded by
// the same encode_send() as ibv_post_send() as soon as its data is set
// (so inline data is copied before the setter returns), or, for a WR
// without a data setter, when the next one starts or the batch ends.
//
// The builders return nothing: the first error is kept and fails the
// whole batch at complete(), which then posts nothing.
#pragma once

#include "queues.h"

#include <infiniband/verbs.h>
#include <rdma/kiwi-abi.h>

#include <cstddef>
#include <cstdint>

namespace kiwi {

class SendBatch {
public:
	void attach(SendQueue &sq) noexcept { sq_ = &sq; }

	// ibv_wr_start: takes the send queue's lock until complete()/abort().
	void start() noexcept;

	// Starts a WR (closing the one before). flags are ibv_send_flags;
	// IBV_SEND_INLINE comes from set_inline() alone. Returns the WR for
	// the caller to fill in the opcode's fields, or nullptr once the
	// batch has failed.
	ibv_send_wr *begin_wr(ibv_wr_opcode op, uint64_t wr_id,
			      unsigned int flags) noexcept;

	// Data setters: complete the current WR with these SGEs, or with
	// these buffers copied inline.
	void set_sges(size_t num, const ibv_sge *sges) noexcept;
	void set_inline(size_t num, const ibv_data_buf *bufs) noexcept;

	// Fails the batch with err (a builder kiwi does not implement, or
	// arguments the builder itself refuses).
	void fail(int err) noexcept;

	// ibv_wr_complete: 0 with posted WRs published (ring the doorbell
	// when posted is not 0), or the batch's first error with nothing
	// published. Releases the lock.
	int complete(uint32_t &posted) noexcept;

	// ibv_wr_abort: publishes nothing, releases the lock.
	void abort() noexcept;

private:
	void close() noexcept;

	SendQueue *sq_ = nullptr;
	ibv_send_wr wr_{};
	ibv_sge sges_[KIWI_MAX_SGE]{};
	int err_ = 0;
	bool open_ = false;    // wr_ is started and not yet encoded
	bool started_ = false; // between start() and complete()/abort()
};

} // namespace kiwi
