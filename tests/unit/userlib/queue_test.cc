// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// The post and poll loops over fake rings: list handling, bad_wr, ring
// full, polling in batches, and a two-thread run against a "kernel".
#include "fake_ring.h"
#include "queues.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace kiwi {
namespace {

using test::FakeRing;

constexpr SendLimits kLimits{.max_sge = KIWI_MAX_SGE,
			     .max_inline = KIWI_MAX_INLINE,
			     .sig_all = false};

// A linked list of n send WRs with wr_id base, base+1, ...
std::vector<ibv_send_wr> send_list(size_t n, uint64_t base)
{
	std::vector<ibv_send_wr> wrs(n);

	for (size_t i = 0; i < n; i++) {
		wrs[i].wr_id = base + i;
		wrs[i].opcode = IBV_WR_SEND;
		wrs[i].next = i + 1 < n ? &wrs[i + 1] : nullptr;
	}
	return wrs;
}

std::vector<ibv_recv_wr> recv_list(size_t n, uint64_t base)
{
	std::vector<ibv_recv_wr> wrs(n);

	for (size_t i = 0; i < n; i++) {
		wrs[i].wr_id = base + i;
		wrs[i].next = i + 1 < n ? &wrs[i + 1] : nullptr;
	}
	return wrs;
}

TEST(SendQueue, PostsAWholeList)
{
	FakeRing<kiwi_sqe> mem(8);
	SendQueue sq;
	sq.attach(mem.area(), 8, kLimits);
	auto wrs = send_list(3, 10);
	ibv_send_wr *bad = nullptr;
	uint32_t posted = 99;

	EXPECT_EQ(sq.post(wrs.data(), &bad, posted), 0);
	EXPECT_EQ(posted, 3u);
	EXPECT_EQ(bad, nullptr);
	EXPECT_EQ(mem.ctrl().producer, 3u);
	for (uint64_t i = 0; i < 3; i++) {
		kiwi_sqe sqe{};
		ASSERT_TRUE(mem.kernel_take(sqe));
		EXPECT_EQ(sqe.wr_id, 10 + i);
	}
}

TEST(SendQueue, EmptyListPostsNothing)
{
	FakeRing<kiwi_sqe> mem(8);
	SendQueue sq;
	sq.attach(mem.area(), 8, kLimits);
	uint32_t posted = 99;

	EXPECT_EQ(sq.post(nullptr, nullptr, posted), 0);
	EXPECT_EQ(posted, 0u);
	EXPECT_EQ(mem.ctrl().producer, 0u);
}

TEST(SendQueue, BadRequestStopsTheListAndIsReported)
{
	FakeRing<kiwi_sqe> mem(8);
	SendQueue sq;
	sq.attach(mem.area(), 8, kLimits);
	auto wrs = send_list(4, 0);
	ibv_send_wr *bad = nullptr;
	uint32_t posted = 0;

	wrs[2].opcode = IBV_WR_TSO;
	EXPECT_EQ(sq.post(wrs.data(), &bad, posted), EOPNOTSUPP);
	EXPECT_EQ(bad, &wrs[2]);
	EXPECT_EQ(posted, 2u); // the good ones before it are posted
	EXPECT_EQ(mem.ctrl().producer, 2u);

	wrs[0].num_sge = KIWI_MAX_SGE + 1;
	EXPECT_EQ(sq.post(wrs.data(), &bad, posted), EINVAL);
	EXPECT_EQ(bad, &wrs[0]);
	EXPECT_EQ(posted, 0u);
	EXPECT_EQ(mem.ctrl().producer, 2u);
}

TEST(SendQueue, FullRingIsEnomem)
{
	FakeRing<kiwi_sqe> mem(4, 0xfffffffeu);
	SendQueue sq;
	sq.attach(mem.area(), 4, kLimits);
	auto wrs = send_list(6, 0);
	ibv_send_wr *bad = nullptr;
	uint32_t posted = 0;

	EXPECT_EQ(sq.post(wrs.data(), &bad, posted), ENOMEM);
	EXPECT_EQ(posted, 4u);
	EXPECT_EQ(bad, &wrs[4]);
	EXPECT_EQ(mem.ctrl().producer, 2u);

	// Still full: nothing more goes in until the kernel consumes.
	EXPECT_EQ(sq.post(&wrs[4], &bad, posted), ENOMEM);
	EXPECT_EQ(posted, 0u);
	kiwi_sqe sqe{};
	ASSERT_TRUE(mem.kernel_take(sqe));
	EXPECT_EQ(sq.post(&wrs[4], &bad, posted), ENOMEM);
	EXPECT_EQ(posted, 1u);
	EXPECT_EQ(bad, &wrs[5]);
}

// ibv_post_send's doorbell contract (Documentation/abi.md): a refused
// doorbell means the kernel dropped every WR the post published, so the
// post failed from the head of its list with the doorbell's errno.
TEST(SendQueue, RefusedDoorbellFailsTheWholeList)
{
	FakeRing<kiwi_sqe> mem(8);
	SendQueue sq;
	sq.attach(mem.area(), 8, kLimits);
	auto wrs = send_list(3, 0);
	ibv_send_wr *bad = nullptr;
	int rings = 0;
	auto refuse = [&rings] {
		rings++;
		return EIO;
	};

	EXPECT_EQ(sq.post_and_ring(wrs.data(), &bad, refuse), EIO);
	EXPECT_EQ(bad, &wrs[0]);
	EXPECT_EQ(rings, 1);

	// A malformed WR after two good ones: those two were published and
	// the doorbell dropped them, so they failed too.
	wrs[2].num_sge = KIWI_MAX_SGE + 1;
	bad = nullptr;
	EXPECT_EQ(sq.post_and_ring(wrs.data(), &bad, refuse), EIO);
	EXPECT_EQ(bad, &wrs[0]);
	EXPECT_EQ(rings, 2);
}

TEST(SendQueue, AcceptedDoorbellKeepsThePostResult)
{
	FakeRing<kiwi_sqe> mem(8);
	SendQueue sq;
	sq.attach(mem.area(), 8, kLimits);
	auto wrs = send_list(3, 0);
	ibv_send_wr *bad = nullptr;
	int rings = 0;
	auto accept = [&rings] {
		rings++;
		return 0;
	};

	EXPECT_EQ(sq.post_and_ring(wrs.data(), &bad, accept), 0);
	EXPECT_EQ(rings, 1);
	wrs[2].num_sge = KIWI_MAX_SGE + 1;
	EXPECT_EQ(sq.post_and_ring(wrs.data(), &bad, accept), EINVAL);
	EXPECT_EQ(bad, &wrs[2]);
	EXPECT_EQ(rings, 2);

	// Nothing published: no doorbell at all.
	EXPECT_EQ(sq.post_and_ring(&wrs[2], &bad, accept), EINVAL);
	EXPECT_EQ(bad, &wrs[2]);
	EXPECT_EQ(rings, 2);
	EXPECT_EQ(sq.post_and_ring(nullptr, &bad, accept), 0);
	EXPECT_EQ(rings, 2);
}

// KIWI_QP_FEAT_SQ_DOORBELL: a post rings only while the SQ ring asks for it
// (KIWI_RING_F_DOORBELL, or KIWI_RING_F_ERROR); the WRs are published
// either way.
TEST(SendQueue, DoorbellFlagSkipsTheDoorbellWhileTheKernelSends)
{
	FakeRing<kiwi_sqe> mem(8);
	SendQueue sq;
	sq.attach(mem.area(), 8, kLimits, true);
	auto wrs = send_list(1, 0);
	ibv_send_wr *bad = nullptr;
	int rings = 0;
	auto refuse = [&rings] {
		rings++;
		return EINVAL;
	};
	auto &flags = mem.ctrl().flags;

	flags = 0; // TX running
	EXPECT_EQ(sq.post_and_ring(wrs.data(), &bad, refuse), 0);
	EXPECT_EQ(rings, 0);
	EXPECT_EQ(mem.pending(), 1u);

	// TX idle, or the QP takes no sends: the refusal is the post's.
	flags = KIWI_RING_F_DOORBELL;
	EXPECT_EQ(sq.post_and_ring(wrs.data(), &bad, refuse), EINVAL);
	EXPECT_EQ(bad, &wrs[0]);
	EXPECT_EQ(rings, 1);
	flags = KIWI_RING_F_ERROR;
	EXPECT_EQ(sq.post_and_ring(wrs.data(), &bad, refuse), EINVAL);
	EXPECT_EQ(rings, 2);

	// Nothing published: nothing to ring for.
	flags = KIWI_RING_F_DOORBELL;
	wrs[0].num_sge = KIWI_MAX_SGE + 1;
	EXPECT_EQ(sq.post_and_ring(wrs.data(), &bad, refuse), EINVAL);
	EXPECT_EQ(rings, 2);
}

// A kernel without the feature leaves the flags 0: every post rings.
TEST(SendQueue, WithoutTheDoorbellFlagEveryPostRings)
{
	FakeRing<kiwi_sqe> mem(8);
	SendQueue sq;
	sq.attach(mem.area(), 8, kLimits, false);
	auto wrs = send_list(1, 0);
	ibv_send_wr *bad = nullptr;
	int rings = 0;
	auto accept = [&rings] {
		rings++;
		return 0;
	};

	for (int i = 0; i < 3; i++)
		EXPECT_EQ(sq.post_and_ring(wrs.data(), &bad, accept), 0);
	EXPECT_EQ(rings, 3);
}

TEST(RecvQueue, PostsAndChecks)
{
	FakeRing<kiwi_rqe> mem(2);
	RecvQueue rq;
	rq.attach(mem.area(), 2, 1);
	auto wrs = recv_list(3, 5);
	ibv_recv_wr *bad = nullptr;
	ibv_sge sges[2] = {};
	uint32_t posted = 0;

	EXPECT_EQ(rq.post(wrs.data(), &bad, posted), ENOMEM);
	EXPECT_EQ(bad, &wrs[2]);
	EXPECT_EQ(posted, 2u);
	EXPECT_EQ(mem.ctrl().producer, 2u);
	EXPECT_FALSE(rq.in_error());

	kiwi_rqe rqe{};
	ASSERT_TRUE(mem.kernel_take(rqe));
	EXPECT_EQ(rqe.wr_id, 5u);
	wrs[2].sg_list = sges;
	wrs[2].num_sge = 2; // more than max_sge (1)
	EXPECT_EQ(rq.post(&wrs[2], &bad, posted), EINVAL);
	EXPECT_EQ(bad, &wrs[2]);
	EXPECT_EQ(posted, 0u);
	wrs[2].num_sge = 1;
	EXPECT_EQ(rq.post(&wrs[2], &bad, posted), 0);
	EXPECT_EQ(posted, 1u);
	EXPECT_EQ(mem.ctrl().producer, 3u);
}

TEST(RecvQueue, ReportsTheKernelErrorFlag)
{
	FakeRing<kiwi_rqe> mem(2);
	RecvQueue rq;

	EXPECT_FALSE(rq.in_error()); // not attached
	rq.attach(mem.area(), 2, 1);
	EXPECT_FALSE(rq.in_error());
	mem.ctrl().flags = KIWI_RING_F_ERROR;
	EXPECT_TRUE(rq.in_error());
}

TEST(RecvQueue, UnattachedQueueRefusesWork)
{
	RecvQueue rq; // a QP that receives through an SRQ
	auto wrs = recv_list(1, 0);
	ibv_recv_wr *bad = nullptr;
	uint32_t posted = 7;

	EXPECT_EQ(rq.post(wrs.data(), &bad, posted), EINVAL);
	EXPECT_EQ(bad, &wrs[0]);
	EXPECT_EQ(posted, 0u);
}

TEST(CompletionQueue, PollsInBatchesAndReleasesSlots)
{
	FakeRing<kiwi_cqe> mem(4, 0xffffffffu);
	CompletionQueue cq;
	cq.attach(mem.area(), 4);
	ibv_wc wc[4] = {};

	EXPECT_EQ(cq.poll(4, wc), 0);
	for (uint64_t i = 0; i < 4; i++) {
		kiwi_cqe cqe{};
		cqe.wr_id = i;
		cqe.opcode = KIWI_WC_RDMA_WRITE;
		ASSERT_TRUE(mem.kernel_put(cqe));
	}
	EXPECT_FALSE(mem.kernel_put(kiwi_cqe{}));

	EXPECT_EQ(cq.poll(3, wc), 3);
	EXPECT_EQ(wc[0].wr_id, 0u);
	EXPECT_EQ(wc[2].wr_id, 2u);
	EXPECT_EQ(wc[2].opcode, IBV_WC_RDMA_WRITE);
	EXPECT_EQ(mem.ctrl().consumer, 2u); // 0xffffffff + 3
	EXPECT_TRUE(mem.kernel_put(kiwi_cqe{}));

	EXPECT_EQ(cq.poll(4, wc), 2);
	EXPECT_EQ(wc[0].wr_id, 3u);
	EXPECT_EQ(cq.poll(4, wc), 0);
	EXPECT_EQ(cq.poll(0, nullptr), 0);
}

TEST(CompletionQueue, BadArgumentsAreNegativeErrno)
{
	FakeRing<kiwi_cqe> mem(4);
	CompletionQueue cq;
	cq.attach(mem.area(), 4);
	ibv_wc wc{};

	ASSERT_TRUE(mem.kernel_put(kiwi_cqe{}));
	EXPECT_EQ(cq.poll(-1, &wc), -EINVAL);
	EXPECT_EQ(cq.poll(1, nullptr), -EINVAL);
	EXPECT_EQ(mem.ctrl().consumer, 0u);
}

TEST(CompletionQueue, ArmSelectsTheMode)
{
	FakeRing<kiwi_cqe> mem(4);
	CompletionQueue cq;
	cq.attach(mem.area(), 4);

	cq.arm(true);
	EXPECT_EQ(mem.ctrl().arm, static_cast<uint32_t>(KIWI_CQ_ARM_SOLICITED));
	cq.arm(false);
	EXPECT_EQ(mem.ctrl().arm, static_cast<uint32_t>(KIWI_CQ_ARM_NEXT));
}

// Several posting threads and a "kernel" thread that consumes the SQ and
// echoes completions through a CQ: every WR arrives exactly once, the
// kernel sees each thread's WRs in posting order, and indices wrap. A
// deadline turns a lost WR into a failure instead of a hang.
TEST(Queues, ConcurrentPostersAndKernel)
{
	constexpr uint64_t kThreads = 2;
	constexpr uint64_t kPerThread = 3000;
	constexpr uint64_t kTotal = kThreads * kPerThread;
	FakeRing<kiwi_sqe> sq_mem(8, 0xfffff000u);
	FakeRing<kiwi_cqe> cq_mem(16, 0xffffff00u);
	SendQueue sq;
	CompletionQueue cq;
	std::atomic<bool> stop{false};
	std::atomic<uint64_t> order_errors{0};
	sq.attach(sq_mem.area(), 8, kLimits);
	cq.attach(cq_mem.area(), 16);

	std::thread kernel([&] {
		std::vector<uint64_t> next(kThreads, 0);
		for (uint64_t done = 0; done < kTotal && !stop;) {
			kiwi_sqe sqe{};
			if (!sq_mem.kernel_take(sqe)) {
				std::this_thread::yield();
				continue;
			}
			const uint64_t t = (sqe.wr_id >> 32) % kThreads;
			if ((sqe.wr_id & 0xffffffffu) != next[t]++)
				order_errors++;
			kiwi_cqe cqe{};
			cqe.wr_id = sqe.wr_id;
			while (!cq_mem.kernel_put(cqe) && !stop)
				std::this_thread::yield();
			done++;
		}
	});

	std::vector<std::thread> posters;
	for (uint64_t t = 0; t < kThreads; t++) {
		posters.emplace_back([&, t] {
			for (uint64_t i = 0; i < kPerThread && !stop;) {
				ibv_send_wr wr{};
				ibv_send_wr *bad = nullptr;
				uint32_t posted = 0;

				wr.wr_id = (t << 32) | i;
				wr.opcode = IBV_WR_SEND;
				if (sq.post(&wr, &bad, posted) == 0)
					i++;
				else
					std::this_thread::yield();
			}
		});
	}

	const auto deadline =
		std::chrono::steady_clock::now() + std::chrono::seconds(60);
	std::vector<uint64_t> seen(kThreads, 0);
	uint64_t got = 0;
	ibv_wc wc[8];
	while (got < kTotal && std::chrono::steady_clock::now() < deadline) {
		const int n = cq.poll(8, wc);
		ASSERT_GE(n, 0);
		for (int i = 0; i < n; i++)
			seen[(wc[i].wr_id >> 32) % kThreads]++;
		got += static_cast<uint64_t>(n);
		if (n == 0)
			std::this_thread::yield();
	}
	stop = true;
	for (auto &p : posters)
		p.join();
	kernel.join();
	EXPECT_EQ(got, kTotal);
	EXPECT_EQ(order_errors.load(), 0u);
	for (uint64_t count : seen)
		EXPECT_EQ(count, kPerThread);
}

} // namespace
} // namespace kiwi
