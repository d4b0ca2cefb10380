// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_exverbs: the extended verbs API through libibverbs, kiwi <-> kiwi in
 * one process over rdma_cm (one QP pair on ADDR, vt_cm.c).
 *
 *   vt_exverbs -a ADDR [-p PORT]
 *
 * Checks, each named on stdout or stderr:
 *  - ibv_query_device_ex: orig_attr equals ibv_query_device's, the
 *    extended capability flags extend its flags, no completion timestamps,
 *    atomic_cap IBV_ATOMIC_GLOB; an input comp_mask is EINVAL;
 *  - ibv_create_cq_ex refuses timestamps, CVLAN, flow tag and tag matching
 *    wc_flags, IGNORE_OVERRUN and parent domains (EOPNOTSUPP) and unknown
 *    comp_mask and flag bits (EINVAL); ibv_create_qp_ex refuses the
 *    send_ops_flags of TSO and the atomic write, XRC and creation flags
 *    (EOPNOTSUPP), unknown comp_mask bits (EINVAL) and a UD QP; a QP
 *    without IBV_QP_INIT_ATTR_SEND_OPS_FLAGS has no ibv_qp_ex (the window
 *    builders, ibv_wr_bind_mw and ibv_wr_local_inv, are vt_mw's);
 *  - both ends use ibv_create_cq_ex CQs (the requester's single-threaded,
 *    with IBV_WC_STANDARD_FLAGS) and ibv_create_qp_ex QPs; every
 *    completion is read with ibv_start_poll/next_poll/end_poll and the
 *    read_* accessors (opcode, vendor_err, byte_len, imm_data or the
 *    invalidated rkey, qp_num, src_qp, wc_flags, slid, sl, path bits);
 *  - one batch of seven WRs between ibv_wr_start and ibv_wr_complete:
 *    Sends with wr_set_sge, wr_set_sge_list, wr_set_inline_data (its
 *    buffer scribbled over before ibv_wr_complete), an unsignaled
 *    wr_set_inline_data_list, RDMA Write, Write with Immediate, Send with
 *    Immediate; nothing reaches the peer before ibv_wr_complete, which
 *    makes one write(2) (the doorbell; counted in /proc/self/io); the
 *    completions' order, opcodes, lengths, flags and immediate values and
 *    the data at the responder;
 *  - RDMA Read; Fetch-and-Add and two Compare-and-Swaps (one that fails)
 *    in one fenced batch: results and the target's final value;
 *  - ibv_wr_abort and batches that fail in ibv_wr_complete (an atomic
 *    with a 4-octet result, a Send with Immediate with payload, too much
 *    inline data, too many SGEs, ibv_wr_bind_mw of no window) post nothing: no
 *    system call, neither end sees a completion, and the next batch's WR is the first to arrive;
 *  - ibv_post_send on the extended QP and ibv_poll_cq on the extended CQ;
 *  - wr_send_inv naming a user MR of the responder, which kiwi does not
 *    let a peer invalidate (only fast-reg MRs): no receive succeeds (the
 *    responder Terminates, "STag cannot be invalidated", which the
 *    scenario finds in the kernel log) and an error status arrives
 *    through the extended CQ. This breaks the connection, so it comes
 *    last.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stdint.h>
#include <unistd.h>

#include "vt_cm.h"

#define CQ_DEPTH 64
#define POLL_MS 10000
#define QUIET_MS 300
#define BUF_LEN 16384
#define RECV_LEN 256
#define NRECV 16
#define WR_OFF 8192	/* at the responder: RDMA Write/Read target */
#define AT_OFF 12288	/* at the responder: the atomic word */
#define RES_OFF 12288	/* at the requester: atomic results */
#define RD_OFF 4096	/* at the requester: RDMA Read sink */
#define INV_OFF 14336	/* at the responder: the MR to invalidate */
#define INV_LEN 64

static struct vt_cm cm;
static struct ibv_pd *pd;
static struct vt_cm_pair pair;

/* One end: A (active) requests, B (passive) responds and receives. */
struct end {
	const char *name;
	struct ibv_cq_ex *cq;
	bool standard;		/* CQ made with IBV_WC_STANDARD_FLAGS */
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	struct ibv_qp_cap cap;	/* what the QP was granted */
	uint8_t *buf;
	struct ibv_mr *mr;
};
static struct end A = { .name = "requester", .standard = true };
static struct end B = { .name = "responder" };

/* One completion as the ibv_cq_ex accessors report it. */
struct got {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t vendor_err, byte_len, qp_num, src_qp, imm, slid;
	unsigned int wc_flags;
	uint8_t sl, path_bits;
};

static void read_one(const struct end *e, struct got *g)
{
	struct ibv_cq_ex *cq = e->cq;

	g->wr_id = cq->wr_id;
	g->status = cq->status;
	g->opcode = ibv_wc_read_opcode(cq);
	g->vendor_err = ibv_wc_read_vendor_err(cq);
	g->byte_len = ibv_wc_read_byte_len(cq);
	g->qp_num = ibv_wc_read_qp_num(cq);
	g->src_qp = ibv_wc_read_src_qp(cq);
	g->wc_flags = ibv_wc_read_wc_flags(cq);
	if (g->wc_flags & IBV_WC_WITH_INV)
		g->imm = ibv_wc_read_invalidated_rkey(cq);
	else if (g->wc_flags & IBV_WC_WITH_IMM)
		g->imm = ntohl(ibv_wc_read_imm_data(cq));
	else
		g->imm = 0;
	if (e->standard) {
		g->slid = ibv_wc_read_slid(cq);
		g->sl = ibv_wc_read_sl(cq);
		g->path_bits = ibv_wc_read_dlid_path_bits(cq);
	} else {
		g->slid = g->sl = g->path_bits = 0;
	}
}

/* Up to n completions of e's CQ within ms; returns how many. */
static int poll_ex(const struct end *e, struct got *g, int n, int ms)
{
	struct ibv_poll_cq_attr attr = { .comp_mask = 0 };
	long long end = vt_now_ms() + ms;
	int got = 0, rc;

	while (got < n) {
		rc = ibv_start_poll(e->cq, &attr);
		if (rc == ENOENT) {
			if (vt_now_ms() > end)
				break;
			usleep(200);
			continue;
		}
		if (rc) {
			vt_fail("%s: ibv_start_poll: %s", e->name, strerror(rc));
			break;
		}
		do {
			read_one(e, &g[got++]);
		} while (got < n && !(rc = ibv_next_poll(e->cq)));
		if (got < n && rc != ENOENT)
			vt_fail("%s: ibv_next_poll: %s", e->name, strerror(rc));
		ibv_end_poll(e->cq);
	}
	return got;
}

/* Exactly n completions of e within POLL_MS, or fatal. */
static void poll_n(const struct end *e, struct got *g, int n, const char *what)
{
	int got = poll_ex(e, g, n, POLL_MS);

	if (got != n)
		vt_fatal("%s: %d of %d completions at the %s", what, got, n,
			 e->name);
}

/* A successful completion of e's QP as expected; imm only with flags. */
static void expect_wc(const char *what, const struct end *e,
		      const struct got *g, uint64_t wr_id,
		      enum ibv_wc_opcode op, long byte_len,
		      unsigned int wc_flags, uint32_t imm)
{
	unsigned int bad = vt_failures;

	if (g->status != IBV_WC_SUCCESS)
		vt_fail("%s: status %s (vendor_err %#x)", what,
			ibv_wc_status_str(g->status), g->vendor_err);
	if (g->wr_id != wr_id)
		vt_fail("%s: wr_id %llu, expected %llu", what,
			(unsigned long long)g->wr_id,
			(unsigned long long)wr_id);
	if (g->opcode != op)
		vt_fail("%s: opcode %d, expected %d", what, g->opcode, op);
	if (byte_len >= 0 && g->byte_len != (uint32_t)byte_len)
		vt_fail("%s: byte_len %u, expected %ld", what, g->byte_len,
			byte_len);
	if (g->wc_flags != wc_flags)
		vt_fail("%s: wc_flags %#x, expected %#x", what, g->wc_flags,
			wc_flags);
	if ((wc_flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV)) && g->imm != imm)
		vt_fail("%s: immediate/invalidated value %#x, expected %#x",
			what, g->imm, imm);
	if (g->qp_num != e->qp->qp_num)
		vt_fail("%s: qp_num %u, expected %u", what, g->qp_num,
			e->qp->qp_num);
	if (g->src_qp || g->slid || g->sl || g->path_bits || g->vendor_err)
		vt_fail("%s: src_qp %u slid %u sl %u path bits %u vendor_err %u, expected 0",
			what, g->src_qp, g->slid, g->sl, g->path_bits,
			g->vendor_err);
	if (vt_failures == bad)
		vt_pass("%s", what);
}

