# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The DPDK-shaped raw-packet graph built with Debian's python3-pyverbs.

Send QPs with their CQs, receive WQs, an indirection table and the RSS QP
created through ibv_create_qp_ex (QPEx), under mana-emu with our provider.
"""
import errno
import unittest

import pyverbs.device as d
import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.pd import PD, ParentDomain, ParentDomainInitAttr
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPEx, QPInitAttr, QPInitAttrEx
from pyverbs.wq import WQ, RwqIndTable, RwqIndTableInitAttr, RxHashConf, WQInitAttr

QUEUES = 4
DEPTH = 1024  # deeper than rdma-core v44 allows
KEY = bytes(range(40))


def mana_name():
    for dev in d.get_device_list():
        if dev.name.decode().startswith('mana'):
            return dev.name.decode()
    raise unittest.SkipTest('no MANA device: run under mana-emu')


class GraphTest(unittest.TestCase):
    def setUp(self):
        self.ctx = d.Context(name=mana_name())
        self.pd = PD(self.ctx)
        self.parent = ParentDomain(self.ctx, attr=ParentDomainInitAttr(pd=self.pd))

    def tearDown(self):
        self.parent.close()
        self.pd.close()
        self.ctx.close()

    def _send_qp(self):
        cq = CQ(self.ctx, DEPTH)
        cap = QPCap(max_send_wr=DEPTH, max_send_sge=1, max_recv_wr=0, max_recv_sge=0)
        qp = QP(self.parent, QPInitAttr(qp_type=e.IBV_QPT_RAW_PACKET, scq=cq, rcq=cq,
                                        cap=cap), QPAttr())
        return cq, qp

    def _receive_side(self):
        cqs, wqs = [], []
        for _ in range(QUEUES):
            cq = CQ(self.ctx, DEPTH)
            wq = WQ(self.ctx, WQInitAttr(wq_pd=self.parent, wq_cq=cq,
                                         wq_type=e.IBV_WQT_RQ, max_wr=DEPTH, max_sge=1))
            cqs.append(cq)
            wqs.append(wq)
        table = RwqIndTable(self.ctx, RwqIndTableInitAttr(log_ind_tbl_size=2,
                                                          wqs_list=wqs))
        return cqs, wqs, table

    def _rss_attr(self, table, key=KEY, func=e.IBV_RX_HASH_FUNC_TOEPLITZ):
        # pyverbs' QPInitAttrEx keeps a pointer into the RxHashConf, not a
        # reference to it: keep it alive until the QP exists
        self.key = key
        self.conf = conf = RxHashConf(rx_hash_function=func, rx_hash_key_len=len(key),
                          rx_hash_key=key,
                          rx_hash_fields_mask=e.IBV_RX_HASH_SRC_IPV4 |
                          e.IBV_RX_HASH_DST_IPV4 | e.IBV_RX_HASH_SRC_PORT_TCP |
                          e.IBV_RX_HASH_DST_PORT_TCP)
        return QPInitAttrEx(qp_type=e.IBV_QPT_RAW_PACKET, pd=self.parent,
                            comp_mask=e.IBV_QP_INIT_ATTR_PD | e.IBV_QP_INIT_ATTR_RX_HASH |
                            e.IBV_QP_INIT_ATTR_IND_TABLE,
                            hash_conf=conf, ind_table=table)

    def test_graph(self):
        sends = [self._send_qp() for _ in range(QUEUES)]
        for _, qp in sends:
            self.assertEqual(qp.qp_state, e.IBV_QPS_RTS)
        cqs, wqs, table = self._receive_side()
        rss = QPEx(self.ctx, self._rss_attr(table))
        mr = MR(self.pd, 1 << 16, e.IBV_ACCESS_LOCAL_WRITE)
        # teardown in DPDK's order
        mr.close()
        for cq, qp in sends:
            qp.close()
            cq.close()
        rss.close()
        table.close()
        for wq, cq in zip(wqs, cqs):
            wq.close()
            cq.close()

    def test_rss_rejections(self):
        cqs, wqs, table = self._receive_side()
        for key, func in ((KEY[:32], e.IBV_RX_HASH_FUNC_TOEPLITZ), (KEY, 2)):
            with self.assertRaises(PyverbsRDMAError) as cm:
                QPEx(self.ctx, self._rss_attr(table, key, func))
            self.assertEqual(cm.exception.error_code, errno.EINVAL)
        table.close()
        for wq, cq in zip(wqs, cqs):
            wq.close()
            cq.close()


if __name__ == '__main__':
    unittest.main()
