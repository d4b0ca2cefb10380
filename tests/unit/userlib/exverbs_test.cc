// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// The extended verbs' halves of the core over fake rings: the
// ibv_start_poll() cursor of CompletionQueue (shared with poll()), its ring
// replaced by ibv_resize_cq, and the ibv_wr_*() batches of SendBatch
// (encoded by encode_send()).
#include "fake_ring.h"
#include "queues.h"
#include "send_batch.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <thread>

namespace kiwi {
namespace {

using test::FakeRing;

constexpr SendLimits kLimits{.max_sge = 2, .max_inline = 64, .sig_all = false};

kiwi_cqe cqe_with(uint64_t wr_id, uint16_t opcode)
{
	kiwi_cqe cqe{};

	cqe.wr_id = wr_id;
	cqe.opcode = opcode;
	return cqe;
}

TEST(CompletionQueueEx, EmptyQueueIsEnoentAndUnlocked)
{
	FakeRing<kiwi_cqe> mem(4);
	CompletionQueue cq;
	cq.attach(mem.area(), 4);
	ibv_wc wc{};

	EXPECT_EQ(cq.start_poll(wc), ENOENT);
	// The lock was released: a plain poll does not spin forever.
	EXPECT_EQ(cq.poll(1, &wc), 0);
}

TEST(CompletionQueueEx, WalksAndReleasesAtEndPoll)
{
	FakeRing<kiwi_cqe> mem(4, 0xfffffffeu);
	CompletionQueue cq;
	cq.attach(mem.area(), 4);
	ibv_wc wc{};

	ASSERT_TRUE(mem.kernel_put(cqe_with(1, KIWI_WC_SEND)));
	ASSERT_TRUE(mem.kernel_put(cqe_with(2, KIWI_WC_RDMA_READ)));
	ASSERT_EQ(cq.start_poll(wc), 0);
	EXPECT_EQ(wc.wr_id, 1u);
	EXPECT_EQ(wc.opcode, IBV_WC_SEND);
	// One produced while polling is seen by next_poll.
	ASSERT_TRUE(mem.kernel_put(cqe_with(3, KIWI_WC_FETCH_ADD)));
	ASSERT_EQ(cq.next_poll(wc), 0);
	EXPECT_EQ(wc.wr_id, 2u);
	EXPECT_EQ(wc.opcode, IBV_WC_RDMA_READ);
	ASSERT_EQ(cq.next_poll(wc), 0);
	EXPECT_EQ(wc.wr_id, 3u);
	EXPECT_EQ(wc.opcode, IBV_WC_FETCH_ADD);
	EXPECT_EQ(cq.next_poll(wc), ENOENT);
	EXPECT_EQ(mem.ctrl().consumer, 0xfffffffeu); // nothing released yet
	cq.end_poll();
	EXPECT_EQ(mem.ctrl().consumer, 1u); // wrapped past 2^32
	EXPECT_EQ(cq.start_poll(wc), ENOENT);
}

TEST(CompletionQueueEx, MixesWithPlainPolling)
{
	FakeRing<kiwi_cqe> mem(8);
	CompletionQueue cq;
	cq.attach(mem.area(), 8, true); // single-threaded: no lock at all
	ibv_wc wc[2] = {};

	for (uint64_t i = 0; i < 4; i++)
		ASSERT_TRUE(mem.kernel_put(cqe_with(i, KIWI_WC_RECV)));
	ASSERT_EQ(cq.start_poll(wc[0]), 0);
	EXPECT_EQ(wc[0].wr_id, 0u);
	cq.end_poll();
	EXPECT_EQ(cq.poll(2, wc), 2);
	EXPECT_EQ(wc[0].wr_id, 1u);
	EXPECT_EQ(wc[1].wr_id, 2u);
	ASSERT_EQ(cq.start_poll(wc[0]), 0);
	EXPECT_EQ(wc[0].wr_id, 3u);
	EXPECT_EQ(cq.next_poll(wc[0]), ENOENT);
	cq.end_poll();
	EXPECT_EQ(mem.ctrl().consumer, 4u);
}

// ibv_resize_cq's half in libkiwi: replace() swaps in the ring the kernel
// moved the unread completions to, forgetting what it had seen of the old
// one; a failed swap keeps the old ring. The swap here plays the kernel:
// it starts at the consumer index the polls published.
TEST(CompletionQueueResize, ReplacedRingIsReadFromItsStart)
{
	FakeRing<kiwi_cqe> old_mem(4, 0xfffffffeu);
	FakeRing<kiwi_cqe> new_mem(8);
	CompletionQueue cq;
	cq.attach(old_mem.area(), 4);
	ibv_wc wc{};

	for (uint64_t i = 1; i <= 4; i++)
		ASSERT_TRUE(old_mem.kernel_put(cqe_with(i, KIWI_WC_RECV)));
	ASSERT_EQ(cq.poll(1, &wc), 1); // sees all 4, takes 1
	EXPECT_EQ(wc.wr_id, 1u);
	EXPECT_EQ(
		cq.replace([](void *&, uint32_t &) noexcept { return EINVAL; }),
		EINVAL);
	ASSERT_EQ(cq.poll(1, &wc), 1);
	EXPECT_EQ(wc.wr_id, 2u);
	ASSERT_EQ(cq.replace([&](void *&area, uint32_t &num) noexcept {
		const uint32_t cons = old_mem.ctrl().consumer;
		for (uint32_t k = cons; k != old_mem.ctrl().producer; k++)
			if (!new_mem.kernel_put(old_mem.at_index(k)))
				return ENOSPC;
		area = new_mem.area();
		num = 8;
		return cons == 0xfffffffeu + 2 ? 0 : EPROTO;
	}),
		  0);
	ASSERT_TRUE(new_mem.kernel_put(cqe_with(5, KIWI_WC_RECV)));
	ibv_wc more[4] = {};
	ASSERT_EQ(cq.poll(4, more), 3);
	EXPECT_EQ(more[0].wr_id, 3u);
	EXPECT_EQ(more[1].wr_id, 4u);
	EXPECT_EQ(more[2].wr_id, 5u);
	EXPECT_EQ(new_mem.ctrl().consumer, 3u);
	EXPECT_EQ(cq.poll(1, &wc), 0);
}

// The same decoding as poll(): immediate data and a bad CQE.
TEST(CompletionQueueEx, DecodesLikePoll)
{
	FakeRing<kiwi_cqe> mem(4);
	CompletionQueue cq;
	cq.attach(mem.area(), 4);
	ibv_wc wc{};
	kiwi_cqe imm = cqe_with(7, KIWI_WC_RECV_RDMA_WITH_IMM);

	imm.flags = KIWI_CQE_WITH_IMM;
	imm.imm_data = htonl(0x12345678);
	imm.byte_len = 99;
	imm.qp_num = 5;
	ASSERT_TRUE(mem.kernel_put(imm));
	ASSERT_TRUE(mem.kernel_put(cqe_with(8, 0xff)));
	ASSERT_EQ(cq.start_poll(wc), 0);
	EXPECT_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	EXPECT_EQ(wc.wc_flags, static_cast<unsigned int>(IBV_WC_WITH_IMM));
	EXPECT_EQ(ntohl(wc.imm_data), 0x12345678u);
	EXPECT_EQ(wc.byte_len, 99u);
	EXPECT_EQ(wc.qp_num, 5u);
	ASSERT_EQ(cq.next_poll(wc), 0);
	EXPECT_EQ(wc.status, IBV_WC_GENERAL_ERR);
	cq.end_poll();
}

struct BatchFixture : ::testing::Test {
	FakeRing<kiwi_sqe> mem{4};
	SendQueue sq;
	SendBatch batch;

