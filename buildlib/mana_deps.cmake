# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Find the distribution's libibverbs and make sure it speaks the private
# provider ABI we are written for (IBVERBS_PRIVATE_34: rdma-core v34..v56).
include(CheckCSourceCompiles)

set(MANA_PABI 34)

find_path(IBVERBS_INCLUDE_DIR infiniband/verbs.h)
find_library(IBVERBS_LIBRARY NAMES libibverbs.so.1 ibverbs)
if(NOT IBVERBS_INCLUDE_DIR OR NOT IBVERBS_LIBRARY)
	message(FATAL_ERROR "libibverbs development files not found: install libibverbs-dev")
endif()
get_filename_component(IBVERBS_LIBRARY_REAL "${IBVERBS_LIBRARY}" REALPATH)

# Which private ABI does the installed library export?
find_program(READELF readelf)
set(_pabi_found "unknown")
if(READELF)
	execute_process(COMMAND ${READELF} -V "${IBVERBS_LIBRARY_REAL}"
		OUTPUT_VARIABLE _ver_info ERROR_QUIET)
	string(REGEX MATCHALL "IBVERBS_PRIVATE_[0-9]+" _privs "${_ver_info}")
	list(REMOVE_DUPLICATES _privs)
	if(_privs)
		string(REPLACE ";" " " _pabi_found "${_privs}")
	else()
		set(_pabi_found "none")
	endif()
endif()

set(CMAKE_REQUIRED_LIBRARIES "${IBVERBS_LIBRARY}")
check_c_source_compiles("
struct verbs_device_ops;
void verbs_register_driver_${MANA_PABI}(const struct verbs_device_ops *ops);
int main(void) { verbs_register_driver_${MANA_PABI}((void *)0); return 0; }"
	HAVE_IBVERBS_PRIVATE_${MANA_PABI})
unset(CMAKE_REQUIRED_LIBRARIES)

if(NOT HAVE_IBVERBS_PRIVATE_${MANA_PABI} OR NOT _pabi_found MATCHES "IBVERBS_PRIVATE_${MANA_PABI}")
	message(FATAL_ERROR
		"${IBVERBS_LIBRARY_REAL} exports private provider ABI '${_pabi_found}', "
		"but libmana is written for IBVERBS_PRIVATE_${MANA_PABI} "
		"(rdma-core v34 to v56: Debian 12, Ubuntu 22.04/24.04, RHEL 8/9). "
		"A provider built for one private ABI cannot load into another; "
		"build against a libibverbs from that range.")
endif()

# Private ABI 34 kept its name from v34 to v56 but not its layout: v35 added
# verbs_sysfs_dev.num_ports and two context ops, v36 a third, and the public
# ibv_qp_ex that verbs_qp embeds grew in v44 and v45.  libibverbs.so.1.N.R.P
# names its rdma-core release R; libibverbs/driver.h and abi-check.h declare
# and check the layout of that release.  Set MANA_RDMA_CORE_VERSION only to
# compile against another release's headers (IBVERBS_INCLUDE_DIR).
get_filename_component(_ibverbs_file "${IBVERBS_LIBRARY_REAL}" NAME)
if(_ibverbs_file MATCHES "^libibverbs\\.so\\.1\\.[0-9]+\\.([0-9]+)\\.[0-9]+$")
	set(_rdma_core "${CMAKE_MATCH_1}")
else()
	set(_rdma_core "")
endif()
set(MANA_RDMA_CORE_VERSION "${_rdma_core}" CACHE STRING
	"rdma-core release of the libibverbs headers built against (default: from the library's file name)")
if(NOT MANA_RDMA_CORE_VERSION MATCHES "^[0-9]+$")
	message(FATAL_ERROR
		"cannot tell the rdma-core release of ${IBVERBS_LIBRARY_REAL} from its name "
		"(libibverbs.so.1.N.RELEASE.P); pass -DMANA_RDMA_CORE_VERSION=RELEASE")
endif()
if(MANA_RDMA_CORE_VERSION LESS 34 OR MANA_RDMA_CORE_VERSION GREATER 56)
	message(FATAL_ERROR
		"rdma-core ${MANA_RDMA_CORE_VERSION}: IBVERBS_PRIVATE_${MANA_PABI} is rdma-core v34 to v56")
endif()
if(NOT MANA_RDMA_CORE_VERSION STREQUAL _rdma_core)
	message(STATUS "libibverbs: headers of rdma-core ${MANA_RDMA_CORE_VERSION} "
		"(${IBVERBS_INCLUDE_DIR}), library of rdma-core ${_rdma_core}: build only, "
		"the programs would not run")
endif()
add_compile_definitions(MANA_RDMA_CORE=${MANA_RDMA_CORE_VERSION})
# headers elsewhere than the compiler's own path come before /usr/include
if(NOT IBVERBS_INCLUDE_DIR STREQUAL "/usr/include")
	include_directories(SYSTEM "${IBVERBS_INCLUDE_DIR}")
endif()
message(STATUS "libibverbs: ${IBVERBS_LIBRARY_REAL} (IBVERBS_PRIVATE_${MANA_PABI}, rdma-core ${MANA_RDMA_CORE_VERSION})")

get_filename_component(IBVERBS_LIBDIR "${IBVERBS_LIBRARY_REAL}" DIRECTORY)
set(VERBS_PROVIDER_DIR "${IBVERBS_LIBDIR}/libibverbs")
