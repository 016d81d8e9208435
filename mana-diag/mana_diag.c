// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mana-diag: why MANA does not work on this machine.  Runs the checks in
 * order, one line each with its verdict and, when something is wrong,
 * the fix; --json gives the same for machines; --oracle gives what the
 * kernel and the device answered, as "key = value" lines for the
 * differential oracle (issue 23, tests/guest/oracle.sh).  Exit status: 0
 * nothing failed, 1 a check failed, 2 the checks could not run.
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"

#define DIAG_JSON_VERSION 1

static struct result *results, **results_tail = &results;
static bool out_of_memory;

/* ---- strings ---------------------------------------------------------------- */

static void sb_vprintf(struct sbuf *b, const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	if (b->oom)
		return;
	va_copy(aq, ap);
	n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0,
		      fmt, aq);
	va_end(aq);
	if (n < 0)
		return;
	if (!b->s || b->len + n >= b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *s = realloc(b->s, cap);

		if (!s) {
			b->oom = out_of_memory = true;
			return;
		}
		b->s = s;
		b->cap = cap;
		vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	}
	b->len += n;
}

void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sb_vprintf(b, fmt, ap);
	va_end(ap);
}

void sb_free(struct sbuf *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}

static const char *sb_str(const struct sbuf *b)
{
	return b->s ? b->s : "";
}

/* ---- JSON ------------------------------------------------------------------- */

void js_quote(struct sbuf *b, const char *val)
{
	const unsigned char *p;

	sb_printf(b, "\"");
	for (p = (const unsigned char *)val; *p; p++) {
		if (*p == '"' || *p == '\\')
			sb_printf(b, "\\%c", *p);
		else if (*p == '\n')
			sb_printf(b, "\\n");
		else if (*p < 0x20)
			sb_printf(b, "\\u%04x", *p);
		else
			sb_printf(b, "%c", *p);
	}
	sb_printf(b, "\"");
}

static void js_key(struct sbuf *b, const char *key)
{
	if (b->len)
		sb_printf(b, ", ");
	js_quote(b, key);
	sb_printf(b, ": ");
}

void js_str(struct sbuf *b, const char *key, const char *val)
{
	js_key(b, key);
	if (val)
		js_quote(b, val);
	else
		sb_printf(b, "null");
}

void js_int(struct sbuf *b, const char *key, long long val)
{
	js_key(b, key);
	sb_printf(b, "%lld", val);
}

void js_bool(struct sbuf *b, const char *key, bool val)
{
	js_key(b, key);
	sb_printf(b, "%s", val ? "true" : "false");
}

void js_null(struct sbuf *b, const char *key)
{
	js_key(b, key);
	sb_printf(b, "null");
}

void js_raw(struct sbuf *b, const char *key, const char *json)
{
	js_key(b, key);
	sb_printf(b, "%s", json);
}

void js_array(struct sbuf *b, const char *key, const struct sbuf *items)
{
	js_key(b, key);
	sb_printf(b, "[%s]", items->s ? items->s : "");
}

/* ---- results ---------------------------------------------------------------- */

struct result *result_add(const char *id, const char *subject)
{
	struct result *r = calloc(1, sizeof(*r));

	if (!r) {
		fprintf(stderr, "mana-diag: out of memory\n");
		exit(2);
	}
	r->id = id;
	r->verdict = V_OK;
	snprintf(r->subject, sizeof(r->subject), "%s", subject ? subject : "");
	*results_tail = r;
	results_tail = &r->next;
	return r;
}

void result_set(struct result *r, enum verdict v, const char *fmt, ...)
{
	va_list ap;

	r->verdict = v;
	sb_free(&r->msg);
	va_start(ap, fmt);
	sb_vprintf(&r->msg, fmt, ap);
	va_end(ap);
}

void result_fix(struct result *r, const char *fmt, ...)
{
	va_list ap;

	if (r->fix.len)
		sb_printf(&r->fix, "; ");
	va_start(ap, fmt);
	sb_vprintf(&r->fix, fmt, ap);
	va_end(ap);
}

static const char *const verdict_names[] = {
	[V_OK] = "OK", [V_WARN] = "WARN", [V_FAIL] = "FAIL", [V_SKIP] = "SKIP",
};

static int exit_status(void)
{
	struct result *r;

	for (r = results; r; r = r->next)
		if (r->verdict == V_FAIL)
			return 1;
	return 0;
}

static void print_text(void)
{
	struct result *r;

	for (r = results; r; r = r->next) {
		printf("%-4s  %-10s %s%s%s\n", verdict_names[r->verdict], r->id,
		       r->subject, r->subject[0] ? ": " : "", sb_str(&r->msg));
		if (r->fix.len)
			printf("      fix: %s\n", sb_str(&r->fix));
	}
}

