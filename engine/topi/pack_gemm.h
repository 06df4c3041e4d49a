// Operand packing for matmul kernels (a layout transform, like TVM's x86
// dense_pack / BLIS): a 2-D operand X read by a matmul block is copied into
// panels Xp[ceil(d_t / F)][d_o][F] (dimension t tiled by F, zero padded) by a
// new loop nest placed before the block's nest, and the block reads Xp
// instead. With t = the output-column dimension of B and F = the register
// tile width NR, every k step of the micro-kernel reads NR consecutive
// floats, and a K x NR panel is one contiguous, cache-resident strip.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

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
/// pack_matmul_operand) whose source parameter satisfies `is_constant`
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
