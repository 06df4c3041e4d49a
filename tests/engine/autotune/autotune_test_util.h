// Small kernels the autotune tests search and measure.
#pragma once

#include "engine/te/tensor.h"

namespace tessera::autotune::test {

/// C[m, n] = sum_k A[m, k] * B[k, n], float32, one reduction block "C".
inline tir::PrimFunc matmul(int64_t m, int64_t n, int64_t k) {
    te::Tensor A = te::placeholder({m, k}, tir::DataType::float32(), "A");
    te::Tensor B = te::placeholder({k, n}, tir::DataType::float32(), "B");
    tir::IterVar r = te::reduce_axis(k, "k");
    te::Tensor C = te::compute(
        {m, n}, [&](auto i) { return te::sum(A(i[0], r.var) * B(r.var, i[1]), {r}); }, "C");
    return te::create_prim_func({A, B, C}, "mm");
}

}  // namespace tessera::autotune::test
