// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * User-space CRC32c (Castagnoli, reflected polynomial 0x82F63B78) for the
 * user-space build of kernel/proto/. Same contract as the kernel's crc32c():
 * the raw register goes in and comes out, no initial or final inversion.
 *
 * Three implementations, the fastest the CPU has picked once at load time:
 *  - AVX-512 VPCLMULQDQ folding for long buffers (crc32c_fold.c);
 *  - SSE4.2: the crc32 instruction, 8 octets at a time. Long buffers are cut
 *    into three blocks that run as independent dependency chains (the
 *    instruction has a 3-cycle latency but 1-cycle throughput); the three
 *    registers are then merged by multiplying them by x^(8 * block) modulo
 *    the polynomial, with one 4 x 256-entry table per block size.
 *  - a portable slicing-by-8 table fallback.
 */
#include "crc32c.h"

#if __has_include("nmmintrin.h")	/* x86 compilers only */
#include <nmmintrin.h>
#define KIWI_CRC_X86 1
#endif

#define CRC32C_POLY 0x82f63b78U

static u32 crc_table[8][256];
static u32 (*crc_impl)(u32 crc, const void *data, size_t len) = kiwi_crc32c_sw;
static bool crc_hw_ok;

/* Block sizes of the 3-stream hw loop, largest first, and x^(8*size) mod P. */
static const u32 crc_blk_size[] = { 1024, 256, 64 };
#define CRC_NBLK ARRAY_SIZE(crc_blk_size)
/* crc_shift_tab[i][k][b]: (b << 8k) * x^(8 * crc_blk_size[i]) mod P. */
static u32 crc_shift_tab[CRC_NBLK][4][256];

/* Multiply two polynomials mod P, reflected form (bit 31 is x^0). */
static u32 gf2_mulmod(u32 a, u32 b)
{
	u32 prod = 0;
	u32 bit;

	for (bit = 0x80000000U; bit && a; bit >>= 1) {
		if (a & bit) {
			prod ^= b;
			a &= ~bit;
		}
		b = (b & 1) ? (b >> 1) ^ CRC32C_POLY : b >> 1;
	}
	return prod;
}

/* x^(8 * nbytes) mod P: the effect of nbytes zero octets on the register. */
static u32 x_pow_8n(u32 nbytes)
{
	u32 v = 0x80000000U;	/* x^0 */
	u64 i;

	for (i = 0; i < (u64)nbytes * 8; i++)
		v = (v & 1) ? (v >> 1) ^ CRC32C_POLY : v >> 1;
	return v;
}

static void crc_tables_init(void)
{
	u32 i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = (c & 1) ? (c >> 1) ^ CRC32C_POLY : c >> 1;
		crc_table[0][i] = c;
	}
	for (i = 0; i < 256; i++)
		for (j = 1; j < 8; j++)
			crc_table[j][i] = (crc_table[j - 1][i] >> 8) ^
					  crc_table[0][crc_table[j - 1][i] & 0xff];
	for (i = 0; i < CRC_NBLK; i++) {
		c = x_pow_8n(crc_blk_size[i]);
		for (j = 0; j < 4; j++) {
			u32 b;

			for (b = 0; b < 256; b++)
				crc_shift_tab[i][j][b] = gf2_mulmod(b << (8 * j), c);
		}
	}
}

u32 kiwi_crc32c_sw(u32 crc, const void *data, size_t len)
{
	const u8 *p = (const u8 *)data;
	u32 lo, hi;

	while (len && ((uintptr_t)p & 7)) {
		crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
		len--;
	}
	while (len >= 8) {
		lo = get_unaligned_le32(p) ^ crc;
		hi = get_unaligned_le32(p + 4);
		crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
		      crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
		      crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
		      crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
	return crc;
}

#ifdef KIWI_CRC_X86

__attribute__((target("sse4.2")))
static u32 crc_hw_chain(u32 crc, const u8 *p, size_t len)
{
	u64 c = crc;
	u64 w;

	while (len && ((uintptr_t)p & 7)) {
		c = _mm_crc32_u8((u32)c, *p++);
		len--;
	}
	while (len >= 8) {
		memcpy(&w, p, 8);
		c = _mm_crc32_u64(c, w);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = _mm_crc32_u8((u32)c, *p++);
	return (u32)c;
}

/* Multiply a register by x^(8 * crc_blk_size[i]) mod P (it is linear). */
static u32 crc_shift(u32 crc, size_t i)
{
	return crc_shift_tab[i][0][crc & 0xff] ^
	       crc_shift_tab[i][1][(crc >> 8) & 0xff] ^
	       crc_shift_tab[i][2][(crc >> 16) & 0xff] ^
	       crc_shift_tab[i][3][crc >> 24];
}

/* Three chains over [p, p + 3 * blk), blk = crc_blk_size[bi]. */
__attribute__((target("sse4.2")))
static u32 crc_hw_3way(u32 crc, const u8 *p, size_t bi)
{
	size_t blk = crc_blk_size[bi];
	u64 c0 = crc, c1 = 0, c2 = 0;
	u64 w0, w1, w2;
	size_t i;

	for (i = 0; i < blk; i += 8) {
		memcpy(&w0, p + i, 8);
		memcpy(&w1, p + blk + i, 8);
		memcpy(&w2, p + 2 * blk + i, 8);
		c0 = _mm_crc32_u64(c0, w0);
		c1 = _mm_crc32_u64(c1, w1);
		c2 = _mm_crc32_u64(c2, w2);
	}
	crc = crc_shift((u32)c0, bi) ^ (u32)c1;
	return crc_shift(crc, bi) ^ (u32)c2;
}

u32 kiwi_crc32c_hw(u32 crc, const void *data, size_t len)
{
	const u8 *p = (const u8 *)data;
	size_t i;

	if (!crc_hw_ok)
		return kiwi_crc32c_sw(crc, data, len);
	for (i = 0; i < CRC_NBLK; i++) {
		while (len >= 3 * (size_t)crc_blk_size[i]) {
			crc = crc_hw_3way(crc, p, i);
			p += 3 * (size_t)crc_blk_size[i];
			len -= 3 * (size_t)crc_blk_size[i];
		}
	}
	return crc_hw_chain(crc, p, len);
}

static bool cpu_has_sse42(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("sse4.2");
}

#else

u32 kiwi_crc32c_hw(u32 crc, const void *data, size_t len)
{
	return kiwi_crc32c_sw(crc, data, len);
}

static bool cpu_has_sse42(void)
{
	return false;
}

#endif

bool kiwi_crc32c_hw_available(void)
{
	return crc_hw_ok;
}

__attribute__((constructor))
static void kiwi_crc32c_init(void)
{
	crc_tables_init();
	crc_hw_ok = cpu_has_sse42();
	kiwi_crc32c_fold_init();
	if (kiwi_crc32c_fold_available())
		crc_impl = kiwi_crc32c_fold;
	else
		crc_impl = crc_hw_ok ? kiwi_crc32c_hw : kiwi_crc32c_sw;
}

u32 kiwi_crc32c(u32 crc, const void *data, size_t len)
{
	return crc_impl(crc, data, len);
}
