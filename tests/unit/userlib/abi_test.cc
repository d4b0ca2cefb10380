// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// The private libibverbs layout checks are static_asserts in
// verbs_private.h: compiling this file runs them. The tests pin the parts
// of kiwi-abi.h that libkiwi's element code depends on.
#include "verbs_private.h"

#include <gtest/gtest.h>
#include <rdma/kiwi-abi.h>

#include <cstddef>

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
	EXPECT_EQ(offsetof(kiwi_sqe, sge), 32u);
	EXPECT_EQ(sizeof(kiwi_sqe::sge), static_cast<size_t>(KIWI_MAX_INLINE));
	EXPECT_EQ(sizeof(kiwi_rqe), 112u);
	EXPECT_EQ(sizeof(kiwi_cqe), 32u);
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
	EXPECT_EQ(static_cast<int>(KIWI_WC_LOCAL_INV),
		  static_cast<int>(IBV_WC_LOCAL_INV));
	EXPECT_EQ(static_cast<int>(KIWI_WC_RECV),
		  static_cast<int>(IBV_WC_RECV));
}

TEST(PrivateAbi, ContextOpsTableIs76Slots)
{
	EXPECT_EQ(sizeof(pabi::verbs_context_ops), 608u);
	EXPECT_EQ(offsetof(pabi::verbs_context_ops, unimport_pd), 600u);
}

} // namespace
} // namespace kiwi
