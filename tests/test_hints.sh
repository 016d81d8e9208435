#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The line the provider says on stderr, once per process, for each failure
# an errno does not explain (providers/mana/hint.c): the vport held by the
# VF interface (ENODEV, EBUSY from 7.2), a driver id mismatch, a QP type
# MANA lacks, shared receive queues and XRC (none on MANA).  Each exact
# line, once although the failure repeats in the process; nothing on
# stderr with MANA_QUIET=1; into the verbs log instead
# of stderr where VERBS_LOG_LEVEL and VERBS_LOG_FILE set it up.
# Usage: test_hints.sh BUILD_DIR [KERNEL]; with KERNEL (--kernel=KERNEL, 7.2
# or later: the split era) only the vport hint is checked.
set -u
BUILD=${1:?build dir}
KERNEL=${2:-}
EMU="$BUILD/bin/mana-emu"
DIAG="$BUILD/bin/mana-diag"
. "$(dirname "$0")/check.sh"
SUFFIX=' (MANA_QUIET=1 silences this)'

# mana_ib answered ENODEV for a held vport before 7.2 (no KERNEL: 6.14),
# EBUSY from 7.2 on, where raw QPs are on the ETH device manae_0
if [ -n "$KERNEL" ]; then
	KOPT=(--kernel="$KERNEL")
	DEV=manae_0 ERRNO=EBUSY STRERR='Device or resource busy'
else
	KOPT=(--kernel=6.14)
	DEV=mana_0 ERRNO=ENODEV STRERR='No such device'
fi
VPORT="libmana: $DEV port 1: raw QP creation failed with $ERRNO: the network interface enP30832s1 is up and holds the vport. Fix: sudo ip link set dev enP30832s1 down"
QPTYPE='libmana: mana_0: ibv_create_qp: QP type UD (4) is not supported by MANA (RAW_PACKET, RC and UC only): EOPNOTSUPP. Fix: use RC QPs (e.g. ibv_rc_pingpong) or RAW_PACKET QPs'
SRQ='libmana: mana_0: ibv_create_srq: MANA has no shared receive queues or XRC domains (max_srq 0): EOPNOTSUPP. Fix: give each QP its own receive queue (e.g. ibv_rc_pingpong, not ibv_srq_pingpong)'
DRIVERID="libmana: mana_0: the kernel reports driver id 19, not RDMA_DRIVER_MANA (20), for this MANA function: this libmana binds it, rdma-core's libmana would not. Fix: keep this libmana, or run a kernel whose mana_ib reports 20"

# Three UD QPs and one UC QP in one process: each creation fails.
QP_PY='
import errno
import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context, get_device_list
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPCap, QPInitAttr
ctx = Context(name=get_device_list()[0].name.decode())
pd = PD(ctx)
cq = CQ(ctx, 16)
for t in (e.IBV_QPT_UD, e.IBV_QPT_UD, e.IBV_QPT_UC, e.IBV_QPT_UD):
    try:
        QP(pd, QPInitAttr(qp_type=t, scq=cq, rcq=cq, cap=QPCap(4, 4, 1, 1)))
        raise SystemExit("QP type %d created" % t)
    except PyverbsRDMAError as x:
        assert x.error_code == errno.EOPNOTSUPP, x
print("refused")
'

# run NAME [ENV=VALUE...] -- EMU OPTIONS -- COMMAND...: stdout/stderr in $TMP/NAME.{out,err}
run() {
	local name=$1
	shift
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	env "${envs[@]}" "$EMU" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
}
# said NAME LINE: stderr of NAME has LINE (with the suffix) exactly once
said() {
	local n
	n=$(grep -cxF -- "$2$SUFFIX" "$TMP/$1.err")
	if [ "$n" -eq 1 ]; then ok; else
		fail "$1: want the line once, have it $n times; stderr:"; cat "$TMP/$1.err" >&2; fi
	# and no other line of ours
	n=$(grep -c '^libmana: ' "$TMP/$1.err")
	[ "$n" -eq 1 ] && ok || { fail "$1: $n lines of libmana on stderr, want 1"; cat "$TMP/$1.err" >&2; }
}
# silent NAME: nothing of ours on stderr
silent() {
	expect_not "$1: nothing on stderr" "$TMP/$1.err" '^libmana: '
}

