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

void CompletionQueue::attach(void *area, uint32_t num_entries) noexcept
{
	ring_ = ConsumerRing<kiwi_cqe>(area, num_entries);
}

int CompletionQueue::poll(int num_entries, ibv_wc *wc) noexcept
{
	if (num_entries < 0 || (num_entries > 0 && !wc))
		return -EINVAL;

	std::lock_guard<SpinLock> guard(lock_);
	const uint32_t ready = ring_.ready();
	const uint32_t n = ready < static_cast<uint32_t>(num_entries)
				   ? ready
				   : static_cast<uint32_t>(num_entries);

	for (uint32_t i = 0; i < n; i++)
		decode_cqe(ring_.at(i), wc[i]);
	if (n)
		ring_.consume(n);
	return static_cast<int>(n);
}

void CompletionQueue::arm(bool solicited_only) noexcept
{
	ring_.arm(solicited_only ? KIWI_CQ_ARM_SOLICITED : KIWI_CQ_ARM_NEXT);
}

} // namespace kiwi
