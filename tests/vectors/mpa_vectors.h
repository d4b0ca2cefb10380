/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Golden MPA vectors, shared by the GoogleTest suite (tests/unit/proto/) and
 * the KUnit suite (tests/kunit/mpa_kunit.c). Plain C arrays, no code.
 *
 * Figures 5 and 6 of RFC 5044 section 4.4 (typed from the hex dumps in
 * /work/shared/spec/seeds-digest.md section 2.4): markers and CRC on, offsets
 * from SeqStart. Figure 6 is the second FPDU of a stream whose first FPDU is
 * a 464-octet Send (marker + 488 octets, stream octets 0x000..0x1eb).
 */
#ifndef KIWI_TESTS_MPA_VECTORS_H
#define KIWI_TESTS_MPA_VECTORS_H

/* Figure 5: leading marker, a 42-octet untagged Send (MSN 1), CRC. */
static const unsigned char mpa_fig5_wire[52] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x2a, 0x41, 0x43,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x52, 0x23, 0x99, 0x83,
};
#define MPA_FIG5_CRC 0x83992352U	/* sent as 52 23 99 83 */
#define MPA_FIG5_ULPDU_OFF 6		/* ULPDU starts after marker + length */
#define MPA_FIG5_ULPDU_LEN 42

/* Figure 6: stream octets 0x1ec..0x21f, the marker at 0x200 points 0x14 back. */
#define MPA_FIG6_STREAM_OFF 0x1ec
static const unsigned char mpa_fig6_wire[52] = {
	0x00, 0x2a, 0x41, 0x43, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x14,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x84, 0x92, 0x58, 0x98,
};
#define MPA_FIG6_CRC 0x98589284U	/* sent as 84 92 58 98 */
#define MPA_FIG6_ULPDU_LEN 42
/* Length of the first Send's ULPDU: 18-octet DDP header + 464 payload. */
#define MPA_FIG6_FIRST_ULPDU_LEN 482

/* DDP untagged header of a Send (RDMAP control 0x43), QN 0, MSN @msn, MO 0. */
#define MPA_FIG_DDP_HDR(msn) \
	0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (msn), 0, 0, 0, 0
#define MPA_FIG_DDP_HDR_LEN 18

/* CRC32c check values: final CRC (initial ~0, final xor ~0). */
#define CRC32C_CHECK_123456789 0xe3069283U	/* "123456789" */
/* RFC 3720 appendix B.4, 32-octet buffers. */
#define CRC32C_RFC3720_ZEROS 0x8a9136aaU	/* 32 x 0x00 */
#define CRC32C_RFC3720_ONES 0x62a8ab43U		/* 32 x 0xff */
#define CRC32C_RFC3720_INC 0x46dd794eU		/* 0x00, 0x01 .. 0x1f */
#define CRC32C_RFC3720_DEC 0x113fdb5cU		/* 0x1f, 0x1e .. 0x00 */
/* Figure 5 without its leading marker (the marker is covered). */
#define MPA_FIG5_CRC_NO_MARKER 0xc33e24b7U

/* MULPDU table of seeds-digest.md section 2.6: EMSS, with, without markers. */
static const unsigned int mpa_mulpdu_table[][3] = {
	{ 536, 522, 530 },
	{ 1220, 1202, 1214 },
	{ 1448, 1430, 1442 },
	{ 1460, 1442, 1454 },
	{ 8948, 8870, 8942 },
	{ 8960, 8882, 8954 },
	/* clamps (MPA-006/038): floor 128, ceiling 64768 */
	{ 1, 128, 128 },
	{ 68, 128, 128 },
	{ 128, 128, 128 },
	{ 140, 130, 134 },
	{ 65535, 64768, 64768 },
	{ 100000, 64768, 64768 },
};

/* Request "MPA ID Req Frame", M=0 C=1 Rev 1, 4 octets of private data. */
static const unsigned char mpa_req_v1[24] = {
	'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R',
	'e', 'q', ' ', 'F', 'r', 'a', 'm', 'e',
	0x40, 0x01, 0x00, 0x04, 'k', 'i', 'w', 'i',
};

/*
 * Reply "MPA ID Rep Frame", C=1 S=1 Rev 2, enhanced field: A=1 IRD 16,
 * C (Write RTR) ORD 8; no ULP private data.
 */
static const unsigned char mpa_rep_v2[24] = {
	'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R',
	'e', 'p', ' ', 'F', 'r', 'a', 'm', 'e',
	0x50, 0x02, 0x00, 0x04, 0x80, 0x10, 0x80, 0x08,
};

#endif /* KIWI_TESTS_MPA_VECTORS_H */
