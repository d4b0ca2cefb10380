// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_mw: memory windows through libibverbs, kiwi <-> kiwi in one process
 * over rdma_cm (QP pairs on ADDR, vt_cm.c). The active end of each
 * connection owns the memory and binds the windows; the passive end is
 * the peer that reads and writes through them.
 *
 *   vt_mw -a ADDR [-p PORT]
 *
 * Checks, each named on stdout or stderr:
 *  - ibv_query_device: IBV_DEVICE_MEM_WINDOW, _TYPE_2B, max_mw;
 *  - type 1: ibv_bind_mw completes with IBV_WC_BIND_MW and a new key in
 *    mw->rkey (same index); the peer writes and reads through the window
 *    (the MR itself grants no remote rights); a rebind to another range
 *    with fewer rights; the window works from another connection of the
 *    PD; a zero-length bind unbinds it;
 *  - type 2: IBV_WR_BIND_MW with the consumer's key; Local Invalidate,
 *    then a rebind; the peer's Send with Invalidate (the receive reports
 *    IBV_WC_WITH_INV and the rkey), then a rebind;
 *  - ibv_dereg_mr of an MR with a bound window fails (EBUSY) and
 *    succeeds once the windows are gone; ibv_dealloc_mw of a bound window
 *    succeeds;
 *  - refused remote access, each on a fresh connection: out of the
 *    window's bounds, a right the window lacks, after Local Invalidate,
 *    after Send with Invalidate, after a zero-length bind, the old rkey
 *    after a rebind, after dealloc, and a type 2 window from a QP other
 *    than the one it is bound to: the owner's QP sends the Terminate an
 *    MR's error gets (`rdma res show qp -dd`, drv_term_sent), the memory
 *    is unchanged, and the peer's Read completes with
 *    IBV_WC_REM_ACCESS_ERR (a Write completed when it was sent: with
 *    success, or flushed);
 *  - refused binds, each on a fresh connection (IBV_WC_MW_BIND_ERR): a
 *    bound type 2 window, an MR without IBV_ACCESS_MW_BIND, remote write
 *    over an MR without local write, a range beyond the MR, a zero-length
 *    type 2 bind, a QP of another PD; and, refused by ibv_post_send, a
 *    zero-based window (EOPNOTSUPP) and an rkey of another window
 *    (EINVAL);
 *  - the ibv_qp_ex builders (QPs created with IBV_QP_EX_WITH_BIND_MW and
 *    _LOCAL_INV): one ibv_wr_start/ibv_wr_complete batch binds two type 2
 *    windows (ibv_wr_bind_mw; mw->rkey left as it was), the peer writes
 *    and reads through them, ibv_wr_local_inv invalidates one, then the
 *    peer's Read through it completes with IBV_WC_REM_ACCESS_ERR (the
 *    owner's Terminate 0/1/00); ibv_wr_bind_mw of a type 1 window fails
 *    the batch (EINVAL) and posts nothing; ibv_wr_local_inv of a plain
 *    MR's rkey completes as ibv_post_send's IBV_WR_LOCAL_INV does
 *    (IBV_WC_LOC_PROT_ERR);
 *  - rdma_disconnect() right behind a Local Invalidate of a type 2 window
 *    (which completes one RCU grace period late): the stream closes
 *    gracefully once it completed, the peer sees DISCONNECTED within 5 s
 *    (63-mw sets drain_timeout to 10 s).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <poll.h>
#include <stdint.h>
#include <unistd.h>

#include "vt_cm.h"

#define VT_CQ_DEPTH 32
#define VT_POLL_MS 20000
#define VT_PAGE 4096
#define VT_MR_LEN (4 * VT_PAGE)

static struct vt_cm cm;
static struct ibv_pd *pd;

/* A registered buffer. */
struct mem {
	uint8_t *buf;
	struct ibv_mr *mr;
};

static void mem_reg(struct mem *m, struct ibv_pd *in, int access)
{
	if (posix_memalign((void **)&m->buf, VT_PAGE, VT_MR_LEN))
		vt_fatal("posix_memalign failed");
	memset(m->buf, 0, VT_MR_LEN);
	m->mr = ibv_reg_mr(in, m->buf, VT_MR_LEN, access);
	if (!m->mr)
		vt_fatal("ibv_reg_mr: %s", strerror(errno));
}

static void mem_free(struct mem *m)
{
	if (m->mr && ibv_dereg_mr(m->mr))
		vt_fail("ibv_dereg_mr: %s", strerror(errno));
	free(m->buf);
}

static void conn_open_pd(struct vt_cm_conn *c, struct ibv_pd *in)
{
	vt_cm_conn_open(&cm, c, in, VT_CQ_DEPTH, 16);
}