static void fill(uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

static void expect_bytes(const char *what, const void *got, const void *want,
			 size_t len)
{
	if (memcmp(got, want, len))
		vt_fail("%s: data differs", what);
	else
		vt_pass("%s: %zu octets match", what, len);
}

static void post_recv_slot(unsigned int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(B.buf + slot * RECV_LEN),
		.length = RECV_LEN,
		.lkey = B.mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	memset(B.buf + slot * RECV_LEN, 0, RECV_LEN);
	if (ibv_post_recv(B.qp, &wr, &bad))
		vt_fatal("ibv_post_recv: %s", strerror(errno));
}

/* The responder's next receive: as expected; its data; reposted. */
static void expect_recv(const char *what, const struct got *g,
			enum ibv_wc_opcode op, const void *data, uint32_t len,
			unsigned int wc_flags, uint32_t imm)
{
	char name[160];

	expect_wc(what, &B, g, g->wr_id, op, len, wc_flags, imm);
	if (g->wr_id >= NRECV) {
		vt_fail("%s: receive wr_id %llu is no slot", what,
			(unsigned long long)g->wr_id);
		return;
	}
	if (data) {
		snprintf(name, sizeof(name), "%s: received data", what);
		expect_bytes(name, B.buf + g->wr_id * RECV_LEN, data, len);
	}
	post_recv_slot((unsigned int)g->wr_id);
}

/* Neither end completes anything within QUIET_MS. */
static void expect_quiet(const char *what)
{
	struct got g;

	if (poll_ex(&A, &g, 1, QUIET_MS) || poll_ex(&B, &g, 1, QUIET_MS))
		vt_fail("%s: a completion arrived (wr_id %llu)", what,
			(unsigned long long)g.wr_id);
	else
		vt_pass("%s: no completion at either end", what);
}

/* The doorbell write(2)s between readings w0 and w1 were want. */
static void expect_doorbells(const char *what, long long w0, long long w1,
			     long long want)
{
	if (w0 < 0 || w1 < 0)
		printf("%s: note: %s: system calls not counted (no /proc/self/io)\n",
		       vt_prog, what);
	else if (w1 - w0 != want)
		vt_fail("%s: %lld write(2) calls, expected %lld", what,
			w1 - w0, want);
	else
		vt_pass("%s: %lld write(2) call(s)", what, want);
}

static void set_wr(struct ibv_qp_ex *x, uint64_t wr_id, unsigned int flags)
{
	x->wr_id = wr_id;
	x->wr_flags = flags;
}

static void complete_ok(const struct end *e, const char *what)
{
	int rc = ibv_wr_complete(e->qpx);

	if (rc)
		vt_fatal("%s: ibv_wr_complete: %s", what, strerror(rc));
}

static void check_query_device_ex(struct ibv_context *ctx)
{
	struct ibv_query_device_ex_input in = { .comp_mask = 1 };
	struct ibv_device_attr_ex ax;
	struct ibv_device_attr a;
	int rc;

	memset(&ax, 0, sizeof(ax));
	memset(&a, 0, sizeof(a));
	rc = ibv_query_device_ex(ctx, NULL, &ax);
	if (rc)
		vt_fatal("ibv_query_device_ex: %s", strerror(rc));
	if (ibv_query_device(ctx, &a))
		vt_fatal("ibv_query_device: %s", strerror(errno));
	if (memcmp(&ax.orig_attr, &a, sizeof(a)))
		vt_fail("ibv_query_device_ex: orig_attr differs from ibv_query_device");
	else
		vt_pass("ibv_query_device_ex: orig_attr equals ibv_query_device (fw %s, max_qp %d, max_sge %d)",
			a.fw_ver, a.max_qp, a.max_sge);
	if ((uint32_t)ax.device_cap_flags_ex != (uint32_t)a.device_cap_flags)
		vt_fail("device_cap_flags_ex %#llx does not extend device_cap_flags %#x",
			(unsigned long long)ax.device_cap_flags_ex,
			a.device_cap_flags);
	else
		vt_pass("device_cap_flags_ex %#llx",
			(unsigned long long)ax.device_cap_flags_ex);
	if (ax.completion_timestamp_mask || ax.hca_core_clock)
		vt_fail("completion_timestamp_mask %#llx, hca_core_clock %llu: kiwi has no timestamps",
			(unsigned long long)ax.completion_timestamp_mask,
			(unsigned long long)ax.hca_core_clock);
	else
		vt_pass("no completion timestamps reported");
	if (ax.orig_attr.atomic_cap != IBV_ATOMIC_GLOB)
		vt_fail("atomic_cap %d, expected IBV_ATOMIC_GLOB",
			ax.orig_attr.atomic_cap);
	else
		vt_pass("atomic_cap IBV_ATOMIC_GLOB");
	rc = ibv_query_device_ex(ctx, &in, &ax);
	vt_expect_errno("ibv_query_device_ex with an input comp_mask", rc != 0,
			rc, EINVAL);
}

static void check_cq_refusals(struct ibv_context *ctx)
{
	static const struct {
		const char *what;
		uint32_t comp_mask, flags;
		uint64_t wc_flags;
		int err;
	} cases[] = {
		{ "COMPLETION_TIMESTAMP", 0, 0,
		  IBV_WC_EX_WITH_COMPLETION_TIMESTAMP, EOPNOTSUPP },
		{ "COMPLETION_TIMESTAMP_WALLCLOCK", 0, 0,
		  IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK, EOPNOTSUPP },
		{ "CVLAN", 0, 0, IBV_WC_EX_WITH_CVLAN, EOPNOTSUPP },
		{ "FLOW_TAG", 0, 0, IBV_WC_EX_WITH_FLOW_TAG, EOPNOTSUPP },
		{ "TM_INFO", 0, 0, IBV_WC_EX_WITH_TM_INFO, EOPNOTSUPP },
		{ "IGNORE_OVERRUN", IBV_CQ_INIT_ATTR_MASK_FLAGS,
		  IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN, 0, EOPNOTSUPP },
		{ "a parent domain", IBV_CQ_INIT_ATTR_MASK_PD, 0, 0,
		  EOPNOTSUPP },
		{ "an unknown comp_mask bit", 1u << 7, 0, 0, EINVAL },
		{ "an unknown flag", IBV_CQ_INIT_ATTR_MASK_FLAGS, 1u << 7, 0,
		  EINVAL },
	};
	char what[120];
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ibv_cq_init_attr_ex a = {
			.cqe = 8,
			.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | cases[i].wc_flags,
			.comp_mask = cases[i].comp_mask,
			.flags = cases[i].flags,
			.parent_domain = pd,
		};
		struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &a);

		snprintf(what, sizeof(what), "ibv_create_cq_ex with %s",
			 cases[i].what);
		vt_expect_errno(what, !cq, errno, cases[i].err);
		if (cq)
			ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	}
}

