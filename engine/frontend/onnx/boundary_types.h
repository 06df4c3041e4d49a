// The ONNX element types a model declares at its boundary that Tessera computes
// in a wider dtype (float16/bfloat16 -> float32, int16/uint16 -> int32,
// uint32/uint64 -> int64): a side table next to the graph, read from the file.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/runtime/ndarray.h"

namespace tessera::frontend {

/// Declared narrow types by graph input / output name ("float16", "bfloat16",
/// "int16", "uint16", "uint32", "uint64"); names with a native type are absent.
struct BoundaryTypes {
    std::map<std::string, std::string> inputs;
    std::map<std::string, std::string> outputs;
    /// The same by position: one entry per graph input that is not an
    /// initializer, and per graph output ("" for a native type).
    std::vector<std::string> input_types;
    std::vector<std::string> output_types;
    bool empty() const { return inputs.empty() && outputs.empty(); }
};

/// Reads the declared types of an .onnx file's graph inputs and outputs
/// (UserError if it cannot be read or parsed). (onnx_dtype.cpp)
BoundaryTypes read_boundary_types(const std::string& model_path);

/// Writes `a` (in its compute dtype) as a TensorProto of the declared type
/// `declared` (a BoundaryTypes name; empty = a's own dtype): float16/bfloat16
/// round to nearest even, integers keep their low bits.
void write_tensor_pb_as(const runtime::NDArray& a, const std::string& declared,
                        const std::string& name, const std::string& path);

}  // namespace tessera::frontend
