// Internal to the default GPU schedule: rules that turn one reduction stage
// (a For nest around one reduction block) into thread-bound loop IR.
#pragma once

#include <vector>

#include "engine/tir/stmt.h"

namespace tessera::topi::gpu_rules {

/// A stage made by te::create_prim_func: serial loops binding every block
/// variable, a reduction body `C[idx] = C[idx] <kind> value` and an init.
struct Stage {
    const tir::Block* block = nullptr;
    const tir::BufferStore* update = nullptr;
    const tir::BufferStore* init = nullptr;
    tir::NodeType kind = tir::NodeType::Add;  // Add, Mul, Max or Min
    tir::Expr value;
    std::vector<tir::IterVar> spatial, reduce;
};

/// An elementwise stage fused after a reduction stage (conv + bias + relu):
/// `out[vars] = value`, where value reads the reduction's output `in` only
/// at [vars]. The rules store it where they store the reduction's result,
/// so the pair becomes one kernel.
struct Epilogue {
    tir::Buffer in, out;
    std::vector<tir::Var> vars;  // out's indices, in order (the stage's block vars)
    tir::Expr value;
};

/// The epilogue's store at `indices` (one per var), with every read of
/// `in` replaced by `result` (the reduction's value at those indices).
tir::Stmt epilogue_store(const Epilogue& ep, const std::vector<tir::Expr>& indices,
                         const tir::Expr& result);

/// Recognizes a reduction stage; false for anything else.
bool analyze_stage(const tir::Stmt& nest, Stage& out);

/// The classic SGEMM for `C += X * Y` where X and Y each use their own
/// spatial variables (M and N, shared ones become blockIdx.z batches): block
/// tile up to 128x128x8 in shared memory fetched cooperatively by 256
/// threads, 8x8 (or smaller) register tile per thread, unrolled inner loops.
/// Convolutions fit as implicit GEMM. Undefined Stmt when it does not apply.
/// With `ep`, the tile's results go through the epilogue instead of into
/// the reduction's buffer. The block tile's larger side halves (down to 32)
/// while the grid has fewer than `min_blocks` blocks.
tir::Stmt gemm_stage(const Stage& st, const Epilogue* ep = nullptr, int64_t min_blocks = 128);

/// One thread block per output element (row): strided per-thread partials,
/// then a shared-memory tree. Needs at least `min_extent` reduced elements
/// and an identity init (0 for sums, 1 for products, any constant for max
/// and min). Undefined Stmt when it does not apply.
tir::Stmt block_reduce_stage(const Stage& st, int64_t min_extent, const Epilogue* ep = nullptr);

}  // namespace tessera::topi::gpu_rules