static void check_qp_refusals(struct ibv_context *ctx, struct ibv_cq *cq)
{
	static const struct {
		const char *what;
		uint32_t comp_mask;
		uint64_t send_ops;
		enum ibv_qp_type type;
		int err;
	} cases[] = {
		{ "IBV_QP_EX_WITH_TSO", 0, IBV_QP_EX_WITH_TSO, IBV_QPT_RC,
		  EOPNOTSUPP },
		{ "IBV_QP_EX_WITH_ATOMIC_WRITE", 0, IBV_QP_EX_WITH_ATOMIC_WRITE,
		  IBV_QPT_RC, EOPNOTSUPP },
		{ "an unknown send_ops_flags bit", 0, 1ull << 40, IBV_QPT_RC,
		  EOPNOTSUPP },
		{ "IBV_QP_INIT_ATTR_CREATE_FLAGS", IBV_QP_INIT_ATTR_CREATE_FLAGS,
		  IBV_QP_EX_WITH_SEND, IBV_QPT_RC, EOPNOTSUPP },
		{ "IBV_QP_INIT_ATTR_XRCD", IBV_QP_INIT_ATTR_XRCD,
		  IBV_QP_EX_WITH_SEND, IBV_QPT_RC, EOPNOTSUPP },
		{ "an unknown comp_mask bit", 1u << 20, IBV_QP_EX_WITH_SEND,
		  IBV_QPT_RC, EINVAL },
		{ "a UD QP", 0, IBV_QP_EX_WITH_SEND, IBV_QPT_UD, EOPNOTSUPP },
	};
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp *qp;
	char what[120];
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		a = (struct ibv_qp_init_attr_ex){
			.send_cq = cq,
			.recv_cq = cq,
			.cap = { .max_send_wr = 4, .max_recv_wr = 4,
				 .max_send_sge = 1, .max_recv_sge = 1 },
			.qp_type = cases[i].type,
			.comp_mask = IBV_QP_INIT_ATTR_PD |
				     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
				     cases[i].comp_mask,
			.pd = pd,
			.send_ops_flags = cases[i].send_ops,
		};
		qp = ibv_create_qp_ex(ctx, &a);
		snprintf(what, sizeof(what), "ibv_create_qp_ex with %s",
			 cases[i].what);
		vt_expect_errno(what, !qp, errno, cases[i].err);
		if (qp)
			ibv_destroy_qp(qp);
	}

	a = (struct ibv_qp_init_attr_ex){
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	qp = ibv_create_qp_ex(ctx, &a);
	if (!qp)
		vt_fatal("ibv_create_qp_ex without send ops: %s",
			 strerror(errno));
	if (ibv_qp_to_qp_ex(qp))
		vt_fail("a QP without IBV_QP_INIT_ATTR_SEND_OPS_FLAGS has an ibv_qp_ex");
	else
		vt_pass("a QP without IBV_QP_INIT_ATTR_SEND_OPS_FLAGS has no ibv_qp_ex");
	ibv_destroy_qp(qp);
}

