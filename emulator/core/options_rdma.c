// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --ip=[PORT:]ADDR/LEN and --mtu=N: the VM's addresses and MTU on its VF
 * interfaces.  They feed the RoCE GID table (gid.c), rtnetlink's address
 * dumps and the port's active MTU.  --era=single|split: which IB devices
 * mana_ib registers (ibdev.h).
 */
#include "options.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "emulator/wire/backend.h"	/* emu_set_err() */
#include "gid.h"

#define PARSE_ERR_SET (-2)
#define MTU_MIN 68			/* ETH_MIN_MTU */
#define MTU_MAX 9000			/* MANA's jumbo frame limit */

static int ip_err(char *err, size_t errlen, const char *val, const char *why)
{
	emu_set_err(err, errlen, "--ip: invalid value '%s': %s (expected "
		    "[PORT:]ADDR/LEN, IPv4 or IPv6)", val, why);
	return PARSE_ERR_SET;
}

/* The address part of @s (up to '/', brackets kept): an address? */
static bool is_addr(const char *s)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	uint8_t tmp[16];

	if (n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = 0;
	return buf[0] == '[' || inet_pton(AF_INET, buf, tmp) == 1 ||
	       inet_pton(AF_INET6, buf, tmp) == 1;
}

/*
 * A leading "N:" is a port when what follows is an address on its own
 * and N is a port number; "2001:db8::1" stays an address.  false: a
 * port out of range.
 */
static bool split_port(const char *val, unsigned long *port, const char **rest)
{
	const char *colon = strchr(val, ':');
	unsigned long p;
	char *end;

	*port = 1;
	*rest = val;
	if (!colon || !isdigit((unsigned char)val[0]))
		return true;
	p = strtoul(val, &end, 10);
	if (end != colon || !is_addr(colon + 1))
		return true;
	if (p >= 1 && p <= MANA_EMU_MAX_PORTS) {
		*port = p;
		*rest = colon + 1;
		return true;
	}
	return is_addr(val);
}

static const char *addr_problem(const struct mana_emu_ip *ip)
{
	static const uint8_t zero[16];
	const uint8_t *a = ip->addr;

	if (ip->family == AF_INET) {
		if (!memcmp(a, zero, 4))
			return "the unspecified address";
		if (a[0] == 127)
			return "a loopback address";
		if (a[0] >= 224)
			return "a multicast, reserved or broadcast address";
		return NULL;
	}
	if (!memcmp(a, zero, 16))
		return "the unspecified address";
	if (!memcmp(a, zero, 15) && a[15] == 1)
		return "the loopback address";
	if (a[0] == 0xff)
		return "a multicast address";
	if (!memcmp(a, zero, 10) && a[10] == 0xff && a[11] == 0xff)
		return "an IPv4-mapped address (give the IPv4 form)";
	return NULL;
}

static int parse_addr(struct mana_emu_ip *ip, const char *s, const char *val,
		      char *err, size_t errlen)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(s, '/');
	unsigned long len;
	size_t n;
	char *end;

	if (!slash)
		return ip_err(err, errlen, val, "no /LEN");
	n = slash - s;
	if (n && s[0] == '[' && s[n - 1] == ']') {
		s++;
		n -= 2;
	}
	if (!n || n >= sizeof(buf))
		return ip_err(err, errlen, val, "no address");
	memcpy(buf, s, n);
	buf[n] = 0;
	if (inet_pton(AF_INET, buf, ip->addr) == 1)
		ip->family = AF_INET;
	else if (inet_pton(AF_INET6, buf, ip->addr) == 1)
		ip->family = AF_INET6;
	else
		return ip_err(err, errlen, val, "not an IPv4 or IPv6 address");
	if (!isdigit((unsigned char)slash[1]))
		return ip_err(err, errlen, val, "LEN is not a number");
	errno = 0;
	len = strtoul(slash + 1, &end, 10);
	if (errno || *end || !len || len > (ip->family == AF_INET ? 32 : 128))
		return ip_err(err, errlen, val, ip->family == AF_INET ?
			      "LEN must be 1..32" : "LEN must be 1..128");
	ip->prefix_len = len;
	return 0;
}

int mana_emu_parse_ip(struct mana_emu_options *opts, const char *val,
		      char *err, size_t errlen)
{
	struct mana_emu_ip ip = {};
	unsigned long port;
	const char *rest, *why;
	int ret;

	if (!split_port(val, &port, &rest)) {
		emu_set_err(err, errlen, "--ip: invalid value '%s': PORT must be "
			    "1..%d", val, MANA_EMU_MAX_PORTS);
		return PARSE_ERR_SET;
	}
	ip.port = port;
	ret = parse_addr(&ip, rest, val, err, errlen);
	if (ret)
		return ret;
	why = addr_problem(&ip);
	if (why)
		return ip_err(err, errlen, val, why);
	if (opts->nips == MANA_EMU_MAX_IPS) {
		emu_set_err(err, errlen, "--ip: more than %d addresses",
			    MANA_EMU_MAX_IPS);
		return PARSE_ERR_SET;
	}
	opts->ips[opts->nips++] = ip;
	return 0;
}

