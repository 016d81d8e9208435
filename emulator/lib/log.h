/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The emulator's log lines: "mana-emu: " first, a newline added, straight
 * to stderr with one write system call (never through the interposers,
 * usable from a signal handler once formatted).  errno is left as it was.
 * A leaf: it includes no other emulator header.
 */
#ifndef MANA_EMU_LOG_H
#define MANA_EMU_LOG_H

#include <stdarg.h>

void emu_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void emu_vlog(const char *fmt, va_list ap)
	__attribute__((format(printf, 1, 0)));
/* "ENOSPC" for 28 or -28, "0" for 0, "E?" for an unknown number */
const char *emu_errname(int err);

#endif /* MANA_EMU_LOG_H */