# ---- the vport held by the VF interface: two ports, both fail ----------------
run vport -- --netdev-up --ports=2 "${KOPT[@]}" -- "$DIAG" --probe
said vport "$VPORT"
expect "vport: both ports failed in that process" "$TMP/vport.out" "^FAIL +probe +$DEV/2: ibv_create_qp \\(raw send\\) failed: $STRERR"
run vport_quiet MANA_QUIET=1 -- --netdev-up --ports=2 "${KOPT[@]}" -- "$DIAG" --probe
silent vport_quiet
expect "vport quiet: still failed" "$TMP/vport_quiet.out" "^FAIL +probe +$DEV/1: .*$ERRNO"
# MANA_QUIET=0 asks for nothing
run vport_q0 MANA_QUIET=0 -- --netdev-up "${KOPT[@]}" -- "$DIAG" --probe
said vport_q0 "$VPORT"
# the verbs log set up: the line goes there, with the detail before it
run vport_log VERBS_LOG_LEVEL=1 VERBS_LOG_FILE="$TMP/vport.log" -- --netdev-up --ports=2 "${KOPT[@]}" -- "$DIAG" --probe
silent vport_log
check "vport log: the line once" test "$(grep -cxF -- "$VPORT" "$TMP/vport.log")" -eq 1
expect "vport log: the detail" "$TMP/vport.log" "CREATE_QP failed: $STRERR: port 1 is held outside this context"
# the verbs log level set alone writes nothing (release libibverbs): stderr
run vport_level VERBS_LOG_LEVEL=1 -- --netdev-up "${KOPT[@]}" -- "$DIAG" --probe
said vport_level "$VPORT"
# the interface down: nothing to say
run vport_down -- "${KOPT[@]}" -- "$DIAG" --probe
silent vport_down
if [ -n "$KERNEL" ]; then
	check_done
	exit
fi

# ---- a QP type MANA lacks ---------------------------------------------------------
run qptype -- "${KOPT[@]}" -- /usr/bin/python3 -c "$QP_PY"
said qptype "$QPTYPE"
expect "qptype: every creation refused" "$TMP/qptype.out" '^refused$'
run qptype_quiet MANA_QUIET=1 -- "${KOPT[@]}" -- /usr/bin/python3 -c "$QP_PY"
silent qptype_quiet
run qptype_log VERBS_LOG_LEVEL=1 VERBS_LOG_FILE="$TMP/qptype.log" -- "${KOPT[@]}" -- /usr/bin/python3 -c "$QP_PY"
silent qptype_log
check "qptype log: the line once" test "$(grep -cxF -- "$QPTYPE" "$TMP/qptype.log")" -eq 1
# Debian's ibv_ud_pingpong: its own message and ours
run udpp -- "${KOPT[@]}" -- ibv_ud_pingpong -d mana_0 -g 0
said udpp "$QPTYPE"
expect "ibv_ud_pingpong says it failed" "$TMP/udpp.err" "^Couldn't create QP$"
run udpp_quiet MANA_QUIET=1 -- "${KOPT[@]}" -- ibv_ud_pingpong -d mana_0 -g 0
silent udpp_quiet

# ---- shared receive queues: Debian's ibv_srq_pingpong says only that it failed
run srqpp -- "${KOPT[@]}" -- ibv_srq_pingpong -d mana_0 -g 0
said srqpp "$SRQ"
expect "ibv_srq_pingpong says it failed" "$TMP/srqpp.err" "^Couldn't create SRQ$"
run srqpp_quiet MANA_QUIET=1 -- "${KOPT[@]}" -- ibv_srq_pingpong -d mana_0 -g 0
silent srqpp_quiet

# ---- driver id mismatch: three scans and opens ------------------------------------
SCANS='
import pyverbs.device as d
for _ in range(3):
    for dev in d.get_device_list():
        with d.Context(name=dev.name.decode()) as ctx:
            ctx.query_device()
'
run id19 -- "${KOPT[@]}" --driver-id=19 -- /usr/bin/python3 -c "$SCANS"
said id19 "$DRIVERID"
run id19_quiet MANA_QUIET=1 -- "${KOPT[@]}" --driver-id=19 -- ibv_devinfo
silent id19_quiet
expect "id19 quiet: still bound" "$TMP/id19_quiet.out" '^hca_id:\tmana_0$'
run id19_log VERBS_LOG_LEVEL=2 VERBS_LOG_FILE="$TMP/id19.log" -- "${KOPT[@]}" --driver-id=19 -- ibv_devinfo
silent id19_log
check "id19 log: the line once" test "$(grep -cxF -- "$DRIVERID" "$TMP/id19.log")" -eq 1
expect "id19 log: the detail (level 2)" "$TMP/id19.log" 'libmana: mana_0: kernel driver id is 19 but the device is MANA \(PCI 1414:00ba\)'
# driver id 20: nothing to say
run id20 -- "${KOPT[@]}" -- ibv_devinfo
silent id20

# ---- two causes in one process: one line each ------------------------------------
run all -- "${KOPT[@]}" --driver-id=19 --netdev-up -- /usr/bin/python3 -c "$QP_PY"
check "all: two lines" test "$(grep -c '^libmana: ' "$TMP/all.err")" -eq 2
check "all: driver id line" grep -qxF -- "$DRIVERID$SUFFIX" "$TMP/all.err"
check "all: QP type line" grep -qxF -- "$QPTYPE$SUFFIX" "$TMP/all.err"

check_done
