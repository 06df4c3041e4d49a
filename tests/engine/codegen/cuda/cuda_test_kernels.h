// TE kernels shared by the CUDA tests (with and without a device): a GEMM
// (optionally with a relu epilogue) and a padded 3x3 conv + bias + relu; and
// compiling a sampled kernel into one kernel, failures reported as test failures.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/codegen/cuda/cuda_codegen.h"
#include "engine/core/error.h"
#include "engine/te/tensor.h"
#include "engine/tir/op.h"

namespace tessera::test {

/// C[i, j] = sum_k A[i, k] * B[k, j] (reduce axis "k"); with relu, the
/// output is D = max(C, 0) computed in a second stage.
inline tir::PrimFunc gemm_func(int64_t m, int64_t n, int64_t k, const std::string& name = "gemm",
                               bool relu = false) {
    using namespace tessera::tir;
    te::Tensor a = te::placeholder({m, k}, DataType::float32(), "A");
    te::Tensor b = te::placeholder({k, n}, DataType::float32(), "B");
    IterVar r = te::reduce_axis(k, "k");
    te::Tensor c = te::compute(
        {m, n},
        [&](const std::vector<Var>& i) { return te::sum(a(i[0], r.var) * b(r.var, i[1]), {r}); },
        "C");
    if (!relu) return te::create_prim_func({a, b, c}, name);
    te::Tensor d = te::compute(
        {m, n}, [&](const std::vector<Var>& i) { return tir::max(c(i[0], i[1]), Expr(0.0f)); },
        "D");
    return te::create_prim_func({a, b, d}, name);
}

/// NCHW conv2d, 3x3 kernel, stride 1, zero padding 1 (a "Pad" stage), then
/// relu(conv + bias[c]); parameters X, W, Bias, Out.
inline tir::PrimFunc conv_bias_relu_func(int64_t n, int64_t ci, int64_t h, int64_t w, int64_t co,
                                         const std::string& name = "conv_bias_relu") {
    using namespace tessera::tir;
    te::Tensor x = te::placeholder({n, ci, h, w}, DataType::float32(), "X");
    te::Tensor wt = te::placeholder({co, ci, 3, 3}, DataType::float32(), "W");
    te::Tensor bias = te::placeholder({co}, DataType::float32(), "Bias");
    te::Tensor pad = te::compute(
        {n, ci, h + 2, w + 2},
        [&](const std::vector<Var>& i) {
            Expr inside = i[2] >= Expr(int64_t(1)) && i[2] < Expr(h + 1) &&
                          i[3] >= Expr(int64_t(1)) && i[3] < Expr(w + 1);
            return if_then_else(inside,
                                x(i[0], i[1], i[2] - Expr(int64_t(1)), i[3] - Expr(int64_t(1))),
                                Expr(0.0f));
        },
        "Pad");
    IterVar rc = te::reduce_axis(ci, "rc"), ry = te::reduce_axis(3, "ry"),
            rx = te::reduce_axis(3, "rx");
    te::Tensor conv = te::compute(
        {n, co, h, w},
        [&](const std::vector<Var>& i) {
            return te::sum(
                pad(i[0], rc.var, i[2] + ry.var, i[3] + rx.var) * wt(i[1], rc.var, ry.var, rx.var),
                {rc, ry, rx});
        },
        "Conv");
    te::Tensor out = te::compute(
        {n, co, h, w},
        [&](const std::vector<Var>& i) {
            return tir::max(conv(i[0], i[1], i[2], i[3]) + bias(i[1]), Expr(0.0f));
        },
        "Out");
    return te::create_prim_func({x, wt, bias, out}, name);
}

/// g compiled with o (the verifier's limits, then NVRTC) into one kernel of
/// at most 1024 threads a block; otherwise (a UserError, or other kernels) a
/// test failure naming `what` is added and nullopt returned.
inline std::optional<codegen::CompiledCuda> compile_one_kernel_or_fail(
    const tir::PrimFunc& g, const codegen::CudaOptions& o, const std::string& what) {
    codegen::CompiledCuda cc;
    try {
        cc = codegen::compile_cuda({g}, o);
    } catch (const UserError& e) {
        ADD_FAILURE() << what << ": " << e.what();
        return std::nullopt;
    }
    if (cc.funcs.size() != 1u || cc.funcs[0].kernels.size() != 1u) {
        ADD_FAILURE() << what << ": not one function of one kernel\n" << cc.source;
        return std::nullopt;
    }
    const codegen::CudaKernel& k = cc.funcs[0].kernels[0];
    EXPECT_LE(k.block[0] * k.block[1] * k.block[2], 1024) << what;
    return cc;
}

}  // namespace tessera::test
