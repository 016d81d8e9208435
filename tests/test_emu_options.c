/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Table-driven test of the mana-emu option parser: every option with good
 * and bad values, both the launcher (argv) and the environment
 * (MANA_EMU_OPTIONS) forms, and the normalised string round trip.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "emulator/core/options.h"
#include "check.h"

#define ANY (-1)

/* Expected fields after a successful parse; ANY or NULL = not checked. */
struct expect {
	int provider, driver_id, no_netlink, transport, ports, netdev_up;
	int max_qp_wr, verbose, help, rx_coalesce, rx_hold;
	long long fault_fatal_after, fault_drop_cqe;
	const char *mac;
	const char *backend, *port2_backend, *pcap, *stats;
};

enum form { BOTH, ARGV_ONLY, ENV_ONLY };

struct parse_case {
	const char *args;	/* blank separated words */
	enum form form;
	bool ok;
	const char *err;	/* substring of the message when !ok */
	struct expect want;
};

/* Every field unchecked, then the designated ones the case cares about. */
#pragma GCC diagnostic ignored "-Woverride-init"
#define W(...)                                                                 \
	{ .provider = ANY, .driver_id = ANY, .no_netlink = ANY,                \
	  .transport = ANY, .ports = ANY, .netdev_up = ANY, .max_qp_wr = ANY,  \
	  .verbose = ANY, .help = ANY, .rx_coalesce = ANY, .rx_hold = ANY,     \
	  .fault_fatal_after = ANY, .fault_drop_cqe = ANY, __VA_ARGS__ }
#define OK(_args, ...) { _args, BOTH, true, NULL, W(__VA_ARGS__) }
#define BAD(_args, _err) { _args, BOTH, false, _err, W() }

