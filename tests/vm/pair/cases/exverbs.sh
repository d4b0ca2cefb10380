#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The extended verbs API between two guests (Documentation/abi.md,
# extended verbs): vt_xvpair (tests/vm/progs/vt_xvpair.c). kiwi-kiwi:
# both ends use ibv_create_cq_ex CQs polled with ibv_start_poll/next_poll
# and ibv_create_qp_ex QPs posting through the ibv_wr_* builders only;
# each end in turn is the requester of wr_send, wr_send_imm (no payload),
# wr_rdma_write, wr_rdma_write_imm, wr_rdma_read, wr_atomic_fetch_add and
# wr_atomic_cmp_swp (every completion's status, opcode, byte_len and
# immediate data checked on both ends, every octet compared) and the owner
# of a type 2 window (wr_bind_mw, the peer's Write and Read through it,
# wr_local_inv, wr_bind_mw again under the next key, the peer's Write
# under it); then the server reregisters its MR (ibv_rereg_mr,
# IBV_REREG_MR_CHANGE_ACCESS): the client's Write and Read under the new
# rkey work, its Read under the old rkey completes with
# IBV_WC_REM_ACCESS_ERR and the server's QP fails with its memory
# unchanged. About 11 s in the lab (--quick).
# With siw on one side (make check-pair: siw:p2p-kiwi; --full: siw-kiwi
# and kiwi-siw): siw has neither ibv_create_cq_ex nor
# ibv_create_qp_ex with send ops; vt_xvpair -P on the siw guest requires
# that both are refused with EOPNOTSUPP (not a crash, not another error);
# the kiwi guest waits. A combo without kiwi is skipped.

. "$KIWI_SRC/tests/vm/pair/lib.bash"
vt_need_progs
[ -x "$VT_PROGS/vt_xvpair" ] || vt_die "no $VT_PROGS/vt_xvpair"

pair_up
case "$PAIR_SERVER-$PAIR_CLIENT" in
kiwi-kiwi)
	pair_step exverbs server 120 \
		"$VT_PROGS/vt_xvpair" -s -a "{me}" -p "{port}" -- \
		"$VT_PROGS/vt_xvpair" -c "{peer}" -p "{port}"
	vt_log "exverbs: $(grep -c '^vt_xvpair: ok' "$VT_TMP/exverbs.out") checks passed on this side"
	;;
kiwi-siw | siw-kiwi)
	if [ "$PAIR_PROV" = siw ]; then
		vt_run_prog vt_xvpair 60 -P -d "$PAIR_DEV"
	fi
	;;
*)
	vt_log "exverbs: needs a kiwi guest, not $PAIR_SERVER-$PAIR_CLIENT"
	;;
esac
pair_down
vt_finish
