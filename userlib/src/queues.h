// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// The user-space halves of kiwi's work and completion queues: post and poll
// logic over a ring, independent of the kernel and of libibverbs' internals.
// Each queue serialises its callers with its own lock. None allocates or
// makes a system call; ringing the send doorbell is the caller's job.
#pragma once

#include "ring.h"
#include "spinlock.h"
#include "wqe.h"

#include <infiniband/verbs.h>
#include <rdma/kiwi-abi.h>

#include <cstdint>

namespace kiwi {

class SendQueue {
public:
	// area: mapped SQ ring of num_entries (ring_entries_valid()) SQEs.
	// doorbell_flag: the kernel keeps the ring's KIWI_RING_F_DOORBELL
	// (KIWI_QP_FEAT_SQ_DOORBELL), so a post may skip the doorbell while
	// the kernel's transmit engine runs; without it every post rings.
	void attach(void *area, uint32_t num_entries, const SendLimits &lim,
		    bool doorbell_flag = false) noexcept;

	// Encodes and publishes the WR list. Returns 0, or an errno value
	// with *bad_wr at the first WR not posted (EINVAL/EOPNOTSUPP: that
	// WR is bad, ENOMEM: the ring is full). posted is the number of
	// WRs published, also on error: ring the doorbell if it is not 0.
	int post(ibv_send_wr *wr, ibv_send_wr **bad_wr,
		 uint32_t &posted) noexcept;

	// ibv_post_send: post(), then, if anything was published, ring the
	// doorbell: doorbell() returns 0 or the errno of the kernel's
	// refusal. The kernel refuses a doorbell while the QP takes no sends
	// (or once the device is gone) and then drops what it had not
	// started, this post's WRs among them (Documentation/abi.md): the
	// whole list failed, so the doorbell's errno is returned with
	// *bad_wr = wr. With the doorbell flag the doorbell is skipped while
	// the kernel's transmit engine runs and will find the new WRs
	// (ProducerRing::needs_doorbell()); the flag is always set while the
	// QP takes no sends, so a post that would be refused still rings.
	template <typename Doorbell>
	int post_and_ring(ibv_send_wr *wr, ibv_send_wr **bad_wr,
			  Doorbell &&doorbell) noexcept
	{
		uint32_t posted = 0;
		const int ret = post(wr, bad_wr, posted);

		if (!posted)
			return ret;
		if (doorbell_flag_ && !ring_.needs_doorbell())
			return ret;
		const int refused = doorbell();
		if (!refused)
			return ret;
		if (bad_wr)
			*bad_wr = wr;
		return refused;
	}

private:
	SpinLock lock_;
	ProducerRing<kiwi_sqe> ring_;
	SendLimits lim_{};
	bool doorbell_flag_ = false;
};

// A receive queue: a QP's RQ or an SRQ.
class RecvQueue {
public:
	void attach(void *area, uint32_t num_entries,
		    uint32_t max_sge) noexcept;

	// As SendQueue::post. A receive queue needs a doorbell only while
	// the kernel has stopped consuming it (see in_error()): the
	// doorbell of a QP in the error state flushes both rings.
	int post(ibv_recv_wr *wr, ibv_recv_wr **bad_wr,
		 uint32_t &posted) noexcept;

	// KIWI_RING_F_ERROR is set on the ring; call it after a post that
	// published something (ProducerRing::in_error()).
	[[nodiscard]] bool in_error() const noexcept
	{
		return attached_ && ring_.in_error();
	}

private:
	SpinLock lock_;
	ProducerRing<kiwi_rqe> ring_;
	uint32_t max_sge_ = 0;
	bool attached_ = false;
};

class CompletionQueue {
public:
	void attach(void *area, uint32_t num_entries) noexcept;

	// Moves up to num_entries completions into wc. Returns how many, or
	// -EINVAL for a negative num_entries / missing wc array.
	int poll(int num_entries, ibv_wc *wc) noexcept;

	// Requests one completion event: for the next solicited (or, with
	// solicited_only false, any) completion.
	void arm(bool solicited_only) noexcept;

private:
	SpinLock lock_;
	ConsumerRing<kiwi_cqe> ring_;
};

} // namespace kiwi
