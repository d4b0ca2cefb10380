// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: DDP/RDMAP header decode and receive validation.
 *
 * Input: DDP_FUZZ_STATE octets describing the local state (STag lookup
 * result, untagged queue view, MULPDU and a message length; missing octets
 * read as zero), then one received DDP segment. Checks, aborting on any
 * violation: the header codec round-trips; every validator returns a value
 * of enum kiwi_term_err; a tagged or untagged segment accepted for placement
 * lies inside its buffer (128-bit oracle), on this PD/stream (SEC-11:
 * no received octet changes the local PD/QP association) and within the
 * stream's own rights; an accepted untagged segment starts where the
 * message's placed octets end; a Read Request's source range likewise; an
 * accepted Read Response continues the outstanding Read's sink in order
 * and its last segment completes it exactly; an accepted Immediate Data
 * message is 8 octets on QN 0 whose accepted value re-encodes to itself;
 * an accepted Atomic Request is 52 octets on QN 1, round-trips, and its
 * target is an aligned word inside an STag with the atomic right on a
 * stream that allows atomics, and CmpSwap stores only on a match; an
 * accepted Atomic Response is 12 octets on QN 3 and round-trips;
 * the Terminate built for any error
 * re-encodes and decodes to itself; and the segmentation of the given
 * message length at the given MULPDU covers it exactly.
 */
#include "ddp_fuzz_common.h"

#define DDP_FUZZ_STATE 40

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct ddp_fuzz_state {
	struct kiwi_ddp_stream s;
	struct kiwi_ddp_stag_info st;
	struct kiwi_ddp_queue_view q;
	struct kiwi_rdmap_rresp_view rr;
	bool have_rr;
	bool have_st;
	bool have_q;
	u32 mulpdu;
	u32 msg_len;
	u64 to;
};

static void ddp_fuzz_state(struct ddp_fuzz_state *f, const uint8_t *c)
{
	static const u64 qp_of[4] = { KIWI_DDP_ANY_QP, 7, 8, KIWI_DDP_ANY_QP };

	memset(f, 0, sizeof(*f));
	f->s.pd = 1;
	f->s.qp = 7;
	f->s.access = (c[0] & 0x20 ? KIWI_DDP_ACC_REMOTE_WRITE : 0) |
		      (c[0] & 0x40 ? KIWI_DDP_ACC_REMOTE_READ : 0) |
		      (c[1] & 0x10 ? KIWI_DDP_ACC_REMOTE_ATOMIC : 0);
	f->have_st = c[0] & 1;
	f->st.valid = c[0] & 2;
	f->st.pd = (c[0] & 4) ? 2 : 1;
	f->st.qp = qp_of[(c[0] >> 3) & 3];
	f->st.access = (c[1] & 0xf) | (c[35] & 0x80 ? KIWI_DDP_ACC_REMOTE_ATOMIC :
						    0);
	f->st.base = ddp_fuzz_be64(c + 2);
	f->st.len = ddp_fuzz_be64(c + 10);
	f->have_q = c[18] & 1;
	f->q.has_buf = c[18] & 2;
	f->q.msn_lo = ddp_fuzz_be32(c + 19);
	f->q.msn_win = ddp_fuzz_be32(c + 23);
	f->q.buf_len = ddp_fuzz_be32(c + 27);
	f->q.mo_next = (c[18] & 4) ? f->q.buf_len >> (c[18] >> 3 & 31) : 0;
	f->have_rr = c[18] & 8;
	f->rr.sink_stag = ddp_fuzz_be32(c + 36);
	f->rr.sink_to = f->st.base;
	f->rr.size = f->q.buf_len;
	f->rr.placed = f->q.mo_next;
	f->mulpdu = (u32)c[31] << 8 | c[32];
	f->msg_len = ((u32)c[33] << 16 | (u32)c[34] << 8 | c[35]) & 0xfffff;
	f->to = (u64)ddp_fuzz_be32(c + 36) << 24;
}

static void ddp_fuzz_codec(const struct kiwi_ddp_hdr *h, const uint8_t *seg,
			   int hlen)
{
	uint8_t buf[KIWI_DDP_HDR_MAX], want[KIWI_DDP_HDR_MAX];
	struct kiwi_ddp_hdr d;

	DDP_FUZZ_CHECK(kiwi_ddp_hdr_encode(h, buf) == (u32)hlen);
	memcpy(want, seg, hlen);
	want[0] &= (uint8_t)~KIWI_DDP_CTRL_RSVD;
	DDP_FUZZ_CHECK(!memcmp(buf, want, hlen));
	DDP_FUZZ_CHECK(kiwi_ddp_hdr_decode(&d, buf, hlen) == hlen);
	DDP_FUZZ_CHECK(d.tagged == h->tagged && d.last == h->last &&
		       d.dv == h->dv && d.ulp_ctrl == h->ulp_ctrl &&
		       d.ulp_word == h->ulp_word && d.stag == h->stag &&
		       d.to == h->to && d.qn == h->qn && d.msn == h->msn &&
		       d.mo == h->mo && d.rsvd == 0);
}

