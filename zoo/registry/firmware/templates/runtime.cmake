# ExecuTorch's runtime for this toolchain and CPU, built once and shared by every firmware
# zoo generates: in ZOO_RUNTIME_CACHE/<key>, where the key is a sha256 over the content (never
# the location) of the runtime's sources (the folders below), the driver's headers, the
# toolchain file and the compiler's version. A second model, in any folder, finds it there and
# compiles only its own files. A lock beside it keeps two configures from building it at once.
#
# The kernel libraries are built the first time a project links them (ZOO_RUNTIME_KERNELS): a program
# the NPU runs whole needs none, and the portable kernels are most of the runtime's build time.
#
# In:  EXECUTORCH_SOURCE_DIR, ETHOS_U_DRIVER_DIR, ZOO_RUNTIME_CACHE, PYTHON_EXECUTABLE, ZOO_TOOLCHAIN_FILE,
#      ZOO_RUNTIME_KERNELS (portable_kernels, quantized_kernels: the ones this project links)
# Out: ZOO_RUNTIME_DIR, and the imported targets executorch_core, executorch_prim_ops,
#      executorch_delegate_ethos_u, kernels_util_all_deps and those of ZOO_RUNTIME_KERNELS

if(NOT EXISTS "${EXECUTORCH_SOURCE_DIR}/runtime/executor/program.h")
  message(FATAL_ERROR "EXECUTORCH_SOURCE_DIR (${EXECUTORCH_SOURCE_DIR}) is not ExecuTorch's source tree: "
    "git clone --recursive https://github.com/pytorch/executorch and check out @EXECUTORCH_COMMIT@ (see README.md)")
endif()
get_filename_component(_et_name "${EXECUTORCH_SOURCE_DIR}" NAME)
if(NOT _et_name STREQUAL "executorch")
  message(FATAL_ERROR "ExecuTorch's CMake needs its source folder to be named 'executorch', not '${_et_name}'")
endif()
if(NOT EXISTS "${ETHOS_U_DRIVER_DIR}/include/ethosu_driver.h")
  message(FATAL_ERROR "ETHOS_U_DRIVER_DIR (${ETHOS_U_DRIVER_DIR}) is not Arm's Ethos-U core driver (see README.md)")
endif()

set(_text "recipe @RUNTIME_RECIPE@\n")
foreach(_d runtime kernels/portable kernels/quantized kernels/prim_ops backends/arm schema extension/data_loader
           tools/cmake codegen)
  file(GLOB_RECURSE _files LIST_DIRECTORIES false RELATIVE "${EXECUTORCH_SOURCE_DIR}" "${EXECUTORCH_SOURCE_DIR}/${_d}/*")
  list(SORT _files)
  foreach(_f IN LISTS _files)
    file(SHA256 "${EXECUTORCH_SOURCE_DIR}/${_f}" _h)
    string(APPEND _text "${_f} ${_h}\n")
  endforeach()
endforeach()
foreach(_f CMakeLists.txt CMakePresets.json)
  file(SHA256 "${EXECUTORCH_SOURCE_DIR}/${_f}" _h)
  string(APPEND _text "${_f} ${_h}\n")
endforeach()
file(GLOB_RECURSE _files LIST_DIRECTORIES false RELATIVE "${ETHOS_U_DRIVER_DIR}" "${ETHOS_U_DRIVER_DIR}/include/*")
list(SORT _files)
foreach(_f IN LISTS _files)
  file(SHA256 "${ETHOS_U_DRIVER_DIR}/${_f}" _h)
  string(APPEND _text "ethos-u-core-driver/${_f} ${_h}\n")
endforeach()
file(SHA256 "${ZOO_TOOLCHAIN_FILE}" _h)
string(APPEND _text "toolchain.cmake ${_h}\n")
execute_process(COMMAND "${CMAKE_CXX_COMPILER}" --version OUTPUT_VARIABLE _cc_version)
string(APPEND _text "${_cc_version}")
string(SHA256 _key "${_text}")
string(SUBSTRING "${_key}" 0 16 _key)
set(ZOO_RUNTIME_DIR "${ZOO_RUNTIME_CACHE}/${_key}")

