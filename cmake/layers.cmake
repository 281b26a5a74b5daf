# layers.cmake -- reads the layer table (cmake/layers.txt) and lays out,
# under ${CMAKE_BINARY_DIR}/layers/<layer>/, the only headers a layer's
# sources can find:
#   huddle/X.h   a symlink to include/huddle/X.h, for each public header of
#                this layer or a lower one
#   DIR/x.h      a symlink to src/DIR/x.h, for each private header of a
#                directory of this layer, or of a lower one marked
#                upto=M with M this layer or a higher one
# A layer's targets get that directory alone on their include path, so an
# upward #include is "No such file or directory" at compile time.
#
# Sets, for CMakeLists.txt:
#   HD_LAYER_NAMES           the layers, lowest first
#   HD_LAYER_<l>_DIRS        layer l's source directories (src/DIR)
#   HD_LAYER_<l>_INCLUDE     layer l's include directory
#   HD_HEADER_LAYER_<X.h>    the layer of include/huddle/X.h
#   HD_DOMAIN_ORDER          the domain's directories, lowest first
#
# Stops with a message when the table and the tree disagree: a src/
# directory or public header in no layer, an entry naming nothing, an
# unknown layer. scripts/checksrc.sh reads the same table.
set(HD_LAYER_TABLE ${PROJECT_SOURCE_DIR}/cmake/layers.txt)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  ${HD_LAYER_TABLE})

set(HD_LAYER_NAMES)
set(HD_DOMAIN_ORDER)
set(hd_lt_dirs)
set(hd_lt_headers)
file(STRINGS ${HD_LAYER_TABLE} hd_lt_lines)
set(hd_lt_no 0)
foreach(line IN LISTS hd_lt_lines)
  math(EXPR hd_lt_no "${hd_lt_no} + 1")
  string(REGEX REPLACE "#.*" "" line "${line}")
  string(STRIP "${line}" line)
  if(line STREQUAL "")
    continue()
  endif()
  separate_arguments(w UNIX_COMMAND "${line}")
  list(GET w 0 first)
  if(first STREQUAL "layers")
    list(SUBLIST w 1 -1 HD_LAYER_NAMES)
    continue()
  endif()
  if(first STREQUAL "domain-order")
    list(SUBLIST w 1 -1 HD_DOMAIN_ORDER)
    continue()
  endif()
  list(LENGTH w nw)
  if(NOT first IN_LIST HD_LAYER_NAMES OR nw LESS 2 OR nw GREATER 3)
    message(FATAL_ERROR "cmake/layers.txt:${hd_lt_no}: expected "
      "`LAYER src/DIR [upto=LAYER]` or `LAYER include/huddle/X.h` with "
      "LAYER one of `${HD_LAYER_NAMES}`, got `${line}`")
  endif()
  list(GET w 1 path)
  if(NOT EXISTS ${PROJECT_SOURCE_DIR}/${path})
    message(FATAL_ERROR "cmake/layers.txt:${hd_lt_no}: ${path} does not "
      "exist")
  endif()
  if(path MATCHES "^src/([A-Za-z0-9_-]+)$")
    set(dir ${CMAKE_MATCH_1})
    list(APPEND hd_lt_dirs ${dir})
    list(APPEND HD_LAYER_${first}_DIRS ${path})
    set(hd_lt_layer_of_${dir} ${first})
    set(hd_lt_upto_${dir} "")
    if(nw EQUAL 3)
      list(GET w 2 upto)
      string(REGEX REPLACE "^upto=" "" upto "${upto}")
      if(NOT upto IN_LIST HD_LAYER_NAMES)
        message(FATAL_ERROR "cmake/layers.txt:${hd_lt_no}: upto= names "
          "no layer (one of `${HD_LAYER_NAMES}`)")
      endif()
      set(hd_lt_upto_${dir} ${upto})
    endif()
  elseif(path MATCHES "^include/huddle/([A-Za-z0-9_-]+\\.h)$" AND nw EQUAL 2)
    list(APPEND hd_lt_headers ${CMAKE_MATCH_1})
    set(HD_HEADER_LAYER_${CMAKE_MATCH_1} ${first})
  else()
    message(FATAL_ERROR "cmake/layers.txt:${hd_lt_no}: `${path}` is "
      "neither src/DIR nor include/huddle/X.h")
  endif()
