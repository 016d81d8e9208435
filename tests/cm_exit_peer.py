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

from cm_peer_death import connect_rc


def main():
    server, port, how = sys.argv[1], sys.argv[2], sys.argv[3]
    # held while the process ends: nothing is destroyed on the way out
    conn = connect_rc(server, port)
    if how == 'exit':
        ctypes.CDLL(None).exit(0)
    elif how == 'term':
        os.kill(os.getpid(), signal.SIGTERM)
    sys.exit('still here after %s' % how)


main()
