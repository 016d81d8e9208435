// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The emulator's threads run on the CPUs the process started with, not on
 * the one its main thread was pinned to before it created the queues, as
 * DPDK pins its main lcore (`-l 0`) in rte_eal_init() (issue 17: the
 * device thread shared the main core).  Under mana-emu:
 *
 *   test_emu_thread_cpus [--threads=N]
 *
 * pins the calling thread to its first allowed CPU, creates a raw send QP
 * (the device thread starts with the first hardware queue; a socket wire
 * also starts its receive thread) and reads every thread's
 * Cpus_allowed_list from /proc/self/task: the main thread keeps its one
 * CPU, every other thread (at least N, the device thread "mana-emu-dev"
 * among them) has the start-up list.  Exit 77 (skipped) with one CPU.
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "check.h"
#include "emu_client.h"

/* "Cpus_allowed_list" and "Name" of a task of this process; 0 or -1. */
static int task_info(long tid, char *cpus, size_t cpus_len, char *name,
		     size_t name_len)
{
	char path[64], line[512];
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/status", tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "Cpus_allowed_list:", 18)) {
			snprintf(cpus, cpus_len, "%s", line + 18 + strspn(line + 18, " \t"));
			found |= 1;
		} else if (!strncmp(line, "Name:", 5)) {
			snprintf(name, name_len, "%s", line + 5 + strspn(line + 5, " \t"));
			found |= 2;
		}
	}
	fclose(f);
	return found == 3 ? 0 : -1;
}

/*
 * Every task but @self: how many, how many on @want, and whether one is
 * the device thread (named by itself right after it starts).
 */
static void scan_tasks(long self, const char *want, unsigned int *others,
		       unsigned int *on_want, int *dev_seen)
{
	char cpus[256], name[64];
	struct dirent *d;
	DIR *dir = opendir("/proc/self/task");

	*others = *on_want = 0;
	*dev_seen = 0;
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		long tid = strtol(d->d_name, NULL, 10);

		if (tid <= 0 || tid == self || task_info(tid, cpus, sizeof(cpus),
							 name, sizeof(name)))
			continue;
		(*others)++;
		if (!strcmp(cpus, want))
			(*on_want)++;
		else
			fprintf(stderr, "thread %ld (%s): CPUs %s, want %s\n",
				tid, name, cpus, want);
		if (!strcmp(name, "mana-emu-dev"))
			*dev_seen = 1;
	}
	closedir(dir);
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 64, .max_send_sge = 1 },
	};
	char start[256], pinned[256], now[256], name[64];
	unsigned int want_threads = 1, others = 0, on_start = 0, i;
	long self = syscall(SYS_gettid);
	struct ibv_context *ctx;
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_qp *qp = NULL;
	cpu_set_t set, one;
	int cpu, dev_seen = 0;

	for (i = 1; i < (unsigned int)argc; i++)
		if (!strncmp(argv[i], "--threads=", 10))
			want_threads = atoi(argv[i] + 10);
	if (sched_getaffinity(0, sizeof(set), &set) ||
	    task_info(self, start, sizeof(start), name, sizeof(name))) {
		perror("sched_getaffinity");
		return 1;
	}
	if (CPU_COUNT(&set) < 2) {
		printf("SKIP: the process may use one CPU only (%s)\n", start);
		return 77;
	}
	for (cpu = 0; !CPU_ISSET(cpu, &set); cpu++)
		;
	/* as DPDK's EAL pins its main lcore before the queues exist */
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	CHECK(!sched_setaffinity(0, sizeof(one), &one), "pin to CPU %d", cpu);
	CHECK(!task_info(self, pinned, sizeof(pinned), name, sizeof(name)) &&
	      strcmp(pinned, start), "main thread now on %s (started on %s)",
	      pinned, start);

	ctx = emu_open_mana();
	CHECK(ctx, "open the emulated device");
	if (ctx)
		pd = ibv_alloc_pd(ctx);
	if (pd)
		cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (cq) {
		qa.send_cq = qa.recv_cq = cq;
		qp = ibv_create_qp(pd, &qa);
	}
	CHECK(qp, "raw send QP: %s", strerror(errno));

	/* the device thread names itself when it starts: wait for that */
	for (i = 0; qp && i < 1000 && !dev_seen; i++) {
		scan_tasks(self, start, &others, &on_start, &dev_seen);
		if (!dev_seen)
			usleep(10000);
	}
	CHECK(dev_seen, "a thread named mana-emu-dev");
	scan_tasks(self, start, &others, &on_start, &dev_seen);
	CHECK(others >= want_threads, "%u emulator threads, want >= %u", others,
	      want_threads);
	CHECK(on_start == others, "%u of %u emulator threads on the start-up "
	      "CPUs %s, none on the main thread's %s", on_start, others, start,
	      pinned);
	/* the application's own pinning is left alone */
	CHECK(!task_info(self, now, sizeof(now), name, sizeof(name)) &&
	      !strcmp(now, pinned), "main thread still on %s (%s)", pinned, now);

	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	if (ctx)
		ibv_close_device(ctx);
	return check_done();
}
