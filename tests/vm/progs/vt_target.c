// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_target: the victim of the hostile-peer test (tests/vm/hostile/).
 *
 * An rdma_cm server that accepts connections one after the other and
 * offers a hostile peer (peer.py) memory to attack:
 *
 *   target   256 KiB, remote read + write, at an odd address inside an
 *            arena whose other octets are guard bytes (same pages, so
 *            bounds are tested to the octet)
 *   noread   4 KiB, remote write only (a Read Request must be refused)
 *   otherpd  4 KiB, remote read + write, but in a second PD (unusable
 *            from the connection's QP)
 *   recv     -r receive buffers of -R octets, separated by guard octets
 *   sink     4 KiB, local write only: the Data Sink of the RDMA Reads the
 *            peer asks for (see below); a peer may fill it, not more
 *   atomic   4 KiB, remote atomic only (RFC 7306); the control case adds 1
 *            to its first 8 octets, a peer may change nothing else
 *   window   4 KiB, local write and MW bind only, with a type 2 memory
 *            window (devices that have windows: mw_addr in the info file);
 *            a peer may change nothing
 *   bulk     8 MiB, local write only: the source of cmd:writeimm
 *
 * Two requests let a peer set up what it attacks:
 *  - MPA private data "vt:access=" followed by letters (w remote write, r
 *    remote read; none for neither): vt_target creates the connection's QP
 *    itself with exactly those qp_access_flags and accepts with its QP
 *    number, so rdma_cm applies no access flags of its own;
 *  - a Send "vt:read STAG TO LEN" (hex, hex, decimal): vt_target posts an
 *    RDMA Read of LEN octets from the peer's STAG/TO into sink; the Read's
 *    completions are counted as read_ok / wc_err.
 *
 * It writes their STags, addresses and lengths to the info file (-o),
 * then logs, per connection K, every rdma_cm event, completion and async
 * event as "conn K ..." lines, and at the end of each connection
 * "conn K end ..." with a memory verdict: octets changed outside what a
 * peer may legally write (the first VT_CTL_LEN octets of target, written
 * by the control case with a known pattern) are reported and make the
 * program fail. Memory is then restored for the next connection.
 *
 * A Send from the peer whose payload starts with "cmd:" makes vt_target
 * act on the connection, so a peer can script the local side of a test:
 *
 *   cmd:read        post an RDMA Read from the peer (STag 0x1234abcd)
 *   cmd:send N      post N Sends of 256 KiB (more than TCP buffers when a
 *                   peer does not read: kiwi's transmit side stalls)
 *   cmd:badwr       post a Send with a wrong lkey (fails locally)
 *   cmd:late MS     post one Send MS milliseconds from now
 *   cmd:disconnect  rdma_disconnect() (iWARP: graceful close, SQD)
 *   cmd:destroy     destroy the connection's QP now
 *   cmd:writeimm    post an RDMA Write with Immediate Data of all of bulk
 *                   (STag 0x1234abcd): more than TCP buffers when a peer
 *                   does not read, also over the loopback
 *   cmd:mw          bind the window over all of window (remote read and
 *                   write), invalidate it (Local Invalidate), then send
 *                   the peer "mw:STAG" (hex): the STag it had
 *
 * Every send WR it posted must complete (success or error) before the
 * connection ends: "conn K end" reports sq_posted and sq_done, and the
 * milliseconds the DISCONNECTED event and the QP's destruction took.
 * With -S, a second connection request while one is active is accepted
 * naming the active connection's QP (rdma_cm lets the ULP pick the QP):
 * that must fail, and the first connection must not be disturbed.
 *
 * Runs until -n connections have ended or SIGTERM/SIGINT. Exit: 0 all
 * memory intact, 1 a memory violation, 2 setup error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#include "vt.h"

#define VT_PAGE		4096UL
#define VT_TGT_LEN	(256UL * 1024)
#define VT_TGT_SKEW	123UL		/* target starts this far into a page */
#define VT_SMALL_LEN	4096UL
#define VT_RECV_GAP	64UL		/* guard octets around each receive */
#define VT_CTL_LEN	64UL		/* octets the control case may write */
#define VT_MAX_RECV	64
#define VT_PD_MAX	256		/* private data octets kept */
#define VT_MAX_RECV_LEN	4096
#define VT_SEND_LEN	VT_TGT_LEN
#define VT_WR_ID_SQ	1000	/* send WRs' wr_id from here on */
#define VT_READ_STAG	0x1234abcd
#define VT_BULK_LEN	(8UL << 20)

#define PAT_GUARD	0xa5
#define PAT_TARGET	0x5a
#define PAT_NOREAD	0x3c
#define PAT_OTHERPD	0xc3
#define PAT_RECV	0x99
#define PAT_SINK	0x66
#define PAT_ATOMIC	0x17
#define PAT_WINDOW	0x71

/* Pattern the control case writes into target[0, VT_CTL_LEN). */
static unsigned char ctl_octet(unsigned long i)
{
	return (unsigned char)(i * 7 + 1);
}

struct region {
	const char *name;
	unsigned char *buf;
	size_t len;
	unsigned char pat;
	struct ibv_mr *mr;
};

static struct {
	const char *addr;
	unsigned int port;
	const char *info;
	const char *dev;
	unsigned long conns;
	unsigned long nrecv;
	unsigned long recv_len;
	unsigned long ird;
	bool share;
} opt = {
	.addr = NULL, .port = 0, .info = NULL, .dev = NULL, .conns = 0,
	.nrecv = 4, .recv_len = 64, .ird = 2,
};

static volatile sig_atomic_t stop;

static struct rdma_event_channel *ech;
static struct rdma_cm_id *listen_id;
static struct ibv_context *verbs;
static struct ibv_pd *pd, *pd2;
static struct ibv_cq *cq;

/* arena = guard | target | guard; recv = gap | buf | gap | buf ... gap */
static struct region arena = { .name = "arena", .pat = PAT_GUARD };
static struct region target = { .name = "target", .pat = PAT_TARGET };
static struct region noread = { .name = "noread", .pat = PAT_NOREAD };
static struct region otherpd = { .name = "otherpd", .pat = PAT_OTHERPD };
static struct region recvr = { .name = "recv", .pat = PAT_RECV };
static struct region sink = { .name = "sink", .pat = PAT_SINK };
static struct region atomic = { .name = "atomic", .pat = PAT_ATOMIC };
static struct region win = { .name = "window", .pat = PAT_WINDOW };
static struct region bulk = { .name = "bulk" };
/* The type 2 window over win (NULL: the device has none), its last rkey. */
static struct ibv_mw *mw;
static uint32_t mw_rkey;

/* The connection in progress (one at a time). */
static struct {
	struct rdma_cm_id *id;
	struct ibv_qp *qp;	/* id->qp, or vt_target's own (vt:access=) */
	bool own_qp;
	unsigned long k;
	unsigned int wc_ok, wc_flush, wc_err, async, read_ok;
	unsigned int sq_posted, sq_done;
	long long disc_at;	/* cmd:disconnect ran at (ms), 0: not yet */
	long long disc_ms;	/* until DISCONNECTED, -1: none seen */
	long long late_at;	/* cmd:late fires at (ms), 0: none */
	bool active;
} conn;
static unsigned long conns_ended;

static void end_conn(const char *why);

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: vt_target -a ADDR -p PORT -o INFO [-d DEV] [-n CONNS]\n"
		"                 [-r RECVS] [-R RECV_LEN] [-I IRD] [-S]\n"
		"  -n 0 (default): accept connections until SIGTERM\n"
		"  -r 0: post no receive buffers\n"
		"  -S: accept a second request naming the first one's QP\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "a:p:o:d:n:r:R:I:S")) != -1) {
		switch (c) {
		case 'a': opt.addr = optarg; break;
		case 'p': opt.port = vt_ulong("-p", optarg); break;
		case 'o': opt.info = optarg; break;
		case 'd': opt.dev = optarg; break;
		case 'n': opt.conns = vt_ulong("-n", optarg); break;
		case 'r': opt.nrecv = vt_ulong("-r", optarg); break;
		case 'R': opt.recv_len = vt_ulong("-R", optarg); break;
		case 'I': opt.ird = vt_ulong("-I", optarg); break;
		case 'S': opt.share = true; break;
		default: usage();
		}
	}
	if (!opt.addr || !opt.port || opt.port > 65535 || !opt.info ||
	    optind != argc || opt.nrecv > VT_MAX_RECV || !opt.recv_len ||
	    opt.recv_len > 4096 || opt.ird > 255)
		usage();
}

