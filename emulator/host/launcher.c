/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * mana-emu: run a command against an emulated MANA device.
 *
 *   mana-emu [options] -- COMMAND [ARGS...]
 *
 * The launcher parses the options, generates a sysfs tree for the device
 * in a fresh directory (see sysfs.h), and runs COMMAND with libmana-emu.so
 * (the mock kernel) preloaded and, with --provider=ours, our libmana.so.1
 * preloaded after it so that it registers before any provider libibverbs
 * would load from its config directory.  When COMMAND exits the tree is
 * removed and mana-emu exits with COMMAND's status (128 + signal number if
 * it was killed).  Bad usage exits with 2, a launcher failure with 125.
 *
 * Environment form (no launcher): the library reads the same options
 * from MANA_EMU_OPTIONS in its constructor, generates its own tree, sets
 * SYSFS_PATH/SYSFS_PCI_DEVICES itself and removes the tree at exit:
 *
 *   LD_PRELOAD=build/lib/libmana-emu.so \
 *   MANA_EMU_OPTIONS="--ports=2 --no-netlink" COMMAND
 *
 * In that form the provider is whatever LD_PRELOAD says: append
 * build/lib/libmana.so.1 after libmana-emu.so to use ours.
 *
 * Variables set for COMMAND: SYSFS_PATH, SYSFS_PCI_DEVICES (read by
 * libibverbs and DPDK), MANA_EMU_SYSFS (the library then uses this tree
 * instead of making one), MANA_EMU_OPTIONS (the normalised options) and
 * LD_PRELOAD.
 *
 * The launcher's death ends the run even when nothing of it can run any
 * more (SIGKILL): COMMAND gets SIGKILL from the kernel (PR_SET_PDEATHSIG,
 * kept across its exec), and a small reaper process, forked before it
 * (no kill finds COMMAND without one), waits for the launcher to go
 * without saying it cleaned up, then for COMMAND to end, and removes the
 * tree.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emulator/core/options.h"
#include "emulator/core/vm.h"
#include "sysfs.h"

#ifndef MANA_ASAN_RUNTIME
#define MANA_ASAN_RUNTIME ""
#endif
#ifndef MANA_EMU_INSTALL_LIBDIR
#define MANA_EMU_INSTALL_LIBDIR "/usr/local/lib"
#endif

#define PROG "mana-emu"
#define EXIT_USAGE 2
#define EXIT_LAUNCHER 125
#define EMU_LIB "libmana-emu.so"
#define PROVIDER_LIB "libmana.so.1"

static volatile pid_t child_pid;

static void usage_error(const char *msg)
{
	fprintf(stderr, PROG ": %s\nTry '" PROG " --help'.\n", msg);
	exit(EXIT_USAGE);
}

static int lib_in(const char *dir, const char *name)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= PATH_MAX)
		return 0;
	return access(path, R_OK) == 0;
}

/* <dir of the executable>/../lib, else the configured install libdir */
static int find_libdir(char *libdir)
{
	char exe[PATH_MAX], cand[PATH_MAX];
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		snprintf(cand, sizeof(cand), "%s/../lib", dirname(exe));
		if (realpath(cand, libdir) && lib_in(libdir, EMU_LIB))
			return 0;
	}
	snprintf(libdir, PATH_MAX, "%s", MANA_EMU_INSTALL_LIBDIR);
	if (lib_in(libdir, EMU_LIB))
		return 0;
	fprintf(stderr, PROG ": cannot find " EMU_LIB " next to %s or in %s\n",
		n > 0 ? exe : "the launcher", MANA_EMU_INSTALL_LIBDIR);
	return -1;
}

static void append_path(char *buf, size_t len, const char *item)
{
	size_t used = strlen(buf);

	if (!item || !*item)
		return;
	snprintf(buf + used, len - used, "%s%s", used ? ":" : "", item);
}

static int build_preload(const struct mana_emu_options *opts,
			 const char *libdir, char *buf, size_t len)
{
	const char *prev = getenv("LD_PRELOAD");
	char path[PATH_MAX + 32];

	buf[0] = 0;
	append_path(buf, len, MANA_ASAN_RUNTIME);
	snprintf(path, sizeof(path), "%s/%s", libdir, EMU_LIB);
	append_path(buf, len, path);
	if (opts->provider == MANA_EMU_PROVIDER_OURS) {
		snprintf(path, sizeof(path), "%s/%s", libdir, PROVIDER_LIB);
		if (access(path, R_OK) == 0)
			append_path(buf, len, path);
		else
			fprintf(stderr,
				PROG ": warning: %s not found, the system's "
				"provider will serve the device\n", path);
	}
	append_path(buf, len, prev);
	if (strlen(buf) + 1 >= len) {
		fprintf(stderr, PROG ": LD_PRELOAD too long\n");
		return -1;
	}
	return 0;
}

