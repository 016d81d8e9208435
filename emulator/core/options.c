/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Table-driven option parser for mana-emu.  To add an option, add one
 * row to opt_table (and a field to struct mana_emu_options); parsing,
 * error messages, the normalised MANA_EMU_OPTIONS string and --help all
 * follow from the row.  A value that is not a plain flag, number, choice
 * or path gets a parser and a formatter in option_values.c.
 */
#include "options.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/wire/backend.h"

enum opt_kind {
	OPT_FLAG,	/* bool field, no value */
	OPT_UINT,	/* unsigned int field, decimal value in [min, max] */
	OPT_ENUM,	/* unsigned int field, one of the choices */
	OPT_PATH,	/* char[MANA_EMU_PATH_MAX] field, "" = unset */
	OPT_CUSTOM,	/* parse/format callbacks */
};

struct opt_choice {
	const char *name;
	unsigned int value;
};

struct opt_def {
	const char *name;	/* long name without "--" */
	char short_name;	/* 0 when there is none */
	enum opt_kind kind;
	size_t offset;		/* field in struct mana_emu_options */
	unsigned long min, max;
	const struct opt_choice *choices;
	/* OPT_CUSTOM: 0, or -1 (generic message), or -2 (message in err) */
	int (*parse)(struct mana_emu_options *opts, const char *val,
		     char *err, size_t errlen);
	int (*format)(const struct mana_emu_options *opts, char *buf,
		      size_t len);
	/* OPT_CUSTOM with several words or none: writes whole "--name=v" words */
	int (*format_words)(const struct mana_emu_options *opts, char *buf,
			    size_t len);
	bool no_format;		/* not part of the normalised string */
	bool local;		/* the process's own, not the --vm VM's */
	const char *metavar;
	const char *help;
};

static const struct opt_choice provider_choices[] = {
	{ "ours", MANA_EMU_PROVIDER_OURS },
	{ "system", MANA_EMU_PROVIDER_SYSTEM },
	{}
};

static const struct opt_choice transport_choices[] = {
	{ "ioctl", MANA_EMU_TRANSPORT_IOCTL },
	{ "write", MANA_EMU_TRANSPORT_WRITE },
	{}
};

#define FIELD(f) offsetof(struct mana_emu_options, f)

