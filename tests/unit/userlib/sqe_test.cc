// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// Encoding of send and receive work requests into kiwi elements.
#include "wqe.h"

#include <gtest/gtest.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace kiwi {
namespace {

constexpr SendLimits kLimits{.max_sge = KIWI_MAX_SGE,
			     .max_inline = KIWI_MAX_INLINE,
			     .sig_all = false};

ibv_send_wr make_wr(ibv_wr_opcode op, ibv_sge *sges, int num_sge)
{
	ibv_send_wr wr{};

	wr.wr_id = 0x1122334455667788ull;
	wr.opcode = op;
	wr.sg_list = sges;
	wr.num_sge = num_sge;
	return wr;
}

// An SQE full of garbage, to see that encoding overwrites every field.
kiwi_sqe dirty_sqe()
{
	kiwi_sqe sqe;

	std::memset(&sqe, 0xa5, sizeof(sqe));
	return sqe;
}

TEST(SendOpcode, MapsTheTenKiwiOpcodes)
{
	const std::array<std::pair<ibv_wr_opcode, uint8_t>, 10> map{{
		{IBV_WR_BIND_MW, KIWI_WR_BIND_MW},
		{IBV_WR_ATOMIC_CMP_AND_SWP, KIWI_WR_ATOMIC_CMP_AND_SWP},
		{IBV_WR_ATOMIC_FETCH_AND_ADD, KIWI_WR_ATOMIC_FETCH_AND_ADD},
		{IBV_WR_SEND, KIWI_WR_SEND},
		{IBV_WR_SEND_WITH_IMM, KIWI_WR_SEND_WITH_IMM},
		{IBV_WR_RDMA_WRITE_WITH_IMM, KIWI_WR_RDMA_WRITE_WITH_IMM},
		{IBV_WR_SEND_WITH_INV, KIWI_WR_SEND_WITH_INV},
		{IBV_WR_RDMA_WRITE, KIWI_WR_RDMA_WRITE},
		{IBV_WR_RDMA_READ, KIWI_WR_RDMA_READ},
		{IBV_WR_LOCAL_INV, KIWI_WR_LOCAL_INV},
	}};
	for (const auto &[ibv, want] : map) {
		uint8_t got = 0xff;
		EXPECT_EQ(map_send_opcode(ibv, got), 0) << ibv;
		EXPECT_EQ(got, want) << ibv;
	}
}

TEST(SendOpcode, UnsupportedOpcodesAreEopnotsupp)
{
	for (ibv_wr_opcode op :
	     {IBV_WR_TSO, IBV_WR_DRIVER1, IBV_WR_ATOMIC_WRITE}) {
		uint8_t got = 0;
		EXPECT_EQ(map_send_opcode(op, got), EOPNOTSUPP) << op;
	}
}

TEST(SendOpcode, NonOpcodesAreEinval)
{
	uint8_t got = 0;

	EXPECT_EQ(map_send_opcode(12, got), EINVAL);
	EXPECT_EQ(map_send_opcode(16, got), EINVAL);
	EXPECT_EQ(map_send_opcode(200, got), EINVAL);
	EXPECT_EQ(map_send_opcode(0xffffffffu, got), EINVAL);
}

TEST(EncodeSend, SendCopiesSges)
{
	ibv_sge sges[2] = {{0x1000, 10, 0xaa}, {0x2000, 20, 0xbb}};
	const ibv_send_wr wr = make_wr(IBV_WR_SEND, sges, 2);
	kiwi_sqe sqe = dirty_sqe();

	ASSERT_EQ(encode_send(wr, kLimits, sqe), 0);
	EXPECT_EQ(sqe.wr_id, wr.wr_id);
	EXPECT_EQ(sqe.opcode, KIWI_WR_SEND);
	EXPECT_EQ(sqe.flags, 0u);
	EXPECT_EQ(sqe.num_sge, 2);
	EXPECT_EQ(sqe.inline_len, 0u);
	EXPECT_EQ(sqe.imm_data, 0u);
	EXPECT_EQ(sqe.inv_or_rkey, 0u);
	EXPECT_EQ(sqe.remote_addr, 0u);
	EXPECT_EQ(sqe.sge[0].addr, 0x1000u);
	EXPECT_EQ(sqe.sge[0].length, 10u);
	EXPECT_EQ(sqe.sge[0].lkey, 0xaau);
	EXPECT_EQ(sqe.sge[1].addr, 0x2000u);
	EXPECT_EQ(sqe.sge[1].length, 20u);
	EXPECT_EQ(sqe.sge[1].lkey, 0xbbu);
}

// RFC 7306: the immediate value travels as the consumer stored it; a Write
// with Immediate keeps its remote half and payload.
TEST(EncodeSend, WriteWithImmediate)
{
	ibv_sge sge{0x1000, 10, 0xaa};
	ibv_send_wr wr = make_wr(IBV_WR_RDMA_WRITE_WITH_IMM, &sge, 1);
	kiwi_sqe sqe = dirty_sqe();

	wr.imm_data = 0x78563412u;
	wr.wr.rdma.rkey = 0x4242;
	wr.wr.rdma.remote_addr = 0x9000;
	wr.send_flags = IBV_SEND_SOLICITED;
	ASSERT_EQ(encode_send(wr, kLimits, sqe), 0);
	EXPECT_EQ(sqe.opcode, KIWI_WR_RDMA_WRITE_WITH_IMM);
	EXPECT_EQ(sqe.imm_data, 0x78563412u);
	EXPECT_EQ(sqe.inv_or_rkey, 0x4242u);
	EXPECT_EQ(sqe.remote_addr, 0x9000u);
	EXPECT_EQ(sqe.flags, static_cast<uint32_t>(KIWI_SQE_SOLICITED));
	EXPECT_EQ(sqe.num_sge, 1);
	EXPECT_EQ(sqe.sge[0].length, 10u);
}

// Send with Immediate has no RFC 7306 form with payload: only empty ones
// are accepted, the rest is EOPNOTSUPP before anything is published.
TEST(EncodeSend, SendWithImmediateOnlyWithoutPayload)
{
	ibv_sge empty{0x1000, 0, 0xaa};
	ibv_sge full{0x1000, 1, 0xaa};
	kiwi_sqe sqe = dirty_sqe();
	ibv_send_wr wr = make_wr(IBV_WR_SEND_WITH_IMM, nullptr, 0);

	wr.imm_data = 0x01020304u;
	ASSERT_EQ(encode_send(wr, kLimits, sqe), 0);
	EXPECT_EQ(sqe.opcode, KIWI_WR_SEND_WITH_IMM);
	EXPECT_EQ(sqe.imm_data, 0x01020304u);
	EXPECT_EQ(sqe.inv_or_rkey, 0u);
	wr = make_wr(IBV_WR_SEND_WITH_IMM, &empty, 1);
	EXPECT_EQ(encode_send(wr, kLimits, sqe), 0);
	wr = make_wr(IBV_WR_SEND_WITH_IMM, &full, 1);
	EXPECT_EQ(encode_send(wr, kLimits, sqe), EOPNOTSUPP);
	wr.send_flags = IBV_SEND_INLINE;
	EXPECT_EQ(encode_send(wr, kLimits, sqe), EOPNOTSUPP);
}

TEST(EncodeSend, ZeroLengthSendHasNoSges)
{
	const ibv_send_wr wr = make_wr(IBV_WR_SEND, nullptr, 0);
	kiwi_sqe sqe = dirty_sqe();

	ASSERT_EQ(encode_send(wr, kLimits, sqe), 0);
	EXPECT_EQ(sqe.num_sge, 0);
}

TEST(EncodeSend, SendWithInvalidateCarriesTheStag)
{
	ibv_sge sge{0x1000, 8, 1};
	ibv_send_wr wr = make_wr(IBV_WR_SEND_WITH_INV, &sge, 1);
	kiwi_sqe sqe = dirty_sqe();

	wr.invalidate_rkey = 0xdeadbeef;
	ASSERT_EQ(encode_send(wr, kLimits, sqe), 0);
	EXPECT_EQ(sqe.opcode, KIWI_WR_SEND_WITH_INV);
	EXPECT_EQ(sqe.inv_or_rkey, 0xdeadbeefu);
	EXPECT_EQ(sqe.remote_addr, 0u);
}

TEST(EncodeSend, RdmaWriteAndReadCarryRemoteBuffer)
{
	ibv_sge sge{0x1000, 4096, 7};

	for (ibv_wr_opcode op : {IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ}) {
		ibv_send_wr wr = make_wr(op, &sge, 1);
		kiwi_sqe sqe = dirty_sqe();

		wr.wr.rdma.remote_addr = 0xffff000011112222ull;
		wr.wr.rdma.rkey = 0x1234;
		ASSERT_EQ(encode_send(wr, kLimits, sqe), 0) << op;
		EXPECT_EQ(sqe.opcode, op == IBV_WR_RDMA_WRITE
					      ? KIWI_WR_RDMA_WRITE
					      : KIWI_WR_RDMA_READ);
		EXPECT_EQ(sqe.remote_addr, 0xffff000011112222ull);
		EXPECT_EQ(sqe.inv_or_rkey, 0x1234u);
		EXPECT_EQ(sqe.num_sge, 1);
		EXPECT_EQ(sqe.sge[0].length, 4096u);
	}
}

// RFC 7306 atomics: the remote word, the one result SGE and the plain
// verbs operands (CmpSwap masks all-ones, FetchAdd mask 0).
TEST(EncodeSend, AtomicsCarryOperandsAndOneResultSge)
{
	ibv_sge sge{0x2000, 8, 9};

	for (ibv_wr_opcode op :
	     {IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD}) {
		ibv_send_wr wr = make_wr(op, &sge, 1);
		kiwi_sqe sqe = dirty_sqe();
		const bool cas = op == IBV_WR_ATOMIC_CMP_AND_SWP;

		wr.wr.atomic.remote_addr = 0x7000000000001008ull;
		wr.wr.atomic.rkey = 0x4321;
		wr.wr.atomic.compare_add = 0x1111222233334444ull;
		wr.wr.atomic.swap = 0x5555666677778888ull;
		ASSERT_EQ(encode_send(wr, kLimits, sqe), 0) << op;
		EXPECT_EQ(sqe.opcode, cas ? KIWI_WR_ATOMIC_CMP_AND_SWP
					  : KIWI_WR_ATOMIC_FETCH_AND_ADD);
		EXPECT_EQ(sqe.remote_addr, 0x7000000000001008ull);
		EXPECT_EQ(sqe.inv_or_rkey, 0x4321u);
		EXPECT_EQ(sqe.num_sge, 1);
		EXPECT_EQ(sqe.sge[0].addr, 0x2000u);
		EXPECT_EQ(sqe.atomic.result.length, 8u);
		EXPECT_EQ(sqe.atomic.result.lkey, 9u);
		EXPECT_EQ(sqe.atomic.compare_add, 0x1111222233334444ull);
		EXPECT_EQ(sqe.atomic.swap, cas ? 0x5555666677778888ull : 0);
		EXPECT_EQ(sqe.atomic.compare_add_mask, cas ? ~0ull : 0);
		EXPECT_EQ(sqe.atomic.swap_mask, cas ? ~0ull : 0);

		// One 8-octet SGE, not inline: anything else is EINVAL.
		ibv_sge two[2] = {sge, sge};
		wr = make_wr(op, two, 2);
		EXPECT_EQ(encode_send(wr, kLimits, sqe), EINVAL);
		wr = make_wr(op, nullptr, 0);
		EXPECT_EQ(encode_send(wr, kLimits, sqe), EINVAL);
		for (uint32_t len : {0u, 4u, 16u}) {
			ibv_sge bad{0x2000, len, 9};
			wr = make_wr(op, &bad, 1);
			EXPECT_EQ(encode_send(wr, kLimits, sqe), EINVAL) << len;
		}
		wr = make_wr(op, &sge, 1);
		wr.send_flags = IBV_SEND_INLINE;
		EXPECT_EQ(encode_send(wr, kLimits, sqe), EINVAL);
	}
}

TEST(EncodeSend, LocalInvalidateIgnoresSges)
{
	ibv_sge sge{0x1000, 8, 1};
	ibv_send_wr wr = make_wr(IBV_WR_LOCAL_INV, &sge, 1);
	kiwi_sqe sqe = dirty_sqe();

	wr.invalidate_rkey = 0x55;
	wr.send_flags = IBV_SEND_SIGNALED;
	ASSERT_EQ(encode_send(wr, kLimits, sqe), 0);
	EXPECT_EQ(sqe.opcode, KIWI_WR_LOCAL_INV);
	EXPECT_EQ(sqe.inv_or_rkey, 0x55u);
	EXPECT_EQ(sqe.num_sge, 0);
	EXPECT_EQ(sqe.flags, static_cast<uint32_t>(KIWI_SQE_SIGNALED));
}

// A window bind: the new rkey, the MR's lkey, the range and the rights.
TEST(EncodeSend, BindMwCarriesTheBinding)
{
	ibv_mr mr{};
	ibv_mw mw{};
	mr.lkey = 0x4242;
	mw.rkey = 0x12345678;
	mw.type = IBV_MW_TYPE_2;
	ibv_send_wr wr = make_wr(IBV_WR_BIND_MW, nullptr, 0);
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
	wr.bind_mw.mw = &mw;
	wr.bind_mw.rkey = 0x12345679;
	wr.bind_mw.bind_info.mr = &mr;
	wr.bind_mw.bind_info.addr = 0x10000;
	wr.bind_mw.bind_info.length = 1ull << 33;
	wr.bind_mw.bind_info.mw_access_flags =
		IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	kiwi_sqe sqe = dirty_sqe();

	ASSERT_EQ(encode_send(wr, kLimits, sqe), 0);
	EXPECT_EQ(sqe.opcode, KIWI_WR_BIND_MW);
	EXPECT_EQ(sqe.flags, KIWI_SQE_SIGNALED | KIWI_SQE_READ_FENCE);
	EXPECT_EQ(sqe.num_sge, 0);
	EXPECT_EQ(sqe.inv_or_rkey, 0x12345679u);
	EXPECT_EQ(sqe.bind.addr, 0x10000u);
	EXPECT_EQ(sqe.bind.length, 1ull << 33);
	EXPECT_EQ(sqe.bind.mr_lkey, 0x4242u);
	EXPECT_EQ(sqe.bind.access,
		  static_cast<uint32_t>(IBV_ACCESS_REMOTE_WRITE |
					IBV_ACCESS_REMOTE_READ));

	// Unbinding (type 1): no MR, no range.
	wr.bind_mw.bind_info = {};
	sqe = dirty_sqe();
	ASSERT_EQ(encode_send(wr, kLimits, sqe), 0);
	EXPECT_EQ(sqe.bind.length, 0u);
	EXPECT_EQ(sqe.bind.mr_lkey, 0u);
}

TEST(EncodeSend, BadBindsAreRefused)
{
	ibv_mr mr{};
	ibv_mw mw{};
	mw.rkey = 0x12345678;
	ibv_send_wr wr = make_wr(IBV_WR_BIND_MW, nullptr, 0);
	wr.bind_mw.mw = &mw;
	wr.bind_mw.rkey = 0x12345600;
	wr.bind_mw.bind_info.mr = &mr;
	wr.bind_mw.bind_info.length = 8;
	kiwi_sqe sqe = dirty_sqe();

	ASSERT_EQ(encode_send(wr, kLimits, sqe), 0);
	wr.bind_mw.rkey = 0x12355678; // another window's index
	EXPECT_EQ(encode_send(wr, kLimits, sqe), EINVAL);
	wr.bind_mw.rkey = 0x12345679;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_ZERO_BASED;
	EXPECT_EQ(encode_send(wr, kLimits, sqe), EOPNOTSUPP);
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_LOCAL_WRITE;
	EXPECT_EQ(encode_send(wr, kLimits, sqe), EINVAL);
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
	wr.bind_mw.bind_info.mr = nullptr; // a range without an MR
	EXPECT_EQ(encode_send(wr, kLimits, sqe), EINVAL);
	wr.bind_mw.bind_info.mr = &mr;
	wr.send_flags = IBV_SEND_INLINE;
	EXPECT_EQ(encode_send(wr, kLimits, sqe), EINVAL);
	wr.send_flags = 0;
	wr.bind_mw.mw = nullptr;
	EXPECT_EQ(encode_send(wr, kLimits, sqe), EINVAL);
}

TEST(EncodeSend, FlagsMap)
{
	ibv_send_wr wr = make_wr(IBV_WR_SEND, nullptr, 0);
	kiwi_sqe sqe = dirty_sqe();

	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_FENCE;
	ASSERT_EQ(encode_send(wr, kLimits, sqe), 0);
	EXPECT_EQ(sqe.flags,
		  static_cast<uint32_t>(KIWI_SQE_SIGNALED | KIWI_SQE_SOLICITED |
					KIWI_SQE_READ_FENCE));
}

TEST(EncodeSend, SigAllSignalsEveryRequest)
{
	const ibv_send_wr wr = make_wr(IBV_WR_SEND, nullptr, 0);
	SendLimits lim = kLimits;
	kiwi_sqe sqe = dirty_sqe();

	ASSERT_EQ(encode_send(wr, lim, sqe), 0);
	EXPECT_EQ(sqe.flags & KIWI_SQE_SIGNALED, 0u);
	lim.sig_all = true;
	ASSERT_EQ(encode_send(wr, lim, sqe), 0);
	EXPECT_EQ(sqe.flags & KIWI_SQE_SIGNALED,
		  static_cast<uint32_t>(KIWI_SQE_SIGNALED));
}

TEST(EncodeSend, UnknownFlagsAreRejected)
{
	ibv_send_wr wr = make_wr(IBV_WR_SEND, nullptr, 0);
	kiwi_sqe sqe = dirty_sqe();

	wr.send_flags = IBV_SEND_IP_CSUM;
	EXPECT_EQ(encode_send(wr, kLimits, sqe), EINVAL);
	wr.send_flags = 1u << 20;
	EXPECT_EQ(encode_send(wr, kLimits, sqe), EINVAL);
}

TEST(EncodeSend, SgeCountIsChecked)
{
	std::vector<ibv_sge> sges(KIWI_MAX_SGE + 1, ibv_sge{0x1000, 1, 1});
	ibv_send_wr wr = make_wr(IBV_WR_SEND, sges.data(), KIWI_MAX_SGE);
	kiwi_sqe sqe = dirty_sqe();

	EXPECT_EQ(encode_send(wr, kLimits, sqe), 0);
	EXPECT_EQ(sqe.num_sge, KIWI_MAX_SGE);
	wr.num_sge = KIWI_MAX_SGE + 1;
	EXPECT_EQ(encode_send(wr, kLimits, sqe), EINVAL);
	wr.num_sge = -1;
	EXPECT_EQ(encode_send(wr, kLimits, sqe), EINVAL);

	SendLimits two = kLimits;
	two.max_sge = 2;
	wr.num_sge = 3;
	EXPECT_EQ(encode_send(wr, two, sqe), EINVAL);
	wr.num_sge = 2;
	EXPECT_EQ(encode_send(wr, two, sqe), 0);
}

TEST(EncodeSend, MissingSgListIsEinval)
{
	const ibv_send_wr wr = make_wr(IBV_WR_SEND, nullptr, 1);
	kiwi_sqe sqe = dirty_sqe();

	EXPECT_EQ(encode_send(wr, kLimits, sqe), EINVAL);
}

TEST(EncodeSend, InlineGathersAllSges)
{
	std::array<unsigned char, 40> a{};
	std::array<unsigned char, 56> b{};
	std::iota(a.begin(), a.end(), 1);
	std::iota(b.begin(), b.end(), 100);
	ibv_sge sges[3] = {
		{reinterpret_cast<uintptr_t>(a.data()), 40, 0},
		{0, 0, 0}, // empty SGEs are skipped, whatever their address
		{reinterpret_cast<uintptr_t>(b.data()), 56, 0},
	};
	ibv_send_wr wr = make_wr(IBV_WR_SEND, sges, 3);
	kiwi_sqe sqe = dirty_sqe();

	wr.send_flags = IBV_SEND_INLINE;
	ASSERT_EQ(encode_send(wr, kLimits, sqe), 0);
	EXPECT_EQ(sqe.flags, static_cast<uint32_t>(KIWI_SQE_INLINE));
	EXPECT_EQ(sqe.num_sge, 0);
	EXPECT_EQ(sqe.inline_len, 96u);
	const auto *data = reinterpret_cast<const unsigned char *>(sqe.sge);
	EXPECT_EQ(std::memcmp(data, a.data(), 40), 0);
	EXPECT_EQ(std::memcmp(data + 40, b.data(), 56), 0);
}

TEST(EncodeSend, InlineLimitIsEnforced)
{
	std::array<unsigned char, KIWI_MAX_INLINE + 1> buf{};
	ibv_sge sge{reinterpret_cast<uintptr_t>(buf.data()), KIWI_MAX_INLINE,
		    0};
	ibv_send_wr wr = make_wr(IBV_WR_RDMA_WRITE, &sge, 1);
	kiwi_sqe sqe = dirty_sqe();

	wr.send_flags = IBV_SEND_INLINE;
	EXPECT_EQ(encode_send(wr, kLimits, sqe), 0);
	EXPECT_EQ(sqe.inline_len, static_cast<uint32_t>(KIWI_MAX_INLINE));
	sge.length = KIWI_MAX_INLINE + 1;
	EXPECT_EQ(encode_send(wr, kLimits, sqe), EINVAL);

	// The QP's own limit (from create_qp) applies too.
	SendLimits small = kLimits;
	small.max_inline = 16;
	sge.length = 16;
	EXPECT_EQ(encode_send(wr, small, sqe), 0);
	sge.length = 17;
	EXPECT_EQ(encode_send(wr, small, sqe), EINVAL);
}

TEST(EncodeSend, InlineLengthsDoNotOverflow)
{
	ibv_sge sges[2] = {{0x1000, 0xffffffffu, 0}, {0x2000, 2, 0}};
	ibv_send_wr wr = make_wr(IBV_WR_SEND, sges, 2);
	kiwi_sqe sqe = dirty_sqe();

	wr.send_flags = IBV_SEND_INLINE;
	EXPECT_EQ(encode_send(wr, kLimits, sqe), EINVAL);
}

TEST(EncodeSend, InlineReadAndNullBufferAreEinval)
{
	unsigned char buf[8] = {};
	ibv_sge sge{reinterpret_cast<uintptr_t>(buf), 8, 0};
	ibv_send_wr wr = make_wr(IBV_WR_RDMA_READ, &sge, 1);
	kiwi_sqe sqe = dirty_sqe();

	wr.send_flags = IBV_SEND_INLINE;
	EXPECT_EQ(encode_send(wr, kLimits, sqe), EINVAL);

	wr.opcode = IBV_WR_LOCAL_INV;
	EXPECT_EQ(encode_send(wr, kLimits, sqe), EINVAL);

	wr.opcode = IBV_WR_SEND;
	sge.addr = 0;
	EXPECT_EQ(encode_send(wr, kLimits, sqe), EINVAL);
}

// Random requests against random limits: every result is either a clean
// error or an SQE within the limits whose inline bytes are exactly the
// gathered SGE bytes. Out-of-range lengths must be refused before any copy
// (a copy would run off the 256-byte buffers and trip ASan or crash).
TEST(EncodeSend, RandomRequestsKeepInvariants)
{
	std::mt19937 rng(20261122);
	std::array<std::array<unsigned char, 256>, 8> bufs{};
	for (auto &b : bufs)
		std::iota(b.begin(), b.end(),
			  static_cast<unsigned char>(rng()));
	const uint32_t lengths[] = {0,	1,  7,	 16,	      40,
				    96, 97, 256, 0x80000000u, 0xffffffffu};
	const uint32_t known_flags = KIWI_SQE_SIGNALED | KIWI_SQE_SOLICITED |
				     KIWI_SQE_INLINE | KIWI_SQE_READ_FENCE;

	for (int iter = 0; iter < 200000; iter++) {
		SendLimits lim{.max_sge = static_cast<uint32_t>(
				       rng() % (KIWI_MAX_SGE + 1)),
			       .max_inline = static_cast<uint32_t>(
				       rng() % (KIWI_MAX_INLINE + 1)),
			       .sig_all = (rng() & 1) != 0};
		ibv_sge sges[8];
		for (size_t i = 0; i < 8; i++)
			sges[i] = {reinterpret_cast<uintptr_t>(bufs[i].data()),
				   lengths[rng() % 10],
				   static_cast<uint32_t>(rng())};
		ibv_send_wr wr{};
		wr.wr_id = rng();
		// Any integer, as C callers may store (no enum conversion).
		const uint32_t op = rng() % 18;
		std::memcpy(&wr.opcode, &op, sizeof(op));
		wr.send_flags = rng() % 64;
		wr.num_sge = static_cast<int>(rng() % 11) - 2;
		wr.sg_list = (rng() % 16) ? sges : nullptr;
		kiwi_sqe sqe = dirty_sqe();

		const int ret = encode_send(wr, lim, sqe);
		if (ret) {
			ASSERT_TRUE(ret == EINVAL || ret == EOPNOTSUPP) << ret;
			continue;
		}
		ASSERT_LT(sqe.opcode, KIWI_WR_NUM_OPCODES);
		ASSERT_EQ(sqe.flags & ~known_flags, 0u);
		ASSERT_EQ(sqe.wr_id, wr.wr_id);
		ASSERT_LE(sqe.num_sge, lim.max_sge);
		if (!(sqe.flags & KIWI_SQE_INLINE))
			continue;
		ASSERT_EQ(sqe.num_sge, 0);
		ASSERT_LE(sqe.inline_len, lim.max_inline);
		const auto *data =
			reinterpret_cast<const unsigned char *>(sqe.sge);
		uint32_t off = 0;
		for (int i = 0; i < wr.num_sge; i++) {
			ASSERT_EQ(std::memcmp(data + off, bufs[i].data(),
					      sges[i].length),
				  0);
			off += sges[i].length;
		}
		ASSERT_EQ(off, sqe.inline_len);
	}
}

TEST(EncodeRecv, CopiesSges)
{
	ibv_sge sges[3] = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};
	ibv_recv_wr wr{};
	kiwi_rqe rqe;

