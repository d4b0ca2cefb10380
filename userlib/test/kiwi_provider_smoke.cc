// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// End-to-end check of libkiwi against a real kiwi device (run in the QEMU
// lab by userlib/test/vm-provider.sh): opens the device through libibverbs,
// creates every object kind with its rings mapped, and drives the ring
// paths the kernel can serve without a connection: a QP moved to the error
// state flushes what is posted to it, so work requests travel through the
// SQ/RQ rings and the doorbell, and come back as flush completions through
// the CQ ring and the completion channel.
//
// usage: kiwi_provider_smoke [DEVICE]   (default: the first kiwi* device)
// Prints one line per check; exit status 0 only if every check passed.
#include <infiniband/verbs.h>

#include <poll.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

int g_failures;

void check(bool ok, const std::string &what)
{
	std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
	if (!ok)
		g_failures++;
}

// check() for a call returning a pointer: errno explains a NULL.
void check_ptr(const void *p, const std::string &what)
{
	const int err = errno;

	check(p != nullptr, p ? what : what + ": " + std::strerror(err));
}

std::string err_str(int err)
{
	return std::to_string(err) + " (" + std::strerror(err) + ")";
}

ibv_device *find_device(ibv_device **list, int num, std::string_view want)
{
	for (int i = 0; i < num; i++) {
		const std::string_view name = ibv_get_device_name(list[i]);

		if (want.empty() ? name.starts_with("kiwi") : name == want)
			return list[i];
	}
	return nullptr;
}

// Polls cq until want completions arrived or 10 s passed.
std::vector<ibv_wc> poll_for(ibv_cq *cq, size_t want)
{
	std::vector<ibv_wc> got;
	const auto end =
		std::chrono::steady_clock::now() + std::chrono::seconds(10);

	while (got.size() < want && std::chrono::steady_clock::now() < end) {
		ibv_wc wc[4];
		const int n = ibv_poll_cq(cq, 4, wc);

		if (n < 0) {
			check(false,
			      "ibv_poll_cq returned " + std::to_string(n));
			break;
		}
		got.insert(got.end(), wc, wc + n);
		if (n == 0)
			std::this_thread::sleep_for(
				std::chrono::milliseconds(1));
	}
	return got;
}

bool all_flushed(const std::vector<ibv_wc> &wcs, uint64_t first_id,
		 ibv_wc_opcode op, uint32_t qp_num)
{
	for (size_t i = 0; i < wcs.size(); i++) {
		if (wcs[i].wr_id != first_id + i ||
		    wcs[i].status != IBV_WC_WR_FLUSH_ERR ||
		    wcs[i].qp_num != qp_num)
			return false;
		if (op == IBV_WC_RECV && wcs[i].opcode != IBV_WC_RECV)
			return false;
	}
	return true;
}

void device_checks(ibv_context *ctx)
{
	ibv_device_attr_ex ex{};
	int ret = ibv_query_device_ex(ctx, nullptr, &ex);
	check(ret == 0, "ibv_query_device_ex: " + err_str(ret));
	check(ex.orig_attr.max_qp > 0 && ex.orig_attr.max_cq > 0,
	      "device reports QPs and CQs");
	check(ex.orig_attr.fw_ver[0] != '\0',
	      std::string("fw_ver '") + ex.orig_attr.fw_ver + "'");
	check(ex.orig_attr.max_sge >= 1,
	      "max_sge " + std::to_string(ex.orig_attr.max_sge));

	ibv_port_attr port{};
	ret = ibv_query_port(ctx, 1, &port);
	check(ret == 0, "ibv_query_port 1: " + err_str(ret));
	check(port.gid_tbl_len >= 1, "port has a GID table");
	ret = ibv_query_port(ctx, 2, &port);
	check(ret != 0, "ibv_query_port 2 fails");
}

struct Objects {
	ibv_pd *pd = nullptr;
	ibv_mr *mr = nullptr;
	ibv_comp_channel *channel = nullptr;
	ibv_cq *cq = nullptr;
	ibv_qp *qp = nullptr;
	std::vector<unsigned char> buf = std::vector<unsigned char>(65536);
};

