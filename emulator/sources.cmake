# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The emulated kernel and device without the libc interposers
# (host/interpose.c) and without the launcher: libmana-emu.so adds
# interpose.c to these, the fuzz harnesses (fuzz/) link them as plain
# functions.  One list for both.  Layers: README.md "Architecture".
set(MANA_EMU_DIR "${CMAKE_CURRENT_LIST_DIR}")
set(MANA_EMU_CORE_SOURCES
	${MANA_EMU_DIR}/host/emu.c
	${MANA_EMU_DIR}/host/exit_signal.c
	${MANA_EMU_DIR}/kernel/doorbell.c
	${MANA_EMU_DIR}/kernel/event.c
	${MANA_EMU_DIR}/kernel/kernel.c
	${MANA_EMU_DIR}/kernel/mr.c
	${MANA_EMU_DIR}/kernel/netlink.c
	${MANA_EMU_DIR}/kernel/raw_qp.c
	${MANA_EMU_DIR}/kernel/rtnetlink.c
	${MANA_EMU_DIR}/kernel/rtnetlink_addr.c
	${MANA_EMU_DIR}/kernel/rnic.c
	${MANA_EMU_DIR}/kernel/rc_qp.c
	${MANA_EMU_DIR}/kernel/uverbs.c
	${MANA_EMU_DIR}/kernel/uverbs_ioctl.c
	${MANA_EMU_DIR}/device/device.c
	${MANA_EMU_DIR}/device/frame.c
	${MANA_EMU_DIR}/device/rc_engine.c
	${MANA_EMU_DIR}/device/rc_core.c
	${MANA_EMU_DIR}/device/rc_neigh.c
	${MANA_EMU_DIR}/device/rc_req.c
	${MANA_EMU_DIR}/device/rc_resp.c
	${MANA_EMU_DIR}/device/trap.c
	${MANA_EMU_DIR}/device/x86_store.c
	"${CMAKE_SOURCE_DIR}/providers/mana/toeplitz.c")
# Wire backends and pcap capture; the option parser; the sysfs generator.
# The real libc calls (lib/libc.c) come with them: the wires are its lowest
# user, and everything that links the emulator links the wires.
set(MANA_EMU_LIBC_SOURCES ${MANA_EMU_DIR}/lib/libc.c)
set(MANA_EMU_BACKEND_SOURCES ${MANA_EMU_DIR}/wire/backend.c ${MANA_EMU_DIR}/wire/pcap.c
	${MANA_EMU_DIR}/wire/roce.c
	${MANA_EMU_LIBC_SOURCES})
set(MANA_EMU_OPTIONS_SOURCES ${MANA_EMU_DIR}/core/options.c
	${MANA_EMU_DIR}/core/options_rdma.c ${MANA_EMU_DIR}/core/gid.c)
set(MANA_EMU_SYSFS_SOURCES ${MANA_EMU_DIR}/host/sysfs.c)
# The interposers and the launcher (libmana-emu.so and mana-emu only).
set(MANA_EMU_INTERPOSE_SOURCES ${MANA_EMU_DIR}/host/interpose.c
	${MANA_EMU_DIR}/host/interpose_path.c ${MANA_EMU_DIR}/host/interpose_net.c)
set(MANA_EMU_LAUNCHER_SOURCES ${MANA_EMU_DIR}/host/launcher.c)
