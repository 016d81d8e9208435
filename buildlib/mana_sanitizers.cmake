# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# ASan+UBSan build.  Programs we do not build (ibv_devinfo, python3) load our
# instrumented libraries through LD_PRELOAD, so the launcher must preload the
# ASan runtime first: record its path here.
set(MANA_ASAN_RUNTIME "")
if(MANA_SANITIZE)
	set(_san -fsanitize=address,undefined -fno-omit-frame-pointer
		-fno-sanitize-recover=undefined)
	add_compile_options(${_san})
	add_link_options(${_san})
	execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libasan.so
		OUTPUT_VARIABLE MANA_ASAN_RUNTIME OUTPUT_STRIP_TRAILING_WHITESPACE)
	get_filename_component(MANA_ASAN_RUNTIME "${MANA_ASAN_RUNTIME}" REALPATH)
	if(NOT EXISTS "${MANA_ASAN_RUNTIME}")
		message(FATAL_ERROR "MANA_SANITIZE: cannot find the ASan runtime (libasan.so)")
	endif()
	message(STATUS "ASan runtime: ${MANA_ASAN_RUNTIME}")
endif()