/* A connection of ibv_create_qp_ex QPs with the window builders. */
static void conn_open_ex(struct vt_cm_conn *c)
{
	struct ibv_qp_init_attr_ex a[2];
	int i;

	for (i = 0; i < 2; i++) {
		c->cq[i] = ibv_create_cq(cm.verbs, VT_CQ_DEPTH, NULL, NULL, 0);
		if (!c->cq[i])
			vt_fatal("ibv_create_cq: %s", strerror(errno));
		a[i] = (struct ibv_qp_init_attr_ex){
			.send_cq = c->cq[i],
			.recv_cq = c->cq[i],
			.cap = { .max_send_wr = 16, .max_recv_wr = 4,
				 .max_send_sge = 1, .max_recv_sge = 1 },
			.qp_type = IBV_QPT_RC,
			.comp_mask = IBV_QP_INIT_ATTR_PD |
				     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			.pd = pd,
			.send_ops_flags = IBV_QP_EX_WITH_BIND_MW |
					  IBV_QP_EX_WITH_LOCAL_INV |
					  IBV_QP_EX_WITH_RDMA_WRITE |
					  IBV_QP_EX_WITH_RDMA_READ,
		};
	}
	vt_cm_prepare_ex(&cm, &c->pair, &a[0]);
	vt_cm_establish_ex(&cm, &c->pair, &a[1]);
}

static void conn_open(struct vt_cm_conn *c)
{
	conn_open_pd(c, pd);
}

static bool poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	return vt_poll_one(cq, wc, VT_POLL_MS);
}

/* Wait for the next completion on end @end; false (and a failure) if none
 * or not @status / @op.
 */
static bool expect_wc(struct vt_cm_conn *c, int end, const char *what,
		      enum ibv_wc_status status, enum ibv_wc_opcode op,
		      struct ibv_wc *wc)
{
	if (!poll_one(c->cq[end], wc)) {
		vt_fail("%s: no completion", what);
		return false;
	}
	if (wc->status != status ||
	    (status == IBV_WC_SUCCESS && wc->opcode != op)) {
		vt_fail("%s: status %s opcode %d, want %s opcode %d", what,
			ibv_wc_status_str(wc->status), wc->opcode,
			ibv_wc_status_str(status), op);
		return false;
	}
	return true;
}

/* Type 1: ibv_bind_mw on the owner's QP; the completion in @want. */
static int bind1(struct vt_cm_conn *c, struct ibv_mw *mw, struct mem *m,
		 size_t off, size_t len, unsigned int access)
{
	struct ibv_mw_bind b = {
		.wr_id = 1,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = {
			.mr = len ? m->mr : NULL,
			.addr = len ? (uintptr_t)m->buf + off : 0,
			.length = len,
			.mw_access_flags = access,
		},
	};

	return ibv_bind_mw(vt_cm_conn_qp(c, 0), mw, &b);
}

/* Type 2: IBV_WR_BIND_MW under @rkey on the owner's QP of @c. */
static int bind2(struct vt_cm_conn *c, struct ibv_mw *mw, uint32_t rkey,
		 struct ibv_mr *mr, void *addr, size_t len,
		 unsigned int access)
{
	struct ibv_send_wr wr = {
		.wr_id = 2,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = mr,
		.addr = (uintptr_t)addr,
		.length = len,
		.mw_access_flags = access,
	};
	return ibv_post_send(vt_cm_conn_qp(c, 0), &wr, &bad);
}

/* The peer's RDMA Write or Read of @len octets at @raddr under @rkey. */
static int peer_rdma(struct vt_cm_conn *c, enum ibv_wr_opcode op, struct mem *local,
		     size_t len, uint64_t raddr, uint32_t rkey)
{
	return vt_post_rdma(vt_cm_conn_qp(c, 1), op, 3, local->buf,
			    (uint32_t)len, local->mr->lkey, raddr, rkey);
}

static int local_inv(struct vt_cm_conn *c, uint32_t rkey)
{
	struct ibv_send_wr wr = {
		.wr_id = 4,
		.opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED,
		.invalidate_rkey = rkey,
	}, *bad;

	return ibv_post_send(vt_cm_conn_qp(c, 0), &wr, &bad);
}

/* The peer's zero-length Send with Invalidate; the owner's receive. */
static bool remote_inv(struct vt_cm_conn *c, uint32_t rkey, const char *what)
{
	struct ibv_recv_wr rwr = { .wr_id = 5 }, *rbad;
	struct ibv_send_wr wr = {
		.wr_id = 6,
		.opcode = IBV_WR_SEND_WITH_INV,
		.send_flags = IBV_SEND_SIGNALED,
		.invalidate_rkey = rkey,
	}, *bad;
	struct ibv_wc wc;
	int rv;

	rv = ibv_post_recv(vt_cm_conn_qp(c, 0), &rwr, &rbad);
	if (!rv)
		rv = ibv_post_send(vt_cm_conn_qp(c, 1), &wr, &bad);
	if (rv) {
		vt_fail("%s: post: %s", what, strerror(rv));
		return false;
	}
	if (!expect_wc(c, 1, what, IBV_WC_SUCCESS, IBV_WC_SEND, &wc) ||
	    !expect_wc(c, 0, what, IBV_WC_SUCCESS, IBV_WC_RECV, &wc))
		return false;
	if (!(wc.wc_flags & IBV_WC_WITH_INV) || wc.invalidated_rkey != rkey) {
		vt_fail("%s: receive flags 0x%x rkey 0x%x, want WITH_INV 0x%x",
			what, wc.wc_flags, wc.invalidated_rkey, rkey);
		return false;
	}
	return true;
}

