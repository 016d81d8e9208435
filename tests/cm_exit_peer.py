# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""
An rdma_cm client that ends while connected (tests/test_cm_clients.sh
exited): connect to SERVER:PORT, say "connected", then end without
rdma_disconnect() or rdma_destroy_id(), as HOW says:
  exit  libc's exit(0) (atexit handlers and destructors run; Python's
        objects are not freed, so librdmacm destroys nothing)
  term  SIGTERM with its default action
The real kernel closes the rdma_cm file as the process goes and sends a
DREQ for the connection: the server must get RDMA_CM_EVENT_DISCONNECTED.

Usage: cm_exit_peer.py SERVER PORT HOW
"""
import ctypes
import os
import signal
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
    if got != want:
        sys.exit('expected event %d, got %d' % (want, got))


def main():
    server, port, how = sys.argv[1], sys.argv[2], sys.argv[3]
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
    cmid.connect(cm.ConnParam())
    event(channel, ce.RDMA_CM_EVENT_ESTABLISHED)
    print('connected', flush=True)
    if how == 'exit':
        ctypes.CDLL(None).exit(0)
    elif how == 'term':
        os.kill(os.getpid(), signal.SIGTERM)
    sys.exit('still here after %s' % how)


main()
