/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef MANA_MANADV_IMPL_H
#define MANA_MANADV_IMPL_H

#include "manadv.h"

int mana_init_obj_qp(struct ibv_qp *ibqp, struct manadv_qp *out);
int mana_init_obj_cq(struct ibv_cq *ibcq, struct manadv_cq *out);
int mana_init_obj_rwq(struct ibv_wq *ibwq, struct manadv_rwq *out);
int mana_init_obj_pd(struct ibv_pd *ibpd, struct manadv_pd *out);

#endif
