// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of device matching and of the driver-id consistency check.
 */
#include <string.h>

#include "providers/mana/match.h"
#include <rdma/mana-abi.h>
#include "check.h"

#define VF "pci:v00001414d000000BAsv00001414sd00000001bc02sc00i00"
#define PF "pci:v00001414d000000B9sv00001414sd00000001bc02sc00i00"
#define MLX "pci:v000015B3d0000101Esv000015B3sd00000001bc02sc00i00"
#define MS_OTHER "pci:v00001414d00005353sv00001414sd00005353bc03sc00i00"

static const struct {
	uint32_t driver_id;
	const char *modalias;
	const char *name;
	enum mana_match_verdict want;
} cases[] = {
	/* netlink, modern kernel */
	{ MANA_DRIVER_ID, VF, "mana_0", MANA_MATCH_BIND },
	{ MANA_DRIVER_ID, PF, "manae_0", MANA_MATCH_BIND },
	{ MANA_DRIVER_ID, "", "mana_0", MANA_MATCH_BIND },
	{ MANA_DRIVER_ID, NULL, "mana_0", MANA_MATCH_BIND },
	{ MANA_DRIVER_ID, MLX, "mana_0", MANA_MATCH_BIND_WARN_PCI },
	{ MANA_DRIVER_ID, MS_OTHER, "mana_0", MANA_MATCH_BIND_WARN_PCI },
	{ MANA_DRIVER_ID, "acpi:MSFT1000:", "mana_0", MANA_MATCH_BIND_WARN_PCI },
	/* sysfs only: driver id unknown */
	{ 0, VF, "mana_0", MANA_MATCH_BIND },
	{ 0, VF, "rdma0", MANA_MATCH_BIND },
	{ 0, "", "mana_0", MANA_MATCH_BIND },
	{ 0, "", "mlx5_0", MANA_MATCH_REFUSE },
	{ 0, MLX, "mana_0", MANA_MATCH_REFUSE },
	{ 0, MLX, "mlx5_0", MANA_MATCH_REFUSE },
	/* backported kernel numbering MANA as 19 */
	{ MANA_DRIVER_ID_ERDMA, VF, "mana_0", MANA_MATCH_BIND_WARN_DRIVER_ID },
	{ 7, PF, "mana_0", MANA_MATCH_BIND_WARN_DRIVER_ID },
	/* a real ERDMA or mlx5 device is not ours, whatever its name */
	{ MANA_DRIVER_ID_ERDMA, "", "mana_0", MANA_MATCH_REFUSE },
	{ MANA_DRIVER_ID_ERDMA, MS_OTHER, "erdma_0", MANA_MATCH_REFUSE },
	{ 1, MLX, "mlx5_0", MANA_MATCH_REFUSE },
};

static void test_classify(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mana_match_input in = {
			.driver_id = cases[i].driver_id,
			.modalias = cases[i].modalias,
			.ibdev_name = cases[i].name,
		};
		enum mana_match_verdict got = mana_match_classify(&in);

		CHECK(got == cases[i].want, "case %zu (id %u, '%s', %s): got %d want %d",
		      i, cases[i].driver_id,
		      cases[i].modalias ? cases[i].modalias : "(null)",
		      cases[i].name, got, cases[i].want);
	}
}

static void test_pci_identity(void)
{
	uint16_t v, d;

	CHECK(mana_pci_identity(VF, &v, &d) == MANA_PCI_MANA && v == 0x1414 &&
	      d == 0xba, "VF");
	CHECK(mana_pci_identity(PF, &v, &d) == MANA_PCI_MANA && d == 0xb9, "PF");
	CHECK(mana_pci_identity("pci:v00001414d000000C1sv0bc02", &v, &d) ==
	      MANA_PCI_MANA, "PF2");
	CHECK(mana_pci_identity(MLX, &v, &d) == MANA_PCI_OTHER && v == 0x15b3,
	      "mlx5");
	CHECK(mana_pci_identity("", &v, &d) == MANA_PCI_UNKNOWN, "empty");
	CHECK(mana_pci_identity(NULL, &v, &d) == MANA_PCI_UNKNOWN, "null");
	CHECK(mana_pci_identity("pci:vXYZ", &v, &d) == MANA_PCI_OTHER, "garbage");
	/* lower-case hex is what some kernels print */
	CHECK(mana_pci_identity("pci:v00001414d000000basv", &v, &d) ==
	      MANA_PCI_MANA, "lower case");
}

static void test_messages(void)
{
	struct mana_match_input in = {
		.driver_id = MANA_DRIVER_ID_ERDMA,
		.modalias = VF,
		.ibdev_name = "mana_0",
	};
	char buf[768];

	mana_match_message(&in, MANA_MATCH_BIND_WARN_DRIVER_ID, buf, sizeof(buf));
	/* found, expected, what to do */
	CHECK(strstr(buf, "driver id is 19") != NULL, "%s", buf);
	CHECK(strstr(buf, "1414:00ba") != NULL, "%s", buf);
	CHECK(strstr(buf, "RDMA_DRIVER_MANA (20)") != NULL, "%s", buf);
	CHECK(strstr(buf, "Fix:") != NULL, "%s", buf);

	in.driver_id = MANA_DRIVER_ID;
	in.modalias = MLX;
	mana_match_message(&in, MANA_MATCH_BIND_WARN_PCI, buf, sizeof(buf));
	CHECK(strstr(buf, MLX) != NULL && strstr(buf, "not a MANA") != NULL,
	      "%s", buf);

	CHECK(mana_match_message(&in, MANA_MATCH_BIND, buf, sizeof(buf)) == 0 &&
	      buf[0] == 0, "no message for a clean bind");
}

int main(void)
{
	test_classify();
	test_pci_identity();
	test_messages();
	return check_done();
}
