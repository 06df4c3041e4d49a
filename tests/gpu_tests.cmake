# GPU execution tests carry the CTest label `gpu` (`ctest -L gpu`; excluded
# with `ctest -LE gpu`). They skip with the reason where no CUDA driver is
# present. gtest_discover_tests defines the list <target>_TESTS in its
# generated file; this include, registered after it, labels those tests.
if(TARGET tessera_cuda_gpu_tests)
  set(_gpu_labels ${CMAKE_CURRENT_BINARY_DIR}/tessera_cuda_gpu_tests_labels.cmake)
  file(WRITE ${_gpu_labels}
       "if(DEFINED tessera_cuda_gpu_tests_TESTS)\n"
       "  set_tests_properties(\${tessera_cuda_gpu_tests_TESTS} PROPERTIES LABELS gpu)\n"
       "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${_gpu_labels})
endif()
