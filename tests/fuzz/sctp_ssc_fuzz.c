// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: DDP over SCTP chunk user data (proto/sctp_adapt.c).
 *
 * Input: one received chunk's user data, parsed both as a Session Control
 * message and as a DDP Segment chunk. Checks, aborting on any violation:
 * a Session Control message is accepted only with a known function,
 * Private Data of at most 512 octets and none in a Terminate, its Private
 * Data lies inside the input, and re-encoding reproduces the input
 * exactly; a DDP Segment chunk is accepted only with a whole DDP header
 * and a segment within the MULPDU; the DDP-SSN window never admits a
 * chunk 32767 or more ahead.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernel/proto/sctp_adapt.h"

#define SSC_FUZZ_CHECK(c) do { if (!(c)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void ssc_fuzz_control(const uint8_t *in, u32 len)
{
	uint8_t out[KIWI_SCTP_SSC_MAX];
	struct kiwi_sctp_ssc m;
	int n;

	if (kiwi_sctp_ssc_decode(&m, in, len))
		return;
	SSC_FUZZ_CHECK(len >= KIWI_SCTP_SSC_HDR_LEN);
	SSC_FUZZ_CHECK(m.fn >= KIWI_SCTP_SSC_INITIATE &&
		       m.fn <= KIWI_SCTP_SSC_TERMINATE);
	SSC_FUZZ_CHECK(m.pd_len <= KIWI_SCTP_PD_MAX);
	SSC_FUZZ_CHECK(m.fn != KIWI_SCTP_SSC_TERMINATE || !m.pd_len);
	SSC_FUZZ_CHECK(!m.pd_len ||
		       (m.pd == in + KIWI_SCTP_SSC_HDR_LEN &&
			m.pd_len == len - KIWI_SCTP_SSC_HDR_LEN));
	n = kiwi_sctp_ssc_encode(out, sizeof(out), m.ssn, m.fn, m.pd,
				 m.pd_len);
	SSC_FUZZ_CHECK(n >= 0 && (u32)n == len && !memcmp(out, in, len));
}

static void ssc_fuzz_segment(const uint8_t *in, u32 len)
{
	bool ipv6 = len > 1 && (in[1] & 1);
	u32 mulpdu = kiwi_sctp_mulpdu(len ? in[0] * 64u : 0, ipv6);
	u16 ssn, next;

	SSC_FUZZ_CHECK(mulpdu >= 514);
	if (kiwi_sctp_seg_decode(in, len, mulpdu, &ssn))
		return;
	SSC_FUZZ_CHECK(len >= KIWI_SCTP_SSN_LEN + 14);
	SSC_FUZZ_CHECK(len - KIWI_SCTP_SSN_LEN <= mulpdu);
	next = (u16)(in[2] << 8 | in[3]);
	if (kiwi_sctp_ssn_valid(next, ssn, 0xffff))
		SSC_FUZZ_CHECK((u16)(ssn - next) < KIWI_SCTP_SSN_WINDOW);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	u32 len = size > 0xffff ? 0xffff : (u32)size;
	uint8_t *in = malloc(len ? len : 1);

	SSC_FUZZ_CHECK(in);
	if (len)
		memcpy(in, data, len);
	ssc_fuzz_control(in, len);
	ssc_fuzz_segment(in, len);
	free(in);
	return 0;
}