void mana_emu_ip_format(const struct mana_emu_ip *ip, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(ip->family, ip->addr, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, ip->prefix_len);
}

int mana_emu_format_ip(const struct mana_emu_options *opts, char *buf,
		       size_t len)
{
	char a[INET6_ADDRSTRLEN + 8];
	size_t used = 0;
	unsigned int i;
	int n;

	for (i = 0; i < opts->nips; i++) {
		mana_emu_ip_format(&opts->ips[i], a, sizeof(a));
		n = snprintf(buf ? buf + used : NULL, buf ? len - used : 0,
			     "%s--ip=%u:%s", used ? " " : "",
			     opts->ips[i].port, a);
		used += n;
		if (buf && used >= len)
			used = len - 1;
	}
	return used;
}

int mana_emu_parse_mtu(struct mana_emu_options *opts, const char *val,
		       char *err, size_t errlen)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = isdigit((unsigned char)val[0]) ? strtoul(val, &end, 10) : 0;
	if (!isdigit((unsigned char)val[0]) || errno || *end || v < MTU_MIN ||
	    v > MTU_MAX) {
		emu_set_err(err, errlen, "--mtu: invalid value '%s' (expected "
			    "an integer %d..%d)", val, MTU_MIN, MTU_MAX);
		return PARSE_ERR_SET;
	}
	opts->mtu = v;
	return 0;
}

int mana_emu_format_mtu(const struct mana_emu_options *opts, char *buf,
			size_t len)
{
	if (opts->mtu == MANA_EMU_MTU_DEFAULT)
		return 0;
	return snprintf(buf, len, "--mtu=%u", opts->mtu);
}

static bool same_addr(const struct mana_emu_ip *a, const struct mana_emu_ip *b)
{
	return a->port == b->port && a->family == b->family &&
	       !memcmp(a->addr, b->addr, a->family == AF_INET ? 4 : 16);
}

int mana_emu_check_ips(const struct mana_emu_options *opts, char *err,
		       size_t errlen)
{
	unsigned int i, j, count[MANA_EMU_MAX_PORTS + 1] = {};
	char a[INET6_ADDRSTRLEN + 8];
	uint8_t ll[16];

	for (i = 0; i < opts->nips; i++) {
		const struct mana_emu_ip *ip = &opts->ips[i];

		mana_emu_ip_format(ip, a, sizeof(a));
		if (ip->port > opts->ports) {
			emu_set_err(err, errlen, "--ip=%u:%s: there is no port "
				    "%u (--ports=%u)", ip->port, a, ip->port,
				    opts->ports);
			return MANA_EMU_OPT_ERROR;
		}
		if (++count[ip->port] > MANA_EMU_MAX_PORT_IPS) {
			emu_set_err(err, errlen, "--ip=%u:%s: more than %d "
				    "addresses on port %u (the GID table has "
				    "16 entries, one is the link-local address)",
				    ip->port, a, MANA_EMU_MAX_PORT_IPS,
				    ip->port);
			return MANA_EMU_OPT_ERROR;
		}
		for (j = 0; j < i; j++)
			if (same_addr(ip, &opts->ips[j]))
				break;
		emu_gid_link_local(opts, ip->port, ll);
		if (j < i || (ip->family == AF_INET6 &&
			      !memcmp(ip->addr, ll, 16))) {
			emu_set_err(err, errlen, "--ip=%u:%s: port %u already "
				    "has this address%s", ip->port, a, ip->port,
				    j < i ? "" : " (its link-local one)");
			return MANA_EMU_OPT_ERROR;
		}
	}
	return 0;
}

int mana_emu_parse_kernel(struct mana_emu_options *opts, const char *val,
			  char *err, size_t errlen)
{
	int k = emu_era_lookup(val);

	if (k < 0) {
		emu_set_err(err, errlen, "--kernel: invalid value '%s' (expected "
			    "%s..%s or newest)", val, emu_eras[0].version,
			    emu_eras[EMU_KERNEL_NEWEST].version);
		return PARSE_ERR_SET;
	}
	opts->kernel = (unsigned int)k;
	return 0;
}

int mana_emu_format_kernel(const struct mana_emu_options *opts, char *buf,
			   size_t len)
{
	if (opts->kernel == EMU_KERNEL_DEFAULT)
		return 0;
	return snprintf(buf, len, "--kernel=%s",
			emu_era_get(opts->kernel)->version);
}

/*
 * The older spelling: single is the default era (one mana_0), split the
 * one the option used to mean (two devices, the CQ type by device).
 */
int mana_emu_parse_era(struct mana_emu_options *opts, const char *val,
		       char *err, size_t errlen)
{
	if (!strcmp(val, "single")) {
		opts->kernel = EMU_KERNEL_DEFAULT;
	} else if (!strcmp(val, "split")) {
		opts->kernel = EMU_KERNEL_7_0;
	} else {
		emu_set_err(err, errlen, "--era: invalid value '%s' (expected "
			    "single or split)", val);
		return PARSE_ERR_SET;
	}
	return 0;
}