static const struct parse_case cases[] = {
	/* defaults */
	OK("", .provider = MANA_EMU_PROVIDER_OURS, .driver_id = 20,
	   .no_netlink = 0, .transport = MANA_EMU_TRANSPORT_IOCTL, .ports = 1,
	   .netdev_up = 0, .max_qp_wr = 8192, .verbose = 0, .help = 0,
	   .mac = "00:0d:3a:00:00:01"),

	/* --provider */
	OK("--provider=ours", .provider = MANA_EMU_PROVIDER_OURS),
	OK("--provider=system", .provider = MANA_EMU_PROVIDER_SYSTEM),
	OK("--provider system", .provider = MANA_EMU_PROVIDER_SYSTEM),
	BAD("--provider=mine", "--provider: invalid value 'mine'"),
	BAD("--provider=", "--provider: invalid value ''"),
	BAD("--provider", "--provider requires a value"),
	BAD("--ports --verbose", "--ports requires a value (N)"),

	/* --driver-id */
	OK("--driver-id=0", .driver_id = 0),
	OK("--driver-id=19", .driver_id = 19),
	OK("--driver-id=255", .driver_id = 255),
	OK("--driver-id 7", .driver_id = 7),
	BAD("--driver-id=256", "--driver-id: invalid value '256'"),
	BAD("--driver-id=-1", "--driver-id"),
	BAD("--driver-id=+1", "--driver-id"),
	BAD("--driver-id=0x14", "--driver-id"),
	BAD("--driver-id=20x", "--driver-id"),
	BAD("--driver-id=", "--driver-id"),
	BAD("--driver-id=99999999999999999999", "--driver-id"),

	/* --no-netlink */
	OK("--no-netlink", .no_netlink = 1),
	BAD("--no-netlink=1", "--no-netlink does not take a value"),

	/* --transport */
	OK("--transport=ioctl", .transport = MANA_EMU_TRANSPORT_IOCTL),
	OK("--transport=write", .transport = MANA_EMU_TRANSPORT_WRITE),
	BAD("--transport=netlink", "expected one of ioctl write"),
	BAD("--transport=WRITE", "--transport"),

	/* --ports */
	OK("--ports=1", .ports = 1),
	OK("--ports=8", .ports = 8),
	BAD("--ports=0", "expected an integer 1..8"),
	BAD("--ports=9", "--ports: invalid value '9'"),
	BAD("--ports=two", "--ports"),

	/* --mac */
	OK("--mac=02:11:22:33:44:55", .mac = "02:11:22:33:44:55"),
	OK("--mac=AA:BB:CC:DD:EE:0F", .mac = "aa:bb:cc:dd:ee:0f"),
	BAD("--mac=01:00:5e:00:00:01", "--mac: invalid value"),
	BAD("--mac=ff:ff:ff:ff:ff:ff", "--mac"),
	BAD("--mac=00:0d:3a:00:00", "--mac"),
	BAD("--mac=00:0d:3a:00:00:011", "--mac"),
	BAD("--mac=00-0d-3a-00-00-01", "--mac"),
	BAD("--mac=00:0d:3a:00:00:0g", "--mac"),
	BAD("--mac=0:d:3a:0:0:1", "--mac"),
	BAD("--mac=", "--mac"),

	/* --netdev-up */
	OK("--netdev-up", .netdev_up = 1),
	BAD("--netdev-up=yes", "--netdev-up does not take a value"),

	/* --max-qp-wr */
	OK("--max-qp-wr=64", .max_qp_wr = 64),
	OK("--max-qp-wr=1048576", .max_qp_wr = 1048576),
	BAD("--max-qp-wr=63", "expected an integer 64..1048576"),
	BAD("--max-qp-wr=1048577", "--max-qp-wr"),

	/* --verbose, --help */
	OK("--verbose", .verbose = 1),
	OK("-h", .help = 1),
	OK("--help", .help = 1),

	/* --backend: every port, or PORT:SPEC */
	OK("", .backend = "", .port2_backend = "", .pcap = "", .stats = "",
	   .rx_coalesce = 0, .rx_hold = 4096, .fault_fatal_after = 0,
	   .fault_drop_cqe = 0),
	OK("--backend=null", .backend = "null"),
	OK("--backend=loopback", .backend = "loopback"),
	OK("--backend=socket:/tmp/mana.sock", .backend = "socket:/tmp/mana.sock"),
	OK("--backend=tap:tap7", .backend = "tap:tap7"),
	OK("--ports=2 --backend=2:null", .backend = "", .port2_backend = "null"),
	OK("--backend=2:null --ports=2", .port2_backend = "null"),
	OK("--ports=2 --backend=2:null --backend=loopback", .backend = "loopback",
	   .port2_backend = ""),
	BAD("--backend=bogus", "--backend:"),
	BAD("--backend=", "--backend"),
	BAD("--backend=9:null", "PORT 1..8"),
	BAD("--backend=0:null", "--backend"),
	BAD("--backend=2:null", "there is no port 2"),
	BAD("--backend=socket:", "--backend"),

	/* --pcap, --stats */
	OK("--pcap=/tmp/x.pcap", .pcap = "/tmp/x.pcap"),
	OK("--stats=/tmp/stats.txt", .stats = "/tmp/stats.txt"),
	BAD("--pcap=", "--pcap: empty value"),
	BAD("--stats=", "--stats: empty value"),
	{ "--pcap='/tmp/a b.pcap'", ENV_ONLY, true, NULL,
	  W(.pcap = "/tmp/a b.pcap") },

	/* --rx-coalesce, --rx-hold */
	OK("--rx-coalesce", .rx_coalesce = 1),
	BAD("--rx-coalesce=yes", "--rx-coalesce does not take a value"),
	OK("--rx-hold=0", .rx_hold = 0),
	OK("--rx-hold=65536", .rx_hold = 65536),
	BAD("--rx-hold=65537", "--rx-hold: invalid value '65537'"),
	BAD("--rx-hold=-1", "--rx-hold"),

	/* --fault */
	OK("--fault=fatal-after=10", .fault_fatal_after = 10,
	   .fault_drop_cqe = 0),
	OK("--fault=drop-cqe=3", .fault_drop_cqe = 3, .fault_fatal_after = 0),
	OK("--fault=fatal-after=1,drop-cqe=2", .fault_fatal_after = 1,
	   .fault_drop_cqe = 2),
	OK("--fault=fatal-after=1 --fault=drop-cqe=2", .fault_fatal_after = 1,
	   .fault_drop_cqe = 2),
	BAD("--fault=fatal-after=0", "--fault: invalid value"),
	BAD("--fault=fatal-after=x", "--fault"),
	BAD("--fault=bogus=1", "--fault"),
	BAD("--fault=drop-cqe=1,", "--fault"),
	BAD("--fault=", "--fault"),

	/* unknown options */
	BAD("--bogus", "unknown option '--bogus'"),
	BAD("--bogus=1", "unknown option '--bogus=1'"),
	BAD("-x", "unknown option '-x'"),
	BAD("--port=2", "unknown option '--port=2'"),
	BAD("--ports=2 --bogus", "unknown option '--bogus'"),

	/* combinations; the last value wins */
	OK("--ports=2 --no-netlink --transport=write --netdev-up",
	   .no_netlink = 1, .transport = MANA_EMU_TRANSPORT_WRITE, .ports = 2,
	   .netdev_up = 1),
	OK("--ports=2 --ports=3", .ports = 3),

	/* environment form only: blanks, quoting, stray words */
	{ "  --ports=4\t--mac='02:00:00:00:00:07'  ", ENV_ONLY, true, NULL,
	  W(.ports = 4, .mac = "02:00:00:00:00:07") },
	{ "--provider=\"system\"", ENV_ONLY, true, NULL,
	  W(.provider = MANA_EMU_PROVIDER_SYSTEM) },
	{ "--mac='02:00:00:00:00:07", ENV_ONLY, false, "unbalanced quote",
	  W() },
	{ "--ports=2 true", ENV_ONLY, false, "unexpected word 'true'", W() },
	{ "--ports=2 -- true", ENV_ONLY, false, "unexpected word '--'", W() },
};

static void split(const char *args, char *buf, size_t len, char **argv,
		  int *argc)
{
	char *tok, *save = NULL;

	snprintf(buf, len, "%s", args);
	*argc = 0;
	for (tok = strtok_r(buf, " \t", &save); tok;
	     tok = strtok_r(NULL, " \t", &save))
		argv[(*argc)++] = tok;
	argv[*argc] = NULL;
}

static void format_mac(const uint8_t *m, char *buf)
{
	sprintf(buf, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3],
		m[4], m[5]);
}