static void end_setup(struct end *e, struct ibv_context *ctx,
		      struct ibv_qp_init_attr_ex *qa)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = CQ_DEPTH,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
			    IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP,
	};

	if (e->standard) {
		ca.wc_flags = IBV_WC_STANDARD_FLAGS;
		ca.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
		ca.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	}
	e->cq = ibv_create_cq_ex(ctx, &ca);
	if (!e->cq)
		vt_fatal("ibv_create_cq_ex: %s", strerror(errno));
	if (posix_memalign((void **)&e->buf, 4096, BUF_LEN))
		vt_fatal("posix_memalign failed");
	memset(e->buf, 0, BUF_LEN);
	e->mr = ibv_reg_mr(pd, e->buf, BUF_LEN,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC);
	if (!e->mr)
		vt_fatal("ibv_reg_mr: %s", strerror(errno));
	*qa = (struct ibv_qp_init_attr_ex){
		.send_cq = ibv_cq_ex_to_cq(e->cq),
		.recv_cq = ibv_cq_ex_to_cq(e->cq),
		.cap = { .max_send_wr = 32, .max_recv_wr = NRECV,
			 .max_send_sge = 2, .max_recv_sge = 1,
			 .max_inline_data = 64 },
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags =
			IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
			IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_RDMA_WRITE |
			IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			IBV_QP_EX_WITH_RDMA_READ |
			IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
	};
}

