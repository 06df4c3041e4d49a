// The high-level API that the `tessera` CLI and the studio both drive:
// load → lower → build → run, plus reference runs and ONNX test-data helpers.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/driver/cuda_model.h"
#include "engine/driver/kernel_cache.h"
#include "engine/driver/target.h"
#include "engine/graph/graph.h"
#include "engine/graph/passes/pass_manager.h"
#include "engine/runtime/graph_executor.h"
#include "engine/schedule/trace.h"
#include "engine/tir/stmt.h"

namespace tessera::driver {

/// Loads an ONNX model (UserError on bad input; names the file).
graph::Graph load_model(const std::string& path);

/// Loads an ONNX model with static shapes for some inputs (NAME -> dims),
/// fixing symbolic dims like tvmc's --input-shapes. (engine/driver/load_model.cpp)
graph::Graph load_model(const std::string& path,
                        const std::map<std::string, std::vector<int64_t>>& input_shapes);

/// Loads a model given the TensorProto files of its inputs (ONNX test data).
/// When the plain import fails because a shape operand is a graph input
/// (Reshape's `shape` in ONNX's tests), the integer-typed input files are
/// frozen into constants (like TVM's freeze_params) and the import retried;
/// otherwise the original UserError is rethrown.
/// Inputs with a symbolic or unknown dimension take the shape of their file
/// (input i <-> file i) unless `input_shapes` (--input-shape) names them.
graph::Graph load_model_for_inputs(const std::string& path,
                                   const std::vector<std::string>& input_files,
                                   const std::map<std::string, std::vector<int64_t>>& input_shapes = {});

/// `input_shapes` plus, for each runtime input with a symbolic or unknown dim
/// that it does not name, the shape of its file (input i <-> file i).
std::map<std::string, std::vector<int64_t>> input_shapes_from_files(
    const std::string& path, const std::vector<std::string>& input_files,
    const std::map<std::string, std::vector<int64_t>>& input_shapes = {});

/// The input_N.pb (or output_N.pb for prefix "output") paths of a test-data folder.
std::vector<std::string> test_data_files(const std::string& dir, const std::string& prefix);

struct BuildOptions {
    /// "llvm" (the CPU) or "cuda" (driver::targets()): its graph passes,
    /// default schedules, loop-IR lowering and code generator.
    std::string target = "llvm";
    int opt_level = 2;
    /// Apply the rule-based default CPU schedules (topi/schedule_cpu.h).
    bool default_schedules = true;
    /// Tuning database (autotune/database.h, JSON lines): a fused group whose
    /// workload has a record (of this target; for "cuda", of this GPU) gets
    /// the best record's trace instead of the default schedule. Empty = none.
    std::string records;
    /// Hand-written schedules (the studio's schedule editor), keyed by node
    /// name or by kernel name (as `run --profile` prints it: the kernels of
    /// one ONNX node expanded into several, an int8 conv's im2col and GEMM,
    /// share the node's name): the fused group holding that node, or that
    /// kernel, gets the trace replayed on its loop IR instead of a tuned or
    /// default schedule. A trace that does not replay on the group's kernel
    /// is a UserError naming the node or kernel.
    std::map<std::string, schedule::Trace> kernel_traces;
    /// true: a hand trace that does not apply is not an error: the kernel
    /// keeps its record or default schedule and KernelSchedule::hand_error
    /// says which step failed and why (the studio's code views and session
    /// check; Run, compile and export keep the error).
    bool report_failing_traces = false;
    /// Threads the kernels are compiled for: 1 = no parallel loops, 0 = the
    /// parallel runtime's default.
    int threads = 0;
    /// Graph pass list (passes::resolve_pipeline): empty = the opt level's
    /// default pipeline; plain names = exactly these; "+name"/"-name" edit it.
    std::vector<std::string> passes;
    /// Called after each graph pass with its name and result (--print-after-all).
    std::function<void(const std::string&, const graph::Graph&)> print_after;
    /// false: schedule every kernel but compile none (no executor, no
    /// LLVM or NVRTC time spent): what the code views and `inspect` print.
    bool jit = true;
    /// Compiled kernels to reuse and to add to (kernel_cache.h): a model
    /// built at several shapes, or again after an edit, compiles only the
    /// kernels whose loop IR changed. Null: the build's own (equal kernels of
    /// one build are compiled once either way).
    std::shared_ptr<KernelCache> kernel_cache;
};

/// Runs the graph passes that `options` select for its target (see
/// BuildOptions::passes, Target::graph_passes);
/// constant folding evaluates large nodes with the JIT. `records` receives
/// the per-pass timings when not null.
graph::Graph optimize(const graph::Graph& g, const BuildOptions& options = {},
                      std::vector<passes::PassRecord>* records = nullptr);

/// One PrimFunc per fused group of `g` (passes::fused_groups), default schedule.
std::vector<tir::PrimFunc> lower_fused(const graph::Graph& g);

/// What the tuning records (BuildOptions::records) did for one kernel whose
/// workload they hold: applied, or skipped with the reason.
struct RecordUse {
    std::string kernel;
    bool applied = false;
    std::string reason;  // why not: another thread count, LLVM level, machine...
};

/// How one CPU kernel was scheduled: replaying `trace` on `unscheduled` (the
/// fused group's loop IR from topi::lower_group) gives the kernel, before the
/// packing nests of constant operands are folded into panels computed at
/// compile time (topi::prepack_constant_operands). The schedule editor starts
/// from exactly this, and rebuild_kernel() is how it compiles an edit.
struct KernelSchedule {
    tir::PrimFunc unscheduled;
    schedule::Trace trace;  // every step, operand packing included
    /// "hand" (a BuildOptions::kernel_traces entry; `traced_node` is its key),
    /// "record" (the tuning records), "default" (the target's rules) or
    /// "none" (default schedules off).
    std::string source;
    std::string traced_node;
    /// report_failing_traces: the hand trace of `traced_node` that did not
    /// apply (the kernel has the other schedule) and why; else empty.
    schedule::Trace failed_hand;
    std::string hand_error;
    /// With a hand trace: the trace (and source) the build would use without it.
    schedule::Trace replaced;
    std::string replaced_source;
    std::string anchor;     // the node whose default rule and knobs apply
    /// "record" from a knobbed candidate: its knob values; else empty.
    std::map<std::string, int64_t> knobs;
    std::vector<int> args;  // the group's values bound to unscheduled's params
};

/// A graph compiled into kernels plus an executor.
struct CompiledModel {
    graph::Graph graph;  // after the graph passes; KernelCall indices refer to it
    std::vector<passes::PassRecord> pass_records;
    std::vector<tir::PrimFunc> kernels;  // one per KernelCall, same order
    std::vector<std::vector<int>> kernel_nodes;  // the nodes of `graph` each kernel runs
    std::shared_ptr<runtime::GraphExecutor> executor;  // CPU; null with jit = false or "cuda"
    std::string target = "llvm";
    /// Target "cuda": the CUDA C, PTX and launch list (no PTX with jit =
    /// false); cuda->make_executor() runs it where a GPU is present.
    std::shared_ptr<CudaModel> cuda;
    /// Target "cuda" with records: what they did (gpu_records_note).
    std::string records_note;
    double compile_seconds = 0;
    double total_flops = 0;  // per inference
    std::vector<RecordUse> record_uses;  // kernels whose workload the records hold
    /// Target "llvm": how each kernel was scheduled (same order as kernels).
    std::vector<KernelSchedule> schedules;
    /// Target "llvm": what the kernels are (or would be) compiled with.
    codegen::LlvmOptions llvm;
    /// Target "llvm": per kernel, whether this build compiled it (false: an
    /// equal kernel compiled earlier, BuildOptions::kernel_cache, or by this
    /// build for another kernel, was reused).
    std::vector<bool> kernel_compiled;
    int kernels_compiled() const;

