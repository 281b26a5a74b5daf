# layer-link-check.cmake -- a layer's library calls nothing above it.
#   cmake -DNM=nm -DLAYER=domain -DLIB=libhd_domain.a
#         -DBELOW="libhd_store.a|libhd_util.a" -P layer-link-check.cmake
# Every hd_ symbol LIB (an archive or an object) leaves undefined must be
# defined in LIB or in the archives BELOW it; one that is not (a function of
# a higher layer, called through a prototype written by hand instead of its
# header, which the include path would refuse) fails the build, naming the
# object and the symbol. CMakeLists.txt runs it after building each layer;
# tests/e2e/test-layers.sh runs it on a probe.
cmake_policy(VERSION 3.20)
string(REPLACE "|" ";" BELOW "${BELOW}")
execute_process(COMMAND ${NM} -g --defined-only ${LIB} ${BELOW}
  OUTPUT_VARIABLE defs RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "layer-link-check: ${NM} failed on ${LIB} ${BELOW}")
endif()
string(REGEX MATCHALL "[ \t][A-Za-z][ \t]+hd_[A-Za-z0-9_]+" defs "${defs}")
set(defined)
foreach(d IN LISTS defs)
  string(REGEX REPLACE ".*[ \t]" "" d "${d}")
  list(APPEND defined ${d})
endforeach()
execute_process(COMMAND ${NM} -A -u ${LIB} OUTPUT_VARIABLE undefs
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "layer-link-check: ${NM} failed on ${LIB}")
endif()
string(REGEX MATCHALL "[^\n]*[ \t]U[ \t]+hd_[A-Za-z0-9_]+" undefs "${undefs}")
set(bad)
foreach(u IN LISTS undefs)
  string(REGEX REPLACE ".*[ \t]" "" sym "${u}")
  if(NOT sym IN_LIST defined)
    string(REGEX REPLACE ":[^:]*$" "" where "${u}")
    string(REGEX REPLACE "^.*/" "" where "${where}")
    list(APPEND bad "  ${where} calls ${sym}")
  endif()
endforeach()
if(bad)
  list(REMOVE_DUPLICATES bad)
  string(JOIN "\n" bad ${bad})
  message(FATAL_ERROR "the ${LAYER} layer calls what neither it nor a layer "
    "below it defines (a higher layer's function; cmake/layers.txt):\n"
    "${bad}")
endif()
