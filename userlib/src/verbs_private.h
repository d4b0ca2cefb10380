// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// libibverbs' private provider interface, IBVERBS_PRIVATE_34 as built by
// rdma-core 44 (Debian 12's libibverbs 44.0). rdma-core does not install
// these declarations, so this is kiwi's own description of the layout; every
// size and offset libkiwi relies on is checked below against the measured
// values in shared/research/provider-abi.md section 2.
//
// Everything lives in namespace kiwi::pabi. The command wrapper structs carry
// Cmd* names because most rdma-core names (ibv_alloc_pd, ibv_create_qp, ...)
// are also public function names in <infiniband/verbs.h>, which hides them
// in C++.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include <cstddef>
#include <cstdint>
#include <ctime>

namespace kiwi::pabi {

// ---------------------------------------------------------------- matching --

enum MatchKind : uint8_t {
	kMatchSentinel = 0,
	kMatchPci = 1,
	kMatchModalias = 2,
	kMatchDriverId = 3,
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind; // enum MatchKind
};

// ccan list_node: libibverbs' intrusive list link.
struct list_node {
	list_node *next;
	list_node *prev;
};

// Filled in by libibverbs while enumerating devices; read-only for us.
struct verbs_sysfs_dev {
	list_node entry;
	void *provider_data;
	const verbs_match_ent *match;
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX];
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX];
	char ibdev_path[IBV_SYSFS_PATH_MAX];
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;
	ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;
	timespec time_created;
};

struct verbs_device;

struct verbs_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const verbs_match_ent *match_table;
	const verbs_device_ops **static_providers;
	bool (*match_device)(verbs_sysfs_dev *sysfs_dev);
	verbs_context *(*alloc_context)(ibv_device *device, int cmd_fd,
					void *private_data);
	verbs_context *(*import_context)(ibv_device *device, int cmd_fd);
	verbs_device *(*alloc_device)(verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(verbs_device *device);
};