    int records_applied() const;
    /// The index in `kernels` of the kernel named `node`, else of the kernel
    /// that runs the node named `node` (of a name several nodes share, the
    /// one Graph::find_node picks, or with `op` the one applying that op:
    /// an int8 conv's im2col and GEMM nodes, and with `output_type` too
    /// (TensorType::str) the one of that op making a value of that type: an
    /// int8 conv's GEMM and its windows' byte sums are both
    /// nn.matmul_i8u8); -1 when no kernel does (a pass removed or folded it).
    int kernel_of(const std::string& node, const std::string& op = "",
                  const std::string& output_type = "") const;
    /// One line for people: "tuning records r.jsonl: 3 of 8 kernels tuned; 1
    /// skipped: fused_conv1 (tuned for 1 thread(s), this build runs 2)".
    /// Empty when the build had no records.
    std::string records_summary(const std::string& records) const;

    std::vector<runtime::NDArray> run(const std::vector<runtime::NDArray>& inputs);
};

/// The keys of `traces` (BuildOptions::kernel_traces) that scheduled no
/// kernel of `model` (target "llvm"; empty for others): no node or kernel of
/// that name is in this build (a graph edit removed or renumbered it, a pass
/// folded the node). The build ignores them; the studio says so.
std::vector<std::string> unmatched_traces(const CompiledModel& model,
                                          const std::map<std::string, schedule::Trace>& traces);

/// The one way to build a model, for every target: optimizes the graph
/// (optimize()), lowers each fused group into one kernel scheduled by a hand
/// trace, a tuning record or the target's default rules, and compiles them
/// (LLVM JIT for "llvm", NVRTC for "cuda") unless options.jit is false.
/// `progress(done, total)` may be null.
std::shared_ptr<CompiledModel> build(const graph::Graph& g, const BuildOptions& options = {},
                                     const std::function<void(int, int)>& progress = nullptr);

/// Kernel `index` of a CPU build rebuilt with `trace` in place of its own:
/// the trace replayed on its unscheduled loop IR and constant operands'
/// packing folded as build() folds it (same params, packed ones in the
/// constants' places), so timing it on random data times what the model
/// runs. Throws UserError (a ScheduleError naming the step) when a step does
/// not apply.
tir::PrimFunc rebuild_kernel(const CompiledModel& model, size_t index, const schedule::Trace& trace);

/// The LLVM options a build with `options` compiles its kernels with.
codegen::LlvmOptions llvm_options(const BuildOptions& options);

/// The loop IR of one node with its default schedule.
tir::PrimFunc lower_op(const graph::Graph& g, int node);

/// Runs the whole graph through the loop-IR interpreter (the reference).
std::vector<runtime::NDArray> interpret_graph(const graph::Graph& g,
                                              const std::vector<runtime::NDArray>& inputs);

/// Seeded random non-zero inputs for every graph input.
std::vector<runtime::NDArray> random_inputs(const graph::Graph& g, uint64_t seed = 1);

/// Reads input_N.pb (or output_N.pb with prefix "output") from an ONNX
/// test-data folder, N = 0, 1, ... while files exist.
std::vector<runtime::NDArray> read_test_data(const std::string& dir, const std::string& prefix);

/// Matches test-data arrays onto the graph inputs in order, skipping a test
/// array whose type does not fit the next graph input (ONNX test data also
/// holds inputs the importer turned into constants, such as Reshape's shape).
/// Throws UserError naming the graph input that nothing fits.
std::vector<runtime::NDArray> match_test_inputs(const graph::Graph& g,
                                                const std::vector<runtime::NDArray>& given);

struct Timing {
    double median_ms = 0;
    double min_ms = 0;
    int repeat = 0;
};
/// Times `repeat` runs of the executor after one warm-up.
Timing time_runs(runtime::GraphExecutor& ex, int repeat);

/// Result of running one ONNX test-case folder (model.onnx + test_data_set_*).
struct ConformanceResult {
    std::string name;
    enum Status { Passed, Failed, Skipped } status = Skipped;
    std::string message;  // reason for failure or skip
};
/// Runs one case folder with ONNX's tolerances (rtol 1e-3, atol 1e-7 as in
/// onnx backend tests; we use atol 1e-5 for float32 accumulations).
/// `round_trip`: the imported graph is saved as ONNX (frontend::export_onnx_bytes)
/// and read back, and that graph runs: a model the studio saves computes the same.
ConformanceResult run_conformance_case(const std::string& case_dir, bool round_trip = false);

}  // namespace tessera::driver