static void end_attach(struct end *e, struct rdma_cm_id *id,
		       const struct ibv_qp_init_attr_ex *qa)
{
	e->qp = id->qp;
	e->cap = qa->cap;
	e->qpx = ibv_qp_to_qp_ex(e->qp);
	if (!e->qpx)
		vt_fatal("%s: ibv_qp_to_qp_ex: NULL", e->name);
}

static void open_pair(struct ibv_context *ctx)
{
	struct ibv_qp_init_attr_ex qa[2];
	unsigned int i;

	end_setup(&A, ctx, &qa[0]);
	end_setup(&B, ctx, &qa[1]);
	vt_cm_prepare_ex(&cm, &pair, &qa[0]);
	vt_cm_establish_ex(&cm, &pair, &qa[1]);
	end_attach(&A, pair.active, &qa[0]);
	end_attach(&B, pair.passive, &qa[1]);
	vt_pass("ibv_create_qp_ex QPs with send ops connected (inline %u, send SGEs %u)",
		A.cap.max_inline_data, A.cap.max_send_sge);
	for (i = 0; i < NRECV; i++)
		post_recv_slot(i);
}

static void check_batch(void)
{
	struct ibv_qp_ex *x = A.qpx;
	uint8_t inl[20], inl_want[20], la[10], lb[15], l_want[25];
	struct ibv_sge sl[2] = {
		{ (uintptr_t)(A.buf + 200), 30, A.mr->lkey },
		{ (uintptr_t)(A.buf + 300), 40, A.mr->lkey },
	};
	struct ibv_data_buf dl[2] = { { la, sizeof(la) }, { lb, sizeof(lb) } };
	uint8_t sl_want[70];
	struct got ga[6], gb[6];
	uint64_t waddr = (uintptr_t)(B.buf + WR_OFF);
	long long w0, w1;

	fill(A.buf, BUF_LEN, 11);
	fill(inl, sizeof(inl), 101);
	memcpy(inl_want, inl, sizeof(inl));
	fill(la, sizeof(la), 151);
	fill(lb, sizeof(lb), 181);
	memcpy(l_want, la, sizeof(la));
	memcpy(l_want + sizeof(la), lb, sizeof(lb));
	memcpy(sl_want, A.buf + 200, 30);
	memcpy(sl_want + 30, A.buf + 300, 40);

	ibv_wr_start(x);
	set_wr(x, 1, IBV_SEND_SIGNALED);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, A.mr->lkey, (uintptr_t)A.buf, 100);
	set_wr(x, 2, IBV_SEND_SIGNALED);
	ibv_wr_send(x);
	ibv_wr_set_sge_list(x, 2, sl);
	set_wr(x, 3, IBV_SEND_SIGNALED);
	ibv_wr_send(x);
	ibv_wr_set_inline_data(x, inl, sizeof(inl));
	memset(inl, 0, sizeof(inl)); /* copied by the setter */
	set_wr(x, 4, 0);
	ibv_wr_send(x);
	ibv_wr_set_inline_data_list(x, 2, dl);
	set_wr(x, 5, IBV_SEND_SIGNALED);
	ibv_wr_rdma_write(x, B.mr->rkey, waddr);
	ibv_wr_set_sge(x, A.mr->lkey, (uintptr_t)(A.buf + 1000), 256);
	set_wr(x, 6, IBV_SEND_SIGNALED);
	ibv_wr_rdma_write_imm(x, B.mr->rkey, waddr + 512, htonl(0x11223344));
	ibv_wr_set_sge(x, A.mr->lkey, (uintptr_t)(A.buf + 2000), 64);
	set_wr(x, 7, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
	ibv_wr_send_imm(x, htonl(0x55667788));
	ibv_wr_set_sge_list(x, 0, NULL);
	expect_quiet("a batch of 7 WRs before ibv_wr_complete");
	w0 = vt_syscw();
	complete_ok(&A, "batch");
	w1 = vt_syscw();
	expect_doorbells("ibv_wr_complete of 7 WRs rings the doorbell once",
			 w0, w1, 1);

	poll_n(&A, ga, 6, "batch");
	expect_wc("batch: Send with wr_set_sge", &A, &ga[0], 1, IBV_WC_SEND,
		  -1, 0, 0);
	expect_wc("batch: Send with wr_set_sge_list", &A, &ga[1], 2,
		  IBV_WC_SEND, -1, 0, 0);
	expect_wc("batch: Send with wr_set_inline_data", &A, &ga[2], 3,
		  IBV_WC_SEND, -1, 0, 0);
	expect_wc("batch: RDMA Write (the unsignaled inline-list Send before it has no completion)",
		  &A, &ga[3], 5, IBV_WC_RDMA_WRITE, -1, 0, 0);
	expect_wc("batch: RDMA Write with Immediate", &A, &ga[4], 6,
		  IBV_WC_RDMA_WRITE, -1, 0, 0);
	expect_wc("batch: Send with Immediate", &A, &ga[5], 7, IBV_WC_SEND,
		  -1, 0, 0);

	poll_n(&B, gb, 6, "batch");
	expect_recv("batch: receive of the wr_set_sge Send", &gb[0],
		    IBV_WC_RECV, A.buf, 100, 0, 0);
	expect_recv("batch: receive of the wr_set_sge_list Send", &gb[1],
		    IBV_WC_RECV, sl_want, 70, 0, 0);
	expect_recv("batch: receive of the inline Send", &gb[2], IBV_WC_RECV,
		    inl_want, sizeof(inl_want), 0, 0);
	expect_recv("batch: receive of the inline-list Send", &gb[3],
		    IBV_WC_RECV, l_want, sizeof(l_want), 0, 0);
	expect_recv("batch: Write with Immediate at the responder", &gb[4],
		    IBV_WC_RECV_RDMA_WITH_IMM, NULL, 64, IBV_WC_WITH_IMM,
		    0x11223344);
	expect_recv("batch: Send with Immediate at the responder", &gb[5],
		    IBV_WC_RECV, NULL, 0, IBV_WC_WITH_IMM, 0x55667788);
	expect_bytes("batch: RDMA Write data", B.buf + WR_OFF, A.buf + 1000,
		     256);
	expect_bytes("batch: Write with Immediate data", B.buf + WR_OFF + 512,
		     A.buf + 2000, 64);
}

