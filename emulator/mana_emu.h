/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Test-only API of libmana-emu.so.  Tests running under mana-emu find it
 * with dlsym(RTLD_DEFAULT, MANA_EMU_OBJECT_COUNTS_SYM); in a process
 * without the emulator the symbol is simply absent.
 */
#ifndef MANA_EMU_H
#define MANA_EMU_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Live objects of the emulated kernel, over every open uverbs file. */
struct mana_emu_counts {
	uint32_t contexts;
	uint32_t pds;
	uint32_t mrs;
	uint32_t cqs;
	uint32_t wqs;
	uint32_t qps;
	uint32_t ind_tables;
	uint32_t comp_channels;
	uint32_t dms;			/* device memory allocations */
};

#define MANA_EMU_OBJECT_COUNTS_SYM "mana_emu_object_counts"

/* Returns 0, or -1 with errno EINVAL when out is NULL. */
int mana_emu_object_counts(struct mana_emu_counts *out);

typedef int (*mana_emu_object_counts_fn)(struct mana_emu_counts *out);

/*
 * Hardware queues of the emulated device.  Ids are distinct per type, start
 * at a nonzero base and are not reused while the queue exists.
 */
enum mana_emu_queue_type {
	MANA_EMU_QUEUE_SQ = 1,
	MANA_EMU_QUEUE_RQ = 2,
	MANA_EMU_QUEUE_CQ = 3,
};

/*
 * Counters: SQ frames/bytes sent, drops 0, errors = WQEs completed with an
 * error CQE plus rejected doorbells; RQ frames/bytes delivered, drops =
 * frames that found no posted WQE or did not fit it, errors = bad WQEs or
 * SGEs plus rejected doorbells; CQ frames = CQEs written, drops = CQEs
 * lost (overwritten before the consumer reached them, as learned from its
 * CQ doorbells, or withheld by --fault=drop-cqe), errors = rejected
 * doorbells and unwritable CQ memory.
 */
struct mana_emu_queue_info {
	uint32_t type, id;
	uint64_t buf_addr, buf_size;	/* user VA and bytes as given to the kernel */
	uint32_t entries;		/* CQ: cqe; SQ/RQ: 0 */
	uint32_t cq_id;			/* SQ/RQ: the CQ it completes into */
	uint32_t port;
	uint32_t tx_vp_offset;		/* SQ */
	uint64_t db_page;		/* user address of the owning context's doorbell mapping, 0 if unmapped */
	/* counters */
	uint64_t frames, bytes, drops, errors;
};

#define MANA_EMU_QUEUE_INFO_SYM "mana_emu_queue_info"

/* 0, or -ENOENT when no queue of that type has that id. */
int mana_emu_queue_info(uint32_t type, uint32_t id,
			struct mana_emu_queue_info *out);

/* RX steering of a port's vport, as the RSS QP configured it. */
struct mana_emu_rss_info {
	uint32_t enabled, num_entries, default_rq;
	uint32_t rq_ids[64];
	uint8_t key[40];
	uint64_t fields_mask;
};

#define MANA_EMU_RSS_INFO_SYM "mana_emu_rss_info"

/* 0, or -ENOENT if no RSS QP on the port. */
int mana_emu_rss_info(uint32_t port, struct mana_emu_rss_info *out);

/*
 * Block until the device has processed every doorbell and frame that came
 * before the call (benchmarks: count no empty polls).  0, or -ETIMEDOUT.
 */
int mana_emu_quiesce(int timeout_ms);

/*
 * System calls the device has made so far for its own work (benchmarks):
 * process_vm_readv/writev of user copies (none once the doorbell trap's
 * fault-safe copy is in place) and the poll + read of each sleep.
 */
uint64_t mana_emu_device_syscalls(void);

/*
 * Wake-ups of the sleeping device thread so far (tests): doorbells and
 * kicks that found it asleep and made a FUTEX_WAKE.
 */
uint64_t mana_emu_device_wakeups(void);

/*
 * Application addresses that faulted in a device copy so far (each became
 * an error CQE or a counted drop): an MR's pages unmapped or made
 * read-only after registration.  Real hardware reaches the pages the
 * kernel pinned at registration; the emulator can only see the current
 * mapping.
 */
uint64_t mana_emu_user_faults(void);

