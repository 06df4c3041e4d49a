// Private to the ONNX frontend: element types Tessera computes in a wider type
// (float16/bfloat16/float8/float4 as float32, int16/uint16/int4/uint4/int2/
// uint2 as int32, uint32/uint64 as int64).
#pragma once

#include <string>

#include "engine/frontend/onnx/onnx_context.h"

namespace tessera::frontend::onnx_import {

/// ONNX element types newer than ONNX 1.12's enum (opsets 19 to 25).
inline constexpr int kFloat8E4M3FN = 17, kFloat8E4M3FNUZ = 18, kFloat8E5M2 = 19,
                     kFloat8E5M2FNUZ = 20, kUInt4 = 21, kInt4 = 22, kFloat4E2M1 = 23,
                     kFloat8E8M0 = 24, kUInt2 = 25, kInt2 = 26;

/// True for FLOAT16, BFLOAT16, INT16, UINT16, UINT32, UINT64 and the 8-, 4-
/// and 2-bit types of opsets 19 to 25 (float8 E4M3FN/E4M3FNUZ/E5M2/E5M2FNUZ/
/// E8M0, float4 E2M1, int4/uint4, int2/uint2; runtime/small_types.h): element
/// types that exist only at the graph boundary and compute in a wider dtype.
bool is_boundary_elem_type(int elem_type);
/// True for the float8 and float4 types.
bool is_small_float_elem_type(int elem_type);
/// The dtype a boundary element type computes in (float32, int32 or int64).
graph::DType boundary_compute_dtype(int elem_type);
/// "float16", "bfloat16", "int16", "uint16", "uint32", "uint64", "float8e4m3fn", "int4"...
std::string boundary_type_name(int elem_type);
/// The ONNX element type of a boundary_type_name(); 0 when `name` is none.
int boundary_elem_type(const std::string& name);
/// The ONNX element type `name` is declared with (a graph input, output,
/// value_info or initializer), or 0 when unknown.
int declared_elem_type(const Importer& imp, const std::string& name);
/// Decodes a TensorProto of a boundary element type, widened to its compute
/// dtype (float16 bits become float32 values, uint32 becomes int64, ...).
ConstTensor decode_boundary_tensor(const onnx::TensorProto& t, const std::string& what);
/// Encodes compute-dtype data (`type`) as a TensorProto of boundary element type
/// `elem_type`: floats are rounded to float16/bfloat16, integers truncated to the width.
void encode_boundary_tensor(const graph::TensorType& type, const void* data, int elem_type,
                            const std::string& name, onnx::TensorProto* out);

}  // namespace tessera::frontend::onnx_import