#define CHECK_FIELD(o, w, f, what)                                             \
	CHECK((w)->f == ANY || (int)(o)->f == (w)->f,                          \
	      "%s: %s: " #f " = %d, want %d", what, c->args, (int)(o)->f,     \
	      (w)->f)

static void check_fields(const struct parse_case *c,
			 const struct mana_emu_options *o, const char *what)
{
	const struct expect *w = &c->want;
	char mac[32];

	CHECK_FIELD(o, w, provider, what);
	CHECK_FIELD(o, w, driver_id, what);
	CHECK_FIELD(o, w, no_netlink, what);
	CHECK_FIELD(o, w, transport, what);
	CHECK_FIELD(o, w, ports, what);
	CHECK_FIELD(o, w, netdev_up, what);
	CHECK_FIELD(o, w, max_qp_wr, what);
	CHECK_FIELD(o, w, verbose, what);
	CHECK_FIELD(o, w, help, what);
	CHECK_FIELD(o, w, rx_coalesce, what);
	CHECK_FIELD(o, w, rx_hold, what);
	CHECK(w->fault_fatal_after == ANY ||
	      (long long)o->fault_fatal_after == w->fault_fatal_after,
	      "%s: %s: fatal-after %llu", what, c->args, o->fault_fatal_after);
	CHECK(w->fault_drop_cqe == ANY ||
	      (long long)o->fault_drop_cqe == w->fault_drop_cqe,
	      "%s: %s: drop-cqe %llu", what, c->args, o->fault_drop_cqe);
	format_mac(o->mac, mac);
	CHECK(!w->mac || !strcmp(mac, w->mac), "%s: %s: mac %s, want %s",
	      what, c->args, mac, w->mac);
	CHECK(!w->backend || !strcmp(o->backend, w->backend),
	      "%s: %s: backend '%s'", what, c->args, o->backend);
	CHECK(!w->port2_backend || !strcmp(o->port_backend[1], w->port2_backend),
	      "%s: %s: port 2 backend '%s'", what, c->args, o->port_backend[1]);
	CHECK(!w->pcap || !strcmp(o->pcap, w->pcap), "%s: %s: pcap '%s'", what,
	      c->args, o->pcap);
	CHECK(!w->stats || !strcmp(o->stats, w->stats), "%s: %s: stats '%s'",
	      what, c->args, o->stats);
}

static void check_result(const struct parse_case *c, int ret,
			 const struct mana_emu_options *o, const char *err,
			 const char *what)
{
	if (c->ok) {
		CHECK(ret == 0, "%s: '%s' failed: %s", what, c->args, err);
		if (!ret)
			check_fields(c, o, what);
		return;
	}
	CHECK(ret == MANA_EMU_OPT_ERROR, "%s: '%s' accepted", what, c->args);
	CHECK(strstr(err, c->err) != NULL, "%s: '%s': message '%s' lacks '%s'",
	      what, c->args, err, c->err);
}

static void run_argv(const struct parse_case *c)
{
	struct mana_emu_options o;
	char buf[256], err[256] = "", *argv[32];
	int argc, consumed = -1, ret;

	split(c->args, buf, sizeof(buf), argv, &argc);
	mana_emu_options_init(&o);
	ret = mana_emu_options_parse_argv(&o, argc, argv, &consumed, err,
					  sizeof(err));
	check_result(c, ret, &o, err, "argv");
	if (c->ok && !ret)
		CHECK(consumed == argc, "argv: '%s': consumed %d of %d",
		      c->args, consumed, argc);
}

static void run_env(const struct parse_case *c)
{
	struct mana_emu_options o;
	char err[256] = "";
	int ret;

	mana_emu_options_init(&o);
	ret = mana_emu_options_parse_string(&o, c->args, err, sizeof(err));
	check_result(c, ret, &o, err, "env");
}

/* Launcher parsing stops at "--" or at the command. */
static void test_argv_stop(void)
{
	char *argv1[] = { "--ports=2", "--", "--verbose", NULL };
	char *argv2[] = { "--no-netlink", "ibv_devinfo", "-v", NULL };
	char *argv3[] = { "--ports", "3", "cmd", NULL };
	struct mana_emu_options o;
	char err[256];
	int consumed;

	mana_emu_options_init(&o);
	CHECK(!mana_emu_options_parse_argv(&o, 3, argv1, &consumed, err,
					   sizeof(err)), "%s", err);
	CHECK(consumed == 2 && o.ports == 2 && !o.verbose,
	      "consumed %d ports %u verbose %d", consumed, o.ports, o.verbose);

	mana_emu_options_init(&o);
	CHECK(!mana_emu_options_parse_argv(&o, 3, argv2, &consumed, err,
					   sizeof(err)), "%s", err);
	CHECK(consumed == 1 && o.no_netlink, "consumed %d", consumed);

	mana_emu_options_init(&o);
	CHECK(!mana_emu_options_parse_argv(&o, 3, argv3, &consumed, err,
					   sizeof(err)), "%s", err);
	CHECK(consumed == 2 && o.ports == 3, "consumed %d ports %u", consumed,
	      o.ports);
}

