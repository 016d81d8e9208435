# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Man pages are written in pandoc markdown.  Without pandoc the build still
# works: the pages are skipped with a message.
find_program(PANDOC pandoc)
if(NOT PANDOC)
	message(STATUS "pandoc not found: man pages will not be built")
endif()
set(MANA_MAN_DIR "${CMAKE_BINARY_DIR}/man")

# mana_man_pages(page.N.md ...): build man/page.N into build/man and install it.
function(mana_man_pages)
	if(NOT PANDOC)
		return()
	endif()
	foreach(src IN LISTS ARGN)
		get_filename_component(name "${src}" NAME)
		string(REGEX REPLACE "\\.md$" "" page "${name}")
		string(REGEX REPLACE "^.*\\.([0-9])$" "\\1" section "${page}")
		set(out "${MANA_MAN_DIR}/${page}")
		add_custom_command(OUTPUT "${out}"
			COMMAND ${CMAKE_COMMAND} -E make_directory "${MANA_MAN_DIR}"
			COMMAND ${PANDOC} -s -f markdown -t man
				"${CMAKE_CURRENT_SOURCE_DIR}/${src}" -o "${out}"
			DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/${src}"
			COMMENT "pandoc ${page}")
		add_custom_target(man-${page} ALL DEPENDS "${out}")
		install(FILES "${out}" DESTINATION "${CMAKE_INSTALL_MANDIR}/man${section}")
	endforeach()
endfunction()
