// Internal to the CUDA back end: 32-bit index arithmetic for kernels whose
// buffers and loops all fit (int64 stays only where a buffer has >= 2^31
// elements), as TVM's NarrowDataType pass does. 64-bit integer math costs
// two to four instructions per operation on NVIDIA GPUs.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "engine/tir/stmt.h"

namespace tessera::codegen {

/// True when every buffer the kernel touches (arguments, shared and local
/// arrays) has fewer than 2^31 elements, every loop bound is a constant
/// below 2^31 and the launch has fewer than 2^31 threads.
bool fits_int32_indices(const tir::Stmt& body, const std::vector<tir::Buffer>& args,
                        const std::array<int64_t, 3>& grid, const std::array<int64_t, 3>& block);

/// The kernel body with int64 loop and let variables narrowed to int32 and
/// the index expressions over them computed in int32. Values stored to or
/// compared with 64-bit data are widened back with casts, so results are
/// unchanged. Call only when fits_int32_indices() holds.
tir::Stmt narrow_index_types(const tir::Stmt& body);

}  // namespace tessera::codegen
