// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_rereg: ibv_rereg_mr through libibverbs, kiwi <-> kiwi in one process
 * over rdma_cm (QP pairs on ADDR, vt_cm.c). The active end of each
 * connection owns the MR; the passive end is the peer that reads and
 * writes it.
 *
 *   vt_rereg -a ADDR [-p PORT]
 *
 * Checks, each named on stdout or stderr:
 *  - IBV_REREG_MR_CHANGE_ACCESS: new keys (lkey == rkey, another index);
 *    remote write removed: the peer's Read under the new rkey works, its
 *    Write is refused; remote read removed: the peer's Read is refused
 *    (IBV_WC_REM_ACCESS_ERR); the old rkey is refused; write rights added
 *    to an MR registered read-only: the peer's Write lands;
 *  - IBV_REREG_MR_CHANGE_TRANSLATION: mr->addr and mr->length follow, the
 *    peer's Write under the new rkey lands in the new buffer and not in
 *    the old one, an address of the old buffer is refused (bounds);
 *  - IBV_REREG_MR_CHANGE_PD: mr->pd follows, a QP of the new PD reads the
 *    MR, a QP of the old PD is refused;
 *  - refusals that leave the MR as it was (keys unchanged, the peer still
 *    reads it): remote write without local write (EINVAL), no flag
 *    (EINVAL), on-demand paging (EINVAL: ib_core), a zero-based MR
 *    (EOPNOTSUPP: kiwi), a memory window bound to the MR (EBUSY; it works
 *    once the window is gone), a translation to unmapped memory (EFAULT).
 * Every refused remote access is made on a fresh connection: the owner's
 * QP sends the Terminate of the error (`rdma res show qp -dd`,
 * drv_term_sent), the owner's memory is unchanged, a Read completes with
 * IBV_WC_REM_ACCESS_ERR and a Write completes (it did when it was sent).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vt_cm.h"

#define VT_CQ_DEPTH 16
#define VT_POLL_MS 20000
#define VT_PAGE 4096
#define VT_LEN (2 * VT_PAGE)

#define RW (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |		\
	    IBV_ACCESS_REMOTE_READ)

/* Terminates (layer/type/code) the owner's QP sends. */
#define TERM_RIGHTS "0/1/0x02"		/* RDMAP access rights violation */
#define TERM_STAG_READ "0/1/0x00"	/* RDMAP invalid STag (Read) */
#define TERM_BOUNDS "1/1/0x01"		/* DDP tagged base or bounds */
#define TERM_STREAM "1/1/0x02"		/* DDP STag not on this stream */

static struct vt_cm cm;
static struct ibv_pd *pd, *pd2;

/* A page-aligned buffer of VT_LEN octets and the MR over it. */
struct mem {
	uint8_t *buf;
	struct ibv_mr *mr;
};

static uint8_t *buf_new(uint8_t fill)
{
	uint8_t *b;

	if (posix_memalign((void **)&b, VT_PAGE, VT_LEN))
		vt_fatal("posix_memalign failed");
	memset(b, fill, VT_LEN);
	return b;
}

static void mem_reg(struct mem *m, struct ibv_pd *in, int access, uint8_t fill)
{
	m->buf = buf_new(fill);
	m->mr = ibv_reg_mr(in, m->buf, VT_LEN, access);
	if (!m->mr)
		vt_fatal("ibv_reg_mr: %s", strerror(errno));
}

static void mem_free(struct mem *m)
{
	if (ibv_dereg_mr(m->mr))
		vt_fail("ibv_dereg_mr: %s", strerror(errno));
	free(m->buf);
}

/* The peer's Write or Read of @len octets of @local at @raddr, @rkey. */
static int peer_rdma(struct vt_cm_conn *c, enum ibv_wr_opcode op,
		     struct mem *local, size_t len, uint64_t raddr,
		     uint32_t rkey)
{
	return vt_post_rdma(vt_cm_conn_qp(c, 1), op, 1, local->buf,
			    (uint32_t)len, local->mr->lkey, raddr, rkey);
}

/*
 * The peer's Write or Read of a page at @raddr under @rkey, on a fresh
 * connection in @qpd, succeeds; the peer's buffer holds @fill before, so a
 * Read must change it.
 */
