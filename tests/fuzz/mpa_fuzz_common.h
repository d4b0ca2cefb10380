/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared driver of the MPA/ULPF decoder fuzz targets: feeds a stream to the
 * decoder in chunks, each copied into its own exact-size heap buffer (so
 * AddressSanitizer catches any read past a chunk), and aborts on any broken
 * invariant. Optionally compares the ULPDUs with the expected ones.
 */
#ifndef KIWI_FUZZ_MPA_COMMON_H
#define KIWI_FUZZ_MPA_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernel/proto/mpa.h"

#define FUZZ_CHECK(c) do { if (!(c)) abort(); } while (0)

struct fuzz_expect {
	const uint8_t *ulpdu;	/* concatenated expected ULPDUs, or NULL */
	size_t total;		/* octets at ulpdu */
	size_t fpdus;		/* expected FPDU count */
};

static uint32_t fuzz_rand(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/*
 * Decode @stream cut into chunks of 1..@maxc octets (xorshift @seed).
 * Returns the error code (0 if none).
 */
static int fuzz_decode(const struct kiwi_mpa_cfg *cfg, u32 start, u32 hdr_want,
		       const uint8_t *stream, size_t len, uint32_t seed,
		       uint32_t maxc, const struct fuzz_expect *want)
{
	struct kiwi_mpa_rx rx;
	struct kiwi_mpa_ev ev;
	size_t pos = 0, got = 0, fpdus = 0, have = 0;
	u32 ulen = 0;
	int in = 0, err = 0;

	if (kiwi_mpa_rx_init(&rx, cfg, start, hdr_want))
		return -1;
	if (!seed)
		seed = 1;
	while (pos < len && !err) {
		size_t c = 1 + fuzz_rand(&seed) % (maxc ? maxc : 1);
		uint8_t *buf;
		size_t off = 0;

		if (c > len - pos)
			c = len - pos;
		buf = malloc(c);
		FUZZ_CHECK(buf);
		memcpy(buf, stream + pos, c);
		for (;;) {
			size_t n = kiwi_mpa_rx_feed(&rx, buf + off, c - off, &ev);

			FUZZ_CHECK(n <= c - off);
			switch (ev.type) {
			case KIWI_MPA_EV_HEADER:
				FUZZ_CHECK(!in);
				FUZZ_CHECK(ev.len <= hdr_want && ev.len <= ev.ulpdu_len);
				FUZZ_CHECK(ev.len == (hdr_want < ev.ulpdu_len ?
						      hdr_want : ev.ulpdu_len));
				in = 1;
				ulen = ev.ulpdu_len;
				have = ev.len;
				if (want->ulpdu) {
					FUZZ_CHECK(got + ev.len <= want->total);
					FUZZ_CHECK(!memcmp(want->ulpdu + got, ev.data, ev.len));
				}
				got += ev.len;
				break;
			case KIWI_MPA_EV_PAYLOAD:
				/* Never more payload than fed, never outside it. */
				FUZZ_CHECK(in && ev.offset == have);
				FUZZ_CHECK(ev.offset + ev.len <= ulen);
				FUZZ_CHECK(ev.data >= buf + off &&
					   ev.data + ev.len <= buf + off + n);
				have += ev.len;
				if (want->ulpdu) {
					FUZZ_CHECK(got + ev.len <= want->total);
					FUZZ_CHECK(!memcmp(want->ulpdu + got, ev.data, ev.len));
				}
				got += ev.len;
				break;
			case KIWI_MPA_EV_END:
				FUZZ_CHECK(in && have == ulen);
				in = 0;
				fpdus++;
				break;
			case KIWI_MPA_EV_ERROR:
				FUZZ_CHECK(ev.err >= KIWI_MPA_ERR_CRC &&
					   ev.err <= KIWI_MPA_ERR_MARKER);
				err = ev.err;
				/* Stopped: nothing more is consumed. */
				FUZZ_CHECK(kiwi_mpa_rx_feed(&rx, buf, c, &ev) == 0);
				FUZZ_CHECK(ev.type == KIWI_MPA_EV_ERROR && ev.err == err);
				break;
			default:
				FUZZ_CHECK(off + n == c);
				break;
			}
			off += n;
			if (ev.type == KIWI_MPA_EV_NONE || err)
				break;
		}
		free(buf);
		pos += c;
	}
	if (want->ulpdu) {
		FUZZ_CHECK(!err && !in);
		FUZZ_CHECK(got == want->total && fpdus == want->fpdus);
	}
	return err;
}

#endif /* KIWI_FUZZ_MPA_COMMON_H */
