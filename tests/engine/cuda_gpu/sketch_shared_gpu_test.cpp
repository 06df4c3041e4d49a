// GPU execution of the autotuner's GPU sketch with shared-memory staging
// (CTest label `gpu`): random staged samples of a GEMM and of a padded
// convolution with a bias + relu epilogue run on the device and match the
// loop-IR interpreter on the unscheduled kernel. Skips without a CUDA device.
#include <gtest/gtest.h>

#include "engine/autotune/space_gpu.h"
#include "engine/codegen/cuda/cuda_codegen.h"
#include "engine/runtime/cuda_driver.h"
#include "engine/te/tensor.h"
#include "engine/tir/op.h"
#include "tests/engine/cuda/cuda_test_util.h"

namespace tessera::autotune {
namespace {

using namespace tessera::tir;

// Runs the function's kernels on the device; returns every argument after.
std::vector<runtime::NDArray> run_on_device(const PrimFunc& f,
                                            const std::vector<runtime::NDArray>& args) {
    codegen::CompiledCuda c = codegen::compile_cuda({f});
    runtime::cuda::Module m(c.ptx);
    std::vector<runtime::cuda::DeviceBuffer> bufs;
    for (const auto& a : args) {
        bufs.emplace_back(a.num_bytes());
        bufs.back().copy_from_host(a.raw(), a.num_bytes());
    }
    for (const Buffer& w : c.funcs[0].workspaces)
        bufs.emplace_back(size_t(w.num_elements() * w->dtype.bytes()));
    for (const codegen::CudaKernel& k : c.funcs[0].kernels) {
        std::vector<uint64_t> ptrs;
        for (int a : k.args) ptrs.push_back(bufs[size_t(a)].ptr());
        m.launch(k.name, k.grid, k.block, 0, ptrs);
    }
    runtime::cuda::synchronize();
    std::vector<runtime::NDArray> out;
    for (size_t i = 0; i < args.size(); ++i) {
        out.push_back(args[i].copy());
        bufs[i].copy_to_host(out.back().raw(), out.back().num_bytes());
    }
    return out;
}

PrimFunc gemm(int64_t m, int64_t n, int64_t k) {
    te::Tensor a = te::placeholder({m, k}, DataType::float32(), "A");
    te::Tensor b = te::placeholder({k, n}, DataType::float32(), "B");
    IterVar r = te::reduce_axis(k, "k");
    te::Tensor c = te::compute(
        {m, n},
        [&](const std::vector<Var>& i) { return te::sum(a(i[0], r.var) * b(r.var, i[1]), {r}); },
        "C");
    return te::create_prim_func({a, b, c}, "gemm_staged");
}

// NCHW conv2d 3x3, stride 1, zero padding 1, then relu(conv + bias[c]).
PrimFunc conv_bias_relu(int64_t ci, int64_t h, int64_t w, int64_t co) {
    te::Tensor x = te::placeholder({1, ci, h, w}, DataType::float32(), "X");
    te::Tensor wt = te::placeholder({co, ci, 3, 3}, DataType::float32(), "W");
    te::Tensor bias = te::placeholder({co}, DataType::float32(), "Bias");
    te::Tensor pad = te::compute(
        {1, ci, h + 2, w + 2},
        [&](const std::vector<Var>& i) {
            Expr inside = i[2] >= Expr(int64_t(1)) && i[2] < Expr(h + 1) &&
                          i[3] >= Expr(int64_t(1)) && i[3] < Expr(w + 1);
            return if_then_else(
                inside, x(i[0], i[1], i[2] - Expr(int64_t(1)), i[3] - Expr(int64_t(1))),
                Expr(0.0f));
        },
        "Pad");
    IterVar rc = te::reduce_axis(ci, "rc"), ry = te::reduce_axis(3, "ry"),
            rx = te::reduce_axis(3, "rx");
    te::Tensor conv = te::compute(
        {1, co, h, w},
        [&](const std::vector<Var>& i) {
            return te::sum(pad(i[0], rc.var, i[2] + ry.var, i[3] + rx.var) *
                               wt(i[1], rc.var, ry.var, rx.var),
                           {rc, ry, rx});
        },
        "Conv");
    te::Tensor out = te::compute(
        {1, co, h, w},
        [&](const std::vector<Var>& i) {
            return tir::max(conv(i[0], i[1], i[2], i[3]) + bias(i[1]), Expr(0.0f));
        },
        "Out");
    return te::create_prim_func({x, wt, bias, out}, "conv_bias_relu_staged");
}

void expect_device_matches(const PrimFunc& f, size_t num_inputs, int samples) {
    std::mt19937_64 rng(11);
    GpuSpaceOptions so;
    so.shared_probability = 1.0;
    std::vector<runtime::NDArray> args = test::random_args(f, num_inputs, 9);
    std::vector<runtime::NDArray> want = test::interpret_copy(f, args);
    for (int i = 0; i < samples; ++i) {
        GpuSketch c = sample_gpu(f, rng, so);
        EXPECT_TRUE(c.shared);
        std::vector<runtime::NDArray> got = run_on_device(generate_gpu(f, c).func(), args);
        for (size_t p = num_inputs; p < args.size(); ++p)
            EXPECT_TRUE(runtime::allclose(got[p], want[p], 1e-4, 1e-4))
                << f->name << " sample " << c.to_json();
    }
}

TEST(GpuSketchSharedDevice, StagedGemmSamplesMatchTheInterpreter) {
    if (!runtime::cuda::available()) GTEST_SKIP() << runtime::cuda::unavailable_reason();
    expect_device_matches(gemm(96, 80, 72), 2, 12);
}

TEST(GpuSketchSharedDevice, StagedConvBiasReluSamplesMatchTheInterpreter) {
    if (!runtime::cuda::available()) GTEST_SKIP() << runtime::cuda::unavailable_reason();
    expect_device_matches(conv_bias_relu(8, 12, 12, 16), 3, 10);
}

}  // namespace
}  // namespace tessera::autotune
