/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * User-space CRC32c implementations behind kiwi_crc32c() (platform.h),
 * exposed so that tests and benchmarks can run each one directly.
 * kiwi_crc32c() uses the fastest one the CPU supports.
 * Contract of every function: raw CRC register in and out, no implicit
 * inversion (the kernel's crc32c()); for the standard CRC32c of a buffer use
 * ~f(~0U, buf, len).
 */
#ifndef KIWI_PROTO_USER_CRC32C_H
#define KIWI_PROTO_USER_CRC32C_H

#include "../platform.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Portable slicing-by-8 table implementation. */
u32 kiwi_crc32c_sw(u32 crc, const void *data, size_t len);
/* SSE4.2 crc32 instruction, 3 interleaved streams; needs the CPU feature. */
u32 kiwi_crc32c_hw(u32 crc, const void *data, size_t len);
/* True if this CPU has SSE4.2. */
bool kiwi_crc32c_hw_available(void);
/*
 * AVX-512 VPCLMULQDQ folding for 512 octets and more, kiwi_crc32c_hw()
 * below that and when the CPU lacks the features (crc32c_fold.c).
 */
u32 kiwi_crc32c_fold(u32 crc, const void *data, size_t len);
bool kiwi_crc32c_fold_available(void);
/* Called once by crc32c.c's initialiser, before the first use. */
void kiwi_crc32c_fold_init(void);

#ifdef __cplusplus
}
#endif

#endif /* KIWI_PROTO_USER_CRC32C_H */