static void *alloc_pages(size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, VT_PAGE, len))
		vt_fatal("out of memory");
	return p;
}

static void reg(struct region *r, struct ibv_pd *on, int access)
{
	r->mr = ibv_reg_mr(on, r->buf, r->len, access);
	if (!r->mr)
		vt_fatal("ibv_reg_mr(%s): %s", r->name, strerror(errno));
}

/* Fill every region with its pattern (the arena's guards included). */
static void fill(void)
{
	memset(arena.buf, PAT_GUARD, arena.len);
	memset(target.buf, PAT_TARGET, target.len);
	memset(noread.buf, PAT_NOREAD, noread.len);
	memset(otherpd.buf, PAT_OTHERPD, otherpd.len);
	memset(recvr.buf, PAT_RECV, recvr.len);
	memset(sink.buf, PAT_SINK, sink.len);
	memset(atomic.buf, PAT_ATOMIC, atomic.len);
	memset(win.buf, PAT_WINDOW, win.len);
}

static void setup_memory(void)
{
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_READ;

	arena.len = VT_PAGE + VT_TGT_LEN + 2 * VT_PAGE;
	arena.buf = alloc_pages(arena.len);
	target.buf = arena.buf + VT_PAGE + VT_TGT_SKEW;
	target.len = VT_TGT_LEN;
	noread.len = VT_SMALL_LEN;
	noread.buf = alloc_pages(noread.len);
	otherpd.len = VT_SMALL_LEN;
	otherpd.buf = alloc_pages(otherpd.len);
	recvr.len = VT_RECV_GAP + (opt.nrecv ? opt.nrecv : 1) *
		    (opt.recv_len + VT_RECV_GAP);
	recvr.buf = alloc_pages(recvr.len);
	sink.len = VT_SMALL_LEN;
	sink.buf = alloc_pages(sink.len);
	atomic.len = VT_SMALL_LEN;
	atomic.buf = alloc_pages(atomic.len);
	win.len = VT_SMALL_LEN;
	win.buf = alloc_pages(win.len);
	bulk.len = VT_BULK_LEN;
	bulk.buf = alloc_pages(bulk.len);
	fill();

	reg(&target, pd, rw);
	reg(&noread, pd, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	reg(&otherpd, pd2, rw);
	reg(&recvr, pd, IBV_ACCESS_LOCAL_WRITE);
	reg(&sink, pd, IBV_ACCESS_LOCAL_WRITE);
	reg(&atomic, pd, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	reg(&bulk, pd, IBV_ACCESS_LOCAL_WRITE);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	if (mw) {
		mw_rkey = mw->rkey;
		reg(&win, pd, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	}
}

static void write_info(void)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", opt.info);
	f = fopen(tmp, "w");
	if (!f)
		vt_fatal("cannot write %s: %s", tmp, strerror(errno));
	fprintf(f, "device=%s\naddr=%s\nport=%u\npid=%d\n",
		ibv_get_device_name(verbs->device), opt.addr, opt.port,
		(int)getpid());
	fprintf(f, "target_stag=0x%08x\ntarget_addr=0x%016llx\ntarget_len=%zu\n",
		target.mr->rkey, (unsigned long long)(uintptr_t)target.buf,
		target.len);
	fprintf(f, "control_len=%lu\n", VT_CTL_LEN);
	fprintf(f, "noread_stag=0x%08x\nnoread_addr=0x%016llx\nnoread_len=%zu\n",
		noread.mr->rkey, (unsigned long long)(uintptr_t)noread.buf,
		noread.len);
	fprintf(f, "otherpd_stag=0x%08x\notherpd_addr=0x%016llx\notherpd_len=%zu\n",
		otherpd.mr->rkey, (unsigned long long)(uintptr_t)otherpd.buf,
		otherpd.len);
	fprintf(f, "recv_stag=0x%08x\nrecv_count=%lu\nrecv_len=%lu\nird=%lu\n",
		recvr.mr->rkey, opt.nrecv, opt.recv_len, opt.ird);
	fprintf(f, "sink_len=%zu\n", sink.len);
	fprintf(f, "atomic_stag=0x%08x\natomic_addr=0x%016llx\natomic_len=%zu\n",
		atomic.mr->rkey, (unsigned long long)(uintptr_t)atomic.buf,
		atomic.len);
	if (mw)
		fprintf(f, "mw_addr=0x%016llx\nmw_len=%zu\n",
			(unsigned long long)(uintptr_t)win.buf, win.len);
	if (fclose(f) || rename(tmp, opt.info))
		vt_fatal("cannot write %s: %s", opt.info, strerror(errno));
}

static void append_info(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void append_info(const char *fmt, ...)
{
	va_list ap;
	FILE *f = fopen(opt.info, "a");

	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

static void setup_cm(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };

	sin.sin_port = htons(opt.port);
	if (inet_pton(AF_INET, opt.addr, &sin.sin_addr) != 1)
		vt_fatal("bad IPv4 address %s", opt.addr);
	ech = rdma_create_event_channel();
	if (!ech)
		vt_fatal("rdma_create_event_channel: %s", strerror(errno));
	if (fcntl(ech->fd, F_SETFL, fcntl(ech->fd, F_GETFL) | O_NONBLOCK))
		vt_fatal("fcntl: %s", strerror(errno));
	if (rdma_create_id(ech, &listen_id, NULL, RDMA_PS_TCP))
		vt_fatal("rdma_create_id: %s", strerror(errno));
	if (rdma_bind_addr(listen_id, (struct sockaddr *)&sin))
		vt_fatal("rdma_bind_addr %s:%u: %s", opt.addr, opt.port,
			 strerror(errno));
	verbs = listen_id->verbs;
	if (!verbs)
		vt_fatal("%s is not the address of an RDMA device", opt.addr);
	if (opt.dev && strcmp(ibv_get_device_name(verbs->device), opt.dev))
		vt_fatal("%s belongs to %s, not %s", opt.addr,
			 ibv_get_device_name(verbs->device), opt.dev);
	if (fcntl(verbs->async_fd, F_SETFL,
		  fcntl(verbs->async_fd, F_GETFL) | O_NONBLOCK))
		vt_fatal("fcntl: %s", strerror(errno));
	pd = ibv_alloc_pd(verbs);
	pd2 = ibv_alloc_pd(verbs);
	cq = ibv_create_cq(verbs, 2 * VT_MAX_RECV + 64, NULL, NULL, 0);
	if (!pd || !pd2 || !cq)
		vt_fatal("PD/CQ allocation: %s", strerror(errno));
	setup_memory();
	if (rdma_listen(listen_id, 4))
		vt_fatal("rdma_listen: %s", strerror(errno));
}

static void log_conn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void log_conn(const char *fmt, ...)
{
	va_list ap;

	printf("conn %lu ", conn.k);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* Post one send WR of the connection; it must complete later. */
static bool post_sq(struct ibv_send_wr *wr, const char *what)
{
	struct ibv_send_wr *bad;

	wr->wr_id = VT_WR_ID_SQ + conn.sq_posted;
	wr->send_flags |= IBV_SEND_SIGNALED;
	if (ibv_post_send(conn.qp, wr, &bad)) {
		log_conn("post %s failed: %s", what, strerror(errno));
		return false;
	}
	conn.sq_posted++;
	log_conn("posted %s wr_id=%llu", what, (unsigned long long)wr->wr_id);
	return true;
}

/* "vt:read STAG TO LEN" from the peer: read its memory into sink. */
static void post_read(const unsigned char *cmd, unsigned int len)
{
	char text[65];
	unsigned long long to;
	unsigned int stag, n;
	struct ibv_sge sge = { .lkey = sink.mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
	};

	memcpy(text, cmd, len < 64 ? len : 64);
	text[len < 64 ? len : 64] = 0;
	if (sscanf(text, "vt:read %x %llx %u", &stag, &to, &n) != 3 ||
	    n > sink.len) {
		log_conn("bad read command");
		return;
	}
	sge.addr = (uintptr_t)sink.buf;
	sge.length = n;
	wr.wr.rdma.rkey = stag;
	wr.wr.rdma.remote_addr = to;
	if (post_sq(&wr, "read"))
		log_conn("read posted stag=0x%08x to=0x%llx len=%u", stag, to, n);
}

static void post_send(unsigned long len, uint32_t lkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)target.buf, .length = len, .lkey = lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
	};

	post_sq(&wr, lkey == target.mr->lkey ? "send" : "badwr");
}

/* cmd:read: a Read the peer never answers (into target, past control). */
static void post_unanswered_read(void)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)target.buf + VT_PAGE, .length = VT_CTL_LEN,
		.lkey = target.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
		.wr.rdma = { .remote_addr = 0x1000, .rkey = VT_READ_STAG },
	};

	post_sq(&wr, "read");
}

