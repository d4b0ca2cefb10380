// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: MPA Request/Reply parsing and the startup negotiation.
 *
 * Input: 2 control octets (c[0]: bit 0 parse as the initiator, i.e. expect a
 * Reply; bits 1-7 and c[1] shape a local policy), then the received frame.
 * Checks: every prefix of a valid frame asks for more octets with a need
 * beyond the prefix; a parsed frame re-encodes to a frame that parses to the
 * same fields; negotiation results respect RFC 5044/6581 invariants.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernel/proto/mpa_hs.h"
#include "../../kernel/proto/mpa.h"

#define FUZZ_CHECK(c) do { if (!(c)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_frame(const struct kiwi_mpa_frame *a,
		       const struct kiwi_mpa_frame *b)
{
	FUZZ_CHECK(a->reply == b->reply && a->markers == b->markers);
	FUZZ_CHECK(a->crc == b->crc && a->reject == b->reject);
	FUZZ_CHECK(a->enhanced == b->enhanced && a->rev == b->rev);
	FUZZ_CHECK(a->p2p == b->p2p && a->rtr == b->rtr);
	FUZZ_CHECK(a->ird == b->ird && a->ord == b->ord);
	FUZZ_CHECK(a->pdata_len == b->pdata_len);
	FUZZ_CHECK(!a->pdata_len || !memcmp(a->pdata, b->pdata, a->pdata_len));
}

static void policy_from(const uint8_t *c, struct kiwi_mpa_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->crc_off = c[0] & 2;
	p->markers = c[0] & 4;
	p->rev = c[0] & 8 ? KIWI_MPA_REV_2 : KIWI_MPA_REV_1;
	p->enhanced = p->rev == KIWI_MPA_REV_2 && (c[0] & 16);
	p->p2p = p->enhanced && (c[0] & 32);
	p->rtr = c[1] & KIWI_MPA_RTR_ALL;
	if (p->rev == KIWI_MPA_REV_2 && !p->rtr)
		p->rtr = KIWI_MPA_RTR_WRITE;
	p->ird_max = (u16)((c[1] >> 3) * 4);
	p->ird = c[0] & 64 ? KIWI_MPA_IRD_ORD_NONE : p->ird_max / 2;
	p->ord = c[0] & 128 ? KIWI_MPA_IRD_ORD_NONE : (u16)(c[1] >> 4);
	p->ord_min = c[1] & 8 ? 2 : 0;
	FUZZ_CHECK(!kiwi_mpa_policy_check(p));
}

static void check_params(const struct kiwi_mpa_policy *p,
			 const struct kiwi_mpa_frame *req,
			 const struct kiwi_mpa_frame *rep,
			 const struct kiwi_mpa_params *o)
{
	FUZZ_CHECK(o->crc == (req->crc || rep->crc));
	FUZZ_CHECK(o->ddp_version == 1);
	if (!o->enhanced)
		return;
	FUZZ_CHECK(o->ird <= KIWI_MPA_IRD_ORD_MASK && o->ord <= KIWI_MPA_IRD_ORD_MASK);
	if (o->p2p)
		FUZZ_CHECK(o->rtr && !(o->rtr & ~KIWI_MPA_RTR_ALL));
	(void)p;
}

static void as_responder(const struct kiwi_mpa_policy *p,
			 const struct kiwi_mpa_frame *req)
{
	struct kiwi_mpa_frame rep, back;
	struct kiwi_mpa_params o;
	enum kiwi_mpa_status st = kiwi_mpa_respond(p, req, &rep, &o);
	uint8_t buf[KIWI_MPA_FRAME_MAX];
	size_t n, n2;

	FUZZ_CHECK(kiwi_mpa_status_action(st) != KIWI_MPA_ACT_WAIT);
	FUZZ_CHECK(st == KIWI_MPA_ST_OK || st == KIWI_MPA_ST_BAD_REV ||
		   st == KIWI_MPA_ST_IRD);
	FUZZ_CHECK(!kiwi_mpa_frame_build(&rep, buf, sizeof(buf), &n));
	FUZZ_CHECK(kiwi_mpa_frame_parse(buf, n, true, &back, &n2) ==
		   KIWI_MPA_ST_OK && n2 == n);
	if (st != KIWI_MPA_ST_OK)
		return;
	check_params(p, req, &rep, &o);
	FUZZ_CHECK(rep.enhanced == req->enhanced && rep.p2p == req->p2p);
	/* Responder ORD never above the initiator's IRD (ECE-06). */
	if (rep.enhanced && req->ird != KIWI_MPA_IRD_ORD_NONE &&
	    rep.ord != KIWI_MPA_IRD_ORD_NONE)
		FUZZ_CHECK(rep.ord <= req->ird);
}

