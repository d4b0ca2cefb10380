// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// MPA FPDU transmit planning: golden figures, the reference model, marker and
// CRC rules, fragment handling and the ULPF-00 profile.
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

// MPA-021/022/032/033: Figure 5 byte for byte, leading marker FPDUPTR 0.
TEST(MpaTx, GoldenFigure5)
{
	LibTx t(mpa_cfg(true, true));
	Bytes w = t.fpdu({fig_send(1, 24)});
	ASSERT_EQ(Bytes(mpa_fig5_wire, mpa_fig5_wire + 52), w);
	EXPECT_EQ(MPA_FIG5_CRC, t.plan.crc);
	EXPECT_EQ(52u, t.plan.wire_len);
}

// MPA-019/033: Figure 6, the marker at 0x200 points back 0x14, covered by CRC.
TEST(MpaTx, GoldenFigure6)
{
	LibTx t(mpa_cfg(true, true));
	Bytes first = t.fpdu({fig_send(1, 464)});
	ASSERT_EQ(size_t(MPA_FIG6_STREAM_OFF), first.size());
	Bytes w = t.fpdu({fig_send(2, 24)});
	ASSERT_EQ(Bytes(mpa_fig6_wire, mpa_fig6_wire + 52), w);
	EXPECT_EQ(MPA_FIG6_CRC, t.plan.crc);
}

// The same figures with the header and payload in separate fragments, and the
// payload in odd-sized pieces: the plan never copies and stays identical.
TEST(MpaTx, GoldenFigure6Fragmented)
{
	LibTx t(mpa_cfg(true, true));
	Bytes h1 = fig_send(1, 0), h2 = fig_send(2, 0);
	Bytes p1(464, 0), a(7, 0), b(0), c(17, 0);
	t.fpdu({h1, p1});
	Bytes w = t.fpdu({h2, a, b, c});
	ASSERT_EQ(Bytes(mpa_fig6_wire, mpa_fig6_wire + 52), w);
	// The pieces that carry caller data point into the caller's buffers.
	for (uint32_t i = 0; i < t.plan.cnt; i++) {
		const kiwi_mpa_piece &pc = t.plan.piece[i];
		if (pc.src == KIWI_MPA_SRC_GEN) {
			EXPECT_GE(pc.base, t.plan.gen);
			EXPECT_LE(pc.base + pc.len,
				  t.plan.gen + t.plan.gen_len);
		}
	}
}

// Random ULPDU sizes and fragmentations against the reference model, with
// and without markers (MPA-018/019/023/024/031).
TEST(MpaTx, MatchesReferenceModel)
{
	std::mt19937 rng(42);
	for (bool markers : {true, false}) {
		LibTx t(mpa_cfg(markers, true));
		RefTx ref;
		ref.markers = markers;
		Bytes lib_stream, ref_stream;
		for (int n = 0; n < 300; n++) {
			size_t len = 1 + rng() % (n % 10 ? 700 : 9000);
			Bytes u = pattern(len, uint32_t(n));
			std::vector<Bytes> frags;
			size_t pos = 0;
			while (pos < len) {
				size_t k = std::min(len - pos,
						    size_t(1 + rng() % 300));
				frags.emplace_back(u.begin() + pos,
						   u.begin() + pos + k);
				pos += k;
			}
			uint32_t predicted =
				kiwi_mpa_fpdu_wire_len(&t.tx, uint32_t(len));
			Bytes w = t.fpdu(frags);
			EXPECT_EQ(predicted, w.size());
			EXPECT_EQ(w.size() % 4, 0u);
			lib_stream.insert(lib_stream.end(), w.begin(), w.end());
			ref.fpdu(u, ref_stream);
		}
		ASSERT_EQ(ref_stream, lib_stream) << "markers " << markers;
	}
}

// MPA-016/018: with markers, every 512th stream octet starts a marker with
// zero RESERVED and a pointer whose low 2 bits are 0.
TEST(MpaTx, MarkerEvery512)
{
	LibTx t(mpa_cfg(true, true));
	Bytes s;
	for (int i = 0; i < 50; i++) {
		Bytes w = t.fpdu({pattern(37 + 97 * i, uint32_t(i))});
		s.insert(s.end(), w.begin(), w.end());
	}
	for (size_t m = 0; m + 4 <= s.size(); m += 512) {
		EXPECT_EQ(0, s[m]);
		EXPECT_EQ(0, s[m + 1]);
		EXPECT_EQ(0, s[m + 3] & 3);
	}
}