static void check_read(void)
{
	struct ibv_qp_ex *x = A.qpx;
	struct got g;

	ibv_wr_start(x);
	set_wr(x, 8, IBV_SEND_SIGNALED);
	ibv_wr_rdma_read(x, B.mr->rkey, (uintptr_t)(B.buf + WR_OFF));
	ibv_wr_set_sge(x, A.mr->lkey, (uintptr_t)(A.buf + RD_OFF), 256);
	complete_ok(&A, "RDMA Read");
	poll_n(&A, &g, 1, "RDMA Read");
	expect_wc("RDMA Read", &A, &g, 8, IBV_WC_RDMA_READ, 256, 0, 0);
	expect_bytes("RDMA Read data", A.buf + RD_OFF, B.buf + WR_OFF, 256);
}

static void check_atomics(void)
{
	struct ibv_qp_ex *x = A.qpx;
	uint64_t *target = (uint64_t *)(B.buf + AT_OFF);
	uint64_t *res = (uint64_t *)(A.buf + RES_OFF);
	uint64_t raddr = (uintptr_t)target;
	uint32_t lkey = A.mr->lkey;
	struct got g[3];

	*target = 100;
	res[0] = res[1] = res[2] = 0xdeadbeef;
	ibv_wr_start(x);
	set_wr(x, 9, IBV_SEND_SIGNALED);
	ibv_wr_atomic_fetch_add(x, B.mr->rkey, raddr, 5);
	ibv_wr_set_sge(x, lkey, (uintptr_t)&res[0], 8);
	set_wr(x, 10, IBV_SEND_SIGNALED | IBV_SEND_FENCE);
	ibv_wr_atomic_cmp_swp(x, B.mr->rkey, raddr, 105, 7);
	ibv_wr_set_sge(x, lkey, (uintptr_t)&res[1], 8);
	set_wr(x, 11, IBV_SEND_SIGNALED | IBV_SEND_FENCE);
	ibv_wr_atomic_cmp_swp(x, B.mr->rkey, raddr, 1, 9);
	ibv_wr_set_sge(x, lkey, (uintptr_t)&res[2], 8);
	complete_ok(&A, "atomics");
	poll_n(&A, g, 3, "atomics");
	expect_wc("wr_atomic_fetch_add", &A, &g[0], 9, IBV_WC_FETCH_ADD, 8, 0,
		  0);
	expect_wc("wr_atomic_cmp_swp", &A, &g[1], 10, IBV_WC_COMP_SWAP, 8, 0,
		  0);
	expect_wc("wr_atomic_cmp_swp (compare fails)", &A, &g[2], 11,
		  IBV_WC_COMP_SWAP, 8, 0, 0);
	if (res[0] != 100 || res[1] != 105 || res[2] != 7 || *target != 7)
		vt_fail("atomics: results %llu %llu %llu, target %llu; expected 100 105 7, 7",
			(unsigned long long)res[0], (unsigned long long)res[1],
			(unsigned long long)res[2],
			(unsigned long long)*target);
	else
		vt_pass("atomics: results 100 105 7, target 7");
}

