/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Platform shim for kiwi's pure wire code (kernel/proto/).
 *
 * The files in kernel/proto/ compile unchanged into kiwi.ko and into user
 * space (unit tests, fuzzers, benchmarks). They include only this header for
 * fixed-width types, byte order and CRC32c, and they own no kernel objects,
 * take no locks and allocate nothing.
 */
#ifndef KIWI_PROTO_PLATFORM_H
#define KIWI_PROTO_PLATFORM_H

#ifdef __KERNEL__

#include <linux/types.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/kernel.h>
#include <linux/crc32c.h>
#include <asm/unaligned.h>

/* The kernel's crc32c() takes and returns the raw register (no final XOR). */
static inline u32 kiwi_crc32c(u32 crc, const void *data, size_t len)
{
	return crc32c(crc, data, len);
}

#else /* user space */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <linux/types.h>	/* __be32: verbs keep immediate data in it */

/* The compiler's own names: the same types as uint8_t etc. in <stdint.h>. */
typedef __UINT8_TYPE__ u8;
typedef __UINT16_TYPE__ u16;
typedef __UINT32_TYPE__ u32;
typedef __UINT64_TYPE__ u64;
typedef __INT32_TYPE__ s32;

static inline u16 get_unaligned_be16(const void *p)
{
	const u8 *b = (const u8 *)p;

	return (u16)((u16)b[0] << 8 | b[1]);
}

static inline u32 get_unaligned_be32(const void *p)
{
	const u8 *b = (const u8 *)p;

	return (u32)b[0] << 24 | (u32)b[1] << 16 | (u32)b[2] << 8 | b[3];
}

static inline u64 get_unaligned_be64(const void *p)
{
	return (u64)get_unaligned_be32(p) << 32 |
	       get_unaligned_be32((const u8 *)p + 4);
}

static inline u32 get_unaligned_le32(const void *p)
{
	const u8 *b = (const u8 *)p;

	return (u32)b[3] << 24 | (u32)b[2] << 16 | (u32)b[1] << 8 | b[0];
}

static inline void put_unaligned_be16(u16 v, void *p)
{
	u8 *b = (u8 *)p;

	b[0] = (u8)(v >> 8);
	b[1] = (u8)v;
}

static inline void put_unaligned_be32(u32 v, void *p)
{
	u8 *b = (u8 *)p;

	b[0] = (u8)(v >> 24);
	b[1] = (u8)(v >> 16);
	b[2] = (u8)(v >> 8);
	b[3] = (u8)v;
}

static inline void put_unaligned_be64(u64 v, void *p)
{
	put_unaligned_be32((u32)(v >> 32), p);
	put_unaligned_be32((u32)v, (u8 *)p + 4);
}

static inline void put_unaligned_le32(u32 v, void *p)
{
	u8 *b = (u8 *)p;

	b[0] = (u8)v;
	b[1] = (u8)(v >> 8);
	b[2] = (u8)(v >> 16);
	b[3] = (u8)(v >> 24);
}

/* C only: in C++ these would break std::min/std::max. */
#ifndef __cplusplus
#ifndef min
#define min(a, b) \
	({ __typeof__(a) _min_a = (a); __typeof__(b) _min_b = (b); \
	   _min_a < _min_b ? _min_a : _min_b; })
#endif
#ifndef max
#define max(a, b) \
	({ __typeof__(a) _max_a = (a); __typeof__(b) _max_b = (b); \
	   _max_a > _max_b ? _max_a : _max_b; })
#endif
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
/* A typed zero carries the type so that the argument t appears once. */
#define kiwi_min_typed(z, a, b) min((__typeof__(z))(a), (__typeof__(z))(b))
#define kiwi_max_typed(z, a, b) max((__typeof__(z))(a), (__typeof__(z))(b))
#define min_t(t, a, b) kiwi_min_typed((t)0, a, b)
#define max_t(t, a, b) kiwi_max_typed((t)0, a, b)
#endif

#ifdef __cplusplus
extern "C" {
#endif
/*
 * Same contract as the kernel's crc32c(): raw register in and out, no
 * implicit inversion. Implemented in kernel/proto/user/crc32c.c.
 */
u32 kiwi_crc32c(u32 crc, const void *data, size_t len);
#ifdef __cplusplus
}
#endif

#endif /* __KERNEL__ */

#endif /* KIWI_PROTO_PLATFORM_H */