ibv_qp *create_rc_qp(ibv_pd *pd, ibv_cq *cq, ibv_srq *srq,
		     ibv_qp_init_attr &attr)
{
	attr = {};
	attr.send_cq = cq;
	attr.recv_cq = cq;
	attr.srq = srq;
	attr.qp_type = IBV_QPT_RC;
	attr.cap.max_send_wr = 8;
	attr.cap.max_recv_wr = 8;
	attr.cap.max_send_sge = 2;
	attr.cap.max_recv_sge = 2;
	attr.cap.max_inline_data = 64;
	return ibv_create_qp(pd, &attr);
}

void create_objects(ibv_context *ctx, Objects &o)
{
	o.pd = ibv_alloc_pd(ctx);
	check_ptr(o.pd, "ibv_alloc_pd");
	o.mr = ibv_reg_mr(o.pd, o.buf.data(), o.buf.size(),
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	check_ptr(o.mr, "ibv_reg_mr");
	o.channel = ibv_create_comp_channel(ctx);
	check_ptr(o.channel, "ibv_create_comp_channel");
	o.cq = ibv_create_cq(ctx, 32, nullptr, o.channel, 0);
	check_ptr(o.cq, "ibv_create_cq with channel");
	if (o.cq)
		check(o.cq->cqe >= 32,
		      "CQ has >= 32 entries: " + std::to_string(o.cq->cqe));

	ibv_qp_init_attr attr{};
	o.qp = create_rc_qp(o.pd, o.cq, nullptr, attr);
	check_ptr(o.qp, "ibv_create_qp RC");
	if (o.qp)
		check(attr.cap.max_send_wr >= 8 &&
			      attr.cap.max_inline_data >= 64,
		      "QP caps returned: send_wr " +
			      std::to_string(attr.cap.max_send_wr) +
			      " inline " +
			      std::to_string(attr.cap.max_inline_data));

	ibv_qp_init_attr ud = attr;
	ud.qp_type = IBV_QPT_UD;
	errno = 0;
	ibv_qp *bad = ibv_create_qp(o.pd, &ud);
	check(bad == nullptr && errno == EOPNOTSUPP,
	      "UD QP is EOPNOTSUPP: " + err_str(errno));
	if (bad)
		ibv_destroy_qp(bad);
}

ibv_sge sge_of(Objects &o, size_t off, uint32_t len)
{
	return ibv_sge{reinterpret_cast<uintptr_t>(o.buf.data() + off), len,
		       o.mr->lkey};
}

void post_recvs(Objects &o, uint64_t first_id, int n)
{
	for (int i = 0; i < n; i++) {
		ibv_sge sge = sge_of(o, 4096 * static_cast<size_t>(i), 4096);
		ibv_recv_wr wr{};
		ibv_recv_wr *bad = nullptr;

		wr.wr_id = first_id + static_cast<uint64_t>(i);
		wr.sg_list = &sge;
		wr.num_sge = 1;
		const int ret = ibv_post_recv(o.qp, &wr, &bad);
		check(ret == 0, "ibv_post_recv " + std::to_string(wr.wr_id) +
					": " + err_str(ret));
	}
}

void qp_checks(Objects &o)
{
	ibv_qp_attr qattr{};
	ibv_qp_init_attr qinit{};
	int ret = ibv_query_qp(o.qp, &qattr, IBV_QP_STATE | IBV_QP_CAP, &qinit);
	check(ret == 0, "ibv_query_qp: " + err_str(ret));
	std::printf("     QP %u state %d\n", o.qp->qp_num, qattr.qp_state);
	ret = ibv_modify_qp(o.qp, &qattr, 0);
	check(ret == 0,
	      "ibv_modify_qp with mask 0 (librdmacm's iWARP RTR/RTS): " +
		      err_str(ret));

	// Receives before the error: flushed by the transition.
	post_recvs(o, 100, 3);
	ibv_sge sges[3] = {sge_of(o, 0, 1), sge_of(o, 1, 1), sge_of(o, 2, 1)};
	ibv_recv_wr too_many{};
	ibv_recv_wr *bad_recv = nullptr;
	too_many.sg_list = sges;
	too_many.num_sge = 3;
	ret = ibv_post_recv(o.qp, &too_many, &bad_recv);
	check(ret == EINVAL && bad_recv == &too_many,
	      "3 SGEs on a 2-SGE RQ: EINVAL, bad_wr");

	ret = ibv_req_notify_cq(o.cq, 0);
	check(ret == 0, "ibv_req_notify_cq: " + err_str(ret));
	qattr = {};
	qattr.qp_state = IBV_QPS_ERR;
	ret = ibv_modify_qp(o.qp, &qattr, IBV_QP_STATE);
	check(ret == 0, "ibv_modify_qp to ERR: " + err_str(ret));
	auto wcs = poll_for(o.cq, 3);
	check(wcs.size() == 3 &&
		      all_flushed(wcs, 100, IBV_WC_RECV, o.qp->qp_num),
	      "3 receives flushed through the CQ ring (" +
		      std::to_string(wcs.size()) + ")");

	pollfd pfd{o.channel->fd, POLLIN, 0};
	ret = poll(&pfd, 1, 5000);
	check(ret == 1, "completion channel signalled after arming");
	if (ret == 1) {
		ibv_cq *ev_cq = nullptr;
		void *ev_ctx = nullptr;
		ret = ibv_get_cq_event(o.channel, &ev_cq, &ev_ctx);
		check(ret == 0 && ev_cq == o.cq,
		      "ibv_get_cq_event names the CQ");
		if (ret == 0)
			ibv_ack_cq_events(ev_cq, 1);
	}

	// Sends after the error: through the SQ ring, the doorbell flushes.
	char text[] = "inline payload through the SQ ring";
	ibv_sge isge{reinterpret_cast<uintptr_t>(text), sizeof(text), 0};
	ibv_sge ssge = sge_of(o, 0, 512);
	ibv_send_wr wr[3] = {};
	wr[0].wr_id = 200;
	wr[0].opcode = IBV_WR_SEND;
	wr[0].send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	wr[0].sg_list = &isge;
	wr[0].num_sge = 1;
	wr[0].next = &wr[1];
	wr[1].wr_id = 201;
	wr[1].opcode = IBV_WR_RDMA_WRITE;
	wr[1].send_flags = IBV_SEND_SIGNALED;
	wr[1].sg_list = &ssge;
	wr[1].num_sge = 1;
	wr[1].wr.rdma.remote_addr = 0x1000;
	wr[1].wr.rdma.rkey = 0x1234;
	wr[1].next = &wr[2];
	wr[2].wr_id = 202;
	wr[2].opcode = IBV_WR_RDMA_READ;
	wr[2].send_flags = IBV_SEND_SIGNALED;
	wr[2].sg_list = &ssge;
	wr[2].num_sge = 1;
	ibv_send_wr *bad_send = nullptr;
	ret = ibv_post_send(o.qp, wr, &bad_send);
	check(ret == 0, "ibv_post_send of 3 WRs to an ERR QP: " + err_str(ret));
	wcs = poll_for(o.cq, 3);
	check(wcs.size() == 3 &&
		      all_flushed(wcs, 200, IBV_WC_SEND, o.qp->qp_num),
	      "3 sends flushed through SQ ring + doorbell (" +
		      std::to_string(wcs.size()) + ")");

	// An RFC 7306 atomic needs one 8-octet result buffer; the atomic
	// write of IBTA has no iWARP wire form and is not built.
	ibv_send_wr atomic{};
	atomic.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	ret = ibv_post_send(o.qp, &atomic, &bad_send);
	check(ret == EINVAL && bad_send == &atomic,
	      "atomic WR without a result buffer: EINVAL, bad_wr");
	atomic.opcode = IBV_WR_ATOMIC_WRITE;
	bad_send = nullptr;
	ret = ibv_post_send(o.qp, &atomic, &bad_send);
	check(ret == EOPNOTSUPP && bad_send == &atomic,
	      "atomic write WR: EOPNOTSUPP, bad_wr");

	// Receives posted in the error state: the provider rings the doorbell.
	post_recvs(o, 300, 2);
	wcs = poll_for(o.cq, 2);
	check(wcs.size() == 2 &&
		      all_flushed(wcs, 300, IBV_WC_RECV, o.qp->qp_num),
	      "receives posted in ERR flushed (" + std::to_string(wcs.size()) +
		      ")");
}

void srq_checks(Objects &o)
{
	ibv_srq_init_attr sattr{};
	sattr.attr.max_wr = 16;
	sattr.attr.max_sge = 2;
	ibv_srq *srq = ibv_create_srq(o.pd, &sattr);
	check_ptr(srq, "ibv_create_srq");
	if (!srq)
		return;

	for (uint64_t i = 0; i < 4; i++) {
		ibv_sge sge = sge_of(o, 1024 * i, 1024);
		ibv_recv_wr wr{};
		ibv_recv_wr *bad = nullptr;
		wr.wr_id = 400 + i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		const int ret = ibv_post_srq_recv(srq, &wr, &bad);
		check(ret == 0, "ibv_post_srq_recv: " + err_str(ret));
	}
	ibv_srq_attr attr{};
	int ret = ibv_query_srq(srq, &attr);
	check(ret == 0 && attr.max_wr >= 16, "ibv_query_srq: " + err_str(ret));
	attr.max_wr = 64;
	ret = ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR);
	check(ret == EOPNOTSUPP, "resizing the SRQ: EOPNOTSUPP");

	ibv_qp_init_attr qattr{};
	ibv_qp *qp = create_rc_qp(o.pd, o.cq, srq, qattr);
	check_ptr(qp, "ibv_create_qp with SRQ");
	if (qp) {
		ibv_recv_wr wr{};
		ibv_recv_wr *bad = nullptr;
		ret = ibv_post_recv(qp, &wr, &bad);
		check(ret == EINVAL, "ibv_post_recv on an SRQ QP: EINVAL");
		check(ibv_destroy_qp(qp) == 0, "destroy SRQ QP");
	}
	check(ibv_destroy_srq(srq) == 0, "ibv_destroy_srq");
}

