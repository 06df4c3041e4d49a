// GraphExecutor: values planned into one arena by lifetime, constants bound
// once, kernels called in order, and a per-kernel profiler.
#include "engine/runtime/graph_executor.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "engine/core/error.h"
#include "engine/core/statistics.h"

namespace tessera::runtime {

namespace {

constexpr int64_t kAlignment = 64;

std::shared_ptr<void> allocate_arena(int64_t bytes) {
    size_t size = size_t(std::max(kAlignment, bytes));
    void* p = std::aligned_alloc(size_t(kAlignment), size);
    if (!p) throw std::bad_alloc();
    std::memset(p, 0, size);
    return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
}

std::string joined(const std::vector<std::string>& names) {
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "'" : ", '") + n + "'";
    return s.empty() ? "none" : s;
}

}  // namespace

ThreadSetter default_thread_setter() {
    return reinterpret_cast<ThreadSetter>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
}

GraphExecutor::GraphExecutor(std::vector<TensorType> value_types, std::vector<NDArray> constants,
                             std::vector<int> inputs, std::vector<int> outputs,
                             std::vector<KernelCall> calls, std::shared_ptr<void> keep_alive)
    : m_types(std::move(value_types)),
      m_inputs(std::move(inputs)),
      m_outputs(std::move(outputs)),
      m_calls(std::move(calls)),
      m_keep_alive(std::move(keep_alive)),
      m_thread_setter(default_thread_setter()) {
    const int n = int(m_types.size());
    const int num_calls = int(m_calls.size());
    TS_CHECK(constants.empty() || constants.size() == m_types.size())
        << "constants must be empty or one (possibly undefined) NDArray per value";
    auto check_index = [n](int v, const char* what) {
        TS_CHECK(v >= 0 && v < n) << what << " value index " << v << " out of range [0, " << n
                                  << ")";
    };
    for (int v : m_inputs) check_index(v, "input");
    for (int v : m_outputs) check_index(v, "output");
    for (const KernelCall& c : m_calls) {
        TS_CHECK(c.fn != nullptr) << "kernel '" << c.kernel << "' has no entry point";
        for (int v : c.args) check_index(v, "kernel argument");
    }

    // Lifetimes over the call order. Inputs and outputs live through the whole
    // run, so repeated runs and get_output after run see intact data.
    m_info.resize(size_t(n));
    m_buffers.resize(size_t(n));
    for (int v = 0; v < n; ++v) {
        m_info[size_t(v)].value = v;
        m_info[size_t(v)].bytes = m_types[size_t(v)].num_bytes();
    }
    for (int v = 0; v < int(constants.size()); ++v) {
        if (!constants[size_t(v)].defined()) continue;
        TS_CHECK(constants[size_t(v)].type() == m_types[size_t(v)])
            << "constant " << v << " is " << constants[size_t(v)].type().str()
            << ", value type is " << m_types[size_t(v)].str();
        m_buffers[size_t(v)] = constants[size_t(v)];  // bound once; kernels only read constants
        m_info[size_t(v)].kind = BufferInfo::Constant;
        m_param_bytes += m_info[size_t(v)].bytes;
    }
    const int last = std::max(0, num_calls - 1);
    auto use = [&](int v, int first, int lastu) {
        BufferInfo& b = m_info[size_t(v)];
        if (b.kind == BufferInfo::Constant) return;
        if (b.kind == BufferInfo::None) {
            b.kind = BufferInfo::Planned;
            b.first_use = first;
            b.last_use = lastu;
        } else {
            b.first_use = std::min(b.first_use, first);
            b.last_use = std::max(b.last_use, lastu);
        }
    };
    for (int v : m_inputs) use(v, 0, last);
    for (int v : m_outputs) use(v, 0, last);
    for (int k = 0; k < num_calls; ++k)
        for (int v : m_calls[size_t(k)].args) use(v, k, k);

    std::vector<int> planned;
    std::vector<BufferRequest> requests;
    for (const BufferInfo& b : m_info) {
        if (b.kind != BufferInfo::Planned) continue;
        planned.push_back(b.value);
        requests.push_back({b.bytes, b.first_use, b.last_use});
    }
    m_plan = plan_memory(requests, kAlignment);
    TS_CHECK(plan_is_valid(requests, m_plan)) << "memory plan overlaps live buffers";
    m_arena = allocate_arena(m_plan.arena_bytes);
    for (size_t i = 0; i < planned.size(); ++i) {
        BufferInfo& b = m_info[size_t(planned[i])];
        b.offset = m_plan.offsets[i];
        m_buffers[size_t(b.value)] =
            NDArray::view(m_types[size_t(b.value)], m_arena, size_t(b.offset));
    }

    m_args.reserve(m_calls.size());
    for (const KernelCall& c : m_calls) {
        std::vector<void*> ptrs;
        ptrs.reserve(c.args.size());
        for (int v : c.args) ptrs.push_back(m_buffers[size_t(v)].raw());
        m_args.push_back(std::move(ptrs));
    }
    for (size_t i = 0; i < m_inputs.size(); ++i)
        m_input_names.push_back("input_" + std::to_string(i));
    for (size_t i = 0; i < m_outputs.size(); ++i)
        m_output_names.push_back("output_" + std::to_string(i));
}

