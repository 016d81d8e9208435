# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""
rdma_cm between two forked children of one process of an emulated VM (as
rdma-core's own rdmacm tests run their two sides): both are processes of
the VM, so the passive child's listener takes the active child's REQ to
the VM's own address, and messages flow both ways on the RC connection.

Run under mana-emu --vm=NAME --netdev-up --ip=ADDR/LEN; argv[1] is ADDR.
Exit status 0 when every message arrived intact in both children.
"""
import multiprocessing as mp
import sys

from pyverbs.cmid import CMID, AddrInfo
from pyverbs.qp import QPCap, QPInitAttr
import pyverbs.cm_enums as ce
import pyverbs.enums as e

MSGS = 20
SIZE = 256
PORT = '7471'


def side(addr, passive, barrier, out):
    try:
        attr = QPInitAttr(qp_type=e.IBV_QPT_RC,
                          cap=QPCap(max_send_wr=4, max_recv_wr=4))
        if passive:
            ai = AddrInfo(src=addr, src_service=PORT,
                          port_space=ce.RDMA_PS_TCP, flags=ce.RAI_PASSIVE)
            listen_id = CMID(creator=ai, qp_init_attr=attr)
            listen_id.listen()
            barrier.wait()
            cmid = listen_id.get_request()
            cmid.accept()
        else:
            ai = AddrInfo(src=addr, dst=addr, dst_service=PORT,
                          port_space=ce.RDMA_PS_TCP)
            cmid = CMID(creator=ai, qp_init_attr=attr)
            barrier.wait()
            cmid.connect()
        mr = cmid.reg_msgs(SIZE)
        for i in range(MSGS):
            mine = bytes([(i + (1 if passive else 2)) & 0xff]) * SIZE
            theirs = bytes([(i + (2 if passive else 1)) & 0xff]) * SIZE
            cmid.post_recv(mr)
            barrier.wait()
            if passive:
                cmid.get_recv_comp()
                got = mr.read(SIZE, 0)
                mr.write(mine, SIZE)
                cmid.post_send(mr)
                cmid.get_send_comp()
            else:
                mr.write(mine, SIZE)
                cmid.post_send(mr)
                cmid.get_send_comp()
                cmid.get_recv_comp()
                got = mr.read(SIZE, 0)
            if got != theirs:
                out.put(f'{"passive" if passive else "active"}: message {i} '
                        f'corrupt')
                sys.exit(1)
        barrier.wait()
        cmid.disconnect()
        out.put('ok')
    except Exception as ex:   # the reason, for the parent to print
        out.put(f'{"passive" if passive else "active"}: {ex}')
        sys.exit(1)


def main():
    addr = sys.argv[1]
    ctx = mp.get_context('fork')
    barrier = ctx.Barrier(2, timeout=60)
    out = ctx.Queue()
    procs = [ctx.Process(target=side, args=(addr, p, barrier, out))
             for p in (True, False)]
    for p in procs:
        p.start()
    results = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(120)
    print('\n'.join(results))
    ok = all(r == 'ok' for r in results) and \
        all(p.exitcode == 0 for p in procs)
    print('PASS' if ok else 'FAIL')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
