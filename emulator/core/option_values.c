// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mana-emu options: the typed value parsers and formatters the option
 * table (options.c) names in its rows: MACs, wire specs, fault lists,
 * module lists, modes, counts, output paths.  A parser returns 0,
 * PARSE_ERR_GENERIC (options.c writes "invalid value ... expected ...")
 * or PARSE_ERR_SET (it wrote its own message); a formatter writes the
 * value (format) or whole "--name=value" words (format_words).
 */
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>	/* W_OK, X_OK */

#include "emulator/lib/libc.h"
#include "emulator/wire/backend.h"

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Exactly six colon-separated pairs of hex digits, unicast. */
int opt_parse_mac(struct mana_emu_options *opts, const char *val,
		  char *err, size_t errlen)
{
	uint8_t mac[6];
	int i;

	if (strlen(val) != 17)
		return -1;
	for (i = 0; i < 6; i++) {
		const char *p = val + i * 3;
		int hi = hexval(p[0]), lo = hexval(p[1]);

		if (hi < 0 || lo < 0)
			return -1;
		if (i < 5 && p[2] != ':')
			return -1;
		mac[i] = hi << 4 | lo;
	}
	/* A port address must be unicast (I/G bit clear) and not all zero. */
	if ((mac[0] & 1) || !(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]))
		return -1;
	memcpy(opts->mac, mac, sizeof(mac));
	return 0;
}

int opt_format_mac(const struct mana_emu_options *opts, char *buf,
		   size_t len)
{
	const uint8_t *m = opts->mac;

	return snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1],
			m[2], m[3], m[4], m[5]);
}

/*
 * Values go through the environment form, which splits on blanks and
 * groups with quotes but has no escapes: a value may hold one kind of
 * quote, not both.
 */
int opt_copy_value(char *dst, size_t size, const char *val,
		   const char *name, char *err, size_t errlen)
{
	if (!*val) {
		emu_set_err(err, errlen, "--%s: empty value", name);
		return PARSE_ERR_SET;
	}
	if (strlen(val) >= size) {
		emu_set_err(err, errlen, "--%s: value longer than %zu bytes", name,
			size - 1);
		return PARSE_ERR_SET;
	}
	if (strchr(val, '\'') && strchr(val, '"')) {
		emu_set_err(err, errlen, "--%s: a value cannot hold both ' and \"",
			name);
		return PARSE_ERR_SET;
	}
	memset(dst, 0, size);
	memcpy(dst, val, strlen(val));
	return 0;
}

/* "SPEC" for every port, or "N:SPEC" for port N (specs never start with a digit). */
int opt_parse_backend(struct mana_emu_options *opts, const char *val,
		      char *err, size_t errlen)
{
	char msg[200];
	char *end;
	unsigned long port = 0;
	char *dst = opts->backend;
	int ret;

	if (isdigit((unsigned char)val[0])) {
		port = strtoul(val, &end, 10);
		if (*end != ':' || port < 1 || port > MANA_EMU_MAX_PORTS) {
			emu_set_err(err, errlen, "--backend: invalid value '%s' "
				"(expected SPEC or PORT:SPEC, PORT 1..%d)",
				val, MANA_EMU_MAX_PORTS);
			return PARSE_ERR_SET;
		}
		val = end + 1;
		dst = opts->port_backend[port - 1];
	}
	if (backend_spec_check(val, msg, sizeof(msg))) {
		emu_set_err(err, errlen, "--backend: %s", msg);
		return PARSE_ERR_SET;
	}
	ret = opt_copy_value(dst, MANA_EMU_SPEC_MAX, val, "backend", err, errlen);
	/* the last value wins: a common spec replaces earlier overrides */
	if (!ret && !port)
		memset(opts->port_backend, 0, sizeof(opts->port_backend));
	return ret;
}

