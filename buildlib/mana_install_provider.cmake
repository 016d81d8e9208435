# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Run by `cmake --install` (install(SCRIPT)): everything that depends on the
# install prefix is decided here, from the prefix in force at install time,
# so that `cmake --install build --prefix DIR` is as right as a configured
# CMAKE_INSTALL_PREFIX.  Inputs (set by providers/mana/CMakeLists.txt):
#   MANA_SRC_PC           libmana.pc.in
#   MANA_STAGE_DIR        where the generated files are written first
#   MANA_LIBDIR           CMAKE_INSTALL_LIBDIR (relative or absolute)
#   MANA_INCLUDEDIR       CMAKE_INSTALL_INCLUDEDIR (relative or absolute)
#   MANA_VERSION          project version
#   MANA_PABI             libibverbs private ABI (34)
#   MANA_SYSTEM_PROVIDER_DIR  the provider directory compiled into libibverbs
#   MANA_PROVIDER_DIR     user override of the provider directory, or empty
#   MANA_CONFIG_DIR       user override of the libibverbs.d directory, or empty
#   MANA_CONFIG_ERDMA     ON: the config file also loads erdma, after us

function(mana_full_dir out dir)
	if(IS_ABSOLUTE "${dir}")
		set(${out} "${dir}" PARENT_SCOPE)
	else()
		set(${out} "${CMAKE_INSTALL_PREFIX}/${dir}" PARENT_SCOPE)
	endif()
endfunction()

mana_full_dir(libdir "${MANA_LIBDIR}")
mana_full_dir(includedir "${MANA_INCLUDEDIR}")

# libibverbs dlopens "<provider dir>/lib<name>-rdmav<PABI>.so" for a config
# line "driver <name>", and "<abs path>-rdmav<PABI>.so" for "driver /abs/path".
# Into the system's own provider directory when we install next to the
# system's libibverbs (a distribution package); otherwise into our prefix,
# named by absolute path in the config file.
get_filename_component(sys_libdir "${MANA_SYSTEM_PROVIDER_DIR}" DIRECTORY)
if(MANA_PROVIDER_DIR)
	set(provider_dir "${MANA_PROVIDER_DIR}")
elseif(libdir STREQUAL sys_libdir)
	set(provider_dir "${MANA_SYSTEM_PROVIDER_DIR}")
else()
	set(provider_dir "${libdir}/libibverbs")
endif()
if(provider_dir STREQUAL MANA_SYSTEM_PROVIDER_DIR)
	set(driver_line "driver mana")
else()
	set(driver_line "driver ${provider_dir}/libmana")
endif()

if(MANA_CONFIG_DIR)
	set(config_dir "${MANA_CONFIG_DIR}")
elseif(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
	set(config_dir "/etc/libibverbs.d")
else()
	set(config_dir "${CMAKE_INSTALL_PREFIX}/etc/libibverbs.d")
endif()

# The provider link, relative as Debian policy wants and rdma-core does.
file(RELATIVE_PATH link_target "${provider_dir}" "${libdir}/libmana.so.1")
set(link "$ENV{DESTDIR}${provider_dir}/libmana-rdmav${MANA_PABI}.so")
message(STATUS "Installing: ${link} -> ${link_target}")
file(MAKE_DIRECTORY "$ENV{DESTDIR}${provider_dir}")
file(CREATE_LINK "${link_target}" "${link}" SYMBOLIC)

# The config file.  libibverbs reads every regular file of the directory in
# readdir() order and loads the names of one file last line first, so a
# file that names erdma before mana loads mana before erdma whatever order
# the directory happens to list files in.
set(conf "# libmana (MANA verbs provider): loaded by libibverbs\n")
if(MANA_CONFIG_ERDMA)
	string(APPEND conf
		"# erdma is named first so that mana is loaded (and registered) before it:\n"
		"# kernels that report MANA with erdma's driver id (19) are then bound by mana.\n"
		"driver erdma\n")
endif()
string(APPEND conf "${driver_line}\n")
file(WRITE "${MANA_STAGE_DIR}/mana.driver" "${conf}")
file(INSTALL "${MANA_STAGE_DIR}/mana.driver" DESTINATION "${config_dir}")

# pkg-config file of the installed tree.
set(prefix "${CMAKE_INSTALL_PREFIX}")
set(PROJECT_VERSION "${MANA_VERSION}")
# ${prefix}-relative where possible, as pkg-config files usually are.
function(mana_pc_dir out dir)
	string(LENGTH "${prefix}/" n)
	string(SUBSTRING "${dir}/" 0 ${n} head)
	if(head STREQUAL "${prefix}/")
		string(SUBSTRING "${dir}" ${n} -1 tail)
		set(dir "\${prefix}/${tail}")
	endif()
	set(${out} "${dir}" PARENT_SCOPE)
endfunction()
mana_pc_dir(MANA_PC_LIBDIR "${libdir}")
mana_pc_dir(MANA_PC_INCLUDEDIR "${includedir}")
set(MANA_PC_RPATH "")
configure_file("${MANA_SRC_PC}" "${MANA_STAGE_DIR}/libmana.pc" @ONLY)
file(INSTALL "${MANA_STAGE_DIR}/libmana.pc" DESTINATION "${libdir}/pkgconfig")
