// Measurement of candidates: JIT-compiled in the tuning process (in parallel
// threads), then each run in a forked worker process with a time limit,
// warm-up and repeated timing, its output verified against the task's
// default schedule. A crash, hang or wrong result becomes an error string.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "engine/autotune/search.h"
#include "engine/autotune/task.h"
#include "engine/runtime/graph_executor.h"
#include "engine/runtime/kernel_timing.h"
#include "engine/topi/cpu/pack_gemm.h"

namespace tessera::autotune {

struct MeasureOptions {
    double timeout_s = 10;      // per candidate (compile excluded)
    /// How each candidate is timed (runtime::time_kernel, as the profiler and
    /// the studio time kernels). Caches are flushed before each run (TVM's
    /// enable_cpu_cache_flush): in a model, a kernel's weights come from
    /// memory, and a repeat loop that finds them in cache ranks candidates by
    /// a speed they never have. cpu_clock applies with threads == 1 only: the
    /// thread's CPU time is robust on a shared machine.
    runtime::TimingOptions timing = {.cpu_clock = true};
    int threads = 1;            // OpenMP team of parallel loops
    int opt_level = 2;          // LLVM level: builds use 2 by default (BuildOptions)
    int workers = 1;            // compile threads
    /// Compile-time limits for runaway candidates: more than this many memory
    /// accesses after unrolling (code_size_estimate) is an error without
    /// compiling; a compile that takes longer than compile_limit_s is
    /// recorded as an error (it cannot be interrupted; the limit keeps such
    /// candidates out of the best records and teaches the cost model).
    int64_t max_code_size = 1 << 16;
    double compile_limit_s = 30;
    double rtol = 1e-3, atol = 1e-4;
};

struct MeasureResult {
    std::vector<double> times_ms;
    std::string error;  // "" = ran and verified
    double compile_s = 0;
    bool ok() const { return error.empty() && !times_ms.empty(); }
    double median_ms() const;
};

/// A compiled candidate (or its compile error).
struct Built {
    std::shared_ptr<void> keep;  // the JIT module
    runtime::KernelFn fn = nullptr;
    std::string error;
    double compile_s = 0;
    /// Constant operands whose packing nest was folded away (as the driver
    /// folds it): the kernel takes their panels at these params.
    std::vector<topi::PrepackedOperand> prepacked;
};

/// Memory accesses (loads and stores) in the code of `f` once its unrolled
/// loops are copied out: a predictor of LLVM compile time.
int64_t code_size_estimate(const tir::PrimFunc& f);

class TaskMeasurer {
public:
    /// Allocates the task's buffers (shared with workers), fills the inputs
    /// with seeded random data, and runs the default schedule once for the
    /// reference output.
    TaskMeasurer(const TuneTask& task, const MeasureOptions& o);
    ~TaskMeasurer();
    TaskMeasurer(const TaskMeasurer&) = delete;
    TaskMeasurer& operator=(const TaskMeasurer&) = delete;

    /// The default schedule's timing (measured in the constructor).
    const MeasureResult& baseline() const { return m_baseline; }

    /// Compiles the functions on up to o.workers threads. The packing nests
    /// of the task's constant operands are folded first, as the driver does
    /// (topi::prepack_constant_operands): a candidate is timed as the kernel
    /// that runs in the model, whose constant weights were packed at compile
    /// time, not with a weight copy on every call.
    std::vector<Built> build(const std::vector<tir::PrimFunc>& funcs,
                             const CancelToken* cancel = nullptr) const;
    /// Runs one compiled candidate in a worker, its folded operands given as
    /// panels of the same random data.
    MeasureResult run(const Built& built, const CancelToken* cancel = nullptr) const;
    /// Runs a kernel with the task's own signature (nothing folded; tests
    /// pass deliberately broken ones).
    MeasureResult run(runtime::KernelFn fn, const CancelToken* cancel = nullptr) const;
    /// build + run of one function.
    MeasureResult measure(const tir::PrimFunc& f, const CancelToken* cancel = nullptr) const;

private:
    const TuneTask& m_task;
    MeasureOptions m_o;
    std::vector<void*> m_args;
    std::vector<size_t> m_bytes;
    std::vector<bool> m_is_output;
    std::vector<std::vector<float>> m_reference;  // per output param (float32 only)
    MeasureResult m_baseline;
    std::shared_ptr<void> m_default_module;
    /// Panels of constant operands (pack_panels of the random data), made
    /// once per (param, tiled dim, factor): buffer and bytes.
    mutable std::mutex m_packed_mutex;
    mutable std::map<std::tuple<size_t, int, int64_t>, std::pair<void*, size_t>> m_packed;
    MeasureResult run_with(runtime::KernelFn fn, const std::vector<void*>& args,
                           const std::vector<size_t>& bytes, const CancelToken* cancel) const;
    std::string verify() const;
};

}  // namespace tessera::autotune
