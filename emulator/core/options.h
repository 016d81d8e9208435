/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * mana-emu options: one table-driven parser shared by the launcher
 * (argv), the preloaded library (MANA_EMU_OPTIONS) and the unit test.
 */
#ifndef MANA_EMU_OPTIONS_H
#define MANA_EMU_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "era.h"

#define MANA_EMU_MAX_PORTS 8
#define MANA_EMU_ENV_OPTIONS "MANA_EMU_OPTIONS"
#define MANA_EMU_ENV_SYSFS "MANA_EMU_SYSFS"
/* environment form: the pid that made the tree (an exec keeps the pid) */
#define MANA_EMU_ENV_SYSFS_OWNER "MANA_EMU_SYSFS_OWNER"
#define MANA_EMU_ENV_STATS "MANA_EMU_STATS"
#define MANA_EMU_ENV_REPORT_FD "MANA_EMU_REPORT_FD"
#define MANA_EMU_SPEC_MAX 128		/* "socket:" + a sun_path, "tap:" + name */
#define MANA_EMU_PATH_MAX 1024
#define MANA_EMU_RX_HOLD_DEFAULT 4096
#define MANA_EMU_RX_HOLD_MAX 65536
#define MANA_EMU_MAX_IPS 32		/* --ip addresses over all ports */
#define MANA_EMU_MAX_PORT_IPS 15	/* per port: the GID table holds 16 */
#define MANA_EMU_MTU_DEFAULT 1500
#define MANA_EMU_VM_NAME_MAX 64

enum mana_emu_provider {
	MANA_EMU_PROVIDER_OURS,
	MANA_EMU_PROVIDER_SYSTEM,
};

enum mana_emu_transport {
	MANA_EMU_TRANSPORT_IOCTL,
	MANA_EMU_TRANSPORT_WRITE,
};

/* What the device hashes a received frame by (--rss-hash). */
enum mana_emu_rss_hash {
	MANA_EMU_RSS_HASH_DEVICE,	/* its own choice by frame type */
	MANA_EMU_RSS_HASH_MASK,		/* the RSS QP's rx_hash_fields_mask */
};

/* One --ip address of a port's VF interface. */
struct mana_emu_ip {
	uint8_t port;			/* 1-based */
	uint8_t family;			/* AF_INET or AF_INET6 */
	uint8_t prefix_len;
	uint8_t addr[16];		/* IPv4: the first 4 bytes */
};

struct mana_emu_options {
	unsigned int provider;		/* enum mana_emu_provider */
	unsigned int driver_id;		/* reported by netlink and checked in ioctls */
	bool no_netlink;
	unsigned int transport;		/* enum mana_emu_transport */
	unsigned int ports;
	uint8_t mac[6];			/* port 1; port k adds k - 1 */
	bool netdev_up;			/* the kernel netdev holds every port */
	unsigned int max_qp_wr;		/* also max_cqe */
	bool verbose;
	bool help;			/* -h/--help seen (launcher only) */
	/* wire backends: every port, then per-port overrides ("" = unset) */
	char backend[MANA_EMU_SPEC_MAX];
	char port_backend[MANA_EMU_MAX_PORTS][MANA_EMU_SPEC_MAX];
	char pcap[MANA_EMU_PATH_MAX];	/* capture of every port, "" = none */
	char stats[MANA_EMU_PATH_MAX];	/* statistics dump at exit */
	bool rx_coalesce;		/* CQE_RX_COALESCED_4 completions */
	unsigned int rx_hold;		/* frames an RQ holds without WQEs */
	/* --fault=: 0 = off */
	unsigned long long fault_fatal_after;	/* frames transmitted */
	unsigned long long fault_drop_cqe;	/* CQE number, from 1 */
	unsigned long long fault_drop_roce;	/* every Nth RoCE packet sent */
	unsigned long long fault_reorder_roce;	/* swapped with the next */
	/* what mana-diag inspects: the VM around the device */
	unsigned int no_modules;	/* MANA_EMU_MOD_* not loaded */
	unsigned int uverbs_mode;	/* permission bits of /dev/infiniband/uverbsN */
	unsigned int hugepages;		/* 2 MiB pages on NUMA node 0 */
	bool no_device;			/* no MANA PCI function at all */
	unsigned int rss_hash;		/* enum mana_emu_rss_hash */
	/*
	 * --fault=fail-cmd=N:ERRNO: the Nth uverbs command fails (0 = off),
	 * or fail-cmd=NAME:ERRNO: the first command of that name ("" = off)
	 */
	unsigned long long fault_fail_cmd;
	unsigned int fault_fail_errno;
	char fault_fail_name[32];
	/* RDMA (options_rdma.c): addresses, netdev MTU, kernel era */
	unsigned int nips;
	struct mana_emu_ip ips[MANA_EMU_MAX_IPS];
	unsigned int mtu;
	unsigned int kernel;		/* enum emu_kernel (core/era.h) */
	/* --vm=NAME: the emulated VM this process joins ("" = its own) */
	char vm[MANA_EMU_VM_NAME_MAX];
};