void destroy_objects(Objects &o)
{
	if (o.qp)
		check(ibv_destroy_qp(o.qp) == 0, "ibv_destroy_qp");
	if (o.cq)
		check(ibv_destroy_cq(o.cq) == 0, "ibv_destroy_cq");
	if (o.channel)
		check(ibv_destroy_comp_channel(o.channel) == 0,
		      "ibv_destroy_comp_channel");
	if (o.mr)
		check(ibv_dereg_mr(o.mr) == 0, "ibv_dereg_mr");
	if (o.pd)
		check(ibv_dealloc_pd(o.pd) == 0, "ibv_dealloc_pd");
}

} // namespace

int main(int argc, char **argv)
{
	int num = 0;
	ibv_device **list = ibv_get_device_list(&num);
	if (!list) {
		std::printf("FAIL ibv_get_device_list: %s\n",
			    std::strerror(errno));
		return 1;
	}
	ibv_device *dev = find_device(list, num, argc > 1 ? argv[1] : "");
	check(dev != nullptr, "found a kiwi device");
	if (!dev) {
		ibv_free_device_list(list);
		return 1;
	}
	check(dev->transport_type == IBV_TRANSPORT_IWARP, "transport is iWARP");

	ibv_context *ctx = ibv_open_device(dev);
	check_ptr(ctx, "ibv_open_device (libkiwi alloc_context)");
	if (ctx) {
		Objects o;
		device_checks(ctx);
		create_objects(ctx, o);
		if (o.qp && o.cq && o.mr)
			qp_checks(o);
		if (o.pd && o.cq && o.mr)
			srq_checks(o);
		destroy_objects(o);
		check(ibv_close_device(ctx) == 0, "ibv_close_device");
	}
	ibv_free_device_list(list);
	std::printf("%s: %d failure(s)\n", g_failures ? "FAIL" : "PASS",
		    g_failures);
	return g_failures ? 1 : 0;
}
