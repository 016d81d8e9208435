# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""RC traffic with plain pyverbs, in the style of rdma-core's tests.

Two reliable-connected QPs on one emulated RNIC port talk to each other
(loopback wire): send/receive, RDMA write, write with immediate, RDMA
read, a remote access error, RNR retry exhausted and the QP state
machine's refusals.  Nothing here is MANA specific; the GID comes from the
emulator's --ip address.  Run under mana-emu --netdev-up --ip=ADDR/LEN.

The classic verbs (ibv_post_send, ibv_poll_cq) and the extended ones
(ibv_wr_* on an ibv_qp_ex, ibv_start_poll on an ibv_cq_ex) are both used:
perftest, for a device it does not know, always takes the classic path.
"""
import errno
import socket
import time
import unittest

import pyverbs.device as d
import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ, CQEX, CompChannel, CqInitAttrEx, PollCqAttr
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPEx, QPInitAttr, QPInitAttrEx
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
INLINE = 64		# max_inline_data asked for
# a completion that does not come within this long is a failure (a bound on
# a hang, not a speed requirement: ASan on a loaded machine is slow)
WAIT = 30.0
# how long "nothing more arrives" is watched for
QUIET = 0.05
SEND_OPS = (e.IBV_QP_EX_WITH_SEND | e.IBV_QP_EX_WITH_SEND_WITH_IMM |
            e.IBV_QP_EX_WITH_RDMA_WRITE | e.IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
            e.IBV_QP_EX_WITH_RDMA_READ)
WC_EX = (e.IBV_WC_EX_WITH_BYTE_LEN | e.IBV_WC_EX_WITH_IMM |
         e.IBV_WC_EX_WITH_QP_NUM | e.IBV_WC_EX_WITH_SRC_QP)


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


def poll(cq, count=1, limit=WAIT):
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


def poll_ex(cq, limit=WAIT):
    """One completion from an extended CQ: a dict of what the readers say."""
    deadline = time.monotonic() + limit
    while True:
        try:
            ret = cq.start_poll(PollCqAttr())
        except PyverbsRDMAError as ex:
            ret = ex.error_code
        if ret == 0:
            break
        if ret != errno.ENOENT:
            raise AssertionError('ibv_start_poll: %d' % ret)
        if time.monotonic() > deadline:
            return None
        time.sleep(0.0005)
    wc = {'wr_id': cq.wr_id, 'status': cq.status, 'opcode': cq.read_opcode(),
          'byte_len': cq.read_byte_len(), 'wc_flags': cq.read_wc_flags(),
          'qp_num': cq.read_qp_num(), 'src_qp': cq.read_src_qp()}
    if wc['wc_flags'] & e.IBV_WC_WITH_IMM:
        # ibv_wc_read_imm_data gives the wire's big-endian value as is
        wc['imm'] = socket.ntohl(cq.read_imm_data())
    cq.end_poll()
    return wc


class Side:
    """One end: CQs, an RC QP, one MR (local + remote access).

    ex=True: an ibv_qp_ex (ibv_wr_*) whose receive CQ is an ibv_cq_ex."""

    def __init__(self, ctx, pd, rnr_retry=7, access=REMOTE, ex=False):
        self.cq = CQ(ctx, 2 * DEPTH)
        cap = QPCap(max_send_wr=DEPTH, max_recv_wr=DEPTH, max_send_sge=4,
                    max_recv_sge=4, max_inline_data=INLINE)
        if ex:
            self.rcq = CQEX(ctx, CqInitAttrEx(cqe=2 * DEPTH, wc_flags=WC_EX))
            attr = QPInitAttrEx(qp_type=e.IBV_QPT_RC, scq=self.cq,
                                rcq=self.rcq, cap=cap, pd=pd, sq_sig_all=0,
                                comp_mask=e.IBV_QP_INIT_ATTR_PD |
                                e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
                                send_ops_flags=SEND_OPS)
            self.qp = QPEx(ctx, attr)
        else:
            self.rcq = CQ(ctx, 2 * DEPTH)
            self.qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.cq,
                                        rcq=self.rcq, cap=cap, sq_sig_all=0))
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
        # the most IBA allows: the data tests also run on a lossy wire
        # (rc.fault.pyverbs_lossy), where retransmissions are dropped and
        # overtaken in turn; with 3, a 256-packet WRITE once ran out of
        # retries there (a NAK without progress counts, as a timeout does)
        a.retry_cnt = 7
        a.rnr_retry = side.rnr_retry
        a.max_rd_atomic = 1
        return a

    def connect(self, a, b):
        for me, peer in ((a, b), (b, a)):
            me.qp.modify(self.attr_init(me), INIT_MASK)
            me.qp.modify(self.attr_rtr(peer), RTR_MASK)
            me.qp.modify(self.attr_rts(me), RTS_MASK)

    def pair(self, ex=False):
        a, b = self.side(ex=ex), self.side(ex=ex)
        self.connect(a, b)
        return a, b

    def post_recv(self, side, wr_id, offset=0, length=SIZE):
        sge = SGE(side.mr.buf + offset, length, side.mr.lkey)
        side.qp.post_recv(RecvWR(wr_id=wr_id, num_sge=1, sg=[sge]))

    def post_send(self, side, wr_id, opcode, length=SIZE, remote=None, imm=None,
                  offset=0, sges=None, flags=e.IBV_SEND_SIGNALED):
        if sges is None:
            sges = [SGE(side.mr.buf + offset, length, side.mr.lkey)]
        wr = SendWR(wr_id=wr_id, opcode=opcode, num_sge=len(sges), sg=sges,
                    send_flags=flags)
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
        self.assertEqual(poll(b.rcq, limit=QUIET), [], 'a plain write completes nothing remotely')

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
        self.assertEqual(poll(a.cq, limit=QUIET), [], 'each WR completes once')
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
        self.assertEqual(poll(b.rcq, limit=QUIET), [])

    def test_state_machine_errors(self):
        a = self.side()
        peer = self.side()
        # RESET -> RTR skips INIT
        with self.assertRaises(PyverbsRDMAError) as ex:
            a.qp.modify(self.attr_rtr(peer), RTR_MASK)
        self.assertEqual(ex.exception.error_code, errno.EINVAL)
        # INIT without the port: mana_ib checks no transition, the device
        # refuses it (a failed SET_QP_STATE: EPROTO)
        with self.assertRaises(PyverbsRDMAError) as ex:
            a.qp.modify(self.attr_init(a), INIT_MASK & ~e.IBV_QP_PORT)
        self.assertEqual(ex.exception.error_code, errno.EPROTO)
        a.qp.modify(self.attr_init(a), INIT_MASK)
        # RTR without the destination QP number: the device again
        with self.assertRaises(PyverbsRDMAError) as ex:
            a.qp.modify(self.attr_rtr(peer), RTR_MASK & ~e.IBV_QP_DEST_QPN)
        self.assertEqual(ex.exception.error_code, errno.EPROTO)
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
            with self.assertRaises(PyverbsRDMAError) as ex:
                self.post_send(a, 1, op, remote=(b.mr.rkey, b.mr.buf))
            self.assertEqual(ex.exception.error_code, errno.EINVAL)
        self.assertEqual(poll(a.cq, limit=QUIET), [], 'nothing was posted')

    def test_multi_sge_send(self):
        # every SGE of the send is gathered, every SGE of the receive filled
        a, b = self.pair()
        parts = [(0, 100), (SIZE, 1000), (2 * SIZE + 5, 2996)]
        data = b''
        for i, (off, ln) in enumerate(parts):
            data += self.pattern(a, 40 + i, offset=off, length=ln)
        total = len(data)
        rsges = [SGE(b.mr.buf + 3 * SIZE, 7, b.mr.lkey),
                 SGE(b.mr.buf, total - 7, b.mr.lkey)]
        b.qp.post_recv(RecvWR(wr_id=1, num_sge=2, sg=rsges))
        self.post_send(a, 2, e.IBV_WR_SEND,
                       sges=[SGE(a.mr.buf + o, n, a.mr.lkey) for o, n in parts])
        self.expect_wc(a.cq, 2, opcode=e.IBV_WC_SEND)
        wc = self.expect_wc(b.rcq, 1, opcode=e.IBV_WC_RECV)
        self.assertEqual(wc.byte_len, total)
        self.assertEqual(b.mr.read(7, 3 * SIZE), data[:7])
        self.assertEqual(b.mr.read(total - 7, 0), data[7:])

    def test_inline_send(self):
        # the data is taken at post time: changing the buffer after is fine
        a, b = self.pair()
        data = self.pattern(a, 77, length=INLINE)
        self.post_recv(b, 3)
        self.post_send(a, 4, e.IBV_WR_SEND, length=INLINE,
                       flags=e.IBV_SEND_SIGNALED | e.IBV_SEND_INLINE)
        a.mr.write(bytes(INLINE), INLINE, 0)
        self.expect_wc(a.cq, 4, opcode=e.IBV_WC_SEND)
        wc = self.expect_wc(b.rcq, 3, opcode=e.IBV_WC_RECV)
        self.assertEqual(wc.byte_len, INLINE)
        self.assertEqual(b.mr.read(INLINE, 0), data)
        with self.assertRaises(PyverbsRDMAError) as ex:
            self.post_send(a, 5, e.IBV_WR_SEND, length=INLINE + 1,
                           flags=e.IBV_SEND_SIGNALED | e.IBV_SEND_INLINE)
        self.assertEqual(ex.exception.error_code, errno.EINVAL)

    def test_large_write_read(self):
        # 256 KiB messages: 256 packets each at path MTU 1024
        big = 256 * 1024
        a, b = self.pair()
        amr = MR(self.pd, 2 * big, REMOTE)
        bmr = MR(self.pd, 2 * big, REMOTE)
        try:
            data = bytes((i * 13 + (i >> 10)) & 0xff for i in range(big))
            amr.write(data, big, 0)
            self.post_send(a, 1, e.IBV_WR_RDMA_WRITE,
                           sges=[SGE(amr.buf, big, amr.lkey)],
                           remote=(bmr.rkey, bmr.buf + big))
            self.expect_wc(a.cq, 1, opcode=e.IBV_WC_RDMA_WRITE)
            self.assertEqual(bmr.read(big, big), data)
            self.post_send(a, 2, e.IBV_WR_RDMA_READ,
                           sges=[SGE(amr.buf + big, big, amr.lkey)],
                           remote=(bmr.rkey, bmr.buf + big))
            self.expect_wc(a.cq, 2, opcode=e.IBV_WC_RDMA_READ)
            self.assertEqual(amr.read(big, big), data)
        finally:
            amr.close()
            bmr.close()

    def test_many_outstanding(self):
        # a window of unsignaled writes ended by a signaled send: one
        # completion for all, the data of each in place
        a, b = self.pair()
        self.post_recv(b, 50)
        for i in range(DEPTH - 1):
            self.pattern(a, i, offset=i * 256, length=256)
            self.post_send(a, i, e.IBV_WR_RDMA_WRITE, length=256,
                           offset=i * 256, flags=0,
                           remote=(b.mr.rkey, b.mr.buf + i * 256))
        self.post_send(a, 99, e.IBV_WR_SEND, length=0)
        self.expect_wc(a.cq, 99, opcode=e.IBV_WC_SEND)
        self.assertEqual(poll(a.cq, limit=QUIET), [], 'unsignaled WRs complete silently')
        self.expect_wc(b.rcq, 50, opcode=e.IBV_WC_RECV)
        for i in range(DEPTH - 1):
            want = bytes((i + j * 7) & 0xff for j in range(256))
            self.assertEqual(b.mr.read(256, i * 256), want, 'write %d' % i)

    def test_wr_api(self):
        # the same operations through ibv_wr_* and an extended receive CQ
        a, b = self.pair(ex=True)
        qp = a.qp
        # SEND with immediate, two SGEs
        data = self.pattern(a, 5, length=2 * SIZE)
        self.post_recv(b, 10, length=2 * SIZE)
        qp.wr_start()
        qp.wr_id = 1
        qp.wr_flags = e.IBV_SEND_SIGNALED
        qp.wr_send_imm(0xa1b2c3d4)
        qp.wr_set_sge_list(2, [SGE(a.mr.buf, SIZE, a.mr.lkey),
                               SGE(a.mr.buf + SIZE, SIZE, a.mr.lkey)])
        qp.wr_complete()
        self.expect_wc(a.cq, 1, opcode=e.IBV_WC_SEND)
        wc = poll_ex(b.rcq)
        self.assertIsNotNone(wc, 'no receive completion')
        self.assertEqual((wc['wr_id'], wc['status'], wc['opcode']),
                         (10, e.IBV_WC_SUCCESS, e.IBV_WC_RECV))
        self.assertEqual(wc['byte_len'], 2 * SIZE)
        self.assertEqual(wc['imm'], 0xa1b2c3d4)
        self.assertEqual(wc['qp_num'], b.qp.qp_num)
        self.assertEqual(b.mr.read(2 * SIZE, 0), data)
        # WRITE (unsignaled) + WRITE with immediate + READ in one batch
        wdata = self.pattern(a, 6, offset=2 * SIZE, length=SIZE)
        rdata = self.pattern(b, 7, offset=3 * SIZE, length=SIZE)
        self.post_recv(b, 11, length=0)
        qp.wr_start()
        qp.wr_id = 2
        qp.wr_flags = 0
        qp.wr_rdma_write(b.mr.rkey, b.mr.buf + SIZE)
        qp.wr_set_sge(SGE(a.mr.buf + 2 * SIZE, SIZE, a.mr.lkey))
        qp.wr_id = 3
        qp.wr_flags = e.IBV_SEND_SIGNALED
        qp.wr_rdma_write_imm(b.mr.rkey, b.mr.buf + 2 * SIZE, 0x01020304)
        qp.wr_set_sge(SGE(a.mr.buf + 2 * SIZE, 100, a.mr.lkey))
        qp.wr_id = 4
        qp.wr_rdma_read(b.mr.rkey, b.mr.buf + 3 * SIZE)
        qp.wr_set_sge(SGE(a.mr.buf + 3 * SIZE, SIZE, a.mr.lkey))
        qp.wr_complete()
        wcs = poll(a.cq, 2)
        self.assertEqual([(w.wr_id, w.status, w.opcode) for w in wcs],
                         [(3, e.IBV_WC_SUCCESS, e.IBV_WC_RDMA_WRITE),
                          (4, e.IBV_WC_SUCCESS, e.IBV_WC_RDMA_READ)])
        wc = poll_ex(b.rcq)
        self.assertIsNotNone(wc, 'no write-with-immediate completion')
        self.assertEqual((wc['wr_id'], wc['opcode'], wc['byte_len'], wc['imm']),
                         (11, e.IBV_WC_RECV_RDMA_WITH_IMM, 100, 0x01020304))
        self.assertEqual(b.mr.read(SIZE, SIZE), wdata)
        self.assertEqual(b.mr.read(100, 2 * SIZE), wdata[:100])
        self.assertEqual(a.mr.read(SIZE, 3 * SIZE), rdata)
        # inline data through ibv_wr_set_inline_data
        idata = self.pattern(a, 8, length=INLINE)
        self.post_recv(b, 12)
        qp.wr_start()
        qp.wr_id = 5
        qp.wr_flags = e.IBV_SEND_SIGNALED
        qp.wr_send()
        qp.wr_set_inline_data(a.mr.buf, INLINE)
        qp.wr_complete()
        self.expect_wc(a.cq, 5, opcode=e.IBV_WC_SEND)
        wc = poll_ex(b.rcq)
        self.assertEqual((wc['wr_id'], wc['byte_len']), (12, INLINE))
        self.assertEqual(b.mr.read(INLINE, 0), idata)

    def test_wr_api_abort(self):
        # ibv_wr_abort: nothing of the batch reaches the wire
        a, b = self.pair(ex=True)
        self.post_recv(b, 1)
        a.qp.wr_start()
        a.qp.wr_id = 1
        a.qp.wr_flags = e.IBV_SEND_SIGNALED
        a.qp.wr_send()
        a.qp.wr_set_sge(SGE(a.mr.buf, SIZE, a.mr.lkey))
        a.qp.wr_abort()
        self.assertEqual(poll(a.cq, limit=QUIET), [])
        self.assertIsNone(poll_ex(b.rcq, limit=QUIET))
        # the queue is still usable
        self.post_send(a, 2, e.IBV_WR_SEND)
        self.expect_wc(a.cq, 2)
        self.assertEqual(poll_ex(b.rcq)['wr_id'], 1)

    def test_remote_access_read_permission(self):
        # b's QP allows remote writes only: a READ is refused, a write is not
        a, b = self.side(), self.side(access=e.IBV_ACCESS_LOCAL_WRITE |
                                      e.IBV_ACCESS_REMOTE_WRITE)
        self.connect(a, b)
        self.post_send(a, 1, e.IBV_WR_RDMA_WRITE, length=64,
                       remote=(b.mr.rkey, b.mr.buf))
        self.expect_wc(a.cq, 1)
        self.post_send(a, 2, e.IBV_WR_RDMA_READ, length=64,
                       remote=(b.mr.rkey, b.mr.buf))
        self.expect_wc(a.cq, 2, status=e.IBV_WC_REM_ACCESS_ERR)
        self.assertEqual(a.qp.query(e.IBV_QP_STATE)[0].qp_state, e.IBV_QPS_ERR)

    def test_remote_access_bounds(self):
        # one byte past the end of b's MR
        a, b = self.pair()
        self.post_send(a, 1, e.IBV_WR_RDMA_WRITE, length=SIZE,
                       remote=(b.mr.rkey, b.mr.buf + 3 * SIZE + 1))
        self.expect_wc(a.cq, 1, status=e.IBV_WC_REM_ACCESS_ERR)
        self.assertEqual(poll(b.rcq, limit=QUIET), [], 'no responder completion')

    def test_error_flushes_everything_once(self):
        # a bad rkey in the middle: what came before completes, the failing
        # WR reports the error, everything after it and every posted
        # receive of the failing side are flushed, each exactly once
        a, b = self.pair()
        for i in range(3):
            self.post_recv(a, 200 + i)
        self.post_send(a, 1, e.IBV_WR_RDMA_WRITE, length=64,
                       remote=(b.mr.rkey, b.mr.buf))
        self.post_send(a, 2, e.IBV_WR_RDMA_READ, length=64,
                       remote=(b.mr.rkey ^ 0x100, b.mr.buf))
        for i in range(3, 6):
            self.post_send(a, i, e.IBV_WR_SEND, length=8)
        wcs = poll(a.cq, 5)
        self.assertEqual([(w.wr_id, w.status) for w in wcs],
                         [(1, e.IBV_WC_SUCCESS), (2, e.IBV_WC_REM_ACCESS_ERR),
                          (3, e.IBV_WC_WR_FLUSH_ERR), (4, e.IBV_WC_WR_FLUSH_ERR),
                          (5, e.IBV_WC_WR_FLUSH_ERR)])
        wcs = poll(a.rcq, 3)
        self.assertEqual(sorted((w.wr_id, w.status) for w in wcs),
                         [(200 + i, e.IBV_WC_WR_FLUSH_ERR) for i in range(3)])
        self.assertEqual(poll(a.cq, limit=QUIET), [])
        self.assertEqual(poll(a.rcq, limit=QUIET), [])
        # posting on a QP in ERR completes at once with a flush error
        # (IBV_WC_WR_FLUSH_ERR) or is refused; either way exactly once
        try:
            self.post_send(a, 7, e.IBV_WR_SEND, length=8)
        except PyverbsRDMAError:
            pass
        else:
            self.expect_wc(a.cq, 7, status=e.IBV_WC_WR_FLUSH_ERR)
        self.assertEqual(poll(a.cq, limit=QUIET), [])

    def test_receive_too_small(self):
        # the responder's buffer is shorter than the message: local length
        # error there; the requester gets the invalid-request NAK, vendor
        # error RX_INVALID_REQ_NAK (0x161), which MANA reports as a remote
        # operation error (rdma-core v64's table), not IBV_WC_REM_INV_REQ_ERR
        a, b = self.pair()
        self.post_recv(b, 1, length=16)
        self.post_send(a, 2, e.IBV_WR_SEND, length=SIZE)
        self.expect_wc(b.rcq, 1, status=e.IBV_WC_LOC_LEN_ERR)
        wc = self.expect_wc(a.cq, 2, status=e.IBV_WC_REM_OP_ERR)
        self.assertEqual(wc.vendor_err, 0x161)
        self.assertEqual(b.qp.query(e.IBV_QP_STATE)[0].qp_state, e.IBV_QPS_ERR)
        self.assertEqual(a.qp.query(e.IBV_QP_STATE)[0].qp_state, e.IBV_QPS_ERR)

    def test_path_mtu_above_port(self):
        # the port's active MTU is 1024: neither the core nor mana_ib
        # compares, and the device takes any IB MTU; beyond 4096 it
        # refuses (EPROTO)
        a, b = self.side(), self.side()
        a.qp.modify(self.attr_init(a), INIT_MASK)
        attr = self.attr_rtr(b)
        attr.path_mtu = 6
        with self.assertRaises(PyverbsRDMAError) as ex:
            a.qp.modify(attr, RTR_MASK)
        self.assertEqual(ex.exception.error_code, errno.EPROTO)
        attr.path_mtu = e.IBV_MTU_4096
        a.qp.modify(attr, RTR_MASK)
        self.assertEqual(a.qp.query(e.IBV_QP_STATE)[0].qp_state, e.IBV_QPS_RTR)

    def test_bad_post_inputs(self):
        a, b = self.pair()
        # more SGEs than max_send_sge / max_recv_sge
        sges = [SGE(a.mr.buf, 8, a.mr.lkey)] * 5
        with self.assertRaises(PyverbsRDMAError) as ex:
            self.post_send(a, 1, e.IBV_WR_SEND, sges=sges)
        self.assertEqual(ex.exception.error_code, errno.EINVAL)
        with self.assertRaises(PyverbsRDMAError) as ex:
            a.qp.post_recv(RecvWR(wr_id=2, num_sge=5, sg=sges))
        self.assertEqual(ex.exception.error_code, errno.EINVAL)
        # a full send queue: ENOMEM, and the WRs before it still complete
        posted = 0
        with self.assertRaises(PyverbsRDMAError) as ex:
            for i in range(DEPTH + 1):
                self.post_send(a, 10 + i, e.IBV_WR_RDMA_WRITE, length=8,
                               remote=(b.mr.rkey, b.mr.buf))
                posted += 1
        self.assertEqual(ex.exception.error_code, errno.ENOMEM)
        self.assertGreaterEqual(posted, DEPTH)
        wcs = poll(a.cq, posted)
        self.assertEqual([w.wr_id for w in wcs], list(range(10, 10 + posted)))
        self.assertTrue(all(w.status == e.IBV_WC_SUCCESS for w in wcs))
        self.assertEqual(poll(a.cq, limit=QUIET), [])

    def test_rnr_then_receive(self):
        # rnr_retry 7 is infinite: the send waits (RNR NAKs, min_rnr_timer)
        # until the receive is posted, then completes with its data
        a, b = self.pair()
        data = self.pattern(a, 99)
        self.post_send(a, 1, e.IBV_WR_SEND)
        self.assertEqual(poll(a.cq, limit=QUIET), [], 'no completion without a receive')
        self.post_recv(b, 2)
        self.expect_wc(a.cq, 1, opcode=e.IBV_WC_SEND)
        wc = self.expect_wc(b.rcq, 2, opcode=e.IBV_WC_RECV)
        self.assertEqual(wc.byte_len, SIZE)
        self.assertEqual(b.mr.read(SIZE, 0), data)

    def test_completion_channel(self):
        # an armed receive CQ raises one event on its channel at the next
        # completion; ibv_get_cq_event blocks until then
        ch = CompChannel(self.ctx)
        rcq = CQ(self.ctx, 2 * DEPTH, None, ch, 0)
        cap = QPCap(max_send_wr=DEPTH, max_recv_wr=DEPTH)
        a = self.side()
        b = self.side()
        b.qp.close()
        b.rcq.close()
        b.rcq = rcq
        b.qp = QP(self.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=b.cq,
                                      rcq=rcq, cap=cap, sq_sig_all=0))
        self.connect(a, b)
        try:
            for i in range(3):
                rcq.req_notify()
                self.post_recv(b, 10 + i)
                self.post_send(a, i, e.IBV_WR_SEND_WITH_IMM, imm=i, length=64)
                ch.get_cq_event(rcq)
                rcq.ack_events(1)
                wc = self.expect_wc(rcq, 10 + i, opcode=e.IBV_WC_RECV)
                self.assertEqual(wc.imm_data, i)
                self.expect_wc(a.cq, i)
        finally:
            b.qp.close()
            rcq.close()
            ch.close()
            self.sides.remove(b)
            b.mr.close()
            b.cq.close()


if __name__ == '__main__':
    unittest.main()
