# khub_kernel(): one kernel-builder style project -> variant dirs for the configured torch.
#   <name>/build/torch<MM>-cxx11-cpu-<arch>-linux/          always
#   <name>/build/torch<MM>-cxx11-cu<XY>-<arch>-linux/        when KHUB_HAVE_CUDA
#   <name>/build/torch-stable-abi<AB>-cpu-<arch>-linux/      when KHUB_KERNELS_STABLE_ABI is set (2.10)
#   <name>/build/torch-stable-abi<AB>-cu<XY>-<arch>-linux/   both
#   <name>/build/tvm-ffi<MM>-cpu-<arch>-linux/                when KHUB_HAVE_TVM_FFI (no torch needed)
#   <name>/build/tvm-ffi<MM>-cu<XY>-<arch>-linux/             both
# Each holds __init__.py (+ other package files), _ops.py, <id>.abi3.so and metadata.json, with
# id = _<name>_<backend>_<uid> (torch) or _<name>_<backend>_stable_<uid> (stable ABI: its own op
# namespace, so both builds load side by side). The stable-ABI module is the same torch-free
# implementation objects with torch-ext/torch_binding_stable.cpp, compiled with TORCH_TARGET_VERSION
# (only the C shims of that torch version and the header-only stable API). The CPU implementation
# is registered for the CPU key in every variant.
# A tvm-ffi variant holds the Python files of tvm-ffi-ext/<pkg>/, _ops.py (tvm_ffi.load_module), <id>.so and
# metadata.json, id = _<name>_<backend>_tvm_ffi_<uid>: tvm-ffi-ext/tvm_ffi_binding.cpp over the same objects,
# exporting `<op>_cpu` (every variant) and `<op>_cuda` (CUDA variants), linked to libtvm_ffi.so only.

set(_KHUB_KERNEL_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR})

# uid: first 7 hex of `git rev-parse HEAD:kernels`, `_dirty` when tracked files under kernels/ differ
# from HEAD.
# KHUB_KERNELS_UID overrides (for source copies without .git); without git: random base32.
function(khub_kernels_uid out)
  # The id names the kernels' sources: the git tree of kernels/ (not of the whole repo), so commits
  # elsewhere in khub keep the ids — and the built modules — unchanged.
  set(KHUB_KERNELS_UID "" CACHE STRING "Override the kernels' unique id (default: git tree hash of kernels/)")
  if(KHUB_KERNELS_UID)
    set(${out} ${KHUB_KERNELS_UID} PARENT_SCOPE)
    return()
  endif()
  find_package(Git QUIET)
  if(GIT_FOUND)
    execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse HEAD:kernels WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
      OUTPUT_VARIABLE tree RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  if(GIT_FOUND AND rc EQUAL 0)
    string(SUBSTRING "${tree}" 0 7 uid)
    execute_process(COMMAND ${GIT_EXECUTABLE} diff --quiet HEAD -- kernels WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
      RESULT_VARIABLE dirty ERROR_QUIET)
    if(NOT dirty EQUAL 0)
      string(APPEND uid _dirty)
    endif()
    # Re-configure (new id) when HEAD moves or the index changes.
    foreach(p index logs/HEAD)
      execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --path-format=absolute --git-path ${p}
        WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE f OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(f AND EXISTS "${f}")
        set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${f}")
      endif()
    endforeach()
  else()
    string(RANDOM LENGTH 13 ALPHABET abcdefghijklmnopqrstuvwxyz234567 uid)
  endif()
  set(${out} ${uid} PARENT_SCOPE)
endfunction()

# "<arch>-<os>" of the variant names (x86_64-linux).
function(_khub_arch_os out)
  set(arch ${CMAKE_SYSTEM_PROCESSOR})
  if(arch MATCHES "^(amd64|AMD64)$")
    set(arch x86_64)
  elseif(arch MATCHES "^(arm64|ARM64)$")
    set(arch aarch64)
  endif()
  string(TOLOWER ${CMAKE_SYSTEM_NAME} os)
  set(${out} "${arch}-${os}" PARENT_SCOPE)