static void as_initiator(const struct kiwi_mpa_policy *p,
			 const struct kiwi_mpa_frame *rep)
{
	struct kiwi_mpa_frame req;
	struct kiwi_mpa_params o;
	enum kiwi_mpa_status st;

	FUZZ_CHECK(!kiwi_mpa_make_request(p, NULL, 0, &req));
	st = kiwi_mpa_check_reply(p, &req, rep, &o);
	if (st == KIWI_MPA_ST_REJECTED)
		FUZZ_CHECK(rep->reject);
	if (st != KIWI_MPA_ST_OK)
		return;
	check_params(p, &req, rep, &o);
	FUZZ_CHECK(o.tx_markers == rep->markers && o.rx_markers == req.markers);
	if (o.p2p)
		FUZZ_CHECK((o.rtr & (o.rtr - 1)) == 0 && (o.rtr & rep->rtr));
	/* Initiator ORD <= responder IRD, IRD >= responder ORD (ECE-08). */
	if (o.enhanced && rep->ird != KIWI_MPA_IRD_ORD_NONE &&
	    p->ord != KIWI_MPA_IRD_ORD_NONE)
		FUZZ_CHECK(o.ord <= rep->ird);
	if (o.enhanced && rep->ord != KIWI_MPA_IRD_ORD_NONE &&
	    p->ird != KIWI_MPA_IRD_ORD_NONE)
		FUZZ_CHECK(o.ird >= rep->ord);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kiwi_mpa_frame f, g;
	struct kiwi_mpa_policy pol;
	enum kiwi_mpa_status st;
	size_t n, n2, i;
	uint8_t *copy, *re;
	bool want_reply;

	if (size < 2)
		return 0;
	want_reply = data[0] & 1;
	policy_from(data, &pol);
	data += 2;
	size -= 2;
	copy = malloc(size ? size : 1);
	FUZZ_CHECK(copy);
	memcpy(copy, data, size);
	st = kiwi_mpa_frame_parse(copy, size, want_reply, &f, &n);
	if (st == KIWI_MPA_ST_NEED_MORE)
		FUZZ_CHECK(n > size && n <= KIWI_MPA_FRAME_MAX);
	if (st != KIWI_MPA_ST_OK) {
		FUZZ_CHECK(kiwi_mpa_status_action(st) != KIWI_MPA_ACT_PROCEED);
		free(copy);
		return 0;
	}
	FUZZ_CHECK(n <= size && n <= KIWI_MPA_FRAME_MAX);
	for (i = 0; i < n; i++)
		FUZZ_CHECK(kiwi_mpa_frame_parse(copy, i, want_reply, &g, &n2) ==
			   KIWI_MPA_ST_NEED_MORE && n2 > i);
	re = malloc(KIWI_MPA_FRAME_MAX);
	FUZZ_CHECK(re);
	FUZZ_CHECK(!kiwi_mpa_frame_build(&f, re, KIWI_MPA_FRAME_MAX, &n2));
	FUZZ_CHECK(n2 == n);
	FUZZ_CHECK(kiwi_mpa_frame_parse(re, n2, want_reply, &g, &n2) ==
		   KIWI_MPA_ST_OK);
	g.res = f.res;
	same_frame(&f, &g);
	if (want_reply)
		as_initiator(&pol, &f);
	else
		as_responder(&pol, &f);
	free(re);
	free(copy);
	return 0;
}
