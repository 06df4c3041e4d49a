// Operand packing for matmul kernels (a layout transform, like TVM's x86
// dense_pack / BLIS): a 2-D operand X read by a matmul block is copied into
// panels Xp[ceil(d_t / F)][d_o][F] (dimension t tiled by F, zero padded) by a
// new loop nest placed before the block's nest, and the block reads Xp
// instead. With t = the output-column dimension of B and F = the register
// tile width NR, every k step of the micro-kernel reads NR consecutive
// floats, and a K x NR panel is one contiguous, cache-resident strip.
#pragma once

#include <optional>
#include <string>

#include "engine/tir/stmt.h"

namespace tessera::topi {

struct PackSpec {
    std::string block;    // the matmul block
    std::string buffer;   // the operand it reads (a function parameter, rank 2)
    int tiled_dim = 1;    // the dimension tiled by `factor` (0 or 1)
    int64_t factor = 16;  // panel width
    bool parallel = false;  // run the packing nest's outer loop in parallel
    int vector_lanes = 0;   // vectorize the panel-width loop by this many lanes (0: no)
};

struct PackResult {
    tir::PrimFunc func;
    std::string pack_block;  // the name of the new packing block
    std::string packed_buffer;
};

/// Packs one operand as described in PackSpec. Returns nothing (and changes
/// nothing) when the spec does not apply: no such block, the buffer is not a
/// rank-2 parameter with constant shape, or it is also written.
std::optional<PackResult> pack_matmul_operand(const tir::PrimFunc& f, const PackSpec& spec);

}  // namespace tessera::topi
