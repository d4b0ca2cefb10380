// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_rerace: a peer's stream of RDMA Writes and Reads racing the owner's
 * change of the memory it targets, kiwi <-> kiwi in one process over
 * rdma_cm (one QP pair per round on ADDR, vt_cm.c).
 *
 *   vt_rerace -a ADDR [-p PORT] [-n ROUNDS] [-D DIR]
 *
 * The passive end owns 64 KiB of memory, all 0xa5, registered (and in
 * window rounds covered by a window: type 2 bound on its QP, or type 1
 * bound with ibv_bind_mw); the active
 * end (a thread) keeps 8 signaled 16 KiB Writes of 0xa5 and Reads under
 * that rkey in flight until one of its WRs fails. After a few ms the
 * owner changes the memory's rights, round by round in turn:
 *  - ibv_rereg_mr(IBV_REREG_MR_CHANGE_TRANSLATION) to other memory;
 *  - ibv_rereg_mr(IBV_REREG_MR_CHANGE_ACCESS), same rights, new keys;
 *  - IBV_WR_LOCAL_INV of the type 2 window, waiting for its completion;
 *  - the peer's Send with Invalidate of the type 2 window, posted by the
 *    active end among its Writes and Reads, waiting for the owner's
 *    receive completion with IBV_WC_WITH_INV;
 *  - a zero-length ibv_bind_mw of the type 1 window (its unbind), waiting
 *    for its completion;
 *  - ibv_dealloc_mw of the type 1 window;
 * and, as soon as the call returns (the completion is polled), overwrites
 * the old memory with a guard pattern, 0x3c. Every access must either
 * complete entirely before the change or be refused: a Write placed, or a
 * Read answered, from the old memory after the change would put 0xa5 in
 * the guard or bring 0x3c back. Checks, per round: the peer's stream
 * ends with an error completion (the owner's Terminate) within 15 s;
 * every Read that succeeded brought 0xa5 only; the guard is intact after
 * the stream ended; the new translation (first kind) is untouched. The
 * scenario checks the kernel log for warnings.
 * -D DIR: kiwi_vmtest.ko's parameters (tests/vm/kmod/README.md). Before
 * each change the next call of kiwi_mr_page spins DELAY_MS at its return
 * (after its state check, before the copy it resolves the page for), and
 * the change comes CHANGE_MS later: a copy that passed its check is held
 * open across the change, which must wait for it.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "vt_cm.h"

#define PAGE 4096
#define LEN (16 * PAGE)
#define IO_LEN (4 * PAGE)
#define DEPTH 8
#define OLD 0xa5
#define GUARD 0x3c
#define END_MS 15000
#define DELAY_MS 60
#define CHANGE_MS 5
#define INV_WR_ID UINT64_MAX	/* the active end's Send with Invalidate */

#define RW (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |		\
	    IBV_ACCESS_REMOTE_READ)

enum kind {
	REREG_TRANS, REREG_ACCESS, MW_INV, MW_REMOTE_INV, MW1_UNBIND,
	MW1_DEALLOC, NKINDS
};

static const char *const kind_name[NKINDS] = {
	"rereg translation", "rereg access", "window invalidation",
	"window invalidated by the peer", "type 1 window unbound",
	"type 1 window deallocated",
};

/* The active end's stream; written by its thread until it is joined. */
struct stream {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	uint32_t rkey;
	uint64_t addr;
	uint8_t *src;		/* IO_LEN of OLD */
	uint8_t *sink;		/* DEPTH slots of IO_LEN */
	struct ibv_mr *mr;	/* over src and sink */
	unsigned int writes, reads, bad_reads, flushed;
	enum ibv_wc_status err;	/* the first failed WR's status */
	bool ended;		/* an error came and everything drained */
	int inv_asked;		/* set by the owner: post the Send with Inv */
	bool inv_posted;
};

static struct vt_cm cm;
static struct ibv_pd *pd;
static const char *vmtest;	/* -D: kiwi_vmtest.ko's parameters */

/* Write @val to kiwi_vmtest's parameter @name. */
static void vmtest_set(const char *name, const char *val)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", vmtest, name);
	f = fopen(path, "w");
	if (!f || fputs(val, f) == EOF || fclose(f))
		vt_fatal("cannot write %s: %s", path, strerror(errno));
}

/* kiwi_vmtest's count of delays that ran. */
static long vmtest_delays(void)
{
	char path[256];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/delays", vmtest);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%ld", &n) != 1)
		vt_fatal("cannot read %s", path);
	fclose(f);
	return n;
}

