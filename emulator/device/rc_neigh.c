// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Neighbour resolution for RC QPs at RTR, and the answers the emulated
 * port gives: ARP (RFC 826) for IPv4 GIDs, neighbour solicitation and
 * advertisement (RFC 4861) for IPv6 ones.  The port answers for the
 * addresses of its GID table (core/gid.h); a link-local GID made from a
 * MAC (EUI-64) and the port's own GIDs need no question on the wire.
 */
#include "rc_int.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "emulator/core/emu.h"
#include "emulator/core/gid.h"
#include "rc_dev.h"

#define NEIGH_MAX	32
#define ETH_P_ARP	0x0806
#define ETH_P_IPV6	0x86dd
#define ARP_LEN		28
#define ICMP6_NS	135
#define ICMP6_NA	136
#define NS_LEN		32	/* type..target + one link-layer option */
#define RESOLVE_TRIES	40	/* every 100 ms: 4 s (a loaded host is slow) */

static struct {
	struct {
		uint8_t gid[16];
		uint8_t mac[6];
		unsigned int port;
	} e[NEIGH_MAX];
	unsigned int n, next;
	pthread_cond_t cond;
} neigh = { .cond = PTHREAD_COND_INITIALIZER };

static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void gid_from_v4(uint8_t gid[16], const uint8_t *ip)
{
	memset(gid, 0, 10);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, ip, 4);
}

static bool cache_find(unsigned int port, const uint8_t gid[16],
		       uint8_t mac[6])
{
	unsigned int i;

	for (i = 0; i < neigh.n; i++)
		if (neigh.e[i].port == port && !memcmp(neigh.e[i].gid, gid, 16)) {
			memcpy(mac, neigh.e[i].mac, 6);
			return true;
		}
	return false;
}

static void cache_add(unsigned int port, const uint8_t gid[16],
		      const uint8_t mac[6])
{
	unsigned int i;

	for (i = 0; i < neigh.n; i++)
		if (neigh.e[i].port == port && !memcmp(neigh.e[i].gid, gid, 16))
			break;
	if (i == neigh.n) {
		if (neigh.n < NEIGH_MAX)
			neigh.n++;
		else
			i = neigh.next++ % NEIGH_MAX;
	}
	memcpy(neigh.e[i].gid, gid, 16);
	memcpy(neigh.e[i].mac, mac, 6);
	neigh.e[i].port = port;
	pthread_cond_broadcast(&neigh.cond);
}

/* ---- ARP ------------------------------------------------------------------------ */

static void arp_send(unsigned int port, uint16_t op, const uint8_t *dmac,
		     const uint8_t *sip, const uint8_t *tmac, const uint8_t *tip)
{
	uint8_t f[60] = { 0 };	/* padded to the Ethernet minimum */
	uint8_t *a = f + 14;

	memcpy(f, dmac, 6);
	emu_dev_port_mac(port, f + 6);
	put16(f + 12, ETH_P_ARP);
	put16(a, 1);		/* Ethernet */
	put16(a + 2, 0x0800);
	a[4] = 6;
	a[5] = 4;
	put16(a + 6, op);
	memcpy(a + 8, f + 6, 6);
	memcpy(a + 14, sip, 4);
	memcpy(a + 18, tmac, 6);
	memcpy(a + 24, tip, 4);
	emu_dev_xmit(port, f, sizeof(f));
}

static void arp_rx(unsigned int port, const uint8_t *a)
{
	uint8_t gid[16];
	uint16_t op = get16(a + 6);

	if (get16(a) != 1 || get16(a + 2) != 0x0800 || a[4] != 6 || a[5] != 4)
		return;
	gid_from_v4(gid, a + 14);	/* the sender's address */
	if (op == 2) {
		cache_add(port, gid, a + 8);
		return;
	}
	if (op != 1)
		return;
	gid_from_v4(gid, a + 24);
	if (emu_gid_port_owns(&emu.opts, port, gid))
		arp_send(port, 2, a + 8, a + 24, a + 8, a + 14);
}

/* ---- neighbour discovery ----------------------------------------------------------- */

