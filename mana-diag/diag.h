/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * mana-diag: what each check found, shared by the checks and the report.
 */
#ifndef MANA_DIAG_H
#define MANA_DIAG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define DIAG_MAX_FUNCS 8
#define DIAG_MAX_DEVS 8
#define DIAG_MAX_PORTS 8
#define DIAG_NAME 64
#define DIAG_MANA_DRIVER_ID 20		/* RDMA_DRIVER_MANA */
#define DIAG_ERDMA_DRIVER_ID 19		/* RDMA_DRIVER_ERDMA in rdma-core */

enum verdict { V_OK, V_WARN, V_FAIL, V_SKIP };

/* A growing string (JSON fragments, messages). */
struct sbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

void sb_printf(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sb_free(struct sbuf *b);

/* JSON members appended to a check's "data" object. */
void js_str(struct sbuf *b, const char *key, const char *val);	/* NULL: null */
void js_int(struct sbuf *b, const char *key, long long val);
void js_bool(struct sbuf *b, const char *key, bool val);
void js_null(struct sbuf *b, const char *key);
void js_raw(struct sbuf *b, const char *key, const char *json);
void js_quote(struct sbuf *b, const char *val);	/* a bare JSON string */
/* key: [items], items being comma-separated JSON values (may be empty) */
void js_array(struct sbuf *b, const char *key, const struct sbuf *items);

/* One line of the report. */
struct result {
	const char *id;
	char subject[DIAG_NAME * 2];
	enum verdict verdict;
	struct sbuf msg, fix, data;
	struct result *next;
};

/* Start a result; its message, fix and data are filled in by the caller. */
struct result *result_add(const char *id, const char *subject);
void result_set(struct result *r, enum verdict v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void result_fix(struct result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

struct diag_port {
	unsigned int port;
	int state;		/* IB port state, -1 unknown */
	int phys_state;
	unsigned int ndev_index;	/* 0: none known */
	char ndev[DIAG_NAME];
};

struct diag_dev {
	char name[DIAG_NAME];		/* mana_0 */
	char bdf[DIAG_NAME];		/* PCI function it belongs to */
	char uverbs[DIAG_NAME];		/* uverbs0, "" if none */
	bool node_ok;			/* /dev node there and read/writable */
	unsigned int nl_index;
	bool nl_seen;			/* listed by RDMA netlink */
	int driver_id;			/* from GET_CHARDEV, -1 unknown */
	unsigned int nports;
	struct diag_port ports[DIAG_MAX_PORTS];
	/* what libibverbs bound it to in this process */
	bool listed;			/* in ibv_get_device_list() */
	char provider[DIAG_NAME];	/* ours, rdma-core, erdma, ... */
	char provider_path[PATH_MAX];
};

struct diag_func {
	char bdf[DIAG_NAME];
	unsigned int device;
	char driver[DIAG_NAME];		/* "" when unbound */
};

struct diag {
	char sysfs[PATH_MAX];
	bool probe, json;
	unsigned int nfuncs, ndevs;
	struct diag_func funcs[DIAG_MAX_FUNCS];
	struct diag_dev devs[DIAG_MAX_DEVS];
	bool mod_mana, mod_mana_ib, mod_ib_uverbs;
	bool netlink;			/* RDMA netlink answered */
	int netlink_err;		/* errno of the socket when it did not */
};

/* checks_sys.c: sysfs, /dev and /proc */
void check_pci(struct diag *d);
void check_kernel(struct diag *d);
void check_rdma_devices(struct diag *d);
void check_hugepages(struct diag *d);
int sysfs_read(const struct diag *d, const char *rel, char *buf, size_t len);

/* checks_nl.c: RDMA netlink and rtnetlink through libnl */
void nl_scan_rdma(struct diag *d);
void check_netdevs(struct diag *d);

/* checks_verbs.c: libibverbs */
void verbs_scan(struct diag *d);
void check_driver_id(struct diag *d);
void check_libibverbs(struct diag *d);
void check_probe(struct diag *d);

#endif /* MANA_DIAG_H */
