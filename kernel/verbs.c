// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: user context and protection domain verbs, udata helpers.
 */
#include <linux/module.h>

#include "kiwi.h"

/**
 * kiwi_udata_in_ok - check the driver part of a user request
 * @udata: user data of the verb, or NULL for a kernel caller
 *
 * The kiwi ABI defines no request structures yet, so any non-zero driver
 * input comes from a newer libkiwi that expects something we do not do.
 *
 * Return: 0, or -EOPNOTSUPP for non-zero input, -EFAULT if unreadable.
 */
int kiwi_udata_in_ok(struct ib_udata *udata)
{
	if (!udata || !udata->inlen)
		return 0;
	if (!ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EOPNOTSUPP;
	return 0;
}

/**
 * kiwi_udata_respond - copy a driver response to user space
 * @udata: user data of the verb
 * @resp: response structure from kiwi-abi.h
 * @len: its size
 *
 * Return: 0, -EINVAL if user space left too little room, -EFAULT.
 */
int kiwi_udata_respond(struct ib_udata *udata, void *resp, size_t len)
{
	if (udata->outlen < len)
		return -EINVAL;
	return ib_copy_to_udata(udata, resp, len);
}

/**
 * kiwi_udata_respond_grown - copy a response that grew at its end
 * @udata: user data of the verb
 * @resp: response structure from kiwi-abi.h
 * @len: its size
 * @base: the size of its first version
 *
 * An older library makes room for less: it gets the part it knows.
 *
 * Return: 0, -EINVAL if there is room for less than @base, -EFAULT.
 */
int kiwi_udata_respond_grown(struct ib_udata *udata, void *resp, size_t len,
			     size_t base)
{
	if (udata->outlen < base)
		return -EINVAL;
	return ib_copy_to_udata(udata, resp, min(udata->outlen, len));
}

/*
 * The context features new user contexts are offered: an administrator
 * or a test may offer fewer than kiwi.ko has, as an older kiwi.ko would.
 */
static unsigned int abi_features = KIWI_CTX_FEATURES;
module_param(abi_features, uint, 0644);
MODULE_PARM_DESC(abi_features,
		 "Context features (KIWI_CTX_FEAT_*) offered to new user contexts (default: all kiwi.ko has)");

int kiwi_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct kiwi_ucontext *uctx = container_of(ibuc, struct kiwi_ucontext,
						  ibuc);
	struct kiwi_uresp_alloc_ctx resp = {
		.abi_version = KIWI_ABI_VERSION,
		.max_inline = KIWI_MAX_INLINE,
		.sqe_size = sizeof(struct kiwi_sqe),
		.rqe_size = sizeof(struct kiwi_rqe),
		.cqe_size = sizeof(struct kiwi_cqe),
		.ring_ctrl_size = KIWI_RING_CTRL_SIZE,
	};
	int rv;

	rv = kiwi_udata_in_ok(udata);
	if (rv)
		return rv;
	/*
	 * A process with the device open pins the module, so "modprobe -r
	 * kiwi" is refused while it runs, as it is for siw and rxe. Because
	 * kiwi has disassociate_ucontext, ib_uverbs does not take this
	 * reference itself, and "rdma link delete" still ends the context at
	 * once: dealloc_ucontext then drops the pin. Kernel ULPs hold no
	 * context; they leave through their ib_client's remove hook.
	 */
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;
	uctx->features = READ_ONCE(abi_features) & KIWI_CTX_FEATURES;
	resp.features = uctx->features;
	rv = kiwi_udata_respond_grown(udata, &resp, sizeof(resp),
				      KIWI_URESP_ALLOC_CTX_BASE);
	if (rv)
		module_put(THIS_MODULE);
	return rv;
}

void kiwi_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	module_put(THIS_MODULE);
}

/*
 * The device goes away while a process still has it open. By now the core
 * has destroyed the context's objects, which gave their ring areas back; a
 * ring the process still maps keeps its pages (the mapping holds them, the
 * core zaps only mappings it tracks, rdma_user_mmap_io's), which nothing
 * of kiwi reads any more. So kiwi holds nothing more for it. Having this
 * op lets "rdma link delete" and netdev removal proceed at once (the
 * process gets IBV_EVENT_DEVICE_FATAL and EIO) instead of waiting for
 * every user to close the device; the core calls dealloc_ucontext next,
 * which unpins the module.
 */
void kiwi_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

int kiwi_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct kiwi_device *kdev = to_kdev(ibpd->device);
	int rv;

	rv = kiwi_udata_in_ok(udata);
	if (rv)
		return rv;
	if (!kiwi_count_get(&kdev->num_pd, KIWI_MAX_PD))
		return -ENOMEM;
	return 0;
}

int kiwi_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_kdev(ibpd->device)->num_pd);
	return 0;
}
