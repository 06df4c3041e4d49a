// GraphExecutor: runs a list of compiled kernel calls over planned buffers.
// It knows nothing about how kernels were made (LLVM JIT today, a shared
// library from a package later).
#pragma once

#include <functional>
#include <string>

#include "engine/runtime/ndarray.h"

namespace tessera::runtime {

/// The calling convention of every kernel: args[i] is the data pointer of the
/// i-th buffer parameter.
using KernelFn = void (*)(void** args);

struct KernelCall {
    std::string kernel;  // symbol name
    KernelFn fn = nullptr;
    std::vector<int> args;   // graph value indices, in parameter order
    std::vector<int> nodes;  // graph node indices this call covers
    double flops = 0;        // floating-point operations per call
};

struct KernelProfile {
    std::string kernel;
    std::vector<int> nodes;
    double seconds = 0;  // median over the profiled runs
    double flops = 0;
};

class GraphExecutor {
public:
    /// `values` gives the type of every graph value and the constant data of
    /// weights; `inputs`/`outputs` are value indices. `keep_alive` owns the code.
    GraphExecutor(std::vector<TensorType> value_types, std::vector<NDArray> constants,
                  std::vector<int> inputs, std::vector<int> outputs, std::vector<KernelCall> calls,
                  std::shared_ptr<void> keep_alive);

    size_t num_inputs() const { return m_inputs.size(); }
    size_t num_outputs() const { return m_outputs.size(); }
    /// Copies `a` into input i; throws UserError on a type mismatch.
    void set_input(size_t i, const NDArray& a);
    void run();
    /// The i-th output (a copy owned by the caller).
    NDArray get_output(size_t i) const;
    /// Runs `repeat` times and returns per-kernel median times.
    std::vector<KernelProfile> profile(int repeat);
    const std::vector<KernelCall>& calls() const { return m_calls; }
    /// Bytes of all intermediate and output buffers.
    int64_t workspace_bytes() const;

private:
    std::vector<TensorType> m_types;
    std::vector<NDArray> m_buffers;  // one per value (constants bound once)
    std::vector<int> m_inputs, m_outputs;
    std::vector<KernelCall> m_calls;
    std::vector<std::vector<void*>> m_args;  // resolved argument pointers per call
    std::shared_ptr<void> m_keep_alive;
    int64_t m_workspace_bytes = 0;  // intermediates + outputs, computed at construction
};

}  // namespace tessera::runtime
