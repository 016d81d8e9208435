# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Raw Ethernet traffic with plain pyverbs, in the style of rdma-core's tests.

Nothing here is MANA specific: RAW_PACKET send QPs, receive WQs behind an
RSS QP (pyverbs wants at least two table entries; the C tests cover a
single-WQ table), classic and extended CQs
and QPs, inline and multi-SGE sends, unsignaled sends, checksum offload
flags and completion channels.  Run under mana-emu (loopback backend).
"""
import struct
import threading
import time
import unittest

import pyverbs.device as d
import pyverbs.enums as e
from pyverbs.cq import CQ, CQEX, CompChannel, CqInitAttrEx, PollCqAttr
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPEx, QPInitAttr, QPInitAttrEx
from pyverbs.wq import WQ, RwqIndTable, RwqIndTableInitAttr, RxHashConf, WQInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

KEY = bytes.fromhex('6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c'
                    '6a42b73bbeac01fa')
DEPTH = 64
BUF = 2048


def idle_wait():
    """Nothing polled: let the emulated device's thread run (no time is asserted)."""
    time.sleep(0.0001)


def mana_name():
    for dev in d.get_device_list():
        if dev.name.decode().startswith('mana'):
            return dev.name.decode()
    raise unittest.SkipTest('no MANA device: run under mana-emu')


def csum(data):
    if len(data) % 2:
        data += b'\0'
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def udp_frame(size, sport, seq, good_csum=True):
    payload = struct.pack('<IQ', 0x4d414e41, seq)
    payload += bytes((seq + i) & 0xff for i in range(size - 42 - len(payload)))
    ip = bytearray(struct.pack('!BBHHHBBH4s4s', 0x45, 0, size - 14, 0, 0, 64, 17, 0,
                               bytes([10, 0, 0, 1]), bytes([10, 0, 1, 1])))
    udp = bytearray(struct.pack('!HHHH', sport, 4791, 8 + len(payload), 0)) + payload
    pseudo = ip[12:20] + struct.pack('!BBH', 0, 17, len(udp))
    struct.pack_into('!H', udp, 6, csum(bytes(pseudo + udp)) or 0xffff)
    struct.pack_into('!H', ip, 10, csum(bytes(ip)) if good_csum else 0x1234)
    eth = bytes.fromhex('000d3a000001' '020000000002' '0800')
    return eth + bytes(ip) + bytes(udp)


