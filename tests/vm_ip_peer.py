# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""
TCP between emulated VMs (tests/test_cm_clients.sh ip.*): a VM's --ip
subnets reach the other VMs as a real virtual network would.

  vm_ip_peer.py listen PORT        accept one connection on the wildcard
                                   address, read a line, answer it, exit
  vm_ip_peer.py connect ADDR PORT  connect (blocking), send a line, print
                                   the answer; on failure print the errno
                                   name ("error ECONNREFUSED") and exit 1
  vm_ip_peer.py ifaddrs            libc's getifaddrs(): one line per IPv4
                                   address, "inet NAME ADDR/PREFIX"
"""
import ctypes
import errno
import socket
import sys


class SockAddrIn(ctypes.Structure):
    _fields_ = [('family', ctypes.c_ushort), ('port', ctypes.c_uint16),
                ('addr', ctypes.c_uint8 * 4), ('zero', ctypes.c_uint8 * 8)]


class IfAddrs(ctypes.Structure):
    pass


IfAddrs._fields_ = [('next', ctypes.POINTER(IfAddrs)),
                    ('name', ctypes.c_char_p), ('flags', ctypes.c_uint),
                    ('addr', ctypes.POINTER(SockAddrIn)),
                    ('netmask', ctypes.POINTER(SockAddrIn)),
                    ('ifu', ctypes.c_void_p), ('data', ctypes.c_void_p)]


def ifaddrs():
    libc = ctypes.CDLL(None, use_errno=True)
    head = ctypes.POINTER(IfAddrs)()
    if libc.getifaddrs(ctypes.byref(head)):
        sys.exit('getifaddrs: errno %d' % ctypes.get_errno())
    cur = head
    while cur:
        e = cur.contents
        if e.addr and e.addr.contents.family == socket.AF_INET:
            mask = int.from_bytes(bytes(e.netmask.contents.addr), 'big')
            print('inet %s %s/%d' % (e.name.decode(),
                                     socket.inet_ntoa(bytes(e.addr.contents.addr)),
                                     bin(mask).count('1')))
        cur = e.next
    libc.freeifaddrs(head)


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
elif sys.argv[1] == 'ifaddrs':
    ifaddrs()
else:
    connect(sys.argv[2], sys.argv[3])
