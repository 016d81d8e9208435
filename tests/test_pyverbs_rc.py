# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""RC traffic with plain pyverbs, in the style of rdma-core's tests.

Two reliable-connected QPs on one emulated RNIC port talk to each other
(loopback wire): send/receive, RDMA write, write with immediate, RDMA
read, a remote access error, RNR retry exhausted and the QP state
machine's refusals.  Nothing here is MANA specific; the GID comes from the
emulator's --ip address.  Run under mana-emu --netdev-up --ip=ADDR/LEN.
"""
import errno
import time
import unittest

import pyverbs.device as d
import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

PORT = 1
GID_INDEX = 1		# 0: the link-local GID made from the MAC
DEPTH = 16
SIZE = 4096		# four packets at path MTU 1024
PSN = 0x123456		# close enough to 2^24 to wrap within a few messages

INIT_MASK = (e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT |
             e.IBV_QP_ACCESS_FLAGS)
RTR_MASK = (e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_PATH_MTU |
            e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN | e.IBV_QP_MAX_DEST_RD_ATOMIC |
            e.IBV_QP_MIN_RNR_TIMER)
RTS_MASK = (e.IBV_QP_STATE | e.IBV_QP_SQ_PSN | e.IBV_QP_TIMEOUT |
            e.IBV_QP_RETRY_CNT | e.IBV_QP_RNR_RETRY | e.IBV_QP_MAX_QP_RD_ATOMIC)
REMOTE = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
          e.IBV_ACCESS_REMOTE_READ)


def rnic_name():
    for dev in d.get_device_list():
        name = dev.name.decode()
        ctx = d.Context(name=name)
        try:
            if ctx.query_port(PORT).gid_tbl_len > 0:
                return name
        finally:
            ctx.close()
    raise unittest.SkipTest('no RNIC port with GIDs: run under mana-emu')


def poll(cq, count=1, limit=5.0):
    """Poll until @count completions: a list of WCs (sleeps, never spins)."""
    wcs = []
    deadline = time.monotonic() + limit
    while len(wcs) < count:
        n, got = cq.poll(count - len(wcs))
        wcs += got[:n]
        if n == 0:
            if time.monotonic() > deadline:
                break
            time.sleep(0.0005)
    return wcs


class Side:
    """One end: CQs, an RC QP, one MR (local + remote access)."""

    def __init__(self, ctx, pd, rnr_retry=7, access=REMOTE):
        self.cq = CQ(ctx, 2 * DEPTH)
        self.rcq = CQ(ctx, 2 * DEPTH)
        cap = QPCap(max_send_wr=DEPTH, max_recv_wr=DEPTH, max_send_sge=4,
                    max_recv_sge=4)
        self.qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.cq,
                                    rcq=self.rcq, cap=cap))
        self.mr = MR(pd, 4 * SIZE, REMOTE)
        self.rnr_retry = rnr_retry
        self.access = access

    def close(self):
        for obj in (self.qp, self.mr, self.cq, self.rcq):
            obj.close()


class RCTraffic(unittest.TestCase):
    def setUp(self):
        self.ctx = d.Context(name=rnic_name())
        self.pd = PD(self.ctx)
        self.gid = self.ctx.query_gid(PORT, GID_INDEX)
        self.sides = []

    def tearDown(self):
        for side in self.sides:
            side.close()
        self.pd.close()
        self.ctx.close()

    def side(self, **kw):
        s = Side(self.ctx, self.pd, **kw)
        self.sides.append(s)
        return s

    def attr_init(self, side):
        a = QPAttr()
        a.qp_state = e.IBV_QPS_INIT
        a.pkey_index = 0
        a.port_num = PORT
        a.qp_access_flags = side.access
        return a

    def attr_rtr(self, peer):
        a = QPAttr()
        a.qp_state = e.IBV_QPS_RTR
        a.path_mtu = e.IBV_MTU_1024
        a.dest_qp_num = peer.qp.qp_num
        a.rq_psn = PSN
        a.max_dest_rd_atomic = 1
        a.min_rnr_timer = 1
        gr = GlobalRoute(dgid=self.gid, sgid_index=GID_INDEX)
        a.ah_attr = AHAttr(gr=gr, is_global=1, port_num=PORT)
        return a

    def attr_rts(self, side):
        a = QPAttr()
        a.qp_state = e.IBV_QPS_RTS
        a.sq_psn = PSN
        a.timeout = 10
        a.retry_cnt = 3
        a.rnr_retry = side.rnr_retry
        a.max_rd_atomic = 1
        return a

    def connect(self, a, b):
        for me, peer in ((a, b), (b, a)):
            me.qp.modify(self.attr_init(me), INIT_MASK)
            me.qp.modify(self.attr_rtr(peer), RTR_MASK)
            me.qp.modify(self.attr_rts(me), RTS_MASK)

    def pair(self):
        a, b = self.side(), self.side()
        self.connect(a, b)
        return a, b

    def post_recv(self, side, wr_id, offset=0, length=SIZE):
        sge = SGE(side.mr.buf + offset, length, side.mr.lkey)
        side.qp.post_recv(RecvWR(wr_id=wr_id, num_sge=1, sg=[sge]))

    def post_send(self, side, wr_id, opcode, length=SIZE, remote=None, imm=None,
                  offset=0):
        sge = SGE(side.mr.buf + offset, length, side.mr.lkey)
        wr = SendWR(wr_id=wr_id, opcode=opcode, num_sge=1, sg=[sge],
                    send_flags=e.IBV_SEND_SIGNALED)
        if remote is not None:
            wr.set_wr_rdma(remote[0], remote[1])
        if imm is not None:
            wr.imm_data = imm
        side.qp.post_send(wr)

    def expect_wc(self, cq, wr_id, status=e.IBV_WC_SUCCESS, opcode=None):
        wcs = poll(cq)
        self.assertEqual(len(wcs), 1, 'no completion')
        wc = wcs[0]
        self.assertEqual(wc.status, status,
                         'status %d (vendor %d)' % (wc.status, wc.vendor_err))
        self.assertEqual(wc.wr_id, wr_id)
        if opcode is not None and status == e.IBV_WC_SUCCESS:
            self.assertEqual(wc.opcode, opcode)
        return wc

    def pattern(self, side, seed, offset=0, length=SIZE):
        data = bytes((seed + i * 7) & 0xff for i in range(length))
        side.mr.write(data, length, offset)
        return data

    def test_send_recv(self):
        a, b = self.pair()
        for i in range(3):		# PSNs wrap past 2^24 on the way
            self.post_recv(b, 100 + i)
            data = self.pattern(a, i)
            self.post_send(a, i, e.IBV_WR_SEND)
            self.expect_wc(a.cq, i, opcode=e.IBV_WC_SEND)
            wc = self.expect_wc(b.rcq, 100 + i, opcode=e.IBV_WC_RECV)
            self.assertEqual(wc.byte_len, SIZE)
            self.assertEqual(wc.qp_num, b.qp.qp_num)
            self.assertEqual(b.mr.read(SIZE, 0), data)

    def test_send_imm_zero_length(self):
        a, b = self.pair()
        self.post_recv(b, 7)
        self.post_send(a, 8, e.IBV_WR_SEND_WITH_IMM, length=0, imm=0x12345678)
        self.expect_wc(a.cq, 8)
        wc = self.expect_wc(b.rcq, 7, opcode=e.IBV_WC_RECV)
        self.assertEqual(wc.byte_len, 0)
        self.assertTrue(wc.wc_flags & e.IBV_WC_WITH_IMM)
        self.assertEqual(wc.imm_data, 0x12345678)

    def test_write(self):
        a, b = self.pair()
        data = self.pattern(a, 3)
        self.post_send(a, 1, e.IBV_WR_RDMA_WRITE,
                       remote=(b.mr.rkey, b.mr.buf + SIZE))
        self.expect_wc(a.cq, 1, opcode=e.IBV_WC_RDMA_WRITE)
        self.assertEqual(b.mr.read(SIZE, SIZE), data)
        self.assertEqual(poll(b.rcq, limit=0.05), [], 'a plain write completes nothing remotely')

    def test_write_imm(self):
        a, b = self.pair()
        self.post_recv(b, 5, length=0)
        data = self.pattern(a, 9)
        self.post_send(a, 2, e.IBV_WR_RDMA_WRITE_WITH_IMM,
                       remote=(b.mr.rkey, b.mr.buf + 2 * SIZE), imm=0xdeadbeef)
        self.expect_wc(a.cq, 2, opcode=e.IBV_WC_RDMA_WRITE)
        wc = self.expect_wc(b.rcq, 5, opcode=e.IBV_WC_RECV_RDMA_WITH_IMM)
        self.assertEqual(wc.imm_data, 0xdeadbeef)
        self.assertEqual(wc.byte_len, SIZE)
        self.assertEqual(b.mr.read(SIZE, 2 * SIZE), data)

    def test_read(self):
        a, b = self.pair()
        data = self.pattern(b, 21, offset=SIZE)
        self.post_send(a, 4, e.IBV_WR_RDMA_READ,
                       remote=(b.mr.rkey, b.mr.buf + SIZE), offset=3 * SIZE)
        self.expect_wc(a.cq, 4, opcode=e.IBV_WC_RDMA_READ)
        self.assertEqual(a.mr.read(SIZE, 3 * SIZE), data)

    def test_remote_access_error(self):
        a, b = self.pair()
        self.post_send(a, 1, e.IBV_WR_RDMA_WRITE,
                       remote=(b.mr.rkey ^ 0x5a5a00, b.mr.buf))
        self.post_send(a, 2, e.IBV_WR_RDMA_WRITE, remote=(b.mr.rkey, b.mr.buf))
        wcs = poll(a.cq, 2)
        self.assertEqual([w.wr_id for w in wcs], [1, 2])
        self.assertEqual(wcs[0].status, e.IBV_WC_REM_ACCESS_ERR)
        self.assertEqual(wcs[1].status, e.IBV_WC_WR_FLUSH_ERR)
        self.assertEqual(poll(a.cq, limit=0.05), [], 'each WR completes once')
        self.assertEqual(a.qp.query(e.IBV_QP_STATE)[0].qp_state, e.IBV_QPS_ERR)

    def test_rnr_retry_exceeded(self):
        # b posts no receive: it answers with RNR NAKs, a retries once
        a, b = self.side(rnr_retry=1), self.side()
        self.connect(a, b)
        self.post_send(a, 9, e.IBV_WR_SEND)
        self.expect_wc(a.cq, 9, status=e.IBV_WC_RNR_RETRY_EXC_ERR)
        self.assertEqual(a.qp.query(e.IBV_QP_STATE)[0].qp_state, e.IBV_QPS_ERR)

    def _to_err(self):
        a = QPAttr()
        a.qp_state = e.IBV_QPS_ERR
        return a

    def test_flush_on_modify_err(self):
        a, b = self.pair()
        for i in range(4):
            self.post_recv(b, 40 + i)
        b.qp.modify(self._to_err(), e.IBV_QP_STATE)
        wcs = poll(b.rcq, 4)
        self.assertEqual(sorted(w.wr_id for w in wcs), [40, 41, 42, 43])
        self.assertTrue(all(w.status == e.IBV_WC_WR_FLUSH_ERR for w in wcs))
        self.assertEqual(poll(b.rcq, limit=0.05), [])

    def test_state_machine_errors(self):
        a = self.side()
        peer = self.side()
        # RESET -> RTR skips INIT
        with self.assertRaises(PyverbsRDMAError) as ex:
            a.qp.modify(self.attr_rtr(peer), RTR_MASK)
        self.assertEqual(ex.exception.error_code, errno.EINVAL)
        # INIT without the port
        with self.assertRaises(PyverbsRDMAError) as ex:
            a.qp.modify(self.attr_init(a), INIT_MASK & ~e.IBV_QP_PORT)
        self.assertEqual(ex.exception.error_code, errno.EINVAL)
        a.qp.modify(self.attr_init(a), INIT_MASK)
        # RTR without the destination QP number
        with self.assertRaises(PyverbsRDMAError) as ex:
            a.qp.modify(self.attr_rtr(peer), RTR_MASK & ~e.IBV_QP_DEST_QPN)
        self.assertEqual(ex.exception.error_code, errno.EINVAL)
        # an SGID index past the table
        bad = self.attr_rtr(peer)
        bad.ah_attr = AHAttr(gr=GlobalRoute(dgid=self.gid, sgid_index=15),
                             is_global=1, port_num=PORT)
        with self.assertRaises(PyverbsRDMAError) as ex:
            a.qp.modify(bad, RTR_MASK)
        self.assertEqual(ex.exception.error_code, errno.EINVAL)
        # sending before RTS is refused and posts nothing
        with self.assertRaises(PyverbsRDMAError):
            self.post_send(a, 1, e.IBV_WR_SEND)
        a.qp.modify(self.attr_rtr(peer), RTR_MASK)
        attr, _ = a.qp.query(e.IBV_QP_STATE | e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN)
        self.assertEqual(attr.qp_state, e.IBV_QPS_RTR)
        self.assertEqual(attr.dest_qp_num, peer.qp.qp_num)
        self.assertEqual(attr.rq_psn, PSN)

    def test_unsupported_opcodes(self):
        a, b = self.pair()
        for op in (e.IBV_WR_ATOMIC_CMP_AND_SWP, e.IBV_WR_ATOMIC_FETCH_AND_ADD,
                   e.IBV_WR_BIND_MW):
            with self.assertRaises(PyverbsRDMAError):
                self.post_send(a, 1, op, remote=(b.mr.rkey, b.mr.buf))
        self.assertEqual(poll(a.cq, limit=0.05), [], 'nothing was posted')


if __name__ == '__main__':
    unittest.main()