/* The normalised string is exact and parses back to the same options. */
static void test_format(void)
{
	static const char *inputs[] = {
		"",
		"--provider=system --driver-id=19 --no-netlink --transport=write "
		"--ports=8 --mac=02:aa:bb:cc:dd:ee --netdev-up --max-qp-wr=64 "
		"--verbose",
		"--ports=3 --backend=socket:/tmp/s --backend=3:tap:t0 "
		"--pcap='/tmp/with blank.pcap' --stats=\"/tmp/it's.txt\" "
		"--rx-coalesce --rx-hold=7 --fault=drop-cqe=9,fatal-after=100",
	};
	struct mana_emu_options a, b;
	char buf[8192], err[256];
	size_t i;
	int n;

	mana_emu_options_init(&a);
	n = mana_emu_options_format(&a, buf, sizeof(buf));
	CHECK(!strcmp(buf, "--provider=ours --driver-id=20 --transport=ioctl "
			   "--ports=1 --mac=00:0d:3a:00:00:01 "
			   "--max-qp-wr=8192"),
	      "default normalised string '%s'", buf);
	CHECK(n == (int)strlen(buf), "length %d vs %zu", n, strlen(buf));
	CHECK(mana_emu_options_format(&a, NULL, 0) == n,
	      "length query differs");
	CHECK(mana_emu_options_format(&a, buf, 10) == n && strlen(buf) == 9,
	      "truncated output '%s'", buf);

	for (i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		mana_emu_options_init(&a);
		CHECK(!mana_emu_options_parse_string(&a, inputs[i], err,
						     sizeof(err)), "%s", err);
		mana_emu_options_format(&a, buf, sizeof(buf));
		mana_emu_options_init(&b);
		CHECK(!mana_emu_options_parse_string(&b, buf, err, sizeof(err)),
		      "reparse '%s': %s", buf, err);
		CHECK(!memcmp(&a, &b, sizeof(a)), "round trip of '%s' via '%s'",
		      inputs[i], buf);
	}
	/* a changed --rx-hold and the other new options appear, quoted */
	mana_emu_options_init(&a);
	CHECK(!mana_emu_options_parse_string(&a, inputs[2], err, sizeof(err)),
	      "%s", err);
	mana_emu_options_format(&a, buf, sizeof(buf));
	CHECK(strstr(buf, "--backend=socket:/tmp/s --backend=3:tap:t0") &&
	      strstr(buf, "--pcap='/tmp/with blank.pcap'") &&
	      strstr(buf, "--stats=\"/tmp/it's.txt\"") &&
	      strstr(buf, "--rx-hold=7") &&
	      strstr(buf, "--fault=fatal-after=100,drop-cqe=9"),
	      "normalised '%s'", buf);
	CHECK(mana_emu_options_parse_string(&a, "--pcap=\"a'b\"\"c\"", err,
					    sizeof(err)) != 0 ||
	      !strchr(a.pcap, '"') || !strchr(a.pcap, '\''),
	      "a value with both quotes");

	mana_emu_options_init(&a);
	a.help = true;
	mana_emu_options_format(&a, buf, sizeof(buf));
	CHECK(!strstr(buf, "help"), "--help leaked into '%s'", buf);
}

/* The VM around the device (mana-diag's failures): values and the parts they remove. */
static void test_vm_options(void)
{
	static const char *const bad[] = {
		"--no-module=", "--no-module=mlx5", "--no-module=mana,", "--no-module=,mana",
		"--uverbs-mode=0800", "--uverbs-mode=01000", "--uverbs-mode=rw",
		"--uverbs-mode=-1", "--hugepages=-1", "--hugepages=x",
		"--hugepages=1048577", "--no-device=1",
	};
	struct mana_emu_options a, b;
	char buf[4096], err[256];
	size_t i;

	mana_emu_options_init(&a);
	CHECK(a.uverbs_mode == 0666 && a.hugepages == 1024 && !a.no_modules &&
	      !a.no_device, "defaults");
	CHECK(mana_emu_has_uverbs(&a) && mana_emu_has_netdevs(&a), "default parts");
	CHECK(!mana_emu_options_parse_string(&a, "--no-module=mana_ib "
		"--no-module=ib_uverbs --uverbs-mode=0600 --hugepages=0 --no-device",
		err, sizeof(err)), "%s", err);
	CHECK(a.no_modules == (MANA_EMU_MOD_MANA_IB | MANA_EMU_MOD_IB_UVERBS) &&
	      a.uverbs_mode == 0600 && a.hugepages == 0 && a.no_device,
	      "parsed fields");
	mana_emu_options_format(&a, buf, sizeof(buf));
	CHECK(strstr(buf, "--no-module=mana_ib,ib_uverbs") &&
	      strstr(buf, "--uverbs-mode=0600") && strstr(buf, "--hugepages=0") &&
	      strstr(buf, "--no-device"), "normalised '%s'", buf);
	mana_emu_options_init(&b);
	CHECK(!mana_emu_options_parse_string(&b, buf, err, sizeof(err)) &&
	      !memcmp(&a, &b, sizeof(a)), "round trip via '%s'", buf);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		mana_emu_options_init(&a);
		CHECK(mana_emu_options_parse_string(&a, bad[i], err, sizeof(err)) &&
		      (strstr(err, "invalid value") || strstr(err, "does not take")),
		      "'%s' accepted or unclear: %s", bad[i], err);
	}
	/* which parts exist: mana makes the netdevs, mana_ib (needing mana) the device */
	mana_emu_options_init(&a);
	a.no_modules = MANA_EMU_MOD_MANA;
	CHECK(!mana_emu_has_netdevs(&a) && !mana_emu_has_ibdev(&a) &&
	      mana_emu_module_loaded(&a, MANA_EMU_MOD_IB_UVERBS), "without mana");
	a.no_modules = MANA_EMU_MOD_IB_UVERBS;
	CHECK(mana_emu_has_ibdev(&a) && !mana_emu_has_uverbs(&a), "without ib_uverbs");
	a.no_modules = 0;
	a.no_device = true;
	CHECK(!mana_emu_has_netdevs(&a) && !mana_emu_has_ibdev(&a) &&
	      !mana_emu_module_loaded(&a, MANA_EMU_MOD_MANA), "without a device");
}