static int setup_env(const struct mana_emu_options *opts, const char *root,
		     const char *libdir)
{
	char pci[PATH_MAX + 32], norm[16384], preload[8192];

	snprintf(pci, sizeof(pci), "%s/bus/pci/devices", root);
	mana_emu_options_format(opts, norm, sizeof(norm));
	if (build_preload(opts, libdir, preload, sizeof(preload)))
		return -1;
	if (setenv("SYSFS_PATH", root, 1) ||
	    setenv("SYSFS_PCI_DEVICES", pci, 1) ||
	    setenv(MANA_EMU_ENV_SYSFS, root, 1) ||
	    setenv(MANA_EMU_ENV_OPTIONS, norm, 1) ||
	    setenv("LD_PRELOAD", preload, 1)) {
		perror(PROG ": setenv");
		return -1;
	}
	if (opts->verbose)
		fprintf(stderr,
			PROG ": sysfs %s\n" PROG ": options %s\n"
			PROG ": LD_PRELOAD=%s\n", root, norm, preload);
	return 0;
}

static void forward_signal(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

static void set_parent_signals(void)
{
	struct sigaction sa = { .sa_handler = forward_signal };

	sigemptyset(&sa.sa_mask);
	/* The terminal already signals the whole process group. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* kill -USR2 <mana-emu>: a device fatal in the command */
	sigaction(SIGUSR2, &sa, NULL);
}

static void exec_child(char *const argv[], pid_t launcher)
{
	/*
	 * Our death is the command's: the kernel sends SIGKILL (also after
	 * its exec), and a launcher gone before the request took effect is
	 * seen in our new parent.
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != launcher)
		_exit(EXIT_LAUNCHER);
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	execvp(argv[0], argv);
	fprintf(stderr, PROG ": %s: %s\n", argv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/*
 * A pipe the library reports failures on that must fail the run (a
 * statistics file it could not write): the write end is inherited by the
 * command, named with its inode in MANA_EMU_REPORT_FD.
 */
static int report_pipe[2] = { -1, -1 };

static int setup_report_pipe(void)
{
	char val[64];
	struct stat st;

	if (pipe2(report_pipe, O_CLOEXEC) || fstat(report_pipe[1], &st)) {
		perror(PROG ": pipe");
		return -1;
	}
	/* the command inherits the write end; we keep only the read end */
	if (fcntl(report_pipe[1], F_SETFD, 0) ||
	    fcntl(report_pipe[0], F_SETFL, O_NONBLOCK)) {
		perror(PROG ": fcntl");
		return -1;
	}
	snprintf(val, sizeof(val), "%d:%llu", report_pipe[1],
		 (unsigned long long)st.st_ino);
	if (setenv(MANA_EMU_ENV_REPORT_FD, val, 1)) {
		perror(PROG ": setenv");
		return -1;
	}
	return 0;
}

/* What the library reported: 'S' if a statistics file was not written. */
static bool stats_failed(void)
{
	char buf[64];
	bool failed = false;
	ssize_t n, i;

	while ((n = read(report_pipe[0], buf, sizeof(buf))) > 0)
		for (i = 0; i < n; i++)
			failed |= buf[i] == 'S';
	return failed;
}

/*
 * The reaper, forked before the command so that no kill of the launcher
 * finds the command without it: the launcher holds the write end of
 * @death_pipe, writes the command's pid into it once forked, and one byte
 * once it removed the tree itself.  End of file before that byte means it
 * was killed: then the command (a pidfd: no pid reuse) is killed if the
 * kernel has not done it yet, and once it has ended the tree goes.  End
 * of file before the pid: no command was started, or it dies of its
 * PR_SET_PDEATHSIG; the tree goes all the same.
 */
static int death_pipe[2] = { -1, -1 };

static ssize_t read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = read(fd, (char *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	return got;
}

static void __attribute__((noreturn)) reaper(const char *root)
{
	int pidfd = -1, fd;
	sigset_t all;
	pid_t pid;
	char c;

	/* only the launcher's death may end us: no signal of its own */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	prctl(PR_SET_NAME, "mana-emu-reaper");
	close(death_pipe[1]);
	close(report_pipe[0]);
	close(report_pipe[1]);
	/* hold no pipe of whoever reads the command's output */
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		close(fd);
	}
	if (read_full(death_pipe[0], &pid, sizeof(pid)) == sizeof(pid)) {
#ifdef SYS_pidfd_open
		/* at once: the launcher reaps the command only after its end */
		if (pid > 0)
			pidfd = syscall(SYS_pidfd_open, pid, 0);
#endif
		if (read_full(death_pipe[0], &c, 1) == 1)
			_exit(0);
	}
#ifdef SYS_pidfd_send_signal
	if (pidfd >= 0) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };

		/* readable once it has ended */
		syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
		while (poll(&p, 1, -1) < 0 && errno == EINTR)
			;
	}
#else
	(void)pidfd;	/* no pidfd: PR_SET_PDEATHSIG alone ends it */
#endif
	if (mana_emu_sysfs_remove(root))
		fprintf(stderr, PROG ": cannot remove %s: %s\n", root,
			strerror(errno));
	_exit(0);
}