static void ddp_fuzz_term(enum kiwi_term_err err, const uint8_t *seg,
			  u32 len)
{
	uint8_t msg[KIWI_TERM_MSG_MAX];
	struct kiwi_ddp_hdr h;
	struct kiwi_term t;
	int n;

	DDP_FUZZ_CHECK((u32)err < KIWI_TERM_ERR_COUNT);
	if (err == KIWI_TERM_ERR_NONE)
		return;
	DDP_FUZZ_CHECK(!kiwi_term_from_err(&t, err, seg, len));
	ddp_fuzz_term_again(&t);
	n = kiwi_term_build_msg(&t, 1, msg, sizeof(msg));
	DDP_FUZZ_CHECK(n >= KIWI_DDP_UNTAGGED_HDR_LEN + KIWI_TERM_CTRL_LEN);
	DDP_FUZZ_CHECK(kiwi_ddp_hdr_decode(&h, msg, n) ==
		       KIWI_DDP_UNTAGGED_HDR_LEN);
	DDP_FUZZ_CHECK(kiwi_rdmap_check_hdr(&h, n - KIWI_DDP_UNTAGGED_HDR_LEN) ==
		       KIWI_TERM_ERR_NONE);
}

static void ddp_fuzz_tagged(const struct ddp_fuzz_state *f,
			    const struct kiwi_ddp_hdr *h, u32 plen, u32 need)
{
	const struct kiwi_ddp_stag_info *st = f->have_st ? &f->st : NULL;
	enum kiwi_term_err err;

	err = kiwi_ddp_check_tagged(h, plen, need, &f->s, st);
	DDP_FUZZ_CHECK((u32)err < KIWI_TERM_ERR_COUNT);
	if (err != KIWI_TERM_ERR_NONE || !plen)
		return;
	DDP_FUZZ_CHECK(st && st->valid && kiwi_ddp_stag_on_stream(&f->s, st));
	DDP_FUZZ_CHECK((st->access & need) == need);
	DDP_FUZZ_CHECK(!(need & ~KIWI_DDP_ACC_LOCAL_WRITE & ~f->s.access));
	DDP_FUZZ_CHECK(ddp_fuzz_inside(st->base, st->len, h->to, plen));
}

static void ddp_fuzz_rresp(const struct ddp_fuzz_state *f,
			   const struct kiwi_ddp_hdr *h, u32 plen)
{
	const struct kiwi_rdmap_rresp_view *v = f->have_rr ? &f->rr : NULL;
	enum kiwi_term_err err;

	if (v && v->placed > v->size)
		return;	/* not a state the caller can be in */
	err = kiwi_rdmap_check_rresp(h, plen, v);
	DDP_FUZZ_CHECK((u32)err < KIWI_TERM_ERR_COUNT);
	if (err != KIWI_TERM_ERR_NONE)
		return;
	DDP_FUZZ_CHECK(v && (u64)v->placed + plen <= v->size);
	DDP_FUZZ_CHECK(!plen || (h->stag == v->sink_stag &&
				 h->to == v->sink_to + v->placed));
	DDP_FUZZ_CHECK(!h->last || v->placed + plen == v->size);
}

static void ddp_fuzz_untagged(const struct ddp_fuzz_state *f,
			      const struct kiwi_ddp_hdr *h, u32 plen)
{
	const struct kiwi_ddp_queue_view *q = f->have_q ? &f->q : NULL;
	enum kiwi_term_err err;

	err = kiwi_ddp_check_untagged(h, plen, q);
	DDP_FUZZ_CHECK((u32)err < KIWI_TERM_ERR_COUNT);
	if (err != KIWI_TERM_ERR_NONE)
		return;
	DDP_FUZZ_CHECK(q && q->has_buf && h->msn - q->msn_lo < q->msn_win);
	DDP_FUZZ_CHECK(h->mo == q->mo_next);
	DDP_FUZZ_CHECK((u64)h->mo + plen <= q->buf_len);
}

