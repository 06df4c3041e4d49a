// TensorIR-style scheduling: primitives that change how a PrimFunc runs
// without changing what it computes. Blocks and loops are named (loop names
// are unique within a function), so every step reads like the seeds'
// schedules and is recorded in a Trace that replays on a fresh function.
//
//   Schedule s(f);
//   auto loops = s.get_loops("C");                    // {"i", "j", "k"}
//   auto ij = s.split(loops[0], {-1, 32});            // {"i_0", "i_1"}
//   s.vectorize(ij[1]);
//   std::string text = tir::print(s.func());
#pragma once

#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/schedule/trace.h"
#include "engine/tir/stmt.h"

namespace tessera::schedule {

/// The annotation that marks the packing block pack_operand makes; its value
/// is "SOURCE:TILED_DIM:FACTOR".
inline constexpr const char* kPackOperandAnnotation = "tessera.pack_operand";

/// An invalid schedule step. Names the step (index in the trace, primitive)
/// and the reason. The schedule is left exactly as it was before the step.
class ScheduleError : public UserError {
public:
    ScheduleError(int step_index, const std::string& primitive, const std::string& reason);
    /// The failing step's index in the trace, from 0 (the message counts from 1).
    int step_index() const { return m_step; }
    const std::string& primitive() const { return m_primitive; }
    const std::string& reason() const { return m_reason; }

private:
    int m_step;
    std::string m_primitive, m_reason;
};

class Schedule {
public:
    /// Takes the function with its default loop nests. Loop variables are
    /// renamed where needed so that every loop name is unique.
    explicit Schedule(tir::PrimFunc func);

    const tir::PrimFunc& func() const { return m_func; }
    const Trace& trace() const { return m_trace; }

    // ---- queries (not recorded)
    /// Names of all blocks in pre-order (the root block excluded).
    std::vector<std::string> blocks() const;
    /// Checks the block exists; returns its name.
    std::string get_block(const std::string& name) const;
    /// The loops enclosing the block, outermost first.
    std::vector<std::string> get_loops(const std::string& block) const;
    /// The blocks whose body reads (consumers) / writes (producers) buffers of `block`.
    std::vector<std::string> get_consumers(const std::string& block) const;
    std::vector<std::string> get_producers(const std::string& block) const;

    // ---- loop transformations (each recorded as one step)
    /// Splits `loop` into factors.size() nested loops. At most one factor may
    /// be -1 (inferred). A non-dividing split adds a predicate. Returns the new
    /// loop names, outermost first ("i_0", "i_1", ...).
    std::vector<std::string> split(const std::string& loop, const std::vector<int64_t>& factors);
    /// Fuses perfectly nested adjacent loops (outermost first) into one.
    std::string fuse(const std::vector<std::string>& loops);
    /// Reorders loops of one nest so they appear in the given order.
    void reorder(const std::vector<std::string>& loops);
    /// TE-style tile: split x and y by the factors and reorder to (xo, yo, xi, yi).
    std::vector<std::string> tile(const std::string& x, const std::string& y, int64_t x_factor,
                                  int64_t y_factor);
    void parallel(const std::string& loop);
    void vectorize(const std::string& loop);
    void unroll(const std::string& loop);
    /// Binds a loop to "blockIdx.x|y|z", "threadIdx.x|y|z" or "vthread.x|y|z".
    void bind(const std::string& loop, const std::string& thread_axis);

    // ---- block placement
    void compute_at(const std::string& block, const std::string& loop);
    void reverse_compute_at(const std::string& block, const std::string& loop);
    void compute_inline(const std::string& block);
    void reverse_compute_inline(const std::string& block);

    // ---- caching and reductions
    /// Adds a block copying the block's `read_index`-th read buffer into a new
    /// buffer of `scope` ("global", "shared", "local"); returns its name.
    std::string cache_read(const std::string& block, int read_index, const std::string& scope);
    std::string cache_write(const std::string& block, int write_index, const std::string& scope);
    /// Factorizes the reduction over `loop` into a new block; returns its name.
    std::string rfactor(const std::string& loop, int factor_axis);
    /// Moves the block's init to a separate block above `loop`; returns its name.
    std::string decompose_reduction(const std::string& block, const std::string& loop);
    /// Sets a pragma on a loop or block ("pragma_unroll_explicit", "pragma_auto_unroll_max_step").
    void annotate(const std::string& loop_or_block, const std::string& key,
                  const std::string& value);

    // ---- layout
    /// Packs the rank-2 parameter `buffer` read by `block` into panels
    /// Xp[ceil(d_t / F)][d_o][F] (dimension `tiled_dim` tiled by `factor`,
    /// zero padded), made by a new loop nest placed before the block's nest
    /// (its outer loop parallel, its panel loop vectorized by `vector_lanes`
    /// when they divide it, 0 = not); the block reads the panels instead.
    /// Returns the packing block's name. A packing nest of a constant operand
    /// is folded at compile time (topi::prepack_constant_operands). Recorded
    /// as {"op": "pack_operand", "block", "buffer", "ints": [tiled_dim,
    /// factor, parallel, vector_lanes]}.
    std::string pack_operand(const std::string& block, const std::string& buffer, int tiled_dim,
                             int64_t factor, bool parallel = false, int vector_lanes = 0);

    /// Puts the dimensions of `buffer`, an intermediate the function
    /// allocates (not a parameter), in another order: its dimension
    /// perm[d] becomes dimension d, every access rewritten (a matmul's
    /// local accumulator with the vectorized index innermost). Recorded as
    /// {"op": "transform_layout", "buffer", "permutation": [...]}.
    void transform_layout(const std::string& buffer, const std::vector<int64_t>& perm);

    /// Replays one recorded step (used by Trace::apply and the studio).
    void apply(const Step& step);

private:
    tir::PrimFunc m_func;
    Trace m_trace;
    friend class ScheduleState;
};

}  // namespace tessera::schedule