static const struct {
	const char *name;
	size_t offset;
} faults[] = {
	{ "fatal-after", offsetof(struct mana_emu_options, fault_fatal_after) },
	{ "drop-cqe", offsetof(struct mana_emu_options, fault_drop_cqe) },
	{ "drop-roce", offsetof(struct mana_emu_options, fault_drop_roce) },
	{ "reorder-roce",
	  offsetof(struct mana_emu_options, fault_reorder_roce) },
};

#define FAULT_COUNT (sizeof(faults) / sizeof(faults[0]))

static int parse_fault_one(struct mana_emu_options *opts, const char *item,
			   size_t len)
{
	unsigned long long v;
	char num[32], *end;
	size_t i, n;

	for (i = 0; i < FAULT_COUNT; i++) {
		n = strlen(faults[i].name);
		if (len > n + 1 && !strncmp(item, faults[i].name, n) &&
		    item[n] == '=')
			break;
	}
	if (i == FAULT_COUNT || len - n - 1 >= sizeof(num))
		return -1;
	memcpy(num, item + n + 1, len - n - 1);
	num[len - n - 1] = 0;
	if (!isdigit((unsigned char)num[0]))
		return -1;
	errno = 0;
	v = strtoull(num, &end, 10);
	if (errno || *end || !v)
		return -1;
	*(unsigned long long *)((char *)opts + faults[i].offset) = v;
	return 0;
}

static const struct {
	const char *name;
	int value;
} fail_errnos[] = {
	{ "ENOMEM", ENOMEM }, { "EINVAL", EINVAL }, { "EIO", EIO },
	{ "EBUSY", EBUSY }, { "EFAULT", EFAULT }, { "EPERM", EPERM },
	{ "EACCES", EACCES }, { "ENOSPC", ENOSPC }, { "EAGAIN", EAGAIN },
	{ "EOPNOTSUPP", EOPNOTSUPP }, { "ENODEV", ENODEV }, { "ENOENT", ENOENT },
	{ "ETIMEDOUT", ETIMEDOUT },
};

#define FAIL_ERRNO_COUNT (sizeof(fail_errnos) / sizeof(fail_errnos[0]))

/* A command name as --verbose shows it: CREATE_CQ, EX_CREATE_QP, QP/QP_CREATE */
static bool cmd_name_ok(const char *name, size_t max)
{
	const char *c;

	if (!*name || strlen(name) >= max || isdigit((unsigned char)*name))
		return false;
	for (c = name; *c; c++)
		if (!isupper((unsigned char)*c) && !isdigit((unsigned char)*c) &&
		    *c != '_' && *c != '/')
			return false;
	return true;
}

/* fail-cmd=N:ERRNO or NAME:ERRNO, ERRNO a name above or a number 1..4095 */
static int parse_fail_cmd(struct mana_emu_options *opts, const char *item,
			  size_t len)
{
	char val[64], *colon, *end;
	unsigned long long n = 0;
	unsigned long e;
	size_t i;

	if (len >= sizeof(val))
		return -1;
	memcpy(val, item, len);
	val[len] = 0;
	colon = strrchr(val, ':');
	if (!colon)
		return -1;
	*colon = 0;
	if (isdigit((unsigned char)val[0])) {
		errno = 0;
		n = strtoull(val, &end, 10);
		if (errno || *end || !n)
			return -1;
	} else if (!cmd_name_ok(val, sizeof(opts->fault_fail_name))) {
		return -1;
	}
	for (i = 0; i < FAIL_ERRNO_COUNT; i++)
		if (!strcmp(colon + 1, fail_errnos[i].name))
			break;
	if (i < FAIL_ERRNO_COUNT) {
		e = fail_errnos[i].value;
	} else {
		if (!isdigit((unsigned char)colon[1]))
			return -1;
		e = strtoul(colon + 1, &end, 10);
		if (*end || !e || e > 4095)
			return -1;
	}
	opts->fault_fail_cmd = n;
	opts->fault_fail_errno = e;
	memset(opts->fault_fail_name, 0, sizeof(opts->fault_fail_name));
	if (!n)
		memcpy(opts->fault_fail_name, val, strlen(val));
	return 0;
}

