// measureKernel: jit_compile + random buffers + runtime::time_kernel.
#include "app/studio/measure_kernel.h"

#include <algorithm>
#include <vector>

#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/core/error.h"
#include "engine/runtime/kernel_timing.h"
#include "engine/runtime/ndarray.h"

namespace tessera::studio {
namespace {

graph::DType toGraphType(const tir::DataType& t) {
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

KernelMeasurement measureKernel(const tir::PrimFunc& func, double flops, const JobContext& context,
                                double budgetMs) {
    context.reportProgress(0.05);
    auto module = codegen::jit_compile({func});
    const runtime::KernelFn fn = module->lookup(func->name);
    context.throwIfCancelled();
    context.reportProgress(0.4);

    std::vector<runtime::NDArray> buffers;
    std::vector<void*> args;
    std::vector<size_t> bytes;
    uint64_t seed = 11;
    for (const tir::Buffer& b : func->params) {
        graph::TensorType type{toGraphType(b->dtype), b.const_shape()};
        buffers.push_back(runtime::random_ndarray(type, seed++));
        args.push_back(buffers.back().raw());
        bytes.push_back(size_t(buffers.back().num_bytes()));
    }
    // Timed as the tuner and the profiler time kernels (runtime::time_kernel,
    // caches flushed before each run), for about `budgetMs`.
    runtime::TimingOptions timing;
    timing.min_seconds = budgetMs * 1e-3;
    timing.max_repeat = 200;
    int done = 0;
    const std::vector<double> times =
        runtime::time_kernel(fn, args.data(), bytes, timing, [&](double) {
            if (++done % 8 == 0) context.reportProgress(std::min(1.0, 0.4 + 0.6 * done / 200.0));
            return !context.isCancelled();
        });
    context.throwIfCancelled();
    KernelMeasurement m;
    m.medianMs = runtime::median_ms(times);
    m.repeat = int(times.size());
    m.gflops = m.medianMs > 0 ? flops / (m.medianMs * 1e-3) / 1e9 : 0;
    context.reportProgress(1.0);
    return m;
}

}  // namespace tessera::studio