static void print_json(const struct diag *d, int status)
{
	struct sbuf b = { 0 };
	struct result *r;

	sb_printf(&b, "{\n  \"mana_diag\": %d,\n  \"sysfs\": ", DIAG_JSON_VERSION);
	js_quote(&b, d->sysfs);
	sb_printf(&b, ",\n  \"probe\": %s,\n  \"result\": \"%s\",\n"
		  "  \"exit_status\": %d,\n  \"checks\": [", d->probe ? "true" : "false",
		  status ? "fail" : "ok", status);
	for (r = results; r; r = r->next) {
		sb_printf(&b, "%s\n    {\"id\": \"%s\", \"subject\": ",
			  r == results ? "" : ",", r->id);
		if (r->subject[0])
			js_quote(&b, r->subject);
		else
			sb_printf(&b, "null");
		sb_printf(&b, ", \"verdict\": \"%s\", \"message\": ",
			  verdict_names[r->verdict]);
		js_quote(&b, sb_str(&r->msg));
		sb_printf(&b, ", \"fix\": ");
		if (r->fix.len)
			js_quote(&b, sb_str(&r->fix));
		else
			sb_printf(&b, "null");
		sb_printf(&b, ", \"data\": {%s}}", sb_str(&r->data));
	}
	sb_printf(&b, "\n  ]\n}\n");
	if (!b.oom)
		fputs(b.s, stdout);
	sb_free(&b);
}

/* ---- --oracle: the kernel's and the device's answers only ------------------ */

/*
 * The data members each check's oracle lines keep (fnmatch patterns over
 * the flattened key, array elements by index): what the kernel, the device
 * and the provider answer, never what belongs to the machine (PCI address,
 * kernel release, platform, netdev names and indexes, the netvsc master,
 * node modes, paths).  Checks not listed (libibverbs, hugepages: wholly
 * the machine's) are left out, verdict and all.
 */
#define ORACLE_KEEP_MAX 6

static const struct {
	const char *id;
	const char *keep[ORACLE_KEEP_MAX];
} oracle_keep[] = {
	{ "pci", { "functions.*.vendor", "functions.*.device",
		   "functions.*.driver", "cause" } },
	{ "kernel", { "mana", "mana_ib", "ib_uverbs" } },
	{ "rdma", { "ibdev", "uverbs", "access" } },
	{ "driver_id", { "netlink", "driver_id", "expected", "provider" } },
	{ "netdev", { "ibdev", "port", "port_state", "mac", "admin_up",
		      "operstate" } },
	{ "probe", { "ibdev", "port", "failed_step", "errno" } },
};

struct flat {
	const char *prefix;	/* "diag.ID[.SUBJECT]" */
	const char *const *keep;
};

static bool flat_kept(const struct flat *f, const char *key)
{
	unsigned int i;

	for (i = 0; i < ORACLE_KEEP_MAX && f->keep[i]; i++)
		if (!fnmatch(f->keep[i], key, 0))
			return true;
	return false;
}

static void flat_leaf(const struct flat *f, const char *key, const char *val)
{
	const char *name;

	if (!flat_kept(f, key))
		return;
	/* an errno by name: the same number means the same on both sides */
	if (!strcmp(key, "errno") && isdigit((unsigned char)*val) &&
	    (name = strerrorname_np(atoi(val))))
		val = name;
	printf("%s.%s = %s\n", f->prefix, key, val);
}

static const char *flat_value(const struct flat *f, const char *p, char *key,
			      size_t klen);

/* Members "key": value up to the closing '}' (or the end); after it. */
static const char *flat_members(const struct flat *f, const char *p, char *key,
				size_t klen)
{
	size_t len = strlen(key);

	while (*p && *p != '}') {
		const char *end;

		while (*p == ' ' || *p == ',' || *p == '\n')
			p++;
		if (*p != '"')
			break;
		end = strchr(p + 1, '"');	/* keys are plain words */
		if (!end)
			return p + strlen(p);
		snprintf(key + len, klen - len, "%s%.*s", len ? "." : "",
			 (int)(end - p - 1), p + 1);
		p = end + 1;
		while (*p == ':' || *p == ' ')
			p++;
		p = flat_value(f, p, key, klen);
		key[len] = 0;
	}
	return *p ? p + 1 : p;
}