static void ddp_fuzz_rreq(const struct ddp_fuzz_state *f, const uint8_t *p,
			  u32 plen)
{
	const struct kiwi_ddp_stag_info *st = f->have_st ? &f->st : NULL;
	struct kiwi_rdmap_rreq r, r2;
	enum kiwi_term_err err;
	uint8_t buf[KIWI_RDMAP_RREQ_LEN];

	if (kiwi_rdmap_rreq_decode(&r, p, plen))
		return;
	kiwi_rdmap_rreq_encode(&r, buf);
	DDP_FUZZ_CHECK(!memcmp(buf, p, sizeof(buf)));
	DDP_FUZZ_CHECK(!kiwi_rdmap_rreq_decode(&r2, buf, sizeof(buf)));
	err = kiwi_rdmap_check_rreq(&r, &f->s, st);
	DDP_FUZZ_CHECK((u32)err < KIWI_TERM_ERR_COUNT);
	if (err != KIWI_TERM_ERR_NONE || !r.size)
		return;
	DDP_FUZZ_CHECK(f->s.access & KIWI_DDP_ACC_REMOTE_READ);
	DDP_FUZZ_CHECK(st && st->valid && kiwi_ddp_stag_on_stream(&f->s, st));
	DDP_FUZZ_CHECK(st->access & KIWI_DDP_ACC_REMOTE_READ);
	DDP_FUZZ_CHECK(ddp_fuzz_inside(st->base, st->len, r.src_to, r.size));
	DDP_FUZZ_CHECK((unsigned __int128)r.sink_to + r.size <=
		       ((unsigned __int128)1 << 64));
}

/*
 * An Immediate Data message that passed the header checks carries exactly
 * 8 octets; a value accepted for delivery re-encodes to the same octets.
 */
static void ddp_fuzz_imm(const struct kiwi_ddp_hdr *h, const uint8_t *p,
			 u32 plen)
{
	uint8_t buf[KIWI_RDMAP_IMM_LEN];
	__be32 imm;

	if (kiwi_rdmap_check_hdr(h, plen) != KIWI_TERM_ERR_NONE)
		return;
	DDP_FUZZ_CHECK(plen == KIWI_RDMAP_IMM_LEN && h->qn == 0 &&
		       h->mo == 0 && h->last);
	if (kiwi_rdmap_imm_decode(&imm, p) != KIWI_TERM_ERR_NONE)
		return;
	kiwi_rdmap_imm_encode(imm, buf);
	DDP_FUZZ_CHECK(!memcmp(buf, p, sizeof(buf)));
}

/*
 * RFC 7306 atomics: an Atomic Request or Response that passed the header
 * checks has its exact size on its queue and round-trips; a request the
 * responder accepts targets an aligned word it may touch; the arithmetic
 * leaves memory alone only for a failed CmpSwap.
 */
static void ddp_fuzz_atomic(const struct ddp_fuzz_state *f,
			    const struct kiwi_ddp_hdr *h, const uint8_t *p,
			    u32 plen)
{
	const struct kiwi_ddp_stag_info *st = f->have_st ? &f->st : NULL;
	uint8_t buf[KIWI_RDMAP_AREQ_LEN];
	struct kiwi_rdmap_aresp a;
	struct kiwi_rdmap_areq r;
	enum kiwi_term_err err;
	u64 val = 0, orig;

	if (kiwi_rdmap_check_hdr(h, plen) != KIWI_TERM_ERR_NONE)
		return;
	if (kiwi_rdmap_opcode(h->ulp_ctrl) == KIWI_RDMAP_ATOMIC_RESP) {
		DDP_FUZZ_CHECK(plen == KIWI_RDMAP_ARESP_LEN && h->qn == 3);
		kiwi_rdmap_aresp_decode(&a, p);
		kiwi_rdmap_aresp_encode(&a, buf);
		DDP_FUZZ_CHECK(!memcmp(buf, p, KIWI_RDMAP_ARESP_LEN));
		return;
	}
	DDP_FUZZ_CHECK(plen == KIWI_RDMAP_AREQ_LEN && h->qn == 1 &&
		       h->mo == 0 && h->last);
	kiwi_rdmap_areq_decode(&r, p);
	kiwi_rdmap_areq_encode(&r, buf);
	DDP_FUZZ_CHECK(!memcmp(buf + 4, p + 4, KIWI_RDMAP_AREQ_LEN - 4));
	DDP_FUZZ_CHECK(buf[3] == (p[3] & KIWI_RDMAP_AOP_MASK));
	err = kiwi_rdmap_check_areq(&r, &f->s, st);
	DDP_FUZZ_CHECK((u32)err < KIWI_TERM_ERR_COUNT);
	ddp_fuzz_term(err, (const uint8_t *)p - KIWI_DDP_UNTAGGED_HDR_LEN,
		      KIWI_DDP_UNTAGGED_HDR_LEN + plen);
	if (err != KIWI_TERM_ERR_NONE)
		return;
	DDP_FUZZ_CHECK(r.aop == KIWI_RDMAP_AOP_FETCH_ADD ||
		       r.aop == KIWI_RDMAP_AOP_CMP_SWAP);
	DDP_FUZZ_CHECK(!(r.to & 7));
	DDP_FUZZ_CHECK(f->s.access & KIWI_DDP_ACC_REMOTE_ATOMIC);
	DDP_FUZZ_CHECK(st && st->valid && kiwi_ddp_stag_on_stream(&f->s, st));
	DDP_FUZZ_CHECK(st->access & KIWI_DDP_ACC_REMOTE_ATOMIC);
	DDP_FUZZ_CHECK(ddp_fuzz_inside(st->base, st->len, r.to, 8));
	orig = r.cmp ^ r.data;
	if (!kiwi_rdmap_atomic_apply(&r, orig, &val))
		DDP_FUZZ_CHECK(r.aop == KIWI_RDMAP_AOP_CMP_SWAP &&
			       ((orig ^ r.cmp) & r.cmp_mask));
	else if (r.aop == KIWI_RDMAP_AOP_FETCH_ADD && !r.data_mask)
		DDP_FUZZ_CHECK(val == orig + r.data);
}