static const struct opt_def opt_table[] = {
	{ .name = "provider", .local = true,
	  .kind = OPT_ENUM, .offset = FIELD(provider),
	  .choices = provider_choices, .metavar = "ours|system",
	  .help = "who serves the device: ours (lib/libmana.so.1,\n"
		  "                                 registered first) or the "
		  "system's libmana" },
	{ .name = "driver-id", .kind = OPT_UINT, .offset = FIELD(driver_id),
	  .min = 0, .max = 255, .metavar = "N",
	  .help = "driver id in netlink and ioctl headers (default 20)" },
	{ .name = "no-netlink", .kind = OPT_FLAG, .offset = FIELD(no_netlink),
	  .help = "no NETLINK_RDMA (socket() gets EPROTONOSUPPORT)" },
	{ .name = "transport", .kind = OPT_ENUM, .offset = FIELD(transport),
	  .choices = transport_choices, .metavar = "ioctl|write",
	  .help = "uverbs ABI (default ioctl); write: ioctls get ENOTTY" },
	{ .name = "ports", .kind = OPT_UINT, .offset = FIELD(ports), .min = 1,
	  .max = MANA_EMU_MAX_PORTS, .metavar = "N",
	  .help = "number of ports (default 1)" },
	{ .name = "mac", .kind = OPT_CUSTOM, .parse = opt_parse_mac,
	  .format = opt_format_mac, .metavar = "XX:XX:XX:XX:XX:XX",
	  .help = "port 1's MAC, port k adds k-1 (00:0d:3a:00:00:01)" },
	{ .name = "netdev-up", .kind = OPT_FLAG, .offset = FIELD(netdev_up),
	  .help = "the kernel netdev is up and holds every port" },
	{ .name = "max-qp-wr", .kind = OPT_UINT, .offset = FIELD(max_qp_wr),
	  .min = 64, .max = 1048576, .metavar = "N",
	  .help = "max_qp_wr and max_cqe (64..1048576, default 8192)" },
	{ .name = "backend", .kind = OPT_CUSTOM, .parse = opt_parse_backend,
	  .format_words = opt_format_backend, .metavar = "[PORT:]SPEC",
	  .help = "wire of every port, or of PORT: loopback (default),\n"
		  "                                 null, socket:PATH, tap:IFNAME" },
	{ .name = "pcap", .local = true,
	  .kind = OPT_PATH, .offset = FIELD(pcap), .metavar = "FILE",
	  .help = "capture every port's frames to FILE (pcap)" },
	{ .name = "stats", .local = true,
	  .kind = OPT_PATH, .offset = FIELD(stats), .metavar = "FILE",
	  .help = "write queue and port counters to FILE at exit\n"
		  "                                 (also " MANA_EMU_ENV_STATS
		  "=FILE)" },
	{ .name = "rx-coalesce", .kind = OPT_FLAG, .offset = FIELD(rx_coalesce),
	  .help = "pack up to 4 received frames per CQE (COALESCED_4)" },
	{ .name = "rx-hold", .kind = OPT_CUSTOM, .parse = opt_parse_rx_hold,
	  .format_words = opt_format_rx_hold, .metavar = "N",
	  .help = "frames an RQ without posted WQEs holds before it\n"
		  "                                 drops (0..65536, default 4096)" },
	{ .name = "fault", .local = true,
	  .kind = OPT_CUSTOM, .parse = opt_parse_fault,
	  .format_words = opt_format_fault, .metavar = "NAME=N[,...]",
	  .help = "fatal-after=N: device fatal after N frames sent;\n"
		  "                                 drop-cqe=N: withhold the Nth CQE;\n"
		  "                                 fail-cmd=N|NAME:ERRNO: fail the Nth uverbs\n"
		  "                                 command, or the first named NAME" },
	{ .name = "verbose", .local = true,
	  .kind = OPT_FLAG, .offset = FIELD(verbose),
	  .help = "log every emulated kernel command to stderr" },
	{ .name = "rss-hash", .kind = OPT_CUSTOM, .parse = opt_parse_rss_hash,
	  .format_words = opt_format_rss_hash, .metavar = "device|mask",
	  .help = "RSS input: device (default: 4-tuple for TCP/UDP,\n"
		  "                                 else IP pair) or the QP's fields mask" },
	{ .name = "help", .short_name = 'h', .local = true,
	  .kind = OPT_FLAG,
	  .offset = FIELD(help), .no_format = true,
	  .help = "show this help" },
	{ .name = "no-module", .kind = OPT_CUSTOM, .parse = opt_parse_no_module,
	  .format_words = opt_format_no_module, .metavar = "NAME[,...]",
	  .help = "kernel module not loaded: mana (no netdevs, no IB\n"
		  "                                 device), mana_ib, ib_uverbs" },
	{ .name = "uverbs-mode", .kind = OPT_CUSTOM, .parse = opt_parse_uverbs_mode,
	  .format_words = opt_format_uverbs_mode, .metavar = "MODE",
	  .help = "permissions of /dev/infiniband/uverbs0, owner root\n"
		  "                                 (octal, default 0666)" },
	{ .name = "hugepages", .kind = OPT_CUSTOM, .parse = opt_parse_hugepages,
	  .format_words = opt_format_hugepages, .metavar = "N",
	  .help = "2 MiB huge pages on NUMA node 0 in sysfs\n"
		  "                                 (0..1048576, default 1024)" },
	{ .name = "no-device", .kind = OPT_FLAG, .offset = FIELD(no_device),
	  .help = "no MANA PCI function (Accelerated Networking off)" },
	{ .name = "ip", .kind = OPT_CUSTOM, .parse = mana_emu_parse_ip,
	  .format_words = mana_emu_format_ip, .metavar = "[PORT:]ADDR/LEN",
	  .help = "address of port PORT's VF interface (default port 1;\n"
		  "                                 IPv4 or IPv6, repeatable): its RoCE GIDs" },
	{ .name = "mtu", .kind = OPT_CUSTOM, .parse = mana_emu_parse_mtu,
	  .format_words = mana_emu_format_mtu, .metavar = "N",
	  .help = "MTU of the VF interfaces (68..9000, default 1500)" },
	{ .name = "kernel", .kind = OPT_CUSTOM, .parse = mana_emu_parse_kernel,
	  .format_words = mana_emu_format_kernel, .metavar = "VERSION|newest",
	  .help = "mana_ib of that Linux version (6.2..7.2; default\n"
		  "                                 and newest: 7.2)" },
	{ .name = "era", .kind = OPT_CUSTOM, .parse = mana_emu_parse_era,
	  .metavar = "single|split", .no_format = true,
	  .help = "older name: single = --kernel=6.14, split = --kernel=7.0" },
	{ .name = "vm", .local = true, .kind = OPT_CUSTOM, .parse = opt_parse_vm,
	  .format_words = opt_format_vm, .metavar = "NAME",
	  .help = "join the emulated VM NAME (made by the first process\n"
		  "                                 naming it, with its options)" },
};

