// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// Litmus tests of libkiwi's half of the two store-buffering pairs in the
// ring protocol. Each iteration releases a provider thread and a thread
// that does what kiwi.ko does, at the same moment:
//
//  - receive vs. error flag: the provider publishes a receive and reads
//    KIWI_RING_F_ERROR (RecvQueue::post, in_error()); the kernel sets the
//    flag, fences and reads the producer index (kiwi_qp_flush()). Either
//    the flush sees the receive or the provider sees the flag;
//  - send vs. TX going idle: the provider publishes a send and reads
//    KIWI_RING_F_DOORBELL (SendQueue::post_and_ring with the doorbell
//    flag); the kernel's TX sets the flag, fences and reads the producer
//    index (kiwi_tx_park()). Either TX sees the send or the provider rings;
//  - arm vs. completion: the provider arms the CQ and polls it
//    (CompletionQueue::arm, poll); the kernel publishes a CQE, fences and
//    reads the arm word (kiwi_cq_push()). Either the poll finds the CQE or
//    the kernel raises the event.
//
// Without the provider's fence the first outcome "neither" shows up on
// x86 (its store buffer delays the index store past the flag load).
#include "fake_ring.h"
#include "queues.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>

namespace kiwi {
namespace {

using test::FakeRing;

// At most this many races, for at most this long (a busy machine, or a
// sanitizer, gets fewer). Without the fence the first test saw a lost
// receive in 3 of 4 runs of 50000 races on a loaded two-core host.
constexpr uint32_t kIterations = 50000;
constexpr auto kTimeLimit = std::chrono::seconds(8);
constexpr uint32_t kStop = ~0u;

// Runs provider() and kernel() together up to kIterations times; check()
// runs between iterations, while both threads wait. The kernel side starts
// a little later each iteration (0..63 pauses), so the two critical
// sections overlap at every offset. Returns the number of races run.
template <typename Provider, typename Kernel, typename Check>
uint32_t litmus(Provider provider, Kernel kernel, Check check)
{
	const auto deadline = std::chrono::steady_clock::now() + kTimeLimit;
	std::atomic<uint32_t> go{0};
	std::atomic<uint32_t> done{0};
	auto worker = [&](auto body) {
		for (uint32_t seen = 0;;) {
			uint32_t i;

			// Spin so both start together; yield now and then so a
			// busy machine still makes progress.
			for (uint32_t spins = 1;
			     (i = go.load(std::memory_order_acquire)) == seen;
			     spins++) {
				if (spins % 1024 == 0)
					std::this_thread::yield();
				else
					__builtin_ia32_pause();
			}
			if (i == kStop)
				return;
			body(i);
			seen = i;
			done.fetch_add(1, std::memory_order_acq_rel);
		}
	};
	std::thread p(worker, [&](uint32_t) { provider(); });
	std::thread k(worker, [&](uint32_t i) {
		for (uint32_t d = 0; d < i % 64; d++)
			__builtin_ia32_pause();
		kernel();
	});
	uint32_t i = 0;

	while (i < kIterations && std::chrono::steady_clock::now() < deadline) {
		go.store(++i, std::memory_order_release);
		while (done.load(std::memory_order_acquire) != 2 * i)
			std::this_thread::yield();
		check();
	}
	go.store(kStop, std::memory_order_release);
	p.join();
	k.join();
	return i;
}

TEST(RingOrder, ReceiveRacingTheErrorFlagIsNeverLost)
{
	FakeRing<kiwi_rqe> mem(4);
	RecvQueue rq;
	rq.attach(mem.area(), 4, 1);
	ibv_sge sge{.addr = 0x1000, .length = 64, .lkey = 1};
	ibv_recv_wr wr{
		.wr_id = 1, .next = nullptr, .sg_list = &sge, .num_sge = 1};
	auto &ctrl = mem.ctrl();
	uint32_t published = 0;	 // producer index the provider wrote
	uint32_t flushed_to = 0; // producer index the kernel read
	bool saw_flag = false;
	uint32_t lost = 0;

	const uint32_t races = litmus(
		[&] {
			ibv_recv_wr *bad = nullptr;
			uint32_t posted = 0;

			ASSERT_EQ(rq.post(&wr, &bad, posted), 0);
			saw_flag = rq.in_error();
		},
		[&] {
			ring_word(ctrl.flags)
				.store(KIWI_RING_F_ERROR,
				       std::memory_order_relaxed);
			std::atomic_thread_fence(std::memory_order_seq_cst);
			flushed_to = ring_word(ctrl.producer)
					     .load(std::memory_order_acquire);
		},
		[&] {
			published++;
			if (!saw_flag && flushed_to != published)
				lost++;
			// The kernel flushes what it saw, the provider's
			// doorbell the rest; the flag goes for the next round.
			ring_word(ctrl.consumer)
				.store(published, std::memory_order_release);
			ring_word(ctrl.flags)
				.store(0, std::memory_order_relaxed);
		});
	EXPECT_EQ(lost, 0u) << "receives neither flushed nor doorbelled in "
			    << races << " races";
	EXPECT_GT(races, 0u);
}

TEST(RingOrder, SendRacingTransmitIdleIsNeverStranded)
{
	FakeRing<kiwi_sqe> mem(4);
	SendQueue sq;
	sq.attach(mem.area(), 4,
		  {.max_sge = 1, .max_inline = 0, .sig_all = false}, true);
	ibv_send_wr wr{};
	wr.opcode = IBV_WR_SEND;
	auto &ctrl = mem.ctrl();
	uint32_t published = 0; // producer index the provider wrote
	uint32_t seen = 0;	// producer index TX read after the flag
	bool rang = false;
	uint32_t lost = 0;

	const uint32_t races = litmus(
		[&] {
			ibv_send_wr *bad = nullptr;

			rang = false;
			ASSERT_EQ(sq.post_and_ring(&wr, &bad,
						   [&] {
							   rang = true;
							   return 0;
						   }),
				  0);
		},
		[&] {
			ring_word(ctrl.flags)
				.store(KIWI_RING_F_DOORBELL,
				       std::memory_order_relaxed);
			std::atomic_thread_fence(std::memory_order_seq_cst);
			seen = ring_word(ctrl.producer)
				       .load(std::memory_order_acquire);
		},
		[&] {
			published++;
			if (!rang && seen != published)
				lost++;
			// TX sends what it saw, the doorbell's run the rest;
			// then TX runs again (flag clear) for the next race.
			ring_word(ctrl.consumer)
				.store(published, std::memory_order_release);
			ring_word(ctrl.flags)
				.store(0, std::memory_order_relaxed);
		});
	EXPECT_EQ(lost, 0u) << "sends neither seen by TX nor doorbelled in "
			    << races << " races";
	EXPECT_GT(races, 0u);
}

TEST(RingOrder, ArmRacingACompletionNeverLosesTheEvent)
{
	FakeRing<kiwi_cqe> mem(4);
	CompletionQueue cq;
	cq.attach(mem.area(), 4);
	auto &ctrl = mem.ctrl();
	uint32_t produced = 0; // kernel's private producer index
	int polled = 0;
	bool fired = false;
	uint32_t lost = 0;

	const uint32_t races = litmus(
		[&] {
			ibv_wc wc{};

			cq.arm(false);
			polled = cq.poll(1, &wc);
		},
		[&] {
			kiwi_cqe cqe{};
			uint32_t armed;

			cqe.wr_id = produced;
			std::memcpy(&mem.at_index(produced), &cqe, sizeof(cqe));
			ring_word(ctrl.producer)
				.store(++produced, std::memory_order_release);
			std::atomic_thread_fence(std::memory_order_seq_cst);
			// As kiwi_cq_disarm(): a plain load, then the one-shot
			// clear.
			armed = ring_word(ctrl.arm).load(
				std::memory_order_relaxed);
			fired = armed == KIWI_CQ_ARM_NEXT &&
				ring_word(ctrl.arm).compare_exchange_strong(
					armed, KIWI_CQ_ARM_NONE,
					std::memory_order_relaxed);
		},
		[&] {
			ibv_wc wc{};

			if (polled == 0 && !fired)
				lost++;
			if (polled == 0) {
				EXPECT_EQ(cq.poll(1, &wc), 1);
			}
			ring_word(ctrl.arm).store(KIWI_CQ_ARM_NONE,
						  std::memory_order_relaxed);
		});
	EXPECT_EQ(lost, 0u) << "completions neither polled nor signalled in "
			    << races << " races";
	EXPECT_GT(races, 0u);
}

} // namespace
} // namespace kiwi
