/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause */
/*
 * kiwi user/kernel ABI: the one header shared by kiwi.ko and libkiwi.
 *
 * Every queue that user space touches without a system call is a ring in a
 * vmalloc_user() area mapped with mmap(2) on the uverbs file descriptor at the
 * offset (the "mmap key") returned in the create response. A ring area starts
 * with a struct kiwi_ring_ctrl (KIWI_RING_CTRL_SIZE octets) followed by
 * num_entries elements; num_entries is a power of two and indices are
 * free-running 32-bit counters, so slot = index & (num_entries - 1).
 *
 * Ownership: the producer writes an element, then publishes it with a release
 * store of ctrl->producer; the consumer reads ctrl->producer with acquire
 * semantics, reads the element, then releases the slot with a release store of
 * ctrl->consumer. A ring is full when producer - consumer == num_entries.
 *
 *   SQ, RQ, SRQ: user space produces, the kernel consumes. The kernel copies
 *                an element into private memory before it validates it, and
 *                treats every value it reads from the ring as hostile.
 *   CQ:          the kernel produces, user space consumes. The kernel never
 *                trusts ctrl->consumer beyond checking for room.
 *
 * Doorbell: after producing SQ elements user space calls write(2) on the
 * uverbs fd with a legacy IB_USER_VERBS_CMD_POST_SEND command whose wr_count
 * is 0 (see libkiwi). On a QP whose create response has
 * KIWI_QP_FEAT_SQ_DOORBELL it may skip the call while the SQ ring's flags
 * hold neither KIWI_RING_F_DOORBELL nor KIWI_RING_F_ERROR, read after a
 * full fence that follows its producer store (Documentation/abi.md). RQ and
 * SRQ need no doorbell: the receive path looks at the ring when a message
 * arrives.
 *
 * CQ arming: user space stores KIWI_CQ_ARM_SOLICITED or KIWI_CQ_ARM_NEXT into
 * ctrl->arm; when the kernel produces a CQE that satisfies the armed condition
 * it atomically clears ctrl->arm and signals the completion channel (one shot).
 */
#ifndef KIWI_ABI_H
#define KIWI_ABI_H

#include <linux/types.h>

/*
 * 2: RFC 7306 immediate data (issue 14): inline_len became 16 bits to make
 * room for imm_data in the SQE; the CQE's reserved word became imm_data.
 * 3: RFC 7306 atomics: SQE opcodes KIWI_WR_ATOMIC_*, whose operands lie in
 * the SGE area after the result SGE (struct kiwi_sqe_atomic); CQE opcodes
 * KIWI_WC_COMP_SWAP and KIWI_WC_FETCH_ADD.
 * 4: memory windows: SQE opcode KIWI_WR_BIND_MW (struct kiwi_sqe_bind in
 * the SGE area), CQE opcode KIWI_WC_BIND_MW.
 * Element sizes are unchanged. A library and a kernel of different
 * versions do not pair: libkiwi claims only devices of its own version.
 * Within a version, feature bits (KIWI_CTX_FEAT_*, KIWI_QP_FEAT_*) announce
 * additions the other side may ignore: either side uses one only if both
 * have it, and responses grow at their end (struct kiwi_uresp_alloc_ctx).
 */
#define KIWI_ABI_VERSION 4

/*
 * Every kiwi ib_device, whatever its name, has this sysfs attribute group
 * (/sys/class/infiniband/DEV/kiwi/), and in it abi_version holding
 * KIWI_ABI_VERSION in decimal: libkiwi claims a device by that file.
 */
#define KIWI_SYSFS_GROUP "kiwi"
#define KIWI_SYSFS_ABI_FILE KIWI_SYSFS_GROUP "/abi_version"

#define KIWI_MAX_SGE 6
/* Inline send data lives in the SGE array of the SQE. */
#define KIWI_MAX_INLINE (KIWI_MAX_SGE * 16)

#define KIWI_RING_CTRL_SIZE 128

/* Placed at offset 0 of every ring area; the two indices sit on their own cache lines. */
struct kiwi_ring_ctrl {
	__u32 producer;
	__u32 flags;		/* KIWI_RING_F_* */
	__u32 rsvd0[14];
	__u32 consumer;
	__u32 arm;		/* CQ only: KIWI_CQ_ARM_* */
	__u32 rsvd1[14];
};