static bool peer_ok(const char *what, struct ibv_pd *qpd,
		    enum ibv_wr_opcode op, uint8_t fill, uint64_t raddr,
		    uint32_t rkey)
{
	struct vt_cm_conn c;
	struct mem local;
	struct ibv_wc wc;
	bool ok = false;
	int rv;

	vt_cm_conn_open(&cm, &c, qpd, VT_CQ_DEPTH, 4);
	mem_reg(&local, qpd, IBV_ACCESS_LOCAL_WRITE, fill);
	rv = peer_rdma(&c, op, &local, VT_PAGE, raddr, rkey);
	if (rv)
		vt_fail("%s: ibv_post_send: %s", what, strerror(rv));
	else if (!vt_poll_one(c.cq[1], &wc, VT_POLL_MS))
		vt_fail("%s: no completion", what);
	else if (wc.status != IBV_WC_SUCCESS)
		vt_fail("%s: status %s", what, ibv_wc_status_str(wc.status));
	else if (op == IBV_WR_RDMA_READ && local.buf[0] == fill)
		vt_fail("%s: the Read brought nothing", what);
	else
		ok = true;
	vt_cm_conn_close(&cm, &c);
	mem_free(&local);
	return ok;
}

/*
 * A refused access on a fresh connection in @qpd: a Read completes with
 * IBV_WC_REM_ACCESS_ERR, a Write completes; the owner's QP sends @term;
 * the owner's @m is unchanged.
 */
static void refused(const char *what, struct ibv_pd *qpd,
		    enum ibv_wr_opcode op, const struct mem *m,
		    uint64_t raddr, uint32_t rkey, const char *term)
{
	unsigned int fails = vt_failures;
	uint8_t before[VT_LEN];
	struct vt_cm_conn c;
	struct mem local;
	struct ibv_wc wc;
	int rv;

	memcpy(before, m->buf, VT_LEN);
	vt_cm_conn_open(&cm, &c, qpd, VT_CQ_DEPTH, 4);
	mem_reg(&local, qpd, IBV_ACCESS_LOCAL_WRITE, 0xee);
	rv = peer_rdma(&c, op, &local, VT_PAGE, raddr, rkey);
	if (rv) {
		vt_fail("%s: ibv_post_send: %s", what, strerror(rv));
	} else {
		if (!vt_poll_one(c.cq[1], &wc, VT_POLL_MS))
			vt_fail("%s: no completion", what);
		else if (op == IBV_WR_RDMA_READ ?
			 wc.status != IBV_WC_REM_ACCESS_ERR :
			 wc.status != IBV_WC_SUCCESS &&
			 wc.status != IBV_WC_WR_FLUSH_ERR)
			vt_fail("%s: status %s", what,
				ibv_wc_status_str(wc.status));
		if (!vt_term_sent(cm.verbs, vt_cm_conn_qp(&c, 0)->qp_num, term))
			vt_fail("%s: the owner's QP did not send Terminate %s",
				what, term);
	}
	if (memcmp(before, m->buf, VT_LEN))
		vt_fail("%s: the owner's memory changed", what);
	if (vt_failures == fails)
		vt_pass("%s: refused, Terminate %s%s, memory unchanged", what,
			term, op == IBV_WR_RDMA_READ ?
			", IBV_WC_REM_ACCESS_ERR" : "");
	vt_cm_conn_close(&cm, &c);
	mem_free(&local);
}

/* ibv_rereg_mr that must succeed with new keys; false after a failure. */
static bool rereg_ok(const char *what, struct mem *m, int flags,
		     struct ibv_pd *npd, void *addr, size_t len, int access)
{
	uint32_t old = m->mr->rkey;
	int rv = ibv_rereg_mr(m->mr, flags, npd, addr, len, access);

	if (rv) {
		vt_fail("%s: ibv_rereg_mr returned %d: %s", what, rv,
			strerror(errno));
		return false;
	}
	if (m->mr->lkey != m->mr->rkey || m->mr->rkey == old ||
	    m->mr->rkey >> 8 == old >> 8) {
		vt_fail("%s: keys lkey 0x%x rkey 0x%x after 0x%x", what,
			m->mr->lkey, m->mr->rkey, old);
		return false;
	}
	return true;
}

static uint64_t addr_of(const void *p)
{
	return (uintptr_t)p;
}

/* Remote write taken away: Read works, Write and the old rkey refused. */
static void check_access_less(void)
{
	unsigned int fails = vt_failures;
	struct mem m;
	uint32_t old;

	mem_reg(&m, pd, RW, 0x11);
	old = m.mr->rkey;
	if (!rereg_ok("CHANGE_ACCESS to remote read", &m,
		      IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
		      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ))
		goto out;
	if (peer_ok("CHANGE_ACCESS to remote read: the peer reads", pd,
		    IBV_WR_RDMA_READ, 0xee, addr_of(m.buf), m.mr->rkey) && vt_failures == fails)
		vt_pass("CHANGE_ACCESS to remote read: new keys 0x%x -> 0x%x, the peer's Read works",
			old, m.mr->rkey);
	refused("CHANGE_ACCESS to remote read: the peer's Write", pd,
		IBV_WR_RDMA_WRITE, &m, addr_of(m.buf), m.mr->rkey,
		TERM_RIGHTS);
	refused("CHANGE_ACCESS: a Read under the old rkey", pd,
		IBV_WR_RDMA_READ, &m, addr_of(m.buf), old, TERM_STAG_READ);
	if (!rereg_ok("CHANGE_ACCESS to remote write", &m,
		      IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
		      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE))
		goto out;
	refused("CHANGE_ACCESS to remote write: the peer's Read", pd,
		IBV_WR_RDMA_READ, &m, addr_of(m.buf), m.mr->rkey,
		TERM_RIGHTS);
out:
	mem_free(&m);
}

