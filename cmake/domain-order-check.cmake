# domain-order-check.cmake -- inside the domain, a directory calls only the
# directories before it in the domain's order (cmake/layers.txt,
# `domain-order`), so the domain is a tree, not a web.
#   cmake -DNM=nm -DORDER="events|team|..." -DOBJS="a/src/board/x.c.o|..."
#         -P domain-order-check.cmake
# Each object's directory is the one after "/src/" in its path. Every hd_
# symbol an object leaves undefined that another domain directory
# defines must be defined in a directory earlier in ORDER; one defined
# only later fails the build, naming the object, the symbol and both
# directories. There are no exceptions: a lower directory that must reach
# a higher one's data is handed a reader by it (docs/layers.md).
# CMakeLists.txt runs it after building hd_domain; the ctest
# layers/domain-order runs it on the same objects with the order reversed
# and expects it to fail, and e2e/layers on them plus a probe object of
# src/board calling src/lifecycle.
cmake_policy(VERSION 3.20)
string(REPLACE "|" ";" ORDER "${ORDER}")
string(REPLACE "|" ";" OBJS "${OBJS}")
set(dirs)
foreach(o IN LISTS OBJS)
  if(NOT o MATCHES "/src/([A-Za-z0-9_-]+)/[^/]+$")
    message(FATAL_ERROR "domain-order-check: ${o} is under no src/DIR")
  endif()
  set(d ${CMAKE_MATCH_1})
  if(NOT d IN_LIST ORDER)
    message(FATAL_ERROR "domain-order-check: src/${d} is in no place of "
      "the domain's order: add it to the `domain-order` line of "
      "cmake/layers.txt")
  endif()
  list(APPEND objs_${d} ${o})
  list(APPEND dirs ${d})
endforeach()
list(REMOVE_DUPLICATES dirs)
# where each hd_ symbol is defined
foreach(d IN LISTS dirs)
  execute_process(COMMAND ${NM} -g --defined-only ${objs_${d}}
    OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "domain-order-check: ${NM} failed on src/${d}")
  endif()
  string(REGEX MATCHALL "[ \t][A-Za-z][ \t]+hd_[A-Za-z0-9_]+" defs "${out}")
  foreach(s IN LISTS defs)
    string(REGEX REPLACE ".*[ \t]" "" s "${s}")
    set(def_${s} ${d})
  endforeach()
endforeach()
set(bad)
foreach(d IN LISTS dirs)
  list(FIND ORDER ${d} rank)
  foreach(o IN LISTS objs_${d})
    execute_process(COMMAND ${NM} -u ${o} OUTPUT_VARIABLE out
      RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "domain-order-check: ${NM} failed on ${o}")
    endif()
    string(REGEX MATCHALL "U[ \t]+hd_[A-Za-z0-9_]+" undefs "${out}")
    foreach(s IN LISTS undefs)
      string(REGEX REPLACE ".*[ \t]" "" s "${s}")
      if(NOT DEFINED def_${s} OR def_${s} STREQUAL d)
        continue()
      endif()
      list(FIND ORDER ${def_${s}} to)
      if(to LESS rank)
        continue()
      endif()
      get_filename_component(name ${o} NAME)
      string(REGEX REPLACE "\\.o(bj)?$" "" name "${name}")
      list(APPEND bad "  src/${d}/${name} calls ${s} (src/${def_${s}}/)")
    endforeach()
  endforeach()
endforeach()
if(bad)
  list(REMOVE_DUPLICATES bad)
  string(JOIN "\n" bad ${bad})
  string(JOIN " " order ${ORDER})
  message(FATAL_ERROR "the domain calls against its order (${order}; "
    "cmake/layers.txt, docs/layers.md):\n${bad}")
endif()