// MPA-019/023/024, checked from positions alone (no reference model): in a
// burst of tiny FPDUs (many per 512-octet interval) mixed with large ones
// (several markers each), every marker inside an FPDU points back to that
// FPDU's ULPDU_Length field, so all markers of one FPDU point to the same
// place, and a marker that falls before a length field is 0.
TEST(MpaTx, MarkerPointersPerFpdu)
{
	LibTx t(mpa_cfg(true, true));
	std::mt19937 rng(24);
	uint32_t pos = 0, multi = 0, leading = 0;

	for (int i = 0; i < 400; i++) {
		size_t len = i % 40 == 7 ? 3000 + rng() % 6000 : 1 + rng() % 40;
		uint32_t off = t.tx.off;
		Bytes w = t.fpdu({pattern(len, uint32_t(i))});
		uint32_t hdr = off % 512 ? off : off + 4;
		uint32_t inside = 0;

		ASSERT_EQ(pos, off);
		for (uint32_t m = (off + 511) / 512 * 512; m < off + w.size();
		     m += 512) {
			const uint8_t *mk = &w[m - off];
			EXPECT_EQ(0, get_unaligned_be16(mk)) << i;
			if (m == off) {
				EXPECT_EQ(0, get_unaligned_be16(mk + 2)) << i;
				leading++;
				continue;
			}
			EXPECT_EQ(m - hdr, get_unaligned_be16(mk + 2)) << i;
			inside++;
		}
		multi += inside > 1;
		pos += uint32_t(w.size());
	}
	EXPECT_GT(multi, 5u);
	EXPECT_GT(leading, 0u);
}

// MPA-020: marker positions are relative to SeqStart and survive the 32-bit
// wrap of the stream offset.
TEST(MpaTx, StreamOffsetWrap)
{
	kiwi_mpa_cfg cfg = mpa_cfg(true, true);
	LibTx t(cfg, 0xffffff00u);
	RefTx ref;
	ref.off = 0xffffff00u;
	Bytes lib, refw;
	for (int i = 0; i < 10; i++) {
		Bytes u = pattern(100 + 33 * i, uint32_t(i));
		Bytes w = t.fpdu({u});
		lib.insert(lib.end(), w.begin(), w.end());
		ref.fpdu(u, refw);
	}
	EXPECT_EQ(refw, lib);
}

// MPA-007 and argument errors: tx state unchanged on failure.
TEST(MpaTx, Limits)
{
	kiwi_mpa_cfg cfg = mpa_cfg(true, true);
	kiwi_mpa_tx tx;
	ASSERT_EQ(0, kiwi_mpa_tx_init(&tx, &cfg, 0));
	std::vector<kiwi_mpa_piece> pieces(KIWI_MPA_PLAN_PIECES(2));
	kiwi_mpa_plan plan{};
	plan.piece = pieces.data();
	plan.cap = uint32_t(pieces.size());
	Bytes big(KIWI_MPA_MULPDU_MAX + 1, 1);
	kiwi_mpa_frag f = {big.data(), uint32_t(big.size())};
	EXPECT_EQ(-EMSGSIZE, kiwi_mpa_tx_plan(&tx, &plan, &f, 1));
	f.len = 0;
	EXPECT_EQ(-EINVAL, kiwi_mpa_tx_plan(&tx, &plan, &f, 1));
	EXPECT_EQ(-EINVAL, kiwi_mpa_tx_plan(&tx, &plan, nullptr, 0));
	EXPECT_EQ(0u, tx.off);
	// The largest ULPDU fits the worst-case plan size.
	f.len = KIWI_MPA_MULPDU_MAX;
	EXPECT_EQ(0, kiwi_mpa_tx_plan(&tx, &plan, &f, 1));
	EXPECT_EQ(kiwi_mpa_fpdu_wire_len(&tx, 0) >= 8, true);
	// Too small a plan: -ENOSPC, offset unchanged.
	uint32_t off = tx.off;
	plan.cap = 3;
	EXPECT_EQ(-ENOSPC, kiwi_mpa_tx_plan(&tx, &plan, &f, 1));
	EXPECT_EQ(off, tx.off);
}

