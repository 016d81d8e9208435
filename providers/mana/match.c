// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Deciding whether a discovered device is ours.  Kept free of libibverbs
 * types so that every case can be unit tested.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <rdma/mana-abi.h>
#include "match.h"

enum mana_pci_identity mana_pci_identity(const char *modalias,
					 uint16_t *vendor, uint16_t *device)
{
	unsigned int v, d;

	*vendor = 0;
	*device = 0;
	if (!modalias || !*modalias)
		return MANA_PCI_UNKNOWN;
	/* modalias: pci:vVVVVVVVVdDDDDDDDDsv...; anything else is not PCI */
	if (sscanf(modalias, "pci:v%8Xd%8X", &v, &d) != 2)
		return MANA_PCI_OTHER;
	*vendor = v;
	*device = d;
	if (v != MANA_PCI_VENDOR_ID)
		return MANA_PCI_OTHER;
	if (d == MANA_PCI_DEVICE_VF || d == MANA_PCI_DEVICE_PF ||
	    d == MANA_PCI_DEVICE_PF2)
		return MANA_PCI_MANA;
	return MANA_PCI_OTHER;
}

static bool name_is_mana(const char *name)
{
	return name && strncmp(name, "mana", 4) == 0;
}

enum mana_match_verdict mana_match_classify(const struct mana_match_input *in)
{
	uint16_t vendor, device;
	enum mana_pci_identity pci;

	pci = mana_pci_identity(in->modalias, &vendor, &device);

	if (in->driver_id == MANA_DRIVER_ID)
		return pci == MANA_PCI_OTHER ? MANA_MATCH_BIND_WARN_PCI :
					       MANA_MATCH_BIND;

	if (in->driver_id == MANA_DRIVER_ID_UNKNOWN) {
		/* sysfs-only discovery: trust the hardware identity, else the name */
		if (pci == MANA_PCI_MANA)
			return MANA_MATCH_BIND;
		if (pci == MANA_PCI_UNKNOWN && name_is_mana(in->ibdev_name))
			return MANA_MATCH_BIND;
		return MANA_MATCH_REFUSE;
	}

	/* The kernel claims another driver: only real MANA hardware is ours. */
	if (pci == MANA_PCI_MANA)
		return MANA_MATCH_BIND_WARN_DRIVER_ID;
	return MANA_MATCH_REFUSE;
}

int mana_match_message(const struct mana_match_input *in,
		       enum mana_match_verdict verdict, char *buf, size_t len)
{
	uint16_t vendor, device;

	mana_pci_identity(in->modalias, &vendor, &device);
	switch (verdict) {
	case MANA_MATCH_BIND_WARN_DRIVER_ID:
		return snprintf(buf, len,
			"%s: kernel driver id is %u but the device is MANA (PCI %04x:%04x), expected RDMA_DRIVER_MANA (%u). "
			"The kernel numbers MANA differently from rdma-core (a backported mana_ib); "
			"libmana binds anyway and sends driver id %u to the kernel, "
			"but rdma-core's libmana will not bind here. "
			"Fix: use this libmana, or a kernel and rdma-core that agree on RDMA_DRIVER_MANA=%u.",
			in->ibdev_name, in->driver_id, vendor, device,
			MANA_DRIVER_ID, in->driver_id, MANA_DRIVER_ID);
	case MANA_MATCH_BIND_WARN_PCI:
		return snprintf(buf, len,
			"%s: kernel driver id is RDMA_DRIVER_MANA (%u) but the PCI identity '%s' is not a MANA function "
			"(expected 1414:00ba). libmana binds anyway; "
			"check that device/modalias in sysfs belongs to this device.",
			in->ibdev_name, MANA_DRIVER_ID,
			in->modalias ? in->modalias : "");
	default:
		if (len)
			*buf = 0;
		return 0;
	}
}