// Allocated by the provider in alloc_device, filled in by libibverbs.
struct verbs_device {
	ibv_device device; // must be first
	const verbs_device_ops *ops;
	int refcount; // atomic_int in C; libibverbs alone touches it
	list_node entry;
	verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

// ------------------------------------------------------- provider objects --

// rdma-core's enum ibv_mr_type (private there).
enum MrType : uint32_t {
	kMrTypeMr = 0,
	kMrTypeNullMr = 1,
	kMrTypeImportedMr = 2,
	kMrTypeDmabufMr = 3,
};

struct verbs_mr {
	ibv_mr mr;
	MrType mr_type;
	int access;
};

struct verbs_xrcd {
	ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

// verbs_qp.comp_mask bits.
enum VerbsQpMask : uint32_t {
	kVerbsQpXrcd = 1u << 0,
	kVerbsQpEx = 1u << 1, // qp_ex is filled: ibv_qp_to_qp_ex() returns it
};

struct verbs_qp {
	union {
		ibv_qp qp;
		ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask; // VERBS_QP_* ; 0: no ibv_qp_ex support
	verbs_xrcd *xrcd;
};

struct verbs_cq {
	union {
		ibv_cq cq;
		ibv_cq_ex cq_ex;
	};
};

struct verbs_srq {
	ibv_srq srq;
	ibv_srq_type srq_type;
	verbs_xrcd *xrcd;
	ibv_cq *cq;
	uint32_t srq_num;
};

// ------------------------------------------------------------ context ops --

// 76 slots in alphabetical order; verbs_set_ops() copies the non-NULL ones.
struct verbs_context_ops {
	int (*advise_mr)(ibv_pd *pd, ibv_advise_mr_advice advice,
			 uint32_t flags, ibv_sge *sg_list, uint32_t num_sges);
	ibv_dm *(*alloc_dm)(ibv_context *context, ibv_alloc_dm_attr *attr);
	ibv_mw *(*alloc_mw)(ibv_pd *pd, ibv_mw_type type);
	ibv_mr *(*alloc_null_mr)(ibv_pd *pd);
	ibv_pd *(*alloc_parent_domain)(ibv_context *context,
				       ibv_parent_domain_init_attr *attr);
	ibv_pd *(*alloc_pd)(ibv_context *context);
	ibv_td *(*alloc_td)(ibv_context *context, ibv_td_init_attr *init_attr);
	void (*async_event)(ibv_context *context, ibv_async_event *event);
	int (*attach_counters_point_flow)(ibv_counters *counters,
					  ibv_counter_attach_attr *attr,
					  ibv_flow *flow);
	int (*attach_mcast)(ibv_qp *qp, const ibv_gid *gid, uint16_t lid);
	int (*bind_mw)(ibv_qp *qp, ibv_mw *mw, ibv_mw_bind *mw_bind);
	int (*close_xrcd)(ibv_xrcd *xrcd);
	void (*cq_event)(ibv_cq *cq);
	ibv_ah *(*create_ah)(ibv_pd *pd, ibv_ah_attr *attr);
	ibv_counters *(*create_counters)(ibv_context *context,
					 ibv_counters_init_attr *init_attr);
	ibv_cq *(*create_cq)(ibv_context *context, int cqe,
			     ibv_comp_channel *channel, int comp_vector);
	ibv_cq_ex *(*create_cq_ex)(ibv_context *context,
				   ibv_cq_init_attr_ex *init_attr);
	ibv_flow *(*create_flow)(ibv_qp *qp, ibv_flow_attr *flow_attr);
	ibv_flow_action *(*create_flow_action_esp)(
		ibv_context *context, ibv_flow_action_esp_attr *attr);
	ibv_qp *(*create_qp)(ibv_pd *pd, ibv_qp_init_attr *attr);
	ibv_qp *(*create_qp_ex)(ibv_context *context,
				ibv_qp_init_attr_ex *qp_init_attr_ex);
	ibv_rwq_ind_table *(*create_rwq_ind_table)(
		ibv_context *context, ibv_rwq_ind_table_init_attr *init_attr);
	ibv_srq *(*create_srq)(ibv_pd *pd, ibv_srq_init_attr *srq_init_attr);
	ibv_srq *(*create_srq_ex)(ibv_context *context,
				  ibv_srq_init_attr_ex *srq_init_attr_ex);
	ibv_wq *(*create_wq)(ibv_context *context,
			     ibv_wq_init_attr *wq_init_attr);
	int (*dealloc_mw)(ibv_mw *mw);
	int (*dealloc_pd)(ibv_pd *pd);
	int (*dealloc_td)(ibv_td *td);
	int (*dereg_mr)(verbs_mr *vmr);
	int (*destroy_ah)(ibv_ah *ah);
	int (*destroy_counters)(ibv_counters *counters);
	int (*destroy_cq)(ibv_cq *cq);
	int (*destroy_flow)(ibv_flow *flow);
	int (*destroy_flow_action)(ibv_flow_action *action);
	int (*destroy_qp)(ibv_qp *qp);
	int (*destroy_rwq_ind_table)(ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(ibv_srq *srq);
	int (*destroy_wq)(ibv_wq *wq);
	int (*detach_mcast)(ibv_qp *qp, const ibv_gid *gid, uint16_t lid);
	void (*free_context)(ibv_context *context);
	int (*free_dm)(ibv_dm *dm);
	int (*get_srq_num)(ibv_srq *srq, uint32_t *srq_num);
	ibv_dm *(*import_dm)(ibv_context *context, uint32_t dm_handle);
	ibv_mr *(*import_mr)(ibv_pd *pd, uint32_t mr_handle);
	ibv_pd *(*import_pd)(ibv_context *context, uint32_t pd_handle);
	int (*modify_cq)(ibv_cq *cq, ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(ibv_flow_action *action,
				      ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask);
	int (*modify_qp_rate_limit)(ibv_qp *qp, ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(ibv_srq *srq, ibv_srq_attr *srq_attr,
			  int srq_attr_mask);
	int (*modify_wq)(ibv_wq *wq, ibv_wq_attr *wq_attr);
	ibv_qp *(*open_qp)(ibv_context *context, ibv_qp_open_attr *attr);
	ibv_xrcd *(*open_xrcd)(ibv_context *context,
			       ibv_xrcd_init_attr *xrcd_init_attr);
	int (*poll_cq)(ibv_cq *cq, int num_entries, ibv_wc *wc);
	int (*post_recv)(ibv_qp *qp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr);
	int (*post_send)(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad_wr);
	int (*post_srq_ops)(ibv_srq *srq, ibv_ops_wr *op, ibv_ops_wr **bad_op);
	int (*post_srq_recv)(ibv_srq *srq, ibv_recv_wr *recv_wr,
			     ibv_recv_wr **bad_recv_wr);
	int (*query_device_ex)(ibv_context *context,
			       const ibv_query_device_ex_input *input,
			       ibv_device_attr_ex *attr, size_t attr_size);
	int (*query_ece)(ibv_qp *qp, ibv_ece *ece);
	int (*query_port)(ibv_context *context, uint8_t port_num,
			  ibv_port_attr *port_attr);
	int (*query_qp)(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask,
			ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(ibv_qp *qp, ibv_wr_opcode op,
				      uint32_t flags);
	int (*query_rt_values)(ibv_context *context, ibv_values_ex *values);
	int (*query_srq)(ibv_srq *srq, ibv_srq_attr *srq_attr);
	int (*read_counters)(ibv_counters *counters, uint64_t *counters_value,
			     uint32_t ncounters, uint32_t flags);
	ibv_mr *(*reg_dm_mr)(ibv_pd *pd, ibv_dm *dm, uint64_t dm_offset,
			     size_t length, unsigned int access);
	ibv_mr *(*reg_dmabuf_mr)(ibv_pd *pd, uint64_t offset, size_t length,
				 uint64_t iova, int fd, int access);
	ibv_mr *(*reg_mr)(ibv_pd *pd, void *addr, size_t length,
			  uint64_t hca_va, int access);
	int (*req_notify_cq)(ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(verbs_mr *vmr, int flags, ibv_pd *pd, void *addr,
			size_t length, int access);
	int (*resize_cq)(ibv_cq *cq, int cqe);
	int (*set_ece)(ibv_qp *qp, ibv_ece *ece);
	void (*unimport_dm)(ibv_dm *dm);
	void (*unimport_mr)(ibv_mr *mr);
	void (*unimport_pd)(ibv_pd *pd);
};

// ------------------------------------------------------- command wrappers --
//
// rdma-core's struct ibv_<cmd>: the write() header directly followed by the
// core request. Driver request data, when a command has any, follows the
// wrapper in the same object. (The core structs end in a flexible array;
// a GNU extension in C++, fine as the last member.)

template <typename Core> struct Cmd {
	ib_uverbs_cmd_hdr hdr;
	Core core;
};

using CmdGetContext = Cmd<ib_uverbs_get_context>;
using CmdQueryPort = Cmd<ib_uverbs_query_port>;
using CmdAllocPd = Cmd<ib_uverbs_alloc_pd>;
using CmdRegMr = Cmd<ib_uverbs_reg_mr>;
using CmdReregMr = Cmd<ib_uverbs_rereg_mr>;
using CmdCreateCq = Cmd<ib_uverbs_create_cq>;
using CmdResizeCq = Cmd<ib_uverbs_resize_cq>;
using CmdCreateQp = Cmd<ib_uverbs_create_qp>;
using CmdModifyQp = Cmd<ib_uverbs_modify_qp>;
using CmdQueryQp = Cmd<ib_uverbs_query_qp>;
using CmdCreateSrq = Cmd<ib_uverbs_create_srq>;
using CmdModifySrq = Cmd<ib_uverbs_modify_srq>;
using CmdQuerySrq = Cmd<ib_uverbs_query_srq>;
using CmdAllocMw = Cmd<ib_uverbs_alloc_mw>;

// ----------------------------------------------------------- entry points --
//
// All exported by libibverbs.so.1 at version IBVERBS_PRIVATE_34. The ibv_cmd_*
// helpers return 0 or a positive errno value and do not reliably set errno.

extern "C" {
void verbs_register_driver_34(const verbs_device_ops *ops);

void *_verbs_init_and_alloc_context(ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    verbs_context *context_offset,
				    uint32_t driver_id);
void verbs_uninit_context(verbs_context *context);
void verbs_set_ops(verbs_context *vctx, const verbs_context_ops *ops);
// Reads <ibdev_path>/<fnfmt...> into buf; returns its length or -1.
int ibv_read_ibdev_sysfs_file(char *buf, size_t size,
			      verbs_sysfs_dev *sysfs_dev, const char *fnfmt,
			      ...) __attribute__((format(printf, 4, 5)));

int ibv_cmd_get_context(verbs_context *context, CmdGetContext *cmd,
			size_t cmd_size, ib_uverbs_get_context_resp *resp,
			size_t resp_size);
int ibv_cmd_query_device_any(ibv_context *context,
			     const ibv_query_device_ex_input *input,
			     ibv_device_attr_ex *attr, size_t attr_size,
			     ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(ibv_context *context, uint8_t port_num,
		       ibv_port_attr *port_attr, CmdQueryPort *cmd,
		       size_t cmd_size);
int ibv_cmd_alloc_pd(ibv_context *context, ibv_pd *pd, CmdAllocPd *cmd,
		     size_t cmd_size, ib_uverbs_alloc_pd_resp *resp,
		     size_t resp_size);
int ibv_cmd_dealloc_pd(ibv_pd *pd);
int ibv_cmd_reg_mr(ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
		   int access, verbs_mr *vmr, CmdRegMr *cmd, size_t cmd_size,
		   ib_uverbs_reg_mr_resp *resp, size_t resp_size);
// Sets vmr's lkey and rkey from the kernel's answer (and its context with
// IBV_REREG_MR_CHANGE_PD); ibv_rereg_mr() updates addr, length and pd.
int ibv_cmd_rereg_mr(verbs_mr *vmr, uint32_t flags, void *addr, size_t length,
		     uint64_t hca_va, int access, ibv_pd *pd, CmdReregMr *cmd,
		     size_t cmd_sz, ib_uverbs_rereg_mr_resp *resp,
		     size_t resp_sz);
int ibv_cmd_dereg_mr(verbs_mr *vmr);
int ibv_cmd_create_cq(ibv_context *context, int cqe, ibv_comp_channel *channel,
		      int comp_vector, ibv_cq *cq, CmdCreateCq *cmd,
		      size_t cmd_size, ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_destroy_cq(ibv_cq *cq);
// Sets cq->cqe from the kernel's answer.
int ibv_cmd_resize_cq(ibv_cq *cq, int cqe, CmdResizeCq *cmd, size_t cmd_size,
		      ib_uverbs_resize_cq_resp *resp, size_t resp_size);
int ibv_cmd_create_qp(ibv_pd *pd, ibv_qp *qp, ibv_qp_init_attr *attr,
		      CmdCreateQp *cmd, size_t cmd_size,
		      ib_uverbs_create_qp_resp *resp, size_t resp_size);
// Requires IBV_QP_INIT_ATTR_PD; accepts IBV_QP_INIT_ATTR_SEND_OPS_FLAGS
// (the provider's business) and sets qp->comp_mask to 0.
int ibv_cmd_create_qp_ex(ibv_context *context, verbs_qp *qp,
			 ibv_qp_init_attr_ex *attr_ex, CmdCreateQp *cmd,
			 size_t cmd_size, ib_uverbs_create_qp_resp *resp,
			 size_t resp_size);
int ibv_cmd_modify_qp(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask,
		      CmdModifyQp *cmd, size_t cmd_size);
int ibv_cmd_query_qp(ibv_qp *qp, ibv_qp_attr *qp_attr, int attr_mask,
		     ibv_qp_init_attr *qp_init_attr, CmdQueryQp *cmd,
		     size_t cmd_size);
int ibv_cmd_destroy_qp(ibv_qp *qp);
int ibv_cmd_create_srq(ibv_pd *pd, ibv_srq *srq, ibv_srq_init_attr *attr,
		       CmdCreateSrq *cmd, size_t cmd_size,
		       ib_uverbs_create_srq_resp *resp, size_t resp_size);
int ibv_cmd_modify_srq(ibv_srq *srq, ibv_srq_attr *srq_attr, int srq_attr_mask,
		       CmdModifySrq *cmd, size_t cmd_size);
int ibv_cmd_query_srq(ibv_srq *srq, ibv_srq_attr *srq_attr, CmdQuerySrq *cmd,
		      size_t cmd_size);
int ibv_cmd_destroy_srq(ibv_srq *srq);
// Fill in mw (context, pd, rkey, handle, type) from the kernel's answer.
int ibv_cmd_alloc_mw(ibv_pd *pd, ibv_mw_type type, ibv_mw *mw, CmdAllocMw *cmd,
		     size_t cmd_size, ib_uverbs_alloc_mw_resp *resp,
		     size_t resp_size);
int ibv_cmd_dealloc_mw(ibv_mw *mw);
} // extern "C"

// -------------------------------------------------------- layout checks --

static_assert(sizeof(verbs_match_ent) == 24 && alignof(verbs_match_ent) == 8);
static_assert(offsetof(verbs_match_ent, u) == 8);
static_assert(offsetof(verbs_match_ent, vendor) == 16);
static_assert(offsetof(verbs_match_ent, device) == 18);
static_assert(offsetof(verbs_match_ent, kind) == 20);

static_assert(sizeof(verbs_sysfs_dev) == 992);
static_assert(offsetof(verbs_sysfs_dev, provider_data) == 16);
static_assert(offsetof(verbs_sysfs_dev, match) == 24);
static_assert(offsetof(verbs_sysfs_dev, flags) == 32);
static_assert(offsetof(verbs_sysfs_dev, sysfs_name) == 36);
static_assert(offsetof(verbs_sysfs_dev, sysfs_cdev) == 104);
static_assert(offsetof(verbs_sysfs_dev, ibdev_name) == 112);
static_assert(offsetof(verbs_sysfs_dev, ibdev_path) == 176);
static_assert(offsetof(verbs_sysfs_dev, modalias) == 432);
static_assert(offsetof(verbs_sysfs_dev, node_guid) == 944);
static_assert(offsetof(verbs_sysfs_dev, driver_id) == 952);
static_assert(offsetof(verbs_sysfs_dev, node_type) == 956);
static_assert(offsetof(verbs_sysfs_dev, ibdev_idx) == 960);
static_assert(offsetof(verbs_sysfs_dev, num_ports) == 964);
static_assert(offsetof(verbs_sysfs_dev, abi_ver) == 968);
static_assert(offsetof(verbs_sysfs_dev, time_created) == 976);

static_assert(sizeof(verbs_device_ops) == 72);
static_assert(offsetof(verbs_device_ops, match_min_abi_version) == 8);
static_assert(offsetof(verbs_device_ops, match_max_abi_version) == 12);
static_assert(offsetof(verbs_device_ops, match_table) == 16);
static_assert(offsetof(verbs_device_ops, static_providers) == 24);
static_assert(offsetof(verbs_device_ops, match_device) == 32);
static_assert(offsetof(verbs_device_ops, alloc_context) == 40);
static_assert(offsetof(verbs_device_ops, import_context) == 48);
static_assert(offsetof(verbs_device_ops, alloc_device) == 56);
static_assert(offsetof(verbs_device_ops, uninit_device) == 64);

static_assert(sizeof(ibv_device) == 664);
static_assert(sizeof(verbs_device) == 712);
static_assert(offsetof(verbs_device, ops) == 664);
static_assert(offsetof(verbs_device, refcount) == 672);
static_assert(offsetof(verbs_device, entry) == 680);
static_assert(offsetof(verbs_device, sysfs) == 696);
static_assert(offsetof(verbs_device, core_support) == 704);

static_assert(sizeof(verbs_context) == 648);
static_assert(offsetof(verbs_context, priv) == 208);
static_assert(offsetof(verbs_context, sz) == 312);
static_assert(offsetof(verbs_context, context) == 320);

static_assert(sizeof(verbs_mr) == 56);
static_assert(offsetof(verbs_mr, mr_type) == 48);
static_assert(offsetof(verbs_mr, access) == 52);
static_assert(sizeof(verbs_xrcd) == 16);
static_assert(sizeof(verbs_qp) == 368);
static_assert(offsetof(verbs_qp, comp_mask) == 352);
static_assert(offsetof(verbs_qp, xrcd) == 360);
static_assert(sizeof(verbs_cq) == 288);
static_assert(sizeof(verbs_srq) == 160);
static_assert(offsetof(verbs_srq, srq_type) == 128);
static_assert(offsetof(verbs_srq, xrcd) == 136);
static_assert(offsetof(verbs_srq, cq) == 144);
static_assert(offsetof(verbs_srq, srq_num) == 152);

static_assert(sizeof(verbs_context_ops) == 76 * sizeof(void *));
static_assert(sizeof(verbs_context_ops) == 608);
static_assert(offsetof(verbs_context_ops, alloc_pd) == 40);
static_assert(offsetof(verbs_context_ops, async_event) == 56);
static_assert(offsetof(verbs_context_ops, create_cq) == 120);
static_assert(offsetof(verbs_context_ops, create_cq_ex) == 128);
static_assert(offsetof(verbs_context_ops, create_qp) == 152);
static_assert(offsetof(verbs_context_ops, create_qp_ex) == 160);
static_assert(offsetof(verbs_context_ops, create_srq) == 176);
static_assert(offsetof(verbs_context_ops, dealloc_pd) == 208);
static_assert(offsetof(verbs_context_ops, dereg_mr) == 224);
static_assert(offsetof(verbs_context_ops, destroy_cq) == 248);
static_assert(offsetof(verbs_context_ops, destroy_qp) == 272);
static_assert(offsetof(verbs_context_ops, destroy_srq) == 288);
static_assert(offsetof(verbs_context_ops, free_context) == 312);
static_assert(offsetof(verbs_context_ops, modify_qp) == 376);
static_assert(offsetof(verbs_context_ops, modify_srq) == 392);
static_assert(offsetof(verbs_context_ops, poll_cq) == 424);
static_assert(offsetof(verbs_context_ops, post_recv) == 432);
static_assert(offsetof(verbs_context_ops, post_send) == 440);
static_assert(offsetof(verbs_context_ops, post_srq_recv) == 456);
static_assert(offsetof(verbs_context_ops, query_device_ex) == 464);
static_assert(offsetof(verbs_context_ops, query_port) == 480);
static_assert(offsetof(verbs_context_ops, query_qp) == 488);
static_assert(offsetof(verbs_context_ops, query_srq) == 512);
static_assert(offsetof(verbs_context_ops, reg_mr) == 544);
static_assert(offsetof(verbs_context_ops, req_notify_cq) == 552);
static_assert(offsetof(verbs_context_ops, rereg_mr) == 560);
static_assert(offsetof(verbs_context_ops, unimport_pd) == 600);

static_assert(sizeof(ib_uverbs_cmd_hdr) == 8);
static_assert(sizeof(CmdGetContext) == 16);
static_assert(sizeof(CmdQueryPort) == 24);
static_assert(sizeof(CmdAllocPd) == 16);
static_assert(sizeof(CmdRegMr) == 48);
static_assert(sizeof(CmdReregMr) == 56);
static_assert(sizeof(ib_uverbs_rereg_mr_resp) == 8);
static_assert(sizeof(CmdCreateCq) == 40);
static_assert(sizeof(CmdCreateQp) == 64);
static_assert(sizeof(CmdModifyQp) == 120);
static_assert(sizeof(CmdQueryQp) == 24);
static_assert(sizeof(CmdCreateSrq) == 40);
static_assert(sizeof(CmdModifySrq) == 24);
static_assert(sizeof(CmdQuerySrq) == 24);
static_assert(sizeof(CmdAllocMw) == 24);
static_assert(sizeof(ib_uverbs_alloc_mw_resp) == 8);
static_assert(offsetof(verbs_context_ops, alloc_mw) == 16);
static_assert(offsetof(verbs_context_ops, bind_mw) == 80);
static_assert(offsetof(verbs_context_ops, dealloc_mw) == 200);
static_assert(offsetof(CmdCreateQp, core) == 8);
static_assert(sizeof(ib_uverbs_get_context_resp) == 8);
static_assert(sizeof(ib_uverbs_create_cq_resp) == 8);
static_assert(sizeof(ib_uverbs_create_qp_resp) == 32);
static_assert(sizeof(ib_uverbs_create_srq_resp) == 16);
static_assert(sizeof(ib_uverbs_post_send_resp) == 4);
static_assert(sizeof(ib_uverbs_send_wr) == 56);

} // namespace kiwi::pabi