/* Kernel modules the emulated VM can lack (--no-module=). */
#define MANA_EMU_MOD_MANA 0x1		/* Ethernet driver: PCI function, VF netdevs */
#define MANA_EMU_MOD_MANA_IB 0x2	/* the IB device (needs mana) */
#define MANA_EMU_MOD_IB_UVERBS 0x4	/* uverbs char devices */
#define MANA_EMU_UVERBS_MODE_DEFAULT 0666	/* rdma-core's udev rule */
#define MANA_EMU_HUGEPAGES_DEFAULT 1024

/* Which parts of the device exist, as the loaded modules make them. */
static inline bool mana_emu_module_loaded(const struct mana_emu_options *o,
					  unsigned int mod)
{
	if (o->no_modules & mod)
		return false;
	if (mod == MANA_EMU_MOD_IB_UVERBS)
		return true;
	/* udev loads mana for the PCI function, mana_ib needs mana */
	if (o->no_device)
		return false;
	return mod == MANA_EMU_MOD_MANA ||
	       !(o->no_modules & MANA_EMU_MOD_MANA);
}

static inline bool mana_emu_has_netdevs(const struct mana_emu_options *o)
{
	return mana_emu_module_loaded(o, MANA_EMU_MOD_MANA);
}

static inline bool mana_emu_has_ibdev(const struct mana_emu_options *o)
{
	return mana_emu_module_loaded(o, MANA_EMU_MOD_MANA_IB);
}

static inline bool mana_emu_has_uverbs(const struct mana_emu_options *o)
{
	return mana_emu_has_ibdev(o) &&
	       mana_emu_module_loaded(o, MANA_EMU_MOD_IB_UVERBS);
}

/* Status codes of the parse functions (0 on success). */
#define MANA_EMU_OPT_ERROR (-1)

void mana_emu_options_init(struct mana_emu_options *opts);

/*
 * Parse launcher arguments.  Stops after "--" or before the first word
 * that is not an option; *consumed is the number of argv entries used.
 * On error returns MANA_EMU_OPT_ERROR with a message (naming the option)
 * in err.
 */
int mana_emu_options_parse_argv(struct mana_emu_options *opts, int argc,
				char *const argv[], int *consumed, char *err,
				size_t errlen);

/*
 * Parse the environment form, e.g. "--ports=2 --no-netlink".  Words are
 * separated by blanks; single or double quotes group a value.
 */
int mana_emu_options_parse_string(struct mana_emu_options *opts,
				  const char *str, char *err, size_t errlen);

/*
 * Write the normalised option string (every value explicit) that
 * mana_emu_options_parse_string() turns back into the same options.
 * Returns the length needed, like snprintf.
 */
int mana_emu_options_format(const struct mana_emu_options *opts, char *buf,
			    size_t len);

void mana_emu_options_usage(FILE *out, const char *prog);

/*
 * --vm: a process joins a VM made with @vm's options.  Every option of
 * the VM (all but --provider, --verbose, --pcap, --stats, --fault and --vm
 * itself, which are the process's own) that @mine gave explicitly must
 * have the VM's value (@given: mana_emu_options_given()): else
 * MANA_EMU_OPT_ERROR and one line in err naming
 * the option and both values.  On success @mine takes the VM's values and
 * keeps its own process options.
 */
int mana_emu_options_vm_merge(const struct mana_emu_options *vm,
			      struct mana_emu_options *mine, uint64_t given,
			      char *err, size_t errlen);
