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

		if (!posted || !needs_doorbell())
			return ret;
		const int refused = doorbell();
		if (!refused)
			return ret;
		if (bad_wr)
			*bad_wr = wr;
		return refused;
	}

	// After WRs were published: whether the kernel must be told. Always
	// without the doorbell flag; with it, only while the kernel's
	// transmit engine is idle (ProducerRing::needs_doorbell()).
	[[nodiscard]] bool needs_doorbell() const noexcept
	{
		return !doorbell_flag_ || ring_.needs_doorbell();
	}

	// The ibv_wr_*() batch of the extended verbs API, on the same ring
	// and encoder as post(). begin() takes the queue's lock, which is
	// held until commit() or abort(); add() encodes one WR into the next
	// free slot without publishing it (0, or encode_send()'s errno, or
	// ENOMEM when the ring is full; a failed add() leaves the earlier
	// ones in place); commit() publishes every added WR and returns
	// their number; abort() publishes nothing.
	void begin() noexcept;
	int add(const ibv_send_wr &wr) noexcept;
	uint32_t commit() noexcept;
	void abort() noexcept;

private:
	SpinLock lock_;
	ProducerRing<kiwi_sqe> ring_;
	SendLimits lim_{};
	uint32_t batch_len_ = 0;   // slots filled by add() since begin()
	uint32_t batch_space_ = 0; // free slots last seen in this batch
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
	// single_threaded (IBV_CREATE_CQ_ATTR_SINGLE_THREADED): the caller
	// promises never to poll from two threads at once; no lock is taken.
	void attach(void *area, uint32_t num_entries,
		    bool single_threaded = false) noexcept;

	// Moves up to num_entries completions into wc. Returns how many, or
	// -EINVAL for a negative num_entries / missing wc array.
	int poll(int num_entries, ibv_wc *wc) noexcept;

	// The extended verbs' polling (ibv_start_poll() .. ibv_end_poll()):
	// start_poll() takes the lock and decodes the oldest completion into
	// wc; it returns 0, or ENOENT when there is none (the lock is then
	// released and end_poll() must not follow). next_poll() decodes the
	// next one, ENOENT when there is none. end_poll() gives the slots of
	// the completions read back to the kernel and releases the lock.
	int start_poll(ibv_wc &wc) noexcept;
	int next_poll(ibv_wc &wc) noexcept;
	void end_poll() noexcept;

	// Requests one completion event: for the next solicited (or, with
	// solicited_only false, any) completion.
	void arm(bool solicited_only) noexcept;

	// Swaps in a resized ring (ibv_resize_cq): swap(area, num_entries),
	// called under the lock, so no poll or arm runs meanwhile, returns 0
	// and the new ring, whose first slot holds the oldest completion not
	// read yet, or an errno value that leaves the current ring in place.
	// The kernel takes the unread completions from the consumer index
	// every poll publishes, so no read may be pending (as in ibv_start_poll
	// .. ibv_end_poll).
	template <typename Swap> int replace(Swap &&swap) noexcept
	{
		void *area = nullptr;
		uint32_t num_entries = 0;

		lock();
		const int ret = swap(area, num_entries);
		if (ret == 0) {
			ring_ = ConsumerRing<kiwi_cqe>(area, num_entries);
			ready_ = 0;
			taken_ = 0;
		}
		unlock();
		return ret;
	}

private:
	// The one reader of the ring both polling styles go through: decodes
	// the k-th unread completion into wc, false when there is none yet.
	bool read(uint32_t k, ibv_wc &wc) noexcept;
	void lock() noexcept;
	void unlock() noexcept;

	SpinLock lock_;
	ConsumerRing<kiwi_cqe> ring_;
	uint32_t ready_ = 0; // unread completions last seen in the ring
	uint32_t taken_ = 0; // completions read since start_poll()
	bool single_threaded_ = false;
};

} // namespace kiwi