#define OPT_COUNT (sizeof(opt_table) / sizeof(opt_table[0]))
_Static_assert(OPT_COUNT <= 64, "mana_emu_options_given() has 64 bits");

/* rows the last parse saw (start-up only: one thread) */
static uint64_t opt_given;

uint64_t mana_emu_options_given(void)
{
	return opt_given;
}

void mana_emu_options_init(struct mana_emu_options *opts)
{
	static const uint8_t default_mac[6] = { 0x00, 0x0d, 0x3a,
						0x00, 0x00, 0x01 };

	memset(opts, 0, sizeof(*opts));
	opts->provider = MANA_EMU_PROVIDER_OURS;
	opts->driver_id = 20;
	opts->transport = MANA_EMU_TRANSPORT_IOCTL;
	opts->ports = 1;
	memcpy(opts->mac, default_mac, sizeof(default_mac));
	opts->max_qp_wr = 8192;
	opts->rx_hold = MANA_EMU_RX_HOLD_DEFAULT;
	opts->uverbs_mode = MANA_EMU_UVERBS_MODE_DEFAULT;
	opts->hugepages = MANA_EMU_HUGEPAGES_DEFAULT;
	opts->mtu = MANA_EMU_MTU_DEFAULT;
	opts->kernel = EMU_KERNEL_DEFAULT;
}

static bool *flag_field(struct mana_emu_options *opts,
			const struct opt_def *def)
{
	return (bool *)((char *)opts + def->offset);
}

static unsigned int *uint_field(struct mana_emu_options *opts,
				const struct opt_def *def)
{
	return (unsigned int *)((char *)opts + def->offset);
}

static char *path_field(struct mana_emu_options *opts, const struct opt_def *def)
{
	return (char *)opts + def->offset;
}

static void describe_expected(const struct opt_def *def, char *buf,
			      size_t len)
{
	const struct opt_choice *c;
	size_t used;

	switch (def->kind) {
	case OPT_UINT:
		snprintf(buf, len, "an integer %lu..%lu", def->min, def->max);
		return;
	case OPT_ENUM:
		used = snprintf(buf, len, "one of");
		for (c = def->choices; c->name && used < len; c++)
			used += snprintf(buf + used, len - used, " %s",
					 c->name);
		return;
	default:
		snprintf(buf, len, "%s", def->metavar ? def->metavar : "?");
	}
}

static int apply_value(struct mana_emu_options *opts,
		       const struct opt_def *def, const char *val, char *err,
		       size_t errlen)
{
	const struct opt_choice *c;
	char expected[128];
	int ret = -1;

	switch (def->kind) {
	case OPT_FLAG:
		*flag_field(opts, def) = true;
		return 0;
	case OPT_UINT:
		ret = opt_parse_uint(val, def->min, def->max,
				     uint_field(opts, def));
		break;
	case OPT_ENUM:
		for (c = def->choices; c->name; c++) {
			if (!strcmp(c->name, val)) {
				*uint_field(opts, def) = c->value;
				ret = 0;
				break;
			}
		}
		break;
	case OPT_PATH:
		if (opt_copy_value(path_field(opts, def), MANA_EMU_PATH_MAX,
				   val, def->name, err, errlen) ||
		    opt_check_out_path(val, def->name, err, errlen))
			return MANA_EMU_OPT_ERROR;
		return 0;
	case OPT_CUSTOM:
		ret = def->parse(opts, val, err, errlen);
		if (ret == PARSE_ERR_SET)
			return MANA_EMU_OPT_ERROR;
		break;
	}
	if (!ret)
		return 0;
	describe_expected(def, expected, sizeof(expected));
	emu_set_err(err, errlen, "--%s: invalid value '%s' (expected %s)",
		def->name, val, expected);
	return MANA_EMU_OPT_ERROR;
}