/* cmd:writeimm: a Write with Immediate Data larger than TCP's buffers. */
static void post_write_imm(void)
{
	struct ibv_sge sge = { .addr = (uintptr_t)bulk.buf, .length = bulk.len,
			       .lkey = bulk.mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.imm_data = htonl(0x1d1d1d1d),
		.wr.rdma = { .remote_addr = 0x1000, .rkey = VT_READ_STAG },
	};

	post_sq(&wr, "writeimm");
}

/*
 * cmd:mw: bind the window, invalidate it, tell the peer the STag it had.
 * The three WRs run in SQ order: the Send leaves after the invalidation.
 */
static void mw_bind_and_invalidate(void)
{
	struct ibv_send_wr bind = { .opcode = IBV_WR_BIND_MW };
	struct ibv_send_wr inv = { .opcode = IBV_WR_LOCAL_INV };
	struct ibv_sge sge = { .addr = (uintptr_t)sink.buf,
			       .lkey = sink.mr->lkey };
	struct ibv_send_wr send = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
	};

	if (!mw) {
		log_conn("no memory window on this device");
		return;
	}
	mw_rkey = ibv_inc_rkey(mw_rkey);
	bind.bind_mw.mw = mw;
	bind.bind_mw.rkey = mw_rkey;
	bind.bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = win.mr, .addr = (uintptr_t)win.buf, .length = win.len,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	inv.invalidate_rkey = mw_rkey;
	sge.length = (uint32_t)sprintf((char *)sink.buf, "mw:%08x", mw_rkey);
	if (post_sq(&bind, "bind_mw") && post_sq(&inv, "local_inv"))
		post_sq(&send, "mw");
}

