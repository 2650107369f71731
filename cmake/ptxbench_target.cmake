# The build's lib/ folder: shared libraries the GPU machines lack travel in it with the binaries.
set(PTXBENCH_RUNTIME_LIB_DIR "${CMAKE_BINARY_DIR}/lib")

# ptxbench_bundle_shared(PATH) — copies the shared library PATH (a symlink or the file) into
# lib/ under its soname (read with objdump), the name the dynamic loader looks for.
function(ptxbench_bundle_shared path)
  file(REAL_PATH "${path}" real)
  execute_process(COMMAND "${CMAKE_OBJDUMP}" -p "${real}" OUTPUT_VARIABLE dynamic_section
                  COMMAND_ERROR_IS_FATAL ANY)
  if(NOT dynamic_section MATCHES "SONAME +([^ \n]+)")
    message(FATAL_ERROR "${real} has no SONAME")
  endif()
  set(soname "${CMAKE_MATCH_1}")
  file(MAKE_DIRECTORY "${PTXBENCH_RUNTIME_LIB_DIR}")
  file(COPY_FILE "${real}" "${PTXBENCH_RUNTIME_LIB_DIR}/${soname}" ONLY_IF_DIFFERENT)
endfunction()

# ptxbench_library(NAME SOURCES... DEPS ...) — one folder = one namespace = one library.
function(ptxbench_warnings target)
  # -Wno-restrict: GCC 12 false positive on std::string concatenation at -O2/-O3 (GCC bug 105329).
  set(cxx_warnings -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion -Wno-restrict)
  # A unity build (presets ci and gpu) includes each .cpp into a batch file, where GCC reads a
  # type using an anonymous-namespace type as one defined in a header; the dev preset builds
  # file by file and keeps the warning.
  if(CMAKE_UNITY_BUILD)
    list(APPEND cxx_warnings -Wno-subobject-linkage)
  endif()
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
