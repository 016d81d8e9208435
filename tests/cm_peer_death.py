# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""
An rdma_cm client whose peer VM dies (tests/test_cm_clients.sh disconnected):
connect to SERVER:PORT, say "connected", wait for the word "killed" on
stdin, then rdma_disconnect().  The DREQ finds nobody: after ib_cm's
retries the event must be RDMA_CM_EVENT_DISCONNECTED (status -ETIMEDOUT),
and the QP, moved to ERR by rdma_disconnect(), flushes the receive posted.

Usage: cm_peer_death.py SERVER PORT
"""
import sys

import pyverbs.cm_enums as ce
import pyverbs.cmid as cm
import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.qp import QPCap, QPInitAttr


def event(channel, want):
    ev = cm.CMEvent(channel)
    got = ev.event_type
    ev.ack_cm_event()
    print('event', ev.event_str(), flush=True)
    if got != want:
        sys.exit('expected event %d, got %d' % (want, got))


def connect_rc(server, port, before_connect=None):
    """
    An RC connection to SERVER:PORT through rdma_cm; @before_connect(cmid)
    runs once the QP exists.  Says 'connected'; returns (channel, cmid, cq).
    """
    channel = cm.CMEventChannel()
    cmid = cm.CMID(creator=channel)
    info = cm.AddrInfo(dst=server, dst_service=port,
                       port_space=ce.RDMA_PS_TCP)
    cmid.resolve_addr(info, 2000)
    event(channel, ce.RDMA_CM_EVENT_ADDR_RESOLVED)
    cmid.resolve_route(2000)
    event(channel, ce.RDMA_CM_EVENT_ROUTE_RESOLVED)
    cq = CQ(cmid.context, 8)
    cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1,
                max_recv_sge=1)
    cmid.create_qp(QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                              cap=cap))
    if before_connect:
        before_connect(cmid)
    cmid.connect(cm.ConnParam())
    event(channel, ce.RDMA_CM_EVENT_ESTABLISHED)
    print('connected', flush=True)
    return channel, cmid, cq


def main():
    server, port = sys.argv[1], sys.argv[2]
    mr = None

    def post_recv(cmid):
        nonlocal mr
        mr = cmid.reg_msgs(64)
        cmid.post_recv(mr, 64)

    channel, cmid, cq = connect_rc(server, port, post_recv)
    if sys.stdin.readline().strip() != 'killed':
        sys.exit('no word from the test')
    cmid.disconnect()
    # the receive posted before: flushed now that the QP is in ERR
    nc, wcs = cq.poll()
    if nc != 1 or wcs[0].status != e.IBV_WC_WR_FLUSH_ERR:
        sys.exit('expected one flushed receive, got %d %s' % (nc, wcs))
    print('flushed', flush=True)
    # the DREQ is never answered: ib_cm gives up and reports it
    event(channel, ce.RDMA_CM_EVENT_DISCONNECTED)
    print('disconnected', flush=True)


if __name__ == '__main__':
    main()
