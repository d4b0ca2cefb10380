// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Aligned FPDUs (RFC 5044 section 5 and Appendix A.1, proto/mpa_seg.c): the
// run rules, and a model of kiwi's transmitter (runs of FPDUs framed into a
// buffer, each run sent with MSG_EOR, MULPDU following the EMSS per run) and
// of TCP (a run cut into segments of its EMSS from its first octet) checking
// that every segment starts with an FPDU and that the stream, markers and
// CRCs included, still decodes.
#include <gtest/gtest.h>

#include <set>

#include "mpa_test_util.h"

extern "C" {
#include "proto/ddp.h"
}

using namespace mpatest;

namespace {

TEST(MpaSeg, RunRules)
{
	kiwi_mpa_seg s;

	kiwi_mpa_seg_init(&s, 1448, true);
	// The first FPDU of a run always fits, even one above a segment.
	EXPECT_TRUE(kiwi_mpa_seg_fits(&s, 2000));
	kiwi_mpa_seg_add(&s, 1448);
	EXPECT_EQ(0u, s.fill);
	EXPECT_TRUE(kiwi_mpa_seg_fits(&s, 1448));
	kiwi_mpa_seg_add(&s, 100);
	EXPECT_TRUE(kiwi_mpa_seg_fits(&s, 1348));
	EXPECT_FALSE(kiwi_mpa_seg_fits(&s, 1352));
	kiwi_mpa_seg_add(&s, 1348);
	EXPECT_EQ(0u, s.fill);
	// Above a segment: the FPDU spans segments, the next must start a run.
	kiwi_mpa_seg_add(&s, 1500);
	EXPECT_EQ(52u, s.fill);
	EXPECT_FALSE(kiwi_mpa_seg_fits(&s, 1448));

	// Without packing a framing PDU never shares a segment.
	kiwi_mpa_seg_init(&s, 1448, false);
	kiwi_mpa_seg_add(&s, 100);
	EXPECT_FALSE(kiwi_mpa_seg_fits(&s, 4));
	kiwi_mpa_seg_init(&s, 1448, false);
	kiwi_mpa_seg_add(&s, 1448);
	EXPECT_TRUE(kiwi_mpa_seg_fits(&s, 1448));

	// Size 0: no alignment, everything fits.
	kiwi_mpa_seg_init(&s, 0, true);
	kiwi_mpa_seg_add(&s, 77);
	EXPECT_EQ(0u, s.fill);
	EXPECT_TRUE(kiwi_mpa_seg_fits(&s, 65535));
}

struct Msg {
	uint32_t len;
	bool tagged;
};

// The transmitter and TCP, as kiwi.ko's tx.c and llp_tcp.c drive them.
struct Model {
	bool markers;
	LibTx tx;
	Bytes stream;
	std::vector<Bytes> ulpdus;
	std::set<size_t> fpdu_at;   // stream offsets where FPDUs start
	std::vector<size_t> seg_at; // where TCP starts segments
	size_t full = 0;	    // FPDUs of MULPDU
	size_t full_exact = 0;	    // ... exactly one EMSS on the wire
	size_t full_short = 0;	    // ... one marker (4 octets) less
	size_t runs = 0;

	explicit Model(bool m) : markers(m), tx(mpa_cfg(m, true)) {}

	// Frame @msgs in runs of at most @cap octets, run i at EMSS
	// @emss[i % n].
	void run(const std::vector<Msg> &msgs,
		 const std::vector<uint32_t> &emss, size_t cap)
	{
		size_t next = 0;
		bool active = false;
		kiwi_ddp_seg_iter it{};
		uint32_t hlen = 0;
		std::mt19937 rng(7);

		for (;;) {
			uint32_t e = emss[runs % emss.size()];
			uint32_t mulpdu = kiwi_mpa_mulpdu(e, markers);
			kiwi_mpa_seg seg;
			size_t start = stream.size();

			kiwi_mpa_seg_init(&seg, e, true);
			for (;;) {
				if (!active) {
					if (next == msgs.size())
						break;
					const Msg &m = msgs[next++];
					hlen = m.tagged
						       ? KIWI_DDP_TAGGED_HDR_LEN
						       : KIWI_DDP_UNTAGGED_HDR_LEN;
					ASSERT_EQ(0, kiwi_ddp_seg_init(
							     &it, m.tagged,
							     m.len, 0, mulpdu));
					active = true;
				}
				kiwi_ddp_seg_iter save = it;
				kiwi_ddp_seg s;
				ASSERT_EQ(0, kiwi_ddp_seg_resize(&it, mulpdu));
				ASSERT_TRUE(kiwi_ddp_seg_next(&it, &s));
				uint32_t ulen = hlen + s.len;
				uint32_t wire =
					kiwi_mpa_fpdu_wire_len(&tx.tx, ulen);
				if (stream.size() - start + wire > cap ||
				    !kiwi_mpa_seg_fits(&seg, wire)) {
					it = save;
					break;
				}
				Bytes u = pattern(ulen, uint32_t(rng()));
				Bytes w = tx.fpdu({u});
				ASSERT_EQ(wire, w.size());
				EXPECT_LE(ulen, mulpdu);
				if (ulen == mulpdu) {
					full++;
					full_exact += wire == e;
					full_short += wire + 4 == e;
				}
				fpdu_at.insert(stream.size());
				stream.insert(stream.end(), w.begin(), w.end());
				ulpdus.push_back(u);
				kiwi_mpa_seg_add(&seg, wire);
				if (s.last)
					active = false;
			}
			if (stream.size() == start) {
				ASSERT_FALSE(active);
				return;
			}
			// TCP: MSG_EOR, so the run's segments are its own.
			for (size_t at = start; at < stream.size(); at += e)
				seg_at.push_back(at);
			runs++;
		}
	}

