// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// MPA framing throughput next to memcpy of the same size, in one run.
//
//  memcpy        copy the payload once (the floor of any receive path), hot
//                in the caches and cold (cycling through 64 MiB)
//  build+CRC     kiwi_mpa_tx_plan(): gather list + CRC32c, payload not copied
//  decode+CRC    kiwi_mpa_rx_feed() over the wire image: boundaries, markers,
//                CRC32c; payload handed out in place, not copied
//  decode+CRC+place  the same, copying each payload piece to its target
//
// Payloads: 4 KiB and 64 KiB, cut into ULPDUs of at most `ulpdu` octets
// (64768 = the MPA maximum, 1442/1430 = MULPDU for a 1460 EMSS without/with
// markers), each with an 18-octet DDP header; with and without markers.
#include <cstring>
#include <vector>

#include <benchmark/benchmark.h>

extern "C" {
#include "proto/mpa.h"
#include "proto/user/crc32c.h"
}

namespace {

constexpr uint32_t kDdpHdr = 18;

struct Wire {
	std::vector<uint8_t> payload, bytes;
	uint32_t fpdus = 0;
};

kiwi_mpa_cfg cfg_for(bool markers)
{
	kiwi_mpa_cfg c{};
	c.profile = KIWI_FRAME_MPA;
	c.markers = markers;
	c.crc = true;
	return c;
}

// Frame `size` payload octets as FPDUs of at most `ulpdu` octets.
struct Framer {
	kiwi_mpa_tx tx{};
	kiwi_mpa_plan plan{};
	std::vector<kiwi_mpa_piece> pieces =
		std::vector<kiwi_mpa_piece>(KIWI_MPA_PLAN_PIECES(2));
	uint8_t hdr[kDdpHdr] = {0x41, 0x43};

	explicit Framer(bool markers)
	{
		kiwi_mpa_cfg c = cfg_for(markers);
		kiwi_mpa_tx_init(&tx, &c, 0);
		plan.piece = pieces.data();
		plan.cap = uint32_t(pieces.size());
	}