static bool ok_rv(const char *what, int rv)
{
	if (rv)
		vt_fail("%s: %s", what, strerror(rv));
	return !rv;
}

static bool bound(struct vt_cm_conn *c, const char *what, int rv)
{
	struct ibv_wc wc;

	return ok_rv(what, rv) &&
	       expect_wc(c, 0, what, IBV_WC_SUCCESS, IBV_WC_BIND_MW, &wc);
}

static bool peer_ok(struct vt_cm_conn *c, const char *what, enum ibv_wr_opcode op,
		    struct mem *local, size_t len, uint64_t raddr,
		    uint32_t rkey)
{
	struct ibv_wc wc;

	return ok_rv(what, peer_rdma(c, op, local, len, raddr, rkey)) &&
	       expect_wc(c, 1, what, IBV_WC_SUCCESS,
			 op == IBV_WR_RDMA_WRITE ? IBV_WC_RDMA_WRITE :
						   IBV_WC_RDMA_READ, &wc);
}

static void check_caps(void)
{
	struct ibv_device_attr a;
	const int want = IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B;

	if (ibv_query_device(cm.verbs, &a))
		vt_fatal("ibv_query_device: %s", strerror(errno));
	if ((a.device_cap_flags & want) == want && a.max_mw > 0)
		vt_pass("device: MEM_WINDOW, MEM_WINDOW_TYPE_2B, max_mw %d",
			a.max_mw);
	else
		vt_fail("device: cap flags 0x%x max_mw %d", a.device_cap_flags,
			a.max_mw);
}

/* Type 1 on @c, and from @other (the same PD). Leaves it unbound. */
static void check_type1(struct vt_cm_conn *c, struct vt_cm_conn *other, struct mem *own,
			struct mem *peer, struct ibv_mw *mw)
{
	unsigned int fails = vt_failures;
	uint64_t base = (uintptr_t)own->buf;
	uint32_t rkey = mw->rkey;

	if (!bound(c, "type 1 bind", bind1(c, mw, own, VT_PAGE, VT_PAGE,
					    IBV_ACCESS_REMOTE_WRITE |
					    IBV_ACCESS_REMOTE_READ)))
		return;
	if (mw->rkey >> 8 != rkey >> 8 || mw->rkey == rkey)
		vt_fail("type 1 bind: rkey 0x%x after 0x%x", mw->rkey, rkey);
	/*
	 * A Write completes when sent; the Read behind it on the stream
	 * completes when the Write was placed.
	 */
	memset(peer->buf, 0x5a, VT_PAGE);
	if (peer_ok(c, "type 1: peer writes the window", IBV_WR_RDMA_WRITE,
		    peer, VT_PAGE, base + VT_PAGE, mw->rkey) &&
	    peer_ok(c, "type 1: peer reads the window", IBV_WR_RDMA_READ,
		    peer, 1, base + 2 * VT_PAGE - 1, mw->rkey) &&
	    (peer->buf[0] != 0x5a || own->buf[VT_PAGE] != 0x5a ||
	     own->buf[2 * VT_PAGE - 1] != 0x5a || own->buf[VT_PAGE - 1] ||
	     own->buf[2 * VT_PAGE]))
		vt_fail("type 1: the Write did not land in the window alone (Read 0x%x)",
			peer->buf[0]);
	own->buf[2 * VT_PAGE] = 0x3c;
	if (bound(c, "type 1 rebind", bind1(c, mw, own, 2 * VT_PAGE, 100,
					     IBV_ACCESS_REMOTE_READ)) &&
	    peer_ok(other, "type 1 rebound, from another QP of the PD",
		    IBV_WR_RDMA_READ, peer, 100, base + 2 * VT_PAGE,
		    mw->rkey) && peer->buf[0] != 0x3c)
		vt_fail("type 1 rebound: the Read returned 0x%x",
			peer->buf[0]);
	bound(c, "type 1 zero-length bind", bind1(c, mw, own, 0, 0, 0));
	if (vt_failures == fails)
		vt_pass("type 1: bind (new key), peer Write and Read, rebind, use from another QP, zero-length unbind");
}

/* Type 2 on @c: bind, Local Invalidate, rebind, Send with Invalidate. */
static void check_type2(struct vt_cm_conn *c, struct mem *own, struct mem *peer,
			struct ibv_mw *mw)
{
	unsigned int fails = vt_failures;
	uint64_t base = (uintptr_t)own->buf;
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct ibv_wc wc;
	int i;

	for (i = 0; i < 2; i++) {
		if (!bound(c, "type 2 bind", bind2(c, mw, rkey, own->mr,
						    own->buf, VT_PAGE,
						    IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ)))
			return;
		memset(peer->buf, 0x11 + i, 64);
		if (peer_ok(c, "type 2: peer writes the window",
			    IBV_WR_RDMA_WRITE, peer, 64, base, rkey) &&
		    peer_ok(c, "type 2: peer reads the window",
			    IBV_WR_RDMA_READ, peer, 1, base + 63, rkey) &&
		    (peer->buf[0] != 0x11 + i || own->buf[63] != 0x11 + i))
			vt_fail("type 2: the Write did not land");
		if (!i) {
			if (!ok_rv("Local Invalidate", local_inv(c, rkey)))
				return;
			expect_wc(c, 0, "Local Invalidate of the window",
				  IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, &wc);
		} else {
			remote_inv(c, rkey, "Send with Invalidate");
		}
		rkey = ibv_inc_rkey(rkey);
	}
	/* Invalidated by the peer: it binds again. */
	bound(c, "type 2 bind after Send with Invalidate",
	      bind2(c, mw, rkey, own->mr, own->buf, VT_PAGE,
		    IBV_ACCESS_REMOTE_READ));
	if (vt_failures == fails)
		vt_pass("type 2: bind under the consumer's key, peer Write, Local Invalidate, rebind, Send with Invalidate (IBV_WC_WITH_INV), rebind");
}