static size_t count_not(const uint8_t *p, size_t len, uint8_t val)
{
	size_t n = 0;

	while (len--)
		n += *p++ != val;
	return n;
}

/* Post WR @k: even a Write, odd a Read, at the k-th IO_LEN of the target. */
static int post_io(struct stream *s, uint64_t k)
{
	uint64_t raddr = s->addr + (k / 2 % (LEN / IO_LEN)) * IO_LEN;

	if (k & 1)
		return vt_post_rdma(s->qp, IBV_WR_RDMA_READ, k,
				    s->sink + (k % DEPTH) * IO_LEN, IO_LEN,
				    s->mr->lkey, raddr, s->rkey);
	return vt_post_rdma(s->qp, IBV_WR_RDMA_WRITE, k, s->src, IO_LEN,
			    s->mr->lkey, raddr, s->rkey);
}

/* The active end's Send with Invalidate of the window it streams into. */
static int post_remote_inv(struct stream *s)
{
	struct ibv_send_wr wr = { .wr_id = INV_WR_ID,
				  .opcode = IBV_WR_SEND_WITH_INV,
				  .send_flags = IBV_SEND_SIGNALED,
				  .invalidate_rkey = s->rkey }, *bad;

	s->inv_posted = true;
	return ibv_post_send(s->qp, &wr, &bad);
}

static void account(struct stream *s, const struct ibv_wc *wc)
{
	uint8_t *slot = s->sink + (wc->wr_id % DEPTH) * IO_LEN;

	if (wc->wr_id == INV_WR_ID && wc->status == IBV_WC_SUCCESS)
		return;
	if (wc->status != IBV_WC_SUCCESS) {
		if (s->err == IBV_WC_SUCCESS)
			s->err = wc->status;
		s->flushed += wc->status == IBV_WC_WR_FLUSH_ERR;
	} else if (wc->wr_id & 1) {
		s->reads++;
		s->bad_reads += count_not(slot, IO_LEN, OLD) != 0;
	} else {
		s->writes++;
	}
}

/* The active end: keep DEPTH WRs in flight until one fails; drain. */
static void *run_stream(void *arg)
{
	struct stream *s = arg;
	long long end = vt_now_ms() + END_MS;
	uint64_t next = 0, done = 0;
	struct ibv_wc wc;
	int n;

	while (vt_now_ms() < end) {
		if (s->err == IBV_WC_SUCCESS && !s->inv_posted &&
		    __atomic_load_n(&s->inv_asked, __ATOMIC_ACQUIRE)) {
			next++;
			if (post_remote_inv(s))
				s->err = IBV_WC_GENERAL_ERR;
		}
		while (s->err == IBV_WC_SUCCESS && next - done < DEPTH)
			if (post_io(s, next++))
				s->err = IBV_WC_GENERAL_ERR;
		if (s->err != IBV_WC_SUCCESS && done == next)
			break;
		n = ibv_poll_cq(s->cq, 1, &wc);
		if (n < 0)
			break;
		if (n == 0) {
			usleep(50);
			continue;
		}
		done++;
		account(s, &wc);
	}
	s->ended = s->err != IBV_WC_SUCCESS && done == next;
	return NULL;
}

/*
 * Bind a type 2 window over all of @mr on the owner's @qp under *@rkey
 * (mw->rkey is left as it was).
 */
static struct ibv_mw *bind_window(struct ibv_qp *qp, struct ibv_cq *cq,
				  struct ibv_mr *mr, uint32_t *rkey)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	if (!mw)
		vt_fatal("ibv_alloc_mw: %s", strerror(errno));
	wr.bind_mw.mw = mw;
	*rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.rkey = *rkey;
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = mr, .addr = (uintptr_t)mr->addr, .length = LEN,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	if (ibv_post_send(qp, &wr, &bad) || !vt_poll_one(cq, &wc, 10000) ||
	    wc.status != IBV_WC_SUCCESS)
		vt_fatal("bind of the window failed");
	return mw;
}

/*
 * ibv_bind_mw of type 1 window @mw to @info (all zero: unbind it) with the
 * owner's @qp, its completion polled.
 */
static void bind_type1(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mw *mw,
		       const struct ibv_mw_bind_info *info)
{
	struct ibv_mw_bind b = { .wr_id = 3, .send_flags = IBV_SEND_SIGNALED,
				 .bind_info = *info };
	struct ibv_wc wc;

	if (ibv_bind_mw(qp, mw, &b) || !vt_poll_one(cq, &wc, 10000) ||
	    wc.status != IBV_WC_SUCCESS)
		vt_fatal("%s of the type 1 window failed",
			 info->length ? "bind" : "zero-length bind");
}

