// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// Shared receive queues: a kernel-created ring that user space fills.
#include "provider.h"

#include <algorithm>
#include <cerrno>
#include <memory>

namespace kiwi {

namespace {

using CreateSrqResp =
	RespBuffer<ib_uverbs_create_srq_resp, kiwi_uresp_create_srq>;

} // namespace

namespace verbs {

ibv_srq *create_srq(ibv_pd *pd, ibv_srq_init_attr *attr)
{
	if (attr->attr.max_sge > KIWI_MAX_SGE) {
		errno = EINVAL;
		return nullptr;
	}

	auto srq = std::make_unique<Srq>();
	pabi::CmdCreateSrq cmd{};
	CreateSrqResp resp{};
	int ret =
		pabi::ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd,
					 sizeof(cmd), resp.core(), resp.size());
	if (ret) {
		srq.reset();
		errno = ret;
		return nullptr;
	}

	// ibv_cmd_create_srq stored the granted limits in attr->attr.
	const kiwi_uresp_create_srq drv = resp.drv();
	ret = map_ring(pd->context->cmd_fd, drv.srq_key, drv.num_rqe,
		       sizeof(kiwi_rqe), srq->ring_map);
	if (ret) {
		pabi::ibv_cmd_destroy_srq(&srq->vsrq.srq);
		srq.reset(); // unmaps: before errno
		errno = ret;
		return nullptr;
	}
	srq->vsrq.srq_type = IBV_SRQT_BASIC;
	srq->rq.attach(srq->ring_map.addr(), drv.num_rqe,
		       std::min<uint32_t>(attr->attr.max_sge, KIWI_MAX_SGE));
	return &srq.release()->vsrq.srq;
}

int modify_srq(ibv_srq *srq, ibv_srq_attr *attr, int attr_mask)
{
	// The ring is a fixed-size mapping: an SRQ cannot grow or shrink.
	if (attr_mask & IBV_SRQ_MAX_WR)
		return EOPNOTSUPP;

	pabi::CmdModifySrq cmd{};
	return pabi::ibv_cmd_modify_srq(srq, attr, attr_mask, &cmd,
					sizeof(cmd));
}

int query_srq(ibv_srq *srq, ibv_srq_attr *attr)
{
	pabi::CmdQuerySrq cmd{};

	return pabi::ibv_cmd_query_srq(srq, attr, &cmd, sizeof(cmd));
}

int destroy_srq(ibv_srq *srq)
{
	const int ret = pabi::ibv_cmd_destroy_srq(srq);

	if (!ret)
		delete to_srq(srq);
	return ret;
}

int post_srq_recv(ibv_srq *srq, ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept
{
	uint32_t posted = 0;

	return to_srq(srq)->rq.post(wr, bad_wr, posted);
}

} // namespace verbs
} // namespace kiwi
