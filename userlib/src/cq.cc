// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// Completion queues: created by the kernel, polled and armed in user space.
#include "provider.h"

#include <cerrno>
#include <memory>

namespace kiwi {

namespace {

using CreateCqResp = RespBuffer<ib_uverbs_create_cq_resp, kiwi_uresp_create_cq>;

} // namespace

namespace verbs {

ibv_cq *create_cq(ibv_context *ctx, int cqe, ibv_comp_channel *channel,
		  int comp_vector)
{
	auto cq = std::make_unique<Cq>();
	pabi::CmdCreateCq cmd{};
	CreateCqResp resp{};
	int ret = pabi::ibv_cmd_create_cq(ctx, cqe, channel, comp_vector,
					  &cq->vcq.cq, &cmd, sizeof(cmd),
					  resp.core(), resp.size());
	if (ret) {
		cq.reset();
		errno = ret;
		return nullptr;
	}

	const kiwi_uresp_create_cq drv = resp.drv();
	ret = map_ring(ctx->cmd_fd, drv.cq_key, drv.num_cqe, sizeof(kiwi_cqe),
		       cq->ring_map);
	if (ret) {
		pabi::ibv_cmd_destroy_cq(&cq->vcq.cq);
		cq.reset(); // unmaps: before errno
		errno = ret;
		return nullptr;
	}
	cq->queue.attach(cq->ring_map.addr(), drv.num_cqe);
	return &cq.release()->vcq.cq;
}

int destroy_cq(ibv_cq *cq)
{
	const int ret = pabi::ibv_cmd_destroy_cq(cq);

	if (!ret)
		delete to_cq(cq);
	return ret;
}

int poll_cq(ibv_cq *cq, int num_entries, ibv_wc *wc) noexcept
{
	return to_cq(cq)->queue.poll(num_entries, wc);
}

int req_notify_cq(ibv_cq *cq, int solicited_only) noexcept
{
	to_cq(cq)->queue.arm(solicited_only != 0);
	return 0;
}

} // namespace verbs
} // namespace kiwi
