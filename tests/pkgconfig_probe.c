// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Built by test_pkgconfig.sh with nothing but what pkg-config says: prints
 * the file that serves manadv_init_obj at run time.
 */
#define _GNU_SOURCE	/* dladdr */
#include <dlfcn.h>
#include <stdio.h>

#include <infiniband/manadv.h>

int main(void)
{
	Dl_info info;

	if (!dladdr((void *)manadv_init_obj, &info) || !info.dli_fname) {
		fprintf(stderr, "pkgconfig_probe: dladdr(manadv_init_obj) failed\n");
		return 1;
	}
	printf("%s\n", info.dli_fname);
	return 0;
}