/* Write rights added to an MR registered read-only (pinned read-only). */
static void check_access_more(void)
{
	unsigned int fails = vt_failures;
	struct mem m;
	size_t i;

	mem_reg(&m, pd, 0, 0);
	if (!rereg_ok("CHANGE_ACCESS from read-only to remote write", &m,
		      IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, RW))
		goto out;
	if (!peer_ok("CHANGE_ACCESS from read-only: the peer writes", pd,
		     IBV_WR_RDMA_WRITE, 0x5a, addr_of(m.buf + VT_PAGE),
		     m.mr->rkey) ||
	    !peer_ok("CHANGE_ACCESS from read-only: the peer reads back", pd,
		     IBV_WR_RDMA_READ, 0, addr_of(m.buf + VT_PAGE),
		     m.mr->rkey))
		goto out;
	for (i = 0; i < VT_LEN && m.buf[i] == (i < VT_PAGE ? 0 : 0x5a); i++)
		;
	if (i != VT_LEN)
		vt_fail("CHANGE_ACCESS from read-only: the Write did not land (octet %zu is 0x%x)",
			i, m.buf[i]);
	else if (vt_failures == fails)
		vt_pass("CHANGE_ACCESS from read-only to remote write: the peer's Write landed");
out:
	mem_free(&m);
}

/* A new buffer behind the MR. */
static void check_translation(void)
{
	unsigned int fails = vt_failures;
	uint8_t *b = buf_new(0);
	struct mem m;
	size_t i;

	mem_reg(&m, pd, RW, 0);
	if (!rereg_ok("CHANGE_TRANSLATION", &m,
		      IBV_REREG_MR_CHANGE_TRANSLATION, NULL, b, VT_PAGE, 0))
		goto out;
	if (m.mr->addr != b || m.mr->length != VT_PAGE)
		vt_fail("CHANGE_TRANSLATION: mr addr %p length %zu, want %p %d",
			m.mr->addr, m.mr->length, (void *)b, VT_PAGE);
	if (!peer_ok("CHANGE_TRANSLATION: the peer writes", pd,
		     IBV_WR_RDMA_WRITE, 0x77, addr_of(b), m.mr->rkey) ||
	    !peer_ok("CHANGE_TRANSLATION: the peer reads back", pd,
		     IBV_WR_RDMA_READ, 0, addr_of(b), m.mr->rkey))
		goto out;
	for (i = 0; i < VT_PAGE && b[i] == 0x77; i++)
		;
	if (i != VT_PAGE || b[VT_PAGE])
		vt_fail("CHANGE_TRANSLATION: the new buffer holds 0x%x at %zu",
			b[i], i);
	for (i = 0; i < VT_LEN && m.buf[i] == 0; i++)
		;
	if (i != VT_LEN)
		vt_fail("CHANGE_TRANSLATION: the old buffer changed at %zu", i);
	else if (vt_failures == fails)
		vt_pass("CHANGE_TRANSLATION: mr->addr and length follow, the peer's Write landed in the new buffer only");
	free(m.buf);
	m.buf = b;
	b = NULL;
	refused("CHANGE_TRANSLATION: a Write past the new length", pd,
		IBV_WR_RDMA_WRITE, &m, addr_of(m.buf + VT_PAGE), m.mr->rkey,
		TERM_BOUNDS);
out:
	free(b);
	mem_free(&m);
}

/* The MR moves to another PD. */
static void check_pd(void)
{
	unsigned int fails = vt_failures;
	struct mem m;

	mem_reg(&m, pd, RW, 0x22);
	if (!rereg_ok("CHANGE_PD", &m, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0,
		      0))
		goto out;
	if (m.mr->pd != pd2)
		vt_fail("CHANGE_PD: mr->pd not the new PD");
	if (peer_ok("CHANGE_PD: a QP of the new PD reads", pd2,
		    IBV_WR_RDMA_READ, 0xee, addr_of(m.buf), m.mr->rkey) && vt_failures == fails)
		vt_pass("CHANGE_PD: mr->pd follows, a QP of the new PD reads the MR");
	refused("CHANGE_PD: a Write from a QP of the old PD", pd,
		IBV_WR_RDMA_WRITE, &m, addr_of(m.buf), m.mr->rkey,
		TERM_STREAM);
out:
	mem_free(&m);
}