void GraphExecutor::set_io_names(std::vector<std::string> input_names,
                                 std::vector<std::string> output_names) {
    TS_CHECK(input_names.size() == m_inputs.size() && output_names.size() == m_outputs.size())
        << "set_io_names: " << input_names.size() << " input and " << output_names.size()
        << " output names for " << m_inputs.size() << " inputs and " << m_outputs.size()
        << " outputs";
    m_input_names = std::move(input_names);
    m_output_names = std::move(output_names);
}

size_t GraphExecutor::input_index(const std::string& name) const {
    auto it = std::find(m_input_names.begin(), m_input_names.end(), name);
    TS_USER_CHECK(it != m_input_names.end())
        << "no input named '" << name << "'; inputs are: " << joined(m_input_names);
    return size_t(it - m_input_names.begin());
}

size_t GraphExecutor::output_index(const std::string& name) const {
    auto it = std::find(m_output_names.begin(), m_output_names.end(), name);
    TS_USER_CHECK(it != m_output_names.end())
        << "no output named '" << name << "'; outputs are: " << joined(m_output_names);
    return size_t(it - m_output_names.begin());
}

const TensorType& GraphExecutor::input_type(size_t i) const {
    TS_USER_CHECK(i < m_inputs.size())
        << "input index " << i << " out of range; the model has " << m_inputs.size() << " inputs";
    return m_types[size_t(m_inputs[i])];
}

const TensorType& GraphExecutor::output_type(size_t i) const {
    TS_USER_CHECK(i < m_outputs.size()) << "output index " << i << " out of range; the model has "
                                        << m_outputs.size() << " outputs";
    return m_types[size_t(m_outputs[i])];
}

void GraphExecutor::set_input(size_t i, const NDArray& a) {
    const TensorType& t = input_type(i);
    const NDArray& dst = m_buffers[size_t(m_inputs[i])];
    TS_USER_CHECK(a.defined() && a.type() == t)
        << "input " << i << " ('" << m_input_names[i] << "') must be " << t.str() << ", got "
        << (a.defined() ? a.type().str() : std::string("nothing"));
    if (dst.raw() != a.raw()) std::memcpy(dst.raw(), a.raw(), dst.num_bytes());
}

void GraphExecutor::set_num_threads(int n) {
    TS_USER_CHECK(n >= 0) << "thread count must be 0 (default) or positive, got " << n;
    m_threads = n;
}

void GraphExecutor::run() {
    if (m_threads > 0 && m_thread_setter) m_thread_setter(m_threads);
    for (size_t k = 0; k < m_calls.size(); ++k) m_calls[k].fn(m_args[k].data());
}

NDArray GraphExecutor::get_output(size_t i) const {
    output_type(i);  // range check
    return m_buffers[size_t(m_outputs[i])].copy();
}

NDArray GraphExecutor::constant(int v) const {
    TS_CHECK(v >= 0 && v < int(m_info.size())) << "value index " << v << " out of range";
    return m_info[size_t(v)].kind == BufferInfo::Constant ? m_buffers[size_t(v)] : NDArray();
}

std::vector<KernelProfile> GraphExecutor::profile(int repeat, const TimingOptions& timing) {
    TS_USER_CHECK(repeat >= 1) << "profile repeat must be at least 1, got " << repeat;
    if (m_threads > 0 && m_thread_setter) m_thread_setter(m_threads);
    // Each call timed as the tuner and the studio time kernels (time_once:
    // its buffers flushed from the caches first, when `timing` says so).
    std::vector<std::vector<size_t>> bytes(m_calls.size());
    for (size_t k = 0; k < m_calls.size(); ++k)
        for (int v : m_calls[k].args) bytes[k].push_back(size_t(m_types[size_t(v)].num_bytes()));
    std::vector<std::vector<double>> times(m_calls.size());
    for (auto& t : times) t.reserve(size_t(repeat));
    for (int r = 0; r < repeat; ++r)
        for (size_t k = 0; k < m_calls.size(); ++k)
            times[k].push_back(time_once(m_calls[k].fn, m_args[k].data(), bytes[k], timing) * 1e-3);
    std::vector<KernelProfile> result;
    std::map<std::string, size_t> slot;
    for (size_t k = 0; k < m_calls.size(); ++k) {
        const KernelCall& c = m_calls[k];
        auto [it, fresh] = slot.emplace(c.kernel, result.size());
        if (fresh) result.push_back({c.kernel, {}, 0, 0, 0, 0});
        KernelProfile& p = result[it->second];
        p.nodes.insert(p.nodes.end(), c.nodes.begin(), c.nodes.end());
        p.calls += 1;
        p.seconds += median(times[k]);
        p.flops += c.flops;
        p.work_flops += c.work_flops > 0 ? c.work_flops : c.flops;
        for (int v : c.args) p.bytes += double(m_types[size_t(v)].num_bytes());
    }
    return result;
}

}  // namespace tessera::runtime