/* The MR of a bound window stays; dealloc of a bound window works. */
static void check_dereg(struct mem *own, struct ibv_mw *mw1,
			struct ibv_mw *mw2)
{
	unsigned int fails = vt_failures;
	int rv = ibv_dereg_mr(own->mr);

	vt_expect_errno("ibv_dereg_mr with a bound window", rv != 0, rv,
			EBUSY);
	if (!rv)
		own->mr = NULL;
	if (ibv_dealloc_mw(mw2))
		vt_fail("ibv_dealloc_mw of a bound type 2 window: %s",
			strerror(errno));
	if (ibv_dealloc_mw(mw1))
		vt_fail("ibv_dealloc_mw (type 1): %s", strerror(errno));
	if (own->mr && ibv_dereg_mr(own->mr))
		vt_fail("ibv_dereg_mr once the windows are gone: %s",
			strerror(errno));
	own->mr = NULL;
	if (vt_failures == fails)
		vt_pass("dereg_mr refused (EBUSY) while a window is bound; dealloc of a bound window; dereg_mr after");
}

static void check_good(void)
{
	struct ibv_mw *mw1, *mw2;
	struct mem own, peer;
	struct vt_cm_conn c, other;

	conn_open(&c);
	conn_open(&other);
	mem_reg(&own, pd, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	mem_reg(&peer, pd, IBV_ACCESS_LOCAL_WRITE);
	mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	if (!mw1 || !mw2)
		vt_fatal("ibv_alloc_mw: %s", strerror(errno));
	if (mw1->type != IBV_MW_TYPE_1 || mw2->type != IBV_MW_TYPE_2 ||
	    mw1->rkey >> 8 == mw2->rkey >> 8 || mw1->pd != pd)
		vt_fail("ibv_alloc_mw: types %d %d rkeys 0x%x 0x%x", mw1->type,
			mw2->type, mw1->rkey, mw2->rkey);
	check_type1(&c, &other, &own, &peer, mw1);
	check_type2(&c, &own, &peer, mw2);
	check_dereg(&own, mw1, mw2);
	vt_cm_conn_close(&cm, &other);
	vt_cm_conn_close(&cm, &c);
	mem_free(&own);
	mem_free(&peer);
}

enum refusal {
	REF_BOUNDS, REF_RIGHTS, REF_LOCAL_INV, REF_REMOTE_INV, REF_UNBOUND,
	REF_OLD_KEY, REF_DEALLOC, REF_OTHER_QP, REF_NUM
};

/* The Terminate (layer/type/code) the owner sends for each refusal. */
static const char *const ref_terms[REF_NUM] = {
	"1/1/0x01", "0/1/0x02", "1/1/0x00", "1/1/0x00",
	"0/1/0x00", "0/1/0x00", "0/1/0x00", "1/1/0x02",
};

static const char *const ref_names[REF_NUM] = {
	"a Write past the window's end", "a Write through a read-only window",
	"a Write after Local Invalidate", "a Write after Send with Invalidate",
	"a Read after a zero-length bind", "a Read under the old rkey",
	"a Read after dealloc", "a type 2 window from another QP",
};

/*
 * Prepare refusal @k on @c: a window bound and then made unusable, or
 * used wrongly. Returns the rkey, address and length the peer uses; -1
 * on a setup failure.
 */
static int refusal_setup(enum refusal k, struct vt_cm_conn *c, struct mem *own,
			 struct ibv_mw **mw, uint32_t *rkey, uint64_t *raddr,
			 size_t *len)
{
	const unsigned int rw = IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ;
	bool t2 = k == REF_LOCAL_INV || k == REF_REMOTE_INV ||
		  k == REF_OTHER_QP;
	struct ibv_wc wc;

	*mw = ibv_alloc_mw(pd, t2 ? IBV_MW_TYPE_2 : IBV_MW_TYPE_1);
	if (!*mw)
		vt_fatal("ibv_alloc_mw: %s", strerror(errno));
	*raddr = (uintptr_t)own->buf + VT_PAGE;
	*len = 64;
	*rkey = ibv_inc_rkey((*mw)->rkey);
	if (t2 ? !bound(c, ref_names[k], bind2(c, *mw, *rkey, own->mr,
					       own->buf + VT_PAGE, VT_PAGE,
					       rw)) :
		 !bound(c, ref_names[k], bind1(c, *mw, own, VT_PAGE, VT_PAGE,
					       k == REF_RIGHTS ?
					       IBV_ACCESS_REMOTE_READ : rw)))
		return -1;
	switch (k) {
	case REF_BOUNDS:
		*raddr += VT_PAGE - 32;
		break;
	case REF_LOCAL_INV:
		if (!ok_rv(ref_names[k], local_inv(c, *rkey)) ||
		    !expect_wc(c, 0, ref_names[k], IBV_WC_SUCCESS,
			       IBV_WC_LOCAL_INV, &wc))
			return -1;
		break;
	case REF_REMOTE_INV:
		if (!remote_inv(c, *rkey, ref_names[k]))
			return -1;
		break;
	case REF_UNBOUND:
		/* Refused under the window's current key, too. */
		if (!bound(c, ref_names[k], bind1(c, *mw, own, 0, 0, 0)))
			return -1;
		*rkey = (*mw)->rkey;
		break;
	case REF_OLD_KEY:
		if (!bound(c, ref_names[k], bind1(c, *mw, own, VT_PAGE,
						  VT_PAGE, rw)))
			return -1;
		break;
	case REF_DEALLOC:
		if (ibv_dealloc_mw(*mw))
			vt_fatal("ibv_dealloc_mw: %s", strerror(errno));
		*mw = NULL;
		break;
	default:
		break;
	}
	return 0;
}

/*
 * Refused remote access @k on a fresh connection: the owner's QP sends
 * the Terminate, a Read completes with IBV_WC_REM_ACCESS_ERR, a Write
 * when it was sent, and the owner's memory is unchanged.
 */
static void check_refused(enum refusal k)
{
	enum ibv_wr_opcode op = k == REF_BOUNDS || k == REF_RIGHTS ||
				k == REF_LOCAL_INV || k == REF_REMOTE_INV ||
				k == REF_OTHER_QP ? IBV_WR_RDMA_WRITE :
						    IBV_WR_RDMA_READ;
	unsigned int fails = vt_failures;
	struct vt_cm_conn c, c2, *user = &c;
	struct mem own, peer;
	struct ibv_mw *mw;
	struct ibv_wc wc;
	uint64_t raddr;
	uint32_t rkey;
	size_t len, i;

	conn_open(&c);
	if (k == REF_OTHER_QP) {
		conn_open(&c2);
		user = &c2;
	}
	mem_reg(&own, pd, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	mem_reg(&peer, pd, IBV_ACCESS_LOCAL_WRITE);
	memset(peer.buf, 0xee, VT_PAGE);
	if (!refusal_setup(k, &c, &own, &mw, &rkey, &raddr, &len) &&
	    ok_rv(ref_names[k], peer_rdma(user, op, &peer, len, raddr, rkey))) {
		if (op == IBV_WR_RDMA_READ)
			expect_wc(user, 1, ref_names[k], IBV_WC_REM_ACCESS_ERR,
				  IBV_WC_RDMA_READ, &wc);
		else if (!poll_one(user->cq[1], &wc) ||
			 (wc.status != IBV_WC_SUCCESS &&
			  wc.status != IBV_WC_WR_FLUSH_ERR))
			vt_fail("%s: the Write did not complete", ref_names[k]);
		if (!vt_term_sent(cm.verbs, vt_cm_conn_qp(user, 0)->qp_num,
				  ref_terms[k]))
			vt_fail("%s: the owner's QP did not send Terminate %s",
				ref_names[k], ref_terms[k]);
	}
	for (i = 0; i < VT_MR_LEN && own.buf[i] == 0; i++)
		;
	if (i != VT_MR_LEN)
		vt_fail("%s: the owner's memory changed at %zu", ref_names[k],
			i);
	if (vt_failures == fails)
		vt_pass("%s: Terminate %s, %s, memory unchanged", ref_names[k],
			ref_terms[k], op == IBV_WR_RDMA_READ ?
			"IBV_WC_REM_ACCESS_ERR" : "the Write completed");
	if (k == REF_OTHER_QP)
		vt_cm_conn_close(&cm, &c2);
	vt_cm_conn_close(&cm, &c);
	if (mw && ibv_dealloc_mw(mw))
		vt_fail("ibv_dealloc_mw: %s", strerror(errno));
	mem_free(&own);
	mem_free(&peer);
}

enum bad_bind {
	BB_BOUND, BB_NO_BIND, BB_NO_LOCAL_WRITE, BB_BEYOND, BB_ZERO_LEN,
	BB_OTHER_PD, BB_NUM
};

static const char *const bb_names[BB_NUM] = {
	"binding a bound type 2 window", "an MR without IBV_ACCESS_MW_BIND",
	"remote write over an MR without local write",
	"a range beyond the MR", "a zero-length type 2 bind",
	"a QP of another PD",
};

/* A bind the kernel refuses: IBV_WC_MW_BIND_ERR on a fresh connection. */
static void check_bad_bind(enum bad_bind k, struct ibv_pd *pd2)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND;
	unsigned int fails = vt_failures;
	size_t len = VT_PAGE;
	struct ibv_mw *mw;
	struct ibv_wc wc;
	struct mem own;
	uint32_t rkey;
	struct vt_cm_conn c;

	conn_open_pd(&c, k == BB_OTHER_PD ? pd2 : pd);
	if (k == BB_NO_BIND)
		access = IBV_ACCESS_LOCAL_WRITE;
	else if (k == BB_NO_LOCAL_WRITE)
		access = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND;
	mem_reg(&own, pd, access);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	if (!mw)
		vt_fatal("ibv_alloc_mw: %s", strerror(errno));
	rkey = ibv_inc_rkey(mw->rkey);
	if (k == BB_BOUND)
		bound(&c, bb_names[k], bind2(&c, mw, rkey, own.mr, own.buf,
					      len, IBV_ACCESS_REMOTE_READ));
	if (k == BB_BEYOND)
		len = VT_MR_LEN + 1;
	if (k == BB_ZERO_LEN)
		len = 0;
	if (ok_rv(bb_names[k], bind2(&c, mw, ibv_inc_rkey(rkey), own.mr,
				     own.buf, len, IBV_ACCESS_REMOTE_WRITE)))
		expect_wc(&c, 0, bb_names[k], IBV_WC_MW_BIND_ERR,
			  IBV_WC_BIND_MW, &wc);
	if (vt_failures == fails)
		vt_pass("%s: IBV_WC_MW_BIND_ERR", bb_names[k]);
	vt_cm_conn_close(&cm, &c);
	if (ibv_dealloc_mw(mw))
		vt_fail("ibv_dealloc_mw: %s", strerror(errno));
	mem_free(&own);
}

/* Binds libkiwi refuses before the kernel sees them. */
static void check_post_refusals(void)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct mem own;
	struct vt_cm_conn c;
	int rv;

	if (!mw)
		vt_fatal("ibv_alloc_mw: %s", strerror(errno));
	conn_open(&c);
	mem_reg(&own, pd, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	rv = bind2(&c, mw, ibv_inc_rkey(mw->rkey), own.mr, own.buf, VT_PAGE,
		   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ZERO_BASED);
	vt_expect_errno("zero-based window", rv != 0, rv, EOPNOTSUPP);
	rv = bind2(&c, mw, mw->rkey + 0x100, own.mr, own.buf, VT_PAGE,
		   IBV_ACCESS_REMOTE_READ);
	vt_expect_errno("bind under another window's rkey", rv != 0, rv,
			EINVAL);
	vt_cm_conn_close(&cm, &c);
	if (ibv_dealloc_mw(mw))
		vt_fail("ibv_dealloc_mw: %s", strerror(errno));
	mem_free(&own);
}

/* The owner's ibv_qp_ex of @c (conn_open_ex). */
static struct ibv_qp_ex *qpx_of(struct vt_cm_conn *c)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(vt_cm_conn_qp(c, 0));

	if (!x)
		vt_fatal("ibv_qp_to_qp_ex: NULL");
	return x;
}