/*
 * ibv_rereg_mr fails with @want_errno and leaves @m as it was: same keys,
 * and the peer still reads it.
 */
static void rereg_refused(const char *what, struct mem *m, int flags,
			  void *addr, size_t len, int access, int want_errno)
{
	unsigned int fails = vt_failures;
	uint32_t lkey = m->mr->lkey, rkey = m->mr->rkey;
	void *maddr = m->mr->addr;
	int rv;

	errno = 0;
	rv = ibv_rereg_mr(m->mr, flags, pd, addr, len, access);
	if (rv != IBV_REREG_MR_ERR_CMD || errno != want_errno)
		vt_fail("%s: ibv_rereg_mr returned %d (%s), want %d (%s)", what,
			rv, strerror(errno), IBV_REREG_MR_ERR_CMD,
			strerror(want_errno));
	if (m->mr->lkey != lkey || m->mr->rkey != rkey ||
	    m->mr->addr != maddr)
		vt_fail("%s: the MR changed", what);
	if (peer_ok(what, pd, IBV_WR_RDMA_READ, 0xee, addr_of(m->buf), rkey) &&
	    vt_failures == fails)
		vt_pass("%s: %s, the MR unchanged and readable", what,
			strerror(want_errno));
}

static void check_refusals(void)
{
	struct ibv_mw_bind b = { .wr_id = 9, .send_flags = IBV_SEND_SIGNALED };
	struct vt_cm_conn c;
	struct ibv_wc wc;
	struct ibv_mw *mw;
	struct mem m;
	void *gone;

	mem_reg(&m, pd, RW | IBV_ACCESS_MW_BIND, 0x33);
	rereg_refused("remote write without local write", &m,
		      IBV_REREG_MR_CHANGE_ACCESS, NULL, 0,
		      IBV_ACCESS_REMOTE_WRITE, EINVAL);
	rereg_refused("no flag", &m, 0, NULL, 0, 0, EINVAL);
	rereg_refused("on-demand paging", &m, IBV_REREG_MR_CHANGE_ACCESS,
		      NULL, 0, RW | IBV_ACCESS_ON_DEMAND, EINVAL);
	rereg_refused("a zero-based MR", &m, IBV_REREG_MR_CHANGE_ACCESS,
		      NULL, 0, RW | IBV_ACCESS_ZERO_BASED, EOPNOTSUPP);
	gone = mmap(NULL, VT_LEN, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (gone == MAP_FAILED || munmap(gone, VT_LEN))
		vt_fatal("mmap/munmap: %s", strerror(errno));
	rereg_refused("translation to unmapped memory", &m,
		      IBV_REREG_MR_CHANGE_TRANSLATION, gone, VT_LEN, 0, EFAULT);

	vt_cm_conn_open(&cm, &c, pd, VT_CQ_DEPTH, 4);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	if (!mw)
		vt_fatal("ibv_alloc_mw: %s", strerror(errno));
	b.bind_info = (struct ibv_mw_bind_info){
		.mr = m.mr, .addr = addr_of(m.buf), .length = VT_PAGE,
		.mw_access_flags = IBV_ACCESS_REMOTE_READ,
	};
	if (ibv_bind_mw(vt_cm_conn_qp(&c, 0), mw, &b) ||
	    !vt_poll_one(c.cq[0], &wc, VT_POLL_MS) ||
	    wc.status != IBV_WC_SUCCESS)
		vt_fail("a window bound to the MR: the bind failed");
	else
		rereg_refused("a window bound to the MR", &m,
			      IBV_REREG_MR_CHANGE_ACCESS, NULL, 0, RW, EBUSY);
	if (ibv_dealloc_mw(mw))
		vt_fail("ibv_dealloc_mw: %s", strerror(errno));
	vt_cm_conn_close(&cm, &c);
	if (rereg_ok("once the window is gone", &m, IBV_REREG_MR_CHANGE_ACCESS,
		     NULL, NULL, 0, RW))
		vt_pass("once the window is gone: ibv_rereg_mr succeeds");
	mem_free(&m);
}

static void usage(void)
{
	fprintf(stderr, "usage: vt_rereg -a ADDR [-p PORT]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	vt_init("vt_rereg");
	vt_cm_listen_args(&cm, argc, argv, "7307", usage);
	pd = ibv_alloc_pd(cm.verbs);
	pd2 = ibv_alloc_pd(cm.verbs);
	if (!pd || !pd2)
		vt_fatal("ibv_alloc_pd: %s", strerror(errno));
	check_access_less();
	check_access_more();
	check_translation();
	check_pd();
	check_refusals();
	ibv_dealloc_pd(pd2);
	ibv_dealloc_pd(pd);
	vt_cm_close(&cm);
	return vt_exit();
}
