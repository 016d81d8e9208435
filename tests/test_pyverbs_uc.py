# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""UC queue pairs and memory windows with plain pyverbs, in the style of
rdma-core's tests.

Two QPs on one emulated RNIC port talk to each other (loopback wire).  UC:
send/receive, send with immediate, RDMA write (with immediate), through
the classic verbs and through ibv_wr_* with an extended CQ; RDMA read is
refused.  Memory windows: both types are allocated and deallocated, no
binding exists on MANA, and an RDMA write through a window's rkey gets a
remote access error and changes nothing.  Run under mana-emu --netdev-up
--ip=ADDR/LEN and --kernel=VERSION; MANA_EXPECT says what that kernel has:
"new" (7.2: UC and MW), "mw" (7.1: MW, no UC) or "old" (neither).
"""
import errno
import os
import socket
import time
import unittest

import pyverbs.device as d
import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ, CQEX, CqInitAttrEx, PollCqAttr
from pyverbs.mr import MR, MW, MWBind, MWBindInfo
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPEx, QPInitAttr, QPInitAttrEx
from pyverbs.wr import SGE, RecvWR, SendWR

PORT = 1
GID_INDEX = 1
DEPTH = 16
MTU = 1024
SIZE = 4 * MTU
PSN = 0xfffff0		# wraps within a few messages
EXPECT = os.environ.get('MANA_EXPECT', 'new')
WAIT = 30.0
ACCESS = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE)
UC_SEND_OPS = (e.IBV_QP_EX_WITH_SEND | e.IBV_QP_EX_WITH_SEND_WITH_IMM |
               e.IBV_QP_EX_WITH_RDMA_WRITE |
               e.IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
WC_EX = (e.IBV_WC_EX_WITH_BYTE_LEN | e.IBV_WC_EX_WITH_IMM |
         e.IBV_WC_EX_WITH_QP_NUM)


def rnic_name():
    for dev in d.get_device_list():
        name = dev.name.decode()
        ctx = d.Context(name=name)
        try:
            if ctx.query_port(PORT).gid_tbl_len > 0:
                return name
        finally:
            ctx.close()
    raise AssertionError('no RNIC port with GIDs: run under mana-emu --ip')


def poll(cq, count=1):
    wcs = []
    deadline = time.monotonic() + WAIT
    while len(wcs) < count and time.monotonic() < deadline:
        n, got = cq.poll(count - len(wcs))
        wcs += got[:n]
        if n == 0:
            time.sleep(0.0005)
    return wcs


def poll_ex(cq):
    deadline = time.monotonic() + WAIT
    while True:
        try:
            ret = cq.start_poll(PollCqAttr())
        except PyverbsRDMAError as ex:
            ret = ex.error_code
        if ret == 0:
            break
        if ret != errno.ENOENT or time.monotonic() > deadline:
            return None
        time.sleep(0.0005)
    wc = {'wr_id': cq.wr_id, 'status': cq.status, 'opcode': cq.read_opcode(),
          'byte_len': cq.read_byte_len(), 'wc_flags': cq.read_wc_flags()}
    if wc['wc_flags'] & e.IBV_WC_WITH_IMM:
        wc['imm'] = socket.ntohl(cq.read_imm_data())
    cq.end_poll()
    return wc


class Side:
    """One end: a CQ per direction, a QP of @qp_type, one MR."""

    def __init__(self, ctx, pd, qp_type, ex=False):
        self.cq = CQ(ctx, 2 * DEPTH)
        cap = QPCap(max_send_wr=DEPTH, max_recv_wr=DEPTH, max_send_sge=2,
                    max_recv_sge=2)
        if ex:
            self.rcq = CQEX(ctx, CqInitAttrEx(cqe=2 * DEPTH, wc_flags=WC_EX))
            attr = QPInitAttrEx(qp_type=qp_type, scq=self.cq, rcq=self.rcq,
                                cap=cap, pd=pd, sq_sig_all=0,
                                comp_mask=e.IBV_QP_INIT_ATTR_PD |
                                e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
                                send_ops_flags=UC_SEND_OPS)
            self.qp = QPEx(ctx, attr)
        else:
            self.rcq = CQ(ctx, 2 * DEPTH)
            self.qp = QP(pd, QPInitAttr(qp_type=qp_type, scq=self.cq,
                                        rcq=self.rcq, cap=cap, sq_sig_all=0))
        self.mr = MR(pd, 4 * SIZE, ACCESS | e.IBV_ACCESS_REMOTE_READ)

    def close(self):
        for obj in (self.qp, self.mr, self.cq, self.rcq):
            obj.close()


class Base(unittest.TestCase):
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

    def connect(self, a, b, uc):
        """INIT, RTR, RTS with the attributes IBA requires for the type."""
        for me, peer in ((a, b), (b, a)):
            at = QPAttr()
            at.qp_state = e.IBV_QPS_INIT
            at.pkey_index = 0
            at.port_num = PORT
            at.qp_access_flags = ACCESS
            me.qp.modify(at, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX |
                         e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS)
            at = QPAttr()
            at.qp_state = e.IBV_QPS_RTR
            at.path_mtu = e.IBV_MTU_1024
            at.dest_qp_num = peer.qp.qp_num
            at.rq_psn = PSN
            at.max_dest_rd_atomic = 1
            at.min_rnr_timer = 1
            at.ah_attr = AHAttr(gr=GlobalRoute(dgid=self.gid,
                                               sgid_index=GID_INDEX),
                                is_global=1, port_num=PORT)
            mask = (e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_PATH_MTU |
                    e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN)
            if not uc:
                mask |= e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER
            me.qp.modify(at, mask)
            at = QPAttr()
            at.qp_state = e.IBV_QPS_RTS
            at.sq_psn = PSN
            at.timeout = 10
            at.retry_cnt = 7
            at.rnr_retry = 7
            at.max_rd_atomic = 1
            mask = e.IBV_QP_STATE | e.IBV_QP_SQ_PSN
            if not uc:
                mask |= (e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT |
                         e.IBV_QP_RNR_RETRY | e.IBV_QP_MAX_QP_RD_ATOMIC)
            me.qp.modify(at, mask)

    def pair(self, qp_type, ex=False):
        a = Side(self.ctx, self.pd, qp_type, ex)
        self.sides.append(a)
        b = Side(self.ctx, self.pd, qp_type, ex)
        self.sides.append(b)
        self.connect(a, b, qp_type == e.IBV_QPT_UC)
        return a, b


@unittest.skipUnless(EXPECT == 'new', 'UC QPs need Linux 7.2')
class UCTraffic(Base):
    def post_recv(self, side, wr_id, length=SIZE):
        side.qp.post_recv(RecvWR(wr_id=wr_id, num_sge=1,
                                 sg=[SGE(side.mr.buf, length, side.mr.lkey)]))

    def send(self, a, b, opcode, length, imm=0, ex=False):
        sge = SGE(a.mr.buf, length, a.mr.lkey)
        if not ex:
            wr = SendWR(wr_id=7, opcode=opcode, num_sge=1, sg=[sge],
                        send_flags=e.IBV_SEND_SIGNALED)
            wr.imm_data = imm
            if opcode in (e.IBV_WR_RDMA_WRITE, e.IBV_WR_RDMA_WRITE_WITH_IMM):
                wr.set_wr_rdma(b.mr.rkey, b.mr.buf + SIZE)
            a.qp.post_send(wr)
            return
        qp = a.qp
        qp.wr_start()
        qp.wr_id = 7
        qp.wr_flags = e.IBV_SEND_SIGNALED
        if opcode == e.IBV_WR_SEND:
            qp.wr_send()
        elif opcode == e.IBV_WR_SEND_WITH_IMM:
            qp.wr_send_imm(imm)
        elif opcode == e.IBV_WR_RDMA_WRITE:
            qp.wr_rdma_write(b.mr.rkey, b.mr.buf + SIZE)
        else:
            qp.wr_rdma_write_imm(b.mr.rkey, b.mr.buf + SIZE, imm)
        qp.wr_set_sge(sge)
        qp.wr_complete()

    def traffic(self, ex):
        a, b = self.pair(e.IBV_QPT_UC, ex)
        self.assertEqual(a.qp.qp_type, e.IBV_QPT_UC)
        cases = ((e.IBV_WR_SEND, e.IBV_WC_RECV, False),
                 (e.IBV_WR_SEND_WITH_IMM, e.IBV_WC_RECV, True),
                 (e.IBV_WR_RDMA_WRITE, None, False),
                 (e.IBV_WR_RDMA_WRITE_WITH_IMM, e.IBV_WC_RECV_RDMA_WITH_IMM,
                  True))
        for n, (op, rop, with_imm) in enumerate(cases):
            for length in (0, 1, MTU, 3 * MTU + 17):
                data = bytes((n * 31 + i * 7 + 1) & 0xff
                             for i in range(length))
                a.mr.write(data, length, 0)
                b.mr.write(bytes(4 * SIZE), 4 * SIZE, 0)
                if rop is not None:
                    self.post_recv(b, 100 + length)
                self.send(a, b, op, length, imm=0xbeef0000 + length, ex=ex)
                wc, = poll(a.cq)
                self.assertEqual(wc.status, e.IBV_WC_SUCCESS)
                self.assertEqual(wc.wr_id, 7)
                at = SIZE if op in (e.IBV_WR_RDMA_WRITE,
                                    e.IBV_WR_RDMA_WRITE_WITH_IMM) else 0
                if rop is None:
                    # nothing completes on the target: wait for the data
                    deadline = time.monotonic() + WAIT
                    while (length and b.mr.read(length, at) != data and
                           time.monotonic() < deadline):
                        time.sleep(0.0005)
                else:
                    if ex:
                        rwc = poll_ex(b.rcq)
                        self.assertIsNotNone(rwc)
                        status, opcode, blen = (rwc['status'],
                                                rwc['opcode'],
                                                rwc['byte_len'])
                        imm = rwc.get('imm')
                    else:
                        r, = poll(b.rcq)
                        status, opcode, blen = r.status, r.opcode, r.byte_len
                        imm = (r.imm_data
                               if r.wc_flags & e.IBV_WC_WITH_IMM else None)
                    self.assertEqual(status, e.IBV_WC_SUCCESS)
                    self.assertEqual(opcode, rop)
                    self.assertEqual(blen, length)
                    self.assertEqual(imm, 0xbeef0000 + length
                                     if with_imm else None)
                self.assertEqual(b.mr.read(length, at) if length else b'',
                                 data)

    def test_uc_traffic(self):
        self.traffic(False)

    def test_uc_traffic_ex(self):
        self.traffic(True)

    def test_uc_no_read(self):
        a, b = self.pair(e.IBV_QPT_UC)
        wr = SendWR(wr_id=1, opcode=e.IBV_WR_RDMA_READ, num_sge=1,
                    sg=[SGE(a.mr.buf, 64, a.mr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_wr_rdma(b.mr.rkey, b.mr.buf)
        with self.assertRaises(PyverbsRDMAError) as ex:
            a.qp.post_send(wr)
        self.assertEqual(ex.exception.error_code, errno.EINVAL)
        # UC asked for READ at create: refused
        attr = QPInitAttrEx(qp_type=e.IBV_QPT_UC, scq=a.cq, rcq=a.cq,
                            cap=QPCap(4, 4, 1, 1), pd=self.pd,
                            comp_mask=e.IBV_QP_INIT_ATTR_PD |
                            e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
                            send_ops_flags=UC_SEND_OPS |
                            e.IBV_QP_EX_WITH_RDMA_READ)
        with self.assertRaises(PyverbsRDMAError) as ex:
            QPEx(self.ctx, attr)
        self.assertEqual(ex.exception.error_code, errno.EOPNOTSUPP)


class UCAbsent(Base):
    @unittest.skipIf(EXPECT == 'new', 'this kernel has UC QPs')
    def test_uc_create_refused(self):
        cq = CQ(self.ctx, 8)
        try:
            with self.assertRaises(PyverbsRDMAError) as ex:
                QP(self.pd, QPInitAttr(qp_type=e.IBV_QPT_UC, scq=cq, rcq=cq,
                                       cap=QPCap(4, 4, 1, 1)))
            self.assertEqual(ex.exception.error_code, errno.EOPNOTSUPP)
        finally:
            cq.close()


class MWTest(Base):
    @unittest.skipIf(EXPECT == 'old', 'memory windows need Linux 7.1')
    def test_mw_grants_nothing(self):
        a, b = self.pair(e.IBV_QPT_RC)
        mws = [MW(self.pd, e.IBV_MW_TYPE_1), MW(self.pd, e.IBV_MW_TYPE_2)]
        bmr = MR(self.pd, SIZE, ACCESS | e.IBV_ACCESS_MW_BIND)
        try:
            self.assertNotEqual(mws[0].rkey, mws[1].rkey)
            info = MWBindInfo(bmr, bmr.buf, SIZE, e.IBV_ACCESS_REMOTE_WRITE)
            with self.assertRaises(PyverbsRDMAError) as ex:
                b.qp.bind_mw(mws[0], MWBind(info, e.IBV_SEND_SIGNALED))
            self.assertEqual(ex.exception.error_code, errno.EOPNOTSUPP)
            b.mr.write(bytes(SIZE), SIZE, 0)
            a.mr.write(b'\x5a' * SIZE, SIZE, 0)
            wr = SendWR(wr_id=3, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                        sg=[SGE(a.mr.buf, SIZE, a.mr.lkey)],
                        send_flags=e.IBV_SEND_SIGNALED)
            wr.set_wr_rdma(mws[1].rkey, b.mr.buf)
            a.qp.post_send(wr)
            wc, = poll(a.cq)
            self.assertEqual(wc.status, e.IBV_WC_REM_ACCESS_ERR)
            self.assertEqual(b.mr.read(SIZE, 0), bytes(SIZE))
        finally:
            bmr.close()
            for mw in mws:
                mw.close()

    @unittest.skipIf(EXPECT == 'old', 'memory windows need Linux 7.1')
    def test_mw_bad_type(self):
        with self.assertRaises(PyverbsRDMAError) as ex:
            MW(self.pd, 3)
        self.assertEqual(ex.exception.error_code, errno.EINVAL)

    @unittest.skipUnless(EXPECT == 'old', 'this kernel has memory windows')
    def test_mw_refused(self):
        with self.assertRaises(PyverbsRDMAError) as ex:
            MW(self.pd, e.IBV_MW_TYPE_2)
        self.assertEqual(ex.exception.error_code, errno.EOPNOTSUPP)
        with self.assertRaises(PyverbsRDMAError) as ex:
            MR(self.pd, SIZE, ACCESS | e.IBV_ACCESS_MW_BIND)
        self.assertEqual(ex.exception.error_code, errno.EINVAL)


if __name__ == '__main__':
    unittest.main()
