# Fails when the package runtime library needs LLVM, protobuf, ONNX or Qt
# (its DT_NEEDED entries, read with objdump -p).
find_program(OBJDUMP objdump REQUIRED)
execute_process(COMMAND ${OBJDUMP} -p ${LIB} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "objdump -p ${LIB} failed")
endif()
string(REGEX MATCHALL "NEEDED +[^\n]+" needed "${out}")
foreach(n ${needed})
  if(n MATCHES "LLVM|protobuf|onnx|Qt|nvrtc|cuda")
    message(FATAL_ERROR "${LIB} is not runtime only: ${n}")
  endif()
endforeach()
message(STATUS "runtime only: ${needed}")
