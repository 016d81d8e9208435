/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * uverbs ABI decoding: the write() command ABI and RDMA_VERBS_IOCTL.
 * Both run with emu.lock held and return -errno on failure.
 */
#ifndef MANA_EMU_UVERBS_H
#define MANA_EMU_UVERBS_H

#include <sys/types.h>

struct emu_file;

/* Returns count on success, like the kernel's ib_uverbs_write(). */
ssize_t emu_uverbs_write(struct emu_file *file, const void *buf,
			 size_t count);
int emu_uverbs_ioctl(struct emu_file *file, unsigned long request, void *arg);

#endif /* MANA_EMU_UVERBS_H */