static const struct opt_def *find_long(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < OPT_COUNT; i++) {
		if (strlen(opt_table[i].name) == len &&
		    !strncmp(opt_table[i].name, name, len))
			return &opt_table[i];
	}
	return NULL;
}

static const struct opt_def *find_short(char c)
{
	size_t i;

	for (i = 0; i < OPT_COUNT; i++)
		if (opt_table[i].short_name && opt_table[i].short_name == c)
			return &opt_table[i];
	return NULL;
}

/*
 * Parse one option word.  *used tells the caller whether the next word
 * was taken as the value ("--ports 2").
 */
static int parse_one(struct mana_emu_options *opts, const char *word,
		     const char *next, bool *used_next, char *err,
		     size_t errlen)
{
	const struct opt_def *def;
	const char *name, *eq, *val = NULL;

	*used_next = false;
	if (word[0] == '-' && word[1] && word[1] != '-' && !word[2]) {
		def = find_short(word[1]);
	} else if (!strncmp(word, "--", 2) && word[2]) {
		name = word + 2;
		eq = strchr(name, '=');
		def = find_long(name, eq ? (size_t)(eq - name) : strlen(name));
		if (eq)
			val = eq + 1;
	} else {
		def = NULL;
	}
	if (!def) {
		emu_set_err(err, errlen, "unknown option '%s'", word);
		return MANA_EMU_OPT_ERROR;
	}
	/* --era is another spelling of --kernel */
	opt_given |= 1ull << (strcmp(def->name, "era") ? def - opt_table :
				find_long("kernel", 6) - opt_table);
	if (def->kind == OPT_FLAG) {
		if (val) {
			emu_set_err(err, errlen, "--%s does not take a value",
				def->name);
			return MANA_EMU_OPT_ERROR;
		}
		return apply_value(opts, def, NULL, err, errlen);
	}
	if (!val) {
		/* "--ports --verbose": the next option is not a value */
		if (!next || (next[0] == '-' && next[1])) {
			emu_set_err(err, errlen, "--%s requires a value (%s)",
				def->name, def->metavar);
			return MANA_EMU_OPT_ERROR;
		}
		val = next;
		*used_next = true;
	}
	return apply_value(opts, def, val, err, errlen);
}

/* Options that name a port must name one that exists. */
static int check_ports(const struct mana_emu_options *opts, char *err,
		       size_t errlen)
{
	unsigned int i;

	for (i = opts->ports; i < MANA_EMU_MAX_PORTS; i++) {
		if (!opts->port_backend[i][0])
			continue;
		emu_set_err(err, errlen, "--backend=%u:%s: there is no port %u "
			"(--ports=%u)", i + 1, opts->port_backend[i], i + 1,
			opts->ports);
		return MANA_EMU_OPT_ERROR;
	}
	return mana_emu_check_ips(opts, err, errlen);
}

int mana_emu_options_parse_argv(struct mana_emu_options *opts, int argc,
				char *const argv[], int *consumed, char *err,
				size_t errlen)
{
	int i = 0;

	opt_given = 0;
	while (i < argc) {
		const char *word = argv[i];
		bool used_next;

		if (!strcmp(word, "--")) {
			i++;
			break;
		}
		if (word[0] != '-' || !word[1])
			break;
		if (parse_one(opts, word, i + 1 < argc ? argv[i + 1] : NULL,
			      &used_next, err, errlen))
			return MANA_EMU_OPT_ERROR;
		i += used_next ? 2 : 1;
	}
	if (consumed)
		*consumed = i;
	return check_ports(opts, err, errlen);
}

