// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: the streaming MPA FPDU decoder and the FPDU transmitter.
 *
 * Input: 4 control octets, then data.
 *  c[0] bit 0 markers, bit 1 CRC checking, bit 2 round-trip mode
 *  c[1] header size wanted (mod 65), c[2] chunk size limit, c[3] seed/offset
 * Raw mode decodes the data as a received stream in random chunks.
 * Round-trip mode cuts the data into ULPDUs, frames them with
 * kiwi_mpa_tx_plan() (each in two fragments) and decodes the result: the
 * ULPDUs must come back exactly. Invariants are checked in fuzz_decode().
 */
#include "mpa_fuzz_common.h"

#define MAX_PDUS 64

static void round_trip(const struct kiwi_mpa_cfg *cfg, u32 start, u32 hdr,
		       const uint8_t *d, size_t n, uint32_t seed, uint32_t maxc)
{
	static struct kiwi_mpa_piece pieces[KIWI_MPA_PLAN_PIECES(2)];
	static struct kiwi_mpa_plan plan;
	struct fuzz_expect want = { d, 0, 0 };
	struct kiwi_mpa_tx tx;
	uint8_t *wire, *flat;
	size_t wlen = 0, pos = 0, i;

	FUZZ_CHECK(!kiwi_mpa_tx_init(&tx, cfg, start));
	wire = malloc(n * 2 + 64 * MAX_PDUS);
	flat = malloc(n + 1);
	FUZZ_CHECK(wire && flat);
	plan.piece = pieces;
	plan.cap = KIWI_MPA_PLAN_PIECES(2);
	while (pos < n && want.fpdus < MAX_PDUS) {
		size_t len = 1 + (size_t)d[pos++] * 8;
		struct kiwi_mpa_frag f[2];
		u32 expect_len;

		if (len > n - pos)
			len = n - pos;
		if (!len)
			break;
		memcpy(flat + want.total, d + pos, len);
		f[0].base = d + pos;
		f[0].len = (u32)(len / 3);
		f[1].base = d + pos + len / 3;
		f[1].len = (u32)(len - len / 3);
		expect_len = kiwi_mpa_fpdu_wire_len(&tx, (u32)len);
		FUZZ_CHECK(!kiwi_mpa_tx_plan(&tx, &plan, f, 2));
		FUZZ_CHECK(plan.wire_len == expect_len && plan.wire_len % 4 == 0);
		for (i = 0; i < plan.cnt; i++) {
			memcpy(wire + wlen, plan.piece[i].base, plan.piece[i].len);
			wlen += plan.piece[i].len;
		}
		want.total += len;
		want.fpdus++;
		pos += len;
	}
	want.ulpdu = flat;
	fuzz_decode(cfg, start, hdr, wire, wlen, seed, maxc, &want);
	free(wire);
	free(flat);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kiwi_mpa_cfg cfg = { 0 };
	struct fuzz_expect none = { NULL, 0, 0 };
	u32 hdr, maxc, start;

	if (size < 4)
		return 0;
	cfg.profile = KIWI_FRAME_MPA;
	cfg.markers = data[0] & 1;
	cfg.crc = !!(data[0] & 2);
	hdr = data[1] % (KIWI_MPA_RX_HDR_MAX + 1);
	maxc = 1 + (u32)data[2] * data[2];
	start = (u32)data[3] * 4 + (data[3] & 0x80 ? 0xfffff000u : 0);
	if (data[0] & 4)
		round_trip(&cfg, start, hdr, data + 4, size - 4, data[3], maxc);
	else
		fuzz_decode(&cfg, start, hdr, data + 4, size - 4, data[3], maxc,
			    &none);
	return 0;
}
