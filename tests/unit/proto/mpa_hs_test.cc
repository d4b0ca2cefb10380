// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// MPA Request/Reply frames and the startup negotiation (RFC 5044 7.1,
// RFC 6581), error code 4 and the RFC 6581 codes 6 and 7.
#include <cstring>
#include <gtest/gtest.h>

#include "mpa_test_util.h"

extern "C" {
#include "proto/mpa_hs.h"
}
#include "vectors/mpa_vectors.h"

using namespace mpatest;

namespace {

kiwi_mpa_policy pol_v1()
{
	kiwi_mpa_policy p{};
	p.rev = 1;
	p.ird = 16;
	p.ord = 16;
	p.ird_max = 128;
	return p;
}

kiwi_mpa_policy pol_v2(bool p2p,
		       uint8_t rtr = KIWI_MPA_RTR_WRITE | KIWI_MPA_RTR_READ)
{
	kiwi_mpa_policy p = pol_v1();
	p.rev = 2;
	p.enhanced = true;
	p.p2p = p2p;
	p.rtr = rtr;
	return p;
}

Bytes build(const kiwi_mpa_frame &f)
{
	Bytes b(KIWI_MPA_FRAME_MAX);
	size_t n = 0;
	EXPECT_EQ(0, kiwi_mpa_frame_build(&f, b.data(), b.size(), &n));
	b.resize(n);
	return b;
}

kiwi_mpa_frame parse_ok(const Bytes &b, bool reply)
{
	kiwi_mpa_frame f;
	size_t n = 0;
	EXPECT_EQ(KIWI_MPA_ST_OK,
		  kiwi_mpa_frame_parse(b.data(), b.size(), reply, &f, &n));
	EXPECT_EQ(b.size(), n);
	return f;
}

// MPA-049/051/056/057 (Rev sent as 1): golden v1 Request and v2 Reply.
TEST(MpaFrame, GoldenRequestV1)
{
	kiwi_mpa_policy p = pol_v1();
	kiwi_mpa_frame req;
	const uint8_t pd[4] = {'k', 'i', 'w', 'i'};
	ASSERT_EQ(0, kiwi_mpa_make_request(&p, pd, 4, &req));
	Bytes golden(mpa_req_v1, mpa_req_v1 + 24);
	EXPECT_EQ(golden, build(req));
	kiwi_mpa_frame f = parse_ok(golden, false);
	EXPECT_FALSE(f.reply);
	EXPECT_TRUE(f.crc);
	EXPECT_FALSE(f.markers);
	EXPECT_EQ(1, f.rev);
	ASSERT_EQ(4, f.pdata_len);
	EXPECT_EQ(0, memcmp(f.pdata, "kiwi", 4));
}

TEST(MpaFrame, GoldenReplyV2)
{
	Bytes golden(mpa_rep_v2, mpa_rep_v2 + 24);
	kiwi_mpa_frame f = parse_ok(golden, true);
	EXPECT_TRUE(f.reply);
	EXPECT_TRUE(f.enhanced);
	EXPECT_EQ(2, f.rev);
	EXPECT_TRUE(f.p2p);
	EXPECT_EQ(KIWI_MPA_RTR_WRITE, f.rtr);
	EXPECT_EQ(16, f.ird);
	EXPECT_EQ(8, f.ord);
	EXPECT_EQ(0, f.pdata_len);
	EXPECT_EQ(golden, build(f));
}

// Round trip of every flag combination, revision, IRD/ORD and PD length.
TEST(MpaFrame, RoundTrip)
{
	Bytes pd = pattern(512, 3);
	for (int bits = 0; bits < 64; bits++) {
		for (uint16_t pdl : {0, 1, 252, 508}) {
			kiwi_mpa_frame f{};
			f.reply = bits & 1;
			f.markers = bits & 2;
			f.crc = bits & 4;
			f.reject = f.reply && (bits & 8);
			f.enhanced = bits & 16;
			f.rev = f.enhanced ? 2 : 1;
			if (f.enhanced) {
				f.p2p = bits & 32;
				f.rtr = f.p2p ? uint8_t(bits % 8) : 0;
				f.ird = uint16_t(bits * 97 % 0x4000);
				f.ord = 0x3fff;
			}
			f.pdata = pd.data();
			f.pdata_len = pdl;
			Bytes b = build(f);
			kiwi_mpa_frame g = parse_ok(b, f.reply);
			EXPECT_EQ(f.reply, g.reply);
			EXPECT_EQ(f.markers, g.markers);
			EXPECT_EQ(f.crc, g.crc);
			EXPECT_EQ(f.reject, g.reject);
			EXPECT_EQ(f.enhanced, g.enhanced);
			EXPECT_EQ(f.rev, g.rev);
			EXPECT_EQ(f.p2p, g.p2p);
			EXPECT_EQ(f.rtr, g.rtr);
			EXPECT_EQ(f.ird, g.ird);
			EXPECT_EQ(f.ord, g.ord);
			ASSERT_EQ(f.pdata_len, g.pdata_len);
			EXPECT_EQ(0, memcmp(pd.data(), g.pdata, pdl));
			EXPECT_EQ(b, build(g));
		}
	}
}

// Incremental parse: every prefix asks for more with the right total.
TEST(MpaFrame, NeedMoreEveryPrefix)
{
	Bytes b(mpa_req_v1, mpa_req_v1 + 24);
	for (size_t n = 0; n < b.size(); n++) {
		kiwi_mpa_frame f;
		size_t need = 0;
		ASSERT_EQ(KIWI_MPA_ST_NEED_MORE,
			  kiwi_mpa_frame_parse(b.data(), n, false, &f, &need))
			<< n;
		EXPECT_EQ(n < 20 ? 20u : 24u, need);
		EXPECT_GT(need, n);
	}
	// Trailing octets (e.g. a first FPDU) are not part of the frame.
	b.push_back(0);
	kiwi_mpa_frame f;
	size_t need = 0;
	EXPECT_EQ(KIWI_MPA_ST_OK,
		  kiwi_mpa_frame_parse(b.data(), b.size(), false, &f, &need));
	EXPECT_EQ(24u, need);
}

// MPA-050/052/062/070/072/081, SEC-14 and error 4: keys.
TEST(MpaFrame, Keys)
{
	Bytes req(mpa_req_v1, mpa_req_v1 + 24),
		rep(mpa_rep_v2, mpa_rep_v2 + 24);
	kiwi_mpa_frame f;
	size_t n;
	EXPECT_EQ(KIWI_MPA_ST_INIT_INIT,
		  kiwi_mpa_frame_parse(req.data(), 24, true, &f, &n));
	EXPECT_EQ(KIWI_MPA_ST_RESP_RESP,
		  kiwi_mpa_frame_parse(rep.data(), 24, false, &f, &n));
	req[15] = '3'; // "MPA ID Req Fram3"
	EXPECT_EQ(KIWI_MPA_ST_BAD_KEY,
		  kiwi_mpa_frame_parse(req.data(), 24, false, &f, &n));
	// A bad key is seen as soon as 16 octets are in.
	EXPECT_EQ(KIWI_MPA_ST_BAD_KEY,
		  kiwi_mpa_frame_parse(req.data(), 16, false, &f, &n));
	// An FPDU where a Request belongs (MPA-061).
	EXPECT_EQ(KIWI_MPA_ST_BAD_KEY,
		  kiwi_mpa_frame_parse(mpa_fig5_wire, 52, false, &f, &n));
	for (auto st : {KIWI_MPA_ST_BAD_KEY, KIWI_MPA_ST_INIT_INIT,
			KIWI_MPA_ST_RESP_RESP, KIWI_MPA_ST_BAD_PDLEN,
			KIWI_MPA_ST_BAD_REV, KIWI_MPA_ST_BAD_ENH}) {
		EXPECT_EQ(KIWI_MPA_ERR_BAD_FRAME, kiwi_mpa_status_ecode(st));
		EXPECT_EQ(KIWI_MPA_ACT_CLOSE, kiwi_mpa_status_action(st));
	}
}

// MPA-058/059/074, SEC-13: PD_Length above 512 is a bad frame; building refuses
// it.
TEST(MpaFrame, PdLength)
{
	Bytes b(mpa_req_v1, mpa_req_v1 + 24);
	kiwi_mpa_frame f;
	size_t n;
	put_unaligned_be16(513, &b[18]);
	EXPECT_EQ(KIWI_MPA_ST_BAD_PDLEN,
		  kiwi_mpa_frame_parse(b.data(), 20, false, &f, &n));
	put_unaligned_be16(0xffff, &b[18]);
	EXPECT_EQ(KIWI_MPA_ST_BAD_PDLEN,
		  kiwi_mpa_frame_parse(b.data(), 24, false, &f, &n));
	put_unaligned_be16(512, &b[18]);
	EXPECT_EQ(KIWI_MPA_ST_NEED_MORE,
		  kiwi_mpa_frame_parse(b.data(), 24, false, &f, &n));
	EXPECT_EQ(532u, n);
	// S=1 needs the 4-octet enhanced field.
	b[16] |= KIWI_MPA_FLAG_S;
	put_unaligned_be16(3, &b[18]);
	EXPECT_EQ(KIWI_MPA_ST_BAD_PDLEN,
		  kiwi_mpa_frame_parse(b.data(), 24, false, &f, &n));

	Bytes pd(513);
	kiwi_mpa_frame g{};
	g.rev = 1;
	g.pdata = pd.data();
	g.pdata_len = 513;
	Bytes out(600);
	EXPECT_EQ(-EMSGSIZE,
		  kiwi_mpa_frame_build(&g, out.data(), out.size(), &n));
	g.pdata_len = 512;
	EXPECT_EQ(0, kiwi_mpa_frame_build(&g, out.data(), out.size(), &n));
	g.enhanced = true;
	EXPECT_EQ(-EMSGSIZE,
		  kiwi_mpa_frame_build(&g, out.data(), out.size(), &n));
	g.enhanced = false;
	EXPECT_EQ(-ENOSPC, kiwi_mpa_frame_build(&g, out.data(), 100, &n));
	g.ird = 0x4000;
	EXPECT_EQ(-EINVAL,
		  kiwi_mpa_frame_build(&g, out.data(), out.size(), &n));
	kiwi_mpa_policy p = pol_v2(false);
	kiwi_mpa_frame req;
	EXPECT_EQ(-EMSGSIZE, kiwi_mpa_make_request(&p, pd.data(), 509, &req));
	EXPECT_EQ(0, kiwi_mpa_make_request(&p, pd.data(), 508, &req));
}

// MPA-052/066/081: a badly formed Reply (a wrong key, PD_Length above 512)
// is error 4: the initiator closes TCP at once.
TEST(MpaFrame, BadReplyCloses)
{
	Bytes b(mpa_rep_v2, mpa_rep_v2 + 24);
	kiwi_mpa_frame f;
	size_t n;

	put_unaligned_be16(513, &b[18]);
	kiwi_mpa_status st =
		kiwi_mpa_frame_parse(b.data(), b.size(), true, &f, &n);
	EXPECT_EQ(KIWI_MPA_ST_BAD_PDLEN, st);
	EXPECT_EQ(KIWI_MPA_ACT_CLOSE, kiwi_mpa_status_action(st));
	EXPECT_EQ(KIWI_MPA_ERR_BAD_FRAME, kiwi_mpa_status_ecode(st));
	b.assign(mpa_rep_v2, mpa_rep_v2 + 24);
	b[11] = 'f'; // "MPA ID Rep frame"
	st = kiwi_mpa_frame_parse(b.data(), b.size(), true, &f, &n);
	EXPECT_EQ(KIWI_MPA_ST_BAD_KEY, st);
	EXPECT_EQ(KIWI_MPA_ACT_CLOSE, kiwi_mpa_status_action(st));
}

// MPA-055/056: R in a Request and the Res bits are not checked; Res is sent 0.
TEST(MpaFrame, ReservedAndRIgnored)
{
	Bytes b(mpa_req_v1, mpa_req_v1 + 24);
	b[16] |= KIWI_MPA_FLAG_R | 0x0f;
	kiwi_mpa_frame f = parse_ok(b, false);
	EXPECT_FALSE(f.reject);
	EXPECT_EQ(0x0f, f.res);
	Bytes again = build(f);
	EXPECT_EQ(0, again[16] & (KIWI_MPA_FLAG_R | KIWI_MPA_FLAG_RES));
}

// Responder + initiator on the same policy pair; returns both params.
struct Pair {
	kiwi_mpa_frame req, rep;
	kiwi_mpa_params resp, init;
	kiwi_mpa_status rs, is;
};

Pair run(const kiwi_mpa_policy &ip, const kiwi_mpa_policy &rp)
{
	Pair r{};
	EXPECT_EQ(0, kiwi_mpa_make_request(&ip, nullptr, 0, &r.req));
	Bytes rq = build(r.req);
	kiwi_mpa_frame preq = parse_ok(rq, false);
	r.rs = kiwi_mpa_respond(&rp, &preq, &r.rep, &r.resp);
	Bytes rp_b = build(r.rep);
	kiwi_mpa_frame prep = parse_ok(rp_b, true);
	r.is = kiwi_mpa_check_reply(&ip, &r.req, &prep, &r.init);
	return r;
}

// MPA-010/026/029/030/053/054/089, SEC-12: marker and CRC matrix.
TEST(MpaNego, MarkersAndCrcMatrix)
{
	for (int bits = 0; bits < 16; bits++) {
		kiwi_mpa_policy ip = pol_v1(), rp = pol_v1();
		ip.markers = bits & 1;
		rp.markers = bits & 2;
		ip.crc_off = bits & 4;
		rp.crc_off = bits & 8;
		Pair r = run(ip, rp);
		ASSERT_EQ(KIWI_MPA_ST_OK, r.rs);
		ASSERT_EQ(KIWI_MPA_ST_OK, r.is);
		bool crc = !(ip.crc_off && rp.crc_off);
		EXPECT_EQ(crc, r.init.crc);
		EXPECT_EQ(crc, r.resp.crc);
		// Each side sends markers iff the other asked for them.
		EXPECT_EQ(rp.markers, r.init.tx_markers);
		EXPECT_EQ(ip.markers, r.init.rx_markers);
		EXPECT_EQ(ip.markers, r.resp.tx_markers);
		EXPECT_EQ(rp.markers, r.resp.rx_markers);
		EXPECT_EQ(1, r.init.ddp_version);
		EXPECT_EQ(1, r.resp.ddp_version);
		// CRC is on by default (MPA-002).
		EXPECT_EQ(!ip.crc_off, r.req.crc);
		// MPA-064/068: an acceptable Request gets R=0, Full Operation.
		EXPECT_FALSE(r.rep.reject);
		EXPECT_EQ(KIWI_MPA_ACT_PROCEED, kiwi_mpa_status_action(r.is));
	}
}

// MPA-057 / appendix C: revisions. Rev 0 (RDMAC) and unknown ones close.
TEST(MpaNego, Revisions)
{
	kiwi_mpa_policy v1 = pol_v1(), v2 = pol_v2(false);
	Pair r =
		run(v1, v2); // ECE-02: a Rev 1 Request is accepted by a v2 side
	EXPECT_EQ(KIWI_MPA_ST_OK, r.rs);
	EXPECT_EQ(1, r.rep.rev);
	EXPECT_FALSE(r.rep.enhanced);
	EXPECT_EQ(KIWI_MPA_ST_OK, r.is);
	r = run(v2, v1); // a v1-only responder refuses Rev 2
	EXPECT_EQ(KIWI_MPA_ST_BAD_REV, r.rs);

	kiwi_mpa_frame req{}, rep;
	kiwi_mpa_params out;
	req.rev = 0;
	req.markers = req.crc = true;
	EXPECT_EQ(KIWI_MPA_ST_BAD_REV, kiwi_mpa_respond(&v2, &req, &rep, &out));
	EXPECT_EQ(1, rep.rev); // the optional appendix C.2.1 Reply
	req.rev = 3;
	EXPECT_EQ(KIWI_MPA_ST_BAD_REV, kiwi_mpa_respond(&v2, &req, &rep, &out));
	req.rev = 1;
	req.enhanced = true;
	EXPECT_EQ(KIWI_MPA_ST_BAD_REV, kiwi_mpa_respond(&v2, &req, &rep, &out));

	kiwi_mpa_frame sent;
	ASSERT_EQ(0, kiwi_mpa_make_request(&v1, nullptr, 0, &sent));
	kiwi_mpa_frame got{};
	got.reply = true;
	got.rev = 0;
	EXPECT_EQ(KIWI_MPA_ST_BAD_REV,
		  kiwi_mpa_check_reply(&v1, &sent, &got, &out));
	got.rev = 2;
	EXPECT_EQ(KIWI_MPA_ST_BAD_REV,
		  kiwi_mpa_check_reply(&v1, &sent, &got, &out));
}

// MPA-063/067/071: a Reply with R=1 is a reject: leave TCP open.
TEST(MpaNego, Reject)
{
	kiwi_mpa_policy p = pol_v2(false);
	kiwi_mpa_frame req, rep;
	kiwi_mpa_params out;
	ASSERT_EQ(0, kiwi_mpa_make_request(&p, nullptr, 0, &req));
	Bytes rq = build(req);
	kiwi_mpa_frame preq = parse_ok(rq, false);
	ASSERT_EQ(KIWI_MPA_ST_OK, kiwi_mpa_respond(&p, &preq, &rep, &out));
	rep.reject = true;
	const uint8_t why[3] = {'n', 'o', '!'};
	rep.pdata = why;
	rep.pdata_len = 3;
	Bytes rb = build(rep);
	kiwi_mpa_frame prep = parse_ok(rb, true);
	EXPECT_TRUE(prep.reject);
	EXPECT_EQ(3, prep.pdata_len);
	kiwi_mpa_status st = kiwi_mpa_check_reply(&p, &req, &prep, &out);
	EXPECT_EQ(KIWI_MPA_ST_REJECTED, st);
	EXPECT_EQ(KIWI_MPA_ACT_EXIT_OPEN, kiwi_mpa_status_action(st));
	EXPECT_EQ(0, kiwi_mpa_status_ecode(st));
	// ECE-09: the responder's IRD/ORD are reported on a reject too.
	EXPECT_EQ(prep.ird, out.peer_ird);
	EXPECT_EQ(prep.ord, out.peer_ord);
}

// ECE-05/06/08/10: IRD/ORD negotiation and the 0x3FFF rules.
TEST(MpaNego, IrdOrd)
{
	kiwi_mpa_policy ip = pol_v2(false), rp = pol_v2(false);
	ip.ird = 4;
	ip.ord = 8;
	rp.ird = 2;
	rp.ord = 16;
	Pair r = run(ip, rp);
	ASSERT_EQ(KIWI_MPA_ST_OK, r.rs);
	ASSERT_EQ(KIWI_MPA_ST_OK, r.is);
	EXPECT_EQ(4, r.resp.ord); // responder ORD <= initiator IRD
	EXPECT_EQ(8, r.resp.ird); // raised to the initiator's ORD
	EXPECT_EQ(4, r.resp.peer_ird);
	EXPECT_EQ(8, r.resp.peer_ord);
	EXPECT_LE(r.init.ord, r.rep.ird);
	EXPECT_GE(r.init.ird, r.rep.ord);
	EXPECT_EQ(8, r.init.ord);
	EXPECT_EQ(4, r.init.ird);

	// An IRD raised to an ORD that is no power of two is rounded up (siw
	// keeps as many Reads outstanding as its power-of-two ORQ holds).
	ip.ord = 3;
	r = run(ip, rp);
	EXPECT_EQ(4, r.rep.ird);
	EXPECT_EQ(4, r.resp.ird);
	EXPECT_EQ(3, r.init.ord);
	ip.ord = 8;

	// IRD raise is capped by ird_max; the initiator then lowers its ORD.
	rp.ird_max = 4;
	rp.ird = 2;
	r = run(ip, rp);
	EXPECT_EQ(4, r.rep.ird);
	EXPECT_EQ(4, r.init.ord);

	// 0x3FFF: "not negotiated": echoed, local values unchanged.
	ip.ird = KIWI_MPA_IRD_ORD_NONE;
	ip.ord = KIWI_MPA_IRD_ORD_NONE;
	rp = pol_v2(false);
	r = run(ip, rp);
	EXPECT_EQ(KIWI_MPA_IRD_ORD_NONE, r.rep.ird);
	EXPECT_EQ(KIWI_MPA_IRD_ORD_NONE, r.rep.ord);
	EXPECT_EQ(rp.ird, r.resp.ird);
	EXPECT_EQ(rp.ord, r.resp.ord);
	EXPECT_EQ(KIWI_MPA_IRD_ORD_NONE, r.init.ird);
	EXPECT_EQ(KIWI_MPA_IRD_ORD_NONE, r.init.ord);
}

// ECE-07/08 and code 6: insufficient IRD on either side.
TEST(MpaNego, InsufficientIrd)
{
	kiwi_mpa_policy ip = pol_v2(false), rp = pol_v2(false);
	ip.ird = 1;
	rp.ord_min = 4;
	Pair r = run(ip, rp);
	EXPECT_EQ(KIWI_MPA_ST_IRD, r.rs);
	EXPECT_TRUE(r.rep.reject);
	EXPECT_EQ(4, r.rep.ord);
	EXPECT_EQ(KIWI_MPA_ERR_IRD, kiwi_mpa_status_ecode(r.rs));
	EXPECT_EQ(KIWI_MPA_ACT_TERM_CLOSE, kiwi_mpa_status_action(r.rs));

	// Initiator: the responder's ORD exceeds what our IRD can reach.
	kiwi_mpa_frame req, rep{};
	kiwi_mpa_params out;
	ip = pol_v2(false);
	ip.ird_max = 16;
	ASSERT_EQ(0, kiwi_mpa_make_request(&ip, nullptr, 0, &req));
	rep.reply = rep.enhanced = true;
	rep.rev = 2;
	rep.ird = 4;
	rep.ord = 17;
	EXPECT_EQ(KIWI_MPA_ST_IRD, kiwi_mpa_check_reply(&ip, &req, &rep, &out));
	rep.ord = 16;
	EXPECT_EQ(KIWI_MPA_ST_OK, kiwi_mpa_check_reply(&ip, &req, &rep, &out));
	EXPECT_EQ(16, out.ird);
	// The initiator's raise is rounded up to a power of two as well.
	rep.ord = 9;
	EXPECT_EQ(KIWI_MPA_ST_OK, kiwi_mpa_check_reply(&ip, &req, &rep, &out));
	EXPECT_EQ(16, out.ird);
}

// The IRD granted: a power of two at or above the depth asked, at most max.
TEST(MpaNego, IrdGrant)
{
	EXPECT_EQ(0, kiwi_mpa_ird_grant(0, 128));
	EXPECT_EQ(1, kiwi_mpa_ird_grant(1, 128));
	EXPECT_EQ(4, kiwi_mpa_ird_grant(3, 128));
	EXPECT_EQ(4, kiwi_mpa_ird_grant(4, 128));
	EXPECT_EQ(128, kiwi_mpa_ird_grant(65, 128));
	EXPECT_EQ(128, kiwi_mpa_ird_grant(128, 128));
	// No power of two fits under max: the depth asked, at most max.
	EXPECT_EQ(5, kiwi_mpa_ird_grant(5, 6));
	EXPECT_EQ(6, kiwi_mpa_ird_grant(9, 6));
	EXPECT_EQ(0x2000, kiwi_mpa_ird_grant(0x1001, KIWI_MPA_IRD_ORD_MASK));
	// Never 0x3FFF ("not negotiated") for a depth below it.
	EXPECT_EQ(0x3ffe, kiwi_mpa_ird_grant(0x3ffe, KIWI_MPA_IRD_ORD_MASK));
	EXPECT_EQ(KIWI_MPA_IRD_ORD_NONE,
		  kiwi_mpa_ird_grant(KIWI_MPA_IRD_ORD_NONE, 128));
}

// ECE-11/12/13: peer-to-peer RTR negotiation and code 7.
TEST(MpaNego, PeerToPeerRtr)
{
	// Both offer Write and Read: the initiator picks Write.
	Pair r = run(pol_v2(true), pol_v2(false));
	ASSERT_EQ(KIWI_MPA_ST_OK, r.rs);
	ASSERT_EQ(KIWI_MPA_ST_OK, r.is);
	EXPECT_TRUE(r.rep.p2p); // A copied
	EXPECT_EQ(KIWI_MPA_RTR_WRITE | KIWI_MPA_RTR_READ, r.rep.rtr);
	EXPECT_TRUE(r.init.p2p);
	EXPECT_EQ(KIWI_MPA_RTR_WRITE, r.init.rtr);

	// Initiator offers only Send; the responder supports only Read: it
	// answers with what it supports, which does not match: code 7.
	kiwi_mpa_policy ip = pol_v2(true, KIWI_MPA_RTR_SEND);
	kiwi_mpa_policy rp = pol_v2(false, KIWI_MPA_RTR_READ);
	ip.ord = 0;
	rp.ird = 0;
	r = run(ip, rp);
	ASSERT_EQ(KIWI_MPA_ST_OK, r.rs);
	EXPECT_EQ(KIWI_MPA_RTR_READ, r.rep.rtr);
	EXPECT_EQ(1, r.rep.ird); // a Read RTR needs one IRD slot
	EXPECT_EQ(KIWI_MPA_ST_NO_RTR, r.is);
	EXPECT_EQ(KIWI_MPA_ERR_NO_RTR, kiwi_mpa_status_ecode(r.is));
	EXPECT_EQ(KIWI_MPA_ACT_TERM_CLOSE, kiwi_mpa_status_action(r.is));

	// Read only on both sides.
	ip = pol_v2(true, KIWI_MPA_RTR_READ | KIWI_MPA_RTR_SEND);
	r = run(ip, rp);
	EXPECT_EQ(KIWI_MPA_ST_OK, r.is);
	EXPECT_EQ(KIWI_MPA_RTR_READ, r.init.rtr);

	// A = 0: B/C/D on the wire are ignored.
	Bytes b(mpa_rep_v2, mpa_rep_v2 + 24);
	b[20] = 0x40; // B without A
	kiwi_mpa_frame f = parse_ok(b, true);
	EXPECT_FALSE(f.p2p);
	EXPECT_EQ(0, f.rtr);

	// A Reply that does not copy A is badly formed.
	kiwi_mpa_frame req, rep{};
	kiwi_mpa_params out;
	ip = pol_v2(true);
	ASSERT_EQ(0, kiwi_mpa_make_request(&ip, nullptr, 0, &req));
	rep.reply = rep.enhanced = true;
	rep.rev = 2;
	EXPECT_EQ(KIWI_MPA_ST_BAD_ENH,
		  kiwi_mpa_check_reply(&ip, &req, &rep, &out));
}

// ECE-15: S=0 Request -> S=0 Reply; an enhanced Reply to a plain Request is
// badly formed.
TEST(MpaNego, EnhancedOnlyWhenAsked)
{
	Pair r = run(pol_v1(), pol_v2(false));
	EXPECT_FALSE(r.rep.enhanced);
	kiwi_mpa_policy v2plain = pol_v2(false);
	v2plain.enhanced = false;
	kiwi_mpa_frame req, rep{};
	kiwi_mpa_params out;
	ASSERT_EQ(0, kiwi_mpa_make_request(&v2plain, nullptr, 0, &req));
	EXPECT_EQ(1, req.rev);
	EXPECT_FALSE(req.enhanced);
	rep.reply = rep.enhanced = true;
	rep.rev = 2;
	EXPECT_EQ(KIWI_MPA_ST_BAD_ENH,
		  kiwi_mpa_check_reply(&v2plain, &req, &rep, &out));
}

TEST(MpaNego, PolicyCheck)
{
	kiwi_mpa_policy p = pol_v2(true);
	EXPECT_EQ(0, kiwi_mpa_policy_check(&p));
	p.rtr = 0;
	EXPECT_EQ(-EINVAL, kiwi_mpa_policy_check(&p));
	p = pol_v1();
	p.enhanced = true;
	EXPECT_EQ(-EINVAL, kiwi_mpa_policy_check(&p));
	p = pol_v1();
	p.rev = 0;
	EXPECT_EQ(-EINVAL, kiwi_mpa_policy_check(&p));
	p = pol_v1();
	p.ird = 200;
	EXPECT_EQ(-EINVAL, kiwi_mpa_policy_check(&p));
	p = pol_v2(false);
	p.rtr = 0x8;
	EXPECT_EQ(-EINVAL, kiwi_mpa_policy_check(&p));
	kiwi_mpa_frame f;
	EXPECT_EQ(-EINVAL, kiwi_mpa_make_request(&p, nullptr, 0, &f));
}

// ULPF-009/010/011/022 as the startup negotiates them: the draft-00 profile
// with the field in private data, keys per direction, the field stripped
// before the ULP sees the private data, and every mismatch refused.
kiwi_mpa_policy pol_ulpf(uint8_t k)
{
	kiwi_mpa_policy p = pol_v2(true);
	p.ulpf = true;
	for (int i = 0; i < KIWI_ULPF_KEY_LEN; i++)
		p.ulpf_key[i] = uint8_t(k + i);
	return p;
}

// One startup over the wire bytes; each side looks for the field only when
// its policy has the profile on, as kiwi.ko does.
struct UlpfRun {
	kiwi_mpa_frame req, rep;
	kiwi_mpa_params iout, rout;
	kiwi_mpa_status rst, ist;
	Bytes reqb;
};

UlpfRun ulpf_run(const kiwi_mpa_policy &ip, const kiwi_mpa_policy &rp)
{
	static const uint8_t pd[3] = {'a', 'b', 'c'};
	UlpfRun r{};
	kiwi_mpa_frame req, rep, mine;

	EXPECT_EQ(0, kiwi_mpa_make_request(&ip, pd, 3, &mine));
	r.reqb = build(mine);
	req = parse_ok(r.reqb, false);
	r.rst = rp.ulpf ? kiwi_mpa_frame_take_ulpf(&req) : KIWI_MPA_ST_OK;
	r.req = req;
	if (r.rst == KIWI_MPA_ST_OK)
		r.rst = kiwi_mpa_respond(&rp, &req, &rep, &r.rout);
	else
		EXPECT_EQ(KIWI_MPA_ST_NO_ULPF,
			  kiwi_mpa_respond(&rp, &req, &rep, &r.rout));
	Bytes repb = build(rep);
	r.rep = parse_ok(repb, true);
	r.ist = ip.ulpf ? kiwi_mpa_frame_take_ulpf(&r.rep) : KIWI_MPA_ST_OK;
	if (r.ist == KIWI_MPA_ST_OK)
		r.ist = kiwi_mpa_check_reply(&ip, &mine, &r.rep, &r.iout);
	return r;
}

TEST(MpaNego, UlpfBothOn)
{
	kiwi_mpa_policy ip = pol_ulpf(0x10), rp = pol_ulpf(0x40);
	ip.markers = rp.markers = true; /* the profile overrides both */
	UlpfRun r = ulpf_run(ip, rp);
	ASSERT_EQ(KIWI_MPA_ST_OK, r.rst);
	ASSERT_EQ(KIWI_MPA_ST_OK, r.ist);
	// The field follows the 4-octet RFC 6581 field; PD_Length counts it.
	ASSERT_EQ(size_t(20 + 4 + 16 + 3), r.reqb.size());
	EXPECT_EQ(0, memcmp(r.reqb.data() + 24, "KIWIULPF", 8));
	EXPECT_EQ(0, r.reqb[32]); /* alignment mode */
	EXPECT_EQ(0, r.reqb[33]); /* no packing */
	EXPECT_EQ(0, memcmp(r.reqb.data() + 34, ip.ulpf_key, 6));
	// The ULP sees only its own private data.
	ASSERT_EQ(3, r.req.pdata_len);
	EXPECT_EQ(0, memcmp(r.req.pdata, "abc", 3));
	for (const kiwi_mpa_params *o : {&r.iout, &r.rout}) {
		EXPECT_TRUE(o->ulpf);
		EXPECT_FALSE(o->crc);
		EXPECT_FALSE(o->tx_markers);
		EXPECT_FALSE(o->rx_markers);
		EXPECT_TRUE(o->p2p);
	}
	// Each direction has the key its sender chose (ULPF-011).
	EXPECT_EQ(0, memcmp(r.iout.ulpf_tx_key, ip.ulpf_key, 6));
	EXPECT_EQ(0, memcmp(r.iout.ulpf_rx_key, rp.ulpf_key, 6));
	EXPECT_EQ(0, memcmp(r.rout.ulpf_tx_key, rp.ulpf_key, 6));
	EXPECT_EQ(0, memcmp(r.rout.ulpf_rx_key, ip.ulpf_key, 6));
}

TEST(MpaNego, UlpfMismatchRefused)
{
	// Responder on, initiator off: a rejecting Reply, no Full Operation.
	UlpfRun r = ulpf_run(pol_v2(true), pol_ulpf(1));
	EXPECT_EQ(KIWI_MPA_ST_NO_ULPF, r.rst);
	EXPECT_TRUE(r.rep.reject);
	EXPECT_EQ(KIWI_MPA_ACT_CLOSE, kiwi_mpa_status_action(r.rst));
	// Initiator on, responder off: the responder passes the field on as
	// private data (it does not know it); the initiator refuses the Reply.
	r = ulpf_run(pol_ulpf(1), pol_v2(true));
	EXPECT_EQ(KIWI_MPA_ST_OK, r.rst);
	EXPECT_FALSE(r.rout.ulpf);
	EXPECT_EQ(3 + KIWI_ULPF_PD_LEN, r.req.pdata_len);
	EXPECT_EQ(KIWI_MPA_ST_NO_ULPF, r.ist);
	EXPECT_FALSE(r.iout.ulpf);
	// Revision 1 frames carry the field too.
	kiwi_mpa_policy v1 = pol_v1();
	v1.ulpf = true;
	r = ulpf_run(v1, v1);
	EXPECT_EQ(KIWI_MPA_ST_OK, r.ist);
	EXPECT_TRUE(r.iout.ulpf);
	EXPECT_TRUE(r.rout.ulpf);
}

// An RTR failure after an agreed profile: the initiator's Terminate is
// framed with the profile, which the responder already receives with.
TEST(MpaNego, UlpfAgreedBeforeRtrFailure)
{
	kiwi_mpa_policy ip = pol_ulpf(1), rp = pol_ulpf(9);
	ip.rtr = KIWI_MPA_RTR_SEND;
	rp.rtr = KIWI_MPA_RTR_WRITE;
	UlpfRun r = ulpf_run(ip, rp);
	ASSERT_EQ(KIWI_MPA_ST_OK, r.rst);
	EXPECT_EQ(KIWI_MPA_ST_NO_RTR, r.ist);
	EXPECT_TRUE(r.iout.ulpf);
	EXPECT_EQ(0, memcmp(r.iout.ulpf_tx_key, ip.ulpf_key, 6));
}

// ULPF-022: a peer asking for marker mode or packing is refused.
TEST(MpaNego, UlpfUnsupportedModeRefused)
{
	uint8_t key[6] = {1, 2, 3, 4, 5, 6}, got[6];
	uint8_t f[KIWI_ULPF_PD_LEN];
	kiwi_ulpf_pd_build(f, key);
	EXPECT_EQ(0, kiwi_ulpf_pd_parse(f, sizeof(f), got));
	EXPECT_EQ(0, memcmp(key, got, 6));
	EXPECT_EQ(-ENOENT, kiwi_ulpf_pd_parse(f, sizeof(f) - 1, got));
	f[8] = KIWI_ULPF_MODE_MARKERS;
	EXPECT_EQ(-EOPNOTSUPP, kiwi_ulpf_pd_parse(f, sizeof(f), got));
	f[8] = KIWI_ULPF_MODE_ALIGN;
	f[9] = KIWI_ULPF_PD_PACKING;
	EXPECT_EQ(-EOPNOTSUPP, kiwi_ulpf_pd_parse(f, sizeof(f), got));
	f[9] = 0;
	f[0] = 'k';
	EXPECT_EQ(-ENOENT, kiwi_ulpf_pd_parse(f, sizeof(f), got));
	kiwi_mpa_frame fr{};
	fr.pdata = f;
	fr.pdata_len = sizeof(f);
	EXPECT_EQ(KIWI_MPA_ST_NO_ULPF, kiwi_mpa_frame_take_ulpf(&fr));
	EXPECT_EQ(KIWI_ULPF_PD_LEN, fr.pdata_len);
	// The field counts against the 512 octets of private data.
	kiwi_mpa_policy p = pol_ulpf(0);
	Bytes big(KIWI_MPA_PD_MAX - 4 - KIWI_ULPF_PD_LEN + 1, 0);
	EXPECT_EQ(-EMSGSIZE, kiwi_mpa_make_request(&p, big.data(),
						   uint16_t(big.size()), &fr));
	EXPECT_EQ(0, kiwi_mpa_make_request(&p, big.data(),
					   uint16_t(big.size() - 1), &fr));
}

} // namespace
