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
message(STATUS "libibverbs: ${IBVERBS_LIBRARY_REAL} (IBVERBS_PRIVATE_${MANA_PABI})")

get_filename_component(IBVERBS_LIBDIR "${IBVERBS_LIBRARY_REAL}" DIRECTORY)
set(VERBS_PROVIDER_DIR "${IBVERBS_LIBDIR}/libibverbs")
