// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The emulated kernel's uverbs parsers: a sequence of command buffers
 * given to emu_uverbs_write() (FUZZ_UVERBS_WRITE) or emu_uverbs_ioctl()
 * (FUZZ_UVERBS_IOCTL) on one open uverbs file, as the write()/ioctl()
 * interposers give them, then the file closed as close() would.
 *
 * Commands and every buffer they point to live in the user arena
 * (fuzz_emu.h) at a fixed address, so seeds can hold real pointers;
 * pointers elsewhere get EFAULT.  Properties: no crash or sanitizer
 * report, no leak once the file and its event fds are closed; results are
 * the byte count (write) or 0 (ioctl), else a -errno.
 *
 * Input: records of [op u8][len u16 LE][len bytes].  op bit 0 clear: a
 * command, copied to the arena's start and run.  op bit 0 set: "poke",
 * the first 4 bytes an arena offset, the rest copied there (the data a
 * command's pointers name).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "emulator/core/emu.h"
#include "emulator/kernel/kernel.h"
#include "emulator/kernel/uverbs.h"
#include "fuzz_check.h"
#include "fuzz_emu.h"

#define FD_SCAN 1024	/* event fds the emulator makes are low numbers */

static int uverbs_fd = -1;

/* close() of the application's event fds, as interpose.c release_fd(). */
static void close_event_fds(void)
{
	struct emu_event_file *ev;
	int fd;

	for (fd = 0; fd < FD_SCAN; fd++) {
		if (emu_fd_kind(fd) != EMU_FD_EVENT)
			continue;
		pthread_mutex_lock(&emu.lock);
		ev = emu_fd_obj(fd, EMU_FD_EVENT);
		if (ev)
			emu_event_file_app_closed(ev);
		pthread_mutex_unlock(&emu.lock);
		close(fd);
	}
}

/*
 * Another application's context, open for the whole run: the device
 * thread then starts once and stays, instead of stopping when an input's
 * last context goes and starting again with the next input's first queue
 * (which cost most of the time and made every input look like a leak).
 */
static void open_anchor(void)
{
	struct emu_udata none = { 0 };
	struct emu_file *file;
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	FUZZ_CHECK(fd >= 0);
	pthread_mutex_lock(&emu.lock);
	file = emu_file_open(0, fd, true);
	FUZZ_CHECK(file && !emu_ucontext_create(file, &none));
	pthread_mutex_unlock(&emu.lock);
}

static void run_command(struct emu_file *file, const uint8_t *cmd,
			size_t len)
{
	uint8_t *arena = fuzz_arena();
	long ret;

	memcpy(arena, cmd, len);
	pthread_mutex_lock(&emu.lock);
#ifdef FUZZ_UVERBS_WRITE
	ret = emu_uverbs_write(file, arena, len);
	FUZZ_CHECK(ret == (long)len || (ret < 0 && ret > -4096));
#else
	ret = emu_uverbs_ioctl(file, RDMA_VERBS_IOCTL, arena);
	FUZZ_CHECK(ret <= 0 && ret > -4096);
#endif
	pthread_mutex_unlock(&emu.lock);
}

static void poke(const uint8_t *p, size_t len)
{
	uint32_t off;

	if (len < 4)
		return;
	memcpy(&off, p, 4);
	off %= FUZZ_ARENA_SIZE;
	len -= 4;
	if (len > FUZZ_ARENA_SIZE - off)
		len = FUZZ_ARENA_SIZE - off;
	memcpy(fuzz_arena() + off, p + 4, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct emu_file *file;

	if (uverbs_fd < 0) {
		fuzz_emu_setup();
		uverbs_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		FUZZ_CHECK(uverbs_fd >= 0);
		open_anchor();
	}
	memset(fuzz_arena(), 0, FUZZ_ARENA_SIZE);
	pthread_mutex_lock(&emu.lock);
	file = emu_file_open(0, uverbs_fd, true);
	pthread_mutex_unlock(&emu.lock);
	FUZZ_CHECK(file);

	while (in.left >= 3) {
		uint8_t op = fuzz_u8(&in);
		size_t len = fuzz_u16(&in);

		if (len > in.left)
			len = in.left;
		if (op & 1)
			poke(in.p, len);
		else
			run_command(file, in.p, len);
		in.p += len;
		in.left -= len;
	}

	pthread_mutex_lock(&emu.lock);
	emu_file_release(file);
	pthread_mutex_unlock(&emu.lock);
	close_event_fds();
	return 0;
}