# A failed step shows the end of its log and what usually causes it, not only the log's name.
function(_zoo_runtime_failed step log)
  file(READ "${log}" _tail)
  string(LENGTH "${_tail}" _n)
  if(_n GREATER 3000)
    math(EXPR _from "${_n} - 3000")
    string(SUBSTRING "${_tail}" ${_from} -1 _tail)
  endif()
  message(FATAL_ERROR "zoo: ${step} ExecuTorch's runtime failed. The end of ${log}:\n\n${_tail}\n"
    "Usual causes: EXECUTORCH_SOURCE_DIR (${EXECUTORCH_SOURCE_DIR}) is read-only (ExecuTorch's build writes into "
    "its own tree: give a writable copy, e.g. cp -r), its submodules are missing (git -C executorch submodule "
    "update --init --recursive), or PYTHON_EXECUTABLE (${PYTHON_EXECUTABLE}) has no torch. Fix it and configure "
    "again.")
endfunction()

file(MAKE_DIRECTORY "${ZOO_RUNTIME_CACHE}")
file(LOCK "${ZOO_RUNTIME_DIR}.lock" GUARD FILE TIMEOUT 3600 RESULT_VARIABLE _lock)
if(NOT _lock EQUAL 0)
  message(FATAL_ERROR "zoo: waited an hour for ${ZOO_RUNTIME_DIR}.lock (${_lock}): is another configure still "
    "building the runtime there? Wait for it, or end it and delete ${ZOO_RUNTIME_DIR}")
endif()
# The runtime's build reads its sources through links in its folder, set to this project's sources (whose
# content the key fixes) at every configure: a kernel library built later, for another project, finds
# them even when the project that built the rest had other copies, since deleted.
set(_sources "${ZOO_RUNTIME_DIR}/sources/executorch")
# ExecuTorch's Arm backend wants ETHOS_SDK_PATH laid out as Arm's ethos-u repository is.
set(_sdk "${ZOO_RUNTIME_DIR}/ethos-sdk")
file(MAKE_DIRECTORY "${ZOO_RUNTIME_DIR}/sources" "${_sdk}/core_platform" "${_sdk}/core_software")
file(REMOVE "${_sources}" "${_sdk}/core_software/core_driver")
file(CREATE_LINK "${EXECUTORCH_SOURCE_DIR}" "${_sources}" SYMBOLIC)
file(CREATE_LINK "${ETHOS_U_DRIVER_DIR}" "${_sdk}/core_software/core_driver" SYMBOLIC)
if(NOT EXISTS "${ZOO_RUNTIME_DIR}/zoo-runtime.done")
  message(STATUS "zoo: building ExecuTorch's runtime into ${ZOO_RUNTIME_DIR} (once for these sources and this toolchain; a few minutes)")
  # The runtime keeps its own copy of the toolchain: the project that built it may be deleted.
  configure_file("${ZOO_TOOLCHAIN_FILE}" "${ZOO_RUNTIME_DIR}/toolchain.cmake" COPYONLY)
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -S "${_sources}" -B "${ZOO_RUNTIME_DIR}/build" -G Ninja
            --preset arm-baremetal
            "-DCMAKE_TOOLCHAIN_FILE=${ZOO_RUNTIME_DIR}/toolchain.cmake" -DCMAKE_BUILD_TYPE=Release
            -DEXECUTORCH_BUILD_CORTEX_M=OFF -DFETCH_ETHOS_U_CONTENT=OFF "-DETHOS_SDK_PATH=${_sdk}"
            -DEXECUTORCH_BUILD_KERNELS_QUANTIZED=ON "-DPYTHON_EXECUTABLE=${PYTHON_EXECUTABLE}"
    RESULT_VARIABLE _rc OUTPUT_FILE "${ZOO_RUNTIME_DIR}/configure.log" ERROR_FILE "${ZOO_RUNTIME_DIR}/configure.log")
  if(NOT _rc EQUAL 0)
    _zoo_runtime_failed("configuring" "${ZOO_RUNTIME_DIR}/configure.log")
  endif()
  execute_process(
    COMMAND "${CMAKE_COMMAND}" --build "${ZOO_RUNTIME_DIR}/build" --target executorch_core executorch
            executorch_delegate_ethos_u kernels_util_all_deps
    RESULT_VARIABLE _rc OUTPUT_FILE "${ZOO_RUNTIME_DIR}/build.log" ERROR_FILE "${ZOO_RUNTIME_DIR}/build.log")
  if(NOT _rc EQUAL 0)
    _zoo_runtime_failed("building" "${ZOO_RUNTIME_DIR}/build.log")
  endif()
  file(WRITE "${ZOO_RUNTIME_DIR}/zoo-runtime.done" "${_text}")
