# GPU execution tests carry the CTest label `gpu` (`ctest -L gpu`; excluded
# with `ctest -LE gpu`). They skip with the reason where no CUDA driver is
# present. gtest_discover_tests defines the list <target>_TESTS in its
# generated file; this include, registered after it, labels those tests.
# The programs are the `gpu` subfolders of tests/engine (tests/CMakeLists.txt).
foreach(program ${TESSERA_GPU_TEST_PROGRAMS})
  set(_gpu_labels ${CMAKE_CURRENT_BINARY_DIR}/${program}_labels.cmake)
  file(WRITE ${_gpu_labels}
       "if(DEFINED ${program}_TESTS)\n"
       "  set_tests_properties(\${${program}_TESTS} PROPERTIES LABELS gpu)\n"
       "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${_gpu_labels})
endforeach()
