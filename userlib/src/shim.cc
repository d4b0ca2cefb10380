// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// The C ABI face of libkiwi: the device and context operation tables
// libibverbs calls through, and the ELF constructor that registers them.
// Every entry point is wrapped by entry<> (boundary.h), so no C++
// exception crosses into libibverbs.
#include "boundary.h"
#include "match.h"
#include "provider.h"
#include "verbs_private.h"

#include <rdma/kiwi-abi.h>

#include <new>

namespace kiwi {

namespace {

// Slots left NULL keep libibverbs' defaults: EOPNOTSUPP for the verbs kiwi
// does not implement, a no-op for async_event and cq_event (nothing to
// acknowledge in user space).
constexpr pabi::verbs_context_ops kContextOps = {
	.alloc_mw = entry<verbs::alloc_mw>,
	.alloc_pd = entry<verbs::alloc_pd>,
	.bind_mw = entry<verbs::bind_mw>,
	.create_cq = entry<verbs::create_cq>,
	.create_cq_ex = entry<verbs::create_cq_ex>,
	.create_qp = entry<verbs::create_qp>,
	.create_qp_ex = entry<verbs::create_qp_ex>,
	.create_srq = entry<verbs::create_srq>,
	.dealloc_mw = entry<verbs::dealloc_mw>,
	.dealloc_pd = entry<verbs::dealloc_pd>,
	.dereg_mr = entry<verbs::dereg_mr>,
	.destroy_cq = entry<verbs::destroy_cq>,
	.destroy_qp = entry<verbs::destroy_qp>,
	.destroy_srq = entry<verbs::destroy_srq>,
	.free_context = entry<verbs::free_context>,
	.modify_qp = entry<verbs::modify_qp>,
	.modify_srq = entry<verbs::modify_srq>,
	.poll_cq = entry<verbs::poll_cq>,
	.post_recv = entry<verbs::post_recv>,
	.post_send = entry<verbs::post_send>,
	.post_srq_recv = entry<verbs::post_srq_recv>,
	.query_device_ex = entry<verbs::query_device_ex>,
	.query_port = entry<verbs::query_port>,
	.query_qp = entry<verbs::query_qp>,
	.query_srq = entry<verbs::query_srq>,
	.reg_mr = entry<verbs::reg_mr>,
	.req_notify_cq = entry<verbs::req_notify_cq>,
	.rereg_mr = entry<verbs::rereg_mr>,
	.resize_cq = entry<verbs::resize_cq>,
};

verbs_context *alloc_context(ibv_device *device, int cmd_fd,
			     void * /*private_data*/)
{
	verbs_context *vctx = entry<verbs::alloc_context>(device, cmd_fd);

	if (vctx)
		pabi::verbs_set_ops(vctx, &kContextOps);
	return vctx;
}

pabi::verbs_device *alloc_device(pabi::verbs_sysfs_dev * /*sysfs_dev*/) noexcept
{
	// libibverbs fills in the rest; kiwi keeps no per-device state.
	return new (std::nothrow) pabi::verbs_device{};
}

void uninit_device(pabi::verbs_device *device) noexcept
{
	delete device;
}

constexpr pabi::verbs_match_ent kNoMatchTable[] = {{}};

constexpr pabi::verbs_device_ops kDeviceOps = {
	.name = "kiwi",
	.match_min_abi_version = KIWI_ABI_VERSION,
	.match_max_abi_version = KIWI_ABI_VERSION,
	// match_device alone decides (match.cc), by a sysfs file. The table
	// holds only its end marker: libibverbs walks it unchecked when a
	// device reports a driver id (siw, rxe, hardware).
	.match_table = kNoMatchTable,
	.static_providers = nullptr,
	.match_device = match_device,
	.alloc_context = alloc_context,
	.import_context = nullptr,
	.alloc_device = alloc_device,
	.uninit_device = uninit_device,
};

} // namespace
} // namespace kiwi

extern "C" {

// Runs when libibverbs dlopen()s libkiwi.
__attribute__((constructor)) static void kiwi_register_driver()
{
	kiwi::pabi::verbs_register_driver_34(&kiwi::kDeviceOps);
}

} // extern "C"
