/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Generated sysfs tree of the emulated MANA VF (SYSFS_PATH root).
 */
#ifndef MANA_EMU_SYSFS_H
#define MANA_EMU_SYSFS_H

#include <stddef.h>

struct mana_emu_options;

/*
 * Create a fresh tree mana-emu.XXXXXX (mkdtemp) in $TMPDIR, /dev/shm or
 * /tmp, in that order of preference; the root path (PATH_MAX bytes) is
 * written to root.  Returns 0 or -1 with a message in err (the partial
 * tree is removed).
 */
int mana_emu_sysfs_create(const struct mana_emu_options *opts, char *root,
			  char *err, size_t errlen);

/*
 * The run's interface state in the tree at @root (core/netdev.h), mapped
 * shared; NULL if the tree has none.
 */
struct emu_netdev_table;
struct emu_netdev_table *mana_emu_sysfs_netdev_map(const char *root);

/* Write the attributes that follow the links again (mtu, operstate, ...). */
void mana_emu_sysfs_refresh(const char *root,
			    const struct mana_emu_options *opts);

/* Remove a tree made by mana_emu_sysfs_create(); 0 or -1/errno. */
int mana_emu_sysfs_remove(const char *root);

#endif /* MANA_EMU_SYSFS_H */