/* Split on blanks, honouring '...' and "..." (no escapes inside). */
static int split_words(const char *str, char ***words_out, int *count_out)
{
	size_t len = strlen(str);
	char **words = calloc(len / 2 + 2, sizeof(*words));
	char *buf = malloc(len + 1);
	char *out = buf;
	int count = 0;

	if (!words || !buf)
		goto err;
	while (*str) {
		char quote = 0;

		while (isspace((unsigned char)*str))
			str++;
		if (!*str)
			break;
		words[count++] = out;
		while (*str && (quote || !isspace((unsigned char)*str))) {
			if (!quote && (*str == '\'' || *str == '"'))
				quote = *str;
			else if (quote && *str == quote)
				quote = 0;
			else
				*out++ = *str;
			str++;
		}
		if (quote)
			goto err;
		*out++ = 0;
	}
	if (!count)
		free(buf);
	*words_out = words;
	*count_out = count;
	return 0;
err:
	free(words);
	free(buf);
	return -1;
}

int mana_emu_options_parse_string(struct mana_emu_options *opts,
				  const char *str, char *err, size_t errlen)
{
	char **words;
	int count, consumed, ret;

	if (split_words(str, &words, &count)) {
		emu_set_err(err, errlen, "%s: unbalanced quote or out of memory",
			MANA_EMU_ENV_OPTIONS);
		return MANA_EMU_OPT_ERROR;
	}
	ret = mana_emu_options_parse_argv(opts, count, words, &consumed, err,
					  errlen);
	if (!ret && consumed != count) {
		/* A command or "--" makes no sense in the environment form. */
		emu_set_err(err, errlen, "%s: unexpected word '%s'",
			MANA_EMU_ENV_OPTIONS,
			consumed > 0 && !strcmp(words[consumed - 1], "--") ?
				"--" : words[consumed]);
		ret = MANA_EMU_OPT_ERROR;
	}
	if (count)
		free(words[0]);
	free(words);
	return ret;
}

static int format_one(const struct mana_emu_options *opts,
		      const struct opt_def *def, char *buf, size_t len)
{
	struct mana_emu_options *o = (struct mana_emu_options *)opts;
	const struct opt_choice *c;
	size_t used = 0;
	unsigned int v;
	char tmp[64];

	switch (def->kind) {
	case OPT_FLAG:
		return *flag_field(o, def) ? snprintf(buf, len, "--%s",
						      def->name) : 0;
	case OPT_UINT:
		return snprintf(buf, len, "--%s=%u", def->name,
				*uint_field(o, def));
	case OPT_ENUM:
		v = *uint_field(o, def);
		for (c = def->choices; c->name; c++)
			if (c->value == v)
				return snprintf(buf, len, "--%s=%s", def->name,
						c->name);
		return 0;
	case OPT_PATH:
		if (!*path_field(o, def))
			return 0;
		opt_word_append(buf, len, &used, def->name, path_field(o, def));
		return used;
	case OPT_CUSTOM:
		def->format(opts, tmp, sizeof(tmp));
		return snprintf(buf, len, "--%s=%s", def->name, tmp);
	}
	return 0;
}

static void append(char *buf, size_t len, size_t *used, const char *s)
{
	if (buf && *used < len)
		snprintf(buf + *used, len - *used, "%s", s);
	*used += strlen(s);
}

int mana_emu_options_format(const struct mana_emu_options *opts, char *buf,
			    size_t len)
{
	/* room for every per-port backend and both paths */
	static __thread char piece[MANA_EMU_MAX_PORTS * (MANA_EMU_SPEC_MAX + 16) +
				   2 * MANA_EMU_PATH_MAX];
	size_t used = 0, i;

	if (buf && len)
		buf[0] = 0;
	for (i = 0; i < OPT_COUNT; i++) {
		if (opt_table[i].no_format)
			continue;
		if (opt_table[i].format_words) {
			piece[0] = 0;
			opt_table[i].format_words(opts, piece, sizeof(piece));
			if (!piece[0])
				continue;
		} else if (format_one(opts, &opt_table[i], piece,
				      sizeof(piece)) <= 0) {
			continue;
		}
		if (used)
			append(buf, len, &used, " ");
		append(buf, len, &used, piece);
	}
	return used;
}