	// Calls fn(plan) for each FPDU.
	template <typename F>
	void frame(const uint8_t *p, size_t size, uint32_t ulpdu, F &&fn)
	{
		size_t pos = 0;
		while (pos < size) {
			uint32_t n = uint32_t(
				std::min<size_t>(size - pos, ulpdu - kDdpHdr));
			kiwi_mpa_frag f[2] = {{hdr, kDdpHdr}, {p + pos, n}};
			if (kiwi_mpa_tx_plan(&tx, &plan, f, 2))
				abort();
			fn(plan);
			pos += n;
		}
	}
};

Wire make_wire(size_t size, uint32_t ulpdu, bool markers)
{
	Wire w;
	w.payload.resize(size);
	for (size_t i = 0; i < size; i++)
		w.payload[i] = uint8_t(i * 31 + 7);
	Framer fr(markers);
	fr.frame(w.payload.data(), size, ulpdu, [&](const kiwi_mpa_plan &pl) {
		for (uint32_t i = 0; i < pl.cnt; i++)
			w.bytes.insert(w.bytes.end(), pl.piece[i].base,
				       pl.piece[i].base + pl.piece[i].len);
		w.fpdus++;
	});
	return w;
}

void set_counters(benchmark::State &st, size_t size)
{
	st.SetBytesProcessed(int64_t(st.iterations()) * int64_t(size));
}

void BM_Memcpy(benchmark::State &st)
{
	size_t size = size_t(st.range(0));
	std::vector<uint8_t> src(size, 1), dst(size);
	for (auto _ : st) {
		memcpy(dst.data(), src.data(), size);
		benchmark::DoNotOptimize(dst.data());
		benchmark::ClobberMemory();
	}
	set_counters(st, size);
}

// The same copy cycling through 64 MiB of buffers: source and target are not
// in the caches, as for data arriving from the NIC into application pages.
void BM_MemcpyCold(benchmark::State &st)
{
	size_t size = size_t(st.range(0));
	size_t slots = (64u << 20) / size;
	std::vector<uint8_t> src(slots * size, 1), dst(slots * size);
	size_t i = 0;
	for (auto _ : st) {
		memcpy(dst.data() + i * size, src.data() + i * size, size);
		benchmark::DoNotOptimize(dst.data());
		benchmark::ClobberMemory();
		i = (i + 1) % slots;
	}
	set_counters(st, size);
}

void BM_Crc32c(benchmark::State &st)
{
	size_t size = size_t(st.range(0));
	std::vector<uint8_t> src(size, 1);
	for (auto _ : st)
		benchmark::DoNotOptimize(kiwi_crc32c(~0U, src.data(), size));
	set_counters(st, size);
}

void BM_BuildCrc(benchmark::State &st)
{
	size_t size = size_t(st.range(0));
	uint32_t ulpdu = uint32_t(st.range(1));
	bool markers = st.range(2);
	std::vector<uint8_t> payload(size, 3);
	Framer fr(markers);
	for (auto _ : st)
		fr.frame(payload.data(), size, ulpdu,
			 [](const kiwi_mpa_plan &pl) {
				 benchmark::DoNotOptimize(pl.crc);
			 });
	set_counters(st, size);
}

template <bool Place> void decode_loop(benchmark::State &st)
{
	size_t size = size_t(st.range(0));
	Wire w = make_wire(size, uint32_t(st.range(1)), st.range(2));
	kiwi_mpa_cfg c = cfg_for(st.range(2));
	std::vector<uint8_t> dst(size + 64 * 1024);
	uint32_t ends = 0;
	for (auto _ : st) {
		kiwi_mpa_rx rx;
		kiwi_mpa_rx_init(&rx, &c, 0, kDdpHdr);
		const uint8_t *p = w.bytes.data();
		size_t left = w.bytes.size(), placed = 0;
		kiwi_mpa_ev ev;
		do {
			size_t n = kiwi_mpa_rx_feed(&rx, p, left, &ev);
			if (ev.type == KIWI_MPA_EV_PAYLOAD) {
				if (Place)
					memcpy(dst.data() + placed, ev.data,
					       ev.len);
				placed += ev.len;
			} else if (ev.type == KIWI_MPA_EV_END) {
				ends++;
			} else if (ev.type == KIWI_MPA_EV_ERROR) {
				st.SkipWithError("decode error");
				break;
			}
			p += n;
			left -= n;
		} while (ev.type != KIWI_MPA_EV_NONE);
		benchmark::DoNotOptimize(placed);
	}
	if (ends != st.iterations() * w.fpdus)
		st.SkipWithError("FPDU count mismatch");
	set_counters(st, size);
}

void BM_DecodeCrc(benchmark::State &st)
{
	decode_loop<false>(st);
}

void BM_DecodeCrcPlace(benchmark::State &st)
{
	decode_loop<true>(st);
}

void framing_args(benchmark::internal::Benchmark *b)
{
	b->ArgNames({"bytes", "ulpdu", "markers"});
	for (int64_t size : {4096, 65536})
		for (int64_t m : {0, 1})
			b->Args({size, KIWI_MPA_MULPDU_MAX, m});
	b->Args({65536, 1442, 0});
	b->Args({65536, 1430, 1});
}

BENCHMARK(BM_Memcpy)->ArgName("bytes")->Arg(4096)->Arg(65536);
BENCHMARK(BM_MemcpyCold)->ArgName("bytes")->Arg(4096)->Arg(65536);
BENCHMARK(BM_Crc32c)->ArgName("bytes")->Arg(4096)->Arg(65536);
BENCHMARK(BM_BuildCrc)->Apply(framing_args);
BENCHMARK(BM_DecodeCrc)->Apply(framing_args);
BENCHMARK(BM_DecodeCrcPlace)->Apply(framing_args);

} // namespace

BENCHMARK_MAIN();
