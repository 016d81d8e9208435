# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The emulated kernel and device without the libc interposers (interpose.c)
# and without the launcher: libmana-emu.so adds interpose.c to these, the
# fuzz harnesses (fuzz/) link them as plain functions.  One list for both.
set(MANA_EMU_DIR "${CMAKE_CURRENT_LIST_DIR}")
set(MANA_EMU_CORE_SOURCES
	${MANA_EMU_DIR}/device.c
	${MANA_EMU_DIR}/emu.c
	${MANA_EMU_DIR}/exit_signal.c
	${MANA_EMU_DIR}/frame.c
	${MANA_EMU_DIR}/kernel.c
	${MANA_EMU_DIR}/netlink.c
	${MANA_EMU_DIR}/rtnetlink.c
	${MANA_EMU_DIR}/trap.c
	${MANA_EMU_DIR}/uverbs.c
	${MANA_EMU_DIR}/x86_store.c
	"${CMAKE_SOURCE_DIR}/providers/mana/toeplitz.c")
# Wire backends and pcap capture; the option parser; the sysfs generator.
set(MANA_EMU_BACKEND_SOURCES ${MANA_EMU_DIR}/backend.c ${MANA_EMU_DIR}/pcap.c)
set(MANA_EMU_OPTIONS_SOURCES ${MANA_EMU_DIR}/options.c)
set(MANA_EMU_SYSFS_SOURCES ${MANA_EMU_DIR}/sysfs.c)
