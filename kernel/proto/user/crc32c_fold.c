// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * User-space CRC32c by carry-less multiplication folding (AVX-512
 * VPCLMULQDQ), for buffers of 512 octets and more; shorter ones and the
 * tail go to kiwi_crc32c_hw(). Same raw-register contract.
 *
 * The register is XORed into the first 4 message octets; the message is then
 * read as sixteen 16-octet lanes (four 64-octet vectors) that each fold
 * forward by 256 octets per step: a lane V = H * x^64 + L (H: its first 8
 * octets) becomes H * (x^(64 + D) mod P) + L * (x^D mod P) + next lane,
 * congruent modulo P, D = 2048 bits. The four vectors are then folded into
 * one (D = 512 bits) and its 64 octets, now the whole pending message,
 * are reduced with the crc32 instruction from a zero register.
 *
 * Bit order: a 16-octet lane loaded little-endian has bit i <-> x^(127 - i)
 * (reflected). A carry-less product of two reflected 64-bit halves comes out
 * one power short, so each constant is stored as x^(n - 1) mod P.
 */
#include "crc32c.h"

#if __has_include("immintrin.h")	/* x86 compilers only */
#include <immintrin.h>
#define KIWI_CRC_FOLD 1
#endif

#define CRC32C_POLY 0x82f63b78U
#define FOLD_STEP 256		/* octets folded per loop iteration */
#define FOLD_VEC 64		/* octets per vector */

static bool fold_ok;
static u64 fold_k_step[2];	/* { x^(2048 + 63), x^(2048 - 1) } mod P */
static u64 fold_k_vec[2];	/* { x^(512 + 63), x^(512 - 1) } mod P */

/* x^n mod P, reflected 32-bit form (bit 31 is x^0). */
static u32 x_pow_bits(u32 n)
{
	u32 v = 0x80000000U;

	while (n--)
		v = (v & 1) ? (v >> 1) ^ CRC32C_POLY : v >> 1;
	return v;
}

/* The pair of constants that folds a lane forward by dbits. */
static void fold_consts(u32 dbits, u64 *k)
{
	k[0] = (u64)x_pow_bits(dbits + 63) << 32;
	k[1] = (u64)x_pow_bits(dbits - 1) << 32;
}

#ifdef KIWI_CRC_FOLD

#define FOLD_TARGET __attribute__((target("avx512f,vpclmulqdq,sse4.2")))

FOLD_TARGET
static __m512i fold_k(const u64 *k)
{
	return _mm512_broadcast_i32x4(_mm_set_epi64x((long long)k[1],
						     (long long)k[0]));
}

/* v * x^D + data, per 16-octet lane. */
FOLD_TARGET
static __m512i fold(__m512i v, __m512i k, __m512i data)
{
	__m512i hi = _mm512_clmulepi64_epi128(v, k, 0x00);
	__m512i lo = _mm512_clmulepi64_epi128(v, k, 0x11);

	return _mm512_ternarylogic_epi64(hi, lo, data, 0x96);
}

FOLD_TARGET
static u32 fold_run(u32 crc, const u8 *p, size_t len)
{
	__m512i k = fold_k(fold_k_step);
	__m512i reg = _mm512_inserti32x4(_mm512_setzero_si512(),
					 _mm_cvtsi32_si128((int)crc), 0);
	__m512i x0, x1, x2, x3;
	u8 rest[FOLD_VEC];

	x0 = _mm512_loadu_si512(p);
	x1 = _mm512_loadu_si512(p + FOLD_VEC);
	x2 = _mm512_loadu_si512(p + 2 * FOLD_VEC);
	x3 = _mm512_loadu_si512(p + 3 * FOLD_VEC);
	x0 = _mm512_xor_si512(x0, reg);
	for (p += FOLD_STEP, len -= FOLD_STEP; len >= FOLD_STEP;
	     p += FOLD_STEP, len -= FOLD_STEP) {
		x0 = fold(x0, k, _mm512_loadu_si512(p));
		x1 = fold(x1, k, _mm512_loadu_si512(p + FOLD_VEC));
		x2 = fold(x2, k, _mm512_loadu_si512(p + 2 * FOLD_VEC));
		x3 = fold(x3, k, _mm512_loadu_si512(p + 3 * FOLD_VEC));
	}
	k = fold_k(fold_k_vec);
	x0 = fold(x0, k, x1);
	x0 = fold(x0, k, x2);
	x0 = fold(x0, k, x3);
	_mm512_storeu_si512(rest, x0);
	crc = kiwi_crc32c_hw(0, rest, FOLD_VEC);
	return kiwi_crc32c_hw(crc, p, len);
}

static bool cpu_has_fold(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") &&
	       __builtin_cpu_supports("vpclmulqdq") &&
	       __builtin_cpu_supports("sse4.2");
}

#else

static u32 fold_run(u32 crc, const u8 *p, size_t len)
{
	return kiwi_crc32c_hw(crc, p, len);
}

static bool cpu_has_fold(void)
{
	return false;
}

#endif

u32 kiwi_crc32c_fold(u32 crc, const void *data, size_t len)
{
	if (!fold_ok || len < 2 * FOLD_STEP)
		return kiwi_crc32c_hw(crc, data, len);
	return fold_run(crc, (const u8 *)data, len);
}

bool kiwi_crc32c_fold_available(void)
{
	return fold_ok;
}

void kiwi_crc32c_fold_init(void)
{
	fold_consts(FOLD_STEP * 8, fold_k_step);
	fold_consts(FOLD_VEC * 8, fold_k_vec);
	fold_ok = cpu_has_fold();
}