/* Status of the next completion of end @end (false: none). */
static bool next_status(struct vt_cm_conn *c, int end, const char *what,
			uint64_t wr_id, enum ibv_wc_status *status)
{
	struct ibv_wc wc;

	if (!poll_one(c->cq[end], &wc)) {
		vt_fail("%s: no completion", what);
		return false;
	}
	if (wc.wr_id != wr_id) {
		vt_fail("%s: completion of wr_id %" PRIu64 ", want %" PRIu64,
			what, wc.wr_id, wr_id);
		return false;
	}
	*status = wc.status;
	return true;
}

/*
 * One batch binds @mw[0] (read and write, page 0) and @mw[1] (read only,
 * page 1) under @rkey[]; the peer writes and reads through them.
 */
static bool wr_bind_pair(struct vt_cm_conn *c, struct mem *own, struct mem *peer,
			 struct ibv_mw *mw[2], const uint32_t rkey[2])
{
	const uint32_t old = mw[0]->rkey;
	struct ibv_qp_ex *x = qpx_of(c);
	uint64_t base = (uintptr_t)own->buf;
	struct ibv_mw_bind_info bi;
	struct ibv_wc wc;
	int i, rv;

	ibv_wr_start(x);
	for (i = 0; i < 2; i++) {
		x->wr_id = 10 + i;
		x->wr_flags = IBV_SEND_SIGNALED;
		bi = (struct ibv_mw_bind_info){
			.mr = own->mr,
			.addr = base + i * VT_PAGE,
			.length = VT_PAGE,
			.mw_access_flags = i ? IBV_ACCESS_REMOTE_READ :
					       IBV_ACCESS_REMOTE_READ |
					       IBV_ACCESS_REMOTE_WRITE,
		};
		ibv_wr_bind_mw(x, mw[i], rkey[i], &bi);
	}
	rv = ibv_wr_complete(x);
	if (!ok_rv("ibv_wr_bind_mw batch", rv))
		return false;
	for (i = 0; i < 2; i++)
		if (!expect_wc(c, 0, "ibv_wr_bind_mw", IBV_WC_SUCCESS,
			       IBV_WC_BIND_MW, &wc) || wc.wr_id != 10u + i) {
			vt_fail("ibv_wr_bind_mw: completion %d", i);
			return false;
		}
	if (mw[0]->rkey != old)
		vt_fail("ibv_wr_bind_mw changed mw->rkey to 0x%x", mw[0]->rkey);
	own->buf[VT_PAGE + 5] = 0x6b;
	memset(peer->buf, 0x47, 64);
	if (!peer_ok(c, "peer writes through a window ibv_wr_bind_mw bound",
		     IBV_WR_RDMA_WRITE, peer, 64, base, rkey[0]) ||
	    !peer_ok(c, "peer reads through it", IBV_WR_RDMA_READ, peer, 1,
		     base + 63, rkey[0]) ||
	    !peer_ok(c, "peer reads through the read-only one",
		     IBV_WR_RDMA_READ, peer + 1, 6, base + VT_PAGE, rkey[1]))
		return false;
	if (peer->buf[0] != 0x47 || own->buf[63] != 0x47 ||
	    peer[1].buf[5] != 0x6b) {
		vt_fail("windows of ibv_wr_bind_mw: data 0x%x 0x%x 0x%x",
			peer->buf[0], own->buf[63], peer[1].buf[5]);
		return false;
	}
	return true;
}

