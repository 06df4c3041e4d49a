// Tuning tasks: the unique fused kernels of a model, keyed by a structural
// hash of their loop IR and the target, weighted by how often they occur.
#pragma once

#include <string>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/schedule/trace.h"
#include "engine/tir/stmt.h"
#include "engine/topi/cpu/schedule_cpu.h"

namespace tessera::autotune {

/// What the design-space rules need to know about the kernel's anchor op.
enum class TaskKind { Matmul, Conv2d, Injective, Reduction };

struct TuneTask {
    std::string key;     // workload_key(func, target)
    std::string name;    // kernel name of the first occurrence
    tir::PrimFunc func;  // unscheduled loop nests (what traces replay on)
    tir::PrimFunc default_func;  // with the default CPU schedule (the baseline, the reference)
    schedule::Trace default_trace;  // the default schedule as a trace on `func`
    TaskKind kind = TaskKind::Injective;
    /// The node whose default rule schedules the kernel (its matmul/conv, else
    /// its last node), the options of that rule, and the rule's knobs
    /// (topi::cpu_schedule_knobs): knobbed-default candidates rebuild
    /// topi::schedule_cpu_default(func, anchor, cpu + knob values).
    graph::Node anchor;
    topi::CpuScheduleOptions cpu;
    std::vector<topi::CpuKnob> knobs;
    /// Share of sampled candidates from the knobbed rule (the rest are
    /// free-form sketches); 1 when knobs are pinned (autotune/pin.h).
    double knob_share = 0.5;
    /// Steps every candidate starts with (pinned by the user, autotune/pin.h):
    /// the search schedules what they leave, and records hold them first.
    schedule::Trace pinned;
    int num_outputs = 1; // the last params of func are outputs
    /// Per param of func: bound to a graph constant. The driver packs such an
    /// operand once at compile time (its packing nest is folded away), so the
    /// measurer times candidates the same way (measure.h).
    std::vector<bool> constant_params;
    int weight = 1;      // occurrences in the model
    double flops = 0;    // per call
};

/// Structural key of a kernel for `target`: a hash of its printed loop IR with
/// the function name and parameter buffer names canonicalized, so identical
/// kernels of differently named nodes share one key. Format "llvm:<hex>".
std::string workload_key(const tir::PrimFunc& func, const std::string& target = "llvm");

/// The tasks of an optimized graph (driver::optimize's result): one per
/// unique fused group, in first-occurrence order. `threads` as in
/// BuildOptions (1 = the default schedules use no parallel loops).
std::vector<TuneTask> extract_tasks(const graph::Graph& g, const std::string& target = "llvm",
                                    int threads = 1);

/// The task of the fused group of `g` that runs `node` (UserError when no
/// node has that name or it runs in no kernel).
TuneTask task_of_node(const graph::Graph& g, const std::string& node,
                      const std::string& target = "llvm", int threads = 1);

/// The options the default CPU rule of `anchor` takes in `g` (what the
/// driver builds and the tuner's baseline is): threads, the host's vector
/// lanes, and matmul.pack_b = 0 for a one-row product whose B is computed at
/// run time (packing it on every call would cost more than the product).
topi::CpuScheduleOptions default_rule_options(const graph::Graph& g, const graph::Node& anchor,
                                              int threads);

/// A one-node graph C = A B (fp32, A: m x k, B: k x n), for `tessera tune --gemm`.
graph::Graph gemm_graph(int64_t m, int64_t n, int64_t k);

/// A one-node graph Y = conv2d(X, W) (fp32 NCHW, batch 1, W: k x c x r x s
/// constant with seeded random values, stride 1, "same" padding (r-1)/2), for
/// `tessera tune --conv`; optimized at opt level 3 it is the blocked
/// conv2d_NCHWc kernel that `tessera bench conv2d` times.
graph::Graph conv2d_graph(int64_t c, int64_t h, int64_t w, int64_t k, int64_t r, int64_t s);

const char* task_kind_name(TaskKind k);

/// The node of a fused group whose default rule schedules the group's kernel:
/// its matmul or conv (grouped ones too), else its last node (as the driver picks it).
int anchor_node(const graph::Graph& g, const std::vector<int>& group);

}  // namespace tessera::autotune