/* Ring flags, written by the kernel. */
enum kiwi_ring_flags {
	/* The QP went to error: no more elements are consumed, user space may stop producing. */
	KIWI_RING_F_ERROR = 1u << 0,
	/*
	 * SQ of a QP with KIWI_QP_FEAT_SQ_DOORBELL: the send engine is idle
	 * (or the QP takes no sends), so new SQEs need the doorbell. Clear
	 * while the engine runs and will look at the producer index again.
	 */
	KIWI_RING_F_DOORBELL = 1u << 1,
};

enum kiwi_cq_arm {
	KIWI_CQ_ARM_NONE = 0,
	KIWI_CQ_ARM_SOLICITED = 1,
	KIWI_CQ_ARM_NEXT = 2,
};

/* Same layout as struct ibv_sge and struct ib_sge's first three fields. */
struct kiwi_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

enum kiwi_wr_opcode {
	KIWI_WR_SEND = 0,
	KIWI_WR_SEND_WITH_INV = 1,
	KIWI_WR_RDMA_WRITE = 2,
	KIWI_WR_RDMA_READ = 3,
	KIWI_WR_LOCAL_INV = 4,
	/* RFC 7306 Immediate Data alone: no payload (num_sge 0 or length 0) */
	KIWI_WR_SEND_WITH_IMM = 5,
	/* RDMA Write, then RFC 7306 Immediate Data */
	KIWI_WR_RDMA_WRITE_WITH_IMM = 6,
	/* RFC 7306 CmpSwap and FetchAdd: struct kiwi_sqe_atomic */
	KIWI_WR_ATOMIC_CMP_AND_SWP = 7,
	KIWI_WR_ATOMIC_FETCH_AND_ADD = 8,
	/*
	 * Bind a memory window (type 1 or 2): inv_or_rkey is the window's
	 * new STag (its index, the consumer's key), struct kiwi_sqe_bind
	 */
	KIWI_WR_BIND_MW = 9,
	KIWI_WR_NUM_OPCODES
};

enum kiwi_sqe_flags {
	KIWI_SQE_SIGNALED = 1u << 0,
	KIWI_SQE_SOLICITED = 1u << 1,
	KIWI_SQE_INLINE = 1u << 2,
	/* IBV_SEND_FENCE / IB_SEND_FENCE: wait until earlier RDMA Reads completed */
	KIWI_SQE_READ_FENCE = 1u << 3,
};

/*
 * The SGE area of an atomic SQE (num_sge 1): the local buffer of the
 * 8-octet original value, then the operands of RFC 7306 section 5.1 in
 * host order. CmpSwap stores (old & ~swap_mask) | (swap & swap_mask) if
 * ((old ^ compare_add) & compare_add_mask) == 0; FetchAdd adds compare_add,
 * a set bit of compare_add_mask ending a field (0: one 64-bit add); swap
 * and swap_mask are unused for FetchAdd. The plain verbs atomics have
 * both CmpSwap masks all-ones and a FetchAdd mask of 0.
 */
struct kiwi_sqe_atomic {
	struct kiwi_sge result;
	__aligned_u64 compare_add;
	__aligned_u64 swap;
	__aligned_u64 compare_add_mask;
	__aligned_u64 swap_mask;
};

/*
 * The SGE area of a KIWI_WR_BIND_MW SQE: the window covers [addr, addr +
 * length) of the MR named by mr_lkey (addresses of the MR's iova space)
 * with access (IB_ACCESS_REMOTE_WRITE, _READ, _ATOMIC). A length of 0
 * unbinds a type 1 window; mr_lkey and addr are then ignored.
 */
struct kiwi_sqe_bind {
	__aligned_u64 addr;
	__aligned_u64 length;
	__u32 mr_lkey;
	__u32 access;
};

/* Send queue element: 128 octets. */
struct kiwi_sqe {
	__aligned_u64 wr_id;
	__u32 flags;		/* KIWI_SQE_* */
	__u8 opcode;		/* enum kiwi_wr_opcode */
	__u8 num_sge;		/* for KIWI_SQE_INLINE: 0, sge[] holds the bytes */
	__u16 inline_len;	/* KIWI_SQE_INLINE only */
	/* *_WITH_IMM: the verbs immediate value, network order as in ibv_send_wr */
	__be32 imm_data;
	/*
	 * SEND_WITH_INV, LOCAL_INV: the STag to invalidate; RDMA and
	 * atomics: the remote STag; BIND_MW: the window's new STag
	 */
	__u32 inv_or_rkey;
	__aligned_u64 remote_addr;
	union {
		struct kiwi_sge sge[KIWI_MAX_SGE];
		struct kiwi_sqe_atomic atomic;	/* KIWI_WR_ATOMIC_* */
		struct kiwi_sqe_bind bind;	/* KIWI_WR_BIND_MW */
	};
};

