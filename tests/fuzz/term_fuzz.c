// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: Terminate message decode.
 *
 * Input: one received Terminate body (the DDP payload of a QN 2 message).
 * It is decoded in RFC layout and in siw's swapped layout. Checks, aborting
 * on any violation: decode never claims more octets than given (and
 * AddressSanitizer sees no over-read of the exact-size copy); in RFC layout
 * re-encoding reproduces the consumed octets with the reserved bits
 * cleared; every decoded body re-encodes and decodes to itself; the
 * (Layer, EType, ECode) lookup is total; and the whole Terminate message
 * built from the decoded body passes kiwi's own receive checks.
 */
#include "ddp_fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void term_fuzz_exact(const uint8_t *body, int n)
{
	uint8_t buf[KIWI_TERM_BODY_MAX], want[KIWI_TERM_BODY_MAX];
	struct kiwi_term t;

	DDP_FUZZ_CHECK(kiwi_term_decode(&t, body, n, 0) == n);
	DDP_FUZZ_CHECK(kiwi_term_encode(&t, buf, sizeof(buf)) == n);
	memcpy(want, body, n);
	want[2] &= KIWI_TERM_HDRCT_MASK;
	want[3] = 0;
	DDP_FUZZ_CHECK(!memcmp(buf, want, n));
}

static void term_fuzz_msg(const struct kiwi_term *t)
{
	uint8_t msg[KIWI_TERM_MSG_MAX];
	struct kiwi_ddp_hdr h;
	struct kiwi_term d;
	int n;

	n = kiwi_term_build_msg(t, 1, msg, sizeof(msg));
	DDP_FUZZ_CHECK(n >= KIWI_DDP_UNTAGGED_HDR_LEN + KIWI_TERM_CTRL_LEN);
	DDP_FUZZ_CHECK(kiwi_ddp_hdr_decode(&h, msg, n) ==
		       KIWI_DDP_UNTAGGED_HDR_LEN);
	DDP_FUZZ_CHECK(h.qn == KIWI_RDMAP_QN_TERMINATE && h.last && !h.mo);
	n -= KIWI_DDP_UNTAGGED_HDR_LEN;
	DDP_FUZZ_CHECK(kiwi_rdmap_check_hdr(&h, n) == KIWI_TERM_ERR_NONE);
	DDP_FUZZ_CHECK(kiwi_term_decode(&d, msg + KIWI_DDP_UNTAGGED_HDR_LEN,
					n, 0) == n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	u32 len = size > 0xffff ? 0xffff : (u32)size;
	uint8_t *body = ddp_fuzz_dup(data, len);
	unsigned int flags;
	struct kiwi_term t;
	int n, e;

	(void)kiwi_term_siw_swapped(body, len, false);
	(void)kiwi_term_siw_swapped(body, len, true);
	for (flags = 0; flags <= KIWI_TERM_DEC_SIW_SWAPPED; flags++) {
		n = kiwi_term_decode(&t, body, len, flags);
		if (len < KIWI_TERM_CTRL_LEN) {
			DDP_FUZZ_CHECK(n == -EBADMSG);
			continue;
		}
		DDP_FUZZ_CHECK(n >= KIWI_TERM_CTRL_LEN && (u32)n <= len);
		DDP_FUZZ_CHECK(t.layer <= 0xf && t.etype <= 0xf);
		if (!flags)
			term_fuzz_exact(body, n);
		ddp_fuzz_term_again(&t);
		term_fuzz_msg(&t);
		e = kiwi_term_err_lookup(t.layer, t.etype, t.ecode);
		DDP_FUZZ_CHECK(e == -ENOENT ||
			       (e > KIWI_TERM_ERR_NONE && e < KIWI_TERM_ERR_COUNT));
	}
	free(body);
	return 0;
}
