// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// Decoding of kernel-written completions into ibv_wc.
#include "wqe.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>

namespace kiwi {
namespace {

kiwi_cqe make_cqe(uint16_t opcode, uint8_t status)
{
	kiwi_cqe cqe{};

	cqe.wr_id = 0xabcdef0123456789ull;
	cqe.byte_len = 4096;
	cqe.qp_num = 17;
	cqe.opcode = opcode;
	cqe.status = status;
	return cqe;
}

ibv_wc dirty_wc()
{
	ibv_wc wc;

	std::memset(&wc, 0x5a, sizeof(wc));
	return wc;
}

TEST(DecodeCqe, CopiesTheCommonFields)
{
	kiwi_cqe cqe = make_cqe(KIWI_WC_RECV, IBV_WC_SUCCESS);
	ibv_wc wc = dirty_wc();

	cqe.vendor_err = 3;
	decode_cqe(cqe, wc);
	EXPECT_EQ(wc.wr_id, 0xabcdef0123456789ull);
	EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
	EXPECT_EQ(wc.opcode, IBV_WC_RECV);
	EXPECT_EQ(wc.byte_len, 4096u);
	EXPECT_EQ(wc.qp_num, 17u);
	EXPECT_EQ(wc.vendor_err, 3u);
	EXPECT_EQ(wc.wc_flags, 0u);
	EXPECT_EQ(wc.src_qp, 0u);
	EXPECT_EQ(wc.pkey_index, 0);
	EXPECT_EQ(wc.slid, 0);
	EXPECT_EQ(wc.sl, 0);
	EXPECT_EQ(wc.dlid_path_bits, 0);
}

TEST(DecodeCqe, MapsEveryOpcode)
{
	const std::array<std::pair<uint16_t, ibv_wc_opcode>, 9> map{{
		{KIWI_WC_BIND_MW, IBV_WC_BIND_MW},
		{KIWI_WC_SEND, IBV_WC_SEND},
		{KIWI_WC_COMP_SWAP, IBV_WC_COMP_SWAP},
		{KIWI_WC_FETCH_ADD, IBV_WC_FETCH_ADD},
		{KIWI_WC_RECV_RDMA_WITH_IMM, IBV_WC_RECV_RDMA_WITH_IMM},
		{KIWI_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE},
		{KIWI_WC_RDMA_READ, IBV_WC_RDMA_READ},
		{KIWI_WC_LOCAL_INV, IBV_WC_LOCAL_INV},
		{KIWI_WC_RECV, IBV_WC_RECV},
	}};
	for (const auto &[op, want] : map) {
		ibv_wc wc = dirty_wc();

		decode_cqe(make_cqe(op, IBV_WC_SUCCESS), wc);
		EXPECT_EQ(wc.opcode, want) << op;
		EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << op;
	}
}

TEST(DecodeCqe, PassesErrorStatuses)
{
	for (ibv_wc_status st :
	     {IBV_WC_LOC_LEN_ERR, IBV_WC_LOC_PROT_ERR, IBV_WC_WR_FLUSH_ERR,
	      IBV_WC_REM_ACCESS_ERR, IBV_WC_REM_OP_ERR, IBV_WC_FATAL_ERR,
	      IBV_WC_GENERAL_ERR, IBV_WC_TM_RNDV_INCOMPLETE}) {
		ibv_wc wc = dirty_wc();

		decode_cqe(make_cqe(KIWI_WC_SEND, static_cast<uint8_t>(st)),
			   wc);
		EXPECT_EQ(wc.status, st);
	}
}

TEST(DecodeCqe, UnknownStatusBecomesGeneralError)
{
	ibv_wc wc = dirty_wc();

	decode_cqe(make_cqe(KIWI_WC_SEND, IBV_WC_TM_RNDV_INCOMPLETE + 1), wc);
	EXPECT_EQ(wc.status, IBV_WC_GENERAL_ERR);
	decode_cqe(make_cqe(KIWI_WC_SEND, 255), wc);
	EXPECT_EQ(wc.status, IBV_WC_GENERAL_ERR);
}

TEST(DecodeCqe, UnknownOpcodeOfASuccessIsAnError)
{
	for (uint16_t op : {7, 8, 130, 0xffff}) {
		ibv_wc wc = dirty_wc();

		decode_cqe(make_cqe(op, IBV_WC_SUCCESS), wc);
		EXPECT_EQ(wc.status, IBV_WC_GENERAL_ERR) << op;
	}
	// An error status is kept as it is.
	ibv_wc wc = dirty_wc();
	decode_cqe(make_cqe(99, IBV_WC_WR_FLUSH_ERR), wc);
	EXPECT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
}

TEST(DecodeCqe, WithImmediateReportsTheValue)
{
	kiwi_cqe cqe = make_cqe(KIWI_WC_RECV_RDMA_WITH_IMM, IBV_WC_SUCCESS);
	ibv_wc wc = dirty_wc();

	cqe.flags = KIWI_CQE_WITH_IMM | KIWI_CQE_SOLICITED;
	cqe.imm_data = 0xefbeaddeu;
	decode_cqe(cqe, wc);
	EXPECT_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	EXPECT_EQ(wc.wc_flags, static_cast<unsigned int>(IBV_WC_WITH_IMM));
	EXPECT_EQ(wc.imm_data, 0xefbeaddeu);
	EXPECT_EQ(wc.byte_len, 4096u);
}

TEST(DecodeCqe, WithInvalidateReportsTheStag)
{
	kiwi_cqe cqe = make_cqe(KIWI_WC_RECV, IBV_WC_SUCCESS);
	ibv_wc wc = dirty_wc();

	cqe.flags = KIWI_CQE_WITH_INV;
	cqe.inv_rkey = 0x77665544;
	decode_cqe(cqe, wc);
	EXPECT_EQ(wc.wc_flags, static_cast<unsigned int>(IBV_WC_WITH_INV));
	EXPECT_EQ(wc.invalidated_rkey, 0x77665544u);

	// Without the flag inv_rkey means nothing and does not leak out.
	cqe.flags = KIWI_CQE_SOLICITED;
	decode_cqe(cqe, wc);
	EXPECT_EQ(wc.wc_flags, 0u);
	EXPECT_EQ(wc.invalidated_rkey, 0u);
}

} // namespace
} // namespace kiwi
