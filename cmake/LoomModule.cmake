# loom_module(NAME name DEPS ...): one static library per folder of src/, built from every
# *.cc beside this CMakeLists.txt except *_test.cc; the *_test.cc files form one test binary
# per module (loom_<name>_test), so no test binary grows giant.
function(loom_module)
  cmake_parse_arguments(M "" "NAME" "DEPS;TEST_DEPS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  file(GLOB tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cc)
  if(tests)
    list(REMOVE_ITEM sources ${tests})
  endif()
  add_library(loom_${M_NAME} STATIC ${sources})
  # include/ is the installed, public surface; src/ holds the private headers, seen only inside
  # this build (modules, tests, benchmarks, fuzzers), never by an embedder.
  target_include_directories(loom_${M_NAME} PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                                                  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src>)
  if(NOT M_NAME STREQUAL "demo_workflows")  # the stock binary's demo workflows stay out of libloom
    set_property(GLOBAL APPEND PROPERTY LOOM_LIBRARY_MODULES loom_${M_NAME})
  endif()
  target_link_libraries(loom_${M_NAME} PUBLIC ${M_DEPS})
  if(LOOM_BUILD_TESTS AND tests)
    add_executable(loom_${M_NAME}_test ${tests})
    target_link_libraries(loom_${M_NAME}_test PRIVATE loom_${M_NAME} ${M_TEST_DEPS} loom_test_support
                                                      GTest::gtest GTest::gtest_main)
    gtest_discover_tests(loom_${M_NAME}_test DISCOVERY_TIMEOUT 60
                         PROPERTIES ENVIRONMENT "LOOM_TEST_BIN_DIR=${CMAKE_BINARY_DIR}")
  endif()
endfunction()
