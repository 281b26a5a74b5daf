# uninstall.cmake -- `make uninstall`: remove every file the last
# `make install` from this build directory installed, as the Makefile
# kept their list (install_manifest.txt with the DESTDIR put before each
# path), then the directories of huddle's own it leaves empty, then the
# list.
#   cmake -DMANIFEST=<build>/installed-files.txt -P uninstall.cmake
if(NOT EXISTS "${MANIFEST}")
  message(FATAL_ERROR "nothing to uninstall: ${MANIFEST} is missing "
    "(make install writes it)")
endif()
file(STRINGS "${MANIFEST}" files)
set(dirs)
foreach(f IN LISTS files)
  if(EXISTS "${f}" OR IS_SYMLINK "${f}")
    message(STATUS "removing ${f}")
    file(REMOVE "${f}")
  endif()
  get_filename_component(d "${f}" DIRECTORY)
  get_filename_component(p "${d}" DIRECTORY)
  foreach(x IN ITEMS "${d}" "${p}")
    if(x MATCHES "/huddle(/examples)?$")
      list(APPEND dirs "${x}")
    endif()
  endforeach()
endforeach()
# deepest first: share/doc/huddle/examples before share/doc/huddle
list(REMOVE_DUPLICATES dirs)
list(SORT dirs ORDER DESCENDING)
foreach(d IN LISTS dirs)
  file(GLOB left "${d}/*")
  if(IS_DIRECTORY "${d}" AND NOT left)
    file(REMOVE_RECURSE "${d}")
  endif()
endforeach()
file(REMOVE "${MANIFEST}")
