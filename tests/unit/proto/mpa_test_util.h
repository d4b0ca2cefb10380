// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Helpers for the MPA unit tests: an independent reference FPDU encoder
// (a straight transcription of the per-4-octet algorithm in seeds-digest.md
// section 2.3, sharing no code with mpa_tx.c), a bitwise CRC32c, and a driver
// that runs the streaming decoder over a chunking and checks its invariants.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

extern "C" {
#include "proto/mpa.h"
}

namespace mpatest {

using Bytes = std::vector<uint8_t>;

inline uint32_t bitwise_crc32c(const uint8_t *p, size_t n, uint32_t crc = ~0U)
{
	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int k = 0; k < 8; k++)
			crc = (crc & 1) ? (crc >> 1) ^ 0x82f63b78U : crc >> 1;
	}
	return crc;
}

// Reference transmitter: the digest's algorithm, one 4-octet chunk at a time.
struct RefTx {
	uint32_t off = 0;
	bool markers = true;
	bool crc_on = true;

	void fpdu(const Bytes &ulpdu, Bytes &wire)
	{
		Bytes body = {uint8_t(ulpdu.size() >> 8),
			      uint8_t(ulpdu.size())};
		body.insert(body.end(), ulpdu.begin(), ulpdu.end());
		while (body.size() % 4)
			body.push_back(0);
		uint32_t crc = ~0U;
		bool have_hdr = false;
		uint32_t hdr_pos = 0;
		for (size_t i = 0; i <= body.size(); i += 4) {
			if (markers && off % 512 == 0) {
				uint32_t ptr = have_hdr ? off - hdr_pos : 0;
				uint8_t m[4] = {0, 0, uint8_t(ptr >> 8),
						uint8_t(ptr)};
				crc = bitwise_crc32c(m, 4, crc);
				wire.insert(wire.end(), m, m + 4);
				off += 4;
			}
			if (!have_hdr) {
				have_hdr = true;
				hdr_pos = off;
			}
			if (i == body.size()) {
				uint32_t v = ~crc;
				for (int k = 0; k < 4; k++)
					wire.push_back(uint8_t(v >> (8 * k)));
			} else {
				crc = bitwise_crc32c(&body[i], 4, crc);
				wire.insert(wire.end(), &body[i], &body[i] + 4);
			}
			off += 4;
		}
	}
};

inline Bytes pattern(size_t n, uint32_t seed)
{
	Bytes b(n);
	std::mt19937 rng(seed);
	for (auto &x : b)
		x = uint8_t(rng());
	return b;
}

// Flatten a transmit plan into the octets it describes.
inline Bytes plan_bytes(const kiwi_mpa_plan &plan)
{
	Bytes out;
	for (uint32_t i = 0; i < plan.cnt; i++)
		out.insert(out.end(), plan.piece[i].base,
			   plan.piece[i].base + plan.piece[i].len);
	return out;
}

// Frame ULPDUs with the library (one fragment each, or split in pieces).
struct LibTx {
	kiwi_mpa_tx tx{};
	std::vector<kiwi_mpa_piece> pieces;
	kiwi_mpa_plan plan{};

	explicit LibTx(const kiwi_mpa_cfg &cfg, uint32_t start = 0)
	{
		EXPECT_EQ(0, kiwi_mpa_tx_init(&tx, &cfg, start));
	}

	Bytes fpdu(const std::vector<Bytes> &frags)
	{
		std::vector<kiwi_mpa_frag> f;
		for (const auto &b : frags)
			f.push_back({b.data(), uint32_t(b.size())});
		pieces.assign(KIWI_MPA_PLAN_PIECES(f.size()), {});
		plan.piece = pieces.data();
		plan.cap = uint32_t(pieces.size());
		int ret = kiwi_mpa_tx_plan(&tx, &plan, f.data(),
					   uint32_t(f.size()));
		EXPECT_EQ(0, ret);
		return ret ? Bytes() : plan_bytes(plan);
	}
};

// What the decoder produced for one FPDU.
struct RxFpdu {
	Bytes ulpdu;
	uint32_t hdr_len = 0;
};

struct RxResult {
	std::vector<RxFpdu> fpdus; // completed (END) FPDUs
	int err = 0;		   // error code, 0 if none
	size_t consumed = 0;
	bool partial = false; // an FPDU was started but not ended
};

// Feed `stream` cut at `cuts` (sorted offsets) and check the invariants:
// one HEADER per FPDU first, payload offsets contiguous, never more payload
// than fed, payload pointers inside the chunk, END only after all octets.
inline RxResult decode(const kiwi_mpa_cfg &cfg, const Bytes &stream,
		       const std::vector<size_t> &cuts, uint32_t hdr_want,
		       uint32_t start = 0)
{
	kiwi_mpa_rx rx;
	RxResult res;
	EXPECT_EQ(0, kiwi_mpa_rx_init(&rx, &cfg, start, hdr_want));
	RxFpdu cur;
	bool in = false;
	uint32_t ulen = 0;
	size_t prev = 0;
	std::vector<size_t> ends = cuts;
	ends.push_back(stream.size());
	for (size_t end : ends) {
		const uint8_t *p = stream.data() + prev;
		size_t len = end - prev;
		prev = end;
		for (;;) {
			kiwi_mpa_ev ev;
			size_t n = kiwi_mpa_rx_feed(&rx, p, len, &ev);
			EXPECT_LE(n, len);
			if (ev.type == KIWI_MPA_EV_PAYLOAD) {
				EXPECT_TRUE(in);
				EXPECT_GE(ev.data, p);
				EXPECT_LE(ev.data + ev.len, p + n);
				EXPECT_EQ(ev.offset, cur.ulpdu.size());
				EXPECT_LE(ev.offset + ev.len, ulen);
				cur.ulpdu.insert(cur.ulpdu.end(), ev.data,
						 ev.data + ev.len);
			} else if (ev.type == KIWI_MPA_EV_HEADER) {
				EXPECT_FALSE(in);
				in = true;
				ulen = ev.ulpdu_len;
				cur = RxFpdu();
				cur.hdr_len = ev.len;
				EXPECT_EQ(ev.len, std::min(hdr_want, ulen));
				cur.ulpdu.assign(ev.data, ev.data + ev.len);
			} else if (ev.type == KIWI_MPA_EV_END) {
				EXPECT_TRUE(in);
				EXPECT_EQ(cur.ulpdu.size(), ulen);
				res.fpdus.push_back(cur);
				in = false;
			} else if (ev.type == KIWI_MPA_EV_ERROR) {
				res.err = ev.err;
				res.consumed += n;
				res.partial = in;
				return res;
			}
			p += n;
			len -= n;
			res.consumed += n;
			if (ev.type == KIWI_MPA_EV_NONE) {
				EXPECT_EQ(len, 0u);
				break;
			}
		}
	}
	res.partial = in;
	return res;
}

inline kiwi_mpa_cfg mpa_cfg(bool markers, bool crc)
{
	kiwi_mpa_cfg c{};
	c.profile = KIWI_FRAME_MPA;
	c.markers = markers;
	c.crc = crc;
	return c;
}

} // namespace mpatest
