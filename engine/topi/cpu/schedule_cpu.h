// Default CPU schedules: rule-based, untuned, one rule per op class (like
// TVM's x86 schedules / DLight), written with the Schedule API so each is a
// Trace that the studio can show and a user can edit.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/schedule/schedule.h"
#include "engine/schedule/trace.h"
#include "engine/tir/stmt.h"

namespace tessera::topi {

/// The matmul rule packs a B of at least this many bytes into NR-wide
/// panels whatever the rows: it streams from memory, and panels make the
/// stream sequential (constant B is packed at compile time).
constexpr int64_t kStreamedBBytes = int64_t(8) << 20;

struct CpuScheduleOptions {
    /// Threads the kernel will run on: 1 = no parallel loops; 0 = the
    /// runtime's default (parallel loops).
    int threads = 0;
    /// fp32 lanes of one native vector register (16 AVX-512, 8 AVX2).
    int vector_lanes = 8;
    /// Tunable decisions of the rules, by knob name (see cpu_schedule_knobs);
    /// a knob that is absent takes the rule's own (default) choice. The
    /// autotuner samples these; the default schedule leaves the map empty.
    std::map<std::string, int64_t> knobs;

    /// The value of knob `name`, or `dflt` when it is not set.
    int64_t knob(const std::string& name, int64_t dflt) const {
        auto it = knobs.find(name);
        return it == knobs.end() ? dflt : it->second;
    }
};

/// One tunable decision of a default schedule rule: a name ("matmul.mr") and
/// the values that are legal for the kernel's shapes (the first is the
/// rule's default choice).
struct CpuKnob {
    std::string name;
    std::vector<int64_t> choices;
};

/// The op class a node's kernel is scheduled as.
enum class CpuOpClass { Matmul, Conv2d, Injective, Reduction };
CpuOpClass cpu_op_class(const graph::Node& n);

/// `f` (the default loop nests of `n`, from topi::lower_node) with the
/// default CPU schedule of its op class:
///  - matmul/gemm (schedule_cpu_matmul.h): MR x NR register blocking (NR = 2
///    vectors, vectorized; MR rows unrolled), the k loop outside the
///    micro-kernel with the init decomposed; large products add MC/KC cache
///    blocking and pack B into NR-wide panels (Schedule::pack_operand, the
///    schedule's last steps); elementwise epilogues run at the tile loop;
///  - conv2d: output-channel blocking (unrolled) times an output-row vector,
///    reduction loops outside the micro-kernel, parallel outer loops;
///  - injective: all loops fused, parallel outer, vectorized inner;
///  - reductions (softmax, pools): parallel outermost spatial loop.
/// A rule that does not apply (a ScheduleError) leaves that block as it was.
tir::PrimFunc schedule_cpu_default(const tir::PrimFunc& f, const graph::Node& n,
                                   const CpuScheduleOptions& options = {});

/// The knobs the default rule of `n`'s op class reads when scheduling `f`
/// (empty when the rule has none), each with its legal choices.
std::vector<CpuKnob> cpu_schedule_knobs(const tir::PrimFunc& f, const graph::Node& n,
                                        const CpuScheduleOptions& options = {});

/// The default schedule with its trace: every step, operand packing
/// included, so replaying trace() on `f` gives func() again.
schedule::Schedule cpu_default_schedule(const tir::PrimFunc& f, const graph::Node& n,
                                        const CpuScheduleOptions& options = {});

/// cpu_default_schedule(...).trace() (for inspection, editing and records).
schedule::Trace cpu_default_trace(const tir::PrimFunc& f, const graph::Node& n,
                                  const CpuScheduleOptions& options = {});

}  // namespace tessera::topi
