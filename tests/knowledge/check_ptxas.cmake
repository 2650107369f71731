# Compiles SOURCE for sm_ARCH (default 90a) with ptxas -v and fails on any spill, on an ignored
# setmaxnreg (C7508) or on serialized wgmma (C7510/C7511/C7515), or when fewer than KERNELS
# (default 3) kernels are reported. Run by CTest as knowledge_ptxas / knowledge_sm100a_ptxas.
if(NOT DEFINED ARCH)
  set(ARCH 90a)
endif()
if(NOT DEFINED KERNELS)
  set(KERNELS 3)
endif()
execute_process(
  COMMAND ${NVCC} -std=c++20 -I${INCLUDE} -gencode arch=compute_${ARCH},code=sm_${ARCH} -Xptxas -v
          -c ${SOURCE} -o /dev/null
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
set(log "${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nvcc failed (${rc}):\n${log}")
endif()
string(REGEX MATCHALL "[1-9][0-9]* bytes spill (stores|loads)" spills "${log}")
if(spills)
  message(FATAL_ERROR "wrappers spill: ${spills}\n${log}")
endif()
foreach(code C7508 C7510 C7511 C7515)
  string(FIND "${log}" "${code}" found)
  if(NOT found EQUAL -1)
    message(FATAL_ERROR "ptxas reported ${code}:\n${log}")
  endif()
endforeach()
string(REGEX MATCHALL "Compiling entry function" entries "${log}")
list(LENGTH entries count)
if(count LESS KERNELS)
  message(FATAL_ERROR "expected ${KERNELS} kernels in the ptxas report, saw ${count}:\n${log}")
endif()
message(STATUS "ptxas: ${count} kernels, no spills, setmaxnreg honoured")
