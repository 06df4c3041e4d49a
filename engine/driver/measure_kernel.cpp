// measure_kernel: jit_compile + random buffers + runtime::time_kernel.
#include "engine/driver/measure_kernel.h"

#include "engine/core/error.h"
#include "engine/core/thread_guard.h"
#include "engine/runtime/graph_executor.h"
#include "engine/runtime/ndarray.h"

namespace tessera::driver {
namespace {

graph::DType graph_type(const tir::DataType& t) {
    if (t.is_float()) return t.bits == 64 ? graph::DType::Float64 : graph::DType::Float32;
    if (t.is_bool()) return graph::DType::Bool;
    if (t.is_uint()) return graph::DType::UInt8;
    switch (t.bits) {
        case 8:
            return graph::DType::Int8;
        case 32:
            return graph::DType::Int32;
        default:
            return graph::DType::Int64;
    }
}

}  // namespace

KernelMeasurement measure_kernel(const tir::PrimFunc& func, double flops,
                                 const runtime::TimingOptions& timing,
                                 const codegen::LlvmOptions& llvm,
                                 const std::function<bool(int done)>& each) {
    assert_engine_work_allowed("driver::measure_kernel");
    auto module = codegen::jit_compile({func}, llvm);
    const runtime::KernelFn fn = module->lookup(func->name);
    std::vector<runtime::NDArray> buffers;
    std::vector<void*> args;
    std::vector<size_t> bytes;
    uint64_t seed = 11;
    for (const tir::Buffer& b : func->params) {
        graph::TensorType type{graph_type(b->dtype), b.const_shape()};
        buffers.push_back(runtime::random_ndarray(type, seed++));
        args.push_back(buffers.back().raw());
        bytes.push_back(size_t(buffers.back().num_bytes()));
    }
    int done = 0;
    const std::vector<double> times = runtime::time_kernel(
        fn, args.data(), bytes, timing, [&](double) { return !each || each(++done); });
    KernelMeasurement m;
    m.median_ms = runtime::median_ms(times);
    m.repeat = int(times.size());
    m.gflops = m.median_ms > 0 ? flops / (m.median_ms * 1e-3) / 1e9 : 0;
    return m;
}

KernelMeasurement profile_in_model(const graph::Graph& g, BuildOptions options,
                                   const std::string& node, const schedule::Trace& trace,
                                   int repeat, const std::function<bool(int done)>& each) {
    assert_engine_work_allowed("driver::profile_in_model");
    options.kernel_traces[node] = trace;
    options.jit = true;
    const std::shared_ptr<CompiledModel> model = build(g, options);
    const int k = model->kernel_of(node);
    TS_USER_CHECK(k >= 0) << "node '" << node << "' runs in no kernel";
    const std::string& kernel = model->kernels[size_t(k)]->name;
    model->executor->set_num_threads(options.threads);
    model->run(random_inputs(g, 1));  // binds the inputs; a warm-up
    std::vector<double> ms;
    double flops = 0, work = 0;
    KernelMeasurement m;
    for (int r = 0; r < repeat; ++r) {
        for (const runtime::KernelProfile& p : model->executor->profile(1)) {
            if (p.kernel != kernel || p.calls < 1) continue;
            ms.push_back(p.seconds * 1e3 / p.calls);
            flops = p.flops / p.calls;
            work = p.work_flops / p.calls;
            m.integer = m.integer || graph::any_integer_gemm(model->graph, p.nodes);
        }
        if (each && !each(r + 1)) break;
    }
    m.median_ms = runtime::median_ms(ms);
    m.repeat = int(ms.size());
    m.gflops = m.median_ms > 0 ? flops / (m.median_ms * 1e-3) / 1e9 : 0;
    if (runtime::executes_other_work(flops, work) && m.median_ms > 0)
        m.work_gflops = work / (m.median_ms * 1e-3) / 1e9;
    return m;
}

}  // namespace tessera::driver
