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

# khub_test(<name> SOURCES ... DEPS ... LABELS ... [TEST_FILTER gtest-filter]): one GoogleTest
# executable registered with ctest; TEST_FILTER limits which of its tests are registered.
function(khub_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT;TEST_FILTER" "SOURCES;DEPS;LABELS;ENVIRONMENT" ${ARGN})
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
  gtest_discover_tests(${name}
    DISCOVERY_MODE PRE_TEST ${filter}
    PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT} ENVIRONMENT "${ARG_ENVIRONMENT}")
endfunction()

# khub_use_json_fields(<target>): the never-throwing readers of untrusted JSON (core/json/khub/json/
# fields.h), a private header shared by the libraries that parse Hub answers; not installed.
function(khub_use_json_fields target)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/core/json)
  target_link_libraries(${target} PRIVATE nlohmann_json::nlohmann_json)
endfunction()