/*
 * ibv_wr_bind_mw and ibv_wr_local_inv on type 2 windows: bind in a batch,
 * use, invalidate, a refused Read.
 */
static void check_wr_windows(void)
{
	unsigned int fails = vt_failures;
	struct mem own, peer[2];
	struct ibv_mw *mw[2];
	enum ibv_wc_status st;
	struct ibv_qp_ex *x;
	uint32_t rkey[2];
	struct ibv_wc wc;
	struct vt_cm_conn c;
	int i;

	conn_open_ex(&c);
	mem_reg(&own, pd, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	for (i = 0; i < 2; i++) {
		mem_reg(&peer[i], pd, IBV_ACCESS_LOCAL_WRITE);
		mw[i] = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		if (!mw[i])
			vt_fatal("ibv_alloc_mw: %s", strerror(errno));
		rkey[i] = ibv_inc_rkey(mw[i]->rkey);
	}
	if (!wr_bind_pair(&c, &own, peer, mw, rkey))
		goto out;
	x = qpx_of(&c);
	ibv_wr_start(x);
	x->wr_id = 12;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_local_inv(x, rkey[0]);
	if (!ok_rv("ibv_wr_local_inv", ibv_wr_complete(x)) ||
	    !expect_wc(&c, 0, "ibv_wr_local_inv of a type 2 window",
		       IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, &wc))
		goto out;
	memset(peer[0].buf, 0xee, 64);
	if (ok_rv("a Read after ibv_wr_local_inv",
		  peer_rdma(&c, IBV_WR_RDMA_READ, &peer[0], 64,
			    (uintptr_t)own.buf, rkey[0])) &&
	    next_status(&c, 1, "a Read after ibv_wr_local_inv", 3, &st) &&
	    st != IBV_WC_REM_ACCESS_ERR)
		vt_fail("a Read after ibv_wr_local_inv: %s, want IBV_WC_REM_ACCESS_ERR",
			ibv_wc_status_str(st));
	if (!vt_term_sent(cm.verbs, vt_cm_conn_qp(&c, 0)->qp_num, "0/1/0x00"))
		vt_fail("a Read after ibv_wr_local_inv: no Terminate 0/1/0x00");
	if (peer[0].buf[0] != 0xee)
		vt_fail("a Read after ibv_wr_local_inv placed data");
out:
	if (vt_failures == fails)
		vt_pass("ibv_wr_bind_mw: two type 2 windows in one batch (mw->rkey unchanged), peer Write and Reads; ibv_wr_local_inv; a Read after it: IBV_WC_REM_ACCESS_ERR, Terminate 0/1/00");
	vt_cm_conn_close(&cm, &c);
	for (i = 0; i < 2; i++) {
		if (ibv_dealloc_mw(mw[i]))
			vt_fail("ibv_dealloc_mw: %s", strerror(errno));
		mem_free(&peer[i]);
	}
	mem_free(&own);
}

/*
 * Local Invalidate of a plain MR's rkey on a fresh connection, posted by
 * ibv_wr_local_inv (@builder) or ibv_post_send: its completion status.
 * Before it, ibv_wr_bind_mw of a type 1 window fails its batch.
 */
static bool mr_local_inv(bool builder, enum ibv_wc_status *st)
{
	const char *what = builder ? "ibv_wr_local_inv of an MR" :
				     "IBV_WR_LOCAL_INV of an MR";
	struct ibv_mw *mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind_info bi;
	struct ibv_qp_ex *x;
	struct mem own;
	struct vt_cm_conn c;
	bool ok = false;
	int rv;

	if (!mw1)
		vt_fatal("ibv_alloc_mw: %s", strerror(errno));
	conn_open_ex(&c);
	mem_reg(&own, pd, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND |
			  IBV_ACCESS_REMOTE_WRITE);
	x = qpx_of(&c);
	if (builder) {
		bi = (struct ibv_mw_bind_info){
			.mr = own.mr,
			.addr = (uintptr_t)own.buf,
			.length = VT_PAGE,
			.mw_access_flags = IBV_ACCESS_REMOTE_READ,
		};
		ibv_wr_start(x);
		x->wr_id = 20;
		x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_bind_mw(x, mw1, ibv_inc_rkey(mw1->rkey), &bi);
		rv = ibv_wr_complete(x);
		vt_expect_errno("ibv_wr_bind_mw of a type 1 window", rv != 0,
				rv, EINVAL);
		ibv_wr_start(x);
		x->wr_id = 4;
		x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_local_inv(x, own.mr->rkey);
		rv = ibv_wr_complete(x);
	} else {
		rv = local_inv(&c, own.mr->rkey);
	}
	/* wr_id 4: the type 1 bind posted nothing. */
	if (ok_rv(what, rv) && next_status(&c, 0, what, 4, st))
		ok = true;
	vt_cm_conn_close(&cm, &c);
	if (ibv_dealloc_mw(mw1))
		vt_fail("ibv_dealloc_mw: %s", strerror(errno));
	mem_free(&own);
	return ok;
}

static void check_wr_mr_inv(void)
{
	enum ibv_wc_status post, wr;

	if (!mr_local_inv(false, &post) || !mr_local_inv(true, &wr))
		return;
	if (wr != post || wr != IBV_WC_LOC_PROT_ERR)
		vt_fail("Local Invalidate of an MR: ibv_wr_local_inv %s, ibv_post_send %s, want both IBV_WC_LOC_PROT_ERR",
			ibv_wc_status_str(wr), ibv_wc_status_str(post));
	else
		vt_pass("Local Invalidate of an MR: ibv_wr_local_inv and ibv_post_send both complete with IBV_WC_LOC_PROT_ERR");
}

/* Milliseconds until the passive end of @c sees DISCONNECTED; -1: none. */
static long long passive_disconnected_ms(struct vt_cm_conn *c, long long t0)
{
	struct pollfd pfd = { .fd = cm.ec_listen->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	bool seen = false;

	while (!seen && vt_now_ms() - t0 < VT_POLL_MS) {
		if (poll(&pfd, 1, 100) != 1 ||
		    rdma_get_cm_event(cm.ec_listen, &ev))
			continue;
		seen = ev->id == c->pair.passive &&
		       ev->event == RDMA_CM_EVENT_DISCONNECTED;
		rdma_ack_cm_event(ev);
	}
	return seen ? vt_now_ms() - t0 : -1;
}

/*
 * A graceful close behind a Local Invalidate that completes one RCU grace
 * period late (a type 2 window's always does): rdma_disconnect() right
 * after posting it. The stream must close once the WR completed, so the
 * passive end sees DISCONNECTED long before drain_timeout (63-mw sets 10
 * s), after which the CM would reset the stream.
 */
static void check_close_after_inv(void)
{
	unsigned int fails = vt_failures;
	struct vt_cm_conn c;
	struct ibv_mw *mw;
	struct ibv_wc wc;
	struct mem own;
	long long t0, ms = -1;
	uint32_t rkey;

	conn_open(&c);
	mem_reg(&own, pd, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	if (!mw)
		vt_fatal("ibv_alloc_mw: %s", strerror(errno));
	rkey = ibv_inc_rkey(mw->rkey);
	if (bound(&c, "type 2 bind before a close",
		  bind2(&c, mw, rkey, own.mr, own.buf, VT_PAGE,
			IBV_ACCESS_REMOTE_READ)) &&
	    ok_rv("Local Invalidate before a close", local_inv(&c, rkey))) {
		t0 = vt_now_ms();
		if (rdma_disconnect(c.pair.active))
			vt_fail("rdma_disconnect: %s", strerror(errno));
		else
			ms = passive_disconnected_ms(&c, t0);
		if (ms < 0 || ms > 5000)
			vt_fail("close behind a Local Invalidate of a type 2 window: the peer saw DISCONNECTED after %lld ms (-1: not within %d), want well under drain_timeout",
				ms, VT_POLL_MS);
		expect_wc(&c, 0, "Local Invalidate before a close",
			  IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, &wc);
	}
	if (vt_failures == fails)
		vt_pass("rdma_disconnect right behind a Local Invalidate of a type 2 window: the peer saw DISCONNECTED after %lld ms, the invalidation completed",
			ms);
	vt_cm_conn_close(&cm, &c);
	if (ibv_dealloc_mw(mw))
		vt_fail("ibv_dealloc_mw: %s", strerror(errno));
	mem_free(&own);
}

static void usage(void)
{
	fprintf(stderr, "usage: vt_mw -a ADDR [-p PORT]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct ibv_pd *pd2;
	int k;

	vt_init("vt_mw");
	vt_cm_listen_args(&cm, argc, argv, "7307", usage);
	pd = ibv_alloc_pd(cm.verbs);
	pd2 = ibv_alloc_pd(cm.verbs);
	if (!pd || !pd2)
		vt_fatal("ibv_alloc_pd: %s", strerror(errno));
	check_caps();
	check_good();
	for (k = 0; k < REF_NUM; k++)
		check_refused(k);
	for (k = 0; k < BB_NUM; k++)
		check_bad_bind(k, pd2);
	check_post_refusals();
	check_wr_windows();
	check_wr_mr_inv();
	check_close_after_inv();
	ibv_dealloc_pd(pd2);
	ibv_dealloc_pd(pd);
	vt_cm_close(&cm);
	return vt_exit();
}