/* Comma-separated NAME=N items; repeated --fault options add up. */
int opt_parse_fault(struct mana_emu_options *opts, const char *val,
		    char *err, size_t errlen)
{
	const char *p = val, *comma;
	struct mana_emu_options tmp = *opts;

	do {
		size_t len;

		comma = strchr(p, ',');
		len = comma ? (size_t)(comma - p) : strlen(p);
		if (len > 9 && !strncmp(p, "fail-cmd=", 9) ?
		    parse_fail_cmd(&tmp, p + 9, len - 9) :
		    parse_fault_one(&tmp, p, len)) {
			emu_set_err(err, errlen, "--fault: invalid value '%s' "
				"(expected fatal-after=N, drop-cqe=N or "
				"fail-cmd=N:ERRNO or fail-cmd=NAME:ERRNO, N >= 1, "
				"comma separated)", val);
			return PARSE_ERR_SET;
		}
		if (comma)	/* not NULL + 1: undefined, as UBSan says */
			p = comma + 1;
	} while (comma);
	opts->fault_fatal_after = tmp.fault_fatal_after;
	opts->fault_drop_cqe = tmp.fault_drop_cqe;
	opts->fault_drop_roce = tmp.fault_drop_roce;
	opts->fault_reorder_roce = tmp.fault_reorder_roce;
	opts->fault_fail_cmd = tmp.fault_fail_cmd;
	opts->fault_fail_errno = tmp.fault_fail_errno;
	memcpy(opts->fault_fail_name, tmp.fault_fail_name,
	       sizeof(opts->fault_fail_name));
	return 0;
}

/* Append "--name=value", quoting the value when it has blanks or quotes. */
void opt_word_append(char *buf, size_t len, size_t *used,
		     const char *name, const char *val)
{
	char q = 0;
	const char *c;
	int n;

	for (c = val; *c; c++)
		if (isspace((unsigned char)*c) || *c == '\'' || *c == '"')
			q = strchr(val, '\'') ? '"' : '\'';
	n = q ? snprintf(buf ? buf + *used : NULL, buf ? len - *used : 0,
			 "%s--%s=%c%s%c", *used ? " " : "", name, q, val, q) :
		snprintf(buf ? buf + *used : NULL, buf ? len - *used : 0,
			 "%s--%s=%s", *used ? " " : "", name, val);
	*used += n;
	if (buf && *used >= len)
		*used = len - 1;
}

int opt_format_backend(const struct mana_emu_options *opts, char *buf,
		       size_t len)
{
	char val[MANA_EMU_SPEC_MAX + 8];
	size_t used = 0;
	unsigned int i;

	if (opts->backend[0])
		opt_word_append(buf, len, &used, "backend", opts->backend);
	for (i = 0; i < MANA_EMU_MAX_PORTS; i++) {
		if (!opts->port_backend[i][0])
			continue;
		snprintf(val, sizeof(val), "%u:%s", i + 1,
			 opts->port_backend[i]);
		opt_word_append(buf, len, &used, "backend", val);
	}
	return used;
}

int opt_format_fault(const struct mana_emu_options *opts, char *buf,
		     size_t len)
{
	char val[160] = "";
	size_t used = 0, n = 0, i;

	for (i = 0; i < FAULT_COUNT; i++) {
		unsigned long long v = *(const unsigned long long *)
			((const char *)opts + faults[i].offset);

		if (v)
			n += snprintf(val + n, sizeof(val) - n, "%s%s=%llu",
				      n ? "," : "", faults[i].name, v);
	}
	if (opts->fault_fail_cmd)
		n += snprintf(val + n, sizeof(val) - n, "%sfail-cmd=%llu:%u",
			      n ? "," : "", opts->fault_fail_cmd,
			      opts->fault_fail_errno);
	else if (opts->fault_fail_name[0])
		n += snprintf(val + n, sizeof(val) - n, "%sfail-cmd=%s:%u",
			      n ? "," : "", opts->fault_fail_name,
			      opts->fault_fail_errno);
	if (n)
		opt_word_append(buf, len, &used, "fault", val);
	return used;
}