/*
 * The owner's receive of the peer's Send with Invalidate of @rkey: asks
 * the active end's thread for it and polls the completion.
 */
static void remote_invalidate(struct stream *s, struct ibv_cq *cq,
			      uint32_t rkey)
{
	struct ibv_wc wc;

	__atomic_store_n(&s->inv_asked, 1, __ATOMIC_RELEASE);
	if (!vt_poll_one(cq, &wc, 10000) || wc.status != IBV_WC_SUCCESS ||
	    wc.opcode != IBV_WC_RECV || !(wc.wc_flags & IBV_WC_WITH_INV) ||
	    wc.invalidated_rkey != rkey)
		vt_fatal("no receive of the peer's Send with Invalidate of 0x%x",
			 rkey);
}

static void invalidate(struct ibv_qp *qp, struct ibv_cq *cq, uint32_t rkey)
{
	struct ibv_send_wr wr = { .wr_id = 2, .opcode = IBV_WR_LOCAL_INV,
				  .send_flags = IBV_SEND_SIGNALED,
				  .invalidate_rkey = rkey }, *bad;
	struct ibv_wc wc;

	if (ibv_post_send(qp, &wr, &bad) || !vt_poll_one(cq, &wc, 10000) ||
	    wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_LOCAL_INV)
		vt_fatal("IBV_WR_LOCAL_INV of the window failed");
}

/*
 * The owner's change of @kind (MR @mr, window *@mw under the stream's
 * rkey); done on return. A deallocated window is gone from *@mw.
 */
static void change(enum kind kind, struct ibv_mr *mr, struct ibv_mw **mw,
		   struct stream *s, uint8_t *other, const struct vt_cm_conn *c)
{
	int rc = 0;

	switch (kind) {
	case REREG_TRANS:
		rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
				  other, LEN, 0);
		break;
	case REREG_ACCESS:
		rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				  RW);
		break;
	case MW_INV:
		invalidate(vt_cm_conn_qp(c, 1), c->cq[1], s->rkey);
		break;
	case MW_REMOTE_INV:
		remote_invalidate(s, c->cq[1], s->rkey);
		break;
	case MW1_UNBIND:
		bind_type1(vt_cm_conn_qp(c, 1), c->cq[1], *mw,
			   &(struct ibv_mw_bind_info){ 0 });
		break;
	default:
		rc = ibv_dealloc_mw(*mw);
		*mw = NULL;
	}
	if (rc)
		vt_fatal("%s: %d (%s)", kind_name[kind], rc, strerror(errno));
}

static void judge(unsigned int round, enum kind kind, const struct stream *s,
		  const uint8_t *old, const uint8_t *other)
{
	unsigned int bad = vt_failures;
	size_t n;

	if (!s->ended)
		vt_fail("round %u (%s): the peer's stream did not end with an error within %d ms",
			round, kind_name[kind], END_MS);
	if (s->bad_reads)
		vt_fail("round %u (%s): %u Read(s) brought memory of after the change",
			round, kind_name[kind], s->bad_reads);
	n = count_not(old, LEN, GUARD);
	if (n)
		vt_fail("round %u (%s): %zu octet(s) of the guard overwritten after the change",
			round, kind_name[kind], n);
	if (kind == REREG_TRANS && count_not(other, LEN, 0))
		vt_fail("round %u (%s): the new translation was written",
			round, kind_name[kind]);
	if (vt_failures == bad)
		vt_pass("round %u (%s): %u Writes and %u Reads before the change, then %s (%u flushed); guard intact",
			round, kind_name[kind], s->writes, s->reads,
			ibv_wc_status_str(s->err), s->flushed);
}

