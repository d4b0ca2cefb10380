// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// Memory windows: allocation through the uverbs commands, binding through
// the send queue. ibv_bind_mw (type 1) posts the same work request as an
// application's IBV_WR_BIND_MW (type 2): one SQE that the kernel executes
// in send queue order (Documentation/datapath.md, memory windows).
#include "provider.h"

#include <cerrno>
#include <memory>

namespace kiwi::verbs {

ibv_mw *alloc_mw(ibv_pd *pd, ibv_mw_type type)
{
	auto mw = std::make_unique<ibv_mw>();
	pabi::CmdAllocMw cmd{};
	ib_uverbs_alloc_mw_resp resp{};
	const int ret = pabi::ibv_cmd_alloc_mw(
		pd, type, mw.get(), &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		mw.reset();
		errno = ret;
		return nullptr;
	}
	return mw.release();
}

int dealloc_mw(ibv_mw *mw)
{
	const int ret = pabi::ibv_cmd_dealloc_mw(mw);

	if (!ret)
		delete mw;
	return ret;
}

// The new rkey is the window's with the next key byte (ibv_inc_rkey). As
// ibv_bind_mw(3) says, mw->rkey holds it once the bind is posted; the
// application restores the old one if the completion reports an error.
int bind_mw(ibv_qp *qp, ibv_mw *mw, ibv_mw_bind *mw_bind) noexcept
{
	if (!mw_bind || mw->type != IBV_MW_TYPE_1)
		return EINVAL;
	ibv_send_wr wr{};
	wr.wr_id = mw_bind->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = mw_bind->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;
	ibv_send_wr *bad_wr = nullptr;
	const int ret = post_send(qp, &wr, &bad_wr);
	if (!ret)
		mw->rkey = wr.bind_mw.rkey;
	return ret;
}

} // namespace kiwi::verbs