/* The reaper of this run; its pid, or -1 (then there is none). */
static pid_t start_reaper(const char *root)
{
	pid_t r = fork();

	if (r == 0)
		reaper(root);
	if (r < 0)
		perror(PROG ": fork (reaper)");
	close(death_pipe[0]);
	return r;
}

static int run(char *const argv[], const char *root, pid_t *reaper_pid)
{
	pid_t pid, launcher = getpid();
	int status;

	if (setup_report_pipe())
		return EXIT_LAUNCHER;
	if (pipe2(death_pipe, O_CLOEXEC)) {
		perror(PROG ": pipe");
		return EXIT_LAUNCHER;
	}
	*reaper_pid = start_reaper(root);
	set_parent_signals();
	pid = fork();
	if (pid == 0)
		exec_child(argv, launcher);
	/* the reaper learns the command (none: pid 0, it waits for us) */
	if (*reaper_pid > 0) {
		pid_t told = pid > 0 ? pid : 0;

		if (write(death_pipe[1], &told, sizeof(told)) != sizeof(told))
			perror(PROG ": reaper");
	}
	if (pid < 0) {
		perror(PROG ": fork");
		return EXIT_LAUNCHER;
	}
	child_pid = pid;
	close(report_pipe[1]);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			perror(PROG ": waitpid");
			return EXIT_LAUNCHER;
		}
	}
	status = WIFSIGNALED(status) ? 128 + WTERMSIG(status) :
				       WEXITSTATUS(status);
	/* the command's own failure first, else ours */
	if (stats_failed()) {
		fprintf(stderr, PROG ": the statistics file was not written\n");
		if (!status)
			status = EXIT_LAUNCHER;
	}
	return status;
}

int main(int argc, char *argv[])
{
	struct mana_emu_options opts, vm_opts;
	char err[512], root[PATH_MAX], libdir[PATH_MAX];
	pid_t reaper_pid = -1;
	int consumed, ret;

	mana_emu_options_init(&opts);
	if (mana_emu_options_parse_argv(&opts, argc - 1, argv + 1, &consumed,
					err, sizeof(err)))
		usage_error(err);
	if (opts.help) {
		mana_emu_options_usage(stdout, PROG);
		return 0;
	}
	if (1 + consumed >= argc)
		usage_error("missing COMMAND (usage: " PROG
			    " [options] -- COMMAND [ARGS...])");
	if (find_libdir(libdir))
		return EXIT_LAUNCHER;
	/*
	 * --vm: a live VM's options win, and one this command contradicts is
	 * a usage error now, before anything runs; the library checks again
	 * as it joins (the VM may have ended or been made meanwhile).
	 */
	if (opts.vm[0] && emu_vm_peek(opts.vm, &vm_opts) &&
	    mana_emu_options_vm_merge(&vm_opts, &opts,
				      mana_emu_options_given(), err,
				      sizeof(err))) {
		fprintf(stderr, PROG ": %s\n", err);
		return EXIT_USAGE;
	}
	if (mana_emu_sysfs_create(&opts, root, err, sizeof(err))) {
		fprintf(stderr, PROG ": %s\n", err);
		return EXIT_LAUNCHER;
	}
	ret = EXIT_LAUNCHER;
	if (!setup_env(&opts, root, libdir))
		ret = run(argv + 1 + consumed, root, &reaper_pid);
	if (mana_emu_sysfs_remove(root))
		fprintf(stderr, PROG ": cannot remove %s: %s\n", root,
			strerror(errno));
	/* the tree is handled: the reaper may go, and goes before we do */
	if (reaper_pid > 0) {
		if (write(death_pipe[1], "x", 1) != 1)
			perror(PROG ": reaper");
		while (waitpid(reaper_pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	return ret;
}