/*
 * --vm=NAME and joining a VM: a valid name round-trips; a joiner's
 * device options must match the VM's where it gives them (one message
 * naming the option and both values), are the VM's where it does not, and
 * its own process options (--verbose, --stats, --fault, --vm) stay.
 */
static void test_vm_join(void)
{
	static const char *const bad[] = {
		"--vm=", "--vm=.x", "--vm=a/b", "--vm='a b'",
		"--vm=0123456789012345678901234567890123456789"
		"012345678901234567890123",	/* 64 characters */
	};
	struct mana_emu_options vm, me, b;
	char buf[4096], err[256];
	size_t i;

	mana_emu_options_init(&vm);
	CHECK(!mana_emu_options_parse_string(&vm, "--vm=v1 --ports=2 "
		"--mac=00:0d:3a:aa:bb:01 --kernel=7.1", err, sizeof(err)), "%s", err);
	CHECK(!strcmp(vm.vm, "v1"), "name '%s'", vm.vm);
	mana_emu_options_format(&vm, buf, sizeof(buf));
	mana_emu_options_init(&b);
	CHECK(strstr(buf, "--vm=v1") &&
	      !mana_emu_options_parse_string(&b, buf, err, sizeof(err)) &&
	      !memcmp(&vm, &b, sizeof(vm)), "round trip '%s'", buf);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		mana_emu_options_init(&b);
		CHECK(mana_emu_options_parse_string(&b, bad[i], err, sizeof(err)) &&
		      strstr(err, "--vm"), "'%s' accepted: %s", bad[i], err);
	}
	/* the same value where given, the VM's elsewhere, its own options kept */
	mana_emu_options_init(&me);
	CHECK(!mana_emu_options_parse_string(&me, "--vm=v1 --ports=2 --verbose "
		"--fault=drop-cqe=3", err, sizeof(err)), "%s", err);
	CHECK(!mana_emu_options_vm_merge(&vm, &me, mana_emu_options_given(), err,
					 sizeof(err)), "merge: %s", err);
	CHECK(me.ports == 2 && me.mac[4] == 0xbb && me.kernel == vm.kernel &&
	      me.verbose && me.fault_drop_cqe == 3 && !strcmp(me.vm, "v1"),
	      "merged options");
	/* a contradiction: the option and both values, the options untouched */
	mana_emu_options_init(&me);
	CHECK(!mana_emu_options_parse_string(&me, "--vm=v1 --era=split",
					     err, sizeof(err)), "%s", err);
	CHECK(mana_emu_options_vm_merge(&vm, &me, mana_emu_options_given(), err,
					sizeof(err)) == MANA_EMU_OPT_ERROR &&
	      !strcmp(err, "--vm=v1: --kernel: this process asks for "
		      "'--kernel=7.0', the VM has '--kernel=7.1'"), "'%s'", err);
	CHECK(me.ports == 1, "a failed merge leaves the options");
	mana_emu_options_init(&me);
	CHECK(!mana_emu_options_parse_string(&me, "--vm=v1 --netdev-up",
					     err, sizeof(err)), "%s", err);
	CHECK(mana_emu_options_vm_merge(&vm, &me, mana_emu_options_given(), err,
					sizeof(err)) &&
	      strstr(err, "'--netdev-up', the VM has '(default)'"), "'%s'", err);
}

static void test_port_mac(void)
{
	static const struct {
		const char *base;
		unsigned int port;
		const char *want;
	} macs[] = {
		{ "00:0d:3a:00:00:01", 1, "00:0d:3a:00:00:01" },
		{ "00:0d:3a:00:00:01", 2, "00:0d:3a:00:00:02" },
		{ "00:0d:3a:00:00:01", 8, "00:0d:3a:00:00:08" },
		{ "00:0d:3a:00:00:ff", 3, "00:0d:3a:00:01:01" },
	};
	struct mana_emu_options o;
	char arg[64], err[256], got[32];
	uint8_t mac[6];
	size_t i;

	for (i = 0; i < sizeof(macs) / sizeof(macs[0]); i++) {
		mana_emu_options_init(&o);
		snprintf(arg, sizeof(arg), "--mac=%s", macs[i].base);
		CHECK(!mana_emu_options_parse_string(&o, arg, err, sizeof(err)),
		      "%s", err);
		mana_emu_port_mac(&o, macs[i].port, mac);
		format_mac(mac, got);
		CHECK(!strcmp(got, macs[i].want), "port %u of %s: %s, want %s",
		      macs[i].port, macs[i].base, got, macs[i].want);
	}
}