static void run_round(unsigned int round, uint8_t *sbuf, struct ibv_mr *smr)
{
	enum kind kind = round % NKINDS;
	struct stream s = { .src = sbuf, .sink = sbuf + IO_LEN, .mr = smr };
	uint8_t *old, *other;
	struct ibv_mw *mw = NULL;
	struct vt_cm_conn c;
	struct ibv_mr *mr;
	pthread_t t;

	if (posix_memalign((void **)&old, PAGE, LEN) ||
	    posix_memalign((void **)&other, PAGE, LEN))
		vt_fatal("posix_memalign failed");
	memset(old, OLD, LEN);
	memset(other, 0, LEN);
	mr = ibv_reg_mr(pd, old, LEN, RW | IBV_ACCESS_MW_BIND);
	if (!mr)
		vt_fatal("ibv_reg_mr: %s", strerror(errno));
	vt_cm_conn_open(&cm, &c, pd, 4 * DEPTH, 2 * DEPTH);
	s.qp = vt_cm_conn_qp(&c, 0);
	s.cq = c.cq[0];
	s.addr = (uintptr_t)old;
	s.rkey = mr->rkey;
	if (kind == MW_INV || kind == MW_REMOTE_INV)
		mw = bind_window(vt_cm_conn_qp(&c, 1), c.cq[1], mr, &s.rkey);
	if (kind == MW1_UNBIND || kind == MW1_DEALLOC) {
		mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
		if (!mw)
			vt_fatal("ibv_alloc_mw(type 1): %s", strerror(errno));
		bind_type1(vt_cm_conn_qp(&c, 1), c.cq[1], mw,
			   &(struct ibv_mw_bind_info){
				   .mr = mr, .addr = (uintptr_t)old,
				   .length = LEN,
				   .mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
						      IBV_ACCESS_REMOTE_READ });
		s.rkey = mw->rkey;
	}
	if (kind == MW_REMOTE_INV) {
		struct ibv_recv_wr rwr = { .wr_id = 5 }, *rbad;

		if (ibv_post_recv(vt_cm_conn_qp(&c, 1), &rwr, &rbad))
			vt_fatal("ibv_post_recv: %s", strerror(errno));
	}
	if (pthread_create(&t, NULL, run_stream, &s))
		vt_fatal("pthread_create failed");
	usleep(2000 + (round * 7919 % 20) * 1000);
	if (vmtest) {
		char rule[64];

		snprintf(rule, sizeof(rule), "kiwi_mr_page@ret,%d,1",
			 DELAY_MS);
		vmtest_set("delay", rule);
		usleep(CHANGE_MS * 1000);
	}
	change(kind, mr, &mw, &s, other, &c);
	memset(old, GUARD, LEN);
	pthread_join(t, NULL);
	if (vmtest)
		vmtest_set("delay", "off");
	judge(round, kind, &s, old, other);
	vt_cm_conn_close(&cm, &c);
	if (mw && ibv_dealloc_mw(mw))
		vt_fail("ibv_dealloc_mw: %s", strerror(errno));
	if (ibv_dereg_mr(mr))
		vt_fail("ibv_dereg_mr: %s", strerror(errno));
	free(old);
	free(other);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: vt_rerace -a ADDR [-p PORT] [-n ROUNDS] [-D DIR]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned int rounds = 24, i;
	long d0 = 0;
	struct ibv_mr *smr;
	uint8_t *sbuf;
	int o, j = 1;

	vt_init("vt_rerace");
	/* -n and -D first; vt_cm_listen_args takes -a and -p from the rest. */
	for (o = 1; o < argc; o++) {
		if (!strcmp(argv[o], "-n") && o + 1 < argc)
			rounds = (unsigned int)vt_ulong("-n", argv[++o]);
		else if (!strcmp(argv[o], "-D") && o + 1 < argc)
			vmtest = argv[++o];
		else
			argv[j++] = argv[o];
	}
	argv[j] = NULL;
	argc = j;
	vt_cm_listen_args(&cm, argc, argv, "7310", usage);
	pd = ibv_alloc_pd(cm.verbs);
	if (!pd || posix_memalign((void **)&sbuf, PAGE, (DEPTH + 1) * IO_LEN))
		vt_fatal("ibv_alloc_pd: %s", strerror(errno));
	memset(sbuf, OLD, IO_LEN);
	smr = ibv_reg_mr(pd, sbuf, (DEPTH + 1) * IO_LEN,
			 IBV_ACCESS_LOCAL_WRITE);
	if (!smr)
		vt_fatal("ibv_reg_mr: %s", strerror(errno));
	if (vmtest)
		d0 = vmtest_delays();
	for (i = 0; i < rounds; i++)
		run_round(i, sbuf, smr);
	if (vmtest)
		printf("vt_rerace: %ld copies held open %d ms across the change\n",
		       vmtest_delays() - d0, DELAY_MS);
	ibv_dereg_mr(smr);
	ibv_dealloc_pd(pd);
	vt_cm_close(&cm);
	return vt_exit();
}
