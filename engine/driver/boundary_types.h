// Model boundary in declared ONNX types: results computed in float32/int32/
// int64 are returned as the values of the model's declared float16, bfloat16,
// int16, uint16 or uint32 outputs; test data in those types is read as such.
#pragma once

#include <string>
#include <vector>

#include "engine/frontend/onnx/boundary_types.h"
#include "engine/runtime/ndarray.h"

namespace tessera::driver {

/// A copy of `a` limited to the value set of `declared` (runtime::narrow_to_declared:
/// float16/bfloat16 rounding, int16/uint16/uint32 wrap); `a` itself when
/// `declared` is empty or "uint64".
runtime::NDArray to_declared(const runtime::NDArray& a, const std::string& declared);

/// Each output converted to its declared type (`declared` by position, as
/// BoundaryTypes::output_types; missing entries mean native).
std::vector<runtime::NDArray> to_declared_outputs(const std::vector<runtime::NDArray>& outputs,
                                                  const std::vector<std::string>& declared);

/// ONNX test data written before ONNX stored bfloat16 itself holds bfloat16
/// tensors as UINT16 bit patterns: each array whose declared type (by
/// position) is "bfloat16" but that was read as integers is turned into the
/// float32 values of those bits. Other arrays are returned as they are.
std::vector<runtime::NDArray> bfloat16_bits_as_values(const std::vector<runtime::NDArray>& arrays,
                                                      const std::vector<std::string>& declared);

}  // namespace tessera::driver
