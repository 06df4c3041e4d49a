// CudaGraphExecutor: device buffers per value, launches in graph order,
// event timing.
#include "engine/runtime/cuda_executor.h"

#include <algorithm>

#include "engine/core/error.h"

namespace tessera::runtime {

CudaGraphExecutor::CudaGraphExecutor(std::vector<TensorType> value_types,
                                     std::vector<NDArray> constants, std::vector<int> inputs,
                                     std::vector<int> outputs, std::vector<CudaCall> calls,
                                     const std::string& ptx)
    : m_types(std::move(value_types)), m_inputs(std::move(inputs)), m_outputs(std::move(outputs)),
      m_calls(std::move(calls)) {
    cuda::require_available("running on the GPU");
    m_module = std::make_unique<cuda::Module>(ptx);
    for (size_t v = 0; v < m_types.size(); ++v) {
        m_values.emplace_back(size_t(m_types[v].num_bytes()));
        if (v < constants.size() && constants[v].defined())
            m_values.back().copy_from_host(constants[v].raw(), constants[v].num_bytes());
    }
    for (const CudaCall& c : m_calls) {
        std::vector<cuda::DeviceBuffer> ws;
        for (int64_t bytes : c.workspace_bytes) ws.emplace_back(size_t(bytes));
        m_workspaces.push_back(std::move(ws));
        for (const CudaLaunch& l : c.launches)
            for (int a : l.args)
                TS_CHECK(a >= 0 && size_t(a) < c.values.size() + c.workspace_bytes.size())
                    << "kernel '" << l.kernel << "' argument " << a << " out of range";
    }
}

void CudaGraphExecutor::set_input(size_t i, const NDArray& a) {
    TS_USER_CHECK(i < m_inputs.size()) << "input " << i << " out of range (" << m_inputs.size()
                                       << " inputs)";
    const TensorType& t = m_types[size_t(m_inputs[i])];
    TS_USER_CHECK(a.defined() && a.type() == t)
        << "input " << i << " must be " << t.str() << ", got "
        << (a.defined() ? a.type().str() : std::string("nothing"));
    m_values[size_t(m_inputs[i])].copy_from_host(a.raw(), a.num_bytes());
}

void CudaGraphExecutor::launch_call(size_t c) {
    const CudaCall& call = m_calls[c];
    for (const CudaLaunch& l : call.launches) {
        std::vector<uint64_t> ptrs;
        for (int a : l.args) {
            ptrs.push_back(size_t(a) < call.values.size()
                               ? m_values[size_t(call.values[size_t(a)])].ptr()
                               : m_workspaces[c][size_t(a) - call.values.size()].ptr());
        }
        m_module->launch(l.kernel, l.grid, l.block, 0, ptrs);
    }
}

void CudaGraphExecutor::run() {
    for (size_t c = 0; c < m_calls.size(); ++c) launch_call(c);
    cuda::synchronize();
}

NDArray CudaGraphExecutor::get_output(size_t i) const {
    TS_USER_CHECK(i < m_outputs.size()) << "output " << i << " out of range (" << m_outputs.size()
                                        << " outputs)";
    NDArray out = NDArray::empty(m_types[size_t(m_outputs[i])]);
    m_values[size_t(m_outputs[i])].copy_to_host(out.raw(), out.num_bytes());
    return out;
}

std::vector<double> CudaGraphExecutor::time_runs(int repeat) {
    run();  // warm-up (module load, caches)
    std::vector<double> ms;
    cuda::Event start, stop;
    for (int r = 0; r < repeat; ++r) {
        start.record();
        for (size_t c = 0; c < m_calls.size(); ++c) launch_call(c);
        stop.record();
        ms.push_back(stop.elapsed_ms_since(start));
    }
    return ms;
}

std::vector<KernelProfile> CudaGraphExecutor::profile(int repeat) {
    run();
    std::vector<std::vector<double>> times(m_calls.size());
    cuda::Event start, stop;
    for (int r = 0; r < repeat; ++r) {
        for (size_t c = 0; c < m_calls.size(); ++c) {
            start.record();
            launch_call(c);
            stop.record();
            times[c].push_back(stop.elapsed_ms_since(start));
        }
    }
    std::vector<KernelProfile> out;
    for (size_t c = 0; c < m_calls.size(); ++c) {
        std::vector<double>& t = times[c];
        std::sort(t.begin(), t.end());
        KernelProfile p;
        p.kernel = m_calls[c].name;
        p.nodes = m_calls[c].nodes;
        p.seconds = t.empty() ? 0 : t[t.size() / 2] * 1e-3;
        p.flops = m_calls[c].flops;
        out.push_back(p);
    }
    return out;
}

}  // namespace tessera::runtime