/* A batch that fails in ibv_wr_complete with err after one good Send. */
static void failing_batch(const char *what, int err, void (*bad)(void))
{
	struct ibv_qp_ex *x = A.qpx;
	char name[160];
	long long w0, w1;
	int rc;

	ibv_wr_start(x);
	set_wr(x, 300, IBV_SEND_SIGNALED);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, A.mr->lkey, (uintptr_t)A.buf, 8);
	bad();
	w0 = vt_syscw();
	rc = ibv_wr_complete(x);
	w1 = vt_syscw();
	snprintf(name, sizeof(name), "ibv_wr_complete after %s", what);
	vt_expect_errno(name, rc != 0, rc, err);
	expect_doorbells(name, w0, w1, 0);
}

static void bad_atomic(void)
{
	set_wr(A.qpx, 301, IBV_SEND_SIGNALED);
	ibv_wr_atomic_fetch_add(A.qpx, B.mr->rkey,
				(uintptr_t)(B.buf + AT_OFF), 1);
	ibv_wr_set_sge(A.qpx, A.mr->lkey, (uintptr_t)(A.buf + RES_OFF), 4);
}

static void bad_send_imm(void)
{
	set_wr(A.qpx, 301, IBV_SEND_SIGNALED);
	ibv_wr_send_imm(A.qpx, htonl(1));
	ibv_wr_set_sge(A.qpx, A.mr->lkey, (uintptr_t)A.buf, 8);
}

static void bad_inline(void)
{
	set_wr(A.qpx, 301, IBV_SEND_SIGNALED);
	ibv_wr_send(A.qpx);
	ibv_wr_set_inline_data(A.qpx, A.buf, A.cap.max_inline_data + 1);
}

static void bad_sges(void)
{
	struct ibv_sge sl[7];
	unsigned int i;

	for (i = 0; i < 7; i++)
		sl[i] = (struct ibv_sge){ (uintptr_t)A.buf, 1, A.mr->lkey };
	set_wr(A.qpx, 301, IBV_SEND_SIGNALED);
	ibv_wr_send(A.qpx);
	ibv_wr_set_sge_list(A.qpx, 7, sl);
}

static void bad_bind_mw(void)
{
	set_wr(A.qpx, 301, IBV_SEND_SIGNALED);
	ibv_wr_bind_mw(A.qpx, NULL, 0, NULL);
}

static void check_nothing_posted(void)
{
	struct ibv_qp_ex *x = A.qpx;
	uint8_t want[33];
	long long w0, w1;
	struct got g;

	failing_batch("an atomic with a 4-octet result", EINVAL, bad_atomic);
	failing_batch("a Send with Immediate with payload", EOPNOTSUPP,
		      bad_send_imm);
	failing_batch("inline data beyond max_inline_data", EINVAL,
		      bad_inline);
	failing_batch("7 SGEs", EINVAL, bad_sges);
	failing_batch("ibv_wr_bind_mw of no window", EINVAL, bad_bind_mw);

	ibv_wr_start(x);
	set_wr(x, 100, IBV_SEND_SIGNALED);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, A.mr->lkey, (uintptr_t)A.buf, 50);
	set_wr(x, 101, IBV_SEND_SIGNALED);
	ibv_wr_rdma_write(x, B.mr->rkey, (uintptr_t)(B.buf + WR_OFF));
	ibv_wr_set_sge(x, A.mr->lkey, (uintptr_t)A.buf, 50);
	w0 = vt_syscw();
	ibv_wr_abort(x);
	w1 = vt_syscw();
	expect_doorbells("ibv_wr_abort", w0, w1, 0);
	expect_quiet("failed batches and ibv_wr_abort");

	fill(A.buf + 3000, sizeof(want), 77);
	memcpy(want, A.buf + 3000, sizeof(want));
	ibv_wr_start(x);
	set_wr(x, 102, IBV_SEND_SIGNALED);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, A.mr->lkey, (uintptr_t)(A.buf + 3000), sizeof(want));
	complete_ok(&A, "after abort");
	poll_n(&A, &g, 1, "after abort");
	expect_wc("the first completion after them is the next batch's", &A,
		  &g, 102, IBV_WC_SEND, -1, 0, 0);
	poll_n(&B, &g, 1, "after abort");
	expect_recv("the first receive after them is the next batch's", &g,
		    IBV_WC_RECV, want, sizeof(want), 0, 0);
}

