# Fails when a layer rule of DESIGN.md is broken: Qt in engine/, LLVM headers
# outside engine/codegen/llvm/, protobuf/ONNX headers outside engine/frontend/onnx/
# (and engine/package/), LLVM or protobuf in widgets/; the product (engine/,
# widgets/, app/) includes no benchmark code or comparator header (bench/,
# cblas.h, oneDNN) and no CUDA toolkit header (NVRTC and the driver are
# loaded with dlopen).
file(GLOB_RECURSE engine_files ${SRC}/engine/*.h ${SRC}/engine/*.cpp)
file(GLOB_RECURSE product_files ${SRC}/engine/*.h ${SRC}/engine/*.cpp ${SRC}/widgets/*.h
     ${SRC}/widgets/*.cpp ${SRC}/app/*.h ${SRC}/app/*.cpp)
file(GLOB_RECURSE widget_files ${SRC}/widgets/*.h ${SRC}/widgets/*.cpp)
set(problems "")
foreach(f ${engine_files})
  file(STRINGS ${f} lines REGEX "^#include[ \t]*[<\"]")
  file(RELATIVE_PATH rel ${SRC} ${f})
  foreach(l ${lines})
    if(l MATCHES "#include[ \t]*[<\"]Q[A-Za-z]")
      string(APPEND problems "\n  ${rel}: Qt in the engine: ${l}")
    endif()
    if(l MATCHES "#include[ \t]*[<\"]llvm/" AND NOT rel MATCHES "^engine/codegen/llvm/")
      string(APPEND problems "\n  ${rel}: LLVM header outside engine/codegen/llvm: ${l}")
    endif()
    if(l MATCHES "#include[ \t]*[<\"](onnx/|google/protobuf)" AND NOT rel MATCHES "^engine/(frontend/onnx|package)/")
      string(APPEND problems "\n  ${rel}: protobuf/ONNX header outside the frontend: ${l}")
    endif()
  endforeach()
endforeach()
# forbid_includes(FILES REGEX WHAT): each include of FILES matching REGEX is a problem.
function(forbid_includes files regex what)
  foreach(f ${files})
    file(STRINGS ${f} lines REGEX "^#include[ \t]*[<\"](${regex})")
    file(RELATIVE_PATH rel ${SRC} ${f})
    foreach(l ${lines})
      string(APPEND problems "\n  ${rel}: ${what}: ${l}")
    endforeach()
  endforeach()
  set(problems "${problems}" PARENT_SCOPE)
endfunction()
forbid_includes("${widget_files}" "llvm/|onnx/|google/protobuf" "engine internals in widgets")
forbid_includes("${product_files}" "bench/|cblas|openblas|oneapi/|dnnl|nvrtc|cuda\\.h|cuda_runtime|cublas"
                "benchmark or CUDA toolkit header in the product")
if(problems)
  message(FATAL_ERROR "layering violations:${problems}")
endif()
message(STATUS "layering ok: ${SRC}")