	size_t aligned() const
	{
		size_t n = 0;

		for (size_t at : seg_at)
			n += fpdu_at.count(at);
		return n;
	}

	// The receiver, fed segment by segment, sees every FPDU intact.
	void decodes() const
	{
		std::vector<size_t> cuts(seg_at.begin() + 1, seg_at.end());
		RxResult r = decode(mpa_cfg(markers, true), stream, cuts, 28);

		ASSERT_EQ(0, r.err);
		EXPECT_FALSE(r.partial);
		ASSERT_EQ(ulpdus.size(), r.fpdus.size());
		for (size_t i = 0; i < ulpdus.size(); i++)
			ASSERT_EQ(ulpdus[i], r.fpdus[i].ulpdu) << "FPDU " << i;
	}
};

std::vector<Msg> repeat(uint32_t len, bool tagged, size_t n)
{
	return std::vector<Msg>(n, Msg{len, tagged});
}

std::vector<Msg> mixed(uint32_t seed, size_t n)
{
	std::mt19937 rng(seed);
	std::vector<Msg> v;

	for (size_t i = 0; i < n; i++) {
		uint32_t len = rng() % 4 ? rng() % 9000 : rng() % 70000;
		v.push_back({i % 7 ? len : 0, bool(rng() % 2)});
	}
	return v;
}

// 64 KiB Writes and 5000-octet Sends (neither a multiple of MULPDU), at the
// lab's EMSS: every segment starts with an FPDU and every full FPDU is one
// segment exactly; the stream decodes.
TEST(MpaSeg, FullFpdusFillSegments)
{
	for (const auto &msgs :
	     {repeat(65536, true, 8), repeat(5000, false, 40)}) {
		Model m(false);
		m.run(msgs, {1448}, 256 * 1024);
		EXPECT_EQ(m.seg_at.size(), m.aligned());
		EXPECT_GT(m.full, 0u);
		EXPECT_EQ(m.full, m.full_exact);
		m.decodes();
	}
}

// Small messages share segments (whole FPDUs packed), still aligned.
TEST(MpaSeg, SmallFpdusPack)
{
	Model m(false);

	m.run(repeat(8, false, 500), {1448}, 256 * 1024);
	EXPECT_EQ(m.seg_at.size(), m.aligned());
	EXPECT_EQ(500u, m.ulpdus.size());
	// 32 octets each: 45 to a segment.
	EXPECT_EQ(12u, m.seg_at.size());
	m.decodes();
}

// Markers shift with the stream position: a full FPDU is one EMSS, or 4
// octets short where it holds one marker fewer than MULPDU allows for (the
// next FPDU then starts a run of its own); every segment still starts with
// an FPDU (or the marker that leads it), and markers and CRCs decode.
TEST(MpaSeg, MarkersStayCorrect)
{
	for (uint32_t e : {1448u, 1460u, 536u, 8948u}) {
		Model m(true);
		m.run(mixed(e, 300), {e}, 256 * 1024);
		EXPECT_EQ(m.seg_at.size(), m.aligned()) << "EMSS " << e;
		EXPECT_GT(m.full, 0u);
		EXPECT_EQ(m.full, m.full_exact + m.full_short) << "EMSS " << e;
		m.decodes();
	}
}

// The EMSS changes between runs (path MTU down and up again) while long
// messages are in progress; small buffers cut runs mid-message. FPDUs framed
// for one EMSS go out as they are, the next run follows the new one.
TEST(MpaSeg, EmssChangesBetweenRuns)
{
	for (bool markers : {false, true}) {
		for (size_t cap :
		     {size_t(3000), size_t(20000), size_t(256 * 1024)}) {
			Model m(markers);
			m.run(mixed(uint32_t(cap), 200),
			      {1448, 1200, 536, 1460}, cap);
			EXPECT_EQ(m.seg_at.size(), m.aligned())
				<< "markers " << markers << " cap " << cap;
			if (!markers) {
				EXPECT_EQ(m.full, m.full_exact);
			}
			m.decodes();
		}
	}
}

// An EMSS that is not a multiple of 4 (FPDUs are): a full FPDU is a few
// octets short of a segment, so each starts a run; still all aligned.
TEST(MpaSeg, OddEmss)
{
	Model m(false);

	m.run(mixed(3, 100), {1447, 1449}, 256 * 1024);
	EXPECT_EQ(m.seg_at.size(), m.aligned());
	EXPECT_EQ(0u, m.full_exact);
	m.decodes();
}

// Below an EMSS of 136 octets MULPDU stays 128 (MPA-038): FPDUs span
// segments, which cannot all start with one, and the stream still decodes.
TEST(MpaSeg, TinyEmssStillDecodes)
{
	for (bool markers : {false, true}) {
		Model m(markers);
		m.run(mixed(5, 50), {100}, 256 * 1024);
		EXPECT_LT(m.aligned(), m.seg_at.size());
		m.decodes();
	}
}

} // namespace