class RawTraffic(unittest.TestCase):
    """A port: send QP(s) with their CQs, WQs + RSS QP, one MR for buffers."""

    def setUp(self):
        self.ctx = d.Context(name=mana_name())
        self.pd = PD(self.ctx)
        self.mr = MR(self.pd, 2 * DEPTH * BUF * 4, e.IBV_ACCESS_LOCAL_WRITE)

    def tearDown(self):
        for name in ('sq', 'rss', 'table'):
            obj = getattr(self, name, None)
            if obj is not None:
                obj.close()
        for wq in getattr(self, 'wqs', []):
            wq.close()
        for cq in getattr(self, 'cqs', []):
            cq.close()
        if getattr(self, 'channel', None) is not None:
            self.channel.close()
        self.mr.close()
        self.pd.close()
        self.ctx.close()

    # ---- building blocks
    def make_cq(self, ex=False, channel=None):
        if ex:
            attr = CqInitAttrEx(cqe=DEPTH, channel=channel,
                                wc_flags=e.IBV_WC_EX_WITH_BYTE_LEN | e.IBV_WC_EX_WITH_QP_NUM)
            cq = CQEX(self.ctx, attr)
        else:
            cq = CQ(self.ctx, DEPTH, None, channel, 0)
        self.cqs = getattr(self, 'cqs', []) + [cq]
        return cq

    def build(self, queues=2, ex_cq=False, ex_qp=False, inline=0, sig_all=False,
              channel=None):
        self.tx_cq = self.make_cq(ex_cq)
        cap = QPCap(max_send_wr=DEPTH, max_send_sge=4, max_recv_wr=0, max_recv_sge=0,
                    max_inline_data=inline)
        if ex_qp:
            attr = QPInitAttrEx(qp_type=e.IBV_QPT_RAW_PACKET, scq=self.tx_cq,
                                rcq=self.tx_cq, cap=cap, pd=self.pd, sq_sig_all=sig_all,
                                comp_mask=e.IBV_QP_INIT_ATTR_PD |
                                e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
                                send_ops_flags=e.IBV_QP_EX_WITH_SEND)
            self.sq = QPEx(self.ctx, attr)
        else:
            attr = QPInitAttr(qp_type=e.IBV_QPT_RAW_PACKET, scq=self.tx_cq,
                              rcq=self.tx_cq, cap=cap, sq_sig_all=sig_all)
            self.sq = QP(self.pd, attr, QPAttr())
        self.rx_cqs, self.wqs = [], []
        for _ in range(queues):
            # pyverbs' WQInitAttr takes only classic CQs; the TX CQ is extended
            cq = self.make_cq(False, channel)
            self.rx_cqs.append(cq)
            self.wqs.append(WQ(self.ctx, WQInitAttr(wq_pd=self.pd, wq_cq=cq,
                                                    wq_type=e.IBV_WQT_RQ,
                                                    max_wr=DEPTH, max_sge=2)))
        log = (queues - 1).bit_length()
        self.table = RwqIndTable(self.ctx, RwqIndTableInitAttr(log_ind_tbl_size=log,
                                                               wqs_list=self.wqs))
        conf = RxHashConf(rx_hash_function=e.IBV_RX_HASH_FUNC_TOEPLITZ,
                          rx_hash_key_len=len(KEY), rx_hash_key=KEY,
                          rx_hash_fields_mask=e.IBV_RX_HASH_SRC_IPV4 |
                          e.IBV_RX_HASH_DST_IPV4 | e.IBV_RX_HASH_SRC_PORT_UDP |
                          e.IBV_RX_HASH_DST_PORT_UDP)
        self.rss = QP(self.ctx, QPInitAttrEx(qp_type=e.IBV_QPT_RAW_PACKET, pd=self.pd,
                                             comp_mask=e.IBV_QP_INIT_ATTR_PD |
                                             e.IBV_QP_INIT_ATTR_RX_HASH |
                                             e.IBV_QP_INIT_ATTR_IND_TABLE,
                                             hash_conf=conf, ind_table=self.table))
        self.posted = [0] * queues
        for q in range(queues):
            self.post_recv(q, DEPTH)

    def rx_addr(self, q, slot):
        return self.mr.buf + (DEPTH * (1 + 2 * q) + slot % DEPTH) * BUF

    def post_recv(self, q, n):
        for _ in range(n):
            slot = self.posted[q]
            self.wqs[q].post_recv(RecvWR(wr_id=slot, num_sge=1,
                                         sg=[SGE(self.rx_addr(q, slot), BUF, self.mr.lkey)]))
            self.posted[q] += 1

    def tx_sge(self, slot, data):
        off = (slot % DEPTH) * BUF
        self.mr.write(data, len(data), off)
        return SGE(self.mr.buf + off, len(data), self.mr.lkey)

    def send(self, wr_id, frame, flags=e.IBV_SEND_SIGNALED, sges=None):
        sges = sges or [self.tx_sge(wr_id, frame)]
        self.sq.post_send(SendWR(wr_id=wr_id, opcode=e.IBV_WR_SEND, num_sge=len(sges),
                                 sg=sges, send_flags=flags))

    def poll(self, cq, n=1, timeout=5.0):
        """Completions as (wr_id, status, opcode, byte_len, wc_flags)."""
        got, end = [], time.time() + timeout
        while len(got) < n:
            before = len(got)
            if isinstance(cq, CQEX):
                if cq.start_poll(PollCqAttr()) == 0:
                    while True:
                        got.append((cq.wr_id, cq.status, cq.read_opcode(),
                                    cq.read_byte_len(), cq.read_wc_flags()))
                        if len(got) >= n or cq.poll_next() != 0:
                            break
                    cq.end_poll()
            else:
                _, wcs = cq.poll(n - len(got))
                got += [(w.wr_id, w.status, w.opcode, w.byte_len, w.wc_flags) for w in wcs]
            if time.time() >= end:
                break
            if len(got) == before:
                idle_wait()
        return got

    def poll_rx(self, n=1, timeout=5.0):
        """Receive completions from any RX queue: (queue, wr_id, status, length, flags)."""
        got, end = [], time.time() + timeout
        while len(got) < n and time.time() < end:
            before = len(got)
            for q, cq in enumerate(self.rx_cqs):
                for wr_id, status, _, length, flags in self.poll(cq, n - len(got), 0):
                    got.append((q, wr_id, status, length, flags))
            if len(got) == before:
                idle_wait()
        return got

    def received(self, q, wr_id, length):
        return self.mr.read(length, self.rx_addr(q, wr_id) - self.mr.buf)

    # ---- tests
    def loop(self, ex_cq, ex_qp, count=32):
        self.build(ex_cq=ex_cq, ex_qp=ex_qp)
        for i in range(count):
            frame = udp_frame(64 + i * 40, 2000 + i, i)
            if ex_qp:
                self.sq.wr_start()
                self.sq.wr_id = i
                self.sq.wr_flags = e.IBV_SEND_SIGNALED
                self.sq.wr_send()
                sge = self.tx_sge(i, frame)
                self.sq.wr_set_sge(sge)
                self.sq.wr_complete()
            else:
                self.send(i, frame)
            tx = self.poll(self.tx_cq)
            self.assertEqual(tx, [(i, e.IBV_WC_SUCCESS, e.IBV_WC_SEND, tx[0][3], 0)])
            rx = self.poll_rx()
            self.assertEqual(len(rx), 1)
            q, wr_id, status, length, flags = rx[0]
            self.assertEqual((status, length), (e.IBV_WC_SUCCESS, len(frame)))
            self.assertTrue(flags & e.IBV_WC_IP_CSUM_OK)
            self.assertEqual(self.received(q, wr_id, length), frame)
            self.post_recv(q, 1)

    def test_classic(self):
        self.loop(ex_cq=False, ex_qp=False)

    def test_extended(self):
        self.loop(ex_cq=True, ex_qp=True)

    def test_rss_spreads_flows(self):
        self.build(queues=4)
        per_queue = [0] * 4
        for i in range(64):
            self.send(i, udp_frame(128, 3000 + i, i), flags=e.IBV_SEND_SIGNALED)
            self.poll(self.tx_cq)
        deadline = time.time() + 5
        while sum(per_queue) < 64 and time.time() < deadline:
            for q in range(4):
                for wr_id, status, _, length, _ in self.poll(self.rx_cqs[q], 64, 0.01):
                    self.assertEqual((status, length), (e.IBV_WC_SUCCESS, 128))
                    per_queue[q] += 1
        self.assertEqual(sum(per_queue), 64)
        self.assertGreater(min(per_queue), 0, per_queue)

    def test_inline_and_sges(self):
        self.build(inline=256)
        frame = udp_frame(200, 4000, 7)
        self.send(1, frame, e.IBV_SEND_SIGNALED | e.IBV_SEND_INLINE,
                  [self.tx_sge(1, frame)])
        self.mr.write(b'\xee' * 200, 200, BUF)      # inline: the copy was taken
        self.assertEqual(self.poll(self.tx_cq)[0][:2], (1, e.IBV_WC_SUCCESS))
        q, wr_id, _, length, _ = self.poll_rx()[0]
        self.assertEqual(self.received(q, wr_id, length), frame)
        frame = udp_frame(300, 4001, 8)
        parts = [self.tx_sge(2, frame[:42]), self.tx_sge(3, frame[42:100]),
                 self.tx_sge(4, frame[100:])]
        self.send(5, frame, e.IBV_SEND_SIGNALED, parts)
        self.assertEqual(self.poll(self.tx_cq)[0][:2], (5, e.IBV_WC_SUCCESS))
        q, wr_id, _, length, _ = self.poll_rx()[0]
        self.assertEqual(self.received(q, wr_id, length), frame)

    def test_unsignaled(self):
        self.build()
        for i in range(5):
            self.send(i, udp_frame(64, 5000, i), e.IBV_SEND_SIGNALED if i == 4 else 0)
        tx = self.poll(self.tx_cq, 5, 1.0)
        self.assertEqual([t[0] for t in tx], [4])
        self.assertEqual(len(self.poll_rx(5)), 5)

    def test_checksum_offload(self):
        self.build()
        frame = udp_frame(128, 6000, 1, good_csum=False)
        self.send(1, frame, e.IBV_SEND_SIGNALED | e.IBV_SEND_IP_CSUM)
        self.assertEqual(self.poll(self.tx_cq)[0][:2], (1, e.IBV_WC_SUCCESS))
        q, wr_id, status, length, flags = self.poll_rx()[0]
        self.assertTrue(flags & e.IBV_WC_IP_CSUM_OK)
        self.assertEqual(csum(self.received(q, wr_id, length)[14:34]), 0)
        # without offload a bad checksum arrives as sent, flagged not OK
        self.send(2, udp_frame(128, 6000, 2, good_csum=False))
        self.poll(self.tx_cq)
        self.assertFalse(self.poll_rx()[0][4] & e.IBV_WC_IP_CSUM_OK)

    def test_completion_channel(self):
        self.channel = CompChannel(self.ctx)
        self.build(channel=self.channel)
        for i in range(3):
            frame = udp_frame(64, 7000, i)
            for cq in self.rx_cqs:
                cq.req_notify()
            self.send(i, frame)
            self.poll(self.tx_cq)
            # the frame lands on one queue: that CQ's event must come
            q, wr_id, _, length, _ = self.poll_rx()[0]
            cq = self.rx_cqs[q]
            # get_cq_event blocks: a missing event must fail, not hang
            waiter = threading.Thread(target=self.channel.get_cq_event, args=(cq,),
                                      daemon=True)
            waiter.start()
            waiter.join(5)
            self.assertFalse(waiter.is_alive(), 'no completion event')
            cq.ack_events(1)
            self.assertEqual(self.received(q, wr_id, length), frame)
            self.post_recv(q, 1)

    def test_post_recv_on_send_qp(self):
        self.build()
        with self.assertRaises(PyverbsRDMAError):
            self.sq.post_recv(RecvWR(wr_id=1, num_sge=1,
                                     sg=[SGE(self.mr.buf, 64, self.mr.lkey)]))


if __name__ == '__main__':
    unittest.main()