/* One row as the normalised string writes it ("" when it writes nothing). */
static void format_row(const struct mana_emu_options *opts,
		       const struct opt_def *def, char *buf, size_t len)
{
	buf[0] = 0;
	if (def->format_words)
		def->format_words(opts, buf, len);
	else if (format_one(opts, def, buf, len) <= 0)
		buf[0] = 0;
}

int mana_emu_options_vm_merge(const struct mana_emu_options *vm,
			      struct mana_emu_options *mine, uint64_t given,
			      char *err, size_t errlen)
{
	static __thread char a[MANA_EMU_MAX_PORTS * (MANA_EMU_SPEC_MAX + 16) +
			       2 * MANA_EMU_PATH_MAX];
	static __thread char b[sizeof(a)];
	struct mana_emu_options merged = *vm;
	size_t i;

	for (i = 0; i < OPT_COUNT; i++) {
		const struct opt_def *def = &opt_table[i];

		if (def->local || def->no_format || !(given >> i & 1))
			continue;
		format_row(mine, def, a, sizeof(a));
		format_row(vm, def, b, sizeof(b));
		if (!strcmp(a, b))
			continue;
		emu_set_err(err, errlen, "--vm=%s: --%s: this process asks for "
			"'%s', the VM has '%s'", mine->vm, def->name,
			a[0] ? a : "(default)", b[0] ? b : "(default)");
		return MANA_EMU_OPT_ERROR;
	}
	/* the process's own options stay */
	merged.provider = mine->provider;
	merged.verbose = mine->verbose;
	merged.help = mine->help;
	memcpy(merged.pcap, mine->pcap, sizeof(merged.pcap));
	memcpy(merged.stats, mine->stats, sizeof(merged.stats));
	merged.fault_fatal_after = mine->fault_fatal_after;
	merged.fault_drop_cqe = mine->fault_drop_cqe;
	merged.fault_drop_roce = mine->fault_drop_roce;
	merged.fault_reorder_roce = mine->fault_reorder_roce;
	merged.fault_fail_cmd = mine->fault_fail_cmd;
	merged.fault_fail_errno = mine->fault_fail_errno;
	memcpy(merged.fault_fail_name, mine->fault_fail_name,
	       sizeof(merged.fault_fail_name));
	memcpy(merged.vm, mine->vm, sizeof(merged.vm));
	*mine = merged;
	return 0;
}

void mana_emu_options_usage(FILE *out, const char *prog)
{
	size_t i;

	fprintf(out,
		"Usage: %s [options] -- COMMAND [ARGS...]\n"
		"Run COMMAND against an emulated MANA device (mana_0).\n\n"
		"Options:\n", prog);
	for (i = 0; i < OPT_COUNT; i++) {
		const struct opt_def *def = &opt_table[i];
		char left[64], shortopt[8] = "    ";

		if (def->short_name)
			snprintf(shortopt, sizeof(shortopt), "-%c, ",
				 def->short_name);
		if (def->kind == OPT_FLAG)
			snprintf(left, sizeof(left), "%s--%s", shortopt,
				 def->name);
		else
			snprintf(left, sizeof(left), "%s--%s=%s", shortopt,
				 def->name, def->metavar);
		fprintf(out, "  %-30s %s\n", left, def->help);
	}
	fprintf(out,
		"\nWithout the launcher, preload the library and give the same "
		"options\n(except --help) in the environment variable %s.\n",
		MANA_EMU_ENV_OPTIONS);
}

const char *mana_emu_port_backend(const struct mana_emu_options *opts,
				  unsigned int port)
{
	if (port >= 1 && port <= MANA_EMU_MAX_PORTS &&
	    opts->port_backend[port - 1][0])
		return opts->port_backend[port - 1];
	return opts->backend[0] ? opts->backend : "loopback";
}

void mana_emu_port_mac(const struct mana_emu_options *opts, unsigned int port,
		       uint8_t mac[6])
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 6; i++)
		v = v << 8 | opts->mac[i];
	v += port ? port - 1 : 0;
	for (i = 5; i >= 0; i--, v >>= 8)
		mac[i] = v & 0xff;
}