static void destroy_qp(const char *why)
{
	long long t0 = vt_now_ms();

	if (conn.own_qp)
		ibv_destroy_qp(conn.qp);
	else if (conn.id->qp)
		rdma_destroy_qp(conn.id);
	else
		return;
	conn.own_qp = false;
	conn.qp = NULL;
	log_conn("destroy_qp (%s) took %lld ms", why, vt_now_ms() - t0);
}

/* A Send from the peer that asks for an action (see the top). */
static void run_cmd(const char *cmd)
{
	unsigned long n;

	log_conn("cmd %s", cmd);
	if (!conn.qp)
		return;
	if (!strcmp(cmd, "read")) {
		post_unanswered_read();
	} else if (sscanf(cmd, "send %lu", &n) == 1) {
		while (n--)
			post_send(VT_SEND_LEN, target.mr->lkey);
	} else if (!strcmp(cmd, "badwr")) {
		post_send(16, target.mr->lkey ^ 0x80);
	} else if (sscanf(cmd, "late %lu", &n) == 1) {
		conn.late_at = vt_now_ms() + n;
	} else if (!strcmp(cmd, "disconnect")) {
		conn.disc_at = vt_now_ms();
		if (rdma_disconnect(conn.id))
			log_conn("rdma_disconnect: %s", strerror(errno));
	} else if (!strcmp(cmd, "destroy")) {
		destroy_qp("cmd");
	} else if (!strcmp(cmd, "writeimm")) {
		post_write_imm();
	} else if (!strcmp(cmd, "mw")) {
		mw_bind_and_invalidate();
	}
}

