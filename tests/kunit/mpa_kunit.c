// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the MPA half of kernel/proto/, run against the kernel
 * build of the same sources the GoogleTest suite tests in user space (the
 * CRC here is the kernel's crc32c()). Golden vectors come from
 * tests/vectors/mpa_vectors.h.
 */
#include <kunit/test.h>

#include "proto/mpa.h"
#include "proto/mpa_hs.h"
#include "../vectors/mpa_vectors.h"

static const u8 fig5_ulpdu[MPA_FIG5_ULPDU_LEN] = { MPA_FIG_DDP_HDR(1) };
static const u8 fig6_ulpdu[MPA_FIG6_ULPDU_LEN] = { MPA_FIG_DDP_HDR(2) };

struct mpa_kunit_tx {
	struct kiwi_mpa_tx tx;
	struct kiwi_mpa_plan plan;
	struct kiwi_mpa_piece piece[KIWI_MPA_PLAN_PIECES(2)];
	u8 wire[1024];
	u32 wire_len;
};

static struct mpa_kunit_tx *mk_tx(struct kunit *test, bool markers)
{
	struct kiwi_mpa_cfg cfg = { .profile = KIWI_FRAME_MPA,
				    .markers = markers, .crc = true };
	struct mpa_kunit_tx *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_EQ(test, 0, kiwi_mpa_tx_init(&t->tx, &cfg, 0));
	t->plan.piece = t->piece;
	t->plan.cap = ARRAY_SIZE(t->piece);
	return t;
}

/* Frame hdr + payload (two fragments) and append the wire octets. */
static void mk_fpdu(struct kunit *test, struct mpa_kunit_tx *t, const u8 *hdr,
		    u32 hlen, const u8 *pl, u32 plen)
{
	struct kiwi_mpa_frag f[2] = { { hdr, hlen }, { pl, plen } };
	u32 i;

	KUNIT_ASSERT_EQ(test, 0, kiwi_mpa_tx_plan(&t->tx, &t->plan, f, 2));
	KUNIT_ASSERT_LE(test, t->wire_len + t->plan.wire_len,
			(u32)sizeof(t->wire));
	for (i = 0; i < t->plan.cnt; i++) {
		memcpy(t->wire + t->wire_len, t->plan.piece[i].base,
		       t->plan.piece[i].len);
		t->wire_len += t->plan.piece[i].len;
	}
}

static void mpa_golden_fig5(struct kunit *test)
{
	static const u8 zero[24];
	struct mpa_kunit_tx *t = mk_tx(test, true);

	mk_fpdu(test, t, fig5_ulpdu, MPA_FIG_DDP_HDR_LEN, zero, 24);
	KUNIT_ASSERT_EQ(test, t->wire_len, (u32)sizeof(mpa_fig5_wire));
	KUNIT_EXPECT_EQ(test, 0, memcmp(t->wire, mpa_fig5_wire,
					sizeof(mpa_fig5_wire)));
	KUNIT_EXPECT_EQ(test, MPA_FIG5_CRC, t->plan.crc);
}

static void mpa_golden_fig6(struct kunit *test)
{
	static const u8 zero[464];
	struct mpa_kunit_tx *t = mk_tx(test, true);

	mk_fpdu(test, t, fig5_ulpdu, MPA_FIG_DDP_HDR_LEN, zero, 464);
	KUNIT_ASSERT_EQ(test, t->wire_len, (u32)MPA_FIG6_STREAM_OFF);
	mk_fpdu(test, t, fig6_ulpdu, MPA_FIG_DDP_HDR_LEN, zero, 24);
	KUNIT_EXPECT_EQ(test, 0, memcmp(t->wire + MPA_FIG6_STREAM_OFF,
					mpa_fig6_wire, sizeof(mpa_fig6_wire)));
	KUNIT_EXPECT_EQ(test, MPA_FIG6_CRC, t->plan.crc);
}

static void mpa_crc_vectors(struct kunit *test)
{
	u8 b[32];
	int i;

	KUNIT_EXPECT_EQ(test, CRC32C_CHECK_123456789,
			~kiwi_crc32c(~0U, "123456789", 9));
	memset(b, 0, sizeof(b));
	KUNIT_EXPECT_EQ(test, CRC32C_RFC3720_ZEROS, ~kiwi_crc32c(~0U, b, 32));
	memset(b, 0xff, sizeof(b));
	KUNIT_EXPECT_EQ(test, CRC32C_RFC3720_ONES, ~kiwi_crc32c(~0U, b, 32));
	for (i = 0; i < 32; i++)
		b[i] = i;
	KUNIT_EXPECT_EQ(test, CRC32C_RFC3720_INC, ~kiwi_crc32c(~0U, b, 32));
	for (i = 0; i < 32; i++)
		b[i] = 31 - i;
	KUNIT_EXPECT_EQ(test, CRC32C_RFC3720_DEC, ~kiwi_crc32c(~0U, b, 32));
	KUNIT_EXPECT_EQ(test, MPA_FIG5_CRC, ~kiwi_crc32c(~0U, mpa_fig5_wire, 48));
	KUNIT_EXPECT_EQ(test, MPA_FIG6_CRC, ~kiwi_crc32c(~0U, mpa_fig6_wire, 48));
}

static void mpa_mulpdu(struct kunit *test)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(mpa_mulpdu_table); i++) {
		KUNIT_EXPECT_EQ(test, mpa_mulpdu_table[i][1],
				kiwi_mpa_mulpdu(mpa_mulpdu_table[i][0], true));
		KUNIT_EXPECT_EQ(test, mpa_mulpdu_table[i][2],
				kiwi_mpa_mulpdu(mpa_mulpdu_table[i][0], false));
	}
}