/* ibv_post_send on an extended QP, ibv_poll_cq on an extended CQ. */
static void check_mixed(void)
{
	struct ibv_sge sge = { (uintptr_t)A.buf, 16, A.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 12, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_cq *cq = ibv_cq_ex_to_cq(A.cq);
	long long end = vt_now_ms() + POLL_MS;
	struct ibv_wc wc;
	struct got g;
	int n;

	if (ibv_post_send(A.qp, &wr, &bad))
		vt_fatal("ibv_post_send on an extended QP: %s",
			 strerror(errno));
	while (!(n = ibv_poll_cq(cq, 1, &wc)) && vt_now_ms() < end)
		usleep(200);
	if (n != 1 || wc.status != IBV_WC_SUCCESS || wc.wr_id != 12 ||
	    wc.opcode != IBV_WC_SEND || wc.qp_num != A.qp->qp_num)
		vt_fail("ibv_poll_cq on an extended CQ: n %d status %s wr_id %llu opcode %d",
			n, n == 1 ? ibv_wc_status_str(wc.status) : "-",
			n == 1 ? (unsigned long long)wc.wr_id : 0ULL,
			n == 1 ? (int)wc.opcode : -1);
	else
		vt_pass("ibv_post_send on an extended QP, ibv_poll_cq on an extended CQ");
	poll_n(&B, &g, 1, "ibv_post_send");
	expect_recv("its receive", &g, IBV_WC_RECV, A.buf, 16, 0, 0);
}

/*
 * The first completion of e with wr_id, skipping the flushed receives a
 * QP in error may complete first.
 */
static void find_wr(const struct end *e, uint64_t wr_id, struct got *g)
{
	long long end = vt_now_ms() + POLL_MS;

	do {
		if (poll_ex(e, g, 1, POLL_MS) != 1)
			break;
		if (g->wr_id == wr_id)
			return;
	} while (vt_now_ms() < end);
	vt_fatal("no completion of wr_id %llu at the %s",
		 (unsigned long long)wr_id, e->name);
}

static void check_send_inv(void)
{
	struct ibv_qp_ex *x = A.qpx;
	struct ibv_mr *b_inv;
	struct got g;

	b_inv = ibv_reg_mr(pd, B.buf + INV_OFF, INV_LEN,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!b_inv)
		vt_fatal("ibv_reg_mr: %s", strerror(errno));
	ibv_wr_start(x);
	set_wr(x, 13, IBV_SEND_SIGNALED);
	ibv_wr_send_inv(x, b_inv->rkey);
	ibv_wr_set_sge(x, A.mr->lkey, (uintptr_t)A.buf, 10);
	complete_ok(&A, "Send with Invalidate");
	find_wr(&A, 13, &g);
	vt_pass("wr_send_inv completed: %s", ibv_wc_status_str(g.status));
	if (poll_ex(&B, &g, 1, POLL_MS) != 1)
		vt_fail("Send with Invalidate of a user MR: no completion at the responder");
	else if (g.status == IBV_WC_SUCCESS || (g.wc_flags & IBV_WC_WITH_INV))
		vt_fail("Send with Invalidate of a user MR: the responder's receive succeeded (wc_flags %#x)",
			g.wc_flags);
	else
		vt_pass("Send with Invalidate of a user MR: no receive succeeds (%s, vendor_err %#x)",
			ibv_wc_status_str(g.status), g.vendor_err);
	ibv_dereg_mr(b_inv);
}

static void end_free(struct end *e)
{
	ibv_destroy_cq(ibv_cq_ex_to_cq(e->cq));
	ibv_dereg_mr(e->mr);
	free(e->buf);
}

static void usage(void)
{
	fprintf(stderr, "usage: vt_exverbs -a ADDR [-p PORT]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct ibv_cq *cq;

	vt_init("vt_exverbs");
	vt_cm_listen_args(&cm, argc, argv, "7307", usage);
	pd = ibv_alloc_pd(cm.verbs);
	if (!pd)
		vt_fatal("ibv_alloc_pd: %s", strerror(errno));
	check_query_device_ex(cm.verbs);
	check_cq_refusals(cm.verbs);
	cq = ibv_create_cq(cm.verbs, 8, NULL, NULL, 0);
	if (!cq)
		vt_fatal("ibv_create_cq: %s", strerror(errno));
	check_qp_refusals(cm.verbs, cq);
	ibv_destroy_cq(cq);

	open_pair(cm.verbs);
	check_batch();
	check_read();
	check_atomics();
	check_nothing_posted();
	check_mixed();
	check_send_inv();

	vt_cm_teardown(&cm, &pair);
	end_free(&A);
	end_free(&B);
	ibv_dealloc_pd(pd);
	vt_cm_close(&cm);
	return vt_exit();
}