/* One JSON value at @p named @key: its scalar leaves printed; after it. */
static const char *flat_value(const struct flat *f, const char *p, char *key,
			      size_t klen)
{
	size_t len = strlen(key);
	struct sbuf v = { 0 };
	unsigned int i;

	if (*p == '{')
		return flat_members(f, p + 1, key, klen);
	if (*p == '[') {
		p++;
		for (i = 0; *p && *p != ']'; i++) {
			while (*p == ' ' || *p == ',')
				p++;
			if (*p == ']')
				break;
			snprintf(key + len, klen - len, ".%u", i);
			p = flat_value(f, p, key, klen);
			key[len] = 0;
		}
		return *p ? p + 1 : p;
	}
	if (*p == '"') {
		for (p++; *p && *p != '"'; p++) {
			if (*p == '\\' && p[1])
				p++;	/* js_quote's escapes, kept as the char */
			sb_printf(&v, "%c", *p);
		}
		if (*p)
			p++;
	} else {
		while (*p && *p != ',' && *p != '}' && *p != ']' && *p != ' ')
			sb_printf(&v, "%c", *p++);
	}
	flat_leaf(f, key, v.s ? v.s : "");
	sb_free(&v);
	return p;
}

static void print_oracle(void)
{
	char prefix[DIAG_NAME * 3], key[256];
	struct result *r;
	unsigned int i;

	for (r = results; r; r = r->next) {
		struct flat f = { .prefix = prefix };

		for (i = 0; i < sizeof(oracle_keep) / sizeof(oracle_keep[0]); i++)
			if (!strcmp(oracle_keep[i].id, r->id))
				f.keep = oracle_keep[i].keep;
		if (!f.keep)
			continue;
		snprintf(prefix, sizeof(prefix), "diag.%s%s%s", r->id,
			 r->subject[0] ? "." : "", r->subject);
		printf("%s.verdict = %s\n", prefix, verdict_names[r->verdict]);
		key[0] = 0;
		flat_members(&f, sb_str(&r->data), key, sizeof(key));
	}
}

static void free_results(void)
{
	while (results) {
		struct result *r = results;

		results = r->next;
		sb_free(&r->msg);
		sb_free(&r->fix);
		sb_free(&r->data);
		free(r);
	}
}

/* ---- main ------------------------------------------------------------------- */

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: mana-diag [--probe] [--json | --oracle]\n"
		"Check why MANA (Microsoft Azure Network Adapter) does or does not work\n"
		"here: PCI function, kernel modules, RDMA device and uverbs node, driver id\n"
		"and the provider libibverbs binds, libibverbs, netdev pairing and state,\n"
		"huge pages, and with --probe the DPDK object graph on every port.\n\n"
		"  --probe   open each device and create and destroy DPDK's objects\n"
		"  --json    machine-readable report (see mana-diag(8))\n"
		"  --oracle  the kernel's and device's answers as key = value lines\n"
		"  --help    this text\n\n"
		"Exit status: 0 no check failed, 1 a check failed, 2 could not run.\n");
}

/* libibverbs' rule: $SYSFS_PATH unless setuid, trailing '/' dropped. */
static int find_sysfs(struct diag *d)
{
	const char *env = getuid() == geteuid() ? getenv("SYSFS_PATH") : NULL;
	struct stat st;
	size_t len;

	snprintf(d->sysfs, sizeof(d->sysfs), "%s", env && *env ? env : "/sys");
	len = strlen(d->sysfs);
	while (len > 1 && d->sysfs[len - 1] == '/')
		d->sysfs[--len] = 0;
	if (stat(d->sysfs, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "mana-diag: sysfs root %s: %s\n", d->sysfs,
			errno ? strerror(errno) : "not a directory");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "probe", no_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "oracle", no_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	static struct diag d;
	bool oracle = false;
	int c, status;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			d.probe = true;
			break;
		case 'j':
			d.json = true;
			break;
		case 'o':
			oracle = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "mana-diag: unexpected argument '%s'\n",
			argv[optind]);
		usage(stderr);
		return 2;
	}
	if (find_sysfs(&d))
		return 2;

	check_pci(&d);			/* 1 */
	check_kernel(&d);		/* 2 */
	check_rdma_devices(&d);		/* 3 */
	nl_scan_rdma(&d);
	verbs_scan(&d);
	check_driver_id(&d);		/* 4 */
	check_libibverbs(&d);		/* 5 */
	check_netdevs(&d);		/* 6 */
	check_hugepages(&d);		/* 7 */
	check_probe(&d);		/* 8 */

	if (out_of_memory) {
		fprintf(stderr, "mana-diag: out of memory\n");
		free_results();
		return 2;
	}
	status = exit_status();
	fflush(stderr);
	if (oracle)
		print_oracle();
	else if (d.json)
		print_json(&d, status);
	else
		print_text();
	free_results();
	return status;
}
