// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// DDP over SCTP adaptation wire rules (draft-ietf-rddp-sctp, seeds-digest
// section 3): Session Control messages, DDP Segment chunks, MULPDU from the
// path MTU and the DDP-SSN window, in user space: kiwi.ko runs the same
// code (cm_sctp.c, llp_sctp.c), live-tested by tests/vm/pair/cases/sctp.sh.
#include <gtest/gtest.h>

#include <cerrno>
#include <vector>

#include "proto/sctp_adapt.h"

namespace {

TEST(SctpSsc, EncodeLayoutIsSsnFunctionPrivateData)
{
	const uint8_t pd[] = {0xde, 0xad, 0xbe};
	uint8_t buf[16] = {};

	ASSERT_EQ(kiwi_sctp_ssc_encode(buf, sizeof(buf), 0x1234,
				       KIWI_SCTP_SSC_ACCEPT, pd, sizeof(pd)),
		  7);
	const uint8_t want[] = {0x12, 0x34, 0x00, 0x02, 0xde, 0xad, 0xbe};
	EXPECT_EQ(0, memcmp(buf, want, sizeof(want)));
}

// SCTP-003: Private Data is present and may be 0 octets.
TEST(SctpSsc, ZeroLengthPrivateDataIsFourOctets)
{
	uint8_t buf[4];

	EXPECT_EQ(kiwi_sctp_ssc_encode(buf, sizeof(buf), 0,
				       KIWI_SCTP_SSC_INITIATE, nullptr, 0),
		  4);
	kiwi_sctp_ssc m{};
	ASSERT_EQ(kiwi_sctp_ssc_decode(&m, buf, 4), 0);
	EXPECT_EQ(m.fn, KIWI_SCTP_SSC_INITIATE);
	EXPECT_EQ(m.pd_len, 0u);
	EXPECT_EQ(m.pd, nullptr);
}

TEST(SctpSsc, RoundTripEveryFunctionAndPrivateDataLimit)
{
	std::vector<uint8_t> pd(KIWI_SCTP_PD_MAX);
	std::vector<uint8_t> buf(KIWI_SCTP_SSC_MAX);

	for (size_t i = 0; i < pd.size(); i++)
		pd[i] = static_cast<uint8_t>(i * 7);
	for (uint16_t fn : {KIWI_SCTP_SSC_INITIATE, KIWI_SCTP_SSC_ACCEPT,
			    KIWI_SCTP_SSC_REJECT}) {
		int n = kiwi_sctp_ssc_encode(buf.data(), buf.size(), 9, fn,
					     pd.data(), pd.size());
		ASSERT_EQ(n, KIWI_SCTP_SSC_MAX);
		kiwi_sctp_ssc m{};
		ASSERT_EQ(kiwi_sctp_ssc_decode(&m, buf.data(), n), 0);
		EXPECT_EQ(m.ssn, 9);
		EXPECT_EQ(m.fn, fn);
		ASSERT_EQ(m.pd_len, pd.size());
		EXPECT_EQ(0, memcmp(m.pd, pd.data(), pd.size()));
	}
}

// SCTP-004
TEST(SctpSsc, PrivateDataOver512IsRefusedBothWays)
{
	std::vector<uint8_t> pd(KIWI_SCTP_PD_MAX + 1);
	std::vector<uint8_t> buf(KIWI_SCTP_SSC_MAX + 1);

	EXPECT_EQ(kiwi_sctp_ssc_encode(buf.data(), buf.size(), 0,
				       KIWI_SCTP_SSC_INITIATE, pd.data(),
				       pd.size()),
		  -EINVAL);
	put_unaligned_be16(0, buf.data());
	put_unaligned_be16(KIWI_SCTP_SSC_INITIATE, buf.data() + 2);
	kiwi_sctp_ssc m{};
	EXPECT_EQ(kiwi_sctp_ssc_decode(&m, buf.data(), buf.size()), -EINVAL);
}

// SCTP-005
TEST(SctpSsc, TerminateCarriesNoPrivateData)
{
	const uint8_t pd[] = {1};
	uint8_t buf[8];

	EXPECT_EQ(kiwi_sctp_ssc_encode(buf, sizeof(buf), 3,
				       KIWI_SCTP_SSC_TERMINATE, pd, 1),
		  -EINVAL);
	ASSERT_EQ(kiwi_sctp_ssc_encode(buf, sizeof(buf), 3,
				       KIWI_SCTP_SSC_TERMINATE, nullptr, 0),
		  4);
	kiwi_sctp_ssc m{};
	EXPECT_EQ(kiwi_sctp_ssc_decode(&m, buf, 4), 0);
	buf[4] = 0;
	EXPECT_EQ(kiwi_sctp_ssc_decode(&m, buf, 5), -EINVAL);
}

TEST(SctpSsc, UnknownFunctionAndShortMessageAreRefused)
{
	uint8_t buf[4] = {0, 0, 0, 0};
	kiwi_sctp_ssc m{};

	EXPECT_EQ(kiwi_sctp_ssc_decode(&m, buf, 4), -EINVAL); // code 0
	buf[3] = 5;
	EXPECT_EQ(kiwi_sctp_ssc_decode(&m, buf, 4), -EINVAL);
	buf[3] = 1;
	EXPECT_EQ(kiwi_sctp_ssc_decode(&m, buf, 3), -EINVAL);
	EXPECT_EQ(kiwi_sctp_ssc_encode(buf, sizeof(buf), 0, 0, nullptr, 0),
		  -EINVAL);
}

TEST(SctpSsc, EncodeNeedsRoom)
{
	const uint8_t pd[4] = {};
	uint8_t buf[7];

	EXPECT_EQ(kiwi_sctp_ssc_encode(buf, sizeof(buf), 0,
				       KIWI_SCTP_SSC_REJECT, pd, sizeof(pd)),
		  -ENOSPC);
}

// SCTP-030: an oversize DDP Segment is rejected.
TEST(SctpSeg, SsnThenSegmentWithinMulpdu)
{
	std::vector<uint8_t> buf(2 + 1450);
	uint16_t ssn = 0;

	buf[0] = 0xab;
	buf[1] = 0xcd;
	EXPECT_EQ(kiwi_sctp_seg_decode(buf.data(), buf.size(), 1450, &ssn), 0);
	EXPECT_EQ(ssn, 0xabcd);
	EXPECT_EQ(kiwi_sctp_seg_decode(buf.data(), buf.size(), 1449, &ssn),
		  -EMSGSIZE);
	EXPECT_EQ(kiwi_sctp_seg_decode(buf.data(), 2 + 13, 1450, &ssn),
		  -EINVAL);
	EXPECT_EQ(kiwi_sctp_seg_decode(buf.data(), 2 + 14, 1450, &ssn), 0);
}

// SCTP-027
TEST(SctpMulpdu, FromPathMtu)
{
	EXPECT_EQ(kiwi_sctp_mulpdu(1500, false), 1450u);
	EXPECT_EQ(kiwi_sctp_mulpdu(1500, true), 1430u);
	EXPECT_EQ(kiwi_sctp_mulpdu(9000, false), 8950u);
	// Small MTUs: never below 514, so 2 + MULPDU >= 516 (section 9).
	EXPECT_EQ(kiwi_sctp_mulpdu(576, false), 526u);
	EXPECT_EQ(kiwi_sctp_mulpdu(564, false), 514u);
	EXPECT_EQ(kiwi_sctp_mulpdu(500, false), 514u);
	EXPECT_EQ(kiwi_sctp_mulpdu(0, true), 514u);
}

// SCTP-034: the DDP-SSN is checked before anything is given to it.
TEST(SctpSsn, WindowUsesSerialArithmetic)
{
	EXPECT_TRUE(kiwi_sctp_ssn_valid(0, 0, 64));
	EXPECT_TRUE(kiwi_sctp_ssn_valid(0, 63, 64));
	EXPECT_FALSE(kiwi_sctp_ssn_valid(0, 64, 64));
	EXPECT_FALSE(kiwi_sctp_ssn_valid(5, 4, 64));	// a duplicate
	EXPECT_TRUE(kiwi_sctp_ssn_valid(65530, 3, 64)); // across the wrap
	EXPECT_FALSE(kiwi_sctp_ssn_valid(0, 30000, 64));
	EXPECT_TRUE(kiwi_sctp_ssn_valid(0, 32766, 65535));
	EXPECT_FALSE(kiwi_sctp_ssn_valid(0, 32767, 65535)); // capped
}

} // namespace