static uint16_t icmp6_csum(const uint8_t *src, const uint8_t *dst,
			   const uint8_t *m, uint32_t len)
{
	uint32_t sum = 0, i;

	for (i = 0; i < 16; i += 2)
		sum += get16(src + i) + get16(dst + i);
	sum += len + 58;
	for (i = 0; i + 1 < len; i += 2)
		sum += get16(m + i);
	if (len & 1)
		sum += (uint32_t)m[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* NS (@type 135) for @target, or NA (136) answering @dst/@dmac. */
static void nd_send(unsigned int port, uint8_t type, const uint8_t *src,
		    const uint8_t *dst, const uint8_t *dmac,
		    const uint8_t *target)
{
	uint8_t f[14 + 40 + NS_LEN] = { 0 };
	uint8_t *ip = f + 14, *m = ip + 40;

	memcpy(f, dmac, 6);
	emu_dev_port_mac(port, f + 6);
	put16(f + 12, ETH_P_IPV6);
	ip[0] = 0x60;
	put16(ip + 4, NS_LEN);
	ip[6] = 58;
	ip[7] = 255;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
	m[0] = type;
	if (type == ICMP6_NA)
		m[4] = 0x60;		/* solicited, override */
	memcpy(m + 8, target, 16);
	m[24] = type == ICMP6_NS ? 1 : 2;	/* source / target LL addr */
	m[25] = 1;
	memcpy(m + 26, f + 6, 6);
	put16(m + 2, icmp6_csum(src, dst, m, NS_LEN));
	emu_dev_xmit(port, f, sizeof(f));
}

static void nd_rx(unsigned int port, const uint8_t *f, size_t len)
{
	const uint8_t *ip = f + 14, *m = ip + 40;
	uint32_t mlen;

	if (len < 14 + 40 + 24 || ip[6] != 58 || ip[7] != 255)
		return;
	mlen = get16(ip + 4);
	if (mlen < 24 || 54 + (size_t)mlen > len ||
	    icmp6_csum(ip + 8, ip + 24, m, mlen) != 0 || m[1] != 0)
		return;
	if (m[0] == ICMP6_NA && mlen >= 32 && m[24] == 2 && m[25] == 1) {
		cache_add(port, m + 8, m + 26);
		return;
	}
	if (m[0] == ICMP6_NS && emu_gid_port_owns(&emu.opts, port, m + 8))
		nd_send(port, ICMP6_NA, m + 8, ip + 8, f + 6, m + 8);
}

bool rc_neigh_rx(unsigned int port, const uint8_t *f, size_t len)
{
	if (len >= 14 + ARP_LEN && get16(f + 12) == ETH_P_ARP)
		arp_rx(port, f + 14);
	else if (len >= 14 + 40 && get16(f + 12) == ETH_P_IPV6)
		nd_rx(port, f, len);
	/* the VF's netdev sees them too: the raw path may still take them */
	return false;
}

/* ---- resolution ------------------------------------------------------------------------ */

static bool eui64_mac(const uint8_t g[16], uint8_t mac[6])
{
	if (g[0] != 0xfe || (g[1] & 0xc0) != 0x80 || g[11] != 0xff ||
	    g[12] != 0xfe)
		return false;
	mac[0] = g[8] ^ 0x02;
	mac[1] = g[9];
	mac[2] = g[10];
	mac[3] = g[13];
	mac[4] = g[14];
	mac[5] = g[15];
	return true;
}

static void ask(unsigned int port, const uint8_t sgid[16],
		const uint8_t dgid[16])
{
	static const uint8_t zero[6];
	uint8_t mcast[16] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff };
	uint8_t dmac[6] = { 0x33, 0x33, 0xff };

	if (emu_gid_is_v4(dgid)) {
		arp_send(port, 1, bcast, sgid + 12, zero, dgid + 12);
		return;
	}
	memcpy(mcast + 13, dgid + 13, 3);
	memcpy(dmac + 3, dgid + 13, 3);
	nd_send(port, ICMP6_NS, sgid, mcast, dmac, dgid);
}

bool rc_neigh_lookup(unsigned int port, const uint8_t dgid[16],
		     uint8_t mac[6])
{
	if (emu_gid_port_owns(&emu.opts, port, dgid)) {
		emu_dev_port_mac(port, mac);
		return true;
	}
	return eui64_mac(dgid, mac) || cache_find(port, dgid, mac);
}

void rc_neigh_ask(unsigned int port, const uint8_t sgid[16],
		  const uint8_t dgid[16])
{
	ask(port, sgid, dgid);
}

int rc_neigh_resolve(unsigned int port, const uint8_t sgid[16],
		     const uint8_t dgid[16], uint8_t mac[6])
{
	struct timespec ts;
	unsigned int i;

	if (emu_gid_port_owns(&emu.opts, port, dgid)) {
		emu_dev_port_mac(port, mac);
		return 0;
	}
	if (eui64_mac(dgid, mac) || cache_find(port, dgid, mac))
		return 0;
	for (i = 0; i < RESOLVE_TRIES; i++) {
		ask(port, sgid, dgid);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		/* emu.lock is released while we wait: the reply needs it */
		while (!cache_find(port, dgid, mac) &&
		       !pthread_cond_timedwait(&neigh.cond, &emu.lock, &ts))
			;
		if (cache_find(port, dgid, mac))
			return 0;
	}
	if (emu_verbose())
		emu_log("rc: no neighbour answered for the destination GID");
	return -EHOSTUNREACH;
}
