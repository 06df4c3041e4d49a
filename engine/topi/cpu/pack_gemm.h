// Operand packing for matmul kernels (a layout transform, like TVM's x86
// dense_pack / BLIS): Schedule::pack_operand copies a 2-D operand X into
// panels Xp[ceil(d_t / F)][d_o][F], so that with t = B's output-column
// dimension and F = the register tile width NR every k step of the
// micro-kernel reads NR consecutive floats. This file holds what the
// compiler does with such a packing nest when X is a constant: the nest is
// removed and the panels are computed once, at compile time.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/tir/stmt.h"

namespace tessera::topi {

/// A packing decision of the matmul rule, applied with
/// Schedule::pack_operand once the rule's loop steps are done.
struct PackSpec {
    std::string block;    // the matmul block
    std::string buffer;   // the operand it reads (a function parameter, rank 2)
    int tiled_dim = 1;    // the dimension tiled by `factor` (0 or 1)
    int64_t factor = 16;  // panel width
    bool parallel = false;  // run the packing nest's outer loop in parallel
    int vector_lanes = 0;   // vectorize the panel-width loop by this many lanes (0: no)
};

/// A parameter whose packing nest was removed: the kernel now takes the
/// panels Xp[ceil(d_t / F)][d_o][F] (of pack_panels) at that position.
struct PrepackedOperand {
    size_t param = 0;          // index in the function's params
    std::vector<int64_t> shape;  // the original rank-2 shape of X
    int tiled_dim = 1;
    int64_t factor = 16;
};

struct PrepackResult {
    tir::PrimFunc func;
    std::vector<PrepackedOperand> operands;
};

/// Packing at compile time: for every packing nest (made by
/// Schedule::pack_operand) whose source parameter satisfies `is_constant`
/// (given the parameter index), removes the nest and makes the panel buffer
/// the parameter in the source's place. The caller passes pack_panels(X) for
/// it. Nests of other operands, or whose source is still read elsewhere, stay.
PrepackResult prepack_constant_operands(const tir::PrimFunc& f,
                                        const std::function<bool(size_t)>& is_constant);

/// The panels of a row-major rank-2 tensor X (`shape`, `elem_bytes` per
/// element) as the packing nest writes them (zero padded past d_t).
std::vector<uint8_t> pack_panels(const void* x, const std::vector<int64_t>& shape,
                                 size_t elem_bytes, int tiled_dim, int64_t factor);

}  // namespace tessera::topi
