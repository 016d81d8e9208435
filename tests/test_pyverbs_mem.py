# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Device memory and dma-buf MRs with plain pyverbs, in the style of
rdma-core's tests (issue 22).

dma-buf: a dma-buf from the VM's /dev/udmabuf over a memfd, an MR on it
as RDMA WRITE target and READ source between two RC QPs, the refusals (a
file that is no dma-buf, a range past it).  rdma-core's dma-buf tests
want a GPU's render node for their exporter; this takes the VM's udmabuf.
DM: pyverbs refuses to allocate it on a device without max_dm_size, which
mana_ib does not report, as rdma-core's DM tests find (they skip).  Run
under mana-emu --kernel=newest --netdev-up --ip=ADDR/LEN.
"""
import errno
import fcntl
import mmap
import os
import struct
import unittest

import pyverbs.device as d
import pyverbs.enums as e
from pyverbs.mr import DmaBufMR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError, PyverbsUserError
from pyverbs.wr import SGE, SendWR

import test_pyverbs_rc as rc

DM_LEN = 8192
UDMABUF_CREATE = 0x40187542		# _IOW('u', 0x42, struct udmabuf_create)
F_ADD_SEALS = 1033
F_SEAL_SHRINK = 2


def pattern(n, seed):
    return bytes((i * 7 + seed) & 0xff for i in range(n))


class RCPair(unittest.TestCase):
    """Two connected RC QPs on one port, as test_pyverbs_rc sets them up."""
    attr_init = rc.RCTraffic.attr_init
    attr_rtr = rc.RCTraffic.attr_rtr
    attr_rts = rc.RCTraffic.attr_rts
    connect = rc.RCTraffic.connect
    side = rc.RCTraffic.side

    def setUp(self):
        self.ctx = d.Context(name=rc.rnic_name())
        self.pd = PD(self.ctx)
        self.gid = self.ctx.query_gid(rc.PORT, rc.GID_INDEX)
        self.sides = []
        self.a, self.b = self.side(), self.side()
        self.connect(self.a, self.b)

    def tearDown(self):
        for side in self.sides:
            side.close()
        self.pd.close()
        self.ctx.close()

    def rdma(self, opcode, length, raddr, rkey):
        """One signaled WRITE or READ from a's MR: the completion status."""
        wr = SendWR(opcode=opcode, num_sge=1,
                    sg=[SGE(self.a.mr.buf, length, self.a.mr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_wr_rdma(rkey, raddr)
        self.a.qp.post_send(wr)
        wcs = rc.poll(self.a.cq)
        self.assertEqual(len(wcs), 1)
        return wcs[0].status


class DMTest(RCPair):
    """pyverbs allocates DM only on a device that reports max_dm_size, and
    mana_ib reports none (0): what rdma-core's DM tests see on MANA.  The
    DM verbs themselves are tested in C (tests/test_dm.c)."""

    def test_dm_size_unreported(self):
        self.assertEqual(self.ctx.query_device_ex().max_dm_size, 0)
        with self.assertRaises(PyverbsUserError):
            d.DM(self.ctx, d.AllocDmAttr(length=DM_LEN))


class DmaBufTest(RCPair):
    LEN = 65536

    def setUp(self):
        super().setUp()
        self.memfd = os.memfd_create('pyverbs', os.MFD_ALLOW_SEALING)
        os.ftruncate(self.memfd, self.LEN)
        fcntl.fcntl(self.memfd, F_ADD_SEALS, F_SEAL_SHRINK)
        dev = os.open('/dev/udmabuf', os.O_RDWR)
        try:
            arg = bytearray(struct.pack('IIQQ', self.memfd, 0, 0, self.LEN))
            # a mutable buffer: ioctl's return value (the new fd) comes back
            self.dmabuf = fcntl.ioctl(dev, UDMABUF_CREATE, arg, True)
        finally:
            os.close(dev)
        self.mem = mmap.mmap(self.memfd, self.LEN)

    def tearDown(self):
        self.mem.close()
        os.close(self.dmabuf)
        os.close(self.memfd)
        super().tearDown()

    def test_dmabuf_mr_rdma(self):
        mr = DmaBufMR(self.pd, 16384, rc.REMOTE, dmabuf=self.dmabuf,
                      offset=8192)
        try:
            # pyverbs registers the dma-buf's offset as the iova
            self.a.mr.write(pattern(4096, 4), 4096)
            self.assertEqual(self.rdma(e.IBV_WR_RDMA_WRITE, 4096,
                                       8192 + 100, mr.rkey),
                             e.IBV_WC_SUCCESS)
            self.assertEqual(self.mem[8292:8292 + 4096], pattern(4096, 4))
            self.mem[20000:21000] = pattern(1000, 5)
            self.assertEqual(self.rdma(e.IBV_WR_RDMA_READ, 1000, 20000,
                                       mr.rkey), e.IBV_WC_SUCCESS)
            self.assertEqual(self.a.mr.read(1000, 0), pattern(1000, 5))
            self.assertEqual(self.rdma(e.IBV_WR_RDMA_WRITE, 16, 8192 - 8,
                                       mr.rkey), e.IBV_WC_REM_ACCESS_ERR)
        finally:
            mr.close()

    def test_dmabuf_bad_fd(self):
        with self.assertRaises(PyverbsRDMAError) as ex:
            DmaBufMR(self.pd, 4096, rc.REMOTE, dmabuf=self.memfd)
        self.assertEqual(ex.exception.error_code, errno.EINVAL)
        with self.assertRaises(PyverbsRDMAError) as ex:
            DmaBufMR(self.pd, self.LEN + 4096, rc.REMOTE, dmabuf=self.dmabuf)
        self.assertEqual(ex.exception.error_code, errno.EINVAL)