	void SetUp() override
	{
		sq.attach(mem.area(), 4, kLimits);
		batch.attach(sq);
	}

	kiwi_sqe take()
	{
		kiwi_sqe sqe{};

		EXPECT_TRUE(mem.kernel_take(sqe));
		return sqe;
	}
};

TEST_F(BatchFixture, OneBatchPublishesEverythingAtComplete)
{
	uint64_t result = 0;
	uint32_t posted = 0;
	const ibv_sge two[2] = {{.addr = 0x1000, .length = 8, .lkey = 1},
				{.addr = 0x2000, .length = 16, .lkey = 2}};

	batch.start();
	batch.begin_wr(IBV_WR_SEND, 1, IBV_SEND_SIGNALED);
	batch.set_sges(2, two);
	ibv_send_wr *wr = batch.begin_wr(IBV_WR_RDMA_WRITE_WITH_IMM, 2, 0);
	ASSERT_NE(wr, nullptr);
	wr->wr.rdma.rkey = 9;
	wr->wr.rdma.remote_addr = 0x9000;
	wr->imm_data = htonl(0xabcd);
	batch.set_sges(0, nullptr);
	wr = batch.begin_wr(IBV_WR_ATOMIC_FETCH_AND_ADD, 3, IBV_SEND_FENCE);
	ASSERT_NE(wr, nullptr);
	wr->wr.atomic.rkey = 4;
	wr->wr.atomic.remote_addr = 0x8000;
	wr->wr.atomic.compare_add = 5;
	const ibv_sge res{.addr = reinterpret_cast<uintptr_t>(&result),
			  .length = 8,
			  .lkey = 3};
	batch.set_sges(1, &res);
	EXPECT_EQ(mem.ctrl().producer, 0u); // nothing visible before complete
	ASSERT_EQ(batch.complete(posted), 0);
	EXPECT_EQ(posted, 3u);
	EXPECT_EQ(mem.ctrl().producer, 3u);

	kiwi_sqe sqe = take();
	EXPECT_EQ(sqe.wr_id, 1u);
	EXPECT_EQ(sqe.opcode, KIWI_WR_SEND);
	EXPECT_EQ(sqe.flags, static_cast<uint32_t>(KIWI_SQE_SIGNALED));
	EXPECT_EQ(sqe.num_sge, 2u);
	EXPECT_EQ(sqe.sge[1].addr, 0x2000u);
	sqe = take();
	EXPECT_EQ(sqe.opcode, KIWI_WR_RDMA_WRITE_WITH_IMM);
	EXPECT_EQ(sqe.inv_or_rkey, 9u);
	EXPECT_EQ(sqe.remote_addr, 0x9000u);
	EXPECT_EQ(ntohl(sqe.imm_data), 0xabcdu);
	sqe = take();
	EXPECT_EQ(sqe.opcode, KIWI_WR_ATOMIC_FETCH_AND_ADD);
	EXPECT_EQ(sqe.flags, static_cast<uint32_t>(KIWI_SQE_READ_FENCE));
	EXPECT_EQ(sqe.atomic.compare_add, 5u);
	EXPECT_EQ(sqe.atomic.result.lkey, 3u);
}

TEST_F(BatchFixture, InlineDataIsCopiedByTheSetter)
{
	char a[] = "abc";
	char b[] = "defg";
	const ibv_data_buf bufs[2] = {{a, 3}, {b, 4}};
	uint32_t posted = 0;

	batch.start();
	batch.begin_wr(IBV_WR_SEND, 1, IBV_SEND_INLINE);
	batch.set_inline(2, bufs);
	std::memset(a, 'x', sizeof(a)); // the caller may reuse them now
	std::memset(b, 'x', sizeof(b));
	ASSERT_EQ(batch.complete(posted), 0);
	ASSERT_EQ(posted, 1u);
	const kiwi_sqe sqe = take();
	EXPECT_TRUE(sqe.flags & KIWI_SQE_INLINE);
	EXPECT_EQ(sqe.inline_len, 7u);
	EXPECT_EQ(std::memcmp(sqe.sge, "abcdefg", 7), 0);
}

TEST_F(BatchFixture, InlineSgesAreNotInline)
{
	const ibv_sge sge{.addr = 0x1000, .length = 8, .lkey = 1};
	uint32_t posted = 0;

	batch.start();
	batch.begin_wr(IBV_WR_SEND, 1, IBV_SEND_INLINE); // flag dropped
	batch.set_sges(1, &sge);
	ASSERT_EQ(batch.complete(posted), 0);
	const kiwi_sqe sqe = take();
	EXPECT_FALSE(sqe.flags & KIWI_SQE_INLINE);
	EXPECT_EQ(sqe.num_sge, 1u);
}

// A WR without a data setter is encoded without data when the next one
// starts or the batch ends.
TEST_F(BatchFixture, MissingSetterMeansNoData)
{
	uint32_t posted = 0;

	batch.start();
	ibv_send_wr *wr = batch.begin_wr(IBV_WR_SEND_WITH_INV, 1, 0);
	ASSERT_NE(wr, nullptr);
	wr->invalidate_rkey = 0x77;
	wr = batch.begin_wr(IBV_WR_SEND_WITH_IMM, 2, 0);
	ASSERT_NE(wr, nullptr);
	wr->imm_data = htonl(1);
	ASSERT_EQ(batch.complete(posted), 0);
	EXPECT_EQ(posted, 2u);
	kiwi_sqe sqe = take();
	EXPECT_EQ(sqe.opcode, KIWI_WR_SEND_WITH_INV);
	EXPECT_EQ(sqe.inv_or_rkey, 0x77u);
	EXPECT_EQ(sqe.num_sge, 0u);
	sqe = take();
	EXPECT_EQ(sqe.opcode, KIWI_WR_SEND_WITH_IMM);
	EXPECT_EQ(sqe.num_sge, 0u);
}

// ibv_wr_bind_mw() and ibv_wr_local_inv() fill the WRs of ibv_post_send's
// IBV_WR_BIND_MW and IBV_WR_LOCAL_INV; encode_send() turns them into the
// same SQEs, and refuses the same bad binds.
TEST_F(BatchFixture, WindowWrsAreEncodedAsPostSendsAre)
{
	ibv_mr mr{};
	ibv_mw mw{};
	uint32_t posted = 0;

	mr.lkey = 0x1234;
	mw.rkey = 0x4200;
	mw.type = IBV_MW_TYPE_2;
	batch.start();
	ibv_send_wr *wr = batch.begin_wr(IBV_WR_BIND_MW, 1, IBV_SEND_SIGNALED);
	ASSERT_NE(wr, nullptr);
	wr->bind_mw.mw = &mw;
	wr->bind_mw.rkey = 0x4201;
	wr->bind_mw.bind_info = ibv_mw_bind_info{
		.mr = &mr,
		.addr = 0x10000,
		.length = 4096,
		.mw_access_flags = IBV_ACCESS_REMOTE_READ,
	};
	wr = batch.begin_wr(IBV_WR_LOCAL_INV, 2, IBV_SEND_FENCE);
	ASSERT_NE(wr, nullptr);
	wr->invalidate_rkey = 0x4201;
	ASSERT_EQ(batch.complete(posted), 0);
	EXPECT_EQ(posted, 2u);
	kiwi_sqe sqe = take();
	EXPECT_EQ(sqe.wr_id, 1u);
	EXPECT_EQ(sqe.opcode, KIWI_WR_BIND_MW);
	EXPECT_EQ(sqe.flags, static_cast<uint32_t>(KIWI_SQE_SIGNALED));
	EXPECT_EQ(sqe.inv_or_rkey, 0x4201u);
	EXPECT_EQ(sqe.bind.addr, 0x10000u);
	EXPECT_EQ(sqe.bind.length, 4096u);
	EXPECT_EQ(sqe.bind.mr_lkey, 0x1234u);
	EXPECT_EQ(sqe.bind.access,
		  static_cast<uint32_t>(IBV_ACCESS_REMOTE_READ));
	sqe = take();
	EXPECT_EQ(sqe.wr_id, 2u);
	EXPECT_EQ(sqe.opcode, KIWI_WR_LOCAL_INV);
	EXPECT_EQ(sqe.flags, static_cast<uint32_t>(KIWI_SQE_READ_FENCE));
	EXPECT_EQ(sqe.inv_or_rkey, 0x4201u);
	EXPECT_EQ(sqe.num_sge, 0u);

	// Another window's index, and a zero-based window: nothing posted.
	const struct {
		uint32_t rkey;
		unsigned int access;
		int err;
	} bad[] = {
		{0x4301, IBV_ACCESS_REMOTE_READ, EINVAL},
		{0x4202, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ZERO_BASED,
		 EOPNOTSUPP},
	};
	for (const auto &b : bad) {
		batch.start();
		wr = batch.begin_wr(IBV_WR_BIND_MW, 3, 0);
		ASSERT_NE(wr, nullptr);
		wr->bind_mw.mw = &mw;
		wr->bind_mw.rkey = b.rkey;
		wr->bind_mw.bind_info = ibv_mw_bind_info{
			.mr = &mr,
			.addr = 0x10000,
			.length = 4096,
			.mw_access_flags = b.access,
		};
		EXPECT_EQ(batch.complete(posted), b.err);
		EXPECT_EQ(posted, 0u);
	}
	EXPECT_EQ(mem.ctrl().producer, 2u);
}

TEST_F(BatchFixture, AbortPostsNothing)
{
	const ibv_sge sge{.addr = 0x1000, .length = 8, .lkey = 1};
	uint32_t posted = 0;

	batch.start();
	batch.begin_wr(IBV_WR_SEND, 1, 0);
	batch.set_sges(1, &sge);
	batch.abort();
	EXPECT_EQ(mem.ctrl().producer, 0u);
	// The queue is unlocked and the slot reusable.
	batch.start();
	batch.begin_wr(IBV_WR_SEND, 2, 0);
	batch.set_sges(1, &sge);
	ASSERT_EQ(batch.complete(posted), 0);
	EXPECT_EQ(posted, 1u);
	EXPECT_EQ(take().wr_id, 2u);
}

// The first bad WR fails the whole batch: nothing is published.
TEST_F(BatchFixture, AnErrorFailsTheBatch)
{
	const ibv_sge sge{.addr = 0x1000, .length = 8, .lkey = 1};
	const ibv_sge three[3] = {sge, sge, sge};
	uint32_t posted = 9;

	batch.start();
	batch.begin_wr(IBV_WR_SEND, 1, 0);
	batch.set_sges(1, &sge);
	batch.begin_wr(IBV_WR_SEND, 2, 0);
	batch.set_sges(3, three); // more than max_sge
	EXPECT_EQ(batch.begin_wr(IBV_WR_SEND, 3, 0), nullptr);
	EXPECT_EQ(batch.complete(posted), EINVAL);
	EXPECT_EQ(posted, 0u);
	EXPECT_EQ(mem.ctrl().producer, 0u);

	const struct {
		ibv_wr_opcode op;
		unsigned int flags;
		size_t nsge;
		int err;
	} cases[] = {
		{IBV_WR_ATOMIC_CMP_AND_SWP, 0, 0, EINVAL}, // no result SGE
		{IBV_WR_SEND_WITH_IMM, 0, 1, EOPNOTSUPP},  // payload
		{IBV_WR_BIND_MW, 0, 0, EINVAL},
		{IBV_WR_SEND, 0x1000, 1, EINVAL}, // unknown send flag
	};
	for (const auto &c : cases) {
		batch.start();
		batch.begin_wr(c.op, 1, c.flags);
		batch.set_sges(c.nsge, &sge);
		EXPECT_EQ(batch.complete(posted), c.err) << c.op;
		EXPECT_EQ(mem.ctrl().producer, 0u);
	}

	batch.start();
	batch.fail(EOPNOTSUPP); // an unimplemented builder
	batch.begin_wr(IBV_WR_SEND, 1, 0);
	EXPECT_EQ(batch.complete(posted), EOPNOTSUPP);
	batch.start();
	batch.set_sges(1, &sge); // data without a WR
	EXPECT_EQ(batch.complete(posted), EINVAL);
	EXPECT_EQ(mem.ctrl().producer, 0u);
}

TEST_F(BatchFixture, FullRingIsEnomem)
{
	const ibv_sge sge{.addr = 0x1000, .length = 8, .lkey = 1};
	uint32_t posted = 0;

	batch.start();
	for (uint64_t i = 0; i < 5; i++) {
		batch.begin_wr(IBV_WR_SEND, i, 0);
		batch.set_sges(1, &sge);
	}
	EXPECT_EQ(batch.complete(posted), ENOMEM);
	EXPECT_EQ(mem.ctrl().producer, 0u);

	batch.start();
	for (uint64_t i = 0; i < 4; i++) {
		batch.begin_wr(IBV_WR_SEND, i, 0);
		batch.set_sges(1, &sge);
	}
	ASSERT_EQ(batch.complete(posted), 0);
	EXPECT_EQ(posted, 4u);
}

TEST_F(BatchFixture, CompleteWithoutStartIsEinval)
{
	uint32_t posted = 0;

	EXPECT_EQ(batch.complete(posted), EINVAL);
	EXPECT_EQ(batch.begin_wr(IBV_WR_SEND, 1, 0), nullptr);
	batch.abort(); // harmless
	batch.start();
	EXPECT_EQ(batch.complete(posted), 0);
	EXPECT_EQ(posted, 0u);
}

// ibv_wr_start() to ibv_wr_complete() is one critical section per QP: a
// failed batch reports its own error, though the next batch of another
// thread starts as soon as the lock goes.
TEST_F(BatchFixture, FailedBatchesOfTwoThreadsKeepTheirErrors)
{
	std::atomic<int> wrong{0}, ready{0};
	auto run = [&](int err) {
		uint32_t posted = 0;

		ready++;
		while (ready.load() < 2)
			;
		for (int i = 0; i < 200000; i++) {
			batch.start();
			batch.fail(err);
			if (batch.complete(posted) != err || posted)
				wrong++;
		}
	};
	std::thread a(run, EINVAL);
	std::thread b(run, EOPNOTSUPP);

	a.join();
	b.join();
	EXPECT_EQ(wrong.load(), 0);
	EXPECT_EQ(mem.ctrl().producer, 0u);
}

} // namespace
} // namespace kiwi
