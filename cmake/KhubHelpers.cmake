# Helpers shared by every khub target.

# Warnings are errors for khub's own code only; third-party headers come in as SYSTEM includes.
function(khub_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Werror -Wno-missing-field-initializers>)
endfunction()

# khub_library(<name> SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...])
# Creates khub_<name> with the alias khub::<name>, its public headers in include/, exported as khub::<name>.
function(khub_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(khub_${name} ${ARG_SOURCES})
  add_library(khub::${name} ALIAS khub_${name})
  set_target_properties(khub_${name} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME khub_${name})
  target_include_directories(khub_${name} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(khub_${name} PUBLIC cxx_std_20)
  target_link_libraries(khub_${name} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  khub_warnings(khub_${name})
  set_property(GLOBAL APPEND PROPERTY KHUB_EXPORTED_TARGETS khub_${name})
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/include)
    install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  endif()
endfunction()

# khub_test(<name> SOURCES ... DEPS ... LABELS ... [TEST_FILTER gtest-filter] [SERIAL]): one GoogleTest
# executable registered with ctest; TEST_FILTER limits which of its tests are registered; SERIAL runs
# them alone (tests that load the machine on purpose, so that they neither disturb nor are disturbed).
function(khub_test name)
  cmake_parse_arguments(ARG "SERIAL" "TIMEOUT;TEST_FILTER" "SOURCES;DEPS;LABELS;ENVIRONMENT" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    KHUB_SOURCE_DIR="${PROJECT_SOURCE_DIR}" KHUB_BINARY_DIR="${PROJECT_BINARY_DIR}"
    KHUB_PYTHON="${KHUB_PYTHON}")
  khub_warnings(${name})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  set(filter "")
  if(ARG_TEST_FILTER)
    set(filter TEST_FILTER "${ARG_TEST_FILTER}")
  endif()
  # Listing a test program's cases loads it first; one that links LibTorch from a cold page cache
  # (a fresh clone and venv) can take longer than CMake's 5 s default.
  gtest_discover_tests(${name}
    DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 120 ${filter}
    PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT} ENVIRONMENT "${ARG_ENVIRONMENT}" RUN_SERIAL ${ARG_SERIAL})
endfunction()

# khub_use_json_fields(<target>): the never-throwing readers of untrusted JSON (core/json/khub/json/
# fields.h), a private header shared by the libraries that parse Hub answers; not installed.
function(khub_use_json_fields target)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/core/json)
  target_link_libraries(${target} PRIVATE nlohmann_json::nlohmann_json)
endfunction()

# Sanitizer and fuzzer builds (docs/security.md, "Fuzzing and sanitizers"). Called once from the top
# CMakeLists.txt before any target exists, so the flags reach every khub library, tool and test.
#   KHUB_SANITIZE=address  ASan + UBSan, UBSan fatal (-fno-sanitize-recover=undefined)
#   KHUB_SANITIZE=thread   TSan
#   KHUB_FUZZ=ON           clang only: ASan + UBSan + -fsanitize=fuzzer-no-link everywhere, fuzz/ targets
# Use a separate build folder (build-asan, build-tsan, build-fuzz) with -DKHUB_WITH_TORCH=OFF
# -DKHUB_WITH_CUDA=OFF: LibTorch and nvcc objects are not instrumented and are left out.
function(khub_sanitizers)
  set(sanitize "${KHUB_SANITIZE}")
  if(KHUB_FUZZ)
    if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
      message(FATAL_ERROR "KHUB_FUZZ=ON needs clang (libFuzzer): -DCMAKE_CXX_COMPILER=clang++-14 "
                          "-DCMAKE_C_COMPILER=clang-14")
    endif()
    if(sanitize STREQUAL "")
      set(sanitize address)
    elseif(NOT sanitize STREQUAL "address")
      message(FATAL_ERROR "KHUB_FUZZ=ON goes with KHUB_SANITIZE=address (or empty)")
    endif()
  endif()
  if(sanitize STREQUAL "")
    return()
  elseif(sanitize STREQUAL "address")
    set(flags -fsanitize=address,undefined -fno-sanitize-recover=undefined)
  elseif(sanitize STREQUAL "thread")
    set(flags -fsanitize=thread)
  else()
    message(FATAL_ERROR "KHUB_SANITIZE must be empty, 'address' (ASan+UBSan) or 'thread' (TSan), "
                        "not '${sanitize}'")
  endif()
  if(KHUB_HAVE_TORCH OR KHUB_HAVE_CUDA)
    message(WARNING "KHUB_SANITIZE=${sanitize} with LibTorch/CUDA: those parts are not instrumented; "
                    "configure the sanitizer build with -DKHUB_WITH_TORCH=OFF -DKHUB_WITH_CUDA=OFF")
  endif()
  list(APPEND flags -fno-omit-frame-pointer)
  set(compile_flags ${flags})
  if(sanitize STREQUAL "address" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC 12/13 with ASan warn `maybe-uninitialized` inside libstdc++'s std::function (std::regex):
    # a false positive that -Werror turned into a failed build of localhub's tests.
    list(APPEND compile_flags -Wno-maybe-uninitialized)
  endif()
  if(KHUB_FUZZ)
    # Libraries get coverage instrumentation; only the fuzz targets link libFuzzer's main().
    list(APPEND compile_flags -fsanitize=fuzzer-no-link)
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${compile_flags}>")
  add_link_options(${flags})
  set(KHUB_SANITIZE_FLAGS "${flags}" PARENT_SCOPE)
  message(STATUS "khub sanitizers: ${flags} fuzz=${KHUB_FUZZ}")
endfunction()

# khub_sanitizer_exempt(<target>...): builds the named targets (when they exist) without
# sanitizers in a KHUB_SANITIZE build. For test fixtures that stand for foreign kernel modules:
# `khub check` must see what a real module links, not libasan / libubsan.
function(khub_sanitizer_exempt)
  if(KHUB_SANITIZE STREQUAL "" AND NOT KHUB_FUZZ)
    return()
  endif()
  foreach(t ${ARGN})
    if(TARGET ${t})
      target_compile_options(${t} PRIVATE -fno-sanitize=all)
      target_link_options(${t} PRIVATE -fno-sanitize=all)
    endif()
  endforeach()
endfunction()
