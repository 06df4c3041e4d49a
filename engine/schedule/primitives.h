// Internal: the schedule primitives as pure functions PrimFunc -> PrimFunc.
// Each throws StepFailure (the reason) when a precondition fails; Schedule
// turns it into a ScheduleError naming the step.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/tir/stmt.h"

namespace tessera::schedule::detail {

struct StepFailure {
    std::string reason;
};

#define TS_SCHED_CHECK(cond, msg)                                          \
    do {                                                                   \
        if (!(cond)) {                                                     \
            std::ostringstream ts_sched_os_;                               \
            ts_sched_os_ << msg;                                           \
            throw ::tessera::schedule::detail::StepFailure{ts_sched_os_.str()}; \
        }                                                                  \
    } while (0)

using tir::PrimFunc;
using Names = std::vector<std::string>;

/// Gives loops unique names (renaming later duplicates).
PrimFunc uniquify_loops(const PrimFunc& f);

// ---- loops (schedule_loops.cpp)
PrimFunc split(const PrimFunc& f, const std::string& loop, const std::vector<int64_t>& factors,
               Names& out);
PrimFunc fuse(const PrimFunc& f, const Names& loops, Names& out);
PrimFunc reorder(const PrimFunc& f, const Names& loops);
PrimFunc set_loop_kind(const PrimFunc& f, const std::string& loop, const std::string& op,
                       const std::string& thread_axis);
PrimFunc annotate(const PrimFunc& f, const std::string& target, const std::string& key,
                  const std::string& value);

// ---- block placement (schedule_compute_at.cpp, schedule_inline.cpp)
PrimFunc compute_at(const PrimFunc& f, const std::string& block, const std::string& loop,
                    bool reverse);
PrimFunc compute_inline(const PrimFunc& f, const std::string& block);
PrimFunc reverse_compute_inline(const PrimFunc& f, const std::string& block);

// ---- caching and reductions (schedule_cache.cpp, schedule_reduction.cpp)
PrimFunc cache_read(const PrimFunc& f, const std::string& block, int index,
                    const std::string& scope, Names& out);
PrimFunc cache_write(const PrimFunc& f, const std::string& block, int index,
                     const std::string& scope, Names& out);
PrimFunc rfactor(const PrimFunc& f, const std::string& loop, int factor_axis, Names& out);
PrimFunc decompose_reduction(const PrimFunc& f, const std::string& block, const std::string& loop,
                             Names& out);

// ---- layout (schedule_pack.cpp)
/// out = {packing block, packed buffer}.
PrimFunc pack_operand(const PrimFunc& f, const std::string& block, const std::string& buffer,
                      int tiled_dim, int64_t factor, bool parallel, int vector_lanes, Names& out);
/// (schedule_layout.cpp) The allocated buffer's dimension perm[d] becomes its dimension d.
PrimFunc transform_layout(const PrimFunc& f, const std::string& buffer,
                          const std::vector<int64_t>& perm);

// ---- shared helpers
/// Substitutes loop variables and simplifies block bindings, predicates and
/// loop bounds below s.
tir::Stmt subst_loops(const tir::Stmt& s, const std::map<const tir::Variable*, tir::Expr>& vmap);
/// The block's BlockRealize path or a failure naming the block.
std::vector<tir::Stmt> block_path(const PrimFunc& f, const std::string& block);
std::vector<tir::Stmt> loop_path(const PrimFunc& f, const std::string& loop);
/// Writers / readers of a buffer among all blocks (by name), excluding `except`.
Names writers_of(const PrimFunc& f, const tir::Buffer& b, const std::string& except = "");
Names readers_of(const PrimFunc& f, const tir::Buffer& b, const std::string& except = "");
bool is_param(const PrimFunc& f, const tir::Buffer& b);
/// The function with `buf` added to / removed from the root block's allocations.
PrimFunc add_root_alloc(const PrimFunc& f, const tir::Buffer& buf);
PrimFunc remove_root_alloc(const PrimFunc& f, const tir::Buffer& buf);
/// Removes the block (and loops left empty).
PrimFunc remove_block(const PrimFunc& f, const std::string& block);
/// A fresh nest of loops over `extents` around `inner` built by make_inner(loop_vars).
tir::Stmt make_nest(std::set<std::string>& used, const std::vector<std::string>& bases,
                    const std::vector<int64_t>& extents,
                    const std::function<tir::Stmt(const std::vector<tir::Var>&)>& make_inner);

}  // namespace tessera::schedule::detail
