// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RDMA Read Request header codec (RFC 5040 section 4.4; see rdmap.h).
 *
 *   0 Data Sink STag (32) | 4 Data Sink TO (64) | 12 RDMA Read Message Size
 *   (32) | 16 Data Source STag (32) | 20 Data Source TO (64) | 28 end
 */
#include "rdmap.h"

/**
 * kiwi_rdmap_rreq_encode() - write a Read Request header.
 * @r: the header.
 * @buf: KIWI_RDMAP_RREQ_LEN octets of output.
 */
void kiwi_rdmap_rreq_encode(const struct kiwi_rdmap_rreq *r, u8 *buf)
{
	put_unaligned_be32(r->sink_stag, buf);
	put_unaligned_be64(r->sink_to, buf + 4);
	put_unaligned_be32(r->size, buf + 12);
	put_unaligned_be32(r->src_stag, buf + 16);
	put_unaligned_be64(r->src_to, buf + 20);
}

/**
 * kiwi_rdmap_rreq_decode() - read a Read Request header.
 * @r: output.
 * @buf: the octets after the DDP header.
 * @len: octets at @buf.
 *
 * Return: 0, or -EBADMSG if @len is below KIWI_RDMAP_RREQ_LEN.
 */
int kiwi_rdmap_rreq_decode(struct kiwi_rdmap_rreq *r, const u8 *buf, u32 len)
{
	if (len < KIWI_RDMAP_RREQ_LEN)
		return -EBADMSG;
	r->sink_stag = get_unaligned_be32(buf);
	r->sink_to = get_unaligned_be64(buf + 4);
	r->size = get_unaligned_be32(buf + 12);
	r->src_stag = get_unaligned_be32(buf + 16);
	r->src_to = get_unaligned_be64(buf + 20);
	return 0;
}

/**
 * kiwi_rdmap_rreq_advance() - account for octets already sent.
 * @r: the header of a Read Request being answered.
 * @done: Read Response payload octets already handed to DDP (at most
 *	@r->size).
 *
 * Produces the terminated RDMA header of RFC 5040 section 4.8 for a Read
 * that fails part way (RDMAP-11): both TOs advance by @done and the size
 * shrinks by @done. @done is clamped to @r->size.
 */
void kiwi_rdmap_rreq_advance(struct kiwi_rdmap_rreq *r, u32 done)
{
	done = min(done, r->size);
	r->sink_to += done;
	r->src_to += done;
	r->size -= done;
}