// The worst case fits the plan's fixed buffers at every marker phase, with
// one or many fragments, and matches the reference model.
TEST(MpaTx, LargestFpduEveryPhase)
{
	Bytes u = pattern(KIWI_MPA_MULPDU_MAX, 9);
	for (uint32_t start = 0; start < 512; start += 4) {
		LibTx t(mpa_cfg(true, true), start);
		std::vector<Bytes> frags;
		if (start % 64 == 0) {
			for (size_t pos = 0; pos < u.size(); pos += 1000)
				frags.emplace_back(
					u.begin() + pos,
					u.begin() +
						std::min(u.size(), pos + 1000));
		} else {
			frags.push_back(u);
		}
		Bytes w = t.fpdu(frags);
		ASSERT_LE(t.plan.gen_len, uint32_t(KIWI_MPA_GEN_MAX));
		ASSERT_LE(t.plan.cnt,
			  uint32_t(KIWI_MPA_PLAN_PIECES(frags.size())));
		RefTx ref;
		ref.off = start;
		Bytes rw;
		ref.fpdu(u, rw);
		ASSERT_EQ(rw, w) << start;
	}
}

// MPA-012: pad octets are zero on transmit; MPA-031: the CRC field is always
// present. With CRC on it holds the CRC32c; with CRC off (MPA-013: the peer
// does not check it) it is zero, so no pass over the octets computes it.
TEST(MpaTx, PadZeroAndCrcAlwaysPresent)
{
	for (bool crc_on : {false, true}) {
		for (uint32_t len = 1; len <= 8; len++) {
			LibTx t(mpa_cfg(false, crc_on));
			Bytes w = t.fpdu({Bytes(len, 0xee)});
			uint32_t pad = kiwi_mpa_pad(len);
			ASSERT_EQ(2 + len + pad + 4, w.size());
			for (uint32_t i = 0; i < pad; i++)
				EXPECT_EQ(0, w[2 + len + i]);
			EXPECT_EQ((2 + len + pad) % 4, 0u);
			uint32_t crc = crc_on ? ~bitwise_crc32c(w.data(),
								2 + len + pad)
					      : 0;
			EXPECT_EQ(crc,
				  get_unaligned_le32(w.data() + w.size() - 4))
				<< crc_on;
			EXPECT_EQ(crc, t.plan.crc) << crc_on;
		}
	}
}

// ULPF-003/012/022 and the draft-00 header: 8 octets Length+Key, no pad, no
// CRC, no markers, one PDU per frame; marker mode and CRC are refused.
TEST(UlpfTx, ProfileFraming)
{
	kiwi_mpa_cfg cfg{};
	cfg.profile = KIWI_FRAME_ULPF00;
	const uint8_t key[6] = {1, 2, 3, 4, 5, 6};
	memcpy(cfg.ulpf_key, key, 6);
	LibTx t(cfg);
	Bytes u = pattern(13, 1);
	Bytes w = t.fpdu({u});
	ASSERT_EQ(8u + 13u, w.size());
	EXPECT_EQ(0, w[0]);
	EXPECT_EQ(13, w[1]);
	EXPECT_EQ(0, memcmp(&w[2], key, 6));
	EXPECT_EQ(0, memcmp(&w[8], u.data(), 13));
	EXPECT_EQ(21u, kiwi_mpa_fpdu_wire_len(&t.tx, 13));

	kiwi_mpa_tx tx;
	Bytes big(KIWI_ULPF_PDU_MAX + 1, 0);
	kiwi_mpa_frag f = {big.data(), uint32_t(big.size())};
	std::vector<kiwi_mpa_piece> pieces(8);
	kiwi_mpa_plan plan{};
	plan.piece = pieces.data();
	plan.cap = 8;
	ASSERT_EQ(0, kiwi_mpa_tx_init(&tx, &cfg, 0));
	EXPECT_EQ(-EMSGSIZE, kiwi_mpa_tx_plan(&tx, &plan, &f, 1));
	f.len = KIWI_ULPF_PDU_MAX;
	EXPECT_EQ(0, kiwi_mpa_tx_plan(&tx, &plan, &f, 1));

	cfg.markers = true;
	EXPECT_EQ(-EOPNOTSUPP, kiwi_mpa_tx_init(&tx, &cfg, 0));
	cfg.markers = false;
	cfg.crc = true;
	EXPECT_EQ(-EINVAL, kiwi_mpa_tx_init(&tx, &cfg, 0));
	cfg.profile = 7;
	cfg.crc = false;
	EXPECT_EQ(-EINVAL, kiwi_mpa_tx_init(&tx, &cfg, 0));
}

