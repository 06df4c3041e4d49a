# The engine's layers, lowest first. Each folder is one static library
# (tessera_<name>, "/" -> "_") and may include and link only the layers
# listed after its name, every one of them earlier in this list, so the
# layers cannot form a cycle. engine/CMakeLists.txt builds the libraries from
# this table and tests/check_layers.cmake checks every #include against it.
set(TESSERA_LAYERS
  "core:"
  "graph:core"
  "runtime:core,graph"
  "tir:core"
  "arith:core,tir"
  "tir/passes:core,tir,arith"
  "te:core,tir,tir/passes"
  "schedule:core,tir,arith,tir/passes"
  "topi:core,graph,runtime,tir,tir/passes,te,schedule"
  "graph/passes:core,graph,runtime,tir,topi"
  "codegen/llvm:core,runtime,tir,tir/passes"
  "codegen/cuda:core,runtime,tir,tir/passes"
  "frontend/onnx:core,graph,runtime"
  "package:core,graph,runtime"
  "autotune:core,graph,runtime,tir,arith,tir/passes,te,schedule,topi,graph/passes,codegen/llvm"
  "driver:core,graph,runtime,tir,arith,tir/passes,te,schedule,topi,graph/passes,codegen/llvm,codegen/cuda,frontend/onnx,package,autotune")

# tessera_layer_name(OUT LAYER): the library of a layer ("tir/passes" -> tessera_tir_passes).
function(tessera_layer_name out layer)
  string(REPLACE "/" "_" n "${layer}")
  set(${out} tessera_${n} PARENT_SCOPE)
endfunction()

# tessera_layer_of(OUT PATH): the layer of a path relative to the source root
# ("engine/tir/passes/simplify.cpp" -> "tir/passes"); empty outside engine/.
function(tessera_layer_of out path)
  set(found "")
  foreach(entry ${TESSERA_LAYERS})
    string(REGEX REPLACE ":.*" "" layer "${entry}")
    string(LENGTH "${layer}" len)
    string(LENGTH "${found}" best)
    if(path MATCHES "^engine/${layer}/" AND len GREATER best)
      set(found "${layer}")
    endif()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()
