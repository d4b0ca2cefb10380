// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: the ULP framing draft-00 profile of the framer.
 *
 * Input: 8 control octets (c[0] bit 0 round-trip mode, c[1] header size,
 * c[2] chunk limit, c[3..7] the start of the key; the key's last octet is
 * 0x5a), then data. Raw mode decodes the data as a received stream; a key
 * mismatch must be error 3. Round-trip mode frames the data as PDUs and
 * decodes them back exactly.
 */
#include "mpa_fuzz_common.h"
#include "../../kernel/proto/ulpf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void ulpf_round_trip(const struct kiwi_mpa_cfg *cfg, u32 hdr,
			    const uint8_t *d, size_t n, uint32_t maxc)
{
	struct kiwi_mpa_piece pieces[KIWI_MPA_PLAN_PIECES(1)];
	struct kiwi_mpa_plan plan;
	struct fuzz_expect want = { d, 0, 0 };
	struct kiwi_mpa_tx tx;
	uint8_t *wire = malloc(n * 9 + 8);
	size_t wlen = 0, pos = 0, i;

	FUZZ_CHECK(wire && !kiwi_mpa_tx_init(&tx, cfg, 0));
	plan.piece = pieces;
	plan.cap = KIWI_MPA_PLAN_PIECES(1);
	while (pos < n) {
		size_t len = 1 + d[pos] % 64;
		struct kiwi_mpa_frag f;

		if (len > n - pos)
			len = n - pos;
		f.base = d + pos;
		f.len = (u32)len;
		FUZZ_CHECK(!kiwi_mpa_tx_plan(&tx, &plan, &f, 1));
		FUZZ_CHECK(plan.wire_len == KIWI_ULPF_HDR_LEN + len);
		for (i = 0; i < plan.cnt; i++) {
			memcpy(wire + wlen, plan.piece[i].base, plan.piece[i].len);
			wlen += plan.piece[i].len;
		}
		want.total += len;
		want.fpdus++;
		pos += len;
	}
	fuzz_decode(cfg, 0, hdr, wire, wlen, (uint32_t)n, maxc, &want);
	free(wire);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kiwi_mpa_cfg cfg = { 0 };
	struct fuzz_expect none = { NULL, 0, 0 };
	u32 hdr, maxc;
	int err;

	if (size < 8)
		return 0;
	cfg.profile = KIWI_FRAME_ULPF00;
	memcpy(cfg.ulpf_key, data + 3, 5);
	cfg.ulpf_key[5] = 0x5a;
	hdr = data[1] % (KIWI_MPA_RX_HDR_MAX + 1);
	maxc = 1 + (u32)data[2] * data[2];
	if (data[0] & 1) {
		ulpf_round_trip(&cfg, hdr, data + 8, size - 8, maxc);
		return 0;
	}
	err = fuzz_decode(&cfg, 0, hdr, data + 8, size - 8, data[2], maxc,
			  &none);
	/* The only error this profile can report is a key mismatch. */
	FUZZ_CHECK(err == 0 || err == KIWI_MPA_ERR_MARKER);
	return 0;
}