// The draft-00 mode checks (ULPF-022) and size queries (ULPF-003/006).
TEST(Ulpf, ModeAndSizes)
{
	EXPECT_EQ(0, kiwi_ulpf_mode_check(KIWI_ULPF_MODE_ALIGN, false));
	EXPECT_EQ(-EOPNOTSUPP,
		  kiwi_ulpf_mode_check(KIWI_ULPF_MODE_ALIGN, true));
	EXPECT_EQ(-EOPNOTSUPP,
		  kiwi_ulpf_mode_check(KIWI_ULPF_MODE_MARKERS, false));
	EXPECT_EQ(-EINVAL, kiwi_ulpf_mode_check(9, false));
	EXPECT_EQ(1452u, kiwi_ulpf_max_pdu(1460));
	EXPECT_EQ(uint32_t(KIWI_ULPF_PDU_MAX), kiwi_ulpf_max_pdu(100000));
	EXPECT_EQ(0u, kiwi_ulpf_max_pdu(8));
	uint8_t h[8];
	const uint8_t key[6] = {9, 8, 7, 6, 5, 4};
	kiwi_ulpf_hdr_build(h, 0x1234, key);
	u16 len = 0;
	EXPECT_TRUE(kiwi_ulpf_hdr_parse(h, key, &len));
	EXPECT_EQ(0x1234, len);
	h[7] ^= 1;
	EXPECT_FALSE(kiwi_ulpf_hdr_parse(h, key, &len));
}

// MPA-006/035/036/038/039, SEC-15: MULPDU formula and clamps (kiwi's
// MULPDU is static per EMSS, never below 128).
TEST(MpaSize, MulpduTable)
{
	for (const auto &row : mpa_mulpdu_table) {
		EXPECT_EQ(row[1], kiwi_mpa_mulpdu(row[0], true)) << row[0];
		EXPECT_EQ(row[2], kiwi_mpa_mulpdu(row[0], false)) << row[0];
	}
	for (uint32_t e : {0u, 1u, 100u, 0xffffffffu}) {
		for (bool m : {true, false}) {
			uint32_t v = kiwi_mpa_mulpdu(e, m);
			EXPECT_GE(v, uint32_t(KIWI_MPA_MULPDU_MIN));
			EXPECT_LE(v, uint32_t(KIWI_MPA_MULPDU_MAX));
		}
	}
}

// An FPDU of MULPDU octets fits in EMSS (the point of the formula).
TEST(MpaSize, MulpduFitsEmss)
{
	for (uint32_t emss = 200; emss < 20000; emss += 7) {
		for (bool m : {true, false}) {
			kiwi_mpa_cfg cfg = mpa_cfg(m, true);
			kiwi_mpa_tx tx;
			ASSERT_EQ(0, kiwi_mpa_tx_init(&tx, &cfg,
						      (emss * 4) % 512));
			uint32_t mul = kiwi_mpa_mulpdu(emss, m);
			EXPECT_LE(kiwi_mpa_fpdu_wire_len(&tx, mul), emss)
				<< emss << m;
		}
	}
}

TEST(MpaSize, Pad)
{
	EXPECT_EQ(2u, kiwi_mpa_pad(0));
	EXPECT_EQ(1u, kiwi_mpa_pad(1));
	EXPECT_EQ(0u, kiwi_mpa_pad(2));
	EXPECT_EQ(3u, kiwi_mpa_pad(3));
	EXPECT_EQ(0u, kiwi_mpa_pad(42));
}

} // namespace
