// GraphExecutor: one buffer per graph value, kernels called in order, and a
// per-kernel profiler.
#include "engine/runtime/graph_executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>

#include "engine/core/error.h"

namespace tessera::runtime {

namespace {

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

GraphExecutor::GraphExecutor(std::vector<TensorType> value_types, std::vector<NDArray> constants,
                             std::vector<int> inputs, std::vector<int> outputs,
                             std::vector<KernelCall> calls, std::shared_ptr<void> keep_alive)
    : m_types(std::move(value_types)),
      m_inputs(std::move(inputs)),
      m_outputs(std::move(outputs)),
      m_calls(std::move(calls)),
      m_keep_alive(std::move(keep_alive)) {
    const int n = int(m_types.size());
    TS_CHECK(constants.empty() || constants.size() == m_types.size())
        << "constants must be empty or one (possibly undefined) NDArray per value";
    m_buffers.resize(n);
    const std::set<int> inputs_set(m_inputs.begin(), m_inputs.end());
    for (int v = 0; v < n; ++v) {
        if (v < int(constants.size()) && constants[v].defined()) {
            TS_CHECK(constants[v].type() == m_types[v])
                << "constant " << v << " is " << constants[v].type().str() << ", value type is "
                << m_types[v].str();
            m_buffers[v] = constants[v];  // bound once; kernels only read constants
        } else {
            m_buffers[v] = NDArray::empty(m_types[v]);
            if (!inputs_set.count(v)) m_workspace_bytes += m_types[v].num_bytes();
        }
    }
    auto check_index = [n](int v, const char* what) {
        TS_CHECK(v >= 0 && v < n) << what << " value index " << v << " out of range [0, " << n
                                  << ")";
    };
    for (int v : m_inputs) check_index(v, "input");
    for (int v : m_outputs) check_index(v, "output");
    m_args.reserve(m_calls.size());
    for (const KernelCall& c : m_calls) {
        TS_CHECK(c.fn != nullptr) << "kernel '" << c.kernel << "' has no entry point";
        std::vector<void*> ptrs;
        ptrs.reserve(c.args.size());
        for (int v : c.args) {
            check_index(v, "kernel argument");
            ptrs.push_back(m_buffers[v].raw());
        }
        m_args.push_back(std::move(ptrs));
    }
}

void GraphExecutor::set_input(size_t i, const NDArray& a) {
    TS_USER_CHECK(i < m_inputs.size())
        << "input index " << i << " out of range; the model has " << m_inputs.size() << " inputs";
    const NDArray& dst = m_buffers[m_inputs[i]];
    TS_USER_CHECK(a.defined() && a.type() == dst.type())
        << "input " << i << " must be " << dst.type().str() << ", got "
        << (a.defined() ? a.type().str() : std::string("nothing"));
    std::memcpy(dst.raw(), a.raw(), dst.num_bytes());
}

void GraphExecutor::run() {
    for (size_t k = 0; k < m_calls.size(); ++k) m_calls[k].fn(m_args[k].data());
}

NDArray GraphExecutor::get_output(size_t i) const {
    TS_USER_CHECK(i < m_outputs.size()) << "output index " << i << " out of range; the model has "
                                        << m_outputs.size() << " outputs";
    return m_buffers[m_outputs[i]].copy();
}

std::vector<KernelProfile> GraphExecutor::profile(int repeat) {
    TS_USER_CHECK(repeat >= 1) << "profile repeat must be at least 1, got " << repeat;
    using Clock = std::chrono::steady_clock;
    std::vector<std::vector<double>> times(m_calls.size());
    for (auto& t : times) t.reserve(size_t(repeat));
    for (int r = 0; r < repeat; ++r) {
        for (size_t k = 0; k < m_calls.size(); ++k) {
            auto t0 = Clock::now();
            m_calls[k].fn(m_args[k].data());
            auto t1 = Clock::now();
            times[k].push_back(std::chrono::duration<double>(t1 - t0).count());
        }
    }
    std::vector<KernelProfile> result;
    result.reserve(m_calls.size());
    for (size_t k = 0; k < m_calls.size(); ++k) {
        const KernelCall& c = m_calls[k];
        result.push_back({c.kernel, c.nodes, median(times[k]), c.flops});
    }
    return result;
}

int64_t GraphExecutor::workspace_bytes() const { return m_workspace_bytes; }

}  // namespace tessera::runtime
