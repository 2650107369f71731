# ptxbench_library(NAME SOURCES... DEPS ...) — one folder = one namespace = one library.
function(ptxbench_warnings target)
  # -Wno-restrict: GCC 12 false positive on std::string concatenation at -O2/-O3 (GCC bug 105329).
  set(cxx_warnings -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion -Wno-restrict)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${cxx_warnings}>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wno-restrict>)
  if(PTXBENCH_WERROR)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Werror>
      $<$<COMPILE_LANGUAGE:CUDA>:--Werror=all-warnings>)
  endif()
endfunction()

function(ptxbench_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(ptxbench_${name} STATIC ${ARG_SOURCES})
  add_library(ptxbench::${name} ALIAS ptxbench_${name})
  target_include_directories(ptxbench_${name} PUBLIC ${CMAKE_SOURCE_DIR}/src)
  target_link_libraries(ptxbench_${name} PUBLIC ${ARG_DEPS})
  ptxbench_warnings(ptxbench_${name})
endfunction()
