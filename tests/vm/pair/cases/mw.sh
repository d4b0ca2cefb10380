#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Memory windows between two guests (Documentation/datapath.md, memory
# windows): vt_mwpair (tests/vm/progs/vt_mwpair.c). A kiwi guest owns a
# type 2 window bound on its QP over an MR without remote rights; the
# other guest, kiwi or siw (to it a window is only an rkey), writes and
# reads through it, then invalidates it with Send with Invalidate (the
# owner's receive: IBV_WC_WITH_INV and the rkey); a Write and a Read
# through it afterwards are refused: the owner's QP fails with its memory
# unchanged, the peer's Read does not succeed, nothing hangs. kiwi-kiwi
# runs it in both directions, kiwi-siw and siw-kiwi with the kiwi guest
# owning the window (make check-pair: siw:p2p-kiwi; --full: siw-kiwi and
# kiwi-siw); a combo without kiwi is skipped.

. "$KIWI_SRC/tests/vm/pair/lib.bash"
vt_need_progs
[ -x "$VT_PROGS/vt_mwpair" ] || vt_die "no $VT_PROGS/vt_mwpair"

pair_up
case "$PAIR_SERVER-$PAIR_CLIENT" in
kiwi-kiwi) owners="server client" ;;
kiwi-siw) owners=server ;;
siw-kiwi) owners=client ;;
*)
	vt_log "mw: needs a kiwi guest to own the window, not $PAIR_SERVER-$PAIR_CLIENT"
	pair_down
	vt_finish
	;;
esac
for o in $owners; do
	pair_step "mw.$o" "$o" 120 \
		"$VT_PROGS/vt_mwpair" -s -a "{me}" -p "{port}" -- \
		"$VT_PROGS/vt_mwpair" -c "{peer}" -p "{port}"
	grep -h 'vt_mwpair:' "$VT_TMP/mw.$o.out" | sed "s/^/[$VT_NAME] /"
done
pair_down
vt_finish
