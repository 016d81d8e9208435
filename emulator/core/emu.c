// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What core/emu.h declares for every layer above the wires: the
 * emulator's state and lock, the fd table, and the failure report to the
 * launcher.  The constructor that fills them in is host/init.c.
 */
#include "emu.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "emulator/lib/libc.h"

struct emu_state emu = { .lock = PTHREAD_MUTEX_INITIALIZER };

uint8_t emu_fd_kinds[EMU_MAX_FDS];
static void *fd_objs[EMU_MAX_FDS];
static int fd_high = -1;	/* highest fd ever registered */

/* ---- fd table ------------------------------------------------------------ */

int emu_fd_register(int fd, enum emu_fd_kind kind, void *obj)
{
	if (fd < 0 || fd >= EMU_MAX_FDS)
		return -EMFILE;
	fd_objs[fd] = obj;
	__atomic_store_n(&emu_fd_kinds[fd], kind, __ATOMIC_RELEASE);
	if (fd > fd_high)
		fd_high = fd;
	return 0;
}

void emu_fd_unregister(int fd)
{
	if (fd < 0 || fd >= EMU_MAX_FDS)
		return;
	__atomic_store_n(&emu_fd_kinds[fd], EMU_FD_NONE, __ATOMIC_RELEASE);
	fd_objs[fd] = NULL;
}

void *emu_fd_obj(int fd, enum emu_fd_kind kind)
{
	if (emu_fd_kind(fd) != kind)
		return NULL;
	return fd_objs[fd];
}

int emu_fd_find(const void *obj, int except)
{
	int fd;

	for (fd = 0; fd <= fd_high; fd++)
		if (fd != except && fd_objs[fd] == obj &&
		    emu_fd_kind(fd) != EMU_FD_NONE)
			return fd;
	return -1;
}

/* ---- failure report -------------------------------------------------------- */

/*
 * MANA_EMU_REPORT_FD="FD:INODE", set by the launcher: a pipe to report
 * failures on.  The inode tells whether the program has reused the fd.
 */
static int report_fd = -1;
static ino_t report_ino;

void emu_report_init(void)
{
	const char *env = getenv(MANA_EMU_ENV_REPORT_FD);
	unsigned long long ino;
	struct stat st;
	int fd, saved;

	if (env && sscanf(env, "%d:%llu", &fd, &ino) == 2 && fd >= 0) {
		report_fd = fd;
		report_ino = (ino_t)ino;
		/* resolve the two libc calls now, not in a signal handler */
		saved = errno;
		emu_libc_fstat(-1, &st);
		emu_libc_write(-1, NULL, 0);
		errno = saved;
	}
}

void emu_report_failure(char code)
{
	struct stat st;

	if (report_fd < 0 || emu_libc_fstat(report_fd, &st) ||
	    !S_ISFIFO(st.st_mode) || st.st_ino != report_ino)
		return;
	if (emu_libc_write(report_fd, &code, 1) != 1)
		return;
}