static void ddp_fuzz_seg(const struct ddp_fuzz_state *f, bool tagged)
{
	struct kiwi_ddp_seg_iter it;
	struct kiwi_ddp_seg s;
	u32 hlen = tagged ? KIWI_DDP_TAGGED_HDR_LEN : KIWI_DDP_UNTAGGED_HDR_LEN;
	u32 n = 0, off = 0;

	if (kiwi_ddp_seg_init(&it, tagged, f->msg_len, f->to, f->mulpdu)) {
		DDP_FUZZ_CHECK(f->mulpdu <= hlen);
		return;
	}
	while (kiwi_ddp_seg_next(&it, &s)) {
		DDP_FUZZ_CHECK(s.off == off && s.len + hlen <= f->mulpdu);
		DDP_FUZZ_CHECK(tagged ? s.to == f->to + off : s.mo == off);
		DDP_FUZZ_CHECK(s.last == (off + s.len == f->msg_len));
		off += s.len;
		n++;
	}
	DDP_FUZZ_CHECK(off == f->msg_len);
	DDP_FUZZ_CHECK(n == kiwi_ddp_seg_count(tagged, f->msg_len, f->mulpdu));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t ctl[DDP_FUZZ_STATE] = { 0 };
	struct ddp_fuzz_state f;
	struct kiwi_ddp_hdr h;
	size_t skip = size < DDP_FUZZ_STATE ? size : DDP_FUZZ_STATE;
	uint8_t *seg;
	u32 len, plen;
	int hlen;

	memcpy(ctl, data, skip);
	ddp_fuzz_state(&f, ctl);
	ddp_fuzz_seg(&f, ctl[0] & 0x80);
	len = (u32)(size - skip);
	seg = ddp_fuzz_dup(data + skip, len);
	hlen = kiwi_ddp_hdr_decode(&h, seg, len);
	if (hlen < 0) {
		DDP_FUZZ_CHECK(hlen == -EBADMSG);
		DDP_FUZZ_CHECK(!len || len < kiwi_ddp_hdr_len(seg[0]));
		free(seg);
		return 0;
	}
	ddp_fuzz_codec(&h, seg, hlen);
	plen = len - hlen;
	ddp_fuzz_term(kiwi_rdmap_check_hdr(&h, plen), seg, len);
	if (h.tagged)
		ddp_fuzz_tagged(&f, &h, plen, ctl[1] >> 4);
	if (h.tagged && kiwi_rdmap_opcode(h.ulp_ctrl) == KIWI_RDMAP_READ_RESP)
		ddp_fuzz_rresp(&f, &h, plen);
	if (!h.tagged)
		ddp_fuzz_untagged(&f, &h, plen);
	ddp_fuzz_term(h.tagged ?
		      kiwi_ddp_check_tagged(&h, plen, ctl[1] >> 4, &f.s,
					    f.have_st ? &f.st : NULL) :
		      kiwi_ddp_check_untagged(&h, plen, f.have_q ? &f.q : NULL),
		      seg, len);
	if (!h.tagged && kiwi_rdmap_opcode(h.ulp_ctrl) == KIWI_RDMAP_READ_REQ)
		ddp_fuzz_rreq(&f, seg + hlen, plen);
	if (!h.tagged && (kiwi_rdmap_opcode(h.ulp_ctrl) == KIWI_RDMAP_IMM ||
			  kiwi_rdmap_opcode(h.ulp_ctrl) == KIWI_RDMAP_IMM_SE))
		ddp_fuzz_imm(&h, seg + hlen, plen);
	if (!h.tagged &&
	    (kiwi_rdmap_opcode(h.ulp_ctrl) == KIWI_RDMAP_ATOMIC_REQ ||
	     kiwi_rdmap_opcode(h.ulp_ctrl) == KIWI_RDMAP_ATOMIC_RESP))
		ddp_fuzz_atomic(&f, &h, seg + hlen, plen);
	free(seg);
	return 0;
}
