// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Streaming FPDU decoder: golden figures, every chunking of multi-FPDU
// streams with and without markers, MPA errors 1-3 and the receive MUSTs.
#include <gtest/gtest.h>

#include "mpa_test_util.h"

extern "C" {
#include "proto/ulpf.h"
}
#include "vectors/mpa_vectors.h"

using namespace mpatest;

namespace {

Bytes fig_send(uint8_t msn, size_t payload)
{
	Bytes b = {MPA_FIG_DDP_HDR(msn)};
	b.resize(b.size() + payload, 0);
	return b;
}

struct Stream {
	Bytes wire;
	std::vector<Bytes> ulpdus;
};

Stream make_stream(const kiwi_mpa_cfg &cfg, const std::vector<size_t> &sizes,
		   uint32_t seed, uint32_t start = 0)
{
	LibTx t(cfg, start);
	Stream s;
	for (size_t i = 0; i < sizes.size(); i++) {
		Bytes u = pattern(sizes[i], seed + uint32_t(i));
		Bytes w = t.fpdu({u});
		s.wire.insert(s.wire.end(), w.begin(), w.end());
		s.ulpdus.push_back(u);
	}
	return s;
}

void expect_ulpdus(const RxResult &r, const std::vector<Bytes> &want)
{
	ASSERT_EQ(0, r.err);
	ASSERT_FALSE(r.partial);
	ASSERT_EQ(want.size(), r.fpdus.size());
	for (size_t i = 0; i < want.size(); i++)
		ASSERT_EQ(want[i], r.fpdus[i].ulpdu) << "FPDU " << i;
}

// MPA-021/025/032: Figure 5 decodes to its 42-octet ULPDU; the header event
// carries the 18-octet DDP header.
TEST(MpaRx, GoldenFigure5)
{
	Bytes w(mpa_fig5_wire, mpa_fig5_wire + 52);
	RxResult r = decode(mpa_cfg(true, true), w, {}, 18);
	expect_ulpdus(r, {fig_send(1, 24)});
	EXPECT_EQ(18u, r.fpdus[0].hdr_len);
	EXPECT_EQ(52u, r.consumed);
}

// MPA-019/023/025: Figure 6 after its first FPDU; the marker inside the
// second FPDU is removed from the payload.
TEST(MpaRx, GoldenFigure6)
{
	Stream s = make_stream(mpa_cfg(true, true), {}, 0);
	LibTx t(mpa_cfg(true, true));
	Bytes w = t.fpdu({fig_send(1, 464)});
	w.insert(w.end(), mpa_fig6_wire, mpa_fig6_wire + 52);
	for (size_t cut = 0; cut <= w.size(); cut++) {
		RxResult r = decode(mpa_cfg(true, true), w, {cut}, 28);
		expect_ulpdus(r, {fig_send(1, 464), fig_send(2, 24)});
	}
}

const std::vector<size_t> kSizes = {42,	 1,   2,    3,	   4,	5,    482,
				    508, 509, 510,  511,   512, 1000, 1500,
				    18,	 7,   2047, 64768, 30,	1};

// Every case runs with markers on/off and CRC on/off and must return the
// same ULPDUs, without markers, length, pad or CRC (MPA-025/028).
class MpaRxChunk : public ::testing::TestWithParam<std::tuple<bool, bool>> {
protected:
	kiwi_mpa_cfg cfg() const
	{
		return mpa_cfg(std::get<0>(GetParam()),
			       std::get<1>(GetParam()));
	}
};

// MPA-042/043/045/046/087: every split of a multi-FPDU stream into two chunks.
TEST_P(MpaRxChunk, EveryTwoChunkSplit)
{
	std::vector<size_t> sizes(kSizes.begin(), kSizes.end());
	sizes.erase(sizes.begin() + 17); // keep it quick: drop 64768
	Stream s = make_stream(cfg(), sizes, 100);
	for (size_t cut = 0; cut <= s.wire.size(); cut++)
		expect_ulpdus(decode(cfg(), s.wire, {cut}, 18), s.ulpdus);
}

// Every split into three chunks of a stream that crosses marker positions.
TEST_P(MpaRxChunk, EveryThreeChunkSplit)
{
	Stream s = make_stream(cfg(), {5, 100, 3, 290, 1, 77, 9}, 200);
	ASSERT_GT(s.wire.size(), 520u);
	for (size_t a = 0; a <= s.wire.size(); a++)
		for (size_t b = a; b <= s.wire.size(); b++)
			expect_ulpdus(decode(cfg(), s.wire, {a, b}, 28),
				      s.ulpdus);
}

// One octet at a time through the whole stream, incl. a 64768-octet ULPDU
// (MPA-090: the streaming decoder needs no reassembly buffer).
TEST_P(MpaRxChunk, OneOctetFeeding)
{
	Stream s = make_stream(cfg(), kSizes, 300);
	std::vector<size_t> cuts;
	for (size_t i = 1; i < s.wire.size(); i++)
		cuts.push_back(i);
	expect_ulpdus(decode(cfg(), s.wire, cuts, 18), s.ulpdus);
}

// Random chunkings (fixed seed) of a long stream of random-sized FPDUs.
TEST_P(MpaRxChunk, RandomChunkings)
{
	std::mt19937 rng(1234);
	std::vector<size_t> sizes;
	for (int i = 0; i < 120; i++)
		sizes.push_back(1 + rng() % (i % 7 ? 1600 : 20000));
	Stream s = make_stream(cfg(), sizes, 400);
	for (int round = 0; round < 100; round++) {
		std::vector<size_t> cuts;
		size_t pos = 0;
		uint32_t maxc = round % 3 == 0	 ? 8
				: round % 3 == 1 ? 700
						 : 70000;
		for (;;) {
			pos += 1 + rng() % maxc;
			if (pos >= s.wire.size())
				break;
			cuts.push_back(pos);
		}
		uint32_t hw = rng() % (KIWI_MPA_RX_HDR_MAX + 1);
		expect_ulpdus(decode(cfg(), s.wire, cuts, hw), s.ulpdus);
	}
}

// Header sizes from 0 to the maximum, larger and smaller than the ULPDU.
TEST_P(MpaRxChunk, HeaderSizes)
{
	Stream s = make_stream(
		cfg(), {1, 17, 18, 28, 63, 64, 65, 70, 71, 72, 73, 700}, 500);
	for (uint32_t hw :
	     {0u, 1u, 14u, 18u, 28u, 64u, 70u, uint32_t(KIWI_MPA_RX_HDR_MAX)})
		for (size_t cut :
		     {size_t(0), size_t(3), size_t(25), size_t(600)})
			expect_ulpdus(decode(cfg(), s.wire, {cut}, hw),
				      s.ulpdus);
}

// MPA-020: the stream offset wraps 2^32 inside the stream.
TEST_P(MpaRxChunk, StreamOffsetWrap)
{
	Stream s = make_stream(cfg(), {700, 33, 1200, 5}, 600, 0xfffffe00u);
	for (size_t cut = 0; cut <= s.wire.size(); cut += 3)
		expect_ulpdus(decode(cfg(), s.wire, {cut}, 18, 0xfffffe00u),
			      s.ulpdus);
}

INSTANTIATE_TEST_SUITE_P(
	MarkersCrc, MpaRxChunk,
	::testing::Combine(::testing::Bool(), ::testing::Bool()),
	[](const auto &info) {
		return std::string(std::get<0>(info.param) ? "Markers"
							   : "NoMarkers") +
		       (std::get<1>(info.param) ? "Crc" : "NoCrc");
	});

// Re-seal a stream's FPDU CRC after the test modified covered octets.
void reseal(Bytes &w, size_t from, size_t crc_at)
{
	put_unaligned_le32(~bitwise_crc32c(&w[from], crc_at - from),
			   &w[crc_at]);
}

// MPA-034/044/082, DDP-007, SEC-12 (error 2): any corrupted octet of Figure 5
// fails the FPDU; nothing completes, and a following valid FPDU is not passed
// either.
TEST(MpaRxErr, CrcErrorEveryOctet)
{
	LibTx t(mpa_cfg(true, true), 52);
	Bytes next = t.fpdu({fig_send(2, 24)});
	for (size_t i = 0; i < 52; i++) {
		Bytes w(mpa_fig5_wire, mpa_fig5_wire + 52);
		w[i] ^= 0x10;
		w.insert(w.end(), next.begin(), next.end());
		RxResult r = decode(mpa_cfg(true, true), w, {}, 18);
		EXPECT_TRUE(r.fpdus.empty()) << i;
		// A corrupted length field may leave the decoder waiting.
		if (i == 4 || i == 5)
			EXPECT_TRUE(r.err == KIWI_MPA_ERR_CRC || r.err == 0)
				<< i;
		else
			EXPECT_EQ(KIWI_MPA_ERR_CRC, r.err) << i;
	}
}

// After an error the decoder stays stopped: no octet consumed, same code.
TEST(MpaRxErr, StaysStopped)
{
	Bytes w(mpa_fig5_wire, mpa_fig5_wire + 52);
	w[30] ^= 1;
	kiwi_mpa_cfg cfg = mpa_cfg(true, true);
	kiwi_mpa_rx rx;
	ASSERT_EQ(0, kiwi_mpa_rx_init(&rx, &cfg, 0, 18));
	kiwi_mpa_ev ev;
	size_t off = 0;
	do {
		off += kiwi_mpa_rx_feed(&rx, w.data() + off, w.size() - off,
					&ev);
	} while (ev.type != KIWI_MPA_EV_ERROR && ev.type != KIWI_MPA_EV_NONE);
	ASSERT_EQ(KIWI_MPA_EV_ERROR, ev.type);
	EXPECT_EQ(KIWI_MPA_ERR_CRC, ev.err);
	EXPECT_EQ(0u, kiwi_mpa_rx_feed(&rx, mpa_fig5_wire, 52, &ev));
	EXPECT_EQ(KIWI_MPA_EV_ERROR, ev.type);
	EXPECT_EQ(KIWI_MPA_ERR_CRC, ev.err);
	EXPECT_EQ(KIWI_MPA_ERR_CRC, kiwi_mpa_rx_close(&rx));
	EXPECT_FALSE(kiwi_mpa_rx_idle(&rx));
}

// MPA-079 error 1: the connection closed.
TEST(MpaRxErr, ClosedIsError1)
{
	kiwi_mpa_cfg cfg = mpa_cfg(false, true);
	kiwi_mpa_rx rx;
	ASSERT_EQ(0, kiwi_mpa_rx_init(&rx, &cfg, 0, 18));
	EXPECT_TRUE(kiwi_mpa_rx_idle(&rx));
	kiwi_mpa_ev ev;
	const uint8_t half[3] = {0, 42, 0x41};
	EXPECT_EQ(3u, kiwi_mpa_rx_feed(&rx, half, 3, &ev));
	EXPECT_EQ(KIWI_MPA_EV_NONE, ev.type);
	EXPECT_FALSE(kiwi_mpa_rx_idle(&rx));
	EXPECT_EQ(KIWI_MPA_ERR_LLP_CLOSED, kiwi_mpa_rx_close(&rx));
	EXPECT_EQ(0u, kiwi_mpa_rx_feed(&rx, half, 3, &ev));
	EXPECT_EQ(KIWI_MPA_EV_ERROR, ev.type);
	EXPECT_EQ(KIWI_MPA_ERR_LLP_CLOSED, ev.err);
}

// Idle only between FPDUs: not after a leading marker or part of an FPDU.
TEST(MpaRx, IdleBetweenFpdus)
{
	kiwi_mpa_cfg cfg = mpa_cfg(true, true);
	kiwi_mpa_rx rx;
	ASSERT_EQ(0, kiwi_mpa_rx_init(&rx, &cfg, 0, 18));
	EXPECT_TRUE(kiwi_mpa_rx_idle(&rx));
	kiwi_mpa_ev ev;
	for (size_t i = 0; i < 52; i++) {
		size_t off = 0;
		do {
			off += kiwi_mpa_rx_feed(&rx, mpa_fig5_wire + i + off,
						1 - off, &ev);
		} while (ev.type != KIWI_MPA_EV_NONE);
		EXPECT_EQ(i == 51, kiwi_mpa_rx_idle(&rx)) << i;
	}
}

// MPA-080 (error 3): a wrong FPDUPTR under a valid CRC.
TEST(MpaRxErr, MarkerMismatchIsError3)
{
	LibTx t(mpa_cfg(true, true));
	Bytes w = t.fpdu({fig_send(1, 464)});
	w.insert(w.end(), mpa_fig6_wire, mpa_fig6_wire + 52);
	size_t m = 0x200, start = 0x1ec, crc_at = 0x21c;
	w[m + 3] = 0x18; // should be 0x14
	reseal(w, start, crc_at);
	RxResult r = decode(mpa_cfg(true, true), w, {}, 18);
	EXPECT_EQ(KIWI_MPA_ERR_MARKER, r.err);
	EXPECT_EQ(1u, r.fpdus.size());
	// The same with CRC checking off: still error 3.
	r = decode(mpa_cfg(true, false), w, {}, 18);
	EXPECT_EQ(KIWI_MPA_ERR_MARKER, r.err);
	// A leading marker that is not 0 when it falls between FPDUs.
	Bytes f5(mpa_fig5_wire, mpa_fig5_wire + 52);
	f5[3] = 4;
	reseal(f5, 0, 48);
	EXPECT_EQ(KIWI_MPA_ERR_MARKER,
		  decode(mpa_cfg(true, true), f5, {}, 18).err);
}

// MPA-015/016: RESERVED and the low 2 FPDUPTR bits are ignored on receive.
TEST(MpaRx, MarkerReservedAndLowBitsIgnored)
{
	Bytes f5(mpa_fig5_wire, mpa_fig5_wire + 52);
	f5[0] = 0xff;
	f5[1] = 0xff;
	f5[3] = 0x03;
	reseal(f5, 0, 48);
	RxResult r = decode(mpa_cfg(true, true), f5, {}, 18);
	expect_ulpdus(r, {fig_send(1, 24)});
}

// MPA-015/016: the same for a marker inside an FPDU (Figure 6's marker at
// 0x200, FPDUPTR 0x14): RESERVED set and FPDUPTR 0x17 are still a match.
TEST(MpaRx, MarkerLowBitsIgnoredInsideFpdu)
{
	LibTx t(mpa_cfg(true, true));
	Bytes w = t.fpdu({fig_send(1, 464)});
	w.insert(w.end(), mpa_fig6_wire, mpa_fig6_wire + 52);
	ASSERT_EQ(0x14, w[0x200 + 3]);
	w[0x200] = 0xff;
	w[0x200 + 3] |= 3;
	reseal(w, 0x1ec, 0x21c);
	expect_ulpdus(decode(mpa_cfg(true, true), w, {}, 18),
		      {fig_send(1, 464), fig_send(2, 24)});
}

// MPA-012: non-zero pad under a matching CRC is accepted and not passed up.
TEST(MpaRx, NonZeroPadAccepted)
{
	LibTx t(mpa_cfg(false, true));
	Bytes u = {1, 2, 3};
	Bytes w = t.fpdu({u});
	ASSERT_EQ(2u + 3u + 3u + 4u, w.size());
	w[5] = w[6] = w[7] = 0xaa;
	reseal(w, 0, 8);
	expect_ulpdus(decode(mpa_cfg(false, true), w, {}, 18), {u});
}

// MPA-013/030: CRC off: the field is present but never checked.
TEST(MpaRx, CrcOffNotChecked)
{
	Bytes w(mpa_fig5_wire, mpa_fig5_wire + 52);
	w[48] ^= 0xff;
	expect_ulpdus(decode(mpa_cfg(true, false), w, {}, 18),
		      {fig_send(1, 24)});
	EXPECT_EQ(KIWI_MPA_ERR_CRC, decode(mpa_cfg(true, true), w, {}, 18).err);
}

// MPA-053: a receiver not expecting markers reads a marker as data: the
// stream does not decode as the sender meant (markers must be negotiated).
TEST(MpaRx, MarkerSettingMustMatch)
{
	Bytes w(mpa_fig5_wire, mpa_fig5_wire + 52);
	RxResult r = decode(mpa_cfg(false, true), w, {}, 18);
	EXPECT_TRUE(r.fpdus.empty());
}

// A zero-length ULPDU and the largest one a peer can describe.
TEST(MpaRx, ExtremeLengths)
{
	// ULPDU_Length 0: length field + 2 pad + CRC.
	Bytes w = {0, 0, 0, 0};
	w.resize(8);
	reseal(w, 0, 4);
	RxResult r = decode(mpa_cfg(false, true), w, {}, 18);
	ASSERT_EQ(0, r.err);
	ASSERT_EQ(1u, r.fpdus.size());
	EXPECT_TRUE(r.fpdus[0].ulpdu.empty());
	// ULPDU_Length 65535 with markers (FPDUPTR then exceeds 16 bits).
	RefTx ref;
	Bytes big = pattern(65535, 5);
	Bytes bw;
	ref.fpdu(big, bw);
	expect_ulpdus(decode(mpa_cfg(true, true), bw, {1000, 30001}, 28),
		      {big});
}

TEST(MpaRx, InitChecks)
{
	kiwi_mpa_rx rx;
	kiwi_mpa_cfg cfg = mpa_cfg(true, true);
	EXPECT_EQ(-EINVAL,
		  kiwi_mpa_rx_init(&rx, &cfg, 0, KIWI_MPA_RX_HDR_MAX + 1));
	EXPECT_EQ(-EINVAL, kiwi_mpa_rx_init(&rx, &cfg, 2, 18));
	ASSERT_EQ(0, kiwi_mpa_rx_init(&rx, &cfg, 0, 18));
	EXPECT_EQ(-EINVAL,
		  kiwi_mpa_rx_set_hdr_want(&rx, KIWI_MPA_RX_HDR_MAX + 1));
	EXPECT_EQ(0, kiwi_mpa_rx_set_hdr_want(&rx, KIWI_MPA_RX_HDR_MAX));
	cfg.profile = KIWI_FRAME_ULPF00;
	EXPECT_EQ(-EOPNOTSUPP, kiwi_mpa_rx_init(&rx, &cfg, 0, 18));
}

// ULPF-00 profile: round trip over every split; a key mismatch is error 3
// (SEC-21: a frame with the wrong key is not accepted).
TEST(UlpfRx, RoundTripAndKeyMismatch)
{
	kiwi_mpa_cfg cfg{};
	cfg.profile = KIWI_FRAME_ULPF00;
	const uint8_t key[6] = {0xde, 0xad, 0xbe, 0xef, 0x01, 0x02};
	memcpy(cfg.ulpf_key, key, 6);
	Stream s = make_stream(cfg, {1, 18, 19, 600, 3}, 700);
	for (size_t cut = 0; cut <= s.wire.size(); cut++)
		expect_ulpdus(decode(cfg, s.wire, {cut}, 18), s.ulpdus);
	// A zero-length PDU ends without more input.
	Bytes z(8);
	kiwi_ulpf_hdr_build(z.data(), 0, key);
	RxResult r = decode(cfg, z, {}, 18);
	ASSERT_EQ(1u, r.fpdus.size());
	Bytes bad = s.wire;
	bad[8 + 1 + 5] ^= 1; // key of the second frame
	r = decode(cfg, bad, {}, 18);
	EXPECT_EQ(KIWI_MPA_ERR_MARKER, r.err);
	EXPECT_EQ(1u, r.fpdus.size());
}

} // namespace
