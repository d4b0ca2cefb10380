// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Shared helpers of the kiwi VM test programs; see vt.h. */
#include <inttypes.h>
#include <time.h>
#include <unistd.h>

#include "vt.h"

unsigned int vt_failures;
const char *vt_prog = "vt";

static void vt_vreport(FILE *f, const char *tag, const char *fmt, va_list ap)
{
	fprintf(f, "%s: %s: ", vt_prog, tag);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
	fflush(f);
}

void vt_init(const char *prog)
{
	vt_prog = prog;
	setvbuf(stdout, NULL, _IOLBF, 0);
}

void vt_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vt_vreport(stderr, "FAIL", fmt, ap);
	va_end(ap);
	vt_failures++;
}

void vt_pass(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vt_vreport(stdout, "ok", fmt, ap);
	va_end(ap);
}

void vt_fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vt_vreport(stderr, "FATAL", fmt, ap);
	va_end(ap);
	exit(2);
}

void vt_die(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vt_vreport(stderr, "FAIL", fmt, ap);
	va_end(ap);
	exit(code);
}

int vt_exit(void)
{
	if (vt_failures) {
		fprintf(stderr, "%s: %u check(s) failed\n", vt_prog, vt_failures);
		return 1;
	}
	printf("%s: all checks passed\n", vt_prog);
	return 0;
}

struct ibv_context *vt_open(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		vt_fatal("ibv_get_device_list: %s", strerror(errno));
	for (i = 0; i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name))
			continue;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			vt_fatal("ibv_open_device(%s): %s", name,
				 strerror(errno));
		break;
	}
	ibv_free_device_list(list);
	if (!ctx)
		vt_fatal("no verbs device %s among %d device(s)", name, n);
	return ctx;
}

void vt_signal_ready(const char *path)
{
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "w");
	if (!f || fputs("ready\n", f) == EOF || fclose(f))
		vt_fatal("cannot write ready file %s: %s", path,
			 strerror(errno));
}

void vt_expect_errno(const char *what, bool failed, int got_errno,
		     int want_errno)
{
	if (!failed)
		vt_fail("%s: succeeded, expected %s", what,
			strerror(want_errno));
	else if (got_errno != want_errno)
		vt_fail("%s: failed with %s (%d), expected %s (%d)", what,
			strerror(got_errno), got_errno, strerror(want_errno),
			want_errno);
	else
		vt_pass("%s: %s", what, strerror(got_errno));
}

unsigned long vt_ulong(const char *opt, const char *arg)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-')
		vt_fatal("option %s: bad number '%s'", opt, arg);
	return v;
}

long long vt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int vt_qp_to_state(struct ibv_qp *qp, enum ibv_qp_state s, int access)
{
	struct ibv_qp_attr a = { .qp_state = s, .qp_access_flags = access };

	return ibv_modify_qp(qp, &a, s == IBV_QPS_INIT ?
				     IBV_QP_STATE | IBV_QP_ACCESS_FLAGS :
				     IBV_QP_STATE);
}

enum ibv_qp_state vt_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
		vt_fatal("ibv_query_qp: %s", strerror(errno));
	return a.qp_state;
}

bool vt_poll_one(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	long long end = vt_now_ms() + ms;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			return false;
		if (n)
			return true;
		usleep(100);
	} while (vt_now_ms() < end);
	return false;
}

int vt_post_rdma(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id,
		 void *buf, uint32_t len, uint32_t lkey, uint64_t raddr,
		 uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf,
		.length = len,
		.lkey = lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

int vt_post_recv(struct ibv_qp *qp, uint64_t wr_id, void *buf, uint32_t len,
		 uint32_t lkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf,
		.length = len,
		.lkey = lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
	};
	struct ibv_recv_wr *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

bool vt_term_sent(struct ibv_context *ctx, uint32_t qpn, const char *term)
{
	long long end = vt_now_ms() + 5000;
	char cmd[160], want[64], line[4096];
	bool found = false;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma res show qp link %s/1 lqpn %" PRIu32
		 " -dd 2>&1", ibv_get_device_name(ctx->device), qpn);
	snprintf(want, sizeof(want), "drv_term_sent %s ", term);
	while (!found && vt_now_ms() < end) {
		f = popen(cmd, "r");
		if (!f)
			vt_fatal("popen: %s", strerror(errno));
		while (fgets(line, sizeof(line), f))
			if (strstr(line, want))
				found = true;
		pclose(f);
		if (!found)
			usleep(100000);
	}
	return found;
}

long long vt_syscw(void)
{
	FILE *f = fopen("/proc/self/io", "r");
	char line[128];
	long long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "syscw: %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}