static void drain_cq(void)
{
	struct ibv_wc wc[16];
	char data[2 * 32 + 1];
	char cmd[VT_MAX_RECV_LEN];
	int i, n, j;

	while ((n = ibv_poll_cq(cq, 16, wc)) > 0) {
		for (i = 0; i < n; i++) {
			data[0] = 0;
			memset(cmd, 0, sizeof(cmd));
			if (wc[i].status == IBV_WC_SUCCESS &&
			    wc[i].opcode == IBV_WC_RECV) {
				unsigned char *b = recvr.buf + VT_RECV_GAP +
					wc[i].wr_id * (opt.recv_len + VT_RECV_GAP);

				for (j = 0; j < 32 && (unsigned int)j < wc[i].byte_len &&
				     (unsigned long)j < opt.recv_len; j++)
					sprintf(data + 2 * j, "%02x", b[j]);
				if (wc[i].byte_len > 8 && !memcmp(b, "vt:read ", 8))
					post_read(b, wc[i].byte_len);
				if (wc[i].byte_len > 4 &&
				    wc[i].byte_len < opt.recv_len &&
				    !memcmp(b, "cmd:", 4))
					strncpy(cmd, (char *)b + 4,
						wc[i].byte_len - 4);
			}
			if (wc[i].wr_id >= VT_WR_ID_SQ)
				conn.sq_done++;
			if (wc[i].status == IBV_WC_SUCCESS &&
			    wc[i].opcode == IBV_WC_RDMA_READ)
				conn.read_ok++;
			if (wc[i].status == IBV_WC_SUCCESS)
				conn.wc_ok++;
			else if (wc[i].status == IBV_WC_WR_FLUSH_ERR)
				conn.wc_flush++;
			else
				conn.wc_err++;
			log_conn("wc wr_id=%llu status=%s opcode=%d len=%u%s%s",
				 (unsigned long long)wc[i].wr_id,
				 ibv_wc_status_str(wc[i].status), wc[i].opcode,
				 wc[i].byte_len, data[0] ? " data=" : "", data);
			if (cmd[0])
				run_cmd(cmd);
		}
	}
	if (n < 0)
		vt_fail("ibv_poll_cq: %d", n);
}