	std::memset(&rqe, 0xa5, sizeof(rqe));
	wr.wr_id = 42;
	wr.sg_list = sges;
	wr.num_sge = 3;
	ASSERT_EQ(encode_recv(wr, KIWI_MAX_SGE, rqe), 0);
	EXPECT_EQ(rqe.wr_id, 42u);
	EXPECT_EQ(rqe.num_sge, 3u);
	EXPECT_EQ(rqe.rsvd, 0u);
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(rqe.sge[i].addr, sges[i].addr);
		EXPECT_EQ(rqe.sge[i].length, sges[i].length);
		EXPECT_EQ(rqe.sge[i].lkey, sges[i].lkey);
	}
}

TEST(EncodeRecv, SgeCountIsChecked)
{
	ibv_sge sges[KIWI_MAX_SGE + 1] = {};
	ibv_recv_wr wr{};
	kiwi_rqe rqe{};

	wr.sg_list = sges;
	wr.num_sge = KIWI_MAX_SGE + 1;
	EXPECT_EQ(encode_recv(wr, KIWI_MAX_SGE, rqe), EINVAL);
	wr.num_sge = 2;
	EXPECT_EQ(encode_recv(wr, 1, rqe), EINVAL);
	wr.num_sge = -3;
	EXPECT_EQ(encode_recv(wr, KIWI_MAX_SGE, rqe), EINVAL);
	wr.num_sge = 1;
	wr.sg_list = nullptr;
	EXPECT_EQ(encode_recv(wr, KIWI_MAX_SGE, rqe), EINVAL);
	wr.num_sge = 0;
	EXPECT_EQ(encode_recv(wr, KIWI_MAX_SGE, rqe), 0);
	EXPECT_EQ(rqe.num_sge, 0u);
}

} // namespace
} // namespace kiwi
