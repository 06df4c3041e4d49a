// CudaGraphExecutor: runs a model's kernels on the GPU. Every graph value
// lives in device memory; inputs are copied in, outputs copied out; kernel
// times come from CUDA events. Knows nothing of how the PTX was made.
#pragma once

#include <array>
#include <memory>
#include <string>

#include "engine/runtime/cuda_driver.h"
#include "engine/runtime/graph_executor.h"
#include "engine/runtime/ndarray.h"

namespace tessera::runtime {

/// One kernel launch of a call.
struct CudaLaunch {
    std::string kernel;
    std::array<int64_t, 3> grid{1, 1, 1}, block{1, 1, 1};
    int64_t shared_bytes = 0;
    /// Pointer arguments: i < values.size() is the call's i-th value, larger
    /// indices are the call's workspaces.
    std::vector<int> args;
};

/// One compiled function (a graph node): its launches in order.
struct CudaCall {
    std::string name;
    std::vector<int> values;               // graph value per function parameter
    std::vector<int64_t> workspace_bytes;  // device scratch buffers
    std::vector<CudaLaunch> launches;
    std::vector<int> nodes;
    double flops = 0;
};

class CudaGraphExecutor {
public:
    /// Loads `ptx`, allocates every value and workspace on the device and
    /// uploads the constants. Throws UserError when no device is available.
    CudaGraphExecutor(std::vector<TensorType> value_types, std::vector<NDArray> constants,
                      std::vector<int> inputs, std::vector<int> outputs,
                      std::vector<CudaCall> calls, const std::string& ptx);

    size_t num_inputs() const { return m_inputs.size(); }
    size_t num_outputs() const { return m_outputs.size(); }
    const TensorType& input_type(size_t i) const { return m_types.at(size_t(m_inputs.at(i))); }
    const TensorType& output_type(size_t i) const { return m_types.at(size_t(m_outputs.at(i))); }
    /// Copies `a` to the device; UserError on a type mismatch.
    void set_input(size_t i, const NDArray& a);
    /// Launches every kernel and waits for them.
    void run();
    /// Copies output i back to the host.
    NDArray get_output(size_t i) const;
    /// Milliseconds of each of `repeat` whole runs (events), after one warm-up.
    std::vector<double> time_runs(int repeat);
    /// Per-call median milliseconds over `repeat` runs (events around each call).
    std::vector<KernelProfile> profile(int repeat);
    const std::vector<CudaCall>& calls() const { return m_calls; }

private:
    void launch_call(size_t c);

    std::vector<TensorType> m_types;
    std::vector<int> m_inputs, m_outputs;
    std::vector<CudaCall> m_calls;
    std::unique_ptr<cuda::Module> m_module;
    std::vector<cuda::DeviceBuffer> m_values;                   // one per graph value
    std::vector<std::vector<cuda::DeviceBuffer>> m_workspaces;  // per call
};

}  // namespace tessera::runtime
