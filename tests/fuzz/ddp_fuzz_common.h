/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared helpers of the DDP/RDMAP/Terminate fuzz targets: an abort-on-
 * violation check and an exact-size heap copy of the input, so that
 * AddressSanitizer catches any read past the octets a decoder was given.
 */
#ifndef KIWI_FUZZ_DDP_COMMON_H
#define KIWI_FUZZ_DDP_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernel/proto/ddp.h"
#include "../../kernel/proto/rdmap.h"
#include "../../kernel/proto/term.h"

#define DDP_FUZZ_CHECK(c) do { if (!(c)) abort(); } while (0)

/* Exact-size copy; malloc(0) may return NULL, so keep one spare octet. */
static inline uint8_t *ddp_fuzz_dup(const uint8_t *d, size_t n)
{
	uint8_t *p = malloc(n ? n : 1);

	DDP_FUZZ_CHECK(p);
	if (n)
		memcpy(p, d, n);
	return p;
}

static inline uint32_t ddp_fuzz_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t ddp_fuzz_be64(const uint8_t *p)
{
	return (uint64_t)ddp_fuzz_be32(p) << 32 | ddp_fuzz_be32(p + 4);
}

/* Oracle in 128-bit arithmetic: [to, to + len) inside [base, base + size). */
static inline int ddp_fuzz_inside(uint64_t base, uint64_t size, uint64_t to,
				  uint32_t len)
{
	unsigned __int128 b = base, e = (unsigned __int128)base + size;
	unsigned __int128 s = to, f = (unsigned __int128)to + len;

	return s >= b && f <= e && f <= ((unsigned __int128)1 << 64);
}

/* Re-encode a decoded Terminate and check it decodes to the same body. */
static inline void ddp_fuzz_term_again(const struct kiwi_term *t)
{
	uint8_t buf[KIWI_TERM_BODY_MAX];
	struct kiwi_term d;
	int n = kiwi_term_encode(t, buf, sizeof(buf));

	DDP_FUZZ_CHECK(n >= KIWI_TERM_CTRL_LEN);
	DDP_FUZZ_CHECK((u32)n == kiwi_term_body_len(t));
	DDP_FUZZ_CHECK(kiwi_term_decode(&d, buf, n, 0) == n);
	DDP_FUZZ_CHECK(d.layer == t->layer && d.etype == t->etype &&
		       d.ecode == t->ecode && d.hdrct == t->hdrct);
	DDP_FUZZ_CHECK(d.ddp_hdr_len == t->ddp_hdr_len &&
		       d.rdma_hdr_len == t->rdma_hdr_len);
	DDP_FUZZ_CHECK(!t->ddp_hdr_len || d.seg_len == t->seg_len);
	DDP_FUZZ_CHECK(!memcmp(d.ddp_hdr, t->ddp_hdr, t->ddp_hdr_len));
	DDP_FUZZ_CHECK(!memcmp(d.rdma_hdr, t->rdma_hdr, t->rdma_hdr_len));
}

#endif /* KIWI_FUZZ_DDP_COMMON_H */