static void test_usage(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	static const char *names[] = { "--provider", "--driver-id",
				       "--no-netlink", "--transport", "--ports",
				       "--mac", "--netdev-up", "--max-qp-wr",
				       "--backend", "--pcap", "--stats",
				       "--rx-coalesce", "--rx-hold", "--fault",
				       "MANA_EMU_STATS", "--verbose", "--help",
				       "MANA_EMU_OPTIONS" };
	size_t i;

	mana_emu_options_usage(f, "mana-emu");
	fclose(f);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		CHECK(strstr(text, names[i]) != NULL, "usage lacks %s",
		      names[i]);
	free(text);
}

/* Parse @args (environment form): 0 and the options, or the message. */
static int parse(const char *args, struct mana_emu_options *o, char *err,
		 size_t errlen)
{
	mana_emu_options_init(o);
	err[0] = 0;
	return mana_emu_options_parse_string(o, args, err, errlen);
}

/* Options of the emulator-fidelity work: each value, the round trip, usage. */
static void test_fidelity_options(void)
{
	struct mana_emu_options o, b;
	char err[256], buf[4096], *text = NULL;
	size_t len = 0;
	FILE *f;

	CHECK(!parse("", &o, err, sizeof(err)) &&
	      o.rss_hash == MANA_EMU_RSS_HASH_DEVICE, "--rss-hash default");
	CHECK(!parse("--rss-hash=mask", &o, err, sizeof(err)) &&
	      o.rss_hash == MANA_EMU_RSS_HASH_MASK, "--rss-hash=mask: %s", err);
	CHECK(!parse("--rss-hash=mask --rss-hash=device", &o, err, sizeof(err)) &&
	      o.rss_hash == MANA_EMU_RSS_HASH_DEVICE, "--rss-hash=device");
	CHECK(parse("--rss-hash=fields", &o, err, sizeof(err)) &&
	      strstr(err, "--rss-hash: invalid value 'fields'"), "bad --rss-hash: %s",
	      err);
	parse("--rss-hash=mask", &o, err, sizeof(err));
	mana_emu_options_format(&o, buf, sizeof(buf));
	CHECK(strstr(buf, "--rss-hash=mask") && !parse(buf, &b, err, sizeof(err)) &&
	      !memcmp(&o, &b, sizeof(o)), "round trip '%s'", buf);

	/* output paths are checked when parsed, not when first written */
	CHECK(parse("--pcap=/nonexistent-dir/x.pcap", &o, err, sizeof(err)) &&
	      strstr(err, "--pcap: cannot write '/nonexistent-dir/x.pcap'") &&
	      strstr(err, strerror(ENOENT)), "pcap in a missing directory: %s", err);
	CHECK(parse("--stats=/", &o, err, sizeof(err)) &&
	      strstr(err, "--stats: cannot write '/'") &&
	      strstr(err, strerror(EISDIR)), "stats to a directory: %s", err);
	CHECK(parse("--stats=/dev/null/x", &o, err, sizeof(err)) &&
	      strstr(err, strerror(ENOTDIR)), "stats under a file: %s", err);
	CHECK(!parse("--stats=/dev/full --pcap=x.pcap", &o, err, sizeof(err)),
	      "writable device and relative path: %s", err);
	/* --fault=fail-cmd=N:ERRNO, ERRNO by name or number */
	CHECK(!parse("--fault=fail-cmd=7:EBUSY,drop-cqe=2", &o, err, sizeof(err)) &&
	      o.fault_fail_cmd == 7 && o.fault_fail_errno == EBUSY &&
	      o.fault_drop_cqe == 2, "fail-cmd by name: %s", err);
	CHECK(!parse("--fault=fail-cmd=1:5", &o, err, sizeof(err)) &&
	      o.fault_fail_cmd == 1 && o.fault_fail_errno == 5, "fail-cmd by number");
	mana_emu_options_format(&o, buf, sizeof(buf));
	CHECK(strstr(buf, "--fault=fail-cmd=1:5") && !parse(buf, &b, err, sizeof(err)) &&
	      !memcmp(&o, &b, sizeof(o)), "fail-cmd round trip '%s'", buf);
	CHECK(!parse("--fault=fail-cmd=CQ/CQ_CREATE:ENOMEM", &o, err, sizeof(err)) &&
	      !o.fault_fail_cmd && !strcmp(o.fault_fail_name, "CQ/CQ_CREATE") &&
	      o.fault_fail_errno == ENOMEM, "fail-cmd by command name: %s", err);
	mana_emu_options_format(&o, buf, sizeof(buf));
	CHECK(strstr(buf, "--fault=fail-cmd=CQ/CQ_CREATE:12") &&
	      !parse(buf, &b, err, sizeof(err)) && !memcmp(&o, &b, sizeof(o)),
	      "fail-cmd name round trip '%s'", buf);
	CHECK(!parse("--fault=fail-cmd=CREATE_CQ:EIO --fault=fail-cmd=4:EIO", &o, err,
		     sizeof(err)) && o.fault_fail_cmd == 4 && !o.fault_fail_name[0],
	      "a later fail-cmd replaces the earlier");
	CHECK(parse("--fault=fail-cmd=create_cq:EIO", &o, err, sizeof(err)),
	      "lower-case command name");
	CHECK(parse("--fault=fail-cmd=ABCDEFGHIJKLMNOPQRSTUVWXYZ_ABCDEF:EIO", &o, err,
		    sizeof(err)), "command name of 32 characters");
	CHECK(parse("--fault=fail-cmd=0:EIO", &o, err, sizeof(err)) &&
	      strstr(err, "fail-cmd=N:ERRNO"), "fail-cmd=0: %s", err);
	CHECK(parse("--fault=fail-cmd=3", &o, err, sizeof(err)), "fail-cmd without errno");
	CHECK(parse("--fault=fail-cmd=3:EWHAT", &o, err, sizeof(err)), "unknown errno");
	CHECK(parse("--fault=fail-cmd=3:4096", &o, err, sizeof(err)), "errno 4096");
	CHECK(parse("--fault=fail-cmd=3:0", &o, err, sizeof(err)), "errno 0");

	/* all-zero MAC: not an address a port can have */
	CHECK(parse("--mac=00:00:00:00:00:00", &o, err, sizeof(err)) &&
	      strstr(err, "--mac: invalid value"), "zero MAC: %s", err);
	CHECK(!parse("--mac=00:00:00:00:00:02", &o, err, sizeof(err)),
	      "MAC 00:..:02: %s", err);

	f = open_memstream(&text, &len);
	mana_emu_options_usage(f, "mana-emu");
	fclose(f);
	CHECK(strstr(text, "--rss-hash=device|mask"), "usage lacks --rss-hash");
	free(text);
}

