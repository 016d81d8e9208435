# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""
TCP between emulated VMs (tests/test_cm_clients.sh ip.*): a VM's --ip
subnets reach the other VMs as a real virtual network would.

  vm_ip_peer.py listen PORT        accept one connection on the wildcard
                                   address, read a line, answer it, exit
  vm_ip_peer.py connect ADDR PORT  connect (blocking), send a line, print
                                   the answer; on failure print the errno
                                   name ("error ECONNREFUSED") and exit 1
"""
import errno
import socket
import sys


def listen(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('0.0.0.0', int(port)))
    s.listen(1)
    print('listening', flush=True)
    c, _ = s.accept()
    line = c.makefile().readline().strip()
    c.sendall(('got ' + line + '\n').encode())
    c.close()
    print('served ' + line, flush=True)


def connect(addr, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.connect((addr, int(port)))
    except OSError as ex:
        print('error ' + errno.errorcode.get(ex.errno, str(ex.errno)),
              flush=True)
        sys.exit(1)
    s.sendall(b'hello\n')
    print(s.makefile().readline().strip(), flush=True)


if sys.argv[1] == 'listen':
    listen(sys.argv[2])
else:
    connect(sys.argv[2], sys.argv[3])