/* Decode wire[0..len) cut at @cut and @cut2; return the FPDUs completed. */
static int mk_decode(struct kunit *test, const u8 *wire, size_t len,
		     size_t cut, size_t cut2, u8 *ulpdu, size_t *ulen)
{
	struct kiwi_mpa_cfg cfg = { .profile = KIWI_FRAME_MPA,
				    .markers = true, .crc = true };
	size_t ends[3] = { cut, cut2, len };
	struct kiwi_mpa_rx rx;
	struct kiwi_mpa_ev ev;
	size_t prev = 0, i, n;
	int fpdus = 0;

	*ulen = 0;
	KUNIT_ASSERT_EQ(test, 0, kiwi_mpa_rx_init(&rx, &cfg, 0, 18));
	for (i = 0; i < 3; i++) {
		const u8 *p = wire + prev;
		size_t left = ends[i] - prev;

		prev = ends[i];
		do {
			n = kiwi_mpa_rx_feed(&rx, p, left, &ev);
			KUNIT_ASSERT_LE(test, n, left);
			if (ev.type == KIWI_MPA_EV_ERROR)
				return -ev.err;
			if (ev.type == KIWI_MPA_EV_END)
				fpdus++;
			if (ev.type == KIWI_MPA_EV_HEADER ||
			    ev.type == KIWI_MPA_EV_PAYLOAD) {
				memcpy(ulpdu + *ulen, ev.data, ev.len);
				*ulen += ev.len;
			}
			p += n;
			left -= n;
		} while (ev.type != KIWI_MPA_EV_NONE);
	}
	return fpdus;
}

static void mpa_chunked_decode(struct kunit *test)
{
	static const u8 zero[464];
	struct mpa_kunit_tx *t = mk_tx(test, true);
	u8 *out = kunit_kzalloc(test, 1024, GFP_KERNEL);
	size_t a, b, ulen;

	KUNIT_ASSERT_NOT_NULL(test, out);
	mk_fpdu(test, t, fig5_ulpdu, MPA_FIG_DDP_HDR_LEN, zero, 464);
	mk_fpdu(test, t, fig6_ulpdu, MPA_FIG_DDP_HDR_LEN, zero, 24);
	for (a = 0; a <= t->wire_len; a += 3) {
		for (b = a; b <= t->wire_len; b += 29) {
			KUNIT_ASSERT_EQ(test, 2, mk_decode(test, t->wire,
							   t->wire_len, a, b,
							   out, &ulen));
			KUNIT_ASSERT_EQ(test, (size_t)(482 + 42), ulen);
			KUNIT_ASSERT_EQ(test, 0, memcmp(out + 482, fig6_ulpdu,
							42));
		}
	}
	/* A flipped payload bit is MPA error 2 and nothing completes. */
	t->wire[0x210] ^= 1;
	KUNIT_EXPECT_EQ(test, -KIWI_MPA_ERR_CRC,
			mk_decode(test, t->wire, t->wire_len, 0x1ec, 0x1ed,
				  out, &ulen));
}

