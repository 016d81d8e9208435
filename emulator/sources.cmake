# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The emulated kernel and device without the libc interposers
# (host/interpose.c) and without the launcher: libmana-emu.so adds
# interpose.c to these, the fuzz harnesses (fuzz/) link them as plain
# functions.  One list for both.  Layers: README.md "Architecture".
set(MANA_EMU_DIR "${CMAKE_CURRENT_LIST_DIR}")
set(MANA_EMU_CORE_SOURCES
	${MANA_EMU_DIR}/host/init.c
	${MANA_EMU_DIR}/host/exit_signal.c
	${MANA_EMU_DIR}/kernel/doorbell.c
	${MANA_EMU_DIR}/kernel/event.c
	${MANA_EMU_DIR}/kernel/kernel.c
	${MANA_EMU_DIR}/kernel/link.c
	${MANA_EMU_DIR}/kernel/mr.c
	${MANA_EMU_DIR}/kernel/netlink.c
	${MANA_EMU_DIR}/kernel/raw_qp.c
	${MANA_EMU_DIR}/kernel/rtnetlink.c
	${MANA_EMU_DIR}/kernel/rtnetlink_addr.c
	${MANA_EMU_DIR}/kernel/rnic.c
	${MANA_EMU_DIR}/kernel/rc_qp.c
	${MANA_EMU_DIR}/kernel/rdma_cm.c
	${MANA_EMU_DIR}/kernel/cm_registry.c
	${MANA_EMU_DIR}/kernel/uverbs.c
	${MANA_EMU_DIR}/kernel/uverbs_qp.c
	${MANA_EMU_DIR}/kernel/uverbs_ioctl.c
	${MANA_EMU_DIR}/kernel/uverbs_methods.c
	${MANA_EMU_DIR}/kernel/uverbs_qp_methods.c
	${MANA_EMU_DIR}/kernel/uverbs_mem_methods.c
	${MANA_EMU_DIR}/kernel/udmabuf.c
	${MANA_EMU_DIR}/device/device.c
	${MANA_EMU_DIR}/device/cq.c
	${MANA_EMU_DIR}/device/umem.c
	${MANA_EMU_DIR}/device/tx.c
	${MANA_EMU_DIR}/device/rx.c
	${MANA_EMU_DIR}/device/stats.c
	${MANA_EMU_DIR}/device/frame.c
	${MANA_EMU_DIR}/device/rc_engine.c
	${MANA_EMU_DIR}/device/rc_neigh.c
	${MANA_EMU_DIR}/device/gsi.c
	${MANA_EMU_DIR}/device/rc_req.c
	${MANA_EMU_DIR}/device/rc_resp.c
	${MANA_EMU_DIR}/device/trap.c
	${MANA_EMU_DIR}/device/trap_queue.c
	${MANA_EMU_DIR}/device/x86_store.c
	${MANA_EMU_DIR}/core/emu.c
	${MANA_EMU_DIR}/core/user_copy.c
	"${CMAKE_SOURCE_DIR}/providers/mana/toeplitz.c")
# Wire backends and pcap capture; the option parser; the sysfs generator.
# The leaves (lib/libc.c: the real libc calls, lib/log.c: log lines,
# lib/quiet_thread.c: the emulator's threads) come
# with them: the wires are their lowest user, and everything that links
# the emulator links the wires.
set(MANA_EMU_LIBC_SOURCES ${MANA_EMU_DIR}/lib/libc.c)
set(MANA_EMU_BACKEND_SOURCES ${MANA_EMU_DIR}/wire/wire.c
	${MANA_EMU_DIR}/wire/loopback.c ${MANA_EMU_DIR}/wire/socket.c
	${MANA_EMU_DIR}/wire/tap.c ${MANA_EMU_DIR}/wire/pcap.c
	${MANA_EMU_DIR}/wire/roce.c ${MANA_EMU_DIR}/wire/roce_rc.c
	${MANA_EMU_DIR}/wire/vswitch.c
	${MANA_EMU_DIR}/wire/ib_cm.c
	${MANA_EMU_LIBC_SOURCES} ${MANA_EMU_DIR}/lib/log.c
	${MANA_EMU_DIR}/lib/quiet_thread.c)
set(MANA_EMU_OPTIONS_SOURCES ${MANA_EMU_DIR}/core/options.c
	${MANA_EMU_DIR}/core/option_values.c
	${MANA_EMU_DIR}/core/options_rdma.c ${MANA_EMU_DIR}/core/gid.c
	${MANA_EMU_DIR}/core/era.c ${MANA_EMU_DIR}/core/netdev.c
	${MANA_EMU_DIR}/core/vm.c)
set(MANA_EMU_SYSFS_SOURCES ${MANA_EMU_DIR}/host/sysfs.c)
# The interposers and the launcher (libmana-emu.so and mana-emu only).
set(MANA_EMU_INTERPOSE_SOURCES ${MANA_EMU_DIR}/host/interpose.c
	${MANA_EMU_DIR}/host/interpose_path.c ${MANA_EMU_DIR}/host/interpose_net.c
	${MANA_EMU_DIR}/host/interpose_ifaddrs.c)
set(MANA_EMU_LAUNCHER_SOURCES ${MANA_EMU_DIR}/host/launcher.c)