int opt_parse_uint(const char *val, unsigned long min, unsigned long max,
		   unsigned int *out)
{
	unsigned long v;
	char *end;

	/* Decimal digits only: no sign, no blanks, no base prefix. */
	if (!isdigit((unsigned char)val[0]))
		return -1;
	errno = 0;
	v = strtoul(val, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int opt_parse_rx_hold(struct mana_emu_options *opts, const char *val,
		      char *err, size_t errlen)
{
	return opt_parse_uint(val, 0, MANA_EMU_RX_HOLD_MAX, &opts->rx_hold) ?
	       PARSE_ERR_GENERIC : 0;
}

/* Only when changed: the default normalised string stays short. */
int opt_format_rx_hold(const struct mana_emu_options *opts, char *buf,
		       size_t len)
{
	if (opts->rx_hold == MANA_EMU_RX_HOLD_DEFAULT)
		return 0;
	return snprintf(buf, len, "--rx-hold=%u", opts->rx_hold);
}

static const struct {
	const char *name;
	unsigned int bit;
} modules[] = {
	{ "mana", MANA_EMU_MOD_MANA },
	{ "mana_ib", MANA_EMU_MOD_MANA_IB },
	{ "ib_uverbs", MANA_EMU_MOD_IB_UVERBS },
};

#define MODULE_COUNT (sizeof(modules) / sizeof(modules[0]))

/* Comma-separated module names; repeated options add up. */
int opt_parse_no_module(struct mana_emu_options *opts, const char *val,
			char *err, size_t errlen)
{
	unsigned int bits = 0;
	const char *p = val;
	size_t len, i;

	for (;;) {
		len = strcspn(p, ",");
		for (i = 0; i < MODULE_COUNT; i++)
			if (strlen(modules[i].name) == len &&
			    !strncmp(p, modules[i].name, len))
				break;
		if (i == MODULE_COUNT) {
			emu_set_err(err, errlen, "--no-module: invalid value '%s' "
				"(expected mana, mana_ib or ib_uverbs, comma "
				"separated)", val);
			return PARSE_ERR_SET;
		}
		bits |= modules[i].bit;
		if (!p[len])
			break;
		p += len + 1;
	}
	opts->no_modules |= bits;
	return 0;
}

int opt_format_no_module(const struct mana_emu_options *opts, char *buf,
			 size_t len)
{
	char val[64] = "";
	size_t used = 0, n = 0, i;

	for (i = 0; i < MODULE_COUNT; i++)
		if (opts->no_modules & modules[i].bit)
			n += snprintf(val + n, sizeof(val) - n, "%s%s",
				      n ? "," : "", modules[i].name);
	if (n)
		opt_word_append(buf, len, &used, "no-module", val);
	return used;
}

/* Octal permission bits, as chmod takes them (no file type, no setuid). */
int opt_parse_uverbs_mode(struct mana_emu_options *opts, const char *val,
			  char *err, size_t errlen)
{
	unsigned long v;
	char *end;

	if (val[0] < '0' || val[0] > '7')
		return PARSE_ERR_GENERIC;
	errno = 0;
	v = strtoul(val, &end, 8);
	if (errno || *end || v > 0777)
		return PARSE_ERR_GENERIC;
	opts->uverbs_mode = v;
	return 0;
}

int opt_format_uverbs_mode(const struct mana_emu_options *opts, char *buf,
			   size_t len)
{
	if (opts->uverbs_mode == MANA_EMU_UVERBS_MODE_DEFAULT)
		return 0;
	return snprintf(buf, len, "--uverbs-mode=%04o", opts->uverbs_mode);
}

int opt_format_hugepages(const struct mana_emu_options *opts, char *buf,
			 size_t len)
{
	if (opts->hugepages == MANA_EMU_HUGEPAGES_DEFAULT)
		return 0;
	return snprintf(buf, len, "--hugepages=%u", opts->hugepages);
}

int opt_parse_hugepages(struct mana_emu_options *opts, const char *val,
			char *err, size_t errlen)
{
	return opt_parse_uint(val, 0, 1048576, &opts->hugepages) ?
	       PARSE_ERR_GENERIC : 0;
}

int opt_parse_rss_hash(struct mana_emu_options *opts, const char *val,
		       char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	if (!strcmp(val, "device"))
		opts->rss_hash = MANA_EMU_RSS_HASH_DEVICE;
	else if (!strcmp(val, "mask"))
		opts->rss_hash = MANA_EMU_RSS_HASH_MASK;
	else
		return PARSE_ERR_GENERIC;
	return 0;
}

/* Only when changed: the default normalised string stays short. */
int opt_format_rss_hash(const struct mana_emu_options *opts, char *buf,
			size_t len)
{
	if (opts->rss_hash == MANA_EMU_RSS_HASH_DEVICE)
		return 0;
	return snprintf(buf, len, "--rss-hash=mask");
}

/*
 * An output file (--pcap, --stats) must be creatable now, not only when
 * the device first writes it inside the program: an existing file must
 * be a writable non-directory, else its directory must be a writable
 * directory.
 */
int opt_check_out_path(const char *path, const char *name, char *err,
		       size_t errlen)
{
	char dir[MANA_EMU_PATH_MAX];
	const char *slash = strrchr(path, '/');
	struct stat st;
	int e = 0;

	if (!emu_libc_stat(path, &st)) {
		if (S_ISDIR(st.st_mode))
			e = EISDIR;
		else if (emu_libc_access(path, W_OK))
			e = errno;
	} else if (errno != ENOENT) {
		e = errno;
	} else {
		if (!slash)
			snprintf(dir, sizeof(dir), ".");
		else if (slash == path)
			snprintf(dir, sizeof(dir), "/");
		else
			snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path),
				 path);
		if (emu_libc_stat(dir, &st))
			e = errno;
		else if (!S_ISDIR(st.st_mode))
			e = ENOTDIR;
		else if (emu_libc_access(dir, W_OK | X_OK))
			e = errno;
	}
	if (!e)
		return 0;
	emu_set_err(err, errlen, "--%s: cannot write '%s': %s", name, path,
		    strerror(e));
	return MANA_EMU_OPT_ERROR;
}

/*
 * --vm=NAME: a file name in the per-user runtime directory, so letters,
 * digits, '.', '_' and '-', not starting with '.'.
 */
int opt_parse_vm(struct mana_emu_options *opts, const char *val, char *err,
		 size_t errlen)
{
	size_t i, n = strlen(val);

	if (!n || n >= sizeof(opts->vm) || val[0] == '.') {
		emu_set_err(err, errlen, "--vm: invalid name '%s' (1..%zu "
			"letters, digits, '.', '_', '-'; no leading '.')",
			val, sizeof(opts->vm) - 1);
		return PARSE_ERR_SET;
	}
	for (i = 0; i < n; i++) {
		if (!isalnum((unsigned char)val[i]) && val[i] != '.' &&
		    val[i] != '_' && val[i] != '-') {
			emu_set_err(err, errlen, "--vm: invalid name '%s' "
				"(letters, digits, '.', '_', '-' only)", val);
			return PARSE_ERR_SET;
		}
	}
	memcpy(opts->vm, val, n + 1);
	return 0;
}

int opt_format_vm(const struct mana_emu_options *opts, char *buf, size_t len)
{
	if (!opts->vm[0])
		return 0;
	return snprintf(buf, len, "--vm=%s", opts->vm);
}