/*
 * The options the last parse (argv or string, at start-up) gave
 * explicitly: one bit per row of the option table, for the merge above.
 * Kept outside the options so that equal options compare equal.
 */
uint64_t mana_emu_options_given(void);

/* MAC of port (1-based): port 1's MAC plus port - 1, carried across bytes. */
void mana_emu_port_mac(const struct mana_emu_options *opts, unsigned int port,
		       uint8_t mac[6]);

/* Backend spec of port (1-based): its override, the common one, loopback. */
const char *mana_emu_port_backend(const struct mana_emu_options *opts,
				  unsigned int port);

/*
 * ---- internal to the parser: options.c (the table) and option_values.c
 * (the typed values its rows name) -----------------------------------------
 * Parsers return 0, PARSE_ERR_GENERIC (the table writes the generic
 * message) or PARSE_ERR_SET (the parser wrote its own message in err).
 * format: the value alone; format_words: whole "--name=value" words, or
 * nothing when the value is the default.  Both return the length, like
 * snprintf.
 */
#define PARSE_ERR_GENERIC (-1)
#define PARSE_ERR_SET (-2)	/* the parser wrote its own message */

/* Helpers of the table itself. */
/* Decimal digits only, in [min, max]: 0, or -1. */
int opt_parse_uint(const char *val, unsigned long min, unsigned long max,
		   unsigned int *out);
/* A string value into a field of @size bytes (0 or PARSE_ERR_SET). */
int opt_copy_value(char *dst, size_t size, const char *val, const char *name,
		   char *err, size_t errlen);
/* Append "--name=value", quoting the value when it has blanks or quotes. */
void opt_word_append(char *buf, size_t len, size_t *used, const char *name,
		     const char *val);
/* An output file (--pcap, --stats) must be creatable now. */
int opt_check_out_path(const char *path, const char *name, char *err,
		       size_t errlen);

/* The custom options' values: a parser and a formatter each. */
#define OPT_VALUE(_name)                                                       \
	int opt_parse_##_name(struct mana_emu_options *opts, const char *val,  \
			      char *err, size_t errlen);                       \
	int opt_format_##_name(const struct mana_emu_options *opts, char *buf, \
			       size_t len)
OPT_VALUE(mac);
OPT_VALUE(backend);
OPT_VALUE(fault);
OPT_VALUE(rx_hold);
OPT_VALUE(no_module);
OPT_VALUE(uverbs_mode);
OPT_VALUE(hugepages);
OPT_VALUE(rss_hash);
OPT_VALUE(vm);

/*
 * options_rdma.c: the RDMA options (--ip, --mtu, --kernel, --era), parsers and
 * formatters for rows of the option table.
 */
/* 0, or -2 with a message in err (options.c's PARSE_ERR_SET). */
int mana_emu_parse_ip(struct mana_emu_options *opts, const char *val,
		      char *err, size_t errlen);
/* Whole "--ip=PORT:ADDR/LEN" words; the length written (or needed). */
int mana_emu_format_ip(const struct mana_emu_options *opts, char *buf,
		       size_t len);
int mana_emu_parse_mtu(struct mana_emu_options *opts, const char *val,
		       char *err, size_t errlen);
int mana_emu_format_mtu(const struct mana_emu_options *opts, char *buf,
			size_t len);

/*
 * After every option is in: each --ip names an existing port, no port
 * has more than MANA_EMU_MAX_PORT_IPS, no address is given twice on a
 * port or equals its link-local GID.  0 or MANA_EMU_OPT_ERROR + message.
 */
int mana_emu_check_ips(const struct mana_emu_options *opts, char *err,
		       size_t errlen);

/* --kernel=VERSION|newest; --era=single|split names 6.14 and 7.0 */
int mana_emu_parse_kernel(struct mana_emu_options *opts, const char *val,
			  char *err, size_t errlen);
int mana_emu_format_kernel(const struct mana_emu_options *opts, char *buf,
			   size_t len);
int mana_emu_parse_era(struct mana_emu_options *opts, const char *val,
		       char *err, size_t errlen);

/* "10.0.0.1/24" or "fd00::1/64" */
void mana_emu_ip_format(const struct mana_emu_ip *ip, char *buf, size_t len);

#endif /* MANA_EMU_OPTIONS_H */
