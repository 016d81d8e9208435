/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The ibv_wc_status an RDMA vendor error (enum mana_error_code, gdma.h)
 * completes a work request with.  The grouping is rdma-core v64's (cq.c), so
 * an application sees the same status from either provider; a code outside
 * the list is a general error.  Kept apart from gdma.h, which does not
 * depend on libibverbs.
 */
#ifndef MANA_RC_ERR_H
#define MANA_RC_ERR_H

#include <stdint.h>
#include <infiniband/verbs.h>

#include "gdma.h"

static inline enum ibv_wc_status mana_vendor_err_to_wc_status(uint32_t code)
{
	switch (code) {
	case MANA_VERR_OK:
		return IBV_WC_SUCCESS;
	/* the message does not fit the buffers */
	case MANA_VERR_RX_PKT_LEN:
	case MANA_VERR_RX_MSG_LEN_OVFL:
	case MANA_VERR_RX_READRESP_LEN_MISMATCH:
		return IBV_WC_LOC_LEN_ERR;
	/* the WQE itself is bad */
	case MANA_VERR_TX_GDMA_CORRUPTED_WQE:
	case MANA_VERR_TX_PCIE_WQE:
	case MANA_VERR_TX_PCIE_MSG:
	case MANA_VERR_RX_MALFORMED_WQE:
	case MANA_VERR_TX_GDMA_INVALID_STATE:
	case MANA_VERR_TX_MISBEHAVING_CLIENT:
	case MANA_VERR_TX_RDMA_MALFORMED_WQE_SIZE:
	case MANA_VERR_TX_RDMA_MALFORMED_WQE_FIELD:
	case MANA_VERR_TX_RDMA_WQE_UNSUPPORTED:
	case MANA_VERR_TX_RDMA_WQE_LEN_ERR:
	case MANA_VERR_TX_RDMA_MTU_ERR:
		return IBV_WC_LOC_QP_OP_ERR;
	/* a local key, address or right the translation refused */
	case MANA_VERR_TX_ATB_MSG_ACCESS_VIOLATION:
	case MANA_VERR_TX_ATB_MSG_ADDR_RANGE:
	case MANA_VERR_TX_ATB_MSG_CONFIG_ERR:
	case MANA_VERR_TX_ATB_WQE_ACCESS_VIOLATION:
	case MANA_VERR_TX_ATB_WQE_ADDR_RANGE:
	case MANA_VERR_TX_ATB_WQE_CONFIG_ERR:
	case MANA_VERR_TX_RDMA_ATB_CMD_MISS:
	case MANA_VERR_TX_RDMA_ATB_CMD_IDX_ERROR:
	case MANA_VERR_TX_RDMA_ATB_CMD_TAG_MISMATCH_ERROR:
	case MANA_VERR_TX_RDMA_ATB_CMD_PDID_MISMATCH_ERROR:
	case MANA_VERR_TX_RDMA_ATB_CMD_AR_ERROR:
	case MANA_VERR_TX_RDMA_ATB_CMD_PT_OVF:
	case MANA_VERR_TX_RDMA_ATB_CMD_PT_LENGTH_MISMATCH:
	case MANA_VERR_TX_RDMA_ATB_CMD_ILLEGAL_CMD:
	case MANA_VERR_RX_ATB_SGE_ADDR_RANGE:
	case MANA_VERR_RX_ATB_SGE_MISSCONFIG:
		return IBV_WC_LOC_PROT_ERR;
	case MANA_VERR_RX_ATB_SGE_ADDR_RIGHT:
	case MANA_VERR_RX_GFID:
		return IBV_WC_LOC_ACCESS_ERR;
	case MANA_VERR_RX_OP_REQ:
		return IBV_WC_REM_INV_REQ_ERR;
	/* the responder refused the rkey, its range or its rights */
	case MANA_VERR_RX_ATB_RKEY_MISCONFIG_ERR:
	case MANA_VERR_RX_ATB_RKEY_ADDR_RIGHT:
	case MANA_VERR_RX_ATB_RKEY_ADDR_RANGE:
	case MANA_VERR_RX_REMOTE_ACCESS_NAK:
		return IBV_WC_REM_ACCESS_ERR;
	/* rdma-core reports an invalid-request NAK as a remote op error */
	case MANA_VERR_RX_INVALID_REQ_NAK:
	case MANA_VERR_RX_REMOTE_OP_ERR_NAK:
		return IBV_WC_REM_OP_ERR;
	case MANA_VERR_RX_MISBEHAVING_CLIENT:
	case MANA_VERR_RX_CLIENT_ID:
	case MANA_VERR_RX_PCIE:
	case MANA_VERR_RX_NO_AVAIL_WQE:
	case MANA_VERR_RX_ATB_WQE_MISCONFIG:
	case MANA_VERR_RX_ATB_WQE_ADDR_RIGHT:
	case MANA_VERR_RX_ATB_WQE_ADDR_RANGE:
	case MANA_VERR_TX_RDMA_INVALID_STATE:
	case MANA_VERR_TX_RDMA_INVALID_NPT:
	case MANA_VERR_TX_RDMA_INVALID_SGID:
	case MANA_VERR_TX_RDMA_VFID_MISMATCH:
		return IBV_WC_FATAL_ERR;
	case MANA_VERR_RX_NOT_EMPTY_ON_DISABLE:
	case MANA_VERR_SW_FLUSHED:
		return IBV_WC_WR_FLUSH_ERR;
	case MANA_VERR_TX_RETRY_LIMIT_EXCEEDED:
		return IBV_WC_RETRY_EXC_ERR;
	case MANA_VERR_RX_RNR_NAK:
		return IBV_WC_RNR_RETRY_EXC_ERR;
	}
	return IBV_WC_GENERAL_ERR;
}

#endif /* MANA_RC_ERR_H */