/*
 * Fault sweep: uverbs commands handled so far, and make the @nth command
 * from now (1 = the next) fail with @err before its handler runs (0: no
 * fault).  0, or -EINVAL for an errno outside 1..4095.
 */
#define MANA_EMU_COMMAND_COUNT_SYM "mana_emu_command_count"
uint64_t mana_emu_command_count(void);
#define MANA_EMU_FAULT_FAIL_CMD_SYM "mana_emu_fault_fail_cmd"
int mana_emu_fault_fail_cmd(uint64_t nth, int err);

/*
 * Raise a QP async event (enum ibv_event_type: QP_FATAL, QP_REQ_ERR,
 * QP_ACCESS_ERR) on the RC QP numbered @qpn, as the device's QP-fatal
 * report does.  0, or -ENOENT when no RC QP has that number, -EINVAL for
 * another event type.
 */
#define MANA_EMU_RC_QP_EVENT_SYM "mana_emu_rc_qp_event"
int mana_emu_rc_qp_event(uint32_t qpn, int event_type);

/*
 * Security tests: a RoCEv2 packet as the RC QP numbered @qpn (at least
 * RTR: its path is known) would send it, but with every transport field
 * the caller's -- forged PSNs, ACKs, RETHs.  The packet goes through the
 * emulator's own encoder (valid ICRC) onto the QP's wire; the QP's own
 * state does not change.  0, -ENOENT (no such QP, or no path yet) or
 * -EINVAL (the encoder refused it).
 */
struct mana_emu_rc_pkt {
	uint8_t opcode;			/* BTH opcode: RC 0x00-0x11, UC 0x20-0x2b */
	uint8_t ack_req;		/* BTH A bit */
	uint8_t syndrome;		/* AETH (ACK, acknowledge packets) */
	uint32_t psn;			/* 24 bits */
	uint32_t msn;			/* AETH */
	uint64_t va;			/* RETH */
	uint32_t rkey, dma_len;		/* RETH */
	uint32_t imm;			/* ImmDt */
	const void *payload;
	uint32_t payload_len;		/* at most the QP's path MTU */
};
#define MANA_EMU_RC_FORGE_SYM "mana_emu_rc_forge"
int mana_emu_rc_forge(uint32_t qpn, const struct mana_emu_rc_pkt *pkt);

/*
 * Hold this VM's outgoing RoCE packets: @pass >= 0 lets the next @pass
 * through and keeps every later one (in order, up to 4096); @pass < 0
 * sends what is held, in order, and holds no more.  Makes "a message
 * whose first packet has landed and whose rest has not" exact, without
 * timing.  0, or -ENOMEM.
 */
#define MANA_EMU_RC_WIRE_HOLD_SYM "mana_emu_rc_wire_hold"
int mana_emu_rc_wire_hold(int pass);

/*
 * What the emulated kernel keeps of the RC QP numbered @qpn, in the
 * layout of the uverbs QUERY_QP response (struct ib_uverbs_query_qp_resp,
 * every field filled): the attributes modify set and the device's current
 * state.  mana_ib has no query_qp, so QUERY_QP itself is EOPNOTSUPP; this
 * is for tests.  0, or -ENOENT when no RC QP has that number.
 */
struct ib_uverbs_query_qp_resp;
#define MANA_EMU_RC_QP_QUERY_SYM "mana_emu_rc_qp_query"
int mana_emu_rc_qp_query(uint32_t qpn, struct ib_uverbs_query_qp_resp *out);

/*
 * The number the emulated mana_ib gave the PD with handle @handle of the
 * context on uverbs fd @cmd_fd (ibv_context.cmd_fd, ibv_pd.handle), also
 * in eras that do not return it.  0, -EBADF (not a uverbs fd), -ENOENT
 * (no such handle) or -EINVAL (not a PD).
 */
#define MANA_EMU_PD_NUMBER_SYM "mana_emu_pd_number"
int mana_emu_pd_number(int cmd_fd, uint32_t handle, uint32_t *pdn);

/*
 * The Linux version whose mana_ib is emulated (--kernel, or the default),
 * as MAJOR * 1000 + MINOR: 7.2 is 7002.
 */
#define MANA_EMU_KERNEL_VERSION_SYM "mana_emu_kernel_version"
int mana_emu_kernel_version(void);

#ifdef __cplusplus
}
#endif

#endif /* MANA_EMU_H */
