// GraphExecutor: runs a list of compiled kernel calls over planned buffers.
// It knows nothing about how kernels were made (LLVM JIT, or a shared library
// loaded from a package).
#pragma once

#include <functional>
#include <string>

#include "engine/runtime/kernel_timing.h"
#include "engine/runtime/memory_plan.h"
#include "engine/runtime/ndarray.h"

namespace tessera::runtime {

/// Sets the number of worker threads of the parallel runtime kernels use
/// (OpenMP's omp_set_num_threads), or nullptr when there is none.
using ThreadSetter = void (*)(int);

struct KernelCall {
    std::string kernel;  // symbol name
    KernelFn fn = nullptr;
    std::vector<int> args;   // graph value indices, in parameter order
    std::vector<int> nodes;  // graph node indices this call covers
    double flops = 0;        // floating-point operations per call (the ops' definitions)
    double work_flops = 0;   // ... that the kernel executes (graph::node_work_flops); 0 = flops
};

/// Per-kernel timing, aggregated over the call sites of one kernel symbol.
struct KernelProfile {
    std::string kernel;
    std::vector<int> nodes;  // graph nodes covered by all its call sites
    int calls = 0;           // call sites per run
    double seconds = 0;      // per run: sum over call sites of the median time
    double flops = 0;        // per run
    double bytes = 0;        // bytes of all arguments per run (read + written)
    double work_flops = 0;   // per run: what the kernels execute (Winograd: more or less)
};

/// Whether a kernel executes other work than its ops' FLOPs (a Winograd conv):
/// its GFLOP/s from `flops` are "effective", and the roofline plots `work_flops`.
inline bool executes_other_work(double flops, double work_flops) {
    return work_flops > 0 && (work_flops - flops > 0.01 * flops || flops - work_flops > 0.01 * flops);
}

/// Where a graph value lives: the arena (planned), a bound constant, or
/// nowhere (a value inside a fused kernel that no call passes).
struct BufferInfo {
    int value = -1;
    enum Kind { Planned, Constant, None } kind = None;
    int64_t bytes = 0;
    int64_t offset = -1;  // into the arena, for Planned
    int first_use = -1, last_use = -1;  // kernel call indices, for Planned
};

class GraphExecutor {
public:
    /// `value_types` gives the type of every graph value, `constants` the data
    /// of weights (empty or one possibly undefined NDArray per value; bound
    /// once, never copied per run); `inputs`/`outputs` are value indices.
    /// Every other value a call passes gets bytes of one planned arena.
    /// `keep_alive` owns the code.
    GraphExecutor(std::vector<TensorType> value_types, std::vector<NDArray> constants,
                  std::vector<int> inputs, std::vector<int> outputs, std::vector<KernelCall> calls,
                  std::shared_ptr<void> keep_alive);

    size_t num_inputs() const { return m_inputs.size(); }
    size_t num_outputs() const { return m_outputs.size(); }
    /// Names for inputs/outputs (default "input_N"/"output_N").
    void set_io_names(std::vector<std::string> input_names, std::vector<std::string> output_names);
    const std::vector<std::string>& input_names() const { return m_input_names; }
    const std::vector<std::string>& output_names() const { return m_output_names; }
    /// Index of the input/output with this name; UserError listing the names if absent.
    size_t input_index(const std::string& name) const;
    size_t output_index(const std::string& name) const;
    const TensorType& input_type(size_t i) const;
    const TensorType& output_type(size_t i) const;

    /// Copies `a` into input i; throws UserError on a type mismatch.
    void set_input(size_t i, const NDArray& a);
    void set_input(const std::string& name, const NDArray& a) { set_input(input_index(name), a); }
    /// Threads the kernels' parallel loops may use; 0 = the runtime's default.
    void set_num_threads(int n);
    int num_threads() const { return m_threads; }
    /// Replaces how the thread count reaches the parallel runtime (a package
    /// passes the one its library links).
    void set_thread_setter(ThreadSetter setter) { m_thread_setter = setter; }
    /// Calls every kernel in order. Inputs stay valid: runs repeat exactly.
    void run();
    /// The i-th output (a copy owned by the caller).
    NDArray get_output(size_t i) const;
    NDArray get_output(const std::string& name) const { return get_output(output_index(name)); }
    /// Runs `repeat` times and returns per-kernel median times, in first-call
    /// order; each call is timed with time_once (its buffers flushed from the
    /// caches first, as the tuner and the studio time kernels).
    std::vector<KernelProfile> profile(int repeat, const TimingOptions& timing = {});
    const std::vector<KernelCall>& calls() const { return m_calls; }
    /// The type of every value, and the value indices of inputs and outputs.
    const std::vector<TensorType>& value_types() const { return m_types; }
    const std::vector<int>& input_values() const { return m_inputs; }
    const std::vector<int>& output_values() const { return m_outputs; }
    /// The bound constant of value v (undefined when v is not a constant).
    NDArray constant(int v) const;

    /// Bytes of the arena that holds inputs, intermediates and outputs (the peak).
    int64_t peak_bytes() const { return m_plan.arena_bytes; }
    /// Same as peak_bytes (older name).
    int64_t workspace_bytes() const { return m_plan.arena_bytes; }
    /// What one buffer per value would take, without reuse.
    int64_t naive_bytes() const { return m_plan.naive_bytes; }
    /// Bytes of the bound constants (weights).
    int64_t param_bytes() const { return m_param_bytes; }
    /// Where every value lives, one entry per value.
    const std::vector<BufferInfo>& buffers() const { return m_info; }

private:
    std::vector<TensorType> m_types;
    std::vector<NDArray> m_buffers;  // one per value; views into m_arena or constants
    std::shared_ptr<void> m_arena;
    MemoryPlan m_plan;
    std::vector<BufferInfo> m_info;
    int64_t m_param_bytes = 0;
    std::vector<int> m_inputs, m_outputs;
    std::vector<std::string> m_input_names, m_output_names;
    std::vector<KernelCall> m_calls;
    std::vector<std::vector<void*>> m_args;  // resolved argument pointers per call
    std::shared_ptr<void> m_keep_alive;
    int m_threads = 0;
    ThreadSetter m_thread_setter = nullptr;
};

/// omp_set_num_threads of this process, if a parallel runtime is loaded.
ThreadSetter default_thread_setter();

}  // namespace tessera::runtime
