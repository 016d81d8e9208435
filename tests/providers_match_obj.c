// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The match logic is free of libibverbs: test its object directly. */
#include "providers/mana/match.c"