static void drain_async(void)
{
	struct ibv_async_event ev;

	while (!ibv_get_async_event(verbs, &ev)) {
		conn.async++;
		log_conn("async %s", ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
	}
}

static bool post_recvs(struct ibv_qp *qp)
{
	struct ibv_recv_wr wr = { .num_sge = 1 }, *bad;
	struct ibv_sge sge = { .lkey = recvr.mr->lkey };
	unsigned long i;

	wr.sg_list = &sge;
	sge.length = opt.recv_len;
	for (i = 0; i < opt.nrecv; i++) {
		wr.wr_id = i;
		sge.addr = (uintptr_t)(recvr.buf + VT_RECV_GAP +
				       i * (opt.recv_len + VT_RECV_GAP));
		if (ibv_post_recv(qp, &wr, &bad)) {
			log_conn("post_recv %lu failed: %s", i, strerror(errno));
			return false;
		}
	}
	return true;
}

/*
 * Private data "vt:access=LETTERS": the IBV_ACCESS_* flags the peer wants
 * the QP to have; -1 without such a request.
 */
static int requested_access(const char *pdata, size_t len)
{
	const char *key = "vt:access=";
	size_t k = strlen(key), i;
	int access = IBV_ACCESS_LOCAL_WRITE;

	if (len < k || memcmp(pdata, key, k))
		return -1;
	for (i = k; i < len && pdata[i]; i++) {
		if (pdata[i] == 'w')
			access |= IBV_ACCESS_REMOTE_WRITE;
		else if (pdata[i] == 'r')
			access |= IBV_ACCESS_REMOTE_READ;
	}
	return access;
}

/* A QP of vt_target's own, in INIT with exactly @access. */
static struct ibv_qp *own_qp(struct rdma_cm_id *id,
			     struct ibv_qp_init_attr *qa, int access)
{
	struct ibv_qp_attr at = {
		.qp_state = IBV_QPS_INIT, .qp_access_flags = access,
		.port_num = id->port_num,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, qa);

	if (!qp)
		return NULL;
	if (ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS |
			  IBV_QP_PORT)) {
		ibv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

/*
 * -S: accept @id naming the active connection's QP. The QP is taken, so
 * the accept must fail; whatever the new connection sends must not reach
 * the active one.
 */
static void share_accept(struct rdma_cm_id *id, struct rdma_conn_param *cp)
{
	cp->qp_num = conn.qp->qp_num;
	if (rdma_accept(id, cp)) {
		log_conn("share-accept of qpn %u refused: %s", cp->qp_num,
			 strerror(errno));
	} else {
		log_conn("share-accept of qpn %u SUCCEEDED", cp->qp_num);
		rdma_disconnect(id);
	}
	rdma_destroy_id(id);
}

/* @pdata is peer.py's control pattern (octet i is i * 7 + 1). */
static bool pdata_is_pattern(const unsigned char *pdata, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (pdata[i] != (unsigned char)(i * 7 + 1))
			return false;
	return len > 0;
}

static void on_connect_request(struct rdma_cm_id *id, int access,
			       size_t pd_len, bool pd_pattern)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = VT_MAX_RECV,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rdma_conn_param cp = {
		.responder_resources = (uint8_t)opt.ird,
		.initiator_depth = (uint8_t)opt.ird,
	};

	if (conn.active && opt.share && conn.qp) {
		share_accept(id, &cp);
		return;
	}
	if (conn.active) {
		printf("busy: rejecting a connection request\n");
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return;
	}
	memset(&conn, 0, sizeof(conn));
	conn.disc_ms = -1;
	conn.id = id;
	conn.k = conns_ended + 1;
	conn.active = true;
	log_conn("request pd=%zu%s", pd_len, pd_pattern ? " pattern" : "");
	qa.send_cq = cq;
	qa.recv_cq = cq;
	if (access >= 0) {
		conn.qp = own_qp(id, &qa, access);
		conn.own_qp = conn.qp != NULL;
		cp.qp_num = conn.qp ? conn.qp->qp_num : 0;
		log_conn("own qp access=0x%x", access);
	} else if (!rdma_create_qp(id, pd, &qa)) {
		conn.qp = id->qp;
	}
	if (!conn.qp) {
		log_conn("QP creation failed: %s", strerror(errno));
		rdma_reject(id, NULL, 0);
		end_conn("create-qp-failed");
		return;
	}
	append_info("conn%lu_qpn=%u\n", conn.k, conn.qp->qp_num);
	log_conn("qpn=%u", conn.qp->qp_num);
	if (!post_recvs(conn.qp) || rdma_accept(id, &cp)) {
		log_conn("accept failed: %s", strerror(errno));
		rdma_reject(id, NULL, 0);
		end_conn("accept-failed");
	}
}

/* Compare a region with its pattern; report and count changed runs. */
static unsigned int check_range(const char *what, const unsigned char *p,
				size_t len, unsigned char pat, size_t base)
{
	unsigned int bad = 0;
	size_t i = 0, j;

	while (i < len) {
		if (p[i] == pat) {
			i++;
			continue;
		}
		for (j = i; j < len && p[j] != pat; j++)
			;
		log_conn("mem CHANGED %s octets [%zu, %zu)", what, base + i,
			 base + j);
		bad++;
		i = j;
	}
	return bad;
}

/*
 * The atomic region: its first 8 octets may hold the pattern plus the 1
 * the control case's Fetch-and-Add adds; nothing else may change.
 */
static unsigned int check_atomic(void)
{
	uint64_t pat, word;
	unsigned int bad = 0;

	memset(&pat, PAT_ATOMIC, sizeof(pat));
	memcpy(&word, atomic.buf, sizeof(word));
	if (word != pat && word != pat + 1) {
		log_conn("mem CHANGED atomic octets [0, 8): 0x%016llx",
			 (unsigned long long)word);
		bad++;
	}
	return bad + check_range("atomic", atomic.buf + sizeof(word),
				 atomic.len - sizeof(word), PAT_ATOMIC,
				 sizeof(word));
}

/*
 * Memory verdict of the ended connection. Guards, noread, otherpd and the
 * target beyond the control window must be untouched; the control window
 * may hold the control pattern (or be untouched). Receive buffers may be
 * written, the gaps between them not. The atomic region: check_atomic().
 */
static unsigned int check_memory(const char **ctl)
{
	size_t glo = VT_PAGE + VT_TGT_SKEW;
	unsigned int bad = 0;
	unsigned long i;
	bool written = true, clean = true;

	bad += check_range("guard-below", arena.buf, glo, PAT_GUARD, 0);
	bad += check_range("guard-above", target.buf + target.len,
			   arena.len - glo - target.len, PAT_GUARD, 0);
	bad += check_range("target", target.buf + VT_CTL_LEN,
			   target.len - VT_CTL_LEN, PAT_TARGET, VT_CTL_LEN);
	bad += check_range("noread", noread.buf, noread.len, PAT_NOREAD, 0);
	bad += check_range("otherpd", otherpd.buf, otherpd.len, PAT_OTHERPD, 0);
	bad += check_atomic();
	if (win.mr)
		bad += check_range("window", win.buf, win.len, PAT_WINDOW, 0);
	for (i = 0; i <= opt.nrecv; i++) {
		size_t off = i * (opt.recv_len + VT_RECV_GAP);

		bad += check_range("recv-gap", recvr.buf + off, VT_RECV_GAP,
				   PAT_RECV, off);
	}
	for (i = 0; i < VT_CTL_LEN; i++) {
		written &= target.buf[i] == ctl_octet(i);
		clean &= target.buf[i] == PAT_TARGET;
	}
	*ctl = clean ? "untouched" : written ? "written" : "corrupt";
	if (!clean && !written) {
		log_conn("mem CHANGED target control window with foreign data");
		bad++;
	}
	return bad;
}

static void end_conn(const char *why)
{
	unsigned int bad;
	const char *ctl;

	drain_async();
	drain_cq();
	destroy_qp("end");
	drain_async();
	drain_cq();
	rdma_destroy_id(conn.id);
	bad = check_memory(&ctl);
	if (bad)
		vt_fail("conn %lu: %u memory region(s) changed", conn.k, bad);
	if (conn.sq_done != conn.sq_posted)
		log_conn("send WRs LOST: %u posted, %u completed", conn.sq_posted,
			 conn.sq_done);
	log_conn("end why=%s wc_ok=%u wc_flush=%u wc_err=%u async=%u read_ok=%u mem=%s control=%s sq_posted=%u sq_done=%u disc_ms=%lld",
		 why, conn.wc_ok, conn.wc_flush, conn.wc_err, conn.async,
		 conn.read_ok, bad ? "CHANGED" : "ok", ctl, conn.sq_posted,
		 conn.sq_done, conn.disc_ms);
	fill();
	conn.active = false;
	conns_ended++;
}

static void on_cm_event(struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;
	enum rdma_cm_event_type type = ev->event;
	int status = ev->status;

	if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		char pdata[VT_PD_MAX];
		size_t n = ev->param.conn.private_data_len;

		n = n < sizeof(pdata) ? n : sizeof(pdata);
		if (n)
			memcpy(pdata, ev->param.conn.private_data, n);
		rdma_ack_cm_event(ev);
		on_connect_request(id, requested_access(pdata, n), n,
				   pdata_is_pattern((unsigned char *)pdata, n));
		return;
	}
	rdma_ack_cm_event(ev);
	if (!conn.active || id != conn.id) {
		printf("event %s (status %d) for no connection\n",
		       rdma_event_str(type), status);
		return;
	}
	log_conn("event %s status=%d", rdma_event_str(type), status);
	switch (type) {
	case RDMA_CM_EVENT_ESTABLISHED:
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (conn.disc_at)
			conn.disc_ms = vt_now_ms() - conn.disc_at;
		/* Let the flushes arrive before the QP goes. */
		usleep(200 * 1000);
		end_conn("disconnected");
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		end_conn(rdma_event_str(type));
		break;
	default:
		break;
	}
}

