# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Foundation verbs through Debian's python3-pyverbs, run under mana-emu.

Run: mana-emu [--provider=system] --netdev-up -- /usr/bin/python3 -m pytest test_pyverbs_basic.py
(with the netdev up the port is ACTIVE, as mana_ib reports it)
"""
import errno
import os
import re
import unittest

import pyverbs.device as d
import pyverbs.enums as e
from pyverbs.mr import MR
from pyverbs.pd import PD, ParentDomain, ParentDomainInitAttr
from pyverbs.pyverbs_error import PyverbsRDMAError


def mana_name():
    for dev in d.get_device_list():
        name = dev.name.decode()
        if name.startswith('mana'):
            return name
    raise unittest.SkipTest('no MANA device: run under mana-emu')


class FoundationTest(unittest.TestCase):
    def setUp(self):
        self.ctx = d.Context(name=mana_name())

    def tearDown(self):
        self.ctx.close()

    def test_query_device(self):
        attr = self.ctx.query_device()
        # vendor ids and raw_packet_caps came with the ETH/RNIC split
        # (6.16); mana_ib reported 0 before (the default kernel is 6.14)
        m = re.search(r'--kernel=(\d+)\.(\d+)',
                      os.environ.get('MANA_EMU_OPTIONS', ''))
        ids = (int(m.group(1)), int(m.group(2))) >= (6, 16) if m else False
        self.assertEqual(attr.vendor_id, 0x1414 if ids else 0)
        self.assertEqual(attr.vendor_part_id != 0, ids)
        self.assertGreaterEqual(attr.phys_port_cnt, 1)
        ex = self.ctx.query_device_ex()
        self.assertEqual(bool(ex.raw_packet_caps &
                              e.IBV_RAW_PACKET_CAP_IP_CSUM), ids)

    def test_query_port(self):
        port = self.ctx.query_port(1)
        self.assertEqual(port.link_layer, e.IBV_LINK_LAYER_ETHERNET)
        self.assertEqual(port.state, e.IBV_PORT_ACTIVE)
        with self.assertRaises(PyverbsRDMAError) as cm:
            self.ctx.query_port(9)
        self.assertEqual(cm.exception.error_code, errno.EINVAL)

    def test_pd_and_mr(self):
        with PD(self.ctx) as pd:
            mr = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
            self.assertEqual(mr.length, 4096)
            mr.write(b'mana', 4)
            self.assertEqual(mr.read(4, 0), b'mana')
            mr.close()
            with self.assertRaises(PyverbsRDMAError) as cm:
                MR(pd, 4096, e.IBV_ACCESS_REMOTE_WRITE)
            self.assertEqual(cm.exception.error_code, errno.EINVAL)

    def test_parent_domain(self):
        with PD(self.ctx) as pd:
            parent = ParentDomain(self.ctx, attr=ParentDomainInitAttr(pd=pd))
            mr = MR(parent, 8192, e.IBV_ACCESS_LOCAL_WRITE)
            mr.close()
            parent.close()


if __name__ == '__main__':
    unittest.main()