static void mpa_req_rep_round_trip(struct kunit *test)
{
	struct kiwi_mpa_policy pol = { .rev = 2, .enhanced = true, .p2p = true,
				       .rtr = KIWI_MPA_RTR_WRITE, .ird = 8,
				       .ord = 4, .ird_max = 16 };
	struct kiwi_mpa_frame req, rep, preq, prep;
	struct kiwi_mpa_params rp, ip;
	u8 *buf = kunit_kzalloc(test, 2 * KIWI_MPA_FRAME_MAX, GFP_KERNEL);
	u8 *buf2;
	size_t n, n2, m;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	buf2 = buf + KIWI_MPA_FRAME_MAX;
	KUNIT_ASSERT_EQ(test, 0, kiwi_mpa_make_request(&pol, (const u8 *)"pd",
						       2, &req));
	KUNIT_ASSERT_EQ(test, 0, kiwi_mpa_frame_build(&req, buf,
						      KIWI_MPA_FRAME_MAX, &n));
	KUNIT_EXPECT_EQ(test, (size_t)(20 + 4 + 2), n);
	KUNIT_EXPECT_EQ(test, KIWI_MPA_ST_NEED_MORE,
			kiwi_mpa_frame_parse(buf, n - 1, false, &preq, &m));
	KUNIT_ASSERT_EQ(test, KIWI_MPA_ST_OK,
			kiwi_mpa_frame_parse(buf, n, false, &preq, &m));
	KUNIT_ASSERT_EQ(test, KIWI_MPA_ST_OK,
			kiwi_mpa_respond(&pol, &preq, &rep, &rp));
	KUNIT_ASSERT_EQ(test, 0, kiwi_mpa_frame_build(&rep, buf2,
						      KIWI_MPA_FRAME_MAX, &n2));
	KUNIT_ASSERT_EQ(test, KIWI_MPA_ST_OK,
			kiwi_mpa_frame_parse(buf2, n2, true, &prep, &m));
	KUNIT_ASSERT_EQ(test, KIWI_MPA_ST_OK,
			kiwi_mpa_check_reply(&pol, &req, &prep, &ip));
	KUNIT_EXPECT_TRUE(test, ip.crc && rp.crc);
	KUNIT_EXPECT_TRUE(test, ip.p2p && rp.p2p);
	KUNIT_EXPECT_EQ(test, (u8)KIWI_MPA_RTR_WRITE, ip.rtr);
	KUNIT_EXPECT_LE(test, ip.ord, prep.ird);
	KUNIT_EXPECT_GE(test, ip.ird, prep.ord);
	KUNIT_EXPECT_EQ(test, KIWI_MPA_ST_INIT_INIT,
			kiwi_mpa_frame_parse(buf, n, true, &prep, &m));
}

static void mpa_golden_frames(struct kunit *test)
{
	struct kiwi_mpa_frame f;
	u8 *buf = kunit_kzalloc(test, KIWI_MPA_FRAME_MAX, GFP_KERNEL);
	size_t n, m;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_EQ(test, KIWI_MPA_ST_OK,
			kiwi_mpa_frame_parse(mpa_req_v1, sizeof(mpa_req_v1),
					     false, &f, &n));
	KUNIT_EXPECT_TRUE(test, f.crc && !f.markers && f.rev == 1);
	KUNIT_EXPECT_EQ(test, 4, (int)f.pdata_len);
	KUNIT_ASSERT_EQ(test, 0, kiwi_mpa_frame_build(&f, buf,
						      KIWI_MPA_FRAME_MAX, &m));
	KUNIT_EXPECT_EQ(test, 0, memcmp(buf, mpa_req_v1, sizeof(mpa_req_v1)));
	KUNIT_ASSERT_EQ(test, KIWI_MPA_ST_OK,
			kiwi_mpa_frame_parse(mpa_rep_v2, sizeof(mpa_rep_v2),
					     true, &f, &n));
	KUNIT_EXPECT_TRUE(test, f.enhanced && f.p2p && f.rev == 2);
	KUNIT_EXPECT_EQ(test, 16, (int)f.ird);
	KUNIT_EXPECT_EQ(test, 8, (int)f.ord);
	KUNIT_ASSERT_EQ(test, 0, kiwi_mpa_frame_build(&f, buf,
						      KIWI_MPA_FRAME_MAX, &m));
	KUNIT_EXPECT_EQ(test, 0, memcmp(buf, mpa_rep_v2, sizeof(mpa_rep_v2)));
}

static struct kunit_case mpa_kunit_cases[] = {
	KUNIT_CASE(mpa_golden_frames),
	KUNIT_CASE(mpa_golden_fig5),
	KUNIT_CASE(mpa_golden_fig6),
	KUNIT_CASE(mpa_crc_vectors),
	KUNIT_CASE(mpa_mulpdu),
	KUNIT_CASE(mpa_chunked_decode),
	KUNIT_CASE(mpa_req_rep_round_trip),
	{}
};

static struct kunit_suite mpa_kunit_suite = {
	.name = "kiwi-mpa",
	.test_cases = mpa_kunit_cases,
};

kunit_test_suites(&mpa_kunit_suite);
