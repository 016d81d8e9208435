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

# ThreadSanitizer build (build-tsan/, ./build.sh tsan): the provider and the
# test programs that share queues between threads are instrumented; the
# emulator is not.  Its device thread reads WQEs and writes CQEs ordered by
# the doorbell trap and by owner bits with fences, which TSan cannot follow;
# left uninstrumented, its accesses are invisible to TSan, which then checks
# exactly the provider's own synchronization between application threads.
option(MANA_TSAN "Build the provider and the threaded tests with ThreadSanitizer" OFF)
if(MANA_TSAN AND MANA_SANITIZE)
	message(FATAL_ERROR "MANA_TSAN and MANA_SANITIZE exclude each other")
endif()
# -Wno-tsan: TSan does not model atomic_thread_fence.  The provider's fences
# order its accesses against the device (before a doorbell, after reading
# owner bits), which TSan does not see anyway; between application threads
# the provider synchronizes with acquire/release atomics and its spinlocks.
function(mana_tsan target)
	if(MANA_TSAN)
		target_compile_options(${target} PRIVATE -fsanitize=thread
			-fno-omit-frame-pointer -Wno-tsan)
		target_link_options(${target} PRIVATE -fsanitize=thread)
	endif()
endfunction()
