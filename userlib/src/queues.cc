// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
#include "queues.h"

#include <cerrno>
#include <mutex>

namespace kiwi {

namespace {

// Shared post loop of the send and receive queues.
template <typename Wr, typename Elem, typename Encode>
int post_list(ProducerRing<Elem> &ring, Wr *wr, Wr **bad_wr, uint32_t &posted,
	      Encode encode) noexcept
{
	const uint32_t space = ring.space();
	int ret = 0;

	posted = 0;
	for (; wr; wr = wr->next) {
		if (posted == space) {
			ret = ENOMEM;
			break;
		}
		ret = encode(*wr, ring.slot(posted));
		if (ret)
			break;
		posted++;
	}
	if (posted)
		ring.publish(posted);
	if (ret && bad_wr)
		*bad_wr = wr;
	return ret;
}

} // namespace

void SendQueue::attach(void *area, uint32_t num_entries, const SendLimits &lim,
		       bool doorbell_flag) noexcept
{
	ring_ = ProducerRing<kiwi_sqe>(area, num_entries);
	lim_ = lim;
	doorbell_flag_ = doorbell_flag;
}

int SendQueue::post(ibv_send_wr *wr, ibv_send_wr **bad_wr,
		    uint32_t &posted) noexcept
{
	std::lock_guard<SpinLock> guard(lock_);

	return post_list(ring_, wr, bad_wr, posted,
			 [this](const ibv_send_wr &w, kiwi_sqe &sqe) {
				 return encode_send(w, lim_, sqe);
			 });
}

void SendQueue::begin() noexcept
{
	lock_.lock();
	batch_len_ = 0;
	batch_space_ = ring_.space();
}

int SendQueue::add(const ibv_send_wr &wr) noexcept
{
	if (batch_len_ == batch_space_) {
		batch_space_ = ring_.space();
		if (batch_len_ >= batch_space_)
			return ENOMEM;
	}
	const int ret = encode_send(wr, lim_, ring_.slot(batch_len_));

	if (!ret)
		batch_len_++;
	return ret;
}

uint32_t SendQueue::commit() noexcept
{
	const uint32_t n = batch_len_;

	if (n)
		ring_.publish(n);
	batch_len_ = 0;
	lock_.unlock();
	return n;
}

void SendQueue::abort() noexcept
{
	batch_len_ = 0;
	lock_.unlock();
}

void RecvQueue::attach(void *area, uint32_t num_entries,
		       uint32_t max_sge) noexcept
{
	ring_ = ProducerRing<kiwi_rqe>(area, num_entries);
	max_sge_ = max_sge;
	attached_ = true;
}

int RecvQueue::post(ibv_recv_wr *wr, ibv_recv_wr **bad_wr,
		    uint32_t &posted) noexcept
{
	std::lock_guard<SpinLock> guard(lock_);

	posted = 0;
	if (!attached_) {
		if (bad_wr)
			*bad_wr = wr;
		return EINVAL;
	}
	return post_list(ring_, wr, bad_wr, posted,
			 [this](const ibv_recv_wr &w, kiwi_rqe &rqe) {
				 return encode_recv(w, max_sge_, rqe);
			 });
}

void CompletionQueue::attach(void *area, uint32_t num_entries,
			     bool single_threaded) noexcept
{
	ring_ = ConsumerRing<kiwi_cqe>(area, num_entries);
	single_threaded_ = single_threaded;
}

void CompletionQueue::lock() noexcept
{
	if (!single_threaded_)
		lock_.lock();
}

void CompletionQueue::unlock() noexcept
{
	if (!single_threaded_)
		lock_.unlock();
}

bool CompletionQueue::read(uint32_t k, ibv_wc &wc) noexcept
{
	if (k >= ready_) {
		ready_ = ring_.ready();
		if (k >= ready_)
			return false;
	}
	decode_cqe(ring_.at(k), wc);
	return true;
}

int CompletionQueue::poll(int num_entries, ibv_wc *wc) noexcept
{
	if (num_entries < 0 || (num_entries > 0 && !wc))
		return -EINVAL;

	lock();
	const auto want = static_cast<uint32_t>(num_entries);
	uint32_t n = 0;

	while (n < want && read(n, wc[n]))
		n++;
	if (n) {
		ring_.consume(n);
		ready_ -= n;
	}
	unlock();
	return static_cast<int>(n);
}

int CompletionQueue::start_poll(ibv_wc &wc) noexcept
{
	lock();
	if (!read(0, wc)) {
		unlock();
		return ENOENT;
	}
	taken_ = 1;
	return 0;
}

int CompletionQueue::next_poll(ibv_wc &wc) noexcept
{
	if (!read(taken_, wc))
		return ENOENT;
	taken_++;
	return 0;
}

void CompletionQueue::end_poll() noexcept
{
	ring_.consume(taken_);
	ready_ -= taken_;
	taken_ = 0;
	unlock();
}

// Under the lock, so the ring is not replaced (resize) while it is armed.
void CompletionQueue::arm(bool solicited_only) noexcept
{
	lock();
	ring_.arm(solicited_only ? KIWI_CQ_ARM_SOLICITED : KIWI_CQ_ARM_NEXT);
	unlock();
}

} // namespace kiwi