endforeach()
if(NOT HD_LAYER_NAMES)
  message(FATAL_ERROR "cmake/layers.txt: no `layers` line")
endif()

# Everything in the tree is in the table.
file(GLOB hd_lt_tree_dirs LIST_DIRECTORIES true CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/src/*)
foreach(d IN LISTS hd_lt_tree_dirs)
  get_filename_component(name ${d} NAME)
  if(IS_DIRECTORY ${d} AND NOT name IN_LIST hd_lt_dirs)
    message(FATAL_ERROR "src/${name} is in no layer: add a line "
      "`LAYER src/${name}` to cmake/layers.txt")
  endif()
endforeach()
file(GLOB hd_lt_tree_headers CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/include/huddle/*.h)
foreach(h IN LISTS hd_lt_tree_headers)
  get_filename_component(name ${h} NAME)
  if(NOT name IN_LIST hd_lt_headers)
    message(FATAL_ERROR "include/huddle/${name} is in no layer: add a line "
      "`LAYER include/huddle/${name}` to cmake/layers.txt")
  endif()
endforeach()

# The domain's order names each domain directory exactly once.
set(hd_lt_order_seen)
foreach(d IN LISTS HD_DOMAIN_ORDER)
  if(NOT "src/${d}" IN_LIST HD_LAYER_domain_DIRS OR d IN_LIST hd_lt_order_seen)
    message(FATAL_ERROR "cmake/layers.txt: `domain-order` names ${d}, which "
      "is no domain directory or comes twice")
  endif()
  list(APPEND hd_lt_order_seen ${d})
endforeach()
foreach(d IN LISTS HD_LAYER_domain_DIRS)
  string(REGEX REPLACE "^src/" "" d "${d}")
  if(NOT d IN_LIST HD_DOMAIN_ORDER)
    message(FATAL_ERROR "src/${d} is in no place of the domain's order: add "
      "it to the `domain-order` line of cmake/layers.txt")
  endif()
endforeach()

# The per-layer include directories, rebuilt on every configure (only
# directories and symlinks to files live there: removing them removes no
# source).
set(hd_lt_root ${CMAKE_BINARY_DIR}/layers)
file(REMOVE_RECURSE ${hd_lt_root})
set(hd_lt_seen)
foreach(layer IN LISTS HD_LAYER_NAMES)
  list(APPEND hd_lt_seen ${layer})
  set(inc ${hd_lt_root}/${layer})
  set(HD_LAYER_${layer}_INCLUDE ${inc})
  file(MAKE_DIRECTORY ${inc}/huddle)
  foreach(h IN LISTS hd_lt_headers)
    if(HD_HEADER_LAYER_${h} IN_LIST hd_lt_seen)
      file(CREATE_LINK ${PROJECT_SOURCE_DIR}/include/huddle/${h}
        ${inc}/huddle/${h} SYMBOLIC)
    endif()
  endforeach()
  foreach(dir IN LISTS hd_lt_dirs)
    if(NOT hd_lt_layer_of_${dir} IN_LIST hd_lt_seen)
      continue()
    endif()
    set(upto ${hd_lt_layer_of_${dir}})
    if(hd_lt_upto_${dir})
      set(upto ${hd_lt_upto_${dir}})
    endif()
    list(FIND HD_LAYER_NAMES ${upto} upto_rank)
    list(FIND HD_LAYER_NAMES ${layer} rank)
    if(rank GREATER upto_rank)
      continue()
    endif()
    file(GLOB privs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${dir}/*.h)
    foreach(p IN LISTS privs)
      get_filename_component(name ${p} NAME)
      file(MAKE_DIRECTORY ${inc}/${dir})
      file(CREATE_LINK ${p} ${inc}/${dir}/${name} SYMBOLIC)
    endforeach()
  endforeach()
endforeach()
