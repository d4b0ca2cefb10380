// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// The private libibverbs layout checks are static_asserts in
// verbs_private.h: compiling this file runs them. The tests pin the parts
// of kiwi-abi.h that libkiwi's element code depends on.
#include "provider.h"
#include "verbs_private.h"

#include <gtest/gtest.h>
#include <rdma/kiwi-abi.h>

#include <cstddef>
#include <cstring>

namespace kiwi {
namespace {

TEST(KiwiAbi, ElementLayouts)
{
	EXPECT_EQ(sizeof(kiwi_ring_ctrl),
		  static_cast<size_t>(KIWI_RING_CTRL_SIZE));
	EXPECT_EQ(offsetof(kiwi_ring_ctrl, producer), 0u);
	EXPECT_EQ(offsetof(kiwi_ring_ctrl, consumer), 64u);
	EXPECT_EQ(offsetof(kiwi_ring_ctrl, arm), 68u);
	EXPECT_EQ(sizeof(kiwi_sqe), 128u);
	EXPECT_EQ(offsetof(kiwi_sqe, inline_len), 14u);
	EXPECT_EQ(offsetof(kiwi_sqe, imm_data), 16u);
	EXPECT_EQ(offsetof(kiwi_sqe, sge), 32u);
	EXPECT_EQ(offsetof(kiwi_sqe, atomic), 32u);
	EXPECT_EQ(offsetof(kiwi_sqe_atomic, compare_add), 16u);
	EXPECT_EQ(offsetof(kiwi_sqe_atomic, swap), 24u);
	EXPECT_EQ(offsetof(kiwi_sqe_atomic, compare_add_mask), 32u);
	EXPECT_EQ(offsetof(kiwi_sqe_atomic, swap_mask), 40u);
	EXPECT_EQ(sizeof(kiwi_sqe_atomic), 48u);
	EXPECT_EQ(offsetof(kiwi_sqe, bind), 32u);
	EXPECT_EQ(offsetof(kiwi_sqe_bind, length), 8u);
	EXPECT_EQ(offsetof(kiwi_sqe_bind, mr_lkey), 16u);
	EXPECT_EQ(offsetof(kiwi_sqe_bind, access), 20u);
	EXPECT_EQ(sizeof(kiwi_sqe_bind), 24u);
	EXPECT_EQ(sizeof(kiwi_sqe::sge), static_cast<size_t>(KIWI_MAX_INLINE));
	EXPECT_EQ(sizeof(kiwi_rqe), 112u);
	EXPECT_EQ(sizeof(kiwi_cqe), 32u);
	EXPECT_EQ(offsetof(kiwi_cqe, imm_data), 28u);
}

TEST(KiwiAbi, SgeMatchesIbvSge)
{
	EXPECT_EQ(sizeof(kiwi_sge), sizeof(ibv_sge));
	EXPECT_EQ(offsetof(kiwi_sge, addr), offsetof(ibv_sge, addr));
	EXPECT_EQ(offsetof(kiwi_sge, length), offsetof(ibv_sge, length));
	EXPECT_EQ(offsetof(kiwi_sge, lkey), offsetof(ibv_sge, lkey));
}

TEST(KiwiAbi, WcOpcodesEqualIbverbsValues)
{
	EXPECT_EQ(static_cast<int>(KIWI_WC_SEND),
		  static_cast<int>(IBV_WC_SEND));
	EXPECT_EQ(static_cast<int>(KIWI_WC_RDMA_WRITE),
		  static_cast<int>(IBV_WC_RDMA_WRITE));
	EXPECT_EQ(static_cast<int>(KIWI_WC_RDMA_READ),
		  static_cast<int>(IBV_WC_RDMA_READ));
	EXPECT_EQ(static_cast<int>(KIWI_WC_COMP_SWAP),
		  static_cast<int>(IBV_WC_COMP_SWAP));
	EXPECT_EQ(static_cast<int>(KIWI_WC_FETCH_ADD),
		  static_cast<int>(IBV_WC_FETCH_ADD));
	EXPECT_EQ(static_cast<int>(KIWI_WC_BIND_MW),
		  static_cast<int>(IBV_WC_BIND_MW));
	EXPECT_EQ(static_cast<int>(KIWI_WC_LOCAL_INV),
		  static_cast<int>(IBV_WC_LOCAL_INV));
	EXPECT_EQ(static_cast<int>(KIWI_WC_RECV),
		  static_cast<int>(IBV_WC_RECV));
	EXPECT_EQ(static_cast<int>(KIWI_WC_RECV_RDMA_WITH_IMM),
		  static_cast<int>(IBV_WC_RECV_RDMA_WITH_IMM));
}

TEST(PrivateAbi, ContextOpsTableIs76Slots)
{
	EXPECT_EQ(sizeof(pabi::verbs_context_ops), 608u);
	EXPECT_EQ(offsetof(pabi::verbs_context_ops, unimport_pd), 600u);
}

TEST(RespBuffer, DriverDataDirectlyFollowsTheCoreResponse)
{
	RespBuffer<ib_uverbs_create_qp_resp, kiwi_uresp_create_qp> resp;
	kiwi_uresp_create_qp drv{};

	EXPECT_EQ(resp.size(), sizeof(ib_uverbs_create_qp_resp) + sizeof(drv));
	drv.sq_key = 0x1000;
	drv.rq_key = KIWI_INVALID_MMAP_KEY;
	drv.num_sqe = 64;
	drv.num_rqe = 0;
	drv.qp_id = 9;
	// What libibverbs' UHW_OUT pointer (core + sizeof core) receives.
	std::memcpy(reinterpret_cast<unsigned char *>(resp.core()) +
			    sizeof(ib_uverbs_create_qp_resp),
		    &drv, sizeof(drv));
	const kiwi_uresp_create_qp got = resp.drv();
	EXPECT_EQ(got.sq_key, 0x1000u);
	EXPECT_EQ(got.rq_key, KIWI_INVALID_MMAP_KEY);
	EXPECT_EQ(got.num_sqe, 64u);
	EXPECT_EQ(got.qp_id, 9u);
}

TEST(Doorbell, IsALegacyPostSendWithoutWorkRequests)
{
	// Kernel rule (ib_uverbs_write): in_words * 4 == bytes written.
	EXPECT_EQ(sizeof(PostSendDoorbell) % 4, 0u);
	EXPECT_EQ(sizeof(PostSendDoorbell), 32u);
	EXPECT_EQ(offsetof(PostSendDoorbell, response), 8u);
	EXPECT_EQ(offsetof(PostSendDoorbell, wr_count), 20u);
}

} // namespace
} // namespace kiwi