/* --ip and --mtu (options_rdma.c) */
static void test_rdma_options(void)
{
	static const char *const bad[][2] = {
		{ "--ip=10.1.2.3", "no /LEN" },
		{ "--ip=10.1.2.300/24", "not an IPv4 or IPv6 address" },
		{ "--ip=10.1.2.3/0", "LEN must be 1..32" },
		{ "--ip=10.1.2.3/33", "LEN must be 1..32" },
		{ "--ip=fd00::1/129", "LEN must be 1..128" },
		{ "--ip=10.1.2.3/2x", "LEN must be 1..32" },
		{ "--ip=9:10.1.2.3/24", "PORT must be 1..8" },
		{ "--ip=0.0.0.0/8", "the unspecified address" },
		{ "--ip=127.0.0.1/8", "a loopback address" },
		{ "--ip=224.0.0.1/4", "multicast" },
		{ "--ip=255.255.255.255/32", "broadcast" },
		{ "--ip=::/64", "the unspecified address" },
		{ "--ip=::1/128", "the loopback address" },
		{ "--ip=ff02::1/64", "a multicast address" },
		{ "--ip=::ffff:10.0.0.1/96", "give the IPv4 form" },
		{ "--ip=2:10.1.2.3/24", "there is no port 2 (--ports=1)" },
		{ "--ip=10.0.0.1/24 --ip=1:10.0.0.1/16", "already has this address" },
		{ "--ip=fe80::20d:3aff:fe00:1/64", "its link-local one" },
		{ "--mtu=67", "--mtu: invalid value '67'" },
		{ "--mtu=9001", "--mtu: invalid value '9001'" },
		{ "--mtu=1500x", "--mtu: invalid value" },
	};
	struct mana_emu_options o, b;
	char err[256], buf[4096], arg[64];
	unsigned int i;

	CHECK(!parse("", &o, err, sizeof(err)) && !o.nips && o.mtu == 1500,
	      "defaults");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(parse(bad[i][0], &o, err, sizeof(err)) &&
		      strstr(err, bad[i][1]), "'%s': %s", bad[i][0], err);
	CHECK(!parse("--ports=2 --ip=10.1.2.3/24 --ip=2:fd00::5/64 "
		     "--ip=2001:db8::1/64 --ip=1:2::3/64 --ip=[1:2::4]/64 "
		     "--mtu=9000", &o, err, sizeof(err)), "good: %s", err);
	CHECK(o.nips == 5 && o.ips[0].port == 1 && o.ips[0].family == AF_INET &&
	      o.ips[0].prefix_len == 24 && !memcmp(o.ips[0].addr,
						   "\x0a\x01\x02\x03", 4) &&
	      o.ips[1].port == 2 && o.ips[1].family == AF_INET6 &&
	      o.ips[2].port == 1 && o.ips[2].addr[0] == 0x20 &&
	      o.ips[3].port == 1 && o.ips[3].addr[1] == 2 &&
	      o.ips[4].port == 1 && o.ips[4].addr[1] == 1 && o.mtu == 9000,
	      "parsed addresses");
	mana_emu_options_format(&o, buf, sizeof(buf));
	CHECK(strstr(buf, "--ip=2:fd00::5/64") && strstr(buf, "--mtu=9000") &&
	      !parse(buf, &b, err, sizeof(err)) && !memcmp(&o, &b, sizeof(o)),
	      "round trip '%s'", buf);
	/* --kernel: the default is the newest era */
	CHECK(o.kernel == EMU_KERNEL_DEFAULT && EMU_KERNEL_DEFAULT == EMU_KERNEL_7_2,
	      "default era 7.2");
	CHECK(!parse("--kernel=7.1", &o, err, sizeof(err)) &&
	      o.kernel == EMU_KERNEL_7_1, "--kernel=7.1: %s", err);
	mana_emu_options_format(&o, buf, sizeof(buf));
	CHECK(strstr(buf, "--kernel=7.1") && !parse(buf, &b, err, sizeof(err)) &&
	      !memcmp(&o, &b, sizeof(o)), "kernel round trip '%s'", buf);
	/* a version between rows is the era of the newest row before it */
	CHECK(!parse("--kernel=6.13", &o, err, sizeof(err)) &&
	      o.kernel == EMU_KERNEL_6_12, "--kernel=6.13 is 6.12's era");
	/* Debian 13's 6.12: ib_get_eth_speed backported, not in 6.14..7.1 */
	CHECK(!parse("--kernel=6.12", &o, err, sizeof(err)) &&
	      o.kernel == EMU_KERNEL_6_12 && emu_era_get(o.kernel)->eth_speed &&
	      !emu_era_get(EMU_KERNEL_6_11)->eth_speed &&
	      !emu_era_get(EMU_KERNEL_7_1)->eth_speed &&
	      emu_era_get(EMU_KERNEL_7_2)->eth_speed, "--kernel=6.12: %s", err);
	CHECK(!parse("--kernel=newest", &o, err, sizeof(err)) &&
	      o.kernel == EMU_KERNEL_NEWEST && EMU_KERNEL_NEWEST == EMU_KERNEL_7_2,
	      "--kernel=newest is 7.2");
	CHECK(!parse("--kernel=7.2", &o, err, sizeof(err)) &&
	      o.kernel == EMU_KERNEL_7_2 && emu_era_get(o.kernel)->vport_refs &&
	      !emu_era_get(EMU_KERNEL_7_1)->vport_refs,
	      "--kernel=7.2: vport references from 7.2 only: %s", err);
	CHECK(!parse("--kernel=6.16 --kernel=6.10", &o, err, sizeof(err)) &&
	      o.kernel == EMU_KERNEL_6_10, "the last --kernel wins");
	mana_emu_options_format(&o, buf, sizeof(buf));
	CHECK(strstr(buf, "--kernel=6.10"), "format 6.10: '%s'", buf);
	/* the raw-only kernels: 6.2, and 6.9 is 6.8's era */
	CHECK(!parse("--kernel=6.2", &o, err, sizeof(err)) &&
	      o.kernel == EMU_KERNEL_6_2, "--kernel=6.2: %s", err);
	CHECK(!parse("--kernel=6.9", &o, err, sizeof(err)) &&
	      o.kernel == EMU_KERNEL_6_8, "--kernel=6.9 is 6.8's era");
	CHECK(!parse("--kernel=7.2", &o, err, sizeof(err)) &&
	      (mana_emu_options_format(&o, buf, sizeof(buf)), !strstr(buf, "--kernel")),
	      "the default is not written: '%s'", buf);
	{
		static const char *const bad_kernel[] = {
			"6.1", "5.19", "7.3", "8.0", "6", "6.", "x.1", "6.14a", "",
		};

		for (i = 0; i < sizeof(bad_kernel) / sizeof(bad_kernel[0]); i++) {
			snprintf(arg, sizeof(arg), "--kernel=%s", bad_kernel[i]);
			CHECK(parse(arg, &o, err, sizeof(err)) &&
			      strstr(err, "--kernel: invalid value"), "%s: %s", arg,
			      err);
		}
	}
	/* --era: the older spelling */
	CHECK(!parse("--era=split", &o, err, sizeof(err)) &&
	      o.kernel == EMU_KERNEL_7_0, "--era=split: %s", err);
	mana_emu_options_format(&o, buf, sizeof(buf));
	CHECK(strstr(buf, "--kernel=7.0") && !strstr(buf, "--era") &&
	      !parse(buf, &b, err, sizeof(err)) && !memcmp(&o, &b, sizeof(o)),
	      "era round trip '%s'", buf);
	CHECK(!parse("--era=split --era=single", &o, err, sizeof(err)) &&
	      o.kernel == EMU_KERNEL_DEFAULT, "--era=single");
	CHECK(parse("--era=newest", &o, err, sizeof(err)) &&
	      strstr(err, "--era: invalid value 'newest'"), "bad era: %s", err);
	/* 15 per port: the GID table holds 16 with the link-local one */
	buf[0] = 0;
	for (i = 1; i <= 16; i++) {
		snprintf(arg, sizeof(arg), " --ip=10.0.0.%u/24", i);
		strcat(buf, arg);
	}
	CHECK(parse(buf, &o, err, sizeof(err)) &&
	      strstr(err, "more than 15 addresses on port 1"), "16 on a port: %s",
	      err);
}

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].form != ENV_ONLY)
			run_argv(&cases[i]);
		if (cases[i].form != ARGV_ONLY)
			run_env(&cases[i]);
	}
	test_argv_stop();
	test_format();
	test_vm_options();
	test_vm_join();
	test_port_mac();
	test_usage();
	test_fidelity_options();
	test_rdma_options();
	return check_done();
}
