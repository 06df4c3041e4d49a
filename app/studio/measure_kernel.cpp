// measureKernel: jit_compile + random buffers + median of timed calls.
#include "app/studio/measure_kernel.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/core/error.h"
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
    uint64_t seed = 11;
    for (const tir::Buffer& b : func->params) {
        graph::TensorType type{toGraphType(b->dtype), b.const_shape()};
        buffers.push_back(runtime::random_ndarray(type, seed++));
        args.push_back(buffers.back().raw());
    }
    using Clock = std::chrono::steady_clock;
    auto timeOne = [&]() {
        const auto t0 = Clock::now();
        fn(args.data());
        return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    };
    const double first = timeOne();  // warm-up (page faults, caches)
    const int repeat = std::clamp(int(budgetMs / std::max(first, 1e-3)), 3, 200);
    std::vector<double> times;
    for (int i = 0; i < repeat; ++i) {
        context.throwIfCancelled();
        times.push_back(timeOne());
        if (i % 8 == 0) context.reportProgress(0.4 + 0.6 * (i + 1) / repeat);
    }
    std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
    KernelMeasurement m;
    m.medianMs = times[times.size() / 2];
    m.repeat = repeat;
    m.gflops = m.medianMs > 0 ? flops / (m.medianMs * 1e-3) / 1e9 : 0;
    context.reportProgress(1.0);
    return m;
}

}  // namespace tessera::studio
