// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * QP1 of the RNIC port (gsi.h): the kernel CM's MADs to and from the wire.
 * The packets are what a RoCE RNIC's GSI QP sends: BTH UD SEND_ONLY to
 * QP1 with P_Key 0xffff, DETH with the GSI Q_Key and source QP 1, the MAD,
 * ICRC; IPv4 or IPv6 as the GIDs are.
 */
#include "gsi.h"

#include <errno.h>
#include <string.h>

#include "emulator/core/emu.h"
#include "emulator/core/gid.h"
#include "emulator/wire/ib_cm.h"
#include "emulator/wire/roce.h"
#include "device_int.h"
#include "rc_dev.h"
#include "rc_int.h"

bool emu_gsi_active;
bool emu_ip_neigh_active;

static struct {
	const struct emu_gsi_ops *ops;
	uint32_t psn;
	uint64_t sent, received, dropped;
} gsi;

int emu_gsi_register(unsigned int port, const struct emu_gsi_ops *ops)
{
	int ret;

	if (!ops) {
		gsi.ops = NULL;
		emu_gsi_active = false;
		return 0;
	}
	ret = dev_gsi_start(port);
	if (ret)
		return ret;
	gsi.ops = ops;
	emu_gsi_active = true;
	return 0;
}

int emu_gsi_send(const struct emu_gsi_path *path, const uint8_t *mad,
		 size_t len)
{
	static uint8_t f[ROCE_MAX_FRAME];
	struct roce_pkt p = {
		.opcode = ROCE_UD_SEND_ONLY,
		.pkey = ROCE_PKEY_DEFAULT,
		.dqpn = ROCE_GSI_QPN,
		.qkey = ROCE_GSI_QKEY,
		.src_qpn = ROCE_GSI_QPN,
		.payload = mad,
		.payload_len = (uint32_t)len,
		.traffic_class = path->traffic_class,
		.hop_limit = path->hop_limit ? path->hop_limit : 64,
		.flow_label = path->flow_label & 0xfffff,
	};
	size_t flen;

	if (len != IB_MAD_LEN)
		return -EINVAL;
	memcpy(p.dmac, path->dmac, 6);
	emu_dev_port_mac(path->port, p.smac);
	memcpy(p.sgid, path->sgid, 16);
	memcpy(p.dgid, path->dgid, 16);
	if (emu_gid_is_v4(p.dgid)) {
		p.traffic_class &= (uint8_t)~3u;
		p.flow_label = 0;
	}
	p.psn = gsi.psn;
	gsi.psn = roce_psn_add(gsi.psn, 1);
	/* GSI QP1 flows: the source port from a hash of the QP numbers */
	p.udp_sport = roce_udp_sport(p.flow_label, ROCE_GSI_QPN, ROCE_GSI_QPN);
	if (roce_encode(&p, f, sizeof(f), &flen))
		return -EINVAL;
	gsi.sent++;
	emu_dev_xmit(path->port, f, flen);
	return 0;
}

bool gsi_rx(unsigned int port, const struct roce_pkt *p)
{
	if (p->dqpn != ROCE_GSI_QPN)
		return false;
	/* QP1 takes only the GSI Q_Key (IBA 13.5.3.3): others are dropped */
	if (!gsi.ops || p->qkey != ROCE_GSI_QKEY ||
	    !emu_gid_roce_port(&emu.opts, port)) {
		gsi.dropped++;
		return true;
	}
	gsi.received++;
	gsi.ops->rx(port, p);
	return true;
}

int gsi_work(int max_ms)
{
	int ms;

	if (!gsi.ops || !gsi.ops->work)
		return max_ms;
	ms = gsi.ops->work();
	return ms >= 0 && ms < max_ms ? ms : max_ms;
}

bool emu_gsi_neigh_lookup(unsigned int port, const uint8_t dgid[16],
			  uint8_t mac[6])
{
	return rc_neigh_lookup(port, dgid, mac);
}

void emu_gsi_neigh_ask(unsigned int port, const uint8_t sgid[16],
		       const uint8_t dgid[16])
{
	rc_neigh_ask(port, sgid, dgid);
}

int emu_dev_neigh_resolve(unsigned int port, const uint8_t sgid[16],
			  const uint8_t dgid[16])
{
	uint8_t mac[6];
	int ret = dev_gsi_start(port);

	if (ret)
		return ret;
	/* from now on the port takes ARP/ND answers with no RC QP or QP1 */
	emu_ip_neigh_active = true;
	return rc_neigh_resolve(port, sgid, dgid, mac);
}

void emu_gsi_kick(void)
{
	emu_dev_kick();
}
