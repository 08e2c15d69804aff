# find_package(Cake): compile .cake kernels ahead of time, as part of a CMake build.
#
#   cmake -DCake_DIR="$(cakec --cmake-dir)" ...          # or CMAKE_PREFIX_PATH
#   find_package(Cake 0.1 REQUIRED)
#   cake_add_kernel(app SOURCE gemm_bf16.cake TARGET sm_90a [NAME gemm_bf16] [EMIT cuda|cubin|ptx])
#
# cake_add_kernel runs `cakec emit` at build time, again whenever the .cake file (or anything
# it includes: cakec writes a depfile) changes, into <build>/cake/<target>/<TARGET>/, and adds
# the generated launcher and its header `<NAME>.h` to <target>:
#   EMIT cuda (default): <NAME>.cu, compiled by nvcc for exactly TARGET in an object library
#     linked into <target>; the project must enable the CUDA language.
#   EMIT cubin|ptx: the kernel image embedded in <NAME>.h, whose C++ implementation is
#     compiled by the host compiler; no CUDA language needed.
# Either way <target> links only the CUDA runtime. Sets CAKEC_EXECUTABLE (a cache entry: point
# it at another cakec to use that one). See docs/aot.md.

if(CMAKE_VERSION VERSION_LESS 3.20)  # add_custom_command(DEPFILE) with Makefile generators
  set(Cake_FOUND FALSE)
  set(Cake_NOT_FOUND_MESSAGE "Cake needs CMake 3.20 or newer")
  return()
endif()
include_guard(GLOBAL)
include(CMakeFindDependencyMacro)
find_dependency(CUDAToolkit)

# A pip install puts this directory at <prefix>/lib/pythonX.Y/site-packages/cakec/cmake and
# the cakec script at <prefix>/bin; PATH covers editable installs.
find_program(CAKEC_EXECUTABLE cakec HINTS "${CMAKE_CURRENT_LIST_DIR}/../../../../../bin"
             DOC "the Cake compiler")
if(NOT CAKEC_EXECUTABLE)
  set(Cake_FOUND FALSE)
  set(Cake_NOT_FOUND_MESSAGE "cakec was not found on PATH; set CAKEC_EXECUTABLE")
  return()
endif()

# A function runs under the policies in effect where it is defined: 3.20's, whatever the
# caller's (CMP0116: Ninja reads depfile paths relative to the right directory).
cmake_policy(PUSH)
cmake_policy(VERSION 3.20)
function(cake_add_kernel target)
  cmake_parse_arguments(PARSE_ARGV 1 CAKE "" "SOURCE;TARGET;NAME;EMIT" "")
  if(CAKE_UNPARSED_ARGUMENTS OR NOT CAKE_SOURCE OR NOT CAKE_TARGET)
    message(FATAL_ERROR "cake_add_kernel(<target> SOURCE file.cake TARGET sm_XYa "
                        "[NAME name] [EMIT cuda|cubin|ptx]); got: ${ARGN}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "cake_add_kernel: ${target} is not a target")
  endif()
  if(NOT CAKE_TARGET MATCHES "^sm_([0-9]+[af]?)$")
    message(FATAL_ERROR "cake_add_kernel: TARGET ${CAKE_TARGET} is not sm_XY[a|f] (see `cakec targets`)")
  endif()
  set(arch "${CMAKE_MATCH_1}")
  if(NOT CAKE_EMIT)
    set(CAKE_EMIT cuda)
  elseif(NOT CAKE_EMIT MATCHES "^(cuda|cubin|ptx)$")
    message(FATAL_ERROR "cake_add_kernel: EMIT ${CAKE_EMIT} is not cuda, cubin or ptx")
  endif()
  cmake_path(ABSOLUTE_PATH CAKE_SOURCE BASE_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
             NORMALIZE OUTPUT_VARIABLE source)
  if(NOT CAKE_NAME)
    cmake_path(GET source STEM CAKE_NAME)
  endif()

  # One directory per CMake target and SKU: a kernel can be built for several of each.
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/cake/${target}/${CAKE_TARGET}")
  set(header "${dir}/${CAKE_NAME}.h")
  if(CAKE_EMIT STREQUAL "cuda")
    set(output "${dir}/${CAKE_NAME}.cu")
  else()
    set(output "${dir}/${CAKE_NAME}.${CAKE_EMIT}")
  endif()
  add_custom_command(
    OUTPUT "${output}" "${header}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${dir}"
    COMMAND "${CAKEC_EXECUTABLE}" emit "${source}" --target ${CAKE_TARGET} --emit ${CAKE_EMIT}
            -o "${output}" --header "${header}" -MD -MF "${dir}/${CAKE_NAME}.d"
    DEPENDS "${source}"
    DEPFILE "${dir}/${CAKE_NAME}.d"
    COMMENT "cakec: ${CAKE_NAME} for ${CAKE_TARGET}"
    VERBATIM)

  if(CAKE_EMIT STREQUAL "cuda")
    if(NOT CMAKE_CUDA_COMPILER)
      message(FATAL_ERROR "cake_add_kernel: EMIT cuda needs the CUDA language: "
                          "project(... LANGUAGES CXX CUDA) or enable_language(CUDA)")
    endif()
    # Its own object library, so the kernel is built for exactly TARGET whatever the
    # architectures of <target>'s other CUDA sources; CMake links the CUDA runtime.
    set(objects "${target}_cake_${CAKE_NAME}_${CAKE_TARGET}")
    add_library(${objects} OBJECT "${output}" "${header}")
    set_target_properties(${objects} PROPERTIES CUDA_ARCHITECTURES ${arch}
                          POSITION_INDEPENDENT_CODE ON)
    target_include_directories(${objects} PUBLIC "${dir}" ${CUDAToolkit_INCLUDE_DIRS})
    target_link_libraries(${target} PRIVATE ${objects})
  else()
    set(impl "${dir}/${CAKE_NAME}_launcher.cpp")
    file(CONFIGURE OUTPUT "${impl}"
         CONTENT "#define CAKE_IMPLEMENTATION\n#include \"${CAKE_NAME}.h\"\n")
    target_sources(${target} PRIVATE "${impl}" "${header}")
    target_include_directories(${target} PRIVATE "${dir}")
    if(CMAKE_CUDA_RUNTIME_LIBRARY STREQUAL "Shared")
      target_link_libraries(${target} PRIVATE CUDA::cudart)
    else()
      target_link_libraries(${target} PRIVATE CUDA::cudart_static)
    endif()
  endif()
endfunction()
cmake_policy(POP)
