// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The host interposers beyond open/close (issue 17), under mana-emu:
 *
 *   test_emu_host dup    dup(), dup2(), fcntl(F_DUPFD[_CLOEXEC]) of the
 *                        uverbs fd and of an event fd name the same
 *                        emulated file, which lives until its last fd
 *                        closes (as the kernel's struct file)
 *   test_emu_host sysfs  /sys/class/infiniband, infiniband_verbs and the
 *                        VF's /sys/class/net entry resolve into the
 *                        generated tree, here and in an exec'd cat
 * Run with --mac=00:0d:3a:12:34:56 (the sysfs case reads it back).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "check.h"
#include "emu_client.h"

/* glibc's fortified entry points, called as fortified programs do */
ssize_t __readlink_chk(const char *path, char *buf, size_t len, size_t buflen);
char *__realpath_chk(const char *path, char *resolved, size_t resolvedlen);

static unsigned int contexts(void)
{
	struct mana_emu_counts c;

	if (emu_counts(&c))
		return ~0u;
	return c.contexts;
}

static bool is_uverbs(int fd, dev_t want)
{
	struct stat st;

	return !fstat(fd, &st) && S_ISCHR(st.st_mode) && st.st_rdev == want;
}

static void case_dup(void)
{
	struct ibv_context *ctx, *imp;
	struct ibv_comp_channel *ch;
	struct stat st;
	int fd, fd2, fd3, fd4, efd, err_orig, err_dup;
	struct ibv_pd *pd;
	struct ibv_cq *cq;

	ctx = emu_open_mana();
	CHECK(ctx, "open");
	if (!ctx)
		return;
	fd = ctx->cmd_fd;
	CHECK(!fstat(fd, &st) && S_ISCHR(st.st_mode), "uverbs fd is a char device");
	CHECK(contexts() == 1, "one context (%u)", contexts());

	/* dup(): the same char device, and ibv_import_device sees it so */
	fd2 = dup(fd);
	CHECK(fd2 >= 0 && is_uverbs(fd2, st.st_rdev), "dup'd fd is the uverbs device");
	errno = 0;
	imp = ibv_import_device(fd);
	err_orig = imp ? 0 : errno;
	if (imp)
		ibv_close_device(imp);
	errno = 0;
	imp = ibv_import_device(fd2);
	err_dup = imp ? 0 : errno;
	CHECK(err_dup == err_orig && err_dup != EINVAL,
	      "import of a dup'd fd answers as the original (%s), not EINVAL (%s)",
	      strerror(err_orig), strerror(err_dup));
	if (imp)
		ibv_close_device(imp);

	/* F_DUPFD_CLOEXEC: at or above the floor, close-on-exec */
	fd3 = fcntl(fd, F_DUPFD_CLOEXEC, 200);
	CHECK(fd3 >= 200 && is_uverbs(fd3, st.st_rdev) &&
	      (fcntl(fd3, F_GETFD) & FD_CLOEXEC), "F_DUPFD_CLOEXEC -> %d", fd3);
	fd4 = fcntl(fd, F_DUPFD, 300);
	CHECK(fd4 >= 300 && is_uverbs(fd4, st.st_rdev) &&
	      !(fcntl(fd4, F_GETFD) & FD_CLOEXEC), "F_DUPFD -> %d", fd4);

	/* closing the context's own fd leaves the file to its dups */
	CHECK_ERRNO(close(fd) ? errno : 0, 0);
	CHECK(contexts() == 1, "context alive after closing the original fd (%u)",
	      contexts());
	CHECK_ERRNO(close(fd2) ? errno : 0, 0);
	CHECK_ERRNO(close(fd4) ? errno : 0, 0);
	CHECK(contexts() == 1, "context alive while fd %d remains (%u)", fd3,
	      contexts());
	/* dup2 gives the context its fd number back */
	CHECK(dup2(fd3, fd) == fd && is_uverbs(fd, st.st_rdev), "dup2 back");
	CHECK_ERRNO(close(fd3) ? errno : 0, 0);
	CHECK(contexts() == 1, "one context (%u)", contexts());
	pd = ibv_alloc_pd(ctx);
	CHECK(pd, "alloc_pd through the restored fd: %s", strerror(errno));
	if (pd)
		ibv_dealloc_pd(pd);

	/* an event fd: a dup keeps the channel; the dup closing does not end it */
	ch = ibv_create_comp_channel(ctx);
	CHECK(ch, "comp channel");
	if (ch) {
		efd = dup(ch->fd);
		CHECK(efd >= 0, "dup of the channel fd");
		CHECK_ERRNO(close(efd) ? errno : 0, 0);
		cq = ibv_create_cq(ctx, 16, NULL, ch, 0);
		CHECK(cq, "CQ on the channel after its dup closed: %s",
		      strerror(errno));
		if (cq) {
			CHECK_ERRNO(ibv_req_notify_cq(cq, 0), 0);
			ibv_destroy_cq(cq);
		}
		ibv_destroy_comp_channel(ch);
	}
	ibv_close_device(ctx);
	CHECK(contexts() == 0, "no context after the last fd closed (%u)",
	      contexts());
}

/* The first line of @path, or "" */
static const char *first_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = 0;
	if (f) {
		if (!fgets(buf, (int)len, f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

static void case_sysfs(void)
{
	char buf[PATH_MAX], link[PATH_MAX], path[PATH_MAX], ifname[256], *rp;
	struct ibv_device **list;
	const char *name = NULL;
	struct dirent *de;
	bool seen = false;
	struct stat st;
	ssize_t n;
	FILE *p;
	DIR *d;
	int fd;

	list = ibv_get_device_list(NULL);
	if (list && list[0])
		name = ibv_get_device_name(list[0]);
	CHECK(name, "a device");
	if (!name)
		goto out;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/pkeys/0", name);
	CHECK(!strcmp(first_line(path, buf, sizeof(buf)), "0xffff"),
	      "fopen %s: '%s'", path, buf);
	fd = open(path, O_RDONLY);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	CHECK(n == 7 && !strncmp(buf, "0xffff\n", 7), "open/read the pkey (%zd)", n);
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/node_type", name);
	CHECK(!stat(path, &st) && S_ISREG(st.st_mode), "stat %s", path);
	CHECK(!access(path, R_OK), "access %s", path);

	d = opendir("/sys/class/infiniband");
	CHECK(d, "opendir /sys/class/infiniband: %s", strerror(errno));
	while (d && (de = readdir(d)))
		seen |= !strcmp(de->d_name, name);
	if (d)
		closedir(d);
	CHECK(seen, "%s listed", name);

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s", name);
	n = readlink(path, link, sizeof(link) - 1);
	CHECK(n > 0, "readlink %s", path);
	rp = realpath(path, NULL);
	CHECK(rp && !strncmp(rp, "/sys/", 5) && strstr(rp, name) &&
	      !stat(rp, &st) && S_ISDIR(st.st_mode),
	      "realpath %s -> %s, which resolves again", path, rp ? rp : "NULL");
	free(rp);

	/* what fortified programs (Debian's builds) call instead */
	CHECK(__readlink_chk(path, buf, sizeof(buf) - 1, sizeof(buf)) == n,
	      "__readlink_chk %s", path);
	rp = __realpath_chk(path, buf, sizeof(buf));
	CHECK(rp == buf && !strncmp(buf, "/sys/", 5), "__realpath_chk -> %s",
	      rp ? rp : "NULL");

	CHECK(!strcmp(first_line("/sys/class/infiniband_verbs/uverbs0/ibdev", buf,
				 sizeof(buf)), name), "uverbs0/ibdev '%s'", buf);
	/* the VF by the name the tree gives it: its netdev directory */
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/net", name);
	d = opendir(path);
	CHECK(d, "opendir %s", path);
	ifname[0] = 0;
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			snprintf(ifname, sizeof(ifname), "%s", de->d_name);
	if (d)
		closedir(d);
	snprintf(path, sizeof(path), "/sys/class/net/%s/address", ifname);
	CHECK(!strcmp(first_line(path, link, sizeof(link)), "00:0d:3a:12:34:56"),
	      "%s: '%s'", path, link);

	/* an exec'd child, as rdma-core's tests run cat */
	snprintf(path, sizeof(path),
		 "cat /sys/class/infiniband/%s/ports/1/pkeys/0", name);
	p = popen(path, "r");
	CHECK(p, "popen");
	buf[0] = 0;
	if (p) {
		if (!fgets(buf, sizeof(buf), p))
			buf[0] = 0;
		CHECK(pclose(p) == 0, "cat exits 0");
	}
	CHECK(!strcmp(buf, "0xffff\n"), "cat's pkey: '%s'", buf);

	/* the rest of /sys is the host's */
	CHECK(!stat("/sys/class", &st) && S_ISDIR(st.st_mode), "/sys/class");
	CHECK(stat("/sys/class/net/no-such-netdev", &st) && errno == ENOENT,
	      "an unknown netdev stays unknown");
out:
	if (list)
		ibv_free_device_list(list);
}

int main(int argc, char **argv)
{
	const char *which = argc > 1 ? argv[1] : "";

	if (!strcmp(which, "dup"))
		case_dup();
	else if (!strcmp(which, "sysfs"))
		case_sysfs();
	else {
		fprintf(stderr, "usage: %s dup|sysfs\n", argv[0]);
		return 2;
	}
	return check_done();
}
