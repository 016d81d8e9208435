/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef MANA_MATCH_H
#define MANA_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum mana_pci_identity {
	MANA_PCI_UNKNOWN,	/* no readable modalias */
	MANA_PCI_MANA,		/* 1414:00ba (VF), 1414:00b9 / 1414:00c1 (PF) */
	MANA_PCI_OTHER,		/* some other PCI function */
};

enum mana_match_verdict {
	MANA_MATCH_REFUSE,
	MANA_MATCH_BIND,
	/* MANA hardware, but the kernel numbers the driver differently */
	MANA_MATCH_BIND_WARN_DRIVER_ID,
	/* kernel says MANA, PCI identity says otherwise */
	MANA_MATCH_BIND_WARN_PCI,
};

struct mana_match_input {
	uint32_t driver_id;	/* 0 when discovered through sysfs only */
	const char *modalias;	/* NULL or "" when unreadable */
	const char *ibdev_name;
};

enum mana_pci_identity mana_pci_identity(const char *modalias,
					 uint16_t *vendor, uint16_t *device);
enum mana_match_verdict mana_match_classify(const struct mana_match_input *in);
int mana_match_message(const struct mana_match_input *in,
		       enum mana_match_verdict verdict, char *buf, size_t len);

#endif /* MANA_MATCH_H */