else()
  message(STATUS "zoo: ExecuTorch's runtime from ${ZOO_RUNTIME_DIR}")
endif()
foreach(_lib IN LISTS ZOO_RUNTIME_KERNELS)
  if(NOT _lib MATCHES "^(portable|quantized)_kernels$")
    message(FATAL_ERROR "zoo: ZOO_RUNTIME_KERNELS names ${_lib}; the runtime builds portable_kernels and quantized_kernels")
  endif()
  if(NOT EXISTS "${ZOO_RUNTIME_DIR}/zoo-${_lib}.done")
    message(STATUS "zoo: building ExecuTorch's ${_lib} into ${ZOO_RUNTIME_DIR} (once, for the first program that "
                   "calls them)")
    execute_process(
      COMMAND "${CMAKE_COMMAND}" --build "${ZOO_RUNTIME_DIR}/build" --target ${_lib}
      RESULT_VARIABLE _rc OUTPUT_FILE "${ZOO_RUNTIME_DIR}/build-${_lib}.log" ERROR_FILE "${ZOO_RUNTIME_DIR}/build-${_lib}.log")
    if(NOT _rc EQUAL 0)
      _zoo_runtime_failed("building" "${ZOO_RUNTIME_DIR}/build-${_lib}.log")
    endif()
    file(WRITE "${ZOO_RUNTIME_DIR}/zoo-${_lib}.done" "${_lib}\n")
  endif()
endforeach()
file(LOCK "${ZOO_RUNTIME_DIR}.lock" RELEASE)

# The runtime's compile definitions (its CMake adds them directory-wide; they do not travel with targets).
load_cache("${ZOO_RUNTIME_DIR}/build" READ_WITH_PREFIX ET_ EXECUTORCH_LOG_LEVEL EXECUTORCH_ENABLE_LOGGING
           EXECUTORCH_ENABLE_PROGRAM_VERIFICATION EXECUTORCH_ENABLE_EVENT_TRACER)
set(_et_defs C10_USING_CUSTOM_GENERATED_MACROS ET_ENABLE_DEPRECATED_CONSTANT_BUFFER=0)
if(ET_EXECUTORCH_LOG_LEVEL MATCHES "^(Debug|Info|Error|Fatal)$")
  list(APPEND _et_defs ET_MIN_LOG_LEVEL=${ET_EXECUTORCH_LOG_LEVEL})
endif()
if(NOT ET_EXECUTORCH_ENABLE_LOGGING)
  list(APPEND _et_defs ET_LOG_ENABLED=0)
endif()
if(NOT ET_EXECUTORCH_ENABLE_PROGRAM_VERIFICATION)
  list(APPEND _et_defs ET_ENABLE_PROGRAM_VERIFICATION=0)
endif()
set(_et_inc "${EXECUTORCH_SOURCE_DIR}/.." "${EXECUTORCH_SOURCE_DIR}/runtime/core/portable_type/c10")
foreach(_lib IN ITEMS executorch_core:libexecutorch_core.a executorch_prim_ops:libexecutorch.a
                      executorch_delegate_ethos_u:backends/arm/libexecutorch_delegate_ethos_u.a
                      portable_kernels:kernels/portable/libportable_kernels.a
                      kernels_util_all_deps:kernels/portable/cpu/util/libkernels_util_all_deps.a
                      quantized_kernels:kernels/quantized/libquantized_kernels.a)
  string(REPLACE ":" ";" _pair "${_lib}")
  list(GET _pair 0 _name)
  list(GET _pair 1 _file)
  if(_name MATCHES "_kernels$" AND NOT _name IN_LIST ZOO_RUNTIME_KERNELS)
    continue()
  endif()
  add_library(${_name} STATIC IMPORTED)
  set_target_properties(${_name} PROPERTIES IMPORTED_LOCATION "${ZOO_RUNTIME_DIR}/build/${_file}"
    INTERFACE_INCLUDE_DIRECTORIES "${_et_inc}" INTERFACE_COMPILE_DEFINITIONS "${_et_defs}")
endforeach()