/* Receive queue element (RQ and SRQ): 112 octets. */
struct kiwi_rqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 rsvd;
	struct kiwi_sge sge[KIWI_MAX_SGE];
};

/* Work completion opcodes; the values equal enum ib_uverbs_wc_opcode / ibv_wc_opcode. */
enum kiwi_wc_opcode {
	KIWI_WC_SEND = 0,
	KIWI_WC_RDMA_WRITE = 1,
	KIWI_WC_RDMA_READ = 2,
	KIWI_WC_COMP_SWAP = 3,
	KIWI_WC_FETCH_ADD = 4,
	KIWI_WC_BIND_MW = 5,
	KIWI_WC_LOCAL_INV = 6,
	KIWI_WC_RECV = 128,
	/* Immediate Data right after an RDMA Write (RFC 7306 section 6) */
	KIWI_WC_RECV_RDMA_WITH_IMM = 129,
};

enum kiwi_cqe_flags {
	KIWI_CQE_WITH_INV = 1u << 0,	/* inv_rkey holds the STag the peer invalidated */
	KIWI_CQE_SOLICITED = 1u << 1,
	KIWI_CQE_WITH_IMM = 1u << 2,	/* imm_data holds the peer's immediate value */
};

/*
 * Completion queue element: 32 octets. status takes the values of
 * enum ib_wc_status / ibv_wc_status.
 */
struct kiwi_cqe {
	__aligned_u64 wr_id;
	__u32 byte_len;
	__u32 qp_num;
	__u32 inv_rkey;
	__u32 vendor_err;
	__u16 opcode;		/* enum kiwi_wc_opcode */
	__u8 status;
	__u8 flags;		/* KIWI_CQE_* */
	__be32 imm_data;	/* KIWI_CQE_WITH_IMM: network order, as in ibv_wc */
};

/*
 * Features of a user context (features of struct kiwi_uresp_alloc_ctx):
 * what kiwi.ko offers this context, which its abi_features module
 * parameter may make less than it has. A library uses a feature only if
 * it knows it and the bit is set, so either side may be the older one.
 */
enum kiwi_ctx_features {
	/* QPs announce KIWI_QP_FEAT_SQ_DOORBELL (unset: no QP does) */
	KIWI_CTX_FEAT_SQ_DOORBELL = 1u << 0,
};

/* Every context feature this header defines. */
#define KIWI_CTX_FEATURES KIWI_CTX_FEAT_SQ_DOORBELL

/*
 * Driver data of the uverbs responses (udata out).
 *
 * A response grows only at its end. The kernel writes as much of it as the
 * library made room for, at least the size of its first version (an
 * older library gets the fields it knows), and a library zeroes its
 * buffer, so what an older kernel did not write reads as zero.
 */
struct kiwi_uresp_alloc_ctx {
	__u32 abi_version;
	__u32 max_inline;
	__u32 sqe_size;
	__u32 rqe_size;
	__u32 cqe_size;
	__u32 ring_ctrl_size;
	/* From here on, since the response grew past KIWI_URESP_ALLOC_CTX_BASE: */
	__u32 features;		/* KIWI_CTX_FEAT_* */
	__u32 rsvd;
};

/* The first version of struct kiwi_uresp_alloc_ctx: up to features. */
#define KIWI_URESP_ALLOC_CTX_BASE 24

/* Also the answer to RESIZE_CQ: the new ring, which replaces the old one. */
struct kiwi_uresp_create_cq {
	__aligned_u64 cq_key;
	__u32 num_cqe;
	__u32 rsvd;
};

/*
 * What the kernel does for this QP beyond ABI version 3 (0 from a kernel
 * that predates the bit: the field was reserved and zero).
 */
enum kiwi_qp_features {
	/* The SQ ring's KIWI_RING_F_DOORBELL is kept: doorbells may be skipped. */
	KIWI_QP_FEAT_SQ_DOORBELL = 1u << 0,
};

struct kiwi_uresp_create_qp {
	__aligned_u64 sq_key;
	__aligned_u64 rq_key;	/* KIWI_INVALID_MMAP_KEY when the QP uses an SRQ */
	__u32 num_sqe;
	__u32 num_rqe;
	__u32 qp_id;
	__u32 features;		/* KIWI_QP_FEAT_* */
};

struct kiwi_uresp_create_srq {
	__aligned_u64 srq_key;
	__u32 num_rqe;
	__u32 rsvd;
};

#define KIWI_INVALID_MMAP_KEY (~0ULL)

#endif /* KIWI_ABI_H */
