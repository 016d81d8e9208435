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

The other way round (cm.drep.*): "cm_exit_peer.py listen ADDR PORT HOW"
accepts one connection, waits for its DISCONNECTED (the client's DREQ) and
ends without rdma_disconnect() or rdma_destroy_id(), by exit(0) (HOW exit)
or a SIGSEGV (HOW segv, as qperf's server child does): the kernel's
release of the file answers the DREQ with a DREP.  "cm_exit_peer.py
disconnect SERVER PORT" connects, disconnects and gets its own
DISCONNECTED: status 0 (the DREP), not -ETIMEDOUT after the DREQ's
retries.
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

from cm_peer_death import connect_rc, event


def listen(addr, port, how):
    channel = cm.CMEventChannel()
    lid = cm.CMID(creator=channel)
    lid.bind_addr(cm.AddrInfo(src=addr, src_service=port,
                              port_space=ce.RDMA_PS_TCP,
                              flags=ce.RAI_PASSIVE))
    lid.listen()
    print('listening', flush=True)
    ev = cm.CMEvent(channel)
    if ev.event_type != ce.RDMA_CM_EVENT_CONNECT_REQUEST:
        sys.exit('expected a connect request, got %d' % ev.event_type)
    child = cm.CMID(creator=ev, listen_id=lid)
    ev.ack_cm_event()
    cq = CQ(child.context, 8)
    cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1,
                max_recv_sge=1)
    child.create_qp(QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                               cap=cap))
    child.accept(cm.ConnParam())
    event(channel, ce.RDMA_CM_EVENT_ESTABLISHED)
    event(channel, ce.RDMA_CM_EVENT_DISCONNECTED)
    print('disconnected', flush=True)
    if how == 'segv':
        # a crash: the kernel releases the file all the same
        ctypes.string_at(0)
    ctypes.CDLL(None).exit(0)


def disconnect(server, port):
    channel, cmid, cq = connect_rc(server, port)
    # answered: status 0 (the test reads it in the log); unanswered, the
    # DREQ's 15 retries end in DISCONNECTED -ETIMEDOUT after 74 s
    cmid.disconnect()
    event(channel, ce.RDMA_CM_EVENT_DISCONNECTED)
    print('disconnected', flush=True)


def main():
    if sys.argv[1] == 'listen':
        listen(sys.argv[2], sys.argv[3], sys.argv[4])
        return
    if sys.argv[1] == 'disconnect':
        disconnect(sys.argv[2], sys.argv[3])
        return
    server, port, how = sys.argv[1], sys.argv[2], sys.argv[3]
    # held while the process ends: nothing is destroyed on the way out
    conn = connect_rc(server, port)
    if how == 'exit':
        ctypes.CDLL(None).exit(0)
    elif how == 'term':
        os.kill(os.getpid(), signal.SIGTERM)
    sys.exit('still here after %s' % how)


main()
