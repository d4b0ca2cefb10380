// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
#include "send_batch.h"

#include <cerrno>
#include <cstdint>

namespace kiwi {

void SendBatch::start() noexcept
{
	sq_->begin();
	err_ = 0;
	open_ = false;
	started_ = true;
}

void SendBatch::fail(int err) noexcept
{
	if (!err_)
		err_ = err;
	open_ = false;
}

void SendBatch::close() noexcept
{
	if (!open_)
		return;
	open_ = false;
	const int ret = sq_->add(wr_);
	if (ret)
		fail(ret);
}

ibv_send_wr *SendBatch::begin_wr(ibv_wr_opcode op, uint64_t wr_id,
				 unsigned int flags) noexcept
{
	if (!started_) // a builder outside wr_start/wr_complete: ignored
		return nullptr;
	close();
	if (err_)
		return nullptr;
	wr_ = ibv_send_wr{};
	wr_.wr_id = wr_id;
	wr_.opcode = op;
	wr_.send_flags = flags & ~static_cast<unsigned int>(IBV_SEND_INLINE);
	wr_.sg_list = sges_;
	open_ = true;
	return &wr_;
}

void SendBatch::set_sges(size_t num, const ibv_sge *sges) noexcept
{
	if (!open_) {
		fail(EINVAL); // no WR to attach data to
		return;
	}
	if (num > KIWI_MAX_SGE || (num && !sges)) {
		fail(EINVAL);
		return;
	}
	for (size_t i = 0; i < num; i++)
		sges_[i] = sges[i];
	wr_.num_sge = static_cast<int>(num);
	close();
}

void SendBatch::set_inline(size_t num, const ibv_data_buf *bufs) noexcept
{
	if (!open_) {
		fail(EINVAL);
		return;
	}
	if (num > KIWI_MAX_SGE || (num && !bufs)) {
		fail(EINVAL);
		return;
	}
	for (size_t i = 0; i < num; i++) {
		if (bufs[i].length > UINT32_MAX) {
			fail(EINVAL);
			return;
		}
		sges_[i] = ibv_sge{
			.addr = reinterpret_cast<uintptr_t>(bufs[i].addr),
			.length = static_cast<uint32_t>(bufs[i].length),
			.lkey = 0,
		};
	}
	wr_.num_sge = static_cast<int>(num);
	wr_.send_flags |= IBV_SEND_INLINE;
	close(); // encode_send() copies the bytes now
}

int SendBatch::complete(uint32_t &posted) noexcept
{
	posted = 0;
	if (!started_)
		return EINVAL;
	close();
	started_ = false;
	if (const int err = err_; err) {
		// Read before the lock goes: the next start() clears it.
		sq_->abort();
		return err;
	}
	posted = sq_->commit();
	return 0;
}

void SendBatch::abort() noexcept
{
	if (!started_)
		return;
	open_ = false;
	started_ = false;
	sq_->abort();
}

} // namespace kiwi
