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

# ptxbench_warnings(TARGET) — the warning set of our own targets (errors under PTXBENCH_WERROR).
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

# Module rules (ARCHITECTURE.md): a module sees only its own headers and those of the modules
# its DEPS reach. Sources include headers as "<module>/<file>", so each module gets an include
# root of its own, <build>/include_roots/<module>/, holding one link per module it may see
# (itself, its DEPS and theirs, transitively: an allowed header includes its own dependencies)
# to src/<that module>. A module's root is its only include path into src/ and it is also what
# the module gives those that link it, so a target sees the roots of what it links and no more:
# a wrong-way include is a missing file, a build error. HEADER_DEPS are seen but not linked
# (child/ uses compile/'s headers only). tests/module_rules checks every root against the map.
set(PTXBENCH_INCLUDE_ROOTS "${CMAKE_BINARY_DIR}/include_roots")

# ptxbench_library(NAME SOURCES... DEPS ... [HEADER_DEPS ...]) — one folder = one namespace = one
# library; called from src/NAME/CMakeLists.txt.
function(ptxbench_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;HEADER_DEPS" ${ARGN})
  if(NOT CMAKE_CURRENT_SOURCE_DIR STREQUAL "${PROJECT_SOURCE_DIR}/src/${name}")
    message(FATAL_ERROR "ptxbench_library(${name}) belongs in src/${name}/CMakeLists.txt")
  endif()
  add_library(ptxbench_${name} STATIC ${ARG_SOURCES})
  add_library(ptxbench::${name} ALIAS ptxbench_${name})
  target_include_directories(ptxbench_${name} PUBLIC ${PTXBENCH_INCLUDE_ROOTS}/${name})
  target_link_libraries(ptxbench_${name} PUBLIC ${ARG_DEPS})
  set(modules ${ARG_DEPS} ${ARG_HEADER_DEPS})
  list(FILTER modules INCLUDE REGEX "^ptxbench::")
  list(TRANSFORM modules REPLACE "^ptxbench::" "")
  set_property(GLOBAL APPEND PROPERTY PTXBENCH_MODULES ${name})
  set_property(GLOBAL PROPERTY PTXBENCH_MODULE_DEPS_${name} ${modules})
  get_property(deferred GLOBAL PROPERTY PTXBENCH_INCLUDE_ROOTS_DEFERRED)
  if(NOT deferred)
    # The links are made once every module has declared its DEPS (a module may name one that
    # a later folder declares).
    set_property(GLOBAL PROPERTY PTXBENCH_INCLUDE_ROOTS_DEFERRED TRUE)
    cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL ptxbench_make_include_roots)
  endif()
  ptxbench_warnings(ptxbench_${name})
endfunction()

# ptxbench_module_closure(NAME OUT) — NAME and every module its DEPS reach; a cycle is an error.
function(ptxbench_module_closure name out)
  get_property(modules GLOBAL PROPERTY PTXBENCH_MODULES)
  set(seen ${name})
  set(queue ${name})
  while(queue)
    list(POP_FRONT queue current)
    get_property(deps GLOBAL PROPERTY PTXBENCH_MODULE_DEPS_${current})
    foreach(dep IN LISTS deps)
      if(NOT dep IN_LIST modules)
        message(FATAL_ERROR "module ${current} depends on ptxbench::${dep}, which is no module")
      elseif(dep STREQUAL name)
        message(FATAL_ERROR "module ${name} depends on itself through ${current}")
      elseif(NOT dep IN_LIST seen)
        list(APPEND seen ${dep})
        list(APPEND queue ${dep})
      endif()
    endforeach()
  endwhile()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

# Makes or updates every module's include root; links already right are left alone.
function(ptxbench_make_include_roots)
  get_property(modules GLOBAL PROPERTY PTXBENCH_MODULES)
  foreach(module IN LISTS modules)
    ptxbench_module_closure(${module} visible)
    set(root "${PTXBENCH_INCLUDE_ROOTS}/${module}")
    file(MAKE_DIRECTORY "${root}")
    file(GLOB present LIST_DIRECTORIES true RELATIVE "${root}" "${root}/*")
    foreach(entry IN LISTS present)
      if(NOT entry IN_LIST visible)
        file(REMOVE "${root}/${entry}")
      endif()
    endforeach()
    foreach(dep IN LISTS visible)
      set(target "${PROJECT_SOURCE_DIR}/src/${dep}")
      set(link "${root}/${dep}")
      if(IS_SYMLINK "${link}")
        file(READ_SYMLINK "${link}" current)
        if(current STREQUAL target)
          continue()
        endif()
        file(REMOVE "${link}")
      endif()
      file(CREATE_LINK "${target}" "${link}" SYMBOLIC)
    endforeach()
  endforeach()
endfunction()