endfunction()

# The tvm-ffi variant names: tvm-ffi<major><minor> of the tvm-ffi headers built with (KHUB_TVM_FFI_VERSION,
# as kernel-builder names them from tvm_ffi.__version__), cu<XY> of the CUDA toolkit (torch's CUDA when
# torch is there: the same toolkit). Empty without tvm-ffi (and the CUDA name without CUDA).
function(khub_kernels_tvm_ffi_variant_names cpu_out cuda_out)
  set(${cpu_out} "" PARENT_SCOPE)
  set(${cuda_out} "" PARENT_SCOPE)
  if(NOT KHUB_HAVE_TVM_FFI OR NOT KHUB_TVM_FFI_VERSION MATCHES "^([0-9]+)\\.([0-9]+)")
    return()
  endif()
  set(fw "tvm-ffi${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
  _khub_arch_os(arch_os)
  set(${cpu_out} "${fw}-cpu-${arch_os}" PARENT_SCOPE)
  set(cuda "${KHUB_TORCH_CUDA_VERSION}")
  if(NOT cuda)
    set(cuda "${CMAKE_CUDA_COMPILER_VERSION}")
  endif()
  if(KHUB_HAVE_CUDA AND cuda MATCHES "^([0-9]+)\\.([0-9]+)")
    set(${cuda_out} "${fw}-cu${CMAKE_MATCH_1}${CMAKE_MATCH_2}-${arch_os}" PARENT_SCOPE)
  endif()
endfunction()

function(khub_kernels_variant_names cpu_out cuda_out)
  string(REGEX MATCH "^([0-9]+)\\.([0-9]+)" _ "${KHUB_TORCH_VERSION}")
  set(torch "torch${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
  if("${TORCH_CXX_FLAGS}" MATCHES "_GLIBCXX_USE_CXX11_ABI=0")
    set(abi "-cxx98")
  else()
    set(abi "-cxx11")
  endif()
  _khub_arch_os(arch_os)
  string(REGEX REPLACE "-[^-]+$" "" arch "${arch_os}")
  string(REGEX REPLACE "^.*-" "" os "${arch_os}")
  set(${cpu_out} "${torch}${abi}-cpu-${arch}-${os}" PARENT_SCOPE)
  if(KHUB_HAVE_CUDA AND KHUB_TORCH_CUDA_VERSION MATCHES "^([0-9]+)\\.([0-9]+)")
    set(${cuda_out} "${torch}${abi}-cu${CMAKE_MATCH_1}${CMAKE_MATCH_2}-${arch}-${os}" PARENT_SCOPE)
  else()
    set(${cuda_out} "" PARENT_SCOPE)
  endif()
endfunction()

# The stable-ABI variant names for KHUB_KERNELS_STABLE_ABI ("2.10" -> torch-stable-abi210-cpu-<arch>-<os>,
# named after the target, never the build torch) and the TORCH_TARGET_VERSION value
# ((major << 56) | (minor << 48)). Empty names when the option is empty; an error when the build torch is
# older than the target (its headers cannot build for a torch they do not know).
function(khub_kernels_stable_variant_names cpu_out cuda_out target_out)
  set(${cpu_out} "" PARENT_SCOPE)
  set(${cuda_out} "" PARENT_SCOPE)
  set(${target_out} "" PARENT_SCOPE)
  if(NOT KHUB_KERNELS_STABLE_ABI)
    return()
  endif()
  if(NOT KHUB_KERNELS_STABLE_ABI MATCHES "^([0-9])\\.([0-9]+)$")
    message(FATAL_ERROR "KHUB_KERNELS_STABLE_ABI: expected <major>.<minor> (2.10), got '${KHUB_KERNELS_STABLE_ABI}'")
  endif()
  set(major ${CMAKE_MATCH_1})
  set(minor ${CMAKE_MATCH_2})
  string(REGEX MATCH "^([0-9]+)\\.([0-9]+)" _ "${KHUB_TORCH_VERSION}")
  if(CMAKE_MATCH_1 LESS major OR (CMAKE_MATCH_1 EQUAL major AND CMAKE_MATCH_2 LESS minor))
    message(FATAL_ERROR "KHUB_KERNELS_STABLE_ABI ${KHUB_KERNELS_STABLE_ABI} is newer than the build torch "
                        "${KHUB_TORCH_VERSION}")
  endif()
  math(EXPR target "(${major} << 56) | (${minor} << 48)" OUTPUT_FORMAT HEXADECIMAL)
  khub_kernels_variant_names(torch_cpu torch_cuda)
  string(REGEX REPLACE "^torch[0-9]+(-cxx11|-cxx98)?-" "torch-stable-abi${major}${minor}-" cpu "${torch_cpu}")
  set(${cpu_out} "${cpu}" PARENT_SCOPE)
  if(torch_cuda)
    string(REGEX REPLACE "^torch[0-9]+(-cxx11|-cxx98)?-" "torch-stable-abi${major}${minor}-" cuda "${torch_cuda}")
    set(${cuda_out} "${cuda}" PARENT_SCOPE)
  endif()
  set(${target_out} "${target}" PARENT_SCOPE)
endfunction()

# "9.0+PTX"-style archs from KHUB_KERNELS_CUDA_ARCHS (90-real;90-virtual), sorted lexicographically.
function(_khub_cuda_archs out)
  set(archs "")
  foreach(a ${KHUB_KERNELS_CUDA_ARCHS})
    if(NOT a MATCHES "^([0-9]+)([0-9])([af]?)")
      message(FATAL_ERROR "KHUB_KERNELS_CUDA_ARCHS: cannot parse '${a}'")
    endif()
    set(v "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}${CMAKE_MATCH_3}")
    if(a MATCHES "-virtual$")
      list(REMOVE_ITEM archs "${v}")
      list(APPEND archs "${v}+PTX")
    elseif(NOT "${v}+PTX" IN_LIST archs)
      list(APPEND archs "${v}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES archs)
  list(SORT archs)
  set(${out} "${archs}" PARENT_SCOPE)
endfunction()

# Reads name, version and license from [general] of build.toml.
function(_khub_read_build_toml file prefix)
  file(READ ${file} toml)
  foreach(key name license)
    string(REGEX MATCH "\n${key} = \"([^\"]+)\"" _ "\n${toml}")
    set(${prefix}_${key} "${CMAKE_MATCH_1}" PARENT_SCOPE)
  endforeach()
  string(REGEX MATCH "\nversion = ([0-9]+)" _ "\n${toml}")
  set(${prefix}_version "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()

# metadata.json as kernel-builder writes it: serde pretty, 2-space indent, no trailing newline, no digest
# (`khub hash` adds it; see KHUB_KERNELS_DIGEST).
function(_khub_write_metadata file name id version license backend archs)
  set(pydeps "[]")
  if(ARGN)  # python-depends names (tvm-ffi variants: "tvm-ffi", which kernels checks imports as tvm_ffi)
    set(pydeps "")
    foreach(d ${ARGN})
      string(APPEND pydeps "${sep}\n    \"${d}\"")
      set(sep ",")
    endforeach()
    set(pydeps "[${pydeps}\n  ]")
  endif()
  set(j "{\n  \"name\": \"${name}\",\n  \"id\": \"${id}\",\n  \"version\": ${version},\n")
  string(APPEND j "  \"license\": \"${license}\",\n  \"python-depends\": ${pydeps},\n  \"kernel-depends\": [],\n")
  string(APPEND j "  \"backend\": {\n    \"type\": \"${backend}\"")
  if(archs)
    string(APPEND j ",\n    \"archs\": [")
    set(sep "")
    foreach(a ${archs})
      string(APPEND j "${sep}\n      \"${a}\"")
      set(sep ",")
    endforeach()
    string(APPEND j "\n    ]")
  endif()
  string(APPEND j "\n  }\n}")
  file(WRITE ${file}.tmp "${j}")
  file(COPY_FILE ${file}.tmp ${file} ONLY_IF_DIFFERENT)
endfunction()

# _ops.py of a tvm-ffi variant, as kernel-builder's templates/tvm_ffi/_ops.py.in renders it (the module is
# loaded once and kept: tvm_ffi.load_module adds it to the module globals).
function(_khub_write_tvm_ffi_ops_py file id)
  file(WRITE ${file}.tmp "from pathlib import Path\nimport platform\n\nimport tvm_ffi\n\n"
    "_SELF_PATH = Path(__file__).parent\n\n"
    "if platform.system() == \"Darwin\":\n    ops = tvm_ffi.load_module(_SELF_PATH / \"${id}.dylib\")\n"
    "elif platform.system() == \"Windows\":\n    ops = tvm_ffi.load_module(_SELF_PATH / \"${id}.dll\")\n"
    "else:\n    ops = tvm_ffi.load_module(_SELF_PATH / \"${id}.so\")\n")
  file(COPY_FILE ${file}.tmp ${file} ONLY_IF_DIFFERENT)
endfunction()

function(_khub_write_ops_py file id)
  file(WRITE ${file}.tmp "import torch\nfrom . import ${id}\nops = torch.ops.${id}\n\n\n"
    "def add_op_namespace_prefix(op_name: str):\n    \"\"\"Prefix op by namespace.\"\"\"\n"
    "    return f\"${id}::{op_name}\"\n")
  file(COPY_FILE ${file}.tmp ${file} ONLY_IF_DIFFERENT)
endfunction()

# One tvm-ffi variant of kernel `name` for `backend` (cpu|cuda), inside khub_kernel (reads its src, pyname,
# includes and meta_* variables): a SHARED library <id>.so without `lib` prefix, -DTVM_FFI_EXTENSION_NAME=<id>,
# -fno-gnu-unique, linked to libtvm_ffi.so (tvm_ffi::shared) and, for CUDA, libcudart; no torch, no
# Python, no rpath (kernel-builder strips it; the host loads libtvm_ffi.so first).
macro(_khub_tvm_ffi_variant name backend)
  set(id _${pyname}_${backend}_tvm_ffi_${KHUB_KERNELS_UID_VALUE})
  set(target khub_kernel_${name}_tvm_ffi_${backend})
  if("${backend}" STREQUAL cpu)
    set(variant ${KHUB_KERNELS_TVM_FFI_CPU_VARIANT})
    set(archs "")
  else()
    set(variant ${KHUB_KERNELS_TVM_FFI_CUDA_VARIANT})
    _khub_cuda_archs(archs)
  endif()
  set(stage ${CMAKE_CURRENT_BINARY_DIR}/${name}/${variant})
  # manylinux_sstream.cpp keeps the module within manylinux_2_28's GLIBCXX versions; the version script
  # exports only the __tvm_ffi_* entry points (and keeps those instantiations inside).
  add_library(${target} SHARED ${src}/tvm-ffi-ext/tvm_ffi_binding.cpp ${_KHUB_KERNEL_CMAKE_DIR}/../common/src/manylinux_sstream.cpp
                               $<TARGET_OBJECTS:khub_kernel_${name}_cpu_impl>)
  target_include_directories(${target} PRIVATE ${includes})
  target_compile_definitions(${target} PRIVATE TVM_FFI_EXTENSION_NAME=${id})
  target_compile_options(${target} PRIVATE -fno-gnu-unique -Wall -Wextra -Werror)
  target_link_options(${target} PRIVATE "LINKER:--version-script=${_KHUB_KERNEL_CMAKE_DIR}/tvm_ffi_exports.map")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${_KHUB_KERNEL_CMAKE_DIR}/tvm_ffi_exports.map)
  target_link_libraries(${target} PRIVATE tvm_ffi::shared)
  if("${backend}" STREQUAL cuda)
    target_sources(${target} PRIVATE $<TARGET_OBJECTS:khub_kernel_${name}_cuda_impl>)
    target_compile_definitions(${target} PRIVATE KHUB_KERNEL_CUDA=1)
    target_link_libraries(${target} PRIVATE CUDA::cudart)
  endif()
  set_target_properties(${target} PROPERTIES
    OUTPUT_NAME ${id} PREFIX "" SUFFIX ".so" CXX_VISIBILITY_PRESET hidden SKIP_BUILD_RPATH ON
    LIBRARY_OUTPUT_DIRECTORY ${stage})
  _khub_write_metadata(${stage}/metadata.json ${name} ${id} ${meta_version} ${meta_license} ${backend} "${archs}"
                       tvm-ffi)
  _khub_write_tvm_ffi_ops_py(${stage}/_ops.py ${id})
  set(dest ${KHUB_KERNELS_OUTPUT_DIR}/${name}/build/${variant})
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -DSTAGE=${stage} -DDEST=${dest} -DSO=$<TARGET_FILE:${target}>
            -DPYDIR=${src}/tvm-ffi-ext/${pyname} -P ${_KHUB_KERNEL_CMAKE_DIR}/KhubInstallVariant.cmake
    COMMENT "kernels: ${name} -> ${dest}" VERBATIM)
  add_dependencies(khub_kernels ${target})
  set_property(GLOBAL APPEND PROPERTY KHUB_KERNEL_VARIANT_TARGETS ${target})
  set_property(GLOBAL APPEND PROPERTY KHUB_KERNEL_VARIANT_DIRS ${dest})
  set_property(TARGET ${target} PROPERTY KHUB_VARIANT_DIR ${dest})
  set_property(TARGET ${target} PROPERTY KHUB_VARIANT_ID ${id})
endmacro()

# khub_kernel(<name> CPU_SOURCES ... CUDA_SOURCES ... INCLUDES ...)
function(khub_kernel name)
  cmake_parse_arguments(ARG "" "" "CPU_SOURCES;CUDA_SOURCES;INCLUDES" ${ARGN})
  set(src ${CMAKE_CURRENT_SOURCE_DIR}/${name})
  _khub_read_build_toml(${src}/build.toml meta)
  if(NOT meta_name STREQUAL name)
    message(FATAL_ERROR "kernels/${name}/build.toml: general.name is '${meta_name}', expected '${name}'")
  endif()
  string(REPLACE "-" "_" pyname ${name})
  # The Hub card: `khub push build/` uploads the variants dir's CARD.md as the repo's README.md.
  if(EXISTS ${src}/CARD.md)
    configure_file(${src}/CARD.md ${KHUB_KERNELS_OUTPUT_DIR}/${name}/build/CARD.md COPYONLY)
  endif()
  set(includes ${CMAKE_CURRENT_SOURCE_DIR}/common/include)
  foreach(i ${ARG_INCLUDES})
    list(APPEND includes ${src}/${i})
  endforeach()

  # Torch-free implementation objects, compiled once and linked into every variant.
  list(TRANSFORM ARG_CPU_SOURCES PREPEND ${src}/)
  add_library(khub_kernel_${name}_cpu_impl OBJECT ${ARG_CPU_SOURCES})
  target_include_directories(khub_kernel_${name}_cpu_impl PRIVATE ${includes})
  # -fno-trapping-math: no FP exception traps are relied on, so selects may evaluate both sides and
  # the element loops (GEGLU's erf/exp, the bf16 rounding) vectorize; results are unchanged (IEEE).
  target_compile_options(khub_kernel_${name}_cpu_impl PRIVATE -O3 -fno-trapping-math -fno-gnu-unique -Wall -Wextra
                                                              -Werror)
  set_target_properties(khub_kernel_${name}_cpu_impl PROPERTIES CXX_VISIBILITY_PRESET hidden)
  set(backends cpu)
  if(KHUB_KERNELS_CUDA_VARIANT OR KHUB_KERNELS_TVM_FFI_CUDA_VARIANT)
    list(TRANSFORM ARG_CUDA_SOURCES PREPEND ${src}/)
    add_library(khub_kernel_${name}_cuda_impl OBJECT ${ARG_CUDA_SOURCES})
    target_include_directories(khub_kernel_${name}_cuda_impl PRIVATE ${includes})
    target_compile_options(khub_kernel_${name}_cuda_impl PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo --expt-relaxed-constexpr -Xcompiler=-fno-gnu-unique>)
    set_target_properties(khub_kernel_${name}_cuda_impl PROPERTIES
      CUDA_VISIBILITY_PRESET hidden POSITION_INDEPENDENT_CODE ON CUDA_STANDARD 17
      CUDA_ARCHITECTURES "${KHUB_KERNELS_CUDA_ARCHS}")
    list(APPEND backends cuda)
  endif()

  set(abis "")
  if(KHUB_HAVE_TORCH)
    list(APPEND abis torch)
  endif()
  if(KHUB_KERNELS_STABLE_CPU_VARIANT)
    list(APPEND abis stable)
  endif()
  if(KHUB_KERNELS_TVM_FFI_CPU_VARIANT AND EXISTS ${src}/tvm-ffi-ext/tvm_ffi_binding.cpp)
    list(APPEND abis tvm_ffi)
  endif()
  foreach(abi ${abis})
    foreach(backend ${backends})
      if(abi STREQUAL tvm_ffi)
        if(backend STREQUAL cuda AND NOT KHUB_KERNELS_TVM_FFI_CUDA_VARIANT)
          continue()
        endif()
        _khub_tvm_ffi_variant(${name} ${backend})
        continue()
      endif()
      if(backend STREQUAL cuda AND NOT KHUB_KERNELS_CUDA_VARIANT)
        continue()
      endif()
      if(abi STREQUAL torch)
        set(id _${pyname}_${backend}_${KHUB_KERNELS_UID_VALUE})
        set(target khub_kernel_${name}_${backend})
        set(binding ${src}/torch-ext/torch_binding.cpp)
      else()
        set(id _${pyname}_${backend}_stable_${KHUB_KERNELS_UID_VALUE})
        set(target khub_kernel_${name}_stable_${backend})
        set(binding ${src}/torch-ext/torch_binding_stable.cpp)
      endif()
      if(backend STREQUAL cpu)
        set(variant ${KHUB_KERNELS_CPU_VARIANT})
        set(archs "")
      else()
        set(variant ${KHUB_KERNELS_CUDA_VARIANT})
        _khub_cuda_archs(archs)
      endif()
      if(abi STREQUAL stable)
        string(TOUPPER ${backend} B)
        set(variant ${KHUB_KERNELS_STABLE_${B}_VARIANT})
      endif()
      set(stage ${CMAKE_CURRENT_BINARY_DIR}/${name}/${variant})
      add_library(${target} MODULE ${binding} $<TARGET_OBJECTS:khub_kernel_${name}_cpu_impl>)
      target_include_directories(${target} PRIVATE ${includes})
      target_compile_definitions(${target} PRIVATE TORCH_EXTENSION_NAME=${id})
      target_include_directories(${target} SYSTEM PRIVATE ${TORCH_INCLUDE_DIRS})
      if(abi STREQUAL torch)
        target_compile_options(${target} PRIVATE -fno-gnu-unique ${TORCH_CXX_FLAGS})
        target_link_libraries(${target} PRIVATE torch_cpu c10)
      else()
        # Only the C shims of libtorch_cpu (and libtorch_cuda) are called: linked to those files, not to
        # the imported targets, whose interfaces add the CUDA stack; no C++ ABI flag. libc10 comes
        # before libstdc++ for one reason: STD_TORCH_CHECK formats with std::ostringstream, whose
        # newer members (GLIBCXX_3.4.26/29, beyond manylinux_2_28) libc10 exports, so the references
        # bind there unversioned, as the torch variants' own do.
        target_compile_definitions(${target} PRIVATE TORCH_TARGET_VERSION=${KHUB_KERNELS_STABLE_TARGET})
        target_compile_options(${target} PRIVATE -fno-gnu-unique)
        target_link_libraries(${target} PRIVATE $<TARGET_FILE:torch_cpu> $<TARGET_FILE:c10>)
      endif()
      if(backend STREQUAL cuda)
        target_sources(${target} PRIVATE $<TARGET_OBJECTS:khub_kernel_${name}_cuda_impl>)
        target_compile_definitions(${target} PRIVATE KHUB_KERNEL_CUDA=1)
        if(abi STREQUAL torch)
          target_link_libraries(${target} PRIVATE c10_cuda CUDA::cudart)
        else()
          # aoti_torch_get_current_cuda_stream lives in libtorch_cuda.
          target_link_libraries(${target} PRIVATE $<TARGET_FILE:torch_cuda> CUDA::cudart)
        endif()
      endif()
      set_target_properties(${target} PROPERTIES
        OUTPUT_NAME ${id} PREFIX "" SUFFIX ".abi3.so" CXX_VISIBILITY_PRESET hidden
        LIBRARY_OUTPUT_DIRECTORY ${stage})
      _khub_write_metadata(${stage}/metadata.json ${name} ${id} ${meta_version} ${meta_license} ${backend} "${archs}")
      _khub_write_ops_py(${stage}/_ops.py ${id})
      set(dest ${KHUB_KERNELS_OUTPUT_DIR}/${name}/build/${variant})
      add_custom_command(TARGET ${target} POST_BUILD
        COMMAND ${CMAKE_COMMAND} -DSTAGE=${stage} -DDEST=${dest} -DSO=$<TARGET_FILE:${target}>
                -DPYDIR=${src}/torch-ext/${pyname} -P ${_KHUB_KERNEL_CMAKE_DIR}/KhubInstallVariant.cmake
        COMMENT "kernels: ${name} -> ${dest}" VERBATIM)
      add_dependencies(khub_kernels ${target})
      set_property(GLOBAL APPEND PROPERTY KHUB_KERNEL_VARIANT_TARGETS ${target})
      set_property(GLOBAL APPEND PROPERTY KHUB_KERNEL_VARIANT_DIRS ${dest})
      set_property(TARGET ${target} PROPERTY KHUB_VARIANT_DIR ${dest})
      set_property(TARGET ${target} PROPERTY KHUB_VARIANT_ID ${id})
    endforeach()
  endforeach()
endfunction()

# Digest hook: once every directory is processed, if the `khub` executable target exists and
# KHUB_KERNELS_DIGEST is ON, the target khub_kernels_digest (part of khub_kernels and of "all") runs
# `khub hash <variant dir>` on every variant dir after the variants are installed (each build:
# installing rewrites metadata.json without a digest).
function(khub_kernels_defer_digest_hook)
  cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL _khub_kernels_wire_digest)
endfunction()

function(_khub_kernels_wire_digest)
  if(NOT KHUB_KERNELS_DIGEST)
    return()
  endif()
  if(NOT TARGET khub)
    message(WARNING "KHUB_KERNELS_DIGEST is ON but there is no khub target; metadata.json stays without digest")
    return()
  endif()
  get_property(targets GLOBAL PROPERTY KHUB_KERNEL_VARIANT_TARGETS)
  get_property(dirs GLOBAL PROPERTY KHUB_KERNEL_VARIANT_DIRS)
  set(commands "")
  foreach(dir ${dirs})
    list(APPEND commands COMMAND $<TARGET_FILE:khub> hash ${dir})
  endforeach()
  add_custom_target(khub_kernels_digest ALL ${commands} COMMENT "kernels: khub hash on every variant dir" VERBATIM)
  add_dependencies(khub_kernels_digest khub ${targets})
  add_dependencies(khub_kernels khub_kernels_digest)
endfunction()
