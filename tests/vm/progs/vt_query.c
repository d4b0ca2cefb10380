// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_query: print the device and port attributes of a verbs device as
 * key=value lines for the scenarios to check.
 *
 *   vt_query [-d DEV] [-p PORT]
 */
#include <getopt.h>
#include <unistd.h>

#include "vt.h"

static unsigned int mtu_bytes(enum ibv_mtu mtu)
{
	switch (mtu) {
	case IBV_MTU_256:
		return 256;
	case IBV_MTU_512:
		return 512;
	case IBV_MTU_1024:
		return 1024;
	case IBV_MTU_2048:
		return 2048;
	case IBV_MTU_4096:
		return 4096;
	}
	return 0;
}

static void print_device(struct ibv_context *ctx)
{
	struct ibv_device_attr a;
	int rc;

	rc = ibv_query_device(ctx, &a);
	if (rc)
		vt_fatal("ibv_query_device: %s", strerror(rc));
	printf("node_type=%s\n", ibv_node_type_str(ctx->device->node_type));
	printf("transport_type=%d\n", ctx->device->transport_type);
	printf("transport_iwarp=%d\n",
	       ctx->device->transport_type == IBV_TRANSPORT_IWARP);
	printf("phys_port_cnt=%u\n", a.phys_port_cnt);
	printf("max_mr_size=%llu\n", (unsigned long long)a.max_mr_size);
	printf("max_qp=%d\n", a.max_qp);
	printf("max_qp_wr=%d\n", a.max_qp_wr);
	printf("max_sge=%d\n", a.max_sge);
	printf("max_cq=%d\n", a.max_cq);
	printf("max_cqe=%d\n", a.max_cqe);
	printf("max_mr=%d\n", a.max_mr);
	printf("max_pd=%d\n", a.max_pd);
	printf("max_srq=%d\n", a.max_srq);
	printf("max_srq_wr=%d\n", a.max_srq_wr);
	printf("max_srq_sge=%d\n", a.max_srq_sge);
	printf("max_qp_rd_atom=%d\n", a.max_qp_rd_atom);
	printf("max_qp_init_rd_atom=%d\n", a.max_qp_init_rd_atom);
}

static void print_port(struct ibv_context *ctx, unsigned int port)
{
	struct ibv_port_attr p;
	int rc;

	rc = ibv_query_port(ctx, port, &p);
	if (rc)
		vt_fatal("ibv_query_port(%u): %s", port, strerror(rc));
	printf("port_state=%s\n", ibv_port_state_str(p.state));
	printf("port_state_num=%d\n", p.state);
	printf("phys_state=%u\n", p.phys_state);
	printf("active_mtu=%u\n", mtu_bytes(p.active_mtu));
	printf("max_mtu=%u\n", mtu_bytes(p.max_mtu));
	printf("gid_tbl_len=%d\n", p.gid_tbl_len);
	printf("link_layer=%u\n", p.link_layer);
}

int main(int argc, char **argv)
{
	const char *dev = VT_DEFAULT_DEV;
	unsigned long port = 1;
	struct ibv_context *ctx;
	int opt;

	vt_init("vt_query");
	while ((opt = getopt(argc, argv, "d:p:")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'p':
			port = vt_ulong("-p", optarg);
			break;
		default:
			fprintf(stderr, "usage: vt_query [-d DEV] [-p PORT]\n");
			return 2;
		}
	}
	ctx = vt_open(dev);
	print_device(ctx);
	print_port(ctx, port);
	if (ibv_close_device(ctx))
		vt_fatal("ibv_close_device: %s", strerror(errno));
	return 0;
}
