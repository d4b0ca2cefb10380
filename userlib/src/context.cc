// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// Context, device queries, protection domains and memory regions: thin
// wrappers around libibverbs' command helpers.
#include "ctx_features.h"
#include "provider.h"

#include <rdma/ib_user_ioctl_verbs.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace kiwi {

namespace {

using GetContextResp =
	RespBuffer<ib_uverbs_get_context_resp, kiwi_uresp_alloc_ctx>;

// Undoes _verbs_init_and_alloc_context.
struct ContextRelease {
	void operator()(Context *ctx) const noexcept
	{
		pabi::verbs_uninit_context(&ctx->vctx);
		// libibverbs calloc()ed the context.
		std::free(ctx); // NOLINT(cppcoreguidelines-no-malloc)
	}
};
using ContextPtr = std::unique_ptr<Context, ContextRelease>;

// The kernel must describe exactly the elements this library was built for.
int check_context_resp(const kiwi_uresp_alloc_ctx &drv) noexcept
{
	if (drv.abi_version != KIWI_ABI_VERSION ||
	    drv.sqe_size != sizeof(kiwi_sqe) ||
	    drv.rqe_size != sizeof(kiwi_rqe) ||
	    drv.cqe_size != sizeof(kiwi_cqe) ||
	    drv.ring_ctrl_size != KIWI_RING_CTRL_SIZE)
		return EPROTO;
	return 0;
}

// fw_ver of ibv_device_attr: the kernel's 64-bit version as
// major.minor.sub (16 bits each below the major), or, when the kernel
// reports 0 there, its text form from sysfs (ib_device_ops.get_dev_fw_str).
void format_fw_ver(ibv_context *ctx, uint64_t fw, char (&out)[64]) noexcept
{
	if (fw == 0) {
		auto *vdev =
			reinterpret_cast<pabi::verbs_device *>(ctx->device);
		const int len = pabi::ibv_read_ibdev_sysfs_file(
			out, sizeof(out), vdev->sysfs, "fw_ver");

		if (len > 0) {
			out[std::strcspn(out, "\n")] = '\0';
			return;
		}
	}
	(void)std::snprintf(out, sizeof(out), "%u.%u.%u",
			    static_cast<unsigned int>(fw >> 32),
			    static_cast<unsigned int>((fw >> 16) & 0xffff),
			    static_cast<unsigned int>(fw & 0xffff));
}

} // namespace

namespace verbs {

verbs_context *alloc_context(ibv_device *device, int cmd_fd)
{
	// offsetof(Context, vctx) is 0: the offset argument is a null pointer.
	ContextPtr ctx(static_cast<Context *>(
		pabi::_verbs_init_and_alloc_context(device, cmd_fd,
						    sizeof(Context), nullptr,
						    RDMA_DRIVER_UNKNOWN)));
	if (!ctx)
		return nullptr;

	// secure_getenv: a set-user-ID program ignores the environment.
	const FeatureLimit limit =
		parse_feature_limit(secure_getenv("KIWI_ABI_FEATURES"));
	pabi::CmdGetContext cmd{};
	GetContextResp resp{};
	size_t resp_size = resp.size();
	if (limit.legacy_resp)
		resp_size -= sizeof(kiwi_uresp_alloc_ctx) -
			     KIWI_URESP_ALLOC_CTX_BASE;
	int ret = pabi::ibv_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd),
					    resp.core(), resp_size);
	const kiwi_uresp_alloc_ctx drv = resp.drv();
	if (!ret)
		ret = check_context_resp(drv);
	if (ret) {
		ctx.reset(); // before errno: the release may make system calls
		errno = ret;
		return nullptr;
	}
	ctx->max_inline = std::min<uint32_t>(drv.max_inline, KIWI_MAX_INLINE);
	ctx->features = ctx_features(drv.features, limit);
	return &ctx.release()->vctx;
}

void free_context(ibv_context *ctx) noexcept
{
	ContextPtr release(to_context(ctx));
}

int query_device_ex(ibv_context *ctx, const ibv_query_device_ex_input *input,
		    ibv_device_attr_ex *attr, size_t attr_size)
{
	ib_uverbs_ex_query_device_resp resp{};
	size_t resp_size = sizeof(resp);
	const int ret = pabi::ibv_cmd_query_device_any(
		ctx, input, attr, attr_size, &resp, &resp_size);
	if (ret)
		return ret;

	format_fw_ver(ctx, resp.base.fw_ver, attr->orig_attr.fw_ver);
	return 0;
}

int query_port(ibv_context *ctx, uint8_t port, ibv_port_attr *attr)
{
	pabi::CmdQueryPort cmd{};

	return pabi::ibv_cmd_query_port(ctx, port, attr, &cmd, sizeof(cmd));
}

ibv_pd *alloc_pd(ibv_context *ctx)
{
	auto pd = std::make_unique<ibv_pd>();
	pabi::CmdAllocPd cmd{};
	ib_uverbs_alloc_pd_resp resp{};
	const int ret = pabi::ibv_cmd_alloc_pd(ctx, pd.get(), &cmd, sizeof(cmd),
					       &resp, sizeof(resp));
	if (ret) {
		pd.reset();
		errno = ret;
		return nullptr;
	}
	return pd.release();
}

int dealloc_pd(ibv_pd *pd)
{
	const int ret = pabi::ibv_cmd_dealloc_pd(pd);

	if (!ret)
		delete pd;
	return ret;
}

ibv_mr *reg_mr(ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
	       int access)
{
	auto mr = std::make_unique<pabi::verbs_mr>();
	pabi::CmdRegMr cmd{};
	ib_uverbs_reg_mr_resp resp{};
	const int ret =
		pabi::ibv_cmd_reg_mr(pd, addr, length, hca_va, access, mr.get(),
				     &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		mr.reset();
		errno = ret;
		return nullptr;
	}
	return &mr.release()->mr;
}

// libibverbs checked the flags and arguments; the address is the iova, as
// in reg_mr. errno is set on failure: ibv_rereg_mr() returns only its own
// IBV_REREG_MR_ERR_* code.
int rereg_mr(pabi::verbs_mr *vmr, int flags, ibv_pd *pd, void *addr,
	     size_t length, int access)
{
	pabi::CmdReregMr cmd{};
	ib_uverbs_rereg_mr_resp resp{};
	const int ret = pabi::ibv_cmd_rereg_mr(
		vmr, static_cast<uint32_t>(flags), addr, length,
		reinterpret_cast<uintptr_t>(addr), access, pd, &cmd,
		sizeof(cmd), &resp, sizeof(resp));

	if (ret) {
		errno = ret;
		return ret;
	}
	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		vmr->access = access;
	return 0;
}

int dereg_mr(pabi::verbs_mr *vmr)
{
	const int ret = pabi::ibv_cmd_dereg_mr(vmr);

	if (!ret)
		delete vmr;
	return ret;
}

} // namespace verbs
} // namespace kiwi