static void loop(void)
{
	struct pollfd pfd = { .events = POLLIN };
	struct rdma_cm_event *ev;

	pfd.fd = ech->fd;
	while (!stop && (!opt.conns || conns_ended < opt.conns)) {
		poll(&pfd, 1, 100);
		while (!rdma_get_cm_event(ech, &ev))
			on_cm_event(ev);
		if (conn.active) {
			drain_async();
			drain_cq();
			if (conn.late_at && vt_now_ms() >= conn.late_at) {
				conn.late_at = 0;
				log_conn("late send");
				post_send(16, target.mr->lkey);
			}
		}
	}
	if (conn.active) {
		rdma_disconnect(conn.id);
		usleep(200 * 1000);
		end_conn("stopped");
	}
}

static void teardown(void)
{
	const char *ctl;

	if (check_memory(&ctl))
		vt_fail("memory changed after the last connection");
	ibv_dereg_mr(target.mr);
	ibv_dereg_mr(noread.mr);
	ibv_dereg_mr(otherpd.mr);
	ibv_dereg_mr(recvr.mr);
	ibv_dereg_mr(sink.mr);
	ibv_dereg_mr(atomic.mr);
	ibv_dereg_mr(bulk.mr);
	if (mw) {
		ibv_dealloc_mw(mw);
		ibv_dereg_mr(win.mr);
	}
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd2);
	ibv_dealloc_pd(pd);
	rdma_destroy_id(listen_id);
	rdma_destroy_event_channel(ech);
	free(arena.buf);
	free(noread.buf);
	free(otherpd.buf);
	free(recvr.buf);
	free(sink.buf);
	free(atomic.buf);
	free(win.buf);
	free(bulk.buf);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };

	vt_init("vt_target");
	parse(argc, argv);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	setup_cm();
	write_info();
	printf("listening on %s:%u device %s\n", opt.addr, opt.port,
	       ibv_get_device_name(verbs->device));
	loop();
	printf("connections ended: %lu\n", conns_ended);
	teardown();
	return vt_exit();
}
