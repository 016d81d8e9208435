// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Log lines of the emulator (see log.h).  A raw write(2): inside
 * libmana-emu.so a plain write() is the interposer, and the line may come
 * from the fatal-signal dump.
 */
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

void emu_vlog(const char *fmt, va_list ap)
{
	int saved = errno;
	char msg[1024];
	size_t n;

	n = snprintf(msg, sizeof(msg), "mana-emu: ");
	vsnprintf(msg + n, sizeof(msg) - n - 1, fmt, ap);
	n = strlen(msg);
	msg[n++] = '\n';
	/* nothing to do if stderr fails */
	syscall(SYS_write, STDERR_FILENO, msg, n);
	errno = saved;
}

void emu_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emu_vlog(fmt, ap);
	va_end(ap);
}

const char *emu_errname(int err)
{
	const char *name;

	if (!err)
		return "0";
	name = strerrorname_np(err < 0 ? -err : err);
	return name ? name : "E?";
}
